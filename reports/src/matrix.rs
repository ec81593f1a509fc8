//! The matrix view of a run: cases as rows, solvers as columns, one cell per (case, solver) pair
//! with the pair's oracle verdict and its total solve time relative to the fastest solver that
//! passed that case — who wins where, at a glance. Shown by `signorini report` (HTML, sortable)
//! and at the end of `signorini run` (plain text, [`Matrix::plain`]).
//!
//! Verdicts ([`Verdict`]), from the record's oracle checks (a pair that did not complete also
//! fails its `completed` check, as in the gate):
//! - **pass**: every check passes;
//! - **expected failure**: some check fails and every failing check is listed as an expected
//!   failure in the gates file (only when gates are given);
//! - **fail**: some failing check is not listed;
//! - **no oracle**: the pair completed but its case has no oracle checks;
//! - **skipped**: the solver lacks a capability the case needs (the reason is kept).
//!
//! A pair with unconverged steps (the solver stopped at its iteration cap or time budget without
//! reaching its tolerance) keeps its verdict — the oracle grades the physics, not the solver's
//! own residual — and is marked (`*`) with its count of unconverged steps.
//!
//! Relative time: the pair's total solve time (`summary.stage_times.solve_s`, as in the
//! performance profiles) over the smallest total solve time among the pairs of that case whose
//! verdict is pass, both floored at [`crate::profile::Measure::floor`]. Reference engines'
//! records ([`records::RunRecord::is_reference`]) get a column (after the solvers, marked as reference
//! engines) and a ratio, but do not set the fastest time: the matrix compares signorini's
//! solvers. A pair that did not complete has no ratio. FCLIB campaign records (case `fclib`)
//! are left out: they have their own profiles.

use crate::gate::{GateReport, Outcome, COMPLETED};
use crate::profile::Measure;
use records::{RunRecord, RunStatus};

/// The oracle verdict of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Every oracle check passes.
    Pass,
    /// Every failing check is listed as an expected failure.
    ExpectedFailure,
    /// Completed, but the case has no oracle checks.
    NoOracle,
    /// Some failing check is not listed.
    Fail,
    /// Not run: the solver lacks a capability the case needs.
    Skipped,
}

impl Verdict {
    /// The word shown in a cell.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::ExpectedFailure => "xfail",
            Verdict::NoOracle => "no oracle",
            Verdict::Fail => "FAIL",
            Verdict::Skipped => "skip",
        }
    }
}

/// One (case, solver) cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The oracle verdict.
    pub verdict: Verdict,
    /// Total solve time (s) of a completed pair.
    pub solve_s: Option<f64>,
    /// `solve_s` over the fastest passing solver's on this case (see the module doc).
    pub ratio: Option<f64>,
    /// Steps with `unconverged` status.
    pub unconverged: usize,
    /// Steps run.
    pub steps: usize,
    /// The failing checks (with `expected` marks), or the skip/failure reason.
    pub detail: String,
    /// Further records of the same pair (variants in a study's subdirectories; the first is
    /// shown).
    pub more: usize,
    /// A record of the equal-accuracy mode: `(eps, best)`, the accuracy and the best yardstick
    /// its worst step reached (`summary.accuracy`); `solve_s` is then the time to `eps` and
    /// `unconverged` counts the steps that never reached it.
    pub at_eps: Option<(f64, f64)>,
}

impl Cell {
    /// Whether this solver set the fastest passing time of its case.
    pub fn wins(&self) -> bool {
        self.verdict == Verdict::Pass && self.ratio == Some(1.0)
    }

    /// The cell's sort key: verdict first (pass < expected failure < no oracle < fail < skipped
    /// < missing), then the time ratio; lower is better.
    pub fn sort_key(cell: Option<&Cell>) -> f64 {
        match cell {
            None => 6e6,
            Some(c) => {
                let rank = match c.verdict {
                    Verdict::Pass => 0.0,
                    Verdict::ExpectedFailure => 1.0,
                    Verdict::NoOracle => 2.0,
                    Verdict::Fail => 3.0,
                    Verdict::Skipped => 4.0,
                };
                rank * 1e6 + c.ratio.unwrap_or(5e5).min(5e5)
            }
        }
    }

