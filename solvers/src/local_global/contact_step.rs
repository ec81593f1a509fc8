//! The contact update inside one local-global iteration (Eqs. 23, 40, 46–57; Algorithms 3–4):
//! constraint values at `q^k`, the NCP rows `Ω`, `E`, `φ` ([`kernels::ncp`]), the constraint
//! system `(Ω W Ω + E) Δλ = (1/h²)(h − J A⁻¹ g)` by conjugate residual through the backend,
//! `λ += Δλ` and `q^{k+1} = q_free + h² A⁻¹ Hᵀ Ω λ^{k+1}`.

use super::model::Model;
use super::problem::ContactSystem;
use harness::SolveError;
use kernels::backend::{AnyBackend, Backend};
use kernels::iterative::{KrylovInfo, KrylovParams, KrylovWorkspace};
use kernels::ncp::{friction_w, normal_row, Ncp};

/// The NCP rows of one iterate and their statistics.
pub(super) struct ContactRows {
    /// `Ω`, `E` (diagonals) and `φ`, 3 per contact.
    pub omega: Vec<f64>,
    pub ediag: Vec<f64>,
    pub phi: Vec<f64>,
    pub n_stick: usize,
    pub n_slip: usize,
    /// `max |φ_n|` (m) and `max |φ_f|` (m/s).
    pub phi_n_max: f64,
    pub phi_f_max: f64,
}

/// (d)–(e): constraint values at `q`, `δ_n = φ0 + H_n (q − q0)`, `h δ̇_f = H_f (q − q0)`
/// (Eq. 40), and the NCP rows `Ω`, `E`, `φ` (Eqs. 46–57) at the multipliers `lam`. `omega`
/// holds the previous rows on entry (every row is overwritten).
#[allow(clippy::too_many_arguments)]
pub(super) fn contact_rows(
    backend: &AnyBackend,
    ncp: Ncp,
    cs: &ContactSystem,
    q: &[f64],
    q0: &[f64],
    lam: &[f64],
    h: f64,
    omega: Vec<f64>,
) -> ContactRows {
    let (h2, nc) = (h * h, cs.gap0.len());
    let m = 3 * nc;
    let (r_n, r_f, gap0, mu) = (&cs.r_n, &cs.r_f, &cs.gap0, &cs.mu);
    let disp: Vec<f64> = q.iter().zip(q0).map(|(a, c)| a - c).collect();
    let mut dq = vec![0.0; m];
    backend.spmv(&cs.h_full, &disp, &mut dq);
    let mut omega = omega;
    let (mut ediag, mut phi) = (vec![0.0; m], vec![0.0; m]);
    let (mut n_stick, mut n_slip, mut phi_n_max, mut phi_f_max) = (0usize, 0usize, 0.0f64, 0.0f64);
    for i in 0..nc {
        let (ln, lt) = (lam[3 * i], [lam[3 * i + 1], lam[3 * i + 2]]);
        let row_n = normal_row(ncp, gap0[i] + dq[3 * i], ln, r_n[i]);
        omega[3 * i] = row_n.alpha;
        ediag[3 * i] = row_n.s / h2;
        phi[3 * i] = row_n.phi;
        phi_n_max = phi_n_max.max(row_n.phi.abs());
        let vt = [dq[3 * i + 1] / h, dq[3 * i + 2] / h];
        if ln > 0.0 && mu[i] > 0.0 {
            let ef = friction_w(ncp, vt[0].hypot(vt[1]), mu[i] * ln, lt[0].hypot(lt[1]), r_f[i]);
            if ef == 0.0 {
                n_stick += 1;
            } else {
                n_slip += 1;
            }
            for t in 0..2 {
                omega[3 * i + 1 + t] = 1.0;
                ediag[3 * i + 1 + t] = ef / h;
                phi[3 * i + 1 + t] = vt[t] + ef * lt[t];
            }
        } else {
            // λ_n ≤ 0 (or μ = 0): ω_f = 0, E_f = I, φ_f = λ_f drives λ_f → 0 (Eqs. 50, 56)
            for t in 0..2 {
                omega[3 * i + 1 + t] = 0.0;
                ediag[3 * i + 1 + t] = 1.0 / h;
                phi[3 * i + 1 + t] = lt[t];
            }
        }
        phi_f_max = phi_f_max.max(phi[3 * i + 1].abs()).max(phi[3 * i + 2].abs());
    }
    ContactRows { omega, ediag, phi, n_stick, n_slip, phi_n_max, phi_f_max }
}

