//! SAP on the canonical cases through the same runner the CLI uses (issue 3): slope threshold and
//! stiction creep (Castro et al. Eq. 30–31), the spring-cylinder's energy behaviour and order of
//! accuracy for the four θ-method schemes (§VI-B, Figs. 5–7), the pizza saver's torsional
//! stick/slip (Drake's test), clutter runs completing without failure (§VI-C), and the joints of the
//! pendulum, spring–mass–damper, robot and jointed beam through SAP's holonomic rows (README §2).

use harness::geometry;
use harness::runner::{self, NoProgress, PairSpec, Suite};
use harness::stepper::RunOptions;
use records::{RunRecord, RunStatus};
use rstest::rstest;
use solvers::sap::{SapProblem, SapSettings};

mod common;
use common::order;

fn prepare(case: &str, sets: &[(&str, String)], solver_sets: &[(&str, &str)]) -> runner::PreparedPair {
    let reg = signorini::registry();
    let suite = Suite {
        name: "test".into(),
        pairs: vec![PairSpec {
            label: case.into(),
            case: case.into(),
            case_set: sets.iter().map(|(k, v)| (k.to_string(), harness::runner::Override::Text(v.clone()))).collect(),
            solver: "sap".into(),
            solver_set: solver_sets
                .iter()
                .map(|(k, v)| (k.to_string(), harness::runner::Override::Text(v.to_string())))
                .collect(),
        }],
        accuracy: None,
    };
    runner::prepare(&reg, &suite).expect("valid pair").remove(0)
}

fn run(case: &str, sets: &[(&str, String)], solver_sets: &[(&str, &str)]) -> RunRecord {
    let pair = prepare(case, sets, solver_sets);
    let provenance = records::Provenance::collect();
    let r = runner::run_pair(&pair, RunOptions::default(), &provenance, &NoProgress);
    assert_eq!(r.status, RunStatus::Ok, "{:?}", r.reason);
    assert_eq!(r.summary.failures, 0);
    r
}

fn check(r: &RunRecord, name: &str) -> (f64, bool) {
    let c = r.summary.oracle.get(name).unwrap_or_else(|| panic!("check {name} missing: {:?}", r.summary.oracle));
    (c.measured, c.pass)
}

fn assert_all_pass(r: &RunRecord) {
    for (n, c) in &r.summary.oracle {
        assert!(
            c.pass,
            "{} {n}: measured {} expected {} error {} > tolerance {}",
            r.case.label, c.measured, c.expected, c.error, c.tolerance
        );
    }
}

/// `R_t` of every contact of the case's initial state (Eq. 30).
fn initial_rt(pair: &runner::PreparedPair) -> Vec<f64> {
    let sc = &pair.scenario;
    let contacts = geometry::detect(&sc.world, sc.margin);
    let p = sc.world.step_problem(&contacts, sc.dt, None).unwrap();
    SapProblem::from_step(&p, &SapSettings::default(), &mut Default::default())
        .unwrap()
        .constraints
        .iter()
        .map(|c| c.cone.r_t)
        .collect()
}

#[rstest]
fn slope_threshold_and_creep(
    #[values("rigid", "compliant")] contact: &str,
    #[values(10.0, 30.0)] angle_deg: f64,
    #[values(0.02, -0.02)] offset: f64,
) {
    let mu = angle_deg.to_radians().tan() + offset;
    let sets = [("angle_deg", angle_deg.to_string()), ("mu", mu.to_string()), ("contact", contact.to_string())];
    let r = run("slope", &sets, &[]);
    let sticks = offset > 0.0;
    // every canonical check passes but the gliding one: the Coulomb threshold, the acceleration
    // (sliding: ‖γ_t‖ = μ γ_n exactly in region II) and the creep below CREEP_REL_TOL g dt
    let mut graded = r.clone();
    graded.summary.oracle.remove("glide_gap");
    assert_all_pass(&graded);
    if !sticks && contact == "rigid" {
        // SAP's convex model glides like Anitescu's CCP (an expected failure of ci/gates.toml):
        // the box floats close to the CCP's dt mu |c_N| (c_N = a_s (T - dt)) above the slope
        let a = angle_deg.to_radians();
        let ccp = 0.01 * mu * 9.81 * (a.sin() - mu * a.cos()) * 0.99;
        let (gap, pass) = check(&r, "glide_gap");
        assert!(!pass && gap > 0.5 * ccp && gap < 1.05 * ccp, "{angle_deg}: glide gap {gap:e} vs CCP {ccp:e}");
    }
    assert_eq!(check(&r, "slides").0, if sticks { 0.0 } else { 1.0 });
    if sticks {
        // stiction creep (Eq. 30–31): if all four corners stick, γ_t,i = v_s / R_t,i sums to
        // F δt = m g sin(a) δt, so v_s = m g sin(a) δt / Σ 1/R_t,i. On the slope the upper corners
        // carry less normal load (tipping moment) and reach the cone boundary first, leaving more
        // to the others, so v_s is a lower bound; the upper bound is Eq. 31 per corner,
        // v = R_t γ_t ≤ σ w μ γ_n ≤ σ μ g δt (w m) with w m the largest of the corners
        let pair = prepare("slope", &sets, &[]);
        let rt = initial_rt(&pair);
        let (g, dt, m) = (9.81, 0.01, 1.0);
        let a = angle_deg.to_radians();
        let vs = m * g * a.sin() * dt / rt.iter().map(|r| 1.0 / r).sum::<f64>();
        let creep = check(&r, "creep_speed").0;
        assert!(creep >= vs * (1.0 - 1e-3), "{contact} {angle_deg}: creep {creep:e} < R_t F dt = {vs:e}");
        let wm_max = rt.iter().fold(0.0f64, |x, r| x.max(r / 1e-3)) * m;
        assert!(creep <= 1e-3 * mu * g * dt * wm_max, "Eq. 31 bound");
    }
}

