//! `clutter`: spheres and boxes dropped in four columns into a container — Castro et al. (SAP)
//! §VI-C, seed-003 §4.2, anchors.md §4 "Clutter scene". A many-contact, strongly coupled scene
//! for robustness, iteration counts and cost per step; its oracle checks physically meaningful
//! properties of the result, not a trajectory.
//!
//! # Scene
//!
//! ```text
//!   side view (x-z)                       top view (x-y)
//!        o   #                        +-----------------+   walls: static boxes, height = width,
//!        #   o     columns of         |   c2       c3   |          thickness 0.1 m
//!        o   o     n_c = bodies / 4   |    o        #   |
//!        #   #     objects, spacing   |                 |   columns at (±w/4, ±w/4)
//!   |    o   #   | dz                 |    #        o   |
//!   |            |                    |   c0       c1   |
//!   +============+  ground z <= 0     +-----------------+
//!    <--- w --->
//! ```
//!
//! * **Container.** The ground is the half-space `z <= 0`. With `walls = true` four static boxes
//!   of thickness [`WALL_THICKNESS`] and height `width` bound the square floor
//!   `|x|, |y| <= width / 2` (the paper's 80 × 80 × 80 cm container); `walls = false` is the paper's
//!   "no walls" variant, the ground alone.
//! * **Objects.** `bodies` objects (a positive multiple of 4) in four columns of `n_c = bodies / 4`
//!   with axes at `(±width/4, ±width/4)`. Each object is a box of edge `box_edge` with probability
//!   `box_fraction`, else a sphere of radius `sphere_radius`; both have density `density` (the
//!   paper's 5 cm spheres of 0.524 kg and 10 cm boxes of 1 kg at 1000 kg/m³; the paper's
//!   "arbitrary assortment" is not specified further, so the mix is drawn here). Object `j` of a
//!   column (0 = lowest) starts at rest with its centre at height `drop_height + j dz`, offset from
//!   the column axis by a uniform random amount in `[-jitter, jitter]` along x and along y (this
//!   breaks the symmetry that would otherwise keep a column of spheres balanced); boxes get a
//!   uniformly random orientation.
//! * **Seeding.** All random numbers come from [`SplitMix64`] seeded with `seed`, drawn in a fixed
//!   order: objects level by level (all lowest objects first), columns `c0 .. c3` within a level
//!   (body index `4 j + c`), and per object: kind, x offset, y offset, then three numbers for the
//!   orientation (boxes only; Shoemake's uniform quaternion). The same parameters give a
//!   bit-identical initial world.
//! * **Contact.** One material on all surfaces: `mu` (the paper's 1.0) and the paper's near-rigid
//!   compliant contact `k = 1e12 N/m`, `tau_d = dt` (`contact = "compliant"`): at `dt = 10 ms` the
//!   contact period `2 pi sqrt(m/k)` is about 5 µs, far below the step, so solvers treat it per
//!   their model (SAP's near-rigid rule, a stiff Kelvin–Voigt law, or effectively rigid);
//!   `contact = "rigid"` uses rigid contact.
//! * **Detection margin.** A falling object must be caught by a (speculative) contact before it
//!   reaches what it falls on, or a velocity-level scheme lets it tunnel in for one step. The
//!   fastest approach is the top object's landing speed `v_max = sqrt(2 g z_top)` (`z_top` the
//!   highest initial centre; impacts are inelastic, so nothing rebounds faster), so the scenario's
//!   margin is `max(margin, v_max dt)`: 0.043 m at the defaults.
//! * **Validation.** Objects do not overlap and do not touch the walls or the ground initially:
//!   `dz > 2 r_b` and `drop_height > r_b`, with `r_b` the larger bounding radius of the two
//!   shapes (`box_edge √3 / 2` for the default box), and `width / 4 - jitter > r_b`.
//! * **Defaults.** 20 objects (5 per column), half boxes, walls, `dt = 10 ms`, 1.5 s. The top
//!   object lands after `sqrt(2 z_top / g) = 0.44 s`, the columns topple and the pile comes to
//!   rest within about another second; 1.5 s keeps the run short while covering the energetic
//!   transient where solvers iterate most. The paper runs 10 s for its steady-state iteration
//!   counts; set `duration = 10` to reproduce that.
//!
//! # Oracle checks
//!
//! No closed-form trajectory exists; the checks grade what must hold for any correct solver.
//! "Load factor" is as in the crate doc and `sphere_stack`: a contact's normal impulse per step
//! over the impulse that would stop the lighter side's own weight.
//!
//! * `max_penetration` — `max_k StepMetrics.penetration_max` over the run (m); expected 0 (rigid)
//!   or the static penetration of a column's bottom contact `n_c m_max g / k` (compliant; 1e-10 m
//!   at the defaults); tolerance `PENETRATION_REL_TOL g dt^2 L` with `L = 2 n_c m_max / m_min`
//!   (masses of the kinds present): the load factor of a contact at the bottom of a column of
//!   `n_c` objects, each at most `m_max`, resting on an object of mass `m_min` (the Delassus entry
//!   of two bodies is `1/m_a + 1/m_b <= 2/m_min`). The column is the tallest stack the drop builds
//!   (the pile only spreads from there). SAP's near-rigid contact rests at about
//!   `beta^2 g dt^2 (1 + tau_d/dt) / (4 pi^2) = 0.05 g dt^2` per unit load (seed-003 §7 item 5,
//!   `1.155 beta^2 g dt^2 / (4 pi^2)` for a point mass with `tau_d = dt`), half the accepted level.
//!   At the defaults (5 per column, both kinds): `L = 19.1`, tolerance `1.9e-3 m`.
//! * `contained` (walls only) — 1 if at the end every object's centre is inside the container,
//!   `|x|, |y| < width / 2` and `0 < z < width`, else 0; expected 1; tolerance 0.
//! * `settled_ke` (only when `duration >= settle_time`, see [`ClutterParams::settle_time`]) —
//!   the kinetic energy after the last step divided by the potential energy released,
//!   `sum_i m_i g (z_i(0) - z_i(N))` (dimensionless); expected 0; tolerance
//!   [`SETTLED_KE_TOL`] `= 1e-3`. A settled pile holds still; what may remain is creep (a sticking
//!   contact may creep at `CREEP_REL_TOL g dt` by the crate's acceptance level, a kinetic energy of
//!   order `m (1e-2 g dt)^2 / 2 = 5e-6 J` per kg at 10 ms against a release of about
//!   `g z_top / 2 = 2.5 J` per kg, i.e. 2e-6) and the slow last motions of objects settling
//!   into place, which the bound absorbs. It is omitted for shorter runs (the pile is still moving
//!   at the end) and without walls, where nothing stops a sphere rolling away across the ground
//!   (a perfectly rolling sphere keeps its kinetic energy).

