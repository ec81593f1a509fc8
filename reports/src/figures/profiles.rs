//! Dolan–Moré performance profiles ([`crate::profile`]): `ρ_s(τ)` against `τ` (log axis), one
//! stair line per solver, one panel per measure (total solve time, total iterations). A solver
//! with pairs that are unconverged but within the oracle ([`crate::profile::Cost::Unconverged`])
//! gets a second, dashed line: its profile when those pairs count as solved
//! ([`crate::profile::lenient`]); the solid line counts them as failures.

use super::{color_of, render, source_of, Figure, FigureError, Legend, Panel, Scale, Series, Style};
use crate::profile::{attempted, cost_table, curve, lenient, ratios, rho, unconverged, Measure};
use records::RunRecord;
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
    let loose = ratios(&lenient(&table.costs), measure.floor());
    let max_ratio = r.iter().chain(&loose).flatten().flatten().copied().filter(|x| x.is_finite()).fold(1.0, f64::max);
    let tau_max = (1.5 * max_ratio).max(2.0);
    let mut series = vec![];
    let mut counts = vec![];
    for (s, name) in table.solvers.iter().enumerate() {
        let n = attempted(&r, s);
        if n == 0 {
            continue;
        }
        let solved = (rho(&r, s, f64::MAX) * n as f64).round();
        let within = unconverged(&table.costs, s);
        let mut count = format!("{name}: |P_s| = {n}, solved {solved}");
        if within > 0 {
            count += &format!(", unconverged but within the oracle {within}");
        }
        count += &format!(", failed {}", n - solved as usize - within);
        counts.push(count);
        series.push(Series {
            label: format!("{name} (|P_s|={n})"),
            color: color_of(order, name),
            points: stairs(&r, s, tau_max),
            style: Style::Line,
            labels: vec![],
        });
        if within > 0 {
            series.push(Series {
                label: format!("{name} + {within} unconverged within oracle"),
                color: color_of(order, name),
                points: stairs(&loose, s, tau_max),
                style: Style::Dashed,
                labels: vec![],
            });
        }
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
/// Reference engines' records (MuJoCo, Drake; [`records::RunRecord::is_reference`]) are left out: the
/// profiles compare signorini's solvers. FCLIB campaign records (case `fclib`) have their own
/// figures ([`fclib_figures`]).
pub fn figure(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Option<Figure>, FigureError> {
    let own: Vec<RunRecord> = records.iter().filter(|r| !r.is_reference() && r.case.name != "fclib").cloned().collect();
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
             counts as infinity (solid lines); a dashed line counts the solver's pairs that are unconverged but \
             within the oracle (every oracle check passes) as solved; skipped pairs leave the solver's problem \
             set P_s. {}.",
            counts.join("; ")
        ),
        sources: records.iter().filter(|r| r.status != records::RunStatus::Skipped).map(source_of).collect(),
        series,
        notes: vec![],
        steps: None,
    }))
}

/// The family of an FCLIB campaign record (case parameter `family`, written by `signorini fclib
/// bench` and `peers/run_siconos.py`).
pub fn fclib_family(r: &RunRecord) -> String {
    r.case.params.0.get("family").and_then(|v| v.as_str()).unwrap_or("unknown").to_string()
}

/// The profiles of an FCLIB campaign (`signorini fclib bench` records, case `fclib`): one figure
/// over every problem, then one per problem family. Unlike [`figure`], reference rows (Siconos)
/// take part: they answer the same problems. A pair counts as solved when its `fclib_error`
/// reached the campaign's tolerance (`unconverged_steps = 0`); the regularised models (sap,
/// drumwright) are graded so on the rigid problem, and their own-model residual is shown apart
/// ([`crate::table::fclib_regularised`]).
pub fn fclib_figures(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Vec<Figure>, FigureError> {
    let fc: Vec<RunRecord> = records.iter().filter(|r| r.case.name == "fclib").cloned().collect();
    if fc.is_empty() {
        return Ok(vec![]);
    }
    let mut families: Vec<String> = fc.iter().map(fclib_family).collect();
    families.sort();
    families.dedup();
    let mut groups = vec![("all families".to_string(), fc.clone())];
    if families.len() > 1 {
        for f in &families {
            groups.push((f.clone(), fc.iter().filter(|r| &fclib_family(r) == f).cloned().collect()));
        }
    }
    let mut out = vec![];
    for (k, (name, rs)) in groups.iter().enumerate() {
        let (time, counts) = panel(rs, Measure::SolveTime, order);
        if time.series.is_empty() {
            continue;
        }
        let (iters, _) = panel(rs, Measure::Iterations, order);
        let n_problems = cost_table(rs, Measure::SolveTime).problems.len();
        let (file, series, _) = render(dir, &format!("fclib_profiles_{k}"), &[time, iters], 560, 420)?;
        out.push(Figure {
            kind: "profile",
            file,
            title: format!("FCLIB performance profiles: {name}"),
            description: format!(
                "Over the {n_problems} FCLIB problems of family '{name}'. Solved: natural-map error ||F|| / (1 + \
                 ||q||) of the rigid Coulomb NCP at the campaign's tolerance. ρ_s(1) is the share of problems where \
                 a solver was cheapest, the right end its robustness; a failed or unsolved pair counts as infinity, \
                 a refused form (skipped) leaves P_s. Siconos rows are the reference. {}.",
                counts.join("; ")
            ),
            sources: rs.iter().filter(|r| r.status != records::RunStatus::Skipped).map(source_of).collect(),
            series,
            notes: vec![],
            steps: None,
        });
    }
    Ok(out)
}
