//! Accuracy gates: thresholds on run-record values, checked by `signorini gate`.
//!
//! A gates file (`ci/gates.toml`) holds `[[gate]]` tables:
//! ```toml
//! [[gate]]
//! solver = "pgs"
//! case = "slope-stick-10"              # the case label in the run directory
//! metric = "oracle.slides"             # an oracle check: must pass
//! why = "Coulomb threshold: mu > tan(angle) sticks"
//!
//! [[gate]]
//! solver = "pgs"
//! case = "sphere_stack"
//! metric = "metrics.penetration_max.max"   # any numeric path under the record's `summary`
//! max = 1e-4
//! why = "..."
//! ```
//! A gate fails when its record is missing, when the pair did not run to completion, when the
//! value is missing or NaN, when it lies outside `[min, max]`, when an oracle check fails, or when
//! the record was produced with other parameters than the gate pins (`case_hash`, `solver_hash`).

use harness::record::{RunRecord, RunStatus};
use serde::Deserialize;

/// One gate.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// Solver name.
    pub solver: String,
    /// Case label.
    pub case: String,
    /// `oracle.<check>` (the check must pass), or a dotted path under the record's summary, e.g.
    /// `metrics.natmap_rel_l2.max`, `oracle.acceleration.error`, `iterations_per_step.mean`.
    pub metric: String,
    /// Upper bound (inclusive).
    pub max: Option<f64>,
    /// Lower bound (inclusive).
    pub min: Option<f64>,
    /// Expected case parameter hash, if pinned.
    pub case_hash: Option<String>,
    /// Expected solver parameter hash, if pinned.
    pub solver_hash: Option<String>,
    /// Where the threshold comes from (paper, oracle tolerance, method bound).
    pub why: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GatesFile {
    /// The suite file the gated records come from. When given, `signorini gate` resolves it and
    /// pins every gate to the parameter hashes the suite defines now, so a record produced with
    /// other parameters (a stale run, a `--set`, a changed default) fails instead of passing
    /// silently.
    suite: Option<String>,
    gate: Vec<Gate>,
}

/// Parses a gates file; `source` names it in errors.
pub fn parse(text: &str, source: &str) -> Result<Vec<Gate>, String> {
    parse_file(text, source).map(|(gates, _)| gates)
}

/// Parses a gates file into its gates and the suite file it names, if any.
pub fn parse_file(text: &str, source: &str) -> Result<(Vec<Gate>, Option<String>), String> {
    let f: GatesFile =
        toml::from_str(text).map_err(|e| format!("{source}: {}", e.to_string().trim().replace('\n', " ")))?;
    for (i, g) in f.gate.iter().enumerate() {
        if !g.metric.starts_with("oracle.") && g.max.is_none() && g.min.is_none() {
            return Err(format!(
                "{source}: gate {} ({} on {}, {}): needs max or min",
                i + 1,
                g.solver,
                g.case,
                g.metric
            ));
        }
    }
    Ok((f.gate, f.suite))
}

/// Expected `(case hash, solver hash)` by `(solver, case label)`.
pub type ExpectedHashes = std::collections::BTreeMap<(String, String), (String, String)>;

/// Pins every gate that has no explicit hash to the hashes the suite defines for its
/// `(solver, case label)`. A gate whose pair is not in the suite is an error (it could never be
/// checked).
pub fn pin(gates: &mut [Gate], expected: &ExpectedHashes) -> Result<(), String> {
    for g in gates {
        let (case_hash, solver_hash) = expected.get(&(g.solver.clone(), g.case.clone())).ok_or_else(|| {
            format!("gate on {} / {} ({}): that pair is not in the gates' suite", g.solver, g.case, g.metric)
        })?;
        g.case_hash.get_or_insert_with(|| case_hash.clone());
        g.solver_hash.get_or_insert_with(|| solver_hash.clone());
    }
    Ok(())
}

/// The verdict of one gate.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The gate.
    pub gate: Gate,
    /// The measured value, if found.
    pub value: Option<f64>,
    /// Pass or fail.
    pub pass: bool,
    /// Why it failed (empty when it passed).
    pub note: String,
}

