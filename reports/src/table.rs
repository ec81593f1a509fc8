//! The solver × case table shared by the HTML and Markdown reports: one row per run record with
//! its status, cost, key metrics, oracle checks, gate verdicts and the reason for every skipped or
//! failed pair.
//!
//! Cells never invent data: a value the record does not hold is [`MISSING`] ("—"), a NaN is
//! written "NaN". Cost and metric cells of a pair that completed no step are missing.

use crate::figures::fmt_num;
use crate::gate::GateReport;
use harness::record::{RunRecord, RunStatus};

/// How a missing value is shown.
pub const MISSING: &str = "—";

/// Column headers of [`row`].
pub const HEADERS: [&str; 14] = [
    "case",
    "solver",
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

/// Whether `r` is a reference engine's record (`solver.params.reference = true`, written by
/// `signorini grade`); false for every solver's record, including records written before the
/// marker existed.
pub fn is_reference(r: &RunRecord) -> bool {
    r.solver.params.0.get("reference").and_then(|v| v.as_bool()).unwrap_or(false)
}

/// The solver column of `r`: the solver name, or "`engine` (reference engine)".
pub fn solver_label(r: &RunRecord) -> String {
    if is_reference(r) {
        format!("{} (reference engine)", r.solver.name)
    } else {
        r.solver.name.clone()
    }
}

/// One table row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Cells in [`HEADERS`] order.
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

/// The row of `r`; `gates` is the gate check of the run directory (`None`: no gates given).
pub fn row(r: &RunRecord, gates: Option<&GateReport>) -> Row {
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
    let (gate, gate_tone) = match gates {
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
    Row {
        cells: vec![
            r.case.label.clone(),
            solver_label(r),
            status_word(r).into(),
            if r.status == RunStatus::Skipped { MISSING.into() } else { s.steps.to_string() },
            if ran { s.unconverged_steps.to_string() } else { MISSING.into() },
            cell(when(s.iterations_per_step.mean)),
            cell(when(s.wall_per_step_s.median * 1e3)),
            cell(when(s.wall_per_step_s.p95 * 1e3)),
            cell(metric("natmap_rel_l2")),
            cell(metric("penetration_max")),
            cell(metric("energy_injection")),
            cell(metric("creep_speed_max")),
            oracle,
            gate,
        ],
        status_tone,
        oracle_tone,
        gate_tone,
        reason: r.reason.clone(),
    }
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

/// What [`fclib_regularised`]'s own-model residual is, for the reports' section text.
pub const FCLIB_REGULARISED_NOTE: &str = "sap and drumwright solve a compliant, regularised model, not the rigid \
    Coulomb NCP: the profiles grade them on the rigid natural-map error; the own-model residual is the one their own \
    stopping test uses, the last logged value (sap: the relative gradient grad_rel of its convex cost; drumwright: \
    max(r_prim, r_dual) of its conic solves).";
