//! Synthetic run records for the unit tests of this crate.

use harness::record::{CaseRecord, Provenance, RunRecord, RunStatus, SolverRecord, Summary, SCHEMA};
use harness::{OracleCheck, Params};

/// A record of `solver` on case label `label` (case name: the label up to its first `-`), 10
/// steps, `solve_s` seconds of total solve time and the given oracle checks (name, pass); a
/// skipped record carries the reason "`solver` lacks what `label` needs".
pub fn record(label: &str, solver: &str, status: RunStatus, solve_s: f64, checks: &[(&str, bool)]) -> RunRecord {
    let mut summary = Summary { steps: 10, ..Default::default() };
    summary.stage_times.solve_s = solve_s;
    for &(name, pass) in checks {
        let err = if pass { 0.0 } else { 1.0 };
        summary.oracle.insert(name.into(), OracleCheck::with_error(name, err, 0.0, err, 0.5));
    }
    RunRecord {
        schema: SCHEMA.into(),
        provenance: Provenance {
            commit: "c".into(),
            version: "v".into(),
            machine: "m".into(),
            threads: 1,
            started: "t".into(),
            backend: "cpu".into(),
        },
        case: CaseRecord {
            name: label.split('-').next().unwrap_or(label).into(),
            label: label.into(),
            params: Params::default(),
            params_hash: "h1".into(),
        },
        solver: SolverRecord {
            name: solver.into(),
            params: Params::default(),
            params_hash: "h2".into(),
            paper: String::new(),
            defaults_hash: String::new(),
        },
        status,
        reason: (status == RunStatus::Skipped).then(|| format!("{solver} lacks what {label} needs")),
        summary,
        steps: vec![],
        step_stride: 1,
        iterations: vec![],
    }
}