    /// The cell text: verdict, `*` when some steps are unconverged, the time ratio
    /// (`times` is the multiplication sign to use: `x` or `×`).
    pub fn text(&self, times: &str) -> String {
        let mut s = self.verdict.word().to_string();
        if self.unconverged > 0 {
            s.push('*');
        }
        if let Some(r) = self.ratio {
            s += &format!(" {}{times}", ratio_text(r));
        }
        if let Some((_, best)) = self.at_eps.filter(|_| self.unconverged > 0) {
            s += &format!(" (best {})", crate::figures::fmt_num(best));
        }
        s
    }

    /// Whether the pair is *unconverged at EPS*: a record of the equal-accuracy mode with steps
    /// that never reached its accuracy.
    pub fn unconverged_at_eps(&self) -> bool {
        self.at_eps.is_some() && self.unconverged > 0
    }

    /// A one-line explanation (tooltip): verdict, detail, unconverged steps, solve time.
    pub fn tooltip(&self, case: &str, solver: &str) -> String {
        let mut parts = vec![format!("{case} / {solver}: {}", self.verdict.word())];
        if !self.detail.is_empty() {
            parts.push(self.detail.clone());
        }
        if self.verdict != Verdict::Skipped {
            match self.at_eps {
                Some((eps, best)) => parts.push(format!(
                    "{}/{} steps unconverged at accuracy {eps:e} (best yardstick of the worst step {})",
                    self.unconverged,
                    self.steps,
                    crate::figures::fmt_num(best)
                )),
                None => parts.push(format!("{}/{} steps unconverged", self.unconverged, self.steps)),
            }
        }
        if let Some(t) = self.solve_s {
            parts.push(format!("total solve time {} s", crate::figures::fmt_num(t)));
        }
        if self.more > 0 {
            parts.push(format!("{} more record(s) of this pair; the first is shown", self.more));
        }
        parts.join("; ")
    }
}

/// A ratio for a cell: two significant digits below 10, whole numbers above.
pub fn ratio_text(r: f64) -> String {
    if !r.is_finite() {
        crate::figures::fmt_num(r)
    } else if r < 10.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.0}")
    }
}

/// Cases × solvers.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// Case labels (rows), in order of first appearance.
    pub cases: Vec<String>,
    /// Solver names (columns): signorini's solvers sorted by name (as in the figures' legends),
    /// then reference engines.
    pub solvers: Vec<String>,
    /// Whether column `s` is a reference engine.
    pub reference: Vec<bool>,
    /// `cells[case][solver]`; `None` when the run holds no record of the pair.
    pub cells: Vec<Vec<Option<Cell>>>,
}

/// The counts of the summary line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Pairs with a record.
    pub pairs: usize,
    /// Pairs that ran (not skipped).
    pub ran: usize,
    /// Verdict pass.
    pub pass: usize,
    /// Verdict expected failure.
    pub expected: usize,
    /// Verdict no oracle.
    pub no_oracle: usize,
    /// Verdict fail.
    pub fail: usize,
    /// Verdict skipped.
    pub skipped: usize,
    /// Pairs that ran with at least one unconverged step.
    pub with_unconverged: usize,
    /// Of those, pairs whose verdict is still pass.
    pub unconverged_pass: usize,
}

/// The failing oracle checks of `r` (with `completed` when the pair did not complete).
fn failing_checks(r: &RunRecord) -> Vec<String> {
    let mut out: Vec<String> = r.summary.oracle.values().filter(|c| !c.pass).map(|c| c.name.clone()).collect();
    if r.status == RunStatus::Failed {
        out.push(COMPLETED.into());
    }
    out
}

