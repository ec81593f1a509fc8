//! `signorini fclib bench`: every chosen solver on every FCLIB file of a directory under one
//! protocol (Siconos' `faf` campaigns: one tolerance on one error for every solver, an iteration
//! budget and a time limit per problem), one run record per (problem, solver).
//!
//! # The grade (the harness's, never the solver's)
//! From the returned impulses `r` alone ([`crate::Grader`]): `u = W r + q` (local form) or `v =
//! M^-1 (H r + f)`, `u = H^T v + w` with the file's `M` (global form). `fclib_error` is Siconos's
//! error `||F|| / max(||q||, ||r||, ||u||)` (`fc3d_compute_error`), `F` the natural map of the
//! rigid Coulomb NCP; beside it `natmap_1q = ||F|| / (1 + ||q||)` and `natmap_rel_q = ||F|| /
//! ||q||`. For the global form, `consistency = ||M v - H r - f|| / max(||f||, ||H r||)` of the
//! solver's own `v` shows whether the velocity it returned balances its impulses (it is not part
//! of the verdict, which needs `r` only).
//!
//! # What stops a solver
//! By default the harness ([`Stop::Harness`], equal accuracy): every solver of the rigid problem
//! hands over its iterate once per outer iteration, the harness grades the impulses and stops it
//! at the first iterate whose `fclib_error` meets the tolerance (status `Stopped`), or at the
//! budget or time limit; the solver's own tolerance is set out of reach. Siconos's solvers stop on
//! Siconos's error, the same measure, so every row of a campaign answers to one accuracy. The
//! regularised models stop on their own criterion at the tolerance. `--stop solver` lets every
//! solver stop on its own criterion, its tolerance the protocol's (the earlier protocol): then a
//! solver whose own test is met above the tolerance is recorded `unconverged (solver claimed
//! solved)`.
//!
//! # The records
//! Case `fclib`, label the file stem, case parameters `file`, `title`, `family` (the file's
//! title, else the stem up to its first `-`), `form`, `contacts`, `dofs` (global form), and the
//! measured `w_asymmetry` (local form) or `m_asymmetry` (global form); one step;
//! `summary.iterations_per_step`, `summary.stage_times.solve_s` and `wall_per_step_s` the
//! solver's; `summary.unconverged_steps = 1` unless `fclib_error <= tolerance` within the time
//! limit (so the performance profiles count the pair as unsolved), and a solver that claimed
//! `Solved` above the tolerance gets the reason `unconverged (solver claimed solved)`; status
//! `failed` when the solver stopped with an error, `skipped` when the problem cannot be given to
//! it (a non-symmetric `W` for a solver that needs a symmetric one, with the measured asymmetry);
//! `view_regularisation` in the metrics when it was given the Cholesky view.
//!
//! # Regularised models
//! sap and drumwright solve a compliant, regularised model, not the rigid NCP: their
//! `fclib_error` grades them on the rigid problem, and `model_residual` (the residual their own
//! stopping test uses, from their iteration log: sap's relative gradient `grad_rel`, drumwright's
//! largest conic residual `max(r_prim, r_dual)`) grades them on their own.

