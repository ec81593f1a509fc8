//! Narrow phase through parry3d-f64: box–box contact manifolds and a single-point fallback for
//! the remaining convex pairs (cylinder against anything but a half-space).
//!
//! parry's types are glam-based; positions and orientations are converted at this boundary only.

use super::{Feature, Geom};
use nalgebra::{UnitQuaternion, Vector3};
use parry3d_f64::math::{Pose, Rotation, Vector};
use parry3d_f64::query::details::contact_manifold_cuboid_cuboid;
use parry3d_f64::query::ContactManifold;
use parry3d_f64::shape::{Ball, Cuboid, Cylinder, HalfSpace, PackedFeatureId, Shape as ParryShape};

fn to_glam(v: &Vector3<f64>) -> Vector {
    Vector::new(v.x, v.y, v.z)
}

fn from_glam(v: Vector) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

fn pose(x: &Vector3<f64>, rot: &UnitQuaternion<f64>) -> Pose {
    let c = rot.coords; // (i, j, k, w)
    Pose::from_parts(to_glam(x), Rotation::from_xyzw(c.x, c.y, c.z, c.w))
}

/// 16-bit form of a parry feature id: 2-bit kind (vertex, edge, face) and 14-bit code. Cuboid
/// codes are below 256, so the map is injective for boxes.
fn pack(f: PackedFeatureId) -> u32 {
    ((f.0 >> 30) << 14) | (f.0 & 0x3fff)
}

/// The contact manifold of box A (centre `xa`, orientation `ra`, half extents `ha`) against box B:
/// parry's SAT plus face clipping (up to 8 points), with the points' gaps measured along the
/// manifold normal. The feature id of a point is `pack(fid_a) << 16 | pack(fid_b)`, made of the
/// body-fixed vertex/edge/face ids of the two boxes, so it names the same pair of features at
/// every configuration. Points with `gap > prediction` may be included; `prediction = inf`
/// returns the whole clipped manifold. Points sharing an id, or coinciding in space (parry's two
/// clipping passes both report a vertex lying on the other face's boundary, e.g. equal boxes
/// stacked flush), are reported once: the lowest id is kept. Sorted by id.
pub(super) fn box_box(
    (xa, ra, ha): (&Vector3<f64>, &UnitQuaternion<f64>, &Vector3<f64>),
    (xb, rb, hb): (&Vector3<f64>, &UnitQuaternion<f64>, &Vector3<f64>),
    prediction: f64,
) -> Vec<Feature> {
    let (pa, pb) = (pose(xa, ra), pose(xb, rb));
    let mut manifold = ContactManifold::<(), ()>::new();
    contact_manifold_cuboid_cuboid(
        &pa.inv_mul(&pb),
        &Cuboid::new(to_glam(ha)),
        &Cuboid::new(to_glam(hb)),
        prediction,
        &mut manifold,
    );
    // parry's normal is A's outward normal (towards B), in A's frame; ours points from B to A.
    let n = -from_glam(pa.rotation * manifold.local_n1);
    let Some(n) = n.try_normalize(0.0) else { return Vec::new() };
    let mut points: Vec<Feature> = manifold
        .points
        .iter()
        .map(|p| {
            let id = (pack(p.fid1) << 16) | pack(p.fid2);
            let (on_a, on_b) = (from_glam(pa * p.local_p1), from_glam(pb * p.local_p2));
            Feature::from_surface_points(id, &on_a, &on_b, n, p.dist)
        })
        .collect();
    points.sort_by_key(|p| p.id);
    // Coincidence tolerance: duplicates differ by rounding (~1e-16 of the box size); distinct
    // features of a manifold are a macroscopic distance apart.
    let tol = 1e-9 * (ha.norm() + hb.norm());
    let mut kept: Vec<Feature> = Vec::with_capacity(points.len());
    for p in points {
        if kept.iter().all(|k| k.id != p.id && (k.point - p.point).norm() > tol) {
            kept.push(p);
        }
    }
    kept
}

/// One closest-point / deepest-penetration contact between two convex colliders (feature 0), from
/// `parry3d_f64::query::contact`; `None` when they are farther apart than `prediction` or parry
/// does not support the pair.
pub(super) fn single_point(a: &Geom, b: &Geom, prediction: f64) -> Option<Feature> {
    let (pa, sa) = parry_shape(a);
    let (pb, sb) = parry_shape(b);
    let c = parry3d_f64::query::contact(&pa, sa.as_ref(), &pb, sb.as_ref(), prediction).ok()??;
    // normal1 is A's outward normal (towards B), world frame.
    let n = (-from_glam(c.normal1)).try_normalize(0.0)?;
    Some(Feature::from_surface_points(0, &from_glam(c.point1), &from_glam(c.point2), n, c.dist))
}

fn parry_shape(g: &Geom) -> (Pose, Box<dyn ParryShape>) {
    match *g {
        Geom::Sphere { center, radius } => (pose(&center, &UnitQuaternion::identity()), Box::new(Ball::new(radius))),
        Geom::Cuboid { center, rot, half } => (pose(&center, &rot), Box::new(Cuboid::new(to_glam(&half)))),
        Geom::Cylinder { center, rot, radius, half_height } => {
            // parry's cylinder axis is its local y, as ours.
            (pose(&center, &rot), Box::new(Cylinder::new(half_height, radius)))
        }
        Geom::HalfSpace { normal, offset } => {
            (pose(&(offset * normal), &UnitQuaternion::identity()), Box::new(HalfSpace::new(to_glam(&normal))))
        }
    }
}
