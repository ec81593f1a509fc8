//! The plugin interface: [`Solver`], what it can do ([`Capabilities`]), what it returns
//! ([`StepSolution`] with a [`SolveStatus`]) and how it fails ([`SolveError`]).
//!
//! Status versus error follows clarabel: a usable iterate comes back as `Ok` with a status saying
//! how good it is (`Solved`, `MaxIterations`, ...); `Err` is reserved for steps that produced
//! nothing usable.

use crate::delassus::DelassusProblem;
pub use crate::error::SolveError;
use crate::log::IterationLog;
use crate::problem::StepProblem;
use serde::{Deserialize, Serialize};

/// What a solver can handle; a case states what it needs with the same struct.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Rigid bodies.
    pub rigid_bodies: bool,
    /// Deformable (FEM) bodies.
    pub deformable_bodies: bool,
    /// Elasticity in projective (local-global) form.
    pub projective_elasticity: bool,
    /// Compliant contact (stiffness and dissipation time).
    pub compliant_contact: bool,
    /// Rigid contact.
    pub rigid_contact: bool,
    /// The exact (second-order) Coulomb cone rather than a polyhedral approximation.
    pub exact_friction_cone: bool,
    /// Bilateral constraints (joints).
    pub bilateral_constraints: bool,
    /// Runs on a GPU.
    pub gpu: bool,
    /// Takes problems in Delassus form `u = W r + q` as given, non-symmetric `W` included
    /// ([`crate::delassus`], [`Solver::solve_delassus`]).
    pub delassus_form: bool,
}

impl Capabilities {
    /// The capabilities `needs` asks for that `self` lacks, by name (empty: compatible).
    pub fn missing(&self, needs: &Capabilities) -> Vec<&'static str> {
        let pairs = [
            (self.rigid_bodies, needs.rigid_bodies, "rigid bodies"),
            (self.deformable_bodies, needs.deformable_bodies, "deformable bodies"),
            (self.projective_elasticity, needs.projective_elasticity, "projective elasticity"),
            (self.compliant_contact, needs.compliant_contact, "compliant contact"),
            (self.rigid_contact, needs.rigid_contact, "rigid contact"),
            (self.exact_friction_cone, needs.exact_friction_cone, "exact friction cone"),
            (self.bilateral_constraints, needs.bilateral_constraints, "bilateral constraints"),
            (self.gpu, needs.gpu, "gpu"),
            (self.delassus_form, needs.delassus_form, "Delassus form"),
        ];
        pairs.iter().filter(|(has, need, _)| *need && !*has).map(|(_, _, n)| *n).collect()
    }
}

/// What a solver is built with besides its settings: the run's choices that are not the
/// method's options.
#[derive(Debug, Clone, Default)]
pub struct SolverContext {
    /// The compute backend of the run (`signorini run --backend`; the CPU by default). Solvers
    /// with a device path (nsn, local_global) run their linear algebra on it; the others ignore it.
    pub backend: kernels::backend::AnyBackend,
}

/// How good a returned iterate is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SolveStatus {
    /// The solver's own stopping criterion was met.
    Solved,
    /// A relaxed criterion was met.
    AlmostSolved,
    /// The iteration budget ran out; the last iterate is returned, or the best one by the
    /// solver's own merit where its README says so (nsn).
    MaxIterations,
    /// Progress stalled, or the iteration diverged, before the criterion was met; the last
    /// iterate is returned, or the best one by the solver's own merit where its README says so.
    InsufficientProgress,
    /// The step's wall-time limit passed ([`crate::IterationLog::past_deadline`]) before the
    /// criterion was met; the last iterate is returned (as clarabel's `MaxTime`). The harness
    /// records the step and stops the pair with the limit as its reason.
    TimeLimit,
    /// The harness's stopping rule stopped it (equal accuracy: its yardstick met the accuracy,
    /// [`crate::IterationLog::should_stop`]); a verdict of the harness, not the solver's claim.
    Stopped,
}

impl SolveStatus {
    /// Whether the solver's (possibly relaxed) criterion was met.
    pub fn is_converged(self) -> bool {
        matches!(self, SolveStatus::Solved | SolveStatus::AlmostSolved)
    }
}

/// A step's result.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSolution {
    /// Generalized velocity at the end of the step.
    pub v: Vec<f64>,
    /// Generalized positions at the end of the step; `None` means the harness integrates
    /// `q+ = q0 + dt N v+` ([`StepProblem::integrate`]).
    pub q: Option<Vec<f64>>,
    /// Contact impulses `(n, t1, t2)` in N s, one per contact of the problem, in the problem's
    /// contact frames.
    pub impulses: Vec<[f64; 3]>,
    /// Bilateral-constraint impulses (N s); empty when the model has none.
    pub bilateral: Vec<f64>,
    /// Iterations of the solver's main loop.
    pub iterations: usize,
    /// Quality of the iterate.
    pub status: SolveStatus,
}

/// A contact solver: one time step at a time.
///
/// A solver holds its settings and any state it wants to keep between steps (factorization
/// patterns, scratch buffers); warm-start data arrives through [`StepProblem::warm_start`]. Its
/// name, paper, capabilities and settings type are given by [`crate::def::SolverDef`].
pub trait Solver: Send {
    /// Solves one step. Implementations record per-iteration statistics in `log`.
    fn step(&mut self, problem: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError>;

    /// Solves a problem in Delassus form, `W` as given (symmetric or not). Solvers that declare
    /// [`Capabilities::delassus_form`] implement it; the default refuses.
    fn solve_delassus(
        &mut self,
        _problem: &DelassusProblem,
        _log: &mut IterationLog,
    ) -> Result<DelassusSolution, SolveError> {
        Err(SolveError::Unsupported { what: "problems in Delassus form (u = W r + q)".into() })
    }
}

/// A solver's answer to a [`DelassusProblem`].
#[derive(Debug, Clone, PartialEq)]
pub struct DelassusSolution {
    /// Impulses `r_i = (n, t1, t2)`, one per contact.
    pub impulses: Vec<[f64; 3]>,
    /// Iterations of the solver's main loop.
    pub iterations: usize,
    /// The solver's own verdict on its iterate (the harness grades the impulses itself).
    pub status: SolveStatus,
}
