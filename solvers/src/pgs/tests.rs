//! Physics tests of PGS on hand-built worlds (no collision detection): each asserts an analytic
//! impulse or velocity, with tolerances tied to the solver's `tolerance`.

use super::*;
use harness::model::{ContactCompliance, DofMask, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{
    ColliderId, Contact, ContactKey, ContactSet, IterationLog, Params, Settings, SolveError, SolveStatus, Solver,
    StepSolution, WarmStart,
};
use nalgebra::Vector3;
use rstest::rstest;

const G: f64 = 9.81;
const DT: f64 = 0.01;
/// Solver tolerance used by the tests.
const TOL: f64 = 1e-10;
/// Relative accuracy asserted on impulses: the stopping test bounds the last change by `TOL`, and
/// linear convergence at rate `q` leaves an error of at most `TOL q / (1 - q)`; 1e3 covers `q ≤ 0.999`.
const EPS: f64 = 1e3 * TOL;

fn settings(local: Local) -> PgsSettings {
    PgsSettings { tolerance: TOL, local, ..PgsSettings::default() }
}

/// A world with gravity `-G z` and a static half-space of unit normal `normal` through the origin.
fn world_with_ground(normal: Vector3<f64>, material: Material) -> World {
    let mut w = World::new();
    w.gravity = Vector3::new(0.0, 0.0, -G);
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal, offset: 0.0 },
        material,
    });
    w
}

fn sphere(name: &str, mass: f64, radius: f64, center: Vector3<f64>, material: Material) -> RigidBody {
    RigidBody::new(name, Shape::Sphere { radius }, mass, center, material)
}

/// Contact between collider `a` and `b` (normal from `b` to `a`).
fn contact(w: &World, a: ColliderId, b: ColliderId, point: Vector3<f64>, normal: Vector3<f64>, gap: f64) -> Contact {
    w.contact(ContactKey { a, b, feature: 0 }, point, normal, gap)
}

fn solve(w: &World, cs: &ContactSet, s: PgsSettings, warm: Option<&WarmStart>) -> (StepSolution, IterationLog) {
    let p = w.step_problem(cs, DT, warm).expect("problem");
    let mut log = IterationLog::new();
    let sol = Pgs::new(s).step(&p, &mut log).expect("pgs step");
    assert_eq!(sol.impulses.len(), cs.len());
    assert_eq!(log.len(), sol.iterations);
    (sol, log)
}

/// The harness's natural-map residual (rigid reference law) computed here independently.
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

fn norm2(x: f64, y: f64) -> f64 {
    x.hypot(y)
}

#[rstest]
fn resting_sphere_carries_its_weight(#[values(Local::Split, Local::Cone)] local: Local) {
    let (m, r) = (2.0, 0.1);
    let mut w = world_with_ground(Vector3::z(), Material::rigid(0.5));
    w.bodies.push(sphere("ball", m, r, Vector3::new(0.0, 0.0, r), Material::rigid(0.5)));
    let cs = ContactSet {
        contacts: vec![contact(&w, ColliderId::Body(0), ColliderId::Static(0), Vector3::zeros(), Vector3::z(), 0.0)],
    };
    let (sol, log) = solve(&w, &cs, settings(local), None);
    assert_eq!(sol.status, SolveStatus::Solved);
    let l = sol.impulses[0];
    let weight = m * G * DT;
    assert!((l[0] - weight).abs() <= EPS * weight, "lambda_n {} vs m g dt {weight}", l[0]);
    assert!(norm2(l[1], l[2]) <= EPS * weight, "lambda_t {l:?}");
    assert!(sol.v.iter().all(|v| v.abs() <= EPS * G * DT), "v+ {:?}", sol.v);
    // the logged residual is the harness's and vanishes at the solution
    let logged = *log.column("natmap_abs_l2").unwrap().last().unwrap();
    assert!((logged - natmap_rigid(&w, &cs, &sol)).abs() <= 1e-15 + 1e-9 * logged);
    assert!(logged <= EPS * weight);
}

