//! Metrics on hand-made contact states with hand-computed values. Contacts are built with
//! [`Contact::new`] directly (no geometry detection).
//!
//! Common setup: spheres of mass `M = 2 kg`, radius `R = 0.1 m` (inertia `0.4 M R^2 = 0.008`),
//! `dt = 0.01 s`, `g = 9.81`. A ground contact has normal `+z`, so its frame is
//! `(n, t1, t2) = (z, x, y)` and, for a non-rotating sphere, `u = (v_z + phi0/dt, v_x, v_y)`.

use super::*;
use crate::case::Trace;
use crate::contact::{ColliderId, Contact, ContactKey};
use crate::model::{Material, RigidBody, Shape, Spring, StaticCollider, StaticShape};
use crate::solver::SolveStatus;
use nalgebra::Vector3;
use rstest::rstest;

const M: f64 = 2.0;
const R: f64 = 0.1;
const I: f64 = 0.4 * M * R * R;
const DT: f64 = 0.01;
const G: f64 = 9.81;

fn sphere(name: &str, center: Vector3<f64>, velocity: Vector3<f64>, mu: f64) -> RigidBody {
    let mut b = RigidBody::new(name, Shape::Sphere { radius: R }, M, center, Material::rigid(mu));
    b.linear_velocity = velocity;
    b
}

/// A world with the ground `z <= 0` and one sphere whose lowest point is `gap` above it.
fn sphere_on_ground(mu: f64, gap: f64, v0: Vector3<f64>) -> World {
    let mut w = World::new();
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material: Material::rigid(mu),
    });
    w.bodies.push(sphere("ball", Vector3::new(0.0, 0.0, R + gap), v0, mu));
    w
}

/// Contact of body `body` with the ground, below its centre, with gap `gap`.
fn ground_contact(world: &World, body: usize, gap: f64) -> Contact {
    let c = world.bodies[body].position;
    let key = ContactKey { a: ColliderId::Body(body), b: ColliderId::Static(0), feature: 0 };
    world.contact(key, Vector3::new(c.x, c.y, c.z - R - 0.5 * gap), Vector3::z(), gap)
}

fn set(contacts: Vec<Contact>) -> ContactSet {
    ContactSet { contacts }
}

fn solution(v: Vec<f64>, impulses: Vec<[f64; 3]>) -> StepSolution {
    StepSolution { v, q: None, impulses, bilateral: vec![], iterations: 1, status: SolveStatus::Solved }
}

/// The world at the end of the step: `q+ = q0 + dt N v+`, `v+`.
fn after(world: &World, problem: &StepProblem<'_>, sol: &StepSolution) -> World {
    let mut w = world.clone();
    w.set_state(&problem.integrate(&sol.v), &sol.v);
    w
}

fn assert_close(what: &str, got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "{what}: got {got:e}, want {want:e} (tol {tol:e})");
}

/// A sphere resting on the ground: v+ = 0, lambda = (M g dt, 0, 0), gap 0. Every residual is 0.
#[test]
fn resting_sphere_exact_solution_has_zero_residuals() {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0; 6], vec![[M * G * DT, 0.0, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &after(&world, &problem, &sol), &contacts);
    assert_eq!(m.natmap_abs_l2, 0.0);
    assert_eq!(m.natmap_rel_l2, 0.0);
    assert_eq!(m.natmap_rel1_l2, 0.0);
    assert!(m.momentum_rel < 1e-15, "momentum_rel {}", m.momentum_rel);
    assert_eq!(m.signorini_max, 0.0);
    assert_eq!(m.cone_violation_max, 0.0);
    assert_eq!(m.mdp_violation_max, 0.0);
    assert_eq!(m.penetration_max, 0.0);
    assert_eq!((m.n_contacts, m.n_active, m.n_stick, m.n_slip), (1, 1, 1, 0));
    assert_eq!(m.creep_speed_max, 0.0);
    assert_eq!(m.slip_speed_max, 0.0);
    assert_close("normal_impulse_total", m.normal_impulse_total, 0.1962, 1e-15);
    assert_eq!(m.energy_change, 0.0);
    assert_eq!(m.energy_injection, 0.0);
    assert_eq!(m.t, 0.0);
}

/// `cone_violation = max(||lambda_t|| - mu lambda_n, -lambda_n, 0)` with mu = 0.5.
#[rstest]
#[case::inside([1.0, 0.3, 0.0], 0.0)]
#[case::on_boundary([1.0, 0.3, 0.4], 0.0)]
// ||(0.8, 0.6)|| = 1, mu lambda_n = 0.5 -> 0.5
#[case::outside_tangentially([1.0, 0.8, 0.6], 0.5)]
// ||(0.03, 0.04)|| + 0.5 * 0.2 = 0.15 < -lambda_n = 0.2 -> 0.2
#[case::negative_normal([-0.2, 0.03, 0.04], 0.2)]
fn cone_violation_is_the_distance_outside_the_cone(#[case] lambda: [f64; 3], #[case] want: f64) {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0; 6], vec![lambda]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    assert_close("cone_violation_max", m.cone_violation_max, want, 1e-15);
    assert_close("per contact", cone_violation_per_contact(&problem, &sol)[0], want, 1e-15);
}

/// The per-contact cone violation is not poisoned like `evaluate`'s metrics: a NaN impulse must
/// still read NaN there, not the 0 of an impulse inside the cone (`f64::max` drops a NaN).
#[rstest]
#[case::normal([f64::NAN, 0.0, 0.0])]
#[case::tangential([1.0, f64::NAN, 0.0])]
fn cone_violation_per_contact_of_a_nan_impulse_is_nan(#[case] lambda: [f64; 3]) {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0; 6], vec![lambda]);
    assert!(cone_violation_per_contact(&problem, &sol)[0].is_nan());
}

/// A sphere sliding along +x at 1 m/s (u_t = (1, 0)); friction lambda_t = 0.5 (cos a, sin a) on
/// the cone boundary (lambda_n = 1, mu = 0.5): mdp = 1 - cos angle(lambda_t, -u_t) = 1 + cos a.
#[rstest]
#[case::opposite(std::f64::consts::PI, 0.0)]
#[case::perpendicular(std::f64::consts::FRAC_PI_2, 1.0)]
#[case::along_slip(0.0, 2.0)]
#[case::at_135_degrees(0.75 * std::f64::consts::PI, 1.0 - std::f64::consts::FRAC_1_SQRT_2)]
fn mdp_violation_measures_friction_direction(#[case] angle: f64, #[case] want: f64) {
    let world = sphere_on_ground(0.5, 0.0, Vector3::new(1.0, 0.0, 0.0));
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let lambda = [1.0, 0.5 * angle.cos(), 0.5 * angle.sin()];
    let sol = solution(vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0], vec![lambda]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    assert_close("mdp_violation_max", m.mdp_violation_max, want, 1e-15);
    assert_eq!(mdp_violation_per_contact(&problem, &sol)[0], Some(m.mdp_violation_max));
    assert_eq!((m.n_active, m.n_slip, m.n_stick), (1, 1, 0));
    assert_close("slip_speed_max", m.slip_speed_max, 1.0, 1e-15);
}

