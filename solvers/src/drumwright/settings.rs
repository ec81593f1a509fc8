//! [`DrumwrightSettings`]: every choice the paper leaves open or gets wrong (README §6 and §10),
//! with defaults and validation.

use serde::{Deserialize, Serialize};

/// Allowed names of the string options.
pub(crate) const ZETA_RULES: [&str; 2] = ["inv_dt", "fixed"];
pub(crate) const FORMS: [&str; 2] = ["lifted", "reduced"];
pub(crate) const NORMAL_LAWS: [&str; 2] = ["min_norm", "lcp"];
pub(crate) const FRICTION_SOLVES: [&str; 2] = ["joint", "two_stage"];
pub(crate) const GDOT_TERMS: [&str; 3] = ["off", "exact", "pseudo_inverse"];
pub(crate) const NORMAL_MODELS: [&str; 3] = ["case", "hertz_paper", "hertz_secant"];
pub(crate) const ROW_SCALINGS: [&str; 2] = ["paper", "velocity"];
pub(crate) const MU_ZEROS: [&str; 2] = ["unilateral", "slack"];

/// Options of Drumwright's constraint solver. Units SI; impulses in N s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DrumwrightSettings {
    /// Weight `ζ` of `½‖γ_n‖²` in the objective (Eq. 109): `"inv_dt"` (the author's `ζ = 1/h`,
    /// §6.1) or `"fixed"` (`ζ = zeta`) (default `"inv_dt"`).
    pub zeta_rule: String,
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
    pub form: String,
    /// Normal/unilateral law: `"min_norm"` (the paper's QP, Eqs. 83–85: minimum-norm impulses
    /// above the spring law) or `"lcp"` (variant, README §10.3: the convex QP whose KKT conditions are
    /// the per-constraint max law, Eq. 68, exactly) (default `"min_norm"`).
    pub normal_law: String,
    /// `"joint"` (the paper: normal and friction in one cone program) or `"two_stage"` (variant,
    /// README §10.4: the frictionless normal QP first, then the friction cone program with `γ_n`
    /// fixed) (default `"joint"`).
    pub friction_solve: String,
    /// Frictionless (μ = 0) contacts: `"unilateral"` (a §5 unilateral row, Eqs. 83–85: no
    /// tangential impulse and no tangential slack, which is how the paper models its frictionless
    /// Winkler elements, §5.5) or `"slack"` (the §6 contact program taken literally at μ = 0:
    /// `γ_t = 0` but the slack `β = c_t J_t v⁺` stays in the objective, so the QP raises normal
    /// impulses to slow tangential motion — measured: hopping on `winkler_cube`, normal inflation
    /// on `ramp_feet` at μ = 0) (default `"unilateral"`).
    pub mu_zero: String,
    /// The `M̂ Ġ v` term of Eq. 53 for joints: `"off"` (`Ġ v := 0`), `"exact"`
    /// (`M̂_b = (G_b M⁻¹ G_bᵀ)⁻¹` by Cholesky; fails on redundant rows, README P6) or
    /// `"pseudo_inverse"` (default `"off"`; contacts never carry it: the harness gives no `Ġ` for
    /// contacts).
    pub gdot_term: String,
    /// Normal contact model: `"case"` (the case's own: rigid, or linear `k` with `B = k τ_d`),
    /// `"hertz_paper"` (Eqs. 121–123 as printed but sign-corrected: `φ = -d^{3/2}`,
    /// `K = E* √r`, `G` the unit-normal Jacobian) or `"hertz_secant"` (secant stiffness
    /// `E* √(r max(d, hertz_d_min))`, `φ = -d`) (default `"case"`).
    pub normal_model: String,
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
    pub row_scaling: String,
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
            zeta_rule: "inv_dt".into(),
            zeta: 100.0,
            tangential_damping_dt: 100.0,
            form: "lifted".into(),
            normal_law: "min_norm".into(),
            friction_solve: "joint".into(),
            mu_zero: "unilateral".into(),
            gdot_term: "off".into(),
            normal_model: "case".into(),
            hertz_modulus: 1e11,
            hertz_radius: 0.01,
            hertz_d_min: 1e-9,
            hertz_damping: 1.0,
            speculative: true,
            row_scaling: "paper".into(),
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
        Self { tangential_damping_dt: 1e6, normal_model: "hertz_paper".into(), speculative: false, ..Self::default() }
    }

    /// `ζ` at step `dt`.
    pub fn zeta_at(&self, dt: f64) -> f64 {
        if self.zeta_rule == "fixed" {
            self.zeta
        } else {
            1.0 / dt
        }
    }
}

fn one_of(field: &str, v: &str, allowed: &[&str]) -> Result<(), String> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(format!("{field}: must be one of {}, got '{v}'", allowed.join(", ")))
    }
}

fn positive(field: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(format!("{field}: must be finite and > 0, got {v}"))
    }
}

impl harness::Settings for DrumwrightSettings {
    fn validate(&self) -> Result<(), String> {
        one_of("zeta_rule", &self.zeta_rule, &ZETA_RULES)?;
        positive("zeta", self.zeta)?;
        if !(self.tangential_damping_dt.is_finite() && self.tangential_damping_dt >= 0.0) {
            return Err(format!("tangential_damping_dt: must be finite and >= 0, got {}", self.tangential_damping_dt));
        }
        one_of("form", &self.form, &FORMS)?;
        one_of("normal_law", &self.normal_law, &NORMAL_LAWS)?;
        one_of("friction_solve", &self.friction_solve, &FRICTION_SOLVES)?;
        one_of("mu_zero", &self.mu_zero, &MU_ZEROS)?;
        one_of("gdot_term", &self.gdot_term, &GDOT_TERMS)?;
        one_of("normal_model", &self.normal_model, &NORMAL_MODELS)?;
        positive("hertz_modulus", self.hertz_modulus)?;
        positive("hertz_radius", self.hertz_radius)?;
        positive("hertz_d_min", self.hertz_d_min)?;
        if !(self.hertz_damping.is_finite() && self.hertz_damping >= 0.0) {
            return Err(format!("hertz_damping: must be finite and >= 0, got {}", self.hertz_damping));
        }
        one_of("row_scaling", &self.row_scaling, &ROW_SCALINGS)?;
        if self.max_iter < 1 {
            return Err(format!("max_iter: must be >= 1, got {}", self.max_iter));
        }
        positive("tolerance", self.tolerance)?;
        if self.form == "reduced" && self.normal_law == "lcp" {
            return Err("normal_law: \"lcp\" is implemented for form = \"lifted\" only".into());
        }
        Ok(())
    }
}
