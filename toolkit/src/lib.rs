//! Shared solver math over the solver API ([`api`]): what several solvers (and the harness's
//! metrics) build on, so that no solver copies another's code.
//!
//! - [`implicit`]: the linearised implicit step of deformable bodies (velocity-level solvers);
//! - [`delassus`]: projected Gauss–Seidel updates on a problem in Delassus form (pgs's sweeps,
//!   nsn's fallback sweep);
//! - [`contact_blocks`]: per-contact Delassus blocks (Gauss–Seidel and Jacobi-type solvers);
//! - [`cone_qp`]: Anitescu's cone complementarity problem in dense Delassus form (the CCP
//!   solvers `ccp_pgs`, `ccp_admm`, `apgd`);
//! - [`cone_program`]: a convex cone program (QP / SOCP) assembled row by row and solved with
//!   clarabel (`drumwright`, `staggered`);
//! - [`constraints`]: contacts and joint rows as one list of small row blocks (primal–dual
//!   solvers);
//! - [`lee`]: the cross-solver contact residual of Lee et al. (their stopping criterion and
//!   reported residual).
#![deny(missing_docs)]

pub mod cone_program;
pub mod cone_qp;
pub mod constraints;
pub mod contact_blocks;
pub mod delassus;
pub mod implicit;
pub mod lee;

pub use lee::{lee_residual, LeeResidual};
