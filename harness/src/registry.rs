//! Registries of solvers and cases. The harness knows no concrete solver or case; the root crate
//! registers them (one line each).

use crate::case::Case;
pub use api::def::{SolverDef, SolverEntry, SolverFactory, SolverPreparer};

/// All registered solvers and cases.
#[derive(Default)]
pub struct Registry {
    /// Solvers in registration order.
    pub solvers: Vec<SolverEntry>,
    /// Cases in registration order.
    pub cases: Vec<Box<dyn Case>>,
}

/// An unknown name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("unknown {kind} '{name}' (known: {known})")]
pub struct UnknownName {
    /// "solver" or "case".
    pub kind: &'static str,
    /// The name asked for.
    pub name: String,
    /// Comma-separated known names.
    pub known: String,
}

impl Registry {
    /// Registers solver type `T`.
    pub fn register<T: SolverDef>(self) -> Self {
        self.solver(SolverEntry::of::<T>())
    }
    /// Adds a solver entry.
    pub fn solver(mut self, e: SolverEntry) -> Self {
        self.solvers.push(e);
        self
    }
    /// Adds a case.
    pub fn case(mut self, c: impl Case + 'static) -> Self {
        self.cases.push(Box::new(c));
        self
    }
    /// Adds several cases (e.g. a case crate's `all()`).
    pub fn cases(mut self, cases: Vec<Box<dyn Case>>) -> Self {
        self.cases.extend(cases);
        self
    }
    /// Looks up a solver by name.
    pub fn find_solver(&self, name: &str) -> Result<&SolverEntry, UnknownName> {
        self.solvers.iter().find(|s| s.name == name).ok_or_else(|| UnknownName {
            kind: "solver",
            name: name.into(),
            known: self.solvers.iter().map(|s| s.name).collect::<Vec<_>>().join(", "),
        })
    }
    /// Looks up a case by name.
    pub fn find_case(&self, name: &str) -> Result<&dyn Case, UnknownName> {
        self.cases.iter().find(|c| c.name() == name).map(|c| c.as_ref()).ok_or_else(|| UnknownName {
            kind: "case",
            name: name.into(),
            known: self.cases.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "),
        })
    }
}
