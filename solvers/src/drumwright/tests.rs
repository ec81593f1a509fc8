//! Physics tests of the Drumwright solver on hand-built worlds (oracles of README §10.4).

use super::smd::{is_stable_closed_form, iteration_matrix, spectral_radius, Scheme};
use super::*;
use harness::model::{DofMask, Joint, Material, RigidBody, Shape, World};
use harness::{ContactSet, IterationLog, Settings, Solver};
use nalgebra::Vector3;

/// §9.2: the spectral radii of the paper's Figs. 1–3 cases (m = 1) and the stability verdicts.
/// The radii are closed forms of 2×2 matrices: tolerance 1e-9 relative (the table has 10 digits).
#[test]
fn spectral_radii_and_verdicts_match_the_closed_forms() {
    use Scheme::*;
    let cases = [
        (Explicit, 1e-5, 1e6, 1.0, 1.0000449990, false),
        (Explicit, 1e-5, 1e6, 10.0, 1.0000000000, false),
        (Explicit, 1e-5, 1e6, 2e5, 0.9999499987, true),
        (Explicit, 1e-5, 1e6, 2.1e5, 1.0999523799, false),
        (SemiImplicit, 1e-3, 1e6, 1.0, 0.9995003747, true),
        (SemiImplicit, 1e-3, 1e7, 1.0, 7.8639738536, false),
        (Implicit, 1e-5, 1e6, 0.0, 0.9999500037, true),
        (Implicit, 1e-2, 1e6, 0.0, 0.0995037190, true),
    ];
    for (s, h, k, b, rho, stable) in cases {
        let r = spectral_radius(iteration_matrix(s, 1.0, k, b, h));
        assert!((r - rho).abs() <= 1e-9 * rho, "{s:?} h={h} k={k} b={b}: rho {r} vs {rho}");
        // the marginal explicit case (det A = 1 exactly) is "not stable" in both senses
        assert_eq!(r < 1.0 - 1e-12, stable, "{s:?} h={h} k={k} b={b}");
        assert_eq!(is_stable_closed_form(s, 1.0, k, b, h), stable, "closed form {s:?} h={h} k={k} b={b}");
    }
    // implicit Euler, b = 0: rho = 1/sqrt(1 + h^2 k/m) exactly (L-stable: -> 0 as h -> inf)
    for (h, k) in [(0.1, 1e15), (1e-3, 1e4), (1.0, 1.0)] {
        let r = spectral_radius(iteration_matrix(Implicit, 1.0, k, 0.0, h));
        assert!((r - 1.0 / (1.0 + h * h * k).sqrt()).abs() <= 1e-12);
    }
}

/// A 1-DOF body tethered to the world by an axial spring–damper joint (k, b).
fn tethered(m: f64, k: f64, b: f64, x0: f64, v0: f64) -> World {
    let mut w = World::new();
    w.gravity = Vector3::zeros();
    let mut body =
        RigidBody::new("mass", Shape::Sphere { radius: 0.1 }, m, Vector3::new(0.0, 0.0, x0), Material::rigid(0.0))
            .with_dofs(DofMask::VERTICAL);
    body.linear_velocity.z = v0;
    w.bodies.push(body);
    let j = Joint::axial_at(&w, 0, None, Vector3::new(0.0, 0.0, x0), Vector3::z());
    // anchor the world side at z = 0 so that C = z
    w.joints.push(Joint { anchor_b: Vector3::zeros(), ..j }.with_compliance(k, b));
    w
}

