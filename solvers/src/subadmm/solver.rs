//! [`SubAdmm`]: Algorithm 2 of Lee et al. 2025 in λ-form (README §9): the v-step per solve
//! unit (Eq. 34, `units.rs`), the closed-form z-step per constraint with the strict operator
//! (Eqs. 35–38), `u = −λ` (Eq. 39), the residuals (42) and the adaptive penalty (43).
//!
//! Every iteration works on storage built once per step (`setup.rs`) and factors refreshed only
//! when β changes; with `threads > 1` the whole step runs inside the solver's own rayon pool.

use super::settings::{Split, SubAdmmSettings};
use super::setup;
use super::units::Unit;
use api::{IterationLog, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::cone;
use rayon::prelude::*;
use smallvec::SmallVec;
use toolkit::constraints::RowLaw;
use toolkit::implicit::ImplicitElastic;

const TINY: f64 = 1e-300;
/// Fewest constraints per rayon task in the z-step (a z-step costs tens of nanoseconds).
const CON_GRAIN: usize = 32;

/// One ADMM constraint (a contact, or with split `none` a bilateral row) and its slack blocks
/// `z_ig`, one per group it touches: one or two for a constraint between bodies (stored inline),
/// any number for a contact of a linear problem (the Cholesky view of an FCLIB local problem).
pub(super) struct Con {
    law: RowLaw,
    dim: usize,
    /// `(unit, element)` of each block.
    blocks: SmallVec<[(usize, usize); 2]>,
    /// `z_ig` of each block.
    z: SmallVec<[[f64; 3]; 2]>,
    lam: [f64; 3],
}

impl Con {
    /// A constraint with no blocks yet and multiplier `lam`.
    pub fn new(law: RowLaw, dim: usize, lam: [f64; 3]) -> Self {
        Self { law, dim, blocks: SmallVec::new(), z: SmallVec::new(), lam }
    }

    /// Number of slack blocks so far.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Adds a slack block: element `elem` of unit `unit`.
    pub fn push_block(&mut self, unit: usize, elem: usize) {
        self.blocks.push((unit, elem));
        self.z.push([0.0; 3]);
    }

    /// `z_ig = J_ig v` with the units' current velocities.
    pub fn init_z(&mut self, units: &[Unit]) {
        for (z, &(u, e)) in self.z.iter_mut().zip(&self.blocks) {
            units[u].element_velocity(e, z);
        }
    }

    /// The z-step of Eqs. (36)–(38) in λ-form and the slack update `z_ig = J_ig v + Δλ/β` (35);
    /// returns `(‖λ^{l+1} − λ^l‖, ‖λ^{l+1}‖)`.
    fn z_step(&mut self, beta: f64, units: &[Unit]) -> (f64, f64) {
        let nz = self.blocks.len() as f64;
        let mut jv = [0.0; 3];
        // z_ig holds J_ig v until Δλ/β is added below
        for (z, &(u, e)) in self.z.iter_mut().zip(&self.blocks) {
            units[u].element_velocity(e, z);
            jv.iter_mut().zip(z.iter()).for_each(|(j, x)| *j += x);
        }
        let mut new = self.lam;
        match self.law {
            RowLaw::Contact { mu, bias, r_n } => {
                // the normal row's law u_n + r_n λ_n ≥ 0 ⊥ λ_n ≥ 0 enters as the bilateral row's
                // regularised update below, (n_z λ_n − β(J_n v + w))/(n_z + β r_n), written as the
                // paper's rigid x_n = λ_n − (β/n_z)(J_n v + w) divided by 1 + β r_n/n_z (so that
                // r_n = 0 is that update bit for bit), then the strict projection (Eq. 38)
                // (compliant contact: README §2)
                let x = [
                    (self.lam[0] - beta / nz * (jv[0] + bias)) / (1.0 + beta * r_n / nz),
                    self.lam[1] - beta / nz * jv[1],
                    self.lam[2] - beta / nz * jv[2],
                ];
                new = cone::project_strict(x, mu);
            }
            RowLaw::Bilateral { v_hat, r } => {
                new[0] = (beta * (v_hat - jv[0]) + nz * self.lam[0]) / (nz + beta * r);
            }
        }
        let d = self.dim;
        for z in self.z.iter_mut() {
            for k in 0..d {
                z[k] += (new[k] - self.lam[k]) / beta;
            }
        }
        let dl: f64 = (0..d).map(|k| (new[k] - self.lam[k]).powi(2)).sum();
        self.lam = new;
        (dl.sqrt(), new[..d].iter().map(|x| x * x).sum::<f64>().sqrt())
    }

    /// `β z_k + λ` for block `k` (the v-step weight, Eq. 34 in λ-form).
    fn weight(&self, k: usize, beta: f64) -> [f64; 3] {
        std::array::from_fn(|r| beta * self.z[k][r] + self.lam[r])
    }
}

/// The SubADMM solver.
pub struct SubAdmm {
    settings: SubAdmmSettings,
    split: Split,
    cons: Vec<Con>,
    units: Vec<Unit>,
    nc: usize,
    /// Bilateral row of each constraint after the contacts.
    bil: Vec<usize>,
    /// The FEM bodies' linearised implicit step (README §11, an extension): `A' = M + δt² K'` on
    /// their DOFs, `M` on the rigid bodies; `A' = M` without FEM bodies.
    elastic: ImplicitElastic,
    /// The solver's own thread pool (`threads > 1`), built once.
    pool: Option<rayon::ThreadPool>,
    /// Whether the pool exists (the steps run inside it, with the pool taken out of `self`).
    parallel: bool,
    /// Penalty of the last step (for tests).
    last_beta: f64,
    /// Symbolic analyses of sparse `K_q` so far (split `none`, units with FEM bodies).
    analyses: usize,
}

impl SubAdmm {
    /// A solver with validated settings.
    pub fn new(settings: SubAdmmSettings) -> Self {
        let pool = (settings.threads > 1)
            .then(|| rayon::ThreadPoolBuilder::new().num_threads(settings.threads).build().ok())
            .flatten();
        let parallel = pool.is_some();
        Self {
            split: settings.split,
            settings,
            cons: vec![],
            units: vec![],
            nc: 0,
            bil: vec![],
            elastic: ImplicitElastic::default(),
            pool,
            parallel,
            last_beta: 0.0,
            analyses: 0,
        }
    }

    /// The penalty at the end of the last step (kg).
    pub fn last_beta(&self) -> f64 {
        self.last_beta
    }

    /// Symbolic analyses of sparse unit matrices `K_q` so far (split `none`, and every unit with
    /// an FEM body): one per run while the units' patterns do not change (README §11).
    pub fn symbolic_analyses(&self) -> usize {
        self.analyses
    }

    /// Whether `n` items, at least `grain` per task, are worth spreading over the pool (with
    /// fewer than two tasks the rayon dispatch is pure overhead).
    fn spread(&self, n: usize, grain: usize) -> bool {
        self.parallel && n >= 2 * grain
    }

    /// Factors every unit for penalty `beta` (Algorithm 2, lines 6 and 16).
    fn factor_all(&mut self, beta: f64) -> Result<(), SolveError> {
        let r = if self.spread(self.units.len(), 1) {
            self.units.par_iter_mut().try_for_each(|u| u.factor(beta))
        } else {
            self.units.iter_mut().try_for_each(|u| u.factor(beta))
        };
        r.map_err(SolveError::from)
    }

    /// v-step (34) in every unit.
    fn v_step(&mut self, beta: f64) {
        let cons = &self.cons;
        let solve = |u: &mut Unit| u.solve(|el| cons[el.con].weight(el.block, beta));
        if self.spread(self.units.len(), 1) {
            self.units.par_iter_mut().for_each(solve);
        } else {
            self.units.iter_mut().for_each(solve);
        }
    }

    /// z-step (35)–(38) and `u = −λ` (39) for every constraint: `(max ‖Δλ_i‖, max ‖λ_i‖)`.
    fn z_step(&mut self, beta: f64) -> (f64, f64) {
        let units = &self.units;
        let step = |c: &mut Con| c.z_step(beta, units);
        if self.spread(self.cons.len(), CON_GRAIN) {
            self.cons.par_iter_mut().with_min_len(CON_GRAIN).map(step).reduce(|| (0.0, 0.0), max2)
        } else {
            self.cons.iter_mut().map(step).fold((0.0, 0.0), max2)
        }
    }

    /// `(θ_d, scale)` of (42): the largest unit dual residual and the largest `‖b_j‖`,
    /// `‖A'_j v_j‖`.
    fn dual_residual(&mut self) -> (f64, f64) {
        let cons = &self.cons;
        let dual = |u: &mut Unit| u.dual_residual(|el| cons[el.con].lam);
        if self.spread(self.units.len(), 1) {
            self.units.par_iter_mut().map(dual).reduce(|| (0.0, 0.0), max2)
        } else {
            self.units.iter_mut().map(dual).fold((0.0, 0.0), max2)
        }
    }

    /// The current iterate in the problem's layout: velocity, contact impulses, bilateral impulses.
    fn current(&mut self, p: &StepProblem<'_>) -> (Vec<f64>, Vec<[f64; 3]>, Vec<f64>) {
        let mut v = vec![0.0; p.nv()];
        for u in &self.units {
            for (&g, &x) in u.dofs.iter().zip(&u.v) {
                v[g] = x;
            }
        }
        let impulses: Vec<[f64; 3]> = self.cons[..self.nc].iter().map(|c| c.lam).collect();
        let mut bilateral = vec![0.0; p.nb()];
        for (&k, c) in self.bil.iter().zip(&self.cons[self.nc..]) {
            bilateral[k] = c.lam[0];
        }
        let cons = &self.cons;
        for u in &mut self.units {
            u.joint_impulses(|el| cons[el.con].lam, &mut bilateral);
        }
        (v, impulses, bilateral)
    }

    /// One step inside the solver's pool (if any).
    fn solve_step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let reuse = self.units.iter_mut().filter_map(Unit::take_sparse).collect();
        let s = self.settings.clone();
        let built = setup::build(p, self.split, s.warm_start, s.beta0, &mut self.elastic, reuse)?;
        (self.units, self.cons, self.nc, self.bil) = (built.units, built.cons, built.nc, built.bil);
        self.analyses += built.analyses;
        let mut beta = built.beta;
        let beta_bounds = (beta / s.beta_range, beta * s.beta_range);
        self.factor_all(beta)?;
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        let mut last_adapt = 0;
        for l in 1..=s.max_iterations {
            iterations = l;
            self.v_step(beta);
            let (dl_max, lam_max) = self.z_step(beta);
            // residuals (42): θ_p = max ||J_ij v_j − z_ij|| = max ||Δλ_i|| / β; θ_d per unit
            let theta_p = dl_max / beta;
            let (theta_d, scale) = self.dual_residual();
            let primal_rel = dl_max / lam_max.max(TINY);
            let dual_rel = theta_d / scale.max(TINY);
            if !(theta_p.is_finite() && theta_d.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("SubADMM residuals at iteration {l}") });
            }
            log.record(&[
                ("primal_max", theta_p),
                ("dual_max", theta_d),
                ("primal_rel", primal_rel),
                ("dual_rel", dual_rel),
                ("beta", beta),
            ]);
            if log.wants_iterates() {
                let (v, impulses, bilateral) = self.current(p);
                log.iterate(&v, &impulses, &bilateral);
            }
            if log.should_stop() {
                status = log.stop_status();
                break;
            }
            if primal_rel < s.tolerance && dual_rel < s.tolerance {
                status = SolveStatus::Solved;
                break;
            }
            // adaptive penalty (43), unit-consistent: compare β θ_p (N s) with θ_d (N s)
            if s.gamma > 0.0 && l - last_adapt >= s.adapt_interval && theta_p > 0.0 && theta_d > 0.0 {
                let (pp, dd) = (beta * theta_p, theta_d);
                let next = (beta * (pp / dd).sqrt().clamp(0.01, 100.0)).clamp(beta_bounds.0, beta_bounds.1);
                if (pp > s.gamma * dd || dd > s.gamma * pp) && next != beta {
                    beta = next;
                    last_adapt = l;
                    self.factor_all(beta)?;
                }
            }
        }
        self.last_beta = beta;
        let (v, impulses, bilateral) = self.current(p);
        if v.iter().chain(impulses.iter().flatten()).any(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite { what: "SubADMM velocity or impulses".into() });
        }
        Ok(StepSolution { v, q: None, impulses, bilateral, iterations, status })
    }
}

/// Componentwise maximum that propagates NaN (so non-finite residuals are caught).
fn max2(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let m = |x: f64, y: f64| if x.is_nan() || y.is_nan() { f64::NAN } else { x.max(y) };
    (m(a.0, b.0), m(a.1, b.1))
}

impl Solver for SubAdmm {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let pool = self.pool.take();
        let r = match &pool {
            Some(pool) => pool.install(|| self.solve_step(p, log)),
            None => self.solve_step(p, log),
        };
        self.pool = pool;
        r
    }
}
