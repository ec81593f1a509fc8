//! Work–precision: an accuracy measure against the cost (total solve time) over a sweep.
//!
//! A *sweep* is a set of at least two completed (`ok`) records with the same case and solver whose
//! parameters are equal except for one: the case's `dt`, or one solver setting (an iteration
//! budget, a tolerance, ...). Records differing in anything else are different sweeps. A record
//! with the same parameters as an earlier one (the shared baseline of a study's variant
//! directories) is counted once.
//!
//! Accuracy measure: for a `dt` sweep the error of the first oracle check that every record of the
//! sweep carries, in the order of [`ORACLE_PREFERENCE`] (then alphabetical), else
//! `natmap_rel_l2` (max over steps); for a solver-setting sweep `natmap_rel_l2` (mean over steps).
//! One figure per (case, swept parameter), one line per solver, each point labelled with its swept
//! value (`dt=0.005`, `tolerance=1e-6`).

use super::{
    color_of, dropped_note, fmt_num, render, slug, source_of, Figure, FigureError, Legend, Panel, Scale, Series, Style,
};
use records::{RunRecord, RunStatus};
use std::collections::BTreeMap;
use std::path::Path;

/// Oracle checks preferred as accuracy measures of `dt` sweeps.
pub const ORACLE_PREFERENCE: &[&str] = &["e_q", "acceleration", "max_penetration", "creep_speed", "top_drift"];

/// A sweep of one parameter.
#[derive(Debug, Clone)]
pub struct Sweep<'a> {
    /// Case registry name.
    pub case: String,
    /// Solver name.
    pub solver: String,
    /// `dt` or `solver.<key>`.
    pub param: String,
    /// The records, ordered by the swept value.
    pub records: Vec<&'a RunRecord>,
}

fn value_of<'a>(r: &'a RunRecord, param: &str) -> Option<&'a serde_json::Value> {
    match param.strip_prefix("solver.") {
        Some(k) => r.solver.params.0.get(k),
        None => r.case.params.0.get(param),
    }
}

fn sort_key(v: Option<&serde_json::Value>) -> f64 {
    v.and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

/// Finds every sweep in `records` (see the module doc).
pub fn sweeps(records: &[RunRecord]) -> Vec<Sweep<'_>> {
    let mut groups: BTreeMap<(String, String), Vec<&RunRecord>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.status == RunStatus::Ok) {
        groups.entry((r.case.name.clone(), r.solver.name.clone())).or_default().push(r);
    }
    let mut out = vec![];
    for ((case, solver), group) in groups {
        if group.len() < 2 {
            continue;
        }
        let mut candidates = vec!["dt".to_string()];
        candidates.extend(group[0].solver.params.0.keys().map(|k| format!("solver.{k}")));
        for param in candidates {
            let mut sub: BTreeMap<String, Vec<&RunRecord>> = BTreeMap::new();
            for r in &group {
                let (mut cp, mut sp) = (r.case.params.0.clone(), r.solver.params.0.clone());
                match param.strip_prefix("solver.") {
                    Some(k) => sp.remove(k),
                    None => cp.remove(&param),
                };
                let key = serde_json::to_string(&(cp, sp)).unwrap_or_default();
                sub.entry(key).or_default().push(r);
            }
            for (_, mut rs) in sub {
                let mut seen = std::collections::BTreeSet::new();
                rs.retain(|r| {
                    seen.insert(serde_json::to_string(&(&r.case.params.0, &r.solver.params.0)).unwrap_or_default())
                });
                let mut values: Vec<String> = rs.iter().map(|r| format!("{:?}", value_of(r, &param))).collect();
                values.sort();
                values.dedup();
                if values.len() < 2 {
                    continue;
                }
                rs.sort_by(|a, b| sort_key(value_of(a, &param)).total_cmp(&sort_key(value_of(b, &param))));
                out.push(Sweep { case: case.clone(), solver: solver.clone(), param: param.clone(), records: rs });
            }
        }
    }
    out
}