fn lookup<'a>(v: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Checks one gate against the records.
pub fn check(gate: &Gate, records: &[RunRecord]) -> Verdict {
    let fail = |value, note: String| Verdict { gate: gate.clone(), value, pass: false, note };
    let Some(r) = records.iter().find(|r| r.solver.name == gate.solver && r.case.label == gate.case) else {
        return fail(None, "no run record for this pair".into());
    };
    if r.status != RunStatus::Ok {
        return fail(None, format!("pair did not run: {:?} ({})", r.status, r.reason.clone().unwrap_or_default()));
    }
    if let Some(h) = &gate.case_hash {
        if *h != r.case.params_hash {
            return fail(None, format!("case parameters changed (hash {} != pinned {h})", r.case.params_hash));
        }
    }
    if let Some(h) = &gate.solver_hash {
        if *h != r.solver.params_hash {
            return fail(None, format!("solver parameters changed (hash {} != pinned {h})", r.solver.params_hash));
        }
    }
    let summary = serde_json::to_value(&r.summary).unwrap_or_default();
    let Some(found) = lookup(&summary, &gate.metric) else {
        return fail(None, format!("'{}' not in the record", gate.metric));
    };
    // An oracle check by itself: its own verdict decides, unless bounds are given on it.
    if found.is_object() && found.get("pass").is_some() && gate.max.is_none() && gate.min.is_none() {
        let measured = found.get("measured").and_then(|x| x.as_f64());
        let pass = found.get("pass").and_then(|x| x.as_bool()).unwrap_or(false);
        let note = if pass {
            String::new()
        } else {
            format!(
                "oracle failed: error {} > tolerance {} (expected {})",
                fmt(found.get("error").and_then(|x| x.as_f64())),
                fmt(found.get("tolerance").and_then(|x| x.as_f64())),
                fmt(found.get("expected").and_then(|x| x.as_f64()))
            )
        };
        return Verdict { gate: gate.clone(), value: measured, pass, note };
    }
    let value = match found {
        serde_json::Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        // non-finite numbers are serialized as null (harness::record::nullable_f64)
        serde_json::Value::Null => Some(f64::NAN),
        v => v.as_f64(),
    };
    let Some(x) = value else {
        return fail(None, format!("'{}' is not a number", gate.metric));
    };
    if x.is_nan() {
        return fail(Some(x), "value is NaN".into());
    }
    if let Some(m) = gate.max {
        if x > m {
            return fail(Some(x), format!("{} > max {}", fmt(Some(x)), fmt(Some(m))));
        }
    }
    if let Some(m) = gate.min {
        if x < m {
            return fail(Some(x), format!("{} < min {}", fmt(Some(x)), fmt(Some(m))));
        }
    }
    Verdict { gate: gate.clone(), value: Some(x), pass: true, note: String::new() }
}

fn fmt(x: Option<f64>) -> String {
    match x {
        Some(v) if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e4) => format!("{v:.3e}"),
        Some(v) => format!("{v:.4}"),
        None => "-".into(),
    }
}

