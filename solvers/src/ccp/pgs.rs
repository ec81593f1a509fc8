//! [`CcpPgs`]: projected Gauss–Seidel on the CCP (`toolkit::cone_qp`).
//!
//! One sweep visits the joint rows (exact scalar solve of the free row, `x_k ← x_k − u_k / W_kk`),
//! then the contacts in problem order. Visiting contact `i` with the others frozen, its impulse
//! minimises the local cone program `½ (y − x_i)ᵀ W_ii (y − x_i) + u_iᵀ (y − x_i)` over
//! `y ∈ K_μi` (`u_i = (W x + q)_i` at the current iterate); the visit takes projected-gradient
//! steps `y ← P_K(y − ρ_i (u_i + W_ii (y − x_i)))` with `ρ_i = 1 / λ̄(W_ii)` (Gershgorin bound, so
//! every step decreases the local objective), at most `local_iterations` of them. A fixed point
//! of the sweep is a CCP solution for any `local_iterations ≥ 1`: `x_i = P_K(x_i − ρ_i u_i)` is
//! the cone complementarity `K ∋ x_i ⊥ u_i ∈ K*` of the contact.

use super::settings::CcpPgsSettings;
use super::CCP_RESIDUAL;
use api::{IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::cone;
use kernels::contact_local::LocalProblem;
use toolkit::cone_qp::{dot, ConeQp, Origin, Outcome, StepCcp};

/// Projected Gauss–Seidel on Anitescu's CCP (module doc; README).
#[derive(Debug)]
pub struct CcpPgs {
    settings: CcpPgsSettings,
    /// The step's CCP and the way back to velocities.
    step: StepCcp,
}

impl CcpPgs {
    /// A solver with the given settings.
    pub fn new(settings: CcpPgsSettings) -> Self {
        Self { settings, step: StepCcp::default() }
    }

    fn validated(&self) -> Result<CcpPgsSettings, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("ccp_pgs settings: {e}") })?;
        Ok(self.settings.clone())
    }
}

/// The diagonal block `W_ii` of contact `i`.
fn diagonal_block(qp: &ConeQp, i: usize) -> [[f64; 3]; 3] {
    let n = qp.n();
    [0, 1, 2].map(|a| [0, 1, 2].map(|b| qp.w[(3 * i + a) * n + 3 * i + b]))
}

/// The sweeps (module doc) from `x` until the relative change of `x` is below the tolerance.
fn sweeps(s: &CcpPgsSettings, qp: &ConeQp, origin: Origin<'_>, x: &mut [f64], log: &mut IterationLog) -> Outcome {
    let (nc, n) = (qp.nc, qp.n());
    // the local step 1/λ̄ of each contact: LocalProblem's Gershgorin step of W_ii
    let steps: Vec<f64> = (0..nc).map(|i| LocalProblem::new(diagonal_block(qp, i), qp.mu[i], 0.0, 0.0).rho).collect();
    let local_tol = 1e-3 * s.tolerance;
    let (mut u, mut v) = (Vec::with_capacity(n), vec![]);
    let mut status = SolveStatus::MaxIterations;
    let mut iterations = 0;
    for k in 1..=s.max_iterations {
        let (mut change, mut size) = (0.0f64, 0.0f64);
        for r in 3 * nc..n {
            let w = qp.w[r * n + r];
            if w > 0.0 {
                let d = -(qp.q[r] + dot(qp.row(r), x)) / w;
                x[r] += d;
                change = change.max(d.abs());
                size = size.max(x[r].abs());
            }
        }
        for (i, (&rho, &mu)) in steps.iter().zip(&qp.mu).enumerate() {
            if rho == 0.0 {
                continue; // a contact that moves nothing keeps its impulse
            }
            let wii = diagonal_block(qp, i);
            let xi = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
            let ui = [0, 1, 2].map(|a| qp.q[3 * i + a] + dot(qp.row(3 * i + a), x));
            let mut y = xi;
            for _ in 0..s.local_iterations {
                let g = [0, 1, 2].map(|a| ui[a] + (0..3).map(|b| wii[a][b] * (y[b] - xi[b])).sum::<f64>());
                let next = cone::project([0, 1, 2].map(|a| y[a] - rho * g[a]), mu);
                let step = (0..3).fold(0.0f64, |m, a| m.max((next[a] - y[a]).abs()));
                let scale = next.iter().fold(0.0f64, |m, a| m.max(a.abs()));
                y = next;
                if step <= local_tol * scale {
                    break;
                }
            }
            if !y.iter().all(|a| a.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("impulse of contact {i} at sweep {k}") });
            }
            change = (0..3).fold(change, |m, a| m.max((y[a] - xi[a]).abs()));
            size = y.iter().fold(size, |m, a| m.max(a.abs()));
            x[3 * i..3 * i + 3].copy_from_slice(&y);
        }
        let rel_change = change / size.max(f64::MIN_POSITIVE);
        qp.velocity(x, &mut u);
        log.record(&[("rel_change_linf", rel_change), (CCP_RESIDUAL, qp.residual(x, &u))]);
        origin.hand_over(x, log, &mut v);
        iterations = k;
        if log.should_stop() {
            status = log.stop_status();
            break;
        }
        if rel_change < s.tolerance {
            status = SolveStatus::Solved;
            break;
        }
    }
    Ok((iterations, status))
}

impl Solver for CcpPgs {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.validated()?;
        toolkit::cone_qp::solve_step(&mut self.step, p, s.warm_start, log, |qp, origin, x, log| {
            sweeps(&s, qp, origin, x, log)
        })
    }

    fn solve_delassus(
        &mut self,
        p: &api::DelassusProblem,
        log: &mut IterationLog,
    ) -> Result<api::DelassusSolution, SolveError> {
        let s = self.validated()?;
        toolkit::cone_qp::solve_delassus(p, log, |qp, origin, x, log| sweeps(&s, qp, origin, x, log))
    }
}
