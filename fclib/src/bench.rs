//! `signorini fclib bench`: every chosen solver on every FCLIB file of a directory under one
//! protocol (Siconos' `faf` campaigns: one tolerance on one error for every solver, an iteration
//! budget and a time limit per problem), one run record per (problem, solver).
//!
//! # The error
//! `fclib_error = ||F||_2 / (1 + ||q||_2)`, `F` the natural map of the rigid Coulomb NCP
//! ([`crate::natmap_residual`]) at the returned impulses and contact velocities, `q = H^T M^-1 f +
//! w` (global form) or the file's `q` (local form). The `1 +` keeps the measure finite for a
//! problem with `q = 0` and makes it absolute for small `q`. Beside it every record keeps
//! `natmap_rel_q = ||F|| / ||q||` (what `signorini fclib solve` prints) and `natmap_siconos =
//! ||F|| / max(||q||, ||r||, ||u||)` (the scaling of Siconos' own `fc3d_compute_error`).
//!
//! # The records
//! Case `fclib`, label the file stem, case parameters `file`, `title`, `family` (the file's
//! title, else the stem up to its first `-`), `form`, `contacts`, `dofs`, `regularisation`; one
//! step; `summary.iterations_per_step`, `summary.stage_times.solve_s` and `wall_per_step_s` the
//! solver's; `summary.unconverged_steps = 1` when `fclib_error` is above the tolerance (so the
//! performance profiles count the pair as unsolved); status `failed` when the solver stopped with
//! an error (the time limit included), `skipped` when it refuses the problem's form.
//!
//! # Regularised models
//! sap and drumwright solve a compliant, regularised model, not the rigid NCP: their
//! `fclib_error` grades them on the rigid problem, and `model_residual` (the residual their own
//! stopping test uses, from their iteration log: sap's relative gradient `grad_rel`, drumwright's
//! largest conic residual `max(r_prim, r_dual)`) grades them on their own.

use crate::problem::{norm, FclibProblem, Form};
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

/// The solver's default settings with the protocol's tolerance and budget in the settings its
/// definition names ([`SolverEntry::budget`], [`SolverEntry::tolerance`]), and nothing else
/// changed.
pub fn settings(entry: &SolverEntry, protocol: &Protocol) -> Result<Params, BenchError> {
    entry.with_budget_and_tolerance(protocol.max_iterations, protocol.tolerance).map_err(BenchError::Settings)
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
    let t = prob.global.info.title.trim();
    if !t.is_empty() {
        return t.to_string();
    }
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    stem.split('-').next().unwrap_or_default().to_string()
}

/// The case part of a record of `prob` read from `path`.
pub fn case_record(prob: &FclibProblem, path: &Path) -> CaseRecord {
    let mut m = serde_json::Map::new();
    m.insert("file".into(), Value::from(path.display().to_string()));
    m.insert("title".into(), Value::from(prob.global.info.title.trim()));
    m.insert("family".into(), Value::from(family(prob, path)));
    m.insert("form".into(), Value::from(prob.form.to_string()));
    m.insert("contacts".into(), Value::from(prob.global.nc()));
    m.insert("dofs".into(), Value::from(prob.global.nv()));
    m.insert("regularisation".into(), Value::from(prob.regularisation));
    let label = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    CaseRecord::new("fclib", &label, Params(m))
}

/// The errors of an answer `(r, u)` to a problem with `||q|| = q_norm` and natural-map residual
/// `residual`: `(fclib_error, natmap_rel_q, natmap_siconos)` (module doc).
pub fn errors(residual: f64, q_norm: f64, r: &[f64], u: &[f64]) -> (f64, f64, f64) {
    let rel_q = if q_norm <= f64::EPSILON { residual } else { residual / q_norm };
    let scale = q_norm.max(norm(r)).max(norm(u));
    let siconos = if scale <= f64::EPSILON { residual } else { residual / scale };
    (residual / (1.0 + q_norm), rel_q, siconos)
}

/// Runs `entry` on `prob` (read from `path`) under `protocol`: one run record.
pub fn run_one(
    prob: &FclibProblem,
    path: &Path,
    entry: &SolverEntry,
    protocol: &Protocol,
    provenance: &Provenance,
) -> Result<RunRecord, BenchError> {
    let params = settings(entry, protocol)?;
    let solver = SolverRecord::new(entry.name, params.clone(), entry.paper, (entry.defaults)().hash());
    let mut record = RunRecord::new(provenance.clone(), case_record(prob, path), solver);
    if let Err(why) = accepts(entry) {
        record.reason = Some(why.to_string());
        return Ok(record);
    }
    if let Err(why) = prob.global.to_linear() {
        record.reason = Some(format!("the problem cannot be given to the solvers: {why}"));
        return Ok(record);
    }
    let mut s = entry.build(&params).map_err(BenchError::Build)?;
    let limit = Duration::try_from_secs_f64(protocol.time_limit_s)
        .map_err(|_| BenchError::TimeLimit { seconds: protocol.time_limit_s })?;
    // a deadline beyond what `Instant` can hold is no deadline
    let deadline = Instant::now().checked_add(limit);
    match crate::solve_until(prob, s.as_mut(), deadline) {
        Err(e @ crate::SolveFailure::Solver(api::SolveError::Unsupported { .. })) => {
            record.reason = Some(format!("refuses the {} form: {e}", prob.form));
        }
        Err(e) => {
            record.status = RunStatus::Failed;
            record.reason = Some(e.to_string());
            record.summary.failures = 1;
        }
        Ok(rep) => {
            let (err, rel_q, siconos) = errors(rep.residual, rep.q_norm, &rep.r, &rep.u);
            // the protocol's time limit: an answer returned past it is graded but unsolved
            let timed_out = rep.status == harness::SolveStatus::TimeLimit || rep.wall_s > protocol.time_limit_s;
            if timed_out {
                record.reason = Some(format!(
                    "stopped at the time limit ({} s) after {} iterations; the answer is graded but counts as unsolved",
                    protocol.time_limit_s, rep.iterations
                ));
            }
            let sm = &mut record.summary;
            sm.steps = 1;
            sm.unconverged_steps = usize::from(timed_out || err.is_nan() || err > protocol.tolerance);
            sm.wall_per_step_s = Quantiles { median: rep.wall_s, p95: rep.wall_s };
            sm.iterations_per_step = MeanMax { mean: rep.iterations as f64, max: rep.iterations as f64 };
            sm.stage_times = StageTimes { solve_s: rep.wall_s, ..StageTimes::default() };
            for (k, v) in [("fclib_error", err), ("natmap_rel_q", rel_q), ("natmap_siconos", siconos)] {
                sm.metrics.insert(k.into(), metric_stat(&[v]));
            }
            if let Some(m) = entry.model.own_residual(&rep.log) {
                sm.metrics.insert("model_residual".into(), metric_stat(&[m]));
            }
            record.status = RunStatus::Ok;
        }
    }
    Ok(record)
}
