//! Suites: a (case variant x solver) matrix, resolved and validated before anything runs, then
//! run pair by pair. Incompatible pairs are skipped with the reason; a failing pair (solver
//! error, non-finite result, even a panic) is recorded and the suite goes on.

use crate::case::{PreparedCase, Scenario};
use crate::metrics;
use crate::params::{ParamError, Params};
use crate::record::{quantiles, CaseRecord, MeanMax, Provenance, RunRecord, RunStatus, SolverRecord, Summary, SCHEMA};
use crate::registry::{Registry, SolverFactory};
use crate::resources;
use crate::stepper::{simulate_with, RunOptions, RunOutcome, StepDone};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One (case variant, solver) pair of a suite, before validation.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSpec {
    /// Label of the case variant (file names and tables use it).
    pub label: String,
    /// Case registry name.
    pub case: String,
    /// Case parameter overrides, applied in order.
    pub case_set: Vec<(String, Override)>,
    /// Solver registry name.
    pub solver: String,
    /// Solver parameter overrides.
    pub solver_set: Vec<(String, Override)>,
}

/// A parameter override: text from the command line (typed after the parameter's default), or
/// a value already typed by a suite file (checked against the default's type, never re-parsed).
#[derive(Debug, Clone, PartialEq)]
pub enum Override {
    /// `--set key=text`.
    Text(String),
    /// A suite file's typed value.
    Typed(serde_json::Value),
}

impl Override {
    /// Applies the override to `params`.
    pub fn apply(&self, params: &mut Params, key: &str, owner: &str) -> Result<(), ParamError> {
        match self {
            Override::Text(raw) => params.set(key, raw, owner),
            Override::Typed(v) => params.set_value(key, v, owner),
        }
    }
}

/// A named list of pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Suite name.
    pub name: String,
    /// The pairs, in run order.
    pub pairs: Vec<PairSpec>,
}

/// The TOML form of a suite file (see `ci/quick.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: Option<String>,
    /// Solvers to run every case with (default: all registered).
    solvers: Option<Vec<String>>,
    /// Per-solver setting overrides.
    #[serde(default)]
    solver_settings: BTreeMap<String, Params>,
    /// Case variants.
    #[serde(default)]
    case: Vec<CaseEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    name: String,
    label: Option<String>,
    #[serde(default)]
    set: Params,
}

fn typed(p: &Params) -> Vec<(String, Override)> {
    p.0.iter().map(|(k, v)| (k.clone(), Override::Typed(v.clone()))).collect()
}

impl Suite {
    /// Every registered case with its defaults, times every registered solver.
    pub fn default_suite(reg: &Registry) -> Suite {
        let pairs = reg
            .cases
            .iter()
            .flat_map(|c| {
                reg.solvers.iter().map(move |s| PairSpec {
                    label: c.name().to_string(),
                    case: c.name().to_string(),
                    case_set: vec![],
                    solver: s.name.to_string(),
                    solver_set: vec![],
                })
            })
            .collect();
        Suite { name: "default".into(), pairs }
    }

    /// One case with one solver.
    pub fn single(case: &str, solver: &str) -> Suite {
        Suite {
            name: format!("{case}-{solver}"),
            pairs: vec![PairSpec {
                label: case.into(),
                case: case.into(),
                case_set: vec![],
                solver: solver.into(),
                solver_set: vec![],
            }],
        }
    }

    /// Parses a suite file. `source` names it in errors.
    pub fn from_toml(text: &str, source: &str, reg: &Registry) -> Result<Suite, String> {
        Self::from_toml_with_solvers(text, source, reg, None)
    }

    /// Parses a suite file, running its cases with `solvers` instead of the file's `solvers` list
    /// when given (`signorini run --suite FILE --solver NAME`: a new solver on a suite's cases;
    /// the file's `[solver_settings.NAME]` still apply).
    pub fn from_toml_with_solvers(
        text: &str,
        source: &str,
        reg: &Registry,
        solvers: Option<&[String]>,
    ) -> Result<Suite, String> {
        let f: SuiteFile =
            toml::from_str(text).map_err(|e| format!("{source}: {}", e.to_string().trim().replace('\n', " ")))?;
        let solvers: Vec<String> = match solvers {
            Some(names) => names.to_vec(),
            None => f.solvers.unwrap_or_else(|| reg.solvers.iter().map(|s| s.name.to_string()).collect()),
        };
        for s in solvers.iter().chain(f.solver_settings.keys()) {
            reg.find_solver(s).map_err(|e| format!("{source}: {e}"))?;
        }
        if f.case.is_empty() {
            return Err(format!("{source}: no [[case]] entries"));
        }
        let mut pairs = vec![];
        for c in &f.case {
            reg.find_case(&c.name).map_err(|e| format!("{source}: {e}"))?;
            for s in &solvers {
                pairs.push(PairSpec {
                    label: c.label.clone().unwrap_or_else(|| c.name.clone()),
                    case: c.name.clone(),
                    case_set: typed(&c.set),
                    solver: s.clone(),
                    solver_set: f.solver_settings.get(s).map(typed).unwrap_or_default(),
                });
            }
        }
        Ok(Suite { name: f.name.unwrap_or_else(|| source.to_string()), pairs })
    }

