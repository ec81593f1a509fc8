//! `robots`: Lee et al.'s Table III scene (8 Laikago quadrupeds dropped on the floor;
//! §VII-D2, Fig. 12) as `robots` unactuated quadruped-like articulated robots made of boxes and
//! hinge joints — the scene of the SubADMM splitting ablation (`benches/subadmm.rs`).
//!
//! # Scene
//!
//! ```text
//!   side view (x-z), one robot             leg (s_x, s_y) under each torso corner
//!   +--------------------------+           hip: hinge about x (abduction), torso-thigh
//!   |          torso           |           knee: hinge about y (pitch), thigh-shin
//!   +--------------------------+
//!     o                      o   <- hips (in the joint_gap between the boxes)
//!    [ ]                    [ ]  thighs
//!     o                      o   <- knees
//!    [ ]                    [ ]  shins (feet flat, drop_height above the floor)
//!   ================================ ground: half-space z <= 0
//! ```
//!
//! * Robot `r` (centre `x = (r − (N−1)/2) spacing`) is 9 boxes: body `9r` the torso, then per leg
//!   `l = 0..4` (`(s_x, s_y) = (+,+), (+,−), (−,+), (−,−)`) the thigh `9r + 1 + 2l` and the shin
//!   `9r + 2 + 2l`, vertical, under the torso's corners (centres at `s_x (torso_length − link_width)/2`,
//!   `s_y (torso_width − link_width)/2`). The boxes a joint joins are `joint_gap` apart and the hinge
//!   point is in the middle of the gap. All bodies six-DOF, at rest, the feet `drop_height` above
//!   the floor; rigid hinges (5 rows each, 40 per robot). The joints make each robot one subsystem
//!   of the [`harness::model::DofLayout`] (54 DOFs in maximal coordinates; the paper's Laikago has 18
//!   in reduced coordinates); the robots do not touch each other.
//! * **Why the hips roll and the knees pitch.** The robots are unactuated. With every hinge axis
//!   parallel, torso + thighs + the floor would be a four-bar linkage and the robot would fold
//!   under gravity. With the hips about x and the knees about y, the loops closed through the feet
//!   are rigid: with the shins held by the floor, a thigh can only turn about its knee's y axis and
//!   the torso only about the hips' x axis relative to it; equal torso twists for the four legs
//!   force both rates to zero (the hips span both x and y). So the robot stands on straight legs
//!   and its joints carry its weight.
//! * Contacts: 4 corners per foot with the floor (16 per robot, 128 for 8 robots; the paper's
//!   Laikagos have typically 80–100). Scenario margin `max(margin, v_land dt)` with
//!   `v_land = sqrt(2 g drop_height)`; `joint_gap` must exceed it.
//!
//! # Oracle checks
//!
//! The feet land at `t_land = sqrt(2 drop_height / g)`; `t_rest = t_land + 2 dt` (0 without a
//! drop); "late" is after `max(t_rest, T/2)`. `M` is a robot's mass. Load factors as in the crate
//! doc, a foot's face counted as one contact (as `heavy_stack`): the foot carries `M/4` on a shin,
//! `L_f = M / (4 m_shin)`; a knee carries `m_torso/4 + m_thigh` between thigh and shin,
//! `L_k = (m_torso/4 + m_thigh)(1/m_thigh + 1/m_shin)`.
//!
//! * `weight_ratio` — mean `StepMetrics.normal_impulse_total` over the late steps over
//!   `N M g dt`; expected 1; tolerance `IMPULSE_REL_TOL`.
//! * `max_penetration` — largest `StepMetrics.penetration_max` over the steps ending after
//!   `t_rest` (m); expected 0; tolerance `PENETRATION_REL_TOL g dt² L_f`.
//! * `rest_speed` — largest centre-of-mass speed of any body over the late states (m/s); expected
//!   0; tolerance `CREEP_REL_TOL g dt`: the robots stand still.
//! * `joint_drift` — largest `StepMetrics.bilateral_violation_max` over the run (m or rad);
//!   expected 0 (the links do not turn relative to each other, so the linearised joint leaves no
//!   second-order drift); tolerance `PENETRATION_REL_TOL g dt² L_k`, the position error a
//!   velocity-level scheme may leave at the most loaded joint (crate doc).

