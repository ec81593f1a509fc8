//! `table_pile`: Macklin et al.'s table pile (§10.1.5, Table 2): "unstructured
//! piling of non-convex tables, each m = 4.7 kg, mu = 0.7", 54 bodies and 936 contacts at
//! `h = 0.0083 s`, 4 Newton × 20 linear iterations. The paper's claim: the solver captures
//! stick/slip transitions and forms stable piles. Each table is one non-convex rigid body, the
//! union of five boxes ([`Shape::Compound`]).
//!
//! # Scene
//!
//! * **Table.** A top of `top_length` (x) × `top_width` (y) × `top_thickness` and four legs of
//!   square section `leg_width` and height `leg_height`, flush with the top's corners; mass `mass`
//!   spread uniformly over the five boxes. The paper gives no dimensions: the defaults are a small
//!   side table, 0.6 × 0.4 × 0.33 m. The body frame is the centroid (built with
//!   [`Shape::centred_compound`]; the table is symmetric, so its principal axes are the box axes).
//! * **Drop.** Table `i` (0 = lowest) starts at rest, offset from the vertical drop axis by a
//!   uniform random amount in `[-spread, spread]` along x and along y, turned by a uniform yaw
//!   about z and then tilted by an angle uniform in `[0, tilt_deg]` about a horizontal axis of
//!   uniform direction. Tables are stacked along the axis by their exact vertical extents (the
//!   lowest and highest box corners of the turned table): the lowest table's lowest point is at
//!   `drop_height`, and each next table's lowest point is `gap` above the previous one's highest
//!   point, so no two tables overlap and none touches the ground initially. Landing on each other
//!   crossed and tilted, they form an unstructured pile.
//! * **Seeding.** [`SplitMix64`] seeded with `seed`, five numbers per table in body order: x offset,
//!   y offset, yaw, tilt, tilt axis direction.
//! * **Contact.** Rigid contact, `mu` on all surfaces, the ground is the half-space `z <= 0`. Box
//!   feet on the ground touch at corners (closed form), tables on tables at parry box–box
//!   manifolds, part by part (harness `geometry`).
//! * **Detection margin.** As in `clutter`: a falling table must be caught by a speculative
//!   contact before it reaches what it lands on. Free-falling tables do not turn (they start at
//!   rest and gravity exerts no torque), so the fastest approach is the top table's landing speed
//!   `v_max = sqrt(2 g z_top)` with `z_top` its lowest point's initial height (impacts are
//!   inelastic). The stepper sizes the margin per contact (harness `geometry::detect_for_step`):
//!   `margin` plus `dt` times the contact's predicted approach speed, at most `margin + v_max dt`
//!   (0.056 m at the defaults) for a landing table.
//! * **Defaults.** 6 tables, `dt = 8.3 ms`, 2.5 s (301 steps): the drop ends at `t_drop` = 1.46 s
//!   (below), the pile then has 1.04 s to come to rest. `--set n=54` is the paper's pile (the
//!   column is then about 26 m tall, the landing margin 0.19 m, and `settled_speed` needs `duration >= 5.6 s`).
//!
//! # Oracle checks
//!
//! No closed-form trajectory exists; the checks grade what any correct solver must achieve. With
//! `z_c` the highest initial centre, the **drop** lasts `t_drop = 2 sqrt(2 z_c / g)` (the top
//! table's free-fall time, and as long again for the pile to topple and spread, as in `clutter`).
//!
//! * `max_penetration` (only when steps end after `t_drop`) — the largest
//!   `StepMetrics.penetration_max` over the steps ending after `t_drop` (m); expected 0; tolerance
//!   `PENETRATION_REL_TOL g dt^2 L` with load factor `L = 2 n` (crate doc): a contact at the
//!   bottom of the pile carries at most the weight of all `n` tables, and the Delassus entry of a
//!   table–table contact is at least `2/m` (`clutter`'s `2 n_c m_max / m_min` with one mass).
//!   8.1e-4 m at the defaults. The drop is not graded, for `clutter`'s reason: a velocity-level
//!   scheme imposes the gap linearised at the start of the step, and a tumbling box corner or
//!   edge sliding over another box departs from it by a geometric second-order error (`|w|^2 r
//!   dt^2 / 2`, millimetres at impact speeds) that no solver of the linearised problem removes.
//! * `tunnelling_depth` — the deepest point of any table below the ground over the whole run,
//!   `max(0, -min_{k, i, corner} z)` (m); expected 0; tolerance half the thinnest part,
//!   `min(leg_width, top_thickness) / 2` (15 mm at the defaults). A part whose midplane has gone
//!   through a surface is pushed out on the far side by a half-space-like contact normal, or not
//!   at all: that is tunnelling, whatever the solver. The impact transients above stay far below.
//! * `settled_speed` (only when `duration >= settle_time = t_drop + ` [`SETTLE_ALLOWANCE`]) — the
//!   largest speed of any material point at the end, bounded per table by `|v| + |w| r_b` (`r_b`
//!   the table's bounding radius) (m/s); expected 0; tolerance `g dt` (0.081 m/s), the speed one
//!   step of unsupported gravity adds. A settled pile is supported everywhere and its sticking
//!   contacts creep at most at `CREEP_REL_TOL g dt` (crate doc); the bound leaves room for the
//!   last slow slips of the pile while rejecting any table still falling, tumbling or sliding
//!   freely, and a pile kept in motion by the solver (energy injection, jitter). Tables cannot
//!   roll away (unlike `clutter`'s spheres), so a correct pile does come to rest. The allowance
//!   of 1 s (half `clutter`'s, which includes rolling spheres) is a judgement, not a derivation.
//!
//! Measured at the defaults (release, seed 1): PGS and CANAL pass all three checks (penetration
//! 3.5e-4 / 2.7e-4 m, end speed 4e-6 / 2e-14 m/s); SAP exceeds `max_penetration` (1.19e-3 m, its
//! regularised contact on feet far from the centre of mass) and is still settling at 2.5 s
//! (0.12 m/s; it passes `settled_speed` at 4 s); SubADMM likewise (9.3e-4 m, 0.13 m/s);
//! Drumwright keeps the pile moving (16 m/s at 2.5 s); NSN diverges at step 81.

