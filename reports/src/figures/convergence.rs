//! Convergence on one yardstick: the natural map of the rigid Coulomb NCP,
//! `||F||_2 / ||q||_2` ([`records::yardstick`]), evaluated by the harness on every
//! iterate every solver handed over, vs iteration and vs time (log scale), one line per solver,
//! all on the same step of the case.
//!
//! The step is the logged step that every record of the case logged with the most iterations in
//! total (the hardest common step; the earliest on ties); records without a common step fall back
//! to their own hardest logged step, and the description says so. A record whose log carries no
//! yardstick (a solver that does not hand over its iterates, or a record of an older version)
//! draws its own residual, the first column of [`RESIDUAL_PREFERENCE`] it has, named in the
//! legend, so that different measures are never silently compared as equals. Several records of
//! one solver (a study directory) are labelled by the settings that differ
//! ([`super::variant_label`]).

use super::{
    dropped_note, render, source_of, variant_color, variant_label, Figure, FigureError, Legend, Panel, Scale, Series,
    Style,
};
use api::IterationLog;
use records::yardstick;
use records::{IterationRecord, RunRecord};
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

/// The step logged by every record with the most iterations in total (earliest on ties).
pub fn common_step(records: &[&RunRecord]) -> Option<usize> {
    let first = records.first()?;
    let mut best: Option<(usize, usize)> = None;
    for it in &first.iterations {
        let logs: Option<Vec<usize>> = records
            .iter()
            .map(|r| r.iterations.iter().find(|x| x.step == it.step && !x.log.is_empty()).map(|x| x.log.len()))
            .collect();
        if let Some(total) = logs.map(|l| l.iter().sum::<usize>()) {
            if best.is_none_or(|(_, t)| total > t) {
                best = Some((it.step, total));
            }
        }
    }
    best.map(|(step, _)| step)
}

/// `(iteration, time, value)` of the yardstick rows of `log` that hold a value.
fn yardstick_points(log: &IterationLog) -> Option<Vec<(f64, f64, f64)>> {
    let y = log.column(yardstick::NATMAP)?;
    let t = log.column("time_s").unwrap_or(&[]);
    let pts: Vec<_> = y
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(i, &v)| ((i + 1) as f64, t.get(i).copied().unwrap_or(f64::NAN), v))
        .collect();
    (!pts.is_empty()).then_some(pts)
}

/// Draws the convergence figure of one case from its `records` (one per solver); `None` when no
/// record has an iteration log with a residual column.
pub fn figure(
    dir: &Path,
    case_label: &str,
    records: &[&RunRecord],
    order: &[String],
) -> Result<Option<Figure>, FigureError> {
    let (mut by_iter, mut by_time, mut sources, mut picked) = (vec![], vec![], vec![], vec![]);
    let labels: Vec<String> = records.iter().map(|r| variant_label(r, records)).collect();
    let common = common_step(records);
    let mut own_residuals = 0;
    for (r, name) in records.iter().zip(&labels) {
        let chosen = match common {
            Some(step) => r.iterations.iter().find(|it| it.step == step),
            None => hardest_logged_step(r),
        };
        let Some(it) = chosen else { continue };
        let (label, points) = match yardstick_points(&it.log) {
            Some(p) => (name.clone(), p),
            None => {
                let Some(col) = residual_column(&it.log) else { continue };
                let y = it.log.column(col).expect("column exists");
                let t = it.log.column("time_s").unwrap_or(&[]);
                own_residuals += 1;
                let p = y.iter().enumerate().map(|(i, &v)| ((i + 1) as f64, t.get(i).copied().unwrap_or(f64::NAN), v));
                (format!("{name}: own {col}"), p.collect())
            }
        };
        let color = variant_color(order, &r.solver.name, name, &labels);
        by_iter.push(Series {
            label: label.clone(),
            color,
            points: points.iter().map(|&(i, _, v)| (i, v)).collect(),
            style: Style::Line,
            labels: vec![],
        });
        by_time.push(Series {
            label,
            color,
            points: points.iter().map(|&(_, t, v)| (t, v)).collect(),
            style: Style::Line,
            labels: vec![],
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
        y_label: "natural map ||F|| / ||q||".into(),
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
            "The natural map of the rigid Coulomb NCP, ||F||/||q|| (the step metric natmap_rel_l2), evaluated \
             by the harness on every iterate each solver handed over, {}: {}.{}",
            match common {
                Some(k) => format!("all on step {k}, the hardest step logged by every solver"),
                None => "each on its own hardest logged step (no step logged by every solver)".into(),
            },
            picked.join("; "),
            if own_residuals > 0 {
                format!(
                    " {own_residuals} record(s) without the yardstick draw their own residual, named in the legend."
                )
            } else {
                String::new()
            }
        ),
        sources,
        series,
        notes: dropped_note(dropped).into_iter().collect(),
        steps: None,
    }))
}
