//! Tests of compound bodies in the narrow phase: a table of five boxes (a top and four legs) on
//! the ground and on another table, the packed part ids, re-evaluation after a move, and the
//! contact Jacobian against finite differences.

use super::tests::{assert_close, assert_vec, check_jacobian, ground, mat, rot, world, ROUND};
use super::*;
use crate::model::{RigidBody, ShapePart};
use nalgebra::Vector3;

/// Half extents of the table top and of a leg (m).
const TOP: [f64; 3] = [0.3, 0.2, 0.02];
const LEG: [f64; 3] = [0.02, 0.02, 0.15];
/// Leg centres in the parts' own frame: legs from z = 0 to 0.3, top from 0.3 to 0.34.
const LEG_XY: [[f64; 2]; 4] = [[0.26, 0.16], [-0.26, 0.16], [0.26, -0.16], [-0.26, -0.16]];

/// The table shape (part 0 the top, parts 1..=4 the legs) and the height of its centroid above
/// the feet (m).
fn table_shape() -> (Shape, f64) {
    let mut parts = vec![ShapePart::new(Shape::Box { half_extents: TOP }, Vector3::new(0.0, 0.0, 0.32))];
    parts.extend(
        LEG_XY.iter().map(|[x, y]| ShapePart::new(Shape::Box { half_extents: LEG }, Vector3::new(*x, *y, 0.15))),
    );
    let (shape, shift) = Shape::centred_compound(parts);
    (shape, shift.z)
}

/// A table whose feet are at height `feet` (m), at horizontal position `(x, y)`.
fn table_body(x: f64, y: f64, feet: f64) -> RigidBody {
    let (shape, zc) = table_shape();
    RigidBody::new("table", shape, 4.7, Vector3::new(x, y, feet + zc), mat())
}

/// The world position of corner `k` of part `p` of body `b` (corner numbering of `box_corner`).
fn corner(b: &RigidBody, p: usize, k: u32) -> Vector3<f64> {
    let Shape::Compound { parts } = &b.shape else { unreachable!() };
    let Shape::Box { half_extents } = parts[p].shape else { unreachable!() };
    let local = parts[p].translation + parts[p].rotation * analytic::box_corner(&Vector3::from(half_extents), k);
    b.position + b.orientation * local
}

#[test]
fn table_on_the_ground_touches_at_the_four_corners_of_each_foot() {
    let w = world(vec![table_body(0.1, -0.2, -1e-3)], vec![ground()]);
    let set = detect(&w, 1e-3);
    // 4 legs x 4 bottom corners; the top and the legs' upper corners are 0.3 m up
    assert_eq!(set.len(), 16);
    let mut legs = [0; 5];
    for c in &set.contacts {
        let (local, pa, pb) = unpack_feature(c.key.feature);
        assert_eq!((c.key.a, c.key.b, pb), (ColliderId::Body(0), ColliderId::Static(0), 0));
        legs[pa] += 1;
        assert_close(c.gap, -1e-3, ROUND);
        assert_vec(&c.normal(), &Vector3::z(), ROUND);
        // the contact point is the midpoint of the corner and its projection on the ground
        let p = corner(&w.bodies[0], pa, local);
        assert_vec(&c.point, &(p - 0.5 * c.gap * Vector3::z()), ROUND);
        assert!(local & 4 != 0, "corner {local} is not a bottom corner");
    }
    assert_eq!(legs, [0, 4, 4, 4, 4]);
}

#[test]
fn feature_ids_differ_by_part_and_unpack_to_the_parts() {
    let w = world(vec![table_body(0.0, 0.0, -1e-3)], vec![ground()]);
    let set = detect(&w, 1e-3);
    let mut ids: Vec<u64> = set.contacts.iter().map(|c| c.key.feature).collect();
    ids.dedup();
    assert_eq!(ids.len(), 16, "feature ids collide across parts");
    // the same corner of two legs: same local id, different parts
    let (l1, p1, _) = unpack_feature(set.contacts[0].key.feature);
    let (l2, p2, _) = unpack_feature(set.contacts[4].key.feature);
    assert_eq!((l1, p1, p2), (l2, 1, 2));
    assert_eq!(pack_feature(7, 3, 200), 7 | 3 << 32 | 200 << 40);
    assert_eq!(unpack_feature(pack_feature(u32::MAX, 255, 254)), (u32::MAX, 255, 254));
}

