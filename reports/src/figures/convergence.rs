//! Convergence: the solver's own residual vs iteration and vs time (log scale), one line per
//! solver, for one case.
//!
//! Each solver logs its own columns (`record.iterations[].log`); the residual drawn is the first
//! column of [`RESIDUAL_PREFERENCE`] the log has, else the first column (other than `time_s`)
//! with a positive finite value. The legend names the column, so solvers whose residuals differ in
//! definition are never silently compared as equals. Of the logged steps of a record, the one with
//! the most iterations (the hardest logged step; the earliest on ties) is drawn. Several records
//! of one solver (a study directory) are labelled by the settings that differ
//! ([`super::variant_label`]).

use super::{
    dropped_note, render, source_of, variant_color, variant_label, Figure, Legend, Panel, Scale, Series, Style,
};
use harness::log::IterationLog;
use harness::record::{IterationRecord, RunRecord};
use std::path::Path;

/// Residual columns in order of preference: natural-map residuals (the Siconos measure) first,
/// then gradient norms, then the relative change of the iterate.
pub const RESIDUAL_PREFERENCE: &[&str] = &[
    "natmap_rel_l2",
    "natmap_abs_l2",
    "natmap_model_abs_l2",
    "grad_scaled_l2",
    "grad_l2",
    "residual_l2",
    "merit_l2",
    "rel_change_linf",
    "rel_change_l2",
];

/// The residual column drawn for `log` (see the module doc).
pub fn residual_column(log: &IterationLog) -> Option<&str> {
    RESIDUAL_PREFERENCE.iter().copied().find(|c| log.column(c).is_some()).or_else(|| {
        log.names
            .iter()
            .zip(&log.columns)
            .find(|(n, col)| n.as_str() != "time_s" && col.iter().any(|v| v.is_finite() && *v > 0.0))
            .map(|(n, _)| n.as_str())
    })
}

/// The logged step drawn for a record: the one with the most iterations (earliest on ties).
pub fn hardest_logged_step(r: &RunRecord) -> Option<&IterationRecord> {
    r.iterations.iter().filter(|it| !it.log.is_empty()).fold(None, |best: Option<&IterationRecord>, it| match best {
        Some(b) if b.log.len() >= it.log.len() => Some(b),
        _ => Some(it),
    })
}

/// Draws the convergence figure of one case from its `records` (one per solver); `None` when no
/// record has an iteration log with a residual column.
pub fn figure(
    dir: &Path,
    case_label: &str,
    records: &[&RunRecord],
    order: &[String],
) -> Result<Option<Figure>, String> {
    let (mut by_iter, mut by_time, mut sources, mut picked) = (vec![], vec![], vec![], vec![]);
    let labels: Vec<String> = records.iter().map(|r| variant_label(r, records)).collect();
    for (r, name) in records.iter().zip(&labels) {
        let Some(it) = hardest_logged_step(r) else { continue };
        let Some(col) = residual_column(&it.log) else { continue };
        let y = it.log.column(col).expect("column exists");
        let t = it.log.column("time_s").unwrap_or(&[]);
        let label = format!("{name}: {col}");
        let color = variant_color(order, &r.solver.name, name, &labels);
        by_iter.push(Series {
            label: label.clone(),
            color,
            points: y.iter().enumerate().map(|(i, &v)| ((i + 1) as f64, v)).collect(),
            style: Style::Line,
        });
        by_time.push(Series {
            label,
            color,
            points: t.iter().zip(y).map(|(&t, &v)| (t, v)).collect(),
            style: Style::Line,
        });
        sources.push(source_of(r));
        picked.push(format!("{name} step {} ({} iterations)", it.step, it.log.len()));
    }
    if by_iter.is_empty() {
        return Ok(None);
    }
    let panel = |title: &str, x: &str, series| Panel {
        title: title.into(),
        x_label: x.into(),
        y_label: "solver residual".into(),
        x_scale: Scale::Linear,
        y_scale: Scale::Log,
        y_range: None,
        legend: Legend::UpperRight,
        series,
    };
    let panels =
        [panel("residual vs iteration", "iteration", by_iter), panel("residual vs time", "time in step [s]", by_time)];
    let (file, series, dropped) = render(dir, &format!("convergence-{}", super::slug(case_label)), &panels, 560, 420)?;
    Ok(Some(Figure {
        kind: "convergence",
        file,
        title: format!("Convergence on {case_label}"),
        description: format!(
            "Each solver's own residual (column named in the legend; preference {}) at every iteration of its \
             hardest logged step: {}.",
            RESIDUAL_PREFERENCE.join(" > "),
            picked.join("; ")
        ),
        sources,
        series,
        notes: dropped_note(dropped).into_iter().collect(),
    }))
}
