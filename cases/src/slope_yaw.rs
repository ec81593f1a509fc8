//! `slope_yaw`: the slope rotated about its normal — a rigid box on a plane with gravity tilted
//! towards a down-slope direction at angle `yaw` from the contact frame's first tangent. The
//! exact Coulomb cone is isotropic, so the box slides straight down-slope with the slope's
//! acceleration at every yaw; a polyhedral (pyramidal) cone is not, and this case measures how
//! much (the friction-anisotropy artefact of pyramid LCP solvers).
//!
//! # Scene
//!
//! The ground is the half-space `z ≤ 0` (normal `e_z`, so every contact frame has
//! `t1 = e_x`, `t2 = e_y`: `api::contact::tangent_basis`). A cube of edge `edge` and mass `mass`
//! rests on it (four bottom-corner contacts, gap 0). Gravity is `g (sin a ŝ − cos a e_z)` with
//! `ŝ = cos ψ e_x + sin ψ e_y`, `a = angle_deg`, `ψ = yaw_deg`: the slope of the `slope` case,
//! seen in the plane's frame and turned by `ψ` about its normal. Rigid contact, friction `mu`.
//!
//! # Analytic solution (exact cone)
//!
//! As `slope` (box): sticks iff `mu ≥ tan a`; else the centre accelerates along `ŝ` at
//! `g (sin a − mu cos a)`, with no cross-slope motion, whatever `ψ`.
//!
//! A `d`-facet pyramid (friction set: the regular `d`-gon inscribed in the Coulomb disk, facet
//! directions `2π m / d` from `t1`): when `ŝ` is mid-way between two facet directions
//! (`ψ = π/d + 2π m/d`), by symmetry the box slides straight down-slope and the friction is the
//! midpoint of the polygon's edge, `mu cos(π/d)` times the normal force, so the acceleration is
//! `g (sin a − mu cos(π/d) cos a)`: too large by `mu g cos a (1 − cos(π/d))` ([`pyramid_excess`];
//! 0.746 m/s² for 4 facets at the defaults, 0.049 for 16 facets at `ψ = 11.25°`). Along a facet
//! direction (`ψ = 2π m/d`) the pyramid is exact.
//!
//! # Oracle checks
//!
//! With `N` steps, `k0 = N / 2`, `T2 = (N − k0) dt` and the centre velocities `v_k`:
//!
//! * `acceleration` — `(ŝ · v_N − ŝ · v_k0) / T2` (m/s²); expected the exact cone's; tolerance as
//!   `slope`'s, `IMPULSE_REL_TOL g + 2 v_tol / T2` with `v_tol = CREEP_REL_TOL g dt`
//!   (1.37e-2 m/s² at the defaults).
//! * `lateral_acceleration` — the same along `e_z × ŝ` (cross-slope); expected 0; same tolerance.
//!
//! The exact-cone solvers pass both at every yaw; a 4-facet pyramid fails `acceleration` at the
//! default 45° by `pyramid_excess(4)` (solvers/src/lcp/README.md, "Anisotropy").

use crate::{check, default_struct, trace_is_whole, unmeasured};
use crate::{CREEP_REL_TOL, IMPULSE_REL_TOL};
use harness::model::{Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("slope_yaw.toml");
const SOURCE: &str = "cases/src/slope_yaw.toml";

/// Parameters of the `slope_yaw` case (defaults in `cases/src/slope_yaw.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlopeYawParams {
    /// Inclination (degrees, `[0, 45)`: the cube does not tip).
    pub angle_deg: f64,
    /// Down-slope direction from the contact frame's `t1` towards `t2` (degrees, finite).
    pub yaw_deg: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// Box mass (kg, > 0).
    pub mass: f64,
    /// Box edge (m, > 0).
    pub edge: f64,
    /// Gravity magnitude (m/s^2, > 0).
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for SlopeYawParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for SlopeYawParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(self.angle_deg.is_finite() && (0.0..45.0).contains(&self.angle_deg)) {
            return Err(harness::FieldError::new(
                "angle_deg",
                format!("must be in [0, 45) (finite), got {}", self.angle_deg),
            ));
        }
        check::finite("yaw_deg", self.yaw_deg)?;
        check::non_negative("mu", self.mu)?;
        check::positive("mass", self.mass)?;
        check::positive("edge", self.edge)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        Ok(())
    }
}

