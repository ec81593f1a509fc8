//! The ground truth of Fig. 9: a converged Newton solution `q*` of the step's incremental
//! potential (Eq. 1)
//!
//! ```text
//! e(q) = 1/(2h²) (q − q̃)ᵀ M (q − q̃) + U(q),      q̃ = q_t + h v_t + h² M⁻¹ f_ext
//! ```
//!
//! with the model's exact elastic energy `U` (for ARAP identical to the PD energy
//! `Σ w/2 ‖F − R‖²`, `w = 2μV`), prescribed DOFs held at their targets. Newton with the
//! per-element PSD-projected Hessian, a sparse Cholesky and Armijo backtracking; contact-free
//! steps only (the twisting bar).

use api::{SolveError, StepProblem};
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use kernels::sparse::Csr;

/// `e(q)` (J) of the step `p` (see the module doc).
pub fn incremental_potential(p: &StepProblem<'_>, q: &[f64], q_tilde: &[f64]) -> f64 {
    let dq: Vec<f64> = q.iter().zip(q_tilde).map(|(a, b)| a - b).collect();
    let mdq = p.mass.mul(&dq);
    let inertia: f64 = dq.iter().zip(&mdq).map(|(a, b)| a * b).sum::<f64>() / (2.0 * p.dt * p.dt);
    inertia + p.model().elastic_energy_at(q)
}

/// Minimises `e(q)` from `q_start` over the DOFs not in `fixed` (those keep their `q_start`
/// values). Stops when the Newton decrement `−gᵀd` falls below `1e-13 · (e(q_start) − e(q))`
/// (so relative energy errors down to ~1e-12 are resolved) or after 200 iterations. Returns
/// `(q*, e(q*), iterations)`.
pub fn newton_reference(
    p: &StepProblem<'_>,
    q_tilde: &[f64],
    q_start: &[f64],
    fixed: &[bool],
) -> Result<(Vec<f64>, f64, usize), SolveError> {
    let h2 = p.dt * p.dt;
    let free: Vec<usize> = (0..q_start.len()).filter(|&k| !fixed[k]).collect();
    let mut free_of = vec![usize::MAX; q_start.len()];
    for (i, &k) in free.iter().enumerate() {
        free_of[k] = i;
    }
    let mut q = q_start.to_vec();
    let e0 = incremental_potential(p, &q, q_tilde);
    let mut e = e0;
    let mut chol: Option<SparseCholesky> = None;
    for it in 0..200 {
        let api::ElasticEval { gradient: grad, hessian: hess } = p.elastic_at(&q);
        let hess = hess.ok_or_else(|| SolveError::Unsupported { what: "no deformable body".into() })?;
        let dq: Vec<f64> = q.iter().zip(q_tilde).map(|(a, b)| a - b).collect();
        let mdq = p.mass.mul(&dq);
        let g: Vec<f64> = free.iter().map(|&k| mdq[k] / h2 + grad[k]).collect();
        let mut t = Vec::new();
        for (i, &k) in free.iter().enumerate() {
            for pp in hess.indptr[k]..hess.indptr[k + 1] {
                let c = free_of[hess.indices[pp]];
                if c != usize::MAX {
                    t.push((i, c, hess.data[pp]));
                }
            }
        }
        // lumped mass / h² on the diagonal
        let ones: Vec<f64> = vec![1.0; q.len()];
        let mdiag = p.mass.mul(&ones);
        for (i, &k) in free.iter().enumerate() {
            t.push((i, i, mdiag[k] / h2));
        }
        let hm = Csr::from_triplets(free.len(), free.len(), &t);
        let (cp, ri, vals) = hm.lower_csc();
        if !chol.as_ref().is_some_and(|c| c.has_pattern(&cp, &ri)) {
            chol = Some(
                SparseCholesky::analyze(hm.nrows, cp, ri, CholeskyParams::default())
                    .map_err(|e| SolveError::Factorization { what: format!("Newton reference: {e}") })?,
            );
        }
        let c = chol.as_mut().expect("analysed");
        c.factorize(&vals).map_err(|e| SolveError::Factorization { what: format!("Newton reference: {e}") })?;
        let mut d: Vec<f64> = g.iter().map(|v| -v).collect();
        c.solve_in_place(&mut d);
        let decrement = -g.iter().zip(&d).map(|(a, b)| a * b).sum::<f64>();
        if !decrement.is_finite() {
            return Err(SolveError::NonFinite { what: "Newton reference direction".into() });
        }
        if decrement <= 1e-13 * (e0 - e).abs().max(f64::MIN_POSITIVE) {
            return Ok((q, e, it));
        }
        // Armijo backtracking on e
        let mut alpha = 1.0;
        loop {
            let mut qn = q.clone();
            for (i, &k) in free.iter().enumerate() {
                qn[k] += alpha * d[i];
            }
            let en = incremental_potential(p, &qn, q_tilde);
            if en <= e - 1e-4 * alpha * decrement {
                q = qn;
                e = en;
                break;
            }
            if alpha < 1e-10 {
                return Ok((q, e, it)); // no decrease left above round-off
            }
            alpha *= 0.5;
        }
    }
    Ok((q, e, 200))
}
