//! Bilateral joints between two rigid bodies or a body and the world, and their constraint rows.
//!
//! A joint contributes scalar constraint rows `C_k(q) = 0` with Jacobian rows `G_k` in the
//! generalized velocities (`dC_k/dt = G_k v`), evaluated at the current configuration. Every row
//! acts on at most two rigid bodies, so `G_k` is stored per block like the contact Jacobians
//! ([`api::JBlock`]). The rows of one joint (world-frame components, so a planar body
//! sees only the rows that its free DOFs can move):
//!
//! | kind | rows | `C(q)` |
//! |---|---|---|
//! | [`JointKind::Ball`] | 3 | `p_A - p_B` (world x, y, z), `p_X = x_X + R_X anchor_X` |
//! | [`JointKind::Hinge`] | 5 | the 3 ball rows, then `(R_A u_1) . (R_B a_B)`, `(R_A u_2) . (R_B a_B)` with `u_1, u_2 ⊥ a_A` |
//! | [`JointKind::Axial`] | 1 | `d . (p_A - p_B)`, `d` a fixed world direction (a one-dimensional tie, e.g. a foundation spring) |
//! | [`JointKind::Angular`] | 1 | `atan2(a . (y × x), y . x)`, `x = R_A r_A`, `y = R_B r_B`, `a = R_A a_A`: the rotation of A relative to B about the axis since the joint was made |
//!
//! With `body_b = None` the "B side" is the world: `p_B = anchor_b` and `R_B = I`.
//!
//! An [`JointKind::Angular`] row with compliance is a torsional spring–damper about the axis (a
//! hinge's bending stiffness, Macklin et al. Eqs. 7–8: `C + e λ = 0`, `e = 1/k`); together with a
//! hinge it makes the hinge elastic. Its `C` is the spring's deflection, not a constraint error,
//! so the drift metric leaves compliant angular rows out ([`BilateralSet::drift_max`]).
//!
//! A joint is rigid (`compliance = None`) or a stiff spring–damper along each row
//! (`compliance = Some(JointCompliance { stiffness, damping })`): row force
//! `-stiffness C - damping dC/dt`, the model Drumwright uses for every constraint (its Eq. 18,
//! with `k = 1e15` for "rigid to double precision").

use super::{RigidBody, World};
pub use api::bilateral::{BilateralRow, BilateralSet, GBlock, JointCompliance};
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// What a joint constrains.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JointKind {
    /// Ball (spherical) joint: the anchor points coincide (3 rows).
    Ball,
    /// Hinge (revolute) joint: the anchors coincide and the unit axis `axis_a` (body-A frame) stays
    /// parallel to `axis_b` (body-B frame, or world frame if B is the world) (5 rows).
    Hinge {
        /// Hinge axis in body A's frame (unit).
        axis_a: Vector3<f64>,
        /// Hinge axis in body B's frame, or in the world frame when B is the world (unit).
        axis_b: Vector3<f64>,
    },
    /// One-dimensional tie: the anchors keep their separation along the fixed world direction
    /// `direction` (unit) (1 row). With compliance it is a linear spring–damper along `direction`.
    Axial {
        /// World direction (unit).
        direction: Vector3<f64>,
    },
    /// Relative rotation about an axis: the angle between the reference direction `ref_a` of A
    /// and `ref_b` of B (equal when the joint was made), measured about A's axis (1 row). With
    /// compliance it is a torsional spring–damper (the bending stiffness of a hinge).
    Angular {
        /// Axis in body A's frame (unit).
        axis_a: Vector3<f64>,
        /// Reference direction in body A's frame (unit, perpendicular to `axis_a`).
        ref_a: Vector3<f64>,
        /// The same direction in body B's frame, or in the world frame when B is the world (unit).
        ref_b: Vector3<f64>,
    },
}

/// A bilateral joint between rigid body `body_a` and body `body_b` (or the world).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Joint {
    /// Name for reports.
    pub name: String,
    /// What it constrains.
    pub kind: JointKind,
    /// Index of body A in [`World::bodies`].
    pub body_a: usize,
    /// Index of body B, or `None` for the world.
    pub body_b: Option<usize>,
    /// Anchor in body A's frame (m).
    pub anchor_a: Vector3<f64>,
    /// Anchor in body B's frame, or a world point when B is the world (m).
    pub anchor_b: Vector3<f64>,
    /// `None`: rigid joint; `Some`: spring–damper along every row.
    #[serde(default)]
    pub compliance: Option<JointCompliance>,
}

