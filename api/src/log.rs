//! Per-iteration statistics a solver records while it works (ContactBench `Statistics`, Drake
//! `SapStatistics`): named columns of `f64`, one row per iteration, plus the elapsed time.

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// The yardstick of a [`StopRule`]: from an iterate (velocity, contact impulses, bilateral
/// impulses) to a non-negative number, smaller is more accurate.
pub type Yardstick = Arc<dyn Fn(&[f64], &[[f64; 3]], &[f64]) -> f64 + Send + Sync>;

/// The harness's stopping rule for comparisons at equal accuracy: a yardstick the harness
/// computes on every iterate a solver hands over ([`IterationLog::iterate`]), and the accuracy
/// `eps` at which the solver is stopped ([`IterationLog::should_stop`]), whatever its own
/// criterion says.
#[derive(Clone)]
pub struct StopRule {
    /// The yardstick.
    pub yardstick: Yardstick,
    /// Stop once the yardstick is at most this.
    pub eps: f64,
}

impl std::fmt::Debug for StopRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopRule").field("eps", &self.eps).finish_non_exhaustive()
    }
}

/// Named per-iteration columns. Each name states its norm and normalisation (e.g.
/// `natmap_rel_l2`, `rel_step_l2`, `cost`, `alpha`, `inner_iters`). The column `time_s` (seconds
/// since the log was started) is added automatically.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IterationLog {
    /// Column names, in first-use order; `time_s` is first.
    pub names: Vec<String>,
    /// `columns[k][i]` = value of column `names[k]` at iteration `i` (NaN where not recorded;
    /// written as `null` in JSON and read back as NaN).
    #[serde(deserialize_with = "nullable_columns")]
    pub columns: Vec<Vec<f64>>,
    /// Iterations not recorded because the log was full ([`MAX_LOG_ROWS`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: usize,
    #[serde(skip, default = "Instant::now")]
    start: Instant,
    /// When the step this log belongs to must end (set by the stepper from the run's time limits).
    #[serde(skip)]
    deadline: Option<Instant>,
    /// The iterates handed over by the solver (`(row, iterate)`), when this log records them.
    #[serde(skip)]
    iterates: Option<Vec<(usize, Iterate)>>,
    /// Numbers held by `iterates` so far (bounded by [`MAX_ITERATE_NUMBERS`]).
    #[serde(skip)]
    iterate_numbers: usize,
    /// Seconds spent in the solver's named stages during this step ([`Self::add_stage`]).
    #[serde(skip)]
    stages: std::collections::BTreeMap<String, f64>,
    /// The harness's stopping rule, when the step is run at equal accuracy.
    #[serde(skip)]
    stop: Option<StopRule>,
    /// The smallest yardstick of the iterates handed over so far (with a stopping rule).
    #[serde(skip)]
    best: Option<f64>,
}

/// A solver's iterate: velocity, contact impulses (N s, `(n, t1, t2)`) and bilateral impulses.
#[derive(Debug, Clone, PartialEq)]
pub struct Iterate {
    /// Generalized velocity.
    pub v: Vec<f64>,
    /// Contact impulses, one per contact.
    pub impulses: Vec<[f64; 3]>,
    /// Bilateral impulses, one per row (empty if none).
    pub bilateral: Vec<f64>,
}

/// Most numbers (velocities and impulses over all iterates) one log keeps for the yardstick:
/// 8 M numbers, 64 MB; later iterates are not kept.
pub const MAX_ITERATE_NUMBERS: usize = 8 << 20;

/// Most iterations one log keeps; later ones are counted in [`IterationLog::dropped`], so that a
/// huge iteration budget cannot fill the memory with statistics.
pub const MAX_LOG_ROWS: usize = 100_000;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Reads columns whose non-finite entries were written as `null`.
fn nullable_columns<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Vec<f64>>, D::Error> {
    let cols: Vec<Vec<Option<f64>>> = Vec::deserialize(d)?;
    Ok(cols.into_iter().map(|c| c.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect()).collect())
}

impl Default for IterationLog {
    fn default() -> Self {
        Self::new()
    }
}

impl IterationLog {
    /// An empty log whose clock starts now.
    pub fn new() -> Self {
        Self {
            names: vec!["time_s".into()],
            columns: vec![vec![]],
            dropped: 0,
            start: Instant::now(),
            deadline: None,
            iterates: None,
            iterate_numbers: 0,
            stages: Default::default(),
            stop: None,
            best: None,
        }
    }

