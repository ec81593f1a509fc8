//! The per-step data of the local-global method: the checks of what it handles, the inertial
//! predictor `q̃ = q_t + h v_t + h² M⁻¹ f_ext` and the start iterate (Algorithm 4, line 3), the
//! constant part of the global right-hand side, and the contact system of the step: `H`, the
//! Delassus operator `W = H A⁻¹ Hᵀ` (Eq. 27), the complementarity preconditioner `r` (Eq. 28)
//! and the warm-started multipliers.

use super::model::Model;
use super::settings::{LocalGlobalSettings, RFactor};
use api::ContactCompliance;
use api::{SolveError, StepProblem};
use kernels::ncp::schur_diagonal;
use kernels::sparse::Csr;
use nalgebra::DMatrix;

pub(super) fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// What local_global does not handle: rigid bodies, worlds without deformable bodies, bilateral
/// constraints and compliant contact.
pub(super) fn check_supported(p: &StepProblem<'_>) -> Result<(), SolveError> {
    if p.layout.has_rigid_bodies() {
        return Err(SolveError::Unsupported { what: "rigid bodies (local_global simulates FEM bodies)".into() });
    }
    if !p.layout.has_deformables() {
        return Err(SolveError::Unsupported { what: "a world without deformable bodies".into() });
    }
    if p.nb() > 0 {
        return Err(SolveError::Unsupported { what: "bilateral constraints (joints)".into() });
    }
    if let Some(c) = p.contacts.contacts.iter().find(|c| c.compliance != ContactCompliance::Rigid) {
        return Err(SolveError::Unsupported { what: format!("compliant contact {:?}", c.key) });
    }
    Ok(())
}

/// The prescribed DOFs of `p` as a mask.
pub(super) fn fixed_dofs(p: &StepProblem<'_>) -> Vec<bool> {
    let mut fixed = vec![false; p.nv()];
    for &(k, _) in &p.prescribed {
        fixed[k] = true;
    }
    fixed
}

/// The inertial predictor and the constant part of the free right-hand side.
pub(super) struct Predictor {
    /// `q̃ = q_t + h v_t + h² M⁻¹ f_ext` (`f_ext`: the problem's forces without the elastic part).
    pub q_tilde: Vec<f64>,
    /// `q⁰ = q̃` (PD convention), prescribed DOFs at their targets.
    pub q_start: Vec<f64>,
    /// `M q̃ − A_fp q_p` on the free DOFs.
    pub b_const: Vec<f64>,
    /// Position scale of the stopping test (m).
    pub scale_q: f64,
}

impl Predictor {
    pub(super) fn new(p: &StepProblem<'_>, model: &Model) -> Result<Self, SolveError> {
        let (h, nv) = (p.dt, p.nv());
        let h2 = h * h;
        // q̃ = q_t + h v_t + h² M⁻¹ f_ext (f_ext: the problem's forces without the elastic part)
        let f_ext = p.external_forces();
        let q_tilde: Vec<f64> = (0..nv).map(|k| p.q0[k] + h * p.v0[k] + h2 * f_ext[k] / model.mass[k]).collect();
        // q⁰ = q̃ (PD convention), prescribed DOFs at their targets
        let mut q = q_tilde.clone();
        for &(k, v) in &p.prescribed {
            q[k] = p.q0[k] + h * v;
        }
        if !q.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "inertial predictor q̃".into() });
        }
        // M q̃ − A_fp q_p: the constant part of the free right-hand side
        let mut qp = q.clone();
        for &k in &model.free {
            qp[k] = 0.0;
        }
        let coupling = model.a_full.mul(&qp);
        let b_const: Vec<f64> = model.free.iter().map(|&k| model.mass[k] * q_tilde[k] - coupling[k]).collect();
        let scale_q =
            (h * inf_norm(&p.v0)).max(inf_norm(&q_tilde.iter().zip(&p.q0).map(|(a, b)| a - b).collect::<Vec<_>>()));
        let scale_q = scale_q.max(1e-12);
        Ok(Self { q_tilde, q_start: q, b_const, scale_q })
    }
}