impl World {
    /// The rows of every joint of this world at its current state. Rows whose Jacobian is
    /// structurally zero over the free DOFs (e.g. the out-of-plane rows of a planar body) are left
    /// out: no impulse can act through them.
    pub fn bilateral_rows(&self) -> BilateralSet {
        let world = self;
        let offsets = velocity_offsets(world);
        let mut rows = Vec::new();
        for (ji, j) in world.joints.iter().enumerate() {
            for (index, raw) in j.raw_rows(world).into_iter().enumerate() {
                let row = row_from_raw(world, &offsets, ji, index, raw);
                if !row.jacobian.is_empty() {
                    rows.push(row);
                }
            }
        }
        BilateralSet { rows }
    }

    /// The rows of `like` (same joints, row indices and order) re-evaluated at the current state
    /// of this world: violations, `dG/dt v` and Jacobians there. A row keeps its place even where
    /// its Jacobian happens to vanish (it then has no block), so position-level solvers can
    /// evaluate `C(q)` and `G(q)` at their iterates and match rows by position.
    pub fn bilateral_rows_like(&self, like: &BilateralSet) -> BilateralSet {
        let world = self;
        let offsets = velocity_offsets(world);
        let mut raw: Vec<Option<Vec<RawRow>>> = (0..world.joints.len()).map(|_| None).collect();
        let rows = like
            .rows
            .iter()
            .map(|r| {
                let joint_rows = raw[r.joint].get_or_insert_with(|| world.joints[r.joint].raw_rows(world));
                row_from_raw(world, &offsets, r.joint, r.index, joint_rows[r.index])
            })
            .collect();
        BilateralSet { rows }
    }

    /// Largest `|C|` over the rows `rows` of this world's joints, leaving out springs
    /// ([`Joint::is_spring`]: their `C` is a deflection, not a drift) (m or rad; 0 without rows).
    pub fn joint_drift_max(&self, rows: &BilateralSet) -> f64 {
        let world = self;
        rows.rows.iter().filter(|r| !world.joints[r.joint].is_spring()).fold(0.0, |m, r| {
            if r.violation.is_nan() {
                f64::NAN
            } else {
                m.max(r.violation.abs())
            }
        })
    }
}

/// Row `index` of joint `ji` from its raw row on the full twists: the Jacobian restricted to
/// each body's free DOFs, blocks that vanish there left out.
fn row_from_raw(world: &World, offsets: &[usize], ji: usize, index: usize, raw: RawRow) -> BilateralRow {
    let j = &world.joints[ji];
    let mut jacobian = Vec::with_capacity(2);
    for (bi, g) in [(Some(j.body_a), raw.ga), (j.body_b, raw.gb)] {
        let Some(bi) = bi else { continue };
        let b = &world.bodies[bi];
        let mut row = [0.0; 6];
        for (c, full) in b.dofs.free_indices().enumerate() {
            row[c] = g[full];
        }
        if row.iter().any(|x| *x != 0.0) {
            jacobian.push(GBlock { v_offset: offsets[bi], ncols: b.dofs.count(), row });
        }
    }
    BilateralRow { joint: ji, index, violation: raw.c, gdot_v: raw.gdot_v, jacobian, compliance: j.compliance }
}

/// First velocity index of every rigid body.
fn velocity_offsets(world: &World) -> Vec<usize> {
    let mut out = Vec::with_capacity(world.bodies.len());
    let mut o = 0;
    for b in &world.bodies {
        out.push(o);
        o += b.dofs.count();
    }
    out
}

/// A row on the full twists `(v, w)` of both sides.
#[derive(Clone, Copy)]
struct RawRow {
    c: f64,
    gdot_v: f64,
    ga: [f64; 6],
    gb: [f64; 6],
}

/// World point, lever arm, orientation, linear and angular velocity of one side.
struct Side {
    p: Vector3<f64>,
    r: Vector3<f64>,
    rot: UnitQuaternion<f64>,
    w: Vector3<f64>,
}

impl Side {
    fn of(body: Option<&RigidBody>, anchor: &Vector3<f64>) -> Side {
        match body {
            Some(b) => {
                let r = b.orientation * anchor;
                Side { p: b.position + r, r, rot: b.orientation, w: b.angular_velocity }
            }
            None => Side { p: *anchor, r: Vector3::zeros(), rot: UnitQuaternion::identity(), w: Vector3::zeros() },
        }
    }
}

