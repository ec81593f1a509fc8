//! signorini's core: the mechanical model, contact geometry, the per-step problem, the
//! [`Solver`](solver::Solver) plugin trait, the stepper (time loop), solver-independent metrics,
//! run records, registries and the suite runner.
//!
//! Data flow of one run:
//! `Case::prepare -> PreparedCase` (typed parameters decoded once, the scene's `World`); a
//! [`Stepper`](stepper::Stepper) over the steps: `geometry::detect -> ContactSet`,
//! `Stepper::problem -> StepProblem` (data plus a [`ModelEval`], no world), `Solver::step ->
//! StepSolution`, `metrics::evaluate -> StepMetrics`, `Stepper::advance`; finally
//! `PreparedCase::grade` grades the [`Trace`](case::Trace) and a [`RunRecord`](record::RunRecord)
//! is written atomically.

pub mod case;
pub mod cluster;
pub mod constraints;
pub mod contact;
pub mod contact_blocks;
pub mod eval;
pub mod geometry;
pub mod implicit;
pub mod input;
pub mod linear;
pub mod log;
pub mod metrics;
pub mod model;
pub mod params;
pub mod problem;
pub mod record;
pub mod registry;
pub mod resources;
pub mod runner;
pub mod solver;
pub mod stepper;

pub use case::{Case, CaseDef, CaseError, CaseParams, CaseVariant, OracleCheck, PreparedCase, Scenario, Trace};
pub use contact::{ColliderId, Contact, ContactKey, ContactSet, DofOffsets, JBlock};
pub use eval::{ElasticEval, ModelEval, Reevaluation};
pub use log::IterationLog;
pub use metrics::StepMetrics;
pub use params::{check_budget, FieldError, ParamError, Params, Settings, MAX_ITERATION_BUDGET};
pub use problem::{StepProblem, WarmStart};
pub use registry::{Registry, SolverDef, SolverEntry};
pub use solver::{Capabilities, SolveError, SolveStatus, Solver, SolverContext, StepSolution};
