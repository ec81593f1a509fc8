//! The contact solvers of signorini, one module folder per method.
//!
//! Each folder (`pgs/`, `sap/`, `drumwright/`, `canal/`, `subadmm/`, `nsn/`, `local_global/`, `ccp/`,
//! `apgd/`, `raisim/`, `lcp/`, `staggered/`)
//! holds the method's [`api::Solver`] implementation, its settings struct
//! (serde defaults + [`api::Settings::validate`]), its tests, and a `README.md` with the paper,
//! the equations implemented, every choice the paper left open and known deviations. A module
//! implements `api::SolverDef` for its solver type, which the root crate registers with one
//! line, `.register::<solvers::pgs::Pgs>()`; `docs/adding-a-solver.md` walks through it with PGS.

pub mod apgd;
pub mod canal;
pub mod ccp;
pub mod drumwright;
pub mod lcp;
pub mod local_global;
pub mod nsn;
pub mod pgs;
pub mod raisim;
pub mod sap;
pub mod staggered;
pub mod subadmm;
#[cfg(test)]
mod test_problems;
