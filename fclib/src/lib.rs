//! FCLIB interoperability: export any step problem as an FCLIB global problem (HDF5), import FCLIB
//! files as [`harness::linear::LinearProblem`]s that every velocity-level solver can run (a
//! local-only file through the Cholesky view [`LocalProblem::global_view`]), the FCLIB/Siconos
//! natural-map error to compare our answer with a stored solution, and the campaign protocol of
//! `signorini fclib bench` ([`mod@bench`]; docs/fclib.md).
//!
//! # Mapping (FCLIB `fclib.h`; docs/metrics.md)
//! FCLIB's global problem is `M v = H r + f`, `u = H^T v + w`, `K_mu ∋ r ⊥ u + (mu ||u_T||, 0, 0)
//! ∈ K_mu*`, per-contact vectors **normal first** `(n, t1, t2)`, the order of signorini's contact
//! space, so no permutation is needed (ContactBench stores the normal last: `(t1, t2, n)`; convert
//! with [`to_normal_last`] / [`from_normal_last`]). A step problem (`M (v+ - v*) = J^T lambda`,
//! `u = J v+ + w`) maps to:
//!
//! | FCLIB | signorini |
//! |---|---|
//! | `M` | the mass matrix at `q0` |
//! | `H` (`nv x 3 nc`) | `J^T`, columns `3 i + (0, 1, 2)` = `(n, t1, t2)` of contact `i` |
//! | `f` | the free momentum `M v* = M v0 + dt f(q0, v0)` (N s) |
//! | `w` | the bias `(phi0_i / dt, 0, 0)` (m/s) |
//! | `mu` | the combined friction coefficient |
//! | `r`, `v`, `u` | impulses `lambda` (N s), `v+`, `J v+ + w` |
//! | `W`, `q` (local) | `H^T M^-1 H`, `H^T M^-1 f + w` |
//!
//! The exported law is the harness's rigid reference law: a compliant contact's stiffness and
//! dissipation are not part of it (`math_info` says so).
//!
//! # File layout
//! `/fclib_global/{spacedim, M, H, vectors/{f, w, mu}, info/{title, description, math_info}}`,
//! `/fclib_local/{spacedim, W, vectors/{q, mu}}` when `3 nc` is at most the local limit,
//! `/solution/{v, u, r}`, `/guesses/{number_of_guesses, 1, 2, ...}`. Matrices are CSparse groups
//! `nzmax, m, n, nz, p, i, x` (written compressed-column, `nz = -1`; read in triplet `nz >= 0`,
//! CSC `-1` and CSR `-2` forms), integers as 32-bit. One extension: `/fclib_global/M/block_sizes`
//! (sizes of the diagonal blocks of `M`, ignored by other readers); without it the importer uses
//! 6-DOF blocks when `M`'s sparsity allows, else the finest block-diagonal split.
//!
//! HDF5 I/O is pure Rust (`hdf5-pure`): no system library.
//!
//! # Modules
//! - [`problem`]: the FCLIB problem types ([`FclibProblem`], [`GlobalProblem`], [`LocalProblem`],
//!   [`Solution`], [`Info`]), the mapping from a step problem ([`from_step`]) and the FCLIB
//!   quantities (local form, natural-map error);
//! - [`matrix`]: FCLIB's compressed-column matrices as `sprs::CsMat<f64>` ([`Csc`], [`CscOps`]);
//! - [`mod@write`] / [`mod@read`]: the HDF5 layout ([`write()`], [`read()`], [`FclibError`]);
//! - [`mod@solve`]: running a signorini solver on an imported problem ([`solve()`]);
//! - [`export`]: a step of a scenario as an FCLIB problem with a solver's answer ([`export_step`]);
//! - [`mod@bench`]: one run record per (problem, solver) under one tolerance, budget and time limit.
//!
//! # Sparse matrices
//! Matrices at the API are `sprs::CsMat<f64>` in compressed-column storage: FCLIB stores CSparse
//! matrices compressed-column, sprs is the workspace's sparse type for assembly and I/O (faer's
//! sparse types serve factorisations in `kernels`), and `CsMat`'s `(indptr, indices, data)` are
//! the FCLIB `(p, i, x)` datasets as they are.

/// The HDF5 crate used (pure Rust), for callers that build or inspect files themselves.
pub use hdf5_pure;

pub mod bench;
mod error;
pub mod export;
pub mod grade;
pub mod matrix;
pub mod problem;
pub mod read;
pub mod solve;
pub mod view;
pub mod write;

pub use error::FclibError;
pub use export::{export_step, reach_step, solution_of, ExportError};
pub use grade::{Grade, Grader};
pub use matrix::{Csc, CscOps};
pub use problem::{
    from_normal_last, from_step, natmap_residual, to_normal_last, FclibProblem, Form, FormError, GlobalProblem, Info,
    LocalProblem, ProblemError, Solution, LOCAL_LIMIT, LOCAL_VIEW_LIMIT, M_SYMMETRY_TOLERANCE, W_SYMMETRY_TOLERANCE,
};
pub use read::{read, read_as, read_solution};
pub use solve::{answer, solve, Given, Prepared, SolveFailure, SolveReport};
pub use view::GlobalView;
pub use write::write;
