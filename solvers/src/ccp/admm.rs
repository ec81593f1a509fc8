//! [`CcpAdmm`]: ContactBench's dual ADMM on the CCP (`toolkit::cone_qp`), in our words.
//!
//! The CCP is split as `min ½ xᵀ W x + qᵀ x + I_K(z)` subject to `x = z`: a linear-solve iterate
//! `x` that ignores the cones and a projected iterate `z ∈ K`, tied by the scaled multiplier `γ`
//! (at a solution `γ = −(W z + q)`, minus the contact velocity). One iteration, with the penalty
//! `ρ` and a small proximal weight `ρ_p` on `x`:
//!
//! ```text
//! x ← (W + (ρ + ρ_p) I)⁻¹ (ρ z + ρ_p x − q − γ)        linear step (one LU of W + (ρ + ρ_p) I)
//! w ← α x + (1 − α) z + γ / ρ                           over-relaxation α
//! z ← P_K(w)                                            projection onto the cones (rows free)
//! γ ← ρ (w − z)                                         multiplier update
//! ```
//!
//! The primal residual is `‖x − z‖_∞`, the dual one `‖ρ (z − z_prev) + ρ_p (x − x_prev)‖_∞`.
//! `ρ` starts at `√(λ_max λ_min) κ^{0.4}` with `λ_max` the largest eigenvalue of `W` (power
//! iteration), `λ_min = ρ_p` and `κ = λ_max / λ_min`; the spectral rule moves it by `κ^{±0.1}`
//! when one residual exceeds ten times the other, and refactors. The answer is `z` (in `K`).

use super::settings::{CcpAdmmSettings, RhoUpdate};
use super::CCP_RESIDUAL;
use api::{IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use nalgebra::{DMatrix, DVector};
use toolkit::cone_qp::{ConeQp, Origin, Outcome, StepCcp};

/// ContactBench's bounds on `ρ`: no increase above `1e12`, no decrease below `1e-12`.
const RHO_MAX: f64 = 1e12;
const RHO_MIN: f64 = 1e-12;

/// Dual ADMM on Anitescu's CCP (module doc; README).
#[derive(Debug)]
pub struct CcpAdmm {
    settings: CcpAdmmSettings,
    /// The step's CCP and the way back to velocities.
    step: StepCcp,
}

impl CcpAdmm {
    /// A solver with the given settings.
    pub fn new(settings: CcpAdmmSettings) -> Self {
        Self { settings, step: StepCcp::default() }
    }

    fn validated(&self) -> Result<CcpAdmmSettings, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("ccp_admm settings: {e}") })?;
        Ok(self.settings.clone())
    }
}

/// The LU factors of `W + shift I`.
fn factor(qp: &ConeQp, shift: f64) -> Result<nalgebra::LU<f64, nalgebra::Dyn, nalgebra::Dyn>, SolveError> {
    let n = qp.n();
    let mut a = DMatrix::from_row_slice(n, n, &qp.w);
    for k in 0..n {
        a[(k, k)] += shift;
    }
    let lu = a.lu();
    if !lu.is_invertible() {
        return Err(SolveError::Factorization { what: format!("W + {shift:e} I is singular") });
    }
    Ok(lu)
}

fn linf(a: impl Iterator<Item = f64>) -> f64 {
    a.fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The ADMM iterations (module doc) from `x` (already in `K`); `x` becomes the answer `z`.
fn admm(s: &CcpAdmmSettings, qp: &ConeQp, origin: Origin<'_>, x: &mut [f64], log: &mut IterationLog) -> Outcome {
    let n = qp.n();
    if n == 0 {
        return Ok((0, SolveStatus::Solved));
    }
    let eig_min = s.rho_prox;
    let eig_max = qp.largest_eigenvalue(s.power_iterations).max(eig_min);
    let kappa = eig_max / eig_min;
    let mut rho = (eig_max * eig_min).sqrt() * kappa.powf(0.4);
    let mut lu = factor(qp, rho + s.rho_prox)?;
    let alpha = s.over_relaxation;
    let mut z = x.to_vec();
    let mut xl = DVector::from_column_slice(x);
    let mut gamma = vec![0.0; n];
    let (mut u, mut v, mut w) = (Vec::with_capacity(n), vec![], vec![0.0; n]);
    let mut status = SolveStatus::MaxIterations;
    let mut iterations = 0;
    for k in 1..=s.max_iterations {
        let xl_prev = xl.clone();
        let z_prev = z.clone();
        let mut rhs = DVector::from_iterator(n, (0..n).map(|r| rho * z[r] + s.rho_prox * xl[r] - qp.q[r] - gamma[r]));
        if !lu.solve_mut(&mut rhs) || !rhs.iter().all(|a| a.is_finite()) {
            return Err(SolveError::NonFinite { what: format!("linear step of ADMM iteration {k}") });
        }
        xl = rhs;
        for r in 0..n {
            w[r] = alpha * xl[r] + (1.0 - alpha) * z_prev[r] + gamma[r] / rho;
        }
        z.copy_from_slice(&w);
        qp.project(&mut z);
        for r in 0..n {
            gamma[r] = rho * (w[r] - z[r]);
        }
        let prim = linf((0..n).map(|r| xl[r] - z[r]));
        let dual = linf((0..n).map(|r| rho * (z[r] - z_prev[r]) + s.rho_prox * (xl[r] - xl_prev[r])));
        let scale = linf(z.iter().copied()).max(f64::MIN_POSITIVE);
        let rel_change = linf((0..n).map(|r| xl[r] - xl_prev[r])) / scale;
        qp.velocity(&z, &mut u);
        log.record(&[
            ("prim_abs_linf", prim),
            ("dual_abs_linf", dual),
            ("rel_change_linf", rel_change),
            ("rho", rho),
            (CCP_RESIDUAL, qp.residual(&z, &u)),
        ]);
        origin.hand_over(&z, log, &mut v);
        iterations = k;
        if log.should_stop() {
            status = log.stop_status();
            break;
        }
        if prim / scale < s.tolerance && rel_change < s.tolerance {
            status = SolveStatus::Solved;
            break;
        }
        if s.rho_update == RhoUpdate::Spectral {
            let next = if prim > 10.0 * dual && rho <= RHO_MAX {
                rho * kappa.powf(0.1)
            } else if prim < 0.1 * dual && rho >= RHO_MIN {
                rho / kappa.powf(0.1)
            } else {
                rho
            };
            if next != rho {
                rho = next;
                lu = factor(qp, rho + s.rho_prox)?;
            }
        }
    }
    x.copy_from_slice(&z);
    Ok((iterations, status))
}

impl Solver for CcpAdmm {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.validated()?;
        toolkit::cone_qp::solve_step(&mut self.step, p, s.warm_start, log, |qp, origin, x, log| {
            admm(&s, qp, origin, x, log)
        })
    }

    fn solve_delassus(
        &mut self,
        p: &api::DelassusProblem,
        log: &mut IterationLog,
    ) -> Result<api::DelassusSolution, SolveError> {
        let s = self.validated()?;
        toolkit::cone_qp::solve_delassus(p, log, |qp, origin, x, log| admm(&s, qp, origin, x, log))
    }
}
