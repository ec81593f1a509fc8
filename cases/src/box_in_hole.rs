//! `box_in_hole`: a box peg resting in a square hole made of static boxes — the dense,
//! over-specified contact of Lee et al.'s bolt–nut scene (§VII-A, Figs. 6–7), with the
//! peg touching (within the detection margin) a floor and four walls at once.
//!
//! # Scene
//!
//! ```text
//!        +------+               top view:   +---+-----------+---+
//!    |   | peg  |   |                       |   | clearance |   |
//!    |###|      |###|  walls: static boxes  |   |  +-----+  |   |
//!    |###|      |###|  of height hole_depth |   |  | peg |  |   |
//!    |###+------+###|                       |   |  +-----+  |   |
//!    ================  floor: a static slab +---+-----------+---+
//! ```
//!
//! * Floor: a static box of thickness `wall_thickness` with its top face at `z = 0`. Walls: four
//!   static boxes of height `hole_depth` and thickness `wall_thickness` standing on it, their inner
//!   faces `clearance` from the peg's sides (inner half width `a = peg_width/2 + clearance`).
//! * Peg: a box `peg_width × peg_width × peg_height`, mass `peg_mass`, all six DOFs, at rest with its
//!   bottom `drop_height` above the floor, centred in the hole. It lands after
//!   `t_land = sqrt(2 drop_height / g)` at `v_land = sqrt(2 g drop_height)`; the stepper's per-contact margin (`margin` plus
//!   `dt` times the approach speed, harness `geometry::detect_for_step`) catches the floor with a
//!   speculative contact.
//! * Contacts: the floor gives 4 (the face manifold), each wall 4 with gap `clearance`: 20 contacts
//!   for 6 DOFs, a rank-deficient Delassus operator like the paper's bolt–nut (where PGS stalls).
//!   The walls carry nothing at rest (their gap is positive), so the floor impulses are determined
//!   in sum (the weight) but not in distribution.
//!
//! # Oracle checks
//!
//! Graded from `t_rest = t_land + 2 dt` (the landing step and the next have ended; 0 when
//! `drop_height = 0`). The load factor (crate doc) of the floor contact, counted as one contact
//! carrying the weight (as `heavy_stack` does for box faces), is `L = m · (1/m) = 1`; a corner can
//! carry at most the whole weight with Delassus entry `1/m + h_y²/I_x + h_x²/I_y` (`h` the half
//! widths), which for the peg is `L_c = 1 + m (h_y²/I_x + h_x²/I_y)` (4 for a cube); `L_c` is used.
//!
//! * `weight_ratio` — mean `StepMetrics.normal_impulse_total` over the steps ending after
//!   `max(t_rest, T/2)`, over `m g dt`; expected 1; tolerance `IMPULSE_REL_TOL`. Any wall impulse
//!   (squeezing, or wall friction carrying weight) shows here: at rest the walls' gap is positive,
//!   so the exact impulses there are 0.
//! * `max_penetration` — largest `StepMetrics.penetration_max` over the steps ending after
//!   `t_rest` (m); expected 0; tolerance `PENETRATION_REL_TOL g dt² L_c`.
//! * `rest_speed` — largest speed of the peg's centre over the states after `max(t_rest, T/2)`
//!   (m/s); expected 0; tolerance `CREEP_REL_TOL g dt` (crate doc).
//! * `contained` — 1 if at every state the peg's centre is within `clearance + tol` of the hole's
//!   axis along x and y and its height is at least `peg_height/2 − tol` (`tol` the penetration
//!   tolerance): the walls and floor hold it; else 0; expected 1; tolerance 0.