/// `(e_q, energy_band, energy(last) / energy(first))` of a spring-cylinder run.
fn cylinder(scheme: &str, mu: f64, dt: f64, contact: &str) -> (f64, f64, RunRecord) {
    let sets = [("mu", mu.to_string()), ("dt", dt.to_string()), ("contact", contact.to_string())];
    let r = run("spring_cylinder", &sets, &[("scheme", scheme), ("rel_tolerance", "1e-10")]);
    let (e_q, _) = check(&r, "e_q");
    let (band, _) = check(&r, "energy_band");
    (e_q, band, r)
}

#[rstest]
#[case::frictionless(0.0)]
#[case::rolling(1.0)]
fn spring_cylinder_energy_behaviour(#[case] mu: f64) {
    // midpoint: exact energy conservation for the linear spring frictionless (Fig. 5); with
    // friction the regularised stiction dissipates ≈ R_t F² δt per step (0.16 % in the paper)
    let (_, band, r) = cylinder("midpoint", mu, 0.02, "compliant");
    assert_all_pass(&r);
    if mu == 0.0 {
        // to solver tolerance: ε_r = 1e-10 on impulses of O(m g δt) changes E by ~1e-9 E0
        assert!(band <= 1e-6, "midpoint band {band:e}");
    } else {
        assert!(band <= 5e-3, "midpoint band {band:e} (paper 0.16 %, independent run 0.23 %)");
    }
    // symplectic Euler: bounded band ≈ ω δt (28 % frictionless, 23 % rolling; sap README §9)
    let (_, band, r) = cylinder("symplectic_euler", mu, 0.02, "compliant");
    assert_all_pass(&r);
    let expected = if mu == 0.0 { 0.289 } else { 0.235 };
    assert!((band - expected).abs() <= 0.03, "symplectic band {band}");
    // implicit Euler dissipates: most of the energy is gone by 5 s (an independent run: all of it)
    let (_, band, r) = cylinder("implicit_euler", mu, 0.02, "compliant");
    assert!(band > 0.8, "implicit Euler band {band}");
    // oscillation energy left at 5 s (kinetic + spring; gravity is constant at rest height)
    let left = r.summary.metrics["kinetic"].last + r.summary.metrics["spring"].last;
    assert!(left < 1e-2 * 0.5, "implicit Euler keeps {left} J of 0.5 J");
}

#[rstest]
#[case::midpoint("midpoint", 2.0, &[0.02, 0.01, 0.005, 0.0025])]
#[case::symplectic_euler("symplectic_euler", 1.0, &[0.02, 0.01, 0.005, 0.0025])]
// implicit Euler is pre-asymptotic at coarse steps (sap README §9: rates 0.1 … 0.64 above 2.5 ms)
#[case::implicit_euler("implicit_euler", 1.0, &[0.0025, 0.00125, 0.000625])]
fn spring_cylinder_order_of_accuracy(#[case] scheme: &str, #[case] expected: f64, #[case] dts: &[f64]) {
    // e_q over T = 5 s, rolling (μ = 1): order 2 for midpoint even with frictional contact, 1 for
    // the Euler schemes (Fig. 7). ±0.3: the fitted slope over a factor-8 range of δt still holds the
    // next-order term (symplectic Euler's local rates go 1.31 → 1.09 over this range, sap README §9).
    // Near-rigid contact: with the case's compliant k = 1e4 the static penetration m g/k = 0.5 mm
    // moves the harness's contact point (midway between the surfaces) off the rim, which changes
    // the rolling radius by 0.5 % and leaves a δt-independent phase error (e_q floor ≈ 4e-3 m); the
    // near-rigid penetration ∝ δt² keeps that error below the integrator's
    let es: Vec<f64> = dts.iter().map(|&dt| cylinder(scheme, 1.0, dt, "rigid").0).collect();
    let p = order(dts, &es);
    assert!((p - expected).abs() <= 0.3, "{scheme}: order {p:.3} from e_q {es:?}");
}