fn twist_row(lin: Vector3<f64>, ang: Vector3<f64>) -> [f64; 6] {
    [lin.x, lin.y, lin.z, ang.x, ang.y, ang.z]
}

impl Joint {
    /// A ball joint between `body_a` and `body_b` (or the world) at the world point `point`,
    /// anchors taken from the current configuration of `world`.
    pub fn ball_at(world: &World, body_a: usize, body_b: Option<usize>, point: Vector3<f64>) -> Joint {
        let (anchor_a, anchor_b) = Self::anchors(world, body_a, body_b, &point);
        Joint {
            name: format!("ball{body_a}"),
            kind: JointKind::Ball,
            body_a,
            body_b,
            anchor_a,
            anchor_b,
            compliance: None,
        }
    }

    /// A hinge between `body_a` and `body_b` (or the world) through the world point `point` about
    /// the world direction `axis` (normalised here), from the current configuration of `world`.
    pub fn hinge_at(
        world: &World,
        body_a: usize,
        body_b: Option<usize>,
        point: Vector3<f64>,
        axis: Vector3<f64>,
    ) -> Joint {
        let (anchor_a, anchor_b) = Self::anchors(world, body_a, body_b, &point);
        let axis = axis.normalize();
        let axis_a = world.bodies[body_a].orientation.inverse() * axis;
        let axis_b = match body_b {
            Some(b) => world.bodies[b].orientation.inverse() * axis,
            None => axis,
        };
        Joint {
            name: format!("hinge{body_a}"),
            kind: JointKind::Hinge { axis_a, axis_b },
            body_a,
            body_b,
            anchor_a,
            anchor_b,
            compliance: None,
        }
    }

    /// A one-dimensional tie along the world direction `direction` between the body point at world
    /// position `point` and the same point of body B (or of the world).
    pub fn axial_at(
        world: &World,
        body_a: usize,
        body_b: Option<usize>,
        point: Vector3<f64>,
        direction: Vector3<f64>,
    ) -> Joint {
        let (anchor_a, anchor_b) = Self::anchors(world, body_a, body_b, &point);
        Joint {
            name: format!("axial{body_a}"),
            kind: JointKind::Axial { direction: direction.normalize() },
            body_a,
            body_b,
            anchor_a,
            anchor_b,
            compliance: None,
        }
    }

    /// A torsional spring–damper between `body_a` and `body_b` (or the world) about the world
    /// direction `axis` (normalised here): one [`JointKind::Angular`] row, zero in the current
    /// configuration of `world`, with `stiffness` (N m/rad) and `damping` (N m s/rad).
    pub fn angular_at(
        world: &World,
        body_a: usize,
        body_b: Option<usize>,
        axis: Vector3<f64>,
        stiffness: f64,
        damping: f64,
    ) -> Joint {
        let axis = axis.normalize();
        let (reference, _) = api::contact::tangent_basis(&axis);
        let local = |b: Option<usize>, v: Vector3<f64>| match b {
            Some(i) => world.bodies[i].orientation.inverse() * v,
            None => v,
        };
        Joint {
            name: format!("angular{body_a}"),
            kind: JointKind::Angular {
                axis_a: local(Some(body_a), axis),
                ref_a: local(Some(body_a), reference),
                ref_b: local(body_b, reference),
            },
            body_a,
            body_b,
            anchor_a: Vector3::zeros(),
            anchor_b: Vector3::zeros(),
            compliance: Some(JointCompliance { stiffness, damping }),
        }
    }

    /// The same joint as a spring–damper with `stiffness` and `damping` per row.
    pub fn with_compliance(mut self, stiffness: f64, damping: f64) -> Joint {
        self.compliance = Some(JointCompliance { stiffness, damping });
        self
    }

    /// The same joint with another name.
    pub fn named(mut self, name: impl Into<String>) -> Joint {
        self.name = name.into();
        self
    }

    fn anchors(
        world: &World,
        body_a: usize,
        body_b: Option<usize>,
        point: &Vector3<f64>,
    ) -> (Vector3<f64>, Vector3<f64>) {
        let local = |b: &RigidBody| b.orientation.inverse() * (point - b.position);
        let a = local(&world.bodies[body_a]);
        let b = match body_b {
            Some(i) => local(&world.bodies[i]),
            None => *point,
        };
        (a, b)
    }

