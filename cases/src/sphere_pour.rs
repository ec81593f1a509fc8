//! `sphere_pour`: Lee et al.'s particle pouring (§VII-C, Figs. 10–11) without the robot — 9
//! to 45 small dense spheres (radius 5 mm, 10 g/cm³) poured into a rigid square container: many
//! light bodies, sparse coupling, the scaling scene of their Fig. 11.
//!
//! # Scene
//!
//! * Container: the ground half-space `z <= 0` and four static boxes (thickness
//!   [`WALL_THICKNESS`]) bounding the floor `|x|, |y| <= width/2` up to `height`.
//! * `n` spheres of radius `radius`, density `density`, in layers of `3 × 3` (sphere `i` is in layer
//!   `i / 9`, row-major `(i mod 9)` on a grid of pitch `spacing` centred on the axis), layer `k` at
//!   height `drop_height + k dz`, each offset by a uniform `[-jitter, jitter]` along x and y
//!   ([`crate::SplitMix64`] seeded with `seed`, x then y per sphere), at rest. They fall into the
//!   container and pile up.
//! * Detection margin per contact, as in `clutter`: `margin` plus `dt` times the contact's
//!   predicted approach speed (harness `geometry::detect_for_step`), so no sphere tunnels for a
//!   step.
//! * Validation: the spheres start apart (`spacing`, `dz` > `2 (radius + jitter)`), above the
//!   ground, and inside the walls (`spacing + radius + jitter < width/2`).
//!
//! # Oracle checks
//!
//! The pour lasts `t_drop = 2 sqrt(2 z_top / g)` (the top sphere's free-fall time to the ground,
//! and as long again to settle into the pile, as `clutter`). `k = ceil(n/9)` is the number of
//! layers; the tallest column of the pile has `k` spheres, so a contact carries at most `k` sphere
//! weights with a sphere–sphere Delassus entry `2/m`: load factor `L = 2k` (crate doc).
//!
//! * `contained` — 1 if at the end every sphere's centre is inside the container
//!   (`|x|, |y| < width/2`, `0 < z < height`); expected 1; tolerance 0.
//! * `max_penetration` (only when the run lasts longer than `t_drop`) — the largest
//!   `StepMetrics.penetration_max` over the steps ending after `t_drop` (m); expected 0; tolerance
//!   `PENETRATION_REL_TOL g dt² L` (7.4e-5 m for 27 spheres at `dt = 5 ms`). During the pour the
//!   linearised gap of spheres rolling over each other misses the true gap by `v_t² dt²/(2r)`, a
//!   geometric error of every velocity-level scheme (see `clutter`), so it is not graded.

