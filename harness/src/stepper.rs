//! The time loop: [`Stepper`] holds the state of a run between steps (world, contacts detected at
//! its positions, warm-start data) and hands out the problem of the current step; [`simulate`]
//! runs one [`Scenario`] with one [`Solver`] through it, computing the harness metrics of every
//! step. The same [`Stepper`] gives benches, tests and the FCLIB export the problem of any step
//! (run [`simulate`] for `k` steps, then [`RunOutcome::stepper`]`.problem()`), with no detection
//! or assembly by hand.
//!
//! How a step works:
//! 1. contacts at `q0` come from the previous step's post-step detection (or the initial one,
//!    [`Stepper::new`]);
//! 2. [`Stepper::problem`] assembles mass, forces and warm-start data ([`World::step_problem`](crate::model::World::step_problem));
//! 3. [`Solver::step`] is timed alone (this is the `wall_s` of the record);
//! 4. the result is checked (sizes, finiteness); [`Stepper::end_of_step`] integrates `q+` unless
//!    the solver gave it and detects contacts at `q+`; [`metrics::evaluate`] grades the step;
//!    [`Stepper::advance_to`] moves the stepper to the end of the step;
//! 5. a failure (an error, a non-finite or mis-sized result, or a panic inside the solver) stops
//!    the run and is reported with its step index; the steps before it are kept.

use crate::accuracy::Accuracy;
use crate::case::{Scenario, Trace};
use crate::geometry;
use crate::log::IterationLog;
use crate::metrics::{self, StepMetrics};
use crate::model::World;
use crate::problem::{StepProblem, WarmStart};
use crate::solver::{SolveError, SolveStatus, Solver, SolverContext, StepSolution};
use crate::trajectory::{Recorder, TrajectoryOption};
use crate::ContactSet;
use records::trajectory::{FrameMetrics, Trajectory};
use records::{StageTimes, StepAccuracy, StepRecord};
use std::time::{Duration, Instant};

/// The state of a run between two steps: the world at the start of the current step, the
/// contacts detected there (with the scenario's margin, per contact as in
/// [`geometry::detect_for_step`]) and the warm-start data the previous step
/// left. Advancing it with a step's solution integrates the positions, detects the contacts at
/// the new positions and records the solution's impulses and velocity for the next warm start.
#[derive(Debug, Clone, Default)]
pub struct Stepper {
    world: World,
    contacts: ContactSet,
    warm: Option<WarmStart>,
    dt: f64,
    margin: f64,
    /// Simulated time of the scenario's initial world (s).
    t0: f64,
    /// Completed steps.
    step: usize,
    /// Wall time of the detection that produced `contacts` (s).
    detect_s: f64,
}

/// The end of a step, before the [`Stepper`] moves to it: the world at `(q+, v+)` and the
/// contacts detected there.
#[derive(Debug, Clone)]
pub struct StepEnd {
    /// The world after the step (state `q+, v+`, time advanced by `dt`).
    pub world: World,
    /// Contacts detected at `q+`.
    pub contacts: ContactSet,
    /// Wall time of that detection (s).
    pub detect_s: f64,
}

impl Stepper {
    /// The stepper at the start of `scenario`: its initial world and the contacts detected there.
    pub fn new(scenario: &Scenario) -> Self {
        let world = scenario.world.clone();
        let t = Instant::now();
        let contacts = geometry::detect_for_step(&world, scenario.margin, scenario.dt);
        let detect_s = t.elapsed().as_secs_f64();
        Self {
            world,
            contacts,
            warm: None,
            dt: scenario.dt,
            margin: scenario.margin,
            t0: scenario.world.time,
            step: 0,
            detect_s,
        }
    }

    /// Number of completed steps (the index of the current step).
    pub fn step(&self) -> usize {
        self.step
    }

    /// The world at the start of the current step.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The contacts detected at the start of the current step.
    pub fn contacts(&self) -> &ContactSet {
        &self.contacts
    }

    /// The warm-start data the previous step left (`None` before the first step).
    pub fn warm_start(&self) -> Option<&WarmStart> {
        self.warm.as_ref()
    }

    /// Wall time of the detection that produced [`Self::contacts`] (s).
    pub fn detect_s(&self) -> f64 {
        self.detect_s
    }

