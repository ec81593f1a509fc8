//! The contact constraints at a Newton iterate the way Macklin et al. define them (Eq. 9,
//! §3.4): `C_n(q) = nᵀ[a(q) − b(q)] − d` with the normal `n` computed at the start of the step and
//! held fixed in world space, and `a`, `b` points fixed in the frames of the two bodies. Here
//! `a⁻ = b⁻` is the detected contact point (the midpoint of the two surface points) and `d` is
//! chosen so that `C_n(q⁻)` is the detected gap, so
//! `C_n(q) = gap⁻ + nᵀ[(a(q) − a⁻) − (b(q) − b⁻)]`, smooth in `q`.
//!
//! `geometry::reevaluate` instead recomputes the closest features at `q` (README "Contact
//! evaluation"): for two boxes it clips a new manifold, whose reference face, normal and points
//! jump when the faces are parallel up to round-off — a discontinuous `C_n(q)` inside one Newton
//! solve. Contacts on deformable nodes are closed-form node features and still go through it.

use harness::{ColliderId, Contact, ContactSet, StepProblem};
use nalgebra::Vector3;

/// The start-of-step contacts of `p` with features carried rigidly to configuration `q` (Eq. 9):
/// same keys, order, normals and tangent frames; new gaps and Jacobians (each body's rows use its
/// own carried point, `∂C_n/∂u = [n; (a − x_a) × n]` on A and `−[n; (b − x_b) × n]` on B).
pub(super) fn carried_contacts(p: &StepProblem<'_>, q: &[f64]) -> ContactSet {
    let deformable =
        |c: &Contact| matches!(c.key.a, ColliderId::Deformable(_)) || matches!(c.key.b, ColliderId::Deformable(_));
    let reevaluated = p.contacts.contacts.iter().any(deformable).then(|| p.contacts_at(q));
    let world = p.world.at_positions(q);
    // a body-fixed point of body `i` at q⁻ carried to q (a static side stays where it is)
    let carry = |body: Option<usize>, x: &Vector3<f64>| match body {
        Some(i) => {
            let (b0, b) = (&p.world.bodies[i], &world.bodies[i]);
            b.position + b.orientation * (b0.orientation.inverse() * (x - b0.position))
        }
        None => *x,
    };
    let contacts = p
        .contacts
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
            let mut c = Contact::new(&world, c0.key, a, n, gap);
            if c0.body_b.is_some() {
                // B's rows at its own carried point (B's block is the last one)
                let cb = Contact::new(&world, c0.key, b, n, gap);
                *c.jacobian.last_mut().expect("B is a body") = *cb.jacobian.last().expect("B is a body");
            }
            c.point = 0.5 * (a + b);
            c
        })
        .collect();
    ContactSet { contacts }
}
