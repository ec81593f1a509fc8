//! Contacts built from a world: the contact data types are the solver API's
//! ([`api::contact`], re-exported here); this module adds what needs the [`World`]: the bodies'
//! velocity offsets ([`DofOffsets`]) and a contact's frame, combined material and Jacobian
//! ([`World::contact`]).

use crate::model::{combine_friction, World};
pub use api::contact::*;
use nalgebra::{Matrix3, Vector3};
use smallvec::SmallVec;

/// The first velocity index of every rigid and every deformable body of a world: computed once
/// for a batch of contacts ([`World::contact_with_offsets`]), so that building each contact costs O(1)
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

impl World {
    /// Builds a contact between colliders `key.a` and `key.b` at world point `point` with unit
    /// normal `normal` (from B to A) and signed gap `gap`; frame, combined material and Jacobian
    /// come from `world`. For many contacts of one world, [`World::contact_with_offsets`] saves
    /// recomputing the bodies' offsets each time.
    pub fn contact(&self, key: ContactKey, point: Vector3<f64>, normal: Vector3<f64>, gap: f64) -> Contact {
        self.contact_with_offsets(&DofOffsets::of(self), key, point, normal, gap)
    }

    /// [`World::contact`] with `world`'s offsets computed beforehand ([`DofOffsets::of`]).
    pub fn contact_with_offsets(
        &self,
        offsets: &DofOffsets,
        key: ContactKey,
        point: Vector3<f64>,
        normal: Vector3<f64>,
        gap: f64,
    ) -> Contact {
        let world = self;
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
        let c = w.contact(ContactKey { a: ColliderId::Body(2), b: ColliderId::Deformable(1), feature: 5 }, p, n, 0.0);
        assert_eq!(
            c.jacobian.iter().map(|j| (j.v_offset, j.ncols)).collect::<Vec<_>>(),
            vec![(9, 1), (offsets.deformable[1] + 15, 3)]
        );
    }
}
