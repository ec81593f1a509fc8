//! The solver × case table shared by the HTML and Markdown reports: one row per run record with
//! its status, cost, key metrics, oracle checks, gate verdicts and the reason for every skipped or
//! failed pair.
//!
//! The *settings* column lists the record's parameters that differ from the registered defaults
//! (case parameters as `key=value`, solver settings as `solver.key=value`, the `--set` syntax), so
//! the rows of a sweep are told apart; the optional *ratio to baseline* column (`signorini report
//! --baseline pgs`) is the record's total solve time over the baseline solver's on the same case
//! variant.
//!
//! Cells never invent data: a value the record does not hold is [`MISSING`] ("—"), a NaN is
//! written "NaN". Cost and metric cells of a pair that completed no step are missing.

use crate::gate::GateReport;
use crate::text::fmt_num;
use api::Params;
use records::{RunRecord, RunStatus};
use std::collections::BTreeMap;

/// How a missing value is shown.
pub const MISSING: &str = "—";

/// Column headers of [`row`] without a baseline (see [`headers`]).
pub const HEADERS: [&str; 15] = [
    "case",
    "solver",
    "settings",
    "status",
    "steps",
    "unconv. steps",
    "iters/ step",
    "solve ms/step median",
    "solve ms/step p95",
    "natmap_ rel_l2 max",
    "penetration max [m]",
    "energy injection max [J]",
    "creep speed max [m/s]",
    "oracle",
    "gates",
];

/// The column headers of [`row`] with `ctx`: [`HEADERS`], and with a baseline solver the
/// column `solve time / <baseline>` after the solve times.
pub fn headers(baseline: Option<&str>) -> Vec<String> {
    let mut h: Vec<String> = HEADERS.iter().map(|s| s.to_string()).collect();
    if let Some(b) = baseline {
        let at = h.iter().position(|c| c == "solve ms/step p95").expect("in HEADERS") + 1;
        h.insert(at, format!("solve time / {b}"));
    }
    h
}

/// The registered default parameters of every case and solver, for the settings column.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defaults {
    /// Case name -> default parameters.
    pub cases: BTreeMap<String, Params>,
    /// Solver name -> default settings.
    pub solvers: BTreeMap<String, Params>,
}

fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The settings cell of `r`: its parameters that differ from `defaults` (`key=value` for the
/// case, `solver.key=value` for the solver, each sorted by key; "defaults" when none differ);
/// [`MISSING`] for the part whose case or solver has no registered defaults (a reference engine,
/// an FCLIB problem).
pub fn settings(r: &RunRecord, defaults: &Defaults) -> String {
    let diff = |params: &Params, def: Option<&Params>, prefix: &str| -> Option<Vec<String>> {
        let def = def?;
        let mut out: Vec<String> = params
            .0
            .iter()
            .filter(|(k, v)| def.0.get(*k) != Some(*v))
            .map(|(k, v)| format!("{prefix}{k}={}", value_text(v)))
            .collect();
        out.sort();
        Some(out)
    };
    let case = diff(&r.case.params, defaults.cases.get(&r.case.name), "");
    let solver = diff(&r.solver.params, defaults.solvers.get(&r.solver.name), "solver.");
    if case.is_none() && solver.is_none() {
        return MISSING.into();
    }
    let mut parts: Vec<String> = case.unwrap_or_else(|| vec![format!("case {MISSING}")]);
    parts.extend(solver.unwrap_or_else(|| vec![format!("solver {MISSING}")]));
    if parts.is_empty() {
        "defaults".into()
    } else {
        parts.join(", ")
    }
}

/// The total solve time of `r` over the baseline solver's on the same case variant (same label
/// and case parameters), both floored at [`crate::profile::Measure::floor`]; `None` when either
/// did not complete or the baseline did not run that variant.
pub fn baseline_ratio(r: &RunRecord, baseline: &str, records: &[RunRecord]) -> Option<f64> {
    let floor = crate::profile::Measure::SolveTime.floor();
    let b = records.iter().find(|b| {
        b.solver.name == baseline
            && !b.is_reference()
            && b.case.label == r.case.label
            && b.case.params_hash == r.case.params_hash
            && b.status == RunStatus::Ok
    })?;
    let (t, tb) = (r.summary.stage_times.solve_s, b.summary.stage_times.solve_s);
    (r.status == RunStatus::Ok && t.is_finite() && tb.is_finite()).then(|| t.max(floor) / tb.max(floor))
}

/// What a row needs besides its record.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The gate check of the run directory (`None`: no gates given).
    pub gates: Option<&'a GateReport>,
    /// Registered defaults, for the settings column.
    pub defaults: &'a Defaults,
    /// The baseline solver of the ratio column, when asked for.
    pub baseline: Option<&'a str>,
    /// Every record of the run directory (the baseline's records among them).
    pub records: &'a [RunRecord],
}