use crate::PENETRATION_REL_TOL;
use crate::{check, default_struct, trace_is_whole, unmeasured, ContactModel, SplitMix64};
use harness::model::{RigidBody, Shape, ShapePart, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{Quaternion, Unit, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("table_pile.toml");
const SOURCE: &str = "cases/src/table_pile.toml";

/// Largest number of tables accepted.
pub const MAX_TABLES: i64 = 1000;
/// Time allowed for the pile to come to rest after the drop (s), for `settled_speed`.
pub const SETTLE_ALLOWANCE: f64 = 1.0;

/// Parameters of the `table_pile` case (defaults in `cases/src/table_pile.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TablePileParams {
    /// Number of tables (1 ..= [`MAX_TABLES`]).
    pub n: i64,
    /// Seed of the pseudo-random drop (any integer; its bits seed [`SplitMix64`]).
    pub seed: i64,
    /// Mass of one table (kg, > 0).
    pub mass: f64,
    /// Length of the top along x (m, > 0).
    pub top_length: f64,
    /// Width of the top along y (m, > 0).
    pub top_width: f64,
    /// Thickness of the top (m, > 0).
    pub top_thickness: f64,
    /// Side of a leg's square section (m, > 0, below half the top's width and length).
    pub leg_width: f64,
    /// Height of a leg (m, > 0).
    pub leg_height: f64,
    /// Largest horizontal offset of a table from the drop axis, per axis (m, >= 0).
    pub spread: f64,
    /// Largest tilt from upright (degrees, in `[0, 90)`).
    pub tilt_deg: f64,
    /// Height of the lowest table's lowest point above the ground (m, > 0).
    pub drop_height: f64,
    /// Vertical clearance between the extents of consecutive tables (m, > 0).
    pub gap: f64,
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

impl Default for TablePileParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for TablePileParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(1..=MAX_TABLES).contains(&self.n) {
            return Err(harness::FieldError::new("n", format!("must be in [1, {MAX_TABLES}], got {}", self.n)));
        }
        for (name, v) in [
            ("mass", self.mass),
            ("top_length", self.top_length),
            ("top_width", self.top_width),
            ("top_thickness", self.top_thickness),
            ("leg_width", self.leg_width),
            ("leg_height", self.leg_height),
            ("drop_height", self.drop_height),
            ("gap", self.gap),
            ("gravity", self.gravity),
            ("margin", self.margin),
        ] {
            check::positive(name, v)?;
        }
        check::non_negative("spread", self.spread)?;
        check::non_negative("mu", self.mu)?;
        if !(0.0..90.0).contains(&self.tilt_deg) {
            return Err(harness::FieldError::new("tilt_deg", format!("must be in [0, 90), got {}", self.tilt_deg)));
        }
        let half_side = 0.5 * self.top_length.min(self.top_width);
        if self.leg_width >= half_side {
            return Err(harness::FieldError::new(
                "leg_width",
                format!(
                    "must be below half the top's smaller side ({half_side}) so that the legs stay apart, got {}",
                    self.leg_width
                ),
            ));
        }
        check::time_grid(self.dt, self.duration)
    }
}

