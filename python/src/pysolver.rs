//! Solvers written in Python, run by the harness like the compiled ones: `register` keeps the
//! class with its name, capabilities and settings; [`registry`] adds one [`SolverEntry`] per
//! registered class to the root crate's registry, so the same suite resolution, stepper, metrics,
//! records and report apply. [`PySolver`] is the adapter: each step takes the GIL (Python solvers
//! therefore run one at a time), hands the step's problem over as NumPy arrays, and reads the
//! returned `StepSolution` back. An exception in the Python solver fails its step (and so its
//! pair) with the exception's message; the suite goes on.

use crate::problem::{problem_dict, Grader};
use api::def::{SolverEntry, SolverFactory};
use api::{
    AnsweredModel, Capabilities, IterationLog, Params, SolveError, SolveStatus, Solver, SolverContext, StepProblem,
    StepSolution,
};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A solver class registered from Python.
pub(crate) struct PyEntry {
    name: &'static str,
    summary: &'static str,
    paper: &'static str,
    capabilities: Capabilities,
    budget: &'static str,
    tolerance: &'static str,
    defaults: Params,
    cls: Arc<Py<PyAny>>,
}

/// The classes registered so far (a later registration under a name replaces the earlier one).
static REGISTERED: Mutex<Vec<Arc<PyEntry>>> = Mutex::new(Vec::new());

/// The registered Python solvers (taken under the GIL, used without it).
pub(crate) fn registered(_py: Python<'_>) -> Vec<Arc<PyEntry>> {
    REGISTERED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether the registry holds the Rust example solver `jacobi` ([`set_rust_example`]).
static RUST_EXAMPLE: AtomicBool = AtomicBool::new(false);

/// The root crate's registry, with the Rust example solver when asked for, and `py_solvers`
/// after the compiled solvers.
pub(crate) fn registry(py_solvers: Vec<Arc<PyEntry>>) -> harness::Registry {
    let mut reg = signorini::registry();
    if RUST_EXAMPLE.load(Ordering::Relaxed) {
        reg = reg.register::<crate::jacobi::ProjectedJacobi>();
    }
    py_solvers.into_iter().fold(reg, |reg, e| reg.solver(entry(e)))
}

/// Adds (or removes) the Rust example solver of `tests/example_solver/jacobi.rs` (name `jacobi`)
/// to the registry: the reference of the NumPy port's parity test (python/tests/test_parity.py).
#[pyfunction]
pub(crate) fn set_rust_example(on: bool) {
    RUST_EXAMPLE.store(on, Ordering::Relaxed);
}

/// The harness's entry of a Python solver: its settings are its `settings` dict, overridden by
/// `--set solver.KEY=VALUE` through the same `Params` as a compiled solver's.
fn entry(e: Arc<PyEntry>) -> SolverEntry {
    let defaults = e.defaults.clone();
    let cls = e.cls.clone();
    SolverEntry {
        name: e.name,
        summary: e.summary,
        paper: e.paper,
        capabilities: e.capabilities,
        budget: e.budget,
        tolerance: e.tolerance,
        model: AnsweredModel::RigidCoulomb,
        // it polls `log.should_stop()` (the Python `Log`), so the harness's rule can stop it
        harness_stops: true,
        defaults: Box::new(move || defaults.clone()),
        prepare: Box::new(move |p: &Params| {
            let (cls, settings) = (cls.clone(), p.0.clone());
            Ok(Box::new(move |_: &SolverContext| {
                Box::new(PySolver { cls: cls.clone(), settings: settings.clone(), instance: None }) as Box<dyn Solver>
            }) as SolverFactory)
        }),
        working_memory: |_, size| api::def::sparse_working_memory(size),
    }
}

/// Registers a Python solver class (`signorini.register` checks the class and computes `paper`,
/// which names its source file and the file's SHA-256).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn register(
    cls: Py<PyAny>,
    name: String,
    summary: String,
    paper: String,
    capabilities: Vec<String>,
    settings_json: String,
    budget: String,
    tolerance: String,
) -> PyResult<()> {
    if let Some(why) = records::input::label_error(&name) {
        return Err(PyValueError::new_err(format!("solver name {name:?} {why}")));
    }
    if signorini::registry().solvers.iter().any(|s| s.name == name) {
        return Err(PyValueError::new_err(format!("solver name '{name}' is taken by a compiled solver")));
    }
    let mut caps = serde_json::to_value(Capabilities::default()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let known: Vec<String> = caps.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    for c in &capabilities {
        match caps.get_mut(c) {
            Some(v) => *v = serde_json::Value::Bool(true),
            None => {
                return Err(PyValueError::new_err(format!("unknown capability '{c}' (known: {})", known.join(", "))));
            }
        }
    }
    let capabilities: Capabilities = serde_json::from_value(caps).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let defaults = Params(serde_json::from_str(&settings_json).map_err(|e| PyValueError::new_err(e.to_string()))?);
    for (what, key) in [("budget", &budget), ("tolerance", &tolerance)] {
        if !defaults.contains(key) {
            return Err(PyValueError::new_err(format!(
                "settings have no '{key}' (the {what} setting); give it a default in settings"
            )));
        }
    }
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let e = PyEntry {
        name: leak(name),
        summary: leak(summary),
        paper: leak(paper),
        capabilities,
        budget: leak(budget),
        tolerance: leak(tolerance),
        defaults,
        cls: Arc::new(cls),
    };
    let mut reg = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|old| old.name != e.name);
    reg.push(Arc::new(e));
    Ok(())
}

