//! The rigid Coulomb NCP residuals: natural map (Siconos/FCLIB), Signorini product, cone
//! violation (docs/metrics.md).
//!
//! Per contact `i`: `u_i = J_i v+ + w_i` with `w_i = (phi0_i / dt, 0, 0)`
//! ([`StepProblem::contact_velocities`]), `u_hat_i = u_i + (mu_i ||u_t,i||, 0, 0)` (De Saxcé),
//! `K_mu = {||lambda_t|| <= mu lambda_n}`.

use crate::contact::ContactSet;
use crate::problem::StepProblem;
use crate::solver::StepSolution;
use kernels::cone;

/// The three normalisations of the natural-map residual (N s, N s / (m/s), N s / (1 + m/s)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NaturalMapNorms {
    /// `||F||_2` over all `3 nc` components (N s).
    pub abs_l2: f64,
    /// Siconos: `abs_l2 / ||q||_2`, or `abs_l2` if `||q||_2 <= f64::EPSILON`.
    pub rel_l2: f64,
    /// FCLIB "old version": `abs_l2 / (1 + ||q||_2)`.
    pub rel1_l2: f64,
}

/// Natural map of contact `i`: `F_i = lambda_i - P_K(lambda_i - u_hat_i)` (N s); zero iff
/// `(lambda_i, u_i)` satisfies the rigid Coulomb NCP (Signorini + De Saxcé friction law).
pub fn natural_map_per_contact(problem: &StepProblem<'_>, sol: &StepSolution) -> Vec<[f64; 3]> {
    let u = problem.contact_velocities(&sol.v);
    natural_map_with(problem.contacts, &sol.impulses, &u)
}

/// The natural-map residual in its three normalisations, with `q = J v* + w`
/// (`v*` = [`StepProblem::free_velocity`]), the constant term of the local problem `u = W lambda + q`.
pub fn natural_map_norms(problem: &StepProblem<'_>, sol: &StepSolution) -> NaturalMapNorms {
    let u = problem.contact_velocities(&sol.v);
    let q = problem.contact_velocities(&problem.free_velocity());
    natural_map_norms_with(problem.contacts, &sol.impulses, &u, &q)
}

/// `|u_n,i lambda_n,i|` per contact (m/s x N s = J).
pub fn signorini_per_contact(problem: &StepProblem<'_>, sol: &StepSolution) -> Vec<f64> {
    let u = problem.contact_velocities(&sol.v);
    u.iter().zip(&sol.impulses).map(|(u, l)| signorini(*u, *l)).collect()
}

/// `max(||lambda_t|| - mu lambda_n, -lambda_n, 0)` per contact (N s).
pub fn cone_violation_per_contact(problem: &StepProblem<'_>, sol: &StepSolution) -> Vec<f64> {
    check_len(problem.contacts, &sol.impulses);
    problem.contacts.contacts.iter().zip(&sol.impulses).map(|(c, l)| cone::violation(*l, c.mu)).collect()
}

pub(super) fn check_len(contacts: &ContactSet, lambda: &[[f64; 3]]) {
    assert_eq!(lambda.len(), contacts.len(), "{} impulses for {} contacts", lambda.len(), contacts.len());
}

pub(super) fn natural_map_one(lambda: [f64; 3], u: [f64; 3], mu: f64) -> [f64; 3] {
    let uh = cone::de_saxce(u, mu);
    let p = project_cone([lambda[0] - uh[0], lambda[1] - uh[1], lambda[2] - uh[2]], mu);
    [lambda[0] - p[0], lambda[1] - p[1], lambda[2] - p[2]]
}

/// `P_K_mu(x)`: [`cone::project`], except that a purely normal `x = (x_n, 0, 0)` projects to
/// `(max(x_n, 0), 0, 0)` for every `mu`. Guard against `kernels::cone::project` with `mu = 0`,
/// whose interior test `||x_t|| <= mu x_n` reads `0 <= -0.0` (true) for `x_n < 0` and returns
/// `x` unchanged, a point outside the cone.
fn project_cone(x: [f64; 3], mu: f64) -> [f64; 3] {
    if x[1] == 0.0 && x[2] == 0.0 {
        [if x[0] < 0.0 { 0.0 } else { x[0] }, 0.0, 0.0] // NaN passes through
    } else {
        cone::project(x, mu)
    }
}

pub(super) fn natural_map_with(contacts: &ContactSet, lambda: &[[f64; 3]], u: &[[f64; 3]]) -> Vec<[f64; 3]> {
    check_len(contacts, lambda);
    contacts.contacts.iter().zip(lambda).zip(u).map(|((c, l), u)| natural_map_one(*l, *u, c.mu)).collect()
}

pub(super) fn natural_map_norms_with(
    contacts: &ContactSet,
    lambda: &[[f64; 3]],
    u: &[[f64; 3]],
    q: &[[f64; 3]],
) -> NaturalMapNorms {
    check_len(contacts, lambda);
    let abs2: f64 = contacts
        .contacts
        .iter()
        .zip(lambda)
        .zip(u)
        .map(|((c, l), u)| {
            let f = natural_map_one(*l, *u, c.mu);
            f[0] * f[0] + f[1] * f[1] + f[2] * f[2]
        })
        .sum();
    let abs_l2 = abs2.sqrt();
    let nq = q.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    let rel_l2 = if nq <= f64::EPSILON { abs_l2 } else { abs_l2 / nq };
    NaturalMapNorms { abs_l2, rel_l2, rel1_l2: abs_l2 / (1.0 + nq) }
}

pub(super) fn signorini(u: [f64; 3], lambda: [f64; 3]) -> f64 {
    (u[0] * lambda[0]).abs()
}
