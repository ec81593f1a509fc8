//! [`DrumwrightSettings`]: every choice the paper leaves open or gets wrong (README §6 and §10),
//! with defaults and validation.

use serde::{Deserialize, Serialize};

/// Weight `ζ` of `½‖γ_n‖²` (Eq. 109).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZetaRule {
    /// the author's `ζ = 1/h` (§6.1).
    #[default]
    InvDt,
    /// `ζ = zeta`.
    Fixed,
}

/// Solve formulation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Form {
    /// sparse, `v+` and slacks as variables (README §10.3).
    #[default]
    Lifted,
    /// the paper's dense Appendix-A QCQP in `λ* = [γn; γr; γs]` (Eqs. 181–188).
    Reduced,
}

/// Normal/unilateral law.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormalLaw {
    /// the paper's QP (Eqs. 83–85): minimum-norm impulses above the spring law.
    #[default]
    MinNorm,
    /// the convex QP whose KKT conditions are the per-constraint max law, Eq. 68 (variant, README §10.3).
    Lcp,
}

/// How normal and friction impulses are solved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrictionSolve {
    /// in one cone program (the paper).
    #[default]
    Joint,
    /// the frictionless normal QP first, then the friction cone program with `γ_n` fixed (variant, README §10.4).
    TwoStage,
}

/// Frictionless (μ = 0) contacts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MuZero {
    /// a §5 unilateral row (Eqs. 83–85), no tangential impulse or slack.
    #[default]
    Unilateral,
    /// the §6 contact program taken literally at μ = 0 (`γ_t = 0`, the slack stays).
    Slack,
}

/// The `M̂ Ġ v` term of Eq. 53 for joints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GdotTerm {
    /// `Ġ v := 0`.
    #[default]
    Off,
    /// `M̂_b = (G_b M⁻¹ G_bᵀ)⁻¹` by Cholesky (fails on redundant rows, README P6).
    Exact,
    /// `M̂_b` by a pseudo-inverse.
    PseudoInverse,
}

/// Normal contact model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NormalModel {
    /// the case's own: rigid, or linear `k` with `B = k τ_d`.
    #[default]
    Case,
    /// Eqs. 121–123 as printed, sign-corrected: `φ = -d^{3/2}`, `K = E* √r`.
    HertzPaper,
    /// secant stiffness `E* √(r max(d, hertz_d_min))`, `φ = -d`.
    HertzSecant,
}

/// Row scaling of the spring laws.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowScaling {
    /// force rows `λ + (hK + B) G v ≥ …` (Eq. 84).
    #[default]
    Paper,
    /// divided by `h(hK + B)`: `G v + r γ ≥ v̂`.
    Velocity,
}

