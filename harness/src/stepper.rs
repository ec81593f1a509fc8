//! The time loop: runs one [`Scenario`] with one [`Solver`], computing the harness metrics of
//! every step. Holds no state of its own between runs; the world and the solver are passed in.
//!
//! How a step works:
//! 1. contacts at `q0` come from the previous step's post-step detection (or the initial one);
//! 2. [`StepProblem::new`] assembles mass, forces and warm-start data;
//! 3. [`Solver::step`] is timed alone (this is the `wall_s` of the record);
//! 4. the result is checked (sizes, finiteness), `q+` is integrated unless the solver gave it,
//!    contacts are detected at `q+`, and [`metrics::evaluate`] grades the step;
//! 5. a failure (an error, a non-finite or mis-sized result, or a panic inside the solver) stops
//!    the run and is reported with its step index; the steps before it are kept.

use crate::case::{Scenario, Trace};
use crate::geometry;
use crate::log::IterationLog;
use crate::metrics::{self, StepMetrics};
use crate::model::World;
use crate::problem::{StepProblem, WarmStart};
use crate::record::{StageTimes, StepRecord};
use crate::solver::{SolveError, Solver, SolverContext, StepSolution};
use std::time::Instant;

/// Options of one run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Number of steps (spread evenly, first and last included) whose iteration logs are kept.
    pub logged_steps: usize,
    /// Keep at most about this many step records (every k-th step beyond it).
    pub max_recorded_steps: usize,
    /// The compute backend chosen by `signorini run --backend` (`None`: the CPU). It reaches the
    /// solvers through [`SolverContext`] and the run records through `provenance.backend`.
    pub backend: Option<kernels::backend::Selection>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self { logged_steps: 8, max_recorded_steps: 2000, backend: None }
    }
}

impl RunOptions {
    /// What a solver is built with for this run.
    pub fn solver_context(&self) -> SolverContext {
        SolverContext { backend: self.backend.as_ref().map(|s| s.backend.clone()).unwrap_or_default() }
    }

    /// The backend as run records store it (`"cpu"`, a GPU's name, or the CPU with the reason a
    /// GPU was not used).
    pub fn backend_label(&self) -> String {
        self.backend.as_ref().map(|s| s.record_label()).unwrap_or_else(|| "cpu".into())
    }
}

/// Everything a run produced.
#[derive(Debug, Clone, Default)]
pub struct RunOutcome {
    /// States and metrics for the oracle.
    pub trace: Trace,
    /// Recorded steps (every `step_stride`-th).
    pub steps: Vec<StepRecord>,
    /// Stride of `steps`.
    pub step_stride: usize,
    /// Iteration logs of the selected steps.
    pub iteration_logs: Vec<(usize, IterationLog)>,
    /// Wall time of `Solver::step` for every completed step (s).
    pub solve_times: Vec<f64>,
    /// Solver iterations of every completed step.
    pub iterations: Vec<usize>,
    /// Completed steps whose status was not converged.
    pub unconverged: usize,
    /// Per-stage totals.
    pub stage_times: StageTimes,
    /// `Some("step k: why")` if a step failed.
    pub failure: Option<String>,
    /// The world after the last completed step.
    pub final_world: World,
    /// The warm-start data the next step would receive.
    pub final_warm_start: Option<WarmStart>,
}

