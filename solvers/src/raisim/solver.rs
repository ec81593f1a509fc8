//! [`Raisim`]: the per-step setup and the Gauss–Seidel sweep of exact per-contact solves
//! (`local.rs`), on a step (per-contact blocks, `toolkit::contact_blocks`) or on a problem in
//! Delassus form (`W` as given).

use super::local::{self, Case};
use super::settings::RaisimSettings;
use api::{
    DelassusProblem, DelassusSolution, IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem,
    StepSolution,
};
use kernels::cone;
use kernels::contact_local::LocalProblem;
use toolkit::contact_blocks::ContactBlocks;
use toolkit::implicit::ImplicitElastic;

/// RaiSim's per-contact iteration (module doc of `raisim`; README).
#[derive(Debug)]
pub struct Raisim {
    settings: RaisimSettings,
    /// Per-contact and per-row blocks of the step.
    contacts: ContactBlocks,
    /// The deformable bodies' linearised implicit step.
    elastic: ImplicitElastic,
    /// Contact impulses of the iterate (N s).
    lambda: Vec<[f64; 3]>,
    /// Joint-row impulses of the iterate (N s).
    gamma: Vec<f64>,
    /// Free velocity `v*`.
    vstar: Vec<f64>,
    /// Velocity of the iterate, `v* + M⁻¹ (Jᵀ λ + Gᵀ γ)`.
    v: Vec<f64>,
}

/// `λ + α (target − λ)`.
fn relax(lambda: [f64; 3], target: [f64; 3], alpha: f64) -> [f64; 3] {
    [0, 1, 2].map(|a| lambda[a] + alpha * (target[a] - lambda[a]))
}

/// The log row of a sweep: relative change, and how many contacts slid (by bisection or the
/// fallback).
fn sweep_columns(rel_change: f64, cases: &[usize; 2]) -> [(&'static str, f64); 3] {
    [("rel_change_linf", rel_change), ("slides", cases[0] as f64), ("fallbacks", cases[1] as f64)]
}

impl Raisim {
    /// A solver with the given settings.
    pub fn new(settings: RaisimSettings) -> Self {
        Self {
            settings,
            contacts: ContactBlocks::default(),
            elastic: ImplicitElastic::default(),
            lambda: vec![],
            gamma: vec![],
            vstar: vec![],
            v: vec![],
        }
    }

    fn validated(&self) -> Result<RaisimSettings, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("raisim settings: {e}") })?;
        Ok(self.settings.clone())
    }

    /// Blocks, `v*`, warm-started impulses and the starting velocity.
    fn setup(&mut self, p: &StepProblem<'_>, warm: bool) -> Result<(), SolveError> {
        self.contacts.assemble_implicit(p, &mut self.elastic)?;
        // deformable DOFs: the linearised implicit step's v* (prescribed DOFs at v̄_P)
        self.elastic.free_velocity(p, &mut self.vstar)?;
        self.lambda.clear();
        for (i, b) in self.contacts.blocks.iter().enumerate() {
            let w = if warm && !b.local.is_inert() { p.warm_impulse(i) } else { None };
            self.lambda.push(match w {
                Some(l) if l.iter().all(|x| x.is_finite()) => cone::project(l, b.local.mu),
                _ => [0.0; 3],
            });
        }
        self.gamma.clear();
        for k in 0..self.contacts.bilateral.len() {
            self.gamma.push(if warm { p.warm_bilateral(k).filter(|g| g.is_finite()).unwrap_or(0.0) } else { 0.0 });
        }
        self.recompute_velocity();
        Ok(())
    }

    /// `v = v* + M⁻¹ (Jᵀ λ + Gᵀ γ)` from scratch.
    fn recompute_velocity(&mut self) {
        self.v.clone_from(&self.vstar);
        for (b, l) in self.contacts.blocks.iter().zip(&self.lambda) {
            b.apply(*l, &mut self.v);
        }
        for (b, g) in self.contacts.bilateral.iter().zip(&self.gamma) {
            b.apply(*g, &mut self.v);
        }
    }
}

