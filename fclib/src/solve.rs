//! Running a signorini solver on an imported FCLIB problem, and grading its impulses with the
//! harness's own [`Grader`] (never with what the solver says of them).
//!
//! How the problem is given ([`Given`]):
//! - global form: as a step problem without a world ([`crate::view`]); a solver with
//!   `delassus_form` is given the condensed `W = H^T M^-1 H` with `M` as written
//!   ([`crate::GlobalProblem::condense`]), as Siconos's local solvers are (unless
//!   [`Prepared::keeping_global`], and always when `M` is not symmetric beyond
//!   [`crate::M_SYMMETRY_TOLERANCE`]); a solver without refuses a non-symmetric `M`;
//! - local form, to a solver with `delassus_form`: `W` as given ([`api::DelassusProblem`]);
//! - local form, to any other solver: the Cholesky view of `W` ([`crate::LocalProblem::global_view`]),
//!   refused when `W` is not symmetric beyond [`crate::W_SYMMETRY_TOLERANCE`].

use crate::grade::{Grade, Grader};
use crate::problem::{FclibProblem, Form, ProblemError};
use crate::view::GlobalView;
use std::cell::OnceCell;
use std::time::Instant;

/// How the problem was given to the solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Given {
    /// The global form as a step problem; `whitened` blocks of `M` above 6 DOFs in whitened
    /// variables, `m_asymmetry` the largest relative asymmetry of `M`'s blocks (solved through
    /// their symmetric parts).
    Global {
        /// Blocks given in whitened variables.
        whitened: usize,
        /// Relative asymmetry of `M`.
        m_asymmetry: f64,
    },
    /// The local form, `W` as given.
    Delassus {
        /// Relative asymmetry of `W`.
        w_asymmetry: f64,
    },
    /// The global form condensed to `W = H^T M^-1 H`, `q = H^T M^-1 f + w` (`M` as written), `W`
    /// as it comes out.
    Condensed {
        /// Relative asymmetry of `M`.
        m_asymmetry: f64,
        /// Relative asymmetry of the condensed `W`.
        w_asymmetry: f64,
    },
    /// The Cholesky view of a symmetric `W` plus `regularisation I`.
    CholeskyView {
        /// The view's `epsilon`.
        regularisation: f64,
    },
}

impl std::fmt::Display for Given {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Given::Global { whitened: 0, m_asymmetry } => write!(f, "global form (M asymmetry {m_asymmetry:.1e})"),
            Given::Global { whitened, m_asymmetry } => write!(
                f,
                "global form, {whitened} blocks of M above 6 DOFs in whitened variables (M asymmetry {m_asymmetry:.1e})"
            ),
            Given::Delassus { w_asymmetry } => write!(f, "local form, W as given (asymmetry {w_asymmetry:.1e})"),
            Given::Condensed { m_asymmetry, w_asymmetry } => write!(
                f,
                "global form condensed to W = H^T M^-1 H with M as written (M asymmetry {m_asymmetry:.1e}, W \
                 asymmetry {w_asymmetry:.1e})"
            ),
            Given::CholeskyView { regularisation } => {
                write!(f, "local form through the Cholesky view of W (regularisation epsilon = {regularisation:.1e})")
            }
        }
    }
}

/// What [`Prepared::solve`] measured.
#[derive(Debug, Clone)]
pub struct SolveReport {
    /// How the problem was given.
    pub given: Given,
    /// The impulses `r` (`3 nc`), normal first: the answer.
    pub r: Vec<f64>,
    /// The velocity in the file's variables (global form only): the solver's own (used for
    /// [`Self::consistency`]), or, for a global problem solved condensed, `M^-1 (H r + f)` computed
    /// by the harness; written with the answer, never used for the grade.
    pub v: Option<Vec<f64>>,
    /// The solver's own status (its claim).
    pub status: api::SolveStatus,
    /// Solver iterations.
    pub iterations: usize,
    /// Wall time of the solve (s).
    pub wall_s: f64,
    /// The harness's grade of `r`.
    pub grade: Grade,
    /// `||M v - H r - f|| / max(||f||, ||H r||)` of the solver's own `v` (global form).
    pub consistency: Option<f64>,
    /// The grade of the stored solution, `None` when there is none (absent or all zeros).
    pub stored: Option<Grade>,
    /// The grades of the stored guesses (`None`: an empty or all-zero guess).
    pub guesses: Vec<Option<Grade>>,
    /// The solver's iteration log (with a stopping rule, its column `yardstick` is the harness's
    /// error of each iterate).
    pub log: api::IterationLog,
}

