//! Scaling: cost per step against the scene's size, log-log, one line per solver, with the fitted
//! exponent (the least-squares slope of `log cost` over `log size`) in its label.
//!
//! A *size sweep* is a set of at least three completed (`ok`) records of one case and one solver,
//! with equal solver settings, whose case parameters are equal except for one of [`SIZE_PARAMS`]
//! (e.g. a suite's `[[grid]]` over clutter's `bodies`). The cost of a record is its mean time per
//! step of detection + assembly + solve (`summary.stage_times`, totals over the run, divided by the
//! steps), the quantity a user pays per step; metric evaluation is left out. Reference-engine
//! records carry only their solve time (detection and assembly happen inside the engine), so
//! their points are the engine's whole step.

use super::order::observed_order;
use super::{
    color_of, dropped_note, fmt_num, render, slug, source_of, Figure, FigureError, Legend, Panel, Scale, Series, Style,
};
use records::{RunRecord, RunStatus};
use std::collections::BTreeMap;
use std::path::Path;

/// Case parameters that measure a scene's size (number of objects, stacked bodies, plates,
/// robots, foundation springs, cells).
pub const SIZE_PARAMS: &[&str] = &["bodies", "n", "plates", "robots", "elements", "cells"];

/// Mean cost per step of a record: `(detect + assemble + solve) / steps` (s); NaN without steps.
pub fn cost_per_step(r: &RunRecord) -> f64 {
    let t = &r.summary.stage_times;
    if r.summary.steps == 0 {
        return f64::NAN;
    }
    (t.detect_s + t.assemble_s + t.solve_s) / r.summary.steps as f64
}

/// A size sweep: `(case, size parameter, solver, records ordered by size)`.
type SizeSweep<'a> = (String, String, String, Vec<&'a RunRecord>);

/// Every size sweep of `records` (see the module doc).
pub fn size_sweeps(records: &[RunRecord]) -> Vec<SizeSweep<'_>> {
    let mut out = vec![];
    for param in SIZE_PARAMS {
        let mut groups: BTreeMap<(String, String, String), Vec<&RunRecord>> = BTreeMap::new();
        for r in records.iter().filter(|r| r.status == RunStatus::Ok) {
            let Some(size) = r.case.params.0.get(*param).and_then(|v| v.as_f64()) else { continue };
            if size.is_nan() || size <= 0.0 {
                continue;
            }
            let mut rest = r.case.params.0.clone();
            rest.remove(*param);
            let key = serde_json::to_string(&(rest, &r.solver.params.0)).unwrap_or_default();
            groups.entry((r.case.name.clone(), r.solver.name.clone(), key)).or_default().push(r);
        }
        for ((case, solver, _), mut rs) in groups {
            let size_of = |r: &RunRecord| r.case.params.0.get(*param).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
            rs.sort_by(|a, b| size_of(a).total_cmp(&size_of(b)));
            rs.dedup_by(|a, b| size_of(a) == size_of(b));
            if rs.len() >= 3 {
                out.push((case, param.to_string(), solver, rs));
            }
        }
    }
    out
}

