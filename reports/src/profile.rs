//! Dolan–Moré performance profiles (Dolan & Moré 2002, as used by Siconos' `faf` benchmark campaign;
//! docs/metrics.md).
//!
//! For problems `p` and solvers `s` with cost `t_{p,s}` (time or iterations to reach the
//! tolerance):
//! - `t_{p,s} = ∞` when the pair failed or did not reach its tolerance (a record with status
//!   `failed`, or with `unconverged_steps > 0`);
//! - `r_{p,s} = t_{p,s} / min_s t_{p,s}` (the minimum over the solvers that ran `p`; `∞` when no
//!   solver solved `p`);
//! - `ρ_s(τ) = |{p ∈ P_s : r_{p,s} ≤ τ}| / |P_s|`.
//!
//! `ρ_s(1)` is the share of problems where `s` was fastest, `ρ_s(τ → ∞)` its robustness.
//!
//! **Skipped pairs** (the solver lacks a capability the problem needs) are *excluded*: `P_s` is
//! the set of problems solver `s` was run on, so a solver is neither rewarded nor punished for a
//! problem it cannot express; the profile figure states `|P_s|` per solver. Dolan–Moré assume every
//! solver attempts every problem; where all `P_s` are equal this is exactly their definition.
//!
//! **Unconverged but within the oracle** ([`Cost::Unconverged`]): a pair that completed with
//! unconverged steps (its solver stopped at the iteration cap before its own tolerance) yet
//! passes every oracle check of its case is not the same as a failure: the physics the case
//! grades is right, the solver's residual target was not met. The strict profile counts it as
//! infinity like a failure (Dolan–Moré's "did not solve"); [`lenient`] turns it into a solved
//! pair at its cost, and the figure draws that second profile dashed, so the gap between the two
//! lines is exactly the unconverged-but-within-the-oracle share.
//!
//! Costs are floored at a measure-specific minimum ([`Measure::floor`]: 1 ns of solve time, 1
//! iteration) so a zero cost (a problem with no contacts) gives finite ratios.
//!
//! The problems of a profile are the case variants (labels) of one run directory; the cost of a
//! pair is its total over the run ([`Measure`]).
//!
//! **Records of the equal-accuracy mode** (`summary.accuracy`, `signorini run --accuracy EPS`):
//! the solve time is the solver's time to EPS (`summary.accuracy.total_time_s`), and a pair is
//! unconverged when some step never reached EPS (`unconverged_steps` counts those steps in this
//! mode), so the profile compares the time to one accuracy.

use records::{RunRecord, RunStatus};

/// The cost of one (problem, solver) pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cost {
    /// Reached the tolerance at this cost.
    Solved(f64),
    /// Failed, or did not reach the tolerance and fails an oracle check (or has none): counts
    /// as infinity.
    Failed,
    /// Completed with unconverged steps but passes every oracle check, at this cost: infinity
    /// in the strict profile, solved in the [`lenient`] one.
    Unconverged(f64),
    /// Not attempted (skipped): excluded from the solver's problem set.
    Excluded,
}

/// What a profile measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Total time in `Solver::step` over the run (s), `summary.stage_times.solve_s`.
    SolveTime,
    /// Total solver iterations over the run, `iterations_per_step.mean × steps`.
    Iterations,
}

impl Measure {
    /// Smallest cost used in ratios.
    pub fn floor(self) -> f64 {
        match self {
            Measure::SolveTime => 1e-9,
            Measure::Iterations => 1.0,
        }
    }
    /// Axis/caption name.
    pub fn name(self) -> &'static str {
        match self {
            Measure::SolveTime => "total solve time",
            Measure::Iterations => "total iterations",
        }
    }
}

/// A cost table: `costs[p][s]` for problem `p` and solver `s`.
#[derive(Debug, Clone, PartialEq)]
pub struct CostTable {
    /// Problem names (case labels).
    pub problems: Vec<String>,
    /// Solver names.
    pub solvers: Vec<String>,
    /// `costs[p][s]`.
    pub costs: Vec<Vec<Cost>>,
}