/// Why an FCLIB problem could not be solved and graded.
#[derive(Debug, thiserror::Error)]
pub enum SolveFailure {
    /// The problem cannot be given to this solver, or graded ([`crate::ProblemError`]).
    #[error(transparent)]
    Problem(#[from] crate::ProblemError),
    /// The solver produced nothing usable.
    #[error(transparent)]
    Solver(#[from] api::SolveError),
    /// The solver panicked (a bug in it), with the panic message.
    #[error("solver panicked: {0}")]
    Panic(String),
    /// The answer has the wrong size.
    #[error("solver returned {velocities} velocities and {impulses} impulses")]
    WrongSize {
        /// Velocities returned.
        velocities: usize,
        /// Impulse components returned (3 per contact expected).
        impulses: usize,
    },
}

impl From<SolveFailure> for String {
    fn from(e: SolveFailure) -> String {
        e.to_string()
    }
}

/// A problem ready to be solved by several solvers: its grader, and the forms given to the
/// solvers built once, when first asked for.
#[derive(Debug)]
pub struct Prepared<'a> {
    /// The problem.
    pub prob: &'a FclibProblem,
    /// The harness's grader.
    pub grader: Grader,
    /// Whether a solver with `delassus_form` is given a global problem condensed to `W = H^T
    /// M^-1 H` (as Siconos's local solvers are; the default), else the global form itself unless
    /// `M` is not symmetric ([`Self::keeping_global`]).
    pub condense: bool,
    global: OnceCell<Result<(GlobalView, Given), ProblemError>>,
    delassus: OnceCell<Result<(api::DelassusProblem, Given), ProblemError>>,
}

impl<'a> Prepared<'a> {
    /// Prepares `prob` (builds its grader).
    pub fn new(prob: &'a FclibProblem) -> Result<Self, ProblemError> {
        let grader = Grader::new(prob)?;
        Ok(Prepared { prob, grader, condense: true, global: OnceCell::new(), delassus: OnceCell::new() })
    }

    /// This problem, a global one given to the solvers with `delassus_form` in its global form
    /// (condensed only when `M` is not symmetric).
    pub fn keeping_global(mut self) -> Self {
        self.condense = false;
        self
    }

