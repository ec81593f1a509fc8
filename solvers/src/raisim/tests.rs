//! Tests of `raisim`: the per-contact exact solve against analytic answers (open, stick, slide
//! with and without normal–tangential coupling), the sweep against pgs (exact cone) on a step and
//! on a Delassus problem, refusals and settings.

use super::*;
use crate::pgs::{Pgs, PgsSettings};
use api::DelassusProblem;
use harness::model::{DofMask, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{ColliderId, ContactKey, ContactSet, IterationLog, SolveError, SolveStatus, Solver};
use kernels::contact_local::LocalProblem;
use nalgebra::Vector3;

const G: f64 = 9.81;
const DT: f64 = 0.01;

fn close(a: [f64; 3], b: [f64; 3], tol: f64) -> bool {
    (0..3).all(|k| (a[k] - b[k]).abs() <= tol)
}

/// One contact with `u = W λ + c` (from zero impulse, `u = c`).
fn local(w: [[f64; 3]; 3], mu: f64) -> LocalProblem {
    LocalProblem::new(w, mu, 0.0, 0.0)
}

#[test]
fn an_approaching_contact_that_would_separate_is_open() {
    let (l, c) = (local([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], 0.5), [0.3, 1.0, 0.0]);
    assert_eq!(solve_contact(&l, c, [0.0; 3]), ([0.0; 3], Case::Open));
}

/// `W = diag(2, 1, 1)`, `c = (−1, 0.5, 0.2)`, `μ = 0.3`: `λ_n = 1/2`; the tangential sticking
/// impulse `−c_t` (norm 0.539) exceeds `μ λ_n = 0.15`, so it slides with
/// `λ_t = −μ λ_n c_t / ‖c_t‖` and the bisection must land on it to round-off (`u_n = 0`).
#[test]
fn a_single_contact_slides_exactly_onto_the_analytic_answer() {
    let l = local([[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], 0.3);
    let c = [-1.0, 0.5, 0.2];
    let (lam, case) = solve_contact(&l, c, [0.0; 3]);
    assert_eq!(case, Case::Slide);
    let nt = 0.5f64.hypot(0.2);
    let want = [0.5, -0.15 * 0.5 / nt, -0.15 * 0.2 / nt];
    assert!(close(lam, want, 1e-14), "{lam:?} vs {want:?}");
}

/// Normal–tangential coupling `W_nt = 0.2`, `c = (−1, 2, 0)`, `μ = 0.5`: by symmetry `λ_t2 = 0`
/// and `λ_t1 = −μ λ_n`; `u_n = 0` gives `λ_n = 1 / (1 − 0.2 μ) = 1/0.9` and the slip
/// `u_t1 = 2 + 0.2 λ_n − μ λ_n = 1.667 > 0` opposes `λ_t1`. Started from a wrong impulse, the
/// solve is still exact (it depends on `c` only).
#[test]
fn a_coupled_contact_slides_exactly_onto_the_analytic_answer() {
    let w = [[1.0, 0.2, 0.0], [0.2, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let l = local(w, 0.5);
    let start = [0.3, 0.1, -0.2];
    // u at `start`: W start + c
    let c = [-1.0, 2.0, 0.0];
    let u = [0, 1, 2].map(|a| c[a] + (0..3).map(|b| w[a][b] * start[b]).sum::<f64>());
    let (lam, case) = solve_contact(&l, u, start);
    assert_eq!(case, Case::Slide);
    let ln = 1.0 / 0.9;
    assert!(close(lam, [ln, -0.5 * ln, 0.0], 1e-13), "{lam:?}");
    // the Coulomb natural map of the answer vanishes
    let u = [0, 1, 2].map(|a| c[a] + (0..3).map(|b| w[a][b] * lam[b]).sum::<f64>());
    let r = kernels::contact_local::natmap(lam, u, 0.5);
    assert!(r.iter().all(|x| x.abs() < 1e-13), "{r:?}");
}

/// Sticking: `λ = −W⁻¹ c` inside the cone, the exact-cone answer; pgs (exact cone) on the same
/// one-contact Delassus problem agrees.
#[test]
fn a_sticking_contact_matches_the_exact_cone_answer() {
    let t = vec![(0, 0, 2.0), (0, 1, 0.3), (1, 0, 0.3), (1, 1, 1.0), (2, 2, 1.5)];
    let q = vec![-1.0, 0.1, 0.05];
    let p = DelassusProblem::from_triplets(&t, q.clone(), vec![0.8]).unwrap();
    let l = LocalProblem::new(*p.diagonal(0), 0.8, 0.0, 0.0);
    let (lam, case) = solve_contact(&l, [q[0], q[1], q[2]], [0.0; 3]);
    assert_eq!(case, Case::Stick);
    let u = p.velocity_of(0, &[lam]);
    assert!(u.iter().all(|x| x.abs() < 1e-15), "sticks: u = {u:?}");
    let s = PgsSettings { tolerance: 1e-13, ..PgsSettings::default() };
    let exact = Pgs::new(s).solve_delassus(&p, &mut IterationLog::new()).unwrap().impulses[0];
    assert!(close(lam, exact, 1e-12), "{lam:?} vs pgs {exact:?}");
}

/// A point mass on a 30° slope with `μ = 0.4` slides with Coulomb's answer: `u_n = 0` (no
/// gliding, unlike the CCP), `Δv = g dt (sin a − μ cos a)` downhill, in one sweep plus the one
/// that sees no change.
#[test]
fn a_sliding_point_mass_keeps_contact() {
    let (a, mu, mass): (f64, f64, f64) = (30f64.to_radians(), 0.4, 1.5);
    let n = Vector3::new(a.sin(), 0.0, a.cos());
    let downhill = Vector3::new(a.cos(), 0.0, -a.sin());
    let mut w = World::new();
    w.gravity = Vector3::new(0.0, 0.0, -G);
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: n, offset: 0.0 },
        material: Material::rigid(mu),
    });
    w.bodies.push(
        RigidBody::new("ball", Shape::Sphere { radius: 0.2 }, mass, 0.2 * n, Material::rigid(mu))
            .with_dofs(DofMask([true, true, true, false, false, false])),
    );
    let key = ContactKey { a: ColliderId::Body(0), b: ColliderId::Static(0), feature: 0 };
    let cs = ContactSet { contacts: vec![w.contact(key, Vector3::zeros(), n, 0.0)] };
    let p = w.step_problem(&cs, DT, None).unwrap();
    let sol = Raisim::new(RaisimSettings::default()).step(&p, &mut IterationLog::new()).unwrap();
    assert_eq!((sol.status, sol.iterations), (SolveStatus::Solved, 2));
    let v = Vector3::new(sol.v[0], sol.v[1], sol.v[2]);
    let eps = 1e-12 * G * DT;
    assert!(v.dot(&n).abs() <= eps, "u_n = {}", v.dot(&n));
    assert!((v.dot(&downhill) - G * DT * (a.sin() - mu * a.cos())).abs() <= eps);
}

/// Three coupled contacts in Delassus form (the dense SPD `W` of the ccp tests, `μ` ≤ 0.5): the
/// sweep converges to pgs's (exact cone) answer.
#[test]
fn the_sweep_agrees_with_pgs_on_a_coupled_problem() {
    let p = crate::test_problems::coupled_delassus([0.3, 0.5, 0.2]);
    let mine = Raisim::new(RaisimSettings { tolerance: 1e-13, ..RaisimSettings::default() })
        .solve_delassus(&p, &mut IterationLog::new())
        .unwrap();
    assert_eq!(mine.status, SolveStatus::Solved);
    let s = PgsSettings { tolerance: 1e-13, ..PgsSettings::default() };
    let theirs = Pgs::new(s).solve_delassus(&p, &mut IterationLog::new()).unwrap();
    let d = mine
        .impulses
        .iter()
        .flatten()
        .zip(theirs.impulses.iter().flatten())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(d <= 1e-9, "|r_raisim - r_pgs| = {d}");
}

#[test]
fn non_finite_data_is_an_error() {
    let mut w = World::new();
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material: Material::rigid(0.5),
    });
    w.bodies.push(RigidBody::new(
        "ball",
        Shape::Sphere { radius: 0.1 },
        1.0,
        Vector3::new(0.0, 0.0, 0.1),
        Material::rigid(0.5),
    ));
    let key = ContactKey { a: ColliderId::Body(0), b: ColliderId::Static(0), feature: 0 };
    let cs = ContactSet { contacts: vec![w.contact(key, Vector3::zeros(), Vector3::z(), f64::NAN)] };
    let p = w.step_problem(&cs, DT, None).unwrap();
    let e = Raisim::new(RaisimSettings::default()).step(&p, &mut IterationLog::new()).unwrap_err();
    assert!(matches!(e, SolveError::NonFinite { .. }), "{e}");
}

#[test]
fn settings_are_validated_and_the_entry_builds() {
    let e = crate::test_problems::assert_settings_refused::<Raisim>(&[
        ("relaxation", "1.5"),
        ("relaxation", "0"),
        ("tolerance", "0"),
        ("max_iterations", "0"),
    ]);
    assert!(!e.model.is_regularised() && e.capabilities.exact_friction_cone && e.paper.contains("Hwangbo"));
}