/// The cell of record `r`; `gates` marks listed failing checks as expected (ratio filled later).
fn cell(r: &RunRecord, gates: Option<&GateReport>) -> Cell {
    let listed = |check: &str| {
        gates.is_some_and(|g| {
            g.checks.iter().any(|c| {
                c.solver == r.solver.name
                    && c.case == r.case.label
                    && c.check == check
                    && c.outcome == Outcome::ExpectedFailure
            })
        })
    };
    let failing = failing_checks(r);
    let (verdict, detail) = if r.status == RunStatus::Skipped {
        (Verdict::Skipped, r.reason.clone().unwrap_or_default())
    } else if failing.is_empty() {
        let v = if r.summary.oracle.is_empty() { Verdict::NoOracle } else { Verdict::Pass };
        (v, String::new())
    } else {
        let all_listed = failing.iter().all(|c| listed(c));
        let names: Vec<String> =
            failing.iter().map(|c| if listed(c) { format!("{c} (expected)") } else { c.clone() }).collect();
        let mut detail = format!("failing: {}", names.join(", "));
        if r.status == RunStatus::Failed {
            detail += &format!(" ({})", r.reason.clone().unwrap_or_default());
        }
        (if all_listed { Verdict::ExpectedFailure } else { Verdict::Fail }, detail)
    };
    // in the equal-accuracy mode the solver's time to the accuracy (its own time, the harness's
    // yardstick left out)
    let solve = r.summary.accuracy.as_ref().map_or(r.summary.stage_times.solve_s, |a| a.total_time_s);
    Cell {
        verdict,
        solve_s: (r.status == RunStatus::Ok && solve.is_finite() && solve >= 0.0).then_some(solve),
        ratio: None,
        unconverged: r.summary.unconverged_steps,
        steps: r.summary.steps,
        detail,
        more: 0,
        at_eps: r.summary.accuracy.as_ref().map(|a| (a.eps, a.best)),
    }
}

impl Matrix {
    /// The matrix of `records` (see the module doc); `gates` is the gate check of the same
    /// records, when given.
    pub fn build(records: &[RunRecord], gates: Option<&GateReport>) -> Matrix {
        let records: Vec<&RunRecord> = records.iter().filter(|r| r.case.name != "fclib").collect();
        let mut cases: Vec<String> = vec![];
        let (mut own, mut refs): (Vec<String>, Vec<String>) = (vec![], vec![]);
        for r in &records {
            if !cases.contains(&r.case.label) {
                cases.push(r.case.label.clone());
            }
            let col = if r.is_reference() { &mut refs } else { &mut own };
            if !col.contains(&r.solver.name) {
                col.push(r.solver.name.clone());
            }
        }
        own.sort();
        refs.sort();
        let reference: Vec<bool> = own.iter().map(|_| false).chain(refs.iter().map(|_| true)).collect();
        let solvers: Vec<String> = own.into_iter().chain(refs).collect();
        let mut cells: Vec<Vec<Option<Cell>>> = vec![vec![None; solvers.len()]; cases.len()];
        for r in &records {
            let i = cases.iter().position(|c| *c == r.case.label).expect("listed above");
            let j = solvers.iter().position(|s| *s == r.solver.name).expect("listed above");
            match &mut cells[i][j] {
                Some(c) => c.more += 1,
                slot => *slot = Some(cell(r, gates)),
            }
        }
        let floor = Measure::SolveTime.floor();
        for row in &mut cells {
            let best = row
                .iter()
                .zip(&reference)
                .filter(|(_, is_ref)| !**is_ref)
                // in the equal-accuracy mode a pair sets the time only if every step reached it
                .filter_map(|(c, _)| {
                    c.as_ref().filter(|c| c.verdict == Verdict::Pass && !c.unconverged_at_eps()).and_then(|c| c.solve_s)
                })
                .map(|t| t.max(floor))
                .fold(f64::INFINITY, f64::min);
            if best.is_finite() {
                for c in row.iter_mut().flatten() {
                    c.ratio = c.solve_s.map(|t| t.max(floor) / best);
                }
            }
        }
        Matrix { cases, solvers, reference, cells }
    }

