//! `signorini.fclib.read`: an FCLIB file's problem as NumPy arrays, graded by the harness's own
//! FCLIB grader (`fclib::Grader`, what `signorini fclib bench` and `fclib solve` report).

use crate::{guarded, Failure};
use fclib::{CscOps, FclibProblem, Form};
use numpy::{PyArray1, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// A read FCLIB problem with its grader (`fclib.Problem._file` in Python).
#[pyclass]
pub(crate) struct FclibFile {
    prob: FclibProblem,
    grader: fclib::Grader,
}

/// A sparse matrix as `(rows, cols, values)` arrays under `name_rows`, ... in `d`.
fn put_triplets(d: &Bound<'_, PyDict>, name: &str, m: &fclib::Csc) -> PyResult<()> {
    let py = d.py();
    let t = m.triplets();
    d.set_item(format!("{name}_shape"), (m.rows(), m.cols()))?;
    d.set_item(format!("{name}_rows"), PyArray1::from_vec(py, t.iter().map(|x| x.0 as i64).collect::<Vec<_>>()))?;
    d.set_item(format!("{name}_cols"), PyArray1::from_vec(py, t.iter().map(|x| x.1 as i64).collect::<Vec<_>>()))?;
    d.set_item(format!("{name}_vals"), PyArray1::from_vec(py, t.iter().map(|x| x.2).collect::<Vec<_>>()))?;
    Ok(())
}

/// Reads an FCLIB file (`form`: `global`, `local`, or `None` for the file's own), as `signorini
/// fclib solve` reads it: `(arrays, file)`.
#[pyfunction]
#[pyo3(signature = (path, form=None))]
pub(crate) fn fclib_read<'py>(
    py: Python<'py>,
    path: PathBuf,
    form: Option<String>,
) -> PyResult<(Bound<'py, PyDict>, FclibFile)> {
    let form = match form.as_deref() {
        None => None,
        Some("global") => Some(Form::Global),
        Some("local") => Some(Form::Local),
        Some(f) => return Err(PyValueError::new_err(format!("form '{f}': expected global or local"))),
    };
    let (prob, grader) = guarded(py, move || {
        let prob = fclib::read_as(&path, form).map_err(|e| Failure::Value(format!("{}: {e}", path.display())))?;
        let grader = fclib::Grader::new(&prob).map_err(|e| Failure::Value(format!("{}: {e}", path.display())))?;
        Ok((prob, grader))
    })?;
    let d = PyDict::new(py);
    d.set_item("form", if prob.form == Form::Global { "global" } else { "local" })?;
    d.set_item("title", &prob.info.title)?;
    d.set_item("description", &prob.info.description)?;
    d.set_item("math_info", &prob.info.math_info)?;
    d.set_item("nc", prob.nc())?;
    d.set_item("mu", PyArray1::from_slice(py, prob.mu()))?;
    d.set_item("q", PyArray1::from_slice(py, grader.q()))?;
    if let Some(g) = &prob.global {
        d.set_item("nv", g.nv())?;
        put_triplets(&d, "M", &g.m)?;
        put_triplets(&d, "H", &g.h)?;
        d.set_item("block_sizes", PyArray1::from_vec(py, g.block_sizes.iter().map(|&b| b as i64).collect::<Vec<_>>()))?;
        d.set_item("f", PyArray1::from_slice(py, &g.f))?;
        d.set_item("w", PyArray1::from_slice(py, &g.w))?;
    }
    if let Some(l) = &prob.local {
        put_triplets(&d, "W", &l.w)?;
        d.set_item("q_file", PyArray1::from_slice(py, &l.q))?;
    }
    if let Some(s) = &prob.solution {
        d.set_item("solution_v", PyArray1::from_slice(py, &s.v))?;
        d.set_item("solution_u", PyArray1::from_slice(py, &s.u))?;
        d.set_item("solution_r", PyArray1::from_slice(py, &s.r))?;
    }
    Ok((d, FclibFile { prob, grader }))
}

#[pymethods]
impl FclibFile {
    /// The harness's grade of impulses `r` (`3 nc`, normal first): `{error, residual, error_1q,
    /// error_rel_q, u}` (`error` is Siconos's `||F|| / max(||q||, ||r||, ||u||)`, the verdict's
    /// measure).
    fn grade<'py>(&self, py: Python<'py>, r: PyReadonlyArray1<f64>) -> PyResult<Bound<'py, PyDict>> {
        let r = r.as_array().to_vec();
        if r.len() != 3 * self.prob.nc() {
            return Err(PyValueError::new_err(format!("r: length {}, expected {}", r.len(), 3 * self.prob.nc())));
        }
        let g = self.grader.grade(&r);
        let d = PyDict::new(py);
        d.set_item("error", g.error)?;
        d.set_item("residual", g.residual)?;
        d.set_item("error_1q", g.error_1q)?;
        d.set_item("error_rel_q", g.error_rel_q)?;
        d.set_item("u", PyArray1::from_vec(py, g.u))?;
        Ok(d)
    }

    /// `M^-1 x` with the file's `M` as the grader factors it (global form).
    fn solve_m<'py>(&self, py: Python<'py>, x: PyReadonlyArray1<f64>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let g = self.prob.global_form().map_err(|e| PyValueError::new_err(e.to_string()))?;
        if x.len() != g.nv() {
            return Err(PyValueError::new_err(format!("x: length {}, expected {}", x.len(), g.nv())));
        }
        Ok(PyArray1::from_vec(py, self.grader.solve_m(x.as_array().to_vec())))
    }

    /// How far `v` is from balancing `r`, `||M v - H r - f|| / max(||f||, ||H r||)` (global form).
    fn consistency(&self, v: PyReadonlyArray1<f64>, r: PyReadonlyArray1<f64>) -> PyResult<Option<f64>> {
        let (v, r) = (v.as_array().to_vec(), r.as_array().to_vec());
        if let Some(g) = &self.prob.global {
            if v.len() != g.nv() || r.len() != 3 * g.nc() {
                return Err(PyValueError::new_err(format!(
                    "v, r: lengths {}, {}, expected {}, {}",
                    v.len(),
                    r.len(),
                    g.nv(),
                    3 * g.nc()
                )));
            }
        }
        Ok(self.grader.consistency(&v, &r))
    }

    /// The local form: the file's `W` when it has one, else `W = H^T M^-1 H` condensed with `M`
    /// as written (`fclib::GlobalProblem::condense`), as `(shape, rows, cols, values)`.
    #[allow(clippy::type_complexity)]
    fn delassus<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<((usize, usize), Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>)>
    {
        let condensed;
        let w = match &self.prob.local {
            Some(l) => &l.w,
            None => {
                let g = self.prob.global_form().map_err(|e| PyValueError::new_err(e.to_string()))?;
                condensed = g.condense().map_err(|e| PyValueError::new_err(e.to_string()))?;
                &condensed.w
            }
        };
        let t = w.triplets();
        Ok((
            (w.rows(), w.cols()),
            PyArray1::from_vec(py, t.iter().map(|x| x.0 as i64).collect()),
            PyArray1::from_vec(py, t.iter().map(|x| x.1 as i64).collect()),
            PyArray1::from_vec(py, t.iter().map(|x| x.2).collect()),
        ))
    }
}