#[rstest]
fn pizza_saver_stick_and_slip(#[values("compliant", "rigid")] contact: &str, #[values(20.0, 40.0)] torque: f64) {
    // below M_crit = μ m g R = 30 N m: stiction with friction Mz/(n R) per contact and slip below
    // σ δt g; above: sliding at full friction, ω' = (Mz − M_crit)/I_z (cases/src/pizza_saver.rs)
    // sliding: the convex approximation glides (sap README §9, Gliding): the body rises to
    // φ ≈ (δt + τ_d) μ ‖v_t‖, 3.6 cm at the end of the run, beyond the case's 1 cm detection margin,
    // where the contacts are lost and the body drops back; a 5 cm margin (below twice the half
    // height, so still only the bottom corners) keeps them
    let margin = if torque < 30.0 { "0.01" } else { "0.05" };
    let sets = [("contact", contact.to_string()), ("torque", torque.to_string()), ("margin", margin.to_string())];
    let r = run("pizza_saver", &sets, &[]);
    assert_all_pass(&r);
    assert_eq!(check(&r, "regime").0, if torque < 30.0 { 0.0 } else { 1.0 });
    if torque < 30.0 {
        let (slip, _) = check(&r, "slip");
        assert!(slip <= 1e-3 * 0.01 * 10.0, "slip {slip:e} > sigma dt g");
        let (f, _) = check(&r, "friction_per_contact");
        assert!((f - torque / (4.0 * 1.5)).abs() <= 1e-2, "friction per contact {f}");
    }
}

#[rstest]
fn clutter_completes(#[values(8, 20)] bodies: usize, #[values(true, false)] walls: bool) {
    let r = run("clutter", &[("bodies", bodies.to_string()), ("walls", walls.to_string())], &[]);
    assert_eq!(r.summary.steps, 150);
    assert_eq!(r.summary.unconverged_steps, 0, "every step meets Eq. 26 within 100 Newton iterations");
    if walls {
        assert!(check(&r, "contained").1, "objects stay in the container");
    }
    assert!(r.summary.iterations_per_step.max <= 100.0);
}

/// Mean and largest Newton iterations per step over the settled steps of an 8-object clutter run
/// with walls (2 per column, the quick suite's scene; `t_drop` = 0.53 s), 1.5 s: the steps
/// starting at or after 1.0 s, about twice `t_drop`, when the pile has come to rest (50 steps).
fn settled_clutter_iterations(solver_sets: &[(&str, &str)]) -> (f64, usize) {
    let r = run("clutter", &[("bodies", "8".into()), ("duration", "1.5".into())], solver_sets);
    assert_eq!(r.step_stride, 1);
    let settled: Vec<usize> = r.steps.iter().filter(|s| s.step >= 100).map(|s| s.iterations).collect();
    assert_eq!(settled.len(), 50);
    (settled.iter().sum::<usize>() as f64 / settled.len() as f64, *settled.iter().max().unwrap())
}

/// Castro et al. §VI-C (Fig. 9): with warm start, SAP needs about 3 Newton iterations per step at
/// steady state on clutter. Asserted: mean at most 5 over the settled steps at ε_r = 1e-6 (the
/// default, one decade tighter than the paper's clutter value 1e-5). Margin: near the solution
/// Newton converges quadratically, so a settled step that starts within the basin needs
/// ⌈log2 log10(1/ε_r)⌉ + 1 ≈ 4 iterations from a relative error of 0.1; the paper's Fig. 10
/// shows purely linear phases near kinks (5 iterations at step 520), hence 5. Measured: see
/// solvers/src/sap/README.md (claims table).
#[test]
fn clutter_steady_state_needs_few_newton_iterations() {
    let (mean, max) = settled_clutter_iterations(&[]);
    eprintln!("settled clutter: mean {mean:.2}, max {max} Newton iterations per step");
    assert!(mean <= 5.0, "mean {mean} Newton iterations per settled step");
}