impl TablePileParams {
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The table's parts (top first, then the legs) in a frame with the feet at `z = 0`.
    fn parts(&self) -> Vec<ShapePart> {
        let (l, w, t, lw, lh) = (self.top_length, self.top_width, self.top_thickness, self.leg_width, self.leg_height);
        let top = ShapePart::new(
            Shape::Box { half_extents: [0.5 * l, 0.5 * w, 0.5 * t] },
            Vector3::new(0.0, 0.0, lh + 0.5 * t),
        );
        let leg = Shape::Box { half_extents: [0.5 * lw, 0.5 * lw, 0.5 * lh] };
        let (x, y) = (0.5 * (l - lw), 0.5 * (w - lw));
        let legs = [(x, y), (-x, y), (x, -y), (-x, -y)]
            .map(|(x, y)| ShapePart::new(leg.clone(), Vector3::new(x, y, 0.5 * lh)));
        std::iter::once(top).chain(legs).collect()
    }

    /// The table shape, centred on its centroid.
    pub fn table_shape(&self) -> Shape {
        Shape::centred_compound(self.parts()).0
    }

    /// Height of the table's centroid above its feet when upright (m).
    pub fn centroid_height(&self) -> f64 {
        Shape::centred_compound(self.parts()).1.z
    }

    /// The tables' initial centres and orientations, in body order (see the module doc).
    pub fn placements(&self) -> Vec<(Vector3<f64>, UnitQuaternion<f64>)> {
        let shape = self.table_shape();
        let mut rng = SplitMix64::new(self.seed as u64);
        let tau = 2.0 * std::f64::consts::PI;
        let mut out: Vec<(Vector3<f64>, UnitQuaternion<f64>)> = Vec::with_capacity(self.n.max(0) as usize);
        let mut floor = self.drop_height;
        for _ in 0..self.n.max(0) {
            let x = self.spread * (2.0 * rng.next_f64() - 1.0);
            let y = self.spread * (2.0 * rng.next_f64() - 1.0);
            let yaw = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), tau * rng.next_f64());
            let tilt = self.tilt_deg.to_radians() * rng.next_f64();
            let dir = tau * rng.next_f64();
            let axis = Unit::new_unchecked(Vector3::new(dir.cos(), dir.sin(), 0.0));
            let rot = UnitQuaternion::from_axis_angle(&axis, tilt) * yaw;
            let (lo, hi) = vertical_extent(&shape, &rot);
            out.push((Vector3::new(x, y, floor - lo), rot));
            floor += hi - lo + self.gap;
        }
        out
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = ContactModel::Rigid.material(self.mu, 1.0, 0.0);
        let shape = self.table_shape();
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        for (i, (x, rot)) in self.placements().into_iter().enumerate() {
            w.bodies
                .push(RigidBody::new(format!("table{i}"), shape.clone(), self.mass, x, material).with_orientation(rot));
        }
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        w
    }

    /// End of the drop, `t_drop = 2 sqrt(2 z_c / g)` with `z_c` the highest initial centre (s).
    pub fn drop_time(&self) -> f64 {
        let z_c = self.placements().last().map_or(0.0, |(x, _)| x.z);
        2.0 * (2.0 * z_c / self.gravity).sqrt()
    }

    /// Time after which the pile is expected at rest, `drop_time() + SETTLE_ALLOWANCE` (s).
    pub fn settle_time(&self) -> f64 {
        self.drop_time() + SETTLE_ALLOWANCE
    }

    /// Tolerance of `max_penetration`, `PENETRATION_REL_TOL g dt^2 2 n` (m).
    pub fn penetration_tolerance(&self) -> f64 {
        PENETRATION_REL_TOL * self.gravity * self.dt * self.dt * 2.0 * self.n as f64
    }

    /// Tolerance of `tunnelling_depth`, half the thinnest part (m).
    pub fn tunnelling_tolerance(&self) -> f64 {
        0.5 * self.leg_width.min(self.top_thickness)
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let (pen_tol, tun_tol, speed_tol) =
            (self.penetration_tolerance(), self.tunnelling_tolerance(), self.gravity * dt);
        // metrics[k] ends at t = (k + 1) dt; grade the steps ending after the drop
        let first = (self.drop_time() / dt).floor() as usize;
        let (with_pen, with_speed) = (first < n, n as f64 * dt >= self.settle_time());
        if !trace_is_whole(scenario, trace) {
            let mut out = Vec::new();
            if with_pen {
                out.push(unmeasured("max_penetration", 0.0, pen_tol));
            }
            out.push(unmeasured("tunnelling_depth", 0.0, tun_tol));
            if with_speed {
                out.push(unmeasured("settled_speed", 0.0, speed_tol));
            }
            return out;
        }
        let world = &scenario.world;
        let mut out = Vec::new();
        if with_pen {
            let penetration = trace.metrics[first..].iter().map(|m| m.penetration_max).fold(0.0, f64::max);
            out.push(OracleCheck::abs("max_penetration", penetration, 0.0, pen_tol));
        }
        let lowest = trace.q.iter().map(|q| lowest_point(world, q)).fold(f64::INFINITY, nan_min);
        out.push(OracleCheck::abs("tunnelling_depth", if lowest >= 0.0 { 0.0 } else { -lowest }, 0.0, tun_tol));
        if with_speed {
            let v = &trace.v[n];
            let speed = world
                .bodies
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let t = &v[6 * i..6 * i + 6];
                    Vector3::new(t[0], t[1], t[2]).norm()
                        + Vector3::new(t[3], t[4], t[5]).norm() * b.shape.bounding_radius()
                })
                .fold(0.0, nan_max);
            out.push(OracleCheck::abs("settled_speed", speed, 0.0, speed_tol));
        }
        out
    }
}

