//! Contacts of one time step: frames, gaps, Jacobians, friction and compliance.
//!
//! Conventions (common to all solvers): per-contact vectors are ordered `(n, t1, t2)`; the normal points from
//! body B to body A; the gap `phi > 0` means separated; the contact velocity
//! `u = R^T (v_A(p) - v_B(p))` with `R = [n t1 t2]`, so `u_n > 0` is separating; contact-space
//! quantities are impulses (N s).

use crate::model::{combine_friction, ContactCompliance, World};
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// Identifies a collider: a dynamic body or a static collider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ColliderId {
    /// Index into [`World::bodies`].
    Body(usize),
    /// Index into [`World::deformables`]; the contact's `feature` is the node index. Declared
    /// between `Body` and `Static`, so a node against a static collider has the node as A.
    Deformable(usize),
    /// Index into [`World::statics`].
    Static(usize),
}

/// Stable identity of a contact point across time steps (for warm starts) and across
/// configurations (for re-evaluation): the collider pair plus a feature id chosen by the narrow
/// phase (e.g. the box corner index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ContactKey {
    /// Collider A (the normal points towards A).
    pub a: ColliderId,
    /// Collider B.
    pub b: ColliderId,
    /// Feature id within the pair: for rigid colliders, the narrow phase's 32-bit local id with
    /// the part indices of compound bodies packed above it (bits 32..40 part of A, 40..48 part of
    /// B; table in [`crate::geometry`]); for a node contact, the node index.
    pub feature: u64,
}

/// The rows of one contact's Jacobian that act on one block of velocity DOFs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JBlock {
    /// First velocity index of the block.
    pub v_offset: usize,
    /// Number of columns used (<= 6).
    pub ncols: usize,
    /// Rows `(n, t1, t2)`; only the first `ncols` columns are meaningful.
    pub rows: [[f64; 6]; 3],
}

/// One contact point.
#[derive(Debug, Clone, PartialEq)]
pub struct Contact {
    /// Stable identity.
    pub key: ContactKey,
    /// Body of collider A (None if static).
    pub body_a: Option<usize>,
    /// Body of collider B (None if static).
    pub body_b: Option<usize>,
    /// Contact point in the world frame, midway between the two surfaces (m).
    pub point: Vector3<f64>,
    /// Contact frame: columns `(n, t1, t2)`, orthonormal and right-handed.
    pub frame: Matrix3<f64>,
    /// Signed gap (m), > 0 separated.
    pub gap: f64,
    /// Combined friction coefficient.
    pub mu: f64,
    /// Combined contact model.
    pub compliance: ContactCompliance,
    /// Jacobian blocks (one per dynamic body or deformable node involved; two inline, so that
    /// detection allocates nothing per contact).
    pub jacobian: SmallVec<[JBlock; 2]>,
}

/// A deterministic orthonormal tangent basis `(t1, t2)` with `t2 = n x t1`, so `(n, t1, t2)` is
/// right-handed. `t1` is the normalized projection of the world
/// axis least aligned with `n` (x before y before z on ties).
pub fn tangent_basis(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = n.abs();
    let e = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let t1 = (e - n * n.dot(&e)).normalize();
    let t2 = n.cross(&t1);
    (t1, t2)
}

/// The first velocity index of every rigid and every deformable body of a world: computed once
/// for a batch of contacts ([`Contact::with_offsets`]), so that building each contact costs O(1)
/// in the number of bodies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DofOffsets {
    rigid: Vec<usize>,
    deformable: Vec<usize>,
}

impl DofOffsets {
    /// The offsets of `world`'s bodies in its velocity vector.
    pub fn of(world: &World) -> Self {
        let mut rigid = Vec::with_capacity(world.bodies.len());
        let mut o = 0;
        for b in &world.bodies {
            rigid.push(o);
            o += b.dofs.count();
        }
        Self { rigid, deformable: world.deformable_v_offsets() }
    }
}

