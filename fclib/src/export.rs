//! A step of a scenario as an FCLIB problem, with a solver's answer as the stored solution.

use crate::problem::{from_step, FclibProblem, Info, ProblemError, Solution};
use harness::problem::StepProblem;
use harness::SolveError;

/// Why a step could not be exported ([`export_step`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// The step is not a step of the run.
    #[error("--step {step}: the run has {steps} steps (0..{steps})")]
    StepOutOfRange {
        /// The step asked for (0-based).
        step: usize,
        /// The run's number of steps.
        steps: usize,
    },
    /// The run stopped before the step.
    #[error("the run failed before step {step}: {failure}")]
    RunFailed {
        /// The step asked for.
        step: usize,
        /// The run's failure.
        failure: String,
    },
    /// The step's problem could not be assembled.
    #[error(transparent)]
    StepProblem(SolveError),
    /// The step's problem is not an FCLIB problem ([`ProblemError`]).
    #[error(transparent)]
    Problem(#[from] ProblemError),
    /// The solver produced nothing usable on the step.
    #[error("step {step}: {error}")]
    Solver {
        /// The step.
        step: usize,
        /// The solver's error.
        error: SolveError,
    },
}

impl From<ExportError> for String {
    fn from(e: ExportError) -> String {
        e.to_string()
    }
}

/// The solution of a step as FCLIB `(v, u, r)`.
pub fn solution_of(p: &StepProblem<'_>, sol: &harness::StepSolution) -> Solution {
    let u = p.contact_velocities(&sol.v).into_iter().flatten().collect();
    Solution { v: sol.v.clone(), u, r: sol.impulses.iter().flatten().copied().collect() }
}

/// Runs `scenario` with `solver` for `step` steps (0-based), then lets `solver` answer step
/// `step`: the stepper at the start of the step (its [`harness::stepper::Stepper::problem`] is the
/// step's problem) and the answer, the solver's state carried over from the steps before as in a
/// run. What [`export_step`] exports, and what the Python package's `step_problem` hands over.
pub fn reach_step(
    scenario: &harness::Scenario,
    solver: &mut dyn harness::Solver,
    step: usize,
) -> Result<(harness::stepper::Stepper, harness::StepSolution), ExportError> {
    if step >= scenario.steps {
        return Err(ExportError::StepOutOfRange { step, steps: scenario.steps });
    }
    let mut before = scenario.clone();
    before.steps = step;
    let out = harness::stepper::simulate(&before, solver, harness::stepper::RunOptions::default(), &mut || {});
    if let Some(failure) = out.failure {
        return Err(ExportError::RunFailed { step, failure });
    }
    let p = out.stepper.problem().map_err(ExportError::StepProblem)?;
    let mut log = harness::IterationLog::new();
    let sol = solver.step(&p, &mut log).map_err(|error| ExportError::Solver { step, error })?;
    drop(p);
    Ok((out.stepper, sol))
}

/// Runs `scenario` with `solver` for `step` steps, then returns the problem of step `step`
/// (0-based) as FCLIB, with `solver`'s answer to it as the stored solution ([`reach_step`]).
pub fn export_step(
    scenario: &harness::Scenario,
    solver: &mut dyn harness::Solver,
    step: usize,
    local_limit: usize,
    info: Info,
) -> Result<FclibProblem, ExportError> {
    let (stepper, sol) = reach_step(scenario, solver, step)?;
    let p = stepper.problem().map_err(ExportError::StepProblem)?;
    let mut prob = from_step(&p, local_limit, info)?;
    prob.solution = Some(solution_of(&p, &sol));
    Ok(prob)
}
