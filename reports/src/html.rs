//! `index.html`: a self-contained page (inline CSS, one inline script that sorts the tables and
//! links a click on a per-step figure to the replay page at that step, no
//! external resources) with the matrix view ([`crate::html_matrix`]), the sortable solver × case
//! table, the gate check (counts, failures, expected failures), reasons for skipped/failed pairs, criterion estimates and
//! every figure (`<img>` of the SVG files in `figures/`) with a caption naming its run records.

use crate::figures::Figure;
use crate::gate::{GateReport, Outcome};
use crate::html_matrix::Replays;
use crate::report::{case_labels, commits, Report};
use crate::table::{cell, headers, row, Tone, MISSING};
use records::RunStatus;

pub use crate::text::esc;

const CSS: &str = "
body { font-family: 'DejaVu Sans', Verdana, sans-serif; margin: 20px; color: #222; }
h1 { font-size: 24px; } h2 { font-size: 20px; margin-top: 32px; border-bottom: 1px solid #ccc; }
h3 { font-size: 16px; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }\n.wide { overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.good { background: #e3f4e3; } .bad { background: #fbe0e0; } .muted { color: #777; background: #f6f6f6; } .ref { font-style: italic; }
figure { margin: 16px 0 28px 0; } figure img { max-width: 100%; height: auto; border: 1px solid #ddd; } img.step-link { cursor: crosshair; }
figcaption { font-size: 13px; color: #333; max-width: 1100px; }
figcaption ul { margin: 4px 0; padding-left: 20px; color: #555; }
pre { background: #f6f6f6; padding: 8px; font-size: 12px; overflow-x: auto; }
nav a { margin-right: 12px; } .note { color: #8a5a00; }
";

fn tone(t: Tone) -> &'static str {
    match t {
        Tone::Plain => "",
        Tone::Good => " class=\"good\"",
        Tone::Bad => " class=\"bad\"",
        Tone::Muted => " class=\"muted\"",
        Tone::Reference => " class=\"ref\"",
    }
}

/// The attributes that make a per-step figure's image open its case's replay page at the step
/// clicked ([`STEP_LINK_JS`]); empty unless the figure has step axes and its case a replay page.
fn step_link(f: &Figure, replays: &Replays) -> String {
    let Some(st) = f.steps.as_ref().filter(|st| replays.contains_key(&st.case)) else {
        return String::new();
    };
    let axes: Vec<String> = st
        .axes
        .iter()
        .filter(|a| a.scale == crate::figures::Scale::Linear)
        .map(|a| format!("{} {} {:e} {:e}", a.pixels.0, a.pixels.1, a.range.0, a.range.1))
        .collect();
    format!(
        " class=\"step-link\" data-replay=\"{}\" data-width=\"{}\" data-axes=\"{}\" data-step0=\"{}\" \
         data-t0=\"{:e}\" data-dt=\"{:e}\" title=\"Click a time to open the replay of {} at that step\"",
        esc(&crate::replay::page_path(&st.case)),
        st.width,
        axes.join(";"),
        st.step0,
        st.t0,
        st.dt,
        esc(&st.case)
    )
}

/// Opens the replay page at the step under the click on a per-step figure ([`step_link`]): the
/// click's x in the SVG's pixels, the panel whose plotting area holds it, its time there, and the
/// step drawn nearest that time (as [`crate::figures::StepAxes::step_at`]).
pub const STEP_LINK_JS: &str = r#"
(function () {
  [].forEach.call(document.querySelectorAll('img.step-link'), function (img) {
    img.addEventListener('click', function (e) {
      var r = img.getBoundingClientRect(), d = img.dataset;
      var x = (e.clientX - r.left) * (+d.width) / r.width;
      var axes = d.axes.split(';').map(function (a) { return a.split(' ').map(Number); });
      for (var i = 0; i < axes.length; i++) {
        var a = axes[i];
        if (x < a[0] || x > a[1]) continue;
        var t = a[2] + (x - a[0]) / (a[1] - a[0]) * (a[3] - a[2]);
        var k = +d.step0 + Math.round((t - (+d.t0)) / (+d.dt));
        if (k >= 0) location.href = d.replay + '#step=' + k;
        return;
      }
    });
  });
})();
"#;

fn figure(f: &Figure, replays: &Replays) -> String {
    let link = step_link(f, replays);
    let mut s = format!(
        "<figure id=\"{}\">\n<img src=\"{}\" alt=\"{}\"{}>\n<figcaption><b>{}.</b> {}",
        esc(&f.file),
        esc(&f.file),
        esc(&f.title),
        link,
        esc(&f.title),
        esc(&f.description)
    );
    if !link.is_empty() {
        s += " Click a time on it to open the replay at that step.";
    }
    for n in &f.notes {
        s += &format!(" <span class=\"note\">{}.</span>", esc(n));
    }
    s += "<br>From the run records:<ul>";
    for src in &f.sources {
        s += &format!("<li>{}</li>", esc(src));
    }
    s += "</ul></figcaption>\n</figure>\n";
    s
}

/// The gate section: verdict, counts, what fails, the expected failures.
fn gates(g: &GateReport) -> String {
    let c = g.counts();
    let verdict = if g.passed() { "<span class=\"good\">PASS</span>" } else { "<span class=\"bad\">FAIL</span>" };
    let mut s = format!("<h3>Gates</h3>\n<p><b>Gate: {verdict}</b> ({})</p>\n", esc(&g.source));
    let count = |n: usize, bad: bool| (n.to_string(), if bad && n > 0 { Tone::Bad } else { Tone::Plain });
    let cells = [
        count(c.checks_passed, false),
        count(c.expected_failures, false),
        count(c.unexpected_failures, true),
        count(c.unexpected_passes, true),
        count(c.gates_passed, false),
        count(c.gates_failed, true),
        count(c.errors, true),
    ];
    s += &table(
        &[
            "oracle checks passed",
            "expected failures",
            "unexpected failures",
            "unexpected passes",
            "metric gates passed",
            "metric gates failed",
            "errors",
        ],
        &[(cells.iter().map(|(t, _)| t.clone()).collect(), cells.iter().map(|(_, t)| *t).collect())],
    );
    let problems = g.problems();
    if !problems.is_empty() {
        s += "<p class=\"bad\"><b>What fails:</b></p>\n<ul>\n";
        for p in problems {
            s += &format!("<li>{}</li>\n", esc(&p));
        }
        s += "</ul>\n";
    }
    let expected: Vec<(Vec<String>, Vec<Tone>)> = g
        .checks
        .iter()
        .filter(|v| v.outcome == Outcome::ExpectedFailure)
        .filter_map(|v| {
            let e = v.entry.as_ref()?;
            let cells = vec![
                v.case.clone(),
                v.solver.clone(),
                v.check.clone(),
                cell(Some(v.measured)),
                cell(Some(e.measured)),
                e.reason.clone(),
                e.see.clone(),
            ];
            Some((cells, vec![]))
        })
        .collect();
    if !expected.is_empty() {
        s += "<h4>Expected failures</h4>\n";
        s += &table(&["case", "solver", "check", "measured", "listed", "reason", "see"], &expected);
    }
    if !g.not_here.is_empty() {
        s += &format!(
            "<p class=\"muted\">{} entr(ies) of {} name pairs that are not in this run directory (not checked here).</p>\n",
            g.not_here.len(),
            esc(&g.source)
        );
    }
    s
}

fn table(headers: &[&str], rows: &[(Vec<String>, Vec<Tone>)]) -> String {
    table_of_class(headers, rows, "")
}

/// A table with `class` on the `<table>` (`sortable`: [`crate::html_matrix::SORT_JS`] sorts it).
fn table_of_class(headers: &[&str], rows: &[(Vec<String>, Vec<Tone>)], class: &str) -> String {
    let class = if class.is_empty() { String::new() } else { format!(" class=\"{class}\"") };
    let mut s = format!("<div class=\"wide\"><table{class}>\n<thead><tr>");
    for h in headers {
        s += &format!("<th>{}</th>", esc(h));
    }
    s += "</tr></thead>\n<tbody>\n";
    for (cells, tones) in rows {
        s += "<tr>";
        for (i, c) in cells.iter().enumerate() {
            let t = tones.get(i).copied().unwrap_or(Tone::Plain);
            let numeric = c.chars().next().is_some_and(|ch| ch.is_ascii_digit() || ch == '-') || c == "NaN";
            let class = match (t, numeric) {
                (Tone::Plain, true) => " class=\"num\"",
                (t, _) => tone(t),
            };
            s += &format!("<td{class}>{}</td>", esc(c));
        }
        s += "</tr>\n";
    }
    s + "</tbody></table></div>\n"
}

/// The "Claims of the papers" section: one link per solver to its README's claims table.
fn claims(links: &[crate::claims::ClaimsLink]) -> String {
    if links.is_empty() {
        return String::new();
    }
    let mut s = "<h3 id=\"claims\">Claims of the papers</h3>\n<p>What each method's paper claims, the test that \
                 checks it, its tolerance and the measured value (or \"not reproduced\" with the reason):</p>\n<ul>\n"
        .to_string();
    for l in links {
        s += &format!(
            "<li><b>{}</b>: <a class=\"claims\" data-solver=\"{}\" href=\"{}\">{} §{}</a> ({} claims)</li>\n",
            esc(&l.solver),
            esc(&l.solver),
            esc(&l.href),
            esc(&l.readme),
            esc(&l.heading),
            l.rows
        );
    }
    s + "</ul>\n"
}

/// Renders `index.html`.
pub fn index(rep: &Report) -> String {
    let recs = &rep.records;
    let count = |s: RunStatus| recs.iter().filter(|r| r.status == s).count();
    let mut body = format!("<h1>signorini report: {}</h1>\n", esc(&rep.run_dir.display().to_string()));
    body += &format!(
        "<p>{} run records: {} ok, {} failed, {} skipped. Commit(s): {}. Machine: {}. Missing values are shown \
         as {MISSING}, NaN as NaN.</p>\n",
        recs.len(),
        count(RunStatus::Ok),
        count(RunStatus::Failed),
        count(RunStatus::Skipped),
        esc(&commits(recs).join(", ")),
        esc(&recs.first().map(|r| r.provenance.machine.clone()).unwrap_or_default())
    );
    if !rep.unreadable.is_empty() {
        body += &format!(
            "<p class=\"bad\"><b>{} file(s) could not be read and are not in this report:</b></p>\n<ul>\n",
            rep.unreadable.len()
        );
        for e in &rep.unreadable {
            body += &format!("<li>{}</li>\n", esc(e));
        }
        body += "</ul>\n";
    }
    body += "<nav><a href=\"#matrix\">Matrix</a><a href=\"#results\">Results</a><a href=\"#profiles\">Profiles</a><a href=\"#timing\">Timing</a>\
             <a href=\"#work-precision\">Work–precision</a>";
    if rep.figures.iter().any(|f| f.kind == "order_of_accuracy") {
        body += "<a href=\"#order\">Order of accuracy</a>";
    }
    if !rep.claims.is_empty() {
        body += "<a href=\"#claims\">Claims</a>";
    }
    body += "<a href=\"#cases\">Per case</a>";
    if rep.criterion.is_some() {
        body += "<a href=\"#criterion\">Benchmarks</a>";
    }
    body += "</nav>\n";
    body += &crate::html_matrix::section(&rep.matrix(), &rep.replays);
    body += "<h2 id=\"results\">Results</h2>\n";
    let ctx = rep.row_context();
    let heads = headers(ctx.baseline);
    let col = |name: &str| heads.iter().position(|h| h == name).expect("a column of the results table");
    let rows: Vec<(Vec<String>, Vec<Tone>)> = recs
        .iter()
        .map(|r| {
            let row = row(r, &ctx);
            let mut tones = vec![Tone::Plain; row.cells.len()];
            if r.is_reference() {
                tones[col("solver")] = Tone::Reference;
            }
            tones[col("status")] = row.status_tone;
            tones[col("oracle")] = row.oracle_tone;
            tones[col("gates")] = row.gate_tone;
            (row.cells, tones)
        })
        .collect();
    let h: Vec<&str> = heads.iter().map(String::as_str).collect();
    body += &table_of_class(&h, &rows, "sortable");
    body += "<p class=\"muted\">settings: the parameters that differ from the registered defaults. Click a header to sort.</p>\n";

    let oracle_rows: Vec<(Vec<String>, Vec<Tone>)> = recs
        .iter()
        .flat_map(|r| {
            r.summary.oracle.values().map(move |c| {
                let t = if c.pass { Tone::Good } else { Tone::Bad };
                (
                    vec![
                        r.case.label.clone(),
                        r.solver.name.clone(),
                        c.name.clone(),
                        cell(Some(c.measured)),
                        cell(Some(c.expected)),
                        cell(Some(c.error)),
                        cell(Some(c.tolerance)),
                        if c.pass { "pass".into() } else { "FAIL".into() },
                    ],
                    vec![Tone::Plain, Tone::Plain, Tone::Plain, Tone::Plain, Tone::Plain, Tone::Plain, Tone::Plain, t],
                )
            })
        })
        .collect();
    if !oracle_rows.is_empty() {
        body += "<h3>Oracle checks</h3>\n";
        body +=
            &table(&["case", "solver", "check", "measured", "expected", "error", "tolerance", "result"], &oracle_rows);
    }
    let not_ok: Vec<_> = recs.iter().filter(|r| r.status != RunStatus::Ok).collect();
    if !not_ok.is_empty() {
        body += "<h3>Skipped and failed pairs</h3>\n<ul>\n";
        for r in not_ok {
            body += &format!(
                "<li><b>{}</b> / <b>{}</b>: {}: {}</li>\n",
                esc(&r.case.label),
                esc(&r.solver.name),
                if r.status == RunStatus::Failed { "failed" } else { "skipped" },
                esc(r.reason.as_deref().unwrap_or(MISSING))
            );
        }
        body += "</ul>\n";
    }
    if let Some(g) = &rep.gates {
        body += &gates(g);
    }
    body += &claims(&rep.claims);
    let section = |kind: &str| -> String {
        let figs: Vec<&Figure> = rep.figures.iter().filter(|f| f.kind == kind).collect();
        if figs.is_empty() {
            return "<p class=\"muted\">No data for this figure in this run directory.</p>\n".into();
        }
        figs.into_iter().map(|f| figure(f, &rep.replays)).collect()
    };
    if !rep.left_out.is_empty() {
        body += "<p class=\"muted\"><b>Left out of the figures:</b></p>\n<ul>\n";
        for n in &rep.left_out {
            body += &format!("<li>{}</li>\n", esc(n));
        }
        body += "</ul>\n";
    }
    body += "<h2 id=\"profiles\">Performance profiles</h2>\n";
    body += &section("profile");
    if let Some((headers, rows)) = crate::table::fclib_matrix(&rep.records) {
        body += "<h3>FCLIB: every pair, graded by the harness</h3>\n";
        body += &format!("<p>{}</p>\n", esc(crate::table::FCLIB_MATRIX_NOTE));
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let rows: Vec<(Vec<String>, Vec<Tone>)> = rows.into_iter().map(|r| (r, vec![])).collect();
        body += &table(&h, &rows);
    }
    if let Some((headers, rows)) = crate::table::fclib_regularised(&rep.records) {
        body += "<h3>FCLIB: regularised models, own-model residual apart</h3>\n";
        body += &format!("<p>{}</p>\n", esc(crate::table::FCLIB_REGULARISED_NOTE));
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let rows: Vec<(Vec<String>, Vec<Tone>)> = rows.into_iter().map(|r| (r, vec![])).collect();
        body += &table(&h, &rows);
    }
    if let Some((headers, rows)) = crate::accuracy::table(&rep.records) {
        body += "<h2 id=\"time-to-accuracy\">Time to accuracy</h2>\n";
        body += &format!("<p>{}</p>\n", esc(crate::accuracy::NOTE));
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let rows: Vec<(Vec<String>, Vec<Tone>)> = rows.into_iter().map(|r| (r, vec![])).collect();
        body += &table(&h, &rows);
        body += &section("time_to_accuracy");
    }
    body += "<h2 id=\"timing\">Timing</h2>\n";
    body += &section("timing");
    if rep.figures.iter().any(|f| f.kind == "scaling") {
        body += "<h3 id=\"scaling\">Scaling with the scene's size</h3>\n";
        body += &section("scaling");
    }
    if let Some((headers, rows)) = crate::table::solver_stages(&rep.records) {
        body += "<h3>Solver stages (CPU, inside the solve time)</h3>\n";
        let h: Vec<&str> = headers.iter().map(String::as_str).collect();
        let rows: Vec<(Vec<String>, Vec<Tone>)> = rows.into_iter().map(|r| (r, vec![])).collect();
        body += &table(&h, &rows);
    }
    body += "<h2 id=\"work-precision\">Work–precision</h2>\n";
    if rep.figures.iter().any(|f| f.kind == "work_precision") {
        body += &section("work_precision");
    } else {
        body += "<p class=\"muted\">No sweep in this run directory: a sweep is two or more completed records of \
                 the same case and solver that differ only in <code>dt</code> or in one solver setting.</p>\n";
    }
    if rep.figures.iter().any(|f| f.kind == "order_of_accuracy") {
        body += "<h2 id=\"order\">Order of accuracy</h2>\n";
        body += &section("order_of_accuracy");
    }
    body += "<h2 id=\"cases\">Per case</h2>\n";
    for label in case_labels(recs) {
        body += &format!("<h3>{}</h3>\n", esc(&label));
        let figs: Vec<&Figure> = rep
            .figures
            .iter()
            .filter(|f| (f.kind == "convergence" || f.kind == "physics") && f.title.ends_with(&format!(" on {label}")))
            .collect();
        if figs.is_empty() {
            body += "<p class=\"muted\">No recorded steps or iteration logs for this case.</p>\n";
        }
        for f in figs {
            body += &figure(f, &rep.replays);
        }
    }
    if let Some((dir, est)) = &rep.criterion {
        body += &format!(
            "<h2 id=\"criterion\">Criterion benchmarks</h2>\n<p>From {}.</p>\n",
            esc(&dir.display().to_string())
        );
        let rows: Vec<(Vec<String>, Vec<Tone>)> = est
            .iter()
            .map(|e| {
                (
                    vec![
                        e.id.clone(),
                        cell(Some(e.mean_ns / 1e3)),
                        format!("[{}, {}]", cell(Some(e.mean_ci_ns.0 / 1e3)), cell(Some(e.mean_ci_ns.1 / 1e3))),
                        cell(Some(e.median_ns / 1e3)),
                    ],
                    vec![],
                )
            })
            .collect();
        body += &table(&["benchmark", "mean [µs]", "95% CI [µs]", "median [µs]"], &rows);
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>signorini report</title>\n\
         <style>{CSS}{}</style>\n</head>\n<body>\n{body}<script>{}{STEP_LINK_JS}</script>\n</body>\n</html>\n",
        crate::html_matrix::CSS,
        crate::html_matrix::SORT_JS
    )
}