    /// Number of constraint rows (before structurally zero rows are dropped).
    pub fn num_rows(&self) -> usize {
        match self.kind {
            JointKind::Ball => 3,
            JointKind::Hinge { .. } => 5,
            JointKind::Axial { .. } | JointKind::Angular { .. } => 1,
        }
    }

    /// Whether the joint is a spring (a compliant [`JointKind::Angular`] row), whose `C` is a
    /// deflection rather than a constraint error.
    pub fn is_spring(&self) -> bool {
        matches!(self.kind, JointKind::Angular { .. }) && self.compliance.is_some()
    }

    /// `C(q)` of every row at the current configuration of `world` (m, rad).
    pub fn violations(&self, world: &World) -> Vec<f64> {
        self.raw_rows(world).iter().map(|r| r.c).collect()
    }

    fn raw_rows(&self, world: &World) -> Vec<RawRow> {
        let ba = &world.bodies[self.body_a];
        let bb = self.body_b.map(|i| &world.bodies[i]);
        let a = Side::of(Some(ba), &self.anchor_a);
        let b = Side::of(bb, &self.anchor_b);
        // point rows: C = p_A - p_B; dC/dt = v_A + w_A x r_A - v_B - w_B x r_B
        // d2C/dt2 velocity-product part: w_A x (w_A x r_A) - w_B x (w_B x r_B)
        let point_rows = |dir: &Vector3<f64>| -> RawRow {
            let ang_a = a.r.cross(dir); // d . (w x r) = w . (r x d)
            let ang_b = b.r.cross(dir);
            let acc = a.w.cross(&a.w.cross(&a.r)) - b.w.cross(&b.w.cross(&b.r));
            RawRow {
                c: dir.dot(&(a.p - b.p)),
                gdot_v: dir.dot(&acc),
                ga: twist_row(*dir, ang_a),
                gb: twist_row(-dir, -ang_b),
            }
        };
        match self.kind {
            JointKind::Ball => [Vector3::x(), Vector3::y(), Vector3::z()].iter().map(point_rows).collect(),
            JointKind::Axial { direction } => vec![point_rows(&direction)],
            JointKind::Hinge { axis_a, axis_b } => {
                let mut rows: Vec<RawRow> = [Vector3::x(), Vector3::y(), Vector3::z()].iter().map(point_rows).collect();
                let (u1, u2) = api::contact::tangent_basis(&axis_a.normalize());
                let y = b.rot * axis_b.normalize();
                let wy = b.w.cross(&y);
                for u in [u1, u2] {
                    // C = x . y, x = R_A u, y = R_B a_B; dC/dt = (x × y) . (w_A - w_B)
                    let x = a.rot * u;
                    let xy = x.cross(&y);
                    let wx = a.w.cross(&x);
                    let dxy = wx.cross(&y) + x.cross(&wy);
                    rows.push(RawRow {
                        c: x.dot(&y),
                        gdot_v: dxy.dot(&(a.w - b.w)),
                        ga: twist_row(Vector3::zeros(), xy),
                        gb: twist_row(Vector3::zeros(), -xy),
                    });
                }
                rows
            }
            JointKind::Angular { axis_a, ref_a, ref_b } => {
                // θ = atan2(a . (y × x), y . x): dθ/dt = a . (w_A - w_B) while the hinge keeps
                // x, y ⊥ a; d2θ/dt2 velocity-product part (w_A × a) . (w_A - w_B)
                let axis = a.rot * axis_a;
                let (x, y) = (a.rot * ref_a, b.rot * ref_b);
                vec![RawRow {
                    c: axis.dot(&y.cross(&x)).atan2(y.dot(&x)),
                    gdot_v: a.w.cross(&axis).dot(&(a.w - b.w)),
                    ga: twist_row(Vector3::zeros(), axis),
                    gb: twist_row(Vector3::zeros(), -axis),
                }]
            }
        }
    }