    /// The accuracy of the equal-accuracy mode when every cell that ran was run in it at one
    /// accuracy, else `None`.
    pub fn accuracy(&self) -> Option<f64> {
        let mut eps = self.cells.iter().flatten().flatten().filter(|c| c.verdict != Verdict::Skipped).map(|c| c.at_eps);
        let first = eps.next()??.0;
        eps.all(|e| e.is_some_and(|(x, _)| x == first)).then_some(first)
    }

    /// The legend's sentence on the equal-accuracy mode, when the cells were run in it
    /// ([`Self::accuracy`]).
    pub fn accuracy_note(&self) -> Option<String> {
        self.accuracy().map(|eps| {
            format!(
                "Equal-accuracy mode at {eps:e}: the times are the solvers' total times to reach it (every solver \
                 stopped by the harness at the first iterate within it); a pair sets the fastest time only if every \
                 step reached it; * (best X) = unconverged at {eps:e}: some steps never reached it, X the best \
                 yardstick of its worst step."
            )
        })
    }

    /// The cell of (case label, solver), if the run holds the pair.
    pub fn get(&self, case: &str, solver: &str) -> Option<&Cell> {
        let i = self.cases.iter().position(|c| c == case)?;
        let j = self.solvers.iter().position(|s| s == solver)?;
        self.cells[i][j].as_ref()
    }

    /// The verdict counts.
    pub fn counts(&self) -> Counts {
        let mut n = Counts::default();
        for c in self.cells.iter().flatten().flatten() {
            n.pairs += 1;
            match c.verdict {
                Verdict::Pass => n.pass += 1,
                Verdict::ExpectedFailure => n.expected += 1,
                Verdict::NoOracle => n.no_oracle += 1,
                Verdict::Fail => n.fail += 1,
                Verdict::Skipped => n.skipped += 1,
            }
            if c.verdict != Verdict::Skipped {
                n.ran += 1;
                if c.unconverged > 0 {
                    n.with_unconverged += 1;
                    if c.verdict == Verdict::Pass {
                        n.unconverged_pass += 1;
                    }
                }
            }
        }
        n
    }

    /// The distinct skip reasons, numbered from 1 in order of first appearance (row by row).
    pub fn skip_reasons(&self) -> Vec<String> {
        let mut out: Vec<String> = vec![];
        for c in self.cells.iter().flatten().flatten() {
            if c.verdict == Verdict::Skipped && !out.contains(&c.detail) {
                out.push(c.detail.clone());
            }
        }
        out
    }

    /// The footnote number of a skipped cell's reason (1-based).
    pub fn footnote(&self, c: &Cell) -> Option<usize> {
        if c.verdict != Verdict::Skipped {
            return None;
        }
        self.skip_reasons().iter().position(|r| *r == c.detail).map(|i| i + 1)
    }

