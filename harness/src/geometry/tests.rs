//! Tests of contact detection and re-evaluation: hand-computed gaps and normals for every pair,
//! Jacobians against finite differences of the re-evaluated geometry, margins and key stability.

use super::*;
use crate::model::{DofMask, Material, RigidBody, StaticCollider};
use nalgebra::{UnitQuaternion, Vector3};
use rstest::rstest;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, FRAC_PI_6};

/// Rounding tolerance for lengths of order 1 m computed in a few floating-point operations.
pub(super) const ROUND: f64 = 1e-12;

pub(super) fn mat() -> Material {
    Material::rigid(0.5)
}

pub(super) fn ground() -> StaticCollider {
    StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material: mat(),
    }
}

/// A static box whose top face is the plane z = 0, spanning |x|, |y| <= 1.
fn table() -> StaticCollider {
    StaticCollider {
        name: "table".into(),
        shape: StaticShape::Box {
            center: Vector3::new(0.0, 0.0, -0.5),
            orientation: UnitQuaternion::identity(),
            half_extents: [1.0, 1.0, 0.5],
        },
        material: mat(),
    }
}

fn sphere(r: f64, p: [f64; 3]) -> RigidBody {
    RigidBody::new("sphere", Shape::Sphere { radius: r }, 1.0, Vector3::from(p), mat())
}

fn cuboid(h: [f64; 3], p: [f64; 3]) -> RigidBody {
    RigidBody::new("box", Shape::Box { half_extents: h }, 1.0, Vector3::from(p), mat())
}

fn cylinder(r: f64, hh: f64, p: [f64; 3]) -> RigidBody {
    RigidBody::new("cylinder", Shape::Cylinder { radius: r, half_height: hh }, 1.0, Vector3::from(p), mat())
}

pub(super) fn world(bodies: Vec<RigidBody>, statics: Vec<StaticCollider>) -> World {
    let mut w = World::new();
    w.bodies = bodies;
    w.statics = statics;
    w
}

pub(super) fn rot(axis: Vector3<f64>, angle: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle)
}

pub(super) fn assert_vec(a: &Vector3<f64>, b: &Vector3<f64>, tol: f64) {
    assert!((a - b).norm() <= tol, "{a:?} != {b:?} (tol {tol:e})");
}

pub(super) fn assert_close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} != {b} (tol {tol:e})");
}

fn key(a: ColliderId, b: ColliderId, feature: u64) -> ContactKey {
    ContactKey { a, b, feature }
}

// ---------------------------------------------------------------- hand-computed pairs

#[test]
fn sphere_penetrating_ground() {
    let w = world(vec![sphere(0.1, [0.3, -0.2, 0.095])], vec![ground()]);
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    assert_eq!(c.key, key(ColliderId::Body(0), ColliderId::Static(0), 0));
    assert_eq!((c.body_a, c.body_b), (Some(0), None));
    assert_close(c.gap, -0.005, ROUND);
    assert_vec(&c.normal(), &Vector3::z(), 0.0);
    // Sphere bottom at z = -0.005, plane at 0: midpoint -0.0025.
    assert_vec(&c.point, &Vector3::new(0.3, -0.2, -0.0025), ROUND);
}

#[rstest]
#[case::within_margin(0.002, Some(0.001))]
#[case::beyond_margin(0.0005, None)]
fn sphere_above_ground_and_margin(#[case] margin: f64, #[case] expected: Option<f64>) {
    let w = world(vec![sphere(0.1, [0.0, 0.0, 0.101])], vec![ground()]);
    let set = detect(&w, margin);
    match expected {
        Some(g) => {
            assert_eq!(set.len(), 1);
            assert_close(set.contacts[0].gap, g, ROUND);
        }
        None => assert!(set.is_empty()),
    }
}

/// Step length and margin floor of the speculative-margin tests (s, m).
const DT: f64 = 0.01;
const FLOOR: f64 = 0.001;

/// A sphere of radius 0.1 with gap `gap` above the ground and vertical velocity `vz`.
fn moving_sphere(gap: f64, vz: f64) -> World {
    let mut b = sphere(0.1, [0.0, 0.0, 0.1 + gap]);
    b.linear_velocity = Vector3::new(0.0, 0.0, vz);
    world(vec![b], vec![ground()])
}

/// A sphere falling at 2 m/s is a contact while its gap is below `FLOOR + dt (2 + g dt)` (the
/// approach speed after one step of gravity), 0.021981 m; the fixed margin alone misses it.
#[rstest]
#[case::closes_this_step(0.02, 1)]
#[case::cannot_close(0.024, 0)]
fn falling_sphere_is_a_speculative_contact_while_its_gap_can_close(#[case] gap: f64, #[case] n: usize) {
    let w = moving_sphere(gap, -2.0);
    let threshold = FLOOR + DT * (2.0 + 9.81 * DT);
    assert!((gap < threshold) == (n == 1), "case set up on the right side of {threshold}");
    let set = detect_for_step(&w, FLOOR, DT);
    assert_eq!(set.len(), n);
    if n == 1 {
        assert_close(set.contacts[0].gap, gap, ROUND);
    }
    assert!(detect(&w, FLOOR).is_empty(), "beyond the fixed margin");
}

