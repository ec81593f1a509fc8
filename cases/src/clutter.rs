//! `clutter`: spheres and boxes dropped in four columns into a container — Castro et al. (SAP)
//! §VI-C, Figs. 8–15, after Drake's `examples/multibody/clutter`. A many-contact, strongly coupled scene
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
//!   stepper sizes the margin per contact (harness `geometry::detect_for_step`): a feature enters
//!   the step when its gap is below `margin` plus `dt` times its predicted approach speed, so a
//!   falling object is caught and a settled pile carries about its touching contacts. (Before,
//!   the case raised the margin of every pair for the whole run to the top object's landing speed
//!   times `dt`, 0.043 m at the defaults: about five candidates per active contact at 80 objects.)
//! * **Validation.** Objects do not overlap and do not touch the walls or the ground initially:
//!   `dz > 2 r_b` and `drop_height > r_b`, with `r_b` the larger bounding radius of the two
//!   shapes (`box_edge √3 / 2` for the default box), and `width / 4 - jitter > r_b`.
//! * **Defaults.** 20 objects (5 per column), half boxes, walls, `dt = 10 ms`, 1.5 s. The top
//!   object lands after `sqrt(2 z_top / g) = 0.44 s` and the columns have toppled by
//!   `t_drop = 0.88 s` (below); 1.5 s covers the energetic transient where solvers iterate most
//!   plus 0.6 s of the settling pile for `max_penetration`, in 150 steps (about 0.6 s of PGS in a
//!   release build). `settled_ke` needs `duration >= 2.88 s`; the paper runs 10 s for its
//!   steady-state iteration counts (`--set duration=10`).
//!
//! # Oracle checks
//!
//! No closed-form trajectory exists; the checks grade what must hold for any correct solver once
//! the drop is over. With `t_fall = sqrt(2 z_top / g)` the free-fall time of the top object to the
//! ground, the **drop** lasts `t_drop = 2 t_fall` (the top object has landed, and the columns have
//! had as long again to topple: an object of height `H` falls over on the time scale of a free
//! fall from `H`); 0.88 s at the defaults, 1.26 s for 40 objects. "Load factor" is as in the crate
//! doc and `sphere_stack`: a contact's normal impulse per step over the impulse that would stop the
//! lighter side's own weight.
//!
//! * `max_penetration` (only when the run lasts longer than `t_drop`) — the largest
//!   `StepMetrics.penetration_max` over the steps ending after `t_drop` (m); expected 0 (rigid)
//!   or the static penetration of a column's bottom contact `n_c m_max g / k` (compliant; 1e-10 m
//!   at the defaults); tolerance `PENETRATION_REL_TOL g dt^2 L` with `L = 2 n_c m_max / m_min`
//!   (masses of the kinds present): the load factor of a contact at the bottom of a column of
//!   `n_c` objects, each at most `m_max`, resting on an object of mass `m_min` (the Delassus entry
//!   of two bodies is `1/m_a + 1/m_b <= 2/m_min`). The column is the tallest stack the drop builds
//!   (the pile only spreads from there). SAP's near-rigid contact rests at about
//!   `beta^2 g dt^2 (1 + tau_d/dt) / (4 pi^2) = 0.05 g dt^2` per unit load (sap README §9,
//!   `1.155 beta^2 g dt^2 / (4 pi^2)` for a point mass with `tau_d = dt`), half the accepted level.
//!   At the defaults (5 per column, both kinds): `L = 19.1`, tolerance `1.9e-3 m`.
//!   **Why not over the whole run:** during the drop, objects hit box edges and corners at up to
//!   `sqrt(2 g z_top)` (4.3 m/s at the defaults) while tumbling. Every velocity-level scheme
//!   imposes the gap linearised at the start of the step, `phi0 + dt u_n >= 0`, and the true gap
//!   of a sphere sliding over an edge at tangential speed `v_t` falls below it by about
//!   `v_t^2 dt^2 / (2 r)` (4 mm at `v_t = 2 m/s`, `r = 5 cm`), a geometric error no solver of the
//!   linearised problem can remove. PGS shows 4–6 mm during the drop for 20 objects (the same
//!   with 500 and 5000 sweeps per step; at sphere–box contacts; none with spheres only), and
//!   below 5e-4 m after `t_drop`
//!   (4 seeds, rigid and compliant; 40 and 80 objects below 4e-4 m). The whole-run maximum stays
//!   visible in the run summary (`metrics.penetration_max.max`).
//! * `contained` (walls only) — 1 if at the end every object's centre is inside the container,
//!   `|x|, |y| < width / 2` and `0 < z < width`, else 0; expected 1; tolerance 0.
//! * `settled_ke` (walls only, and only when `duration >= settle_time = t_drop + `
//!   [`SETTLE_ALLOWANCE`]; 2.88 s at the defaults) — the kinetic energy after the last step over
//!   the potential energy released, `sum_i m_i g (z_i(0) - z_i(N))` (dimensionless); expected 0;
//!   tolerance [`SETTLED_KE_TOL`] `= 1e-3`. A settled pile holds still, except that the model has
//!   no rolling resistance, so a sphere that rolls free keeps its kinetic energy until a wall or
//!   another object stops it; the bound admits about one sphere rolling at 0.45 m/s at the defaults
//!   (release about 75 J), and rejects a pile kept in motion by the solver (energy injection,
//!   jitter) or not dissipating its impacts. Sticking contacts may creep at `CREEP_REL_TOL g dt`
//!   (crate doc), a negligible `1e-6` of the release. Observed with PGS at 4 s: 8e-6 .. 2e-4
//!   (4 seeds, rigid and compliant). Without walls the check is omitted: spheres roll away across
//!   the ground indefinitely (PGS keeps 2.4 J of 75 J moving at 4 s).

