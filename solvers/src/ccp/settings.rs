//! Settings of `ccp_pgs` and `ccp_admm` (defaults and meanings: README §4).

use serde::{Deserialize, Serialize};

/// Settings of [`super::CcpPgs`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CcpPgsSettings {
    /// Most sweeps over all contacts and joint rows (default 500).
    pub max_iterations: usize,
    /// Stop when `‖x^{k+1} − x^k‖_∞ / max(‖x^{k+1}‖_∞, tiny) < tolerance` (default 1e-8).
    pub tolerance: f64,
    /// Most projected-gradient steps of one contact's local cone program per visit (default 20;
    /// 1 is ContactBench's single projected step); the local loop stops earlier when a step
    /// changes the impulse by less than `1e-3 tolerance` relative.
    pub local_iterations: usize,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
}

impl Default for CcpPgsSettings {
    fn default() -> Self {
        Self { max_iterations: 500, tolerance: 1e-8, local_iterations: 20, warm_start: true }
    }
}

impl api::Settings for CcpPgsSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        api::check_budget("local_iterations", self.local_iterations)?;
        Ok(())
    }
}

/// How `ccp_admm` changes its penalty `ρ` between iterations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RhoUpdate {
    /// ContactBench's: multiply `ρ` by `κ^{0.1}` when the primal residual exceeds 10 times the
    /// dual one, by `κ^{−0.1}` when it is below a tenth of it (`κ = λ_max / λ_min`), and refactor.
    #[default]
    Spectral,
    /// Keep the initial `ρ` (one factorization per step).
    Fixed,
}

/// Settings of [`super::CcpAdmm`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CcpAdmmSettings {
    /// Most ADMM iterations (default 1000).
    pub max_iterations: usize,
    /// Stop when both the primal residual `‖x − z‖_∞` and the change of the linear-solve iterate
    /// `‖x^{k+1} − x^k‖_∞`, relative to `max(‖z‖_∞, tiny)`, are below it (default 1e-8).
    pub tolerance: f64,
    /// Proximal weight `ρ_p` added to `W` (m/s per N s, default 1e-6, ContactBench's): also the
    /// smallest eigenvalue estimate `λ_min` of the spectral rule.
    pub rho_prox: f64,
    /// Over-relaxation `α` of the projection step in (0, 2) (default 1).
    pub over_relaxation: f64,
    /// The `ρ` update (default `"spectral"`).
    pub rho_update: RhoUpdate,
    /// Most power iterations for `λ_max(W)` (default 100).
    pub power_iterations: usize,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
}

impl Default for CcpAdmmSettings {
    fn default() -> Self {
        Self {
            max_iterations: 1000,
            tolerance: 1e-8,
            rho_prox: 1e-6,
            over_relaxation: 1.0,
            rho_update: RhoUpdate::Spectral,
            power_iterations: 100,
            warm_start: true,
        }
    }
}

impl api::Settings for CcpAdmmSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        api::check_positive("rho_prox", self.rho_prox)?;
        api::check_in("over_relaxation", self.over_relaxation, api::Bound::Open(0.0), api::Bound::Open(2.0))?;
        api::check_budget("power_iterations", self.power_iterations)?;
        Ok(())
    }
}