/// A translation-only sphere (a point mass) released at rest on a slope of angle `a`: it sticks iff
/// `mu >= tan a`; sliding, `||lambda_t|| = mu lambda_n` and the velocity along the slope is
/// `dt g (sin a - mu cos a)`.
#[rstest]
fn point_mass_on_slope_sticks_or_slides(
    #[values(Local::Split, Local::Cone)] local: Local,
    #[values(0.8, 0.4)] mu: f64,
    #[values(0.0, 1.2)] ground_heading: f64,
) {
    let a: f64 = 30f64.to_radians(); // tan a = 0.577
    let (m, r) = (1.5, 0.2);
    // slope normal tilted by `a` from z, towards the heading (so t1, t2 are not aligned with it)
    let (ch, sh) = (ground_heading.cos(), ground_heading.sin());
    let n = Vector3::new(a.sin() * ch, a.sin() * sh, a.cos());
    let downhill = Vector3::new(a.cos() * ch, a.cos() * sh, -a.sin());
    let mut w = world_with_ground(n, Material::rigid(mu));
    let ball =
        sphere("ball", m, r, r * n, Material::rigid(mu)).with_dofs(DofMask([true, true, true, false, false, false]));
    w.bodies.push(ball);
    let cs = ContactSet {
        contacts: vec![contact(&w, ColliderId::Body(0), ColliderId::Static(0), Vector3::zeros(), n, 0.0)],
    };
    let (sol, _) = solve(&w, &cs, settings(local), None);
    assert_eq!(sol.status, SolveStatus::Solved, "{local:?} mu {mu}");
    let l = sol.impulses[0];
    let ln = m * G * DT * a.cos();
    let lt = norm2(l[1], l[2]);
    assert!((l[0] - ln).abs() <= EPS * ln, "lambda_n {} vs {ln}", l[0]);
    let v = Vector3::new(sol.v[0], sol.v[1], sol.v[2]);
    assert!(v.dot(&n).abs() <= EPS * G * DT, "normal velocity {}", v.dot(&n));
    if mu >= a.tan() {
        assert!(v.norm() <= EPS * G * DT, "sticks: v+ = {v:?}");
        assert!(lt < mu * l[0], "stick is strictly inside the cone");
        assert!((lt - m * G * DT * a.sin()).abs() <= EPS * ln);
    } else {
        assert!((lt - mu * l[0]).abs() <= EPS * ln, "slides on the cone boundary");
        let expected = DT * G * (a.sin() - mu * a.cos());
        assert!((v.dot(&downhill) - expected).abs() <= EPS * G * DT, "{} vs {expected}", v.dot(&downhill));
        assert!((v - v.dot(&downhill) * downhill).norm() <= EPS * G * DT, "slides straight downhill");
    }
    assert!(natmap_rigid(&w, &cs, &sol) <= EPS * ln);
}

/// A free solid sphere on a slope rolls without slipping iff `mu >= (2/7) tan a`, with
/// `lambda_t = (2/7) m g dt sin a` and centre velocity `(5/7) g dt sin a`; otherwise it slides
/// with centre velocity `g dt (sin a - mu cos a)`.
#[rstest]
fn free_sphere_on_slope_rolls_or_slides(
    #[values(Local::Split, Local::Cone)] local: Local,
    #[values(0.3, 0.1)] mu: f64,
) {
    let a: f64 = 30f64.to_radians(); // (2/7) tan a = 0.165
    let (m, r) = (1.0, 0.1);
    let n = Vector3::new(a.sin(), 0.0, a.cos());
    let downhill = Vector3::new(a.cos(), 0.0, -a.sin());
    let mut w = world_with_ground(n, Material::rigid(mu));
    w.bodies.push(sphere("ball", m, r, r * n, Material::rigid(mu)));
    let cs = ContactSet {
        contacts: vec![contact(&w, ColliderId::Body(0), ColliderId::Static(0), Vector3::zeros(), n, 0.0)],
    };
    let (sol, _) = solve(&w, &cs, settings(local), None);
    assert_eq!(sol.status, SolveStatus::Solved);
    let l = sol.impulses[0];
    let ln = m * G * DT * a.cos();
    let lt = norm2(l[1], l[2]);
    let v = Vector3::new(sol.v[0], sol.v[1], sol.v[2]);
    let along = v.dot(&downhill);
    if mu >= 2.0 / 7.0 * a.tan() {
        assert!((lt - 2.0 / 7.0 * m * G * DT * a.sin()).abs() <= EPS * ln, "rolling friction {lt}");
        assert!((along - 5.0 / 7.0 * G * DT * a.sin()).abs() <= EPS * G * DT, "rolling speed {along}");
        let p = w.step_problem(&cs, DT, None).unwrap();
        let u = p.contact_velocities(&sol.v)[0];
        assert!(norm2(u[1], u[2]) <= EPS * G * DT, "no slip at the contact point: {u:?}");
    } else {
        assert!((lt - mu * l[0]).abs() <= EPS * ln);
        assert!((along - G * DT * (a.sin() - mu * a.cos())).abs() <= EPS * G * DT, "sliding speed {along}");
    }
}