/// The harness's side of a Python solver: the class, its settings, and the instance made from
/// them at the first step (`cls(**settings)`).
struct PySolver {
    cls: Arc<Py<PyAny>>,
    settings: serde_json::Map<String, serde_json::Value>,
    instance: Option<Py<PyAny>>,
}

impl Solver for PySolver {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        Python::attach(|py| {
            self.step_py(py, p, log)
                .map_err(|e| SolveError::Panic { what: format!("Python exception: {}", described(py, &e)) })
        })
    }
}

/// `Type: message (at file:line in function)`, the innermost frame of the traceback.
fn described(py: Python<'_>, e: &PyErr) -> String {
    let mut tb = e.traceback(py);
    let mut last = None;
    while let Some(t) = tb {
        last = Some(t.clone());
        tb = t.getattr("tb_next").ok().and_then(|n| n.cast_into::<pyo3::types::PyTraceback>().ok());
    }
    let at = last.and_then(|t| {
        let line: usize = t.getattr("tb_lineno").ok()?.extract().ok()?;
        let code = t.getattr("tb_frame").ok()?.getattr("f_code").ok()?;
        let file: String = code.getattr("co_filename").ok()?.extract().ok()?;
        let func: String = code.getattr("co_name").ok()?.extract().ok()?;
        Some(format!(" (at {file}:{line} in {func})"))
    });
    format!("{e}{}", at.unwrap_or_default())
}

impl PySolver {
    fn step_py(&mut self, py: Python<'_>, p: &StepProblem<'_>, log: &mut IterationLog) -> PyResult<StepSolution> {
        let instance = match &self.instance {
            Some(i) => i.bind(py).clone(),
            None => {
                let json = py.import("json")?;
                let kwargs =
                    json.call_method1("loads", (serde_json::Value::Object(self.settings.clone()).to_string(),))?;
                let i = self.cls.bind(py).call((), Some(kwargs.cast::<PyDict>()?))?;
                self.instance = Some(i.clone().unbind());
                i
            }
        };
        let problem = problem_dict(py, p)?;
        let grader = Bound::new(py, Grader::live(p))?;
        problem.set_item("_grader", grader.clone())?;
        let handle = Bound::new(py, Log { ptr: log as *mut IterationLog })?;
        let answer = instance.call_method1("step", (problem, handle.clone()));
        // the log and the grader live only for this step: a reference the solver kept is now inert
        handle.borrow_mut().ptr = std::ptr::null_mut();
        grader.borrow_mut().expire();
        solution(&answer?)
    }
}