/// §9.3: the constraint solver on one spring is implicit Euler (Eqs. 13–14) exactly: every step
/// maps `(x, v)` by `A_IE` to round-off. Tolerance: 1e-12 relative to the state's size (a 1×1
/// solve and two multiply-adds per step).
#[test]
fn one_body_spring_equals_implicit_euler() {
    let m = 2.0;
    for k in [1e5, 1e10, 1e15] {
        for h in [1e-6, 1e-3, 1.0] {
            let b = 3.0;
            let mut w = tethered(m, k, b, 0.7, -0.2);
            let mut solver = Drumwright::new(DrumwrightSettings::default());
            let a = iteration_matrix(Scheme::Implicit, m, k, b, h);
            let empty = ContactSet::default();
            for step in 0..20 {
                let (x, v) = (w.bodies[0].position.z, w.bodies[0].linear_velocity.z);
                let p = w.step_problem(&empty, h, None).unwrap();
                let sol = solver.step(&p, &mut IterationLog::new()).unwrap();
                let q = p.integrate(&sol.v);
                drop(p);
                w.set_state(&q, &sol.v);
                let (x1, v1) = (w.bodies[0].position.z, w.bodies[0].linear_velocity.z);
                let (xe, ve) = (a[0][0] * x + a[0][1] * v, a[1][0] * x + a[1][1] * v);
                let scale = x.abs() + h * v.abs() + f64::MIN_POSITIVE;
                assert!((x1 - xe).abs() <= 1e-12 * scale, "k={k} h={h} step {step}: x {x1} vs {xe}");
                assert!((v1 - ve).abs() * h <= 1e-12 * scale, "k={k} h={h} step {step}: v {v1} vs {ve}");
                // the joint impulse is the whole momentum change (Eq. 37, no other force)
                let gamma = sol.bilateral[0];
                assert!((gamma - m * (v1 - v)).abs() <= 1e-12 * m * (v1.abs() + v.abs()));
            }
        }
    }
}

/// The absolute-coordinate pendulum of §4.4 (Fig. 4): planar bob (m = 1, I = 0.01), joint at
/// the origin, 1 m from the COM, starting horizontal at rest, joint stiffness 1e15, damping 1.
pub(crate) fn pendulum(k: f64, b: f64) -> World {
    let mut w = World::new();
    w.gravity = Vector3::new(0.0, 0.0, -9.8);
    let mut bob =
        RigidBody::new("bob", Shape::Sphere { radius: 0.05 }, 1.0, Vector3::new(1.0, 0.0, 0.0), Material::rigid(0.0))
            .with_dofs(DofMask::PLANAR_XZ);
    bob.inertia = Vector3::repeat(0.01);
    w.bodies.push(bob);
    let j = Joint::hinge_at(&w, 0, None, Vector3::zeros(), Vector3::y());
    w.joints.push(if k.is_finite() { j.with_compliance(k, b) } else { j });
    w
}

/// Max joint drift `|C(q+)|` over 1 s of the pendulum at step `h`.
fn pendulum_drift(h: f64, settings: DrumwrightSettings, k: f64) -> f64 {
    let sc = harness::Scenario {
        world: pendulum(k, 1.0),
        dt: h,
        steps: (1.0 / h).round() as usize,
        margin: 0.0,
        needs: capabilities(),
    };
    let mut s = Drumwright::new(settings);
    let o = harness::stepper::simulate(
        &sc,
        &mut s,
        harness::stepper::RunOptions { logged_steps: 0, ..Default::default() },
        &mut || {},
    );
    assert!(o.failure.is_none(), "{:?}", o.failure);
    o.trace.metrics.iter().map(|m| m.bilateral_violation_max).fold(0.0, f64::max)
}

/// §9.5: the linearised joint leaves a drift of `h² v²/(2L)` per step, not accumulated. With the
/// peak speed of the compound pendulum `v² = 2 g L · m L²/(I + m L²)` (energy), the expected
/// maximum is `h² g L · m L²/(I + m L²) = 9.703 h²`. Tolerance 5 %: the drift also sees the
/// first-order error in the speed (O(h)) and the steps do not hit the peak exactly.
#[test]
fn bilateral_drift_is_second_order_in_h() {
    let expected = |h: f64| h * h * 9.8 * 1.0 / 1.01;
    let mut prev = None;
    for h in [1e-2, 1e-3] {
        let d = pendulum_drift(h, DrumwrightSettings::default(), 1e15);
        assert!((d - expected(h)).abs() <= 0.05 * expected(h), "h = {h}: drift {d} vs {}", expected(h));
        if let Some((h0, d0)) = prev {
            let (h0, d0): (f64, f64) = (h0, d0);
            let order: f64 = (d0 / d).ln() / (h0 / h).ln();
            assert!((order - 2.0f64).abs() < 0.05, "order {order}");
        }
        prev = Some((h, d));
    }
    // a rigid joint (the K -> inf limit, r = 0) drifts the same to 1 %
    let d = pendulum_drift(1e-2, DrumwrightSettings::default(), f64::INFINITY);
    assert!((d - expected(1e-2)).abs() <= 0.05 * expected(1e-2));
    // the M̂ Ġ v term (Eq. 53, gdot_term = exact) changes the drift but keeps it O(h^2)
    let s = DrumwrightSettings { gdot_term: super::settings::GdotTerm::Exact, ..Default::default() };
    let d = pendulum_drift(1e-2, s, 1e15);
    assert!(d < 3.0 * expected(1e-2), "with the Ġv term: {d}");
}

