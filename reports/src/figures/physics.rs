//! Physics over time for one case, one line per solver, from the recorded steps
//! (`steps[].metrics`): total energy (kinetic + gravity + spring), penetration after the step and
//! the creep speed of sticking contacts.
//!
//! Records of `signorini.run/1` carry no trajectories (positions), so a trajectory cannot be drawn
//! against its analytic solution; the oracle checks (measured vs expected) are in the report's table.

use super::{
    dropped_note, render, source_of, variant_color, variant_label, Figure, FigureError, Legend, Panel, Scale, Series,
    Style,
};
use records::RunRecord;
use records::StepMetrics;
use std::path::Path;

/// The quantities drawn: `(panel title, y label, accessor)`.
type Quantity = (&'static str, &'static str, fn(&StepMetrics) -> f64);

/// The panels, in order.
pub const QUANTITIES: [Quantity; 3] = [
    ("energy", "kinetic + gravity + spring [J]", |m| m.energy),
    ("penetration after the step", "penetration_max [m]", |m| m.penetration_max),
    ("creep of sticking contacts", "creep_speed_max [m/s]", |m| m.creep_speed_max),
];

/// Draws the physics figure of one case; `None` when no record has recorded steps.
pub fn figure(
    dir: &Path,
    case_label: &str,
    records: &[&RunRecord],
    order: &[String],
) -> Result<Option<Figure>, FigureError> {
    let with_steps: Vec<&&RunRecord> = records.iter().filter(|r| !r.steps.is_empty()).collect();
    if with_steps.is_empty() {
        return Ok(None);
    }
    let all: Vec<&RunRecord> = with_steps.iter().map(|r| **r).collect();
    let labels: Vec<String> = all.iter().map(|r| variant_label(r, &all)).collect();
    let panels: Vec<Panel> = QUANTITIES
        .iter()
        .map(|(title, y, get)| Panel {
            title: (*title).into(),
            x_label: "t [s]".into(),
            y_label: (*y).into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Linear,
            y_range: None,
            legend: Legend::UpperRight,
            series: all
                .iter()
                .zip(&labels)
                .map(|(r, label)| Series {
                    label: label.clone(),
                    color: variant_color(order, &r.solver.name, label, &labels),
                    points: r.steps.iter().map(|s| (s.metrics.t, get(&s.metrics))).collect(),
                    style: Style::Line,
                    labels: vec![],
                })
                .collect(),
        })
        .collect();
    let (file, series, dropped) = render(dir, &format!("physics-{}", super::slug(case_label)), &panels, 440, 380)?;
    let strides: Vec<String> = with_steps
        .iter()
        .filter(|r| r.step_stride > 1)
        .map(|r| format!("{} every {}th step", r.solver.name, r.step_stride))
        .collect();
    let mut notes: Vec<String> = dropped_note(dropped).into_iter().collect();
    if !strides.is_empty() {
        notes.push(format!("recorded steps only: {}", strides.join(", ")));
    }
    Ok(Some(Figure {
        kind: "physics",
        file,
        title: format!("Physics on {case_label}"),
        description: "Harness metrics of every recorded step (solver-independent): total energy, penetration \
                      re-evaluated after the step, creep speed of sticking contacts. Records carry no \
                      trajectories; oracle checks are in the table."
            .into(),
        sources: with_steps.iter().map(|r| source_of(r)).collect(),
        series,
        notes,
    }))
}
