//! Bilateral-constraint (joint) metrics: the velocity-level law residual of every joint row and
//! the position drift of the joints after the step.
//!
//! Law of row `k` ([`crate::model::BilateralRow::law`]): `G_k v+ - v_hat_k + r_k gamma_k = 0`,
//! with `v_hat = -C(q0)/dt`, `r = 0` for a rigid row (the linearised constraint
//! `C(q0) + dt G v+ = 0`) and the implicit spring–damper `v_hat = -k C/(dt k + b)`,
//! `r = 1/(dt (dt k + b))` for a compliant one (Drumwright Eqs. 51–53 with `dG/dt v` neglected).

use crate::model::World;
use crate::problem::StepProblem;

/// `max_k |G_k v+ - v_hat_k + r_k gamma_k|` (m/s or rad/s; 0 without rows). `gamma` is the
/// solver's bilateral impulse per row (N s); missing entries count as 0. For a rigid row this is
/// `|G_k v+ + C_k(q0)/dt|`.
pub fn bilateral_residual_max(problem: &StepProblem<'_>, v: &[f64], gamma: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for (k, row) in problem.bilateral.rows.iter().enumerate() {
        let (vh, r) = row.law(problem.dt);
        let g = gamma.get(k).copied().unwrap_or(0.0);
        let res = (row.velocity(v) - vh + if r == 0.0 { 0.0 } else { r * g }).abs();
        m = super::nan_max(m, res);
    }
    m
}

/// `max_k |C_k(q+)|` over the joint rows of the world after the step (m or rad; 0 without
/// joints): the drift the linearisation leaves (Drumwright §4.4, Fig. 4; O(dt^2) per step).
/// Torsional springs ([`crate::model::Joint::is_spring`]) are left out: their `C` is the
/// spring's deflection.
pub fn bilateral_violation_max(after: &World) -> f64 {
    after.joint_drift_max(&after.bilateral_rows())
}
