//! The Schur-complement system of one Newton iteration (Macklin et al. 2019 Eqs. 59–60) and its
//! linear solvers.
//!
//! `A = J H⁻¹ Jᵀ + C + ε I` is applied matrix-free as three products (`Jᵀ x` by SpMV on the
//! transposed CSR, the `H` solve, `J (·)` by SpMV), the way the paper's GPU code does (§8.2,
//! §10); the SpMVs and the Krylov vector operations go through a
//! [`kernels::backend::Backend`]. `H = M` (block diagonal) for rigid bodies; with deformable
//! bodies `H = M + h² ∇²U + diag(c_GS)` is sparse and factored by
//! [`kernels::cholesky::SparseCholesky`] (prescribed DOFs: identity rows).

use super::settings::LinearSolver;
use api::SolveError;
use kernels::backend::Backend;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use kernels::iterative::{cg, pcr, KrylovParams, KrylovWorkspace, LinearOperator};
use kernels::sparse::Csr;
use kernels::BlockDiagonal;
use nalgebra::DMatrix;

/// How `H⁻¹` is applied.
pub(super) enum HFactor<'a> {
    /// `H = M`, block-diagonal and already factored.
    Mass(&'a BlockDiagonal),
    /// Sparse `H` with prescribed DOFs as identity rows (`fixed[k]`): their entries are zeroed.
    Sparse(&'a mut SparseCholesky, &'a [bool]),
}

impl HFactor<'_> {
    pub(super) fn solve(&mut self, x: &mut [f64]) {
        match self {
            HFactor::Mass(m) => m.solve_in_place(x),
            HFactor::Sparse(chol, fixed) => {
                for (xi, &f) in x.iter_mut().zip(fixed.iter()) {
                    if f {
                        *xi = 0.0;
                    }
                }
                chol.solve_in_place(x);
            }
        }
    }
}

/// Factors the sparse `H` given as CSR, reusing `cache`'s symbolic analysis when the pattern is
/// unchanged.
pub(super) fn factor_sparse(h: &Csr, cache: &mut Option<SparseCholesky>) -> Result<(), SolveError> {
    let (cp, ri, vals) = h.lower_csc();
    if !cache.as_ref().is_some_and(|c| c.has_pattern(&cp, &ri)) {
        let c = SparseCholesky::analyze(h.nrows, cp, ri, CholeskyParams::default())
            .map_err(|e| SolveError::Factorization { what: format!("H = M + h² K: {e}") })?;
        *cache = Some(c);
    }
    let chol = cache.as_mut().expect("analysed above");
    chol.factorize(&vals).map_err(|e| SolveError::Factorization { what: format!("H = M + h² K: {e}") })
}

/// The operator `x ↦ J H⁻¹ Jᵀ x + (C + ε) x`.
pub(super) struct SchurOperator<'a, 'h, B: Backend> {
    pub j: &'a Csr,
    pub jt: &'a Csr,
    pub h: &'a mut HFactor<'h>,
    /// `diag(C) + ε`.
    pub c: &'a [f64],
    pub backend: &'a B,
    /// Scratch of length `nv` (kept by the solver across iterations).
    pub tmp: &'a mut [f64],
}

impl<B: Backend> LinearOperator for SchurOperator<'_, '_, B> {
    fn dim(&self) -> usize {
        self.j.nrows
    }
    fn apply(&mut self, x: &[f64], y: &mut [f64]) {
        self.backend.spmv(self.jt, x, self.tmp);
        self.h.solve(self.tmp);
        self.backend.spmv(self.j, self.tmp, y);
        for ((yi, ci), xi) in y.iter_mut().zip(self.c).zip(x) {
            *yi += ci * xi;
        }
    }
}

/// `[J B⁻¹ Jᵀ]_ii` of every row (the kernels' one implementation, shared with `local_global`).
pub(super) use kernels::ncp::schur_diagonal;

/// What one linear solve reports.
#[derive(Debug, Clone, Default)]
pub(super) struct LinearInfo {
    pub iterations: usize,
    /// `||b − A x||_2 / ||b||_2` at the returned `x` (NaN if not measured).
    pub rel_residual: f64,
    /// The preconditioned residual norms of a Krylov solve (empty otherwise).
    pub history: Vec<f64>,
}

/// Work vectors of the linear solves, kept by the solver across Newton iterations and steps (the
/// Krylov vectors and the Jacobi preconditioner), so that a Krylov solve of `k` iterations costs
/// `k` operator applications and no allocation of `m`-vectors.
#[derive(Debug, Clone, Default)]
pub(super) struct LinearWorkspace {
    krylov: KrylovWorkspace,
    pinv: Vec<f64>,
}

