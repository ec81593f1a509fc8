//! [`SubAdmmSettings`]: the options of SubADMM, their defaults and their validation.

use serde::{Deserialize, Serialize};

/// How the constraint Jacobians are split into slack blocks (Table III).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Split {
    /// One slack block per (constraint, body) (the paper's SubADMM, Eqs. 30–31).
    #[default]
    #[serde(rename = "body")]
    Body,
    /// One slack block per (constraint, subsystem) ("No Body", the authors' ref. [34]).
    #[serde(rename = "subsystem")]
    Subsystem,
    /// One block per constraint and one global linear system ("No Sub", vanilla ADMM, Eq. 28).
    #[serde(rename = "none")]
    None,
}

/// Options of SubADMM (Lee et al. 2025, Algorithm 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubAdmmSettings {
    /// Most ADMM iterations per step (default 100, the paper's fixed count).
    pub max_iterations: usize,
    /// Stop when the relative primal residual `max_i ||Δλ_i|| / max_i ||λ_i||` and the relative
    /// dual residual `θ_d / max(||b_j||, ||M_j v_j||)` are both below it (default 1e-8).
    pub tolerance: f64,
    /// `"body"` (paper), `"subsystem"` ("No Body") or `"none"` ("No Sub") (default `"body"`).
    pub split: Split,
    /// Initial penalty (kg); 0 selects the paper's rule, the geometric mean over bodies in contact
    /// of mass / number of contact points (default 0).
    pub beta0: f64,
    /// Adaptation trigger `γ > 1` of Eq. (43) (default 10); 0 disables adaptation.
    pub gamma: f64,
    /// Fewest iterations between two penalty changes (each refactors every subsystem) (default 5).
    pub adapt_interval: usize,
    /// The adapted penalty stays within `[β_init / beta_range, β_init · beta_range]` of the step's
    /// initial β (default 1e6, OSQP's bounds on ρ): an infeasible or redundant step (a constant
    /// primal residual with a vanishing dual residual) would otherwise raise β without bound until
    /// the factorisation loses every digit.
    pub beta_range: f64,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
    /// Threads for the per-subsystem and per-constraint steps (default 1: sequential).
    pub threads: usize,
}

impl Default for SubAdmmSettings {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            tolerance: 1e-8,
            split: Split::Body,
            beta0: 0.0,
            gamma: 10.0,
            adapt_interval: 5,
            beta_range: 1e6,
            warm_start: true,
            threads: 1,
        }
    }
}

impl api::Settings for SubAdmmSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        api::check_non_negative("beta0", self.beta0)?;
        if !(self.gamma == 0.0 || (self.gamma.is_finite() && self.gamma > 1.0)) {
            return Err(api::FieldError::new("gamma", format!("must be 0 or > 1, got {}", self.gamma)));
        }
        if self.adapt_interval < 1 {
            return Err(api::FieldError::new("adapt_interval", format!("must be >= 1, got {}", self.adapt_interval)));
        }
        api::check_in("beta_range", self.beta_range, api::Bound::Closed(1.0), api::Bound::None)?;
        if !(1..=256).contains(&self.threads) {
            return Err(api::FieldError::new("threads", format!("must be in 1..=256, got {}", self.threads)));
        }
        Ok(())
    }
}