impl Solver for Raisim {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.validated()?;
        self.setup(p, s.warm_start)?;
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        for k in 1..=s.max_iterations {
            let (mut change, mut size, mut cases) = (0.0f64, 0.0f64, [0usize; 2]);
            for (b, g) in self.contacts.bilateral.iter().zip(self.gamma.iter_mut()) {
                let new = b.solve(&self.v, *g);
                b.apply(new - *g, &mut self.v);
                change = change.max((new - *g).abs());
                size = size.max(new.abs());
                *g = new;
            }
            for (i, (b, lam)) in self.contacts.blocks.iter().zip(self.lambda.iter_mut()).enumerate() {
                if b.local.is_inert() {
                    continue;
                }
                let (target, case) = local::solve(&b.local, b.velocity(&self.v), *lam);
                let new = relax(*lam, target, s.relaxation);
                if !new.iter().all(|x| x.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("impulse of contact {i} at sweep {k}") });
                }
                match case {
                    Case::Slide => cases[0] += 1,
                    Case::Fallback => cases[1] += 1,
                    Case::Open | Case::Stick => {}
                }
                b.apply([0, 1, 2].map(|a| new[a] - lam[a]), &mut self.v);
                change = (0..3).fold(change, |m, a| m.max((new[a] - lam[a]).abs()));
                size = new.iter().fold(size, |m, x| m.max(x.abs()));
                *lam = new;
            }
            let rel_change = change / size.max(f64::MIN_POSITIVE);
            let (natmap, model) = self.contacts.residuals(&self.v, &self.lambda);
            let [a, b, c] = sweep_columns(rel_change, &cases);
            log.record(&[a, b, c, ("natmap_abs_l2", natmap), ("natmap_model_abs_l2", model)]);
            log.iterate(&self.v, &self.lambda, &self.gamma);
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

    fn solve_delassus(&mut self, p: &DelassusProblem, log: &mut IterationLog) -> Result<DelassusSolution, SolveError> {
        let s = self.validated()?;
        let nc = p.nc();
        let locals: Vec<LocalProblem> =
            (0..nc).map(|i| LocalProblem::new(*p.diagonal(i), p.mu()[i], 0.0, 0.0)).collect();
        let mut r = vec![[0.0; 3]; nc];
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        for k in 1..=s.max_iterations {
            let (mut change, mut size, mut cases) = (0.0f64, 0.0f64, [0usize; 2]);
            for (i, l) in locals.iter().enumerate() {
                if l.is_inert() {
                    continue;
                }
                let (target, case) = local::solve(l, p.velocity_of(i, &r), r[i]);
                let new = relax(r[i], target, s.relaxation);
                if !new.iter().all(|x| x.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("impulse of contact {i} at sweep {k}") });
                }
                match case {
                    Case::Slide => cases[0] += 1,
                    Case::Fallback => cases[1] += 1,
                    Case::Open | Case::Stick => {}
                }
                change = (0..3).fold(change, |m, a| m.max((new[a] - r[i][a]).abs()));
                size = new.iter().fold(size, |m, x| m.max(x.abs()));
                r[i] = new;
            }
            let rel_change = change / size.max(f64::MIN_POSITIVE);
            let natmap = (0..nc)
                .map(|i| {
                    let f = kernels::contact_local::natmap(r[i], p.velocity_of(i, &r), p.mu()[i]);
                    f.iter().map(|x| x * x).sum::<f64>()
                })
                .sum::<f64>()
                .sqrt();
            let [a, b, c] = sweep_columns(rel_change, &cases);
            log.record(&[a, b, c, ("natmap_abs_l2", natmap)]);
            log.iterate(&[], &r, &[]);
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
        Ok(DelassusSolution { impulses: r, iterations, status })
    }
}