/// A rising sphere keeps the floor: inside it, it is a contact; beyond it, not, however fast it
/// moves (a run-wide margin of `v dt` would carry it).
#[rstest]
#[case::within_floor(0.0005, 1)]
#[case::beyond_floor(0.01, 0)]
fn receding_sphere_keeps_only_the_floor(#[case] gap: f64, #[case] n: usize) {
    assert_eq!(detect_for_step(&moving_sphere(gap, 2.0), FLOOR, DT).len(), n);
}

/// Two spheres approaching head on at 1 m/s each: the margin comes from the relative speed,
/// `FLOOR + 2 dt` = 0.021 m (gravity acts on both and cancels).
#[rstest]
#[case::closes_this_step(0.019, 1)]
#[case::cannot_close(0.023, 0)]
fn approaching_spheres_use_their_relative_speed(#[case] gap: f64, #[case] n: usize) {
    let (mut a, mut b) = (sphere(0.1, [0.0, 0.0, 1.0]), sphere(0.1, [0.2 + gap, 0.0, 1.0]));
    a.linear_velocity = Vector3::new(1.0, 0.0, 0.0);
    b.linear_velocity = Vector3::new(-1.0, 0.0, 0.0);
    assert_eq!(detect_for_step(&world(vec![a, b], vec![]), FLOOR, DT).len(), n);
}

/// A box with its bottom face 0.02 m above the ground, spinning at 20 rad/s about y: its +x
/// corners descend at `20 · 0.1 = 2` m/s (plus gravity), so they are contacts (threshold 0.021981
/// m); its -x corners rise and stay out. Feature bit 0 set means the corner at -h along x.
#[test]
fn spinning_box_admits_only_its_descending_corners() {
    let mut b = cuboid([0.1; 3], [0.0, 0.0, 0.12]);
    b.angular_velocity = Vector3::new(0.0, 20.0, 0.0);
    let set = detect_for_step(&world(vec![b], vec![ground()]), FLOOR, DT);
    assert_eq!(set.len(), 2);
    assert!(
        set.contacts.iter().all(|c| c.key.feature & 1 == 0),
        "{:?}",
        set.contacts.iter().map(|c| c.key).collect::<Vec<_>>()
    );
}

#[test]
fn two_spheres_normal_from_b_to_a() {
    // Body 0 (A, lower index) at the origin, body 1 (B) at distance 0.25 along (1, 2, 2)/3.
    let d = Vector3::new(1.0, 2.0, 2.0) / 3.0;
    let cb: Vector3<f64> = d * 0.25;
    let w = world(vec![sphere(0.1, [0.0; 3]), sphere(0.2, [cb.x, cb.y, cb.z])], vec![]);
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    assert_eq!(c.key, key(ColliderId::Body(0), ColliderId::Body(1), 0));
    assert_close(c.gap, 0.25 - 0.3, ROUND);
    assert_vec(&c.normal(), &-d, ROUND);
    // Surface points at 0.1 d (on A) and 0.05 d (on B).
    assert_vec(&c.point, &(0.075 * d), ROUND);
}

/// Bodies joined directly by a joint do not collide (the adjacent-body filter); a third body
/// touching one of them does, also when that third body is jointed to the world.
#[test]
fn jointed_bodies_do_not_collide() {
    let mut w = world(vec![sphere(0.1, [0.0; 3]), sphere(0.1, [0.15, 0.0, 0.0]), sphere(0.1, [0.3, 0.0, 0.0])], vec![]);
    let all = detect(&w, 0.0).len();
    assert_eq!(all, 2, "0-1 and 1-2 overlap");
    w.joints.push(crate::model::Joint::ball_at(&w, 1, Some(0), Vector3::new(0.075, 0.0, 0.0)));
    w.joints.push(crate::model::Joint::ball_at(&w, 2, None, Vector3::new(0.3, 0.0, 0.0)));
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 1);
    assert_eq!(set.contacts[0].key, key(ColliderId::Body(1), ColliderId::Body(2), 0));
}

#[test]
fn coincident_sphere_centres_have_a_defined_normal() {
    let w = world(vec![sphere(0.1, [1.0, 2.0, 3.0]), sphere(0.1, [1.0, 2.0, 3.0])], vec![]);
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    assert!((c.normal().norm() - 1.0).abs() < ROUND && c.point.iter().all(|x| x.is_finite()));
    assert_close(c.gap, -0.2, ROUND);
}