use crate::resting::{centre, first_step_from, max_penetration};
use crate::PENETRATION_REL_TOL;
use crate::{check, default_struct, trace_is_whole, unmeasured, SplitMix64};
use harness::model::{Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{Capabilities, CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("sphere_pour.toml");
const SOURCE: &str = "cases/src/sphere_pour.toml";

/// Most spheres accepted.
pub const MAX_SPHERES: i64 = 10_000;
/// Spheres per layer (a 3 × 3 grid).
pub const PER_LAYER: usize = 9;
/// Thickness of the container walls (m).
pub const WALL_THICKNESS: f64 = 0.01;

/// Parameters of the `sphere_pour` case (defaults in `cases/src/sphere_pour.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpherePourParams {
    /// Number of spheres (1 ..= `MAX_SPHERES`).
    pub n: i64,
    /// Sphere radius (m, > 0).
    pub radius: f64,
    /// Density (kg/m^3, > 0).
    pub density: f64,
    /// Inner width of the square container (m, > 0).
    pub width: f64,
    /// Wall height (m, > 0).
    pub height: f64,
    /// Grid pitch within a layer (m).
    pub spacing: f64,
    /// Height of the lowest layer's centres (m).
    pub drop_height: f64,
    /// Vertical spacing of the layers (m).
    pub dz: f64,
    /// Largest horizontal offset per axis (m, >= 0).
    pub jitter: f64,
    /// Seed of the offsets (any integer).
    pub seed: i64,
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

impl Default for SpherePourParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for SpherePourParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(1..=MAX_SPHERES).contains(&self.n) {
            return Err(harness::FieldError::new("n", format!("must be in [1, {MAX_SPHERES}], got {}", self.n)));
        }
        check::positive("radius", self.radius)?;
        check::positive("density", self.density)?;
        check::positive("width", self.width)?;
        check::positive("height", self.height)?;
        check::finite("spacing", self.spacing)?;
        check::finite("drop_height", self.drop_height)?;
        check::finite("dz", self.dz)?;
        check::non_negative("jitter", self.jitter)?;
        check::non_negative("mu", self.mu)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        let d = 2.0 * (self.radius + self.jitter);
        if self.spacing <= d {
            return Err(harness::FieldError::new(
                "spacing",
                format!("must exceed 2 (radius + jitter) = {d} so that spheres start apart, got {}", self.spacing),
            ));
        }
        if self.n as usize > PER_LAYER && self.dz <= d {
            return Err(harness::FieldError::new(
                "dz",
                format!("must exceed 2 (radius + jitter) = {d} so that layers start apart, got {}", self.dz),
            ));
        }
        if self.drop_height <= self.radius {
            return Err(harness::FieldError::new(
                "drop_height",
                format!(
                    "must exceed radius ({}) so that spheres start above the ground, got {}",
                    self.radius, self.drop_height
                ),
            ));
        }
        let reach = self.spacing + self.radius + self.jitter;
        if reach >= 0.5 * self.width {
            return Err(harness::FieldError::new(
                "width",
                format!(
                    "must exceed 2 (spacing + radius + jitter) = {} so that the spheres start inside, got {}",
                    2.0 * reach,
                    self.width
                ),
            ));
        }
        Ok(())
    }
}

