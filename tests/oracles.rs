//! The canonical cases' analytic oracles with the PGS baseline, through the same runner the CLI
//! uses: slope stick/slip on both sides of the Coulomb threshold at two angles, the rolling and
//! frictionless spring-cylinder frequencies, a stack at rest. Tolerances live in the oracles
//! (derived in each case's module doc); these tests assert that every check is present and passes.

use harness::runner;
use records::{RunRecord, RunStatus};
use rstest::rstest;

fn run(case: &str, sets: &[(&str, String)], solver_sets: &[(&str, &str)]) -> RunRecord {
    let sets: Vec<(&str, &str)> = sets.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = runner::run_one(&signorini::registry(), case, &sets, "pgs", solver_sets).expect("valid, runnable pair");
    assert_eq!(r.status, RunStatus::Ok, "{:?}", r.reason);
    r
}

fn assert_checks(r: &RunRecord, names: &[&str]) {
    for n in names {
        let c = r
            .summary
            .oracle
            .get(*n)
            .unwrap_or_else(|| panic!("oracle check '{n}' missing: {:?}", r.summary.oracle.keys()));
        assert!(
            c.pass,
            "{} {n}: measured {} expected {} error {} > tolerance {}",
            r.case.label, c.measured, c.expected, c.error, c.tolerance
        );
    }
    assert!(r.summary.oracle.values().all(|c| c.pass), "{:?}", r.summary.oracle);
}

#[rstest]
fn slope_threshold(
    #[values("box", "sphere")] shape: &str,
    #[values(10.0, 30.0)] angle_deg: f64,
    #[values(0.02, -0.02)] offset: f64,
) {
    let tan = angle_deg.to_radians().tan();
    // the sphere's threshold between rolling and slipping is mu = (2/7) tan(angle)
    let threshold = if shape == "sphere" { 2.0 / 7.0 * tan } else { tan };
    let mu = threshold + offset;
    let r = run("slope", &[("shape", shape.into()), ("angle_deg", angle_deg.to_string()), ("mu", mu.to_string())], &[]);
    let sticks = offset > 0.0;
    if shape == "box" {
        assert_checks(
            &r,
            if sticks { &["slides", "acceleration", "creep_speed"] } else { &["slides", "acceleration", "glide_gap"] },
        );
        assert_eq!(r.summary.oracle["slides"].measured, if sticks { 0.0 } else { 1.0 });
    } else {
        assert_checks(&r, if sticks { &["slides", "acceleration"] } else { &["slides", "acceleration", "glide_gap"] });
    }
}

#[rstest]
#[case::rolling("1.0")]
#[case::frictionless("0.0")]
fn spring_cylinder_frequency(#[case] mu: &str) {
    let r = run("spring_cylinder", &[("mu", mu.into())], &[]);
    assert_checks(&r, &["frequency", "e_q", "energy_band"]);
    // the two regimes have different frequencies: sqrt(k/m) = 14.14 vs sqrt(k/(1.5 m)) = 11.55 rad/s
    let w = r.summary.oracle["frequency"].measured;
    if mu == "0.0" {
        assert!((w - 14.14).abs() < 0.2, "{w}");
    } else {
        assert!((w - 11.55).abs() < 0.2, "{w}");
    }
}

#[rstest]
#[case::uniform("1.0")]
#[case::heavy_on_top("2.0")]
fn stack_at_rest(#[case] ratio: &str) {
    let r = run("sphere_stack", &[("mass_ratio", ratio.into())], &[("max_iterations", "5000")]);
    assert_checks(&r, &["max_penetration", "top_drift", "weight_ratio"]);
}

/// A deliberately broken setting makes the gate fail with a readable row.
#[test]
fn one_sweep_pgs_fails_its_gates() {
    let r = run("sphere_stack", &[], &[("max_iterations", "1")]);
    let gates = reports::gate::parse(
        "[[gate]]\nsolver = \"pgs\"\ncase = \"sphere_stack\"\nmetric = \"unconverged_steps\"\nmax = 0\nwhy = \"t\"\n",
        "test",
    )
    .unwrap();
    let records = [(std::path::PathBuf::from("sphere_stack__pgs.json"), r)];
    let rep = reports::gate::evaluate(&gates, &records, reports::gate::Scope::Suite);
    let table = rep.table();
    assert!(!rep.passed() && rep.counts().gates_failed == 1, "{table}");
    assert!(
        table.contains("FAIL")
            && table.contains("pgs")
            && table.contains("sphere_stack")
            && table.contains("unconverged_steps"),
        "{table}"
    );
}
