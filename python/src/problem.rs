//! A step's problem for Python: its arrays ([`problem_dict`]) and the harness's own yardsticks on
//! it ([`Grader`]).
//!
//! [`Grader`] grades an iterate `(v, impulses)` of a step's problem with the functions the harness
//! itself calls (no reimplementation): the per-iterate yardstick columns of the records'
//! iteration logs (`harness::metrics::yardstick::evaluate`), the step metrics' natural map
//! (`natural_map_norms`) and momentum error (`momentum_rel`), and the equal-accuracy mode's
//! stopping measure (`stop_yardstick`). It reads the problem either from a [`Stepper`] it owns
//! (`signorini.step_problem`) or from the step a Python solver is answering (valid during that
//! step only, like its `Log`).

use api::log::Iterate;
use api::{StepProblem, StepSolution};
use harness::metrics::yardstick::{self, StopMeasure};
use harness::stepper::Stepper;
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

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
        Grader { source: Source::Live((p as *const StepProblem<'_>).cast::<StepProblem<'static>>()) }
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
    /// `model` (`rigid_coulomb`, `regularised`, `relaxed`, `cone_program`, or `pyramid` with its
    /// `facets`): what stops it at `--accuracy EPS` (harness `StopMeasure`).
    #[pyo3(signature = (v, impulses, model, facets=None))]
    fn stop_measure(
        &self,
        v: PyReadonlyArray1<f64>,
        impulses: PyReadonlyArray2<f64>,
        model: &str,
        facets: Option<usize>,
    ) -> PyResult<f64> {
        let measure = match (model, facets) {
            ("rigid_coulomb", None) => StopMeasure::ContactModel,
            ("regularised", None) => StopMeasure::Momentum,
            ("relaxed", None) => StopMeasure::Ccp,
            ("cone_program", None) => StopMeasure::ConeProgram,
            ("pyramid", Some(d)) if d >= 3 => StopMeasure::Pyramid { facets: d },
            ("pyramid", _) => return Err(PyValueError::new_err("model 'pyramid': expected facets >= 3")),
            (_, Some(_)) => return Err(PyValueError::new_err(format!("model '{model}': takes no facets"))),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "model '{model}': expected rigid_coulomb, regularised, relaxed, cone_program or pyramid"
                )))
            }
        };
        self.with(|p| {
            let it = iterate(p, v, impulses)?;
            Ok(yardstick::stop_yardstick(p, measure)(&it.v, &it.impulses, &[]))
        })
    }
}

/// The problem at `stepper` (a pair run to the start of a step) as [`problem_dict`] with the
/// solver's answer `sol` to it (`solution_v`, `solution_impulses`, `solution_iterations`,
/// `solution_status`), and its grader, which keeps the stepper.
pub(crate) fn step_problem<'py>(
    py: Python<'py>,
    stepper: Box<Stepper>,
    sol: &StepSolution,
) -> PyResult<(Bound<'py, PyDict>, Grader)> {
    let d = {
        let p = stepper.problem().map_err(|e| PyValueError::new_err(e.to_string()))?;
        let d = problem_dict(py, &p)?;
        d.set_item("solution_v", PyArray1::from_slice(py, &sol.v))?;
        let lam: Vec<f64> = sol.impulses.iter().flatten().copied().collect();
        d.set_item("solution_impulses", PyArray1::from_vec(py, lam).reshape([sol.impulses.len(), 3])?)?;
        d.set_item("solution_iterations", sol.iterations)?;
        d.set_item(
            "solution_status",
            serde_json::to_value(sol.status).ok().and_then(|v| v.as_str().map(String::from)),
        )?;
        d
    };
    Ok((d, Grader { source: Source::Owned(stepper) }))
}

