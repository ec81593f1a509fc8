//! Order of accuracy: the error of a `dt` sweep against `dt`, log-log, one line per solver, with
//! the observed order (the least-squares slope of `log error` over `log dt`) in its label.
//!
//! The sweeps and their accuracy measure are those of [`super::work_precision`] (records of one
//! case and solver that differ only in `dt`: e.g. the points of a suite's `[[grid]]` over `dt`,
//! whatever their labels), restricted to `dt`. A first-order method on a smooth solution has
//! slope 1; a sweep whose error does not shrink with `dt` (a solver tolerance or a model error
//! dominates) shows a slope near 0.

use super::work_precision::{accuracy, note_measure, sweeps, Sweep};
use super::{
    color_of, dropped_note, fmt_num, render, slug, source_of, Figure, FigureError, Legend, Panel, Scale, Series, Style,
};
use records::RunRecord;
use std::collections::BTreeMap;
use std::path::Path;

/// The least-squares slope of `log10 y` against `log10 x` over the points where both are finite
/// and positive; `None` with fewer than two such points or a single `x`.
pub fn observed_order(points: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite() && *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.log10(), y.log10()))
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let n = logs.len() as f64;
    let (mx, my) = (logs.iter().map(|p| p.0).sum::<f64>() / n, logs.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

fn dt_of(r: &RunRecord) -> f64 {
    r.case.params.0.get("dt").and_then(|v| v.as_f64()).unwrap_or(f64::NAN)
}

/// One figure per case with a `dt` sweep; empty when there is none.
pub fn figures(dir: &Path, records: &[RunRecord], order: &[String]) -> Result<Vec<Figure>, FigureError> {
    let all = sweeps(records);
    let mut by_case: BTreeMap<String, Vec<&Sweep<'_>>> = BTreeMap::new();
    for s in all.iter().filter(|s| s.param == "dt") {
        by_case.entry(s.case.clone()).or_default().push(s);
    }
    let mut out = vec![];
    for (case, group) in by_case {
        let (mut series, mut sources, mut lines) = (vec![], vec![], vec![]);
        let mut measure = String::new();
        for s in &group {
            let (name, acc) = accuracy(s);
            note_measure(&mut measure, &name, "error (measure per solver in the description)");
            let points: Vec<(f64, f64)> = s.records.iter().zip(&acc).map(|(r, &e)| (dt_of(r), e)).collect();
            let p = observed_order(&points);
            let p_text = p.map_or("—".to_string(), |p| format!("{p:.2}"));
            let n_same = group.iter().filter(|o| o.solver == s.solver).count();
            let who = if n_same > 1 { format!("{} [{}]", s.solver, s.records[0].case.label) } else { s.solver.clone() };
            let dts: Vec<String> = points.iter().map(|(dt, _)| fmt_num(*dt)).collect();
            lines.push(format!("{who}: {name}, observed order {p_text} over dt = {}", dts.join(", ")));
            sources.extend(s.records.iter().map(|r| source_of(r)));
            series.push(Series {
                label: format!("{who} (order {p_text})"),
                color: color_of(order, &s.solver),
                points,
                style: Style::LinePoints,
                labels: vec![],
            });
        }
        let panel = Panel {
            title: format!("{case}: error against dt"),
            x_label: "dt [s]".into(),
            y_label: measure,
            x_scale: Scale::Log,
            y_scale: Scale::Log,
            y_range: None,
            legend: Legend::LowerRight,
            series,
        };
        let (file, n, dropped) = render(dir, &format!("order-{}", slug(&case)), &[panel], 760, 460)?;
        out.push(Figure {
            kind: "order_of_accuracy",
            file,
            title: format!("Order of accuracy on {case}"),
            description: format!(
                "Error against the time step, log-log; the observed order is the least-squares slope of \
                 log error over log dt. {}.",
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
    use super::observed_order;

    #[test]
    fn slope_of_power_laws() {
        let first: Vec<(f64, f64)> = [0.02, 0.01, 0.005].iter().map(|&h| (h, 3.0 * h)).collect();
        assert!((observed_order(&first).unwrap() - 1.0).abs() < 1e-12);
        let second: Vec<(f64, f64)> = [0.1, 0.05, 0.025, 0.0125].iter().map(|&h| (h, 0.5 * h * h)).collect();
        assert!((observed_order(&second).unwrap() - 2.0).abs() < 1e-12);
        // Zero or NaN errors are left out; one usable point gives no order.
        assert!((observed_order(&[(0.02, 0.04), (0.01, 0.0), (0.005, 0.01)]).unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(observed_order(&[(0.02, 0.04), (0.01, f64::NAN)]), None);
        assert_eq!(observed_order(&[(0.01, 0.04), (0.01, 0.02)]), None);
    }
}