impl SlopeYawParams {
    /// Inclination (rad).
    pub fn angle(&self) -> f64 {
        self.angle_deg.to_radians()
    }
    /// Unit down-slope direction `ŝ = (cos ψ, sin ψ, 0)`.
    pub fn downslope(&self) -> Vector3<f64> {
        let y = self.yaw_deg.to_radians();
        Vector3::new(y.cos(), y.sin(), 0.0)
    }
    /// Unit cross-slope direction `e_z × ŝ`.
    pub fn cross_slope(&self) -> Vector3<f64> {
        Vector3::z().cross(&self.downslope())
    }
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// The exact cone's down-slope acceleration: `g (sin a − mu cos a)` when sliding, else 0.
    pub fn acceleration(&self) -> f64 {
        let a = self.angle();
        if self.mu < a.tan() {
            self.gravity * (a.sin() - self.mu * a.cos())
        } else {
            0.0
        }
    }
    /// How much faster a `d`-facet pyramid slides when the slope runs mid-way between two facet
    /// directions: `mu g cos a (1 − cos(π/d))` (m/s², module doc), while it slides
    /// (`mu cos(π/d) < tan a`).
    pub fn pyramid_excess(&self, facets: usize) -> f64 {
        let (a, c) = (self.angle(), (std::f64::consts::PI / facets as f64).cos());
        if self.mu * c < a.tan() {
            self.gravity * (a.sin() - self.mu * c * a.cos()) - self.acceleration()
        } else {
            0.0
        }
    }
    /// The acceleration tolerance, `IMPULSE_REL_TOL g + 2 CREEP_REL_TOL g dt / T2` (m/s²).
    pub fn tolerance(&self, dt: f64, steps: usize) -> f64 {
        let t_half = (steps - steps / 2) as f64 * dt;
        IMPULSE_REL_TOL * self.gravity + 2.0 * CREEP_REL_TOL * self.gravity * dt / t_half
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = Material::rigid(self.mu);
        let h = 0.5 * self.edge;
        let a = self.angle();
        let mut w = World::new();
        w.gravity = self.gravity * (a.sin() * self.downslope() - a.cos() * Vector3::z());
        w.bodies.push(RigidBody::new(
            "box",
            Shape::Box { half_extents: [h; 3] },
            self.mass,
            Vector3::new(0.0, 0.0, h),
            material,
        ));
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        w
    }

    /// Grades a trace (module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let tol = self.tolerance(dt, n);
        let expected = self.acceleration();
        if !trace_is_whole(scenario, trace) {
            return vec![unmeasured("acceleration", expected, tol), unmeasured("lateral_acceleration", 0.0, tol)];
        }
        let k0 = n / 2;
        let t_half = (n - k0) as f64 * dt;
        let lin = |v: &[f64]| Vector3::new(v[0], v[1], v[2]);
        let mean = |d: Vector3<f64>| (d.dot(&lin(&trace.v[n])) - d.dot(&lin(&trace.v[k0]))) / t_half;
        vec![
            OracleCheck::abs("acceleration", mean(self.downslope()), expected, tol),
            OracleCheck::abs("lateral_acceleration", mean(self.cross_slope()), 0.0, tol),
        ]
    }
}

/// The `slope_yaw` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct SlopeYaw;

