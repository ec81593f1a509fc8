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
use serde::{Deserialize, Serialize};

/// Metrics of one step. Every name states its norm and normalisation. Maxima over an empty
/// contact set are 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepMetrics {
    /// Simulated time at the end of the step (s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub t: f64,
    /// Number of contacts in the problem.
    pub n_contacts: usize,
    /// Contacts with a positive normal impulse.
    pub n_active: usize,
    /// Castro Eq. 32: `||D (M(v+ - v*) - J^T lambda)|| / max(||D M v+||, ||D J^T lambda||)`,
    /// `D = diag(M)^-1/2` (dimensionless).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub momentum_rel: f64,
    /// Natural-map residual of the rigid Coulomb NCP, `||lambda - P_K(lambda - u_hat)||_2` (N s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub natmap_abs_l2: f64,
    /// Siconos normalisation: `natmap_abs_l2 / ||q||_2` with `q = J v* + w` (absolute if `||q|| <= eps`).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub natmap_rel_l2: f64,
    /// FCLIB "old" normalisation: `natmap_abs_l2 / (1 + ||q||_2)`.
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub natmap_rel1_l2: f64,
    /// `max_i |u_n,i lambda_n,i|` with `u = J v+ + w` (W s... m/s x N s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub signorini_max: f64,
    /// `max_i max(||lambda_t|| - mu lambda_n, -lambda_n, 0)` (N s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub cone_violation_max: f64,
    /// Over sliding contacts (`||u_t|| > slip threshold` and `lambda_n > 0`):
    /// `max (1 - cos angle(lambda_t, -u_t))` (0 = opposite to slip, 2 = along slip).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub mdp_violation_max: f64,
    /// `max(0, -phi)` over contacts detected after the step (m).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub penetration_max: f64,
    /// Kinetic energy after the step (J).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub kinetic: f64,
    /// Gravitational energy after the step (J).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub gravity: f64,
    /// Spring energy after the step (J).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub spring: f64,
    /// Elastic energy of the deformable bodies after the step (J; 0 without deformables).
    #[serde(default, deserialize_with = "crate::record::nullable_f64")]
    pub elastic: f64,
    /// `kinetic + gravity + spring + elastic` after the step (J).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub energy: f64,
    /// `energy(after) - energy(before)` (J).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub energy_change: f64,
    /// `max(0, energy_change)`: energy injected by the step (J).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub energy_injection: f64,
    /// `||sum m v||` after the step (kg m/s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub linear_momentum: f64,
    /// `||angular momentum about the origin||` after the step (kg m^2/s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub angular_momentum: f64,
    /// Active contacts strictly inside the friction cone (`||lambda_t|| < (1 - 1e-3) mu lambda_n`).
    pub n_stick: usize,
    /// Active contacts on the cone boundary.
    pub n_slip: usize,
    /// Largest tangential speed `||u_t||` among sticking contacts (m/s): the creep.
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub creep_speed_max: f64,
    /// Largest tangential speed among active contacts (m/s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub slip_speed_max: f64,
    /// `sum_i lambda_n,i` (N s).
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub normal_impulse_total: f64,
    /// Bilateral joints: `max_k |G_k v+ - v_hat_k + r_k gamma_k|`, the residual of each joint
    /// row's velocity-level law (rigid: `|G v+ + C(q0)/dt|`) (m/s or rad/s; 0 without joints;
    /// [`bilateral::bilateral_residual_max`]).
    #[serde(default, deserialize_with = "crate::record::nullable_f64")]
    pub bilateral_residual: f64,
    /// Bilateral joints: `max_k |C_k(q+)|`, the joint drift after the step (m or rad; 0 without
    /// joints; [`bilateral::bilateral_violation_max`]).
    #[serde(default, deserialize_with = "crate::record::nullable_f64")]
    pub bilateral_violation_max: f64,
    /// Lee et al. 2025 cross-solver residual ([`lee::lee_residual`]): `||λ − T(λ − (J v̂ + e))||_2 /
    /// n_c` at the impulse-projected velocity `v̂ = v* + M⁻¹(Jᵀλ + Gᵀγ)`, strict operator `T`, unit
    /// weight (SI, mixed N s and m/s, as in the paper).
    #[serde(default, deserialize_with = "crate::record::nullable_f64")]
    pub lee_residual: f64,
    /// `-log10(lee_residual)`, the form of the paper's tables (larger is better).
    #[serde(default, deserialize_with = "crate::record::nullable_f64")]
    pub lee_residual_neglog10: f64,
    /// The same residual weighted by each contact's effective mass and normalised, dimensionless
    /// ([`lee::lee_residual`]).
    #[serde(default, deserialize_with = "crate::record::nullable_f64")]
    pub lee_residual_rel: f64,
}

impl StepMetrics {
    /// The metrics of a step at time `t` that nothing measured yet: every floating-point metric
    /// NaN, every count 0 (fill in what is measured with struct-update syntax).
    pub fn unmeasured(t: f64) -> StepMetrics {
        let mut m = StepMetrics { t, ..StepMetrics::default() };
        m.poison();
        m
    }

    /// Sets every floating-point metric except `t` to NaN (the NaN policy).
    fn poison(&mut self) {
        let t = self.t;
        let counts = (self.n_contacts, self.n_active, self.n_stick, self.n_slip);
        *self = StepMetrics {
            t,
            n_contacts: counts.0,
            n_active: counts.1,
            n_stick: counts.2,
            n_slip: counts.3,
            momentum_rel: f64::NAN,
            natmap_abs_l2: f64::NAN,
            natmap_rel_l2: f64::NAN,
            natmap_rel1_l2: f64::NAN,
            signorini_max: f64::NAN,
            cone_violation_max: f64::NAN,
            mdp_violation_max: f64::NAN,
            penetration_max: f64::NAN,
            kinetic: f64::NAN,
            gravity: f64::NAN,
            spring: f64::NAN,
            elastic: f64::NAN,
            energy: f64::NAN,
            energy_change: f64::NAN,
            energy_injection: f64::NAN,
            linear_momentum: f64::NAN,
            angular_momentum: f64::NAN,
            creep_speed_max: f64::NAN,
            slip_speed_max: f64::NAN,
            normal_impulse_total: f64::NAN,
            bilateral_residual: f64::NAN,
            bilateral_violation_max: f64::NAN,
            lee_residual: f64::NAN,
            lee_residual_neglog10: f64::NAN,
            lee_residual_rel: f64::NAN,
        };
    }
}

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
