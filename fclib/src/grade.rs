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

    /// `M^-1 x` with the file's `M` as written, an LU factor of each diagonal block (global form;
    /// `x` unchanged in the local form).
    pub fn solve_m(&self, mut x: Vec<f64>) -> Vec<f64> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{GlobalProblem, LocalProblem};
    use crate::CscOps;

    fn local(w: &[(usize, usize, f64)], q: Vec<f64>, mu: Vec<f64>) -> FclibProblem {
        let n = q.len();
        let l = LocalProblem { w: Csc::from_triplets(n, n, w), q, mu };
        FclibProblem::local_only(l)
    }

    /// One contact, `M` a non-symmetric 3x3 block (written as is), `H = I`: every quantity by hand.
    fn global() -> FclibProblem {
        let m = [(0, 0, 2.0), (1, 1, 4.0), (2, 2, 5.0), (0, 1, 1.0)];
        let h = [(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)];
        let g = GlobalProblem {
            m: Csc::from_triplets(3, 3, &m),
            block_sizes: vec![3],
            h: Csc::from_triplets(3, 3, &h),
            f: vec![4.0, 8.0, -10.0],
            w: vec![0.5, 0.0, 0.0],
            mu: vec![0.5],
        };
        FclibProblem::global_only(g)
    }

    #[test]
    fn local_velocities_are_w_r_plus_q_and_the_three_scalings_differ() {
        let p = local(&[(0, 0, 2.0), (1, 1, 3.0), (2, 2, 3.0), (0, 1, 0.5)], vec![-1.0, 0.2, 0.0], vec![0.4]);
        let g = Grader::new(&p).unwrap();
        assert_eq!(g.q(), &[-1.0, 0.2, 0.0]);
        assert_eq!(g.velocities(&[1.0, 2.0, 3.0]), vec![2.0 + 1.0 - 1.0, 6.0 + 0.2, 9.0]);
        assert_eq!(g.velocity_of(&[0.0; 3]), None, "no velocities in the local form");
        // r = 0: u = q, natural map F = -P_K(-(q + mu |q_T| e_n)) = P_K((1 - 0.08, -0.2, 0))
        let gr = g.grade(&[0.0; 3]);
        let x = [1.0 - 0.4 * 0.2, -0.2, 0.0];
        let f = kernels::cone::project(x, 0.4);
        let res = (f[0] * f[0] + f[1] * f[1]).sqrt();
        assert!((gr.residual - res).abs() < 1e-15, "{} vs {res}", gr.residual);
        let qn = (1.0f64 + 0.04).sqrt();
        assert!((gr.error - res / qn).abs() < 1e-15, "max(||q||, ||r||, ||u||) = ||q||");
        assert!((gr.error_1q - res / (1.0 + qn)).abs() < 1e-15);
        assert!((gr.error_rel_q - res / qn).abs() < 1e-15);
        assert_eq!(gr.u, vec![-1.0, 0.2, 0.0]);
    }

    #[test]
    fn a_zero_problem_grades_absolutely() {
        let p = local(&[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)], vec![0.0; 3], vec![0.5]);
        let g = Grader::new(&p).unwrap();
        let gr = g.grade(&[0.0; 3]);
        assert_eq!((gr.residual, gr.error, gr.error_rel_q, gr.error_1q), (0.0, 0.0, 0.0, 0.0));
        // a tiny wrong answer: every norm below machine epsilon, the error is ||F|| itself
        let gr = g.grade(&[1e-17, 0.0, 0.0]);
        assert!(gr.residual > 0.0 && gr.error == gr.residual && gr.error_rel_q == gr.residual, "{gr:?}");
    }

    #[test]
    fn global_velocities_use_m_as_written() {
        let p = global();
        let g = Grader::new(&p).unwrap();
        // M v = H r + f with the non-symmetric M: v2 = (f2 + r2) / 5, v1 = (f1 + r1) / 4, v0 = (f0 + r0 - v1) / 2
        let r = [1.0, 0.0, 0.0];
        let v = g.velocity_of(&r).unwrap();
        let (v1, v2) = (8.0 / 4.0, -10.0 / 5.0);
        let v0 = (4.0 + 1.0 - v1) / 2.0;
        for (a, b) in v.iter().zip([v0, v1, v2]) {
            assert!((a - b).abs() < 1e-15, "{v:?}");
        }
        // u = H^T v + w, q = u at r = 0
        let u = g.velocities(&r);
        assert!((u[0] - (v0 + 0.5)).abs() < 1e-15 && (u[1] - v1).abs() < 1e-15 && (u[2] - v2).abs() < 1e-15);
        let q0 = (4.0 - 2.0) / 2.0 + 0.5;
        assert!((g.q()[0] - q0).abs() < 1e-15, "{:?}", g.q());
        // two blocks: the second one's DOFs are solved with the second block
        let two = GlobalProblem {
            m: Csc::from_triplets(6, 6, &(0..6).map(|i| (i, i, 1.0 + i as f64)).collect::<Vec<_>>()),
            block_sizes: vec![3, 3],
            h: Csc::from_triplets(6, 3, &[(3, 0, 1.0), (4, 1, 1.0), (5, 2, 1.0)]),
            f: vec![1.0; 6],
            w: vec![0.0; 3],
            mu: vec![0.5],
        };
        let p2 = FclibProblem { global: Some(two), ..global() };
        let v = Grader::new(&p2).unwrap().velocity_of(&[1.0, 0.0, 0.0]).unwrap();
        let want = [1.0, 0.5, 1.0 / 3.0, 2.0 / 4.0, 1.0 / 5.0, 1.0 / 6.0];
        for (a, b) in v.iter().zip(want) {
            assert!((a - b).abs() < 1e-15, "{v:?}");
        }
        // a singular block is refused
        let mut s = global();
        s.global.as_mut().unwrap().m = Csc::from_triplets(3, 3, &[(0, 0, 1.0), (1, 1, 1.0)]);
        assert!(Grader::new(&s).unwrap_err().to_string().contains("singular"));
    }

    #[test]
    fn consistency_measures_m_v_minus_h_r_minus_f() {
        let g = Grader::new(&global()).unwrap();
        let r = [1.0, 2.0, 0.0];
        let v = g.velocity_of(&r).unwrap();
        assert!(g.consistency(&v, &r).unwrap() < 1e-15, "the balancing velocity");
        // v off by (1, 0, 0): M v - H r - f = M e_0 = (2, 0, 0); scale max(||f||, ||H r||) = ||f||
        let off: Vec<f64> = v.iter().enumerate().map(|(i, x)| if i == 0 { x + 1.0 } else { *x }).collect();
        let fnorm = (16.0f64 + 64.0 + 100.0).sqrt();
        assert!((g.consistency(&off, &r).unwrap() - 2.0 / fnorm).abs() < 1e-15);
        let l = local(&[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)], vec![0.0; 3], vec![0.5]);
        assert_eq!(Grader::new(&l).unwrap().consistency(&[0.0; 3], &[0.0; 3]), None);
    }

    #[test]
    fn stored_placeholders_are_no_answer() {
        let g = Grader::new(&global()).unwrap();
        let s = |v: Vec<f64>, u: Vec<f64>, r: Vec<f64>| crate::Solution { v, u, r };
        assert_eq!(g.grade_stored(&s(vec![1.0; 3], vec![1.0; 3], vec![])), None, "no r");
        assert_eq!(g.grade_stored(&s(vec![0.0; 3], vec![0.0; 3], vec![0.0; 3])), None, "all zeros");
        assert_eq!(g.grade_stored(&s(vec![], vec![], vec![0.0; 3])), None, "zero r alone");
        // r = 0 with a velocity: an answer (all contacts open), graded
        let open = g.grade_stored(&s(vec![0.0, 0.0, 1.0], vec![], vec![0.0; 3])).unwrap();
        assert_eq!(open, g.grade(&[0.0; 3]));
        assert!(g.grade_stored(&s(vec![], vec![], vec![1.0, 0.0, 0.0])).is_some());
    }
}