use crate::resting::{centre, first_step_from, max_penetration, max_speed, mean_normal_impulse};
use crate::{check, default_struct, trace_is_whole, unmeasured};
use crate::{CREEP_REL_TOL, IMPULSE_REL_TOL, PENETRATION_REL_TOL};
use harness::model::{Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{Capabilities, CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("box_in_hole.toml");
const SOURCE: &str = "cases/src/box_in_hole.toml";

/// Parameters of the `box_in_hole` case (defaults in `cases/src/box_in_hole.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoxInHoleParams {
    /// Edge of the peg's square cross-section (m, > 0).
    pub peg_width: f64,
    /// Height of the peg (m, > 0).
    pub peg_height: f64,
    /// Mass of the peg (kg, > 0).
    pub peg_mass: f64,
    /// Gap between the peg and each wall (m, >= 0, < `margin`).
    pub clearance: f64,
    /// Wall height (m, > 0).
    pub hole_depth: f64,
    /// Wall and floor thickness (m, > 0).
    pub wall_thickness: f64,
    /// Initial gap between the peg and the floor (m, >= 0).
    pub drop_height: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin floor (m, > 0); the stepper adds `dt` times each contact's
    /// predicted approach speed.
    pub margin: f64,
}

impl Default for BoxInHoleParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for BoxInHoleParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        check::positive("peg_width", self.peg_width)?;
        check::positive("peg_height", self.peg_height)?;
        check::positive("peg_mass", self.peg_mass)?;
        check::non_negative("clearance", self.clearance)?;
        check::positive("hole_depth", self.hole_depth)?;
        check::positive("wall_thickness", self.wall_thickness)?;
        check::non_negative("drop_height", self.drop_height)?;
        check::non_negative("mu", self.mu)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        if self.clearance >= self.margin {
            return Err(harness::FieldError::new(
                "clearance",
                format!(
                    "must be below margin ({}) so that the walls' contacts are in the problem, got {}",
                    self.margin, self.clearance
                ),
            ));
        }
        if self.drop_height >= self.hole_depth {
            return Err(harness::FieldError::new(
                "drop_height",
                format!(
                    "must be below hole_depth ({}) so that the peg starts in the hole, got {}",
                    self.hole_depth, self.drop_height
                ),
            ));
        }
        Ok(())
    }
}

impl BoxInHoleParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Landing time `sqrt(2 drop_height / g)` (s).
    pub fn t_land(&self) -> f64 {
        (2.0 * self.drop_height / self.gravity).sqrt()
    }
    /// Time from which the peg is graded at rest: `t_land + 2 dt`, 0 without a drop (s).
    pub fn t_rest(&self) -> f64 {
        if self.drop_height > 0.0 {
            self.t_land() + 2.0 * self.dt
        } else {
            0.0
        }
    }
    /// Corner load factor `L_c = 1 + m (h_y²/I_x + h_x²/I_y)`.
    pub fn corner_load_factor(&self) -> f64 {
        let shape = self.peg_shape();
        let i = shape.principal_inertia(self.peg_mass);
        let h = 0.5 * self.peg_width;
        1.0 + self.peg_mass * (h * h / i.x + h * h / i.y)
    }
    /// Penetration tolerance `PENETRATION_REL_TOL g dt² L_c` (m).
    pub fn penetration_tolerance(&self) -> f64 {
        PENETRATION_REL_TOL * self.gravity * self.dt * self.dt * self.corner_load_factor()
    }
    fn peg_shape(&self) -> Shape {
        Shape::Box { half_extents: [0.5 * self.peg_width, 0.5 * self.peg_width, 0.5 * self.peg_height] }
    }

    /// The initial world: the peg (body 0), the floor (static 0) and the walls +x, -x, +y, -y.
    pub fn world(&self) -> World {
        let mat = Material::rigid(self.mu);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let z = self.drop_height + 0.5 * self.peg_height;
        w.bodies.push(RigidBody::new("peg", self.peg_shape(), self.peg_mass, Vector3::new(0.0, 0.0, z), mat));
        let (a, t, d) = (0.5 * self.peg_width + self.clearance, self.wall_thickness, self.hole_depth);
        let outer = a + t;
        let mut slab = |name: &str, center: Vector3<f64>, half: [f64; 3]| {
            w.statics.push(StaticCollider {
                name: name.into(),
                shape: StaticShape::Box { center, orientation: UnitQuaternion::identity(), half_extents: half },
                material: mat,
            })
        };
        slab("floor", Vector3::new(0.0, 0.0, -0.5 * t), [outer, outer, 0.5 * t]);
        slab("wall_x+", Vector3::new(a + 0.5 * t, 0.0, 0.5 * d), [0.5 * t, outer, 0.5 * d]);
        slab("wall_x-", Vector3::new(-a - 0.5 * t, 0.0, 0.5 * d), [0.5 * t, outer, 0.5 * d]);
        slab("wall_y+", Vector3::new(0.0, a + 0.5 * t, 0.5 * d), [a, 0.5 * t, 0.5 * d]);
        slab("wall_y-", Vector3::new(0.0, -a - 0.5 * t, 0.5 * d), [a, 0.5 * t, 0.5 * d]);
        w
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let pen_tol = self.penetration_tolerance();
        let creep_tol = CREEP_REL_TOL * self.gravity * dt;
        if !trace_is_whole(scenario, trace) {
            return vec![
                unmeasured("weight_ratio", 1.0, IMPULSE_REL_TOL),
                unmeasured("max_penetration", 0.0, pen_tol),
                unmeasured("rest_speed", 0.0, creep_tol),
                unmeasured("contained", 1.0, 0.0),
            ];
        }
        let t_rest = self.t_rest();
        let k_rest = first_step_from(t_rest, dt);
        let k_late = first_step_from(t_rest.max(0.5 * n as f64 * dt), dt);
        let ratio = mean_normal_impulse(trace, k_late) / (self.peg_mass * self.gravity * dt);
        let pen = max_penetration(trace, k_rest);
        let speed = max_speed(trace, k_late + 1, 1);
        let lim = self.clearance + pen_tol;
        let inside = trace.q.iter().all(|q| {
            let c = centre(q, 0);
            c.x.abs() <= lim && c.y.abs() <= lim && c.z >= 0.5 * self.peg_height - pen_tol
        });
        vec![
            OracleCheck::abs("weight_ratio", ratio, 1.0, IMPULSE_REL_TOL),
            OracleCheck::abs("max_penetration", pen, 0.0, pen_tol),
            OracleCheck::abs("rest_speed", speed, 0.0, creep_tol),
            OracleCheck::abs("contained", if inside { 1.0 } else { 0.0 }, 1.0, 0.0),
        ]
    }
}