    /// The global problem given to step-problem solvers (the file's, or the Cholesky view of its
    /// local form).
    pub fn global_view(&self) -> Result<&(GlobalView, Given), ProblemError> {
        self.global
            .get_or_init(|| match self.prob.form {
                Form::Global => {
                    let g = self.prob.global_form()?;
                    let view = g.to_linear()?;
                    let given = Given::Global { whitened: view.whitened_blocks(), m_asymmetry: g.m_asymmetry()? };
                    Ok((view, given))
                }
                Form::Local => {
                    let (g, regularisation) = self.prob.local_form()?.global_view()?;
                    Ok((g.to_linear()?, Given::CholeskyView { regularisation }))
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The problem in Delassus form: the local form as given, or the global form condensed.
    pub fn delassus(&self) -> Result<&(api::DelassusProblem, Given), ProblemError> {
        self.delassus
            .get_or_init(|| match self.prob.form {
                Form::Local => {
                    let d = self.prob.local_form()?.to_delassus()?;
                    let given = Given::Delassus { w_asymmetry: d.asymmetry() };
                    Ok((d, given))
                }
                Form::Global => {
                    let g = self.prob.global_form()?;
                    let d = g.condense()?.to_delassus()?;
                    let given = Given::Condensed { m_asymmetry: g.m_asymmetry()?, w_asymmetry: d.asymmetry() };
                    Ok((d, given))
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether a solver with (`delassus_form`) is given the Delassus form: for the local form,
    /// and for a global form whose `M` is not symmetric (module doc).
    fn takes_delassus(&self, delassus_form: bool) -> bool {
        delassus_form
            && match self.prob.form {
                Form::Local => true,
                Form::Global => {
                    (self.condense && 3 * self.prob.nc() <= crate::LOCAL_VIEW_LIMIT)
                        || matches!(self.global_view(), Err(ProblemError::NotSymmetric { matrix: "M", .. }))
                }
            }
    }

    /// How a solver with (`delassus_form`) is given the problem, or why it cannot be.
    pub fn check(&self, delassus_form: bool) -> Result<Given, ProblemError> {
        if self.takes_delassus(delassus_form) {
            return self.delassus().map(|d| d.1);
        }
        self.global_view().map(|g| g.1)
    }

    /// Solves with `solver` (which takes the Delassus form when `delassus_form`), stopped once
    /// `deadline` has passed (every solver asks its iteration log once per outer iteration and
    /// returns its iterate with `SolveStatus::TimeLimit`), and grades the answer.
    pub fn solve(
        &self,
        solver: &mut dyn api::Solver,
        delassus_form: bool,
        deadline: Option<Instant>,
    ) -> Result<SolveReport, SolveFailure> {
        self.solve_with(solver, delassus_form, api::IterationLog::with_deadline(deadline))
    }

    /// [`Self::solve`], the solver also stopped by the harness as soon as an iterate it hands over
    /// grades at most `eps` ([`Self::stop_rule`]: equal accuracy, `SolveStatus::Stopped`).
    pub fn solve_to(
        &self,
        solver: &mut dyn api::Solver,
        delassus_form: bool,
        deadline: Option<Instant>,
        eps: f64,
    ) -> Result<SolveReport, SolveFailure> {
        let log = api::IterationLog::with_deadline(deadline).with_stop_rule(self.stop_rule(eps));
        self.solve_with(solver, delassus_form, log)
    }

    /// The harness's stopping rule at accuracy `eps`: the yardstick is this problem's error
    /// ([`Grader::grade`], Siconos's scaling) of the impulses of each iterate.
    pub fn stop_rule(&self, eps: f64) -> api::StopRule {
        let grader = std::sync::Arc::new(self.grader.clone());
        let yardstick: api::Yardstick = std::sync::Arc::new(move |_v: &[f64], impulses: &[[f64; 3]], _b: &[f64]| {
            let r: Vec<f64> = impulses.iter().flatten().copied().collect();
            if r.len() != grader.q().len() {
                return f64::NAN;
            }
            grader.grade(&r).error
        });
        api::StopRule { yardstick, eps }
    }

    fn solve_with(
        &self,
        solver: &mut dyn api::Solver,
        delassus_form: bool,
        mut log: api::IterationLog,
    ) -> Result<SolveReport, SolveFailure> {
        let nc = self.prob.nc();
        let catch = |e: Box<dyn std::any::Any + Send>| SolveFailure::Panic(harness::stepper::panic_message(e.as_ref()));
        let (given, r, v, status, iterations, wall_s);
        if self.takes_delassus(delassus_form) {
            let (d, g) = self.delassus()?;
            let t = Instant::now();
            let sol = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.solve_delassus(d, &mut log)))
                .map_err(catch)??;
            wall_s = t.elapsed().as_secs_f64();
            (given, status, iterations, v) = (*g, sol.status, sol.iterations, None);
            r = sol.impulses.iter().flatten().copied().collect::<Vec<f64>>();
            if r.len() != 3 * nc {
                return Err(SolveFailure::WrongSize { velocities: 0, impulses: r.len() });
            }
        } else {
            let (view, g) = self.global_view()?;
            let p = view.linear.step_problem();
            let t = Instant::now();
            let sol = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.step(&p, &mut log)))
                .map_err(catch)??;
            wall_s = t.elapsed().as_secs_f64();
            (given, status, iterations) = (*g, sol.status, sol.iterations);
            r = sol.impulses.iter().flatten().copied().collect::<Vec<f64>>();
            if sol.v.len() != view.linear.nv() || r.len() != 3 * nc {
                return Err(SolveFailure::WrongSize { velocities: sol.v.len(), impulses: r.len() });
            }
            v = (self.prob.form == Form::Global).then(|| view.velocity(&sol.v));
        }
        let grade = self.grader.grade(&r);
        // only a velocity the solver returned is checked for consistency; a global problem solved
        // condensed gets the velocity that balances its impulses, computed by the harness
        let consistency = v.as_ref().and_then(|v| self.grader.consistency(v, &r));
        let v = v.or_else(|| self.grader.velocity_of(&r));
        let stored = self.prob.solution.as_ref().and_then(|s| self.grader.grade_stored(s));
        let guesses = self.prob.guesses.iter().map(|s| self.grader.grade_stored(s)).collect();
        Ok(SolveReport { given, r, v, status, iterations, wall_s, grade, consistency, stored, guesses, log })
    }
}

/// [`Prepared::solve`] of `prob` without a deadline.
pub fn solve(
    prob: &FclibProblem,
    solver: &mut dyn api::Solver,
    delassus_form: bool,
) -> Result<SolveReport, SolveFailure> {
    Prepared::new(prob)?.solve(solver, delassus_form, None)
}

/// The answer of `rep` to `prob` as an FCLIB solution: `r`, `u` (from the grade) and, for the
/// global form, the solver's `v`.
pub fn answer(rep: &SolveReport) -> crate::Solution {
    crate::Solution { v: rep.v.clone().unwrap_or_default(), u: rep.grade.u.clone(), r: rep.r.clone() }
}
