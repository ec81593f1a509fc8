//! The CI gates cover the whole matrix: every registered case appears in the quick suite, and
//! every (solver, case variant) pair of that suite that the runner does not skip has at least one
//! gate in ci/gates.toml. Adding a solver or a case without gating it fails here.

use harness::runner::{self, Suite};
use std::collections::BTreeSet;

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_runnable_pair_of_the_quick_suite_is_gated() {
    let reg = signorini::registry();
    let text = std::fs::read_to_string(root().join("ci/quick.toml")).unwrap();
    let pairs = runner::prepare(&reg, &Suite::from_toml(&text, "ci/quick.toml", &reg).unwrap()).unwrap();

    let in_suite: BTreeSet<&str> = pairs.iter().map(|p| p.spec.case.as_str()).collect();
    let missing_cases: Vec<&str> = reg.cases.iter().map(|c| c.name()).filter(|c| !in_suite.contains(c)).collect();
    assert!(missing_cases.is_empty(), "cases not in ci/quick.toml: {missing_cases:?}");

    let gates_text = std::fs::read_to_string(root().join("ci/gates.toml")).unwrap();
    let (gates, suite) = reports::gate::parse_file(&gates_text, "ci/gates.toml").unwrap();
    assert_eq!(suite.as_deref(), Some("ci/quick.toml"), "the gates must be pinned to the quick suite");
    let gated: BTreeSet<(&str, &str)> = gates.iter().map(|g| (g.solver.as_str(), g.case.as_str())).collect();
    let ungated: Vec<String> = pairs
        .iter()
        .filter(|p| p.skip.is_none())
        .filter(|p| !gated.contains(&(p.spec.solver.as_str(), p.spec.label.as_str())))
        .map(|p| format!("{} / {}", p.spec.solver, p.spec.label))
        .collect();
    assert!(ungated.is_empty(), "runnable pairs without a gate in ci/gates.toml: {ungated:#?}");
}