use crate::problem::{FclibProblem, Form};
use crate::solve::{Given, Prepared};
use harness::params::{ParamError, Params};
use harness::registry::SolverEntry;
use records::{
    metric_stat, CaseRecord, MeanMax, Provenance, Quantiles, RunRecord, RunStatus, SolverRecord, StageTimes,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The protocol of a campaign.
#[derive(Debug, Clone, PartialEq)]
pub struct Protocol {
    /// Tolerance on `fclib_error`, also given to each solver's own stopping tolerance (the setting
    /// its definition names, [`api::SolverDef::TOLERANCE`]).
    pub tolerance: f64,
    /// Iteration budget, given to each solver's outer iteration budget (the setting its
    /// definition names, [`api::SolverDef::BUDGET`]).
    pub max_iterations: usize,
    /// Time limit per (problem, solver) (s).
    pub time_limit_s: f64,
    /// The form given to the solvers (`None`: global when the file has it, else local).
    pub form: Option<Form>,
    /// What stops a solver of the rigid problem.
    pub stop: Stop,
    /// Whether the solvers that work on `W` get a global problem condensed to `W = H^T M^-1 H`
    /// ([`crate::Prepared::condense`]; the default), else its global form.
    pub condense: bool,
}

/// Why a campaign cannot start or a pair cannot run: a solver that cannot take FCLIB problems,
/// settings the protocol cannot set, a directory that cannot be listed, two problems that would
/// write the same records, a time limit that is no deadline.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The solver does not support rigid contact between rigid bodies ([`accepts`]).
    #[error(
        "solver '{solver}' cannot take FCLIB problems: they are rigid contact between rigid bodies with a generic \
         mass matrix, it supports rigid bodies: {rigid_bodies}, rigid contact: {rigid_contact}"
    )]
    Unsupported {
        /// The solver.
        solver: String,
        /// Whether it supports rigid bodies.
        rigid_bodies: bool,
        /// Whether it supports rigid contact.
        rigid_contact: bool,
    },
    /// The protocol's tolerance or budget cannot be set ([`settings`]).
    #[error(transparent)]
    Settings(ParamError),
    /// The solver cannot be built from the settings.
    #[error(transparent)]
    Build(ParamError),
    /// The directory cannot be walked ([`records::input::walk_dirs`]).
    #[error(transparent)]
    Input(#[from] records::input::InputError),
    /// A directory of the walk cannot be listed.
    #[error("{}: {source}", path.display())]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Two files with the same stem (the records' label).
    #[error(
        "{} and {}: two problems named '{stem}' would write the same records ({stem}__SOLVER.json); rename one or \
         bench the folders separately",
        first.display(),
        second.display()
    )]
    SameStem {
        /// The first file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
        /// Their stem.
        stem: String,
    },
    /// The time limit is not a number of seconds a deadline can hold.
    #[error("time limit {seconds} s: not a number of seconds a deadline can hold")]
    TimeLimit {
        /// The limit given (s).
        seconds: f64,
    },
}

impl From<BenchError> for String {
    fn from(e: BenchError) -> String {
        e.to_string()
    }
}

/// What stops a solver of the rigid Coulomb problem in a campaign (a regularised model always
/// stops on its own criterion at the tolerance: the rigid error is not its model's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stop {
    /// The harness (equal accuracy): at every iterate the solver hands over, the harness grades
    /// its impulses (`fclib_error`) and stops the solver once they meet the tolerance; the
    /// solver's own tolerance is set to [`OWN_TOLERANCE_UNDER_HARNESS`] so that its own criterion
    /// does not stop it first. As Siconos's solvers stop on Siconos's error.
    #[default]
    Harness,
    /// The solver's own criterion, its tolerance set to the protocol's.
    Solver,
}

/// A spelling of [`Stop`] that is neither `harness` nor `solver`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{spelling}': expected 'harness' or 'solver'")]
pub struct StopError {
    /// The spelling given.
    pub spelling: String,
}

impl std::str::FromStr for Stop {
    type Err = StopError;
    fn from_str(s: &str) -> Result<Self, StopError> {
        match s {
            "harness" => Ok(Stop::Harness),
            "solver" => Ok(Stop::Solver),
            _ => Err(StopError { spelling: s.to_string() }),
        }
    }
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::Harness => "harness",
            Stop::Solver => "solver",
        })
    }
}

/// A solver's own tolerance when the harness stops it ([`Stop::Harness`]): the equal-accuracy
/// mode's, far below anything reachable in double precision, so only the harness's rule, the
/// budget or the time limit end it.
pub use harness::accuracy::OWN_TOLERANCE_UNDER_HARNESS;

impl Protocol {
    /// Whether the harness stops `entry` (its answers are graded on its own model's terms
    /// otherwise).
    pub fn harness_stops(&self, entry: &SolverEntry) -> bool {
        self.stop == Stop::Harness && !entry.model.is_regularised()
    }
}

/// One pair's outcome: its record, and the answer when the solver gave one.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The run record.
    pub record: RunRecord,
    /// The answer as an FCLIB solution (`r`, `u`, and `v` for the global form).
    pub answer: Option<crate::Solution>,
}

/// The message of a pair whose solver claimed `Solved` while the harness's error is above the
/// tolerance.
pub const CLAIMED_SOLVED: &str = "unconverged (solver claimed solved)";