use crate::{check, default_params, default_struct, trace_is_whole, unmeasured, ContactModel};
use crate::PENETRATION_REL_TOL;
use harness::model::{RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{Case, CaseError, OracleCheck, Params, Scenario, Settings, Trace};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("clutter.toml");
const SOURCE: &str = "cases/src/clutter.toml";

/// Largest number of objects accepted.
pub const MAX_BODIES: i64 = 10_000;
/// Thickness of the container walls (m).
pub const WALL_THICKNESS: f64 = 0.1;
/// Tolerance of `settled_ke` (kinetic energy left over potential energy released).
pub const SETTLED_KE_TOL: f64 = 1e-3;
/// Time allowed for the pile to come to rest after the top object lands (s), for `settle_time`.
pub const SETTLE_ALLOWANCE: f64 = 2.5;

/// The splitmix64 generator (Steele, Lea, Flood 2014): 64 bits of state, one addition and a
/// mixing function per number. Small, fast and fully specified, so a seed means the same scene on
/// every platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// A uniform number in `[0, 1)` (the top 53 bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Kind of a dropped object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// A sphere of radius `sphere_radius`.
    Sphere,
    /// A box of edge `box_edge`.
    Box,
}

/// Parameters of the `clutter` case (defaults in `cases/src/clutter.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClutterParams {
    /// Number of objects: a positive multiple of 4, at most [`MAX_BODIES`].
    pub bodies: i64,
    /// Seed of the pseudo-random scene (any integer; its bits seed [`SplitMix64`]).
    pub seed: i64,
    /// Probability that an object is a box (in `[0, 1]`).
    pub box_fraction: f64,
    /// Four static walls (true) or the ground alone (false).
    pub walls: bool,
    /// Inner side of the square container and height of its walls (m, > 0).
    pub width: f64,
    /// Sphere radius (m, > 0).
    pub sphere_radius: f64,
    /// Box edge (m, > 0).
    pub box_edge: f64,
    /// Density of every object (kg/m^3, > 0).
    pub density: f64,
    /// Height of the lowest objects' centres (m).
    pub drop_height: f64,
    /// Vertical spacing of the objects within a column (m).
    pub dz: f64,
    /// Largest horizontal offset of an object from its column's axis, per axis (m, >= 0).
    pub jitter: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// `"rigid"` or `"compliant"`.
    pub contact: String,
    /// Compliant contact stiffness (N/m, > 0).
    pub k: f64,
    /// Compliant contact dissipation time (s, >= 0).
    pub tau_d: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Smallest contact detection margin (m, > 0); the scenario uses `max(margin, v_max dt)`.
    pub margin: f64,
}

