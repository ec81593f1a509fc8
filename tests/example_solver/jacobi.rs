//! The example solver itself: a projected Jacobi method written against the solver API alone
//! (`api`, and `kernels` for the cone projection and the exact per-contact solve), the way
//! `docs/adding-a-solver.md` says. It imports nothing of the harness, the toolkit or the other
//! solvers.
//!
//! Method: per sweep every contact's local problem is solved against the *same* iterate
//! `v = v* + M⁻¹ Jᵀ λ` (Jacobi, unlike Gauss–Seidel's freshest velocity), and all impulses move by
//! the relaxation `ω`: `λ ← P_K(λ + ω (λ_local − λ))`. Simultaneous updates of coupled contacts
//! overshoot, so `ω` must be small where many contacts share a body (default 0.3).

use api::{
    AnsweredModel, Bound, Capabilities, FieldError, IterationLog, Settings, SolveError, SolveStatus, Solver,
    SolverContext, SolverDef, StepProblem, StepSolution,
};
use kernels::cone;
use kernels::contact_local::{natmap, Local, LocalProblem};
use serde::{Deserialize, Serialize};

/// Options of the projected Jacobi solver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JacobiSettings {
    /// Most sweeps per step (default 2000).
    max_iterations: usize,
    /// Stop when the largest impulse change over the largest impulse is below it (default 1e-8).
    tolerance: f64,
    /// Relaxation `ω` in (0, 1] of the simultaneous update (default 0.3).
    relaxation: f64,
}

impl Default for JacobiSettings {
    fn default() -> Self {
        Self { max_iterations: 2000, tolerance: 1e-8, relaxation: 0.3 }
    }
}

impl Settings for JacobiSettings {
    fn validate(&self) -> Result<(), FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        api::check_in("relaxation", self.relaxation, Bound::Open(0.0), Bound::Closed(1.0))
    }
}

/// One side of a contact: its Jacobian rows `J_ib` on body `b` and `M_b⁻¹ J_ibᵀ` there.
struct Side {
    v_offset: usize,
    ncols: usize,
    j: [[f64; 6]; 3],
    g: [[f64; 3]; 6],
}

/// One contact: its sides, its local problem (Delassus block `W_ii = Σ_b J_ib M_b⁻¹ J_ibᵀ`, `μ`,
/// normal law) and the gap bias `φ/dt` of the reference NCP.
struct Block {
    sides: Vec<Side>,
    local: LocalProblem,
    bias_n: f64,
}

impl Block {
    /// `J_i v`.
    fn velocity(&self, v: &[f64]) -> [f64; 3] {
        let mut u = [0.0; 3];
        for s in &self.sides {
            for (ur, row) in u.iter_mut().zip(&s.j) {
                *ur += row[..s.ncols].iter().zip(&v[s.v_offset..]).map(|(a, b)| a * b).sum::<f64>();
            }
        }
        u
    }

    /// `v += M⁻¹ J_iᵀ d` (touches only the contact's bodies).
    fn apply(&self, d: [f64; 3], v: &mut [f64]) {
        for s in &self.sides {
            for (vc, g) in v[s.v_offset..s.v_offset + s.ncols].iter_mut().zip(&s.g) {
                *vc += g[0] * d[0] + g[1] * d[1] + g[2] * d[2];
            }
        }
    }
}

/// Projected Jacobi on the velocity-level Coulomb NCP with the exact cone.
pub struct ProjectedJacobi {
    settings: JacobiSettings,
    blocks: Vec<Block>,
    lambda: Vec<[f64; 3]>,
    target: Vec<[f64; 3]>,
    v: Vec<f64>,
}

impl SolverDef for ProjectedJacobi {
    type Settings = JacobiSettings;
    const NAME: &'static str = "jacobi";
    const SUMMARY: &'static str = "projected Jacobi with relaxation (test-only example)";
    const PAPER: &'static str = "Projected Jacobi: Acary & Brogliato, Numerical Methods for Nonsmooth Dynamical \
                                 Systems (2008), ch. 12";
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        Capabilities {
            rigid_bodies: true,
            rigid_contact: true,
            compliant_contact: true,
            exact_friction_cone: true,
            ..Capabilities::default()
        }
    }
    fn from_settings(settings: JacobiSettings, _: &SolverContext) -> Self {
        Self { settings, blocks: vec![], lambda: vec![], target: vec![], v: vec![] }
    }
}