/// Whether a solver can take FCLIB problems at all (rigid contact between rigid bodies), else
/// [`BenchError::Unsupported`] (one line).
pub fn accepts(entry: &SolverEntry) -> Result<(), BenchError> {
    if entry.capabilities.rigid_contact && entry.capabilities.rigid_bodies {
        Ok(())
    } else {
        Err(BenchError::Unsupported {
            solver: entry.name.to_string(),
            rigid_bodies: entry.capabilities.rigid_bodies,
            rigid_contact: entry.capabilities.rigid_contact,
        })
    }
}

/// The solver's default settings with the protocol's budget and tolerance in the settings its
/// definition names ([`SolverEntry::budget`], [`SolverEntry::tolerance`]; the tolerance is
/// [`OWN_TOLERANCE_UNDER_HARNESS`] when the harness stops it), and nothing else changed.
pub fn settings(entry: &SolverEntry, protocol: &Protocol) -> Result<Params, BenchError> {
    let tol = if protocol.harness_stops(entry) { OWN_TOLERANCE_UNDER_HARNESS } else { protocol.tolerance };
    entry.with_budget_and_tolerance(protocol.max_iterations, tol).map_err(BenchError::Settings)
}

/// How deep [`files`] looks below its directory.
pub const MAX_DEPTH: usize = 32;

/// Every `*.hdf5` file under `dir` (recursively, at most [`MAX_DEPTH`] levels), sorted. Symbolic
/// links to directories are not followed (two links to `..` would make the walk endless, one
/// link would list a file many times; [`records::input::walk_dirs`]) and hidden names are
/// skipped. Two files with the same stem would write the same records (the label is the stem):
/// refused, naming both.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>, BenchError> {
    let mut out = vec![];
    for d in records::input::walk_dirs(dir, MAX_DEPTH)? {
        let read_dir = |source| BenchError::ReadDir { path: d.clone(), source };
        for entry in std::fs::read_dir(&d).map_err(read_dir)? {
            let p = entry.map_err(read_dir)?.path();
            let hidden = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if hidden || p.extension().is_none_or(|x| x != "hdf5") {
                continue;
            }
            // a FIFO, a device or a dangling link is listed: reading it fails, naming it
            if !std::fs::metadata(&p).is_ok_and(|m| m.is_dir()) {
                out.push(p);
            }
        }
    }
    out.sort();
    let mut stems: std::collections::BTreeMap<String, &PathBuf> = Default::default();
    for p in &out {
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if let Some(first) = stems.insert(stem.clone(), p) {
            return Err(BenchError::SameStem { first: first.clone(), second: p.clone(), stem });
        }
    }
    Ok(out)
}

