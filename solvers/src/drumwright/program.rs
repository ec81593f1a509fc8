//! A cone program in clarabel's standard form (`min ½xᵀPx + qᵀx`, `Ax + s = b`, `s ∈ K`), assembled
//! from triplets, and its solve with clarabel's status mapped onto the harness's status and errors
//! (as clarabel does): `Solved`/`AlmostSolved`/`MaxIterations`/`InsufficientProgress` keep the iterate;
//! infeasibility certificates become [`SolveError::Infeasible`], `NumericalError` and the rest
//! [`SolveError::Numerical`]. Nothing panics: clarabel's constructor errors are mapped too.

use super::settings::DrumwrightSettings;
use api::{SolveError, SolveStatus};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

/// Which cone a block of rows belongs to (rows are grouped: zero, then nonnegative, then SOCs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowKind {
    Zero,
    Nonneg,
}

/// One sparse row `Σ a_j x_j` and its right-hand side.
type Row = (Vec<(usize, f64)>, f64);

/// Builder of one cone program.
#[derive(Default)]
pub(crate) struct Program {
    pub nvar: usize,
    /// Upper-triangle triplets of `P`.
    pub p: Vec<(usize, usize, f64)>,
    pub q: Vec<f64>,
    zero: Vec<Row>,
    nonneg: Vec<Row>,
    soc: Vec<[Row; 3]>,
}

/// The primal solution and how good it is.
pub(crate) struct Solved {
    pub x: Vec<f64>,
    pub status: SolveStatus,
    pub iterations: u32,
}

/// clarabel's statistics of one solve, logged by the solver (one row per cone program).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stats {
    pub iterations: u32,
    pub r_prim: f64,
    pub r_dual: f64,
    pub solve_time: f64,
    pub status_code: u32,
}

impl Program {
    pub fn new(nvar: usize) -> Program {
        Program { nvar, q: vec![0.0; nvar], ..Default::default() }
    }
    /// `P[i][j] += v` for `i <= j` (the upper triangle; give each off-diagonal pair once).
    pub fn p_add(&mut self, i: usize, j: usize, v: f64) {
        if v != 0.0 {
            self.p.push((i.min(j), i.max(j), v));
        }
    }
    /// A row `a·x (= or ≥) b`, i.e. clarabel's `-a·x + s = -b` for `≥` and `a·x + s = b` with
    /// `s = 0` for `=`.
    pub fn row(&mut self, kind: RowKind, a: Vec<(usize, f64)>, b: f64) {
        match kind {
            RowKind::Zero => self.zero.push((a, b)),
            RowKind::Nonneg => self.nonneg.push((a.into_iter().map(|(j, v)| (j, -v)).collect(), -b)),
        }
    }
    /// `‖(x_r, x_s)‖ ≤ μ x_n` as one `SecondOrderConeT(3)` (`s = (μ x_n, x_r, x_s)`).
    pub fn soc(&mut self, n: usize, r: usize, s: usize, mu: f64) {
        self.soc.push([(vec![(n, -mu)], 0.0), (vec![(r, -1.0)], 0.0), (vec![(s, -1.0)], 0.0)]);
    }

