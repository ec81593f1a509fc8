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

/// The campaign's verdict on one graded answer ([`verdict`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The harness's `fclib_error` meets the tolerance (`<=`; never when it is NaN) and the
    /// answer came within the time limit.
    pub solved: bool,
    /// What the record says beyond its numbers: an answer past the time limit, a regularised
    /// model that solved its own model only, a solver that claimed `Solved` above the tolerance
    /// ([`CLAIMED_SOLVED`]); `None` otherwise.
    pub reason: Option<String>,
}

/// The verdict on an answer of solver status `status`, returned after `wall_s` seconds and
/// `iterations` iterations, whose harness error is `error`, by a solver of a regularised model or
/// not. The time limit holds whatever the solver says: an answer past it (by the clock, or by
/// the solver's [`harness::SolveStatus::TimeLimit`]) is graded but unsolved.
pub fn verdict(
    protocol: &Protocol,
    status: harness::SolveStatus,
    wall_s: f64,
    iterations: usize,
    error: f64,
    regularised: bool,
) -> Verdict {
    let timed_out = status == harness::SolveStatus::TimeLimit || wall_s > protocol.time_limit_s;
    let solved = !timed_out && error <= protocol.tolerance;
    let reason = if timed_out {
        Some(format!(
            "stopped at the time limit ({} s) after {iterations} iterations; the answer is graded but counts as \
             unsolved",
            protocol.time_limit_s
        ))
    } else if solved || status != harness::SolveStatus::Solved {
        None
    } else if regularised {
        Some(format!(
            "a regularised model: solved its own model (its own residual below); the rigid error {error:.3e} is above \
             the tolerance {:e}",
            protocol.tolerance
        ))
    } else {
        Some(format!("{CLAIMED_SOLVED}: error {error:.3e} above the tolerance {:e}", protocol.tolerance))
    };
    Verdict { solved, reason }
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
    let Verdict { solved, reason } =
        verdict(protocol, rep.status, rep.wall_s, rep.iterations, g.error, entry.model.is_regularised());
    record.reason = reason;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::LocalProblem;
    use crate::{Csc, CscOps};
    use harness::SolveStatus::{AlmostSolved, MaxIterations, Solved, Stopped, TimeLimit};

    fn protocol(stop: Stop) -> Protocol {
        Protocol { tolerance: 1e-6, max_iterations: 50, time_limit_s: 2.0, form: None, stop, condense: true }
    }

    /// A solver entry with these capabilities and model, settings `iters` and `tol` (never built).
    fn entry(rigid_bodies: bool, rigid_contact: bool, model: api::AnsweredModel) -> SolverEntry {
        SolverEntry {
            name: "toy",
            summary: "",
            paper: "",
            capabilities: api::Capabilities { rigid_bodies, rigid_contact, ..Default::default() },
            budget: "iters",
            tolerance: "tol",
            model,
            harness_stops: true,
            defaults: Box::new(|| {
                Params(serde_json::json!({"iters": 1, "tol": 1.0, "other": 3}).as_object().unwrap().clone())
            }),
            prepare: Box::new(|_| {
                Err(ParamError::BadValue { key: "k".into(), owner: "toy".into(), why: "never built".into() })
            }),
            working_memory: |_, _| 0.0,
        }
    }

    const RIGID: api::AnsweredModel = api::AnsweredModel::RigidCoulomb;
    const REGULARISED: api::AnsweredModel = api::AnsweredModel::Regularised { residual_columns: &["r"] };

    fn solved() -> Verdict {
        Verdict { solved: true, reason: None }
    }

    /// Solved: the error at or below the tolerance, at or within the time limit (both bounds
    /// inclusive), whatever the solver's status; above it, NaN or infinite, unsolved without a
    /// word when the solver did not claim `Solved`.
    #[test]
    fn solved_is_the_tolerance_met_within_the_time_limit() {
        let p = protocol(Stop::Harness);
        assert_eq!(verdict(&p, Stopped, 2.0, 7, 1e-6, false), solved());
        assert_eq!(verdict(&p, MaxIterations, 0.1, 7, 0.0, false), solved());
        assert_eq!(verdict(&p, Solved, 0.1, 7, 1e-7, true), solved());
        for error in [1.000001e-6, f64::NAN, f64::INFINITY] {
            for status in [MaxIterations, AlmostSolved, Stopped] {
                let v = verdict(&p, status, 0.1, 7, error, false);
                assert_eq!(v, Verdict { solved: false, reason: None }, "{status:?} {error}");
            }
        }
    }

    /// Past the time limit, by the clock or by the solver's own status, an answer is graded but
    /// unsolved, and the record says so with the limit and the iterations.
    #[test]
    fn an_answer_past_the_time_limit_is_unsolved_whatever_its_error() {
        let p = protocol(Stop::Harness);
        for (status, wall) in [(Stopped, 2.5), (Solved, 2.000001), (TimeLimit, 1.0)] {
            let v = verdict(&p, status, wall, 7, 1e-9, false);
            let why = "stopped at the time limit (2 s) after 7 iterations; the answer is graded but counts as unsolved";
            assert_eq!(v, Verdict { solved: false, reason: Some(why.into()) }, "{status:?} {wall}");
        }
    }

    /// A solver that claimed `Solved` above the tolerance is named as such, a regularised model
    /// as one that solved its own model; both unsolved.
    #[test]
    fn a_claimed_solve_above_the_tolerance_is_named() {
        let p = protocol(Stop::Harness);
        let v = verdict(&p, Solved, 0.1, 7, 2e-6, false);
        let why = format!("{CLAIMED_SOLVED}: error 2.000e-6 above the tolerance 1e-6");
        assert_eq!(v, Verdict { solved: false, reason: Some(why) });
        let v = verdict(&p, Solved, 0.1, 7, 2e-6, true);
        assert!(!v.solved, "{v:?}");
        assert!(v.reason.as_deref().unwrap().starts_with("a regularised model: solved its own model"), "{v:?}");
        assert!(v.reason.as_deref().unwrap().ends_with("rigid error 2.000e-6 is above the tolerance 1e-6"), "{v:?}");
    }

    /// The harness stops the solvers of the rigid problem under `Stop::Harness` only; their own
    /// tolerance is then out of reach, otherwise the protocol's; the budget is always the
    /// protocol's and nothing else changes.
    #[test]
    fn settings_hold_every_solver_to_the_protocol() {
        let (rigid, regularised) = (entry(true, true, RIGID), entry(true, true, REGULARISED));
        let (by_harness, by_solver) = (protocol(Stop::Harness), protocol(Stop::Solver));
        assert!(by_harness.harness_stops(&rigid));
        assert!(!by_harness.harness_stops(&regularised) && !by_solver.harness_stops(&rigid));
        assert!(!by_solver.harness_stops(&regularised));
        let tol = |e: &SolverEntry, p: &Protocol| settings(e, p).unwrap().0["tol"].as_f64().unwrap();
        assert_eq!(tol(&rigid, &by_harness), OWN_TOLERANCE_UNDER_HARNESS);
        assert_eq!(tol(&regularised, &by_harness), 1e-6);
        assert_eq!(tol(&rigid, &by_solver), 1e-6);
        let s = settings(&rigid, &by_solver).unwrap().0;
        assert_eq!((s["iters"].as_u64(), s["other"].as_u64()), (Some(50), Some(3)));
    }

    /// A solver takes FCLIB problems only with both rigid bodies and rigid contact.
    #[test]
    fn only_rigid_contact_between_rigid_bodies_is_accepted() {
        assert!(accepts(&entry(true, true, RIGID)).is_ok());
        for (bodies, contact) in [(true, false), (false, true)] {
            let e = accepts(&entry(bodies, contact, RIGID)).unwrap_err();
            assert!(matches!(e, BenchError::Unsupported { rigid_bodies, rigid_contact, .. }
                if (rigid_bodies, rigid_contact) == (bodies, contact)));
            let e = String::from(e);
            assert!(e.starts_with("solver 'toy' cannot take FCLIB problems"), "{e}");
        }
    }

    /// `harness` and `solver` read and print as themselves; anything else is refused naming it.
    #[test]
    fn stop_reads_and_prints_its_two_spellings() {
        for stop in [Stop::Harness, Stop::Solver] {
            assert_eq!(stop.to_string().parse::<Stop>(), Ok(stop));
        }
        assert_eq!(Stop::Solver.to_string(), "solver");
        assert_eq!("Harness".parse::<Stop>(), Err(StopError { spelling: "Harness".into() }));
    }

    /// The family is the file's title, else the stem up to its first `-`; the case record carries
    /// it with the protocol's stop rule, the form, the sizes and the measured asymmetry of `W`.
    #[test]
    fn the_case_record_describes_the_problem_and_the_protocol() {
        let w = Csc::from_triplets(3, 3, &[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (0, 1, 0.5)]);
        let mut prob = FclibProblem::local_only(LocalProblem { w, q: vec![0.0; 3], mu: vec![0.3] });
        let path = Path::new("dir/Capsules-i101-404.hdf5");
        assert_eq!(family(&prob, path), "Capsules");
        prob.info.title = "  Box stacks ".into();
        assert_eq!(family(&prob, path), "Box stacks");
        let c = case_record(&prob, path, &protocol(Stop::Solver));
        assert_eq!((c.name.as_str(), c.label.as_str()), ("fclib", "Capsules-i101-404"));
        let p = &c.params.0;
        assert_eq!(p["stop"], "solver");
        assert_eq!(p["title"], "Box stacks");
        assert_eq!(p["family"], "Box stacks");
        assert_eq!(p["file"], "dir/Capsules-i101-404.hdf5");
        assert_eq!(p["form"], prob.form.to_string().as_str());
        assert_eq!((p["contacts"].as_u64(), p["dofs"].is_null()), (Some(1), true));
        assert_eq!(p["w_asymmetry"].as_f64(), Some(prob.local.as_ref().unwrap().asymmetry()));
        assert!(p.get("condense").is_none() && p.get("m_asymmetry").is_none(), "{p:?}");
    }

    /// A solver on the Delassus form that answers fixed impulses, claiming `Solved`.
    struct Fixed(Vec<[f64; 3]>);

    impl api::Solver for Fixed {
        fn step(
            &mut self,
            _: &api::StepProblem<'_>,
            _: &mut api::IterationLog,
        ) -> Result<api::StepSolution, api::SolveError> {
            Err(api::SolveError::Unsupported { what: "steps".into() })
        }

        fn solve_delassus(
            &mut self,
            _: &api::DelassusProblem,
            _: &mut api::IterationLog,
        ) -> Result<api::DelassusSolution, api::SolveError> {
            Ok(api::DelassusSolution { impulses: self.0.clone(), iterations: 1, status: Solved })
        }
    }

    /// `run_one` records the harness's verdict on the answer, not the solver's claim: on `u = r +
    /// q` with `q = (−1, 0, 0)` (one contact, `W = I`) the exact answer `r = (1, 0, 0)` is one
    /// solved step, `r = 0` (claimed `Solved` too) one unconverged step; either way the step's
    /// solve time is the record's wall time and its only stage time.
    #[test]
    fn run_one_records_the_harnesss_verdict_and_the_solve_time() {
        let w = Csc::from_triplets(3, 3, &[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)]);
        let prob = FclibProblem::local_only(LocalProblem { w, q: vec![-1.0, 0.0, 0.0], mu: vec![0.3] });
        let prepared = Prepared::new(&prob).unwrap();
        let provenance = Provenance::collect();
        for (answer, unconverged) in [([1.0, 0.0, 0.0], 0), ([0.0; 3], 1)] {
            let fixed = SolverEntry {
                capabilities: api::Capabilities {
                    rigid_bodies: true,
                    rigid_contact: true,
                    delassus_form: true,
                    ..Default::default()
                },
                prepare: Box::new(move |_| {
                    Ok(Box::new(move |_: &api::SolverContext| Box::new(Fixed(vec![answer])) as Box<dyn api::Solver>))
                }),
                ..entry(true, true, RIGID)
            };
            let out = run_one(&prepared, Path::new("toy.hdf5"), &fixed, &protocol(Stop::Solver), &provenance).unwrap();
            let sm = &out.record.summary;
            assert_eq!(out.record.status, RunStatus::Ok, "{:?}", out.record.reason);
            assert_eq!(
                (sm.steps, sm.unconverged_steps),
                (1, unconverged),
                "answer {answer:?}: {:?}",
                sm.metrics["fclib_error"]
            );
            let wall = sm.wall_per_step_s.median;
            assert!(wall > 0.0, "{wall}");
            assert_eq!(sm.stage_times, StageTimes { solve_s: wall, ..StageTimes::default() });
            assert_eq!(out.answer.expect("an answer").r, answer);
        }
    }

    /// `files` lists the `*.hdf5` files below a folder, sorted, skipping hidden names and other
    /// extensions; two files of one stem are refused naming both.
    #[test]
    fn files_lists_the_problems_and_refuses_two_of_one_stem() {
        let dir = std::env::temp_dir().join(format!("signorini-fclib-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub/x.hdf5")).unwrap();
        for f in ["b.hdf5", "sub/a.hdf5", ".hidden.hdf5", "c.h5", "notes"] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let got = files(&dir);
        let _ = std::fs::write(dir.join("sub/b.hdf5"), "");
        let twice = files(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(got.unwrap(), [dir.join("b.hdf5"), dir.join("sub/a.hdf5")]);
        let e = twice.unwrap_err();
        assert!(matches!(&e, BenchError::SameStem { stem, .. } if stem == "b"), "{e:?}");
    }
}