/// Two spheres in a column on the ground; returns the world and contacts (ground contact first).
fn column(m_bottom: f64, m_top: f64) -> (World, ContactSet) {
    let r = 0.1;
    let mut w = world_with_ground(Vector3::z(), Material::rigid(0.5));
    w.bodies.push(sphere("bottom", m_bottom, r, Vector3::new(0.0, 0.0, r), Material::rigid(0.5)));
    w.bodies.push(sphere("top", m_top, r, Vector3::new(0.0, 0.0, 3.0 * r), Material::rigid(0.5)));
    let ground = contact(&w, ColliderId::Body(0), ColliderId::Static(0), Vector3::zeros(), Vector3::z(), 0.0);
    let between =
        contact(&w, ColliderId::Body(1), ColliderId::Body(0), Vector3::new(0.0, 0.0, 2.0 * r), Vector3::z(), 0.0);
    (w, ContactSet { contacts: vec![ground, between] })
}

#[rstest]
fn sphere_column_transmits_the_weight(
    #[values(Local::Split, Local::Cone)] local: Local,
    #[values(1.0, 1.3)] omega: f64,
    #[values(SweepOrder::Forward, SweepOrder::Symmetric, SweepOrder::Shuffled)] order: SweepOrder,
    // (anderson_memory, nncg): plain, Anderson, NNCG
    #[values((0, false), (5, false), (0, true))] acceleration: (usize, bool),
) {
    let (mb, mt) = (1.0, 3.0);
    let (w, cs) = column(mb, mt);
    let (anderson_memory, nncg) = acceleration;
    // `cone` needs ~450 sweeps here at TOL = 1e-10 (README: slow on stacks); give it room.
    let s = PgsSettings { omega, order, anderson_memory, nncg, max_iterations: 5000, ..settings(local) };
    let (sol, _) = solve(&w, &cs, s, None);
    assert_eq!(sol.status, SolveStatus::Solved);
    let (lg, lb) = (sol.impulses[0], sol.impulses[1]);
    let total = (mb + mt) * G * DT;
    assert!((lg[0] - total).abs() <= EPS * total, "ground {} vs {total}", lg[0]);
    assert!((lb[0] - mt * G * DT).abs() <= EPS * total, "between {} vs {}", lb[0], mt * G * DT);
    assert!(sol.v.iter().all(|v| v.abs() <= EPS * G * DT), "v+ {:?}", sol.v);
    assert!(natmap_rigid(&w, &cs, &sol) <= EPS * total);
}

/// Solves the two-sphere column with a 1:100 mass ratio (the stack that makes Gauss–Seidel slow:
/// its rate approaches 1 as the ratio grows) with plain PGS and with `accelerated`, asserts that
/// both stop with `Solved` at the same impulses (the unique solution), and returns the sweeps
/// `(plain, accelerated)`.
///
/// Each run stops within `TOL q / (1 − q)` (relative) of the unique solution. Plain PGS took N
/// sweeps to shrink its change from ~|λ| to TOL |λ|, so q ≈ TOL^(1/N) and 1/(1 − q) ≈
/// N / ln(1/TOL); a factor 2 for the accelerated run's own error.
fn heavy_column_plain_and_accelerated(accelerated: PgsSettings) -> (usize, usize) {
    let (mb, mt) = (1.0, 100.0);
    let (w, cs) = column(mb, mt);
    let s = PgsSettings { max_iterations: 100_000, ..settings(Local::Split) };
    let (plain, _) = solve(&w, &cs, s.clone(), None);
    let (fast, _) = solve(&w, &cs, PgsSettings { max_iterations: s.max_iterations, ..accelerated }, None);
    assert_eq!((plain.status, fast.status), (SolveStatus::Solved, SolveStatus::Solved));
    let total = (mb + mt) * G * DT;
    let eps = 2.0 * TOL * total * plain.iterations as f64 / (1.0 / TOL).ln();
    for (a, b) in fast.impulses.iter().zip(&plain.impulses) {
        assert!((0..3).all(|r| (a[r] - b[r]).abs() <= eps), "{a:?} vs {b:?}");
    }
    assert!((fast.impulses[0][0] - total).abs() <= eps, "ground {} vs {total}", fast.impulses[0][0]);
    (plain.iterations, fast.iterations)
}

