//! Closed-form narrow phase: spheres, half-spaces, box corners and cylinder generators.
//!
//! Every function returns a [`Feature`] whose normal points from collider B to collider A, with
//! the argument order stating which is which (e.g. [`sphere_box`]: A = sphere, B = box).
//! All features are defined for every configuration (the gap of a separated pair is still the
//! signed distance of the same feature), which is what re-evaluation needs.

use super::Feature;
use nalgebra::{UnitQuaternion, Vector3};

/// Sphere (A) against the half-space `{x : n . x <= offset}` (B). Feature 0.
pub(super) fn sphere_plane(c: &Vector3<f64>, r: f64, n: &Vector3<f64>, offset: f64) -> Feature {
    let gap = n.dot(c) - offset - r;
    // Sphere surface point c - r n, plane point c - (r + gap) n: the midpoint.
    Feature { id: 0, point: c - (r + 0.5 * gap) * n, normal: *n, gap }
}

/// Sphere A (centre `ca`, radius `ra`) against sphere B. Feature 0. Coincident centres get the
/// normal `+z` (any unit vector is a valid separating direction there).
pub(super) fn sphere_sphere(ca: &Vector3<f64>, ra: f64, cb: &Vector3<f64>, rb: f64) -> Feature {
    let d = ca - cb;
    let n = d.try_normalize(0.0).unwrap_or_else(Vector3::z);
    let gap = d.norm() - ra - rb;
    Feature::from_surface_points(0, &(ca - ra * n), &(cb + rb * n), n, gap)
}

/// Sphere A (centre `c`, radius `r`) against a box B (centre `bc`, orientation `rot`, half extents
/// `h`). Feature 0. Outside the box the normal is the direction from the closest box point to the
/// centre; with the centre inside (or on) the box it is the outward normal of the face of least
/// penetration (lowest axis index on ties), so it is always defined.
pub(super) fn sphere_box(
    c: &Vector3<f64>,
    r: f64,
    bc: &Vector3<f64>,
    rot: &UnitQuaternion<f64>,
    h: &Vector3<f64>,
) -> Feature {
    let cl = rot.inverse_transform_vector(&(c - bc));
    let q = Vector3::from_fn(|i, _| cl[i].clamp(-h[i], h[i]));
    let d = cl - q;
    let dist = d.norm();
    let (nl, box_point, gap) = if dist > 0.0 {
        (d / dist, q, dist - r)
    } else {
        // Centre inside: leave through the nearest face.
        let depth = Vector3::from_fn(|i, _| h[i] - cl[i].abs());
        let axis = (1..3).fold(0, |best, i| if depth[i] < depth[best] { i } else { best });
        let sign = if cl[axis] >= 0.0 { 1.0 } else { -1.0 };
        let mut nl = Vector3::zeros();
        nl[axis] = sign;
        let mut p = cl;
        p[axis] = sign * h[axis];
        (nl, p, -depth[axis] - r)
    };
    let n = rot * nl;
    let on_box = bc + rot * box_point;
    Feature::from_surface_points(0, &(c - r * n), &on_box, n, gap)
}

/// Body-frame position of box corner `k` (bit `i` of `k` set: negative coordinate along axis `i`).
pub(super) fn box_corner(h: &Vector3<f64>, k: u32) -> Vector3<f64> {
    Vector3::from_fn(|i, _| if k & (1 << i) != 0 { -h[i] } else { h[i] })
}

/// Corner `k` (0..8, see [`box_corner`]; higher bits ignored) of box A against the half-space B.
pub(super) fn box_corner_plane(
    x: &Vector3<f64>,
    rot: &UnitQuaternion<f64>,
    h: &Vector3<f64>,
    k: u32,
    n: &Vector3<f64>,
    offset: f64,
) -> Feature {
    point_plane(k, &(x + rot * box_corner(h, k & 7)), n, offset)
}

/// A surface point `p` of body A against the half-space B.
pub(super) fn point_plane(id: u32, p: &Vector3<f64>, n: &Vector3<f64>, offset: f64) -> Feature {
    let gap = n.dot(p) - offset;
    Feature { id, point: p - 0.5 * gap * n, normal: *n, gap }
}

/// Tilt below which a cylinder counts as standing on a cap: `sin` of the angle between its axis
/// and the plane normal. Standing cylinders get four rim points; at this tilt the lowest rim
/// point lies at most `r sin(tilt) (1 - cos 45°) ≈ 0.003 r` below the lowest of them.
const SIN_STANDING: f64 = 1e-2;

/// Cylinder features against a half-space:
/// - 0, 1: the ends (cap at body `y = -h`, cap at `y = +h`) of the generator line nearest to the
///   plane, i.e. the lowest point of each cap rim; used unless the cylinder stands on a cap;
/// - `2 + 4 c + k` (`c` = 0 for the `-h` cap, 1 for `+h`; `k` = 0..4): the body-fixed rim points at
///   body-frame directions `+x, +z, -x, -z`; used when the cylinder stands on cap `c`.
const CYLINDER_LYING: [u32; 2] = [0, 1];
const CYLINDER_ON_CAP: [[u32; 4]; 2] = [[2, 3, 4, 5], [6, 7, 8, 9]];

/// The cylinder features (see [`cylinder_plane`]) to test in the current configuration.
pub(super) fn cylinder_plane_ids(rot: &UnitQuaternion<f64>, n: &Vector3<f64>) -> &'static [u32] {
    let a = rot * Vector3::y();
    let s = n.dot(&a);
    if (n - s * a).norm() <= SIN_STANDING {
        // The cap whose outward normal (±a) points into the plane.
        &CYLINDER_ON_CAP[usize::from(s < 0.0)]
    } else {
        &CYLINDER_LYING
    }
}

/// Feature `id` (see [`cylinder_plane_ids`]; ids above 9 wrap onto the rim points) of cylinder A
/// (axis = body y, radius `r`, half height `hh`) against the half-space B.
pub(super) fn cylinder_plane(
    x: &Vector3<f64>,
    rot: &UnitQuaternion<f64>,
    r: f64,
    hh: f64,
    id: u32,
    n: &Vector3<f64>,
    offset: f64,
) -> Feature {
    let p = if id < 2 {
        let a = rot * Vector3::y();
        let sign = if id == 0 { -1.0 } else { 1.0 };
        // Radial direction most opposed to n; any radial direction when the axis is along n.
        let radial = (a * n.dot(&a) - n).try_normalize(0.0).unwrap_or_else(|| rot * Vector3::x());
        x + sign * hh * a + r * radial
    } else {
        let rim = (id - 2) % 8;
        let sign = if rim < 4 { -1.0 } else { 1.0 };
        let (cx, cz) = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][(rim % 4) as usize];
        x + rot * Vector3::new(r * cx, sign * hh, r * cz)
    };
    point_plane(id, &p, n, offset)
}