/// Options of Drumwright's constraint solver. Units SI; impulses in N s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrumwrightSettings {
    /// Weight `ζ` of `½‖γ_n‖²` in the objective (Eq. 109): `"inv_dt"` (the author's `ζ = 1/h`,
    /// §6.1) or `"fixed"` (`ζ = zeta`) (default `"inv_dt"`).
    pub zeta_rule: ZetaRule,
    /// `ζ` when `zeta_rule = "fixed"` (> 0; default 100 = 1/h at h = 10 ms).
    pub zeta: f64,
    /// Tangential damping as `h B_r` (kg; `B_r = B_s`, Eqs. 139–140 with `K_r = 0`). The paper uses
    /// `B_r = 10⁶/h`, i.e. 1e6; that value makes clarabel report false infeasibility (README P4).
    /// Default 100: stiction creep `≈ v_free m̂_t / (h B_r)` stays below 1 % of `g h` for bodies of
    /// up to about 1 kg per contact (README §10.4).
    pub tangential_damping_dt: f64,
    /// Solve formulation: `"lifted"` (sparse, `v+` and slacks as variables, README §10.3) or
    /// `"reduced"` (the paper's dense Appendix-A QCQP in `λ* = [γn; γr; γs]`, Eqs. 181–188)
    /// (default `"lifted"`).
    pub form: Form,
    /// Normal/unilateral law: `"min_norm"` (the paper's QP, Eqs. 83–85: minimum-norm impulses
    /// above the spring law) or `"lcp"` (variant, README §10.3: the convex QP whose KKT conditions are
    /// the per-constraint max law, Eq. 68, exactly) (default `"min_norm"`).
    pub normal_law: NormalLaw,
    /// `"joint"` (the paper: normal and friction in one cone program) or `"two_stage"` (variant,
    /// README §10.4: the frictionless normal QP first, then the friction cone program with `γ_n`
    /// fixed) (default `"joint"`).
    pub friction_solve: FrictionSolve,
    /// Frictionless (μ = 0) contacts: `"unilateral"` (a §5 unilateral row, Eqs. 83–85: no
    /// tangential impulse and no tangential slack, which is how the paper models its frictionless
    /// Winkler elements, §5.5) or `"slack"` (the §6 contact program taken literally at μ = 0:
    /// `γ_t = 0` but the slack `β = c_t J_t v⁺` stays in the objective, so the QP raises normal
    /// impulses to slow tangential motion — measured: hopping on `winkler_cube`, normal inflation
    /// on `ramp_feet` at μ = 0) (default `"unilateral"`).
    pub mu_zero: MuZero,
    /// The `M̂ Ġ v` term of Eq. 53 for joints: `"off"` (`Ġ v := 0`), `"exact"`
    /// (`M̂_b = (G_b M⁻¹ G_bᵀ)⁻¹` by Cholesky; fails on redundant rows, README P6) or
    /// `"pseudo_inverse"` (default `"off"`; contacts never carry it: the harness gives no `Ġ` for
    /// contacts).
    pub gdot_term: GdotTerm,
    /// Normal contact model: `"case"` (the case's own: rigid, or linear `k` with `B = k τ_d`),
    /// `"hertz_paper"` (Eqs. 121–123 as printed but sign-corrected: `φ = -d^{3/2}`,
    /// `K = E* √r`, `G` the unit-normal Jacobian) or `"hertz_secant"` (secant stiffness
    /// `E* √(r max(d, hertz_d_min))`, `φ = -d`) (default `"case"`).
    pub normal_model: NormalModel,
    /// Effective modulus `E*` of the Hertz models (Pa; default 1e11, the paper's steel).
    pub hertz_modulus: f64,
    /// Foot radius `r` of the Hertz models (m; default 0.01, the paper's feet).
    pub hertz_radius: f64,
    /// Floor of the penetration in `hertz_secant` (m; default 1e-9).
    pub hertz_d_min: f64,
    /// Normal damping `B_n` of the Hertz models (N s/m; default 1, the paper's "little damping").
    pub hertz_damping: f64,
    /// Include contacts within the detection margin with their signed gap (true) or only touching
    /// or penetrating ones, as the paper does (false: "disjoint ⇒ φ = 0", README P9)
    /// (default true, so that rigid contact does not fall one step into the ground).
    pub speculative: bool,
    /// Row scaling of the spring laws: `"paper"` (force rows `λ + (hK + B) G v ≥ …`, Eq. 84 / README
    /// §10.3) or `"velocity"` (divided by `h(hK + B)`: `G v + r γ ≥ v̂`) (default `"paper"`;
    /// rigid rows always use `"velocity"`).
    pub row_scaling: RowScaling,
    /// clarabel: most interior-point iterations (default 200, clarabel's default).
    pub max_iter: u32,
    /// clarabel: `tol_gap_abs = tol_gap_rel = tol_feas` (default 1e-8, clarabel's default).
    pub tolerance: f64,
    /// clarabel: Ruiz equilibration (default true).
    pub equilibrate: bool,
}

impl Default for DrumwrightSettings {
    fn default() -> Self {
        Self {
            zeta_rule: ZetaRule::InvDt,
            zeta: 100.0,
            tangential_damping_dt: 100.0,
            form: Form::Lifted,
            normal_law: NormalLaw::MinNorm,
            friction_solve: FrictionSolve::Joint,
            mu_zero: MuZero::Unilateral,
            gdot_term: GdotTerm::Off,
            normal_model: NormalModel::Case,
            hertz_modulus: 1e11,
            hertz_radius: 0.01,
            hertz_d_min: 1e-9,
            hertz_damping: 1.0,
            speculative: true,
            row_scaling: RowScaling::Paper,
            max_iter: 200,
            tolerance: 1e-8,
            equilibrate: true,
        }
    }
}

impl DrumwrightSettings {
    /// The paper's parameter set as far as it states one (§6.4): `ζ = 1/h`, `B_r = 10⁶/h`,
    /// joint solve, Hertz feet with `E* = 1e11`, `r = 0.01`, `B_n = 1`, no speculative contacts.
    pub fn paper() -> Self {
        Self {
            tangential_damping_dt: 1e6,
            normal_model: NormalModel::HertzPaper,
            speculative: false,
            ..Self::default()
        }
    }

    /// The clarabel settings of its cone programs.
    pub fn clarabel(&self) -> toolkit::cone_program::ClarabelSettings {
        toolkit::cone_program::ClarabelSettings {
            max_iter: self.max_iter,
            tolerance: self.tolerance,
            equilibrate: self.equilibrate,
        }
    }

    /// `ζ` at step `dt`.
    pub fn zeta_at(&self, dt: f64) -> f64 {
        if self.zeta_rule == ZetaRule::Fixed {
            self.zeta
        } else {
            1.0 / dt
        }
    }
}

impl api::Settings for DrumwrightSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_positive("zeta", self.zeta)?;
        api::check_non_negative("tangential_damping_dt", self.tangential_damping_dt)?;
        api::check_positive("hertz_modulus", self.hertz_modulus)?;
        api::check_positive("hertz_radius", self.hertz_radius)?;
        api::check_positive("hertz_d_min", self.hertz_d_min)?;
        api::check_non_negative("hertz_damping", self.hertz_damping)?;
        api::check_budget("max_iter", self.max_iter as usize)?;
        api::check_positive("tolerance", self.tolerance)?;
        if self.form == Form::Reduced && self.normal_law == NormalLaw::Lcp {
            return Err(api::FieldError::new("normal_law", "\"lcp\" is implemented for form = \"lifted\" only"));
        }
        Ok(())
    }
}
