//! A step of a scenario as an FCLIB problem, with a solver's answer as the stored solution.

use crate::problem::{from_step, FclibProblem, Info, Solution};
use harness::problem::StepProblem;

/// The solution of a step as FCLIB `(v, u, r)`.
pub fn solution_of(p: &StepProblem<'_>, sol: &harness::StepSolution) -> Solution {
    let u = p.contact_velocities(&sol.v).into_iter().flatten().collect();
    Solution { v: sol.v.clone(), u, r: sol.impulses.iter().flatten().copied().collect() }
}

/// Runs `scenario` with `solver` for `step` steps, then returns the problem of step `step`
/// (0-based) as FCLIB, with `solver`'s answer to it as the stored solution.
pub fn export_step(
    scenario: &harness::Scenario,
    solver: &mut dyn harness::Solver,
    step: usize,
    local_limit: usize,
    info: Info,
) -> Result<FclibProblem, String> {
    if step >= scenario.steps {
        return Err(format!("--step {step}: the run has {} steps (0..{})", scenario.steps, scenario.steps));
    }
    let mut before = scenario.clone();
    before.steps = step;
    let out = harness::stepper::simulate(&before, solver, harness::stepper::RunOptions::default(), &mut || {});
    if let Some(f) = out.failure {
        return Err(format!("the run failed before step {step}: {f}"));
    }
    let p = out.stepper.problem().map_err(|e| e.to_string())?;
    let mut prob = from_step(&p, local_limit, info)?;
    let mut log = harness::IterationLog::new();
    let sol = solver.step(&p, &mut log).map_err(|e| format!("step {step}: {e}"))?;
    prob.solution = Some(solution_of(&p, &sol));
    Ok(prob)
}