#[rstest]
// Above the top face.
#[case::face([0.2, 0.3, 0.095], -0.005, [0.0, 0.0, 1.0])]
// Beside the edge x = 1, z = 0: centre distance 0.06 sqrt(2) from the edge.
#[case::edge([1.06, 0.0, 0.06], 0.06 * 2f64.sqrt() - 0.1, [1.0, 0.0, 1.0])]
// Centre 0.02 below the top face, inside the box: leaves through the top face.
#[case::inside([0.0, 0.5, -0.02], -0.12, [0.0, 0.0, 1.0])]
fn sphere_on_static_box(#[case] p: [f64; 3], #[case] gap: f64, #[case] normal: [f64; 3]) {
    let w = world(vec![sphere(0.1, p)], vec![table()]);
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    assert_close(c.gap, gap, ROUND);
    assert_vec(&c.normal(), &Vector3::from(normal).normalize(), ROUND);
}

#[test]
fn box_sphere_body_pair_with_box_as_a() {
    // Body 0 is the box (A), body 1 the sphere (B) above it: the normal points from the sphere to
    // the box, i.e. down.
    let w = world(vec![cuboid([0.2, 0.2, 0.1], [0.0; 3]), sphere(0.05, [0.05, 0.0, 0.149])], vec![]);
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    assert_eq!(c.key, key(ColliderId::Body(0), ColliderId::Body(1), 0));
    assert_close(c.gap, -0.001, ROUND);
    assert_vec(&c.normal(), &-Vector3::z(), ROUND);
    assert_vec(&c.point, &Vector3::new(0.05, 0.0, 0.0995), ROUND);
}

#[test]
fn box_rotated_about_z_rests_on_four_corners() {
    let b = cuboid([0.2, 0.1, 0.05], [0.4, 0.1, 0.05]).with_orientation(rot(Vector3::z(), FRAC_PI_4));
    let w = world(vec![b], vec![ground()]);
    let set = detect(&w, 1e-3);
    // The bottom corners are those with a negative z coordinate: bit 2 set.
    let features: Vec<u64> = set.contacts.iter().map(|c| c.key.feature).collect();
    assert_eq!(features, vec![4, 5, 6, 7]);
    for c in &set.contacts {
        assert_close(c.gap, 0.0, ROUND);
        assert_vec(&c.normal(), &Vector3::z(), 0.0);
        assert_close(c.point.z, 0.0, ROUND);
    }
}

#[test]
fn box_on_slope_touches_with_the_slope_normal() {
    let a: f64 = 0.3;
    let n = Vector3::new(-a.sin(), 0.0, a.cos());
    let down_slope = Vector3::new(a.cos(), 0.0, a.sin());
    let slope = StaticCollider {
        name: "slope".into(),
        shape: StaticShape::HalfSpace { normal: n, offset: 0.0 },
        material: mat(),
    };
    let hz = 0.05;
    let p = hz * n + 0.3 * down_slope;
    // Rotating by -a about y takes the body z axis onto n.
    let b = cuboid([0.2, 0.1, hz], [p.x, p.y, p.z]).with_orientation(rot(Vector3::y(), -a));
    let set = detect(&world(vec![b], vec![slope]), 1e-4);
    assert_eq!(set.len(), 4);
    for c in &set.contacts {
        assert_close(c.gap, 0.0, ROUND);
        assert_vec(&c.normal(), &n, 0.0);
    }
}

#[rstest]
#[case::small_box_on_static_box(false)]
#[case::small_box_on_body_box(true)]
fn box_face_on_box_face_gives_four_points(#[case] body_table: bool) {
    // A 0.2 m cube sinks 1 mm into the top face z = 0 of a larger box.
    let cube = cuboid([0.1, 0.1, 0.1], [0.2, -0.3, 0.099]);
    let w = if body_table {
        // The table as body 0 (A); the cube, body 1, is B: the normal points down.
        world(vec![cuboid([1.0, 1.0, 0.5], [0.0, 0.0, -0.5]), cube], vec![])
    } else {
        world(vec![cube], vec![table()])
    };
    let n = if body_table { -Vector3::z() } else { Vector3::z() };
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 4);
    for c in &set.contacts {
        assert_close(c.gap, -0.001, ROUND);
        assert_vec(&c.normal(), &n, ROUND);
        assert_close(c.point.z, -0.0005, ROUND);
        assert_close((c.point.x - 0.2).abs(), 0.1, ROUND);
        assert_close((c.point.y + 0.3).abs(), 0.1, ROUND);
    }
}

