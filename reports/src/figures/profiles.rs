//! Dolan–Moré performance profiles ([`crate::profile`]): `ρ_s(τ)` against `τ` (log axis), one
//! stair line per solver, one panel per measure (total solve time, total iterations).

use super::{color_of, render, source_of, Figure, Legend, Panel, Scale, Series, Style};
use crate::profile::{attempted, cost_table, curve, ratios, rho, Measure};
use harness::record::RunRecord;
use std::path::Path;

/// The stair points of solver `s`'s profile from `τ = 1` to `tau_max`.
pub fn stairs(r: &[Vec<Option<f64>>], s: usize, tau_max: f64) -> Vec<(f64, f64)> {
    let mut pts = vec![(1.0, rho(r, s, 1.0))];
    let mut last = pts[0].1;
    for (tau, value) in curve(r, s) {
        if tau > 1.0 {
            pts.push((tau, last));
            pts.push((tau, value));
            last = value;
        }
    }
    pts.push((tau_max, last));
    pts
}

fn panel(records: &[RunRecord], measure: Measure, order: &[String]) -> (Panel, Vec<String>) {
    let table = cost_table(records, measure);
    let r = ratios(&table.costs, measure.floor());
    let max_ratio = r.iter().flatten().flatten().copied().filter(|x| x.is_finite()).fold(1.0, f64::max);
    let tau_max = (1.5 * max_ratio).max(2.0);
    let mut series = vec![];
    let mut counts = vec![];
    for (s, name) in table.solvers.iter().enumerate() {
        let n = attempted(&r, s);
        if n == 0 {
            continue;
        }
        counts.push(format!("{name}: |P_s| = {n}, solved {}", (rho(&r, s, f64::MAX) * n as f64).round()));
        series.push(Series {
            label: format!("{name} (|P_s|={n})"),
            color: color_of(order, name),
            points: stairs(&r, s, tau_max),
            style: Style::Line,
        });
    }
    let p = Panel {
        title: format!("performance profile: {}", measure.name()),
        x_label: "τ (ratio to the best solver)".into(),
        y_label: "ρ_s(τ): share of problems".into(),
        x_scale: Scale::Log,
        y_scale: Scale::Linear,
        y_range: Some((0.0, 1.05)),
        legend: Legend::LowerRight,
        series,
    };
    (p, counts)
}

/// Draws the profiles of `records` (problems = case labels); `None` when no pair was attempted.
/// Reference engines' records (MuJoCo, Drake; [`crate::table::is_reference`]) are left out: the
/// profiles compare signorini's solvers.
pub fn figure(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Option<Figure>, String> {
    let own: Vec<RunRecord> = records.iter().filter(|r| !crate::table::is_reference(r)).cloned().collect();
    let records = &own[..];
    let (time, counts) = panel(records, Measure::SolveTime, order);
    if time.series.is_empty() {
        return Ok(None);
    }
    let (iters, _) = panel(records, Measure::Iterations, order);
    let n_problems = cost_table(records, Measure::SolveTime).problems.len();
    let (file, series, _) = render(dir, "profiles", &[time, iters], 560, 420)?;
    Ok(Some(Figure {
        kind: "profile",
        file,
        title: "Dolan–Moré performance profiles".into(),
        description: format!(
            "Over the {n_problems} case variants of this run directory. ρ_s(1) is the share of problems where a \
             solver was cheapest, the right end its robustness. A failed pair, or one with unconverged steps, \
             counts as infinity; skipped pairs leave the solver's problem set P_s. {}.",
            counts.join("; ")
        ),
        sources: records.iter().filter(|r| r.status != harness::record::RunStatus::Skipped).map(source_of).collect(),
        series,
        notes: vec![],
    }))
}
