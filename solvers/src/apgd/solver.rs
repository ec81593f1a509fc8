//! [`Apgd`]: Mazhar et al.'s accelerated projected gradient descent (their Algorithm 2) on the
//! CCP of `toolkit::cone_qp`.
//!
//! With `f(x) = ½ xᵀ W x + qᵀ x`, `∇f = W x + q` (the contact velocity), `Π` the projection onto
//! `K` and the Lipschitz estimate `L` (step `1/L`), one iteration from `(x_k, y_k, θ_k)`:
//!
//! ```text
//! x_{k+1} = Π(y_k − ∇f(y_k) / L)
//!   while f(x_{k+1}) > f(y_k) + ∇f(y_k)ᵀ(x_{k+1} − y_k) + ½ L ‖x_{k+1} − y_k‖²:  L ← 2L, redo
//! θ_{k+1} = (−θ_k² + θ_k √(θ_k² + 4)) / 2,   β = θ_k (1 − θ_k) / (θ_k² + θ_{k+1})
//! y_{k+1} = x_{k+1} + β (x_{k+1} − x_k)
//! keep x_{k+1} if its residual is the smallest so far; stop if below the tolerance
//! if ∇f(y_k)ᵀ(x_{k+1} − x_k) > 0:  y_{k+1} = x_{k+1}, θ_{k+1} = 1          (restart)
//! L ← 0.9 L
//! ```
//!
//! started with `θ_0 = 1`, `y_0 = x_0` and `L = ‖W (x_0 − 1)‖ / ‖x_0 − 1‖` (the gradient's change
//! between `x_0` and the all-ones vector). The answer is the best iterate by the residual.

use super::settings::ApgdSettings;
use super::CCP_RESIDUAL;
use api::{IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use toolkit::cone_qp::{dot, ConeQp, Origin, Outcome, StepCcp};

/// Relative asymmetry of `W` above which a Delassus problem is refused: `W` has no objective
/// to descend (round-off of a condensed symmetric `W` is far below).
const ASYMMETRY_LIMIT: f64 = 1e-10;

/// Most doublings of `L` in one backtracking search.
const MAX_DOUBLINGS: usize = 100;

/// Accelerated projected gradient descent on Anitescu's CCP (module doc; README).
#[derive(Debug)]
pub struct Apgd {
    settings: ApgdSettings,
    /// The step's CCP and the way back to velocities.
    step: StepCcp,
}

impl Apgd {
    /// A solver with the given settings.
    pub fn new(settings: ApgdSettings) -> Self {
        Self { settings, step: StepCcp::default() }
    }

    fn validated(&self) -> Result<ApgdSettings, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("apgd settings: {e}") })?;
        Ok(self.settings.clone())
    }
}

/// The initial Lipschitz estimate (module doc), or `λ_max(W)` where it is not positive and finite
/// or the step is not adaptive.
fn initial_lipschitz(s: &ApgdSettings, qp: &ConeQp, x0: &[f64]) -> f64 {
    if s.adaptive_step {
        let d: Vec<f64> = x0.iter().map(|a| a - 1.0).collect();
        let n = qp.n();
        let wd: f64 = (0..n).map(|r| dot(qp.row(r), &d).powi(2)).sum::<f64>().sqrt();
        let l = wd / dot(&d, &d).sqrt();
        if l.is_finite() && l > 0.0 {
            return l;
        }
    }
    qp.largest_eigenvalue(100)
}