/// Box 0 with an edge along x on top, box 1 above it with an edge along y at the bottom.
fn crossed_boxes(overlap: f64) -> World {
    let h = 0.1;
    let top = h * 2f64.sqrt();
    world(
        vec![
            cuboid([h; 3], [0.0; 3]).with_orientation(rot(Vector3::x(), FRAC_PI_4)),
            cuboid([h; 3], [0.0, 0.0, 2.0 * top - overlap]).with_orientation(rot(Vector3::y(), FRAC_PI_4)),
        ],
        vec![],
    )
}

#[test]
fn crossed_box_edges_touch_at_one_point() {
    let set = detect(&crossed_boxes(0.002), 0.0);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    assert_close(c.gap, -0.002, ROUND);
    // From B (box 1, above) to A (box 0, below).
    assert_vec(&c.normal(), &-Vector3::z(), ROUND);
    assert_vec(&c.point, &Vector3::new(0.0, 0.0, 0.1 * 2f64.sqrt() - 0.001), ROUND);
}

#[test]
fn flush_equal_boxes_report_each_corner_once() {
    // parry's two clipping passes both find the shared corners; they are merged.
    let lower = StaticCollider {
        name: "block".into(),
        shape: StaticShape::Box {
            center: Vector3::new(0.0, 0.0, -0.1),
            orientation: UnitQuaternion::identity(),
            half_extents: [0.1, 0.1, 0.1],
        },
        material: mat(),
    };
    let set = detect(&world(vec![cuboid([0.1, 0.1, 0.1], [0.0, 0.0, 0.1])], vec![lower]), 1e-6);
    assert_eq!(set.len(), 4);
    for c in &set.contacts {
        assert_close(c.gap, 0.0, ROUND);
        assert_close(c.point.x.abs(), 0.1, ROUND);
        assert_close(c.point.y.abs(), 0.1, ROUND);
    }
}

#[test]
fn cylinder_lying_touches_along_its_lowest_generator() {
    // Identity orientation: the axis (body y) is horizontal.
    let (r, hh) = (0.1, 0.2);
    let set = detect(&world(vec![cylinder(r, hh, [0.0, 0.0, r - 0.001])], vec![ground()]), 0.0);
    assert_eq!(set.len(), 2);
    for (c, y) in set.contacts.iter().zip([-hh, hh]) {
        assert_close(c.gap, -0.001, ROUND);
        assert_vec(&c.normal(), &Vector3::z(), 0.0);
        assert_vec(&c.point, &Vector3::new(0.0, y, -0.0005), ROUND);
    }
}

#[test]
fn cylinder_standing_touches_at_rim_points() {
    let (r, hh) = (0.1, 0.2);
    // Rotating +90° about x takes the body y axis to world z; the -h cap (features 2..6) is down.
    let b = cylinder(r, hh, [0.0, 0.0, hh]).with_orientation(rot(Vector3::x(), FRAC_PI_2));
    let w = world(vec![b], vec![ground()]);
    let set = detect(&w, 1e-6);
    let features: Vec<u64> = set.contacts.iter().map(|c| c.key.feature).collect();
    assert_eq!(features, vec![2, 3, 4, 5]);
    for c in &set.contacts {
        assert_close(c.gap, 0.0, ROUND);
        assert_close(c.point.xy().norm(), r, ROUND);
    }
    // Upside down, the +h cap is down.
    let b = cylinder(r, hh, [0.0, 0.0, hh]).with_orientation(rot(Vector3::x(), -FRAC_PI_2));
    let set = detect(&world(vec![b], vec![ground()]), 1e-6);
    let features: Vec<u64> = set.contacts.iter().map(|c| c.key.feature).collect();
    assert_eq!(features, vec![6, 7, 8, 9]);
    // The generator ends are still defined with the axis along the normal: re-evaluating a
    // lying cylinder's contacts in the standing pose gives a bottom rim point (gap 0) and a top
    // rim point (gap 2h).
    let lying = detect(&world(vec![cylinder(r, hh, [0.0, 0.0, r])], vec![ground()]), 1e-6);
    let standing = reevaluate(&w, &lying);
    assert_close(standing.contacts[0].gap, 0.0, ROUND);
    assert_close(standing.contacts[1].gap, 2.0 * hh, ROUND);
}

#[test]
fn cylinder_tilted_touches_at_one_rim_point() {
    let (r, hh) = (0.1, 0.2);
    let phi = FRAC_PI_6;
    // Axis a = (0, cos phi, sin phi): the -h end is lower, its lowest rim point is at
    // z_c - h sin(phi) - r cos(phi).
    let zc = hh * phi.sin() + r * phi.cos() - 0.002;
    let b = cylinder(r, hh, [0.0, 0.0, zc]).with_orientation(rot(Vector3::x(), phi));
    let set = detect(&world(vec![b], vec![ground()]), 0.01);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    assert_eq!(c.key.feature, 0);
    assert_close(c.gap, -0.002, ROUND);
    let lowest = Vector3::new(0.0, -hh * phi.cos() + r * phi.sin(), -0.002);
    assert_vec(&c.point, &(lowest - Vector3::new(0.0, 0.0, -0.001)), ROUND);
}

