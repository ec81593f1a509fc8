//! [`NsnSettings`]: options of the non-smooth Newton solver, defaults (§8, §10, Table 2) and validation.

use super::ncp::Ncp;
use serde::{Deserialize, Serialize};

/// Complementarity preconditioner `r` (Macklin §7, Eq. 66).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RMode {
    /// `r = 1` for every row.
    #[serde(rename = "one")]
    One,
    /// `r_n = h²`, `r_f = h` (constant global).
    #[serde(rename = "h2")]
    H2,
    /// `r_n = h² [J M⁻¹ Jᵀ]_ii`, `r_f = h · mean_k [J_fk M⁻¹ J_fkᵀ]` (Eq. 66; the paper's choice).
    #[default]
    #[serde(rename = "effective_mass")]
    EffectiveMass,
}

/// Linear solver of the Schur-complement system (Eq. 59).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum LinearSolver {
    /// Jacobi-preconditioned conjugate residual (§8.2; default).
    #[default]
    #[serde(rename = "pcr")]
    Pcr,
    /// Jacobi-preconditioned conjugate gradients.
    #[serde(rename = "pcg")]
    Pcg,
    /// Jacobi iteration on the assembled Schur matrix.
    #[serde(rename = "jacobi")]
    Jacobi,
    /// Gauss–Seidel sweeps on the assembled Schur matrix.
    #[serde(rename = "gauss_seidel")]
    GaussSeidel,
    /// Cholesky of the assembled Schur matrix (faer, through `kernels::cholesky`).
    #[serde(rename = "direct")]
    Direct,
}

/// Whether contacts follow the Newton iterates (`mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Contacts re-evaluated at every Newton iterate (the paper's position-level method).
    #[default]
    Nonlinear,
    /// Fixed Jacobians and `C_n = φ0 + h J_n u` (the velocity-level NCP).
    Linearized,
}

/// The friction rows (`friction`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Friction {
    /// Projection rows everywhere (README "Friction rows").
    #[default]
    Projection,
    /// The paper's FB/min `W` (Eqs. 103–105) strictly inside the cone, projection rows elsewhere.
    FixedPoint,
}

/// How contacts are evaluated at a Newton iterate in the nonlinear mode (`contacts`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContactEval {
    /// The paper's Eq. 9: normal fixed at the start of the step, points fixed in the bodies.
    Carried,
    /// Closest features recomputed at every iterate.
    #[default]
    Redetect,
}

/// Options of `nsn`. Every field has a default (the paper's, §8, §10, Table 2, unless stated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsnSettings {
    /// Most Newton iterations per step (default 40; the paper uses fixed budgets of 4–8, which
    /// do not reach the harness's accuracy levels with the damping 0.75).
    pub max_newton_iterations: usize,
    /// Stop when the scaled residuals (README §Stopping) are all below it (dimensionless;
    /// default 1e-9; 0 runs the full budget, as the paper does). On a problem in Delassus form
    /// it bounds the natural-map error normalised as Siconos's `fc3d_compute_error`,
    /// `‖F_nat(r, u)‖ / max(‖q‖, ‖r‖, ‖u‖)` (README "Delassus form").
    pub tolerance: f64,
    /// NCP function: `"fb"` (Fischer–Burmeister, default) or `"min"`.
    pub ncp: Ncp,
    /// Complementarity preconditioner: `"effective_mass"` (default), `"h2"` or `"one"`.
    pub r_mode: RMode,
    /// Linear solver: `"pcr"` (default), `"pcg"`, `"jacobi"`, `"gauss_seidel"`, `"direct"`.
    pub linear_solver: LinearSolver,
    /// Iterations of the linear solver per Newton iteration (default 40, Figs. 16–18).
    pub linear_iterations: usize,
    /// Relative residual at which the Krylov solvers stop early (default 1e-12; 0 = fixed budget).
    pub linear_tolerance: f64,
    /// Damping `t` of the Newton update `x ← x + t Δx` (Eqs. 61–62; default 0.75, in (0, 1]).
    pub damping: f64,
    /// Identity shift `ε` of the Schur matrix (§8.4; default 1e-6, in 1/kg, >= 0). On a problem
    /// in Delassus form it is relative: the shift is `ε` times the mean diagonal of `W` (README
    /// "Delassus form").
    pub epsilon: f64,
    /// Diagonal geometric stiffness on deformable node DOFs (§8.3, Eqs. 71–74; default true).
    pub geometric_stiffness: bool,
    /// `"nonlinear"` (default): contacts re-evaluated at every Newton iterate
    /// (`problem.contacts_at(q)`); `"linearized"`: fixed Jacobians and `C_n = φ0 + h J_n u`
    /// (the velocity-level NCP, comparable with velocity-level solvers).
    pub mode: Mode,
    /// Friction rows: `"projection"` (default; `λ_f = proj(λ_f − v_t/r_f)` linearised with `μλ_n`
    /// frozen, a stick row `J_f u` or a magnitude row plus a perpendicular row with the
    /// paper's `W` — README "Friction rows") or `"fixed_point"` (the paper's FB/min `W` of
    /// Eqs. 103–105 strictly inside the cone, projection rows on and outside it).
    pub friction: Friction,
    /// How the contacts are evaluated at a Newton iterate in the nonlinear mode: `"carried"`
    /// (the paper's Eq. 9: normal fixed at the start of the step, contact points fixed
    /// in the bodies, `C_n(q)` smooth) or `"redetect"` (default; the closest features recomputed
    /// at every iterate by `geometry::reevaluate`; box–box manifolds jump between iterates —
    /// README "Redundant contacts").
    pub contacts: ContactEval,
    /// Jacobian smoothing of the Fischer–Burmeister rows (a deviation, README "Redundant
    /// contacts"): the Newton matrix uses the derivatives of `C + rλ − sqrt(C² + r²λ² + 2μ²)` with
    /// `μ = fb_smoothing · res · h s_v` (`res` the previous iterate's largest scaled residual, 1 at
    /// the first), the residual stays the exact FB value (Eq. 93). Dimensionless, >= 0; default 0,
    /// the paper's generalized Jacobian (Eqs. 26–27, 94–95); 0.1 makes the perturbed redundant
    /// box stack converge (README "Redundant contacts", where the open slope issue is recorded).
    pub fb_smoothing: f64,
}

impl Default for NsnSettings {
    fn default() -> Self {
        Self {
            max_newton_iterations: 40,
            tolerance: 1e-9,
            ncp: Ncp::FischerBurmeister,
            r_mode: RMode::EffectiveMass,
            linear_solver: LinearSolver::Pcr,
            linear_iterations: 40,
            linear_tolerance: 1e-12,
            damping: 0.75,
            epsilon: 1e-6,
            geometric_stiffness: true,
            mode: Mode::Nonlinear,
            friction: Friction::Projection,
            contacts: ContactEval::Redetect,
            fb_smoothing: 0.0,
        }
    }
}

impl api::Settings for NsnSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_newton_iterations", self.max_newton_iterations)?;
        api::check_non_negative("tolerance", self.tolerance)?;
        api::check_budget("linear_iterations", self.linear_iterations)?;
        api::check_non_negative("linear_tolerance", self.linear_tolerance)?;
        api::check_in("damping", self.damping, api::Bound::Open(0.0), api::Bound::Closed(1.0))?;
        api::check_non_negative("epsilon", self.epsilon)?;
        api::check_non_negative("fb_smoothing", self.fb_smoothing)?;
        Ok(())
    }
}
