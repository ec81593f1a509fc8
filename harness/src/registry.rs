//! Registries of solvers and cases. The harness knows no concrete solver or case; the root crate
//! registers them (one line each).

use crate::case::Case;
use crate::params::{ParamError, Params, Settings};
use crate::resources::ProblemSize;
use crate::solver::{Capabilities, Solver, SolverContext};

/// The typed definition of a solver: what registering it needs. Implemented by each solver type
/// next to its code; registered with one line, `Registry::default().register::<Pgs>()`.
pub trait SolverDef: Solver + Sized + 'static {
    /// Its options: a serde struct with `#[serde(default, deny_unknown_fields)]`, every choice a
    /// serde enum, and `validate()`.
    type Settings: Settings + Clone + Send + Sync + 'static;
    /// Registry name (e.g. "pgs"); also the `[solver_settings.NAME]` key of suite files.
    const NAME: &'static str;
    /// One-line description (`signorini list`).
    const SUMMARY: &'static str;
    /// The paper or reference the method comes from (recorded in run records as `solver.paper`).
    const PAPER: &'static str;
    /// What it can handle (checked against a case's needs before running).
    fn capabilities() -> Capabilities;
    /// The solver with validated settings, built for the run's context (its compute backend).
    fn from_settings(settings: Self::Settings, ctx: &SolverContext) -> Self;
    /// Bytes of working memory for a problem of `size` (checked before the run; see
    /// [`crate::resources`]). The default suits solvers built on sparse factorizations and
    /// per-contact blocks; a solver that forms dense matrices says so.
    fn working_memory(_settings: &Self::Settings, size: &ProblemSize) -> f64 {
        crate::resources::sparse_working_memory(size)
    }
}

/// Makes a solver from settings decoded and validated once, when the pair was prepared.
pub type SolverFactory = Box<dyn Fn(&SolverContext) -> Box<dyn Solver> + Send + Sync>;

/// Decodes and validates parameters into a [`SolverFactory`].
pub type SolverPreparer = Box<dyn Fn(&Params) -> Result<SolverFactory, ParamError> + Send + Sync>;

/// A registered solver, type-erased.
pub struct SolverEntry {
    /// Registry name.
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// The paper or reference the method comes from.
    pub paper: &'static str,
    /// What the solver supports (checked against a case's needs before running).
    pub capabilities: Capabilities,
    /// Default parameters.
    pub defaults: fn() -> Params,
    /// Decodes and validates parameters (once) into a factory of solvers.
    pub prepare: SolverPreparer,
    /// Working memory (bytes) with these parameters for a problem of this size
    /// ([`SolverDef::working_memory`]).
    pub working_memory: fn(&Params, &ProblemSize) -> f64,
}

impl SolverEntry {
    /// The entry of solver type `T`.
    pub fn of<T: SolverDef>() -> Self {
        SolverEntry {
            name: T::NAME,
            summary: T::SUMMARY,
            paper: T::PAPER,
            capabilities: T::capabilities(),
            defaults: || Params::from_settings(&T::Settings::default()),
            prepare: Box::new(|p: &Params| {
                let s: T::Settings = p.decode(T::NAME)?;
                Ok(Box::new(move |ctx: &SolverContext| Box::new(T::from_settings(s.clone(), ctx)) as Box<dyn Solver>)
                    as SolverFactory)
            }),
            working_memory: |p: &Params, size: &ProblemSize| {
                let s: T::Settings = p.decode(T::NAME).unwrap_or_default();
                T::working_memory(&s, size)
            },
        }
    }

    /// Builds a solver from parameters (decoding and validating them), on the CPU backend.
    pub fn build(&self, params: &Params) -> Result<Box<dyn Solver>, ParamError> {
        Ok((self.prepare)(params)?(&SolverContext::default()))
    }
}

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
