//! Contacts carried rigidly to another configuration: the contact constraint
//! `C_n(q) = nᵀ[a(q) − b(q)] − d` with the normal `n` of the start of the step held fixed in world
//! space and the points `a`, `b` fixed in the frames of the two bodies (Macklin et al., Eq. 9,
//! §3.4). Here `a⁻ = b⁻` is the detected contact point (the midpoint of the two surface points)
//! and `d` is chosen so that `C_n(q⁻)` is the detected gap, so
//! `C_n(q) = gap⁻ + nᵀ[(a(q) − a⁻) − (b(q) − b⁻)]`, smooth in `q`.
//!
//! [`super::reevaluate`] instead recomputes the closest features at `q`: for two boxes it clips a
//! new manifold, whose reference face, normal and points jump when the faces are parallel up to
//! round-off — a discontinuous `C_n(q)`. Contacts on deformable nodes are closed-form node
//! features and still go through [`super::reevaluate`].

use crate::contact::{ColliderId, Contact, ContactSet, DofOffsets};
use crate::model::World;
use nalgebra::Vector3;

/// The contacts `start` (detected on `before`) with their features carried rigidly to the
/// configuration of `after` (same bodies, other positions): same keys, order, normals and tangent
/// frames; new gaps and Jacobians (each body's rows use its own carried point,
/// `∂C_n/∂u = [n; (a − x_a) × n]` on A and `−[n; (b − x_b) × n]` on B).
pub fn carried(before: &World, after: &World, start: &ContactSet) -> ContactSet {
    let deformable =
        |c: &Contact| matches!(c.key.a, ColliderId::Deformable(_)) || matches!(c.key.b, ColliderId::Deformable(_));
    let reevaluated = start.contacts.iter().any(deformable).then(|| super::reevaluate(after, start));
    // a body-fixed point of body `i` at q⁻ carried to q (a static side stays where it is)
    let carry = |body: Option<usize>, x: &Vector3<f64>| match body {
        Some(i) => {
            let (b0, b) = (&before.bodies[i], &after.bodies[i]);
            b.position + b.orientation * (b0.orientation.inverse() * (x - b0.position))
        }
        None => *x,
    };
    let offsets = DofOffsets::of(after);
    let contacts = start
        .contacts
        .iter()
        .enumerate()
        .map(|(i, c0)| {
            if deformable(c0) {
                return reevaluated.as_ref().expect("computed when a node contact exists").contacts[i].clone();
            }
            let n = c0.normal();
            let (a, b) = (carry(c0.body_a, &c0.point), carry(c0.body_b, &c0.point));
            let gap = c0.gap + n.dot(&(a - b));
            let mut c = after.contact_with_offsets(&offsets, c0.key, a, n, gap);
            if c0.body_b.is_some() {
                // B's rows at its own carried point (B's block is the last one)
                let cb = after.contact_with_offsets(&offsets, c0.key, b, n, gap);
                *c.jacobian.last_mut().expect("B is a body") = *cb.jacobian.last().expect("B is a body");
            }
            c.point = 0.5 * (a + b);
            c
        })
        .collect();
    ContactSet { contacts }
}
