//! The HTML of the matrix view ([`crate::matrix`]) and the inline script that sorts the report's
//! tables (plain JavaScript, no external resources: the page stays standalone).
//!
//! Every matrix cell of a pair the run holds is a `<td data-pair="CASE__SOLVER" data-k="KEY">` (the key of
//! [`Cell::sort_key`]; lower is better) with the verdict's class, the pair's explanation as a
//! tooltip (`title`) and, for a skipped pair, a footnote number pointing to its reason under the
//! table (a pair the run does not hold is a "—" cell without `data-pair`). Reference engines' columns are italic and marked "reference engine". A footer row counts
//! each solver's wins (fastest passing solver of a case). Clicking a header sorts the rows by that
//! column (again: reversed); `ci/report-browser-check.sh` checks both in headless Chromium.

use crate::matrix::{ratio_text, Cell, Matrix, Verdict};
use crate::text::esc;

/// CSS of the matrix view and of sortable headers.
pub const CSS: &str = "
table.matrix td, table.matrix th { padding: 2px 5px; white-space: nowrap; }
table.matrix td.v { text-align: center; font-variant-numeric: tabular-nums; }
.v-pass { background: #e3f4e3; } .v-win { background: #a9dfa9; font-weight: 700; }
.v-xfail { background: #fff0c8; } .v-fail { background: #fbd0d0; color: #8b0000; font-weight: 600; }
.v-skip { background: #f3f3f3; color: #888; } .v-none { background: #fafafa; color: #555; }
table.sortable thead th { cursor: pointer; user-select: none; }
table.sortable thead th[aria-sort=ascending]::after { content: ' \\25B2'; }
table.sortable thead th[aria-sort=descending]::after { content: ' \\25BC'; }
";

/// Sorts the rows of every `table.sortable` by the clicked header's column: a cell's `data-k`
/// when it has one, else its number, else its text (numbers before text); a second click
/// reverses. Stable, so equal keys keep their previous order.
pub const SORT_JS: &str = r#"
(function () {
  function key(row, i) {
    var c = row.cells[i], k = c.getAttribute('data-k');
    if (k !== null) return parseFloat(k);
    var t = c.textContent.trim(), x = parseFloat(t);
    return (isNaN(x) || !/^[-0-9.]/.test(t)) ? t : x;
  }
  function cmp(a, b) {
    var na = typeof a === 'number', nb = typeof b === 'number';
    if (na && nb) return a - b;
    if (na) return -1;
    if (nb) return 1;
    return a.localeCompare(b);
  }
  var tables = document.querySelectorAll('table.sortable');
  for (var t = 0; t < tables.length; t++) (function (table) {
    var ths = table.tHead.rows[0].cells;
    for (var i = 0; i < ths.length; i++) (function (th, i) {
      th.addEventListener('click', function () {
        var asc = th.getAttribute('aria-sort') !== 'ascending';
        for (var j = 0; j < ths.length; j++) ths[j].removeAttribute('aria-sort');
        th.setAttribute('aria-sort', asc ? 'ascending' : 'descending');
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) { var d = cmp(key(a, i), key(b, i)); return asc ? d : -d; });
        for (var r = 0; r < rows.length; r++) body.appendChild(rows[r]);
      });
    })(ths[i], i);
  })(tables[t]);
})();
"#;

fn class(c: &Cell) -> &'static str {
    match c.verdict {
        Verdict::Pass if c.wins() => "v-win",
        Verdict::Pass => "v-pass",
        Verdict::ExpectedFailure => "v-xfail",
        Verdict::Fail => "v-fail",
        Verdict::Skipped => "v-skip",
        Verdict::NoOracle => "v-none",
    }
}

/// The `data-pair` value of a cell: `CASE__SOLVER`, as in a record's file name.
pub fn pair_id(case: &str, solver: &str) -> String {
    format!("{case}__{solver}")
}

/// The replay page of `case` when it shows `solver` (a link from the matrix cell).
fn replay_link(replays: &Replays, case: &str, solver: &str) -> Option<String> {
    let solvers = replays.get(case)?;
    solvers
        .iter()
        .any(|s| s == solver || s.split('-').next() == Some(solver))
        .then(|| format!("{}#solver={}", crate::replay::page_path(case), solver))
}