#[test]
fn cylinder_on_static_box_uses_one_parry_point() {
    let r = 0.1;
    let w = world(vec![cylinder(r, 0.2, [0.0, 0.0, r + 0.003])], vec![table()]);
    let set = detect(&w, 0.01);
    assert_eq!(set.len(), 1);
    let c = &set.contacts[0];
    // parry's GJK converges to its own tolerance, far below 1 µm here.
    assert_close(c.gap, 0.003, 1e-9);
    assert_vec(&c.normal(), &Vector3::z(), 1e-6);
    // Re-evaluated 1 m higher, the same single point has gap 1.003.
    let mut q = w.positions();
    q[2] += 1.0;
    let lifted = reevaluate(&w.at_positions(&q), &set);
    assert_close(lifted.contacts[0].gap, 1.003, 1e-9);
}

#[test]
fn box_box_features_survive_separation() {
    let w = world(vec![cuboid([0.1, 0.1, 0.1], [0.2, -0.3, 0.099])], vec![table()]);
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 4);
    // Lifted 0.5 m, far beyond any margin, the manifold (computed without cut-off) still holds
    // the same four feature ids, and their gaps are the new heights.
    let mut q = w.positions();
    q[2] += 0.5;
    let lifted = reevaluate(&w.at_positions(&q), &set);
    let ids: Vec<u64> = parry::box_box(
        (&(w.bodies[0].position + Vector3::new(0.0, 0.0, 0.5)), &w.bodies[0].orientation, &Vector3::repeat(0.1)),
        (&Vector3::new(0.0, 0.0, -0.5), &UnitQuaternion::identity(), &Vector3::new(1.0, 1.0, 0.5)),
        f64::INFINITY,
    )
    .iter()
    .map(|f| u64::from(f.id))
    .collect();
    for (a, b) in lifted.contacts.iter().zip(&set.contacts) {
        assert!(ids.contains(&b.key.feature));
        assert_eq!(a.key, b.key);
        assert_close(a.gap, 0.499, ROUND);
        assert_vec(&a.point, &(b.point + Vector3::new(0.0, 0.0, 0.25)), ROUND);
    }
}

#[test]
fn far_apart_colliders_give_nothing() {
    let w = world(
        vec![sphere(0.1, [0.0, 0.0, 1.0]), cuboid([0.1; 3], [5.0, 0.0, 1.0]), cylinder(0.1, 0.2, [-5.0, 0.0, 1.0])],
        vec![ground(), table()],
    );
    assert!(detect(&w, 0.01).is_empty());
}

// ---------------------------------------------------------------- keys and re-evaluation

/// A scene with every supported pair in contact.
fn scene() -> World {
    let tilted = rot(Vector3::new(0.3, -0.2, 1.0), 0.4);
    world(
        vec![
            sphere(0.1, [0.0, 0.0, 0.099]),
            sphere(0.1, [0.19, 0.0, 0.1]),
            cuboid([0.1, 0.1, 0.1], [0.6, 0.5, 0.0995]).with_orientation(tilted),
            cuboid([0.1, 0.05, 0.1], [0.6, 0.5, 0.299]),
            cylinder(0.1, 0.2, [-0.6, 0.0, 0.0999]),
            sphere(0.05, [1.5, 1.5, 0.049]),
        ],
        vec![ground()],
    )
}

#[test]
fn keys_are_sorted_and_stable() {
    let w = scene();
    let (s1, s2) = (detect(&w, 1e-3), detect(&w, 1e-3));
    assert_eq!(s1, s2);
    assert!(s1.contacts.windows(2).all(|p| p[0].key < p[1].key), "keys not strictly increasing");
    assert!(s1.contacts.iter().all(|c| c.key.a < c.key.b));
    // Every pair kind appears: sphere-ground (3), sphere-sphere, box-ground, box-box, cylinder-ground.
    let pairs: std::collections::BTreeSet<_> = s1.contacts.iter().map(|c| (c.key.a, c.key.b)).collect();
    assert_eq!(pairs.len(), 7, "{pairs:?}");
}

#[test]
fn reevaluate_at_the_same_configuration_reproduces_detect() {
    let w = scene();
    let set = detect(&w, 1e-3);
    let again = reevaluate(&w, &set);
    assert_eq!(again.len(), set.len());
    for (a, b) in again.contacts.iter().zip(&set.contacts) {
        assert_eq!(a.key, b.key);
        assert_close(a.gap, b.gap, ROUND);
        assert_vec(&a.point, &b.point, ROUND);
        assert_vec(&a.normal(), &b.normal(), ROUND);
    }
}

