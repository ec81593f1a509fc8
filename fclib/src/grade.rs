//! The harness's grade of an answer to an FCLIB problem, computed from the impulses `r` alone:
//! what a solver returns besides `r` (its velocities, its status, its residual) is never used.
//!
//! - local form: `u = W r + q` with the file's `W` and `q`;
//! - global form: `v = M^-1 (H r + f)` with the file's `M` as given (an LU factor of each
//!   diagonal block), `u = H^T v + w`, `q = H^T M^-1 f + w` (the local problem Siconos condenses
//!   the global one to).
//!
//! The error is Siconos's (`fc3d_compute_error`): `||F(r, u)||_2 / max(||q||, ||r||, ||u||)`
//! (absolute when that scale is at most `f64::EPSILON`), `F_i = r_i - P_K(r_i - u_i - mu_i
//! ||u_T,i|| e_n)` the natural map of the rigid Coulomb NCP. Beside it: `||F|| / (1 + ||q||)` (the
//! bench's measure before) and `||F|| / ||q||` (what earlier tables quoted).

use crate::matrix::{Csc, CscOps};
use crate::problem::{natmap_residual, norm, FclibProblem, Form, ProblemError, Solution};
use api::FieldError;
use nalgebra::{DVector, LU};

/// How `u` is computed from `r`.
#[derive(Debug, Clone)]
enum Operator {
    /// `u = W r + q`.
    Local(Csc),
    /// `u = H^T M^-1 (H r + f) + w`.
    Global { blocks: Vec<LU<f64, nalgebra::Dyn, nalgebra::Dyn>>, m: Csc, h: Csc, f: Vec<f64>, w: Vec<f64> },
}

/// The grader of one problem (built once, used for every answer).
#[derive(Debug, Clone)]
pub struct Grader {
    op: Operator,
    q: Vec<f64>,
    mu: Vec<f64>,
}

/// The grade of one answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade {
    /// `u` of the answer (module doc).
    pub u: Vec<f64>,
    /// `||F(r, u)||_2`.
    pub residual: f64,
    /// Siconos's error, `||F|| / max(||q||, ||r||, ||u||)`: the verdict's measure.
    pub error: f64,
    /// `||F|| / (1 + ||q||)`.
    pub error_1q: f64,
    /// `||F|| / ||q||` (absolute when `||q|| <= f64::EPSILON`).
    pub error_rel_q: f64,
}

impl Grader {
    /// The grader of `prob` in its form [`FclibProblem::form`]. Fails when the form is missing or
    /// a diagonal block of `M` is singular.
    pub fn new(prob: &FclibProblem) -> Result<Grader, ProblemError> {
        match prob.form {
            Form::Local => {
                let l = prob.local_form()?;
                Ok(Grader { op: Operator::Local(l.w.clone()), q: l.q.clone(), mu: l.mu.clone() })
            }
            Form::Global => {
                let g = prob.global_form()?;
                let mut blocks = vec![];
                for (k, b) in g.blocks()?.into_iter().enumerate() {
                    let lu = b.lu();
                    if !lu.is_invertible() {
                        return Err(FieldError::new("M", format!("diagonal block {k} is singular")).into());
                    }
                    blocks.push(lu);
                }
                let op = Operator::Global { blocks, m: g.m.clone(), h: g.h.clone(), f: g.f.clone(), w: g.w.clone() };
                let mut grader = Grader { op, q: vec![], mu: g.mu.clone() };
                let zero = vec![0.0; 3 * g.nc()];
                grader.q = grader.velocities(&zero);
                Ok(grader)
            }
        }
    }

    /// `q`, the constant term of the (condensed) local problem.
    pub fn q(&self) -> &[f64] {
        &self.q
    }

    /// `M^-1 x` with the file's `M` (global form only).
    fn solve_m(&self, mut x: Vec<f64>) -> Vec<f64> {
        if let Operator::Global { blocks, .. } = &self.op {
            let mut off = 0;
            for lu in blocks {
                let n = lu.l().nrows();
                let mut b = DVector::from_column_slice(&x[off..off + n]);
                // invertible: checked in `new`
                lu.solve_mut(&mut b);
                x[off..off + n].copy_from_slice(b.as_slice());
                off += n;
            }
        }
        x
    }

    /// The velocity that balances impulses `r`, `v = M^-1 (H r + f)` (global form; `None` for
    /// the local form, which has no velocities).
    pub fn velocity_of(&self, r: &[f64]) -> Option<Vec<f64>> {
        match &self.op {
            Operator::Local(_) => None,
            Operator::Global { h, f, .. } => Some(self.solve_m(h.mul(r).iter().zip(f).map(|(a, b)| a + b).collect())),
        }
    }

    /// `u` of impulses `r` (module doc).
    pub fn velocities(&self, r: &[f64]) -> Vec<f64> {
        match &self.op {
            Operator::Local(w) => w.mul(r).iter().zip(&self.q).map(|(a, b)| a + b).collect(),
            Operator::Global { h, w, .. } => {
                let v = self.velocity_of(r).unwrap_or_default();
                h.tr_mul(&v).iter().zip(w).map(|(a, b)| a + b).collect()
            }
        }
    }

    /// The grade of impulses `r` (`3 nc`, normal first).
    pub fn grade(&self, r: &[f64]) -> Grade {
        let u = self.velocities(r);
        let residual = natmap_residual(&u, r, &self.mu);
        let q_norm = norm(&self.q);
        let scale = q_norm.max(norm(r)).max(norm(&u));
        let over = |s: f64| if s <= f64::EPSILON { residual } else { residual / s };
        Grade { error: over(scale), error_1q: residual / (1.0 + q_norm), error_rel_q: over(q_norm), residual, u }
    }

    /// How far a solver's own velocity `v` is from balancing its impulses: `||M v - H r - f|| /
    /// max(||f||, ||H r||)` (absolute when both are at most `f64::EPSILON`). Global form only.
    pub fn consistency(&self, v: &[f64], r: &[f64]) -> Option<f64> {
        let Operator::Global { m, h, f, .. } = &self.op else { return None };
        let hr = h.mul(r);
        let res: Vec<f64> = m.mul(v).iter().zip(&hr).zip(f).map(|((mv, hr), f)| mv - hr - f).collect();
        let scale = norm(f).max(norm(&hr));
        Some(if scale <= f64::EPSILON { norm(&res) } else { norm(&res) / scale })
    }

    /// The grade of a stored solution or guess: `None` when it holds no answer (no `r`, or every
    /// stored vector all zeros: a placeholder, not a solution).
    pub fn grade_stored(&self, s: &Solution) -> Option<Grade> {
        let zero = |x: &[f64]| x.iter().all(|x| *x == 0.0);
        if s.r.is_empty() || (zero(&s.r) && zero(&s.u) && zero(&s.v)) {
            return None;
        }
        Some(self.grade(&s.r))
    }
}