/// Case labels with a replay page and the solvers it shows ([`crate::report::Report::replays`]).
pub type Replays = std::collections::BTreeMap<String, Vec<String>>;

fn td(m: &Matrix, case: &str, solver: &str, is_ref: bool, c: Option<&Cell>, replays: &Replays) -> String {
    let key = Cell::sort_key(c);
    let pair = esc(&pair_id(case, solver));
    let Some(c) = c else {
        return format!("<td class=\"v v-skip\" data-k=\"{key}\" title=\"not in this run\">—</td>");
    };
    let text = match m.footnote(c) {
        Some(k) => format!("skip<sup>{k}</sup>"),
        None => {
            let mut t = esc(c.verdict.word());
            if c.unconverged > 0 {
                t += "*";
            }
            if let Some(r) = c.ratio {
                t += &format!(" {}×", ratio_text(r));
            }
            t
        }
    };
    let text = match replay_link(replays, case, solver) {
        Some(href) => format!("<a class=\"replay\" href=\"{}\" title=\"replay the motion\">{text}</a>", esc(&href)),
        None => text,
    };
    format!(
        "<td class=\"v {}{}\" data-pair=\"{pair}\" data-k=\"{key}\" title=\"{}\">{text}</td>",
        class(c),
        if is_ref { " ref" } else { "" },
        esc(&c.tooltip(case, solver))
    )
}

/// The matrix section: legend, the sortable table, skip reasons and the summary line.
pub fn section(m: &Matrix, replays: &Replays) -> String {
    let mut s = String::from(
        "<h2 id=\"matrix\">Matrix: who wins where</h2>\n<p>One cell per (case, solver) pair: the oracle verdict \
         (<span class=\"v-pass\">pass</span>, <span class=\"v-xfail\">xfail</span> = every failing check is a \
         listed expected failure, <span class=\"v-fail\">FAIL</span>, no oracle, <span class=\"v-skip\">skip</span> \
         with its reason below) and the total solve time relative to the fastest solver that passed the case \
         (<span class=\"v-win\">1.0×</span> = fastest). * = some steps unconverged (stopped at the iteration cap or \
         budget; hover for the count). Reference engines (italic) do not set the fastest time. Click a header to \
         sort: by a solver's column, verdict first, then relative time. A cell's link opens the replay of the \
         case (every solver side by side) when the run recorded trajectories.</p>\n",
    );
    if let Some(note) = m.accuracy_note() {
        s += &format!("<p>{}</p>\n", crate::text::esc(&note));
    }
    if m.cases.is_empty() {
        return s + "<p class=\"muted\">No (case, solver) pairs outside the FCLIB campaign.</p>\n";
    }
    s += "<div class=\"wide\"><table class=\"matrix sortable\" id=\"matrix-table\">\n<thead><tr><th>case</th>";
    for (name, &is_ref) in m.solvers.iter().zip(&m.reference) {
        if is_ref {
            s += &format!(
                "<th class=\"ref\" title=\"reference engine\">{}<br><small>reference engine</small></th>",
                esc(name)
            );
        } else {
            s += &format!("<th>{}</th>", esc(name));
        }
    }
    s += "</tr></thead>\n<tbody>\n";
    for (case, row) in m.cases.iter().zip(&m.cells) {
        s += &format!("<tr><td>{}</td>", esc(case));
        for ((solver, &is_ref), c) in m.solvers.iter().zip(&m.reference).zip(row) {
            s += &td(m, case, solver, is_ref, c.as_ref(), replays);
        }
        s += "</tr>\n";
    }
    s += "</tbody>\n<tfoot><tr><th>fastest pass</th>";
    for j in 0..m.solvers.len() {
        let wins = m.cells.iter().filter(|row| row[j].as_ref().is_some_and(Cell::wins)).count();
        s += &format!("<td class=\"v\">{wins}</td>");
    }
    s += "</tr></tfoot>\n</table></div>\n";
    let reasons = m.skip_reasons();
    if !reasons.is_empty() {
        s += "<ol class=\"muted\">\n";
        for r in reasons {
            s += &format!("<li>skipped: {}</li>\n", esc(&r));
        }
        s += "</ol>\n";
    }
    s + &format!("<p><b>{}.</b></p>\n", esc(&m.summary_line()))
}
