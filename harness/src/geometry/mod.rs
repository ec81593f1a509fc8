//! Contact detection: the narrow phase for the shape pairs of [`crate::model`], producing a
//! [`ContactSet`], and re-evaluation of the same contact features at another configuration.
//!
//! # Conventions
//! - **Pair order.** Every key has `key.a < key.b` in [`ColliderId`] order: for two bodies A is the
//!   one with the *lower* index, for a body and a static collider A is the body. The normal points
//!   from B to A, so for a body resting on the ground (B) the normal points up.
//! - **Point and gap.** The contact point is the midpoint of the two surface points; the gap is the
//!   signed distance along the normal (> 0 separated, < 0 penetrating).
//! - **Order.** Contacts are sorted by [`ContactKey`] (pair, then feature id).
//!
//! # Pairs and feature ids
//! | A | B | method | features |
//! |---|---|---|---|
//! | sphere | half-space, sphere, box (body or static) | closed form | 0 |
//! | box | static sphere (radius 0: a point) | sphere–box closed form, normal reversed | 0 |
//! | box | half-space | closed form | corner `k` = 0..8 (bit `i` set: `-h_i` along body axis `i`) |
//! | cylinder | half-space | closed form | 0/1 ends of the lowest generator; 2..10 rim points when standing |
//! | box | box (body or static) | parry contact manifold | packed parry feature ids of both boxes |
//! | cylinder | anything else | parry `query::contact` | 0 (one point) |
//! | compound | anything | each part as the primitive it is, as above | part ids packed above the local id |
//!
//! A box–sphere body pair with the box as A uses the sphere–box formula with the normal reversed.
//!
//! # Compound bodies and the feature id
//! A [`Shape::Compound`] body collides as the union of its parts: each part is placed in the world
//! (body pose ∘ part pose) and every pair of parts goes through the table above. The 64-bit
//! [`ContactKey::feature`] packs the parts so that re-evaluation recomputes the same part pair:
//!
//! | bits | content |
//! |---|---|
//! | 0..32 | the local feature id of the table above (box corner, packed parry ids, ...) |
//! | 32..40 | `part_a`: part index in collider A (0 for a primitive or static collider) |
//! | 40..48 | `part_b`: part index in collider B |
//!
//! Parts are at most [`crate::model::MAX_PARTS`] = 255, so they fit in 8 bits. Node contacts
//! (see `nodes`) keep the node index as the whole feature id and do not use this packing; a
//! compound body makes no node contacts (documented limit). Contact Jacobians use the body's centre
//! of mass, as for any body.
//!
//! # Re-evaluation
//! [`reevaluate`] recomputes each feature at the new configuration. Closed-form features are
//! recomputed exactly (the same sphere pair, box corner, cylinder generator end or rim point) and
//! stay defined however far apart the pair has moved. Box–box features are matched by id in the
//! manifold recomputed without a distance cut-off; if the id is no longer in the manifold (the
//! clipping changed topology), the manifold point nearest to the old contact point is used; if
//! the manifold is empty, parry's single closest-point contact. Single-point (parry) pairs are
//! recomputed as such.
//!
//! # Speculative margin per contact
//! [`detect`] keeps every feature whose gap is below one fixed margin. [`detect_for_step`], which
//! the stepper uses, gives each feature its own margin: the feature enters the step's problem if
//! its gap could close within the step,
//!
//! `gap < margin + dt · max(0, −u_n)`,  `u_n = n · (v*_A(p) − v*_B(p))`,
//!
//! with `v*_X(p) = v_X + dt g + ω_X × (p − x_X)` the velocity of collider X at the contact point `p`
//! after one step of free motion under gravity (static colliders do not move; gravity acts on the
//! free linear components of a body only), so `−u_n` is the predicted approach speed along the
//! normal. The fixed `margin` is the floor: it admits contacts whose gap closes only through
//! what the prediction leaves out (impulses of other contacts, springs, loads). This is the
//! speculative contact of velocity-level schemes (a contact is in the problem before it touches,
//! so a fast body cannot tunnel through in one step), sized per pair rather than per run: a
//! settled pile carries about its touching contacts, a falling object a contact ahead of it.
//! The broad phase culls a pair with the bound `margin + dt (s_A + s_B)`, `s_X = |v_X + dt g| +
//! |ω_X| R_X` the largest speed of a point of collider X (`R_X` the largest distance from its
//! centre of mass to a point of its parts' bounding spheres). Node contacts of deformable bodies
//! keep the fixed margin.
//!
//! # Broad phase
//! Sweep and prune over the bodies ([`candidate_pairs`]): each body's axis-aligned box is the union
//! of its parts' bounding spheres' boxes, widened by half the fixed margin plus `dt` times its speed
//! bound; the boxes are swept along the axis along which their centres spread most, and only bodies
//! whose boxes overlap are paired, in O(n log n + overlaps along the axis). The widening makes the
//! sweep conservative: two parts whose bounding spheres are closer than the pair's bound
//! `margin + dt (s_A + s_B)` have boxes closer than that too along every axis, so the sweep never
//! drops a pair the exact tests would keep,
//! and detection returns the same contacts as testing all pairs. Every body is paired with every
//! static collider (a few: ground, walls). Within a pair, parts are culled by their bounding spheres
//! (a placed primitive's circumscribed sphere; a half-space tests the signed distance of the
//! sphere).
//!
//! # Jointed bodies
//! Two bodies joined directly by a [`crate::model::Joint`] do not collide with each other (the
//! default of MuJoCo's parent–child filter, Drake's adjacent-body filter and Bullet's linked-body
//! filter): a hinge between two touching links would otherwise add contacts at the joint that
//! duplicate its rows and lock it.

