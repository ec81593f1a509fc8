//! Tests of `staggered`: the stick–slip threshold of a point mass (the disc's radius `μ λ_n`), a
//! box held on a slope only at the fixed point (one pass of the two projections leaves it
//! tipping), a stiff sphere column, agreement with an exact-cone solver, warm start, refusals and
//! settings.

use super::*;
use crate::raisim::{Raisim, RaisimSettings};
use api::DelassusProblem;
use harness::model::{DofMask, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{
    ColliderId, ContactKey, ContactSet, IterationLog, SolveError, SolveStatus, Solver, StepSolution, WarmStart,
};
use nalgebra::Vector3;
use rstest::rstest;

const G: f64 = 9.81;
const DT: f64 = 0.01;
/// Accuracy asserted, relative to the step's impulse or velocity scale. Each projection is solved
/// by the interior point to a duality gap of `qp_tolerance` (1e-10); where the answer lies on a
/// curved boundary (a sliding contact's disc) the objective is flat to second order along it, so
/// the direction is only fixed to `√qp_tolerance` = 1e-5 (README §7); ten times that. The
/// fixed-point tolerance (1e-7) is below it.
const EPS: f64 = 1e-4;

fn settings() -> StaggeredSettings {
    StaggeredSettings { max_iterations: 1000, ..StaggeredSettings::default() }
}

/// A world with gravity `g (sin a, 0, −cos a)` (a slope of angle `a` rotated into the ground's
/// frame) over a static half-space `z ≥ 0` with friction `mu`.
fn tilted(a: f64, mu: f64) -> World {
    let mut w = World::new();
    w.gravity = Vector3::new(G * a.sin(), 0.0, -G * a.cos());
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material: Material::rigid(mu),
    });
    w
}

fn key(a: usize, feature: u64) -> ContactKey {
    ContactKey { a: ColliderId::Body(a), b: ColliderId::Static(0), feature }
}

fn solve(w: &World, cs: &ContactSet, s: StaggeredSettings, warm: Option<&WarmStart>) -> (StepSolution, IterationLog) {
    let p = w.step_problem(cs, DT, warm).expect("problem");
    let mut log = IterationLog::new();
    let sol = Staggered::new(s).step(&p, &mut log).expect("staggered step");
    assert_eq!(sol.impulses.len(), cs.len());
    (sol, log)
}

/// The harness's natural-map residual of the rigid Coulomb NCP (De Saxcé's shift), computed here.
fn natmap_rigid(w: &World, cs: &ContactSet, sol: &StepSolution) -> f64 {
    let p = w.step_problem(cs, DT, None).unwrap();
    let u = p.contact_velocities(&sol.v);
    let mut sq = 0.0;
    for ((c, l), u) in cs.contacts.iter().zip(&sol.impulses).zip(&u) {
        let s = kernels::cone::de_saxce(*u, c.mu);
        let pr = kernels::cone::project([l[0] - s[0], l[1] - s[1], l[2] - s[2]], c.mu);
        sq += (0..3).map(|r| (l[r] - pr[r]).powi(2)).sum::<f64>();
    }
    sq.sqrt()
}

/// A point mass on a 25° slope, `μ` just above and just below `tan a` (±0.02): it sticks
/// (`v+ = 0`, `‖λ_t‖ < μ λ_n`) or slides downhill with `Δv = g dt (sin a − μ cos a)` and `u_n = 0`.
/// A friction disc of radius `λ_n` instead of `μ λ_n` holds it on both sides.
#[rstest]
fn point_mass_sticks_or_slides_at_the_threshold(#[values(0.02, -0.02)] margin: f64) {
    let a = 25f64.to_radians();
    let mu = a.tan() + margin;
    let mass = 1.5;
    let mut w = tilted(a, mu);
    w.bodies.push(
        RigidBody::new("ball", Shape::Sphere { radius: 0.2 }, mass, Vector3::new(0.0, 0.0, 0.2), Material::rigid(mu))
            .with_dofs(DofMask([true, true, true, false, false, false])),
    );
    let cs = ContactSet { contacts: vec![w.contact(key(0, 0), Vector3::zeros(), Vector3::z(), 0.0)] };
    let (sol, _) = solve(&w, &cs, settings(), None);
    assert_eq!(sol.status, SolveStatus::Solved);
    let l = sol.impulses[0];
    let scale = G * DT;
    assert!((l[0] - mass * G * DT * a.cos()).abs() <= EPS * mass * scale, "λ_n {}", l[0]);
    assert!(sol.v[2].abs() <= EPS * scale, "u_n {}", sol.v[2]);
    let slip = if margin > 0.0 { 0.0 } else { G * DT * (a.sin() - mu * a.cos()) };
    assert!((sol.v[0] - slip).abs() <= EPS * scale && sol.v[1].abs() <= EPS * scale, "v+ {:?} vs slip {slip}", sol.v);
    if margin > 0.0 {
        assert!(l[1].hypot(l[2]) < mu * l[0] * (1.0 - EPS), "sticking impulse inside the disc: {l:?}");
    }
    assert!(natmap_rigid(&w, &cs, &sol) <= EPS * mass * scale);
}