/// A cell's tone, for colouring in HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Nothing special.
    Plain,
    /// Good (ok, pass).
    Good,
    /// Bad (failed, gate fail).
    Bad,
    /// Not run.
    Muted,
    /// A reference engine's row (MuJoCo, Drake): shown in italics.
    Reference,
}

/// The solver column of `r`: the solver name, or "`engine` (reference engine)".
pub fn solver_label(r: &RunRecord) -> String {
    if r.is_reference() {
        format!("{} (reference engine)", r.solver.name)
    } else {
        r.solver.name.clone()
    }
}

/// One table row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Cells in the order of [`headers`] (with the context's baseline).
    pub cells: Vec<String>,
    /// Tone of the status cell.
    pub status_tone: Tone,
    /// Tone of the oracle cell.
    pub oracle_tone: Tone,
    /// Tone of the gates cell.
    pub gate_tone: Tone,
    /// Why the pair failed or was skipped.
    pub reason: Option<String>,
}

/// A number cell: missing as "—", NaN as "NaN".
pub fn cell(x: Option<f64>) -> String {
    match x {
        None => MISSING.into(),
        Some(v) => fmt_num(v),
    }
}

/// Status word of a record.
pub fn status_word(r: &RunRecord) -> &'static str {
    match r.status {
        RunStatus::Ok => "ok",
        RunStatus::Failed => "failed",
        RunStatus::Skipped => "skipped",
    }
}

/// The row of `r`, with the columns of [`headers`]`(ctx.baseline)`.
pub fn row(r: &RunRecord, ctx: &Context<'_>) -> Row {
    let s = &r.summary;
    let ran = s.steps > 0;
    let when = |x: f64| if ran { Some(x) } else { None };
    let metric = |name: &str| if ran { s.metrics.get(name).map(|m| m.max) } else { None };
    let (oracle, oracle_tone) = if s.oracle.is_empty() {
        (MISSING.to_string(), Tone::Plain)
    } else {
        let failed: Vec<&str> = s.oracle.values().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
        let n = s.oracle.len();
        if failed.is_empty() {
            (format!("{n}/{n} pass"), Tone::Good)
        } else {
            (format!("{}/{n} pass (fail: {})", n - failed.len(), failed.join(", ")), Tone::Bad)
        }
    };
    let (gate, gate_tone) = match ctx.gates {
        None => (MISSING.to_string(), Tone::Plain),
        Some(rep) => match rep.pair_cell(&r.solver.name, &r.case.label) {
            None => ("not gated".to_string(), Tone::Muted),
            Some((text, true)) => (text, Tone::Good),
            Some((text, false)) => (text, Tone::Bad),
        },
    };
    let status_tone = match r.status {
        RunStatus::Ok => Tone::Good,
        RunStatus::Failed => Tone::Bad,
        RunStatus::Skipped => Tone::Muted,
    };
    let mut cells = vec![
        r.case.label.clone(),
        solver_label(r),
        settings(r, ctx.defaults),
        status_word(r).into(),
        if r.status == RunStatus::Skipped { MISSING.into() } else { s.steps.to_string() },
        if ran { s.unconverged_steps.to_string() } else { MISSING.into() },
        cell(when(s.iterations_per_step.mean)),
        cell(when(s.wall_per_step_s.median * 1e3)),
        cell(when(s.wall_per_step_s.p95 * 1e3)),
    ];
    if let Some(b) = ctx.baseline {
        cells.push(cell(baseline_ratio(r, b, ctx.records)));
    }
    cells.extend([
        cell(metric("natmap_rel_l2")),
        cell(metric("penetration_max")),
        cell(metric("energy_injection")),
        cell(metric("creep_speed_max")),
        oracle,
        gate,
    ]);
    Row { cells, status_tone, oracle_tone, gate_tone, reason: r.reason.clone() }
}