/// The `box_in_hole` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct BoxInHole;

impl CaseDef for BoxInHole {
    type Params = BoxInHoleParams;
    const NAME: &'static str = "box_in_hole";
    const SUMMARY: &'static str =
        "box peg in a square hole of static boxes (Lee et al.'s dense bolt-nut contact): weight, rest, containment";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &BoxInHoleParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs = Capabilities { rigid_bodies: true, rigid_contact: true, ..Default::default() };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs })
    }
    fn grade(&self, p: &BoxInHoleParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resting::test_support::resting_trace;
    use harness::{Case, Params};
    use rstest::rstest;

    fn params(overrides: &[(&str, &str)]) -> Params {
        crate::test_util::params(&BoxInHole, overrides)
    }

    #[test]
    fn defaults_build_a_dense_contact_scene() {
        let p: BoxInHoleParams = BoxInHole.defaults().decode("box_in_hole").unwrap();
        assert_eq!(p, BoxInHoleParams::default());
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&BoxInHole);
        // at rest on the floor: 4 floor + 4 x 4 wall contacts
        let sc = crate::test_util::build(&BoxInHole, &params(&[("drop_height", "0")])).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), 20, "{:?}", cs.contacts.iter().map(|c| (c.key, c.gap)).collect::<Vec<_>>());
        let on_floor = cs.contacts.iter().filter(|c| c.gap.abs() < 1e-12).count();
        assert_eq!(on_floor, 4);
        assert!(cs.contacts.iter().all(|c| c.gap.abs() < 1e-12 || (c.gap - 5e-4).abs() < 1e-12));
        // a cube's corner load factor is 4
        let cube = BoxInHoleParams { peg_height: 0.1, ..Default::default() };
        assert!((cube.corner_load_factor() - 4.0).abs() < 1e-12);
    }

    #[rstest]
    #[case::width("peg_width", "0", "peg_width: must be > 0")]
    #[case::mass("peg_mass", "-1", "peg_mass: must be > 0")]
    #[case::clearance("clearance", "-0.001", "clearance: must be >= 0")]
    #[case::clearance_margin("clearance", "0.01", "clearance: must be below margin")]
    #[case::drop("drop_height", "0.2", "drop_height: must be below hole_depth")]
    #[case::mu("mu", "-1", "mu: must be >= 0")]
    #[case::dt("dt", "0", "dt:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&BoxInHole, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    #[test]
    fn resting_peg_passes_and_a_squeeze_fails() {
        let prm = params(&[("drop_height", "0")]);
        let sc = crate::test_util::build(&BoxInHole, &prm).unwrap();
        let w = 1.0 * 9.81 * sc.dt;
        let tr = resting_trace(&sc, w);
        let c = crate::test_util::oracle(&BoxInHole, &prm, &sc, &tr);
        assert!(c.iter().all(|c| c.pass), "{c:?}");
        // walls squeezing the peg with 1 % of its weight: the total normal impulse shows it
        let mut bad = tr.clone();
        bad.metrics.iter_mut().for_each(|m| m.normal_impulse_total = 1.01 * w);
        let c = crate::test_util::oracle(&BoxInHole, &prm, &sc, &bad);
        assert!(!c.iter().find(|c| c.name == "weight_ratio").unwrap().pass);
        // the peg leaving the hole sideways
        let mut out = tr.clone();
        out.q.last_mut().unwrap()[0] = 0.01;
        let c = crate::test_util::oracle(&BoxInHole, &prm, &sc, &out);
        assert!(!c.iter().find(|c| c.name == "contained").unwrap().pass);
        out.completed = false;
        assert!(crate::test_util::oracle(&BoxInHole, &prm, &sc, &out).iter().all(|c| !c.pass));
    }

    /// Each check reads its own window with its own tolerance: the weight from the first step
    /// ending at or after `max(t_rest, T/2)` (`k_late`; `t_rest = 0` without a drop), the rest
    /// speed from state `k_late + 1` with `CREEP_REL_TOL g dt`; containment allows the clearance
    /// plus the penetration tolerance sideways.
    #[test]
    fn checks_read_their_windows_with_their_tolerances() {
        use crate::resting::first_step_from;
        use crate::test_util::{check, names, oracle};
        let prm = params(&[("drop_height", "0")]);
        let p: BoxInHoleParams = prm.decode("box_in_hole").unwrap();
        let sc = crate::test_util::build(&BoxInHole, &prm).unwrap();
        let w = p.peg_mass * p.gravity * sc.dt;
        let k_late = first_step_from(0.5 * sc.steps as f64 * sc.dt, sc.dt);
        assert!(k_late > 1 && k_late + 2 < sc.steps, "{k_late}");
        let mut tr = resting_trace(&sc, w);
        // before the window: no weight carried and the peg moving
        tr.metrics[..k_late].iter_mut().for_each(|m| m.normal_impulse_total = 0.0);
        tr.v[k_late][0] = 1.0;
        let c = oracle(&BoxInHole, &prm, &sc, &tr);
        assert_eq!(names(&c), ["weight_ratio", "max_penetration", "rest_speed", "contained"]);
        assert!((check(&c, "weight_ratio").measured - 1.0).abs() < 1e-12, "{c:?}");
        let speed = check(&c, "rest_speed");
        assert_eq!(speed.measured, 0.0);
        assert!((speed.tolerance - CREEP_REL_TOL * p.gravity * sc.dt).abs() < 1e-15, "{speed:?}");
        assert_eq!(check(&c, "max_penetration").tolerance, p.penetration_tolerance());
        tr.v[k_late + 1][1] = 2e-3;
        assert_eq!(check(&oracle(&BoxInHole, &prm, &sc, &tr), "rest_speed").measured, 2e-3);
        // sideways within the clearance and half the penetration tolerance: contained
        let side = p.clearance + 0.5 * p.penetration_tolerance();
        for (x, inside) in [(side, true), (p.clearance + 1.5 * p.penetration_tolerance(), false)] {
            let mut off = resting_trace(&sc, w);
            off.q.iter_mut().for_each(|q| q[1] = x);
            assert_eq!(check(&oracle(&BoxInHole, &prm, &sc, &off), "contained").pass, inside, "{x}");
        }
    }

    /// The penetration tolerance is its derivation, `PENETRATION_REL_TOL g dt² L_c` with the
    /// corner load factor of a square peg of side `a`, height `b` and mass `m`:
    /// `I_x = I_y = m (a² + b²)/12`, `h = a/2`, `L_c = 1 + 2 m h² / I_x = 1 + 6 a² / (a² + b²)`.
    #[test]
    fn penetration_tolerance_is_its_derivation() {
        let p = BoxInHoleParams { dt: 0.004, peg_mass: 2.5, ..BoxInHoleParams::default() };
        let (a, b) = (p.peg_width, p.peg_height);
        let load = 1.0 + 6.0 * a * a / (a * a + b * b);
        let want = PENETRATION_REL_TOL * p.gravity * 0.004 * 0.004 * load;
        let got = p.penetration_tolerance();
        assert!((got - want).abs() < 1e-14 * want, "{got} vs {want}");
    }
}
