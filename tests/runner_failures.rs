//! The suite runner keeps going past failing pairs and records why they failed: a solver that
//! returns an error mid-run, one that returns NaN, and one that panics, next to a pair that works.

use harness::case::{CaseDef, CaseError, OracleCheck, Scenario, Trace};
use harness::model::{Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::runner::{self, NoProgress, Suite};
use harness::stepper::RunOptions;
use harness::{
    Capabilities, IterationLog, Registry, Settings, SolveError, SolveStatus, Solver, SolverDef, StepProblem,
    StepSolution,
};
use nalgebra::Vector3;
use records::{RunRecord, RunStatus};
use serde::{Deserialize, Serialize};

/// A sphere dropped from 0.2 m onto the ground.
#[derive(Clone)]
struct Drop;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct DropParams {
    steps: usize,
}
impl Default for DropParams {
    fn default() -> Self {
        DropParams { steps: 20 }
    }
}
impl Settings for DropParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        Ok(())
    }
}

impl CaseDef for Drop {
    type Params = DropParams;
    const NAME: &'static str = "drop";
    const SUMMARY: &'static str = "a sphere falls onto the ground";
    const DEFAULTS_TOML: &'static str = "steps = 20";
    fn scenario(&self, p: &DropParams) -> Result<Scenario, CaseError> {
        let mut world = World::new();
        world.bodies.push(RigidBody::new(
            "ball",
            Shape::Sphere { radius: 0.1 },
            1.0,
            Vector3::new(0.0, 0.0, 0.3),
            Material::rigid(0.5),
        ));
        world.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material: Material::rigid(0.5),
        });
        Ok(Scenario {
            world,
            dt: 0.01,
            steps: p.steps,
            margin: 0.01,
            needs: Capabilities { rigid_bodies: true, rigid_contact: true, ..Default::default() },
        })
    }
    fn grade(&self, _: &DropParams, _: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        vec![OracleCheck::abs("steps", trace.metrics.len() as f64, 20.0, 0.0)]
    }
}

/// What the faulty solver does at its fifth step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Misbehaviour {
    #[default]
    Free,
    Error,
    Nan,
    Panic,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Mode {
    mode: Misbehaviour,
    /// The shared knobs every solver declares; one "iteration" per step, so the budget only has
    /// to be at least 1.
    max_iterations: usize,
    tolerance: f64,
}
impl Default for Mode {
    fn default() -> Self {
        Mode { mode: Misbehaviour::Free, max_iterations: 1, tolerance: 0.0 }
    }
}
impl Settings for Mode {
    fn validate(&self) -> Result<(), harness::FieldError> {
        harness::check_budget("max_iterations", self.max_iterations)?;
        if self.tolerance.is_nan() || self.tolerance < 0.0 {
            return Err(harness::FieldError::new("tolerance", "must be >= 0"));
        }
        Ok(())
    }
}

/// Free flight with zero impulses until step 5, then the configured misbehaviour.
struct Faulty {
    mode: Misbehaviour,
    step: usize,
}

impl SolverDef for Faulty {
    type Settings = Mode;
    const NAME: &'static str = "faulty";
    const SUMMARY: &'static str = "misbehaves on purpose";
    const PAPER: &'static str = "-";
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: harness::AnsweredModel = harness::AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        caps()
    }
    fn from_settings(m: Mode, _: &harness::SolverContext) -> Self {
        Faulty { mode: m.mode, step: 0 }
    }
}

/// The same solver registered without any capability: every pair is skipped.
struct NeedsGpuCase(Faulty);

impl SolverDef for NeedsGpuCase {
    type Settings = Mode;
    const NAME: &'static str = "needs_gpu_case";
    const SUMMARY: &'static str = "-";
    const PAPER: &'static str = "-";
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: harness::AnsweredModel = harness::AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        Capabilities::default()
    }
    fn from_settings(m: Mode, ctx: &harness::SolverContext) -> Self {
        NeedsGpuCase(Faulty::from_settings(m, ctx))
    }
}

impl Solver for NeedsGpuCase {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.0.step(p, log)
    }
}

impl Solver for Faulty {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.step += 1;
        log.record(&[("x", 1.0)]);
        let mut v = p.free_velocity();
        if self.step == 5 {
            match self.mode {
                Misbehaviour::Error => return Err(SolveError::Numerical { what: "deliberate".into() }),
                Misbehaviour::Nan => v[0] = f64::NAN,
                Misbehaviour::Panic => panic!("deliberate panic"),
                Misbehaviour::Free => {}
            }
        }
        Ok(StepSolution {
            v,
            q: None,
            impulses: vec![[0.0; 3]; p.nc()],
            bilateral: vec![],
            iterations: 1,
            status: SolveStatus::Solved,
        })
    }
}

fn caps() -> Capabilities {
    Capabilities { rigid_bodies: true, rigid_contact: true, ..Default::default() }
}

fn registry() -> Registry {
    Registry::default().register::<Faulty>().register::<NeedsGpuCase>().case(Drop)
}

fn run(mode: &str) -> Vec<RunRecord> {
    let reg = registry();
    let mut suite = Suite::default_suite(&reg);
    suite.apply_overrides(&reg, &[("solver.mode".into(), mode.into())]).unwrap();
    let pairs = runner::prepare(&reg, &suite).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = runner::run_suite(&pairs, dir.path(), RunOptions::default(), &NoProgress);
    for (r, path) in &out {
        // every record, failed or skipped, is on disk and reads back
        let back = RunRecord::read(path.as_ref().unwrap()).unwrap();
        assert_eq!(back.status, r.status);
    }
    out.into_iter().map(|(r, _)| r).collect()
}

#[test]
fn healthy_run_is_ok_and_graded() {
    let r = &run("free")[0];
    assert_eq!(r.status, RunStatus::Ok, "{:?}", r.reason);
    assert_eq!(r.summary.steps, 20);
    assert!(r.summary.oracle["steps"].pass);
    assert!(!r.iterations.is_empty());
}

#[test]
fn incompatible_pair_is_skipped_with_reason() {
    let recs = run("free");
    let skipped = recs.iter().find(|r| r.solver.name == "needs_gpu_case").unwrap();
    assert_eq!(skipped.status, RunStatus::Skipped);
    assert_eq!(skipped.reason.as_deref(), Some("needs_gpu_case does not support rigid bodies, rigid contact"));
}

#[rstest::rstest]
#[case::error("error", "step 4: numerical failure: deliberate")]
#[case::nan("nan", "step 4: non-finite value in the returned velocity, positions or impulses")]
#[case::panic("panic", "step 4: solver panicked: deliberate panic")]
fn failure_is_recorded_and_suite_continues(#[case] mode: &str, #[case] reason: &str) {
    let recs = run(mode);
    assert_eq!(recs.len(), 2, "the suite went on to the next pair");
    let r = recs.iter().find(|r| r.solver.name == "faulty").unwrap();
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.reason.as_deref(), Some(reason));
    // the four good steps before the failure are kept
    assert_eq!(r.summary.steps, 4);
    assert_eq!(r.summary.failures, 1);
}