/// Runs `scenario` with `solver`, calling `on_step` after every completed step.
pub fn simulate(
    scenario: &Scenario,
    solver: &mut dyn Solver,
    opts: RunOptions,
    on_step: &mut dyn FnMut(),
) -> RunOutcome {
    let n = scenario.steps;
    let stride = n.div_ceil(opts.max_recorded_steps.max(1)).max(1);
    let logged: Vec<usize> = match opts.logged_steps.min(n) {
        0 => vec![],
        1 => vec![0],
        m => (0..m).map(|i| (i * (n - 1) + (m - 1) / 2) / (m - 1)).collect(),
    };
    let mut out = RunOutcome { step_stride: stride, ..Default::default() };
    let mut world = scenario.world.clone();
    out.trace = Trace {
        dt: scenario.dt,
        q: vec![world.positions()],
        v: vec![world.velocities()],
        metrics: vec![],
        completed: false,
    };
    let t = Instant::now();
    let mut contacts = geometry::detect(&world, scenario.margin);
    out.stage_times.detect_s += t.elapsed().as_secs_f64();
    let mut warm: Option<WarmStart> = None;

    for k in 0..n {
        let t = Instant::now();
        let problem = match StepProblem::new(&world, &contacts, scenario.dt, warm.as_ref()) {
            Ok(p) => p,
            Err(e) => {
                out.failure = Some(format!("step {k}: {e}"));
                break;
            }
        };
        out.stage_times.assemble_s += t.elapsed().as_secs_f64();

        let mut log = IterationLog::new();
        let t = Instant::now();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.step(&problem, &mut log)))
            .unwrap_or_else(|panic| Err(SolveError::Panic { what: panic_message(panic.as_ref()) }));
        let wall = t.elapsed().as_secs_f64();
        out.stage_times.solve_s += wall;
        let sol = match result.and_then(|s| check_solution(&problem, s)) {
            Ok(s) => s,
            Err(e) => {
                out.failure = Some(format!("step {k}: {e}"));
                break;
            }
        };

        let q_next = sol.q.clone().unwrap_or_else(|| problem.integrate(&sol.v));
        let mut after = world.clone();
        after.set_state(&q_next, &sol.v);
        after.time = scenario.world.time + (k + 1) as f64 * scenario.dt;
        let t = Instant::now();
        let contacts_after = geometry::detect(&after, scenario.margin);
        out.stage_times.detect_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        let mut m: StepMetrics = metrics::evaluate(&problem, &sol, &after, &contacts_after);
        m.t = (k + 1) as f64 * scenario.dt;
        out.stage_times.metrics_s += t.elapsed().as_secs_f64();

        let next_warm = WarmStart {
            impulses: contacts.contacts.iter().zip(&sol.impulses).map(|(c, l)| (c.key, *l)).collect(),
            velocity: sol.v.clone(),
        };
        drop(problem);

        out.solve_times.push(wall);
        out.iterations.push(sol.iterations);
        out.unconverged += usize::from(!sol.status.is_converged());
        if k % stride == 0 || k + 1 == n {
            out.steps.push(StepRecord {
                step: k,
                status: sol.status,
                iterations: sol.iterations,
                wall_s: wall,
                metrics: m.clone(),
            });
        }
        if logged.contains(&k) {
            out.iteration_logs.push((k, log));
        }
        out.trace.q.push(after.positions());
        out.trace.v.push(sol.v);
        out.trace.metrics.push(m);

        world = after;
        contacts = contacts_after;
        warm = Some(next_warm);
        on_step();
    }
    out.trace.completed = out.failure.is_none();
    out.final_world = world;
    out.final_warm_start = warm;
    out
}

/// The text of a panic payload.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// Rejects solutions of the wrong size or with non-finite entries.
fn check_solution(p: &StepProblem<'_>, s: StepSolution) -> Result<StepSolution, SolveError> {
    if s.v.len() != p.nv() || s.impulses.len() != p.nc() || s.q.as_ref().is_some_and(|q| q.len() != p.q0.len()) {
        return Err(SolveError::Numerical {
            what: format!(
                "solver returned v of length {} (expected {}), {} impulses (expected {})",
                s.v.len(),
                p.nv(),
                s.impulses.len(),
                p.nc()
            ),
        });
    }
    if s.bilateral.len() != p.nb() {
        return Err(SolveError::Numerical {
            what: format!("solver returned {} bilateral impulses (expected {})", s.bilateral.len(), p.nb()),
        });
    }
    let finite = s.v.iter().all(|x| x.is_finite())
        && s.impulses.iter().flatten().all(|x| x.is_finite())
        && s.q.as_ref().is_none_or(|q| q.iter().all(|x| x.is_finite()));
    if !finite {
        return Err(SolveError::NonFinite { what: "the returned velocity, positions or impulses".into() });
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernels::backend::{select, BackendKind, Precision, Selection};

    /// The backend reaches solvers and records through the options, not through a global: the
    /// default is the CPU, and a GPU request that fell back is recorded with its reason.
    #[test]
    fn backend_comes_from_the_run_options() {
        let default = RunOptions::default();
        assert_eq!(default.backend_label(), "cpu");
        assert_eq!(default.solver_context().backend.name(), "cpu");
        let cpu = RunOptions { backend: Some(select(BackendKind::Cpu, Precision::F64).unwrap()), ..default.clone() };
        assert_eq!(cpu.backend_label(), "cpu");
        let fell_back = Selection {
            requested: BackendKind::Gpu,
            backend: Default::default(),
            fallback_reason: Some("no device".into()),
        };
        let opts = RunOptions { backend: Some(fell_back), ..default };
        assert_eq!(opts.backend_label(), "cpu (gpu unavailable: no device)");
        assert_eq!(opts.solver_context().backend.name(), "cpu");
    }
}