/// Perturbation of the claim above: it rests on the warm start (§IV; Castro et al. attribute the
/// low steady-state count to it). Started from `v*` instead of the previous step's velocity, the
/// settled pile needs more than the claim's 5 iterations per step.
#[test]
fn clutter_steady_state_without_warm_start_needs_more_iterations() {
    let (mean, max) = settled_clutter_iterations(&[("warm_start", "false")]);
    eprintln!("settled clutter, cold start: mean {mean:.2}, max {max} Newton iterations per step");
    assert!(mean > 5.0, "mean {mean} Newton iterations per settled step without warm start");
}

// ------------------------------------------------- holonomic constraints (README §2, an extension)

/// A SAP pendulum run (1 s, the case's defaults: m = 1 kg, I = 0.01 kg m², L = 1 m, g = 9.8) at
/// `dt` with solver settings `solver_sets`.
fn pendulum(joint: &str, dt: f64, solver_sets: &[(&str, &str)]) -> RunRecord {
    run("pendulum", &[("joint", joint.into()), ("dt", dt.to_string())], solver_sets)
}

/// Upper bound on SAP's joint drift on the default pendulum at step `h`, β = `beta` (README §7,
/// "Holonomic rows"): the case's linearised-joint drift `h² g m L³/(I + m L²)` with the case's
/// 25 % margin, plus the near-rigid stretch of a row, `F h² β² w/(4π²)` (steady state of
/// `γ = (v̂ − G v)/R` with `v̂ = −C/h`), at the largest pivot force `F = m g (1 + 2κ)`,
/// `κ = m L²/(I + m L²)` (tension at the bottom), and the largest Delassus entry of a world-axis
/// row, `w = 1/m + L²/I` (the row along the rod's normal).
fn pendulum_drift_bound(h: f64, beta: f64) -> f64 {
    let (m, i, l, g) = (1.0, 0.01, 1.0, 9.8);
    let kappa = m * l * l / (i + m * l * l);
    let exact = h * h * g * m * l.powi(3) / (i + m * l * l);
    let stretch = m * g * (1.0 + 2.0 * kappa) * h * h * beta * beta * (1.0 / m + l * l / i)
        / (4.0 * std::f64::consts::PI.powi(2));
    1.25 * exact + stretch
}

/// Drumwright's pendulum (§4.4) through SAP's holonomic rows, rigid and with the paper's stiff
/// joint (k = 1e15, b = 1, in the near-rigid regime: `R = β² w/(4π²)`), at three steps: θ(1 s)
/// is within the case's 5h and first order (symplectic Euler); the joint drift is within
/// [`pendulum_drift_bound`] and second order (both of its terms are ∝ h²). ±0.3 on the fitted
/// slopes over a factor 4 of h: the next-order term (as the spring-cylinder's order test). The
/// case's own drift check (exact law ± 25 %) fails at β = 1 (README §7; an expected failure of the
/// quick suite) and is asserted at β = 0.1 below.
#[rstest]
fn pendulum_orders_of_the_scheme(#[values("compliant", "rigid")] joint: &str) {
    let dts = [4e-3, 2e-3, 1e-3];
    let (mut drift, mut err) = (vec![], vec![]);
    for &h in &dts {
        let r = pendulum(joint, h, &[]);
        assert!(check(&r, "theta_end").1, "{joint} h = {h}: theta_end {:?}", r.summary.oracle["theta_end"]);
        let d = check(&r, "drift").0;
        assert!(d <= pendulum_drift_bound(h, 1.0), "{joint} h = {h}: drift {d:e} > {:e}", pendulum_drift_bound(h, 1.0));
        drift.push(d);
        err.push(r.summary.oracle["theta_end"].error);
    }
    let (p_theta, p_drift) = (order(&dts, &err), order(&dts, &drift));
    eprintln!("{joint}: theta_end errors {err:?} (order {p_theta:.3}), drift {drift:?} (order {p_drift:.3})");
    assert!((p_theta - 1.0).abs() <= 0.3, "{joint}: theta_end order {p_theta:.3} from {err:?}");
    assert!((p_drift - 2.0).abs() <= 0.3, "{joint}: drift order {p_drift:.3} from {drift:?}");
}

/// With β = 0.1 the near-rigid stretch of [`pendulum_drift_bound`] is 100× smaller (7.5e-7 m at
/// h = 1e-3, below the case's 25 % margin of 2.4e-6 m), so every oracle of the case passes,
/// including the drift of the exact linearised law (h = 1e-3, the default).
#[test]
fn pendulum_drift_meets_the_exact_law_with_small_beta() {
    assert_all_pass(&pendulum("compliant", 1e-3, &[("beta", "0.1")]));
}