    /// Applies command-line overrides to every pair. `solver.KEY=V` goes to the pairs whose
    /// solver has `KEY`; `KEY=V` or `case.KEY=V` to the pairs whose case has `KEY`. A key that no
    /// pair accepts is an error.
    pub fn apply_overrides(&mut self, reg: &Registry, sets: &[(String, String)]) -> Result<(), String> {
        for (key, value) in sets {
            let (is_solver, k) = match key.split_once('.') {
                Some(("solver", k)) => (true, k),
                Some(("case", k)) => (false, k),
                _ => (false, key.as_str()),
            };
            let mut used = false;
            for p in &mut self.pairs {
                let has = if is_solver {
                    reg.find_solver(&p.solver).map(|s| (s.defaults)().contains(k)).unwrap_or(false)
                } else {
                    reg.find_case(&p.case).map(|c| c.defaults().contains(k)).unwrap_or(false)
                };
                if has {
                    used = true;
                    let target = if is_solver { &mut p.solver_set } else { &mut p.case_set };
                    target.push((k.to_string(), Override::Text(value.clone())));
                }
            }
            if !used {
                let what = if is_solver { "solver" } else { "case" };
                return Err(format!("--set {key}={value}: no {what} in this run has a parameter '{k}'"));
            }
        }
        Ok(())
    }

