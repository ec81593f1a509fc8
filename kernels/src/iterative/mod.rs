//! Krylov solvers for symmetric (semi-)definite systems `A x = b` with a matrix-free operator:
//! conjugate gradients ([`cg`]), conjugate residual ([`cr`]) and Jacobi-preconditioned conjugate
//! residual ([`pcr`], Macklin et al. 2019 §8.2). Every vector operation goes through a
//! [`Backend`](crate::backend::Backend).
//!
//! Each solver has a `Params`/`Info`/`Error` triad (faer's `CgParams`/`CgInfo`/`CgError`,
//! style.md §2). One difference from faer: running out of iterations is *not* an error here —
//! contact solvers run these with a fixed budget and use the last iterate (Macklin §8.2:
//! "can be stopped early with a useful result"), so [`KrylovInfo::converged`] says whether the
//! tolerance was met, and [`KrylovError`] is reserved for breakdowns (a non-positive or
//! non-finite curvature), which leave no usable iterate beyond the last good one.

pub mod cg;
pub mod cr;
pub mod pcr;

use crate::backend::Backend;
use crate::sparse::Csr;

/// A square linear operator `y = A x` (matrix-free). `apply` takes `&mut self` so that
/// implementations can keep scratch buffers.
pub trait LinearOperator {
    /// Dimension `n` of `A`.
    fn dim(&self) -> usize;
    /// `y = A x`.
    fn apply(&mut self, x: &[f64], y: &mut [f64]);
}

/// A CSR matrix as an operator through a backend's SpMV.
pub struct CsrOperator<'a, B: Backend + ?Sized> {
    /// The matrix (square).
    pub matrix: &'a Csr,
    /// The backend doing the SpMV.
    pub backend: &'a B,
}

impl<B: Backend + ?Sized> LinearOperator for CsrOperator<'_, B> {
    fn dim(&self) -> usize {
        self.matrix.nrows
    }
    fn apply(&mut self, x: &[f64], y: &mut [f64]) {
        self.backend.spmv(self.matrix, x, y);
    }
}

/// Stopping rule shared by the Krylov solvers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KrylovParams {
    /// Most iterations (each costs one operator application).
    pub max_iterations: usize,
    /// Stop when `||b - A x||_2 <= rel_tolerance ||b||_2` (0 disables: fixed budget).
    pub rel_tolerance: f64,
    /// Stop when `||b - A x||_2 <= abs_tolerance` (0 disables).
    pub abs_tolerance: f64,
}

impl Default for KrylovParams {
    fn default() -> Self {
        Self { max_iterations: 100, rel_tolerance: 1e-10, abs_tolerance: 0.0 }
    }
}

/// What a Krylov solve reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KrylovInfo {
    /// Iterations done.
    pub iterations: usize,
    /// `||b - A x||_2` at the returned `x` (recursively updated residual).
    pub abs_residual: f64,
    /// `abs_residual / ||b||_2` (0 if `b = 0`).
    pub rel_residual: f64,
    /// Whether a tolerance was met (false: the budget ran out; `x` is still the last iterate).
    pub converged: bool,
    /// `||r_k||_2` for `k = 0..=iterations` (`r_0 = b - A x_0`).
    pub residual_history: Vec<f64>,
    /// `sqrt(r_k · P⁻¹ r_k)`, the preconditioned residual norm (equals `residual_history`
    /// without a preconditioner). PCR minimises it, so it is non-increasing.
    pub precond_residual_history: Vec<f64>,
}

/// A breakdown: the iteration cannot continue (the last good iterate is left in `x`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KrylovError {
    /// A curvature `p·A p` (CG) or `Ap·P⁻¹Ap` (CR) was not positive: the operator or the
    /// preconditioner is not positive definite on the Krylov space.
    #[error("non-positive curvature {value} at iteration {iteration}")]
    NonPositiveCurvature {
        /// Iteration index.
        iteration: usize,
        /// The offending value.
        value: f64,
    },
    /// A NaN or infinity appeared.
    #[error("non-finite value at iteration {iteration}")]
    NonFinite {
        /// Iteration index.
        iteration: usize,
    },
}

/// Whether the stopping rule is met for residual norm `r` and right-hand-side norm `b`.
pub(crate) fn done(p: &KrylovParams, r: f64, b: f64) -> bool {
    r <= p.abs_tolerance || (p.rel_tolerance > 0.0 && r <= p.rel_tolerance * b) || r == 0.0
}

#[cfg(test)]
pub(crate) mod test_systems {
    use crate::sparse::Csr;

    /// A deterministic, badly scaled SPD (or PSD if `singular`) matrix `A = Bᵀ D B + shift I`.
    pub fn ill_scaled(n: usize, singular: bool) -> Csr {
        let mut t = Vec::new();
        // tridiagonal B with scales over 6 decades
        let scale = |i: usize| 10f64.powf(-3.0 + 6.0 * i as f64 / n as f64);
        let mut dense = vec![vec![0.0; n]; n];
        for i in 0..n {
            let rank_cut = singular && i == n - 1;
            let rows: Vec<(usize, f64)> = if rank_cut { vec![] } else { vec![(i, 1.0), ((i + 1) % n, -0.7)] };
            for &(a, va) in &rows {
                for &(b, vb) in &rows {
                    dense[a][b] += scale(i) * va * vb;
                }
            }
        }
        for (i, row) in dense.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    t.push((i, j, v));
                }
            }
        }
        Csr::from_triplets(n, n, &t)
    }
}