    /// Solves with clarabel; pushes its statistics to `stats` (also when it fails).
    pub fn solve(self, s: &DrumwrightSettings, stats: &mut Vec<Stats>, stage: &str) -> Result<Solved, SolveError> {
        let n = self.nvar;
        let (mut ri, mut ci, mut vals, mut b) = (vec![], vec![], vec![], vec![]);
        let mut cones = Vec::new();
        let mut push = |a: &[(usize, f64)], bb: f64, b: &mut Vec<f64>| {
            let r = b.len();
            for &(j, v) in a {
                if v != 0.0 {
                    ri.push(r);
                    ci.push(j);
                    vals.push(v);
                }
            }
            b.push(bb);
        };
        for (a, bb) in &self.zero {
            push(a, *bb, &mut b);
        }
        if !self.zero.is_empty() {
            cones.push(SupportedConeT::ZeroConeT(self.zero.len()));
        }
        for (a, bb) in &self.nonneg {
            push(a, *bb, &mut b);
        }
        if !self.nonneg.is_empty() {
            cones.push(SupportedConeT::NonnegativeConeT(self.nonneg.len()));
        }
        for rows in &self.soc {
            for (a, bb) in rows {
                push(a, *bb, &mut b);
            }
            cones.push(SupportedConeT::SecondOrderConeT(3));
        }
        let m = b.len();
        if self.q.iter().chain(&b).chain(&vals).chain(self.p.iter().map(|t| &t.2)).any(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite { what: format!("{stage} cone program data") });
        }
        let (pi, pj, pv): (Vec<usize>, Vec<usize>, Vec<f64>) = {
            let mut pi = vec![];
            let mut pj = vec![];
            let mut pv = vec![];
            for &(i, j, v) in &self.p {
                pi.push(i);
                pj.push(j);
                pv.push(v);
            }
            (pi, pj, pv)
        };
        let pm = CscMatrix::new_from_triplets(n, n, pi, pj, pv);
        let am = CscMatrix::new_from_triplets(m, n, ri, ci, vals);
        let settings = DefaultSettingsBuilder::default()
            .verbose(false)
            .max_iter(s.max_iter)
            .tol_gap_abs(s.tolerance)
            .tol_gap_rel(s.tolerance)
            .tol_feas(s.tolerance)
            .equilibrate_enable(s.equilibrate)
            .build()
            .map_err(|e| SolveError::Unsupported { what: format!("clarabel settings: {e}") })?;
        let mut solver = DefaultSolver::new(&pm, &self.q, &am, &b, &cones, settings)
            .map_err(|e| SolveError::Unsupported { what: format!("clarabel rejected the {stage} problem: {e}") })?;
        solver.solve();
        let sol = &solver.solution;
        stats.push(Stats {
            iterations: sol.iterations,
            r_prim: sol.r_prim,
            r_dual: sol.r_dual,
            solve_time: sol.solve_time,
            status_code: sol.status as u32,
        });
        let status = match sol.status {
            SolverStatus::Solved => SolveStatus::Solved,
            SolverStatus::AlmostSolved => SolveStatus::AlmostSolved,
            SolverStatus::MaxIterations => SolveStatus::MaxIterations,
            SolverStatus::MaxTime => SolveStatus::TimeLimit,
            SolverStatus::InsufficientProgress => SolveStatus::InsufficientProgress,
            st @ (SolverStatus::PrimalInfeasible
            | SolverStatus::AlmostPrimalInfeasible
            | SolverStatus::DualInfeasible
            | SolverStatus::AlmostDualInfeasible) => {
                return Err(SolveError::Infeasible {
                    what: format!(
                        "clarabel reports {st:?} for the {stage} problem after {} iterations; the problem is \
                         always feasible (README §10.3), so this is numerical (large h B_r, README P4)",
                        sol.iterations
                    ),
                })
            }
            st => {
                return Err(SolveError::Numerical {
                    what: format!("clarabel status {st:?} for the {stage} problem after {} iterations", sol.iterations),
                })
            }
        };
        if let Some(k) = sol.x.iter().position(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite { what: format!("clarabel solution entry {k} ({stage})") });
        }
        Ok(Solved { x: sol.x.clone(), status, iterations: sol.iterations })
    }
}

/// The worse of two statuses (Solved = Stopped < AlmostSolved < InsufficientProgress <
/// MaxIterations < TimeLimit; drumwright's programs are never stopped by the harness's rule, whose
/// yardstick sees only each program's answer).
pub(crate) fn worse(a: SolveStatus, b: SolveStatus) -> SolveStatus {
    let rank = |s: SolveStatus| match s {
        SolveStatus::Solved | SolveStatus::Stopped => 0,
        SolveStatus::AlmostSolved => 1,
        SolveStatus::InsufficientProgress => 2,
        SolveStatus::MaxIterations => 3,
        SolveStatus::TimeLimit => 4,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}
