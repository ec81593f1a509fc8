//! Timing: median solve time per step vs problem size (mean number of contacts over the recorded
//! steps, from `steps[].metrics.n_contacts`), log-log, one series per solver, one point per run
//! record that completed at least one step.
//!
//! Run records of `signorini.run/1` carry no DOF count, and body counts only as case-specific
//! parameters, so the size axis is contacts.

use super::{color_of, dropped_note, render, source_of, Figure, FigureError, Legend, Panel, Scale, Series, Style};
use records::{RunRecord, RunStatus};
use std::path::Path;

/// Mean number of contacts over the recorded steps (NaN when none was recorded).
pub fn mean_contacts(r: &RunRecord) -> f64 {
    if r.steps.is_empty() {
        return f64::NAN;
    }
    r.steps.iter().map(|s| s.metrics.n_contacts as f64).sum::<f64>() / r.steps.len() as f64
}

/// Draws the timing figure; `None` when no record completed a step.
pub fn figure(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Option<Figure>, FigureError> {
    let mut series = vec![];
    let mut sources = vec![];
    for solver in order {
        let mut pts: Vec<(f64, f64)> = vec![];
        for r in records.iter().filter(|r| &r.solver.name == solver && r.status != RunStatus::Skipped) {
            if r.summary.steps == 0 {
                continue;
            }
            pts.push((mean_contacts(r), r.summary.wall_per_step_s.median));
            sources.push(source_of(r));
        }
        if pts.is_empty() {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let reference = records.iter().any(|r| &r.solver.name == solver && r.is_reference());
        series.push(Series {
            label: if reference { format!("{solver} (reference engine)") } else { solver.clone() },
            color: color_of(order, solver),
            points: pts,
            style: Style::Points,
            labels: vec![],
        });
    }
    if series.is_empty() {
        return Ok(None);
    }
    let panel = Panel {
        title: "solve time per step vs contacts".into(),
        x_label: "mean contacts per step".into(),
        y_label: "median solve time per step [s]".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Log,
        y_range: None,
        legend: Legend::LowerRight,
        series,
    };
    let (file, n, dropped) = render(dir, "timing", &[panel], 760, 460)?;
    Ok(Some(Figure {
        kind: "timing",
        file,
        title: "Timing vs problem size".into(),
        description: "One point per run record: median wall time of Solver::step per step against the mean \
                      number of contacts per recorded step (log-log)."
            .into(),
        sources,
        series: n,
        notes: dropped_note(dropped).into_iter().collect(),
        steps: None,
    }))
}
