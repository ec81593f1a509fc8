//! Solver-independent metrics of one step, computed by the harness from what a solver returns
//! (never trusted from the solver's own report). Definitions: anchors.md §3.3 and §12,
//! Castro et al. Eq. 32 (momentum), design.md "Metrics".

use serde::{Deserialize, Serialize};

/// Metrics of one step. Every name states its norm and normalisation. Maxima over an empty
/// contact set are 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepMetrics {
    /// Simulated time at the end of the step (s).
    pub t: f64,
    /// Number of contacts in the problem.
    pub n_contacts: usize,
    /// Contacts with a positive normal impulse.
    pub n_active: usize,
    /// Castro Eq. 32: `||D (M(v+ - v*) - J^T lambda)|| / max(||D M v+||, ||D J^T lambda||)`,
    /// `D = diag(M)^-1/2` (dimensionless).
    pub momentum_rel: f64,
    /// Natural-map residual of the rigid Coulomb NCP, `||lambda - P_K(lambda - u_hat)||_2` (N s).
    pub natmap_abs_l2: f64,
    /// Siconos normalisation: `natmap_abs_l2 / ||q||_2` with `q = J v* + w` (absolute if `||q|| <= eps`).
    pub natmap_rel_l2: f64,
    /// FCLIB "old" normalisation: `natmap_abs_l2 / (1 + ||q||_2)`.
    pub natmap_rel1_l2: f64,
    /// `max_i |u_n,i lambda_n,i|` with `u = J v+ + w` (W s... m/s x N s).
    pub signorini_max: f64,
    /// `max_i max(||lambda_t|| - mu lambda_n, -lambda_n, 0)` (N s).
    pub cone_violation_max: f64,
    /// Over sliding contacts (`||u_t|| > slip threshold` and `lambda_n > 0`):
    /// `max (1 - cos angle(lambda_t, -u_t))` (0 = opposite to slip, 2 = along slip).
    pub mdp_violation_max: f64,
    /// `max(0, -phi)` over contacts detected after the step (m).
    pub penetration_max: f64,
    /// Kinetic energy after the step (J).
    pub kinetic: f64,
    /// Gravitational energy after the step (J).
    pub gravity: f64,
    /// Spring energy after the step (J).
    pub spring: f64,
    /// `kinetic + gravity + spring` after the step (J).
    pub energy: f64,
    /// `energy(after) - energy(before)` (J).
    pub energy_change: f64,
    /// `max(0, energy_change)`: energy injected by the step (J).
    pub energy_injection: f64,
    /// `||sum m v||` after the step (kg m/s).
    pub linear_momentum: f64,
    /// `||angular momentum about the origin||` after the step (kg m^2/s).
    pub angular_momentum: f64,
    /// Active contacts strictly inside the friction cone (`||lambda_t|| < (1 - 1e-3) mu lambda_n`).
    pub n_stick: usize,
    /// Active contacts on the cone boundary.
    pub n_slip: usize,
    /// Largest tangential speed `||u_t||` among sticking contacts (m/s): the creep.
    pub creep_speed_max: f64,
    /// Largest tangential speed among active contacts (m/s).
    pub slip_speed_max: f64,
    /// `sum_i lambda_n,i` (N s).
    pub normal_impulse_total: f64,
}