impl Default for ClutterParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for ClutterParams {
    fn validate(&self) -> Result<(), String> {
        if !(4..=MAX_BODIES).contains(&self.bodies) || self.bodies % 4 != 0 {
            return Err(format!(
                "bodies: must be a positive multiple of 4 (four equal columns), at most {MAX_BODIES}, got {}",
                self.bodies
            ));
        }
        if !(0.0..=1.0).contains(&self.box_fraction) {
            return Err(format!("box_fraction: must be in [0, 1], got {}", self.box_fraction));
        }
        check::positive("width", self.width)?;
        check::positive("sphere_radius", self.sphere_radius)?;
        check::positive("box_edge", self.box_edge)?;
        check::positive("density", self.density)?;
        check::finite("drop_height", self.drop_height)?;
        check::finite("dz", self.dz)?;
        check::non_negative("jitter", self.jitter)?;
        check::non_negative("mu", self.mu)?;
        check::one_of("contact", &self.contact, &ContactModel::NAMES)?;
        check::positive("k", self.k)?;
        check::non_negative("tau_d", self.tau_d)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        let rb = self.bounding_radius();
        if self.dz <= 2.0 * rb {
            return Err(format!(
                "dz: must exceed 2 x the objects' bounding radius ({}) so that they do not overlap, got {}",
                2.0 * rb,
                self.dz
            ));
        }
        if self.drop_height <= rb {
            return Err(format!(
                "drop_height: must exceed the objects' bounding radius ({rb}) so that they start above the \
                 ground, got {}",
                self.drop_height
            ));
        }
        if self.width / 4.0 - self.jitter <= rb {
            return Err(format!(
                "width: must exceed 4 x (bounding radius + jitter) = {} so that the columns clear each other \
                 and the walls, got {}",
                4.0 * (rb + self.jitter),
                self.width
            ));
        }
        let small = self.sphere_radius.min(0.5 * self.box_edge);
        if self.rest_penetration() >= small {
            return Err(format!(
                "k: too soft, a column's weight would rest at a penetration of {} m, beyond the object size {small} m",
                self.rest_penetration()
            ));
        }
        Ok(())
    }
}