/// `min` that propagates NaN (a diverged state must not look like a good one).
fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// `max` that propagates NaN.
fn nan_max(a: f64, b: f64) -> f64 {
    -nan_min(-a, -b)
}

/// The world-frame box corners of `shape` (box parts of a compound, or a box) turned by `rot`
/// about the body origin.
fn corners(shape: &Shape, rot: &UnitQuaternion<f64>) -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    for p in shape.parts() {
        if let Shape::Box { half_extents: h } = p.shape {
            for k in 0..8 {
                let c = Vector3::from_fn(|i, _| if k & (1 << i) != 0 { -h[i] } else { h[i] });
                out.push(rot * (p.translation + p.rotation * c));
            }
        }
    }
    out
}

/// Lowest and highest `z` of `shape`'s corners turned by `rot`, relative to the body origin (m).
fn vertical_extent(shape: &Shape, rot: &UnitQuaternion<f64>) -> (f64, f64) {
    corners(shape, rot).iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| (lo.min(c.z), hi.max(c.z)))
}

/// The lowest box corner of all bodies at configuration `q` (7 numbers per body: centre and
/// quaternion `(w, i, j, k)`) (m).
fn lowest_point(world: &World, q: &[f64]) -> f64 {
    world
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let s = &q[7 * i..7 * i + 7];
            let rot = UnitQuaternion::from_quaternion(Quaternion::new(s[3], s[4], s[5], s[6]));
            s[2] + vertical_extent(&b.shape, &rot).0
        })
        .fold(f64::INFINITY, nan_min)
}

