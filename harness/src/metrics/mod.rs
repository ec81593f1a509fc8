//! Solver-independent metrics of one step, computed by the harness from what a solver returns
//! (never trusted from the solver's own report). Definitions: the natural map of
//! Siconos/FCLIB (`fc3d_compute_error`), Castro et al. Eq. 32 (momentum), Lee et al. §VII; docs/metrics.md.
//!
//! Modules: [`momentum`] (Castro Eq. 32), [`complementarity`] (natural map, Signorini, cone),
//! [`friction`] (maximum dissipation, stick/slip, creep), [`energy`] (energies, penetration).
//! [`evaluate`] computes all of them for one step; the `*_per_contact` functions give the
//! per-contact values (ContactBench habit) for diagnostics.
//!
//! NaN policy (as in Newton's Kamino solver): if the solution holds a NaN or infinity anywhere, every
//! floating-point metric of the step is NaN (counts are computed from the finite entries);
//! nothing panics. Maxima are NaN-propagating.

pub mod bilateral;
pub mod complementarity;
pub mod energy;
pub mod friction;
pub mod momentum;
pub mod yardstick;

pub use bilateral::{bilateral_residual_max, bilateral_violation_max};
pub use complementarity::{
    cone_violation_per_contact, natural_map_norms, natural_map_per_contact, signorini_per_contact, NaturalMapNorms,
};
pub use energy::{penetration_max, EnergyTerms};
pub use friction::{
    classify, classify_per_contact, mdp_violation, mdp_violation_per_contact, ContactState, SLIP_SPEED_THRESHOLD,
    STICK_MARGIN,
};
pub use momentum::momentum_rel;
pub use toolkit::lee::{lee_residual, LeeResidual};

use crate::contact::ContactSet;
use crate::model::World;
use crate::problem::StepProblem;
use crate::solver::StepSolution;
use friction::tangent_norm;
pub use records::StepMetrics;

/// The solver-independent metrics of one step (every field of [`StepMetrics`] except `t`,
/// which the stepper sets).
///
/// - `problem`: the step's problem (data at `q0, v0`, contacts detected at `q0`);
/// - `sol`: what the solver returned (`v+`, `lambda`);
/// - `before`: the world at the start of the step (state `q0, v0`): the energy before;
/// - `after`: the world at the end of the step (state already set to `q+, v+`): energies and
///   momenta;
/// - `contacts_after`: detection at `q+`: `penetration_max = max(0, -phi)` over it.
///
/// Contact metrics use `u = J v+ + w` ([`StepProblem::contact_velocities`]) with the Jacobians at
/// `q0`; `q = J v* + w` normalises the natural map; `energy_change = E(after) - E(before)`.
/// Allocates a handful of `Vec`s of length `nv` or `nc`. Panics only on shape errors
/// (`sol.v.len() != nv` or `sol.impulses.len() != nc`); non-finite values give NaN metrics.
pub fn evaluate(
    problem: &StepProblem<'_>,
    sol: &StepSolution,
    before: &World,
    after: &World,
    contacts_after: &ContactSet,
) -> StepMetrics {
    let contacts = problem.contacts;
    let lambda = &sol.impulses;
    complementarity::check_len(contacts, lambda);
    let u = problem.contact_velocities(&sol.v);
    let v_star = problem.free_velocity();
    let q = problem.contact_velocities(&v_star);
    let nat = complementarity::natural_map_norms_with(contacts, lambda, &u, &q);

    let mut m = StepMetrics {
        n_contacts: contacts.len(),
        momentum_rel: momentum::momentum_rel_with(problem, &sol.v, lambda, &sol.bilateral, &v_star),
        natmap_abs_l2: nat.abs_l2,
        natmap_rel_l2: nat.rel_l2,
        natmap_rel1_l2: nat.rel1_l2,
        ..StepMetrics::default()
    };
    for ((c, l), u) in contacts.contacts.iter().zip(lambda).zip(&u) {
        let (l, u) = (*l, *u);
        m.signorini_max = nan_max(m.signorini_max, complementarity::signorini(u, l));
        m.cone_violation_max = nan_max(m.cone_violation_max, kernels::cone::violation(l, c.mu));
        if let Some(d) = friction::mdp_violation(l, u) {
            m.mdp_violation_max = nan_max(m.mdp_violation_max, d);
        }
        m.normal_impulse_total += l[0];
        let speed = tangent_norm(u);
        match friction::classify(l, c.mu) {
            ContactState::Inactive => {}
            ContactState::Stick => {
                m.n_stick += 1;
                m.creep_speed_max = nan_max(m.creep_speed_max, speed);
            }
            ContactState::Slip => m.n_slip += 1,
        }
        if l[0] > 0.0 {
            m.n_active += 1;
            m.slip_speed_max = nan_max(m.slip_speed_max, speed);
        }
    }
    m.penetration_max = penetration_max(contacts_after);
    m.bilateral_residual = bilateral::bilateral_residual_max(problem, &sol.v, &sol.bilateral);
    m.bilateral_violation_max = bilateral::bilateral_violation_max(after);
    let lee = toolkit::lee::lee_residual(problem, lambda, &sol.bilateral);
    (m.lee_residual, m.lee_residual_neglog10, m.lee_residual_rel) = (lee.abs, lee.neglog10, lee.rel);

    let (e0, e1) = (EnergyTerms::of(before), EnergyTerms::of(after));
    m.kinetic = e1.kinetic;
    m.gravity = e1.gravity;
    m.spring = e1.spring;
    m.elastic = e1.elastic;
    m.energy = e1.total;
    m.energy_change = e1.total - e0.total;
    m.energy_injection = nan_max(0.0, m.energy_change);
    m.linear_momentum = after.linear_momentum().norm();
    m.angular_momentum = after.angular_momentum().norm();

    if !solution_is_finite(sol) {
        m.poison();
    }
    m
}

/// Whether `v+`, `q+` (if any), the contact impulses and the bilateral impulses are all finite.
fn solution_is_finite(sol: &StepSolution) -> bool {
    sol.v
        .iter()
        .chain(sol.impulses.iter().flatten())
        .chain(&sol.bilateral)
        .chain(sol.q.iter().flatten())
        .all(|x| x.is_finite())
}

/// `max(a, b)` that returns NaN if either is NaN (`f64::max` ignores NaN).
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

#[cfg(test)]
mod tests;
