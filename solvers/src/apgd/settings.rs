//! Settings of `apgd` (README §4).

use serde::{Deserialize, Serialize};

/// Settings of [`super::Apgd`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApgdSettings {
    /// Most iterations (default 2000).
    pub max_iterations: usize,
    /// Stop when the CCP's natural-map residual is below `tolerance` times its value at `x = 0`,
    /// `‖P_K(−q)‖` (default 1e-8).
    pub tolerance: f64,
    /// Nesterov's momentum (default true; false: projected gradient with the same step rule).
    pub acceleration: bool,
    /// Restart the momentum when the gradient makes an acute angle with the last step (default
    /// true; only with `acceleration`).
    pub restart: bool,
    /// Backtracking Lipschitz estimate, shrunk by 0.9 each iteration (default true; false: the
    /// fixed step `1 / λ_max(W)` by power iteration).
    pub adaptive_step: bool,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
}

impl Default for ApgdSettings {
    fn default() -> Self {
        Self {
            max_iterations: 2000,
            tolerance: 1e-8,
            acceleration: true,
            restart: true,
            adaptive_step: true,
            warm_start: true,
        }
    }
}

impl api::Settings for ApgdSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        Ok(())
    }
}