mod analytic;
mod carried;
#[cfg(test)]
mod compound_tests;
#[cfg(test)]
mod node_tests;
mod nodes;
mod parry;
#[cfg(test)]
mod tests;

pub use carried::carried;

use crate::contact::{ColliderId, ContactKey, ContactSet, DofOffsets};
use crate::model::{Shape, StaticShape, World};
use nalgebra::{UnitQuaternion, Vector3};
use smallvec::SmallVec;

/// One contact feature of a collider pair, before it becomes a [`Contact`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Feature {
    /// Feature id within the pair.
    id: u32,
    /// Midpoint of the two surface points (world).
    point: Vector3<f64>,
    /// Unit normal from B to A (world).
    normal: Vector3<f64>,
    /// Signed gap.
    gap: f64,
}

impl Feature {
    fn from_surface_points(id: u32, on_a: &Vector3<f64>, on_b: &Vector3<f64>, normal: Vector3<f64>, gap: f64) -> Self {
        Feature { id, point: 0.5 * (on_a + on_b), normal, gap }
    }

    /// The same feature with A and B exchanged.
    fn flipped(self) -> Self {
        Feature { normal: -self.normal, ..self }
    }
}

/// The [`ContactKey::feature`] of local feature `local` between part `part_a` of collider A and
/// part `part_b` of collider B (bit layout in the module documentation).
fn pack_feature(local: u32, part_a: usize, part_b: usize) -> u64 {
    debug_assert!(part_a < 256 && part_b < 256, "part index above MAX_PARTS");
    u64::from(local) | (part_a as u64) << 32 | (part_b as u64) << 40
}

/// The `(local, part_a, part_b)` of a packed feature id (inverse of [`pack_feature`]).
fn unpack_feature(feature: u64) -> (u32, usize, usize) {
    (feature as u32, ((feature >> 32) & 0xff) as usize, ((feature >> 40) & 0xff) as usize)
}

/// A primitive's geometry placed in the world (a collider, or one part of a compound body).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Geom {
    Sphere { center: Vector3<f64>, radius: f64 },
    Cuboid { center: Vector3<f64>, rot: UnitQuaternion<f64>, half: Vector3<f64> },
    Cylinder { center: Vector3<f64>, rot: UnitQuaternion<f64>, radius: f64, half_height: f64 },
    HalfSpace { normal: Vector3<f64>, offset: f64 },
}

impl Geom {
    /// The primitive `shape` placed at centre `center` with orientation `rot`.
    fn placed(shape: &Shape, center: Vector3<f64>, rot: UnitQuaternion<f64>) -> Geom {
        match *shape {
            Shape::Sphere { radius } => Geom::Sphere { center, radius },
            Shape::Box { half_extents: h } => Geom::Cuboid { center, rot, half: Vector3::from(h) },
            Shape::Cylinder { radius, half_height } => Geom::Cylinder { center, rot, radius, half_height },
            // validation rejects nested compounds, so a part is always a primitive
            Shape::Compound { .. } => unreachable!("a compound part that is itself a compound"),
        }
    }

