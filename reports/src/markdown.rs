//! `summary.md`: the report as Markdown for a pull request — counts, the case × solver matrix,
//! the solver × case table,
//! oracle checks, the gate check (counts, failures, expected failures), skipped/failed pairs with reasons, criterion estimates and the
//! list of figures (which live in the HTML report).

use crate::gate::{GateReport, Outcome};
use crate::matrix::Matrix;
use crate::report::{commits, Report};
use crate::table::{cell, headers, row, status_word, MISSING};
use records::RunStatus;

fn esc(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!("| {} |\n|{}\n", headers.join(" | "), "---|".repeat(headers.len()));
    for r in rows {
        out += &format!("| {} |\n", r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | "));
    }
    out
}

/// The gate section: verdict, counts, what fails, the expected failures.
fn gates(g: &GateReport) -> String {
    let c = g.counts();
    let mut out =
        format!("\n## Gates\n\n**Gate: {}** (`{}`)\n\n", if g.passed() { "PASS" } else { "FAIL" }, esc(&g.source));
    out += &table(
        &[
            "oracle checks passed",
            "expected failures",
            "unexpected failures",
            "unexpected passes",
            "metric gates passed",
            "metric gates failed",
            "errors",
        ],
        &[[
            c.checks_passed,
            c.expected_failures,
            c.unexpected_failures,
            c.unexpected_passes,
            c.gates_passed,
            c.gates_failed,
            c.errors,
        ]
        .map(|n| n.to_string())
        .to_vec()],
    );
    let problems = g.problems();
    if !problems.is_empty() {
        out += "\n**What fails:**\n\n";
        for p in problems {
            out += &format!("- {}\n", esc(&p));
        }
    }
    let expected: Vec<Vec<String>> = g
        .checks
        .iter()
        .filter(|v| v.outcome == Outcome::ExpectedFailure)
        .filter_map(|v| {
            let e = v.entry.as_ref()?;
            Some(vec![
                v.case.clone(),
                v.solver.clone(),
                v.check.clone(),
                cell(Some(v.measured)),
                cell(Some(e.measured)),
                e.reason.clone(),
                e.see.clone(),
            ])
        })
        .collect();
    if !expected.is_empty() {
        out += "\n### Expected failures\n\n";
        out += &table(&["case", "solver", "check", "measured", "listed", "reason", "see"], &expected);
    }
    if !g.not_here.is_empty() {
        out += &format!(
            "\n{} entr(ies) of `{}` name pairs that are not in this run directory (not checked here).\n",
            g.not_here.len(),
            esc(&g.source)
        );
    }
    out
}

/// The matrix view as a Markdown table (cells as in [`crate::matrix::Cell::text`], skip reasons
/// as numbered notes) and its summary line.
fn matrix(m: &Matrix) -> String {
    if m.cases.is_empty() {
        return String::new();
    }
    let mut head = vec!["case".to_string()];
    head.extend(m.solvers.iter().zip(&m.reference).map(|(s, &r)| {
        if r {
            format!("*{s}* (reference engine)")
        } else {
            s.clone()
        }
    }));
    let rows: Vec<Vec<String>> = m
        .cases
        .iter()
        .zip(&m.cells)
        .map(|(case, row)| {
            std::iter::once(case.clone())
                .chain(row.iter().map(|c| match c {
                    None => MISSING.to_string(),
                    Some(c) => match m.footnote(c) {
                        Some(k) => format!("skip [{k}]"),
                        None if c.wins() => format!("**{}**", c.text("×")),
                        None => c.text("×"),
                    },
                }))
                .collect()
        })
        .collect();
    let h: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut out = String::from(
        "## Matrix: who wins where\n\nOracle verdict (pass, xfail = expected failure, FAIL, no oracle, skip) and total \
         solve time relative to the fastest solver that passed the case (**1.0×** = fastest); * = some steps \
         unconverged.\n\n",
    );
    if let Some(note) = m.accuracy_note() {
        out += &format!("{note}\n\n");
    }
    out += &table(&h, &rows);
    for (k, why) in m.skip_reasons().iter().enumerate() {
        out += &format!("\n[{}] skipped: {}\n", k + 1, esc(why));
    }
    out + &format!("\n{}.\n\n", m.summary_line())
}

/// Renders `summary.md`.
pub fn summary(rep: &Report) -> String {
    let recs = &rep.records;
    let count = |s: RunStatus| recs.iter().filter(|r| r.status == s).count();
    let mut out = format!("# signorini report: `{}`\n\n", rep.run_dir.display());
    out += &format!(
        "{} run records: {} ok, {} failed, {} skipped. Commit(s): {}.\n\n",
        recs.len(),
        count(RunStatus::Ok),
        count(RunStatus::Failed),
        count(RunStatus::Skipped),
        commits(recs).join(", ")
    );
    if !rep.unreadable.is_empty() {
        out += &format!("**{} file(s) could not be read and are not in this report:**\n\n", rep.unreadable.len());
        for e in &rep.unreadable {
            out += &format!("- {}\n", esc(e));
        }
        out += "\n";
    }
    out += &format!("Missing values are shown as {MISSING}; NaN as NaN.\n\n");
    out += &matrix(&rep.matrix());
    out += "## Results\n\nsettings: the parameters that differ from the registered defaults.\n\n";
    let ctx = rep.row_context();
    let rows: Vec<Vec<String>> = recs
        .iter()
        .map(|r| {
            let mut cells = row(r, &ctx).cells;
            if r.is_reference() {
                cells[1] = format!("*{}*", cells[1]);
            }
            cells
        })
        .collect();
    let heads = headers(ctx.baseline);
    out += &table(&heads.iter().map(String::as_str).collect::<Vec<_>>(), &rows);

    let mut oracle_rows = vec![];
    for r in recs {
        for c in r.summary.oracle.values() {
            oracle_rows.push(vec![
                r.case.label.clone(),
                r.solver.name.clone(),
                c.name.clone(),
                cell(Some(c.measured)),
                cell(Some(c.expected)),
                cell(Some(c.error)),
                cell(Some(c.tolerance)),
                if c.pass { "pass".into() } else { "FAIL".into() },
            ]);
        }
    }
    if !oracle_rows.is_empty() {
        out += "\n## Oracle checks\n\n";
        out +=
            &table(&["case", "solver", "check", "measured", "expected", "error", "tolerance", "result"], &oracle_rows);
    }
    if let Some(g) = &rep.gates {
        out += &gates(g);
    }
    let not_ok: Vec<String> = recs
        .iter()
        .filter(|r| r.status != RunStatus::Ok)
        .map(|r| {
            format!(
                "- `{}` / `{}`: **{}**: {}\n",
                r.case.label,
                r.solver.name,
                status_word(r),
                r.reason.as_deref().unwrap_or(MISSING)
            )
        })
        .collect();
    if !not_ok.is_empty() {
        out += "\n## Skipped and failed pairs\n\n";
        out += &not_ok.concat();
    }
    if !rep.claims.is_empty() {
        out +=
            "\n## Claims of the papers\n\nWhat each method's paper claims, the test that checks it, its tolerance and \
                the measured value (or \"not reproduced\" with the reason):\n\n";
        for l in &rep.claims {
            out += &format!("- **{}**: [{} §{}]({}) ({} claims)\n", l.solver, l.readme, l.heading, l.href, l.rows);
        }
    }
    if let Some((headers, rows)) = crate::accuracy::table(&rep.records) {
        out += "\n## Time to accuracy\n\n";
        out += &format!("{}\n\n", crate::accuracy::NOTE);
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        out += &table(&h, &rows);
    }
    if let Some((headers, rows)) = crate::table::fclib_matrix(&rep.records) {
        out += "\n## FCLIB: every pair, graded by the harness\n\n";
        out += &format!("{}\n\n", crate::table::FCLIB_MATRIX_NOTE);
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        out += &table(&h, &rows);
    }
    if let Some((headers, rows)) = crate::table::fclib_regularised(&rep.records) {
        out += "\n## FCLIB: regularised models, own-model residual apart\n\n";
        out += &format!("{}\n\n", crate::table::FCLIB_REGULARISED_NOTE);
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        out += &table(&h, &rows);
    }
    if let Some((headers, rows)) = crate::table::solver_stages(&rep.records) {
        out += "\n## Solver stages (CPU, inside the solve time)\n\n";
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        out += &table(&h, &rows);
    }
    if let Some((dir, est)) = &rep.criterion {
        out += &format!("\n## Criterion benchmarks (`{}`)\n\n", dir.display());
        if est.is_empty() {
            out += "No estimates found.\n";
        } else {
            let rows: Vec<Vec<String>> = est
                .iter()
                .map(|e| {
                    vec![
                        e.id.clone(),
                        cell(Some(e.mean_ns / 1e3)),
                        format!("[{}, {}]", cell(Some(e.mean_ci_ns.0 / 1e3)), cell(Some(e.mean_ci_ns.1 / 1e3))),
                        cell(Some(e.median_ns / 1e3)),
                    ]
                })
                .collect();
            out += &table(&["benchmark", "mean [µs]", "95% CI [µs]", "median [µs]"], &rows);
        }
    }
    if !rep.figures.is_empty() {
        out += "\n## Figures (in index.html)\n\n";
        for f in &rep.figures {
            out += &format!("- {}: `{}` ({} series)\n", f.title, f.file, f.series);
        }
    }
    if !rep.left_out.is_empty() {
        out += "\n**Left out of the figures:**\n\n";
        for n in &rep.left_out {
            out += &format!("- {n}\n");
        }
    }
    out
}
