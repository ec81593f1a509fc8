//! Settings of `raisim` (README §4).

use serde::{Deserialize, Serialize};

/// Settings of [`super::Raisim`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RaisimSettings {
    /// Most sweeps over all joint rows and contacts (default 500).
    pub max_iterations: usize,
    /// Stop when `‖λ^{k+1} − λ^k‖_∞ / max(‖λ^{k+1}‖_∞, tiny) < tolerance` (default 1e-8).
    pub tolerance: f64,
    /// Relaxation `α` in (0, 1] of each contact's update, `λ ← λ + α (λ_exact − λ)` (default 1).
    pub relaxation: f64,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
}

impl Default for RaisimSettings {
    fn default() -> Self {
        Self { max_iterations: 500, tolerance: 1e-8, relaxation: 1.0, warm_start: true }
    }
}

impl api::Settings for RaisimSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        api::check_in("relaxation", self.relaxation, api::Bound::Open(0.0), api::Bound::Closed(1.0))?;
        Ok(())
    }
}