/// The solver-stage table (records whose solver reports its own stages,
/// `summary.solver_stages_s`): `(headers, rows)` with case, solver, steps, milliseconds per step
/// of every stage and of the whole solve; `None` when no record has stages.
pub fn solver_stages(records: &[RunRecord]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let with: Vec<&RunRecord> = records.iter().filter(|r| !r.summary.solver_stages_s.is_empty()).collect();
    let mut names: Vec<&String> = with.iter().flat_map(|r| r.summary.solver_stages_s.keys()).collect();
    names.sort();
    names.dedup();
    if with.is_empty() {
        return None;
    }
    let mut headers: Vec<String> = vec!["case".into(), "solver".into(), "steps".into()];
    headers.extend(names.iter().map(|n| format!("{n} ms/step")));
    headers.push("solve ms/step".into());
    let per_step = |r: &RunRecord, s: Option<f64>| {
        let n = r.summary.steps.max(1) as f64;
        s.map_or_else(|| MISSING.to_string(), |s| format!("{:.3}", 1e3 * s / n))
    };
    let rows = with
        .iter()
        .map(|r| {
            let mut row = vec![r.case.label.clone(), solver_label(r), r.summary.steps.to_string()];
            row.extend(names.iter().map(|n| per_step(r, r.summary.solver_stages_s.get(*n).copied())));
            row.push(per_step(r, Some(r.summary.stage_times.solve_s)));
            row
        })
        .collect();
    Some((headers, rows))
}

/// The FCLIB records of the regularised models (case `fclib` with a `model_residual` metric:
/// sap, drumwright; written by `signorini fclib bench`), graded apart: headers and one row per
/// record with the rigid `fclib_error` (what the profiles grade), whether it reached the
/// campaign's tolerance, and the solver's own-model residual (the residual its own stopping test
/// uses). `None` when there is no such record.
pub fn fclib_regularised(records: &[RunRecord]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let with: Vec<&RunRecord> =
        records.iter().filter(|r| r.case.name == "fclib" && r.summary.metrics.contains_key("model_residual")).collect();
    if with.is_empty() {
        return None;
    }
    let headers = ["problem", "solver", "rigid fclib_error", "rigid solved", "own-model residual"];
    let last = |r: &RunRecord, k: &str| cell(r.summary.metrics.get(k).map(|m| m.last));
    let rows = with
        .iter()
        .map(|r| {
            vec![
                r.case.label.clone(),
                solver_label(r),
                last(r, "fclib_error"),
                if r.summary.unconverged_steps == 0 { "yes".into() } else { "no".into() },
                last(r, "model_residual"),
            ]
        })
        .collect();
    Some((headers.iter().map(|h| h.to_string()).collect(), rows))
}

