//! [`Pgs`]: per-step setup (Delassus blocks, warm start), the Gauss–Seidel sweeps over joint rows
//! and contacts, and the stopping test.

use super::settings::PgsSettings;
use harness::contact_blocks::ContactBlocks;
use harness::implicit::ImplicitElastic;
use harness::{IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::cone;

/// Denominator floor of the relative change when every impulse is zero.
const TINY: f64 = f64::MIN_POSITIVE;

/// Projected Gauss–Seidel on the velocity-level Coulomb NCP with the exact friction cone. See the
/// module documentation and `solvers/src/pgs/README.md` for the method.
///
/// The struct keeps its buffers between steps, so a step allocates only its returned solution and
/// a few per-step vectors (the free velocity, one mass-block inverse per body), never per sweep.
///
/// Deformable (FEM) bodies take the linearised implicit step of `harness::implicit`: PGS then
/// works on the Delassus operator `W = J A⁻¹ Jᵀ` of `A = M + δt² K` (README "Deformable bodies").
#[derive(Debug)]
pub struct Pgs {
    settings: PgsSettings,
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
}

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
        }
    }

    /// The settings.
    pub fn settings(&self) -> &PgsSettings {
        &self.settings
    }

    /// Builds the per-contact and per-joint-row blocks, `v*`, and the starting impulses and velocity.
    fn setup(&mut self, p: &StepProblem<'_>) -> Result<(), SolveError> {
        self.contacts.assemble_implicit(p, &mut self.elastic)?;
        self.vstar = p.free_velocity();
        // deformable DOFs: the linearised implicit step's v* (prescribed DOFs at v̄_P)
        if p.layout.has_deformables() {
            let start = self.elastic.start();
            self.vstar[start..].copy_from_slice(self.elastic.v_star());
        }
        if self.vstar.len() != p.nv() {
            return Err(SolveError::Unsupported {
                what: format!("free velocity has {} entries, layout {}", self.vstar.len(), p.nv()),
            });
        }
        if !self.vstar.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "free velocity v*".into() });
        }
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

impl Solver for Pgs {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("pgs settings: {e}") })?;
        let local = self.settings.local;
        let (omega, tolerance) = (self.settings.omega, self.settings.tolerance);
        self.setup(p)?;

        let mut iterations = 0;
        let mut status = SolveStatus::Solved;
        if !self.contacts.blocks.is_empty() || !self.contacts.bilateral.is_empty() {
            status = SolveStatus::MaxIterations;
            for k in 1..=self.settings.max_iterations {
                let (mut change, mut size) = (0.0f64, 0.0f64);
                // joint rows first, then the contacts, in one sweep (as Box2D and Bullet order
                // them): the row's exact scalar solve, unclamped, relaxed by ω
                for (j, (b, g)) in self.contacts.bilateral.iter().zip(self.gamma.iter_mut()).enumerate() {
                    let new = *g + omega * (b.solve(&self.v, *g) - *g);
                    if !new.is_finite() {
                        return Err(SolveError::NonFinite {
                            what: format!("impulse of bilateral row {j} at sweep {k}"),
                        });
                    }
                    b.apply(new - *g, &mut self.v);
                    change = change.max((new - *g).abs());
                    size = size.max(new.abs());
                    *g = new;
                }
                for (i, (b, lam)) in self.contacts.blocks.iter().zip(self.lambda.iter_mut()).enumerate() {
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
                let (natmap_ref, natmap_model) = self.contacts.residuals(&self.v, &self.lambda);
                let joint_residual = self
                    .contacts
                    .bilateral
                    .iter()
                    .zip(&self.gamma)
                    .fold(0.0f64, |m, (b, g)| m.max(b.residual(&self.v, *g).abs()));
                log.record(&[
                    ("rel_change_linf", rel_change),
                    ("natmap_abs_l2", natmap_ref),
                    ("natmap_model_abs_l2", natmap_model),
                    ("bilateral_abs_linf", joint_residual),
                ]);
                log.iterate(&self.v, &self.lambda, &self.gamma);
                log.check_deadline()?;
                iterations = k;
                if rel_change < tolerance {
                    status = SolveStatus::Solved;
                    break;
                }
            }
        }

        // Recompute v = v* + M⁻¹ (Jᵀ λ + Gᵀ γ) from scratch, dropping the round-off of the
        // incremental updates.
        self.v.copy_from_slice(&self.vstar);
        for (b, lam) in self.contacts.blocks.iter().zip(&self.lambda) {
            b.apply(*lam, &mut self.v);
        }
        for (b, g) in self.contacts.bilateral.iter().zip(&self.gamma) {
            b.apply(*g, &mut self.v);
        }
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