/// The step's problem for Python: arrays named as `signorini.Problem` documents them (indices
/// as int64, NumPy's index type: uint64 plus int64 would give floats).
pub(crate) fn problem_dict<'py>(py: Python<'py>, p: &StepProblem<'_>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let nc = p.nc();
    d.set_item("dt", p.dt)?;
    d.set_item("nv", p.nv())?;
    d.set_item("nc", nc)?;
    d.set_item("v0", PyArray1::from_slice(py, &p.v0))?;
    d.set_item("v_free", PyArray1::from_vec(py, p.free_velocity()))?;
    let square = |m: &nalgebra::DMatrix<f64>| {
        let rows: Vec<f64> = (0..m.nrows()).flat_map(|r| (0..m.ncols()).map(move |c| m[(r, c)])).collect();
        PyArray1::from_vec(py, rows).reshape([m.nrows(), m.ncols()])
    };
    let nb = p.mass.blocks().len();
    let blocks = PyList::empty(py);
    let inverses = PyList::empty(py);
    for b in 0..nb {
        blocks.append(square(&p.mass.blocks()[b])?)?;
        inverses.append(square(&p.mass.block_inverse(b))?)?;
    }
    d.set_item("M_blocks", blocks)?;
    d.set_item("M_inv_blocks", inverses)?;
    d.set_item("M_offsets", PyArray1::from_vec(py, (0..nb).map(|b| p.mass.offset(b) as i64).collect::<Vec<_>>()))?;
    let t = p.contacts.jacobian_triplets();
    d.set_item("J_rows", PyArray1::from_vec(py, t.iter().map(|x| x.0 as i64).collect::<Vec<_>>()))?;
    d.set_item("J_cols", PyArray1::from_vec(py, t.iter().map(|x| x.1 as i64).collect::<Vec<_>>()))?;
    d.set_item("J_vals", PyArray1::from_vec(py, t.iter().map(|x| x.2).collect::<Vec<_>>()))?;
    // the Jacobian as the solver API holds it: per contact, one 3 x ncols block per body side
    let sides: Vec<(usize, &api::contact::JBlock)> =
        p.contacts.contacts.iter().enumerate().flat_map(|(i, c)| c.jacobian.iter().map(move |jb| (i, jb))).collect();
    let block_of = |off: usize| p.layout.blocks.binary_search_by_key(&off, |b| b.v_offset).map_or(-1, |b| b as i64);
    d.set_item("side_contact", PyArray1::from_vec(py, sides.iter().map(|s| s.0 as i64).collect::<Vec<_>>()))?;
    d.set_item("side_offset", PyArray1::from_vec(py, sides.iter().map(|s| s.1.v_offset as i64).collect::<Vec<_>>()))?;
    d.set_item("side_ncols", PyArray1::from_vec(py, sides.iter().map(|s| s.1.ncols as i64).collect::<Vec<_>>()))?;
    d.set_item("side_block", PyArray1::from_vec(py, sides.iter().map(|s| block_of(s.1.v_offset)).collect::<Vec<_>>()))?;
    let rows: Vec<f64> = sides.iter().flat_map(|s| s.1.rows.iter().flatten().copied()).collect();
    d.set_item("side_rows", PyArray1::from_vec(py, rows).reshape([sides.len(), 3, 6])?)?;
    d.set_item("block_sizes", PyArray1::from_vec(py, p.layout.blocks.iter().map(|b| b.nv as i64).collect::<Vec<_>>()))?;
    let per_contact = |f: &dyn Fn(usize) -> f64| PyArray1::from_vec(py, (0..nc).map(f).collect::<Vec<_>>());
    d.set_item("mu", per_contact(&|i| p.contacts.contacts[i].mu))?;
    d.set_item("gap", per_contact(&|i| p.contacts.contacts[i].gap))?;
    d.set_item("bias_n", per_contact(&|i| p.bias(i)[0]))?;
    d.set_item("v_hat", per_contact(&|i| p.normal_law(i).0))?;
    d.set_item("r_n", per_contact(&|i| p.normal_law(i).1))?;
    // contact frames, world frame: frames[i][:, 0] is the normal n, [:, 1] t1, [:, 2] t2; the points
    let frames: Vec<f64> = p
        .contacts
        .contacts
        .iter()
        .flat_map(|c| (0..3).flat_map(move |r| (0..3).map(move |k| c.frame[(r, k)])))
        .collect();
    d.set_item("frames", PyArray1::from_vec(py, frames).reshape([nc, 3, 3])?)?;
    let points: Vec<f64> = p.contacts.contacts.iter().flat_map(|c| c.point.iter().copied()).collect();
    d.set_item("points", PyArray1::from_vec(py, points).reshape([nc, 3])?)?;
    Ok(d)
}