/// Anderson acceleration changes the path, not the fixed point: on the 1:100 column the
/// accelerated sweeps reach the plain impulses in under half the sweeps (one history column
/// removes the sweep's eigenvalue near 1, README).
#[rstest]
fn anderson_acceleration_reaches_the_plain_fixed_point_in_fewer_sweeps(#[values(2, 5)] memory: usize) {
    let (plain, fast) =
        heavy_column_plain_and_accelerated(PgsSettings { anderson_memory: memory, ..settings(Local::Split) });
    assert!(2 * fast < plain, "Anderson({memory}) took {fast} sweeps, plain PGS {plain}");
}

/// NNCG (Silcowitz, Niebe & Erleben 2010) changes the path, not the fixed point: on the 1:100
/// column it reaches the plain impulses in fewer sweeps, with every sweep order (symmetric: one
/// forward-plus-backward pair per update).
#[rstest]
fn nncg_reaches_the_plain_fixed_point_in_fewer_sweeps(
    #[values(SweepOrder::Forward, SweepOrder::Symmetric, SweepOrder::Shuffled)] order: SweepOrder,
) {
    let s = settings(Local::Split);
    let (plain, fast) = heavy_column_plain_and_accelerated(PgsSettings { nncg: true, order, ..s });
    assert!(fast < plain, "NNCG ({order:?}) took {fast} sweeps, plain PGS (forward) {plain}");
}

/// Islands (`islands = true`) sweep apart. A 1:100 column stands next to a lone resting sphere
/// whose contact comes first in the problem. The lone sphere's island stops after 2 sweeps (its
/// exact local solve, then a sweep that changes nothing). The column's island takes exactly the
/// sweeps of the column solved alone and returns its impulses and velocities bit for bit (the
/// lone sphere's DOFs are not coupled to it). The step reports the larger sweep count, and its
/// log holds every island's sweeps. Without islands every sweep visits all three contacts, and
/// the impulses agree with the islands' within the bound of `heavy_column_plain_and_accelerated`.
#[test]
fn islands_sweep_apart_and_each_reaches_its_own_solution() {
    let (mb, mt, m, r) = (1.0, 100.0, 2.0, 0.1);
    let (alone_w, column_cs) = column(mb, mt);
    let mut w = alone_w.clone();
    w.bodies.push(sphere("lone", m, r, Vector3::new(1.0, 0.0, r), Material::rigid(0.5)));
    let lone = contact(&w, ColliderId::Body(2), ColliderId::Static(0), Vector3::new(1.0, 0.0, 0.0), Vector3::z(), 0.0);
    let cs = ContactSet { contacts: [vec![lone], column_cs.contacts.clone()].concat() };
    let s = PgsSettings { max_iterations: 100_000, ..settings(Local::Split) };

    let (alone, _) = solve(&alone_w, &column_cs, s.clone(), None);
    let p = w.step_problem(&cs, DT, None).unwrap();
    let mut log = IterationLog::new();
    let apart = Pgs::new(PgsSettings { islands: true, ..s.clone() }).step(&p, &mut log).unwrap();
    let (together, _) = solve(&w, &cs, s, None);

    assert_eq!(
        (alone.status, apart.status, together.status),
        (SolveStatus::Solved, SolveStatus::Solved, SolveStatus::Solved)
    );
    assert!(alone.iterations > 100, "the 1:100 column is the slow island ({} sweeps)", alone.iterations);
    assert_eq!(apart.iterations, alone.iterations);
    assert_eq!(log.len(), alone.iterations + 2, "lone island: 2 sweeps");
    assert_eq!(apart.impulses[1..], alone.impulses[..]);
    assert_eq!(apart.v[..12], alone.v[..]);
    let weight = m * G * DT;
    assert!((apart.impulses[0][0] - weight).abs() <= EPS * weight, "lone {:?}", apart.impulses[0]);
    assert!(apart.v[12..].iter().all(|v| v.abs() <= EPS * G * DT), "lone v+ {:?}", &apart.v[12..]);
    let total = (mb + mt) * G * DT;
    let eps = 2.0 * TOL * total * alone.iterations as f64 / (1.0 / TOL).ln();
    for (a, b) in apart.impulses.iter().zip(&together.impulses) {
        assert!((0..3).all(|k| (a[k] - b[k]).abs() <= eps), "{a:?} vs {b:?}");
    }
}

