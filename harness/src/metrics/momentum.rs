//! Momentum balance of the discrete dynamics `M (v+ - v*) = J^T lambda` (problem.rs), measured
//! with Castro et al.'s dimensionless momentum error (Eq. 32, §VI-C1).

use super::nan_max;
use crate::case::Trace;
use crate::model::World;
use crate::problem::StepProblem;
use records::MomentumDrift;

/// Castro et al. Eq. 32, the dimensionless momentum error at `(v+, lambda)`:
///
/// `e_m = ||D (M (v+ - v*) - J^T lambda)||_2 / max(||D M v+||_2, ||D J^T lambda||_2)`,
/// `D = diag(M)^-1/2`, `v* = v0 + dt M^-1 f` ([`StepProblem::free_velocity`]).
///
/// `D` turns generalized impulses (N s for translations, N m s for rotations) into one unit,
/// `sqrt(J)`, so translations and rotations are comparable and the result is dimensionless. `M` is the mass matrix at `q0` ([`StepProblem::mass`]). The ratio `0/0` is 0
/// (a body at rest with no contact impulse); `x/0` with `x > 0` is `+inf`. NaN in `v` or
/// `lambda` gives NaN. Panics if the lengths do not match the problem.
pub fn momentum_rel(problem: &StepProblem<'_>, v: &[f64], lambda: &[[f64; 3]]) -> f64 {
    let v_star = problem.free_velocity();
    momentum_rel_with(problem, v, lambda, &[], &v_star)
}

/// [`momentum_rel`] with a precomputed free velocity `v*` and the bilateral impulses `gamma`
/// (one per row of [`StepProblem::bilateral`], or empty for none): with joints the balance is
/// `M (v+ - v*) = J^T lambda + G^T gamma`, and `J^T lambda + G^T gamma` replaces `J^T lambda`.
pub(super) fn momentum_rel_with(
    problem: &StepProblem<'_>,
    v: &[f64],
    lambda: &[[f64; 3]],
    gamma: &[f64],
    v_star: &[f64],
) -> f64 {
    let nv = problem.nv();
    assert_eq!(v.len(), nv, "v+ has {} entries, the problem has {nv} velocity DOFs", v.len());
    momentum_rel_of(&problem.mass, problem.contacts, &problem.bilateral, v, lambda, gamma, v_star)
}

/// [`momentum_rel_with`] from the parts of a problem it reads (mass matrix, contacts, bilateral
/// rows), for a caller that holds them without the problem (the equal-accuracy yardstick).
pub(crate) fn momentum_rel_of(
    mass: &kernels::BlockDiagonal,
    contacts: &crate::ContactSet,
    bilateral: &api::bilateral::BilateralSet,
    v: &[f64],
    lambda: &[[f64; 3]],
    gamma: &[f64],
    v_star: &[f64],
) -> f64 {
    let nv = v.len();
    let mut jt = contacts.transpose_mul(lambda, nv);
    if !gamma.is_empty() && gamma.len() == bilateral.len() {
        for (row, g) in bilateral.rows.iter().zip(gamma) {
            row.add_transpose(*g, &mut jt);
        }
    }
    let diag = mass.diagonal();
    // buf = M v+, then M (v+ - v*)
    let mut buf = vec![0.0; nv];
    mass.mul_into(v, &mut buf);
    let p2: f64 = buf.iter().zip(&diag).map(|(p, d)| p * p / d).sum();
    let dv: Vec<f64> = v.iter().zip(v_star).map(|(a, b)| a - b).collect();
    mass.mul_into(&dv, &mut buf);
    let mut r2 = 0.0;
    let mut j2 = 0.0;
    for ((mdv, j), d) in buf.iter().zip(&jt).zip(&diag) {
        r2 += (mdv - j) * (mdv - j) / d;
        j2 += j * j / d;
    }
    let num = r2.sqrt();
    let den = nan_max(p2.sqrt(), j2.sqrt());
    if num == 0.0 && den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// Momentum drift of a closed system over a run: `max_k ||p_k - p_0||` (kg m/s) and
/// `max_k ||L_k - L_0||` (kg m^2/s) over the states `(q_k, v_k)` of `trace` (`k = 0` the
/// initial state), with `p` and `L` ([`World::linear_momentum`], [`World::angular_momentum`]) of
/// `initial` placed at each state. `None` when `initial` is not closed ([`World::is_closed`]: momentum
/// is not conserved by the exact dynamics) or the trace is empty.
pub fn drift(initial: &World, trace: &Trace) -> Option<MomentumDrift> {
    if !initial.is_closed() || trace.q.is_empty() {
        return None;
    }
    let mut w = initial.clone();
    let (mut p0, mut l0) = (w.linear_momentum(), w.angular_momentum());
    let mut drift = MomentumDrift::default();
    for (k, (q, v)) in trace.q.iter().zip(&trace.v).enumerate() {
        w.set_state(q, v);
        let (p, l) = (w.linear_momentum(), w.angular_momentum());
        if k == 0 {
            (p0, l0) = (p, l);
        }
        drift.linear = drift.linear.max((p - p0).norm());
        drift.angular = drift.angular.max((l - l0).norm());
    }
    Some(drift)
}