    /// Checks indices, finiteness, axes and compliance; the error names the problem.
    pub fn validate(&self, nbodies: usize) -> Result<(), JointError> {
        if self.body_a >= nbodies {
            return Err(JointError::NoBodyA { body: self.body_a, nbodies });
        }
        if let Some(b) = self.body_b {
            if b >= nbodies {
                return Err(JointError::NoBodyB { body: b, nbodies });
            }
            if b == self.body_a {
                return Err(JointError::SelfJoint { body: b });
            }
        }
        let finite = |v: &Vector3<f64>| v.iter().all(|x| x.is_finite());
        if !finite(&self.anchor_a) || !finite(&self.anchor_b) {
            return Err(JointError::AnchorNotFinite);
        }
        let unit = |v: &Vector3<f64>, what: &'static str| -> Result<(), JointError> {
            if finite(v) && (v.norm() - 1.0).abs() <= 1e-9 {
                Ok(())
            } else {
                Err(JointError::NotUnit { what, vector: *v })
            }
        };
        match self.kind {
            JointKind::Ball => {}
            JointKind::Hinge { axis_a, axis_b } => {
                unit(&axis_a, "axis_a")?;
                unit(&axis_b, "axis_b")?;
            }
            JointKind::Axial { direction } => unit(&direction, "direction")?,
            JointKind::Angular { axis_a, ref_a, ref_b } => {
                unit(&axis_a, "axis_a")?;
                unit(&ref_a, "ref_a")?;
                unit(&ref_b, "ref_b")?;
                if axis_a.dot(&ref_a).abs() > 1e-9 {
                    return Err(JointError::RefNotPerpendicular);
                }
            }
        }
        if let Some(JointCompliance { stiffness, damping }) = self.compliance {
            if !(stiffness.is_finite() && damping.is_finite() && stiffness >= 0.0 && damping >= 0.0) {
                return Err(JointError::BadCompliance { stiffness, damping });
            }
            if stiffness + damping <= 0.0 {
                return Err(JointError::ZeroCompliance);
            }
        }
        Ok(())
    }
}

/// A malformed joint, found by [`Joint::validate`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JointError {
    /// `body_a` is not a body of the world.
    #[error("body_a {body} does not exist ({nbodies} bodies)")]
    NoBodyA {
        /// The index given.
        body: usize,
        /// The number of bodies.
        nbodies: usize,
    },
    /// `body_b` is not a body of the world.
    #[error("body_b {body} does not exist ({nbodies} bodies)")]
    NoBodyB {
        /// The index given.
        body: usize,
        /// The number of bodies.
        nbodies: usize,
    },
    /// `body_b` is `body_a`.
    #[error("joins body {body} to itself")]
    SelfJoint {
        /// The body.
        body: usize,
    },
    /// An anchor is not finite.
    #[error("anchor is not finite")]
    AnchorNotFinite,
    /// An axis or direction is not a finite unit vector.
    #[error("{what} must be a finite unit vector, got {vector:?}")]
    NotUnit {
        /// Which vector (`axis_a`, `axis_b`, `direction`, `ref_a`, `ref_b`).
        what: &'static str,
        /// Its value.
        vector: Vector3<f64>,
    },
    /// An angular joint's `ref_a` is not perpendicular to its `axis_a`.
    #[error("ref_a must be perpendicular to axis_a")]
    RefNotPerpendicular,
    /// The compliance has a negative or non-finite stiffness or damping.
    #[error("compliance must be finite and >= 0, got k = {stiffness}, b = {damping}")]
    BadCompliance {
        /// Stiffness given.
        stiffness: f64,
        /// Damping given.
        damping: f64,
    },
    /// The compliance has zero stiffness and zero damping.
    #[error("compliance needs stiffness + damping > 0 (use None for a rigid joint)")]
    ZeroCompliance,
}