use crate::resting::{first_step_from, max_joint_violation, max_penetration, max_speed, mean_normal_impulse};
use crate::{check, default_struct, trace_is_whole, unmeasured};
use crate::{CREEP_REL_TOL, IMPULSE_REL_TOL, PENETRATION_REL_TOL};
use harness::model::{Joint, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{Capabilities, CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("robots.toml");
const SOURCE: &str = "cases/src/robots.toml";

/// Most robots accepted.
pub const MAX_ROBOTS: i64 = 1000;
/// Bodies per robot: torso + 4 legs x 2 links.
pub const BODIES_PER_ROBOT: usize = 9;

/// Parameters of the `robots` case (defaults in `cases/src/robots.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotsParams {
    /// Number of robots (1 ..= `MAX_ROBOTS`).
    pub robots: i64,
    /// Distance between robot centres along x (m, > torso_length + margin).
    pub spacing: f64,
    /// Torso length along x (m, > 0).
    pub torso_length: f64,
    /// Torso width along y (m, > 0).
    pub torso_width: f64,
    /// Torso height (m, > 0).
    pub torso_height: f64,
    /// Torso mass (kg, > 0).
    pub torso_mass: f64,
    /// Length of a thigh or shin (m, > 0).
    pub link_length: f64,
    /// Edge of a link's square cross-section (m, > 0, at most half the torso's width and length).
    pub link_width: f64,
    /// Thigh mass (kg, > 0).
    pub thigh_mass: f64,
    /// Shin mass (kg, > 0).
    pub shin_mass: f64,
    /// Gap between jointed boxes (m, > the scenario margin).
    pub joint_gap: f64,
    /// Initial gap between the feet and the floor (m, >= 0).
    pub drop_height: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Smallest contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for RobotsParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for RobotsParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(1..=MAX_ROBOTS).contains(&self.robots) {
            return Err(harness::FieldError::new(
                "robots",
                format!("must be in [1, {MAX_ROBOTS}], got {}", self.robots),
            ));
        }
        for (n, v) in [
            ("torso_length", self.torso_length),
            ("torso_width", self.torso_width),
            ("torso_height", self.torso_height),
            ("torso_mass", self.torso_mass),
            ("link_length", self.link_length),
            ("link_width", self.link_width),
            ("thigh_mass", self.thigh_mass),
            ("shin_mass", self.shin_mass),
        ] {
            check::positive(n, v)?;
        }
        check::non_negative("drop_height", self.drop_height)?;
        check::non_negative("mu", self.mu)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        check::positive("joint_gap", self.joint_gap)?;
        if 2.0 * self.link_width > self.torso_width.min(self.torso_length) {
            return Err(harness::FieldError::new(
                "link_width",
                format!(
                    "must be at most half the torso's width and length ({}) so that the legs stand apart, \
                 got {}",
                    0.5 * self.torso_width.min(self.torso_length),
                    self.link_width
                ),
            ));
        }
        let m = self.scenario_margin();
        if self.joint_gap <= m {
            return Err(harness::FieldError::new(
                "joint_gap",
                format!(
                    "must exceed the scenario's detection margin max(margin, v_land dt) = {m} so that jointed \
                 links do not touch, got {}",
                    self.joint_gap
                ),
            ));
        }
        check::finite("spacing", self.spacing)?;
        if self.spacing <= self.torso_length + m {
            return Err(harness::FieldError::new(
                "spacing",
                format!(
                    "must exceed torso_length + margin = {} so that the robots do not touch, got {}",
                    self.torso_length + m,
                    self.spacing
                ),
            ));
        }
        Ok(())
    }
}