impl ClutterParams {
    /// Contact model.
    pub fn contact_model(&self) -> ContactModel {
        ContactModel::parse(&self.contact)
    }
    /// Objects per column, `bodies / 4`.
    pub fn per_column(&self) -> usize {
        (self.bodies.max(0) / 4) as usize
    }
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Mass of a sphere (kg).
    pub fn sphere_mass(&self) -> f64 {
        self.density * Shape::Sphere { radius: self.sphere_radius }.volume()
    }
    /// Mass of a box (kg).
    pub fn box_mass(&self) -> f64 {
        self.density * self.box_edge.powi(3)
    }
    /// Larger bounding radius of the two shapes (m).
    pub fn bounding_radius(&self) -> f64 {
        self.sphere_radius.max(0.5 * self.box_edge * 3f64.sqrt())
    }
    /// Height of the highest initial centre (m).
    pub fn top_height(&self) -> f64 {
        self.drop_height + self.per_column().saturating_sub(1) as f64 * self.dz
    }
    /// The detection margin of the scenario, `max(margin, dt sqrt(2 g z_top))` (m).
    pub fn effective_margin(&self) -> f64 {
        self.margin.max(self.dt * (2.0 * self.gravity * self.top_height()).sqrt())
    }
    /// Time after which the pile is expected at rest: the top object's fall time
    /// `sqrt(2 z_top / g)` plus [`SETTLE_ALLOWANCE`] (s).
    pub fn settle_time(&self) -> f64 {
        (2.0 * self.top_height() / self.gravity).sqrt() + SETTLE_ALLOWANCE
    }
    /// Static penetration of a column's bottom contact: 0 (rigid) or `n_c m_max g / k` (m).
    pub fn rest_penetration(&self) -> f64 {
        match self.contact_model() {
            ContactModel::Rigid => 0.0,
            ContactModel::Compliant => {
                self.per_column() as f64 * self.sphere_mass().max(self.box_mass()) * self.gravity / self.k
            }
        }
    }

    /// The objects in body order (`4 j + c`): kind, initial position and orientation.
    pub fn objects(&self) -> Vec<(ObjectKind, Vector3<f64>, UnitQuaternion<f64>)> {
        let mut rng = SplitMix64::new(self.seed as u64);
        let q = 0.25 * self.width;
        let axes = [(-q, -q), (q, -q), (-q, q), (q, q)];
        let mut out = Vec::with_capacity(4 * self.per_column());
        for j in 0..self.per_column() {
            for &(cx, cy) in &axes {
                let kind = if rng.next_f64() < self.box_fraction { ObjectKind::Box } else { ObjectKind::Sphere };
                let x = cx + self.jitter * (2.0 * rng.next_f64() - 1.0);
                let y = cy + self.jitter * (2.0 * rng.next_f64() - 1.0);
                let pos = Vector3::new(x, y, self.drop_height + j as f64 * self.dz);
                let rot = match kind {
                    ObjectKind::Sphere => UnitQuaternion::identity(),
                    ObjectKind::Box => {
                        let (u1, u2, u3) = (rng.next_f64(), rng.next_f64(), rng.next_f64());
                        let tau = 2.0 * std::f64::consts::PI;
                        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
                        UnitQuaternion::from_quaternion(Quaternion::new(
                            b * (tau * u3).cos(),
                            a * (tau * u2).sin(),
                            a * (tau * u2).cos(),
                            b * (tau * u3).sin(),
                        ))
                    }
                };
                out.push((kind, pos, rot));
            }
        }
        out
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = self.contact_model().material(self.mu, self.k, self.tau_d);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        for (i, (kind, pos, rot)) in self.objects().into_iter().enumerate() {
            let (name, shape, mass) = match kind {
                ObjectKind::Sphere => {
                    (format!("sphere{i}"), Shape::Sphere { radius: self.sphere_radius }, self.sphere_mass())
                }
                ObjectKind::Box => {
                    (format!("box{i}"), Shape::Box { half_extents: [0.5 * self.box_edge; 3] }, self.box_mass())
                }
            };
            w.bodies.push(RigidBody::new(name, shape, mass, pos, material).with_orientation(rot));
        }
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        if self.walls {
            let (h, t, half_h) = (0.5 * self.width, WALL_THICKNESS, 0.5 * self.width);
            let walls = [
                ("wall_x+", Vector3::new(h + 0.5 * t, 0.0, half_h), [0.5 * t, h + t, half_h]),
                ("wall_x-", Vector3::new(-h - 0.5 * t, 0.0, half_h), [0.5 * t, h + t, half_h]),
                ("wall_y+", Vector3::new(0.0, h + 0.5 * t, half_h), [h, 0.5 * t, half_h]),
                ("wall_y-", Vector3::new(0.0, -h - 0.5 * t, half_h), [h, 0.5 * t, half_h]),
            ];
            for (name, center, half_extents) in walls {
                w.statics.push(StaticCollider {
                    name: name.into(),
                    shape: StaticShape::Box { center, orientation: UnitQuaternion::identity(), half_extents },
                    material,
                });
            }
        }
        w
    }

