//! `signorini._native`: the Python package's native module. It holds no workbench logic of its
//! own: every call goes through the library paths the CLI uses (`signorini::registry`,
//! `signorini::selection::select`, the harness runner, `reports`), with the GIL released while
//! Rust runs. The Python side (`python/signorini/__init__.py`) wraps what comes back (records as
//! JSON text) into objects with NumPy arrays.
//!
//! Errors: a bad value (unknown name, invalid parameter, unreadable file) raises `ValueError`, a
//! refusal (a pair the runner would skip, a record it would not overwrite, a memory limit)
//! `signorini.RefusedError`, with the CLI's one-line message; a panic is caught at the boundary
//! and raised as `RuntimeError`.

mod fclib_file;
#[path = "../../tests/example_solver/jacobi.rs"]
mod jacobi;
mod params;
mod problem;
mod pysolver;

use harness::runner::{self, NoProgress};
use harness::stepper::RunOptions;
use harness::trajectory::TrajectoryOption;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};

create_exception!(_native, RefusedError, PyException, "The workbench refused the request (the CLI's one-line reason).");

/// Why a call failed, before it becomes a Python exception.
pub(crate) enum Failure {
    /// A bad value: `ValueError`.
    Value(String),
    /// A refusal: `RefusedError`.
    Refused(String),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Value(s)
    }
}

impl From<runner::SuiteError> for Failure {
    fn from(e: runner::SuiteError) -> Self {
        match e {
            runner::SuiteError::Memory(_) | runner::SuiteError::Record { .. } => Failure::Refused(e.to_string()),
            e => Failure::Value(e.to_string()),
        }
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Value(m) => PyValueError::new_err(m),
            Failure::Refused(m) => RefusedError::new_err(m),
        }
    }
}

