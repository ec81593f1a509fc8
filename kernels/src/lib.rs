//! Numerics for signorini: nothing here knows about bodies, cases or solvers.
//!
//! - [`cone`]: the Coulomb friction cone in FCLIB order `(n, t1, t2)`: projection, dual projection,
//!   the De Saxcé velocity shift.
//! - [`blockdiag`]: block-diagonal symmetric matrices (mass, non-contact stiffness) with cached
//!   per-block Cholesky factors.
//!
//! Shapes are programmer errors and are `assert!`ed; data-dependent failures come back as `Result`.

pub mod backend;
pub mod blockdiag;
pub mod cholesky;
pub mod cone;
pub mod iterative;
pub mod sparse;

pub use blockdiag::{BlockDiagonal, NotPositiveDefinite};