/// The solver parts the constraint solve uses.
pub(super) struct ConstraintWork<'a> {
    pub backend: &'a AnyBackend,
    pub krylov: &'a mut KrylovWorkspace,
    /// Conjugate-residual iterations and whether to precondition with `diag(Ω W Ω + E)`.
    pub cr_iterations: usize,
    pub cr_jacobi: bool,
}

/// (f)–(j): with `x` the free positions of `q^k` and `x_free = A⁻¹ b^k`: the right-hand side
/// `(1/h²)(h − J A⁻¹ g)`, the constraint solve for `Δλ`, `λ += Δλ` (Eq. 23a) and
/// `x = x_free + h² A⁻¹ Hᵀ Ω λ` (Eq. 23b). Returns `max |Δx|` and the solve's report; `k` names
/// the iteration in errors.
#[allow(clippy::too_many_arguments)]
pub(super) fn constrained_update(
    model: &mut Model,
    cs: &ContactSystem,
    rows: &ContactRows,
    work: ConstraintWork<'_>,
    h: f64,
    x: &mut [f64],
    x_free: &[f64],
    lam: &mut [f64],
    k: usize,
) -> Result<(f64, KrylovInfo), SolveError> {
    let (h2, m, nf) = (h * h, lam.len(), x.len());
    let backend = work.backend;
    let (omega, ediag, phi) = (&rows.omega, &rows.ediag, &rows.phi);
    // (f) y = H (q_0^k − q^k), q_0^k = q_free + h² A⁻¹ Hᵀ Ω λ^k: = H(q_free − q^k) + h² W Ω λ^k
    let mut tmp: Vec<f64> = x_free.iter().zip(x.iter()).map(|(a, b)| a - b).collect();
    let (mut y, mut ol, mut wol) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    backend.spmv(&cs.h_free, &tmp, &mut y);
    backend.mul_elem(omega, lam, &mut ol);
    backend.spmv(&cs.w, &ol, &mut wol);
    backend.axpy(h2, &wol, &mut y);
    // (g) rhs = (1/h²)(h − J A⁻¹ g) (Algorithms 3–4 sign; README erratum 1), per row:
    //     normal −(φ_n + ω_n y_n)/h², friction −(φ_f + ω_f y_f / h)/h
    let mut rhs = vec![0.0; m];
    for i in 0..m / 3 {
        rhs[3 * i] = -(phi[3 * i] + omega[3 * i] * y[3 * i]) / h2;
        for t in 1..3 {
            let r = 3 * i + t;
            rhs[r] = -(phi[r] + omega[r] * y[r] / h) / h;
        }
    }
    // (h) (Ω W Ω + E) Δλ = rhs by conjugate residual through the Backend (fixed budget)
    let pinv: Vec<f64> = if work.cr_jacobi {
        (0..m)
            .map(|r| {
                let d = omega[r] * omega[r] * cs.wdiag[r] + ediag[r];
                if d > 0.0 {
                    1.0 / d
                } else {
                    1.0
                }
            })
            .collect()
    } else {
        vec![1.0; m]
    };
    let mut dlam = vec![0.0; m];
    let params = KrylovParams { max_iterations: work.cr_iterations, rel_tolerance: 0.0, abs_tolerance: 0.0 };
    let info = backend
        .pcr_scaled_delassus(&cs.w, omega, ediag, &pinv, &rhs, &mut dlam, &params, work.krylov)
        .map_err(|e| SolveError::Numerical { what: format!("constraint system at iteration {k}: {e}") })?;
    // (i) λ^{k+1} = λ^k + Δλ (Eq. 23a; no projection, as the paper)
    backend.axpy(1.0, &dlam, lam);
    // (j) q^{k+1} = q_free + h² A⁻¹ Hᵀ Ω λ^{k+1} (Eq. 23b)
    backend.mul_elem(omega, lam, &mut ol);
    let (mut force, mut corr) = (vec![0.0; nf], vec![0.0; nf]);
    cs.h_free.transpose().mul_into(&ol, &mut force);
    model.apply_inverse(backend, &force, &mut tmp, &mut corr);
    let mut change = 0.0f64;
    for i in 0..nf {
        let xn = x_free[i] + h2 * corr[i];
        change = change.max((xn - x[i]).abs());
        x[i] = xn;
    }
    if !x.iter().chain(lam.iter()).all(|v| v.is_finite()) {
        return Err(SolveError::NonFinite { what: format!("constrained global step at iteration {k}") });
    }
    Ok((change, info))
}
