//! [`StepMetrics`]: the solver-independent metrics of one step as a record stores them (the
//! harness computes them; their definitions are in its metrics module).

use serde::{Deserialize, Serialize};

/// Metrics of one step. Every name states its norm and normalisation. Maxima over an empty
/// contact set are 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepMetrics {
    /// Simulated time at the end of the step (s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub t: f64,
    /// Number of contacts in the problem.
    pub n_contacts: usize,
    /// Contacts with a positive normal impulse.
    pub n_active: usize,
    /// Castro Eq. 32: `||D (M(v+ - v*) - J^T lambda)|| / max(||D M v+||, ||D J^T lambda||)`,
    /// `D = diag(M)^-1/2` (dimensionless).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub momentum_rel: f64,
    /// Natural-map residual of the rigid Coulomb NCP, `||lambda - P_K(lambda - u_hat)||_2` (N s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub natmap_abs_l2: f64,
    /// Siconos normalisation: `natmap_abs_l2 / ||q||_2` with `q = J v* + w` (absolute if `||q|| <= eps`).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub natmap_rel_l2: f64,
    /// FCLIB "old" normalisation: `natmap_abs_l2 / (1 + ||q||_2)`.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub natmap_rel1_l2: f64,
    /// `max_i |u_n,i lambda_n,i|` with `u = J v+ + w` (W s... m/s x N s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub signorini_max: f64,
    /// `max_i max(||lambda_t|| - mu lambda_n, -lambda_n, 0)` (N s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub cone_violation_max: f64,
    /// Over sliding contacts (`||u_t|| > slip threshold` and `lambda_n > 0`):
    /// `max (1 - cos angle(lambda_t, -u_t))` (0 = opposite to slip, 2 = along slip).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub mdp_violation_max: f64,
    /// `max(0, -phi)` over contacts detected after the step (m).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub penetration_max: f64,
    /// Kinetic energy after the step (J).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub kinetic: f64,
    /// Gravitational energy after the step (J).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub gravity: f64,
    /// Spring energy after the step (J).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub spring: f64,
    /// Elastic energy of the deformable bodies after the step (J; 0 without deformables).
    #[serde(default, deserialize_with = "crate::nullable_f64")]
    pub elastic: f64,
    /// `kinetic + gravity + spring + elastic` after the step (J).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub energy: f64,
    /// `energy(after) - energy(before)` (J).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub energy_change: f64,
    /// `max(0, energy_change)`: energy injected by the step (J).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub energy_injection: f64,
    /// `||sum m v||` after the step (kg m/s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub linear_momentum: f64,
    /// `||angular momentum about the origin||` after the step (kg m^2/s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub angular_momentum: f64,
    /// Active contacts strictly inside the friction cone (`||lambda_t|| < (1 - 1e-3) mu lambda_n`).
    pub n_stick: usize,
    /// Active contacts on the cone boundary.
    pub n_slip: usize,
    /// Largest tangential speed `||u_t||` among sticking contacts (m/s): the creep.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub creep_speed_max: f64,
    /// Largest tangential speed among active contacts (m/s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub slip_speed_max: f64,
    /// `sum_i lambda_n,i` (N s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub normal_impulse_total: f64,
    /// Bilateral joints: `max_k |G_k v+ - v_hat_k + r_k gamma_k|`, the residual of each joint
    /// row's velocity-level law (rigid: `|G v+ + C(q0)/dt|`) (m/s or rad/s; 0 without joints;
    /// [`bilateral::bilateral_residual_max`]).
    #[serde(default, deserialize_with = "crate::nullable_f64")]
    pub bilateral_residual: f64,
    /// Bilateral joints: `max_k |C_k(q+)|`, the joint drift after the step (m or rad; 0 without
    /// joints; [`bilateral::bilateral_violation_max`]).
    #[serde(default, deserialize_with = "crate::nullable_f64")]
    pub bilateral_violation_max: f64,
    /// Lee et al. 2025 cross-solver residual ([`lee::lee_residual`]): `||λ − T(λ − (J v̂ + e))||_2 /
    /// n_c` at the impulse-projected velocity `v̂ = v* + M⁻¹(Jᵀλ + Gᵀγ)`, strict operator `T`, unit
    /// weight (SI, mixed N s and m/s, as in the paper).
    #[serde(default, deserialize_with = "crate::nullable_f64")]
    pub lee_residual: f64,
    /// `-log10(lee_residual)`, the form of the paper's tables (larger is better).
    #[serde(default, deserialize_with = "crate::nullable_f64")]
    pub lee_residual_neglog10: f64,
    /// The same residual weighted by each contact's effective mass and normalised, dimensionless
    /// ([`lee::lee_residual`]).
    #[serde(default, deserialize_with = "crate::nullable_f64")]
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
    pub fn poison(&mut self) {
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
