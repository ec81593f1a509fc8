//! The summary table of a set of run records: one row per (case, solver) with status, cost,
//! key accuracy metrics, unconverged steps and oracle verdicts, or the reason a pair failed or was
//! skipped. `signorini run` prints it followed by the matrix view ([`crate::matrix::Matrix::plain`]).

use records::{RunRecord, RunStatus};

/// Table style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Aligned columns for a terminal.
    Plain,
    /// A GitHub-flavoured Markdown table.
    Markdown,
}

const HEADERS: [&str; 10] = [
    "case",
    "solver",
    "status",
    "steps",
    "unconv. steps",
    "iters/step",
    "solve ms/step (med)",
    "natmap_rel max",
    "penetration max [m]",
    "oracle",
];

fn fmt_sci(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_nan() => "NaN".into(),
        Some(0.0) => "0".into(),
        Some(v) => format!("{v:.2e}"),
        None => "-".into(),
    }
}

/// The cells of one record's row.
pub fn row(r: &RunRecord) -> Vec<String> {
    let s = &r.summary;
    let metric = |name: &str| s.metrics.get(name).map(|m| m.max);
    let (status, cost) = match r.status {
        RunStatus::Skipped => (format!("skipped: {}", r.reason.clone().unwrap_or_default()), false),
        RunStatus::Failed => (format!("FAILED: {}", r.reason.clone().unwrap_or_default()), s.steps > 0),
        RunStatus::Ok => ("ok".into(), true),
    };
    let oracle = if s.oracle.is_empty() {
        "-".to_string()
    } else {
        let failed: Vec<&str> = s.oracle.values().filter(|c| !c.pass).map(|c| c.name.as_str()).collect();
        let passed = s.oracle.len() - failed.len();
        if failed.is_empty() {
            format!("{passed}/{} pass", s.oracle.len())
        } else {
            format!("{passed}/{} pass (fail: {})", s.oracle.len(), failed.join(", "))
        }
    };
    let dash = || "-".to_string();
    vec![
        r.case.label.clone(),
        r.solver.name.clone(),
        status,
        if cost { s.steps.to_string() } else { dash() },
        if cost { s.unconverged_steps.to_string() } else { dash() },
        if cost { format!("{:.1}", s.iterations_per_step.mean) } else { dash() },
        if cost { format!("{:.3}", s.wall_per_step_s.median * 1e3) } else { dash() },
        if cost { fmt_sci(metric("natmap_rel_l2")) } else { dash() },
        if cost { fmt_sci(metric("penetration_max")) } else { dash() },
        oracle,
    ]
}

/// Renders the table of `records` in the given style.
pub fn table(records: &[RunRecord], style: Style) -> String {
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            let mut cells = row(r);
            if style == Style::Plain {
                cells[2] = short_status(r);
            }
            cells
        })
        .collect();
    let mut out = String::new();
    match style {
        Style::Markdown => {
            out += &format!("| {} |\n", HEADERS.join(" | "));
            out += &format!("|{}\n", "---|".repeat(HEADERS.len()));
            for r in &rows {
                out += &format!("| {} |\n", r.iter().map(|c| c.replace('|', "\\|")).collect::<Vec<_>>().join(" | "));
            }
        }
        Style::Plain => {
            let mut w: Vec<usize> = HEADERS.iter().map(|h| h.len()).collect();
            for r in &rows {
                for (i, c) in r.iter().enumerate() {
                    w[i] = w[i].max(c.chars().count());
                }
            }
            let line = |cells: Vec<&str>| {
                cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| format!("{c:<width$}", width = w[i]))
                    .collect::<Vec<_>>()
                    .join("  ")
                    .trim_end()
                    .to_string()
                    + "\n"
            };
            out += &line(HEADERS.to_vec());
            out += &line(w.iter().map(|&n| "-".repeat(n)).collect::<Vec<_>>().iter().map(|s| s.as_str()).collect());
            for r in &rows {
                out += &line(r.iter().map(|s| s.as_str()).collect());
            }
            out += &reasons(records);
        }
    }
    out
}

/// The status cell of the plain table: the reasons follow the table (see [`reasons`]).
fn short_status(r: &RunRecord) -> String {
    match r.status {
        RunStatus::Ok => "ok".into(),
        RunStatus::Failed => "FAILED (see below)".into(),
        RunStatus::Skipped => "skipped".into(),
    }
}

/// Below the plain table: every failure with its reason, and the skipped pairs grouped by reason.
pub fn reasons(records: &[RunRecord]) -> String {
    let mut out = String::new();
    for r in records.iter().filter(|r| r.status == RunStatus::Failed) {
        out += &format!("failed: {} / {}: {}\n", r.case.label, r.solver.name, r.reason.as_deref().unwrap_or("-"));
    }
    let mut skipped: std::collections::BTreeMap<&str, Vec<&str>> = std::collections::BTreeMap::new();
    for r in records.iter().filter(|r| r.status == RunStatus::Skipped) {
        skipped.entry(r.reason.as_deref().unwrap_or("-")).or_default().push(&r.case.label);
    }
    for (why, labels) in skipped {
        out += &format!("skipped ({why}): {}\n", labels.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::record;

    /// A pair that passes its oracle with 98 of 100 steps at the iteration cap shows them.
    #[test]
    fn unconverged_steps_are_printed() {
        let mut r = record("clutter", "jacobi", RunStatus::Ok, 1.0, &[("x", true), ("y", true)]);
        r.summary.steps = 100;
        r.summary.unconverged_steps = 98;
        let skipped = record("clutter", "other", RunStatus::Skipped, 0.0, &[]);
        let text = table(&[r, skipped], Style::Plain);
        let lines: Vec<&str> = text.lines().collect();
        let col = lines[0].find("unconv. steps").unwrap();
        assert!(lines[2][col..].starts_with("98 "), "{}", lines[2]);
        assert!(lines[2].contains("2/2 pass"));
        assert!(lines[3][col..].starts_with("- "), "no count for a skipped pair: {}", lines[3]);
    }
}