    /// The problem of the current step. Fails if the mass matrix is not positive definite.
    pub fn problem(&self) -> Result<StepProblem<'_>, SolveError> {
        self.world.step_problem(&self.contacts, self.dt, self.warm.as_ref())
    }

    /// The end of the current step with solution `sol`: `q+` from `sol.q`, or integrated from
    /// `q0` with `v+` (symplectic), the world set to `(q+, v+)` and the contacts detected there
    /// (timed). Leaves the stepper unchanged; [`Self::advance_to`] moves it.
    pub fn end_of_step(&self, sol: &StepSolution) -> StepEnd {
        let q_next =
            sol.q.clone().unwrap_or_else(|| self.world.integrate_positions(&self.world.positions(), &sol.v, self.dt));
        let mut world = self.world.clone();
        world.set_state(&q_next, &sol.v);
        world.time = self.t0 + (self.step + 1) as f64 * self.dt;
        let t = Instant::now();
        let contacts = geometry::detect_for_step(&world, self.margin, self.dt);
        let detect_s = t.elapsed().as_secs_f64();
        StepEnd { world, contacts, detect_s }
    }

    /// Moves to `end` (from [`Self::end_of_step`] with the same `sol`), keeping `sol`'s impulses
    /// (by contact key; bilateral impulses by row identity) and velocity for the next step's warm start.
    pub fn advance_to(&mut self, end: StepEnd, sol: &StepSolution) {
        self.warm = Some(WarmStart {
            impulses: self.contacts.contacts.iter().zip(&sol.impulses).map(|(c, l)| (c.key, *l)).collect(),
            velocity: sol.v.clone(),
            bilateral: if sol.bilateral.is_empty() {
                Default::default()
            } else {
                let rows = self.world.bilateral_rows().rows;
                rows.iter().zip(&sol.bilateral).map(|(r, g)| ((r.joint, r.index), *g)).collect()
            },
        });
        self.world = end.world;
        self.contacts = end.contacts;
        self.detect_s = end.detect_s;
        self.step += 1;
    }

    /// Completes the current step with solution `sol` ([`Self::end_of_step`], then
    /// [`Self::advance_to`]).
    pub fn advance(&mut self, sol: &StepSolution) {
        let end = self.end_of_step(sol);
        self.advance_to(end, sol);
    }
}

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
    /// Wall-time limit of one step (`None`: none). A solver asks once per iteration
    /// ([`IterationLog::past_deadline`]) and returns its iterate with `SolveStatus::TimeLimit`; the
    /// step is recorded and the run stops after it, failed with the limit as its reason. A limit
    /// whose deadline `Instant` cannot hold (about 9e18 s and more) counts as none; the CLI
    /// refuses limits above 10^7 s.
    pub step_timeout: Option<Duration>,
    /// Wall-time limit of the whole run (`None`: none), checked the same way and between steps
    /// (and, like `step_timeout`, no limit when its deadline overflows `Instant`).
    pub run_timeout: Option<Duration>,
    /// The equal-accuracy mode (`None`: off): every step's log carries the harness's stopping
    /// rule, and every step is graded at the accuracy ([`crate::accuracy`]).
    pub accuracy: Option<Accuracy>,
    /// Whether the run records its trajectory for the replay ([`crate::trajectory`]).
    pub trajectory: TrajectoryOption,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            logged_steps: 8,
            max_recorded_steps: 2000,
            backend: None,
            step_timeout: None,
            run_timeout: None,
            accuracy: None,
            trajectory: TrajectoryOption::Off,
        }
    }
}

/// What [`simulate_with`] reports after every completed step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepDone {
    /// Index of the step.
    pub step: usize,
    /// Steps of the run.
    pub steps: usize,
    /// The solver's iterations in this step.
    pub iterations: usize,
    /// Wall time of the solve (s).
    pub wall_s: f64,
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
    /// Completed steps whose status was not converged (in the equal-accuracy mode: that did not
    /// reach the accuracy).
    pub unconverged: usize,
    /// The equal-accuracy mode's verdict on every completed step (empty with the mode off).
    pub accuracy: Vec<StepAccuracy>,
    /// Per-stage totals.
    pub stage_times: StageTimes,
    /// Totals of the solver's own stages ([`IterationLog::add_stage`]), inside `stage_times.solve_s`.
    pub solver_stages: std::collections::BTreeMap<String, f64>,
    /// `Some("step k: why")` if a step failed.
    pub failure: Option<String>,
    /// The state after the last completed step: its world, contacts and warm-start data;
    /// `stepper.problem()` is the problem the next step would receive.
    pub stepper: Stepper,
    /// The recorded trajectory (`None` when [`RunOptions::trajectory`] is off).
    pub trajectory: Option<Trajectory>,
}

