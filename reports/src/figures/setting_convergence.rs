//! Convergence by setting: the residual a solver logs per iteration, one line per value of one
//! swept solver setting, within one step — the form of Macklin et al. 2019 Figs. 17–18 (error per
//! Newton iteration for each complementarity preconditioner `r_mode`, for each `linear_solver`).
//!
//! The sweeps are those of [`super::work_precision::sweeps`] over a solver setting (records of
//! one case and solver, equal in everything but that setting, the shared baseline counted once),
//! typically read from a study directory whose subdirectories hold one variant each
//! ([`crate::read_run_dir_partial`]). The column is the solver's residual column
//! ([`super::convergence::residual_column`]; `merit_l2` for nsn), the step the one logged by every
//! record of the sweep with the most iterations in total (the earliest on ties), so that all lines
//! come from the same step. One figure per (case label, setting).

use super::convergence::residual_column;
use super::work_precision::sweeps;
use super::{
    dropped_note, render, setting_value, slug, source_of, Figure, FigureError, Legend, Panel, Scale, Series, Style,
};
use records::{IterationRecord, RunRecord};
use std::path::Path;

/// The step drawn for a sweep's `records` (see the module doc); `None` when they share no logged step.
pub fn common_step(records: &[&RunRecord]) -> Option<usize> {
    fn logged(r: &RunRecord, step: usize) -> Option<&IterationRecord> {
        r.iterations.iter().find(|it| it.step == step && !it.log.is_empty())
    }
    let first = records.first()?;
    first
        .iterations
        .iter()
        .map(|it| it.step)
        .filter(|&s| records.iter().all(|r| logged(r, s).is_some()))
        .map(|s| (s, records.iter().map(|r| logged(r, s).map_or(0, |it| it.log.len())).sum::<usize>()))
        .fold(None, |best: Option<(usize, usize)>, (s, n)| match best {
            Some((_, bn)) if bn >= n => best,
            _ => Some((s, n)),
        })
        .map(|(s, _)| s)
}

/// Draws one figure per (case label, swept solver setting); empty without such sweeps.
pub fn figures(dir: &Path, records: &[RunRecord]) -> Result<Vec<Figure>, FigureError> {
    let mut out = vec![];
    for sw in sweeps(records) {
        let Some(key) = sw.param.strip_prefix("solver.") else { continue };
        let Some(step) = common_step(&sw.records) else { continue };
        let logs: Vec<_> = sw
            .records
            .iter()
            .filter_map(|r| r.iterations.iter().find(|it| it.step == step).map(|it| (*r, &it.log)))
            .collect();
        let Some(col) = logs.first().and_then(|(_, l)| residual_column(l)) else { continue };
        let mut series = vec![];
        let mut values = vec![];
        for (k, (r, log)) in logs.iter().enumerate() {
            let Some(y) = log.column(col) else { continue };
            let value = setting_value(r.solver.params.0.get(key));
            let last = y.last().copied().unwrap_or(f64::NAN);
            values.push(format!("{value}: {} at iteration {}", super::fmt_num(last), y.len().saturating_sub(1)));
            series.push(Series {
                label: format!("{key} = {value}"),
                color: k,
                points: y.iter().enumerate().map(|(i, &v)| (i as f64, v)).collect(),
                style: Style::LinePoints,
                labels: vec![],
            });
        }
        let label = &sw.records[0].case.label;
        let panel = Panel {
            title: format!("{label}: {} by {key}", sw.solver),
            x_label: "iteration".into(),
            y_label: col.into(),
            x_scale: Scale::Linear,
            y_scale: Scale::Log,
            y_range: None,
            legend: Legend::UpperRight,
            series,
        };
        let (file, n, dropped) =
            render(dir, &format!("setting-convergence-{}-{}", slug(label), slug(key)), &[panel], 720, 460)?;
        out.push(Figure {
            kind: "setting_convergence",
            file,
            title: format!("{} per iteration on {label} by {key} ({})", col, sw.solver),
            description: format!(
                "{} of {} at every iteration (0 = the starting iterate) of step {step}, one line per value of \
                 the solver setting {key}, everything else equal; last values: {}.",
                col,
                sw.solver,
                values.join("; ")
            ),
            sources: sw.records.iter().map(|r| source_of(r)).collect(),
            series: n,
            notes: dropped_note(dropped).into_iter().collect(),
            steps: None,
        });
    }
    Ok(out)
}
