//! Trace measurements shared by the scenes standing in for Lee et al.'s (§VII, whose meshes and robots are not public):
//! `box_in_hole`, `dish_stack`, `sphere_pour` and `robots`. Each reads only the trace (states and
//! the harness's per-step metrics), never a solver's report.

use harness::Trace;
use nalgebra::Vector3;

/// First step index (into `trace.metrics`) whose end time is at or after `t` (s), for a time step `dt`.
/// Metrics `k` belong to the step ending at `(k + 1) dt`.
pub(crate) fn first_step_from(t: f64, dt: f64) -> usize {
    let k = (t / dt - 1e-9).ceil();
    if k <= 1.0 {
        0
    } else {
        k as usize - 1
    }
}

/// Mean `StepMetrics.normal_impulse_total` over the steps `from ..` (N s); NaN if none.
pub(crate) fn mean_normal_impulse(trace: &Trace, from: usize) -> f64 {
    let m = &trace.metrics[from.min(trace.metrics.len())..];
    if m.is_empty() {
        return f64::NAN;
    }
    m.iter().map(|s| s.normal_impulse_total).sum::<f64>() / m.len() as f64
}

/// Largest `StepMetrics.penetration_max` over the steps `from ..` (m; NaN-propagating, 0 if none).
pub(crate) fn max_penetration(trace: &Trace, from: usize) -> f64 {
    trace.metrics[from.min(trace.metrics.len())..].iter().map(|s| s.penetration_max).fold(0.0, nan_max)
}

/// Largest `StepMetrics.bilateral_violation_max` over the run (m or rad).
pub(crate) fn max_joint_violation(trace: &Trace) -> f64 {
    trace.metrics.iter().map(|s| s.bilateral_violation_max).fold(0.0, nan_max)
}

/// Largest linear speed of the centre of mass of any of the first `bodies` rigid bodies (all
/// six-DOF, so body `b`'s linear velocity is `v[6b .. 6b + 3]`) over the states `from ..` (m/s).
pub(crate) fn max_speed(trace: &Trace, from: usize, bodies: usize) -> f64 {
    let mut m: f64 = 0.0;
    for v in &trace.v[from.min(trace.v.len())..] {
        for b in 0..bodies {
            m = nan_max(m, Vector3::new(v[6 * b], v[6 * b + 1], v[6 * b + 2]).norm());
        }
    }
    m
}

/// Centre of rigid body `b` in the position vector `q` (7 numbers per body).
pub(crate) fn centre(q: &[f64], b: usize) -> Vector3<f64> {
    Vector3::new(q[7 * b], q[7 * b + 1], q[7 * b + 2])
}

/// `max` that propagates NaN.
pub(crate) fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// Shared test helper of the resting cases.
#[cfg(test)]
pub(crate) mod test_support {
    use harness::{Scenario, StepMetrics, Trace};

    /// The initial state held for the whole run, with `impulse` (N s) of normal impulse per step
    /// and no penetration or joint violation.
    pub(crate) fn resting_trace(sc: &Scenario, impulse: f64) -> Trace {
        let (q, v) = (sc.world.positions(), sc.world.velocities());
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q.clone()], v: vec![v.clone()], metrics: vec![] };
        for k in 1..=sc.steps {
            tr.q.push(q.clone());
            tr.v.push(v.clone());
            tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, normal_impulse_total: impulse, ..Default::default() });
        }
        tr
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_after_a_time() {
        // steps end at 0.01, 0.02, ...: the first ending at or after 0.025 is index 2 (ends at 0.03)
        assert_eq!(first_step_from(0.025, 0.01), 2);
        assert_eq!(first_step_from(0.02, 0.01), 1);
        assert_eq!(first_step_from(0.0, 0.01), 0);
        assert!(nan_max(1.0, f64::NAN).is_nan());
    }
}
