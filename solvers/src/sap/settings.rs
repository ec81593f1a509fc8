//! [`SapSettings`]: the options of SAP, their defaults (the paper's where it gives them, Drake's
//! otherwise, each marked) and their validation.

use serde::{Deserialize, Serialize};

/// A member of the two-stage theta-method family (Castro et al. §II-C): `(theta, theta_vq)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheme {
    /// `(0, 0)`: explicit Euler, first order.
    ExplicitEuler,
    /// `(0, 1)`: symplectic Euler, first order, bounded energy for conservative forces.
    #[default]
    SymplecticEuler,
    /// `(1, 1)`: implicit Euler, first order, strongly dissipative.
    ImplicitEuler,
    /// `(1/2, 1/2)`: symplectic midpoint, second order, conserves the energy of linear springs.
    Midpoint,
    /// `theta` and `theta_vq` given explicitly by the settings.
    Custom,
}

impl Scheme {
    /// `(theta, theta_vq)` of Eq. 6 for a named scheme, `None` for [`Scheme::Custom`].
    pub fn thetas(self) -> Option<(f64, f64)> {
        match self {
            Scheme::ExplicitEuler => Some((0.0, 0.0)),
            Scheme::SymplecticEuler => Some((0.0, 1.0)),
            Scheme::ImplicitEuler => Some((1.0, 1.0)),
            Scheme::Midpoint => Some((0.5, 0.5)),
            Scheme::Custom => None,
        }
    }
}

/// Which point the exact line search evaluates first (README §9, "Line search").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineSearchStart {
    /// Drake's order: `ℓ'(α_max)` first, accepting `α_max` when `ℓ'(α_max) ≤ 0`, then rtsafe from
    /// the Newton guess `α₀ = min(−ℓ'(0)/ℓ''(0), α_max)`.
    AlphaMax,
    /// The Newton guess `α₀` first: accepted when it already meets the tolerance (one evaluation
    /// instead of two, the usual case near the solution, where `α ≈ 1`); `ℓ'(α_max)` is evaluated
    /// only when `ℓ` still decreases beyond the tolerance at `α₀ < α_max`, and `α_max` accepted
    /// under Drake's rule. The same root, the same acceptance tests.
    #[default]
    Newton,
}

/// Options of the SAP solver. Every field has a default; `signorini run --set solver.scheme=midpoint`
/// goes through [`api::Params`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SapSettings {
    /// Time integrator (Eq. 6–12): `"explicit_euler"` (θ = 0, θ_vq = 0), `"symplectic_euler"`
    /// (0, 1), `"implicit_euler"` (1, 1), `"midpoint"` (½, ½) or `"custom"` (uses `theta` and
    /// `theta_vq`) (default `"symplectic_euler"`, the harness's own integrator).
    pub scheme: Scheme,
    /// θ of Eq. 6 in [0, 1], used when `scheme = "custom"`; with a named scheme it must be −1
    /// (default, "take it from `scheme`") or equal the scheme's value.
    pub theta: f64,
    /// θ_vq of Eq. 6 in [0, 1], with the same rule as `theta` (default −1).
    pub theta_vq: f64,
    /// ε_r of the stopping rule Eq. 26 (dimensionless, default 1e-6: Drake's default, inside the
    /// paper's range 1e-6 … 1e-1).
    pub rel_tolerance: f64,
    /// ε_a of Eq. 26 (√J, default 1e-16, the paper's value).
    pub abs_tolerance: f64,
    /// Most Newton iterations per step (default 100, Drake's value).
    pub max_iterations: usize,
    /// Near-rigid parameter β of Eq. 29 (dimensionless, default 1, the paper's value).
    pub beta: f64,
    /// Friction regularisation σ of Eq. 30, `R_t = σ w` (dimensionless, default 1e-3, the paper's).
    pub sigma: f64,
    /// Dissipation time of harness-rigid contacts as a multiple of δt (default 0: `v̂_n = −φ0/δt`,
    /// the harness's rigid bias; the paper's clutter uses τ_d = δt, i.e. 1). Rigid contacts always
    /// take the near-rigid `R_n = β² w / (4π²)` of Eq. 29.
    pub rigid_tau_d_over_dt: f64,
    /// Upper end α_max of the exact line search (default 1.5, Drake's value).
    pub alpha_max: f64,
    /// Tolerance on the normalised derivative `ℓ'(α)/(−ℓ'(0))` ending the line search
    /// (dimensionless, default 1e-8, Drake's value).
    pub ls_tolerance: f64,
    /// Most line-search iterations (default 100, Drake's value).
    pub ls_max_iterations: usize,
    /// Where the line search starts: `"newton"` (default) or `"alpha_max"` (Drake's order)
    /// ([`LineSearchStart`]).
    pub ls_start: LineSearchStart,
    /// Absolute cost-stagnation tolerance (J, default 1e-30, Drake's; not in the paper).
    pub cost_abs_tolerance: f64,
    /// Relative cost-stagnation tolerance (default 1e-15, Drake's; not in the paper). Stagnation
    /// with α > 0.5 ends the solve with status `AlmostSolved` (round-off floor, README §7).
    pub cost_rel_tolerance: f64,
    /// Start Newton from the previous step's velocity (default true, §IV); false starts from v*.
    pub warm_start: bool,
}

