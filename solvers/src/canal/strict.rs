//! The Table II baselines (Lee et al. 2025 §VIII-A): the AL surrogate (19) with the **strict**
//! operator (17) solved directly, without the frozen De Saxcé term, by
//! - `trdogleg`: trust-region dogleg on the merit `f = ½||r||²` (Nocedal & Wright Alg. 4.3 with
//!   the Gauss–Newton model `m(s) = ½||r + 𝒥 s||²`; radius from the first Newton step, `Δ ← ¼||s||`
//!   if `ρ < ¼`, `Δ ← 2Δ` if `ρ > ¾` on the boundary, step accepted if `ρ > η = 1e-4`), or
//! - `damped_newton`: damped semismooth Newton, Armijo backtracking `t = 1, ½, ¼, …` on `f` (De
//!   Luca, Facchinei & Kanzow 1996, Algorithm 3.1, σ = 1e-4), falling back to the steepest-descent
//!   direction `−𝒥ᵀ r` when the Newton direction fails their sufficient-descent test
//!   `∇fᵀd ≤ −ρ||d||^p` (ρ = 1e-8, p = 2.1, their constants; in this problem's units, m/s and
//!   N s) or `𝒥` is singular.
//!
//! `𝒥 = M + β Σ J_iᵀ D_i J_i` with the strict operator's generalized Jacobian `D_i`: not symmetric
//! and possibly singular, so the step uses a dense LU (these variants exist for the ablation, on
//! scenes of at most a few hundred DOFs). Every linear solve counts as one inner iteration.
//!
//! Table II protocol (README §9): the inner tolerance is CANAL's (`||r|| ≤ newton_tolerance ·
//! scale`, or a Newton step below round-off of `v`). A solve that gets stuck — the Armijo trial
//! step `t||d||` falls below round-off of `v` (`below_roundoff`, as CANAL's step test) without a
//! sufficient decrease, or the trust radius falls below round-off of `v` — would repeat the same
//! iterate until the cap, so it is counted as the cap (`max_newton_iterations`) and as a failure.
//! Both floors are relative to `||v||`: an absolute floor on `t` (formerly 1e-12) stopped the
//! backtracking too early at large `β`, where `||−𝒥ᵀr|| ~ β||r||` and the acceptable `t` is
//! `~1/||𝒥||²` (1e-18 at `β = 1e9`). The trust region's predicted reduction is evaluated as
//! `−(∇fᵀs + ½||𝒥s||²)`, not as the difference `f − m(s)`, which cancels when `m(s) ≈ f`.
//!
//! Measured behaviour (README §9): with the strict operator `r` is only piecewise smooth, and the
//! friction rows `(1, μ t̂)` of a sliding contact switch on and off with its normal trial impulse.
//! The Gauss–Newton model of `f` holds only up to the nearest such kink, so the trust region
//! walks in radius-sized steps and the Armijo steps are short; at an iterate lying on a kink (a
//! contact with `λ_n = 0` and zero normal velocity, frequent in coplanar patches) the Newton
//! direction of the chosen Jacobian element can increase `f` at every step length, and the solve
//! is stuck. De Luca et al.'s convergence theory assumes a continuously differentiable merit,
//! which `½||r||²` is not here.

use super::model::Op;
use super::settings::Inner;
use super::solver::{below_roundoff, Canal};
use api::{IterationLog, SolveError, StepProblem};
use nalgebra::{DMatrix, DVector};

/// Armijo constant of the damped Newton line search (De Luca et al. 1996: σ = 1e-4).
const ARMIJO: f64 = 1e-4;
/// Sufficient-descent test of the Newton direction, `∇fᵀd ≤ −ρ ||d||^p` (De Luca et al. 1996:
/// ρ = 1e-8, p = 2.1).
const DESCENT_RHO: f64 = 1e-8;
/// Exponent `p` of the sufficient-descent test.
const DESCENT_P: f64 = 2.1;