/// The cost table of a run directory's records: problems are the case labels, solvers the solver
/// names (both sorted). A missing or skipped pair is [`Cost::Excluded`]; a failed pair, or one
/// whose cost is not a finite number, is [`Cost::Failed`]; a completed pair with
/// `unconverged_steps > 0` is [`Cost::Unconverged`] when its oracle checks exist and all pass,
/// else [`Cost::Failed`].
pub fn cost_table(records: &[RunRecord], measure: Measure) -> CostTable {
    let mut problems: Vec<String> = records.iter().map(|r| r.case.label.clone()).collect();
    let mut solvers: Vec<String> = records.iter().map(|r| r.solver.name.clone()).collect();
    problems.sort();
    problems.dedup();
    solvers.sort();
    solvers.dedup();
    // the first record of each pair, indexed once (a search per cell was quadratic: 100,000
    // records took minutes)
    let mut first: std::collections::HashMap<(&str, &str), &RunRecord> = Default::default();
    for r in records {
        first.entry((r.case.label.as_str(), r.solver.name.as_str())).or_insert(r);
    }
    let costs = problems
        .iter()
        .map(|p| {
            solvers
                .iter()
                .map(|s| match first.get(&(p.as_str(), s.as_str())).copied() {
                    None => Cost::Excluded,
                    Some(r) if r.status == RunStatus::Skipped => Cost::Excluded,
                    Some(r) if r.status == RunStatus::Failed => Cost::Failed,
                    Some(r) => {
                        let c = match measure {
                            // the equal-accuracy mode: the solver's time to the accuracy
                            Measure::SolveTime => {
                                r.summary.accuracy.as_ref().map_or(r.summary.stage_times.solve_s, |a| a.total_time_s)
                            }
                            Measure::Iterations => r.summary.iterations_per_step.mean * r.summary.steps as f64,
                        };
                        let oracle_passes = !r.summary.oracle.is_empty() && r.summary.oracle.values().all(|c| c.pass);
                        match (c.is_finite() && c >= 0.0, r.summary.unconverged_steps > 0) {
                            (false, _) => Cost::Failed,
                            (true, false) => Cost::Solved(c),
                            (true, true) if oracle_passes => Cost::Unconverged(c),
                            (true, true) => Cost::Failed,
                        }
                    }
                })
                .collect()
        })
        .collect();
    CostTable { problems, solvers, costs }
}

/// The lenient cost table: every [`Cost::Unconverged`] counted as solved at its cost.
pub fn lenient(costs: &[Vec<Cost>]) -> Vec<Vec<Cost>> {
    costs
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| match c {
                    Cost::Unconverged(t) => Cost::Solved(*t),
                    c => *c,
                })
                .collect()
        })
        .collect()
}

/// Number of [`Cost::Unconverged`] pairs of solver column `s`.
pub fn unconverged(costs: &[Vec<Cost>], s: usize) -> usize {
    costs.iter().filter(|row| matches!(row[s], Cost::Unconverged(_))).count()
}

/// Performance ratios `r_{p,s}`: `None` for excluded pairs, `Some(∞)` for failures and
/// unconverged pairs (strict; see [`lenient`]).
pub fn ratios(costs: &[Vec<Cost>], floor: f64) -> Vec<Vec<Option<f64>>> {
    costs
        .iter()
        .map(|row| {
            let best = row
                .iter()
                .filter_map(|c| match c {
                    Cost::Solved(t) => Some(t.max(floor)),
                    _ => None,
                })
                .fold(f64::INFINITY, f64::min);
            row.iter()
                .map(|c| match c {
                    Cost::Solved(t) if best.is_finite() => Some(t.max(floor) / best),
                    Cost::Solved(_) | Cost::Failed | Cost::Unconverged(_) => Some(f64::INFINITY),
                    Cost::Excluded => None,
                })
                .collect()
        })
        .collect()
}

/// `ρ_s(τ)` for solver column `s` of a ratio table (NaN when the solver attempted no problem).
pub fn rho(ratios: &[Vec<Option<f64>>], s: usize, tau: f64) -> f64 {
    let attempted: Vec<f64> = ratios.iter().filter_map(|row| row[s]).collect();
    if attempted.is_empty() {
        return f64::NAN;
    }
    attempted.iter().filter(|&&r| r <= tau).count() as f64 / attempted.len() as f64
}

/// The profile of solver `s` as a step function: `(τ_i, ρ_s(τ_i))` at every distinct finite ratio,
/// ascending (ρ is constant between breakpoints and after the last one).
pub fn curve(ratios: &[Vec<Option<f64>>], s: usize) -> Vec<(f64, f64)> {
    let mut finite: Vec<f64> = ratios.iter().filter_map(|row| row[s]).filter(|r| r.is_finite()).collect();
    finite.sort_by(f64::total_cmp);
    finite.dedup();
    finite.into_iter().map(|tau| (tau, rho(ratios, s, tau))).collect()
}