/// Friction along the slip, but the contact is not "sliding and active": no MDP value.
#[rstest]
#[case::below_slip_threshold(0.5 * SLIP_SPEED_THRESHOLD, [1.0, 0.5, 0.0])]
#[case::inactive(1.0, [0.0, 0.5, 0.0])]
#[case::no_friction(1.0, [1.0, 0.0, 0.0])]
fn mdp_violation_only_on_sliding_active_contacts(#[case] slip: f64, #[case] lambda: [f64; 3]) {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![slip, 0.0, 0.0, 0.0, 0.0, 0.0], vec![lambda]);
    assert_eq!(mdp_violation_per_contact(&problem, &sol)[0], None);
    assert_eq!(evaluate(&problem, &sol, &world, &world, &contacts).mdp_violation_max, 0.0);
}

/// One contact, mu = 0.5, gap phi0 = 1 mm (bias w_n = phi0/dt = 0.1 m/s), v0 = (0.2, 0, 0),
/// v+ = (0.3, 0.4, 0), lambda = (1, 0.2, 0):
///
/// - u = J v+ + w = (0 + 0.1, 0.3, 0.4); signorini = |u_n lambda_n| = 0.1.
/// - u_hat = (0.1 + 0.5 * ||(0.3, 0.4)||, 0.3, 0.4) = (0.35, 0.3, 0.4).
/// - x = lambda - u_hat = (0.65, -0.1, -0.4), ||x_t|| = sqrt(0.17) = 0.412311 > mu x_n = 0.325
///   and mu ||x_t|| = 0.206 > -x_n: boundary case.
///   P_n = (mu ||x_t|| + x_n) / (1 + mu^2) = (0.5 sqrt(0.17) + 0.65) / 1.25 = 0.684924,
///   P_t = mu P_n x_t / ||x_t|| = 0.830593 * (-0.1, -0.4) = (-0.083059, -0.332237).
/// - F = lambda - P = (0.315076, 0.283059, 0.332237), ||F|| = 0.538309.
/// - v* = v0 - g dt e_z = (0.2, 0, -0.0981); q = J v* + w = (-0.0981 + 0.1, 0.2, 0) = (0.0019, 0.2, 0),
///   ||q|| = sqrt(0.0019^2 + 0.04) = 0.2000090; rel = 0.538309 / 0.2000090, rel1 = 0.538309 / 1.2000090.
#[test]
fn natural_map_and_signorini_of_a_separating_sliding_contact() {
    let world = sphere_on_ground(0.5, 1e-3, Vector3::new(0.2, 0.0, 0.0));
    let contacts = set(vec![ground_contact(&world, 0, 1e-3)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.3, 0.4, 0.0, 0.0, 0.0, 0.0], vec![[1.0, 0.2, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);

    // independent of kernels::cone: the closed form written out
    let xt_norm = 0.17f64.sqrt();
    let pn = (0.5 * xt_norm + 0.65) / 1.25;
    let s = 0.5 * pn / xt_norm;
    let f = [1.0 - pn, 0.2 + 0.1 * s, 0.4 * s];
    let per = natural_map_per_contact(&problem, &sol);
    for k in 0..3 {
        assert_close("F_i", per[0][k], f[k], 1e-14);
    }
    let abs = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
    assert_close("abs literal", abs, 0.5383091560492763, 1e-15);
    let nq = (0.0019f64.powi(2) + 0.04).sqrt();
    assert_close("natmap_abs_l2", m.natmap_abs_l2, abs, 1e-14);
    assert_close("natmap_rel_l2", m.natmap_rel_l2, abs / nq, 1e-12);
    assert_close("natmap_rel1_l2", m.natmap_rel1_l2, abs / (1.0 + nq), 1e-14);
    assert_eq!(
        natural_map_norms(&problem, &sol),
        NaturalMapNorms { abs_l2: m.natmap_abs_l2, rel_l2: m.natmap_rel_l2, rel1_l2: m.natmap_rel1_l2 }
    );
    assert_close("signorini_max", m.signorini_max, 0.1, 1e-15);
    assert_close("signorini per contact", signorini_per_contact(&problem, &sol)[0], 0.1, 1e-15);
}

/// A separating contact (u_n = 0.2 m/s, gap 0) that still pushes (lambda_n = 0.05):
/// signorini = 0.2 * 0.05 = 0.01; frictionless so u_hat = u, lambda - u_hat = (-0.15, 0, 0) is in
/// the polar cone, P = 0, F = lambda: natmap_abs = 0.05.
#[test]
fn signorini_product_of_a_separating_pushing_contact() {
    let world = sphere_on_ground(0.0, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0, 0.0, 0.2, 0.0, 0.0, 0.0], vec![[0.05, 0.0, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    assert_close("signorini_max", m.signorini_max, 0.01, 1e-16);
    assert_close("natmap_abs_l2", m.natmap_abs_l2, 0.05, 1e-16);
    // q = (-g dt, 0, 0)
    assert_close("natmap_rel_l2", m.natmap_rel_l2, 0.05 / 0.0981, 1e-14);
}

/// `||q|| <= eps` (gap phi0 = g dt^2 exactly cancels the free fall: q_n = -g dt + phi0/dt = 0):
/// the Siconos normalisation falls back to the absolute value. v+ = 0, lambda = (0.1, 0, 0):
/// u = (g dt, 0, 0), lambda - u_hat = (0.0019, 0, 0) is inside the cone, so F = u_hat = (0.0981, 0, 0).
#[test]
fn natural_map_relative_falls_back_to_absolute_when_q_vanishes() {
    let gap = G * DT * DT;
    let world = sphere_on_ground(0.5, gap, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, gap)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0; 6], vec![[0.1, 0.0, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    assert_close("natmap_abs_l2", m.natmap_abs_l2, G * DT, 1e-15);
    assert_eq!(m.natmap_rel_l2, m.natmap_abs_l2);
    assert_close("natmap_rel1_l2", m.natmap_rel1_l2, m.natmap_abs_l2, 1e-15);
}

/// Castro Eq. 32 at a wrong v+. Contact below the centre, r = p - x = (0, 0, -R),
/// lambda = (M g dt, 0.05, 0) = (0.1962, 0.05, 0) in frame (z, x, y), so
/// J^T lambda = (f, r x f) with f = (0.05, 0, 0.1962): (0.05, 0, 0.1962, 0, -0.005, 0).
/// v* = (0, 0, -0.0981, 0, 0, 0), D^2 = diag(1/2, 1/2, 1/2, 1/0.008, 1/0.008, 1/0.008).
///
/// - v+ = 0: M(v+ - v*) - J^T lambda = (-0.05, 0, 0, 0, 0.005, 0);
///   ||D r||^2 = 0.0025/2 + 0.005^2/0.008 = 0.004375; ||D M v+|| = 0;
///   ||D J^T lambda||^2 = (0.0025 + 0.1962^2)/2 + 0.003125 = 0.02362222 -> sqrt(0.004375/0.02362222).
/// - v+ = (0, 0, 1, 0, 0, 0): r = (-0.05, 0, 2, 0, 0.005, 0), ||D r||^2 = (0.0025 + 4)/2 + 0.003125
///   = 2.004375; ||D M v+||^2 = 4/2 = 2 dominates -> sqrt(2.004375/2).
#[rstest]
#[case::at_rest(0.0, (0.004375f64 / 0.02362222).sqrt())]
#[case::moving_up(1.0, (2.004375f64 / 2.0).sqrt())]
fn momentum_rel_of_a_wrong_velocity(#[case] vz: f64, #[case] want: f64) {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0, 0.0, vz, 0.0, 0.0, 0.0], vec![[M * G * DT, 0.05, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    assert_close("momentum_rel", m.momentum_rel, want, 1e-12);
    assert_eq!(momentum_rel(&problem, &sol.v, &sol.impulses), m.momentum_rel);
    // the right answer for this impulse: M(v+ - v*) = J^T lambda
    let right = [0.025, 0.0, 0.0, 0.0, -0.005 / I, 0.0];
    assert!(momentum_rel(&problem, &right, &sol.impulses) < 1e-15);
}

/// 0/0 -> 0: no gravity, nothing moves, no impulse.
#[test]
fn momentum_rel_zero_over_zero_is_zero() {
    let mut world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    world.gravity = Vector3::zeros();
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    assert_eq!(momentum_rel(&problem, &[0.0; 6], &[[0.0; 3]]), 0.0);
}

/// Free fall with symplectic Euler, v+ = v0 - g dt, z+ = z0 + dt v+:
/// dKE = 1/2 M ((v0 - g dt)^2 - v0^2) = -M v0 g dt + 1/2 M g^2 dt^2, dPE = M g dt (v0 - g dt),
/// so dE = -1/2 M g^2 dt^2 = -0.5 * 2 * 9.81^2 * 1e-4 = -0.00962361 J whatever v0.
#[rstest]
#[case::from_rest(Vector3::zeros())]
#[case::thrown(Vector3::new(0.3, -0.2, 1.0))]
fn energy_change_of_a_free_fall_step(#[case] v0: Vector3<f64>) {
    let world = sphere_on_ground(0.5, 1.0, v0);
    let contacts = ContactSet::default();
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(problem.free_velocity(), vec![]);
    let a = after(&world, &problem, &sol);
    let m = evaluate(&problem, &sol, &world, &a, &contacts);
    assert_close("energy_change", m.energy_change, -0.5 * M * G * G * DT * DT, 1e-12);
    assert_close("literal", m.energy_change, -0.00962361, 1e-12);
    assert_eq!(m.energy_injection, 0.0);
    let vz = v0.z - G * DT;
    assert_close("kinetic", m.kinetic, 0.5 * M * (v0.x * v0.x + v0.y * v0.y + vz * vz), 1e-14);
    assert_close("gravity", m.gravity, M * G * (R + 1.0 + DT * vz), 1e-12);
    assert_eq!(m.energy, m.kinetic + m.gravity + m.spring);
    // no contacts: every contact metric is 0, the step is exactly the free motion
    assert_eq!((m.n_contacts, m.natmap_abs_l2, m.signorini_max, m.normal_impulse_total), (0, 0.0, 0.0, 0.0));
    assert!(m.momentum_rel < 1e-15);
}

/// A resting sphere kicked up to 1 m/s by the contact: dE = 1/2 M 1^2 + M g dt 1 = 1 + 0.1962 J,
/// all of it injected.
#[test]
fn energy_injection_of_a_kick() {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0, 0.0, 1.0, 0.0, 0.0, 0.0], vec![[M * (1.0 + G * DT), 0.0, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &after(&world, &problem, &sol), &contacts);
    assert_close("energy_change", m.energy_change, 1.1962, 1e-12);
    assert_eq!(m.energy_injection, m.energy_change);
}

/// Spring, momenta and kinetic energy read from `after` (no gravity): body at x = (1, 0, 0) with
/// v = (0, 1, 0), w = (0, 0, 3): p = M v = (0, 2, 0), L = x x M v + I w = (0, 0, 2 + 0.024);
/// KE = 1/2 M 1 + 1/2 I 9 = 1.036; spring to the origin with rest 0.5 and k = 100: 1/2 100 0.5^2 = 12.5.
#[test]
fn state_metrics_come_from_the_after_world() {
    let mut world = World::new();
    world.gravity = Vector3::zeros();
    world.bodies.push(sphere("ball", Vector3::zeros(), Vector3::zeros(), 0.5));
    world.springs.push(Spring {
        body: 0,
        local_point: Vector3::zeros(),
        anchor: Vector3::zeros(),
        stiffness: 100.0,
        rest_length: 0.5,
        axis: None,
    });
    let contacts = ContactSet::default();
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0, 1.0, 0.0, 0.0, 0.0, 3.0], vec![]);
    let mut a = world.clone();
    a.bodies[0].position = Vector3::new(1.0, 0.0, 0.0);
    a.bodies[0].linear_velocity = Vector3::new(0.0, 1.0, 0.0);
    a.bodies[0].angular_velocity = Vector3::new(0.0, 0.0, 3.0);
    let m = evaluate(&problem, &sol, &world, &a, &contacts);
    assert_close("linear_momentum", m.linear_momentum, 2.0, 1e-15);
    assert_close("angular_momentum", m.angular_momentum, 2.024, 1e-14);
    assert_close("kinetic", m.kinetic, 1.036, 1e-14);
    assert_close("spring", m.spring, 12.5, 1e-12);
    assert_eq!(m.gravity, 0.0);
    // before: spring length 0 -> 1/2 100 0.25 = 12.5 too, at rest; change = KE
    assert_close("energy_change", m.energy_change, 1.036, 1e-12);
}

/// Penetration is read from the contacts after the step, not from the problem's contacts.
#[rstest]
#[case::penetrating(vec![0.002, -0.003, -0.001], 0.003)]
#[case::separated(vec![0.002, 0.0], 0.0)]
#[case::none(vec![], 0.0)]
fn penetration_from_the_contacts_after_the_step(#[case] gaps: Vec<f64>, #[case] want: f64) {
    let world = sphere_on_ground(0.5, -0.01, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, -0.01)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0; 6], vec![[0.0; 3]]);
    let contacts_after = set(gaps.iter().map(|&g| ground_contact(&world, 0, g)).collect());
    let m = evaluate(&problem, &sol, &world, &world, &contacts_after);
    assert_close("penetration_max", m.penetration_max, want, 1e-18);
}

/// Three contacts, mu = 0.5: sphere 0 on the ground creeping at 1e-4 m/s with friction inside the
/// cone (stick), sphere 1 on the ground sliding at |(0.3, 0.4)| = 0.5 m/s with friction on the
/// boundary (slip), sphere 2 on sphere 1 with no impulse (inactive; its relative speed of
/// 5 m/s must not count).
#[test]
fn stick_slip_classification_and_speeds() {
    let mut world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    world.bodies.push(sphere("b1", Vector3::new(1.0, 0.0, R), Vector3::zeros(), 0.5));
    world.bodies.push(sphere("b2", Vector3::new(1.0, 0.0, 3.0 * R), Vector3::zeros(), 0.5));
    let stacked = world.contact(
        ContactKey { a: ColliderId::Body(2), b: ColliderId::Body(1), feature: 0 },
        Vector3::new(1.0, 0.0, 2.0 * R),
        Vector3::z(),
        0.0,
    );
    let contacts = set(vec![ground_contact(&world, 0, 0.0), ground_contact(&world, 1, 0.0), stacked]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let mut v = vec![0.0; 18];
    v[0] = 1e-4; // body 0 creeps along x
    v[6] = 0.3; // body 1 slides along (0.3, 0.4)
    v[7] = 0.4;
    v[12] = 5.3; // body 2 moves 5 m/s relative to body 1
    let sol = solution(v, vec![[1.0, -0.2, 0.0], [2.0, -0.6, -0.8], [0.0, 0.0, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    assert_eq!((m.n_contacts, m.n_active, m.n_stick, m.n_slip), (3, 2, 1, 1));
    assert_close("creep_speed_max", m.creep_speed_max, 1e-4, 1e-18);
    assert_close("slip_speed_max", m.slip_speed_max, 0.5, 1e-15);
    assert_close("normal_impulse_total", m.normal_impulse_total, 3.0, 1e-15);
    // both active contacts have friction opposite to their slip
    assert_close("mdp_violation_max", m.mdp_violation_max, 0.0, 1e-15);
    assert_eq!(
        classify_per_contact(&problem, &sol),
        vec![ContactState::Stick, ContactState::Slip, ContactState::Inactive]
    );
}

/// The stick test `||lambda_t|| < (1 - 1e-3) mu lambda_n`; with mu = 0 every active contact slips.
#[rstest]
#[case::inside(0.5, [1.0, 0.4, 0.0], ContactState::Stick)]
#[case::just_inside_margin(0.5, [1.0, 0.0, 0.4994], ContactState::Stick)]
#[case::within_margin(0.5, [1.0, 0.0, 0.4996], ContactState::Slip)]
#[case::on_boundary(0.5, [1.0, 0.3, 0.4], ContactState::Slip)]
#[case::frictionless(0.0, [1.0, 0.0, 0.0], ContactState::Slip)]
#[case::zero_normal(0.5, [0.0, 0.0, 0.0], ContactState::Inactive)]
#[case::nan_normal(0.5, [f64::NAN, 0.0, 0.0], ContactState::Inactive)]
fn classify_stick_slip(#[case] mu: f64, #[case] lambda: [f64; 3], #[case] want: ContactState) {
    assert_eq!(classify(lambda, mu), want);
}

/// A frictionless resting contact counts as slip, and its creep is not reported.
#[test]
fn frictionless_active_contact_is_slip() {
    let world = sphere_on_ground(0.0, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let sol = solution(vec![0.0; 6], vec![[M * G * DT, 0.0, 0.0]]);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    assert_eq!((m.n_active, m.n_stick, m.n_slip), (1, 0, 1));
    assert_eq!(m.natmap_abs_l2, 0.0);
}

fn float_fields(m: &StepMetrics) -> [(&'static str, f64); 21] {
    [
        ("momentum_rel", m.momentum_rel),
        ("natmap_abs_l2", m.natmap_abs_l2),
        ("natmap_rel_l2", m.natmap_rel_l2),
        ("natmap_rel1_l2", m.natmap_rel1_l2),
        ("signorini_max", m.signorini_max),
        ("cone_violation_max", m.cone_violation_max),
        ("mdp_violation_max", m.mdp_violation_max),
        ("penetration_max", m.penetration_max),
        ("kinetic", m.kinetic),
        ("gravity", m.gravity),
        ("spring", m.spring),
        ("energy", m.energy),
        ("energy_change", m.energy_change),
        ("energy_injection", m.energy_injection),
        ("linear_momentum", m.linear_momentum),
        ("angular_momentum", m.angular_momentum),
        ("creep_speed_max", m.creep_speed_max),
        ("slip_speed_max", m.slip_speed_max),
        ("normal_impulse_total", m.normal_impulse_total),
        ("bilateral_residual", m.bilateral_residual),
        ("bilateral_violation_max", m.bilateral_violation_max),
    ]
}

/// NaN anywhere in the solution: every floating-point metric is NaN, nothing panics.
#[rstest]
#[case::lambda_n(|s: &mut StepSolution| s.impulses[0][0] = f64::NAN)]
#[case::lambda_t(|s: &mut StepSolution| s.impulses[0][2] = f64::NAN)]
#[case::velocity(|s: &mut StepSolution| s.v[4] = f64::NAN)]
#[case::positions(|s: &mut StepSolution| s.q = Some(vec![f64::NAN; 7]))]
#[case::infinite_lambda(|s: &mut StepSolution| s.impulses[0][0] = f64::INFINITY)]
fn non_finite_solution_gives_nan_metrics(#[case] spoil: fn(&mut StepSolution)) {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let problem = world.step_problem(&contacts, DT, None).unwrap();
    let mut sol = solution(vec![0.0; 6], vec![[M * G * DT, 0.0, 0.0]]);
    spoil(&mut sol);
    let m = evaluate(&problem, &sol, &world, &world, &contacts);
    for (name, x) in float_fields(&m) {
        assert!(x.is_nan(), "{name} = {x} should be NaN");
    }
    assert_eq!((m.n_contacts, m.t), (1, 0.0));
}

/// Without the explicit poisoning, NaN still propagates through the maxima (f64::max would drop it).
#[test]
fn maxima_propagate_nan() {
    assert!(nan_max(0.0, f64::NAN).is_nan());
    assert!(nan_max(f64::NAN, 1.0).is_nan());
    assert_eq!(nan_max(0.0, -1.0), 0.0);
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts_after = set(vec![ground_contact(&world, 0, f64::NAN), ground_contact(&world, 0, -0.1)]);
    assert!(penetration_max(&contacts_after).is_nan());
}

/// `penetration_max` over every contact, wherever the deepest one is: first, middle, last, alone;
/// 0 for an empty set and for separated contacts only (it is a depth, never negative).
#[rstest]
#[case(&[-0.3, -0.1, -0.2], 0.3)]
#[case(&[-0.1, -0.3, -0.2], 0.3)]
#[case(&[-0.1, -0.2, -0.3], 0.3)]
#[case(&[-0.25], 0.25)]
#[case(&[0.1, 0.2], 0.0)]
#[case(&[], 0.0)]
fn penetration_is_the_deepest_contact_wherever_it_is(#[case] gaps: &[f64], #[case] want: f64) {
    let mut world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    for k in 1..gaps.len() {
        world.bodies.push(sphere("ball", Vector3::new(3.0 * k as f64, 0.0, R), Vector3::zeros(), 0.5));
    }
    let contacts = set(gaps.iter().enumerate().map(|(k, g)| ground_contact(&world, k, *g)).collect());
    assert_eq!(penetration_max(&contacts), want, "gaps {gaps:?}");
}

/// The total energy is the sum of its four terms, each measured separately and all nonzero and
/// distinct here (a moving sphere above the origin under gravity, on a stretched spring, and a
/// compressed FEM box): a sign or operator slip in the sum changes `total`.
#[test]
fn energy_total_is_the_sum_of_its_four_terms() {
    use crate::model::{DeformableBody, ElasticMaterial, ElasticModel};
    let mut world = World::new();
    world.bodies.push(sphere("ball", Vector3::new(0.0, 0.0, 2.0), Vector3::new(0.0, 3.0, 0.0), 0.5));
    world.springs.push(Spring {
        body: 0,
        local_point: Vector3::zeros(),
        anchor: Vector3::new(0.0, 0.0, 1.0),
        stiffness: 100.0,
        rest_length: 0.5,
        axis: None,
    });
    let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: 1e5, poisson_ratio: 0.3 };
    let size = Vector3::new(0.1, 0.1, 0.1);
    let mut b =
        DeformableBody::box_mesh("box", Vector3::new(1.0, 0.0, 0.5), size, [1; 3], 1000.0, mat, Material::rigid(0.5));
    for p in &mut b.positions {
        p.z *= 0.9; // squeezed along z: elastic energy > 0
    }
    world.deformables.push(b);
    let e = EnergyTerms::of(&world);
    // each term is the world's own measure: 1/2 m v^2, -m g.x over bodies and nodes, 1/2 k (l - l0)^2
    assert_eq!(e.kinetic, world.kinetic_energy());
    assert_eq!(e.gravity, world.gravity_energy());
    assert!((e.spring - 0.5 * 100.0 * 0.5 * 0.5).abs() < 1e-12, "{e:?}");
    assert_eq!(e.elastic, world.elastic_energy());
    let terms = [e.kinetic, e.gravity, e.spring, e.elastic];
    assert!(terms.iter().all(|t| t.abs() > 1e-6), "every term nonzero: {e:?}");
    let sum: f64 = terms.iter().sum();
    assert!((e.total - sum).abs() <= 1e-12 * sum.abs(), "{e:?}");
}

/// A sphere in free space, ball-jointed to the world at its centre (G = [I 0] on its twist), then
/// moved by `offset` so that the joint is violated by exactly `offset` (in either sign convention,
/// read back from the rows), with the joint rigid or a spring–damper `(k, b)`.
fn jointed_sphere(offset: Vector3<f64>, compliance: Option<(f64, f64)>) -> World {
    use crate::model::{Joint, JointCompliance};
    let mut w = World::new();
    w.gravity = Vector3::zeros();
    w.bodies.push(sphere("ball", Vector3::zeros(), Vector3::zeros(), 0.5));
    let mut j = Joint::ball_at(&w, 0, None, Vector3::zeros());
    j.compliance = compliance.map(|(stiffness, damping)| JointCompliance { stiffness, damping });
    w.joints.push(j);
    w.bodies[0].position += offset;
    w
}

/// The joint-law residual is `max_k |G_k v + C_k/dt|` for rigid rows and
/// `max_k |G_k v - v_hat_k + r_k gamma_k|` with `v_hat = -k C/(dt k + b)`, `r = 1/(dt (dt k + b))`
/// for a spring–damper (numbers worked by hand below), and the drift after the step is `max |C|`.
#[test]
fn bilateral_metrics_follow_the_joint_law_and_the_drift() {
    let offset = Vector3::new(0.01, -0.02, 0.0);
    let v = vec![0.5, 0.3, -0.2, 0.0, 0.0, 0.0];
    // rigid: rows x, y, z with |C| = (0.01, 0.02, 0): |v_k + C_k/dt| with C's sign read from the rows
    let w = jointed_sphere(offset, None);
    let contacts = ContactSet::default();
    let p = w.step_problem(&contacts, DT, None).unwrap();
    assert_eq!(p.nb(), 3);
    let c: Vec<f64> = p.bilateral.rows.iter().map(|r| r.violation).collect();
    assert_eq!(c.iter().map(|x| x.abs()).collect::<Vec<_>>(), [0.01, 0.02, 0.0]);
    let want = (0..3).map(|k| (v[k] + c[k] / DT).abs()).fold(0.0, f64::max);
    assert!((bilateral_residual_max(&p, &v, &[]) - want).abs() < 1e-12, "{want}");
    assert!(want > 1.0, "the bias C/dt dominates: {want}");
    // rigid rows ignore gamma (r = 0)
    assert_eq!(bilateral_residual_max(&p, &v, &[5.0, 5.0, 5.0]), bilateral_residual_max(&p, &v, &[]));
    // compliant, k = 1000 N/m, b = 10 N s/m, dt = 0.01: dt k + b = 20, v_hat = -50 C,
    // r = 1/(0.01 * 20) = 5; gamma = (0.1, 0, -0.04) cancels nothing in particular
    let w = jointed_sphere(offset, Some((1000.0, 10.0)));
    let p = w.step_problem(&contacts, DT, None).unwrap();
    let gamma = [0.1, 0.0, -0.04];
    let want = (0..3).map(|k| (v[k] + 50.0 * c[k] + 5.0 * gamma[k]).abs()).fold(0.0, f64::max);
    assert!((bilateral_residual_max(&p, &v, &gamma) - want).abs() < 1e-12, "{want}");
    // the impulse that zeroes every row's law: gamma_k = -(v_k + 50 C_k) / 5
    let zero: Vec<f64> = (0..3).map(|k| -(v[k] + 50.0 * c[k]) / 5.0).collect();
    assert!(bilateral_residual_max(&p, &v, &zero) < 1e-12);
    // drift after the step: the largest |C| of the world's joint rows
    assert_eq!(bilateral_violation_max(&jointed_sphere(offset, None)), 0.02);
    assert_eq!(bilateral_violation_max(&jointed_sphere(Vector3::zeros(), None)), 0.0);
}

/// The natural map's projection: a frictionless contact separating with no impulse, or a sliding
/// one, is at the solution (0); an impulse strictly inside the cone with zero velocity is too.
/// (`kernels::cone::project` with `mu = 0` would return a purely normal negative point unchanged,
/// which the metric's guard exists to avoid.)
#[rstest]
#[case([0.0, 0.0, 0.0], [0.5, 0.0, 0.0], 0.0)]
#[case([0.0, 0.0, 0.0], [0.5, 0.3, -0.1], 0.0)]
#[case([1.0, 0.2, 0.0], [0.0, 0.0, 0.0], 0.5)]
#[case([1.0, 0.0, 0.2], [0.0, 0.0, 0.0], 0.5)]
fn natural_map_vanishes_at_solutions(#[case] lambda: [f64; 3], #[case] u: [f64; 3], #[case] mu: f64) {
    let f = complementarity::natural_map_one(lambda, u, mu);
    assert!(f.iter().all(|x| x.abs() < 1e-15), "F = {f:?} for lambda {lambda:?}, u {u:?}, mu {mu}");
}

/// A solution with fewer impulses than contacts is a shape error, not a shorter sum.
#[test]
#[should_panic(expected = "1 impulses for 2 contacts")]
fn natural_map_refuses_a_wrong_number_of_impulses() {
    let world = sphere_on_ground(0.5, 0.0, Vector3::zeros());
    let contacts = set(vec![ground_contact(&world, 0, 0.0), ground_contact(&world, 0, 0.0)]);
    let _ = complementarity::natural_map_with(&contacts, &[[0.0; 3]], &[[0.0; 3], [0.0; 3]]);
}

/// Stick versus slip scales with the normal impulse: `||lambda_t|| < (1 - STICK_MARGIN) mu
/// lambda_n`, here with `lambda_n = 2` so that `mu lambda_n` and `mu / lambda_n` differ.
#[test]
fn stick_and_slip_scale_with_the_normal_impulse() {
    assert_eq!(classify([2.0, 0.7, 0.0], 0.5), ContactState::Stick); // 0.7 < 0.999
    assert_eq!(classify([2.0, 0.0, 1.0], 0.5), ContactState::Slip); // on the boundary
    assert_eq!(classify([0.5, 0.3, 0.0], 0.5), ContactState::Slip); // 0.3 > 0.25 x 0.999
    assert_eq!(classify([0.5, 0.2, 0.0], 0.5), ContactState::Stick); // 0.2 < 0.25 x 0.999
}

/// The momentum error with joints: an answer that balances `M (v+ - v*) = G^T gamma` is exact (0)
/// only when `gamma` is counted; a `gamma` of the wrong length is ignored (as none).
#[test]
fn momentum_counts_the_joint_impulses() {
    let w = jointed_sphere(Vector3::zeros(), None);
    let contacts = ContactSet::default();
    let p = w.step_problem(&contacts, DT, None).unwrap();
    let gamma = [0.2, -0.1, 0.05];
    // G = [I 0] on the sphere: v+ = v* + M^-1 G^T gamma = gamma / M on the linear part
    let mut v = p.free_velocity();
    for k in 0..3 {
        v[k] += gamma[k] / M;
    }
    let v_star = p.free_velocity();
    assert!(momentum::momentum_rel_with(&p, &v, &[], &gamma, &v_star) < 1e-15);
    let without = momentum::momentum_rel_with(&p, &v, &[], &[], &v_star);
    assert!(without > 0.1, "the joint impulse is the whole balance: {without}");
    assert_eq!(momentum::momentum_rel_with(&p, &v, &[], &gamma[..1], &v_star), without);
}

/// Standing still under gravity with no impulse: nothing balances the weight, and nothing scales
/// the error (`||M v+|| = ||J^T lambda|| = 0`), so the relative error is infinite, not 0.
#[test]
fn momentum_error_of_an_unbalanced_rest_is_infinite() {
    let world = sphere_on_ground(0.5, 0.1, Vector3::zeros());
    let contacts = ContactSet::default();
    let p = world.step_problem(&contacts, DT, None).unwrap();
    assert_eq!(momentum_rel(&p, &[0.0; 6], &[]), f64::INFINITY);
    assert_eq!(momentum_rel(&p, &p.free_velocity(), &[]), 0.0, "free flight is exact");
}

/// Momentum drift of a closed system is the largest change from the first state of the trace, for
/// the linear and the angular momentum apart; a system with gravity, or an empty trace, has none.
#[test]
fn momentum_drift_is_measured_from_the_first_state() {
    let mut w = World::new();
    w.gravity = Vector3::zeros();
    w.bodies.push(sphere("ball", Vector3::new(1.0, 0.0, 0.0), Vector3::zeros(), 0.5));
    assert!(w.is_closed());
    let q0 = w.positions();
    // v = (vx, vy, vz, wx, wy, wz): p = M v, L = x x M v + I w with x = (1, 0, 0)
    let states = [[0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.5, 0.0, 0.0, 0.0, 0.0], [0.0, 0.8, 0.0, 0.0, 0.0, 2.0]];
    let trace = Trace {
        dt: DT,
        q: vec![q0.clone(); 3],
        v: states.iter().map(|s| s.to_vec()).collect(),
        metrics: vec![],
        completed: true,
    };
    let d = momentum::drift(&w, &trace).expect("closed");
    // p: (0, 2, 0) -> (0, 3, 0) -> (0, 1.6, 0): max |p - p0| = 1
    assert!((d.linear - 1.0).abs() < 1e-12, "{d:?}");
    // L_z = x v_y M + I w_z: 2 -> 3 -> 1.6 + 2 I: max |L - L0| = 1
    let l2 = 1.6 + 2.0 * I;
    assert!((d.angular - (1.0f64).max((l2 - 2.0).abs())).abs() < 1e-12, "{d:?}");
    let empty = Trace { dt: DT, q: vec![], v: vec![], metrics: vec![], completed: true };
    assert!(momentum::drift(&w, &empty).is_none());
    assert!(momentum::drift(&sphere_on_ground(0.5, 0.0, Vector3::zeros()), &trace).is_none(), "gravity");
}

/// The direction error of sliding friction: 0 opposite to the slip, 1 perpendicular, 2 along it,
/// for tangential magnitudes other than 1; none at or below the slip-speed threshold.
#[rstest]
#[case([1.0, 2.0, 0.0], [0.0, -0.5, 0.0], Some(0.0))]
#[case([1.0, 0.0, 3.0], [0.0, -0.5, 0.0], Some(1.0))]
#[case([1.0, 2.0, 0.0], [0.0, 0.5, 0.0], Some(2.0))]
#[case([1.0, 2.0, 2.0], [0.0, -0.25, 0.0], Some(1.0 - 0.5f64.sqrt()))]
#[case([1.0, 2.0, 0.0], [0.0, -SLIP_SPEED_THRESHOLD, 0.0], None)]
fn mdp_violation_is_one_minus_the_cosine(#[case] lambda: [f64; 3], #[case] u: [f64; 3], #[case] want: Option<f64>) {
    let got = mdp_violation(lambda, u);
    match (got, want) {
        (Some(g), Some(w)) => assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}"),
        _ => assert_eq!(got, want),
    }
}

/// The yardstick on every iterate: the rigid NCP's natural map, the contact model's own natural
/// map (equal to the first for rigid contact, with the same normalisation) and the momentum
/// error, each equal to the step metric of that iterate; an iterate of the wrong size gives NaN.
#[test]
fn yardstick_columns_are_the_step_metrics_of_each_iterate() {
    use crate::metrics::yardstick::{evaluate as columns, Iterate, MODEL_NATMAP, MOMENTUM, NATMAP};
    let world = sphere_on_ground(0.5, 0.0, Vector3::new(0.3, 0.0, 0.0));
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let p = world.step_problem(&contacts, DT, None).unwrap();
    let exact =
        Iterate { v: vec![0.1, 0.0, 0.0, 0.0, 0.0, 0.0], impulses: vec![[M * G * DT, -0.4, 0.0]], bilateral: vec![] };
    let free = Iterate { v: p.free_velocity(), impulses: vec![[0.0; 3]], bilateral: vec![] };
    let short_v = Iterate { v: vec![0.0; 5], impulses: vec![[0.0; 3]], bilateral: vec![] };
    let short_l = Iterate { v: vec![0.0; 6], impulses: vec![], bilateral: vec![] };
    let its = [exact.clone(), free.clone(), short_v, short_l];
    let cols = columns(&p, &its);
    assert_eq!(cols.iter().map(|c| c.0).collect::<Vec<_>>(), [NATMAP, MODEL_NATMAP, MOMENTUM]);
    for (k, it) in [exact, free].iter().enumerate() {
        let sol = solution(it.v.clone(), it.impulses.clone());
        let natmap = natural_map_norms(&p, &sol).rel_l2;
        assert!(natmap > 0.0 || k == 0, "iterate {k}");
        assert!((cols[0].1[k] - natmap).abs() <= 1e-14 * natmap.max(1.0), "iterate {k}: {:?} vs {natmap}", cols[0].1);
        assert!((cols[1].1[k] - natmap).abs() <= 1e-12 * natmap.max(1e-12), "rigid contact: model = NCP ({k})");
        assert_eq!(cols[2].1[k], momentum_rel(&p, &sol.v, &sol.impulses), "iterate {k}");
    }
    for c in &cols {
        assert!(c.1[2].is_nan() && c.1[3].is_nan(), "{}: wrong sizes give NaN: {:?}", c.0, c.1);
    }
}

/// The stopping yardstick of each model ([`yardstick::StopMeasure`]): which measure a model gets,
/// the name the records carry, and its value on a sliding sphere (1 mm deep, so the gap term
/// counts) for the exact Coulomb answer and for the free velocity, against the step metrics and a
/// CCP natural map written out here.
#[test]
fn stop_yardstick_is_each_models_measure() {
    use crate::metrics::yardstick::{rigid_natmap, stop_yardstick, StopMeasure, MOMENTUM};
    use api::AnsweredModel;
    let cols: &'static [&'static str] = &["r"];
    let params = api::Params::from_toml("facets = 8", "t").unwrap();
    let of = |model| StopMeasure::of(model, &params).unwrap();
    assert_eq!(of(AnsweredModel::RigidCoulomb), StopMeasure::ContactModel);
    assert_eq!(of(AnsweredModel::Regularised { residual_columns: cols }), StopMeasure::Momentum);
    assert_eq!(of(AnsweredModel::Relaxed { residual_columns: cols }), StopMeasure::Ccp);
    assert_eq!(of(AnsweredModel::ConeProgram { residual_columns: cols }), StopMeasure::ConeProgram);
    assert_eq!(
        of(AnsweredModel::Pyramid { facets: "facets", residual_columns: cols }),
        StopMeasure::Pyramid { facets: 8 }
    );
    // a setting the settings lack, or a polygon of fewer than 3 facets, is refused
    let two = api::Params::from_toml("facets = 2", "t").unwrap();
    for (model, p) in [("sides", &params), ("facets", &two)] {
        let e = StopMeasure::of(AnsweredModel::Pyramid { facets: model, residual_columns: cols }, p).unwrap_err();
        assert_eq!(e.setting, model, "{e}");
    }
    assert_eq!(StopMeasure::Momentum.name(), MOMENTUM);
    assert_eq!(StopMeasure::Pyramid { facets: 4 }.name(), "max(pyramid4_natmap_rel, yardstick_momentum_rel)");
    assert_eq!(StopMeasure::ContactModel.name(), "max(yardstick_model_natmap_rel, yardstick_momentum_rel)");
    assert_eq!(StopMeasure::Ccp.name(), "max(ccp_natmap_rel, yardstick_momentum_rel)");

    let (mu, gap) = (0.5, -1e-3);
    let world = sphere_on_ground(mu, gap, Vector3::new(0.3, 0.0, 0.0));
    let contacts = set(vec![ground_contact(&world, 0, gap)]);
    let p = world.step_problem(&contacts, DT, None).unwrap();
    let q = p.contact_velocities(&p.free_velocity());
    let nq = q.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    // the CCP's natural map written out: u = J v + w (w = (gap/dt) e_n), F = λ − P_K(λ − u)
    let ccp_by_hand = |v: &[f64], l: [f64; 3]| {
        let u = p.contact_velocities(v)[0];
        let x = [l[0] - u[0], l[1] - u[1], l[2] - u[2]];
        let pk = kernels::cone::project(x, mu);
        ((l[0] - pk[0]).powi(2) + (l[1] - pk[1]).powi(2) + (l[2] - pk[2]).powi(2)).sqrt() / nq
    };
    let pushed = [M * G * DT - M * gap / DT, -0.4, 0.0];
    let iterates = [(vec![0.1, 0.0, 0.0, 0.0, 0.0, 0.0], pushed), (p.free_velocity(), [0.0; 3])];
    for (k, (v, l)) in iterates.iter().enumerate() {
        let sol = solution(v.clone(), vec![*l]);
        let m = momentum_rel(&p, v, &sol.impulses);
        let natmap = natural_map_norms(&p, &sol).rel_l2;
        let ccp = ccp_by_hand(v, *l);
        assert!(ccp > 0.0 && natmap > 0.0 && (ccp - natmap).abs() > 1e-6 * natmap, "iterate {k}: {ccp} {natmap}");
        let at = |measure| stop_yardstick(&p, measure)(v, &sol.impulses, &[]);
        assert_eq!(at(StopMeasure::Momentum), m, "iterate {k}");
        assert_close("contact model", at(StopMeasure::ContactModel), natmap.max(m), 1e-12 * natmap);
        assert_close("ccp", at(StopMeasure::Ccp), ccp.max(m), 1e-12 * ccp);
        // the fallback where the blocks cannot be assembled: the same maps from the contacts alone
        let fallback = |measure| rigid_natmap(&contacts, DT, &q, measure, v, &sol.impulses);
        assert_close("fallback ccp", fallback(StopMeasure::Ccp), ccp, 1e-12 * ccp);
        assert_close("fallback", fallback(StopMeasure::ContactModel), natmap, 1e-12 * natmap);
        for measure in [StopMeasure::Pyramid { facets: 4 }, StopMeasure::ConeProgram] {
            assert_close("fallback", fallback(measure).max(m), at(measure), 1e-12 * at(measure));
        }
        assert!(rigid_natmap(&contacts, DT, &q, StopMeasure::Ccp, v, &[]).is_nan(), "wrong number of impulses");
    }
    // an iterate of the wrong size is NaN under every measure, whichever of its parts is wrong
    for measure in [
        StopMeasure::Momentum,
        StopMeasure::ContactModel,
        StopMeasure::Ccp,
        StopMeasure::Pyramid { facets: 4 },
        StopMeasure::ConeProgram,
    ] {
        let y = stop_yardstick(&p, measure);
        assert!(y(&[0.0; 5], &[pushed], &[]).is_nan(), "{measure:?}: five velocities for six DOFs");
        assert!(y(&p.free_velocity(), &[], &[]).is_nan(), "{measure:?}: no impulse for one contact");
    }
}

/// A sphere sliding on the ground at 45° between the axes of a 4-facet pyramid (`t1 = x`,
/// `t2 = y`), resting on it (gap 0): the exact answer of the pyramid LCP written out from the
/// contact's Delassus block `W` (diagonal here), `λ_n = −u*_n / W_nn` and the friction on the
/// square's facet facing the slip, `λ_t = −(μ λ_n / 2)(1, 1)` (the LP's optimum along the
/// diagonal), `v = v* + M⁻¹ Jᵀ λ`. Returns the problem's world and that answer.
fn sliding_on_a_pyramid_facet(mu: f64) -> (World, StepSolution) {
    let s = 0.3 * std::f64::consts::FRAC_1_SQRT_2;
    let world = sphere_on_ground(mu, 0.0, Vector3::new(s, s, 0.0));
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let p = world.step_problem(&contacts, DT, None).unwrap();
    let mut blocks = toolkit::contact_blocks::ContactBlocks::default();
    blocks.assemble(&p).unwrap();
    let b = &blocks.blocks[0];
    let w = b.local.w;
    assert!(w[0][1] == 0.0 && w[0][2] == 0.0 && w[1][2].abs() < 1e-15, "a sphere on a plane: W diagonal {w:?}");
    let u_star = b.velocity(&p.free_velocity());
    let ln = -u_star[0] / w[0][0];
    let lambda = [ln, -mu * ln / 2.0, -mu * ln / 2.0];
    let mut v = p.free_velocity();
    b.apply(lambda, &mut v);
    let u = b.velocity(&v);
    assert!(u[1] > 0.0 && (u[1] - u[2]).abs() < 1e-15 && u[0].abs() < 1e-15, "still sliding along the diagonal: {u:?}");
    (world.clone(), solution(v, vec![lambda]))
}

/// The pyramid measure reads the natural map of the solver's own friction polygon: the exact
/// 4-facet answer of [`sliding_on_a_pyramid_facet`] measures round-off on the 4-facet pyramid,
/// and at 8 facets (the diagonal is then a vertex direction) and on the exact cone it measures
/// the octagon's and the disk's extra friction, `μ λ_n (1/√2 − 1/2)·√2` off in `λ_t`, relative to
/// `||q||`: the value written out by hand.
#[test]
fn the_pyramid_measure_is_the_natural_map_of_the_solvers_polygon() {
    use crate::metrics::yardstick::{stop_yardstick, StopMeasure};
    let mu = 0.5;
    let (world, sol) = sliding_on_a_pyramid_facet(mu);
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let p = world.step_problem(&contacts, DT, None).unwrap();
    let at = |measure| stop_yardstick(&p, measure)(&sol.v, &sol.impulses, &[]);
    let nq = p.contact_velocities(&p.free_velocity()).iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    assert!(at(StopMeasure::Pyramid { facets: 4 }) < 1e-14, "{}", at(StopMeasure::Pyramid { facets: 4 }));
    // at 8 facets the optimum is the vertex μ λ_n (−1, −1)/√2: the map is the distance to it
    let ln = sol.impulses[0][0];
    let off = mu * ln * (std::f64::consts::FRAC_1_SQRT_2 - 0.5) * std::f64::consts::SQRT_2;
    assert_close("8 facets", at(StopMeasure::Pyramid { facets: 8 }), off / nq, 1e-12 * off / nq);
    assert!(at(StopMeasure::ContactModel) > 0.1 * off / nq, "the exact cone's law is not met either");
}

/// The harness grades the answer, never the solver's claim (issue 37's rule): for the pyramid
/// and the cone-program measures, an answer that violates the model while the solver's own
/// residual column claims 0 is recorded unreached, and the exact answer is recorded reached
/// while the column claims 1. The violating answers: the free velocity with no impulse (the
/// sphere sinks: the normal law fails), and the exact pyramid answer with its friction doubled
/// (outside the polygon and the Coulomb cone: `λ_t` of norm `μ λ_n / √2 · 2 > μ λ_n`).
#[test]
fn the_verdict_is_the_harnesss_whatever_the_solver_claims() {
    use crate::accuracy::Accuracy;
    use crate::metrics::yardstick::StopMeasure;
    let (eps, mu) = (1e-6, 0.5);
    let (world, exact) = sliding_on_a_pyramid_facet(mu);
    let contacts = set(vec![ground_contact(&world, 0, 0.0)]);
    let p = world.step_problem(&contacts, DT, None).unwrap();
    let free = solution(p.free_velocity(), vec![[0.0; 3]]);
    let mut doubled = exact.clone();
    doubled.impulses[0][1] *= 2.0;
    doubled.impulses[0][2] *= 2.0;
    doubled.v = p.free_velocity();
    let mut blocks = toolkit::contact_blocks::ContactBlocks::default();
    blocks.assemble(&p).unwrap();
    blocks.blocks[0].apply(doubled.impulses[0], &mut doubled.v);
    for measure in [StopMeasure::Pyramid { facets: 4 }, StopMeasure::ConeProgram] {
        for harness_stops in [true, false] {
            let model = match measure {
                StopMeasure::Pyramid { .. } => {
                    api::AnsweredModel::Pyramid { facets: "facets", residual_columns: &["lcp_minmap_abs_linf"] }
                }
                _ => api::AnsweredModel::ConeProgram { residual_columns: &["r_prim", "r_dual"] },
            };
            let mode = Accuracy { eps, measure, model, harness_stops };
            let grade = |sol: &StepSolution, claim: f64| {
                let (mut log, armed) = mode.arm(&p, api::IterationLog::new());
                // the solver's own residual columns (lcp_pgs's, drumwright's)
                log.record(&[("lcp_minmap_abs_linf", claim), ("r_prim", claim), ("r_dual", claim)]);
                mode.grade(&armed, &log, sol, 1e-3)
            };
            for (what, wrong) in [("free velocity", &free), ("doubled friction", &doubled)] {
                let g = grade(wrong, 0.0);
                assert!(!g.reached && g.best > 1e-3, "{measure:?}, {what}: the claim decided: {g:?}");
                assert_eq!(g.own, Some(0.0), "the claim is recorded beside the verdict");
            }
            let g = grade(&exact, 1.0);
            assert!(g.reached && g.best < 1e-14 && g.own == Some(1.0), "{measure:?}: the exact answer: {g:?}");
        }
    }
}