#[test]
fn reevaluate_keeps_separated_features() {
    let w = scene();
    let set = detect(&w, 1e-3);
    // Lift everything by 1 m: same keys and order, gaps grow by 1 m for the ground contacts.
    let mut q = w.positions();
    for i in 0..w.bodies.len() {
        q[7 * i + 2] += 1.0;
    }
    let lifted = reevaluate(&w.at_positions(&q), &set);
    assert_eq!(lifted.len(), set.len());
    for (a, b) in lifted.contacts.iter().zip(&set.contacts) {
        assert_eq!(a.key, b.key);
        let expected = if b.key.b == ColliderId::Static(0) { b.gap + 1.0 } else { b.gap };
        assert_close(a.gap, expected, 1e-9);
    }
}

#[test]
fn reevaluate_falls_back_to_the_nearest_manifold_point() {
    let w = world(vec![cuboid([0.1, 0.1, 0.1], [0.0, 0.0, 0.099])], vec![table()]);
    let set = detect(&w, 0.0);
    assert_eq!(set.len(), 4);
    // An unknown feature id placed near the first corner is matched to that corner.
    let mut stale = set.clone();
    stale.contacts.truncate(1);
    stale.contacts[0].key.feature = u64::from(u32::MAX);
    stale.contacts[0].point += Vector3::new(0.01, -0.01, 0.0);
    let r = reevaluate(&w, &stale);
    assert_eq!(r.contacts[0].key.feature, u64::from(u32::MAX));
    assert_vec(&r.contacts[0].point, &set.contacts[0].point, ROUND);
    assert_close(r.contacts[0].gap, set.contacts[0].gap, ROUND);
}

// ---------------------------------------------------------------- Jacobians

/// Deterministic pseudo-random numbers in [-1, 1) (64-bit LCG; the tests need variety, not quality).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// World position at configuration `q` of the material point of body `i` that is at `p` in `w`.
fn material_point(w: &World, i: usize, p: &Vector3<f64>, q: &[f64]) -> Vector3<f64> {
    let b = &w.bodies[i];
    let o = 7 * i;
    let x = Vector3::new(q[o], q[o + 1], q[o + 2]);
    let r = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[o + 3], q[o + 4], q[o + 5], q[o + 6]));
    x + r * (b.orientation.inverse() * (p - b.position))
}

/// Checks each contact's Jacobian against central differences along random velocities: the
/// normal row against the rate of the re-evaluated gap, all rows against the relative velocity of
/// the two bodies' material points at the contact point, expressed in the contact frame.
///
/// Tolerance: the central difference's truncation error is `h^2/6 |f'''|`, and every quantity here
/// has `|f'''| <= (s/l)^3 l = s^3/l^2` with `s` the largest point speed (`|v| + |w| R`) and `l`
/// the smallest length (radius, half extent) of the scene; rounding of coordinates of order 1
/// adds `~ 1e2 eps / h`.
pub(super) fn check_jacobian(w: &World, margin: f64, min_len: f64, seeds: u64) {
    let set = detect(w, margin);
    assert!(!set.is_empty());
    let q0 = w.positions();
    let nv = w.layout().nv;
    let h = 1e-5;
    for seed in 0..seeds {
        let mut rng = Lcg(seed + 1);
        let v: Vec<f64> = (0..nv).map(|_| rng.next()).collect();
        let vm: Vec<f64> = v.iter().map(|x| -x).collect();
        let (qp, qm) = (w.integrate_positions(&q0, &v, h), w.integrate_positions(&q0, &vm, h));
        let (sp, sm) = (reevaluate(&w.at_positions(&qp), &set), reevaluate(&w.at_positions(&qm), &set));
        let mut probe = w.clone();
        probe.set_state(&q0, &v);
        let s = probe
            .bodies
            .iter()
            .map(|b| b.linear_velocity.norm() + b.angular_velocity.norm() * b.shape.bounding_radius())
            .fold(0.0, f64::max);
        let tol = h * h * s.powi(3) / (min_len * min_len) + 1e2 * f64::EPSILON / h;
        for (i, c) in set.contacts.iter().enumerate() {
            let u = c.velocity(&v);
            let gap_rate = (sp.contacts[i].gap - sm.contacts[i].gap) / (2.0 * h);
            assert!((gap_rate - u[0]).abs() <= tol, "{:?}: gap rate {gap_rate} vs u_n {} (tol {tol:e})", c.key, u[0]);
            let point_velocity = |body: Option<usize>| {
                body.map_or(Vector3::zeros(), |b| {
                    (material_point(w, b, &c.point, &qp) - material_point(w, b, &c.point, &qm)) / (2.0 * h)
                })
            };
            let rel = c.frame.transpose() * (point_velocity(c.body_a) - point_velocity(c.body_b));
            for r in 0..3 {
                assert!((rel[r] - u[r]).abs() <= tol, "{:?} row {r}: {} vs {} (tol {tol:e})", c.key, rel[r], u[r]);
            }
        }
    }
}