/// Runs `scenario` with `solver`, calling `on_step` after every completed step.
pub fn simulate(
    scenario: &Scenario,
    solver: &mut dyn Solver,
    opts: RunOptions,
    on_step: &mut dyn FnMut(),
) -> RunOutcome {
    simulate_with(scenario, solver, opts, &mut |_| on_step())
}

/// The limit a timed-out step ran into, for its failure message.
fn timeout_reason(opts: &RunOptions, step_start: Instant, run_start: Instant) -> String {
    // a run deadline beyond what `Instant` can hold is no deadline (see `simulate_with`)
    let run_left =
        opts.run_timeout.and_then(|t| run_start.checked_add(t)).map(|end| end.saturating_duration_since(step_start));
    match (opts.step_timeout, run_left) {
        (Some(s), Some(r)) if r < s => {
            format!("--run-timeout {} s", opts.run_timeout.unwrap_or_default().as_secs_f64())
        }
        (Some(s), _) => format!("--step-timeout {} s", s.as_secs_f64()),
        (None, _) => format!("--run-timeout {} s", opts.run_timeout.unwrap_or_default().as_secs_f64()),
    }
}

/// [`simulate`], reporting each completed step (index, iterations, time) to `on_step`.
pub fn simulate_with(
    scenario: &Scenario,
    solver: &mut dyn Solver,
    opts: RunOptions,
    on_step: &mut dyn FnMut(&StepDone),
) -> RunOutcome {
    let run_start = Instant::now();
    let n = scenario.steps;
    let stride = n.div_ceil(opts.max_recorded_steps.max(1)).max(1);
    let logged: Vec<usize> = match opts.logged_steps.min(n) {
        0 => vec![],
        1 => vec![0],
        m => (0..m).map(|i| (i * (n - 1) + (m - 1) / 2) / (m - 1)).collect(),
    };
    let mut out = RunOutcome { step_stride: stride, ..Default::default() };
    let mut stepper = Stepper::new(scenario);
    // the trace grows by one state per step: reserved once (no doubling copies on long runs;
    // `resources::run_estimate` checked before the run that it fits)
    let mut q = Vec::with_capacity(n + 1);
    let mut v = Vec::with_capacity(n + 1);
    q.push(stepper.world().positions());
    v.push(stepper.world().velocities());
    out.trace = Trace { dt: scenario.dt, q, v, metrics: Vec::with_capacity(n), completed: false };
    out.solve_times.reserve(n);
    out.iterations.reserve(n);
    out.stage_times.detect_s += stepper.detect_s();
    let mut recorder = opts
        .trajectory
        .stride(n, scenario.dt, &scenario.world)
        .map(|s| Recorder::new(&scenario.world, scenario.dt, n, s));

    for k in 0..n {
        let t = Instant::now();
        let problem = match stepper.problem() {
            Ok(p) => p,
            Err(e) => {
                out.failure = Some(format!("step {k}: {e}"));
                break;
            }
        };
        out.stage_times.assemble_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        // checked: a limit so large that the deadline overflows `Instant` (e.g. 1e19 s) is no limit
        let deadline =
            [opts.step_timeout.and_then(|d| t.checked_add(d)), opts.run_timeout.and_then(|d| run_start.checked_add(d))]
                .into_iter()
                .flatten()
                .min();
        let step_start = t;
        let mut log = IterationLog::with_deadline(deadline);
        if logged.contains(&k) {
            log = log.recording_iterates();
        }
        let (mut log, armed) = match &opts.accuracy {
            Some(a) => {
                let (log, armed) = a.arm(&problem, log);
                (log, Some(armed))
            }
            None => (log, None),
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.step(&problem, &mut log)))
            .unwrap_or_else(|panic| Err(SolveError::Panic { what: panic_message(panic.as_ref()) }));
        let wall = t.elapsed().as_secs_f64();
        out.stage_times.solve_s += wall;
        for (name, s) in log.stages() {
            *out.solver_stages.entry(name.clone()).or_insert(0.0) += s;
        }
        // the deadline ends the step as a status (the solver returns its iterate with
        // `TimeLimit`); a solver that does not ask is held to it after the step. Either way the
        // step is recorded with its iterate, and the pair stops after it with the limit as reason.
        let timed_out = deadline.is_some_and(|d| Instant::now() > d)
            || matches!(&result, Ok(s) if s.status == SolveStatus::TimeLimit);
        let logged_iterations = log.len() + log.dropped;
        let sol = match result.and_then(|s| check_solution(&problem, s)) {
            Ok(s) => s,
            Err(e) => {
                out.failure = Some(format!("step {k}: {e}"));
                break;
            }
        };

        let end = stepper.end_of_step(&sol);
        out.stage_times.detect_s += end.detect_s;

        let t = Instant::now();
        yardstick_columns(&problem, &mut log);
        let mut m: StepMetrics = metrics::evaluate(&problem, &sol, stepper.world(), &end.world, &end.contacts);
        m.t = (k + 1) as f64 * scenario.dt;
        out.stage_times.metrics_s += t.elapsed().as_secs_f64();
        drop(problem);

        let step_accuracy =
            opts.accuracy.as_ref().zip(armed.as_ref()).map(|(a, armed)| a.grade(armed, &log, &sol, wall));
        out.solve_times.push(wall);
        out.iterations.push(sol.iterations);
        out.unconverged += usize::from(match &step_accuracy {
            Some(s) => !s.reached,
            None => !sol.status.is_converged(),
        });
        out.accuracy.extend(step_accuracy);
        if k % stride == 0 || k + 1 == n || timed_out {
            out.steps.push(StepRecord {
                step: k,
                status: sol.status,
                iterations: sol.iterations,
                wall_s: wall,
                metrics: m.clone(),
                accuracy: step_accuracy,
            });
        }
        if logged.contains(&k) {
            out.iteration_logs.push((k, log));
        }
        let (m_pen, m_nat) = (m.penetration_max, (m.natmap_abs_l2, m.natmap_rel_l2));
        out.trace.q.push(end.world.positions());
        out.trace.metrics.push(m);
        let frame_metrics = FrameMetrics {
            penetration_max: m_pen,
            natmap_abs_l2: m_nat.0,
            natmap_rel_l2: m_nat.1,
            iterations: sol.iterations,
            unconverged: Some(!sol.status.is_converged()),
        };
        stepper.advance_to(end, &sol);
        if let Some(r) = recorder.as_mut().filter(|r| r.wants(k, n) || timed_out) {
            let impulses = stepper.warm_start().map(|w| &w.impulses);
            r.record(k, stepper.world(), stepper.contacts(), impulses, frame_metrics);
        }
        on_step(&StepDone { step: k, steps: n, iterations: sol.iterations, wall_s: wall });
        out.trace.v.push(sol.v);
        if timed_out {
            out.failure = Some(format!(
                "step {k}: stopped after {wall:.1} s and {logged_iterations} iterations: past the wall-time limit ({})",
                timeout_reason(&opts, step_start, run_start)
            ));
            break;
        }
    }
    out.trace.completed = out.failure.is_none();
    out.stepper = stepper;
    out.trajectory = recorder.map(Recorder::finish);
    out
}