/// Every FCLIB pair (case `fclib`) as one matrix: a row per problem, a column per solver (the
/// reference engines after signorini's), each cell the harness's `fclib_error` (`✗` above the
/// campaign's tolerance, i.e. the pair counts as unsolved), the iterations and the solve time,
/// `refused` for a pair the problem could not be given to, `failed` for a failed one; a last row
/// counts the problems each solver solved. `None` when there is no FCLIB record.
pub fn fclib_matrix(records: &[RunRecord]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let fclib: Vec<&RunRecord> = records.iter().filter(|r| r.case.name == "fclib").collect();
    if fclib.is_empty() {
        return None;
    }
    let mut solvers: Vec<(bool, String)> = fclib.iter().map(|r| (r.is_reference(), r.solver.name.clone())).collect();
    solvers.sort();
    solvers.dedup();
    let mut problems: Vec<String> = fclib.iter().map(|r| r.case.label.clone()).collect();
    problems.sort();
    problems.dedup();
    let solved = |r: &RunRecord| r.status == RunStatus::Ok && r.summary.unconverged_steps == 0;
    let mut counts = vec![0usize; solvers.len()];
    let mut rows = vec![];
    for p in &problems {
        let mut row = vec![p.clone()];
        for (k, (_, s)) in solvers.iter().enumerate() {
            let r = fclib.iter().find(|r| &r.case.label == p && &r.solver.name == s);
            row.push(match r {
                None => "—".into(),
                Some(r) if r.status == RunStatus::Skipped => "refused".into(),
                Some(r) if r.status == RunStatus::Failed => "failed".into(),
                Some(r) => {
                    counts[k] += usize::from(solved(r));
                    let e = r.summary.metrics.get("fclib_error").map_or(f64::NAN, |m| m.last);
                    format!(
                        "{e:.1e}{} / {} it / {} ms",
                        if solved(r) { "" } else { " ✗" },
                        r.summary.iterations_per_step.max,
                        cell(Some(1e3 * r.summary.stage_times.solve_s))
                    )
                }
            });
        }
        rows.push(row);
    }
    let mut last = vec![format!("solved (of {})", problems.len())];
    last.extend(counts.iter().map(|c| c.to_string()));
    rows.push(last);
    let mut headers = vec!["problem".to_string()];
    headers.extend(solvers.iter().map(|(reference, s)| if *reference { format!("*{s}*") } else { s.clone() }));
    Some((headers, rows))
}

/// What [`fclib_matrix`] shows, for the reports' section text.
pub const FCLIB_MATRIX_NOTE: &str = "Each cell: the harness's error of the answer (Siconos's scaling, computed from \
    the returned impulses alone; ✗: above the campaign's tolerance, unsolved), the solver's iterations and its \
    solve time; reference engines in italics.";