/// The `table_pile` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct TablePile;

impl CaseDef for TablePile {
    type Params = TablePileParams;
    const NAME: &'static str = "table_pile";
    const SUMMARY: &'static str =
        "non-convex tables (5-box compounds, 4.7 kg, mu = 0.7) dropped into an unstructured pile (Macklin Table 2)";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &TablePileParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: ContactModel::Rigid.needs() })
    }
    fn grade(&self, p: &TablePileParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&TablePile, overrides)
    }

    use crate::test_util::check as get;

    /// A synthetic run: every table jumps to an upright resting place on the ground, side by side,
    /// and stops; `penetration` is reported for the steps ending at `pen_steps`.
    fn landed(sc: &Scenario, p: &TablePileParams, penetration: f64, pen_steps: &[usize]) -> Trace {
        let q0 = sc.world.positions();
        let nv = sc.world.velocities().len();
        let mut q = q0.clone();
        for i in 0..sc.world.bodies.len() {
            q[7 * i..7 * i + 7].copy_from_slice(&[i as f64, 0.0, p.centroid_height(), 1.0, 0.0, 0.0, 0.0]);
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
    fn defaults_follow_the_paper_and_build_a_valid_world() {
        let p: TablePileParams = TablePile.defaults().decode("table_pile").unwrap();
        assert_eq!(p, TablePileParams::default());
        assert_eq!((p.mass, p.mu, p.dt), (4.7, 0.7, 0.0083));
        let sc = crate::test_util::build(&TablePile, &TablePile.defaults()).unwrap();
        assert_eq!((sc.world.bodies.len(), sc.world.statics.len(), sc.steps), (6, 1, 301));
        assert!(sc.needs.rigid_contact && !sc.needs.compliant_contact);
        let b = &sc.world.bodies[0];
        assert_eq!(b.mass, 4.7);
        let Shape::Compound { parts } = &b.shape else { panic!("a table is a compound") };
        assert_eq!(parts.len(), 5);
        // upright, the feet are at z = 0 when the centre is at the centroid height: volumes
        // 0.6 x 0.4 x 0.03 (centre 0.315) and 4 x 0.04^2 x 0.3 (centre 0.15)
        let (vt, vl) = (0.6 * 0.4 * 0.03, 4.0 * 0.04 * 0.04 * 0.3);
        assert!((p.centroid_height() - (vt * 0.315 + vl * 0.15) / (vt + vl)).abs() < 1e-12);
        // the default run grades all three checks
        assert!(p.settle_time() <= p.duration, "settle time {}", p.settle_time());
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&TablePile);
    }

    #[rstest]
    fn tables_start_apart_above_the_ground_and_the_seed_fixes_the_world(
        #[values(1, 6, 20)] n: i64,
        #[values(1, 2, 3)] seed: i64,
    ) {
        let prm = params(&[("n", &n.to_string()), ("seed", &seed.to_string())]);
        let sc = crate::test_util::build(&TablePile, &prm).unwrap();
        assert_eq!(sc.world.bodies.len(), n as usize);
        // no contact within 1 mm: no overlap, nothing on the ground
        let near = harness::geometry::detect(&sc.world, 1e-3);
        assert!(near.is_empty(), "{} contacts within 1 mm", near.len());
        let p: TablePileParams = prm.decode("table_pile").unwrap();
        assert!((lowest_point(&sc.world, &sc.world.positions()) - p.drop_height).abs() < 1e-12);
        assert_eq!(crate::test_util::build(&TablePile, &prm).unwrap().world, sc.world);
    }

    #[test]
    fn tables_are_turned_and_tilted_within_the_bounds() {
        let p = TablePileParams { n: 40, ..Default::default() };
        let placed = p.placements();
        let mut max_tilt = 0.0f64;
        for (x, rot) in &placed {
            assert!(x.x.abs() <= p.spread && x.y.abs() <= p.spread);
            let tilt = (rot * Vector3::z()).z.clamp(-1.0, 1.0).acos();
            assert!(tilt <= p.tilt_deg.to_radians() + 1e-12);
            max_tilt = max_tilt.max(tilt);
        }
        // 40 uniform tilts reach the upper part of the range
        assert!(max_tilt > 0.8 * p.tilt_deg.to_radians(), "{max_tilt}");
        let other = TablePileParams { seed: 2, ..p.clone() }.placements();
        assert_ne!(placed[0], other[0]);
    }

    #[rstest]
    #[case::zero_tables("n", "0", "n: must be in [1, 1000]")]
    #[case::negative_mass("mass", "-4.7", "mass: must be > 0")]
    #[case::zero_top("top_thickness", "0", "top_thickness: must be > 0")]
    #[case::fat_legs("leg_width", "0.2", "leg_width: must be below half")]
    #[case::negative_spread("spread", "-0.1", "spread: must be >= 0")]
    #[case::tilt_90("tilt_deg", "90", "tilt_deg: must be in [0, 90)")]
    #[case::zero_gap("gap", "0", "gap: must be > 0")]
    #[case::on_the_ground("drop_height", "0", "drop_height: must be > 0")]
    #[case::negative_mu("mu", "-0.7", "mu: must be >= 0")]
    #[case::zero_dt("dt", "0", "dt:")]
    #[case::zero_margin("margin", "0", "margin:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&TablePile, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[test]
    fn a_pile_at_rest_passes_and_tolerances_follow_the_derivation() {
        let prm = TablePile.defaults();
        let p: TablePileParams = prm.decode("table_pile").unwrap();
        let sc = crate::test_util::build(&TablePile, &prm).unwrap();
        let checks = crate::test_util::oracle(&TablePile, &prm, &sc, &landed(&sc, &p, 5e-4, &[sc.steps]));
        let names: Vec<_> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["max_penetration", "tunnelling_depth", "settled_speed"]);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        assert!((get(&checks, "max_penetration").tolerance - 0.1 * 9.81 * 0.0083f64.powi(2) * 12.0).abs() < 1e-15);
        assert_eq!(get(&checks, "tunnelling_depth").tolerance, 0.015);
        assert!((get(&checks, "settled_speed").tolerance - 9.81 * 0.0083).abs() < 1e-15);
        assert_eq!(get(&checks, "tunnelling_depth").measured, 0.0);
    }

    #[test]
    fn penetration_after_the_drop_a_sunken_table_and_a_moving_one_fail() {
        let prm = TablePile.defaults();
        let p: TablePileParams = prm.decode("table_pile").unwrap();
        let sc = crate::test_util::build(&TablePile, &prm).unwrap();
        let first = (p.drop_time() / p.dt).floor() as usize;
        // deep penetration during the drop is not graded, after it is
        let c = crate::test_util::oracle(&TablePile, &prm, &sc, &landed(&sc, &p, 1e-2, &[10, first]));
        assert!(get(&c, "max_penetration").pass, "{c:?}");
        let c = crate::test_util::oracle(&TablePile, &prm, &sc, &landed(&sc, &p, 1e-2, &[first + 1]));
        assert!(!get(&c, "max_penetration").pass);
        // one table sunk 2 cm into the ground for one step: tunnelling
        let mut tr = landed(&sc, &p, 0.0, &[]);
        tr.q[50][2] -= 0.02;
        let c = crate::test_util::oracle(&TablePile, &prm, &sc, &tr);
        let t = get(&c, "tunnelling_depth");
        assert!(!t.pass && (t.measured - 0.02).abs() < 1e-12, "{t:?}");
        // one table still spinning at 1 rad/s about z at the end
        let mut tr = landed(&sc, &p, 0.0, &[]);
        tr.v.last_mut().unwrap()[6 * 2 + 5] = 1.0;
        let c = crate::test_util::oracle(&TablePile, &prm, &sc, &tr);
        let s = get(&c, "settled_speed");
        assert!(!s.pass && (s.measured - sc.world.bodies[2].shape.bounding_radius()).abs() < 1e-12, "{s:?}");
        // a NaN state fails instead of looking settled
        let mut tr = landed(&sc, &p, 0.0, &[]);
        tr.q[5][2] = f64::NAN;
        assert!(!get(&crate::test_util::oracle(&TablePile, &prm, &sc, &tr), "tunnelling_depth").pass);
    }

    #[test]
    fn short_runs_omit_the_checks_they_cannot_grade() {
        let short = params(&[("duration", "1.0")]);
        let p: TablePileParams = short.decode("table_pile").unwrap();
        assert!(p.drop_time() > 1.0);
        let sc = crate::test_util::build(&TablePile, &short).unwrap();
        let c = crate::test_util::oracle(&TablePile, &short, &sc, &landed(&sc, &p, 0.0, &[]));
        assert_eq!(c.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["tunnelling_depth"]);
    }

    /// The penetration is graded from the first step ending after the drop: a run whose last
    /// step ends at the drop (`n = floor(t_drop / h)`) has none to grade.
    #[test]
    fn penetration_is_graded_after_the_drop_only() {
        let p: TablePileParams = TablePile.defaults().decode("table_pile").unwrap();
        let first = (p.drop_time() / p.dt).floor();
        for (steps, graded) in [(first, false), (first + 1.0, true)] {
            let prm = params(&[("duration", &(steps * p.dt).to_string())]);
            let p: TablePileParams = prm.decode("table_pile").unwrap();
            let sc = crate::test_util::build(&TablePile, &prm).unwrap();
            assert_eq!(sc.steps as f64, steps);
            let c = crate::test_util::oracle(&TablePile, &prm, &sc, &landed(&sc, &p, 0.0, &[]));
            assert_eq!(c.iter().any(|c| c.name == "max_penetration"), graded, "{steps} steps");
        }
    }

    #[test]
    fn partial_trace_is_unmeasured() {
        let prm = TablePile.defaults();
        let p: TablePileParams = prm.decode("table_pile").unwrap();
        let sc = crate::test_util::build(&TablePile, &prm).unwrap();
        let mut tr = landed(&sc, &p, 0.0, &[]);
        tr.completed = false;
        let checks = crate::test_util::oracle(&TablePile, &prm, &sc, &tr);
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| !c.pass && c.measured.is_nan()));
        let mut cut = landed(&sc, &p, 0.0, &[]);
        cut.q.truncate(10);
        assert!(crate::test_util::oracle(&TablePile, &prm, &sc, &cut).iter().all(|c| !c.pass));
    }
}