    /// Number of parts of collider `id` (1 unless it is a compound body).
    fn part_count(world: &World, id: ColliderId) -> usize {
        match id {
            ColliderId::Body(i) => match &world.bodies[i].shape {
                Shape::Compound { parts } => parts.len(),
                _ => 1,
            },
            _ => 1,
        }
    }

    /// Part `part` of collider `id` placed in the world (`part` is 0 for a single-part collider).
    fn part(world: &World, id: ColliderId, part: usize) -> Geom {
        match id {
            ColliderId::Body(i) => {
                let b = &world.bodies[i];
                match &b.shape {
                    Shape::Compound { parts } => {
                        let p = &parts[part];
                        Geom::placed(&p.shape, b.position + b.orientation * p.translation, b.orientation * p.rotation)
                    }
                    shape => Geom::placed(shape, b.position, b.orientation),
                }
            }
            // node colliders are points, handled by `nodes` before any `Geom` is built
            ColliderId::Deformable(_) => unreachable!("Geom::part called on a deformable collider"),
            ColliderId::Static(i) => match world.statics[i].shape {
                StaticShape::HalfSpace { normal, offset } => Geom::HalfSpace { normal, offset },
                StaticShape::Box { center, orientation, half_extents: h } => {
                    Geom::Cuboid { center, rot: orientation, half: Vector3::from(h) }
                }
                StaticShape::Sphere { center, radius } => Geom::Sphere { center, radius },
            },
        }
    }

    /// All parts of collider `id` placed in the world, by part index.
    fn parts(world: &World, id: ColliderId) -> Vec<Geom> {
        (0..Geom::part_count(world, id)).map(|p| Geom::part(world, id, p)).collect()
    }

    /// Bounding sphere `(centre, radius)`; `None` for a half-space.
    fn bounding_sphere(&self) -> Option<(Vector3<f64>, f64)> {
        match *self {
            Geom::Sphere { center, radius } => Some((center, radius)),
            Geom::Cuboid { center, half, .. } => Some((center, half.norm())),
            Geom::Cylinder { center, radius, half_height, .. } => Some((center, radius.hypot(half_height))),
            Geom::HalfSpace { .. } => None,
        }
    }

    /// Whether the bounding volumes of `self` and `other` are closer than `margin`.
    fn may_touch(&self, other: &Geom, margin: f64) -> bool {
        match (self.bounding_sphere(), other.bounding_sphere(), self, other) {
            (Some((ca, ra)), Some((cb, rb)), _, _) => (ca - cb).norm() - ra - rb < margin,
            (Some((c, r)), None, _, Geom::HalfSpace { normal, offset })
            | (None, Some((c, r)), Geom::HalfSpace { normal, offset }, _) => normal.dot(&c) - offset - r < margin,
            _ => false,
        }
    }
}

