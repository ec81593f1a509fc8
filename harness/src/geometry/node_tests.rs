//! Node contacts of deformable bodies against a static half-space (`nodes.rs`): hand-computed
//! gaps, normals and points, the surface-node and margin filters, and the Jacobian (the 3x3 block
//! `frameᵀ` on the node's DOFs) against central differences of the re-evaluated gap and of the
//! node's motion.

use super::*;
use crate::model::{DeformableBody, ElasticMaterial, ElasticModel, Material, StaticCollider};
use nalgebra::Vector3;

/// A tilted half-space `n . x <= offset` and a 2 x 1 x 1-cell box mesh partly below it.
fn scene(offset: f64) -> (World, Vector3<f64>) {
    let n = Vector3::new(0.3, -0.2, 1.0).normalize();
    let mut w = World::new();
    w.statics.push(StaticCollider {
        name: "plane".into(),
        shape: StaticShape::HalfSpace { normal: n, offset },
        material: Material::rigid(0.4),
    });
    let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: 1e5, poisson_ratio: 0.3 };
    let mut b = DeformableBody::box_mesh(
        "b",
        Vector3::new(-0.1, -0.05, -0.02),
        Vector3::new(0.2, 0.1, 0.1),
        [2, 1, 1],
        1000.0,
        mat,
        Material::rigid(0.4),
    );
    // perturb the nodes so that every gap differs
    for (a, x) in b.positions.iter_mut().enumerate() {
        let s = a as f64;
        *x += 0.01 * Vector3::new((1.7 * s).sin(), (0.9 * s).cos(), (2.3 * s).sin());
    }
    w.deformables.push(b);
    (w, n)
}

#[test]
fn node_half_space_gap_normal_point_and_key() {
    let (w, n) = scene(0.01);
    let margin = 0.02;
    let set = detect(&w, margin);
    let b = &w.deformables[0];
    let expected: Vec<usize> =
        b.surface_nodes.iter().copied().filter(|&a| n.dot(&b.positions[a]) - 0.01 < margin).collect();
    assert!(!expected.is_empty() && expected.len() < b.num_nodes(), "{expected:?}");
    assert_eq!(set.len(), expected.len());
    for c in &set.contacts {
        // the node is A: ColliderId orders Body < Deformable < Static
        assert_eq!((c.key.a, c.key.b), (ColliderId::Deformable(0), ColliderId::Static(0)));
        let x = b.positions[c.key.feature as usize];
        let gap = n.dot(&x) - 0.01;
        assert!((c.gap - gap).abs() < 1e-15, "{} vs {gap}", c.gap);
        assert!((c.normal() - n).norm() < 1e-15);
        // midpoint between the node and its projection on the plane
        assert!((c.point - (x - 0.5 * gap * n)).norm() < 1e-15);
        assert!((c.mu - 0.4).abs() < 1e-15);
        assert!(c.body_a.is_none() && c.body_b.is_none());
    }
}

#[test]
fn only_surface_nodes_within_the_margin_make_contacts() {
    let (mut w, _) = scene(0.01);
    let all = detect(&w, 1.0).len();
    assert_eq!(all, w.deformables[0].surface_nodes.len());
    w.deformables[0].surface_nodes.truncate(3);
    assert_eq!(detect(&w, 1.0).len(), 3);
    assert!(detect(&w, -1.0).is_empty());
}

/// The gap is affine in the node position, so the central difference of the re-evaluated gap is
/// exact up to rounding: `|gap rate - u_n| <= 1e2 eps / h` for coordinates of order 0.1 m and
/// velocities of order 1 (h = 1e-5). The tangent rows must equal the node's velocity projected on
/// the contact frame, `frameᵀ (x(q+) - x(q-)) / 2h`, to the same tolerance.
#[test]
fn node_half_space_jacobian_matches_finite_differences() {
    let (w, _) = scene(0.01);
    let set = detect(&w, 0.02);
    assert!(!set.is_empty());
    let q0 = w.positions();
    let nv = w.layout().nv;
    let h = 1e-5;
    let tol = 1e2 * f64::EPSILON / h;
    for seed in 0..5u64 {
        let v: Vec<f64> = (0..nv).map(|k| ((k as f64 + 1.0) * (seed as f64 + 0.37)).sin()).collect();
        let vm: Vec<f64> = v.iter().map(|x| -x).collect();
        let (qp, qm) = (w.integrate_positions(&q0, &v, h), w.integrate_positions(&q0, &vm, h));
        let (sp, sm) = (reevaluate(&w.at_positions(&qp), &set), reevaluate(&w.at_positions(&qm), &set));
        let (wp, wm) = (w.at_positions(&qp), w.at_positions(&qm));
        for (i, c) in set.contacts.iter().enumerate() {
            assert_eq!(sp.contacts[i].key, c.key);
            let u = c.velocity(&v);
            let gap_rate = (sp.contacts[i].gap - sm.contacts[i].gap) / (2.0 * h);
            assert!((gap_rate - u[0]).abs() <= tol, "{:?}: gap rate {gap_rate} vs u_n {}", c.key, u[0]);
            let a = c.key.feature as usize;
            let xdot = (wp.deformables[0].positions[a] - wm.deformables[0].positions[a]) / (2.0 * h);
            let rel = c.frame.transpose() * xdot;
            for r in 0..3 {
                assert!((rel[r] - u[r]).abs() <= tol, "{:?} row {r}: {} vs {}", c.key, rel[r], u[r]);
            }
            // the block sits on the node's 3 DOFs only
            assert_eq!(c.jacobian.len(), 1);
            assert_eq!((c.jacobian[0].v_offset, c.jacobian[0].ncols), (3 * a, 3));
        }
    }
}