impl Contact {
    /// Builds a contact between colliders `key.a` and `key.b` at world point `point` with unit
    /// normal `normal` (from B to A) and signed gap `gap`; frame, combined material and Jacobian
    /// come from `world`. For many contacts of one world, [`Contact::with_offsets`] saves
    /// recomputing the bodies' offsets each time.
    pub fn new(world: &World, key: ContactKey, point: Vector3<f64>, normal: Vector3<f64>, gap: f64) -> Contact {
        Self::with_offsets(world, &DofOffsets::of(world), key, point, normal, gap)
    }

    /// [`Contact::new`] with `world`'s offsets computed beforehand ([`DofOffsets::of`]).
    pub fn with_offsets(
        world: &World,
        offsets: &DofOffsets,
        key: ContactKey,
        point: Vector3<f64>,
        normal: Vector3<f64>,
        gap: f64,
    ) -> Contact {
        let (t1, t2) = tangent_basis(&normal);
        let frame = Matrix3::from_columns(&[normal, t1, t2]);
        let mat = |c: ColliderId| match c {
            ColliderId::Body(i) => world.bodies[i].material,
            ColliderId::Deformable(i) => world.deformables[i].material,
            ColliderId::Static(i) => world.statics[i].material,
        };
        let (ma, mb) = (mat(key.a), mat(key.b));
        let body = |c: ColliderId| match c {
            ColliderId::Body(i) => Some(i),
            ColliderId::Static(_) | ColliderId::Deformable(_) => None,
        };
        let (body_a, body_b) = (body(key.a), body(key.b));
        let mut jacobian = SmallVec::new();
        for (bi, sign) in [(body_a, 1.0), (body_b, -1.0)] {
            let Some(bi) = bi else { continue };
            let b = &world.bodies[bi];
            let jr = frame.transpose() * b.point_jacobian(&point) * sign; // 3x6, rows (n, t1, t2)
            let mut rows = [[0.0; 6]; 3];
            for (c, full) in b.dofs.free_indices().enumerate() {
                for r in 0..3 {
                    rows[r][c] = jr[(r, full)];
                }
            }
            jacobian.push(JBlock { v_offset: offsets.rigid[bi], ncols: b.dofs.count(), rows });
        }
        // a node of a deformable body: the 3x3 block frame^T (times the side's sign) on its DOFs
        for (id, sign) in [(key.a, 1.0), (key.b, -1.0)] {
            let ColliderId::Deformable(d) = id else { continue };
            let o = offsets.deformable[d] + 3 * key.feature as usize;
            let mut rows = [[0.0; 6]; 3];
            for (r, row) in rows.iter_mut().enumerate() {
                for (c, x) in row.iter_mut().take(3).enumerate() {
                    *x = sign * frame[(c, r)];
                }
            }
            jacobian.push(JBlock { v_offset: o, ncols: 3, rows });
        }
        Contact {
            key,
            body_a,
            body_b,
            point,
            frame,
            gap,
            mu: combine_friction(ma.mu, mb.mu),
            compliance: ContactCompliance::combine(ma.compliance, mb.compliance),
            jacobian,
        }
    }

    /// The unit normal (from B to A).
    pub fn normal(&self) -> Vector3<f64> {
        self.frame.column(0).into_owned()
    }

    /// `J v` for this contact: relative velocity `(u_n, u_t1, u_t2)` (m/s).
    pub fn velocity(&self, v: &[f64]) -> [f64; 3] {
        let mut u = [0.0; 3];
        for blk in &self.jacobian {
            for (r, ur) in u.iter_mut().enumerate() {
                for c in 0..blk.ncols {
                    *ur += blk.rows[r][c] * v[blk.v_offset + c];
                }
            }
        }
        u
    }

    /// `out += J^T lambda` for this contact.
    pub fn add_transpose(&self, lambda: [f64; 3], out: &mut [f64]) {
        for blk in &self.jacobian {
            for c in 0..blk.ncols {
                out[blk.v_offset + c] += (0..3).map(|r| blk.rows[r][c] * lambda[r]).sum::<f64>();
            }
        }
    }
}

/// All contacts of one step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContactSet {
    /// The contacts, in a deterministic order (by key).
    pub contacts: Vec<Contact>,
}