impl CaseDef for SlopeYaw {
    type Params = SlopeYawParams;
    const NAME: &'static str = "slope_yaw";
    const SUMMARY: &'static str =
        "box sliding on a slope turned about its normal: friction isotropy (pyramidal-cone anisotropy)";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &SlopeYawParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: crate::ContactModel::Rigid.needs() })
    }
    fn grade(&self, p: &SlopeYawParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::check as get;
    use harness::{Case, StepMetrics};

    fn params(overrides: &[(&str, &str)]) -> harness::Params {
        crate::test_util::params(&SlopeYaw, overrides)
    }

    /// A symplectic-Euler trace of the centre with constant acceleration `down` along `ŝ` and
    /// `side` across.
    fn trace(p: &SlopeYawParams, sc: &Scenario, down: f64, side: f64) -> Trace {
        let acc = down * p.downslope() + side * p.cross_slope();
        let mut q = sc.world.positions();
        let mut tr = Trace { dt: sc.dt, completed: true, ..Default::default() };
        tr.q.push(q.clone());
        tr.v.push(vec![0.0; 6]);
        for k in 1..=sc.steps {
            let t = k as f64 * sc.dt;
            let v = acc * t;
            for a in 0..3 {
                q[a] += sc.dt * v[a];
            }
            tr.q.push(q.clone());
            tr.v.push(vec![v.x, v.y, v.z, 0.0, 0.0, 0.0]);
            tr.metrics.push(StepMetrics { t, ..Default::default() });
        }
        tr
    }

    /// The accelerations are the velocity change from state `n/2` to the last over that half:
    /// a run at rest for its first half and accelerating after reads the second half's rate.
    #[test]
    fn accelerations_are_read_over_the_second_half() {
        let prm = SlopeYaw.defaults();
        let p: SlopeYawParams = prm.decode("slope_yaw").unwrap();
        let sc = crate::test_util::build(&SlopeYaw, &prm).unwrap();
        let k0 = sc.steps / 2;
        let mut tr = trace(&p, &sc, 0.3, -0.2);
        let v0 = tr.v[k0].clone();
        for v in tr.v.iter_mut() {
            v.iter_mut().zip(&v0).for_each(|(x, x0)| *x -= x0);
        }
        tr.v[..=k0].iter_mut().for_each(|v| v.iter_mut().for_each(|x| *x = 0.0));
        let c = crate::test_util::oracle(&SlopeYaw, &prm, &sc, &tr);
        assert!((get(&c, "acceleration").measured - 0.3).abs() < 1e-12, "{c:?}");
        assert!((get(&c, "lateral_acceleration").measured + 0.2).abs() < 1e-12, "{c:?}");
    }

    #[test]
    fn defaults_parse_and_every_parameter_is_overridable() {
        let p: SlopeYawParams = SlopeYaw.defaults().decode("slope_yaw").unwrap();
        assert_eq!(p, SlopeYawParams::default());
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&SlopeYaw);
    }

    /// The narrow phase sees the four bottom corners with the normal `e_z`, whose tangent frame
    /// is `t1 = e_x` (the yaw's origin).
    #[test]
    fn corners_touch_with_frame_t1_along_x() {
        let sc = crate::test_util::build(&SlopeYaw, &SlopeYaw.defaults()).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), 4);
        for c in &cs.contacts {
            assert!((c.normal() - Vector3::z()).norm() < 1e-12 && c.gap.abs() < 1e-12);
            assert!((c.frame.column(1) - Vector3::x()).norm() < 1e-12, "t1 = {}", c.frame.column(1));
        }
    }

    /// The exact cone's motion passes at any yaw; the 4-facet pyramid's motion at 45° (too fast by
    /// `pyramid_excess(4)`) fails `acceleration`; a cross-slope drift fails `lateral_acceleration`.
    #[test]
    fn exact_motion_passes_and_the_pyramids_fails() {
        for yaw in ["0", "45", "11.25", "200"] {
            let prm = params(&[("yaw_deg", yaw)]);
            let p: SlopeYawParams = prm.decode("slope_yaw").unwrap();
            let sc = crate::test_util::build(&SlopeYaw, &prm).unwrap();
            let checks = crate::test_util::oracle(&SlopeYaw, &prm, &sc, &trace(&p, &sc, p.acceleration(), 0.0));
            assert!(checks.iter().all(|c| c.pass), "{yaw}: {checks:?}");
            let excess = p.pyramid_excess(4);
            let checks =
                crate::test_util::oracle(&SlopeYaw, &prm, &sc, &trace(&p, &sc, p.acceleration() + excess, 0.0));
            assert!(!get(&checks, "acceleration").pass && get(&checks, "lateral_acceleration").pass);
            let tol = p.tolerance(sc.dt, sc.steps);
            let checks = crate::test_util::oracle(&SlopeYaw, &prm, &sc, &trace(&p, &sc, p.acceleration(), 1.1 * tol));
            assert!(!get(&checks, "lateral_acceleration").pass);
        }
    }

    /// The derived excess `mu g cos a (1 − cos(π/d))`: 0.746 m/s² for 4 facets, 0.194 for 8,
    /// 0.049 for 16 at the defaults (the module doc's numbers), and 0 once the pyramid sticks.
    #[test]
    fn pyramid_excess_is_the_inscribed_polygons() {
        let p = SlopeYawParams::default();
        let base = p.mu * p.gravity * p.angle().cos();
        for (d, doc) in [(4, 0.746), (8, 0.194), (16, 0.049)] {
            let want = base * (1.0 - (std::f64::consts::PI / d as f64).cos());
            assert!((p.pyramid_excess(d) - want).abs() < 1e-12);
            assert!((p.pyramid_excess(d) - doc).abs() < 5e-3, "{d}: {}", p.pyramid_excess(d));
        }
        let sticking = SlopeYawParams { mu: 0.9, ..p };
        assert_eq!(sticking.pyramid_excess(4), 0.0);
    }

    /// The tolerance is its derivation (module doc): `IMPULSE_REL_TOL g + 2 CREEP_REL_TOL g dt /
    /// T2` with `T2 = (N − ⌊N/2⌋) dt`, `9.81e-3 + 3.92e-3 = 1.37e-2 m/s²` at the defaults
    /// (`N = 100`, `T2 = 0.5 s`) and `T2 = 51 dt` for `N = 101`. A motion off by 0.9 of it (down-
    /// and cross-slope, either sign) passes both checks, one off by 1.1 of it fails both: a looser
    /// or a tighter tolerance is caught either way.
    #[test]
    fn tolerance_is_its_derivation_and_bounds_the_verdict() {
        let (p, g) = (SlopeYawParams::default(), 9.81);
        let derived = 1e-3 * g + 2.0 * 1e-2 * g * 0.01 / 0.5;
        assert!((p.tolerance(0.01, 100) - derived).abs() < 1e-15, "{}", p.tolerance(0.01, 100));
        assert!((derived - 1.37e-2).abs() < 5e-5, "the module doc's number: {derived}");
        let odd = 1e-3 * g + 2.0 * 1e-2 * g * 0.02 / (51.0 * 0.02);
        assert!((p.tolerance(0.02, 101) - odd).abs() < 1e-15, "{}", p.tolerance(0.02, 101));
        let prm = SlopeYaw.defaults();
        let sc = crate::test_util::build(&SlopeYaw, &prm).unwrap();
        assert_eq!((sc.dt, sc.steps), (0.01, 100));
        for (factor, pass) in [(0.9, true), (-0.9, true), (1.1, false), (-1.1, false)] {
            let off = factor * derived;
            let checks = crate::test_util::oracle(&SlopeYaw, &prm, &sc, &trace(&p, &sc, p.acceleration() + off, off));
            for name in ["acceleration", "lateral_acceleration"] {
                let c = get(&checks, name);
                assert!((c.tolerance - derived).abs() <= 1e-15, "{c:?} vs {derived}");
                assert_eq!(c.pass, pass, "off by {factor} x tolerance: {c:?}");
            }
        }
    }

    #[test]
    fn bad_values_name_the_parameter() {
        for (k, v) in [("angle_deg", "45"), ("mu", "-1"), ("mass", "0"), ("dt", "0"), ("yaw_deg", "inf")] {
            let mut prm = SlopeYaw.defaults();
            let r = prm
                .set(k, v, "slope_yaw")
                .map_err(|e| e.to_string())
                .and_then(|_| prm.decode::<SlopeYawParams>("slope_yaw").map(|_| ()).map_err(|e| e.to_string()));
            assert!(r.unwrap_err().contains(k), "{k}");
        }
    }
}
