//! Settings of `staggered` (README §4).

use serde::{Deserialize, Serialize};
use toolkit::cone_program::ClarabelSettings;

/// Settings of [`super::Staggered`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StaggeredSettings {
    /// Most fixed-point iterations, each one normal and one friction projection (default 100).
    pub max_iterations: usize,
    /// Stop at the fixed point: when one iteration changes the impulses by less than `tolerance`
    /// relative, `‖x^k − x^{k−1}‖_∞ / max(‖x^k‖_∞, 1e-300) < tolerance` (default 1e-7).
    pub tolerance: f64,
    /// Start the first normal projection from the previous step's friction impulses, matched by
    /// contact key (default true; false: from zero friction, the frictionless normal problem).
    pub warm_start: bool,
    /// clarabel, per projection: most interior-point iterations (default 200).
    pub qp_max_iter: u32,
    /// clarabel, per projection: `tol_gap_abs = tol_gap_rel = tol_feas` (default 1e-10).
    pub qp_tolerance: f64,
    /// clarabel, per projection: Ruiz equilibration (default true).
    pub qp_equilibrate: bool,
}

impl Default for StaggeredSettings {
    fn default() -> Self {
        Self {
            max_iterations: 100,
            tolerance: 1e-7,
            warm_start: true,
            qp_max_iter: 200,
            qp_tolerance: 1e-10,
            qp_equilibrate: true,
        }
    }
}

impl StaggeredSettings {
    /// The clarabel settings of each projection.
    pub fn clarabel(&self) -> ClarabelSettings {
        ClarabelSettings { max_iter: self.qp_max_iter, tolerance: self.qp_tolerance, equilibrate: self.qp_equilibrate }
    }
}

impl api::Settings for StaggeredSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        api::check_budget("qp_max_iter", self.qp_max_iter as usize)?;
        api::check_positive("qp_tolerance", self.qp_tolerance)?;
        Ok(())
    }
}
