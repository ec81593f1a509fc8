//! Running a signorini solver on an imported FCLIB problem through its [`LinearProblem`] view
//! and grading the answer, the stored solution and the stored guesses with the natural-map error.

#[cfg(doc)]
use crate::problem::GlobalProblem;
use crate::problem::{FclibProblem, Solution};
#[cfg(doc)]
use harness::linear::LinearProblem;

/// What [`solve`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveReport {
    /// Our solution: `v+` and impulses, normal first.
    pub v: Vec<f64>,
    /// Impulses `r` (`3 nc`).
    pub r: Vec<f64>,
    /// Solver status.
    pub status: harness::SolveStatus,
    /// Solver iterations.
    pub iterations: usize,
    /// Wall time of `Solver::step` (s).
    pub wall_s: f64,
    /// Natural-map error of our solution ([`GlobalProblem::natmap_error`]).
    pub error: f64,
    /// Natural-map error of the stored solution, when there is one with `r`.
    pub stored_error: Option<f64>,
    /// Natural-map errors of the stored guesses that have `r`.
    pub guess_errors: Vec<f64>,
}

/// Solves `prob` with `solver` through the [`LinearProblem`] view and compares with the stored
/// solution and guesses (velocities of a stored `r` without `v` are `M^-1 (f + H r)`).
pub fn solve(prob: &FclibProblem, solver: &mut dyn harness::Solver) -> Result<SolveReport, String> {
    let g = &prob.global;
    let lin = g.to_linear()?;
    let p = lin.step_problem();
    let mut log = harness::IterationLog::new();
    let t = std::time::Instant::now();
    let sol = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.step(&p, &mut log)))
        .map_err(|e| format!("solver panicked: {}", harness::stepper::panic_message(e.as_ref())))?
        .map_err(|e| e.to_string())?;
    let wall_s = t.elapsed().as_secs_f64();
    let r: Vec<f64> = sol.impulses.iter().flatten().copied().collect();
    if sol.v.len() != g.nv() || r.len() != 3 * g.nc() {
        return Err(format!("solver returned {} velocities and {} impulses", sol.v.len(), r.len()));
    }
    let error = g.natmap_error(&sol.v, &r)?;
    let err_of = |s: &Solution| -> Result<Option<f64>, String> {
        if s.r.is_empty() {
            return Ok(None);
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
        status: sol.status,
        iterations: sol.iterations,
        wall_s,
        error,
        stored_error,
        guess_errors,
    })
}
