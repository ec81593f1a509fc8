//! The work–energy balance of implicit Euler for deformable bodies driven by prescribed nodes
//! (no rigid bodies, no contact): the oracle of a scene whose only load is its boundary motion.
//!
//! # Derivation
//!
//! Lumped masses `M`, elastic energy `U`, gravity `g`, step `dt`; over step `k` (state `k − 1`
//! to `k`) let `Δx = x^k − x^{k−1}`, `Δv = v^k − v^{k−1}` and `E = K + U + G` (kinetic, elastic,
//! gravity). An implicit Euler step is
//!
//! ```text
//! M Δv = dt (−∇U(x^k) + M g + r),     Δx = dt v^k,
//! ```
//!
//! with `r` the reaction that holds the prescribed nodes on their path (zero on free nodes).
//! Read off the trace, the prescribed nodes' momentum balance gives `r_a = m_a Δv_a / dt +
//! ∇_a U(x^k) − m_a g`, whose work is `W_k = Σ_{a prescribed} r_a · Δx_a`. Dotting the step with
//! `Δx` and using `v^kᵀ M Δv = ΔK + ½ Δvᵀ M Δv` and `M g · Δx = −ΔG`:
//!
//! ```text
//! D_k := W_k − ΔE_k = ½ Δvᵀ M Δv + c_k,     c_k = ∇U(x^k) · Δx − ΔU_k.
//! ```
//!
//! `D_k` is the energy the step dissipates. Where `U` is convex along the step `c_k >= 0` (a
//! chord lies below the tangent at the end), so implicit Euler never creates energy; where it is
//! not (rotated, compressed elements of ARAP or co-rotational models), `c_k < 0` is a property of
//! the energy and the step, not of the solver, and is allowed. So a step passes when
//! `D_k >= min(0, c_k)` up to what the solve accuracy allows: if the free nodes' momentum balance
//! is off by an impulse `ρ_a`, that impulse does work `ρ_a · v_a^k` and `D_k` moves by it. The
//! crate's accuracy standard ([`crate::IMPULSE_REL_TOL`]) asks impulses to be right to 0.1 % of the
//! impulses the physics needs, here `m_a |Δv_a| + dt |∇_a U(x^k)| + dt m_a |g|` per free node, so
//! the allowed work is `IMPULSE_REL_TOL · P_k` with the power scale
//!
//! ```text
//! P_k = Σ_{a free} (m_a |Δv_a| + dt |∇_a U(x^k)| + dt m_a |g|) |v_a^k|.
//! ```
//!
//! [`implicit_euler_energy_gain`] returns `max_k (min(0, c_k) − D_k) / P_k` (positive: energy
//! created beyond the scheme's allowance, in units of `P_k`); the check passes when it is at most
//! `IMPULSE_REL_TOL`. Rounding of the energy sums (`16 ε (|E^k| + |E^{k−1}| + |W_k| + |c_k|)`)
//! is subtracted first, so a state at rest does not divide round-off by a zero scale.

use harness::model::World;
use harness::Trace;
use nalgebra::Vector3;

/// The balance of a trace (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyGain {
    /// `max_k (min(0, c_k) − D_k) / P_k` (dimensionless; `<= 0` when every step dissipates at
    /// least what the scheme allows, 0 when no free node ever moves; NaN when an energy is not
    /// finite).
    pub worst: f64,
    /// `Σ_k D_k`: the energy the run dissipated (J).
    pub dissipated: f64,
}

/// Energies and gradient of `world` at state `(q, v)`: `(K + U + G, U, ∇U)`.
fn state(world: &mut World, q: &[f64], v: &[f64]) -> (f64, f64, Vec<f64>) {
    world.set_state(q, v);
    let u = world.elastic_energy();
    (world.kinetic_energy() + world.gravity_energy() + u, u, world.elastic_gradient())
}

/// The energy balance of `trace` (see the module doc) for `world`, which must hold deformable
/// bodies only; a node is prescribed when a [`harness::model::PrescribedMotion`] of its body lists it.
pub fn implicit_euler_energy_gain(world: &World, trace: &Trace) -> EnergyGain {
    assert!(world.bodies.is_empty(), "energy balance of deformable-only worlds");
    let (mut masses, mut prescribed) = (Vec::new(), Vec::new());
    for d in &world.deformables {
        let first = masses.len();
        masses.extend(d.node_masses());
        prescribed.resize(masses.len(), false);
        for a in d.boundary.iter().flat_map(|b| b.nodes.iter()) {
            prescribed[first + a] = true;
        }
    }
    let (dt, g) = (trace.dt, world.gravity);
    let node = |x: &[f64], a: usize| Vector3::new(x[3 * a], x[3 * a + 1], x[3 * a + 2]);
    let mut w = world.clone();
    let (mut e0, mut u0, _) = state(&mut w, &trace.q[0], &trace.v[0]);
    let (mut worst, mut dissipated) = (f64::NEG_INFINITY, 0.0);
    for k in 1..trace.q.len() {
        let (q0, v0, q1, v1) = (&trace.q[k - 1], &trace.v[k - 1], &trace.q[k], &trace.v[k]);
        let (e1, u1, grad) = state(&mut w, q1, v1);
        let (mut work, mut grad_dx, mut scale) = (0.0, 0.0, 0.0);
        for (a, &m) in masses.iter().enumerate() {
            let (dx, dv, ga) = (node(q1, a) - node(q0, a), node(v1, a) - node(v0, a), node(&grad, a));
            grad_dx += ga.dot(&dx);
            if prescribed[a] {
                work += (m * dv / dt + ga - m * g).dot(&dx);
            } else {
                scale += (m * dv.norm() + dt * ga.norm() + dt * m * g.norm()) * node(v1, a).norm();
            }
        }
        let c = grad_dx - (u1 - u0);
        let d = work - (e1 - e0);
        let rounding = 16.0 * f64::EPSILON * (e1.abs() + e0.abs() + work.abs() + c.abs());
        let num = c.min(0.0) - d - rounding;
        let rel = if num.is_nan() || scale.is_nan() {
            f64::NAN
        } else if num > 0.0 || scale > 0.0 {
            num / scale // +inf: energy created while no free node moves
        } else {
            f64::NEG_INFINITY
        };
        worst = if worst.is_nan() || rel.is_nan() { f64::NAN } else { worst.max(rel) };
        dissipated += d;
        (e0, u0) = (e1, u1);
    }
    if worst == f64::NEG_INFINITY {
        worst = 0.0; // no free node moved at any step and no energy was created
    }
    EnergyGain { worst, dissipated }
}