#[test]
fn one_sweep_on_the_column_reports_max_iterations() {
    let (w, cs) = column(1.0, 3.0);
    let (sol, log) = solve(&w, &cs, PgsSettings { max_iterations: 1, ..settings(Local::Split) }, None);
    assert_eq!((sol.status, sol.iterations), (SolveStatus::MaxIterations, 1));
    assert!(log.column("rel_change_linf").unwrap()[0] >= TOL);
    // The iterate is usable: feasible and consistent with v = v* + M^-1 J^T lambda.
    assert!(sol.impulses.iter().all(|l| l[0] >= 0.0 && norm2(l[1], l[2]) <= 0.5 * l[0]));
}

#[rstest]
fn warm_start_from_the_solution_converges_in_one_sweep(#[values(Local::Split, Local::Cone)] local: Local) {
    let (w, cs) = column(1.0, 3.0);
    let (cold, _) = solve(&w, &cs, settings(local), None);
    assert!(cold.iterations > 2, "cold start needs several sweeps, took {}", cold.iterations);
    let warm = WarmStart {
        impulses: cs.contacts.iter().zip(&cold.impulses).map(|(c, l)| (c.key, *l)).collect(),
        velocity: cold.v.clone(),
        bilateral: Default::default(),
    };
    let (hot, _) = solve(&w, &cs, settings(local), Some(&warm));
    assert_eq!((hot.status, hot.iterations), (SolveStatus::Solved, 1));
    for (a, b) in hot.impulses.iter().zip(&cold.impulses) {
        assert!((0..3).all(|r| (a[r] - b[r]).abs() <= EPS * cold.impulses[0][0]));
    }
    // warm_start = false ignores the data
    let (off, _) = solve(&w, &cs, PgsSettings { warm_start: false, ..settings(local) }, Some(&warm));
    assert_eq!(off.iterations, cold.iterations);
}

/// Compliant contact (Castro et al. §V-A): at the solution
/// `lambda_n = dt k (-phi0 - (dt + tau_d) u_n)_+` with `u_n = J v+`; for a sphere (`W_nn = 1/m`)
/// starting at rest this gives `lambda_n = dt k (-phi0 - tau u*_n) / (1 + dt k tau / m)`.
#[rstest]
fn compliant_contact_follows_the_kelvin_voigt_law(#[values(Local::Split, Local::Cone)] local: Local) {
    let (m, r, k, tau_d, depth) = (2.0, 0.1, 1e4, 0.02, 1e-3);
    let mat = Material::compliant(0.5, k, tau_d);
    let mut w = world_with_ground(Vector3::z(), mat);
    w.bodies.push(sphere("ball", m, r, Vector3::new(0.0, 0.0, r - depth), mat));
    let point = Vector3::new(0.0, 0.0, -0.5 * depth);
    let cs = ContactSet {
        contacts: vec![contact(&w, ColliderId::Body(0), ColliderId::Static(0), point, Vector3::z(), -depth)],
    };
    assert!(matches!(cs.contacts[0].compliance, ContactCompliance::Compliant { .. }));
    let (sol, log) = solve(&w, &cs, settings(local), None);
    assert_eq!(sol.status, SolveStatus::Solved);
    let tau = DT + tau_d;
    let un = sol.v[2]; // J_n v = v_z for the bottom point of a sphere
    let ln = sol.impulses[0][0];
    let law = DT * k * (depth - tau * un);
    assert!(ln > 0.0 && (ln - law).abs() <= EPS * law, "lambda_n {ln} vs law {law}");
    let closed = DT * k * (depth + tau * G * DT) / (1.0 + DT * k * tau / m);
    assert!((ln - closed).abs() <= EPS * closed, "lambda_n {ln} vs closed form {closed}");
    assert!(*log.column("natmap_model_abs_l2").unwrap().last().unwrap() <= EPS * ln);
}

