//! [`CanalSettings`]: the options of CANAL, their defaults (paper values where the paper gives
//! them, otherwise this crate's choices, README §10) and their validation.

use serde::{Deserialize, Serialize};

/// How the surrogate problem of each AL iteration is solved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Inner {
    /// CANAL (the paper): proximal cone projection with the frozen De Saxcé term, exact Newton on
    /// the strongly convex potential (22), exact line search (26).
    #[default]
    #[serde(rename = "cascaded")]
    Cascaded,
    /// Table II baseline: the strict operator (17) directly in (19), trust-region dogleg on the
    /// merit `½||r||²`.
    #[serde(rename = "trdogleg")]
    TrDogleg,
    /// Table II baseline: the strict operator (17) in (19), damped semismooth Newton with Armijo
    /// backtracking on `½||r||²`.
    #[serde(rename = "damped_newton")]
    DampedNewton,
}

/// Options of CANAL (Lee et al. 2025, Algorithm 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CanalSettings {
    /// Most AL (outer) iterations per step (default 50; the paper's Table II runs 10).
    pub max_al_iterations: usize,
    /// Most inner Newton iterations per AL iteration (default 300). Lee et al. give no inner cap
    /// (their inner solves converge: 0 % failures in Table II); 300 is this crate's budget, large
    /// enough that the dense pour's inner solves converge through their active-set changes (README §7).
    pub max_newton_iterations: usize,
    /// AL stopping tolerance `θ_th^AL` on `||J v − z||_2 = ||λ^{l+1} − λ^l||_2 / β` (m/s; default
    /// 1e-10).
    pub al_tolerance: f64,
    /// Second AL stopping test, on the relative impulse change
    /// `||λ^{l+1} − λ^l||_2 / max(||λ^{l+1}||_2, ||M v*||_2)` (dimensionless; default 1e-9): at large
    /// `β` a small `||J v − z||` alone still allows a large impulse change; the momentum floor
    /// lets steps whose impulses are ≈ 0 stop (README §6).
    pub impulse_tolerance: f64,
    /// Inner stopping tolerance on `||r(v)||_2 / max(||b||, ||M v||, ||Jᵀλ||)` (dimensionless;
    /// default 1e-10). `r` is Eq. (21).
    pub newton_tolerance: f64,
    /// Initial penalty `β` (kg; default 1e4, the paper's "moderate" value).
    pub beta0: f64,
    /// Penalty growth factor `κ > 1` of Eq. (27) (default 10).
    pub kappa: f64,
    /// Sufficient-decrease ratio `ζ` in (0, 1) of Eq. (27) (default 0.25).
    pub zeta: f64,
    /// Penalty cap `β_max` (kg; default 1e5: ten times the paper's `β0`, README §6 and §7 for the
    /// measurement behind it).
    pub beta_max: f64,
    /// Inner solver: `"cascaded"` (CANAL), `"trdogleg"` or `"damped_newton"` (the strict-operator
    /// baselines of Table II, dense linear algebra) (default `"cascaded"`).
    pub inner: Inner,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
    /// Most evaluations of the exact line search (rtsafe) (default 100).
    pub line_search_iterations: usize,
}

impl Default for CanalSettings {
    fn default() -> Self {
        Self {
            max_al_iterations: 50,
            max_newton_iterations: 300,
            al_tolerance: 1e-10,
            impulse_tolerance: 1e-9,
            newton_tolerance: 1e-10,
            beta0: 1e4,
            kappa: 10.0,
            zeta: 0.25,
            beta_max: 1e5,
            inner: Inner::Cascaded,
            warm_start: true,
            line_search_iterations: 100,
        }
    }
}

impl api::Settings for CanalSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_al_iterations", self.max_al_iterations)?;
        api::check_budget("max_newton_iterations", self.max_newton_iterations)?;
        api::check_budget("line_search_iterations", self.line_search_iterations)?;
        api::check_positive("al_tolerance", self.al_tolerance)?;
        api::check_positive("newton_tolerance", self.newton_tolerance)?;
        api::check_positive("impulse_tolerance", self.impulse_tolerance)?;
        api::check_positive("beta0", self.beta0)?;
        api::check_positive("beta_max", self.beta_max)?;
        api::check_in("kappa", self.kappa, api::Bound::Open(1.0), api::Bound::None)?;
        api::check_in("zeta", self.zeta, api::Bound::Open(0.0), api::Bound::Open(1.0))?;
        if self.beta_max < self.beta0 {
            // name both: either one may be the value the user set
            return Err(api::FieldError::new(
                "beta0",
                format!(
                    "{} exceeds beta_max = {}; the penalty starts at beta0 and grows up to beta_max",
                    api::params::short(self.beta0),
                    api::params::short(self.beta_max)
                ),
            ));
        }
        Ok(())
    }
}
