//! Node contacts: the nodes of deformable bodies against rigid shapes (static half-spaces and
//! boxes, dynamic sphere and box bodies). Each surface node is a point collider; the feature id
//! of its contact is the node index, so the key `(collider, node)` is stable across steps and
//! configurations.
//!
//! | A | B | formula |
//! |---|---|---|
//! | node (deformable) | static half-space | `φ = n · x − offset`, normal `n` |
//! | node (deformable) | static box | sphere–box with radius 0 |
//! | rigid sphere body | node | sphere–sphere with radius 0 on the node side |
//! | rigid box body | node | sphere–box with radius 0, normal reversed |
//!
//! Cylinder and compound bodies and deformable–deformable pairs make no node contacts (documented
//! limit): the feature id of a node contact is the bare node index, with no room for a part index.
//! A node contact's Jacobian is the 3×3 block `±frameᵀ` on the node's DOFs ([`Contact::new`]),
//! plus the rigid body's block when the other side is a dynamic body.

use super::{analytic, Feature, Geom};
use crate::contact::{ColliderId, Contact, ContactKey, DofOffsets};
use crate::model::{Shape, World};

/// The feature of node contact `key` on `world` (`None` for an unsupported pair).
pub(super) fn node_feature(world: &World, key: &ContactKey) -> Option<Feature> {
    let (node_side, other, node_is_a) = match (key.a, key.b) {
        (ColliderId::Deformable(d), o) => (d, o, true),
        (o, ColliderId::Deformable(d)) => (d, o, false),
        _ => return None,
    };
    let x = *world.deformables.get(node_side)?.positions.get(usize::try_from(key.feature).ok()?)?;
    let id = u32::try_from(key.feature).ok()?;
    let f = match node_partner(world, other)? {
        Geom::HalfSpace { normal, offset } => analytic::point_plane(id, &x, &normal, offset),
        Geom::Cuboid { center, rot, half } => analytic::sphere_box(&x, 0.0, &center, &rot, &half),
        Geom::Sphere { center, radius } => analytic::sphere_sphere(&center, radius, &x, 0.0).flipped(),
        Geom::Cylinder { .. } => return None,
    };
    // the formulas above have the node as A; flip when the node is B
    let f = Feature { id, ..f };
    Some(if node_is_a { f } else { f.flipped() })
}

/// The geometry of `other` as a node's contact partner; `None` for the bodies that make no node
/// contacts (cylinders, compounds).
fn node_partner(world: &World, other: ColliderId) -> Option<Geom> {
    if let ColliderId::Body(i) = other {
        if matches!(world.bodies[i].shape, Shape::Cylinder { .. } | Shape::Compound { .. }) {
            return None;
        }
    }
    Some(Geom::part(world, other, 0))
}

/// All node contacts of `world` with gap below `margin` (`offsets`: `world`'s, [`DofOffsets::of`]).
pub(super) fn detect(world: &World, offsets: &DofOffsets, margin: f64) -> Vec<Contact> {
    let mut out = Vec::new();
    for (d, body) in world.deformables.iter().enumerate() {
        let me = ColliderId::Deformable(d);
        let others =
            (0..world.bodies.len()).map(ColliderId::Body).chain((0..world.statics.len()).map(ColliderId::Static));
        for other in others {
            // A is the lower id: rigid bodies come before deformables, statics after
            let (a, b) = if other < me { (other, me) } else { (me, other) };
            let Some(geom) = node_partner(world, other) else { continue };
            for &node in &body.surface_nodes {
                let x = body.positions[node];
                let near = match geom.bounding_sphere() {
                    Some((c, r)) => (x - c).norm() - r < margin,
                    None => match geom {
                        Geom::HalfSpace { normal, offset } => normal.dot(&x) - offset < margin,
                        _ => false,
                    },
                };
                if !near {
                    continue;
                }
                let key = ContactKey { a, b, feature: node as u64 };
                if let Some(f) = node_feature(world, &key) {
                    if f.gap < margin {
                        out.push(world.contact_with_offsets(offsets, key, f.point, f.normal, f.gap));
                    }
                }
            }
        }
    }
    out
}