/// An off-centre contact (a box corner, sliding diagonally) couples all three directions and makes
/// the tangential block anisotropic; both local solvers must reach the same Coulomb solution.
#[rstest]
fn box_corner_split_and_cone_agree(#[values(0.3, 1.0)] mu: f64) {
    let h = [0.3, 0.2, 0.1];
    let mut w = world_with_ground(Vector3::z(), Material::rigid(mu));
    let mut b =
        RigidBody::new("box", Shape::Box { half_extents: h }, 2.0, Vector3::new(0.0, 0.0, h[2]), Material::rigid(mu));
    b.linear_velocity = Vector3::new(0.3, 0.1, -0.5);
    b.angular_velocity = Vector3::new(0.2, -0.4, 1.0);
    w.bodies.push(b);
    let corner = Vector3::new(h[0], -h[1], 0.0);
    let cs = ContactSet {
        contacts: vec![contact(&w, ColliderId::Body(0), ColliderId::Static(0), corner, Vector3::z(), 0.0)],
    };
    let (split, _) = solve(&w, &cs, settings(Local::Split), None);
    let (cone, _) = solve(&w, &cs, settings(Local::Cone), None);
    assert_eq!((split.status, cone.status), (SolveStatus::Solved, SolveStatus::Solved));
    let scale = split.impulses[0][0];
    assert!(scale > 0.0);
    for r in 0..3 {
        assert!(
            (split.impulses[0][r] - cone.impulses[0][r]).abs() <= EPS * scale,
            "{:?} vs {:?}",
            split.impulses,
            cone.impulses
        );
    }
    for sol in [&split, &cone] {
        assert!(natmap_rigid(&w, &cs, sol) <= EPS * scale);
    }
}

#[test]
fn separating_contact_gets_no_impulse_and_no_contacts_is_free_flight() {
    // gap 1 cm, falling at 0.1 m/s: the contact stays open, v+ = v*
    let mut w = world_with_ground(Vector3::z(), Material::rigid(0.5));
    let mut ball = sphere("ball", 1.0, 0.1, Vector3::new(0.0, 0.0, 0.11), Material::rigid(0.5));
    ball.linear_velocity = Vector3::new(0.0, 0.0, -0.1);
    w.bodies.push(ball);
    let cs = ContactSet {
        contacts: vec![contact(
            &w,
            ColliderId::Body(0),
            ColliderId::Static(0),
            Vector3::new(0.0, 0.0, 0.005),
            Vector3::z(),
            0.01,
        )],
    };
    let (sol, _) = solve(&w, &cs, settings(Local::Split), None);
    assert_eq!(sol.impulses[0], [0.0; 3]);
    assert_eq!(sol.status, SolveStatus::Solved);
    assert!((sol.v[2] - (-0.1 - G * DT)).abs() < 1e-15);
    let (free, log) = solve(&w, &ContactSet::default(), settings(Local::Split), None);
    assert_eq!((free.iterations, free.status, log.len()), (0, SolveStatus::Solved, 0));
    assert_eq!(free.v, sol.v);
}

#[test]
fn non_finite_data_is_an_error_not_a_panic() {
    let mut w = world_with_ground(Vector3::z(), Material::rigid(0.5));
    w.bodies.push(sphere("ball", 1.0, 0.1, Vector3::new(0.0, 0.0, 0.1), Material::rigid(0.5)));
    let cs = ContactSet {
        contacts: vec![contact(
            &w,
            ColliderId::Body(0),
            ColliderId::Static(0),
            Vector3::zeros(),
            Vector3::z(),
            f64::NAN,
        )],
    };
    let p = w.step_problem(&cs, DT, None).unwrap();
    let e = Pgs::new(PgsSettings::default()).step(&p, &mut IterationLog::new()).unwrap_err();
    assert!(matches!(e, SolveError::NonFinite { .. }), "{e}");
}

#[rstest]
#[case::iterations("max_iterations", "0")]
#[case::tolerance_zero("tolerance", "0")]
#[case::tolerance_negative("tolerance", "-1e-8")]
#[case::omega_zero("omega", "0")]
#[case::omega_two("omega", "2")]
#[case::local("local", "newton")]
#[case::anderson("anderson_memory", "51")]
fn settings_validation_names_the_field(#[case] key: &str, #[case] value: &str) {
    let mut p = Params::from_settings(&PgsSettings::default());
    p.set(key, value, "pgs").unwrap();
    match p.decode::<PgsSettings>("pgs") {
        Err(harness::ParamError::BadValue { key: k, why, .. }) => {
            assert_eq!(k, key);
            assert!(why.starts_with(&format!("{key}:")), "{why}");
        }
        other => panic!("expected a BadValue for {key}, got {other:?}"),
    }
    let bad = PgsSettings { tolerance: f64::NAN, ..PgsSettings::default() };
    assert_eq!(bad.validate().unwrap_err().field, "tolerance");
}

