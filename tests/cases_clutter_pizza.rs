//! The `pizza_saver` and `clutter` cases end to end with the PGS baseline, through the same runner
//! the CLI uses: the pizza saver's torsional stiction and sliding on both sides of the transition
//! torque `mu m g R = 30 N m` (rigid contact, where PGS solves the exact Coulomb NCP), and clutter
//! drops of 8 and 20 objects with and without walls that must complete without failure.
//! Tolerances live in the oracles (derived in each case's module doc).

use harness::runner;
use records::{RunRecord, RunStatus};
use rstest::rstest;

fn run(case: &str, sets: &[(&str, &str)], solver_sets: &[(&str, &str)]) -> RunRecord {
    let r = runner::run_one(&signorini::registry(), case, sets, "pgs", solver_sets).expect("valid, runnable pair");
    assert_eq!(r.status, RunStatus::Ok, "{:?}", r.reason);
    r
}

fn assert_checks(r: &RunRecord, names: &[&str]) {
    let mut got: Vec<&str> = r.summary.oracle.keys().map(String::as_str).collect();
    let mut want = names.to_vec();
    got.sort();
    want.sort();
    assert_eq!(got, want, "oracle checks of {}", r.case.label);
    for (n, c) in &r.summary.oracle {
        assert!(
            c.pass,
            "{} {n}: measured {} expected {} error {} > tolerance {}",
            r.case.label, c.measured, c.expected, c.error, c.tolerance
        );
    }
}

#[rstest]
#[case::stiction("20", false)]
#[case::sliding("40", true)]
fn pizza_saver_torsional_stick_slip(#[case] torque: &str, #[case] slides: bool) {
    let r = run("pizza_saver", &[("torque", torque), ("contact", "rigid")], &[]);
    assert_eq!(r.summary.failures, 0);
    if slides {
        assert_checks(&r, &["regime", "friction_per_contact", "angular_acceleration"]);
        // every contact slides at full friction: mu m g / n = 5 N
        assert!((r.summary.oracle["friction_per_contact"].measured - 5.0).abs() < 1e-6);
    } else {
        assert_checks(&r, &["regime", "friction_per_contact", "slip"]);
        // Mz / (n R) = 20 / 6
        assert!((r.summary.oracle["friction_per_contact"].measured - 20.0 / 6.0).abs() < 1e-6);
    }
    assert_eq!(r.summary.oracle["regime"].measured, if slides { 1.0 } else { 0.0 });
}

#[test]
fn pizza_saver_frictionless_push() {
    let r = run("pizza_saver", &[("mu", "0"), ("push_x", "1"), ("torque", "0"), ("contact", "rigid")], &[]);
    assert_checks(&r, &["push_velocity", "angular_acceleration"]);
}

/// Short drops (debug builds run these in CI): the objects land and the run must complete with
/// no failed step. 0.4 s covers the first impacts of the lowest objects and, with 8 objects,
/// the landing of the whole drop (t_fall = 0.27 s).
#[rstest]
fn clutter_completes(#[values("8", "20")] bodies: &str, #[values("true", "false")] walls: bool) {
    let walls = if walls { "true" } else { "false" };
    let r = run("clutter", &[("bodies", bodies), ("walls", walls), ("duration", "0.4")], &[]);
    assert_eq!(r.summary.failures, 0);
    assert_eq!(r.summary.steps, 40);
    let n = r.summary.metrics["n_contacts"].max;
    assert!(n > 0.0, "the objects must reach the ground: {n} contacts");
}