impl ProjectedJacobi {
    /// The contacts' blocks from the problem: rigid bodies only (what the capabilities claim),
    /// each Jacobian block on exactly one body's DOF block.
    fn assemble(&mut self, p: &StepProblem<'_>) -> Result<(), SolveError> {
        let minv: Vec<_> = (0..p.mass.blocks().len()).map(|b| p.mass.block_inverse(b)).collect();
        self.blocks.clear();
        for (i, c) in p.contacts.contacts.iter().enumerate() {
            let mut w = [[0.0; 3]; 3];
            let mut sides = Vec::with_capacity(c.jacobian.len());
            for jb in &c.jacobian {
                let unsupported = || SolveError::Unsupported { what: format!("contact {i}: not on one rigid body") };
                let b =
                    p.layout.blocks.binary_search_by_key(&jb.v_offset, |b| b.v_offset).map_err(|_| unsupported())?;
                if p.layout.blocks[b].nv != jb.ncols {
                    return Err(unsupported());
                }
                let n = jb.ncols;
                let mut side = Side { v_offset: jb.v_offset, ncols: n, j: jb.rows, g: [[0.0; 3]; 6] };
                for (col, g) in side.g.iter_mut().enumerate().take(n) {
                    for (r, x) in g.iter_mut().enumerate() {
                        *x = (0..n).map(|k| minv[b][(col, k)] * jb.rows[r][k]).sum();
                    }
                }
                for (r, wr) in w.iter_mut().enumerate() {
                    for (s, x) in wr.iter_mut().enumerate() {
                        *x += (0..n).map(|k| jb.rows[r][k] * side.g[k][s]).sum::<f64>();
                    }
                }
                sides.push(side);
            }
            let (v_hat, r_n) = p.normal_law(i);
            self.blocks.push(Block { sides, local: LocalProblem::new(w, c.mu, v_hat, r_n), bias_n: p.bias(i)[0] });
        }
        Ok(())
    }

    /// The natural map of the rigid Coulomb NCP, `‖F‖₂` over the contacts (the harness's
    /// `natmap_abs_l2`).
    fn natmap(&self) -> f64 {
        let sq = |(b, lam): (&Block, &[f64; 3])| {
            let u = b.velocity(&self.v);
            natmap(*lam, [u[0] + b.bias_n, u[1], u[2]], b.local.mu).iter().map(|x| x * x).sum::<f64>()
        };
        self.blocks.iter().zip(&self.lambda).map(sq).sum::<f64>().sqrt()
    }
}

impl Solver for ProjectedJacobi {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.assemble(p)?;
        let vstar = p.free_velocity();
        self.v.clone_from(&vstar);
        self.lambda.clear();
        self.lambda.resize(self.blocks.len(), [0.0; 3]);
        let omega = self.settings.relaxation;
        let (mut iterations, mut status) = (0, SolveStatus::Solved);
        if !self.blocks.is_empty() {
            status = SolveStatus::MaxIterations;
            for k in 1..=self.settings.max_iterations {
                // every local problem against the same iterate
                self.target.clear();
                for (b, lam) in self.blocks.iter().zip(&self.lambda) {
                    let t = b.local.solve(Local::Split, b.velocity(&self.v), *lam);
                    self.target.push(cone::project([0, 1, 2].map(|r| lam[r] + omega * (t[r] - lam[r])), b.local.mu));
                }
                let (mut change, mut size) = (0.0f64, 0.0f64);
                for ((b, lam), new) in self.blocks.iter().zip(self.lambda.iter_mut()).zip(&self.target) {
                    if !new.iter().all(|x| x.is_finite()) {
                        return Err(SolveError::NonFinite { what: format!("impulse at sweep {k}") });
                    }
                    let d = [0, 1, 2].map(|r| new[r] - lam[r]);
                    b.apply(d, &mut self.v);
                    *lam = *new;
                    change = d.iter().fold(change, |m, x| m.max(x.abs()));
                    size = new.iter().fold(size, |m, x| m.max(x.abs()));
                }
                let rel_change = change / size.max(f64::MIN_POSITIVE);
                log.record(&[("rel_change_linf", rel_change), ("natmap_abs_l2", self.natmap())]);
                log.iterate(&self.v, &self.lambda, &[]);
                iterations = k;
                if log.should_stop() {
                    status = log.stop_status();
                    break;
                }
                if rel_change < self.settings.tolerance {
                    status = SolveStatus::Solved;
                    break;
                }
            }
        }
        self.v.clone_from(&vstar);
        for (b, lam) in self.blocks.iter().zip(&self.lambda) {
            b.apply(*lam, &mut self.v);
        }
        Ok(StepSolution {
            v: self.v.clone(),
            q: None,
            impulses: self.lambda.clone(),
            bilateral: vec![],
            iterations,
            status,
        })
    }
}