/// Evaluates the yardstick ([`metrics::yardstick`]) on the iterates `log` kept and writes its
/// columns into the log, at the rows the iterates belong to.
fn yardstick_columns(problem: &StepProblem<'_>, log: &mut IterationLog) {
    let (rows, iterates): (Vec<usize>, Vec<_>) = log.take_iterates().into_iter().unzip();
    if iterates.is_empty() {
        return;
    }
    for (name, values) in metrics::yardstick::evaluate(problem, &iterates) {
        for (&row, x) in rows.iter().zip(values) {
            log.set(row, name, x);
        }
    }
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

    use crate::model::{Material, RigidBody, Shape, StaticCollider, StaticShape};
    use nalgebra::Vector3;

    /// Warm-start impulses sorted by key, and the warm-start velocity.
    type Warm = (Vec<(crate::ContactKey, [f64; 3])>, Vec<f64>);

    /// What a solver saw of one step's problem.
    #[derive(Debug, Clone, PartialEq)]
    struct Seen {
        q0: Vec<f64>,
        v0: Vec<f64>,
        contacts: ContactSet,
        warm: Option<Warm>,
    }

    /// Records every problem and answers with the free velocity and a fixed normal impulse per
    /// contact (a deterministic stand-in for a solver).
    #[derive(Default)]
    struct Recorder {
        seen: Vec<Seen>,
    }

    impl Solver for Recorder {
        fn step(&mut self, p: &StepProblem<'_>, _log: &mut IterationLog) -> Result<StepSolution, SolveError> {
            let warm = p.warm_start.map(|w| {
                let mut imp: Vec<_> = w.impulses.iter().map(|(k, l)| (*k, *l)).collect();
                imp.sort_by_key(|(k, _)| *k);
                (imp, w.velocity.clone())
            });
            self.seen.push(Seen { q0: p.q0.clone(), v0: p.v0.clone(), contacts: p.contacts.clone(), warm });
            let impulses = (0..p.nc()).map(|i| [1e-3 * (i + 1) as f64, 0.0, 0.0]).collect();
            Ok(StepSolution {
                v: p.free_velocity(),
                q: None,
                impulses,
                bilateral: vec![],
                iterations: 1,
                status: SolveStatus::Solved,
            })
        }
    }

    /// Two spheres falling onto the ground, touching it (within the margin) from step 2 on.
    fn falling_spheres(steps: usize) -> Scenario {
        let mut w = World::new();
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material: Material::rigid(0.5),
        });
        for (i, x) in [-0.5f64, 0.5].into_iter().enumerate() {
            let z = 0.1 + 0.002 * (i + 1) as f64;
            w.bodies.push(RigidBody::new(
                format!("ball{i}"),
                Shape::Sphere { radius: 0.1 },
                1.0,
                Vector3::new(x, 0.0, z),
                Material::rigid(0.5),
            ));
        }
        Scenario { world: w, dt: 0.01, steps, margin: 0.02, needs: Default::default() }
    }

    fn seen(p: &StepProblem<'_>) -> Seen {
        let mut r = Recorder::default();
        r.step(p, &mut IterationLog::new()).unwrap();
        r.seen.remove(0)
    }

    #[test]
    fn the_problem_at_step_k_is_the_one_the_run_used() {
        let n = 6;
        let mut full = Recorder::default();
        let out = simulate(&falling_spheres(n), &mut full, RunOptions::default(), &mut || {});
        assert!(out.failure.is_none(), "{:?}", out.failure);
        assert_eq!(full.seen.len(), n);
        assert!(full.seen[n - 1].contacts.len() == 2 && full.seen[n - 1].warm.is_some(), "contacts and warm start");
        for k in [0, 1, 3, n - 1] {
            // a run of k steps leaves the stepper at the start of step k
            let out = simulate(&falling_spheres(k), &mut Recorder::default(), RunOptions::default(), &mut || {});
            assert_eq!(out.stepper.step(), k);
            assert_eq!(seen(&out.stepper.problem().unwrap()), full.seen[k], "simulate to step {k}");
            // and so does a hand-driven stepper
            let mut st = Stepper::new(&falling_spheres(n));
            let mut solver = Recorder::default();
            for _ in 0..k {
                let p = st.problem().unwrap();
                let sol = solver.step(&p, &mut IterationLog::new()).unwrap();
                drop(p);
                st.advance(&sol);
            }
            assert_eq!(seen(&st.problem().unwrap()), full.seen[k], "Stepper::advance to step {k}");
        }
    }

    #[test]
    fn the_trace_and_the_final_stepper_agree() {
        let out = simulate(&falling_spheres(4), &mut Recorder::default(), RunOptions::default(), &mut || {});
        assert_eq!(out.trace.q.last(), Some(&out.stepper.world().positions()));
        assert_eq!(out.trace.v.last(), Some(&out.stepper.world().velocities()));
        assert_eq!(out.stepper.contacts(), &geometry::detect_for_step(out.stepper.world(), 0.02, 0.01));
        assert!((out.stepper.world().time - 0.04).abs() < 1e-15);
    }

    /// Time limits whose deadline `Instant` cannot hold are no limit (`--step-timeout 1e19`
    /// overflowed `Instant + Duration` and panicked inside the pair).
    #[test]
    fn time_limits_beyond_instant_are_no_limit() {
        let opts =
            RunOptions { step_timeout: Some(Duration::MAX), run_timeout: Some(Duration::MAX), ..Default::default() };
        let out = simulate(&falling_spheres(3), &mut Recorder::default(), opts, &mut || {});
        assert!(out.failure.is_none(), "{:?}", out.failure);
        assert_eq!(out.stepper.step(), 3);
    }

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
            fallback_reason: Some(kernels::backend::BackendError::NoDevice),
        };
        let opts = RunOptions { backend: Some(fell_back), ..default };
        assert_eq!(opts.backend_label(), "cpu (gpu unavailable: no CUDA device)");
        assert_eq!(opts.solver_context().backend.name(), "cpu");
    }
}