impl SpherePourParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Number of layers `ceil(n / 9)`.
    pub fn layers(&self) -> usize {
        (self.n.max(1) as usize).div_ceil(PER_LAYER)
    }
    /// Mass of a sphere (kg).
    pub fn sphere_mass(&self) -> f64 {
        self.density * Shape::Sphere { radius: self.radius }.volume()
    }
    /// Height of the highest initial centre (m).
    pub fn top_height(&self) -> f64 {
        self.drop_height + (self.layers() - 1) as f64 * self.dz
    }
    /// End of the pour `t_drop = 2 sqrt(2 z_top / g)` (s).
    pub fn drop_time(&self) -> f64 {
        2.0 * (2.0 * self.top_height() / self.gravity).sqrt()
    }
    /// Penetration tolerance `PENETRATION_REL_TOL g dt² 2k` (m).
    pub fn penetration_tolerance(&self) -> f64 {
        PENETRATION_REL_TOL * self.gravity * self.dt * self.dt * 2.0 * self.layers() as f64
    }
    /// Initial centres, in body order.
    pub fn centres(&self) -> Vec<Vector3<f64>> {
        let mut rng = SplitMix64::new(self.seed as u64);
        (0..self.n.max(1) as usize)
            .map(|i| {
                let (k, c) = (i / PER_LAYER, i % PER_LAYER);
                let gx = ((c % 3) as f64 - 1.0) * self.spacing;
                let gy = ((c / 3) as f64 - 1.0) * self.spacing;
                let x = gx + self.jitter * (2.0 * rng.next_f64() - 1.0);
                let y = gy + self.jitter * (2.0 * rng.next_f64() - 1.0);
                Vector3::new(x, y, self.drop_height + k as f64 * self.dz)
            })
            .collect()
    }

    /// The initial world: the spheres, the ground (static 0) and the walls +x, -x, +y, -y.
    pub fn world(&self) -> World {
        let mat = Material::rigid(self.mu);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let (m, shape) = (self.sphere_mass(), Shape::Sphere { radius: self.radius });
        for (i, c) in self.centres().into_iter().enumerate() {
            w.bodies.push(RigidBody::new(format!("sphere{i}"), shape.clone(), m, c, mat));
        }
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material: mat,
        });
        let (h, t, hh) = (0.5 * self.width, WALL_THICKNESS, 0.5 * self.height);
        for (name, center, half_extents) in [
            ("wall_x+", Vector3::new(h + 0.5 * t, 0.0, hh), [0.5 * t, h + t, hh]),
            ("wall_x-", Vector3::new(-h - 0.5 * t, 0.0, hh), [0.5 * t, h + t, hh]),
            ("wall_y+", Vector3::new(0.0, h + 0.5 * t, hh), [h, 0.5 * t, hh]),
            ("wall_y-", Vector3::new(0.0, -h - 0.5 * t, hh), [h, 0.5 * t, hh]),
        ] {
            w.statics.push(StaticCollider {
                name: name.into(),
                shape: StaticShape::Box { center, orientation: UnitQuaternion::identity(), half_extents },
                material: mat,
            });
        }
        w
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let pen_tol = self.penetration_tolerance();
        let graded_pen = n as f64 * dt > self.drop_time();
        if !trace_is_whole(scenario, trace) {
            let mut out = vec![unmeasured("contained", 1.0, 0.0)];
            if graded_pen {
                out.push(unmeasured("max_penetration", 0.0, pen_tol));
            }
            return out;
        }
        let q = &trace.q[trace.q.len() - 1];
        let h = 0.5 * self.width;
        let inside = (0..scenario.world.bodies.len()).all(|b| {
            let c = centre(q, b);
            c.x.abs() < h && c.y.abs() < h && c.z > 0.0 && c.z < self.height
        });
        let mut out = vec![OracleCheck::abs("contained", if inside { 1.0 } else { 0.0 }, 1.0, 0.0)];
        if graded_pen {
            let pen = max_penetration(trace, first_step_from(self.drop_time(), dt));
            out.push(OracleCheck::abs("max_penetration", pen, 0.0, pen_tol));
        }
        out
    }
}

/// The `sphere_pour` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpherePour;

