//! The local step and the global right-hand side of one local-global iteration (Eqs. 1, 5, 6):
//! per element the projections `p_i = P_i(G_i q^k)` in parallel (rayon), the PD incremental
//! potential, and `b^k = M q̃ + h² Σ w Gᵀ p` on the free rows minus `A_fp q_p`.

use super::model::{Model, Vec12};
use harness::ModelEval;
use nalgebra::Matrix3;
use rayon::prelude::*;

/// The local step at `q` (Eq. 5): per element `(Σ_k w_k G_eᵀ p_k, Σ_k w_k/2 ‖G_e x_e − p_k‖²)`
/// into `local`, in parallel over elements; returns the PD incremental potential
/// `e(q) = 1/(2h²)‖q − q̃‖²_M + Σ w/2 ‖G q − p‖²` (Eq. 1) (J).
pub(super) fn local_step(
    eval: &dyn ModelEval,
    model: &Model,
    q: &[f64],
    q_tilde: &[f64],
    h2: f64,
    local: &mut [(Vec12, f64)],
) -> f64 {
    local.par_iter_mut().zip(model.elements.par_iter()).for_each(|(out, el)| {
        let mut xe = Vec12::zeros();
        for (a, &d) in el.dofs.iter().enumerate() {
            for i in 0..3 {
                xe[3 * a + i] = q[d + i];
            }
        }
        let fv = el.g * xe;
        let f = Matrix3::from_column_slice(fv.as_slice());
        let mut rhs_e = Vec12::zeros();
        let mut energy = 0.0;
        for (wk, pk) in eval.projective_terms(el.body, el.index, &f) {
            let pv = nalgebra::SVector::<f64, 9>::from_column_slice(pk.as_slice());
            energy += 0.5 * wk * (fv - pv).norm_squared();
            rhs_e += wk * el.g.transpose() * pv;
        }
        *out = (rhs_e, energy);
    });
    // PD incremental potential e(q^k) = 1/(2h²)‖q − q̃‖²_M + Σ w/2 ‖G q − p‖² (Eq. 1)
    let nv = q.len();
    let inertia: f64 = (0..nv).map(|kk| model.mass[kk] * (q[kk] - q_tilde[kk]).powi(2)).sum::<f64>() / (2.0 * h2);
    inertia + local.iter().map(|l| l.1).sum::<f64>()
}

/// `b^k = M q̃ + h² Σ w Gᵀ p` (Eq. 6) on the free rows, minus `A_fp q_p` (in `b_const`); `gvec`
/// (length `nv`) is scratch.
pub(super) fn global_rhs(
    model: &Model,
    local: &[(Vec12, f64)],
    b_const: &[f64],
    h2: f64,
    gvec: &mut [f64],
    b: &mut [f64],
) {
    gvec.fill(0.0);
    for (el, (r, _)) in model.elements.iter().zip(local) {
        for (a, &d) in el.dofs.iter().enumerate() {
            for i in 0..3 {
                gvec[d + i] += r[3 * a + i];
            }
        }
    }
    for (i, &kk) in model.free.iter().enumerate() {
        b[i] = b_const[i] + h2 * gvec[kk];
    }
}