/// How the features of an (A, B) pair are computed.
enum Method {
    /// Closed form, with the feature ids to test at detection.
    Analytic(&'static [u32]),
    /// parry's box–box contact manifold.
    BoxBox,
    /// parry's single closest-point contact.
    SinglePoint,
}

const ONE: [u32; 1] = [0];
const CORNERS: [u32; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

fn method(a: &Geom, b: &Geom) -> Method {
    use Geom::*;
    match (a, b) {
        (Sphere { .. }, HalfSpace { .. } | Sphere { .. } | Cuboid { .. }) | (Cuboid { .. }, Sphere { .. }) => {
            Method::Analytic(&ONE)
        }
        (Cuboid { .. }, HalfSpace { .. }) => Method::Analytic(&CORNERS),
        (Cylinder { rot, .. }, HalfSpace { normal, .. }) => Method::Analytic(analytic::cylinder_plane_ids(rot, normal)),
        (Cuboid { .. }, Cuboid { .. }) => Method::BoxBox,
        _ => Method::SinglePoint,
    }
}

/// Closed-form feature `id` of the pair, or `None` if the pair has no closed form.
fn analytic_feature(a: &Geom, b: &Geom, id: u32) -> Option<Feature> {
    use Geom::*;
    Some(match (a, b) {
        (Sphere { center, radius }, HalfSpace { normal, offset }) => {
            analytic::sphere_plane(center, *radius, normal, *offset)
        }
        (Sphere { center: ca, radius: ra }, Sphere { center: cb, radius: rb }) => {
            analytic::sphere_sphere(ca, *ra, cb, *rb)
        }
        (Sphere { center: c, radius }, Cuboid { center, rot, half }) => {
            analytic::sphere_box(c, *radius, center, rot, half)
        }
        (Cuboid { center, rot, half }, Sphere { center: c, radius }) => {
            analytic::sphere_box(c, *radius, center, rot, half).flipped()
        }
        (Cuboid { center, rot, half }, HalfSpace { normal, offset }) => {
            analytic::box_corner_plane(center, rot, half, id, normal, *offset)
        }
        (Cylinder { center, rot, radius, half_height }, HalfSpace { normal, offset }) => {
            analytic::cylinder_plane(center, rot, *radius, *half_height, id, normal, *offset)
        }
        _ => return None,
    })
}

/// The box–box manifold of the pair, if both are boxes.
fn box_box(a: &Geom, b: &Geom, prediction: f64) -> Vec<Feature> {
    match (a, b) {
        (Geom::Cuboid { center: xa, rot: ra, half: ha }, Geom::Cuboid { center: xb, rot: rb, half: hb }) => {
            parry::box_box((xa, ra, ha), (xb, rb, hb), prediction)
        }
        _ => Vec::new(),
    }
}

/// All features of the pair with gap below `margin`, by increasing id.
fn detect_pair(a: &Geom, b: &Geom, margin: f64) -> SmallVec<[Feature; 8]> {
    let mut out: SmallVec<[Feature; 8]> = match method(a, b) {
        Method::Analytic(ids) => ids.iter().filter_map(|&id| analytic_feature(a, b, id)).collect(),
        Method::BoxBox => SmallVec::from_vec(box_box(a, b, margin)),
        Method::SinglePoint => parry::single_point(a, b, margin).into_iter().collect(),
    };
    out.retain(|f| f.gap < margin);
    out
}

/// All contacts of `world` whose gap is below `margin` (m), in deterministic key order.
///
/// See the module documentation for the pair order, the feature ids and the methods.
pub fn detect(world: &World, margin: f64) -> ContactSet {
    detect_with(world, margin, None)
}

/// The contacts of the step of length `dt` (s) that starts at `world`: every feature whose gap
/// is below its own speculative margin, `margin + dt` times its predicted approach speed (module
/// documentation, "Speculative margin per contact"), in deterministic key order. Node contacts of
/// deformable bodies use `margin` alone.
pub fn detect_for_step(world: &World, margin: f64, dt: f64) -> ContactSet {
    detect_with(world, margin, Some(dt))
}

/// A collider's predicted motion over one step of free fall, for speculative margins.
#[derive(Debug, Clone, Copy)]
struct Motion {
    /// Centre of mass (m).
    x: Vector3<f64>,
    /// Linear velocity after one step of gravity (m/s).
    v: Vector3<f64>,
    /// Angular velocity (rad/s).
    w: Vector3<f64>,
    /// Largest speed of a point of the collider's parts' bounding spheres (m/s).
    speed_bound: f64,
}

impl Motion {
    /// The motion of collider `id` (placed parts `parts`) over a step of length `dt`.
    fn of(world: &World, id: ColliderId, parts: &[Geom], dt: f64) -> Motion {
        let ColliderId::Body(i) = id else {
            return Motion { x: Vector3::zeros(), v: Vector3::zeros(), w: Vector3::zeros(), speed_bound: 0.0 };
        };
        let b = &world.bodies[i];
        let gravity = Vector3::from_fn(|k, _| if b.dofs.0[k] { world.gravity[k] } else { 0.0 });
        let v = b.linear_velocity + dt * gravity;
        let reach = parts
            .iter()
            .filter_map(Geom::bounding_sphere)
            .map(|(c, r)| (c - b.position).norm() + r)
            .fold(0.0, f64::max);
        Motion { x: b.position, v, w: b.angular_velocity, speed_bound: v.norm() + b.angular_velocity.norm() * reach }
    }

    /// Predicted velocity of the material point at `p` (m/s).
    fn point_velocity(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.v + self.w.cross(&(p - self.x))
    }
}

/// The collider pairs `(i, j)`, `i < j`, that the broad phase passes to the part tests, in
/// lexicographic order: the overlapping pairs of a sweep and prune over the bodies (`parts[i]` the
/// placed parts of body `i`, its box widened by `widen[i]` on every side; module
/// documentation, "Broad phase") and every body with each of the `n_statics` static colliders
/// (indices `parts.len()..`). A body with a part that has no bounding sphere gets an unbounded
/// box, so the exact tests decide for it.
fn candidate_pairs(parts: &[Vec<Geom>], widen: &[f64], n_statics: usize) -> Vec<(usize, usize)> {
    let nb = parts.len();
    // each body's box: the union of its parts' bounding spheres' boxes, widened; `f64::min`/`max`
    // skip NaN, and a part or speed bound that is NaN fails every exact test (its comparisons are
    // false), so leaving it out of the box drops no contact
    let empty = (Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY));
    let unbounded = (Vector3::repeat(f64::NEG_INFINITY), Vector3::repeat(f64::INFINITY));
    let boxes: Vec<(Vector3<f64>, Vector3<f64>)> = (0..nb)
        .map(|i| {
            parts[i]
                .iter()
                .try_fold(empty, |(lo, hi), g| {
                    let (c, r) = g.bounding_sphere()?;
                    let w = Vector3::repeat(r + widen[i]);
                    Some((lo.zip_map(&(c - w), f64::min), hi.zip_map(&(c + w), f64::max)))
                })
                .unwrap_or(unbounded)
        })
        .collect();
    // sweep along the axis along which the bodies' finite box centres spread most
    let centres: Vec<Vector3<f64>> =
        boxes.iter().map(|(lo, hi)| 0.5 * (lo + hi)).filter(|c| c.iter().all(|x| x.is_finite())).collect();
    let mean = centres.iter().fold(Vector3::zeros(), |a, c| a + c) / centres.len().max(1) as f64;
    let axis = centres.iter().fold(Vector3::zeros(), |a, c| a + (c - mean).component_mul(&(c - mean))).imax();
    let overlap = |a: usize, b: usize| (0..3).all(|k| boxes[a].0[k] <= boxes[b].1[k] && boxes[b].0[k] <= boxes[a].1[k]);
    let mut order: Vec<usize> = (0..nb).collect();
    order.sort_by(|&a, &b| boxes[a].0[axis].total_cmp(&boxes[b].0[axis]));
    let mut pairs = Vec::new();
    let mut active: Vec<usize> = Vec::new();
    for &i in &order {
        let lo = boxes[i].0[axis];
        active.retain(|&j| boxes[j].1[axis] >= lo);
        pairs.extend(active.iter().filter(|&&j| overlap(i, j)).map(|&j| (i.min(j), i.max(j))));
        active.push(i);
    }
    pairs.extend((0..nb).flat_map(|i| (nb..nb + n_statics).map(move |j| (i, j))));
    pairs.sort_unstable();
    pairs
}

/// [`detect`] with a fixed `margin` (`dt = None`) or [`detect_for_step`] (`dt = Some`).
fn detect_with(world: &World, margin: f64, dt: Option<f64>) -> ContactSet {
    let nb = world.bodies.len();
    let ids: Vec<ColliderId> =
        (0..nb).map(ColliderId::Body).chain((0..world.statics.len()).map(ColliderId::Static)).collect();
    let geoms: Vec<Vec<Geom>> = ids.iter().map(|&id| Geom::parts(world, id)).collect();
    let motion: Option<(f64, Vec<Motion>)> =
        dt.map(|dt| (dt, ids.iter().zip(&geoms).map(|(&id, g)| Motion::of(world, id, g, dt)).collect()));
    let jointed: std::collections::HashSet<(usize, usize)> =
        world.joints.iter().filter_map(|j| j.body_b.map(|b| (j.body_a.min(b), j.body_a.max(b)))).collect();
    let widen: Vec<f64> =
        (0..nb).map(|i| 0.5 * margin + motion.as_ref().map_or(0.0, |(dt, m)| dt * m[i].speed_bound)).collect();
    let offsets = DofOffsets::of(world);
    let pairs = candidate_pairs(&geoms[..nb], &widen, ids.len() - nb);
    // most candidate pairs give at most one contact: no regrowth (and copy of every contact so
    // far) in the common case
    let mut contacts = Vec::with_capacity(pairs.len());
    for (i, j) in pairs {
        if j < nb && jointed.contains(&(i, j)) {
            continue;
        }
        // the pair's bound, and the speculative test of one feature (gap below its margin)
        let bound = motion.as_ref().map_or(margin, |(dt, m)| margin + dt * (m[i].speed_bound + m[j].speed_bound));
        let admits = |f: &Feature| match &motion {
            None => true,
            Some((dt, m)) => {
                let u_n = f.normal.dot(&(m[i].point_velocity(&f.point) - m[j].point_velocity(&f.point)));
                f.gap < margin + dt * (-u_n).max(0.0)
            }
        };
        for (pa, a) in geoms[i].iter().enumerate() {
            for (pb, b) in geoms[j].iter().enumerate() {
                if !a.may_touch(b, bound) {
                    continue;
                }
                for f in detect_pair(a, b, bound).into_iter().filter(admits) {
                    let key = ContactKey { a: ids[i], b: ids[j], feature: pack_feature(f.id, pa, pb) };
                    contacts.push(world.contact_with_offsets(&offsets, key, f.point, f.normal, f.gap));
                }
            }
        }
    }
    contacts.extend(nodes::detect(world, &offsets, margin));
    contacts.sort_by_key(|c| c.key);
    ContactSet { contacts }
}

/// The contacts of `previous` (same keys, same order) re-evaluated on `world`'s configuration.
///
/// Closed-form features are recomputed exactly; box–box features are matched by feature id in the
/// recomputed manifold, falling back to the manifold point nearest to the old contact point (see
/// the module documentation). Gaps are defined however far apart the pair has moved.
pub fn reevaluate(world: &World, previous: &ContactSet) -> ContactSet {
    let mut contacts = Vec::with_capacity(previous.len());
    let offsets = DofOffsets::of(world);
    // The manifold of the current box-box part pair, computed once per run of equal pairs.
    type PartPair = (ColliderId, usize, ColliderId, usize);
    let mut manifold: Option<(PartPair, Vec<Feature>)> = None;
    for old in &previous.contacts {
        let key = old.key;
        if matches!(key.a, ColliderId::Deformable(_)) || matches!(key.b, ColliderId::Deformable(_)) {
            let (point, normal, gap) = nodes::node_feature(world, &key)
                .map_or((old.point, old.normal(), old.gap), |f| (f.point, f.normal, f.gap));
            contacts.push(world.contact_with_offsets(&offsets, key, point, normal, gap));
            continue;
        }
        let (local, pa, pb) = unpack_feature(key.feature);
        let (a, b) = (Geom::part(world, key.a, pa), Geom::part(world, key.b, pb));
        let f = match method(&a, &b) {
            Method::Analytic(_) => analytic_feature(&a, &b, local),
            Method::BoxBox => {
                let pair = (key.a, pa, key.b, pb);
                if manifold.as_ref().map(|(p, _)| *p) != Some(pair) {
                    manifold = Some((pair, box_box(&a, &b, f64::INFINITY)));
                }
                let points = manifold.as_ref().map_or(&[][..], |(_, pts)| pts.as_slice());
                points
                    .iter()
                    .find(|p| p.id == local)
                    .or_else(|| {
                        points.iter().min_by(|p, q| {
                            (p.point - old.point).norm_squared().total_cmp(&(q.point - old.point).norm_squared())
                        })
                    })
                    .map(|p| Feature { id: local, ..*p })
                    .or_else(|| parry::single_point(&a, &b, f64::INFINITY))
            }
            Method::SinglePoint => parry::single_point(&a, &b, f64::INFINITY),
        };
        // Every pair the detector produces has a defined feature here; a contact that cannot be
        // recomputed (not reachable with the model's shapes) keeps its previous geometry.
        let (point, normal, gap) = f.map_or((old.point, old.normal(), old.gap), |f| (f.point, f.normal, f.gap));
        contacts.push(world.contact_with_offsets(&offsets, key, point, normal, gap));
    }
    ContactSet { contacts }
}
