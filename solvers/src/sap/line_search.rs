//! The exact line search of SAP (Castro et al. §IV-B–C): the root of `ℓ'(α)` on `(0, α_max]` by
//! rtsafe (Newton–Raphson safeguarded by bisection, Numerical Recipes §9.4), with every
//! evaluation in O(n_c) after an O(n) setup:
//!
//! * setup per Newton iteration: `Δv_c = J Δv`, `Δp = A Δv`, `ΔvᵀΔp` and `Δpᵀ(v − v*)`;
//! * `ℓ(α) = ½‖v − v*‖²_A + α Δpᵀ(v − v*) + ½ α² ΔvᵀΔp + Σ_i ℓ_R,i(v_c + α Δv_c)`;
//! * `ℓ'(α) = Δpᵀ(v − v*) + α ΔvᵀΔp − Δv_cᵀ γ(α)`;
//! * `ℓ''(α) = ΔvᵀΔp + Δv_cᵀ G(α) Δv_c`.
//!
//! The root is sought for the normalised derivative `f(α) = ℓ'(α) / (−ℓ'(0))` (`f(0) = −1`);
//! `α_max` is accepted when `ℓ'(α_max) ≤ 0` (Drake's rules, README §9).

use super::model::Evaluation;
use super::problem::SapProblem;
use super::projection::{cost, project_with_hessian};
use super::settings::LineSearchStart;
use api::SolveError;

/// Scratch and the quantities precomputed along one search direction.
#[derive(Debug, Clone, Default)]
pub struct LineSearch {
    /// `Δv_c = J Δv`.
    pub dvc: Vec<[f64; 3]>,
    /// `Δp = A Δv`.
    pub dp: Vec<f64>,
    /// `ΔvᵀΔp`.
    d2a: f64,
    /// `Δpᵀ(v − v*)`.
    d1a: f64,
    /// `½‖v − v*‖²_A`.
    cost_a0: f64,
    /// `ℓ'(0)` and `ℓ''(0)`, from the impulses and `G` the evaluation at `v` already holds.
    d1_0: f64,
    d2_0: f64,
}

/// The result of one line search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineSearchResult {
    /// Step length α.
    pub alpha: f64,
    /// Derivative evaluations after the setup.
    pub iterations: usize,
}

impl LineSearch {
    /// Prepares the search along `dv` from the point evaluated in `eval`, which must hold `G`
    /// (an evaluation with the Hessian) (O(n)). Allocates nothing after the first step of a
    /// given size.
    pub fn setup(&mut self, prob: &SapProblem, eval: &Evaluation, dv: &[f64]) {
        self.dp.resize(dv.len(), 0.0);
        prob.a_mul_into(dv, &mut self.dp);
        self.d2a = dv.iter().zip(&self.dp).map(|(a, b)| a * b).sum();
        self.d1a = self.dp.iter().zip(&eval.dv_star).map(|(a, b)| a * b).sum();
        self.cost_a0 = eval.cost_a;
        self.dvc.clear();
        self.dvc.extend(prob.constraints.iter().map(|c| c.velocity(dv)));
        // at α = 0 the impulses and G are the evaluation's own: no projection needed (the same
        // sums, in the same order, as `eval(0)`)
        let (mut d1, mut d2) = (self.d1a, self.d2a);
        for ((dvc, gamma), g) in self.dvc.iter().zip(&eval.gamma).zip(&eval.g) {
            d1 -= dvc[0] * gamma[0] + dvc[1] * gamma[1] + dvc[2] * gamma[2];
            add_quadratic(&mut d2, g, dvc);
        }
        (self.d1_0, self.d2_0) = (d1, d2);
    }

    /// `(ℓ(α), ℓ'(α), ℓ''(α))` in O(n_c).
    pub fn eval(&self, prob: &SapProblem, eval: &Evaluation, alpha: f64) -> (f64, f64, f64) {
        let mut l = self.cost_a0 + alpha * self.d1a + 0.5 * alpha * alpha * self.d2a;
        let mut d1 = self.d1a + alpha * self.d2a;
        let mut d2 = self.d2a;
        for ((c, vc), dvc) in prob.constraints.iter().zip(&eval.vc).zip(&self.dvc) {
            let v = [vc[0] + alpha * dvc[0], vc[1] + alpha * dvc[1], vc[2] + alpha * dvc[2]];
            let (gamma, _, g) = project_with_hessian(c.unprojected_impulse(v), &c.cone);
            l += cost(gamma, &c.cone);
            d1 -= dvc[0] * gamma[0] + dvc[1] * gamma[1] + dvc[2] * gamma[2];
            add_quadratic(&mut d2, &g, dvc);
        }
        (l, d1, d2)
    }

