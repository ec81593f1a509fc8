//! Registering a solver: its typed definition ([`SolverDef`]: name, paper, capabilities,
//! settings, the names of its shared knobs) and the type-erased entry the harness keeps
//! ([`SolverEntry`]); the problem size a solver's working-memory estimate reads ([`ProblemSize`]).

use crate::params::{ParamError, Params, Settings};
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
    /// The setting that holds the outer iteration budget (e.g. `"max_iterations"`; an integer).
    /// The harness sets it where a protocol fixes one budget for every solver (`fclib bench`).
    const BUDGET: &'static str;
    /// The setting that holds the stopping tolerance of the solver's own criterion (a float; see
    /// the solver's README for the residual it bounds). Set with [`Self::BUDGET`].
    const TOLERANCE: &'static str;
    /// The contact model its answers satisfy when they converge.
    const MODEL: AnsweredModel;
    /// Whether the harness's stopping rule can end its solve early (the equal-accuracy mode,
    /// [`crate::StopRule`]): it hands over an iterate once per outer iteration and asks
    /// [`crate::IterationLog::should_stop`]. False for a solver whose iterations run inside a
    /// library and hand over only the answer (drumwright's interior point): in that mode its own
    /// tolerance is set to the accuracy instead.
    const HARNESS_STOPS: bool = true;
    /// What it can handle (checked against a case's needs before running).
    fn capabilities() -> Capabilities;
    /// The solver with validated settings, built for the run's context (its compute backend).
    fn from_settings(settings: Self::Settings, ctx: &SolverContext) -> Self;
    /// Bytes of working memory for a problem of `size` (checked before the run; see
    /// the harness's memory check). The default suits solvers built on sparse factorizations and
    /// per-contact blocks; a solver that forms dense matrices says so.
    fn working_memory(_settings: &Self::Settings, size: &ProblemSize) -> f64 {
        sparse_working_memory(size)
    }
}

/// The contact model a solver's converged answer satisfies (the harness grades every answer against
/// the rigid Coulomb NCP regardless; this says whether a nonzero residual there is by design).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredModel {
    /// The rigid Coulomb NCP (Signorini condition and Coulomb's cone).
    RigidCoulomb,
    /// A regularised (compliant) approximation of it.
    Regularised {
        /// The iteration-log columns holding the residual of the solver's own model; its value is
        /// the largest of them at the last row that has them all.
        residual_columns: &'static [&'static str],
    },
    /// Anitescu's convex relaxation (the CCP): the rigid cone without De Saxcé's shift, so the
    /// velocity of a sliding contact lies on the dual cone's boundary (`u_n = μ ||u_t||`, the
    /// relaxation's gliding) instead of in the tangent plane. Its natural map
    /// `λ − P_K(λ − u)` is a quantity the harness computes from an answer itself.
    Relaxed {
        /// The iteration-log columns holding the solver's own residual (as for `Regularised`).
        residual_columns: &'static [&'static str],
    },
    /// The velocity-level LCP with a polyhedral friction cone (Stewart & Trinkle, Anitescu &
    /// Potra): the Coulomb disk replaced by the regular polygon of `d` facets inscribed in it,
    /// no De Saxcé shift (`kernels::pyramid`). Its natural map, a quantity the harness computes
    /// from an answer itself, depends on `d`: the harness reads it from the setting named here.
    Pyramid {
        /// The setting holding the number of facets `d` (an integer ≥ 3).
        facets: &'static str,
        /// The iteration-log columns holding the solver's own residual (as for `Regularised`).
        residual_columns: &'static [&'static str],
    },
    /// The minimiser of a convex cone program whose feasible set is the contact law's
    /// (Drumwright's min-norm program: normal rows `u_n − v̂ + r_n λ_n ≥ 0`, the impulse in the
    /// Coulomb cone, the bilateral rows' laws, with the momentum balance as equality rows). The
    /// harness computes the program's feasibility and the momentum balance from an answer; its
    /// optimality needs the program's multipliers, which an answer does not carry
    /// (docs/equal-accuracy.md).
    ConeProgram {
        /// The iteration-log columns holding the solver's own residual (as for `Regularised`).
        residual_columns: &'static [&'static str],
    },
}

