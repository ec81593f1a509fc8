//! Tests of `ccp_pgs` and `ccp_admm` on hand-built worlds and Delassus problems: the CCP's
//! closed form on a point mass (its gliding `u_n = μ |u_t|`), cone complementarity of the answer,
//! agreement of the two methods, settings and refusals.

use super::*;
use harness::model::{DofMask, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{
    ColliderId, Contact, ContactKey, ContactSet, IterationLog, Params, SolveError, SolveStatus, Solver, StepSolution,
};
use nalgebra::Vector3;
use rstest::rstest;

const G: f64 = 9.81;
const DT: f64 = 0.01;
/// Solver tolerance used by the tests.
const TOL: f64 = 1e-11;
/// Relative accuracy asserted: the stopping tests bound the last change by `TOL`, and linear
/// convergence at rate `q` leaves an error of at most `TOL q / (1 − q)`; 1e3 covers `q ≤ 0.999`.
const EPS: f64 = 1e3 * TOL;

#[derive(Debug, Clone, Copy)]
enum Method {
    Pgs,
    Admm,
}

fn solver(m: Method) -> Box<dyn Solver> {
    match m {
        Method::Pgs => Box::new(CcpPgs::new(CcpPgsSettings { tolerance: TOL, ..CcpPgsSettings::default() })),
        Method::Admm => Box::new(CcpAdmm::new(CcpAdmmSettings { tolerance: TOL, ..CcpAdmmSettings::default() })),
    }
}

fn world_with_ground(normal: Vector3<f64>, mu: f64) -> World {
    let mut w = World::new();
    w.gravity = Vector3::new(0.0, 0.0, -G);
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal, offset: 0.0 },
        material: Material::rigid(mu),
    });
    w
}

fn contact(
    w: &World,
    a: ColliderId,
    b: ColliderId,
    point: Vector3<f64>,
    normal: Vector3<f64>,
    feature: u64,
) -> Contact {
    w.contact(ContactKey { a, b, feature }, point, normal, 0.0)
}

fn solve(m: Method, w: &World, cs: &ContactSet) -> (StepSolution, IterationLog) {
    let p = w.step_problem(cs, DT, None).expect("problem");
    let mut log = IterationLog::new();
    let sol = solver(m).step(&p, &mut log).expect("ccp step");
    assert_eq!(sol.impulses.len(), cs.len());
    assert_eq!(log.len(), sol.iterations);
    (sol, log)
}

/// A point mass (a translation-only sphere) released at rest on a slope of angle `a`. `W = I/m`,
/// so the CCP's answer is the projection `λ = m P_K(−v*)` of the free velocity
/// `v* = dt g (−cos a, sin a)` (normal, downhill). Sliding (`μ < tan a`):
/// `λ_n = m g dt (cos a + μ sin a) / (1 + μ²)`, `‖λ_t‖ = μ λ_n`, the slip velocity
/// `u_t = g dt (sin a − μ cos a) / (1 + μ²)` and the separation `u_n = μ u_t` (Coulomb:
/// `u_n = 0`, `u_t = g dt (sin a − μ cos a)`). Sticking, the CCP is Coulomb's answer.
#[rstest]
fn point_mass_on_slope_glides_at_mu_times_slip(
    #[values(Method::Pgs, Method::Admm)] m: Method,
    #[values(0.8, 0.4)] mu: f64,
) {
    let a: f64 = 30f64.to_radians();
    let mass = 1.5;
    let n = Vector3::new(a.sin(), 0.0, a.cos());
    let downhill = Vector3::new(a.cos(), 0.0, -a.sin());
    let mut w = world_with_ground(n, mu);
    let ball = RigidBody::new("ball", Shape::Sphere { radius: 0.2 }, mass, 0.2 * n, Material::rigid(mu))
        .with_dofs(DofMask([true, true, true, false, false, false]));
    w.bodies.push(ball);
    let cs =
        ContactSet { contacts: vec![contact(&w, ColliderId::Body(0), ColliderId::Static(0), Vector3::zeros(), n, 0)] };
    let (sol, _) = solve(m, &w, &cs);
    assert_eq!(sol.status, SolveStatus::Solved, "{m:?}");
    let l = sol.impulses[0];
    let v = Vector3::new(sol.v[0], sol.v[1], sol.v[2]);
    let (un, ut) = (v.dot(&n), v.dot(&downhill));
    let scale = mass * G * DT;
    if mu >= a.tan() {
        assert!((l[0] - scale * a.cos()).abs() <= EPS * scale, "sticks: lambda_n {}", l[0]);
        assert!(v.norm() <= EPS * G * DT, "sticks: v+ = {v:?}");
    } else {
        let k = 1.0 + mu * mu;
        let ln = scale * (a.cos() + mu * a.sin()) / k;
        assert!((l[0] - ln).abs() <= EPS * scale, "{m:?}: lambda_n {} vs {ln}", l[0]);
        assert!((l[1].hypot(l[2]) - mu * l[0]).abs() <= EPS * scale, "on the cone boundary");
        let slip = G * DT * (a.sin() - mu * a.cos()) / k;
        assert!((ut - slip).abs() <= EPS * G * DT, "{m:?}: u_t {ut} vs {slip}");
        // the gliding: the relaxed law lifts the mass off the plane at mu |u_t|
        assert!((un - mu * ut).abs() <= EPS * G * DT, "{m:?}: u_n {un} vs mu u_t {}", mu * ut);
        assert!(un > 0.1 * G * DT * mu * (a.sin() - mu * a.cos()), "separates");
    }
}