    /// Keeps the pairs whose case (registry name or label) is in `cases`, when given. Every name
    /// must select at least one pair.
    pub fn select_cases(&mut self, cases: &[String]) -> Result<(), String> {
        if cases.is_empty() {
            return Ok(());
        }
        for c in cases {
            if !self.pairs.iter().any(|p| &p.case == c || &p.label == c) {
                let known: std::collections::BTreeSet<&str> = self.pairs.iter().map(|p| p.label.as_str()).collect();
                return Err(format!(
                    "--case {c}: no case of suite '{}' has this name or label (known: {})",
                    self.name,
                    known.into_iter().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        self.pairs.retain(|p| cases.iter().any(|c| &p.case == c || &p.label == c));
        Ok(())
    }

    /// Checks that every label can name a record file ([`crate::input::label_error`]) and that
    /// no (label, solver) pair is listed twice (its second record would overwrite the first).
    pub fn check_labels(&self) -> Result<(), String> {
        let mut seen = std::collections::BTreeMap::new();
        for (i, p) in self.pairs.iter().enumerate() {
            if let Some(why) = crate::input::label_error(&p.label) {
                return Err(format!("suite '{}': case label {:?} {why}", self.name, p.label));
            }
            if let Some(j) = seen.insert((p.label.as_str(), p.solver.as_str()), i) {
                return Err(format!(
                    "suite '{}': the pair {} / {} is listed twice (pairs {} and {}); give one of the \
                     [[case]] entries its own label",
                    self.name,
                    p.label,
                    p.solver,
                    j + 1,
                    i + 1
                ));
            }
        }
        Ok(())
    }

    /// Keeps the pairs `i` with `i % n == shard` (deterministic slicing for clusters).
    pub fn shard(&mut self, shard: usize, n: usize) {
        let pairs = std::mem::take(&mut self.pairs);
        self.pairs = pairs.into_iter().enumerate().filter(|(i, _)| i % n == shard).map(|(_, p)| p).collect();
    }
}

/// A pair whose names and parameters were resolved and validated.
pub struct PreparedPair {
    /// The spec it came from.
    pub spec: PairSpec,
    /// Full case parameters (the decoded ones, as stored in the run record).
    pub case_params: Params,
    /// The case with its decoded parameters and scene; grades the run.
    pub case: Arc<dyn PreparedCase>,
    /// Full solver parameters.
    pub solver_params: Params,
    /// Makes the solver from the settings decoded and validated by [`prepare`].
    pub solver: SolverFactory,
    /// The built scene (a copy of `case.scenario()` for the run).
    pub scenario: Scenario,
    /// Why the pair will be skipped (missing capabilities), if it will.
    pub skip: Option<String>,
}

/// Resolves and validates every pair: unknown names, unknown or invalid parameters, invalid
/// scenes and pairs that would not fit in the machine's available memory are reported before
/// anything runs.
pub fn prepare(reg: &Registry, suite: &Suite) -> Result<Vec<PreparedPair>, String> {
    prepare_with(reg, suite, resources::default_limit())
}

/// [`prepare`] with a memory limit (bytes; `signorini run --max-memory`): a pair whose estimate
/// ([`crate::resources`]) exceeds it is refused, before its scene is built when the case can tell
/// its size from its parameters.
pub fn prepare_with(reg: &Registry, suite: &Suite, memory_limit: f64) -> Result<Vec<PreparedPair>, String> {
    suite.check_labels()?;
    let mut out = Vec::with_capacity(suite.pairs.len());
    let mut case_cache: BTreeMap<String, Arc<dyn PreparedCase>> = BTreeMap::new();
    for spec in &suite.pairs {
        let case = reg.find_case(&spec.case).map_err(|e| e.to_string())?;
        let solver = reg.find_solver(&spec.solver).map_err(|e| e.to_string())?;
        let mut cp = case.defaults();
        for (k, v) in &spec.case_set {
            v.apply(&mut cp, k, &format!("case '{}'", spec.case)).map_err(|e| e.to_string())?;
        }
        let cache_key = format!("{}:{}", spec.case, cp.hash());
        let what = format!("case '{}' ({})", spec.case, spec.label);
        let hint = case.size_hint(&cp).map_err(|e| format!("{what}: {e}"))?;
        if !case_cache.contains_key(&cache_key) {
            if let Some(size) = &hint {
                resources::scene_estimate(size).check(memory_limit, &what)?;
            }
            let pc = case.prepare(&cp).map_err(|e| format!("case '{}' ({}): {e}", spec.case, spec.label))?;
            pc.scenario().world.validate().map_err(|e| format!("case '{}' ({}): {e}", spec.case, spec.label))?;
            case_cache.insert(cache_key.clone(), Arc::from(pc));
        }
        let prepared_case = Arc::clone(&case_cache[&cache_key]);
        let scenario = prepared_case.scenario().clone();
        let mut sp = (solver.defaults)();
        for (k, v) in &spec.solver_set {
            v.apply(&mut sp, k, &format!("solver '{}'", spec.solver)).map_err(|e| e.to_string())?;
        }
        let factory = (solver.prepare)(&sp).map_err(|e: ParamError| e.to_string())?;
        let missing = solver.capabilities.missing(&scenario.needs);
        let skip = (!missing.is_empty()).then(|| format!("{} does not support {}", spec.solver, missing.join(", ")));
        if skip.is_none() {
            let driver = match &hint {
                Some(h) => format!("duration (steps = duration / dt = {}) or {}", scenario.steps, h.driver),
                None => format!("duration (steps = duration / dt = {}) or the scene's size", scenario.steps),
            };
            let size = resources::ProblemSize::of(&scenario, &driver);
            resources::run_estimate(&size, (solver.working_memory)(&sp, &size))
                .check(memory_limit, &format!("{what} with {}", spec.solver))?;
        }
        let case_params = prepared_case.params_json();
        out.push(PreparedPair {
            spec: spec.clone(),
            case_params,
            case: prepared_case,
            solver_params: sp,
            solver: factory,
            scenario,
            skip,
        });
    }
    Ok(out)
}

/// Receives progress events (the CLI draws a bar; tests ignore them).
pub trait Progress {
    /// A pair starts, with its number of steps.
    fn pair_started(&self, _pair: &PreparedPair) {}
    /// One step completed.
    fn step(&self, _done: &StepDone) {}
    /// A pair finished.
    fn pair_finished(&self, _record: &RunRecord) {}
}

/// Ignores progress.
pub struct NoProgress;
impl Progress for NoProgress {}

/// Runs one prepared pair and builds its record. Never panics: a panic inside the solver is
/// caught and recorded as a failure.
pub fn run_pair(
    reg: &Registry,
    pair: &PreparedPair,
    opts: RunOptions,
    provenance: &Provenance,
    progress: &dyn Progress,
) -> RunRecord {
    let spec = &pair.spec;
    let mut record = RunRecord {
        schema: SCHEMA.into(),
        provenance: provenance.clone(),
        case: CaseRecord {
            name: spec.case.clone(),
            label: spec.label.clone(),
            params: pair.case_params.clone(),
            params_hash: pair.case_params.hash(),
        },
        solver: SolverRecord {
            name: spec.solver.clone(),
            params: pair.solver_params.clone(),
            params_hash: pair.solver_params.hash(),
            paper: reg.find_solver(&spec.solver).map(|s| s.paper.to_string()).unwrap_or_default(),
            defaults_hash: reg.find_solver(&spec.solver).map(|s| (s.defaults)().hash()).unwrap_or_default(),
        },
        status: RunStatus::Skipped,
        reason: pair.skip.clone(),
        summary: Summary::default(),
        steps: vec![],
        step_stride: 1,
        iterations: vec![],
    };
    if pair.skip.is_some() {
        return record;
    }
    progress.pair_started(pair);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut solver = (pair.solver)(&opts.solver_context());
        Ok::<RunOutcome, String>(simulate_with(&pair.scenario, solver.as_mut(), opts.clone(), &mut |d| {
            progress.step(d)
        }))
    }));
    let outcome = match result {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            record.status = RunStatus::Failed;
            record.reason = Some(e);
            return record;
        }
        Err(panic) => {
            record.status = RunStatus::Failed;
            record.reason =
                Some(format!("panicked outside the solver: {}", crate::stepper::panic_message(panic.as_ref())));
            return record;
        }
    };
    record.summary = summarize(&outcome, &pair.scenario);
    if outcome.trace.completed {
        for check in pair.case.grade(&outcome.trace) {
            record.summary.oracle.insert(check.name.clone(), check);
        }
        record.status = RunStatus::Ok;
    } else {
        record.status = RunStatus::Failed;
        record.reason = outcome.failure.clone();
    }
    record.steps = outcome.steps;
    record.step_stride = outcome.step_stride;
    record.iterations =
        outcome.iteration_logs.into_iter().map(|(step, log)| crate::record::IterationRecord { step, log }).collect();
    record
}

