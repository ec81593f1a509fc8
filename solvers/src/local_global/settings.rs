//! [`LocalGlobalSettings`]: options of the local-global solver (Zeng et al. §7.1 defaults) and
//! validation.

use kernels::ncp::Ncp;
use serde::{Deserialize, Serialize};

/// How the global step `A q = b` (Eq. 6) is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobalSolve {
    /// `q = Sᵀ (S b)` with the sparse inverse factor (Eq. 8; Algorithm 4; default).
    SparseInverse,
    /// Forward and backward triangular solves with the prefactored Cholesky `L` (Algorithm 1).
    Cholesky,
    /// One Jacobi iteration `q ← q + D⁻¹(b − A q)` per global step — the paper's "incomplete"
    /// baseline (Wang 2015 without Chebyshev, §7.3). Its `A⁻¹` in the constraint step is `D⁻¹`.
    Jacobi,
}

impl GlobalSolve {
    /// Accepted names.
    pub const NAMES: [&'static str; 3] = ["sparse_inverse", "cholesky", "jacobi"];
    /// Parses a name.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "sparse_inverse" => Some(Self::SparseInverse),
            "cholesky" => Some(Self::Cholesky),
            "jacobi" => Some(Self::Jacobi),
            _ => None,
        }
    }
}

/// The complementarity preconditioner (r-factor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RFactor {
    /// `r_n = h² W_jj`, `r_f = h W_jj` with the stiffness-aware `W = H A⁻¹ Hᵀ` (Eq. 28; default).
    Delassus,
    /// Macklin's mass-based `r_n = h² [H M⁻¹ Hᵀ]_jj`, `r_f = h [H M⁻¹ Hᵀ]_jj` (Macklin Eq. 66).
    Mass,
}

impl RFactor {
    /// Accepted names.
    pub const NAMES: [&'static str; 2] = ["delassus", "mass"];
    /// Parses a name.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "delassus" => Some(Self::Delassus),
            "mass" => Some(Self::Mass),
            _ => None,
        }
    }
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
    pub global_solve: String,
    /// NCP function: `"fb"` (Fischer–Burmeister, default, Eq. 14) or `"min"` (Eq. 13).
    pub ncp: String,
    /// Complementarity preconditioner: `"delassus"` (Eq. 28, default) or `"mass"` (Macklin).
    pub r_factor: String,
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
            global_solve: "sparse_inverse".into(),
            ncp: "fb".into(),
            r_factor: "delassus".into(),
            cr_jacobi: false,
            warm_start: true,
            tolerance: 0.0,
            reference: false,
        }
    }
}

impl harness::Settings for LocalGlobalSettings {
    fn validate(&self) -> Result<(), String> {
        if self.iterations < 1 {
            return Err(format!("iterations: must be >= 1, got {}", self.iterations));
        }
        if self.cr_iterations < 1 {
            return Err(format!("cr_iterations: must be >= 1, got {}", self.cr_iterations));
        }
        if GlobalSolve::from_name(&self.global_solve).is_none() {
            return Err(format!(
                "global_solve: must be one of {}, got '{}'",
                GlobalSolve::NAMES.join(", "),
                self.global_solve
            ));
        }
        if Ncp::from_name(&self.ncp).is_none() {
            return Err(format!("ncp: must be one of {}, got '{}'", Ncp::NAMES.join(", "), self.ncp));
        }
        if RFactor::from_name(&self.r_factor).is_none() {
            return Err(format!("r_factor: must be one of {}, got '{}'", RFactor::NAMES.join(", "), self.r_factor));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(format!("tolerance: must be finite and >= 0, got {}", self.tolerance));
        }
        Ok(())
    }
}
