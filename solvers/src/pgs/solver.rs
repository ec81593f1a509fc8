//! [`Pgs`]: per-step setup (Delassus blocks, warm start), the Gauss–Seidel sweeps over joint rows
//! and contacts, and the stopping test.

use super::islands::Islands;
use super::settings::{PgsSettings, SweepOrder, ANDERSON_RESTART};
use api::{IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::anderson::Anderson;
use kernels::cone;
use toolkit::contact_blocks::ContactBlocks;
use toolkit::implicit::ImplicitElastic;

/// Denominator floor of the relative change when every impulse is zero.
const TINY: f64 = f64::MIN_POSITIVE;

/// Projected Gauss–Seidel on the velocity-level Coulomb NCP with the exact friction cone. See the
/// module documentation and `solvers/src/pgs/README.md` for the method.
///
/// The struct keeps its buffers between steps, so a step allocates only its returned solution and
/// a few per-step vectors (the free velocity, one mass-block inverse per body), never per sweep.
///
/// Deformable (FEM) bodies take the linearised implicit step of `toolkit::implicit`: PGS then
/// works on the Delassus operator `W = J A⁻¹ Jᵀ` of `A = M + δt² K` (README "Deformable bodies").
#[derive(Debug)]
pub struct Pgs {
    pub(super) settings: PgsSettings,
    /// Per-contact Delassus blocks and local problems of the current step.
    contacts: ContactBlocks,
    /// Impulses of the current iterate, `(n, t1, t2)` per contact (N s).
    lambda: Vec<[f64; 3]>,
    /// Impulses of the current iterate, one per bilateral row (N s).
    gamma: Vec<f64>,
    /// Free velocity `v*`.
    vstar: Vec<f64>,
    /// Velocity of the current iterate, `v = v* + M⁻¹ (Jᵀ λ + Gᵀ γ)`.
    v: Vec<f64>,
    /// The deformable bodies' linearised implicit step (symbolic analysis kept across steps).
    elastic: ImplicitElastic,
    /// Contact order of the current sweep ([`SweepOrder`]).
    pub(super) order: Vec<usize>,
    /// Anderson acceleration of the sweeps ([`PgsSettings::anderson_memory`]).
    anderson: Anderson,
    /// The impulses `(λ, γ)` flattened: before the sweep, after it, and accelerated.
    x: Vec<f64>,
    gx: Vec<f64>,
    ax: Vec<f64>,
    /// NNCG's search direction `p` ([`PgsSettings::nncg`]), flattened like `x`.
    direction: Vec<f64>,
    /// The step's islands ([`PgsSettings::islands`]; one island of everything by default).
    islands: Islands,
}

/// Fills `order` with the contact order of sweep `k` (1-based) of `n` contacts; `rng` is the
/// shuffle's xorshift64 state (reset every step).
pub(super) fn sweep_order(how: SweepOrder, k: usize, n: usize, rng: &mut u64, order: &mut Vec<usize>) {
    order.clear();
    order.extend(0..n);
    match how {
        SweepOrder::Forward => {}
        SweepOrder::Symmetric => {
            if k.is_multiple_of(2) {
                order.reverse();
            }
        }
        SweepOrder::Shuffled => {
            // Fisher–Yates with xorshift64 (Marsaglia 2003): reproducible, no dependency
            for i in (1..n).rev() {
                *rng ^= *rng << 13;
                *rng ^= *rng >> 7;
                *rng ^= *rng << 17;
                order.swap(i, (*rng % (i as u64 + 1)) as usize);
            }
        }
    }
}

/// Seed of the shuffled order (any non-zero value; fixed so runs are reproducible).
pub(super) const SHUFFLE_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

impl Pgs {
    /// A solver with the given settings (validated by the registry before this is called; `step`
    /// checks them again and refuses invalid ones).
    pub fn new(settings: PgsSettings) -> Self {
        Self {
            settings,
            contacts: ContactBlocks::default(),
            lambda: vec![],
            gamma: vec![],
            vstar: vec![],
            v: vec![],
            elastic: ImplicitElastic::default(),
            order: vec![],
            anderson: Anderson::default(),
            x: vec![],
            gx: vec![],
            ax: vec![],
            direction: vec![],
            islands: Islands::default(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &PgsSettings {
        &self.settings
    }

    /// Writes the impulses `(λ, γ)` of the contacts `contacts` and rows `rows` into `out`
    /// (contacts first, `(n, t1, t2)` each).
    fn pack(lambda: &[[f64; 3]], gamma: &[f64], contacts: &[usize], rows: &[usize], out: &mut Vec<f64>) {
        out.clear();
        out.extend(contacts.iter().flat_map(|&i| lambda[i]));
        out.extend(rows.iter().map(|&r| gamma[r]));
    }

    /// Replaces the impulses of `contacts` and `rows` by the accelerated `self.ax` (packed as
    /// [`Self::pack`]; each contact's impulse projected onto its cone if `project`; inert
    /// contacts keep theirs) and recomputes `v = v* + A⁻¹ (Jᵀ λ + Gᵀ γ)`.
    fn take_accelerated(&mut self, contacts: &[usize], rows: &[usize], project: bool) {
        for (m, &i) in contacts.iter().enumerate() {
            let (b, lam) = (&self.contacts.blocks[i], &mut self.lambda[i]);
            if !b.local.is_inert() {
                let a = [self.ax[3 * m], self.ax[3 * m + 1], self.ax[3 * m + 2]];
                *lam = if project { cone::project(a, b.local.mu) } else { a };
            }
        }
        for (m, &r) in rows.iter().enumerate() {
            self.gamma[r] = self.ax[3 * contacts.len() + m];
        }
        self.recompute_velocity();
    }

    /// One NNCG update (Silcowitz, Niebe & Erleben 2010, the loop body of their pseudocode)
    /// after the sweep `x = self.x ↦ self.gx = PGS(x)`: `∇f = −(PGS(x) − x)`,
    /// `β = ||∇f||² / gradient_sq` (the previous `||∇f||²`, updated here; `∞` before the first
    /// update, so `β = 0` there: the pseudocode's first plain sweep and `p = −∇f`); if `β > 1`,
    /// restart (`p = 0`, keep `PGS(x)`); else take `PGS(x) + β p` and set `p ← β p − ∇f`. As in
    /// the paper, the extrapolated impulses are not projected onto their cones: the next sweep's
    /// local solves project each contact (README: projecting here measured no better).
    fn nncg_update(&mut self, contacts: &[usize], rows: &[usize], gradient_sq: &mut f64) {
        let sq = self.x.iter().zip(&self.gx).map(|(a, b)| (b - a) * (b - a)).sum::<f64>();
        let beta = sq / *gradient_sq;
        *gradient_sq = sq;
        // a NaN β (0/0: a zero previous gradient) restarts too
        if beta > 1.0 || beta.is_nan() {
            self.direction.fill(0.0);
            return;
        }
        self.ax.resize(self.x.len(), 0.0);
        let mut moved = false;
        for (((a, p), x), gx) in self.ax.iter_mut().zip(self.direction.iter_mut()).zip(&self.x).zip(&self.gx) {
            let step = beta * *p;
            moved |= step != 0.0;
            *a = gx + step;
            *p = step + (gx - x);
        }
        if moved {
            self.take_accelerated(contacts, rows, false);
        }
    }

    /// `v = v* + A⁻¹ (Jᵀ λ + Gᵀ γ)` from scratch.
    fn recompute_velocity(&mut self) {
        self.v.copy_from_slice(&self.vstar);
        for (b, lam) in self.contacts.blocks.iter().zip(&self.lambda) {
            b.apply(*lam, &mut self.v);
        }
        for (b, g) in self.contacts.bilateral.iter().zip(&self.gamma) {
            b.apply(*g, &mut self.v);
        }
    }

    /// Builds the per-contact and per-joint-row blocks, `v*`, and the starting impulses and velocity.
    fn setup(&mut self, p: &StepProblem<'_>) -> Result<(), SolveError> {
        self.contacts.assemble_implicit(p, &mut self.elastic)?;
        self.islands.build(&self.contacts, p.nv(), self.settings.islands);
        // deformable DOFs: the linearised implicit step's v* (prescribed DOFs at v̄_P)
        self.elastic.free_velocity(p, &mut self.vstar)?;
        self.v.clear();
        self.v.extend_from_slice(&self.vstar);
        self.lambda.clear();
        for (i, b) in self.contacts.blocks.iter().enumerate() {
            let warm = if self.settings.warm_start && !b.local.is_inert() { p.warm_impulse(i) } else { None };
            let lambda0 = match warm {
                Some(l) if l.iter().all(|x| x.is_finite()) => cone::project(l, b.local.mu),
                _ => [0.0; 3],
            };
            b.apply(lambda0, &mut self.v);
            self.lambda.push(lambda0);
        }
        self.gamma.clear();
        for (k, b) in self.contacts.bilateral.iter().enumerate() {
            let warm = if self.settings.warm_start { p.warm_bilateral(k) } else { None };
            let gamma0 = warm.filter(|g| g.is_finite()).unwrap_or(0.0);
            b.apply(gamma0, &mut self.v);
            self.gamma.push(gamma0);
        }
        Ok(())
    }
}

impl Pgs {
    /// The sweeps of one island (`contacts` and `rows`, in problem order) until its own stopping
    /// test holds or its budget is spent; returns the sweeps taken and the island's status.
    fn solve_island(
        &mut self,
        contacts: &[usize],
        rows: &[usize],
        log: &mut IterationLog,
    ) -> Result<(usize, SolveStatus), SolveError> {
        if contacts.is_empty() && rows.is_empty() {
            return Ok((0, SolveStatus::Solved));
        }
        let local = self.settings.local;
        let (omega, tolerance) = (self.settings.omega, self.settings.tolerance);
        let mut iterations = 0;
        let mut status = SolveStatus::MaxIterations;
        let mut rng = SHUFFLE_SEED;
        let (memory, nncg) = (self.settings.anderson_memory, self.settings.nncg);
        let accelerated = memory > 0 || nncg;
        let n = 3 * contacts.len() + rows.len();
        self.anderson.resize(memory, n);
        let mut last_residual = f64::INFINITY;
        if nncg {
            self.direction.clear();
            self.direction.resize(n, 0.0);
        }
        // NNCG's previous ||∇f||²: none yet, so its first β is 0 (the pseudocode's first plain sweep)
        let mut gradient_sq = f64::INFINITY;
        // a symmetric pair of sweeps (forward, backward) is the map that Anderson or NNCG
        // extrapolates
        let period = if self.settings.order == SweepOrder::Symmetric { 2 } else { 1 };
        for k in 1..=self.settings.max_iterations {
            if accelerated && (k - 1).is_multiple_of(period) {
                Self::pack(&self.lambda, &self.gamma, contacts, rows, &mut self.x);
            }
            let (mut change, mut size) = (0.0f64, 0.0f64);
            // joint rows first, then the contacts, in one sweep (as Box2D and Bullet order
            // them): the row's exact scalar solve, unclamped, relaxed by ω
            for &j in rows {
                let (b, g) = (&self.contacts.bilateral[j], &mut self.gamma[j]);
                let new = *g + omega * (b.solve(&self.v, *g) - *g);
                if !new.is_finite() {
                    return Err(SolveError::NonFinite { what: format!("impulse of bilateral row {j} at sweep {k}") });
                }
                b.apply(new - *g, &mut self.v);
                change = change.max((new - *g).abs());
                size = size.max(new.abs());
                *g = new;
            }
            sweep_order(self.settings.order, k, contacts.len(), &mut rng, &mut self.order);
            for &m in &self.order {
                let i = contacts[m];
                let (b, lam) = (&self.contacts.blocks[i], &mut self.lambda[i]);
                if b.local.is_inert() {
                    continue;
                }
                let target = b.local.solve(local, b.velocity(&self.v), *lam);
                let relaxed = [0, 1, 2].map(|r| lam[r] + omega * (target[r] - lam[r]));
                let new = cone::project(relaxed, b.local.mu);
                if !new.iter().all(|x| x.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("impulse of contact {i} at sweep {k}") });
                }
                let d = [new[0] - lam[0], new[1] - lam[1], new[2] - lam[2]];
                b.apply(d, &mut self.v);
                *lam = new;
                change = d.iter().fold(change, |m, x| m.max(x.abs()));
                size = new.iter().fold(size, |m, x| m.max(x.abs()));
            }
            let rel_change = change / size.max(TINY);
            let (natmap_ref, natmap_model) =
                self.contacts.residuals_of(contacts.iter().copied(), &self.v, &self.lambda);
            let joint_residual = rows
                .iter()
                .fold(0.0f64, |m, &j| m.max(self.contacts.bilateral[j].residual(&self.v, self.gamma[j]).abs()));
            log.record(&[
                ("rel_change_linf", rel_change),
                ("natmap_abs_l2", natmap_ref),
                ("natmap_model_abs_l2", natmap_model),
                ("bilateral_abs_linf", joint_residual),
            ]);
            log.iterate(&self.v, &self.lambda, &self.gamma);
            iterations = k;
            if log.should_stop() {
                status = log.stop_status();
                break;
            }
            if rel_change < tolerance {
                status = SolveStatus::Solved;
                break;
            }
            if accelerated && k.is_multiple_of(period) {
                Self::pack(&self.lambda, &self.gamma, contacts, rows, &mut self.gx);
            }
            // not after the last sweep: the returned impulses are a sweep's, inside their cones
            if nncg && k.is_multiple_of(period) && k < self.settings.max_iterations {
                self.nncg_update(contacts, rows, &mut gradient_sq);
            }
            if memory > 0 && k.is_multiple_of(period) {
                // x_{k+1} = Anderson(x_k, g(x_k)); restart when the sweep residual grew
                let residual = self.x.iter().zip(&self.gx).map(|(a, b)| (b - a) * (b - a)).sum::<f64>().sqrt();
                if residual > ANDERSON_RESTART * last_residual {
                    self.anderson.restart();
                }
                last_residual = residual;
                self.ax.resize(n, 0.0);
                self.anderson.step(&self.x, &self.gx, &mut self.ax);
                if self.anderson.columns() > 0 {
                    self.take_accelerated(contacts, rows, true);
                }
            }
        }
        Ok((iterations, status))
    }
}

impl Solver for Pgs {
    fn solve_delassus(
        &mut self,
        p: &api::DelassusProblem,
        log: &mut IterationLog,
    ) -> Result<api::DelassusSolution, SolveError> {
        self.sweep_delassus(p, log)
    }

    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("pgs settings: {e}") })?;
        self.setup(p)?;

        // each island sweeps to its own stopping test; the step converged when every island did
        let islands = std::mem::take(&mut self.islands);
        let mut iterations = 0;
        let mut status = SolveStatus::Solved;
        for k in 0..islands.len() {
            let (sweeps, st) = self.solve_island(islands.contacts(k), islands.rows(k), log)?;
            iterations = iterations.max(sweeps);
            if st != SolveStatus::Solved {
                status = st;
            }
        }
        self.islands = islands;

        // Recompute v = v* + M⁻¹ (Jᵀ λ + Gᵀ γ) from scratch, dropping the round-off of the
        // incremental updates.
        self.recompute_velocity();
        if !self.v.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "velocity v+".into() });
        }
        Ok(StepSolution {
            v: self.v.clone(),
            q: None,
            impulses: self.lambda.clone(),
            bilateral: self.gamma.clone(),
            iterations,
            status,
        })
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;

    /// Every order visits each contact once per sweep; symmetric alternates direction; the
    /// shuffle changes from sweep to sweep and repeats from the same seed.
    #[test]
    fn every_sweep_order_is_a_permutation() {
        let n = 50;
        let mut rng = SHUFFLE_SEED;
        let (mut a, mut b) = (vec![], vec![]);
        sweep_order(SweepOrder::Shuffled, 1, n, &mut rng, &mut a);
        sweep_order(SweepOrder::Shuffled, 2, n, &mut rng, &mut b);
        let sorted = |v: &[usize]| {
            let mut s = v.to_vec();
            s.sort_unstable();
            s
        };
        assert_eq!(sorted(&a), (0..n).collect::<Vec<_>>());
        assert_eq!(sorted(&b), (0..n).collect::<Vec<_>>());
        assert!(a != b && a != (0..n).collect::<Vec<_>>());
        let mut again = SHUFFLE_SEED;
        let mut c = vec![];
        sweep_order(SweepOrder::Shuffled, 1, n, &mut again, &mut c);
        assert_eq!(a, c);
        sweep_order(SweepOrder::Symmetric, 2, 3, &mut rng, &mut c);
        assert_eq!(c, [2, 1, 0]);
        sweep_order(SweepOrder::Symmetric, 3, 3, &mut rng, &mut c);
        assert_eq!(c, [0, 1, 2]);
    }
}
