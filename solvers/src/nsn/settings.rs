//! [`NsnSettings`]: options of the non-smooth Newton solver, defaults (§8, §10, Table 2) and validation.

use super::ncp::Ncp;
use serde::{Deserialize, Serialize};

/// Complementarity preconditioner `r` (Macklin §7, Eq. 66).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RMode {
    /// `r = 1` for every row.
    One,
    /// `r_n = h²`, `r_f = h` (constant global).
    H2,
    /// `r_n = h² [J M⁻¹ Jᵀ]_ii`, `r_f = h · mean_k [J_fk M⁻¹ J_fkᵀ]` (Eq. 66; the paper's choice).
    EffectiveMass,
}

impl RMode {
    /// Accepted names.
    pub const NAMES: [&'static str; 3] = ["effective_mass", "h2", "one"];
    /// Parses a name.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "effective_mass" => Some(Self::EffectiveMass),
            "h2" => Some(Self::H2),
            "one" => Some(Self::One),
            _ => None,
        }
    }
}

/// Linear solver of the Schur-complement system (Eq. 59).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearSolver {
    /// Jacobi-preconditioned conjugate residual (§8.2; default).
    Pcr,
    /// Jacobi-preconditioned conjugate gradients.
    Pcg,
    /// Jacobi iteration on the assembled Schur matrix.
    Jacobi,
    /// Gauss–Seidel sweeps on the assembled Schur matrix.
    GaussSeidel,
    /// Cholesky of the assembled Schur matrix (faer, through `kernels::cholesky`).
    Direct,
}

impl LinearSolver {
    /// Accepted names.
    pub const NAMES: [&'static str; 5] = ["pcr", "pcg", "jacobi", "gauss_seidel", "direct"];
    /// Parses a name.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "pcr" => Some(Self::Pcr),
            "pcg" => Some(Self::Pcg),
            "jacobi" => Some(Self::Jacobi),
            "gauss_seidel" => Some(Self::GaussSeidel),
            "direct" => Some(Self::Direct),
            _ => None,
        }
    }
}

/// Options of `nsn`. Every field has a default (the paper's, §8, §10, Table 2, unless stated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NsnSettings {
    /// Most Newton iterations per step (default 40; the paper uses fixed budgets of 4–8, which
    /// do not reach the harness's accuracy levels with the damping 0.75).
    pub max_newton_iterations: usize,
    /// Stop when the scaled residuals (README §Stopping) are all below it (dimensionless;
    /// default 1e-9; 0 runs the full budget, as the paper does).
    pub tolerance: f64,
    /// NCP function: `"fb"` (Fischer–Burmeister, default) or `"min"`.
    pub ncp: String,
    /// Complementarity preconditioner: `"effective_mass"` (default), `"h2"` or `"one"`.
    pub r_mode: String,
    /// Linear solver: `"pcr"` (default), `"pcg"`, `"jacobi"`, `"gauss_seidel"`, `"direct"`.
    pub linear_solver: String,
    /// Iterations of the linear solver per Newton iteration (default 40, Figs. 16–18).
    pub linear_iterations: usize,
    /// Relative residual at which the Krylov solvers stop early (default 1e-12; 0 = fixed budget).
    pub linear_tolerance: f64,
    /// Damping `t` of the Newton update `x ← x + t Δx` (Eqs. 61–62; default 0.75, in (0, 1]).
    pub damping: f64,
    /// Identity shift `ε` of the Schur matrix (§8.4; default 1e-6, in 1/kg, >= 0).
    pub epsilon: f64,
    /// Diagonal geometric stiffness on deformable node DOFs (§8.3, Eqs. 71–74; default true).
    pub geometric_stiffness: bool,
    /// `"nonlinear"` (default): contacts re-evaluated at every Newton iterate
    /// (`problem.contacts_at(q)`); `"linearized"`: fixed Jacobians and `C_n = φ0 + h J_n u`
    /// (the velocity-level NCP, comparable with velocity-level solvers).
    pub mode: String,
    /// Friction rows: `"projection"` (default; `λ_f = proj(λ_f − v_t/r_f)` linearised with `μλ_n`
    /// frozen, a stick row `J_f u` or a magnitude row plus a perpendicular row with the
    /// paper's `W` — README "Friction rows") or `"fixed_point"` (the paper's FB/min `W` of
    /// Eqs. 103–105 strictly inside the cone, projection rows on and outside it).
    pub friction: String,
    /// How the contacts are evaluated at a Newton iterate in the nonlinear mode: `"carried"`
    /// (the paper's Eq. 9: normal fixed at the start of the step, contact points fixed
    /// in the bodies, `C_n(q)` smooth) or `"redetect"` (default; the closest features recomputed
    /// at every iterate by `geometry::reevaluate`; box–box manifolds jump between iterates —
    /// README "Redundant contacts").
    pub contacts: String,
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
            ncp: "fb".into(),
            r_mode: "effective_mass".into(),
            linear_solver: "pcr".into(),
            linear_iterations: 40,
            linear_tolerance: 1e-12,
            damping: 0.75,
            epsilon: 1e-6,
            geometric_stiffness: true,
            mode: "nonlinear".into(),
            friction: "projection".into(),
            contacts: "redetect".into(),
            fb_smoothing: 0.0,
        }
    }
}

impl harness::Settings for NsnSettings {
    fn validate(&self) -> Result<(), String> {
        if self.max_newton_iterations < 1 {
            return Err(format!("max_newton_iterations: must be >= 1, got {}", self.max_newton_iterations));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(format!("tolerance: must be finite and >= 0, got {}", self.tolerance));
        }
        if Ncp::from_name(&self.ncp).is_none() {
            return Err(format!("ncp: must be one of {}, got '{}'", Ncp::NAMES.join(", "), self.ncp));
        }
        if RMode::from_name(&self.r_mode).is_none() {
            return Err(format!("r_mode: must be one of {}, got '{}'", RMode::NAMES.join(", "), self.r_mode));
        }
        if LinearSolver::from_name(&self.linear_solver).is_none() {
            return Err(format!(
                "linear_solver: must be one of {}, got '{}'",
                LinearSolver::NAMES.join(", "),
                self.linear_solver
            ));
        }
        if self.linear_iterations < 1 {
            return Err(format!("linear_iterations: must be >= 1, got {}", self.linear_iterations));
        }
        if !(self.linear_tolerance.is_finite() && self.linear_tolerance >= 0.0) {
            return Err(format!("linear_tolerance: must be finite and >= 0, got {}", self.linear_tolerance));
        }
        if !(self.damping > 0.0 && self.damping <= 1.0) {
            return Err(format!("damping: must be in (0, 1], got {}", self.damping));
        }
        if !(self.epsilon.is_finite() && self.epsilon >= 0.0) {
            return Err(format!("epsilon: must be finite and >= 0, got {}", self.epsilon));
        }
        if self.mode != "nonlinear" && self.mode != "linearized" {
            return Err(format!("mode: must be one of nonlinear, linearized, got '{}'", self.mode));
        }
        if self.friction != "projection" && self.friction != "fixed_point" {
            return Err(format!("friction: must be one of projection, fixed_point, got '{}'", self.friction));
        }
        if self.contacts != "carried" && self.contacts != "redetect" {
            return Err(format!("contacts: must be one of carried, redetect, got '{}'", self.contacts));
        }
        if !(self.fb_smoothing.is_finite() && self.fb_smoothing >= 0.0) {
            return Err(format!("fb_smoothing: must be finite and >= 0, got {}", self.fb_smoothing));
        }
        Ok(())
    }
}