impl ContactSet {
    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }
    /// Whether there is no contact.
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }
    /// `J v`, one `(n, t1, t2)` triple per contact.
    pub fn velocities(&self, v: &[f64]) -> Vec<[f64; 3]> {
        self.contacts.iter().map(|c| c.velocity(v)).collect()
    }
    /// `J^T lambda` as a generalized impulse of length `nv`.
    pub fn transpose_mul(&self, lambda: &[[f64; 3]], nv: usize) -> Vec<f64> {
        assert_eq!(lambda.len(), self.contacts.len());
        let mut out = vec![0.0; nv];
        for (c, l) in self.contacts.iter().zip(lambda) {
            c.add_transpose(*l, &mut out);
        }
        out
    }
    /// Triplets `(row, col, value)` of the `3 nc x nv` Jacobian, rows ordered `(n, t1, t2)` per contact.
    pub fn jacobian_triplets(&self) -> Vec<(usize, usize, f64)> {
        let mut t = Vec::new();
        for (i, c) in self.contacts.iter().enumerate() {
            for blk in &c.jacobian {
                for r in 0..3 {
                    for k in 0..blk.ncols {
                        if blk.rows[r][k] != 0.0 {
                            t.push((3 * i + r, blk.v_offset + k, blk.rows[r][k]));
                        }
                    }
                }
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{BlockKind, DeformableBody, DofMask, ElasticMaterial, ElasticModel, Material, RigidBody, Shape};

    /// Rigid bodies with restricted DOFs and two deformable boxes: the offsets are the layout's,
    /// and a contact's Jacobian blocks sit at them (body 2 moves along z only: one column; node 5
    /// of the second box: three).
    #[test]
    fn dof_offsets_are_the_layouts_and_place_the_jacobian_blocks() {
        let mut w = World::new();
        let ball = |x: f64| {
            RigidBody::new("ball", Shape::Sphere { radius: 0.1 }, 1.0, Vector3::new(x, 0.0, 0.5), Material::rigid(0.5))
        };
        w.bodies.push(ball(0.0));
        w.bodies.push(ball(1.0).with_dofs(DofMask::PLANAR_XZ));
        w.bodies.push(ball(2.0).with_dofs(DofMask::VERTICAL));
        w.bodies.push(ball(3.0));
        let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: 1e5, poisson_ratio: 0.3 };
        for x in [5.0, 7.0] {
            let size = Vector3::new(0.1, 0.1, 0.1);
            w.deformables.push(DeformableBody::box_mesh(
                "box",
                Vector3::new(x, 0.0, 0.0),
                size,
                [1; 3],
                1000.0,
                mat,
                Material::rigid(0.5),
            ));
        }
        let offsets = DofOffsets::of(&w);
        for b in &w.layout().blocks {
            match b.kind {
                BlockKind::RigidBody { index } => assert_eq!(offsets.rigid[index], b.v_offset),
                BlockKind::Deformable { index } => assert_eq!(offsets.deformable[index], b.v_offset),
            }
        }
        assert_eq!(offsets.rigid, vec![0, 6, 9, 10]);
        let (p, n) = (Vector3::new(2.5, 0.0, 0.5), Vector3::x());
        let c = Contact::new(
            &w,
            ContactKey { a: ColliderId::Body(2), b: ColliderId::Deformable(1), feature: 5 },
            p,
            n,
            0.0,
        );
        assert_eq!(
            c.jacobian.iter().map(|j| (j.v_offset, j.ncols)).collect::<Vec<_>>(),
            vec![(9, 1), (offsets.deformable[1] + 15, 3)]
        );
    }

    #[test]
    fn tangent_basis_is_right_handed_orthonormal() {
        for n in [Vector3::z(), -Vector3::z(), Vector3::new(0.3, -0.4, 0.866).normalize(), Vector3::x()] {
            let (t1, t2) = tangent_basis(&n);
            let r = Matrix3::from_columns(&[n, t1, t2]);
            assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-14);
            assert!((r.determinant() - 1.0).abs() < 1e-14);
        }
    }
}