/// NNCG and Anderson both extrapolate the sweep; together they are refused, naming `nncg`.
#[test]
fn nncg_with_anderson_is_refused() {
    let mut p = Params::from_settings(&PgsSettings::default());
    p.set("nncg", "true", "pgs").unwrap();
    assert!(p.decode::<PgsSettings>("pgs").unwrap().nncg);
    p.set("anderson_memory", "5", "pgs").unwrap();
    match p.decode::<PgsSettings>("pgs") {
        Err(harness::ParamError::BadValue { key, why, .. }) => {
            assert_eq!(key, "nncg");
            assert!(why.starts_with("nncg:"), "{why}");
        }
        other => panic!("expected a BadValue for nncg, got {other:?}"),
    }
}

#[test]
fn entry_builds_from_defaults_and_rejects_unknown_keys() {
    let e = harness::SolverEntry::of::<Pgs>();
    assert_eq!(e.name, "pgs");
    assert!(e.capabilities.missing(&capabilities()).is_empty());
    assert!(e.capabilities.exact_friction_cone && e.capabilities.compliant_contact && e.capabilities.deformable_bodies);
    let defaults = (e.defaults)();
    for key in ["max_iterations", "tolerance", "local", "omega", "warm_start", "order", "anderson_memory", "nncg"] {
        assert!(defaults.contains(key), "{key}");
    }
    assert!(e.paper.contains("Gauss-Seidel"));
    e.build(&defaults).expect("defaults are valid");
    assert_eq!(defaults.0["local"], "split");
    assert_eq!(defaults.0["max_iterations"], 500);
    let mut cone = defaults.clone();
    cone.set("local", "cone", "pgs").unwrap();
    assert_eq!(cone.decode::<PgsSettings>("pgs").unwrap().local, Local::Cone);
    let mut typo = defaults.clone();
    typo.0.insert("omgea".into(), serde_json::json!(1.0));
    assert!(e.build(&typo).is_err());
}

/// A sphere hanging at rest from a rigid ball joint at its top point: the joint's vertical row
/// carries the weight, `γ_z = m g dt`, the others nothing, and `v+ = 0`; warm-started from that
/// impulse (matched by joint and row) the next solve stops after one sweep with the same answer.
#[rstest]
fn hanging_sphere_on_a_ball_joint_carries_its_weight(#[values(false, true)] islands: bool) {
    let (m, r) = (2.0, 0.1);
    let mut w = world_with_ground(Vector3::z(), Material::rigid(0.5));
    w.bodies.push(sphere("ball", m, r, Vector3::new(0.0, 0.0, 1.0), Material::rigid(0.5)));
    let joint = harness::model::Joint::ball_at(&w, 0, None, Vector3::new(0.0, 0.0, 1.0 + r));
    w.joints.push(joint);
    let cs = ContactSet { contacts: vec![] };
    let s = PgsSettings { islands, ..settings(Local::Split) };
    let (sol, _) = solve(&w, &cs, s.clone(), None);
    assert_eq!(sol.status, SolveStatus::Solved);
    let weight = m * G * DT;
    assert_eq!(sol.bilateral.len(), 3);
    assert!((sol.bilateral[2] - weight).abs() <= EPS * weight, "{:?}", sol.bilateral);
    assert!(sol.bilateral[..2].iter().all(|g| g.abs() <= EPS * weight), "{:?}", sol.bilateral);
    assert!(sol.v.iter().all(|v| v.abs() <= EPS * G * DT), "{:?}", sol.v);
    let warm = WarmStart { bilateral: (0..3).map(|k| ((0, k), sol.bilateral[k])).collect(), ..WarmStart::default() };
    let (hot, _) = solve(&w, &cs, s, Some(&warm));
    assert_eq!((hot.status, hot.iterations), (SolveStatus::Solved, 1));
    assert!((hot.bilateral[2] - weight).abs() <= EPS * weight);
}
