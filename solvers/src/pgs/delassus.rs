//! pgs on a problem in Delassus form `u = W r + q` (FCLIB's local problems), `W` as given.
//!
//! The same Gauss–Seidel sweep as on a step problem, with the contact velocity read from `W`:
//! visiting contact `i`, `u_i = q_i + sum_j W_ij r_j` from the current impulses (one block row of
//! `W`, Siconos's NSGS), then the local solve of the settings (`split` or `cone`) on the diagonal
//! block, the relaxation `omega` and the projection onto the cone (`toolkit::delassus`, shared
//! with nsn's fallback sweep). `v̂ = 0` and `r_n = 0`: the
//! law is `K_mu ∋ r_i ⊥ u_i + mu ||u_T,i|| e_n ∈ K_mu*` on `u` itself.
//!
//! A non-symmetric `W`: the `split` local solve minimises over the friction disk with the
//! symmetric part of the tangential block `W_tt` (the disk problem is a quadratic program). Its
//! fixed points are still exactly the solutions of the given problem: `u_i` comes from the given
//! `W`, and at a fixed point the local step's optimality condition reads maximal dissipation for
//! that `u_i` whatever matrix the step used (README, "Delassus form"). Anderson and NNCG
//! acceleration and islands apply to step problems only.

use super::solver::{sweep_order, Pgs, SHUFFLE_SEED};
use api::{DelassusProblem, DelassusSolution, IterationLog, Settings, SolveError, SolveStatus};
use kernels::contact_local::LocalProblem;
use toolkit::delassus::{gauss_seidel_update, local_problem};

impl Pgs {
    /// The sweeps on `W` (module doc); the stopping test is the step path's (relative change of
    /// `r` in the max norm below `tolerance`).
    pub(super) fn sweep_delassus(
        &mut self,
        p: &DelassusProblem,
        log: &mut IterationLog,
    ) -> Result<DelassusSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("pgs settings: {e}") })?;
        let nc = p.nc();
        let locals: Vec<LocalProblem> = (0..nc).map(|i| local_problem(p, i)).collect();
        let mut r = vec![[0.0; 3]; nc];
        let (omega, tolerance, local) = (self.settings.omega, self.settings.tolerance, self.settings.local);
        let mut order = std::mem::take(&mut self.order);
        let mut rng = SHUFFLE_SEED;
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        for k in 1..=self.settings.max_iterations {
            let (mut change, mut size) = (0.0f64, 0.0f64);
            sweep_order(self.settings.order, k, nc, &mut rng, &mut order);
            for &i in &order {
                let l = &locals[i];
                if l.is_inert() {
                    continue;
                }
                let lam = r[i];
                let new = gauss_seidel_update(p, l, local, omega, i, &r);
                if !new.iter().all(|x| x.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("impulse of contact {i} at sweep {k}") });
                }
                change = (0..3).fold(change, |m, a| m.max((new[a] - lam[a]).abs()));
                size = new.iter().fold(size, |m, x| m.max(x.abs()));
                r[i] = new;
            }
            let rel_change = change / size.max(f64::MIN_POSITIVE);
            let natmap: f64 = (0..nc)
                .map(|i| {
                    let f = kernels::contact_local::natmap(r[i], p.velocity_of(i, &r), p.mu()[i]);
                    f.iter().map(|x| x * x).sum::<f64>()
                })
                .sum::<f64>()
                .sqrt();
            log.record(&[("rel_change_linf", rel_change), ("natmap_abs_l2", natmap)]);
            log.iterate(&[], &r, &[]);
            iterations = k;
            if log.should_stop() {
                status = log.stop_status();
                break;
            }
            if rel_change < tolerance {
                status = SolveStatus::Solved;
                break;
            }
        }
        self.order = order;
        Ok(DelassusSolution { impulses: r, iterations, status })
    }
}
