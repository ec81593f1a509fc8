//! signorini's core behind the solver API ([`api`], re-exported here): the mechanical model,
//! contact geometry, the assembly of each step's problem from a world, the stepper (time loop),
//! solver-independent metrics, registries and the suite runner.
//!
//! Data flow of one run:
//! `Case::prepare -> PreparedCase` (typed parameters decoded once, the scene's `World`); a
//! [`Stepper`](stepper::Stepper) over the steps: `geometry::detect -> ContactSet`,
//! `World::step_problem -> StepProblem` (data plus a [`ModelEval`], no world), `Solver::step ->
//! StepSolution`, `metrics::evaluate -> StepMetrics`, `Stepper::advance`; finally
//! `PreparedCase::grade` grades the [`Trace`](case::Trace) and a `records::RunRecord`
//! is written atomically (the `records` crate).

pub mod accuracy;
pub mod case;
pub mod cluster;
pub mod contact;
pub mod eval;
pub mod geometry;
pub mod metrics;
pub mod model;
pub mod problem;
pub mod registry;
pub mod resources;
pub mod runner;
pub mod stepper;
pub mod trajectory;

pub use api::{linear, log, params, solver};

pub use api::{
    check_budget, AnsweredModel, Capabilities, FieldError, IterationLog, ParamError, Params, Settings, SolveError,
    SolveStatus, Solver, SolverContext, SolverDef, SolverEntry, StepProblem, StepSolution, WarmStart,
    MAX_ITERATION_BUDGET,
};
pub use case::{Case, CaseDef, CaseError, CaseParams, CaseVariant, OracleCheck, PreparedCase, Scenario, Trace};
pub use contact::{ColliderId, Contact, ContactKey, ContactSet, DofOffsets, JBlock};
pub use eval::{ElasticEval, ModelEval, Reevaluation};
pub use metrics::StepMetrics;
pub use registry::Registry;
