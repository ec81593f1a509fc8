//! A step's problem from Python, and the harness's own yardsticks on it.
//!
//! [`Grader`] grades an iterate `(v, impulses)` of a step's problem with the functions the harness
//! itself calls (no reimplementation): the per-iterate yardstick columns of the records'
//! iteration logs (`harness::metrics::yardstick::evaluate`), the step metrics' natural map
//! (`natural_map_norms`) and momentum error (`momentum_rel`), and the equal-accuracy mode's
//! stopping measure (`stop_yardstick`). It reads the problem either from a [`Stepper`] it owns
//! (`signorini.step_problem`) or from the step a Python solver is answering (valid during that
//! step only, like its `Log`).

use crate::pysolver::problem_dict;
use api::log::Iterate;
use api::{AnsweredModel, StepProblem, StepSolution};
use harness::metrics::yardstick::{self, StopMeasure};
use harness::stepper::Stepper;
use numpy::{PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Where a [`Grader`] reads its problem.
enum Source {
    /// The stepper at the start of the step (`signorini.step_problem`).
    Owned(Box<Stepper>),
    /// The problem of the step a Python solver is answering; null once the step returned.
    Live(*const StepProblem<'static>),
}

/// The harness's yardsticks on one step's problem (`Problem._grader` in Python).
#[pyclass(unsendable)]
pub(crate) struct Grader {
    source: Source,
}

impl Grader {
    /// A grader of the step a Python solver answers now; [`Grader::expire`] it before the step
    /// returns.
    pub(crate) fn live(p: &StepProblem<'_>) -> Self {
        Grader { source: Source::Live(p as *const StepProblem<'_> as *const StepProblem<'static>) }
    }

    /// Makes a live grader inert (its step returned).
    pub(crate) fn expire(&mut self) {
        self.source = Source::Live(std::ptr::null());
    }

    fn with<T>(&self, f: impl FnOnce(&StepProblem<'_>) -> PyResult<T>) -> PyResult<T> {
        match &self.source {
            Source::Owned(s) => f(&s.problem().map_err(|e| PyValueError::new_err(e.to_string()))?),
            // SAFETY: a live pointer is the `&StepProblem` of the `Solver::step` call running the
            // Python code now (it outlives that call); it is nulled (`expire`) before the call
            // returns, so a reference the solver kept is inert.
            Source::Live(p) => match unsafe { p.as_ref() } {
                Some(p) => f(p),
                None => Err(PyRuntimeError::new_err("the problem of a finished step")),
            },
        }
    }
}

/// `(v, impulses)` from NumPy, checked against the problem's sizes.
fn iterate(p: &StepProblem<'_>, v: PyReadonlyArray1<f64>, impulses: PyReadonlyArray2<f64>) -> PyResult<Iterate> {
    let lam = impulses.as_array();
    if lam.ncols() != 3 || lam.nrows() != p.nc() {
        return Err(PyValueError::new_err(format!("impulses: shape {:?}, expected ({}, 3)", lam.shape(), p.nc())));
    }
    if v.len()? != p.nv() {
        return Err(PyValueError::new_err(format!("v: length {}, expected {}", v.len()?, p.nv())));
    }
    Ok(Iterate {
        v: v.as_array().to_vec(),
        impulses: lam.rows().into_iter().map(|r| [r[0], r[1], r[2]]).collect(),
        bilateral: vec![],
    })
}

#[pymethods]
impl Grader {
    /// The iteration logs' yardstick columns of one iterate: `{yardstick_natmap_rel,
    /// yardstick_model_natmap_rel, yardstick_momentum_rel}`.
    fn yardsticks<'py>(
        &self,
        py: Python<'py>,
        v: PyReadonlyArray1<f64>,
        impulses: PyReadonlyArray2<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.with(|p| {
            let it = iterate(p, v, impulses)?;
            let d = PyDict::new(py);
            for (name, values) in yardstick::evaluate(p, std::slice::from_ref(&it)) {
                d.set_item(name, values[0])?;
            }
            Ok(d)
        })
    }

    /// The step metrics' natural map of `(v, impulses)`: `{natmap_abs_l2, natmap_rel_l2,
    /// natmap_rel1_l2}`.
    fn natural_map<'py>(
        &self,
        py: Python<'py>,
        v: PyReadonlyArray1<f64>,
        impulses: PyReadonlyArray2<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.with(|p| {
            let it = iterate(p, v, impulses)?;
            let sol = StepSolution {
                v: it.v,
                q: None,
                impulses: it.impulses,
                bilateral: vec![],
                iterations: 0,
                status: api::SolveStatus::Solved,
            };
            let n = harness::metrics::natural_map_norms(p, &sol);
            let d = PyDict::new(py);
            d.set_item("natmap_abs_l2", n.abs_l2)?;
            d.set_item("natmap_rel_l2", n.rel_l2)?;
            d.set_item("natmap_rel1_l2", n.rel1_l2)?;
            Ok(d)
        })
    }

    /// The step metric `momentum_rel` (Castro et al.'s Eq. 32) of `(v, impulses)`.
    fn momentum(&self, v: PyReadonlyArray1<f64>, impulses: PyReadonlyArray2<f64>) -> PyResult<f64> {
        self.with(|p| {
            let it = iterate(p, v, impulses)?;
            Ok(harness::metrics::momentum_rel(p, &it.v, &it.impulses))
        })
    }

    /// The equal-accuracy mode's stopping measure of `(v, impulses)` for a solver answering
    /// `model` (`rigid_coulomb`, `regularised` or `relaxed`): what stops it at `--accuracy EPS`.
    fn stop_measure(&self, v: PyReadonlyArray1<f64>, impulses: PyReadonlyArray2<f64>, model: &str) -> PyResult<f64> {
        let model = match model {
            "rigid_coulomb" => AnsweredModel::RigidCoulomb,
            "regularised" => AnsweredModel::Regularised { residual_columns: &[] },
            "relaxed" => AnsweredModel::Relaxed { residual_columns: &[] },
            _ => {
                return Err(PyValueError::new_err(format!(
                    "model '{model}': expected rigid_coulomb, regularised or relaxed"
                )))
            }
        };
        self.with(|p| {
            let it = iterate(p, v, impulses)?;
            Ok(yardstick::stop_yardstick(p, StopMeasure::of(model))(&it.v, &it.impulses, &[]))
        })
    }
}

/// The problem of step `step` (0-based) of one (case, solver) pair, reached by running the pair
/// for `step` steps, with the solver's answer to it: `(problem dict, grader, v, impulses)`.
pub(crate) fn step_problem<'py>(
    py: Python<'py>,
    stepper: Box<Stepper>,
    sol: &StepSolution,
) -> PyResult<(Bound<'py, PyDict>, Grader)> {
    let d = {
        let p = stepper.problem().map_err(|e| PyValueError::new_err(e.to_string()))?;
        let d = problem_dict(py, &p)?;
        d.set_item("solution_v", numpy::PyArray1::from_slice(py, &sol.v))?;
        let lam: Vec<f64> = sol.impulses.iter().flatten().copied().collect();
        d.set_item("solution_impulses", numpy::PyArray1::from_vec(py, lam).reshape([sol.impulses.len(), 3])?)?;
        d.set_item("solution_iterations", sol.iterations)?;
        d.set_item(
            "solution_status",
            serde_json::to_value(sol.status).ok().and_then(|v| v.as_str().map(String::from)),
        )?;
        d
    };
    Ok((d, Grader { source: Source::Owned(stepper) }))
}
