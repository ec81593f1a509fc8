//! Tests of `apgd`: the CCP's closed form on a point mass, agreement with `ccp_admm`, what the
//! acceleration and the restart buy in iterations on a fixed problem, refusals and settings.

use super::*;
use crate::ccp::{CcpAdmm, CcpAdmmSettings};
use api::DelassusProblem;
use harness::model::{DofMask, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{ColliderId, ContactKey, ContactSet, IterationLog, SolveError, SolveStatus, Solver};
use nalgebra::Vector3;

const G: f64 = 9.81;
const DT: f64 = 0.01;
/// Solver tolerance of the tests (relative to the residual at zero).
const TOL: f64 = 1e-12;

fn apgd(s: ApgdSettings) -> Apgd {
    Apgd::new(ApgdSettings { tolerance: TOL, max_iterations: 100_000, ..s })
}

/// A point mass sliding on a 30° slope with `μ = 0.4`: the CCP's answer is the projection
/// `λ = m P_K(−v*)` (closed form in `ccp`'s test of the same name): `u_n = μ u_t`,
/// `u_t = g dt (sin a − μ cos a) / (1 + μ²)`.
#[test]
fn point_mass_on_slope_glides_at_mu_times_slip() {
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
    let ball = RigidBody::new("ball", Shape::Sphere { radius: 0.2 }, mass, 0.2 * n, Material::rigid(mu))
        .with_dofs(DofMask([true, true, true, false, false, false]));
    w.bodies.push(ball);
    let key = ContactKey { a: ColliderId::Body(0), b: ColliderId::Static(0), feature: 0 };
    let cs = ContactSet { contacts: vec![w.contact(key, Vector3::zeros(), n, 0.0)] };
    let p = w.step_problem(&cs, DT, None).unwrap();
    let sol = apgd(ApgdSettings::default()).step(&p, &mut IterationLog::new()).unwrap();
    assert_eq!(sol.status, SolveStatus::Solved);
    let v = Vector3::new(sol.v[0], sol.v[1], sol.v[2]);
    let slip = G * DT * (a.sin() - mu * a.cos()) / (1.0 + mu * mu);
    // the residual tolerance is relative to ‖P_K(−q)‖ ~ g dt: velocities to 1e3 × TOL of g dt
    let eps = 1e3 * TOL * G * DT;
    assert!((v.dot(&downhill) - slip).abs() <= eps, "u_t {} vs {slip}", v.dot(&downhill));
    assert!((v.dot(&n) - mu * slip).abs() <= eps, "u_n {} vs mu u_t {}", v.dot(&n), mu * slip);
}

/// A column of `nc` contacts between unit point masses (contact `i` between masses `i − 1` and
/// `i`, mass 0 the ground): `W = T ⊗ I₃` with `T` the chain's tridiagonal `(−1, 2, −1)` (last
/// diagonal entry 1), condition number `~ nc²`; the bottom contact pushed into the ground and
/// sideways velocities on all of them.
fn chain(nc: usize) -> DelassusProblem {
    let mut t = vec![];
    for i in 0..nc {
        for a in 0..3 {
            t.push((3 * i + a, 3 * i + a, if i + 1 == nc { 1.0 } else { 2.0 }));
            if i + 1 < nc {
                t.push((3 * i + a, 3 * (i + 1) + a, -1.0));
                t.push((3 * (i + 1) + a, 3 * i + a, -1.0));
            }
        }
    }
    let q = (0..nc).flat_map(|i| [if i == 0 { -1.0 } else { -0.01 }, 0.3 / (1.0 + i as f64), -0.2]).collect();
    DelassusProblem::from_triplets(&t, q, vec![0.5; nc]).unwrap()
}

fn iterations(p: &DelassusProblem, s: ApgdSettings) -> usize {
    let sol = apgd(s).solve_delassus(p, &mut IterationLog::new()).unwrap();
    assert_eq!(sol.status, SolveStatus::Solved, "{s:?}", s = sol.iterations);
    sol.iterations
}

/// What each ingredient buys, in iterations to the same residual on the 20-contact chain:
/// Nesterov's momentum (against plain projected gradient with the same step rule) and the
/// restart (against momentum without it). Measured: README §7.
#[test]
fn acceleration_and_restart_cut_the_iterations() {
    let p = chain(20);
    let full = iterations(&p, ApgdSettings::default());
    let no_restart = iterations(&p, ApgdSettings { restart: false, ..ApgdSettings::default() });
    let plain = iterations(&p, ApgdSettings { acceleration: false, ..ApgdSettings::default() });
    eprintln!("apgd chain(20): full {full}, no restart {no_restart}, plain {plain}");
    assert!(2 * full < plain, "acceleration: {full} vs plain projected gradient {plain}");
    assert!(full < no_restart, "restart: {full} vs {no_restart} without");
}

/// APGD and ADMM answer the same CCP: the same impulses on the chain (unique, `W` positive definite).
#[test]
fn agrees_with_ccp_admm() {
    let p = chain(8);
    let a = apgd(ApgdSettings::default()).solve_delassus(&p, &mut IterationLog::new()).unwrap();
    let s = CcpAdmmSettings { tolerance: 1e-12, max_iterations: 100_000, ..CcpAdmmSettings::default() };
    let b = CcpAdmm::new(s).solve_delassus(&p, &mut IterationLog::new()).unwrap();
    let d = a.impulses.iter().flatten().zip(b.impulses.iter().flatten()).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(d <= 1e-7, "|r_apgd - r_admm| = {d}");
}

#[test]
fn a_non_symmetric_w_is_refused_naming_its_asymmetry() {
    let t = vec![(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (0, 1, 0.5)];
    let p = DelassusProblem::from_triplets(&t, vec![-1.0, 0.0, 0.0], vec![0.5]).unwrap();
    let e = Apgd::new(ApgdSettings::default()).solve_delassus(&p, &mut IterationLog::new()).unwrap_err();
    assert!(matches!(&e, SolveError::Unsupported { what } if what.contains("asymmetry 5.000e-1")), "{e}");
}

#[test]
fn settings_are_validated_and_the_entry_builds() {
    let e = crate::test_problems::assert_settings_refused::<Apgd>(&[("tolerance", "0")]);
    assert!(e.model.is_regularised() && e.capabilities.delassus_form && e.paper.contains("Nesterov"));
}