    /// Exact line search by rtsafe on `f(α) = ℓ'(α)/(−ℓ'(0))` in `[0, α_max]`, starting as
    /// `start` says. Fails with [`SolveError::LineSearch`] when `Δv` is not a descent direction.
    pub fn search(
        &self,
        prob: &SapProblem,
        eval: &Evaluation,
        alpha_max: f64,
        f_tolerance: f64,
        max_iterations: usize,
        start: LineSearchStart,
    ) -> Result<LineSearchResult, SolveError> {
        let (d0, dd0) = (self.d1_0, self.d2_0);
        if !(d0.is_finite() && dd0.is_finite()) {
            return Err(SolveError::NonFinite { what: "line-search derivative at alpha = 0".into() });
        }
        if d0 >= 0.0 {
            return Err(SolveError::LineSearch {
                what: format!(
                    "the cost does not decrease along the Newton direction (dl/dalpha(0) = {d0:e} >= 0); \
                     H is probably ill-conditioned"
                ),
            });
        }
        let scale = -d0;
        // the Newton guess α₀ and, after the first one or two evaluations, ℓ' and ℓ'' there
        let mut alpha = if dd0 > 0.0 { (scale / dd0).min(alpha_max) } else { 0.5 * alpha_max };
        let (mut d, mut dd, evals) = match start {
            LineSearchStart::AlphaMax => {
                let (_, dmax, _) = self.eval(prob, eval, alpha_max);
                if dmax <= 0.0 {
                    return Ok(LineSearchResult { alpha: alpha_max, iterations: 1 });
                }
                let (_, d, dd) = self.eval(prob, eval, alpha);
                (d, dd, 2)
            }
            LineSearchStart::Newton => {
                let (_, d, dd) = self.eval(prob, eval, alpha);
                // still decreasing beyond the tolerance at α₀: Drake's test of α_max
                if d < 0.0 && (d / scale).abs() > f_tolerance {
                    if alpha >= alpha_max {
                        return Ok(LineSearchResult { alpha: alpha_max, iterations: 1 });
                    }
                    let (_, dmax, _) = self.eval(prob, eval, alpha_max);
                    if dmax <= 0.0 {
                        return Ok(LineSearchResult { alpha: alpha_max, iterations: 2 });
                    }
                    (d, dd, 2)
                } else {
                    (d, dd, 1)
                }
            }
        };
        let (mut lo, mut hi) = (0.0, alpha_max);
        let alpha_tol = f_tolerance * alpha;
        let (mut dx_old, mut dx) = (hi - lo, hi - lo);
        for it in 1..=max_iterations {
            // `evals + it − 1` derivative evaluations so far
            let f = d / scale;
            if f.abs() <= f_tolerance {
                return Ok(LineSearchResult { alpha, iterations: evals + it - 1 });
            }
            if f < 0.0 {
                lo = alpha;
            } else {
                hi = alpha;
            }
            let fd = dd / scale;
            let newton_out = ((alpha - hi) * fd - f) * ((alpha - lo) * fd - f) > 0.0;
            let slow = (2.0 * f).abs() > (dx_old * fd).abs();
            dx_old = dx;
            if newton_out || slow || fd <= 0.0 {
                dx = 0.5 * (hi - lo);
                alpha = lo + dx;
            } else {
                dx = f / fd;
                alpha -= dx;
            }
            if dx.abs() <= alpha_tol {
                return Ok(LineSearchResult { alpha, iterations: evals + it - 1 });
            }
            (_, d, dd) = self.eval(prob, eval, alpha);
            if !(d.is_finite() && dd.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("line-search derivative at alpha = {alpha}") });
            }
        }
        Err(SolveError::LineSearch {
            what: format!("no root of dl/dalpha within {max_iterations} iterations (last alpha = {alpha})"),
        })
    }
}

/// `acc += xᵀ G x` for one contact, added row by row.
fn add_quadratic(acc: &mut f64, g: &[[f64; 3]; 3], x: &[f64; 3]) {
    for r in 0..3 {
        *acc += x[r] * (g[r][0] * x[0] + g[r][1] * x[1] + g[r][2] * x[2]);
    }
}
