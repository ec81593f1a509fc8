//! signorini's solver API: everything a solver author uses, and nothing else.
//!
//! A solver implements [`Solver`] (one time step at a time) and [`SolverDef`] (its name, paper,
//! capabilities, settings and the names of its shared knobs); it reads a [`StepProblem`] (data
//! assembled at the start of the step plus a narrow [`ModelEval`] for other configurations),
//! records per-iteration statistics in an [`IterationLog`] and returns a [`StepSolution`] with a
//! [`SolveStatus`], or a [`SolveError`] when nothing usable came out. Settings are serde structs
//! validated through [`Settings`], with the shared checks of [`params`].
//!
//! This crate knows no world, geometry, case, runner or record: the harness builds the problems
//! and grades the answers. Conventions: SI units; per-contact vectors ordered `(n, t1, t2)`; the
//! normal points from body B to body A; a gap `phi > 0` means separated; contact-space quantities
//! are impulses (N s).
#![deny(missing_docs)]

pub mod bilateral;
pub mod contact;
pub mod def;
pub mod delassus;
pub mod error;
pub mod eval;
pub mod layout;
pub mod linear;
pub mod log;
pub mod params;
pub mod problem;
pub mod solver;

pub use bilateral::{BilateralRow, BilateralSet, GBlock, JointCompliance};
pub use contact::{ColliderId, Contact, ContactCompliance, ContactKey, ContactSet, JBlock};
pub use def::{AnsweredModel, ProblemSize, SolverDef, SolverEntry};
pub use delassus::{Block3, DelassusProblem};
pub use error::SolveError;
pub use eval::{ElasticEval, ModelEval, Reevaluation};
pub use layout::{BlockKind, DofBlock, DofLayout};
pub use log::{IterationLog, StopRule, Yardstick};
pub use params::{
    check_budget, check_in, check_non_negative, check_positive, Bound, ChoiceError, FieldError, ParamError, Params,
    Settings, MAX_ITERATION_BUDGET,
};
pub use problem::{StepProblem, StepProblemParts, WarmStart};
pub use solver::{Capabilities, DelassusSolution, SolveStatus, Solver, SolverContext, StepSolution};