/// One figure per (case, size parameter) with a size sweep; empty when there is none.
pub fn figures(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Vec<Figure>, FigureError> {
    let mut by_case: BTreeMap<(String, String), Vec<SizeSweep<'_>>> = BTreeMap::new();
    for s in size_sweeps(records) {
        by_case.entry((s.0.clone(), s.1.clone())).or_default().push(s);
    }
    let mut out = vec![];
    for ((case, param), group) in by_case {
        let (mut series, mut sources, mut lines) = (vec![], vec![], vec![]);
        for (_, _, solver, rs) in &group {
            let points: Vec<(f64, f64)> = rs
                .iter()
                .map(|r| (r.case.params.0.get(&param).and_then(|v| v.as_f64()).unwrap_or(f64::NAN), cost_per_step(r)))
                .collect();
            let p = observed_order(&points).map_or("—".to_string(), |p| format!("{p:.2}"));
            let reference = rs.iter().any(|r| r.is_reference());
            let who = if reference { format!("{solver} (reference engine)") } else { solver.clone() };
            let cells: Vec<String> =
                points.iter().map(|(n, c)| format!("{} → {} ms", fmt_num(*n), fmt_num(c * 1e3))).collect();
            lines.push(format!("{who}: exponent {p} ({})", cells.join(", ")));
            sources.extend(rs.iter().map(|r| source_of(r)));
            series.push(Series {
                label: format!("{who} (exponent {p})"),
                color: color_of(order, solver),
                points,
                style: Style::LinePoints,
                labels: vec![],
            });
        }
        let panel = Panel {
            title: format!("{case}: cost per step against {param}"),
            x_label: param.clone(),
            y_label: "detection + assembly + solve per step [s]".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            y_range: None,
            legend: Legend::LowerRight,
            series,
        };
        let (file, n, dropped) = render(dir, &format!("scaling-{}-{}", slug(&case), slug(&param)), &[panel], 760, 460)?;
        out.push(Figure {
            kind: "scaling",
            file,
            title: format!("Scaling on {case} ({param})"),
            description: format!(
                "Mean time per step of contact detection, assembly and solve against {param}, log-log; the \
                 exponent is the least-squares slope of log cost over log {param} (1 = linear in the scene's \
                 size). {}.",
                lines.join("; ")
            ),
            sources,
            series: n,
            notes: dropped_note(dropped).into_iter().collect(),
            steps: None,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records;

    /// A completed clutter record of `solver` with `bodies` objects, `steps` steps and the given
    /// run totals of detection, assembly and solve.
    fn record(solver: &str, bodies: u64, mu: f64, steps: usize, totals: [f64; 3]) -> RunRecord {
        let mut r = test_records::record(&format!("clutter-{bodies}"), solver, RunStatus::Ok, totals[2], &[]);
        r.case.params.0.insert("bodies".into(), bodies.into());
        r.case.params.0.insert("mu".into(), mu.into());
        r.summary.steps = steps;
        r.summary.stage_times.detect_s = totals[0];
        r.summary.stage_times.assemble_s = totals[1];
        r.summary.stage_times.metrics_s = 1.0;
        r
    }

    #[test]
    fn cost_is_detection_assembly_and_solve_per_step() {
        let r = record("sap", 40, 1.0, 10, [0.1, 0.2, 0.7]);
        assert!((cost_per_step(&r) - 0.1).abs() < 1e-15, "metric evaluation is not part of the cost");
        assert!(cost_per_step(&record("sap", 40, 1.0, 0, [0.0; 3])).is_nan());
    }

    #[test]
    fn sweeps_over_one_size_parameter_with_their_exponent() {
        // sap costs n^1.5 per step, pgs n^1; a pgs record with another mu is a different scene and
        // a two-point sap sweep at mu = 0.5 is too short to fit.
        let mut rs = vec![];
        for n in [10u64, 20, 40, 80] {
            let sap = 1e-5 * (n as f64).powf(1.5);
            rs.push(record("sap", n, 1.0, 100, [0.0, 0.0, 100.0 * sap]));
            rs.push(record("pgs", n, 1.0, 50, [50.0 * 1e-6 * n as f64, 0.0, 0.0]));
        }
        rs.push(record("pgs", 160, 0.3, 50, [1.0, 1.0, 1.0]));
        rs.push(record("sap", 10, 0.5, 100, [1.0, 1.0, 1.0]));
        rs.push(record("sap", 20, 0.5, 100, [1.0, 1.0, 1.0]));
        let sweeps = size_sweeps(&rs);
        assert_eq!(sweeps.len(), 2, "{:?}", sweeps.iter().map(|s| (&s.2, s.3.len())).collect::<Vec<_>>());
        for (case, param, solver, records) in &sweeps {
            assert_eq!((case.as_str(), param.as_str(), records.len()), ("clutter", "bodies", 4));
            let points: Vec<(f64, f64)> =
                records.iter().map(|r| (r.case.params.0["bodies"].as_f64().unwrap(), cost_per_step(r))).collect();
            let expected = if solver == "sap" { 1.5 } else { 1.0 };
            assert!((observed_order(&points).unwrap() - expected).abs() < 1e-12, "{solver}");
        }
        let dir = std::env::temp_dir().join(format!("signorini-scaling-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("figures")).unwrap();
        let figs = figures(&dir, &rs, &["sap".into(), "pgs".into()]).unwrap();
        assert_eq!(figs.len(), 1);
        assert_eq!(figs[0].series, 2);
        assert!(figs[0].description.contains("sap: exponent 1.50"), "{}", figs[0].description);
        assert!(figs[0].description.contains("pgs: exponent 1.00"), "{}", figs[0].description);
        std::fs::remove_dir_all(&dir).ok();
    }
}