impl RobotsParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Mass of one robot (kg).
    pub fn robot_mass(&self) -> f64 {
        self.torso_mass + 4.0 * (self.thigh_mass + self.shin_mass)
    }
    /// Landing time `sqrt(2 drop_height / g)` (s).
    pub fn t_land(&self) -> f64 {
        (2.0 * self.drop_height / self.gravity).sqrt()
    }
    /// `t_land + 2 dt`, 0 without a drop (s).
    pub fn t_rest(&self) -> f64 {
        if self.drop_height > 0.0 {
            self.t_land() + 2.0 * self.dt
        } else {
            0.0
        }
    }
    /// Scenario margin `max(margin, sqrt(2 g drop_height) dt)` (m).
    pub fn scenario_margin(&self) -> f64 {
        self.margin.max((2.0 * self.gravity * self.drop_height).sqrt() * self.dt)
    }
    /// Foot load factor `M / (4 m_shin)`.
    pub fn foot_load_factor(&self) -> f64 {
        self.robot_mass() / (4.0 * self.shin_mass)
    }
    /// Knee load factor `(m_torso/4 + m_thigh)(1/m_thigh + 1/m_shin)`.
    pub fn knee_load_factor(&self) -> f64 {
        (0.25 * self.torso_mass + self.thigh_mass) * (1.0 / self.thigh_mass + 1.0 / self.shin_mass)
    }

    /// The initial world (bodies and joints in the order of the module doc).
    pub fn world(&self) -> World {
        let mat = Material::rigid(self.mu);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material: mat,
        });
        let (l, g, th) = (self.link_length, self.joint_gap, self.torso_height);
        let z_shin = self.drop_height + 0.5 * l;
        let z_knee = self.drop_height + l + 0.5 * g;
        let z_thigh = self.drop_height + 1.5 * l + g;
        let z_hip = self.drop_height + 2.0 * l + 1.5 * g;
        let z_torso = self.drop_height + 2.0 * l + 2.0 * g + 0.5 * th;
        let link = Shape::Box { half_extents: [0.5 * self.link_width, 0.5 * self.link_width, 0.5 * l] };
        let torso = Shape::Box { half_extents: [0.5 * self.torso_length, 0.5 * self.torso_width, 0.5 * th] };
        let lx = 0.5 * (self.torso_length - self.link_width);
        let ly = 0.5 * (self.torso_width - self.link_width);
        let n = self.robots.max(1) as usize;
        for r in 0..n {
            let x0 = (r as f64 - 0.5 * (n - 1) as f64) * self.spacing;
            let t = w.bodies.len();
            w.bodies.push(RigidBody::new(
                format!("robot{r}_torso"),
                torso.clone(),
                self.torso_mass,
                Vector3::new(x0, 0.0, z_torso),
                mat,
            ));
            for (leg, (sx, sy)) in [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)].into_iter().enumerate() {
                let (x, y) = (x0 + sx * lx, sy * ly);
                let thigh = w.bodies.len();
                w.bodies.push(RigidBody::new(
                    format!("robot{r}_thigh{leg}"),
                    link.clone(),
                    self.thigh_mass,
                    Vector3::new(x, y, z_thigh),
                    mat,
                ));
                let shin = w.bodies.len();
                w.bodies.push(RigidBody::new(
                    format!("robot{r}_shin{leg}"),
                    link.clone(),
                    self.shin_mass,
                    Vector3::new(x, y, z_shin),
                    mat,
                ));
                let hip = Joint::hinge_at(&w, thigh, Some(t), Vector3::new(x, y, z_hip), Vector3::x());
                let knee = Joint::hinge_at(&w, shin, Some(thigh), Vector3::new(x, y, z_knee), Vector3::y());
                w.joints.push(hip.named(format!("robot{r}_hip{leg}")));
                w.joints.push(knee.named(format!("robot{r}_knee{leg}")));
            }
        }
        w
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let pen_tol = PENETRATION_REL_TOL * self.gravity * dt * dt * self.foot_load_factor();
        let joint_tol = PENETRATION_REL_TOL * self.gravity * dt * dt * self.knee_load_factor();
        let creep_tol = CREEP_REL_TOL * self.gravity * dt;
        if !trace_is_whole(scenario, trace) {
            return vec![
                unmeasured("weight_ratio", 1.0, IMPULSE_REL_TOL),
                unmeasured("max_penetration", 0.0, pen_tol),
                unmeasured("rest_speed", 0.0, creep_tol),
                unmeasured("joint_drift", 0.0, joint_tol),
            ];
        }
        let t_rest = self.t_rest();
        let k_late = first_step_from(t_rest.max(0.5 * n as f64 * dt), dt);
        let weight = self.robots.max(1) as f64 * self.robot_mass() * self.gravity * dt;
        let ratio = mean_normal_impulse(trace, k_late) / weight;
        let pen = max_penetration(trace, first_step_from(t_rest, dt));
        let speed = max_speed(trace, k_late + 1, scenario.world.bodies.len());
        vec![
            OracleCheck::abs("weight_ratio", ratio, 1.0, IMPULSE_REL_TOL),
            OracleCheck::abs("max_penetration", pen, 0.0, pen_tol),
            OracleCheck::abs("rest_speed", speed, 0.0, creep_tol),
            OracleCheck::abs("joint_drift", max_joint_violation(trace), 0.0, joint_tol),
        ]
    }
}