fn tilted(b: RigidBody) -> RigidBody {
    b.with_orientation(rot(Vector3::new(0.4, 1.0, -0.3), 0.35))
}

#[rstest]
#[case::sphere_ground(world(vec![sphere(0.1, [0.1, 0.2, 0.098])], vec![ground()]), 0.0, 0.1)]
#[case::sphere_ground_planar(
    world(vec![sphere(0.1, [0.1, 0.2, 0.098]).with_dofs(DofMask::PLANAR_XZ)], vec![ground()]), 0.0, 0.1)]
#[case::box_ground_all_corners(world(vec![tilted(cuboid([0.2, 0.1, 0.05], [0.0, 0.0, 0.1]))], vec![ground()]), 1.0, 0.05)]
#[case::box_ground_planar(
    world(vec![tilted(cuboid([0.2, 0.1, 0.05], [0.0, 0.0, 0.1])).with_dofs(DofMask::PLANAR_XZ)], vec![ground()]),
    1.0, 0.05)]
#[case::sphere_sphere(world(vec![sphere(0.1, [0.0; 3]), sphere(0.15, [0.1, -0.15, 0.16])], vec![]), 0.0, 0.1)]
#[case::sphere_sphere_planar(
    world(vec![sphere(0.1, [0.0; 3]), sphere(0.15, [0.1, 0.0, 0.22]).with_dofs(DofMask::PLANAR_XZ)], vec![]),
    0.0, 0.1)]
#[case::sphere_box_face(world(vec![sphere(0.1, [0.05, 0.02, 0.19]), tilted(cuboid([0.2, 0.15, 0.1], [0.0; 3]))], vec![]), 0.05, 0.1)]
#[case::box_sphere_edge(world(vec![cuboid([0.2, 0.15, 0.1], [0.0; 3]), sphere(0.1, [0.25, 0.02, 0.14])], vec![]), 0.0, 0.1)]
#[case::sphere_inside_box(world(vec![sphere(0.1, [0.05, 0.02, 0.05]), cuboid([0.2, 0.15, 0.1], [0.0; 3])], vec![]), 0.0, 0.1)]
#[case::sphere_static_box_corner(world(vec![sphere(0.1, [1.05, -1.04, 0.03])], vec![table()]), 0.0, 0.1)]
#[case::box_on_static_box(world(vec![tilted(cuboid([0.1, 0.08, 0.06], [0.0, 0.0, 0.08]))], vec![table()]), 0.05, 0.06)]
#[case::box_on_body_box(
    world(vec![cuboid([0.5, 0.5, 0.1], [0.0; 3]), tilted(cuboid([0.1, 0.08, 0.06], [0.0, 0.0, 0.18]))], vec![]),
    0.05, 0.06)]
#[case::box_on_body_box_planar(
    world(vec![cuboid([0.5, 0.5, 0.1], [0.0; 3]).with_dofs(DofMask::VERTICAL),
               cuboid([0.1, 0.08, 0.06], [0.0, 0.0, 0.159])
                   .with_orientation(rot(Vector3::y(), 0.1)).with_dofs(DofMask::PLANAR_XZ)], vec![]),
    0.05, 0.06)]
#[case::crossed_box_edges(crossed_boxes(0.002), 0.0, 0.1)]
#[case::cylinder_lying(
    world(vec![cylinder(0.1, 0.2, [0.0, 0.0, 0.1]).with_orientation(rot(Vector3::new(1.0, 0.0, 0.2), 0.05))],
          vec![ground()]), 0.1, 0.1)]
#[case::cylinder_tilted(
    world(vec![cylinder(0.1, 0.2, [0.0, 0.0, 0.18]).with_orientation(rot(Vector3::new(1.0, 0.3, 0.0), 0.6))],
          vec![ground()]), 0.01, 0.1)]
#[case::cylinder_standing(
    world(vec![cylinder(0.1, 0.2, [0.0, 0.0, 0.2]).with_orientation(rot(Vector3::x(), FRAC_PI_2))], vec![ground()]),
    0.001, 0.1)]
fn jacobian_matches_finite_differences(#[case] w: World, #[case] margin: f64, #[case] min_len: f64) {
    check_jacobian(&w, margin, min_len, 5);
}