/// Solves `A x = b` (x starts at 0) with the chosen method. `diag` is `diag(A)` (Jacobi
/// preconditioner and the Jacobi/Gauss–Seidel iterations).
#[allow(clippy::too_many_arguments)]
pub(super) fn solve<B: Backend>(
    method: LinearSolver,
    op: &mut SchurOperator<'_, '_, B>,
    diag: &[f64],
    b: &[f64],
    x: &mut [f64],
    iterations: usize,
    tolerance: f64,
    ws: &mut LinearWorkspace,
) -> Result<LinearInfo, SolveError> {
    let m = b.len();
    x.fill(0.0);
    if m == 0 {
        return Ok(LinearInfo::default());
    }
    ws.pinv.clear();
    ws.pinv.extend(diag.iter().map(|d| if *d > 0.0 { 1.0 / d } else { 1.0 }));
    let pinv = &ws.pinv;
    let params = KrylovParams { max_iterations: iterations, rel_tolerance: tolerance, abs_tolerance: 0.0 };
    let backend = op.backend;
    let krylov = |r: Result<kernels::iterative::KrylovInfo, kernels::iterative::KrylovError>| {
        r.map(|i| LinearInfo {
            iterations: i.iterations,
            rel_residual: i.rel_residual,
            history: i.precond_residual_history,
        })
        .map_err(|e| SolveError::Numerical { what: format!("Schur system: {e}") })
    };
    match method {
        LinearSolver::Pcr => krylov(pcr::pcr_with(backend, op, pinv, b, x, &params, &mut ws.krylov)),
        LinearSolver::Pcg => krylov(cg::cg_with(backend, op, pinv, b, x, &params, &mut ws.krylov)),
        LinearSolver::Jacobi | LinearSolver::GaussSeidel | LinearSolver::Direct => {
            if m > 3000 {
                return Err(SolveError::Unsupported {
                    what: format!("linear_solver '{method:?}' assembles the {m} x {m} Schur matrix; use pcr or pcg"),
                });
            }
            let a = assemble(op);
            match method {
                LinearSolver::Direct => direct(&a, b, x)?,
                LinearSolver::Jacobi => {
                    let mut ax = vec![0.0; m];
                    for _ in 0..iterations {
                        mul_dense(&a, x, &mut ax);
                        for i in 0..m {
                            x[i] += pinv[i] * (b[i] - ax[i]);
                        }
                    }
                }
                _ => {
                    for _ in 0..iterations {
                        for i in 0..m {
                            let s: f64 = (0..m).filter(|&k| k != i).map(|k| a[(i, k)] * x[k]).sum();
                            x[i] = (b[i] - s) * pinv[i];
                        }
                    }
                }
            }
            let mut ax = vec![0.0; m];
            mul_dense(&a, x, &mut ax);
            let r: f64 = ax.iter().zip(b).map(|(p, q)| (p - q).powi(2)).sum::<f64>().sqrt();
            let bn: f64 = b.iter().map(|v| v * v).sum::<f64>().sqrt();
            let iters = if method == LinearSolver::Direct { 1 } else { iterations };
            Ok(LinearInfo { iterations: iters, rel_residual: if bn > 0.0 { r / bn } else { 0.0 }, history: vec![] })
        }
    }
}

fn mul_dense(a: &DMatrix<f64>, x: &[f64], y: &mut [f64]) {
    for (i, yi) in y.iter_mut().enumerate() {
        *yi = (0..a.ncols()).map(|k| a[(i, k)] * x[k]).sum();
    }
}

/// The Schur matrix, column by column from the operator (symmetrised).
fn assemble<B: Backend>(op: &mut SchurOperator<'_, '_, B>) -> DMatrix<f64> {
    let m = op.dim();
    let mut a = DMatrix::zeros(m, m);
    let mut e = vec![0.0; m];
    let mut col = vec![0.0; m];
    for j in 0..m {
        e[j] = 1.0;
        op.apply(&e, &mut col);
        e[j] = 0.0;
        a.set_column(j, &nalgebra::DVector::from_column_slice(&col));
    }
    0.5 * (&a + a.transpose())
}

/// Cholesky of the dense Schur matrix through faer (kernels' sparse Cholesky on the full pattern).
fn direct(a: &DMatrix<f64>, b: &[f64], x: &mut [f64]) -> Result<(), SolveError> {
    let m = a.nrows();
    let mut t = Vec::with_capacity(m * m);
    for i in 0..m {
        for k in 0..m {
            t.push((i, k, a[(i, k)]));
        }
    }
    let csr = Csr::from_triplets(m, m, &t);
    let (cp, ri, vals) = csr.lower_csc();
    let mut chol = SparseCholesky::analyze(m, cp, ri, CholeskyParams::default())
        .map_err(|e| SolveError::Factorization { what: format!("Schur matrix: {e}") })?;
    chol.factorize(&vals).map_err(|e| SolveError::Factorization { what: format!("Schur matrix: {e}") })?;
    x.copy_from_slice(b);
    chol.solve_in_place(x);
    Ok(())
}