impl Canal {
    /// Dense `𝒥` at the current iterate (after `evaluate(.., Op::Strict, .., true)`), with `A`
    /// for `M` on deformable DOFs and prescribed rows and columns reduced to their mass diagonal
    /// (README §2).
    fn dense_jacobian(&self, p: &StepProblem<'_>, beta: f64) -> DMatrix<f64> {
        let mut jm = DMatrix::zeros(self.nv, self.nv);
        for (k, blk) in p.mass.blocks().iter().enumerate() {
            let o = p.mass.offset(k);
            jm.view_mut((o, o), (blk.nrows(), blk.ncols())).copy_from(blk);
        }
        for (r, c, x) in self.elastic.stiffness_entries() {
            jm[(r, c)] += x;
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
        if !p.prescribed.is_empty() {
            let mass = p.mass.diagonal();
            for &(d, _) in &p.prescribed {
                jm.row_mut(d).fill(0.0);
                jm.column_mut(d).fill(0.0);
                jm[(d, d)] = mass[d];
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
        log: &IterationLog,
    ) -> Result<(usize, bool), SolveError> {
        let tol = self.settings.newton_tolerance;
        let stuck = Ok((self.settings.max_newton_iterations, false));
        let mut radius = f64::INFINITY;
        let mut v_old = self.v.clone();
        for k in 0..self.settings.max_newton_iterations {
            if log.past_deadline() {
                // the pair (v, Λ(v)) for the AL update (v has moved since the last evaluation)
                self.evaluate(p, Op::Strict, beta, false);
                return Ok((k, false));
            }
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
            let newton = jm.clone().lu().solve(&(-&r)).filter(|d| d.iter().all(|x| x.is_finite()));
            let v2: f64 = self.v.iter().map(|v| v * v).sum();
            if newton.as_ref().is_some_and(|d| below_roundoff(d.norm_squared(), v2)) {
                return Ok((k + 1, true)); // the Newton step is below round-off of v (as CANAL)
            }
            v_old.copy_from_slice(&self.v);
            match method {
                Inner::DampedNewton => {
                    let d = match newton {
                        Some(d) if g.dot(&d) <= -DESCENT_RHO * d.norm().powf(DESCENT_P) => d,
                        _ => -&g,
                    };
                    let (slope, dd) = (g.dot(&d), d.norm_squared());
                    // Armijo backtracking t = 1, ½, ¼, … (De Luca et al. Alg. 3.1, step 4) until the
                    // trial step t||d|| falls below round-off of v: scale invariant, unlike a floor
                    // on t (the steepest-descent direction −𝒥ᵀr has length ~β||r||, so its
                    // acceptable t is ~1/||𝒥||², ~1e-18 at β = 1e9)
                    let mut t = 1.0;
                    loop {
                        if below_roundoff(t * t * dd, v2) {
                            self.v.copy_from_slice(&v_old);
                            self.evaluate(p, Op::Strict, beta, false);
                            return stuck; // the merit cannot be decreased along d
                        }
                        for (v, (vo, dk)) in self.v.iter_mut().zip(v_old.iter().zip(d.iter())) {
                            *v = vo + t * dk;
                        }
                        let (n1, _) = self.evaluate(p, Op::Strict, beta, false);
                        if 0.5 * n1 * n1 <= f0 + ARMIJO * t * slope {
                            break;
                        }
                        t *= 0.5;
                    }
                }
                Inner::TrDogleg => {
                    let jg = &jm * &g;
                    let (gg, jgjg) = (g.dot(&g), jg.dot(&jg));
                    if jgjg <= 0.0 {
                        return stuck; // 𝒥ᵀr in the null space of 𝒥: no model decrease
                    }
                    let pu = -(gg / jgjg) * &g;
                    let pn = newton.unwrap_or_else(|| pu.clone());
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
                    // m(0) − m(s) = −(∇fᵀs + ½||𝒥s||²), free of the cancellation of f0 − m(s)
                    let model_red = -(g.dot(&step) + 0.5 * (&jm * &step).norm_squared());
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
                    if below_roundoff(radius * radius, v2) {
                        self.evaluate(p, Op::Strict, beta, false);
                        return stuck; // the trust region has collapsed
                    }
                }
                Inner::Cascaded => unreachable!("the cascaded inner solve is in solver.rs"),
            }
        }
        let (nr, scale) = self.evaluate(p, Op::Strict, beta, false);
        Ok((self.settings.max_newton_iterations, nr <= tol * scale))
    }
}