/// Lee et al.'s unactuated quadruped (40 rigid hinge rows, 16 foot contacts; `cases/src/robots.rs`)
/// at the case's defaults (0.5 s): SAP's near-rigid joints and contacts settle, and every oracle
/// passes (joint drift, penetration, rest speed, weight carried). The quick suite's 0.1 s variant
/// is still settling (an expected failure, README §7).
#[test]
fn robot_stands_on_its_hinges() {
    let r = run("robots", &[], &[]);
    assert_all_pass(&r);
    assert_eq!(r.summary.unconverged_steps, 0);
}

/// Macklin's jointed beam (5 hinged links, frictionless, `cases/src/jointed_beam.rs`) at the
/// case's defaults (0.5 s): joint violation within the velocity-level scheme's `6 n² g h²` bound
/// and no energy gain.
#[test]
fn jointed_beam_holds_its_joints() {
    let r = run("jointed_beam", &[], &[]);
    assert_all_pass(&r);
    assert_eq!(r.summary.unconverged_steps, 0);
}

/// Drumwright §3 (Fig. 3) with SAP's compliant holonomic row: where the spring's own
/// regularisation `1/(δt k (δt + τ))` exceeds the near-rigid bound `β² w/(4π²)`, SAP's row is the
/// harness's implicit spring–damper law, so the step is implicit Euler and every oracle (spectral
/// radius and per-step amplitude ratio to 1e-3 (1 − ρ)) passes: the small step (h = 1e-5,
/// `R = 1e4` ≫ 0.0253) with the default β, and the large step (h = 1e-2, `R = 0.01`) with β = 0.5
/// (bound 0.0063).
#[test]
fn spring_mass_damper_is_implicit_euler_above_the_near_rigid_bound() {
    assert_all_pass(&run("spring_mass_damper", &[], &[]));
    let large = [("dt", "0.01".to_string()), ("duration", "0.1".to_string())];
    assert_all_pass(&run("spring_mass_damper", &large, &[("beta", "0.5")]));
}

/// The same large step with the default β = 1 is in the near-rigid regime (`δt² k w = 100 > 4π²`):
/// `R = w/(4π²)`, an effective stiffness `4π²/(w δt²)`, so implicit Euler's spectral radius is
/// `1/√(1 + 4π²)` = 0.1572 instead of the case's 0.0995 (README §7; the quick suite lists it as an
/// expected failure). Tolerance: the case's own, 1e-3 (1 − ρ).
#[test]
fn stiff_spring_in_the_near_rigid_regime_has_the_regularised_spectral_radius() {
    let large = [("dt", "0.01".to_string()), ("duration", "0.1".to_string())];
    let r = run("spring_mass_damper", &large, &[]);
    let rho = check(&r, "spectral_radius").0;
    let expected = 1.0 / (1.0 + 4.0 * std::f64::consts::PI.powi(2)).sqrt();
    assert!((rho - expected).abs() <= 1e-3 * (1.0 - expected), "rho {rho} vs {expected}");
    assert!(check(&r, "stable").1, "still stable");
}

/// Macklin's flexible beam (`jointed_beam-flexible`: 3 g links, 250 N m/rad bending springs,
/// δt = 10 ms) puts SAP's holonomic rows deep in the near-rigid regime (README, "Stiff springs"):
/// `δt² k w = 7.7e4 > 4π²/β²` at β = 1 softens each spring to `4π²/(β² w δt²) ≈ 0.13` N m/rad, so
/// the beam sags by far more than ten times its static 2.72 mm; at β = 0.01 (`4π²/β² = 3.9e5`)
/// the springs keep their stiffness and the static sag is met to the oracle's 1 %.
#[test]
fn flexible_beam_springs_are_softened_in_the_near_rigid_regime() {
    let reg = signorini::registry();
    let case = reg.find_case("jointed_beam").unwrap();
    let v = case.variants().iter().find(|v| v.suffix == "flexible").expect("variant");
    let sets: Vec<(String, String)> =
        v.params("jointed_beam").0.into_iter().map(|(k, val)| (k, val.to_string())).collect();
    let sets: Vec<(&str, String)> = sets.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let soft = run("jointed_beam", &sets, &[]);
    let (sag, pass) = check(&soft, "tip_deflection");
    let expected = soft.summary.oracle["tip_deflection"].expected;
    assert!(!pass && sag > 10.0 * expected, "β = 1: sag {sag} vs static {expected}");
    let stiff = run("jointed_beam", &sets, &[("beta", "0.01")]);
    assert_all_pass(&stiff);
}