/// A box (0.4 × 0.3 × 0.2 m, 2 kg) resting on its four bottom corners on a 20° slope with `μ = 0.6`.
fn box_on_slope() -> (World, ContactSet) {
    let h = [0.2, 0.15, 0.1];
    let mu = 0.6;
    let mut w = tilted(20f64.to_radians(), mu);
    w.bodies.push(RigidBody::new(
        "box",
        Shape::Box { half_extents: h },
        2.0,
        Vector3::new(0.0, 0.0, h[2]),
        Material::rigid(mu),
    ));
    let corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
    let contacts = corners
        .iter()
        .enumerate()
        .map(|(k, (sx, sy))| w.contact(key(0, k as u64), Vector3::new(sx * h[0], sy * h[1], 0.0), Vector3::z(), 0.0))
        .collect();
    (w, ContactSet { contacts })
}

/// The box sticks (`tan 20° = 0.36 < μ`): at the fixed point it stays at rest and the answer solves
/// the rigid NCP. Friction at the base tips the box forward, which only a shifted normal load
/// balances: one pass (frictionless normal projection, then friction with those loads) leaves
/// it moving, and needs the iteration to find the loads.
#[test]
fn a_box_on_a_slope_is_held_only_at_the_fixed_point() {
    let (w, cs) = box_on_slope();
    let (sol, log) = solve(&w, &cs, settings(), None);
    assert_eq!(sol.status, SolveStatus::Solved);
    assert!(sol.iterations > 2, "iterations {}", sol.iterations);
    assert_eq!(log.len(), 2 * sol.iterations);
    let weight = 2.0 * G * DT;
    assert!(sol.v.iter().all(|v| v.abs() <= EPS * G * DT), "v+ {:?}", sol.v);
    // the downhill corners carry more of the load
    assert!(sol.impulses[1][0] > sol.impulses[0][0] * (1.0 + 1e-3), "{:?}", sol.impulses);
    let natmap = natmap_rigid(&w, &cs, &sol);
    assert!(natmap <= EPS * weight, "natmap {natmap}");

    let one = StaggeredSettings { max_iterations: 1, warm_start: false, ..settings() };
    let (first, _) = solve(&w, &cs, one, None);
    assert_eq!(first.status, SolveStatus::MaxIterations);
    let speed = first.v.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let natmap_one = natmap_rigid(&w, &cs, &first);
    eprintln!("box on slope: fixed point in {} iterations, natmap {natmap:.3e}; one pass: |v+| {speed:.3e}, natmap {natmap_one:.3e}", sol.iterations);
    assert!(speed > 1e3 * EPS * G * DT, "one pass |v+|_inf = {speed}");
    assert!(natmap_one > 1e3 * natmap.max(EPS * weight), "one pass natmap {natmap_one}");
}

/// Warm started from the fixed point the iteration stops after one pass; `warm_start = false`
/// ignores the data.
#[test]
fn warm_start_from_the_fixed_point_converges_in_one_iteration() {
    let (w, cs) = box_on_slope();
    let (cold, _) = solve(&w, &cs, settings(), None);
    let warm = WarmStart {
        impulses: cs.contacts.iter().zip(&cold.impulses).map(|(c, l)| (c.key, *l)).collect(),
        velocity: cold.v.clone(),
        bilateral: Default::default(),
    };
    let (hot, _) = solve(&w, &cs, settings(), Some(&warm));
    assert_eq!((hot.status, hot.iterations), (SolveStatus::Solved, 1));
    let scale = 2.0 * G * DT;
    let d = hot
        .impulses
        .iter()
        .flatten()
        .zip(cold.impulses.iter().flatten())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(d <= EPS * scale, "|warm − cold| = {d}");
    let (off, _) = solve(&w, &cs, StaggeredSettings { warm_start: false, ..settings() }, Some(&warm));
    assert_eq!(off.iterations, cold.iterations);
}