/// Runs `f` without the GIL (a Python solver takes it back for its steps, from whichever thread
/// the stepper runs it on) and with panics caught: none crosses into Python.
pub(crate) fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Failure> + Send) -> PyResult<T> {
    let caught = py.detach(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    match caught {
        Ok(r) => r.map_err(PyErr::from),
        Err(p) => Err(PyRuntimeError::new_err(format!(
            "internal error (a panic, caught at the Python boundary): {}",
            harness::stepper::panic_message(p.as_ref())
        ))),
    }
}

/// Every registered solver (with those registered from Python) and case, as JSON: what
/// `signorini list` prints.
#[pyfunction]
fn catalogue(py: Python<'_>) -> PyResult<String> {
    let py_solvers = pysolver::registered(py);
    guarded(py, move || {
        let reg = pysolver::registry(py_solvers);
        let solvers: Vec<_> = reg
            .solvers
            .iter()
            .map(|e| {
                let model = match e.model {
                    api::AnsweredModel::RigidCoulomb => serde_json::json!({"kind": "rigid_coulomb"}),
                    api::AnsweredModel::Regularised { residual_columns } => {
                        serde_json::json!({"kind": "regularised", "residual_columns": residual_columns})
                    }
                    api::AnsweredModel::Relaxed { residual_columns } => {
                        serde_json::json!({"kind": "relaxed", "residual_columns": residual_columns})
                    }
                    api::AnsweredModel::Pyramid { facets, residual_columns } => {
                        serde_json::json!({"kind": "pyramid", "facets": facets, "residual_columns": residual_columns})
                    }
                    api::AnsweredModel::ConeProgram { residual_columns } => {
                        serde_json::json!({"kind": "cone_program", "residual_columns": residual_columns})
                    }
                };
                serde_json::json!({
                    "name": e.name, "summary": e.summary, "paper": e.paper,
                    "capabilities": e.capabilities, "budget": e.budget, "tolerance": e.tolerance,
                    "model": model, "defaults": (e.defaults)().0,
                })
            })
            .collect();
        let cases: Vec<_> = reg
            .cases
            .iter()
            .map(|c| {
                let variants: Vec<_> = c
                    .variants()
                    .iter()
                    .map(|v| serde_json::json!({"label": v.label(c.name()), "set": v.set, "why": v.why}))
                    .collect();
                serde_json::json!({
                    "name": c.name(), "summary": c.summary(), "defaults": c.defaults().0, "variants": variants,
                    "parameters": params::case_parameters(c.as_ref()),
                })
            })
            .collect();
        Ok(serde_json::json!({"solvers": solvers, "cases": cases}).to_string())
    })
}

/// The pairs of a selection, as `signorini run` prepares them: `suite` is a suite file or
/// "default", narrowed by `cases` and `solvers`, with `KEY=VALUE` overrides in `set`.
fn prepare_pairs(
    reg: &harness::Registry,
    sel: &signorini::selection::Selection<'_>,
    opts: &RunOptions,
) -> Result<Vec<runner::PreparedPair>, Failure> {
    let selected = signorini::selection::select(reg, sel)?;
    let resolved = selected.resolve(reg)?;
    let memory = harness::resources::default_limit();
    Ok(runner::prepare_run(resolved, memory, opts, records::input::text_limit() as f64)?)
}

/// Runs a selection, as `signorini run` does ([`prepare_pairs`]). The records are written into
/// `out` when given (refusing to replace records of other parameters unless `overwrite`), with
/// their trajectory sidecars as `--trajectory` says (`off`, `auto`, `stride N`), and returned as
/// `(path or None, record JSON)` pairs.
#[pyfunction]
#[pyo3(signature = (suite, cases, solvers, set, out=None, overwrite=false, max_pairs=10_000, trajectory="auto"))]
#[allow(clippy::too_many_arguments)]
fn run_selection(
    py: Python<'_>,
    suite: String,
    cases: Vec<String>,
    solvers: Vec<String>,
    set: Vec<String>,
    out: Option<PathBuf>,
    overwrite: bool,
    max_pairs: usize,
    trajectory: &str,
) -> PyResult<Vec<(Option<String>, String)>> {
    let trajectory = TrajectoryOption::parse(trajectory).map_err(PyValueError::new_err)?;
    let py_solvers = pysolver::registered(py);
    guarded(py, move || {
        let reg = pysolver::registry(py_solvers);
        let sel =
            signorini::selection::Selection { suite: &suite, cases: &cases, solvers: &solvers, set: &set, max_pairs };
        // a record not written keeps no sidecar: nothing records the motion then
        let trajectory = if out.is_some() { trajectory } else { TrajectoryOption::Off };
        let opts = RunOptions { trajectory, ..RunOptions::default() };
        let pairs = prepare_pairs(&reg, &sel, &opts)?;
        let json = |r: &records::RunRecord| serde_json::to_string(r).map_err(|e| Failure::Value(e.to_string()));
        match out {
            None => {
                // one pair asked for by name: a skip is a refusal, as `runner::run_one` says
                if let [p] = pairs.as_slice() {
                    if let Some(why) = &p.skip {
                        return Err(Failure::Refused(format!(
                            "{} / {} would be skipped: {why}",
                            p.spec.label, p.spec.solver
                        )));
                    }
                }
                let provenance =
                    records::Provenance { backend: opts.backend_label(), ..records::Provenance::collect() };
                pairs
                    .iter()
                    .map(|p| Ok((None, json(&runner::run_pair(p, opts.clone(), &provenance, &NoProgress))?)))
                    .collect()
            }
            Some(out) => {
                if !overwrite {
                    if let Some(why) = runner::overwrite_refusal(&pairs, &out) {
                        return Err(Failure::Refused(why));
                    }
                }
                records::input::check_writable_dir(&out).map_err(|e| e.to_string())?;
                records::input::remove_stale_tmp(&out);
                let results = runner::run_suite_resuming(&pairs, &out, opts, &NoProgress, runner::Resume::Off);
                results
                    .iter()
                    .map(|r| {
                        let path =
                            r.path.as_ref().map_err(|e| Failure::Value(format!("could not write run record: {e}")))?;
                        Ok((Some(path.display().to_string()), json(&r.record)?))
                    })
                    .collect()
            }
        }
    })
}

/// The problem of step `step` (0-based) of one (case, solver) pair, reached by running the pair
/// (the solver's state carried over as in a run), with the solver's answer to it
/// (`fclib::reach_step`, what `signorini fclib export` exports): `(problem dict, grader)`.
#[pyfunction]
fn step_problem<'py>(
    py: Python<'py>,
    case: String,
    solver: String,
    step: usize,
    set: Vec<String>,
) -> PyResult<(Bound<'py, pyo3::types::PyDict>, problem::Grader)> {
    let py_solvers = pysolver::registered(py);
    let (stepper, sol) = guarded(py, move || {
        let reg = pysolver::registry(py_solvers);
        let (cases, solvers) = ([case], [solver]);
        let sel = signorini::selection::Selection {
            suite: "default",
            cases: &cases,
            solvers: &solvers,
            set: &set,
            max_pairs: 1,
        };
        let opts = RunOptions::default();
        let pair = prepare_pairs(&reg, &sel, &opts)?.remove(0);
        if let Some(why) = &pair.skip {
            return Err(Failure::Refused(format!(
                "{} / {} would be skipped: {why}",
                pair.spec.label, pair.spec.solver
            )));
        }
        let mut s = (pair.solver)(&opts.solver_context());
        let (stepper, sol) = ::fclib::reach_step(&pair.scenario, s.as_mut(), step).map_err(|e| e.to_string())?;
        Ok((Box::new(stepper), sol))
    })?;
    problem::step_problem(py, stepper, &sol)
}

