//! [`Program`]: a cone program in clarabel's standard form (`min ½xᵀPx + qᵀx`, `Ax + s = b`,
//! `s ∈ K`), assembled from rows, and its solve with clarabel's status mapped onto the harness's
//! status and errors (as clarabel does): `Solved`/`AlmostSolved`/`MaxIterations`/`InsufficientProgress`
//! keep the iterate; infeasibility certificates become [`SolveError::Infeasible`], `NumericalError`
//! and the rest [`SolveError::Numerical`]. Nothing panics: clarabel's constructor errors are mapped
//! too. The solvers that pose their step as cone programs build on it (`drumwright`'s QP/SOCP,
//! `staggered`'s normal and friction QPs).

use api::{SolveError, SolveStatus};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

/// Which cone a block of rows belongs to (rows are grouped: zero, then nonnegative, then SOCs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// An equality row `a·x = b`.
    Zero,
    /// An inequality row `a·x ≥ b`.
    Nonneg,
}

/// clarabel's settings a program is solved with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClarabelSettings {
    /// Most interior-point iterations.
    pub max_iter: u32,
    /// clarabel's `tol_gap_abs`, `tol_gap_rel` and `tol_feas`.
    pub tolerance: f64,
    /// clarabel's Ruiz equilibration.
    pub equilibrate: bool,
}

/// One sparse row `Σ a_j x_j` and its right-hand side.
type Row = (Vec<(usize, f64)>, f64);

/// Builder of one cone program.
#[derive(Debug, Default)]
pub struct Program {
    /// Number of variables.
    pub nvar: usize,
    /// Upper-triangle triplets of `P`.
    pub p: Vec<(usize, usize, f64)>,
    /// The linear term `q`.
    pub q: Vec<f64>,
    zero: Vec<Row>,
    nonneg: Vec<Row>,
    soc: Vec<[Row; 3]>,
    /// What an infeasibility certificate means for this program (appended to the error).
    infeasible_note: &'static str,
}

/// The primal solution and how good it is.
#[derive(Debug)]
pub struct Solved {
    /// The primal solution.
    pub x: Vec<f64>,
    /// clarabel's status mapped onto the harness's.
    pub status: SolveStatus,
    /// Interior-point iterations.
    pub iterations: u32,
}

/// clarabel's statistics of one solve, logged by the solver (one row per cone program).
#[derive(Debug, Clone, Copy)]
pub struct Stats {
    /// Interior-point iterations.
    pub iterations: u32,
    /// Primal residual.
    pub r_prim: f64,
    /// Dual residual.
    pub r_dual: f64,
    /// clarabel's solve time (s).
    pub solve_time: f64,
    /// clarabel's status as its enum index.
    pub status_code: u32,
}

impl Program {
    /// An empty program over `nvar` variables (`P = 0`, `q = 0`, no rows).
    pub fn new(nvar: usize) -> Program {
        Program { nvar, q: vec![0.0; nvar], ..Default::default() }
    }

    /// The sentence appended to the error when clarabel returns an infeasibility certificate
    /// (why the program cannot be infeasible, so what the certificate means).
    pub fn with_infeasible_note(mut self, note: &'static str) -> Program {
        self.infeasible_note = note;
        self
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

    /// `‖(x_r, x_s)‖ ≤ radius` (a fixed disc) as one `SecondOrderConeT(3)` (`s = (radius, x_r, x_s)`).
    pub fn disc(&mut self, r: usize, s: usize, radius: f64) {
        self.soc.push([(vec![], radius), (vec![(r, -1.0)], 0.0), (vec![(s, -1.0)], 0.0)]);
    }

    /// Solves with clarabel; pushes its statistics to `stats` (also when it fails).
    pub fn solve(self, s: &ClarabelSettings, stats: &mut Vec<Stats>, stage: &str) -> Result<Solved, SolveError> {
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
                        "clarabel reports {st:?} for the {stage} problem after {} iterations; {}",
                        sol.iterations, self.infeasible_note
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
/// MaxIterations < TimeLimit).
pub fn worse(a: SolveStatus, b: SolveStatus) -> SolveStatus {
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