/// The family of a problem: the file's title, else the file stem up to its first `-`.
pub fn family(prob: &FclibProblem, path: &Path) -> String {
    let t = prob.info.title.trim();
    if !t.is_empty() {
        return t.to_string();
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    stem.split('-').next().unwrap_or_default().to_string()
}

/// The case part of a record of `prob` read from `path` under `protocol`.
pub fn case_record(prob: &FclibProblem, path: &Path, protocol: &Protocol) -> CaseRecord {
    let mut m = serde_json::Map::new();
    m.insert("stop".into(), Value::from(protocol.stop.to_string()));
    if prob.form == Form::Global {
        m.insert("condense".into(), Value::from(protocol.condense));
    }
    m.insert("file".into(), Value::from(path.display().to_string()));
    m.insert("title".into(), Value::from(prob.info.title.trim()));
    m.insert("family".into(), Value::from(family(prob, path)));
    m.insert("form".into(), Value::from(prob.form.to_string()));
    m.insert("contacts".into(), Value::from(prob.nc()));
    m.insert("dofs".into(), prob.nv().map_or(Value::Null, Value::from));
    match prob.form {
        Form::Local => {
            m.insert("w_asymmetry".into(), prob.local.as_ref().map_or(Value::Null, |l| Value::from(l.asymmetry())));
        }
        Form::Global => {
            let a = prob.global.as_ref().and_then(|g| g.m_asymmetry().ok());
            m.insert("m_asymmetry".into(), a.map_or(Value::Null, Value::from));
        }
    }
    let label = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    CaseRecord::new("fclib", &label, Params(m))
}

/// Runs `entry` on the prepared problem (read from `path`) under `protocol`: one run record, and
/// the answer.
pub fn run_one(
    prepared: &Prepared<'_>,
    path: &Path,
    entry: &SolverEntry,
    protocol: &Protocol,
    provenance: &Provenance,
) -> Result<Outcome, BenchError> {
    let prob = prepared.prob;
    let params = settings(entry, protocol)?;
    let solver = SolverRecord::new(entry.name, params.clone(), entry.paper, (entry.defaults)().hash());
    let mut record = RunRecord::new(provenance.clone(), case_record(prob, path, protocol), solver);
    if let Err(why) = accepts(entry) {
        record.reason = Some(why.to_string());
        return Ok(Outcome { record, answer: None });
    }
    let delassus = entry.capabilities.delassus_form;
    if let Err(why) = prepared.check(delassus) {
        record.reason = Some(format!("the problem cannot be given to {}: {why}", entry.name));
        return Ok(Outcome { record, answer: None });
    }
    let mut s = entry.build(&params).map_err(BenchError::Build)?;
    let limit = Duration::try_from_secs_f64(protocol.time_limit_s)
        .map_err(|_| BenchError::TimeLimit { seconds: protocol.time_limit_s })?;
    // a deadline beyond what `Instant` can hold is no deadline
    let deadline = Instant::now().checked_add(limit);
    let rep = if protocol.harness_stops(entry) {
        prepared.solve_to(s.as_mut(), delassus, deadline, protocol.tolerance)
    } else {
        prepared.solve(s.as_mut(), delassus, deadline)
    };
    let rep = match rep {
        Err(e @ crate::SolveFailure::Solver(api::SolveError::Unsupported { .. })) => {
            record.reason = Some(format!("refuses the {} form: {e}", prob.form));
            return Ok(Outcome { record, answer: None });
        }
        Err(e) => {
            record.status = RunStatus::Failed;
            record.reason = Some(e.to_string());
            record.summary.failures = 1;
            return Ok(Outcome { record, answer: None });
        }
        Ok(rep) => rep,
    };
    let g = &rep.grade;
    // the protocol's time limit: an answer returned past it is graded but unsolved
    let timed_out = rep.status == harness::SolveStatus::TimeLimit || rep.wall_s > protocol.time_limit_s;
    let solved = !timed_out && g.error <= protocol.tolerance;
    if timed_out {
        record.reason = Some(format!(
            "stopped at the time limit ({} s) after {} iterations; the answer is graded but counts as unsolved",
            protocol.time_limit_s, rep.iterations
        ));
    } else if !solved && rep.status == harness::SolveStatus::Solved && entry.model.is_regularised() {
        record.reason = Some(format!(
            "a regularised model: solved its own model (its own residual below); the rigid error {:.3e} is above \
             the tolerance {:e}",
            g.error, protocol.tolerance
        ));
    } else if !solved && rep.status == harness::SolveStatus::Solved {
        record.reason =
            Some(format!("{CLAIMED_SOLVED}: error {:.3e} above the tolerance {:e}", g.error, protocol.tolerance));
    }
    let sm = &mut record.summary;
    sm.steps = 1;
    sm.unconverged_steps = usize::from(!solved);
    sm.wall_per_step_s = Quantiles { median: rep.wall_s, p95: rep.wall_s };
    sm.iterations_per_step = MeanMax { mean: rep.iterations as f64, max: rep.iterations as f64 };
    sm.stage_times = StageTimes { solve_s: rep.wall_s, ..StageTimes::default() };
    for (k, v) in [("fclib_error", g.error), ("natmap_1q", g.error_1q), ("natmap_rel_q", g.error_rel_q)] {
        sm.metrics.insert(k.into(), metric_stat(&[v]));
    }
    if let Some(b) = rep.log.best_yardstick() {
        // the harness's stopping rule: the best error of any iterate handed over
        sm.metrics.insert("best_yardstick".into(), metric_stat(&[b]));
    }
    if let Some(c) = rep.consistency {
        sm.metrics.insert("consistency".into(), metric_stat(&[c]));
    }
    if let Given::CholeskyView { regularisation } = rep.given {
        sm.metrics.insert("view_regularisation".into(), metric_stat(&[regularisation]));
    }
    if let Some(m) = entry.model.own_residual(&rep.log) {
        sm.metrics.insert("model_residual".into(), metric_stat(&[m]));
    }
    record.status = RunStatus::Ok;
    Ok(Outcome { record, answer: Some(crate::answer(&rep)) })
}
