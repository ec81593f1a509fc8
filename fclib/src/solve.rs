//! Running a signorini solver on an imported FCLIB problem through its [`LinearProblem`] view
//! and grading the answer, the stored solution and the stored guesses with the natural-map error
//! of the form the solvers were given (for [`Form::Local`], on the file's own `W` and `q`).

#[cfg(doc)]
use crate::problem::GlobalProblem;
use crate::problem::{natmap_residual, norm, FclibProblem, Form, Solution};
#[cfg(doc)]
use harness::linear::LinearProblem;
use std::time::Instant;

/// What [`solve`] measured.
#[derive(Debug, Clone)]
pub struct SolveReport {
    /// Our solution: `v+` (for [`Form::Local`], the velocity of the Cholesky view).
    pub v: Vec<f64>,
    /// Impulses `r` (`3 nc`), normal first.
    pub r: Vec<f64>,
    /// Contact velocities `u` of our solution (`H^T v + w`, or `W r + q` for the local form).
    pub u: Vec<f64>,
    /// Solver status.
    pub status: harness::SolveStatus,
    /// Solver iterations.
    pub iterations: usize,
    /// Wall time of `Solver::step` (s).
    pub wall_s: f64,
    /// Natural-map error of our solution relative to `||q||` ([`GlobalProblem::natmap_error`]).
    pub error: f64,
    /// `||F||_2`, the absolute natural-map residual of our solution
    /// ([`crate::problem::natmap_residual`]).
    pub residual: f64,
    /// `||q||_2` of the problem graded.
    pub q_norm: f64,
    /// Natural-map error of the stored solution, when there is one with `r`.
    pub stored_error: Option<f64>,
    /// Natural-map errors of the stored guesses that have `r`.
    pub guess_errors: Vec<f64>,
    /// The solver's iteration log.
    pub log: harness::IterationLog,
}

/// Why an FCLIB problem could not be solved and graded.
#[derive(Debug, thiserror::Error)]
pub enum SolveFailure {
    /// The problem cannot be given to the solvers, or graded ([`crate::ProblemError`]).
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
    /// A file read as local form lacks its local problem.
    #[error("a local-form problem without its local problem")]
    MissingLocal,
}

impl From<SolveFailure> for String {
    fn from(e: SolveFailure) -> String {
        e.to_string()
    }
}

/// Solves `prob` with `solver` through the [`LinearProblem`] view and compares with the stored
/// solution and guesses (velocities of a stored `r` without `v` are `M^-1 (f + H r)`).
pub fn solve(prob: &FclibProblem, solver: &mut dyn harness::Solver) -> Result<SolveReport, SolveFailure> {
    solve_until(prob, solver, None)
}

/// [`solve`], with the solver stopped once `deadline` has passed: every solver asks its iteration
/// log once per outer iteration and returns its iterate with `SolveStatus::TimeLimit`.
pub fn solve_until(
    prob: &FclibProblem,
    solver: &mut dyn harness::Solver,
    deadline: Option<Instant>,
) -> Result<SolveReport, SolveFailure> {
    let g = &prob.global;
    let lin = g.to_linear()?;
    let p = lin.step_problem();
    let mut log = harness::IterationLog::with_deadline(deadline);
    let t = Instant::now();
    let sol = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.step(&p, &mut log)))
        .map_err(|e| SolveFailure::Panic(harness::stepper::panic_message(e.as_ref())))??;
    let wall_s = t.elapsed().as_secs_f64();
    let r: Vec<f64> = sol.impulses.iter().flatten().copied().collect();
    if sol.v.len() != g.nv() || r.len() != 3 * g.nc() {
        return Err(SolveFailure::WrongSize { velocities: sol.v.len(), impulses: r.len() });
    }
    // the problem graded: the file's local form, or the global one
    let local = match prob.form {
        Form::Local => Some(prob.local.as_ref().ok_or(SolveFailure::MissingLocal)?),
        Form::Global => None,
    };
    let (u, q_norm) = match local {
        Some(l) => (l.contact_velocity(&r), norm(&l.q)),
        None => (g.contact_velocity(&sol.v), norm(&g.q()?)),
    };
    let residual = natmap_residual(&u, &r, &g.mu);
    let error = if q_norm <= f64::EPSILON { residual } else { residual / q_norm };
    let err_of = |s: &Solution| -> Result<Option<f64>, crate::ProblemError> {
        if s.r.is_empty() {
            return Ok(None);
        }
        if let Some(l) = local {
            return Ok(Some(l.natmap_error(&s.r)));
        }
        let v = if s.v.is_empty() { g.velocity_of(&s.r)? } else { s.v.clone() };
        g.natmap_error(&v, &s.r).map(Some)
    };
    let stored_error = match &prob.solution {
        Some(s) => err_of(s)?,
        None => None,
    };
    let mut guess_errors = vec![];
    for s in &prob.guesses {
        if let Some(e) = err_of(s)? {
            guess_errors.push(e);
        }
    }
    Ok(SolveReport {
        v: sol.v,
        r,
        u,
        status: sol.status,
        iterations: sol.iterations,
        wall_s,
        error,
        residual,
        q_norm,
        stored_error,
        guess_errors,
        log,
    })
}