#[test]
fn planar_body_uses_only_its_free_columns() {
    let w = world(vec![sphere(0.1, [0.0, 0.0, 0.1]).with_dofs(DofMask::PLANAR_XZ)], vec![ground()]);
    let set = detect(&w, 1e-6);
    let blk = &set.contacts[0].jacobian[0];
    assert_eq!((blk.v_offset, blk.ncols), (0, 3));
}

#[test]
fn rolling_sphere_has_zero_slip() {
    // Contact point of a sphere on the ground: p - c = -(r + gap/2) n. Its velocity is
    // v + w x (p - c); with n = z, t1 = x (tangent_basis), w = (0, wy, 0) the slip along t1 is
    // vx - (r + gap/2) wy, zero when rolling with wy = vx / r at gap 0.
    let (r, vx) = (0.1, 0.7);
    let mut b = sphere(r, [0.0, 0.0, r]);
    b.linear_velocity = Vector3::new(vx, 0.0, 0.0);
    let w = world(vec![b], vec![ground()]);
    let set = detect(&w, 1e-6);
    let c = &set.contacts[0];
    let mut v = w.velocities();
    v[4] = vx / r;
    let u = c.velocity(&v);
    assert_vec(&Vector3::from(u), &Vector3::zeros(), ROUND);
    v[4] = 0.0; // sliding: slip equals vx along t1 = x
    let u = c.velocity(&v);
    assert_vec(&Vector3::from(u), &Vector3::new(0.0, vx, 0.0), ROUND);
}

/// A scattered scene of `n` spheres, boxes and cylinders (some rotated, some fast) in a 4 m cube
/// over the ground, from a fixed linear congruential sequence.
fn scattered_scene(n: usize) -> World {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let bodies = (0..n)
        .map(|i| {
            let p = [4.0 * next(), 4.0 * next(), 0.05 + 4.0 * next()];
            let mut b = match i % 3 {
                0 => sphere(0.05 + 0.1 * next(), p),
                1 => cuboid([0.05 + 0.1 * next(), 0.05 + 0.1 * next(), 0.05 + 0.1 * next()], p),
                _ => cylinder(0.05 + 0.1 * next(), 0.05 + 0.1 * next(), p),
            };
            b.orientation = rot(Vector3::new(next() - 0.5, next() - 0.5, next() - 0.5), 3.0 * next());
            let fast = if i % 7 == 0 { 20.0 } else { 1.0 };
            b.linear_velocity = fast * Vector3::new(next() - 0.5, next() - 0.5, next() - 0.5);
            b.angular_velocity = fast * Vector3::new(next() - 0.5, next() - 0.5, next() - 0.5);
            b
        })
        .collect();
    world(bodies, vec![ground(), table()])
}

/// The sweep and prune keeps every body pair whose parts' bounding spheres the exact test of
/// `detect_with` admits (all pairs, brute force, with the same per-pair bound), so detection with
/// the broad phase returns what testing all pairs returns; and it prunes: on a scattered scene of
/// 300 bodies it passes under a tenth of the 44,850 body pairs.
#[rstest]
#[case::fixed_margin(None)]
#[case::speculative(Some(0.01))]
fn sweep_and_prune_keeps_every_pair_the_exact_test_admits(#[case] dt: Option<f64>) {
    let w = scattered_scene(300);
    let margin = 0.02;
    let nb = w.bodies.len();
    let ids: Vec<ColliderId> =
        (0..nb).map(ColliderId::Body).chain((0..w.statics.len()).map(ColliderId::Static)).collect();
    let geoms: Vec<Vec<Geom>> = ids.iter().map(|&id| Geom::parts(&w, id)).collect();
    let speed: Vec<f64> = match dt {
        None => vec![0.0; ids.len()],
        Some(dt) => ids.iter().zip(&geoms).map(|(&id, g)| dt * Motion::of(&w, id, g, dt).speed_bound).collect(),
    };
    let widen: Vec<f64> = (0..nb).map(|i| 0.5 * margin + speed[i]).collect();
    let pairs = candidate_pairs(&geoms[..nb], &widen, w.statics.len());
    let kept: std::collections::HashSet<(usize, usize)> = pairs.iter().copied().collect();
    assert_eq!(kept.len(), pairs.len(), "no pair twice");
    let mut admitted = 0;
    for i in 0..nb {
        for j in i + 1..ids.len() {
            let bound = margin + speed[i] + speed[j];
            if geoms[i].iter().any(|a| geoms[j].iter().any(|b| a.may_touch(b, bound))) {
                admitted += 1;
                assert!(kept.contains(&(i, j)), "pair ({i}, {j}) admitted by the exact test but pruned");
            }
        }
    }
    assert!(admitted > 0, "the scene has touching pairs");
    let body_pairs = pairs.iter().filter(|&&(_, j)| j < nb).count();
    assert!(body_pairs < nb * (nb - 1) / 20, "{body_pairs} body pairs pass the sweep");
}