/// A box on the ground on its four bottom corners with a sideways and a spinning velocity: a
/// coupled, redundant 12-unknown CCP. The answer must satisfy the CCP itself, checked here from
/// the returned velocity: `λ_i ∈ K_μ`, `u_i = J_i v+ ∈ K_μ*` and `λ_i · u_i = 0` (scales: the
/// weight's impulse and `g dt`); and both methods must give the same velocity (unique: the
/// CCP's objective is strictly convex in `v`).
fn sliding_box() -> (World, ContactSet) {
    let mu = 0.3;
    let mut w = world_with_ground(Vector3::z(), mu);
    let h = 0.1;
    let mut b =
        RigidBody::new("box", Shape::Box { half_extents: [h; 3] }, 2.0, Vector3::new(0.0, 0.0, h), Material::rigid(mu));
    b.linear_velocity = Vector3::new(0.3, 0.1, 0.0);
    b.angular_velocity = Vector3::new(0.0, 0.0, 2.0);
    w.bodies.push(b);
    let contacts = (0..4)
        .map(|k| {
            let p = Vector3::new(if k & 1 == 0 { -h } else { h }, if k & 2 == 0 { -h } else { h }, 0.0);
            contact(&w, ColliderId::Body(0), ColliderId::Static(0), p, Vector3::z(), k)
        })
        .collect();
    (w, ContactSet { contacts })
}

#[rstest]
fn the_answer_satisfies_the_cone_complementarity(#[values(Method::Pgs, Method::Admm)] m: Method) {
    let (w, cs) = sliding_box();
    let (sol, log) = solve(m, &w, &cs);
    assert_eq!(sol.status, SolveStatus::Solved, "{m:?}");
    let p = w.step_problem(&cs, DT, None).unwrap();
    let u = p.contact_velocities(&sol.v);
    let (imp, vel) = (2.0 * G * DT, G * DT);
    for (l, u) in sol.impulses.iter().zip(&u) {
        assert!(kernels::cone::violation(*l, 0.3) <= EPS * imp, "{m:?}: lambda {l:?} outside K");
        assert!(kernels::cone::violation(*u, 1.0 / 0.3) <= 1e-6 * vel, "{m:?}: u {u:?} outside K*");
        let c = l[0] * u[0] + l[1] * u[1] + l[2] * u[2];
        assert!(c.abs() <= 1e-6 * imp * vel, "{m:?}: lambda . u = {c}");
    }
    // sliding: some contact glides (u_n > 0) — the relaxation, not Coulomb's law
    assert!(u.iter().any(|u| u[0] > 1e-3 * vel), "{m:?}: {u:?}");
    let own = *log.column(CCP_RESIDUAL).unwrap().last().unwrap();
    assert!(own <= 1e-6 * imp, "{m:?}: own residual {own}");
}

#[test]
fn pgs_and_admm_agree_on_the_velocity() {
    let (w, cs) = sliding_box();
    let (a, _) = solve(Method::Pgs, &w, &cs);
    let (b, _) = solve(Method::Admm, &w, &cs);
    let d = a.v.iter().zip(&b.v).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(d <= 1e-6 * G * DT, "|v_pgs - v_admm| = {d}");
}