impl Default for SapSettings {
    fn default() -> Self {
        Self {
            scheme: Scheme::SymplecticEuler,
            theta: -1.0,
            theta_vq: -1.0,
            rel_tolerance: 1e-6,
            abs_tolerance: 1e-16,
            max_iterations: 100,
            beta: 1.0,
            sigma: 1e-3,
            rigid_tau_d_over_dt: 0.0,
            alpha_max: 1.5,
            ls_tolerance: 1e-8,
            ls_max_iterations: 100,
            ls_start: LineSearchStart::Newton,
            cost_abs_tolerance: 1e-30,
            cost_rel_tolerance: 1e-15,
            warm_start: true,
        }
    }
}

impl SapSettings {
    /// `(theta, theta_vq)` after resolving `scheme` (call on validated settings).
    pub fn thetas(&self) -> (f64, f64) {
        self.scheme.thetas().unwrap_or((self.theta, self.theta_vq))
    }

    /// Settings for a named scheme, everything else at its default.
    pub fn with_scheme(scheme: Scheme) -> Self {
        Self { scheme, ..Self::default() }
    }
}

impl api::Settings for SapSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        for (name, value, index) in [("theta", self.theta, 0), ("theta_vq", self.theta_vq, 1)] {
            match self.scheme.thetas() {
                Some(thetas) => {
                    let expected = if index == 0 { thetas.0 } else { thetas.1 };
                    if value != -1.0 && value != expected {
                        return Err(api::FieldError::new(
                            name,
                            format!(
                                "{value} conflicts with scheme {:?} ({name} = {expected}); use scheme = \"custom\" \
                                 or leave it at -1",
                                self.scheme
                            ),
                        ));
                    }
                }
                None => {
                    if !(0.0..=1.0).contains(&value) {
                        return Err(api::FieldError::new(
                            name,
                            format!("must be in [0, 1] with scheme = \"custom\", got {value}"),
                        ));
                    }
                }
            }
        }
        api::check_in("rel_tolerance", self.rel_tolerance, api::Bound::Closed(0.0), api::Bound::Open(1.0))?;
        api::check_non_negative("abs_tolerance", self.abs_tolerance)?;
        if self.rel_tolerance == 0.0 && self.abs_tolerance == 0.0 {
            return Err(api::FieldError::new("rel_tolerance", "rel_tolerance and abs_tolerance cannot both be 0"));
        }
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("beta", self.beta)?;
        api::check_positive("sigma", self.sigma)?;
        api::check_non_negative("rigid_tau_d_over_dt", self.rigid_tau_d_over_dt)?;
        api::check_in("alpha_max", self.alpha_max, api::Bound::Closed(1.0), api::Bound::None)?;
        api::check_in("ls_tolerance", self.ls_tolerance, api::Bound::Open(0.0), api::Bound::Open(1.0))?;
        api::check_budget("ls_max_iterations", self.ls_max_iterations)?;
        api::check_non_negative("cost_abs_tolerance", self.cost_abs_tolerance)?;
        api::check_non_negative("cost_rel_tolerance", self.cost_rel_tolerance)?;
        Ok(())
    }
}
