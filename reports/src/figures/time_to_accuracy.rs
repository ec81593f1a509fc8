//! Time to accuracy (issue 37; `ci/studies/time-to-accuracy.toml`): for the records run in the
//! equal-accuracy mode (`summary.accuracy`), the median solver time per step to reach the
//! accuracy against the accuracy, log-log, one panel per scene and one line per solver. A point
//! is drawn only where some step reached the accuracy; its label is the fraction of steps that
//! did, so a fast point reached on few steps does not read as a win.

use super::{color_of, dropped_note, render, source_of, Figure, FigureError, Legend, Panel, Scale, Series, Style};
use records::RunRecord;
use std::path::Path;

/// Most scenes drawn side by side in the figure (the table lists every one).
pub const MAX_PANELS: usize = 8;

/// Draws the figure; `None` when no record is in the mode.
pub fn figure(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Option<Figure>, FigureError> {
    let rs: Vec<&RunRecord> = records.iter().filter(|r| r.summary.accuracy.is_some()).collect();
    if rs.is_empty() {
        return Ok(None);
    }
    let mut scenes: Vec<&str> = vec![];
    for r in &rs {
        if !scenes.contains(&r.case.label.as_str()) {
            scenes.push(r.case.label.as_str());
        }
    }
    let mut notes = vec![];
    if scenes.len() > MAX_PANELS {
        notes.push(format!("{} of {} scenes drawn (the table lists every one)", MAX_PANELS, scenes.len()));
        scenes.truncate(MAX_PANELS);
    }
    let mut panels = vec![];
    for scene in &scenes {
        let mut series = vec![];
        for solver in order {
            let mut pts: Vec<(f64, f64, String)> = rs
                .iter()
                .filter(|r| r.case.label == *scene && r.solver.name == *solver)
                .filter_map(|r| r.summary.accuracy.as_ref())
                .filter(|a| a.reached_steps > 0)
                .map(|a| (a.eps, a.time_to_eps_median_s, format!("{:.0}%", 100.0 * a.fraction_reached)))
                .collect();
            if pts.is_empty() {
                continue;
            }
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            series.push(Series {
                label: solver.clone(),
                color: color_of(order, solver),
                points: pts.iter().map(|p| (p.0, p.1)).collect(),
                style: Style::LinePoints,
                labels: pts.into_iter().map(|p| p.2).collect(),
            });
        }
        panels.push(Panel {
            title: scene.to_string(),
            x_label: "accuracy EPS".into(),
            y_label: "median time per step to EPS [s]".into(),
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            y_range: None,
            legend: Legend::UpperRight,
            series,
        });
    }
    let (file, n, dropped) = render(dir, "time-to-accuracy", &panels, 420, 420)?;
    notes.extend(dropped_note(dropped));
    Ok(Some(Figure {
        kind: "time_to_accuracy",
        file,
        title: "Time to accuracy (equal-accuracy mode)".into(),
        description: "Median solver time per step to reach the accuracy EPS (the harness stops every solver at the \
                      first iterate whose yardstick meets EPS), against EPS, one panel per scene, one line per \
                      solver; each point is labelled with the fraction of steps that reached EPS (the median is \
                      over those steps). A solver without a point at some EPS reached it on no step."
            .into(),
        sources: rs.iter().map(|r| source_of(r)).collect(),
        series: n,
        notes,
        steps: None,
    }))
}