    /// The matrix as aligned plain text for a terminal: the table, the legend, the skip reasons
    /// as numbered footnotes, and every pair with unconverged steps.
    pub fn plain(&self) -> String {
        let header: Vec<String> = std::iter::once("case".to_string())
            .chain(
                self.solvers
                    .iter()
                    .zip(&self.reference)
                    .map(|(s, &r)| if r { format!("{s} (ref)") } else { s.clone() }),
            )
            .collect();
        let mut rows = vec![header];
        for (case, row) in self.cases.iter().zip(&self.cells) {
            let mut cells = vec![case.clone()];
            for c in row {
                cells.push(match c {
                    None => "-".into(),
                    Some(c) => match self.footnote(c) {
                        Some(k) => format!("skip[{k}]"),
                        None => c.text("x"),
                    },
                });
            }
            rows.push(cells);
        }
        let mut w = vec![0; rows[0].len()];
        for r in &rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for (k, r) in rows.iter().enumerate() {
            let line: Vec<String> = r.iter().enumerate().map(|(i, c)| format!("{c:<width$}", width = w[i])).collect();
            out += line.join("  ").trim_end();
            out.push('\n');
            if k == 0 {
                out += &w.iter().map(|&n| "-".repeat(n)).collect::<Vec<_>>().join("  ");
                out.push('\n');
            }
        }
        match self.accuracy() {
            None => {
                out += "cells: oracle verdict (pass, xfail = expected failure, FAIL, no oracle, skip) and total solve \
                        time relative to the fastest solver that passed the case (1.0x = fastest); * = some steps \
                        unconverged\n"
            }
            Some(eps) => {
                out += &format!(
                    "cells at accuracy {eps:e} (equal-accuracy mode): oracle verdict (pass, xfail = expected failure, \
                     FAIL, no oracle, skip) and the solver's total time to the accuracy relative to the fastest \
                     solver that passed the case and reached it on every step (1.0x = fastest); * (best X) = \
                     unconverged at {eps:e}: some steps never reached it, X the best yardstick of its worst step\n"
                )
            }
        }
        for (k, why) in self.skip_reasons().iter().enumerate() {
            out += &format!("[{}] {why}\n", k + 1);
        }
        for (case, row) in self.cases.iter().zip(&self.cells) {
            for (solver, c) in self.solvers.iter().zip(row) {
                if let Some(c) = c.as_ref().filter(|c| c.unconverged > 0 && c.verdict != Verdict::Skipped) {
                    match c.at_eps {
                        Some((eps, best)) => {
                            out += &format!(
                                "unconverged at {eps:e}: {case} / {solver}: {}/{} steps, best {} ({})\n",
                                c.unconverged,
                                c.steps,
                                crate::figures::fmt_num(best),
                                c.verdict.word()
                            )
                        }
                        None => {
                            out += &format!(
                                "unconverged: {case} / {solver}: {}/{} steps ({})\n",
                                c.unconverged,
                                c.steps,
                                c.verdict.word()
                            )
                        }
                    }
                }
            }
        }
        out
    }

    /// The summary line: pairs, how many ran, and [`Matrix::verdict_line`].
    pub fn summary_line(&self) -> String {
        let n = self.counts();
        format!("{} pairs: {} ran, {} skipped; {}", n.pairs, n.ran, n.skipped, self.verdict_line())
    }

