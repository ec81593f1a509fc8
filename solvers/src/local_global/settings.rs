//! [`LocalGlobalSettings`]: options of the local-global solver (Zeng et al. §7.1 defaults) and
//! validation.

use kernels::ncp::Ncp;
use serde::{Deserialize, Serialize};

/// How the global step `A q = b` (Eq. 6) is solved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GlobalSolve {
    /// `q = Sᵀ (S b)` with the sparse inverse factor (Eq. 8; Algorithm 4; default).
    #[default]
    #[serde(rename = "sparse_inverse")]
    SparseInverse,
    /// Forward and backward triangular solves with the prefactored Cholesky `L` (Algorithm 1).
    #[serde(rename = "cholesky")]
    Cholesky,
    /// One Jacobi iteration `q ← q + D⁻¹(b − A q)` per global step — the paper's "incomplete"
    /// baseline (Wang 2015 without Chebyshev, §7.3). Its `A⁻¹` in the constraint step is `D⁻¹`.
    #[serde(rename = "jacobi")]
    Jacobi,
}

/// The complementarity preconditioner (r-factor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RFactor {
    /// `r_n = h² W_jj`, `r_f = h W_jj` with the stiffness-aware `W = H A⁻¹ Hᵀ` (Eq. 28; default).
    #[default]
    #[serde(rename = "delassus")]
    Delassus,
    /// Macklin's mass-based `r_n = h² [H M⁻¹ Hᵀ]_jj`, `r_f = h [H M⁻¹ Hᵀ]_jj` (Macklin Eq. 66).
    #[serde(rename = "mass")]
    Mass,
}

/// Options of `local_global`. Every field has a default (paper §7.1, Table 3, unless stated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalGlobalSettings {
    /// Local-global (= non-smooth Newton) iterations per step (default 5; the stick–slip test of
    /// Fig. 7 uses 10).
    pub iterations: usize,
    /// Conjugate-residual iterations on the constraint system per local-global iteration
    /// (default 10; Fig. 7 uses 24).
    pub cr_iterations: usize,
    /// Global solve: `"sparse_inverse"` (default), `"cholesky"` or `"jacobi"`.
    pub global_solve: GlobalSolve,
    /// NCP function: `"fb"` (Fischer–Burmeister, default, Eq. 14) or `"min"` (Eq. 13).
    pub ncp: Ncp,
    /// Complementarity preconditioner: `"delassus"` (Eq. 28, default) or `"mass"` (Macklin).
    pub r_factor: RFactor,
    /// Jacobi preconditioner `diag(ΩWΩ + E)⁻¹` in the conjugate residual (default false: plain
    /// CR, as the paper).
    pub cr_jacobi: bool,
    /// Start λ from the previous step's impulses matched by contact key (default true; the paper
    /// does not say; README §Errata and derivations).
    pub warm_start: bool,
    /// Stop early when `‖q^{k+1} − q^k‖_∞ ≤ tolerance · max(h ‖v0‖_∞, ‖q̃ − q0‖_∞, 1e-12 m)`
    /// (dimensionless; default 0: the paper's fixed budget).
    pub tolerance: f64,
    /// Log `energy_rel_error` = `(e(q^k) − e(q*))/(e(q^0) − e(q*))` against a converged Newton
    /// solution `q*` of the same incremental potential, computed at the start of each contact-free
    /// step (default false: costs a Newton solve per step; for studies and Fig. 9).
    pub reference: bool,
}

impl Default for LocalGlobalSettings {
    fn default() -> Self {
        Self {
            iterations: 5,
            cr_iterations: 10,
            global_solve: GlobalSolve::SparseInverse,
            ncp: Ncp::FischerBurmeister,
            r_factor: RFactor::Delassus,
            cr_jacobi: false,
            warm_start: true,
            tolerance: 0.0,
            reference: false,
        }
    }
}

impl api::Settings for LocalGlobalSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("iterations", self.iterations)?;
        api::check_budget("cr_iterations", self.cr_iterations)?;
        api::check_non_negative("tolerance", self.tolerance)?;
        Ok(())
    }
}