/// Notes the accuracy measure `name` of one sweep in `measure`, the axis label of a figure of
/// several sweeps: the common name, or `mixed` when the sweeps use different measures.
pub fn note_measure(measure: &mut String, name: &str, mixed: &str) {
    if measure.is_empty() {
        *measure = name.to_string();
    } else if measure != name {
        *measure = mixed.to_string();
    }
}

/// The accuracy measure of a sweep: `(name, value per record)`.
pub fn accuracy(s: &Sweep<'_>) -> (String, Vec<f64>) {
    let natmap = |stat: &str| {
        let v = s
            .records
            .iter()
            .map(|r| {
                r.summary
                    .metrics
                    .get("natmap_rel_l2")
                    .map(|m| if stat == "max" { m.max } else { m.mean })
                    .unwrap_or(f64::NAN)
            })
            .collect();
        (format!("natmap_rel_l2 ({stat} over steps)"), v)
    };
    if s.param != "dt" {
        return natmap("mean");
    }
    let common = |name: &str| s.records.iter().all(|r| r.summary.oracle.contains_key(name));
    let mut names: Vec<&str> = ORACLE_PREFERENCE.to_vec();
    let mut rest: Vec<&str> = s.records[0].summary.oracle.keys().map(|k| k.as_str()).collect();
    rest.retain(|k| !ORACLE_PREFERENCE.contains(k));
    names.extend(rest);
    match names.into_iter().find(|n| common(n)) {
        Some(n) => (format!("oracle {n}: error"), s.records.iter().map(|r| r.summary.oracle[n].error).collect()),
        None => natmap("max"),
    }
}

/// Draws one figure per (case, swept parameter); empty when the run directory holds no sweep.
pub fn figures(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Vec<Figure>, FigureError> {
    let all = sweeps(records);
    let mut by_key: BTreeMap<(String, String), Vec<&Sweep<'_>>> = BTreeMap::new();
    for s in &all {
        by_key.entry((s.case.clone(), s.param.clone())).or_default().push(s);
    }
    let mut out = vec![];
    for ((case, param), group) in by_key {
        let mut series = vec![];
        let mut sources = vec![];
        let mut lines = vec![];
        let mut measure = String::new();
        for s in &group {
            let (name, acc) = accuracy(s);
            note_measure(&mut measure, &name, "accuracy (measure per solver in the description)");
            let pts: Vec<(f64, f64)> =
                s.records.iter().zip(&acc).map(|(r, &a)| (r.summary.stage_times.solve_s, a)).collect();
            let values: Vec<String> = s
                .records
                .iter()
                .map(|r| {
                    value_of(r, &param).map(|v| v.as_f64().map(fmt_num).unwrap_or(v.to_string())).unwrap_or("—".into())
                })
                .collect();
            lines.push(format!("{}: {name} at {param} = {}", s.solver, values.join(", ")));
            sources.extend(s.records.iter().map(|r| source_of(r)));
            let n_same = group.iter().filter(|o| o.solver == s.solver).count();
            let label =
                if n_same > 1 { format!("{} [{}]", s.solver, s.records[0].case.label) } else { s.solver.clone() };
            let short = param.strip_prefix("solver.").unwrap_or(&param);
            series.push(Series {
                label,
                color: color_of(order, &s.solver),
                points: pts,
                style: Style::LinePoints,
                labels: values.iter().map(|v| format!("{short}={v}")).collect(),
            });
        }
        let panel = Panel {
            title: format!("{case}: sweep of {param}"),
            x_label: "total solve time [s]".into(),
            y_label: measure.clone(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            y_range: None,
            legend: Legend::UpperRight,
            series,
        };
        let (file, n, dropped) =
            render(dir, &format!("work-precision-{}-{}", slug(&case), slug(&param)), &[panel], 760, 460)?;
        out.push(Figure {
            kind: "work_precision",
            file,
            title: format!("Work–precision on {case} ({param} sweep)"),
            description: format!("Accuracy against total solve time over a sweep of {param}. {}.", lines.join("; ")),
            sources,
            series: n,
            notes: dropped_note(dropped).into_iter().collect(),
            steps: None,
        });
    }
    Ok(out)
}