/// Number of problems solver `s` attempted (`|P_s|`).
pub fn attempted(ratios: &[Vec<Option<f64>>], s: usize) -> usize {
    ratios.iter().filter(|row| row[s].is_some()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Cost::{Excluded, Failed, Solved, Unconverged};

    /// 3 solvers x 4 problems, one failure each for A and C. Hand-computed:
    /// ```text
    ///        A    B    C      min  | r_A  r_B  r_C
    /// P1     1    2    4      1    | 1    2    4
    /// P2     3    1    fail   1    | 3    1    inf
    /// P3     2    2    1      1    | 2    2    1
    /// P4     fail 10   5      5    | inf  2    1
    /// ```
    fn table() -> Vec<Vec<Cost>> {
        vec![
            vec![Solved(1.0), Solved(2.0), Solved(4.0)],
            vec![Solved(3.0), Solved(1.0), Failed],
            vec![Solved(2.0), Solved(2.0), Solved(1.0)],
            vec![Failed, Solved(10.0), Solved(5.0)],
        ]
    }

    #[test]
    fn hand_computed_profile() {
        let r = ratios(&table(), 1e-9);
        assert_eq!(r[3][0], Some(f64::INFINITY));
        assert_eq!(r[3][1], Some(2.0));
        let cases = [
            // (solver, tau, rho)
            (0, 1.0, 0.25),
            (0, 1.99, 0.25),
            (0, 2.0, 0.5),
            (0, 3.0, 0.75),
            (0, 1e9, 0.75),
            (1, 1.0, 0.25),
            (1, 2.0, 1.0),
            (2, 1.0, 0.5),
            (2, 3.9, 0.5),
            (2, 4.0, 0.75),
            (2, 1e9, 0.75),
        ];
        for (s, tau, want) in cases {
            assert_eq!(rho(&r, s, tau), want, "rho_{s}({tau})");
        }
        // wins: A on P1, B on P2, C on P3 and P4
        let wins: f64 = (0..3).map(|s| rho(&r, s, 1.0) * 4.0).sum();
        assert_eq!(wins, 4.0);
        assert_eq!(curve(&r, 0), vec![(1.0, 0.25), (2.0, 0.5), (3.0, 0.75)]);
        assert_eq!(curve(&r, 2), vec![(1.0, 0.5), (4.0, 0.75)]);
    }

    #[test]
    fn skipped_pairs_leave_the_denominator() {
        let mut t = table();
        t[1][2] = Excluded; // C skipped P2 instead of failing it
        let r = ratios(&t, 1e-9);
        assert_eq!(attempted(&r, 2), 3);
        assert_eq!(rho(&r, 2, 1.0), 2.0 / 3.0);
        assert_eq!(rho(&r, 2, 4.0), 1.0);
        assert_eq!(rho(&r, 0, 3.0), 0.75, "other solvers unchanged");
    }

    #[test]
    fn unsolved_problem_and_zero_cost() {
        let r = ratios(&[vec![Failed, Failed], vec![Solved(0.0), Solved(2.0)]], 1.0);
        assert_eq!(r[0], vec![Some(f64::INFINITY), Some(f64::INFINITY)]);
        assert_eq!(r[1], vec![Some(1.0), Some(2.0)]);
        assert!(rho(&[vec![None]], 0, 1.0).is_nan());
    }

    /// A's failure on P4 becomes "unconverged within the oracle" at cost 4: the strict profile
    /// is unchanged (infinity), the lenient one solves P4 at ratio 4/5 -> A is fastest there.
    #[test]
    fn unconverged_within_the_oracle_is_infinite_strictly_and_solved_leniently() {
        let mut t = table();
        t[3][0] = Unconverged(4.0);
        let strict = ratios(&t, 1e-9);
        assert_eq!(strict, ratios(&table(), 1e-9), "strict: as a failure");
        assert_eq!(unconverged(&t, 0), 1);
        let l = ratios(&lenient(&t), 1e-9);
        assert_eq!(l[3], vec![Some(1.0), Some(2.5), Some(1.25)], "P4's best is now A at 4");
        assert_eq!(rho(&l, 0, 1e9), 1.0);
        assert_eq!(rho(&strict, 0, 1e9), 0.75);
    }

    /// The classification of records: unconverged with every oracle check passing, unconverged
    /// with a failing check, unconverged without checks, converged, failed, skipped.
    #[test]
    fn cost_table_tells_unconverged_within_the_oracle_from_failed() {
        use crate::test_records::record;
        let mut recs = vec![
            record("a", "within", RunStatus::Ok, 2.0, &[("x", true)]),
            record("a", "outside", RunStatus::Ok, 2.0, &[("x", false)]),
            record("a", "unchecked", RunStatus::Ok, 2.0, &[]),
            record("a", "converged", RunStatus::Ok, 2.0, &[("x", false)]),
            record("a", "failed", RunStatus::Failed, 2.0, &[("x", true)]),
            record("a", "skipped", RunStatus::Skipped, 2.0, &[]),
        ];
        for r in &mut recs[..3] {
            r.summary.unconverged_steps = 1;
        }
        let t = cost_table(&recs, Measure::SolveTime);
        let cost = |s: &str| t.costs[0][t.solvers.iter().position(|x| x == s).unwrap()];
        assert_eq!(cost("within"), Unconverged(2.0));
        assert_eq!(cost("outside"), Failed);
        assert_eq!(cost("unchecked"), Failed);
        assert_eq!(cost("converged"), Solved(2.0), "converged: solved whatever its oracle says");
        assert_eq!(cost("failed"), Failed);
        assert_eq!(cost("skipped"), Excluded);
    }

    /// In the equal-accuracy mode the cost is the solver's time to the accuracy
    /// (`summary.accuracy.total_time_s`), not the solve time with the harness's yardstick in it.
    #[test]
    fn records_of_the_equal_accuracy_mode_cost_their_time_to_eps() {
        use crate::test_records::record;
        let step = records::StepAccuracy { reached: true, iterations: 1, time_s: 0.5, best: 1e-7, own: None };
        let mut r = record("a", "p", RunStatus::Ok, 2.0, &[("x", true)]);
        r.summary.accuracy = Some(records::AccuracySummary::of(1e-6, "y", 1e-300, &[step, step]));
        assert_eq!(cost_table(&[r], Measure::SolveTime).costs[0][0], Solved(1.0));
    }
}
