//! Physics over time for one case, one line per solver, from the recorded steps
//! (`steps[].metrics`): total energy (kinetic + gravity + spring), penetration after the step and
//! the creep speed of sticking contacts. The figure carries its [`StepAxes`]: the report makes a
//! click on it open the case's replay page at the step clicked.
//!
//! Records of `signorini.run/1` carry no trajectories (positions), so a trajectory cannot be drawn
//! against its analytic solution; the oracle checks (measured vs expected) are in the report's table.

use super::{
    dropped_note, render_axes, source_of, variant_color, variant_label, Figure, FigureError, Legend, Panel, Scale,
    Series, StepAxes, Style, XAxis,
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
    let (width, height) = (440, 380);
    let (file, series, dropped, axes) =
        render_axes(dir, &format!("physics-{}", super::slug(case_label)), &panels, width, height)?;
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
        steps: step_axes(case_label, &all, width * panels.len() as u32, axes),
    }))
}

/// How an x (time) on the figure maps to a step: from the first two recorded steps of the first
/// record that has two (`None` when none has).
fn step_axes(case_label: &str, records: &[&RunRecord], panel_width: u32, axes: Vec<XAxis>) -> Option<StepAxes> {
    let (a, b) = records.iter().find_map(|r| Some((r.steps.first()?, r.steps.get(1)?)))?;
    let dt = (b.metrics.t - a.metrics.t) / (b.step as f64 - a.step as f64);
    (dt.is_finite() && dt > 0.0 && a.metrics.t.is_finite()).then(|| StepAxes {
        case: case_label.to_string(),
        width: panel_width,
        axes,
        step0: a.step,
        t0: a.metrics.t,
        dt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::record;
    use records::{RunStatus, StepRecord};

    /// A click on the vertex drawn for step `k` maps back to step `k`: the vertices are read from
    /// the SVG's polylines (plotters' drawing), not from the axes the figure reports.
    #[test]
    fn a_click_on_a_drawn_step_finds_that_step() {
        let dir = tempfile::tempdir().unwrap();
        let dt = 0.004;
        let mut r = record("slope", "pgs", RunStatus::Ok, 1.0, &[]);
        r.steps = (0..40)
            .map(|k| {
                let mut metrics = StepMetrics::unmeasured((k + 1) as f64 * dt);
                metrics.energy = (k as f64 * 0.3).sin();
                metrics.penetration_max = 1e-3 * (k as f64 * 0.2).cos().abs();
                metrics.creep_speed_max = k as f64;
                StepRecord {
                    step: k,
                    status: api::SolveStatus::Solved,
                    iterations: 1,
                    wall_s: 0.0,
                    metrics,
                    accuracy: None,
                }
            })
            .collect();
        let f = figure(dir.path(), "slope", &[&r], &["pgs".into()]).unwrap().unwrap();
        let st = f.steps.expect("a per-step figure has step axes");
        assert_eq!((st.case.as_str(), st.width, st.axes.len(), st.step0), ("slope", 3 * 440, 3, 0));
        assert!((st.dt - dt).abs() < 1e-12 && (st.t0 - dt).abs() < 1e-12, "{st:?}");
        let svg = std::fs::read_to_string(dir.path().join(&f.file)).unwrap();
        let lines: Vec<Vec<f64>> = svg
            .split("<polyline")
            .skip(1)
            .filter_map(|p| {
                let pts = p.split("points=\"").nth(1)?.split('"').next()?;
                Some(pts.split_whitespace().filter_map(|xy| xy.split(',').next()?.parse().ok()).collect::<Vec<f64>>())
            })
            .filter(|xs: &Vec<f64>| xs.len() == r.steps.len())
            .collect();
        assert_eq!(lines.len(), 3, "one 40-vertex line per panel");
        for xs in &lines {
            for (k, &x) in xs.iter().enumerate() {
                assert_eq!(st.step_at(x), Some(k), "vertex {k} at x = {x}");
            }
        }
        // outside every plotting area (the left margin): no step
        assert_eq!(st.step_at(1.0), None);
    }
}