/// A box resting on the ground with four rigid corner contacts, solved by every form and law:
/// the impulses carry the weight (sum of normal impulses = m g h to the IPM tolerance), and the
/// lifted and reduced forms agree (README §10.4) to 1e-6 relative.
#[test]
fn lifted_and_reduced_forms_agree_on_a_resting_box() {
    let mut w = World::new();
    w.bodies.push(RigidBody::new(
        "box",
        Shape::Box { half_extents: [0.1, 0.05, 0.025] },
        1.0,
        Vector3::new(0.0, 0.0, 0.025),
        Material::compliant(0.5, 1e6, 1e-3),
    ));
    w.statics.push(harness::model::StaticCollider {
        name: "ground".into(),
        shape: harness::model::StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material: Material::compliant(0.5, 1e6, 1e-3),
    });
    w.bodies[0].position.z -= 9.81 / 4e6; // static penetration under k per corner... approximately
    w.bodies[0].linear_velocity = Vector3::new(0.05, 0.0, 0.0);
    let contacts = harness::geometry::detect(&w, 0.01);
    assert_eq!(contacts.len(), 4);
    let h = 0.01;
    let p = w.step_problem(&contacts, h, None).unwrap();
    let run = |s: DrumwrightSettings| {
        s.validate().unwrap();
        Drumwright::new(s).step(&p, &mut IterationLog::new()).unwrap()
    };
    let lifted = run(DrumwrightSettings { tolerance: 1e-10, ..Default::default() });
    let reduced =
        run(DrumwrightSettings { form: super::settings::Form::Reduced, tolerance: 1e-10, ..Default::default() });
    let scale = lifted.impulses.iter().map(|l| l[0]).sum::<f64>();
    for (a, b) in lifted.impulses.iter().zip(&reduced.impulses) {
        for k in 0..3 {
            assert!((a[k] - b[k]).abs() <= 1e-6 * scale, "{a:?} vs {b:?}");
        }
    }
    for (a, b) in lifted.v.iter().zip(&reduced.v) {
        assert!((a - b).abs() <= 1e-6);
    }
    // cone respected by construction
    for l in &lifted.impulses {
        assert!((l[1] * l[1] + l[2] * l[2]).sqrt() <= 0.5 * l[0] * (1.0 + 1e-6) + 1e-12);
    }
}

/// Status and errors: an unusable clarabel result is an error, not a panic; bad settings name
/// their field.
#[test]
fn settings_validate_and_entry_builds() {
    let e = harness::SolverEntry::of::<Drumwright>();
    assert!(e.build(&(e.defaults)()).is_ok());
    for (k, v) in [
        ("zeta_rule", serde_json::json!("x")),
        ("form", serde_json::json!("dense")),
        ("tolerance", serde_json::json!(-1.0)),
        ("tangential_damping_dt", serde_json::json!(-1.0)),
        ("gdot_term", serde_json::json!("on")),
    ] {
        let mut p = (e.defaults)();
        p.0.insert(k.into(), v);
        let err = e.build(&p).err().expect("invalid").to_string();
        assert!(err.contains(k), "{k}: {err}");
    }
    assert!(DrumwrightSettings::paper().validate().is_ok());
}

/// NaN in the data: `Err(NonFinite)`, no panic.
#[test]
fn nan_gives_non_finite_error() {
    let mut w = tethered(1.0, 1e4, 1.0, 0.1, 0.0);
    w.bodies[0].linear_velocity.z = f64::NAN;
    let empty = ContactSet::default();
    let p = w.step_problem(&empty, 0.01, None).unwrap();
    let r = Drumwright::new(DrumwrightSettings::default()).step(&p, &mut IterationLog::new());
    assert!(matches!(r, Err(harness::SolveError::NonFinite { .. })), "{r:?}");
}