impl CaseDef for SpherePour {
    type Params = SpherePourParams;
    const NAME: &'static str = "sphere_pour";
    const SUMMARY: &'static str =
        "9-45 small dense spheres poured into a container (Lee et al.'s pouring): containment, penetration";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &SpherePourParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs = Capabilities { rigid_bodies: true, rigid_contact: true, ..Default::default() };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs })
    }
    fn grade(&self, p: &SpherePourParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&SpherePour, overrides)
    }

    #[test]
    fn defaults_build_the_paper_spheres() {
        let p = SpherePourParams::default();
        assert_eq!(SpherePour.defaults().decode::<SpherePourParams>("sphere_pour").unwrap(), p);
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&SpherePour);
        // 5 mm at 10 g/cm^3: 5.236 g
        assert!((p.sphere_mass() - 5.235987755982989e-3).abs() < 1e-15);
        for n in [9, 18, 27, 36, 45] {
            let sc = crate::test_util::build(&SpherePour, &params(&[("n", &n.to_string())])).unwrap();
            assert_eq!(sc.world.bodies.len(), n);
            // nothing touches at the start
            let cs = harness::geometry::detect(&sc.world, 0.0);
            assert!(cs.is_empty(), "n = {n}: {} contacts", cs.len());
        }
        let a = crate::test_util::build(&SpherePour, &params(&[])).unwrap();
        let b = crate::test_util::build(&SpherePour, &params(&[])).unwrap();
        assert_eq!(a.world, b.world);
        assert!((p.penetration_tolerance() - 0.1 * 9.81 * 25e-6 * 6.0).abs() < 1e-15);
    }

    #[rstest]
    #[case::n("n", "0", "n: must be in [1")]
    #[case::radius("radius", "0", "radius: must be > 0")]
    #[case::spacing("spacing", "0.01", "spacing: must exceed")]
    #[case::dz("dz", "0.01", "dz: must exceed")]
    #[case::drop("drop_height", "0.004", "drop_height: must exceed")]
    #[case::width("width", "0.03", "width: must exceed")]
    #[case::jitter("jitter", "-1", "jitter: must be >= 0")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&SpherePour, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    #[test]
    fn escaping_sphere_fails_contained() {
        let prm = params(&[("n", "9")]);
        let sc = crate::test_util::build(&SpherePour, &prm).unwrap();
        let tr = resting_trace(&sc, 0.0);
        assert!(crate::test_util::oracle(&SpherePour, &prm, &sc, &tr).iter().all(|c| c.pass));
        let mut bad = tr.clone();
        bad.q.last_mut().unwrap()[0] = 0.05;
        let c = crate::test_util::oracle(&SpherePour, &prm, &sc, &bad);
        assert_eq!(c[0].name, "contained");
        assert!(!c[0].pass);
        bad.completed = false;
        assert!(crate::test_util::oracle(&SpherePour, &prm, &sc, &bad).iter().all(|c| !c.pass));
    }

    /// Containment of every sphere's centre strictly inside `|x|, |y| < width/2`, `0 < z <
    /// height` (on a bound is out); the penetration from the first step ending at or after the
    /// drop time, graded only in runs longer than it.
    #[test]
    fn checks_read_their_bounds_and_window() {
        use crate::resting::first_step_from;
        use crate::test_util::{check, names, oracle};
        let prm = params(&[("n", "9")]);
        let p: SpherePourParams = prm.decode("sphere_pour").unwrap();
        let sc = crate::test_util::build(&SpherePour, &prm).unwrap();
        let (h, top) = (0.5 * p.width, p.height);
        let last = 7 * 8;
        for (axis, x, inside) in [
            (0, 0.999 * h, true),
            (0, h, false),
            (0, -h, false),
            (1, -0.999 * h, true),
            (1, h, false),
            (1, -h, false),
            (2, 0.999 * top, true),
            (2, top, false),
            (2, 0.0, false),
        ] {
            let mut tr = resting_trace(&sc, 0.0);
            tr.q.last_mut().unwrap()[last + axis] = x;
            let c = oracle(&SpherePour, &prm, &sc, &tr);
            assert_eq!(check(&c, "contained").measured, if inside { 1.0 } else { 0.0 }, "axis {axis} at {x}");
        }
        let k = first_step_from(p.drop_time(), sc.dt);
        assert!(k > 1 && k < sc.steps, "{k}");
        let pen_tol = p.penetration_tolerance();
        let mut tr = resting_trace(&sc, 0.0);
        tr.metrics[k - 1].penetration_max = 10.0 * pen_tol;
        tr.metrics[k].penetration_max = 0.5 * pen_tol;
        let c = oracle(&SpherePour, &prm, &sc, &tr);
        assert_eq!(names(&c), ["contained", "max_penetration"]);
        let pen = check(&c, "max_penetration");
        assert!(pen.measured == 0.5 * pen_tol && pen.tolerance == pen_tol && pen.pass, "{pen:?}");
        // a run that ends before the spheres land grades containment only
        let steps_to_land = (p.drop_time() / sc.dt).floor() * sc.dt;
        let short = params(&[("n", "9"), ("duration", &steps_to_land.to_string())]);
        let sc = crate::test_util::build(&SpherePour, &short).unwrap();
        assert!(sc.steps as f64 * sc.dt <= p.drop_time());
        assert_eq!(names(&oracle(&SpherePour, &short, &sc, &resting_trace(&sc, 0.0))), ["contained"]);
    }
}