    /// How many pairs ran and pass their oracle checks, are expected failures or fail, and how
    /// many ran with unconverged steps.
    pub fn verdict_line(&self) -> String {
        let n = self.counts();
        let mut s =
            format!("{} ran and pass their oracle checks, {} expected failures, {} fail", n.pass, n.expected, n.fail);
        if n.no_oracle > 0 {
            s += &format!(", {} without oracle checks", n.no_oracle);
        }
        s += &format!(
            "; {} ran with unconverged steps ({} of them pass their oracle checks)",
            n.with_unconverged, n.unconverged_pass
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::record as rec;

    /// Two cases × three solvers: on `a`, p1 passes in 2 s, p2 passes in 1 s, p3 fails a check
    /// in 0.5 s (faster, but it did not pass, so p2 sets the time); on `b`, p1 passes with 3 of
    /// 10 steps unconverged, p2 is skipped and p3 did not complete.
    fn records() -> Vec<RunRecord> {
        let mut u = rec("b", "p1", RunStatus::Ok, 4.0, &[("x", true)]);
        u.summary.unconverged_steps = 3;
        vec![
            rec("a", "p1", RunStatus::Ok, 2.0, &[("x", true), ("y", true)]),
            rec("a", "p2", RunStatus::Ok, 1.0, &[("x", true), ("y", true)]),
            rec("a", "p3", RunStatus::Ok, 0.5, &[("x", true), ("y", false)]),
            u,
            rec("b", "p2", RunStatus::Skipped, 0.0, &[]),
            rec("b", "p3", RunStatus::Failed, 9.0, &[("x", true)]),
        ]
    }

    #[test]
    fn one_cell_per_pair_with_verdicts_and_ratios_to_the_fastest_pass() {
        let m = Matrix::build(&records(), None);
        assert_eq!(m.cases, ["a", "b"]);
        assert_eq!(m.solvers, ["p1", "p2", "p3"]);
        assert_eq!(m.cells.iter().flatten().flatten().count(), 6, "one cell per pair");
        let a1 = m.get("a", "p1").unwrap();
        assert_eq!((a1.verdict, a1.ratio), (Verdict::Pass, Some(2.0)));
        let a2 = m.get("a", "p2").unwrap();
        assert!(a2.wins() && a2.ratio == Some(1.0));
        let a3 = m.get("a", "p3").unwrap();
        assert_eq!((a3.verdict, a3.ratio), (Verdict::Fail, Some(0.5)), "a faster failure does not set the time");
        assert_eq!(a3.detail, "failing: y");
        let b1 = m.get("b", "p1").unwrap();
        assert_eq!((b1.verdict, b1.ratio, b1.unconverged), (Verdict::Pass, Some(1.0), 3));
        assert_eq!(b1.text("x"), "pass* 1.0x");
        let b2 = m.get("b", "p2").unwrap();
        assert_eq!((b2.verdict, b2.detail.as_str()), (Verdict::Skipped, "p2 lacks what b needs"));
        assert_eq!(m.footnote(b2), Some(1));
        let b3 = m.get("b", "p3").unwrap();
        assert_eq!((b3.verdict, b3.ratio), (Verdict::Fail, None), "a pair that did not complete has no time");
        assert!(b3.detail.starts_with("failing: completed"), "{}", b3.detail);
        let n = m.counts();
        assert_eq!(
            (n.pairs, n.ran, n.pass, n.fail, n.skipped, n.with_unconverged, n.unconverged_pass),
            (6, 5, 3, 2, 1, 1, 1)
        );
    }

    #[test]
    fn listed_failures_are_expected_and_unlisted_ones_fail() {
        let recs = records();
        let gates = crate::gate::parse(
            "[[expected_failure]]\nsolver = \"p3\"\ncase = \"a\"\ncheck = \"y\"\nmeasured = 0\nreason = \"t\"\nsee = \"t\"\n",
            "g.toml",
        )
        .unwrap();
        let files: Vec<_> = recs.iter().map(|r| (std::path::PathBuf::from(r.file_name()), r.clone())).collect();
        let g = crate::gate::evaluate(&gates, &files, crate::gate::Scope::Directory);
        let m = Matrix::build(&recs, Some(&g));
        assert_eq!(m.get("a", "p3").unwrap().verdict, Verdict::ExpectedFailure);
        assert_eq!(m.get("a", "p3").unwrap().detail, "failing: y (expected)");
        assert_eq!(m.get("b", "p3").unwrap().verdict, Verdict::Fail, "completed is not listed");
        assert_eq!(m.counts().expected, 1);
    }

    #[test]
    fn reference_engines_get_a_column_but_do_not_set_the_time() {
        let mut recs = records();
        let mut r = rec("a", "engine", RunStatus::Ok, 0.1, &[("x", true), ("y", true)]);
        r.solver.params.0.insert("reference".into(), serde_json::Value::Bool(true));
        recs.insert(0, r);
        let m = Matrix::build(&recs, None);
        assert_eq!(m.solvers, ["p1", "p2", "p3", "engine"], "reference engines after the solvers");
        assert_eq!(m.reference, [false, false, false, true]);
        assert_eq!(m.get("a", "engine").unwrap().ratio, Some(0.1));
        assert!(m.get("a", "p2").unwrap().wins());
    }

    #[test]
    fn plain_text_lists_skip_reasons_and_unconverged_steps() {
        let m = Matrix::build(&records(), None);
        let text = m.plain();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("case") && lines[0].contains("p3"));
        assert!(lines[2].starts_with("a ") && lines[2].contains("pass 2.0x") && lines[2].contains("FAIL 0.5x"));
        assert!(lines[3].contains("pass* 1.0x") && lines[3].contains("skip[1]"), "{}", lines[3]);
        assert!(text.contains("[1] p2 lacks what b needs\n"));
        assert!(text.contains("unconverged: b / p1: 3/10 steps (pass)\n"));
        assert_eq!(
            m.summary_line(),
            "6 pairs: 5 ran, 1 skipped; 3 ran and pass their oracle checks, 0 expected failures, 2 fail; \
             1 ran with unconverged steps (1 of them pass their oracle checks)"
        );
    }
}
