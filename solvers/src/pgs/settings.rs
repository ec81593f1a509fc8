//! [`PgsSettings`]: the options of PGS, their defaults and their validation.

use super::local::Local;
use serde::{Deserialize, Serialize};

/// Options of the projected Gauss–Seidel solver. Every field has a default, so a run names only
/// what it changes (`signorini run --set solver.omega=1.3` goes through [`harness::Params`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PgsSettings {
    /// Most sweeps over all contacts (default 500). PGS converges linearly, at a rate that degrades
    /// with the conditioning of the Delassus matrix (stacks, mass ratios); 500 sweeps reach
    /// `tolerance` on the small canonical cases and bound the cost elsewhere, where the run then
    /// reports `MaxIterations` instead of hiding the slow convergence.
    pub max_iterations: usize,
    /// Stop when `||λ^{k+1} − λ^k||_∞ / max(||λ^{k+1}||_∞, tiny) < tolerance` (dimensionless;
    /// default 1e-8).
    pub tolerance: f64,
    /// Local solver per contact: `"split"` (exact normal update, then exact tangential update on
    /// the friction disk) or `"cone"` (one De Saxcé projection onto the cone) (default `"split"`).
    pub local: String,
    /// Over-relaxation factor `ω` in (0, 2): `λ ← P_K(λ + ω (λ_local − λ))` (default 1).
    pub omega: f64,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
}

impl Default for PgsSettings {
    fn default() -> Self {
        Self { max_iterations: 500, tolerance: 1e-8, local: "split".into(), omega: 1.0, warm_start: true }
    }
}

impl harness::Settings for PgsSettings {
    fn validate(&self) -> Result<(), String> {
        if self.max_iterations < 1 {
            return Err(format!("max_iterations: must be >= 1, got {}", self.max_iterations));
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(format!("tolerance: must be finite and > 0, got {}", self.tolerance));
        }
        if !(self.omega > 0.0 && self.omega < 2.0) {
            return Err(format!("omega: must be in (0, 2), got {}", self.omega));
        }
        if Local::from_name(&self.local).is_none() {
            return Err(format!("local: must be one of {}, got '{}'", Local::NAMES.join(", "), self.local));
        }
        Ok(())
    }
}