/// The `robots` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Robots;

impl CaseDef for Robots {
    type Params = RobotsParams;
    const NAME: &'static str = "robots";
    const SUMMARY: &'static str =
        "N quadruped-like robots of boxes and hinges dropped on the floor (Lee et al. Table III): weight, rest, joints";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &RobotsParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs =
            Capabilities { rigid_bodies: true, rigid_contact: true, bilateral_constraints: true, ..Default::default() };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.scenario_margin(), needs })
    }
    fn grade(&self, p: &RobotsParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&Robots, overrides)
    }

    #[test]
    fn each_robot_is_one_subsystem_of_nine_boxes() {
        let p = RobotsParams::default();
        assert_eq!(Robots.defaults().decode::<RobotsParams>("robots").unwrap(), p);
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&Robots);
        let sc = crate::test_util::build(&Robots, &params(&[("robots", "3")])).unwrap();
        let w = &sc.world;
        assert_eq!((w.bodies.len(), w.joints.len()), (27, 24));
        assert!(sc.needs.bilateral_constraints);
        let subs: Vec<usize> = w.layout().blocks.iter().map(|b| b.subsystem).collect();
        for (i, s) in subs.iter().enumerate() {
            assert_eq!(*s, subs[BODIES_PER_ROBOT * (i / BODIES_PER_ROBOT)], "body {i}");
        }
        assert_eq!(subs.iter().collect::<std::collections::BTreeSet<_>>().len(), 3);
        // assembled: every joint row is satisfied, 40 rows per robot
        let rows = w.bilateral_rows();
        assert_eq!(rows.len(), 3 * 40);
        assert!(rows.violation_max() < 1e-15);
        // no contact at the start within the margin except none (feet above the floor)...
        assert!(harness::geometry::detect(w, sc.margin).is_empty());
        // ... and exactly the 16 foot corners once landed, no link-link contact
        let landed = crate::test_util::build(&Robots, &params(&[("robots", "3"), ("drop_height", "0")])).unwrap();
        let cs = harness::geometry::detect(&landed.world, landed.margin);
        assert_eq!(cs.len(), 3 * 16);
        assert!(cs.contacts.iter().all(|c| c.gap.abs() < 1e-12));
        assert!((p.foot_load_factor() - 8.0).abs() < 1e-12 && (p.knee_load_factor() - 10.5).abs() < 1e-12);
    }

    #[rstest]
    #[case::robots("robots", "0", "robots: must be in [1")]
    #[case::torso("torso_mass", "0", "torso_mass: must be > 0")]
    #[case::link("link_width", "0.15", "link_width: must be at most half")]
    #[case::gap("joint_gap", "0.003", "joint_gap: must exceed the scenario's detection margin")]
    #[case::spacing("spacing", "0.3", "spacing: must exceed")]
    #[case::drop("drop_height", "-1", "drop_height: must be >= 0")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&Robots, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    #[test]
    fn standing_robots_pass_and_a_folding_one_fails() {
        let prm = params(&[("robots", "2"), ("drop_height", "0")]);
        let p: RobotsParams = prm.decode("robots").unwrap();
        let sc = crate::test_util::build(&Robots, &prm).unwrap();
        let tr = resting_trace(&sc, 2.0 * p.robot_mass() * 9.81 * sc.dt);
        assert!(crate::test_util::oracle(&Robots, &prm, &sc, &tr).iter().all(|c| c.pass));
        let mut bad = tr.clone();
        bad.v.last_mut().unwrap()[2] = -0.01; // the torso still falling
        bad.metrics.last_mut().unwrap().bilateral_violation_max = 1e-2;
        let c = crate::test_util::oracle(&Robots, &prm, &sc, &bad);
        let fails: Vec<&str> = c.iter().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
        assert_eq!(fails, ["rest_speed", "joint_drift"]);
        bad.completed = false;
        assert!(crate::test_util::oracle(&Robots, &prm, &sc, &bad).iter().all(|c| !c.pass));
    }

    /// Each check's window, value and tolerance after a drop: the weight from the first step
    /// ending at or after `max(t_rest, T/2)` (`k_late`), the penetration from `t_rest`, the rest
    /// speed of every body from state `k_late + 1`, the joint drift over the run; tolerances
    /// `PENETRATION_REL_TOL g h²` times the foot and knee load factors and `CREEP_REL_TOL g h`.
    #[test]
    fn checks_read_their_windows_with_their_tolerances() {
        use crate::test_util::{check, names, oracle};
        let prm = params(&[("robots", "2")]);
        let p: RobotsParams = prm.decode("robots").unwrap();
        let sc = crate::test_util::build(&Robots, &prm).unwrap();
        let (g, h, n) = (p.gravity, sc.dt, sc.steps);
        let pen_tol = PENETRATION_REL_TOL * g * h * h * p.foot_load_factor();
        let joint_tol = PENETRATION_REL_TOL * g * h * h * p.knee_load_factor();
        let creep_tol = CREEP_REL_TOL * g * h;
        let k_rest = first_step_from(p.t_rest(), h);
        let k_late = first_step_from(p.t_rest().max(0.5 * n as f64 * h), h);
        assert!(p.t_rest() > 0.0 && k_rest > 1 && k_late > k_rest + 1 && k_late + 2 < n, "{k_rest} {k_late}");
        let mut tr = resting_trace(&sc, 2.0 * p.robot_mass() * g * h);
        tr.metrics[..k_late].iter_mut().for_each(|m| m.normal_impulse_total = 0.0);
        tr.metrics[k_rest - 1].penetration_max = 10.0 * pen_tol;
        tr.metrics[k_rest].penetration_max = 0.5 * pen_tol;
        tr.metrics[0].bilateral_violation_max = 0.5 * joint_tol;
        let last = 6 * (sc.world.bodies.len() - 1);
        tr.v[k_late][last] = 1.0;
        let c = oracle(&Robots, &prm, &sc, &tr);
        assert_eq!(names(&c), ["weight_ratio", "max_penetration", "rest_speed", "joint_drift"]);
        assert!(c.iter().all(|c| c.pass), "{c:?}");
        assert!((check(&c, "weight_ratio").measured - 1.0).abs() < 1e-12);
        let pen = check(&c, "max_penetration");
        assert!(pen.measured == 0.5 * pen_tol && (pen.tolerance - pen_tol).abs() < 1e-15 * pen_tol, "{pen:?}");
        let drift = check(&c, "joint_drift");
        assert!(drift.measured == 0.5 * joint_tol && (drift.tolerance - joint_tol).abs() < 1e-15 * joint_tol);
        let speed = check(&c, "rest_speed");
        assert!(speed.measured == 0.0 && (speed.tolerance - creep_tol).abs() < 1e-15, "{speed:?}");
        tr.v[k_late + 1][last + 1] = 2e-3;
        assert_eq!(check(&oracle(&Robots, &prm, &sc, &tr), "rest_speed").measured, 2e-3);
    }
}
