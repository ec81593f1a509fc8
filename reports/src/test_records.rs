//! Synthetic run records for the unit tests of this crate.

use api::Params;
use records::OracleCheck;
use records::{CaseRecord, Provenance, RunRecord, RunStatus, SolverRecord, Summary};

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
    let provenance = Provenance {
        commit: "c".into(),
        version: "v".into(),
        machine: "m".into(),
        threads: 1,
        started: "t".into(),
        backend: "cpu".into(),
    };
    let case = CaseRecord::new(label.split('-').next().unwrap_or(label), label, Params::default());
    let mut r = RunRecord::new(provenance, case, SolverRecord::new(solver, Params::default(), "", String::new()));
    r.status = status;
    r.reason = (status == RunStatus::Skipped).then(|| format!("{solver} lacks what {label} needs"));
    r.summary = summary;
    r
}