/// Two spheres in a column with a 1:1000 mass ratio (the stack on which Gauss–Seidel sweeps slow
/// down): each projection is solved globally, so the normal impulses are the weights they carry
/// after the first pass, and friction (none needed) leaves them so.
#[test]
fn a_stiff_sphere_column_carries_the_weights() {
    let (mb, mt, r) = (0.01, 10.0, 0.1);
    let mut w = tilted(0.0, 0.5);
    w.bodies.push(RigidBody::new(
        "bottom",
        Shape::Sphere { radius: r },
        mb,
        Vector3::new(0.0, 0.0, r),
        Material::rigid(0.5),
    ));
    w.bodies.push(RigidBody::new(
        "top",
        Shape::Sphere { radius: r },
        mt,
        Vector3::new(0.0, 0.0, 3.0 * r),
        Material::rigid(0.5),
    ));
    let ground = w.contact(key(0, 0), Vector3::zeros(), Vector3::z(), 0.0);
    let between = w.contact(
        ContactKey { a: ColliderId::Body(1), b: ColliderId::Body(0), feature: 0 },
        Vector3::new(0.0, 0.0, 2.0 * r),
        Vector3::z(),
        0.0,
    );
    let cs = ContactSet { contacts: vec![ground, between] };
    let (sol, _) = solve(&w, &cs, settings(), None);
    assert_eq!(sol.status, SolveStatus::Solved);
    assert!(sol.iterations <= 2, "iterations {}", sol.iterations);
    let total = (mb + mt) * G * DT;
    assert!((sol.impulses[0][0] - total).abs() <= EPS * total, "ground {:?}", sol.impulses[0]);
    assert!((sol.impulses[1][0] - mt * G * DT).abs() <= EPS * total, "between {:?}", sol.impulses[1]);
    assert!(sol.v.iter().all(|v| v.abs() <= EPS * G * DT), "v+ {:?}", sol.v);
}

/// Three coupled contacts in Delassus form (a dense SPD `W`, `μ` ≤ 0.5, two contacts sliding):
/// the fixed point is the exact-cone answer of `raisim`'s sweep.
#[test]
fn agrees_with_an_exact_cone_solver_on_a_coupled_problem() {
    let p = crate::test_problems::coupled_delassus([0.3, 0.5, 0.2]);
    let mine = Staggered::new(settings()).solve_delassus(&p, &mut IterationLog::new()).unwrap();
    assert_eq!(mine.status, SolveStatus::Solved);
    let s = RaisimSettings { tolerance: 1e-13, ..RaisimSettings::default() };
    let theirs = Raisim::new(s).solve_delassus(&p, &mut IterationLog::new()).unwrap();
    let scale = theirs.impulses.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    let d = mine
        .impulses
        .iter()
        .flatten()
        .zip(theirs.impulses.iter().flatten())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    eprintln!("staggered vs raisim: {} iterations, |Δr| = {d:.3e} of {scale:.3e}", mine.iterations);
    assert!(d <= EPS * scale, "|r_staggered - r_raisim| = {d}");
}

#[test]
fn a_non_symmetric_w_is_refused_naming_its_asymmetry() {
    let t = vec![(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (0, 1, 0.5)];
    let p = DelassusProblem::from_triplets(&t, vec![-1.0, 0.0, 0.0], vec![0.5]).unwrap();
    let e = Staggered::new(settings()).solve_delassus(&p, &mut IterationLog::new()).unwrap_err();
    assert!(matches!(&e, SolveError::Unsupported { what } if what.contains("asymmetry 5.000e-1")), "{e}");
}

#[test]
fn non_finite_data_is_an_error_and_no_contacts_is_free_flight() {
    let mut w = tilted(0.0, 0.5);
    w.bodies.push(RigidBody::new(
        "ball",
        Shape::Sphere { radius: 0.1 },
        1.0,
        Vector3::new(0.0, 0.0, 0.1),
        Material::rigid(0.5),
    ));
    let cs = ContactSet { contacts: vec![w.contact(key(0, 0), Vector3::zeros(), Vector3::z(), f64::NAN)] };
    let p = w.step_problem(&cs, DT, None).unwrap();
    let e = Staggered::new(settings()).step(&p, &mut IterationLog::new()).unwrap_err();
    assert!(matches!(e, SolveError::NonFinite { .. }), "{e}");
    let (free, _) = solve(&w, &ContactSet::default(), settings(), None);
    assert_eq!((free.status, free.iterations), (SolveStatus::Solved, 0));
    assert!((free.v[2] + G * DT).abs() <= 1e-15, "v+ {:?}", free.v);
}

#[test]
fn settings_are_validated_and_the_entry_builds() {
    let e = crate::test_problems::assert_settings_refused::<Staggered>(&[
        ("tolerance", "0"),
        ("max_iterations", "0"),
        ("qp_tolerance", "0"),
        ("qp_max_iter", "0"),
    ]);
    assert!(!e.model.is_regularised() && e.capabilities.exact_friction_cone && e.paper.contains("Kaufman"));
}