/// The records of a run directory (as `signorini report` reads them), `(path, JSON)` each.
#[pyfunction]
fn load(py: Python<'_>, dir: PathBuf) -> PyResult<Vec<(String, String)>> {
    guarded(py, move || {
        let files = reports::read_run_dir_files(&dir).map_err(|e| Failure::Value(e.to_string()))?;
        files
            .iter()
            .map(|(p, r)| Ok((p.display().to_string(), serde_json::to_string(r).map_err(|e| e.to_string())?)))
            .collect()
    })
}

/// Writes the report of a run directory (`signorini report DIR --out OUT`) and returns the path
/// of its `index.html`.
#[pyfunction]
#[pyo3(signature = (dir, out=None, gates=None, baseline=None))]
fn report(
    py: Python<'_>,
    dir: PathBuf,
    out: Option<PathBuf>,
    gates: Option<PathBuf>,
    baseline: Option<String>,
) -> PyResult<String> {
    let py_solvers = pysolver::registered(py);
    guarded(py, move || {
        let reg = pysolver::registry(py_solvers);
        let out_dir = out.unwrap_or_else(|| dir.join("report"));
        let gates = gates.map(|g| signorini::load_gates(&g, &reg)).transpose().map_err(|e| e.to_string())?;
        let opts = reports::report::Options {
            run_dir: dir,
            out_dir,
            criterion: Some(Path::new("target/criterion").to_path_buf()),
            gates,
            defaults: signorini::defaults(&reg),
            baseline,
        };
        reports::write(&opts).map_err(|e| e.to_string())?;
        Ok(opts.out_dir.join("index.html").display().to_string())
    })
}

/// Differences between the records of two run directories (`signorini diff-records A B
/// --ignore ...`): `(only in a, only in b, [(record, differing paths)], compared)`.
#[pyfunction]
#[pyo3(signature = (a, b, ignore=Vec::new()))]
#[allow(clippy::type_complexity)]
fn diff_records(
    py: Python<'_>,
    a: PathBuf,
    b: PathBuf,
    ignore: Vec<String>,
) -> PyResult<(Vec<String>, Vec<String>, Vec<(String, Vec<String>)>, usize)> {
    guarded(py, move || {
        let d = reports::diff::diff_dirs(&a, &b, &ignore).map_err(|e| e.to_string())?;
        Ok((d.only_in_a, d.only_in_b, d.differing, d.compared))
    })
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RefusedError", m.py().get_type::<RefusedError>())?;
    m.add_function(wrap_pyfunction!(catalogue, m)?)?;
    m.add_function(wrap_pyfunction!(run_selection, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(diff_records, m)?)?;
    m.add_function(wrap_pyfunction!(pysolver::register, m)?)?;
    m.add_function(wrap_pyfunction!(pysolver::set_rust_example, m)?)?;
    m.add_function(wrap_pyfunction!(step_problem, m)?)?;
    m.add_function(wrap_pyfunction!(fclib_file::fclib_read, m)?)?;
    m.add_class::<pysolver::Log>()?;
    m.add_class::<problem::Grader>()?;
    m.add_class::<fclib_file::FclibFile>()?;
    Ok(())
}
