//! The time-to-accuracy table of records run in the equal-accuracy mode (`summary.accuracy`,
//! `signorini run --accuracy EPS`; the study `ci/studies/time-to-accuracy.toml`): per scene,
//! solver and accuracy, the fraction of steps that reached it, the median and worst solver time
//! per step to reach it, and, for a pair unconverged at the accuracy, the best yardstick its worst
//! step reached. The rigid natural map of the answers (`natmap_rel_l2`, max over steps) stands
//! beside it: for the regularised models the yardstick is their own model's, not the rigid one.

use crate::text::fmt_num;
use records::{RunRecord, RunStatus};

/// What the table shows, for its caption.
pub const NOTE: &str = "Equal-accuracy mode: the harness stopped every solver, on every step, at the first iterate \
     whose yardstick met the accuracy (the natural map of its contact model relative to ||J v* + w||, or the \
     momentum error when larger; the momentum error alone for the regularised sap and drumwright), or at its \
     budget. reached: steps whose answer met it; time/step: the solver's time to meet it (median and worst over \
     the steps that did; the harness's yardstick evaluations left out); best: the best yardstick the worst step \
     reached (when some step did not reach it: unconverged at the accuracy); natmap_rel max: the rigid natural \
     map of the answers, beside it.";

/// The records in the mode, as `(headers, rows)` sorted by scene, solver and accuracy (coarsest
/// first); `None` when no record is in the mode.
pub fn table(records: &[RunRecord]) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut rs: Vec<&RunRecord> = records.iter().filter(|r| r.summary.accuracy.is_some()).collect();
    if rs.is_empty() {
        return None;
    }
    let eps = |r: &RunRecord| r.summary.accuracy.as_ref().map_or(f64::NAN, |a| a.eps);
    rs.sort_by(|a, b| {
        (a.case.label.as_str(), a.solver.name.as_str())
            .cmp(&(b.case.label.as_str(), b.solver.name.as_str()))
            .then(eps(b).total_cmp(&eps(a)))
    });
    let headers = [
        "scene",
        "solver",
        "accuracy",
        "reached",
        "time/step median [s]",
        "time/step worst [s]",
        "best",
        "natmap_rel max",
    ];
    let rows = rs
        .iter()
        .filter_map(|r| {
            let a = r.summary.accuracy.as_ref()?;
            let steps = r.summary.steps;
            let reached = match r.status {
                RunStatus::Failed => format!("{}/{steps} (failed)", a.reached_steps),
                _ => format!("{}/{steps} ({:.0} %)", a.reached_steps, 100.0 * a.fraction_reached),
            };
            let best = if a.unconverged() { format!("unconverged: {}", fmt_num(a.best)) } else { "-".into() };
            let natmap = r.summary.metrics.get("natmap_rel_l2").map_or("-".into(), |m| fmt_num(m.max));
            Some(vec![
                r.case.label.clone(),
                r.solver.name.clone(),
                format!("{:e}", a.eps),
                reached,
                fmt_num(a.time_to_eps_median_s),
                fmt_num(a.time_to_eps_worst_s),
                best,
                natmap,
            ])
        })
        .collect();
    Some((headers.iter().map(|s| s.to_string()).collect(), rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::record as rec;
    use records::{AccuracySummary, StepAccuracy};

    /// Rows per record in the mode only, sorted by scene, solver and accuracy (coarsest first);
    /// a pair with an unreached step shows its best yardstick.
    #[test]
    fn one_row_per_record_in_the_mode() {
        assert!(table(&[rec("a", "p", RunStatus::Ok, 1.0, &[])]).is_none(), "no record in the mode");
        let step = |reached, time_s, best| StepAccuracy { reached, iterations: 3, time_s, best, own: None };
        let mut fine = rec("a", "p", RunStatus::Ok, 1.0, &[]);
        fine.summary.accuracy =
            Some(AccuracySummary::of(1e-4, "y", 1e-300, &[step(true, 1.0, 1e-5), step(true, 3.0, 2e-5)]));
        let mut hard = rec("a", "p", RunStatus::Ok, 1.0, &[]);
        hard.summary.accuracy =
            Some(AccuracySummary::of(1e-8, "y", 1e-300, &[step(true, 2.0, 1e-9), step(false, 9.0, 3e-7)]));
        let (h, rows) = table(&[hard, fine]).unwrap();
        assert_eq!(h.len(), rows[0].len());
        assert_eq!(rows[0][2], "1e-4", "coarsest first");
        assert_eq!(rows[0][3], "2/10 (100 %)");
        assert_eq!((rows[0][4].as_str(), rows[0][5].as_str(), rows[0][6].as_str()), ("2", "3", "-"));
        assert_eq!((rows[1][3].as_str(), rows[1][4].as_str()), ("1/10 (50 %)", "2"));
        assert!(rows[1][6].starts_with("unconverged: 3"), "{}", rows[1][6]);
    }
}