use crate::PENETRATION_REL_TOL;
use crate::{check, default_struct, trace_is_whole, unmeasured, ContactModel};
use harness::model::{RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, CaseVariant, OracleCheck, Scenario, Settings, Trace};
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
/// Time allowed for the pile to come to rest after the drop (s), for `settle_time`.
pub const SETTLE_ALLOWANCE: f64 = 2.0;

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
    pub contact: ContactModel,
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
    /// Contact detection margin floor (m, > 0); the stepper adds `dt` times each contact's
    /// predicted approach speed.
    pub margin: f64,
}

impl Default for ClutterParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for ClutterParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(4..=MAX_BODIES).contains(&self.bodies) || self.bodies % 4 != 0 {
            return Err(harness::FieldError::new(
                "bodies",
                format!(
                    "must be a positive multiple of 4 (four equal columns), at most {MAX_BODIES}, got {}",
                    self.bodies
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.box_fraction) {
            return Err(harness::FieldError::new(
                "box_fraction",
                format!("must be in [0, 1], got {}", self.box_fraction),
            ));
        }
        check::positive("width", self.width)?;
        check::positive("sphere_radius", self.sphere_radius)?;
        check::positive("box_edge", self.box_edge)?;
        check::positive("density", self.density)?;
        check::finite("drop_height", self.drop_height)?;
        check::finite("dz", self.dz)?;
        check::non_negative("jitter", self.jitter)?;
        check::non_negative("mu", self.mu)?;
        check::positive("k", self.k)?;
        check::non_negative("tau_d", self.tau_d)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        let rb = self.bounding_radius();
        if self.dz <= 2.0 * rb {
            return Err(harness::FieldError::new(
                "dz",
                format!(
                    "must exceed 2 x the objects' bounding radius ({}) so that they do not overlap, got {}",
                    2.0 * rb,
                    self.dz
                ),
            ));
        }
        if self.drop_height <= rb {
            return Err(harness::FieldError::new(
                "drop_height",
                format!(
                    "must exceed the objects' bounding radius ({rb}) so that they start above the \
                 ground, got {}",
                    self.drop_height
                ),
            ));
        }
        if self.width / 4.0 - self.jitter <= rb {
            return Err(harness::FieldError::new(
                "width",
                format!(
                    "must exceed 4 x (bounding radius + jitter) = {} so that the columns clear each other \
                 and the walls, got {}",
                    4.0 * (rb + self.jitter),
                    self.width
                ),
            ));
        }
        let small = self.sphere_radius.min(0.5 * self.box_edge);
        if self.rest_penetration() >= small {
            return Err(harness::FieldError::new(
                "k",
                format!(
                    "too soft, a column's weight would rest at a penetration of {} m, beyond the object size {small} m",
                    self.rest_penetration()
                ),
            ));
        }
        Ok(())
    }
}

impl ClutterParams {
    /// Contact model.
    pub fn contact_model(&self) -> ContactModel {
        self.contact
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
    /// End of the drop, `t_drop = 2 sqrt(2 z_top / g)`: twice the top object's free-fall time to
    /// the ground (s).
    pub fn drop_time(&self) -> f64 {
        2.0 * (2.0 * self.top_height() / self.gravity).sqrt()
    }
    /// Time after which the pile is expected at rest, `drop_time() + SETTLE_ALLOWANCE` (s).
    pub fn settle_time(&self) -> f64 {
        self.drop_time() + SETTLE_ALLOWANCE
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
        let (dt, n) = (scenario.dt, scenario.steps);
        let world = &scenario.world;
        let pen_tol = PENETRATION_REL_TOL * self.gravity * dt * dt * self.load_factor(world);
        let pen_exp = match self.contact_model() {
            ContactModel::Rigid => 0.0,
            ContactModel::Compliant => {
                let m_max = world.bodies.iter().map(|b| b.mass).fold(0.0, f64::max);
                self.per_column() as f64 * m_max * self.gravity / self.k
            }
        };
        // metrics[k] ends at t = (k + 1) dt; grade the steps ending after the drop
        let first = (self.drop_time() / dt).floor() as usize;
        let with_pen = first < n;
        let with_ke = self.walls && n as f64 * dt >= self.settle_time();
        if !trace_is_whole(scenario, trace) {
            let mut out = Vec::new();
            if with_pen {
                out.push(unmeasured("max_penetration", pen_exp, pen_tol));
            }
            if self.walls {
                out.push(unmeasured("contained", 1.0, 0.0));
            }
            if with_ke {
                out.push(unmeasured("settled_ke", 0.0, SETTLED_KE_TOL));
            }
            return out;
        }
        let mut out = Vec::new();
        if with_pen {
            let penetration = trace.metrics[first..].iter().map(|m| m.penetration_max).fold(0.0, f64::max);
            out.push(OracleCheck::abs("max_penetration", penetration, pen_exp, pen_tol));
        }
        let last = &trace.q[n];
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
            let mut end = world.clone();
            end.set_state(last, &trace.v[n]);
            let ratio = end.kinetic_energy() / released;
            out.push(OracleCheck::abs("settled_ke", ratio, 0.0, SETTLED_KE_TOL));
        }
        out
    }
}

/// The `clutter` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clutter;

impl CaseDef for Clutter {
    type Params = ClutterParams;
    const NAME: &'static str = "clutter";
    const SUMMARY: &'static str =
        "seeded spheres and boxes dropped in four columns into a container, with or without walls (SAP §VI-C)";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    const VARIANTS: &'static [CaseVariant] = &[CaseVariant {
        suffix: "rigid",
        set: "contact = \"rigid\"",
        why: "the same pile with rigid contact (rest penetration 0), for the rigid-contact solvers",
    }];
    fn scenario(&self, p: &ClutterParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: p.contact_model().needs() })
    }
    fn grade(&self, p: &ClutterParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::StepMetrics;
    use harness::{Case, Params};
    use rstest::rstest;

    fn params(overrides: &[(&str, &str)]) -> Params {
        crate::test_util::params(&Clutter, overrides)
    }

    use crate::test_util::check as get;

    /// A synthetic run: every object jumps to a resting place on the floor (at its radius or half
    /// edge) and stops; `penetration` is reported for the steps ending at `pen_steps`.
    fn landed(sc: &Scenario, penetration: f64) -> Trace {
        landed_with(sc, penetration, &[sc.steps])
    }

    fn landed_with(sc: &Scenario, penetration: f64, pen_steps: &[usize]) -> Trace {
        let q0 = sc.world.positions();
        let nv = sc.world.velocities().len();
        let mut q = q0.clone();
        for (i, b) in sc.world.bodies.iter().enumerate() {
            let (x, y) = (0.1 * (i % 7) as f64 - 0.3, 0.1 * (i / 7) as f64 - 0.3);
            q[7 * i] = x;
            q[7 * i + 1] = y;
            q[7 * i + 2] = match b.shape {
                Shape::Sphere { radius } => radius,
                _ => 0.05,
            };
        }
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q0], v: vec![vec![0.0; nv]], metrics: vec![] };
        for k in 1..=sc.steps {
            tr.q.push(q.clone());
            tr.v.push(vec![0.0; nv]);
            let pen = if pen_steps.contains(&k) { penetration } else { 0.0 };
            tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, penetration_max: pen, ..Default::default() });
        }
        tr
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // reference values of splitmix64 seeded with 1234567 (Vigna's splitmix64.c)
        let mut r = SplitMix64::new(1_234_567);
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(got, [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423]);
        let mut r = SplitMix64::new(7);
        assert!((0..1000).map(|_| r.next_f64()).all(|u| (0.0..1.0).contains(&u)));
    }

    #[test]
    fn defaults_parse_and_build_a_valid_world() {
        let p: ClutterParams = Clutter.defaults().decode("clutter").unwrap();
        assert_eq!(p, ClutterParams::default());
        let sc = crate::test_util::build(&Clutter, &Clutter.defaults()).unwrap();
        sc.world.validate().unwrap();
        assert_eq!(sc.world.bodies.len(), 20);
        assert_eq!(sc.world.statics.len(), 5);
        assert_eq!(sc.steps, 150);
        assert!(sc.needs.compliant_contact && !sc.needs.rigid_contact);
        assert!((p.sphere_mass() - std::f64::consts::PI / 6.0).abs() < 1e-12 && (p.box_mass() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&Clutter);
    }

    #[test]
    fn same_seed_gives_a_bit_identical_world_and_other_seeds_differ() {
        let a = crate::test_util::build(&Clutter, &params(&[("seed", "42")])).unwrap().world;
        let b = crate::test_util::build(&Clutter, &params(&[("seed", "42")])).unwrap().world;
        assert_eq!(a, b);
        let bits = |w: &World| w.positions().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b));
        let c = crate::test_util::build(&Clutter, &params(&[("seed", "43")])).unwrap().world;
        assert_ne!(bits(&a), bits(&c));
        let neg = crate::test_util::build(&Clutter, &params(&[("seed", "-5")])).unwrap().world;
        assert_ne!(bits(&neg), bits(&a));
    }

    #[rstest]
    fn objects_do_not_overlap_initially(
        #[values(8, 20, 40)] bodies: i64,
        #[values(true, false)] walls: bool,
        #[values(1, 2, 3)] seed: i64,
    ) {
        let prm =
            params(&[("bodies", &bodies.to_string()), ("walls", &walls.to_string()), ("seed", &seed.to_string())]);
        let sc = crate::test_util::build(&Clutter, &prm).unwrap();
        sc.world.validate().unwrap();
        assert_eq!(sc.world.bodies.len(), bodies as usize);
        assert_eq!(sc.world.statics.len(), if walls { 5 } else { 1 });
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        for c in &cs.contacts {
            assert!(c.gap > 0.0, "{:?} penetrates initially: gap {}", c.key, c.gap);
        }
        // nothing touches even with the largest margin: objects are apart by construction
        let far = harness::geometry::detect(&sc.world, 1e-3);
        assert!(far.is_empty(), "{} contacts within 1 mm", far.len());
    }

    #[rstest]
    #[case::all_spheres("0", 0)]
    #[case::all_boxes("1", 20)]
    fn box_fraction_sets_the_assortment(#[case] fraction: &str, #[case] boxes: usize) {
        let sc = crate::test_util::build(&Clutter, &params(&[("box_fraction", fraction)])).unwrap();
        let n = sc.world.bodies.iter().filter(|b| matches!(b.shape, Shape::Box { .. })).count();
        assert_eq!(n, boxes);
    }

    #[test]
    fn default_assortment_mixes_both_kinds_in_four_equal_columns() {
        let p = ClutterParams::default();
        let objs = p.objects();
        let boxes = objs.iter().filter(|o| o.0 == ObjectKind::Box).count();
        assert!(boxes > 0 && boxes < 20, "{boxes}");
        for (i, (kind, pos, rot)) in objs.iter().enumerate() {
            let (j, c) = (i / 4, i % 4);
            let axis = (if c % 2 == 0 { -0.2 } else { 0.2 }, if c < 2 { -0.2 } else { 0.2 });
            assert!((pos.x - axis.0).abs() <= 0.01 && (pos.y - axis.1).abs() <= 0.01, "{i}: {pos:?}");
            assert!((pos.z - (0.15 + 0.2 * j as f64)).abs() < 1e-12);
            assert!((rot.norm() - 1.0).abs() < 1e-12);
            assert_eq!(*kind == ObjectKind::Sphere, *rot == UnitQuaternion::identity());
        }
    }

    #[rstest]
    #[case::not_multiple_of_4("bodies", "10", "bodies: must be a positive multiple of 4")]
    #[case::zero_bodies("bodies", "0", "bodies: must be a positive multiple of 4")]
    #[case::negative_density("density", "-1000", "density: must be > 0")]
    #[case::negative_mu("mu", "-1", "mu: must be >= 0")]
    #[case::fraction_above_one("box_fraction", "1.5", "box_fraction: must be in [0, 1]")]
    #[case::overlapping("dz", "0.1", "dz: must exceed")]
    #[case::in_the_ground("drop_height", "0.05", "drop_height: must exceed")]
    #[case::narrow("width", "0.3", "width: must exceed")]
    #[case::negative_jitter("jitter", "-0.1", "jitter: must be >= 0")]
    #[case::bad_contact("contact", "soft", "contact:")]
    #[case::too_soft("k", "10", "k: too soft")]
    #[case::zero_dt("dt", "0", "dt:")]
    #[case::zero_margin("margin", "0", "margin:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&Clutter, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[test]
    fn non_finite_values_are_rejected_by_name() {
        for (p, name) in [
            (ClutterParams { mu: f64::NAN, ..Default::default() }, "mu:"),
            (ClutterParams { density: f64::NAN, ..Default::default() }, "density:"),
            (ClutterParams { box_fraction: f64::NAN, ..Default::default() }, "box_fraction:"),
            (ClutterParams { dz: f64::INFINITY, ..Default::default() }, "dz:"),
        ] {
            assert!(p.validate().unwrap_err().to_string().starts_with(name), "{name}");
        }
    }

    #[test]
    fn landed_pile_passes_and_penetration_tolerance_scales_with_the_column() {
        let prm = Clutter.defaults();
        let sc = crate::test_util::build(&Clutter, &prm).unwrap();
        let checks = crate::test_util::oracle(&Clutter, &prm, &sc, &landed(&sc, 1e-3));
        assert_eq!(checks.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["max_penetration", "contained"]);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        // 5 per column, boxes 1 kg on spheres 0.5236 kg: L = 2 * 5 * 1 / 0.5236
        let p = ClutterParams::default();
        let l = 2.0 * 5.0 * p.box_mass() / p.sphere_mass();
        assert!((get(&checks, "max_penetration").tolerance - 0.1 * 9.81 * 1e-4 * l).abs() < 1e-15);
        // compliant contact: the expected depth is the heaviest column's static compression,
        // 5 boxes of 1 kg on the contact stiffness k
        let want = 5.0 * p.box_mass() * 9.81 / p.k;
        assert!((get(&checks, "max_penetration").expected - want).abs() < 1e-12 * want, "{want}");
        // twice as dense: 2 kg boxes, twice the compression
        let dense = params(&[("density", "2000")]);
        let sc = crate::test_util::build(&Clutter, &dense).unwrap();
        let c = crate::test_util::oracle(&Clutter, &dense, &sc, &landed(&sc, 1e-3));
        assert!((get(&c, "max_penetration").expected - 2.0 * want).abs() < 1e-12 * want, "{c:?}");
        let deep = crate::test_util::oracle(&Clutter, &prm, &sc, &landed(&sc, 5e-3));
        assert!(!get(&deep, "max_penetration").pass);
    }

    #[test]
    fn penetration_during_the_drop_is_not_graded_and_short_runs_omit_the_check() {
        let prm = Clutter.defaults();
        let p: ClutterParams = prm.decode("clutter").unwrap();
        let sc = crate::test_util::build(&Clutter, &prm).unwrap();
        // t_drop = 2 sqrt(2 * 0.95 / 9.81) = 0.880 s: the step ending at 0.88 s is in the drop,
        // the one ending at 0.89 s is graded
        assert!((p.drop_time() - 0.8802).abs() < 1e-4, "{}", p.drop_time());
        let c = crate::test_util::oracle(&Clutter, &prm, &sc, &landed_with(&sc, 1e-2, &[10, 50, 88]));
        assert!(get(&c, "max_penetration").pass && get(&c, "max_penetration").measured == 0.0, "{c:?}");
        let c = crate::test_util::oracle(&Clutter, &prm, &sc, &landed_with(&sc, 1e-2, &[89]));
        assert!(!get(&c, "max_penetration").pass);
        // a run ending within the drop (0.8 s), or with its last step ending at 0.88 s, the last
        // one in the drop (88 steps, the first graded would be index 88), grades no penetration
        for duration in ["0.8", "0.88"] {
            let short = params(&[("duration", duration)]);
            let sc = crate::test_util::build(&Clutter, &short).unwrap();
            let c = crate::test_util::oracle(&Clutter, &short, &sc, &landed(&sc, 1e-2));
            assert_eq!(crate::test_util::names(&c), ["contained"], "{duration}");
        }
        let graded = params(&[("duration", "0.89")]);
        let sc = crate::test_util::build(&Clutter, &graded).unwrap();
        let c = crate::test_util::oracle(&Clutter, &graded, &sc, &landed(&sc, 1e-2));
        assert_eq!(crate::test_util::names(&c), ["max_penetration", "contained"]);
    }

    #[test]
    fn escaped_object_fails_contained() {
        let prm = Clutter.defaults();
        let sc = crate::test_util::build(&Clutter, &prm).unwrap();
        let mut tr = landed(&sc, 0.0);
        let last = tr.q.last_mut().unwrap();
        last[7 * 3] = 0.45; // outside the wall at x = 0.4
        let c = crate::test_util::oracle(&Clutter, &prm, &sc, &tr);
        assert!(!get(&c, "contained").pass && get(&c, "contained").measured == 0.0);
        // out through each wall, the floor and the top, or on them (the walls' inner faces at
        // ±width/2, the floor at 0 and the top at width bound the inside strictly), the others'
        // coordinates inside
        for (axis, x) in
            [(0, -0.45), (1, 0.45), (1, -0.45), (2, 0.85), (2, -0.01), (0, 0.4), (1, -0.4), (2, 0.0), (2, 0.8)]
        {
            let mut tr = landed(&sc, 0.0);
            tr.q.last_mut().unwrap()[7 * 5 + axis] = x;
            let c = crate::test_util::oracle(&Clutter, &prm, &sc, &tr);
            assert_eq!(get(&c, "contained").measured, 0.0, "axis {axis} at {x}");
        }
        let no_walls = params(&[("walls", "false")]);
        let sc = crate::test_util::build(&Clutter, &no_walls).unwrap();
        let c = crate::test_util::oracle(&Clutter, &no_walls, &sc, &landed(&sc, 0.0));
        assert_eq!(c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["max_penetration"]);
    }

    #[test]
    fn settled_ke_only_for_long_runs_and_compares_with_the_released_energy() {
        let prm = params(&[("duration", "4")]);
        let p: ClutterParams = prm.decode("clutter").unwrap();
        assert!(p.settle_time() < 4.0);
        let sc = crate::test_util::build(&Clutter, &prm).unwrap();
        let mut tr = landed(&sc, 0.0);
        let c = crate::test_util::oracle(&Clutter, &prm, &sc, &tr);
        assert!(get(&c, "settled_ke").pass && get(&c, "settled_ke").measured == 0.0, "{c:?}");
        // one (1 kg) box still moving at 1 m/s: KE 0.5 J against the released energy
        let i = sc.world.bodies.iter().position(|b| matches!(b.shape, Shape::Box { .. })).unwrap();
        let off = sc.world.layout().blocks[i].v_offset;
        tr.v.last_mut().unwrap()[off] = 1.0;
        let ke_box = 0.5 * sc.world.bodies[i].mass;
        let released: f64 = sc
            .world
            .bodies
            .iter()
            .enumerate()
            .map(|(j, b)| b.mass * 9.81 * (tr.q[0][7 * j + 2] - tr.q.last().unwrap()[7 * j + 2]))
            .sum();
        let c = crate::test_util::oracle(&Clutter, &prm, &sc, &tr);
        let ke = get(&c, "settled_ke");
        assert!((ke.measured - ke_box / released).abs() < 1e-12 && !ke.pass, "{ke:?}");
    }

    #[test]
    fn incomplete_trace_fails_every_check() {
        let prm = Clutter.defaults();
        let sc = crate::test_util::build(&Clutter, &prm).unwrap();
        let mut tr = landed(&sc, 0.0);
        tr.completed = false;
        let checks = crate::test_util::oracle(&Clutter, &prm, &sc, &tr);
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|c| !c.pass));
    }
}
