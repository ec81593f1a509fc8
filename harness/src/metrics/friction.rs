//! Friction metrics: maximum-dissipation direction, stick/slip classification, creep and slip
//! speeds (docs/metrics.md).

use crate::problem::StepProblem;
use crate::solver::StepSolution;

/// Tangential speed (m/s) above which a contact counts as sliding for the maximum-dissipation
/// metric: 1e-6 m/s = 1 µm/s, i.e. 1 nm of slip per 1 ms step.
///
/// Justification: it is far below every slip speed a case asserts on (mm/s and up) and far above
/// the rounding noise of an exact stick (`~1e-16` of velocities of order 1 m/s), so a sticking
/// contact's arbitrary residual tangential velocity does not produce a spurious direction error,
/// while a loosely converged solver that leaves micrometre-per-second slip is still checked.
/// Regularised friction creeps at about `sigma mu dt g` (SAP: `1e-3 * 0.5 * 1e-3 * 9.81 ≈ 5e-6`
/// m/s) and is therefore checked too; its friction opposes the creep, so it scores ≈ 0.
pub const SLIP_SPEED_THRESHOLD: f64 = 1e-6;

/// Relative margin of the stick test: an active contact sticks if
/// `||lambda_t|| < (1 - STICK_MARGIN) mu lambda_n`, i.e. strictly inside the cone by 0.1 %; on or
/// within 0.1 % of the boundary it slips (iterative solvers land on the boundary only up to
/// their tolerance).
pub const STICK_MARGIN: f64 = 1e-3;

/// State of one contact after the step, from its impulse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContactState {
    /// `lambda_n <= 0` (or NaN): no normal impulse.
    Inactive,
    /// `lambda_n > 0` and `||lambda_t|| < (1 - STICK_MARGIN) mu lambda_n`.
    Stick,
    /// `lambda_n > 0` and the impulse on (or outside) the cone boundary. With `mu = 0` every
    /// active contact is `Slip` (the cone is the half-line, whose interior is empty).
    Slip,
}

/// Classifies an impulse `lambda = (n, t1, t2)` (N s) against friction coefficient `mu`.
pub fn classify(lambda: [f64; 3], mu: f64) -> ContactState {
    if lambda[0] > 0.0 {
        if tangent_norm(lambda) < (1.0 - STICK_MARGIN) * mu * lambda[0] {
            ContactState::Stick
        } else {
            ContactState::Slip
        }
    } else {
        ContactState::Inactive // also NaN
    }
}

/// Per-contact state of the returned impulses ([`classify`]).
pub fn classify_per_contact(problem: &StepProblem<'_>, sol: &StepSolution) -> Vec<ContactState> {
    super::complementarity::check_len(problem.contacts, &sol.impulses);
    problem.contacts.contacts.iter().zip(&sol.impulses).map(|(c, l)| classify(*l, c.mu)).collect()
}

/// Maximum-dissipation direction error of one contact, `1 - cos angle(lambda_t, -u_t)`
/// (dimensionless, in `[0, 2]`: 0 = friction opposite to the slip, 1 = perpendicular, 2 = along
/// the slip), or `None` if the contact is not sliding-and-active: it is defined only when
/// `||u_t|| > SLIP_SPEED_THRESHOLD`, `lambda_n > 0` and `||lambda_t|| > 0`.
/// NaN in `lambda_t` or `u_t` with the other conditions met gives `Some(NaN)`.
pub fn mdp_violation(lambda: [f64; 3], u: [f64; 3]) -> Option<f64> {
    let (nl, nu) = (tangent_norm(lambda), tangent_norm(u));
    if nu > SLIP_SPEED_THRESHOLD && lambda[0] > 0.0 && nl > 0.0 {
        let cos_opposite = -(lambda[1] * u[1] + lambda[2] * u[2]) / (nl * nu);
        Some((1.0 - cos_opposite).clamp(0.0, 2.0))
    } else {
        None
    }
}

/// [`mdp_violation`] per contact, with `u = J v+ + w`.
pub fn mdp_violation_per_contact(problem: &StepProblem<'_>, sol: &StepSolution) -> Vec<Option<f64>> {
    super::complementarity::check_len(problem.contacts, &sol.impulses);
    let u = problem.contact_velocities(&sol.v);
    sol.impulses.iter().zip(&u).map(|(l, u)| mdp_violation(*l, *u)).collect()
}

/// `||x_t|| = sqrt(x_t1^2 + x_t2^2)` of a contact-frame triple.
pub(super) fn tangent_norm(x: [f64; 3]) -> f64 {
    (x[1] * x[1] + x[2] * x[2]).sqrt()
}