fn summarize(o: &RunOutcome, scenario: &Scenario) -> Summary {
    let mut s = Summary {
        steps: o.trace.metrics.len(),
        failures: usize::from(o.failure.is_some()),
        wall_per_step_s: quantiles(&o.solve_times),
        stage_times: o.stage_times,
        ..Default::default()
    };
    let iters: Vec<f64> = o.iterations.iter().map(|&i| i as f64).collect();
    if !iters.is_empty() {
        s.iterations_per_step = MeanMax {
            mean: iters.iter().sum::<f64>() / iters.len() as f64,
            max: iters.iter().copied().fold(0.0, f64::max),
        };
    }
    s.unconverged_steps = o.unconverged;
    s.metrics = crate::record::summarize_metrics(&o.trace.metrics, |_| true);
    s.momentum_drift = metrics::momentum::drift(&scenario.world, &o.trace);
    s
}

/// Runs one (case, solver) pair with `--set`-style overrides, as
/// `signorini run --case C --solver S --set ...` does, and returns its record without writing it.
/// `Err` carries the message the CLI would print: an unknown name or parameter, an invalid
/// value, or a pair the runner would skip (with the missing capability). The record's own status
/// says whether the run completed.
pub fn run_one(
    reg: &Registry,
    case: &str,
    case_set: &[(&str, &str)],
    solver: &str,
    solver_set: &[(&str, &str)],
) -> Result<RunRecord, String> {
    let owned =
        |sets: &[(&str, &str)]| sets.iter().map(|(k, v)| (k.to_string(), Override::Text(v.to_string()))).collect();
    let suite = Suite {
        name: format!("{case}-{solver}"),
        pairs: vec![PairSpec {
            label: case.into(),
            case: case.into(),
            case_set: owned(case_set),
            solver: solver.into(),
            solver_set: owned(solver_set),
        }],
    };
    let pair = prepare(reg, &suite)?.remove(0);
    if let Some(why) = &pair.skip {
        return Err(format!("{case} / {solver} would be skipped: {why}"));
    }
    Ok(run_pair(reg, &pair, RunOptions::default(), &Provenance::collect(), &NoProgress))
}

/// Runs every prepared pair, writing each record atomically into `out_dir` as soon as it is
/// done. Returns the records with their paths; a record that could not be written is returned
/// with the I/O error in place of a path.
pub fn run_suite(
    reg: &Registry,
    pairs: &[PreparedPair],
    out_dir: &Path,
    opts: RunOptions,
    progress: &dyn Progress,
) -> Vec<(RunRecord, Result<PathBuf, String>)> {
    let provenance = Provenance { backend: opts.backend_label(), ..Provenance::collect() };
    pairs
        .iter()
        .map(|p| {
            let r = run_pair(reg, p, opts.clone(), &provenance, progress);
            progress.pair_finished(&r);
            let path = r.write_atomic(out_dir).map_err(|e| format!("{}: {e}", out_dir.display()));
            (r, path)
        })
        .collect()
}