/// The contact system of one step (Eqs. 27–28).
pub(super) struct ContactSystem {
    /// `H` on all DOFs and on the free DOFs (`3 nc × nv`, `3 nc × nf`).
    pub h_full: Csr,
    pub h_free: Csr,
    /// `W = H A⁻¹ Hᵀ` and its diagonal.
    pub w: Csr,
    pub wdiag: Vec<f64>,
    /// Complementarity preconditioner per contact: `r_n = h² W_nn`, `r_f = h W_ff` (Eq. 28).
    pub r_n: Vec<f64>,
    pub r_f: Vec<f64>,
    /// Start-of-step gaps (m) and friction coefficients.
    pub gap0: Vec<f64>,
    pub mu: Vec<f64>,
}

impl ContactSystem {
    /// `H` (free columns), `W = H A⁻¹ Hᵀ` once per step (Eq. 27), r-factors (Eq. 28).
    pub(super) fn new(p: &StepProblem<'_>, model: &mut Model, r_factor: RFactor) -> Self {
        let (h, nv, nc) = (p.dt, p.nv(), p.nc());
        let h2 = h * h;
        let nf = model.free.len();
        let m = 3 * nc;
        let trip = p.contacts.jacobian_triplets();
        let h_full = Csr::from_triplets(m, nv, &trip);
        let h_free = Csr::from_triplets(
            m,
            nf,
            &trip.iter().filter_map(|&(r, c, v)| Some((r, model.free_of[c]?, v))).collect::<Vec<_>>(),
        );
        let w = if nc > 0 { model.delassus(&h_free) } else { Csr::zeros(0, 0) };
        let wdiag = w.diagonal();
        let rdiag = match r_factor {
            RFactor::Delassus => wdiag.clone(),
            RFactor::Mass => {
                let inv: Vec<DMatrix<f64>> =
                    model.free.iter().map(|&k| DMatrix::from_element(1, 1, 1.0 / model.mass[k])).collect();
                let block_of: Vec<(usize, usize)> = (0..nf).map(|i| (i, 0)).collect();
                schur_diagonal(&h_free, &inv, &block_of)
            }
        };
        let (mut r_n, mut r_f) = (vec![h2; nc], vec![h; nc]);
        for i in 0..nc {
            let (rn, rf) = (h2 * rdiag[3 * i], h * 0.5 * (rdiag[3 * i + 1] + rdiag[3 * i + 2]));
            if rn > 0.0 && rn.is_finite() {
                r_n[i] = rn;
            }
            if rf > 0.0 && rf.is_finite() {
                r_f[i] = rf;
            }
        }
        let gap0: Vec<f64> = p.contacts.contacts.iter().map(|c| c.gap).collect();
        let mu: Vec<f64> = p.contacts.contacts.iter().map(|c| c.mu).collect();
        Self { h_full, h_free, w, wdiag, r_n, r_f, gap0, mu }
    }
}

/// `λ⁰` (forces, N): the previous impulses / h when warm starting, else 0. The step makes `q`
/// consistent with it, `q⁰ = q̃ + h² A⁻¹ Hᵀ λ⁰` on the free DOFs, so that the first NCP
/// evaluation sees the previous step's contact forces (README "choices").
pub(super) fn warm_lambda(p: &StepProblem<'_>, s: &LocalGlobalSettings) -> Vec<f64> {
    let (h, nc) = (p.dt, p.nc());
    let mut lam = vec![0.0; 3 * nc];
    if s.warm_start {
        for i in 0..nc {
            if let Some(imp) = p.warm_impulse(i) {
                for c in 0..3 {
                    lam[3 * i + c] = imp[c] / h;
                }
            }
        }
    }
    lam
}
