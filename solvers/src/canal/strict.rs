//! The Table II baselines (Lee et al. 2025 §VIII-A): the AL surrogate (19) with the **strict**
//! operator (17) solved directly, without the frozen De Saxcé term, by
//! - `trdogleg`: trust-region dogleg on the merit `f = ½||r||²` (Nocedal & Wright Alg. 4.3 with
//!   the Gauss–Newton model `m(s) = ½||r + 𝒥 s||²`), or
//! - `damped_newton`: damped semismooth Newton, Armijo backtracking on `f` (De Luca, Facchinei &
//!   Kanzow 1996), falling back to the steepest-descent direction `−𝒥ᵀ r` when the Newton
//!   direction is not a descent direction or `𝒥` is singular.
//!
//! `𝒥 = M + β Σ J_iᵀ D_i J_i` with the strict operator's generalized Jacobian `D_i`: not symmetric
//! and possibly singular, so the step uses a dense LU (these variants exist for the ablation, on
//! scenes of at most a few hundred DOFs). Every linear solve counts as one inner iteration.

use super::model::Op;
use super::settings::Inner;
use super::solver::Canal;
use harness::{SolveError, StepProblem};
use nalgebra::{DMatrix, DVector};

/// Armijo constant of the damped Newton line search.
const ARMIJO: f64 = 1e-4;

impl Canal {
    /// Dense `𝒥` at the current iterate (after `evaluate(.., Op::Strict, .., true)`).
    fn dense_jacobian(&self, p: &StepProblem<'_>, beta: f64) -> DMatrix<f64> {
        let mut jm = DMatrix::zeros(self.nv, self.nv);
        for (k, blk) in p.mass.blocks().iter().enumerate() {
            let o = p.mass.offset(k);
            jm.view_mut((o, o), (blk.nrows(), blk.ncols())).copy_from(blk);
        }
        let mut local = vec![0.0; 144];
        for (i, row) in self.model.rows.iter().enumerate() {
            let (jo, dim, m) = (self.joff[i], row.dim, row.ncols());
            let mut dw = [0.0; 9];
            for (t, s) in dw.iter_mut().zip(&self.jac[jo..jo + dim * dim]) {
                *t = beta * s;
            }
            if local.len() < m * m {
                local.resize(m * m, 0.0);
            }
            row.weighted_gram(&dw[..dim * dim], &mut local[..m * m]);
            for (a, &ga) in row.dofs.iter().enumerate() {
                for (b, &gb) in row.dofs.iter().enumerate() {
                    jm[(ga, gb)] += local[a * m + b];
                }
            }
        }
        jm
    }

    /// Solves the strict surrogate; returns `(iterations, converged)`.
    pub(super) fn inner_strict(
        &mut self,
        p: &StepProblem<'_>,
        beta: f64,
        method: Inner,
    ) -> Result<(usize, bool), SolveError> {
        let tol = self.settings.newton_tolerance;
        let mut radius = f64::INFINITY;
        let mut v_old = self.v.clone();
        for k in 0..self.settings.max_newton_iterations {
            let (nr, scale) = self.evaluate(p, Op::Strict, beta, true);
            if !nr.is_finite() {
                return Err(SolveError::NonFinite { what: format!("strict residual at inner iteration {k}") });
            }
            if nr <= tol * scale {
                return Ok((k, true));
            }
            let f0 = 0.5 * nr * nr;
            let jm = self.dense_jacobian(p, beta);
            let r = DVector::from_column_slice(&self.r);
            let g = jm.transpose() * &r; // ∇f
            let newton = jm.clone().lu().solve(&(-&r));
            v_old.copy_from_slice(&self.v);
            match method {
                Inner::DampedNewton => {
                    let mut d = match newton {
                        Some(d) if d.iter().all(|x| x.is_finite()) && g.dot(&d) < 0.0 => d,
                        _ => -&g,
                    };
                    let mut slope = g.dot(&d);
                    if slope >= 0.0 {
                        d = -&g;
                        slope = -g.dot(&g);
                    }
                    let mut t = 1.0;
                    let mut accepted = false;
                    while t > 1e-12 {
                        for (v, (vo, dk)) in self.v.iter_mut().zip(v_old.iter().zip(d.iter())) {
                            *v = vo + t * dk;
                        }
                        let (n1, _) = self.evaluate(p, Op::Strict, beta, false);
                        if 0.5 * n1 * n1 <= f0 + ARMIJO * t * slope {
                            accepted = true;
                            break;
                        }
                        t *= 0.5;
                    }
                    if !accepted {
                        self.v.copy_from_slice(&v_old);
                        self.evaluate(p, Op::Strict, beta, false);
                        return Ok((k + 1, false)); // stuck: the merit cannot be decreased
                    }
                }
                Inner::TrDogleg => {
                    let jg = &jm * &g;
                    let (gg, jgjg) = (g.dot(&g), jg.dot(&jg));
                    if jgjg <= 0.0 {
                        return Ok((k + 1, false));
                    }
                    let pu = -(gg / jgjg) * &g;
                    let pn = match newton {
                        Some(d) if d.iter().all(|x| x.is_finite()) => d,
                        _ => pu.clone(),
                    };
                    if !radius.is_finite() {
                        radius = pn.norm();
                    }
                    let step = if pn.norm() <= radius {
                        pn
                    } else if pu.norm() >= radius {
                        -(radius / gg.sqrt()) * &g
                    } else {
                        // ||pu + τ (pn − pu)|| = radius, τ in [0, 1]
                        let dvec = &pn - &pu;
                        let (a, b, c) = (dvec.dot(&dvec), 2.0 * pu.dot(&dvec), pu.dot(&pu) - radius * radius);
                        let tau = (-b + (b * b - 4.0 * a * c).max(0.0).sqrt()) / (2.0 * a);
                        &pu + tau * dvec
                    };
                    let model_red = f0 - 0.5 * (&r + &jm * &step).norm_squared();
                    for (v, (vo, dk)) in self.v.iter_mut().zip(v_old.iter().zip(step.iter())) {
                        *v = vo + dk;
                    }
                    let (n1, _) = self.evaluate(p, Op::Strict, beta, false);
                    let rho = if model_red > 0.0 { (f0 - 0.5 * n1 * n1) / model_red } else { -1.0 };
                    let sn = step.norm();
                    if rho < 0.25 {
                        radius = 0.25 * sn;
                    } else if rho > 0.75 && sn >= 0.99 * radius {
                        radius *= 2.0;
                    }
                    if rho <= 1e-4 {
                        self.v.copy_from_slice(&v_old);
                    }
                    let vscale = self.v.iter().map(|x| x * x).sum::<f64>().sqrt() + 1e-3;
                    if radius < 1e-15 * vscale {
                        self.evaluate(p, Op::Strict, beta, false);
                        return Ok((k + 1, false));
                    }
                }
                Inner::Cascaded => unreachable!("the cascaded inner solve is in solver.rs"),
            }
        }
        let (nr, scale) = self.evaluate(p, Op::Strict, beta, false);
        Ok((self.settings.max_newton_iterations, nr <= tol * scale))
    }
}
