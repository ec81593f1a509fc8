//! Numerics for signorini: nothing here knows about bodies, cases or solvers.
//!
//! - [`anderson`]: Anderson acceleration of a fixed-point iteration (the PGS sweep's `acceleration`).
//! - [`cone`]: the Coulomb friction cone in FCLIB order `(n, t1, t2)`: projection, dual projection,
//!   the De Saxcé velocity shift.
//! - [`contact_local`]: one contact's local problem with the others frozen (Delassus block, normal
//!   law, friction disk) and its exact solves, the building block of Gauss–Seidel/Jacobi solvers.
//! - [`lcp`]: dense linear complementarity problems: Lemke's method (lexicographic), the min-map residual.
//! - [`pyramid`]: the polyhedral friction cone with `d` facets: its directions, the projection onto
//!   its polygon, the natural map of the pyramid LCP's contact law.
//! - [`ncp`]: NCP functions (Fischer–Burmeister, min map), the fixed-point friction compliance
//!   and the mass-based complementarity preconditioner (shared by `nsn` and `local_global`).
//! - [`pd_local`]: the projective-dynamics local step on tetrahedra as device-ready data.
//! - [`sparse_lu`]: sparse LU of a non-symmetric matrix with the symbolic analysis reused across
//!   refactorizations (nsn's Newton step on a non-symmetric Delassus matrix).
//! - [`sparse_inverse`]: the sparse inverse Cholesky factor `S = L⁻¹ P` (`A⁻¹ = Sᵀ S`) of Zeng et al.
//! - [`backend`]: the compute backend (CPU; CUDA with the `gpu` cargo feature, module `gpu`),
//!   run-time selection with CPU fallback, stage timing with device synchronisation.
//! - [`block_cholesky`]: block-sparse Cholesky over a body graph (6 × 6 / 3 × 3 dense blocks, AMD
//!   on the blocks), SAP's Hessian factorization.
//! - [`blockdiag`]: block-diagonal symmetric matrices (mass, non-contact stiffness) with cached
//!   per-block Cholesky factors.
//! - [`dense_cholesky`]: small dense Cholesky factors in caller-owned buffers; [`tree_ldl`]: the
//!   `LᵀDL` of a matrix with a kinematic tree's branch-induced sparsity (Featherstone).
//!
//! Shapes are programmer errors and are `assert!`ed; data-dependent failures come back as `Result`.

pub mod anderson;
pub mod assembly;
pub mod backend;
pub mod block_cholesky;
pub mod blockdiag;
pub mod cholesky;
pub mod cone;
pub mod contact_local;
pub mod dense_cholesky;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod iterative;
pub mod lcp;
pub mod ncp;
pub mod pd_local;
pub mod pyramid;
pub mod roots;
pub mod sparse;
pub mod sparse_inverse;
pub mod sparse_lu;
pub mod tree_ldl;

pub use backend::gpu_probe;
pub use blockdiag::{BlockDiagonal, NotPositiveDefinite};