#[test]
fn reevaluate_after_a_move_recomputes_the_same_corners() {
    let w = world(vec![table_body(0.0, 0.0, -1e-3)], vec![ground()]);
    let set = detect(&w, 1e-3);
    let mut moved = w.clone();
    moved.bodies[0].position += Vector3::new(0.05, -0.02, 0.1);
    moved.bodies[0].orientation = rot(Vector3::new(0.3, 1.0, 0.2), 0.2);
    let r = reevaluate(&moved, &set);
    assert_eq!(r.len(), set.len());
    for (new, old) in r.contacts.iter().zip(&set.contacts) {
        assert_eq!(new.key, old.key);
        let (local, pa, _) = unpack_feature(new.key.feature);
        let p = corner(&moved.bodies[0], pa, local);
        assert_close(new.gap, p.z, ROUND);
        assert_vec(&new.point, &(p - 0.5 * p.z * Vector3::z()), ROUND);
    }
    // and at the original configuration it reproduces detect
    assert_eq!(reevaluate(&w, &set), set);
}

#[test]
fn table_on_a_table_rests_its_feet_on_the_lower_top() {
    let (_, zc) = table_shape();
    let lower = table_body(0.0, 0.0, 0.0);
    // top surface of the lower table: 0.34 above its feet
    let upper = table_body(0.01, -0.02, 0.34 - 2e-4).with_orientation(rot(Vector3::z(), 0.05));
    let w = world(vec![lower, upper], vec![]);
    let set = detect(&w, 1e-3);
    // each upper leg's foot face lies flat on the lower top: a 4-point manifold per leg
    assert_eq!(set.len(), 16, "{:?}", set.contacts.iter().map(|c| c.key).collect::<Vec<_>>());
    let mut legs = [0; 5];
    for c in &set.contacts {
        let (_, pa, pb) = unpack_feature(c.key.feature);
        assert_eq!((c.key.a, c.key.b, pa), (ColliderId::Body(0), ColliderId::Body(1), 0));
        legs[pb] += 1;
        // the normal points from B (the upper table) to A (the lower one)
        assert_vec(&c.normal(), &-Vector3::z(), 1e-12);
        assert_close(c.gap, -2e-4, 1e-12);
        assert_close(c.point.z, 0.34 - 1e-4, 1e-12);
    }
    assert_eq!(legs, [0, 4, 4, 4, 4]);
    assert!(zc > 0.15 && zc < 0.34);
    // lifted by 1 cm, the same features are recomputed at the new gap
    let mut lifted = w.clone();
    lifted.bodies[1].position.z += 0.01;
    for c in &reevaluate(&lifted, &set).contacts {
        assert_close(c.gap, 0.01 - 2e-4, 1e-12);
    }
}

/// `b` moved vertically so that its lowest corner is at height `z` (m).
fn lowest_corner_at(mut b: RigidBody, z: f64) -> RigidBody {
    let low =
        (1..5).flat_map(|p| (0..8).map(move |k| (p, k))).map(|(p, k)| corner(&b, p, k).z).fold(f64::MAX, f64::min);
    b.position.z += z - low;
    b
}

#[test]
fn compound_jacobian_matches_finite_differences() {
    let tilted = table_body(0.0, 0.0, 0.0).with_orientation(rot(Vector3::new(1.0, 0.4, 0.0), 0.3));
    check_jacobian(&world(vec![lowest_corner_at(tilted.clone(), 0.01)], vec![ground()]), 0.2, 0.02, 5);
    // a leg corner of a tilted upper table on the lower table's top (a vertex-face manifold point;
    // nearly parallel faces make the manifold's normal turn with either box, see box_on_body_box)
    let upper = lowest_corner_at(tilted, 0.34 - 1e-3);
    check_jacobian(&world(vec![table_body(0.0, 0.0, 0.0), upper], vec![]), 5e-3, 0.02, 5);
}