/// The `StepSolution` a Python solver returned (`v`, `impulses` as an `(nc, 3)` array,
/// `iterations`, `status` by name).
fn solution(s: &Bound<'_, PyAny>) -> PyResult<StepSolution> {
    let v: PyReadonlyArray1<f64> = s.getattr("v")?.extract()?;
    let lam: PyReadonlyArray2<f64> = s.getattr("impulses")?.extract()?;
    let lam = lam.as_array();
    if lam.ncols() != 3 {
        return Err(PyValueError::new_err(format!("impulses: shape {:?}, expected (nc, 3)", lam.shape())));
    }
    let status: String = s.getattr("status")?.extract()?;
    Ok(StepSolution {
        v: v.as_array().to_vec(),
        q: None,
        impulses: lam.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect(),
        bilateral: vec![],
        iterations: s.getattr("iterations")?.extract()?,
        status: status_named(&status)?,
    })
}

/// A [`SolveStatus`] by its record name (`solved`, `max_iterations`, ...).
fn status_named(name: &str) -> PyResult<SolveStatus> {
    serde_json::from_value(serde_json::Value::String(name.into())).map_err(|_| {
        PyValueError::new_err(format!(
            "status '{name}': expected solved, almost_solved, max_iterations, insufficient_progress, time_limit or \
             stopped"
        ))
    })
}

/// The step's iteration log, handed to a Python solver's `step` (valid during that call only).
#[pyclass(unsendable)]
pub(crate) struct Log {
    /// The stepper's log of the running step; null once the step returned.
    ptr: *mut IterationLog,
}

impl Log {
    fn log(&mut self) -> PyResult<&mut IterationLog> {
        // SAFETY: `ptr` is the `&mut IterationLog` of the `Solver::step` call that is running the
        // Python code now (nothing else touches that log meanwhile); it is nulled before the call
        // returns.
        unsafe { self.ptr.as_mut() }.ok_or_else(|| PyRuntimeError::new_err("the log of a finished step"))
    }
}

#[pymethods]
impl Log {
    /// Reports an iterate (`v`, `impulses` `(nc, 3)`) to the harness's yardstick, as a compiled
    /// solver's `log.iterate` does.
    fn iterate(&mut self, v: PyReadonlyArray1<f64>, impulses: PyReadonlyArray2<f64>) -> PyResult<()> {
        let lam = impulses.as_array();
        if lam.ncols() != 3 {
            return Err(PyValueError::new_err(format!("impulses: shape {:?}, expected (nc, 3)", lam.shape())));
        }
        let lam: Vec<[f64; 3]> = lam.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect();
        let v = v.as_array().to_vec();
        self.log()?.iterate(&v, &lam, &[]);
        Ok(())
    }

    /// Records one iteration's own numbers (`{"rel_change_linf": 1e-3, ...}`).
    fn record(&mut self, entries: &Bound<'_, PyDict>) -> PyResult<()> {
        let owned: Vec<(String, f64)> =
            entries.iter().map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<f64>()?))).collect::<PyResult<_>>()?;
        let borrowed: Vec<(&str, f64)> = owned.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        self.log()?.record(&borrowed);
        Ok(())
    }

    /// Whether the harness asks the solver to stop (accuracy reached or past the time limit).
    fn should_stop(&mut self) -> PyResult<bool> {
        Ok(self.log()?.should_stop())
    }

    /// The status to return when stopping on [`Log::should_stop`].
    fn stop_status(&mut self) -> PyResult<String> {
        let s = self.log()?.stop_status();
        Ok(serde_json::to_value(s).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default())
    }
}