/// The iterations (module doc) from `x`; `x` becomes the best iterate.
fn apgd(s: &ApgdSettings, qp: &ConeQp, origin: Origin<'_>, x: &mut [f64], log: &mut IterationLog) -> Outcome {
    let n = qp.n();
    let (mut g, mut u) = (Vec::with_capacity(n), Vec::with_capacity(n));
    // the residual at x = 0, ‖P_K(−q)‖ (rows: ‖q_k‖), the scale of the stopping test
    let zero = vec![0.0; n];
    let r_zero = qp.residual(&zero, &qp.q);
    if r_zero == 0.0 {
        x.fill(0.0);
        return Ok((0, SolveStatus::Solved));
    }
    let target = s.tolerance * r_zero;
    let mut lip = initial_lipschitz(s, qp, x);
    if !(lip.is_finite() && lip > 0.0) {
        return Err(SolveError::Numerical { what: format!("no Lipschitz estimate of W ({lip})") });
    }
    let mut xk = x.to_vec();
    let mut y = xk.clone();
    let mut xn = vec![0.0; n];
    let mut theta = 1.0f64;
    let (mut best, mut best_r) = (xk.clone(), f64::INFINITY);
    let mut v = vec![];
    let mut status = SolveStatus::MaxIterations;
    let mut iterations = 0;
    for k in 1..=s.max_iterations {
        qp.velocity(&y, &mut g);
        let fy = qp.objective(&y, &g);
        let mut doublings = 0;
        loop {
            for r in 0..n {
                xn[r] = y[r] - g[r] / lip;
            }
            qp.project(&mut xn);
            qp.velocity(&xn, &mut u);
            if !s.adaptive_step {
                break;
            }
            let d: Vec<f64> = xn.iter().zip(&y).map(|(a, b)| a - b).collect();
            let model = fy + dot(&g, &d) + 0.5 * lip * dot(&d, &d);
            let fx = qp.objective(&xn, &u);
            // round-off slack: both objectives are sums of n products of this size
            let slack = 8.0 * f64::EPSILON * (fy.abs() + fx.abs());
            if fx <= model + slack {
                break;
            }
            doublings += 1;
            if doublings > MAX_DOUBLINGS {
                return Err(SolveError::LineSearch {
                    what: format!("no sufficient decrease at iteration {k} (L = {lip:e})"),
                });
            }
            lip *= 2.0;
        }
        if !xn.iter().all(|a| a.is_finite()) {
            return Err(SolveError::NonFinite { what: format!("iterate of APGD iteration {k}") });
        }
        let r = qp.residual(&xn, &u);
        let restart = s.acceleration && s.restart && {
            let step: f64 = g.iter().zip(xn.iter().zip(&xk)).map(|(a, (b, c))| a * (b - c)).sum();
            step > 0.0
        };
        let theta_next = if s.acceleration && !restart {
            0.5 * (-theta * theta + theta * (theta * theta + 4.0).sqrt())
        } else {
            1.0
        };
        let beta = if s.acceleration && !restart { theta * (1.0 - theta) / (theta * theta + theta_next) } else { 0.0 };
        for i in 0..n {
            y[i] = xn[i] + beta * (xn[i] - xk[i]);
        }
        if r < best_r {
            best_r = r;
            best.copy_from_slice(&xn);
        }
        log.record(&[(CCP_RESIDUAL, r), ("lipschitz", lip), ("restart", if restart { 1.0 } else { 0.0 })]);
        origin.hand_over(&xn, log, &mut v);
        iterations = k;
        xk.copy_from_slice(&xn);
        theta = theta_next;
        if log.should_stop() {
            status = log.stop_status();
            best.copy_from_slice(&xn);
            break;
        }
        if r < target {
            status = SolveStatus::Solved;
            break;
        }
        if s.adaptive_step {
            lip *= 0.9;
        }
    }
    x.copy_from_slice(&best);
    Ok((iterations, status))
}

impl Solver for Apgd {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.validated()?;
        toolkit::cone_qp::solve_step(&mut self.step, p, s.warm_start, log, |qp, origin, x, log| {
            apgd(&s, qp, origin, x, log)
        })
    }

    fn solve_delassus(
        &mut self,
        p: &api::DelassusProblem,
        log: &mut IterationLog,
    ) -> Result<api::DelassusSolution, SolveError> {
        let s = self.validated()?;
        let asymmetry = p.asymmetry();
        if asymmetry > ASYMMETRY_LIMIT {
            return Err(SolveError::Unsupported {
                what: format!("a non-symmetric W (relative asymmetry {asymmetry:.3e}): APGD descends ½ rᵀ W r + qᵀ r"),
            });
        }
        toolkit::cone_qp::solve_delassus(p, log, |qp, origin, x, log| apgd(&s, qp, origin, x, log))
    }
}