    /// Load factor `L = 2 n_c m_max / m_min` over the kinds present in `world`.
    pub fn load_factor(&self, world: &World) -> f64 {
        let masses = world.bodies.iter().map(|b| b.mass);
        let m_max = masses.clone().fold(0.0, f64::max);
        let m_min = masses.fold(f64::INFINITY, f64::min);
        if m_min.is_finite() && m_min > 0.0 {
            2.0 * self.per_column() as f64 * m_max / m_min
        } else {
            0.0
        }
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let dt = scenario.dt;
        let world = &scenario.world;
        let pen_tol = PENETRATION_REL_TOL * self.gravity * dt * dt * self.load_factor(world);
        let pen_exp = match self.contact_model() {
            ContactModel::Rigid => 0.0,
            ContactModel::Compliant => {
                let m_max = world.bodies.iter().map(|b| b.mass).fold(0.0, f64::max);
                self.per_column() as f64 * m_max * self.gravity / self.k
            }
        };
        let with_ke = self.walls && scenario.steps as f64 * dt >= self.settle_time();
        if !trace_is_whole(scenario, trace) {
            let mut out = vec![unmeasured("max_penetration", pen_exp, pen_tol)];
            if self.walls {
                out.push(unmeasured("contained", 1.0, 0.0));
            }
            if with_ke {
                out.push(unmeasured("settled_ke", 0.0, SETTLED_KE_TOL));
            }
            return out;
        }
        let penetration = trace.metrics.iter().map(|m| m.penetration_max).fold(0.0, f64::max);
        let mut out = vec![OracleCheck::abs("max_penetration", penetration, pen_exp, pen_tol)];
        let last = &trace.q[scenario.steps];
        let centre = |q: &[f64], i: usize| Vector3::new(q[7 * i], q[7 * i + 1], q[7 * i + 2]);
        let nb = world.bodies.len();
        if self.walls {
            let h = 0.5 * self.width;
            let inside = (0..nb).all(|i| {
                let c = centre(last, i);
                c.x.abs() < h && c.y.abs() < h && c.z > 0.0 && c.z < self.width
            });
            out.push(OracleCheck::abs("contained", if inside { 1.0 } else { 0.0 }, 1.0, 0.0));
        }
        if with_ke {
            let released: f64 = world
                .bodies
                .iter()
                .enumerate()
                .map(|(i, b)| b.mass * self.gravity * (centre(&trace.q[0], i).z - centre(last, i).z))
                .sum();
            let mut end = world.at_positions(last);
            end.set_state(last, &trace.v[scenario.steps]);
            let ratio = end.kinetic_energy() / released;
            out.push(OracleCheck::abs("settled_ke", ratio, 0.0, SETTLED_KE_TOL));
        }
        out
    }
}

/// The `clutter` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clutter;

impl Case for Clutter {
    fn name(&self) -> &'static str {
        "clutter"
    }
    fn summary(&self) -> &'static str {
        "seeded spheres and boxes dropped in four columns into a container, with or without walls (SAP §VI-C)"
    }
    fn defaults(&self) -> Params {
        default_params(DEFAULTS, SOURCE)
    }
    fn build(&self, params: &Params) -> Result<Scenario, CaseError> {
        let p: ClutterParams = params.decode(self.name())?;
        let world = p.world();
        world.validate().map_err(|e| CaseError::Invalid { case: self.name().into(), why: e.to_string() })?;
        Ok(Scenario {
            world,
            dt: p.dt,
            steps: p.steps(),
            margin: p.effective_margin(),
            needs: p.contact_model().needs(),
        })
    }
    fn oracle(&self, params: &Params, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        match params.decode::<ClutterParams>(self.name()) {
            Ok(p) => p.grade(scenario, trace),
            Err(_) => vec![unmeasured("params", 0.0, 0.0)],
        }
    }
}