/// Three contacts in Delassus form with a symmetric positive-definite, coupled `W`: both methods
/// reach the same impulses (unique for a positive-definite `W`), and the answer satisfies the CCP.
#[test]
fn delassus_form_pgs_and_admm_agree() {
    let p = crate::test_problems::coupled_delassus([0.3, 0.5, 0.8]);
    let mut sols = vec![];
    for m in [Method::Pgs, Method::Admm] {
        let s = solver(m).solve_delassus(&p, &mut IterationLog::new()).unwrap();
        assert_eq!(s.status, SolveStatus::Solved, "{m:?}");
        let mut u = vec![];
        p.velocities(&s.impulses, &mut u);
        for (i, (l, u)) in s.impulses.iter().zip(&u).enumerate() {
            let r = kernels::contact_local::ccp_natmap(*l, *u, p.mu()[i]);
            assert!(r.iter().all(|x| x.abs() <= 1e-7), "{m:?} contact {i}: {r:?}");
        }
        sols.push(s.impulses);
    }
    let d = sols[0].iter().flatten().zip(sols[1].iter().flatten()).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(d <= 1e-6, "|r_pgs - r_admm| = {d}");
}

/// ContactBench's spectral `ρ` rule earns its keep: on the box, a fixed `ρ` takes more iterations.
#[test]
fn spectral_rho_update_beats_a_fixed_rho() {
    let (w, cs) = sliding_box();
    let p = w.step_problem(&cs, DT, None).unwrap();
    let run = |rho_update| {
        let s = CcpAdmmSettings { tolerance: TOL, rho_update, ..CcpAdmmSettings::default() };
        CcpAdmm::new(s).step(&p, &mut IterationLog::new()).unwrap().iterations
    };
    let (spectral, fixed) = (run(RhoUpdate::Spectral), run(RhoUpdate::Fixed));
    assert!(spectral < fixed, "spectral {spectral} vs fixed {fixed} iterations");
}

#[rstest]
fn non_finite_data_is_an_error(#[values(Method::Pgs, Method::Admm)] m: Method) {
    let mut w = world_with_ground(Vector3::z(), 0.5);
    w.bodies.push(RigidBody::new(
        "ball",
        Shape::Sphere { radius: 0.1 },
        1.0,
        Vector3::new(0.0, 0.0, 0.1),
        Material::rigid(0.5),
    ));
    let cs = ContactSet {
        contacts: vec![w.contact(
            ContactKey { a: ColliderId::Body(0), b: ColliderId::Static(0), feature: 0 },
            Vector3::zeros(),
            Vector3::z(),
            f64::NAN,
        )],
    };
    let p = w.step_problem(&cs, DT, None).unwrap();
    let e = solver(m).step(&p, &mut IterationLog::new()).unwrap_err();
    assert!(matches!(e, SolveError::NonFinite { .. }), "{e}");
}

#[rstest]
#[case::pgs_iterations("ccp_pgs", "max_iterations", "0")]
#[case::pgs_tolerance("ccp_pgs", "tolerance", "0")]
#[case::pgs_local("ccp_pgs", "local_iterations", "0")]
#[case::admm_rho("ccp_admm", "rho_prox", "0")]
#[case::admm_alpha("ccp_admm", "over_relaxation", "2")]
#[case::admm_rule("ccp_admm", "rho_update", "osqp")]
fn settings_validation_names_the_field(#[case] solver: &str, #[case] key: &str, #[case] value: &str) {
    let mut p = if solver == "ccp_pgs" {
        Params::from_settings(&CcpPgsSettings::default())
    } else {
        Params::from_settings(&CcpAdmmSettings::default())
    };
    p.set(key, value, solver).unwrap();
    let r = if solver == "ccp_pgs" {
        p.decode::<CcpPgsSettings>(solver).map(|_| ())
    } else {
        p.decode::<CcpAdmmSettings>(solver).map(|_| ())
    };
    match r {
        Err(harness::ParamError::BadValue { key: k, .. }) => assert_eq!(k, key),
        other => panic!("expected a BadValue for {key}, got {other:?}"),
    }
}

#[test]
fn entries_build_from_defaults_and_declare_the_ccp_model() {
    for e in [harness::SolverEntry::of::<CcpPgs>(), harness::SolverEntry::of::<CcpAdmm>()] {
        assert!(e.capabilities.delassus_form && e.capabilities.rigid_contact);
        assert!(e.model.is_regularised(), "{}: the CCP is graded with its own residual beside the rigid one", e.name);
        e.build(&(e.defaults)()).expect("defaults are valid");
        assert!(e.paper.contains("Anitescu"));
    }
}