impl AnsweredModel {
    /// Whether the model is an approximation of the rigid NCP, regularised or relaxed (a nonzero
    /// rigid residual is then by design).
    pub fn is_regularised(self) -> bool {
        !matches!(self, AnsweredModel::RigidCoulomb)
    }

    /// The residual of the solver's own model read from its iteration log (`None` for the rigid
    /// model, or when the log lacks a column). Kept in records beside the harness's measure; the
    /// harness's verdicts never read it.
    pub fn own_residual(self, log: &crate::log::IterationLog) -> Option<f64> {
        let (AnsweredModel::Regularised { residual_columns }
        | AnsweredModel::Relaxed { residual_columns }
        | AnsweredModel::Pyramid { residual_columns, .. }
        | AnsweredModel::ConeProgram { residual_columns }) = self
        else {
            return None;
        };
        let mut best: Option<f64> = None;
        for c in residual_columns {
            let last = log.column(c)?.iter().rev().copied().find(|x| x.is_finite())?;
            best = Some(best.map_or(last, |b: f64| b.max(last)));
        }
        best
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
    /// Its outer iteration budget setting ([`SolverDef::BUDGET`]).
    pub budget: &'static str,
    /// Its stopping tolerance setting ([`SolverDef::TOLERANCE`]).
    pub tolerance: &'static str,
    /// The contact model it answers ([`SolverDef::MODEL`]).
    pub model: AnsweredModel,
    /// Whether the harness's stopping rule can end its solve early ([`SolverDef::HARNESS_STOPS`]).
    pub harness_stops: bool,
    /// Default parameters (a closure: a solver registered at run time, e.g. one written in
    /// Python, carries its own).
    pub defaults: Box<dyn Fn() -> Params + Send + Sync>,
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
            budget: T::BUDGET,
            tolerance: T::TOLERANCE,
            model: T::MODEL,
            harness_stops: T::HARNESS_STOPS,
            defaults: Box::new(|| Params::from_settings(&T::Settings::default())),
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

    /// Its default settings with the iteration budget and the tolerance set to `budget` and
    /// `tolerance` (a protocol that holds every solver to the same numbers).
    pub fn with_budget_and_tolerance(&self, budget: usize, tolerance: f64) -> Result<Params, ParamError> {
        let mut p = (self.defaults)();
        p.set_value(self.budget, &serde_json::Value::from(budget), self.name)?;
        p.set_value(self.tolerance, &serde_json::Value::from(tolerance), self.name)?;
        Ok(p)
    }

    /// Builds a solver from parameters (decoding and validating them), on the CPU backend.
    pub fn build(&self, params: &Params) -> Result<Box<dyn Solver>, ParamError> {
        Ok((self.prepare)(params)?(&SolverContext::default()))
    }
}

/// The size of a scene, from its parameters or its built world (counts as `f64`, so that products
/// of user parameters cannot overflow).
#[derive(Debug, Clone, PartialEq)]
pub struct ProblemSize {
    /// Velocity degrees of freedom.
    pub dofs: f64,
    /// Finite elements (tetrahedra).
    pub elements: f64,
    /// Contact candidates a step may carry (an upper estimate).
    pub contacts: f64,
    /// Time steps.
    pub steps: f64,
    /// The parameters that set these sizes, as the user wrote them (for the refusal message).
    pub driver: String,
}

/// Bytes per contact candidate (frame, Jacobian block, impulses, warm start).
pub const BYTES_PER_CONTACT: f64 = 1024.0;

/// Working memory of a solver built on sparse factorizations and per-contact blocks (the default
/// of [`SolverDef::working_memory`]): a sparse Cholesky factor of a 3D mesh's matrix holds
/// about `dofs^(4/3)` entries under a fill-reducing ordering (nested dissection), plus vectors.
pub fn sparse_working_memory(size: &ProblemSize) -> f64 {
    16.0 * size.dofs.powf(4.0 / 3.0) + 64.0 * size.dofs + 4.0 * BYTES_PER_CONTACT * size.contacts
}

/// Working memory of a solver that forms dense `n x n` matrices (`n` = DOFs plus three rows per
/// contact), a few of them at once.
pub fn dense_working_memory(size: &ProblemSize) -> f64 {
    let n = size.dofs + 3.0 * size.contacts;
    4.0 * 8.0 * n * n
}
