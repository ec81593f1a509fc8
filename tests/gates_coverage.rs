//! ci/gates.toml against the quick suite, without running it: every registered case is in the
//! suite (so its oracle checks are gated: every oracle check of every pair that runs is a gate,
//! and a new solver or case needs no entry), the gates file is pinned to the suite, and each of
//! its expected failures and metric gates names pairs that the suite runs (not skipped) and a
//! `see` file that exists. Whether the listed checks still fail is the gate's own business
//! (`signorini gate runs/ci-quick`, in .ci/run).

use harness::runner::{self, Suite};
use std::collections::BTreeSet;

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn every_case_is_in_the_quick_suite_and_every_gates_entry_names_a_runnable_pair() {
    let reg = signorini::registry();
    let text = std::fs::read_to_string(root().join("ci/quick.toml")).unwrap();
    let pairs = runner::prepare(&reg, &Suite::from_toml(&text, "ci/quick.toml", &reg).unwrap()).unwrap();

    let in_suite: BTreeSet<&str> = pairs.iter().map(|p| p.spec.case.as_str()).collect();
    let missing_cases: Vec<&str> = reg.cases.iter().map(|c| c.name()).filter(|c| !in_suite.contains(c)).collect();
    assert!(missing_cases.is_empty(), "cases not in ci/quick.toml: {missing_cases:?}");
    // every variant of the default suite (e.g. clutter-rigid) has a pair with its settings
    for c in &reg.cases {
        for v in c.variants() {
            let set = v.params(c.name());
            let covered = pairs
                .iter()
                .any(|p| p.spec.case == c.name() && set.0.iter().all(|(k, val)| p.case_params.0.get(k) == Some(val)));
            assert!(covered, "variant {} has no pair in ci/quick.toml", v.label(c.name()));
        }
    }

    let gates_text = std::fs::read_to_string(root().join("ci/gates.toml")).unwrap();
    let gates = reports::gate::parse(&gates_text, "ci/gates.toml").unwrap();
    // a gates file names its suite relative to its own folder
    assert_eq!(gates.suite.as_deref(), Some("quick.toml"), "the gates must be pinned to the quick suite");
    let runnable: BTreeSet<(&str, &str)> =
        pairs.iter().filter(|p| p.skip.is_none()).map(|p| (p.spec.solver.as_str(), p.spec.label.as_str())).collect();

    let mut wrong = vec![];
    for e in &gates.expected_failures {
        if !runnable.contains(&(e.solver.as_str(), e.case.as_str())) {
            wrong.push(format!("expected_failure {} / {}: not a runnable pair of the suite", e.case, e.solver));
        }
        let file = e.see.split([' ', ',']).next().unwrap_or_default();
        if !root().join(file).is_file() {
            wrong.push(format!(
                "expected_failure {} / {} / {}: see '{}' is not a file",
                e.case, e.solver, e.check, e.see
            ));
        }
    }
    for g in &gates.gates {
        let matching = runnable.iter().filter(|(s, c)| g.solver.matches(s) && g.case.matches(c)).count();
        if matching == 0 {
            wrong.push(format!("gate {} on {} / {}: matches no runnable pair", g.metric, g.case, g.solver));
        }
        if !g.solver.is_all() && !g.case.is_all() {
            for s in g.solver.listed() {
                for c in g.case.listed() {
                    if !runnable.contains(&(s, c)) {
                        wrong.push(format!("gate {} on {c} / {s}: not a runnable pair of the suite", g.metric));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "ci/gates.toml: {wrong:#?}");
}

/// The oracle checks a case grades are known without running it ([`runner::oracle_checks`]: the
/// scene graded on an empty trace, each check unmeasured), and they are the checks a whole run
/// grades: checked here for every case's defaults and variants and every case variant of the
/// quick suite, against a whole trace that holds the initial state (`signorini gate` refuses a
/// completed record that lacks one of the first, so the two lists must agree).
#[test]
fn the_checks_known_without_running_are_those_a_whole_run_grades() {
    let reg = signorini::registry();
    let text = std::fs::read_to_string(root().join("ci/quick.toml")).unwrap();
    let mut suite = Suite::from_toml(&text, "ci/quick.toml", &reg).unwrap();
    suite.pairs.extend(Suite::default_suite(&reg).pairs.into_iter().map(|mut p| {
        p.label = format!("default-{}", p.label);
        p
    }));
    let resolved = suite.resolve(&reg).unwrap();
    let known = runner::oracle_checks(&resolved, harness::resources::default_limit()).unwrap();
    let mut seen = BTreeSet::new();
    let mut wrong = vec![];
    for (pair, known) in runner::prepare(&reg, &suite).unwrap().iter().zip(known) {
        if !seen.insert((pair.spec.case.clone(), pair.case_params.hash())) {
            continue;
        }
        let sc = pair.case.scenario();
        let (q, v) = (sc.world.positions(), sc.world.velocities());
        let trace = harness::Trace {
            dt: sc.dt,
            q: vec![q; sc.steps + 1],
            v: vec![v; sc.steps + 1],
            metrics: vec![records::StepMetrics::default(); sc.steps],
            completed: true,
        };
        let mut whole: Vec<String> = pair.case.grade(&trace).into_iter().map(|c| c.name).collect();
        whole.sort();
        if known.is_empty() || whole != known {
            wrong.push(format!(
                "{} ({}): known {known:?}, a whole run grades {whole:?}",
                pair.spec.label, pair.spec.case
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert!(seen.len() > 30, "{} case variants checked", seen.len());
}