/// Subsystem id of every rigid body: bodies connected through joints (not through the world)
/// share the id of the lowest-indexed body of their group (union–find).
pub fn joint_subsystems(nbodies: usize, joints: &[Joint]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..nbodies).collect();
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for j in joints {
        let Some(b) = j.body_b else { continue };
        if j.body_a >= nbodies || b >= nbodies {
            continue;
        }
        let (ra, rb) = (find(&mut parent, j.body_a), find(&mut parent, b));
        let (lo, hi) = (ra.min(rb), ra.max(rb));
        parent[hi] = lo;
    }
    (0..nbodies).map(|i| find(&mut parent, i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DofMask, Material, Shape};

    fn world2() -> World {
        let mut w = World::new();
        let mut a = RigidBody::new(
            "a",
            Shape::Box { half_extents: [0.1, 0.2, 0.3] },
            2.0,
            Vector3::new(0.3, -0.1, 0.5),
            Material::rigid(0.5),
        );
        a.orientation = UnitQuaternion::from_scaled_axis(Vector3::new(0.2, -0.4, 0.1));
        a.linear_velocity = Vector3::new(0.3, -0.2, 0.7);
        a.angular_velocity = Vector3::new(1.1, 0.4, -0.9);
        let mut b =
            RigidBody::new("b", Shape::Sphere { radius: 0.1 }, 1.0, Vector3::new(-0.2, 0.4, 0.1), Material::rigid(0.5));
        b.orientation = UnitQuaternion::from_scaled_axis(Vector3::new(-0.3, 0.1, 0.5));
        b.linear_velocity = Vector3::new(-0.5, 0.1, 0.2);
        b.angular_velocity = Vector3::new(-0.3, 0.8, 0.6);
        w.bodies.push(a);
        w.bodies.push(b);
        w
    }

    /// `G v` equals the finite-difference rate of `C`, and `dG/dt v` the second difference, for
    /// every kind (central differences, step 1e-6 s: error O(1e-12) on rates of order 1).
    #[test]
    fn jacobian_and_gdot_match_finite_differences() {
        let w0 = world2();
        let p = Vector3::new(0.05, 0.1, 0.3);
        let mut joints = vec![
            Joint::ball_at(&w0, 0, Some(1), p),
            Joint::hinge_at(&w0, 0, Some(1), p, Vector3::new(0.2, 1.0, -0.3)),
            Joint::axial_at(&w0, 0, None, p, Vector3::new(0.0, 0.6, 0.8)),
            Joint::hinge_at(&w0, 1, None, p, Vector3::z()),
        ];
        // move away from the assembled configuration so that C != 0
        let mut w = w0.clone();
        w.bodies[0].position += Vector3::new(0.01, -0.02, 0.005);
        w.bodies[1].orientation =
            UnitQuaternion::from_scaled_axis(Vector3::new(0.05, 0.0, -0.02)) * w.bodies[1].orientation;
        w.joints = std::mem::take(&mut joints);
        let set = w.bilateral_rows();
        let (q, v) = (w.positions(), w.velocities());
        let h = 1e-5;
        let at = |s: f64| {
            let mut ws = w.clone();
            let qs = w.integrate_positions(&q, &v, s);
            ws.set_state(&qs, &v);
            ws.joints.iter().flat_map(|j| j.violations(&ws)).collect::<Vec<_>>()
        };
        let (cp, c0, cm) = (at(h), at(0.0), at(-h));
        assert_eq!(set.len(), 3 + 5 + 1 + 5);
        for (k, r) in set.rows.iter().enumerate() {
            assert!((r.violation - c0[k]).abs() < 1e-14);
            let rate = (cp[k] - cm[k]) / (2.0 * h);
            assert!((r.velocity(&v) - rate).abs() < 1e-8, "row {k}: G v {} vs {rate}", r.velocity(&v));
            // constant twists: d2C/dt2 = dG/dt v (exact exponential-map integration of R)
            let acc = (cp[k] - 2.0 * c0[k] + cm[k]) / (h * h);
            assert!((r.gdot_v - acc).abs() < 1e-3 * (1.0 + acc.abs()), "row {k}: {} vs {acc}", r.gdot_v);
        }
    }

    /// A torsional spring measures A's rotation relative to B about its axis: `C` is the angle
    /// (exact, not linearised), `G v = a . (w_A - w_B)` equals the finite-difference rate while
    /// both bodies turn about the axis (what the hinge beside it enforces), and the drift metric
    /// leaves the spring out.
    #[test]
    fn angular_spring_measures_the_relative_rotation() {
        let mut w = world2();
        let axis = Vector3::new(0.2, 1.0, -0.3).normalize();
        let spring = Joint::angular_at(&w, 0, Some(1), axis, 250.0, 0.0);
        assert!(spring.validate(2).is_ok() && spring.is_spring());
        let turn = |b: &mut RigidBody, angle: f64| {
            b.orientation = UnitQuaternion::from_scaled_axis(axis * angle) * b.orientation;
        };
        turn(&mut w.bodies[1], 0.3);
        w.bodies[0].angular_velocity = axis * 1.7;
        w.bodies[1].angular_velocity = axis * -0.4;
        w.joints = vec![spring, Joint::ball_at(&world2(), 0, Some(1), Vector3::zeros())];
        let set = w.bilateral_rows();
        assert_eq!(set.len(), 4);
        assert!((set.rows[0].violation + 0.3).abs() < 1e-12, "{}", set.rows[0].violation);
        let (q, v) = (w.positions(), w.velocities());
        let h = 1e-5;
        let at = |s: f64| {
            let mut ws = w.clone();
            ws.set_state(&w.integrate_positions(&q, &v, s), &v);
            ws.joints[0].violations(&ws)[0]
        };
        let rate = (at(h) - at(-h)) / (2.0 * h);
        assert!((set.rows[0].velocity(&v) - 2.1).abs() < 1e-12 && (rate - 2.1).abs() < 1e-8, "{rate}");
        assert!(set.rows[0].gdot_v.abs() < 1e-12);
        // the drift leaves the spring's 0.3 rad out and keeps the ball joint's rows
        assert_eq!(w.joint_drift_max(&set), set.rows[1..].iter().map(|r| r.violation.abs()).fold(0.0, f64::max));
        assert!(w.joint_drift_max(&set) < 0.3);
        let mut bad = Joint::angular_at(&w, 0, None, axis, 1.0, 0.0);
        if let JointKind::Angular { ref mut ref_a, .. } = bad.kind {
            *ref_a = (*ref_a + axis).normalize();
        }
        let e = bad.validate(2).unwrap_err();
        assert_eq!(e, JointError::RefNotPerpendicular);
        assert!(e.to_string().contains("perpendicular"));
    }

    #[test]
    fn planar_rows_drop_out_and_subsystems_group_jointed_bodies() {
        let mut w = world2();
        w.bodies[0].dofs = DofMask::PLANAR_XZ;
        w.bodies[0].linear_velocity.y = 0.0;
        w.bodies[0].angular_velocity = Vector3::new(0.0, 0.4, 0.0);
        w.joints.push(Joint::hinge_at(&w, 0, None, Vector3::zeros(), Vector3::y()));
        let set = w.bilateral_rows();
        // y row and the two angular rows (about x and z) cannot act on a planar x-z body
        assert_eq!(set.rows.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0, 2]);
        let js = vec![Joint::ball_at(&world2(), 0, Some(1), Vector3::zeros())];
        assert_eq!(joint_subsystems(4, &js), vec![0, 0, 2, 3]);
        let mut w = world2();
        w.bodies.push(w.bodies[1].clone());
        w.joints.push(Joint::ball_at(&w, 2, Some(1), Vector3::zeros()));
        let l = w.layout();
        assert_eq!(l.blocks.iter().map(|b| b.subsystem).collect::<Vec<_>>(), vec![0, 1, 1]);
    }

    #[test]
    fn validation_names_the_problem() {
        let w = world2();
        let mut j = Joint::ball_at(&w, 0, Some(1), Vector3::zeros());
        assert!(j.validate(2).is_ok());
        j.body_b = Some(0);
        assert_eq!(j.validate(2), Err(JointError::SelfJoint { body: 0 }));
        assert!(j.validate(2).unwrap_err().to_string().contains("itself"));
        j.body_b = Some(5);
        assert_eq!(j.validate(2), Err(JointError::NoBodyB { body: 5, nbodies: 2 }));
        assert!(j.validate(2).unwrap_err().to_string().contains("body_b 5"));
        let j = Joint::ball_at(&w, 0, None, Vector3::zeros()).with_compliance(-1.0, 0.0);
        assert_eq!(j.validate(2), Err(JointError::BadCompliance { stiffness: -1.0, damping: 0.0 }));
        assert!(j.validate(2).unwrap_err().to_string().contains("compliance"));
        let mut w2 = w.clone();
        w2.joints.push(Joint::ball_at(&w, 0, Some(1), Vector3::zeros()).with_compliance(0.0, 0.0));
        assert!(w2.validate().unwrap_err().to_string().contains("joint 0"));
    }

    #[test]
    fn compliant_law_is_the_implicit_spring_damper() {
        let row = BilateralRow {
            joint: 0,
            index: 0,
            violation: 0.01,
            gdot_v: 0.0,
            jacobian: vec![],
            compliance: Some(JointCompliance { stiffness: 1e4, damping: 10.0 }),
        };
        let dt = 1e-3;
        let (vh, r) = row.law(dt);
        let u = -0.3; // G v+
        let gamma = (vh - u) / r;
        let expected = -dt * (1e4 * (0.01 + dt * u) + 10.0 * u);
        assert!((gamma - expected).abs() < 1e-12 * expected.abs());
    }
}