    /// This log, with the harness's stopping rule: every iterate handed over is measured (column
    /// `yardstick`) and [`Self::should_stop`] turns true once one meets `rule.eps`.
    pub fn with_stop_rule(mut self, rule: StopRule) -> Self {
        self.stop = Some(rule);
        self
    }

    /// The smallest yardstick measured so far (`None` without a stopping rule, or before the
    /// first iterate).
    pub fn best_yardstick(&self) -> Option<f64> {
        self.best
    }

    /// Whether an iterate met the stopping rule's accuracy.
    pub fn accuracy_reached(&self) -> bool {
        matches!((&self.stop, self.best), (Some(r), Some(b)) if b <= r.eps)
    }

    /// Whether the solver must stop now: the step's deadline passed ([`Self::past_deadline`]) or
    /// the harness's stopping rule was met ([`Self::accuracy_reached`]). Solvers ask once per
    /// outer iteration, after handing over their iterate ([`Self::iterate`]), and return it with
    /// [`Self::stop_status`].
    pub fn should_stop(&self) -> bool {
        self.accuracy_reached() || self.past_deadline()
    }

    /// The status of an iterate returned because [`Self::should_stop`] said so:
    /// [`crate::SolveStatus::Stopped`] when the accuracy was reached, else
    /// [`crate::SolveStatus::TimeLimit`].
    pub fn stop_status(&self) -> crate::SolveStatus {
        if self.accuracy_reached() {
            crate::SolveStatus::Stopped
        } else {
            crate::SolveStatus::TimeLimit
        }
    }

    /// Adds `seconds` to the solver's stage `name` for this step (the stepper sums them over the
    /// run into the record's `summary.solver_stages_s`).
    pub fn add_stage(&mut self, name: &str, seconds: f64) {
        *self.stages.entry(name.to_string()).or_insert(0.0) += seconds;
    }

    /// The stage times of this step (s).
    pub fn stages(&self) -> &std::collections::BTreeMap<String, f64> {
        &self.stages
    }

    /// This log, keeping the iterates the solver hands over ([`Self::iterate`]) for the
    /// solver-independent yardstick (the harness's yardstick).
    pub fn recording_iterates(mut self) -> Self {
        self.iterates = Some(vec![]);
        self
    }

    /// Whether [`Self::iterate`] uses what it is given (it keeps iterates, or measures them for
    /// a stopping rule); a solver may skip forming an iterate that costs something when not.
    pub fn wants_iterates(&self) -> bool {
        self.iterates.is_some() || self.stop.is_some()
    }

    /// Hands over the solver's current iterate (velocity, contact impulses, bilateral impulses),
    /// tied to the last recorded row; call it right after [`Self::record`]. With a stopping rule
    /// the harness measures it (column `yardstick`). Free when the log neither records iterates
    /// nor has a stopping rule.
    pub fn iterate(&mut self, v: &[f64], impulses: &[[f64; 3]], bilateral: &[f64]) {
        if let Some(rule) = &self.stop {
            let y = (rule.yardstick)(v, impulses, bilateral);
            // NaN never counts as reached
            if !y.is_nan() && self.best.is_none_or(|b| y < b) {
                self.best = Some(y);
            }
            if !self.is_empty() {
                let row = self.len() - 1;
                self.set(row, "yardstick", y);
            }
        }
        let Some(list) = self.iterates.as_mut() else { return };
        let n = v.len() + 3 * impulses.len() + bilateral.len();
        if self.iterate_numbers + n > MAX_ITERATE_NUMBERS || self.columns[0].is_empty() {
            return;
        }
        self.iterate_numbers += n;
        let row = self.columns[0].len() - 1;
        list.push((row, Iterate { v: v.to_vec(), impulses: impulses.to_vec(), bilateral: bilateral.to_vec() }));
    }

