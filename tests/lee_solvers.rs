//! CANAL (and SubADMM, issue 5) through the same runner the CLI uses: the slope's stick/slip
//! threshold and the sphere stack at rest, graded by the cases' own oracles (tolerances derived in
//! each case's module doc).

use harness::runner;
use records::{RunRecord, RunStatus};
use rstest::rstest;

fn run(case: &str, sets: &[(&str, String)], solver: &str) -> RunRecord {
    let sets: Vec<(&str, &str)> = sets.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = runner::run_one(&signorini::registry(), case, &sets, solver, &[]).expect("valid, runnable pair");
    assert_eq!(r.status, RunStatus::Ok, "{:?}", r.reason);
    r
}

fn assert_all_pass(r: &RunRecord) {
    assert!(!r.summary.oracle.is_empty());
    for (n, c) in &r.summary.oracle {
        assert!(
            c.pass,
            "{n}: measured {} expected {} error {} > tolerance {}",
            c.measured, c.expected, c.error, c.tolerance
        );
    }
}

#[rstest]
fn slope_threshold(#[values("canal", "subadmm")] solver: &str, #[values(0.02, -0.02)] offset: f64) {
    let mu = 30f64.to_radians().tan() + offset;
    let r = run("slope", &[("angle_deg", "30".into()), ("mu", mu.to_string())], solver);
    assert_all_pass(&r);
    assert_eq!(r.summary.oracle["slides"].measured, if offset > 0.0 { 0.0 } else { 1.0 });
}

#[rstest]
fn sphere_stack_at_rest(#[values("canal", "subadmm")] solver: &str) {
    let r = run("sphere_stack", &[], solver);
    assert_all_pass(&r);
    assert_eq!(r.summary.failures, 0);
}