/// What [`fclib_regularised`]'s own-model residual is, for the reports' section text.
pub const FCLIB_REGULARISED_NOTE: &str = "sap and drumwright solve a compliant, regularised model, not the rigid \
    Coulomb NCP: the profiles grade them on the rigid natural-map error; the own-model residual is the one their own \
    stopping test uses, the last logged value (sap: the relative gradient grad_rel of its convex cost; drumwright: \
    max(r_prim, r_dual) of its conic solves).";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::record;
    use serde_json::json;

    fn params(pairs: &[(&str, serde_json::Value)]) -> Params {
        Params(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    /// Two points of a sweep (dt and a solver tolerance) differ in the settings column; a record
    /// at the defaults reads "defaults"; an unregistered solver's part is missing.
    #[test]
    fn settings_tell_the_rows_of_a_sweep_apart() {
        let defaults = Defaults {
            cases: [("slope".to_string(), params(&[("dt", json!(0.01)), ("shape", json!("box"))]))].into(),
            solvers: [("pgs".to_string(), params(&[("tolerance", json!(1e-6))]))].into(),
        };
        let mut a = record("slope", "pgs", RunStatus::Ok, 1.0, &[]);
        a.case.params = params(&[("dt", json!(0.01)), ("shape", json!("box"))]);
        a.solver.params = params(&[("tolerance", json!(1e-6))]);
        assert_eq!(settings(&a, &defaults), "defaults");
        let mut b = a.clone();
        b.case.params.0.insert("dt".into(), json!(0.005));
        b.solver.params.0.insert("tolerance".into(), json!(1e-8));
        let mut c = b.clone();
        c.case.params.0.insert("shape".into(), json!("sphere"));
        assert_eq!(settings(&b, &defaults), "dt=0.005, solver.tolerance=1e-8");
        assert_eq!(settings(&c, &defaults), "dt=0.005, shape=sphere, solver.tolerance=1e-8");
        let mut m = a.clone();
        m.solver.name = "mujoco".into();
        assert_eq!(settings(&m, &defaults), format!("solver {MISSING}"));
    }

    /// pgs 2 s, other 3 s on one variant: ratio 1.5 (and 1 for pgs itself); a variant pgs did
    /// not run, or a pair that did not complete, has no ratio.
    #[test]
    fn ratio_to_baseline_is_the_total_solve_time_ratio_on_the_same_variant() {
        let recs = vec![
            record("slope", "pgs", RunStatus::Ok, 2.0, &[]),
            record("slope", "other", RunStatus::Ok, 3.0, &[]),
            record("stack", "other", RunStatus::Ok, 3.0, &[]),
            record("slope", "broken", RunStatus::Failed, 0.1, &[]),
        ];
        assert_eq!(baseline_ratio(&recs[1], "pgs", &recs), Some(1.5));
        assert_eq!(baseline_ratio(&recs[0], "pgs", &recs), Some(1.0));
        assert_eq!(baseline_ratio(&recs[2], "pgs", &recs), None);
        assert_eq!(baseline_ratio(&recs[3], "pgs", &recs), None);
        let defaults = Defaults::default();
        let ctx = Context { gates: None, defaults: &defaults, baseline: Some("pgs"), records: &recs };
        let h = headers(Some("pgs"));
        let col = h.iter().position(|c| c == "solve time / pgs").unwrap();
        assert_eq!(row(&recs[1], &ctx).cells[col], "1.5");
        assert_eq!(row(&recs[1], &ctx).cells.len(), h.len());
        assert_eq!(headers(None).len(), HEADERS.len());
    }

    /// The FCLIB matrix: a row per problem, signorini's solvers before the reference engines, the
    /// harness's verdict per cell (✗ when unsolved), refusals and failures named, and the count of
    /// solved problems per solver; nothing without FCLIB records.
    #[test]
    fn the_fclib_matrix_shows_every_pair_and_counts_the_solved() {
        let fclib = |label: &str, solver: &str, status: RunStatus, err: f64, unconverged: usize| {
            let mut r = record(label, solver, status, 0.002, &[]);
            r.case.name = "fclib".into();
            r.summary.unconverged_steps = unconverged;
            r.summary.iterations_per_step.max = 7.0;
            r.summary.metrics.insert("fclib_error".into(), records::metric_stat(&[err]));
            r
        };
        let mut siconos = fclib("a", "siconos-nsgs", RunStatus::Ok, 1e-9, 0);
        siconos.solver.params = Params(serde_json::json!({"reference": true}).as_object().unwrap().clone());
        let recs = vec![
            fclib("b", "pgs", RunStatus::Ok, 2e-8, 1),
            fclib("a", "pgs", RunStatus::Ok, 3e-9, 0),
            fclib("a", "canal", RunStatus::Skipped, f64::NAN, 0),
            fclib("b", "canal", RunStatus::Failed, f64::NAN, 0),
            siconos,
        ];
        let (h, rows) = fclib_matrix(&recs).unwrap();
        assert_eq!(h, ["problem", "canal", "pgs", "*siconos-nsgs*"]);
        assert_eq!(rows[0], ["a", "refused", "3.0e-9 / 7 it / 2 ms", "1.0e-9 / 7 it / 2 ms"]);
        assert_eq!(rows[1], ["b", "failed", "2.0e-8 ✗ / 7 it / 2 ms", "—"]);
        assert_eq!(rows[2], ["solved (of 2)", "0", "1", "1"]);
        assert!(fclib_matrix(&[record("slope", "pgs", RunStatus::Ok, 1.0, &[])]).is_none());
    }
}
