//! The convergence yardstick (`harness::metrics::yardstick`): every solver hands its iterates to
//! the log, and the harness evaluates the same residual on each. The last iterate of a step is the
//! solution the solver returned, so its yardstick must equal the step metric computed from that
//! solution (`natmap_rel_l2`): the yardstick measures the same thing as the step metrics, for every
//! solver, to round-off.

use harness::metrics::yardstick;
use harness::runner::run_one;

#[rstest::rstest]
#[case::pgs("pgs", "sphere_stack", &[("n", "3")])]
#[case::sap("sap", "sphere_stack", &[("n", "3")])]
#[case::nsn("nsn", "sphere_stack", &[("n", "3")])]
#[case::canal("canal", "sphere_stack", &[("n", "3")])]
#[case::subadmm("subadmm", "sphere_stack", &[("n", "3")])]
#[case::drumwright("drumwright", "sphere_stack", &[("n", "3")])]
#[case::local_global("local_global", "elastic_slope", &[])]
fn the_last_iterate_of_every_logged_step_is_the_returned_solution(
    #[case] solver: &str,
    #[case] case: &str,
    #[case] sets: &[(&str, &str)],
) {
    let reg = signorini::registry();
    let mut sets = sets.to_vec();
    sets.push(("duration", "0.1"));
    let r = run_one(&reg, case, &sets, solver, &[]).unwrap();
    assert_eq!(r.step_stride, 1, "every step recorded");
    let (mut checked, mut decreased) = (0, 0);
    for it in &r.iterations {
        let y =
            it.log.column(yardstick::NATMAP).unwrap_or_else(|| panic!("{solver}: no yardstick at step {}", it.step));
        assert_eq!(y.len(), it.log.len());
        let momentum = it.log.column(yardstick::MOMENTUM).unwrap();
        let last = y.iter().rposition(|v| v.is_finite()).expect("an iterate was handed over");
        let metric = &r.steps[it.step].metrics;
        let tol = 1e-9 * metric.natmap_rel_l2.abs() + 1e-12;
        assert!(
            (y[last] - metric.natmap_rel_l2).abs() <= tol,
            "{solver} step {}: yardstick {} vs step metric {}",
            it.step,
            y[last],
            metric.natmap_rel_l2
        );
        let tol_m = 1e-9 * metric.momentum_rel.abs() + 1e-12;
        assert!(
            (momentum[last] - metric.momentum_rel).abs() <= tol_m,
            "{solver} step {}: momentum {} vs {}",
            it.step,
            momentum[last],
            metric.momentum_rel
        );
        let first = y.iter().position(|v| v.is_finite()).unwrap();
        decreased += usize::from(y[first] > y[last]);
        checked += 1;
    }
    assert!(checked >= 2, "{solver}: {checked} logged steps");
    // the iterates are the solver's path, not copies of its answer: on some step the residual
    // falls (drumwright hands over only each cone program's answer, one per step)
    if solver != "drumwright" {
        assert!(decreased > 0, "{solver}: the yardstick never decreased within a step");
    }
}