/// Checks every gate; returns the verdicts and a readable table.
pub fn check_all(gates: &[Gate], records: &[RunRecord]) -> (Vec<Verdict>, String) {
    let verdicts: Vec<Verdict> = gates.iter().map(|g| check(g, records)).collect();
    let rows: Vec<[String; 6]> = verdicts
        .iter()
        .map(|v| {
            let threshold = match (v.gate.min, v.gate.max) {
                (None, None) => "oracle passes".to_string(),
                (Some(a), None) => format!(">= {}", fmt(Some(a))),
                (None, Some(b)) => format!("<= {}", fmt(Some(b))),
                (Some(a), Some(b)) => format!("in [{}, {}]", fmt(Some(a)), fmt(Some(b))),
            };
            [
                if v.pass { "PASS".into() } else { "FAIL".into() },
                v.gate.solver.clone(),
                v.gate.case.clone(),
                v.gate.metric.clone(),
                fmt(v.value),
                if v.pass { threshold } else { format!("{threshold}: {}", v.note) },
            ]
        })
        .collect();
    let headers = ["result", "solver", "case", "metric", "value", "threshold"];
    let mut w: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c:<width$}", width = w[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
            + "\n"
    };
    let mut table = line(&headers.map(String::from));
    table += &line(&w.iter().map(|&n| "-".repeat(n)).collect::<Vec<_>>());
    for r in &rows {
        table += &line(r);
    }
    let failed = verdicts.iter().filter(|v| !v.pass).count();
    table += &format!("gates: {} checked, {} failing\n", verdicts.len(), failed);
    (verdicts, table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::record::{CaseRecord, MetricStat, Provenance, SolverRecord, Summary, SCHEMA};
    use harness::{OracleCheck, Params};

    fn record(status: RunStatus, natmap_max: f64, oracle_pass: bool) -> RunRecord {
        let mut summary = Summary::default();
        summary.metrics.insert("natmap_rel_l2".into(), MetricStat { max: natmap_max, mean: 0.0, last: 0.0 });
        let err = if oracle_pass { 0.0 } else { 2.0 };
        summary.oracle.insert("slides".into(), OracleCheck::with_error("slides", err, 0.0, err, 0.5));
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
                name: "slope".into(),
                label: "slope-a".into(),
                params: Params::default(),
                params_hash: "h1".into(),
            },
            solver: SolverRecord { name: "pgs".into(), params: Params::default(), params_hash: "h2".into() },
            status,
            reason: (status != RunStatus::Ok).then(|| "step 3: boom".into()),
            summary,
            steps: vec![],
            step_stride: 1,
            iterations: vec![],
        }
    }

    fn gate(metric: &str, max: Option<f64>) -> Gate {
        Gate {
            solver: "pgs".into(),
            case: "slope-a".into(),
            metric: metric.into(),
            max,
            min: None,
            case_hash: None,
            solver_hash: None,
            why: "test".into(),
        }
    }

    #[test]
    fn numeric_bounds() {
        let r = [record(RunStatus::Ok, 1e-7, true)];
        assert!(check(&gate("metrics.natmap_rel_l2.max", Some(1e-6)), &r).pass);
        let v = check(&gate("metrics.natmap_rel_l2.max", Some(1e-8)), &r);
        assert!(!v.pass && v.note.contains("> max"), "{}", v.note);
    }

    #[test]
    fn nan_missing_and_failed_runs_fail() {
        let nan = [record(RunStatus::Ok, f64::NAN, true)];
        assert_eq!(check(&gate("metrics.natmap_rel_l2.max", Some(1.0)), &nan).note, "value is NaN");
        let ok = [record(RunStatus::Ok, 0.0, true)];
        assert!(check(&gate("metrics.nope.max", Some(1.0)), &ok).note.contains("not in the record"));
        let mut other = gate("metrics.natmap_rel_l2.max", Some(1.0));
        other.case = "elsewhere".into();
        assert_eq!(check(&other, &ok).note, "no run record for this pair");
        let failed = [record(RunStatus::Failed, 0.0, true)];
        assert!(check(&gate("metrics.natmap_rel_l2.max", Some(1.0)), &failed).note.contains("step 3: boom"));
    }

    #[test]
    fn oracle_gate_follows_the_check() {
        assert!(check(&gate("oracle.slides", None), &[record(RunStatus::Ok, 0.0, true)]).pass);
        let v = check(&gate("oracle.slides", None), &[record(RunStatus::Ok, 0.0, false)]);
        assert!(!v.pass && v.note.contains("tolerance"), "{}", v.note);
    }

    #[test]
    fn pinned_hashes_detect_parameter_drift() {
        let r = [record(RunStatus::Ok, 0.0, true)];
        let mut g = gate("oracle.slides", None);
        g.case_hash = Some("h1".into());
        assert!(check(&g, &r).pass);
        g.solver_hash = Some("other".into());
        assert!(check(&g, &r).note.contains("solver parameters changed"));
    }

    #[test]
    fn pinning_to_the_suite_catches_records_from_other_parameters() {
        let r = [record(RunStatus::Ok, 0.0, true)];
        let (mut gates, suite) =
            parse_file("suite = \"s.toml\"\n[[gate]]\nsolver = \"pgs\"\ncase = \"slope-a\"\nmetric = \"oracle.slides\"\nwhy = \"w\"\n", "g")
                .unwrap();
        assert_eq!(suite.as_deref(), Some("s.toml"));
        let mut expected = ExpectedHashes::new();
        assert!(pin(&mut gates.clone(), &expected).unwrap_err().contains("not in the gates' suite"));
        expected.insert(("pgs".into(), "slope-a".into()), ("h1".into(), "h2".into()));
        pin(&mut gates, &expected).unwrap();
        assert!(check(&gates[0], &r).pass);
        expected.insert(("pgs".into(), "slope-a".into()), ("changed".into(), "h2".into()));
        let mut drifted =
            parse("[[gate]]\nsolver = \"pgs\"\ncase = \"slope-a\"\nmetric = \"oracle.slides\"\nwhy = \"w\"\n", "g")
                .unwrap();
        pin(&mut drifted, &expected).unwrap();
        assert!(check(&drifted[0], &r).note.contains("case parameters changed"));
    }

    #[test]
    fn parse_requires_a_bound_for_numeric_metrics() {
        let e = parse("[[gate]]\nsolver = \"pgs\"\ncase = \"c\"\nmetric = \"metrics.x.max\"\nwhy = \"w\"\n", "g.toml")
            .unwrap_err();
        assert!(e.starts_with("g.toml: gate 1") && e.contains("needs max or min"), "{e}");
        assert!(parse("[[gate]]\nsolver = 1\n", "g.toml").unwrap_err().starts_with("g.toml:"));
    }

    #[test]
    fn table_names_solver_case_metric_value_threshold() {
        let (_, table) =
            check_all(&[gate("metrics.natmap_rel_l2.max", Some(1e-8))], &[record(RunStatus::Ok, 1e-7, true)]);
        for needle in [
            "FAIL",
            "pgs",
            "slope-a",
            "metrics.natmap_rel_l2.max",
            "1.000e-7",
            "<= 1.000e-8",
            "gates: 1 checked, 1 failing",
        ] {
            assert!(table.contains(needle), "missing {needle} in\n{table}");
        }
    }
}