    /// The iterates kept so far, with their rows (emptied).
    pub fn take_iterates(&mut self) -> Vec<(usize, Iterate)> {
        self.iterate_numbers = 0;
        self.iterates.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Sets column `name` at `row` (adding the column, NaN elsewhere, if new).
    pub fn set(&mut self, row: usize, name: &str, value: f64) {
        let rows = self.len();
        if row >= rows {
            return;
        }
        let k = self.column_index(name, rows);
        self.columns[k][row] = value;
    }

    /// An empty log for a step that must end by `deadline` (see [`Self::past_deadline`]).
    pub fn with_deadline(deadline: Option<Instant>) -> Self {
        Self { deadline, ..Self::new() }
    }

    /// Whether the step's deadline has passed. Solvers ask once per outer iteration (next to
    /// [`Self::record`]) and, when it has, stop and return their current iterate with
    /// [`crate::SolveStatus::TimeLimit`], so a step with a huge budget ends on time with what it
    /// has instead of running for hours.
    pub fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Number of recorded iterations.
    pub fn len(&self) -> usize {
        self.columns[0].len()
    }

    /// Whether no iteration was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records one iteration: the given `(name, value)` pairs and the elapsed time.
    pub fn record(&mut self, entries: &[(&str, f64)]) {
        let row = self.len();
        if row >= MAX_LOG_ROWS {
            self.dropped += 1;
            return;
        }
        self.columns[0].push(self.start.elapsed().as_secs_f64());
        for &(name, value) in entries {
            let k = self.column_index(name, row);
            self.columns[k].push(value);
        }
        for col in &mut self.columns {
            if col.len() < row + 1 {
                col.push(f64::NAN);
            }
        }
    }

    /// The index of column `name`, added (with `rows` NaN entries) if new.
    fn column_index(&mut self, name: &str, rows: usize) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(k) => k,
            None => {
                self.names.push(name.to_string());
                self.columns.push(vec![f64::NAN; rows]);
                self.names.len() - 1
            }
        }
    }

    /// The column called `name`, if recorded.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        self.names.iter().position(|n| n == name).map(|k| self.columns[k].as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stopping rule measures each iterate, keeps the best, and says stop once one meets
    /// `eps` (not before, and never on NaN); without a rule nothing is measured.
    #[test]
    fn the_stop_rule_stops_at_the_first_iterate_within_eps() {
        let rule = StopRule { yardstick: Arc::new(|_, r, _| (r[0][0] - 1.0).abs()), eps: 1e-3 };
        let mut log = IterationLog::new().with_stop_rule(rule);
        assert!(log.wants_iterates() && !log.should_stop() && log.best_yardstick().is_none());
        for (k, r) in [0.5, f64::NAN, 0.99, 0.9995, 0.9].into_iter().enumerate() {
            log.record(&[("k", k as f64)]);
            log.iterate(&[], &[[r, 0.0, 0.0]], &[]);
            let reached = k >= 3;
            assert_eq!(log.should_stop(), reached, "iterate {k}");
            assert_eq!(log.stop_status() == crate::SolveStatus::Stopped, reached);
        }
        assert!((log.best_yardstick().unwrap() - 5e-4).abs() < 1e-12);
        let y = log.column("yardstick").unwrap();
        assert!(y[1].is_nan() && (y[0] - 0.5).abs() < 1e-15 && (y[4] - 0.1).abs() < 1e-12);
        let mut plain = IterationLog::new();
        plain.record(&[]);
        plain.iterate(&[], &[[1.0, 0.0, 0.0]], &[]);
        assert!(!plain.wants_iterates() && !plain.should_stop() && plain.column("yardstick").is_none());
        assert_eq!(plain.stop_status(), crate::SolveStatus::TimeLimit);
    }

    #[test]
    fn columns_are_padded_with_nan() {
        let mut log = IterationLog::new();
        log.record(&[("a", 1.0)]);
        log.record(&[("b", 2.0)]);
        log.record(&[("a", 3.0), ("b", 4.0)]);
        assert_eq!(log.len(), 3);
        let a = log.column("a").unwrap();
        assert_eq!((a[0], a[2]), (1.0, 3.0));
        assert!(a[1].is_nan());
        assert!(log.column("b").unwrap()[0].is_nan());
        assert!(log.column("time_s").unwrap().windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn nan_padding_round_trips_through_json() {
        let mut log = IterationLog::new();
        log.record(&[("a", 1.0)]);
        log.record(&[("b", f64::INFINITY)]);
        let back: IterationLog = serde_json::from_str(&serde_json::to_string(&log).unwrap()).unwrap();
        assert_eq!(back.column("a").unwrap()[0], 1.0);
        assert!(back.column("a").unwrap()[1].is_nan() && back.column("b").unwrap()[1].is_nan());
    }
}
