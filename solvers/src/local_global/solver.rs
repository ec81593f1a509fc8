//! [`LocalGlobal`]: one time step of Zeng et al.'s non-smooth constrained local-global method
//! (Algorithm 4).

use super::contact_step::{constrained_update, contact_rows, ConstraintWork};
use super::local_step::{global_rhs, local_step};
use super::model::{Model, ModelKey, Vec12};
use super::problem::{check_supported, fixed_dofs, warm_start, ContactSystem, Predictor};
use super::reference::newton_reference;
use super::settings::{GlobalSolve, LocalGlobalSettings, RFactor};
use harness::{IterationLog, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::backend::AnyBackend;
use kernels::iterative::KrylovWorkspace;
use kernels::ncp::Ncp;
use std::time::Instant;

/// The local-global solver. Keeps the constant model (`A`, `S` or the Cholesky factor) between
/// steps while the time step, meshes and prescribed DOFs stay the same.
pub struct LocalGlobal {
    settings: LocalGlobalSettings,
    ncp: Ncp,
    global: GlobalSolve,
    r_factor: RFactor,
    /// The compute backend of the run (`--backend` through `SolverContext`; the CPU by default).
    backend: AnyBackend,
    model: Option<Model>,
    /// Per-element local-step results `(w Gᵀ p, PD energy)` (scratch).
    local: Vec<(Vec12, f64)>,
    /// Work vectors of the constraint solves (Eq. 26), reused across iterations and steps.
    krylov: KrylovWorkspace,
}

impl LocalGlobal {
    /// A solver with validated settings on `backend` (the run's `--backend`).
    pub fn with_backend(settings: LocalGlobalSettings, backend: AnyBackend) -> Self {
        Self { backend, ..Self::new(settings) }
    }

    /// A solver with validated settings.
    pub fn new(settings: LocalGlobalSettings) -> Self {
        let (ncp, global, r_factor) = (settings.ncp, settings.global_solve, settings.r_factor);
        Self {
            settings,
            ncp,
            global,
            r_factor,
            backend: AnyBackend::default(),
            model: None,
            local: vec![],
            krylov: KrylovWorkspace::default(),
        }
    }

    /// Memory of the sparse inverse factor of the current model (after a step with
    /// `global_solve = sparse_inverse`).
    pub fn inverse_memory(&self) -> Option<kernels::sparse_inverse::InverseMemory> {
        match self.model.as_ref().map(|m| &m.inverse) {
            Some(super::model::GlobalInverse::SparseInverse(s)) => Some(s.memory()),
            _ => None,
        }
    }
}

impl LocalGlobal {
    /// The constant model for `p` (Algorithm 4 line 1): kept while its [`ModelKey`] holds.
    fn ensure_model(&mut self, p: &StepProblem<'_>, fixed: &[bool]) -> Result<(), SolveError> {
        let key = ModelKey::of(p.model(), p.dt, fixed);
        if !self.model.as_ref().is_some_and(|m| m.key == key) {
            self.model = None;
            self.model = Some(Model::build(p, key, fixed, self.global)?);
        }
        Ok(())
    }
}

impl Solver for LocalGlobal {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.settings.clone();
        let (h, nc) = (p.dt, p.nc());
        let h2 = h * h;
        check_supported(p)?;
        // per-stage CPU times (README, "CPU timing"): setup, local, global, contact
        let setup_start = Instant::now();
        let fixed = fixed_dofs(p);
        // constant model: A, S (once per scene, Algorithm 4 line 1)
        self.ensure_model(p, &fixed)?;
        let backend = self.backend.clone();
        let model = self.model.as_mut().expect("built above");
        let nf = model.free.len();
        let pred = Predictor::new(p, model)?;
        let mut q = pred.q_start.clone();
        // optional ground truth q* (contact-free steps)
        let reference = if s.reference && nc == 0 {
            let (_, e_star, _) = newton_reference(p, &pred.q_tilde, &q, &fixed)?;
            Some(e_star)
        } else {
            None
        };
        let cs = ContactSystem::new(p, model, self.r_factor);
        let mut lam = warm_start(p, &s, model, &cs, &backend, &mut q);
        let mut x: Vec<f64> = model.free.iter().map(|&k| q[k]).collect();
        let (mut x_free, mut b, mut tmp, mut gvec) = (vec![0.0; nf], vec![0.0; nf], vec![0.0; nf], vec![0.0; p.nv()]);
        let mut omega = vec![1.0; 3 * nc];
        self.local.resize(model.elements.len(), (Vec12::zeros(), 0.0));
        log.add_stage("setup", setup_start.elapsed().as_secs_f64());
        let (mut status, mut iterations, mut e_first) = (SolveStatus::MaxIterations, 0, f64::NAN);
        let record_energy = |e: f64, e_first: f64| -> Vec<(&'static str, f64)> {
            let mut row = vec![("incremental_potential_j", e)];
            if let Some(es) = reference {
                row.push(("energy_rel_error", (e - es) / (e_first - es)));
            }
            row
        };
        for k in 0..=s.iterations {
            // (a) local step at q^k, in parallel over elements (Eq. 5): p_i = P_i(G_i q^k)
            let t = Instant::now();
            let energy = local_step(p.model(), model, &q, &pred.q_tilde, h2, &mut self.local);
            log.add_stage("local", t.elapsed().as_secs_f64());
            if k == 0 {
                e_first = energy;
            }
            if !energy.is_finite() {
                return Err(SolveError::NonFinite { what: format!("local step at iteration {k}") });
            }
            if k == s.iterations {
                log.record(&record_energy(energy, e_first));
                break;
            }
            // (b) b^k = M q̃ + h² Σ w Gᵀ p (Eq. 6), free rows, minus A_fp q_p
            let t = Instant::now();
            global_rhs(model, &self.local, &pred.b_const, h2, &mut gvec, &mut b);
            // (c) global step q_free = A⁻¹ b (Eq. 8: Sᵀ(S b); or triangular solves; or Jacobi)
            model.global_step(&backend, &b, &x, &mut tmp, &mut x_free);
            log.add_stage("global", t.elapsed().as_secs_f64());
            let t = Instant::now();
            let mut row = record_energy(energy, e_first);
            let change = if nc == 0 {
                let change = x.iter().zip(&x_free).fold(0.0f64, |mm, (a, c)| mm.max((a - c).abs()));
                x.copy_from_slice(&x_free);
                row.push(("dq_rel_linf", change / pred.scale_q));
                change
            } else {
                // (d)–(e) constraint values and NCP rows at q^k; (f)–(j) the constrained update
                let rows = contact_rows(&backend, self.ncp, &cs, &q, &p.q0, &lam, h, omega);
                if !rows.phi.iter().chain(&rows.ediag).all(|v| v.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("NCP rows at iteration {k}") });
                }
                let work = ConstraintWork {
                    backend: &backend,
                    krylov: &mut self.krylov,
                    cr_iterations: s.cr_iterations,
                    cr_jacobi: s.cr_jacobi,
                };
                let (change, info) = constrained_update(model, &cs, &rows, work, h, &mut x, &x_free, &mut lam, k)?;
                row.extend([
                    ("dq_rel_linf", change / pred.scale_q),
                    ("ncp_normal_linf_m", rows.phi_n_max),
                    ("ncp_friction_linf_mps", rows.phi_f_max),
                    ("n_stick", rows.n_stick as f64),
                    ("n_slip", rows.n_slip as f64),
                    ("cr_iterations", info.iterations as f64),
                    ("cr_rel_residual", info.rel_residual),
                ]);
                omega = rows.omega;
                change
            };
            log.add_stage("contact", t.elapsed().as_secs_f64());
            log.record(&row);
            log.check_deadline()?;
            for (i, &kk) in model.free.iter().enumerate() {
                q[kk] = x[i];
            }
            iterations = k + 1;
            if log.wants_iterates() {
                let it = finish(p, &s, q.clone(), &lam, &omega, iterations, status);
                log.iterate(&it.v, &it.impulses, &it.bilateral);
            }
            if s.tolerance > 0.0 && change <= s.tolerance * pred.scale_q {
                status = SolveStatus::Solved;
                // without contacts one more local step is not needed: q is the returned iterate
                break;
            }
        }
        Ok(finish(p, &s, q, &lam, &omega, iterations, status))
    }
}

/// The step's solution from the last iterate: `v = (q − q_t)/h` with prescribed DOFs exactly at
/// their required velocity, impulses `h Ω λ` (what the returned `q` was corrected with, FCLIB
/// order `(n, t1, t2)`). With `tolerance = 0` the paper's fixed iteration budget (§7.1) is the
/// stopping rule, and the step counts as solved.
fn finish(
    p: &StepProblem<'_>,
    s: &LocalGlobalSettings,
    mut q: Vec<f64>,
    lam: &[f64],
    omega: &[f64],
    iterations: usize,
    status: SolveStatus,
) -> StepSolution {
    let h = p.dt;
    let status = if s.tolerance == 0.0 { SolveStatus::Solved } else { status };
    let mut v: Vec<f64> = q.iter().zip(&p.q0).map(|(a, c)| (a - c) / h).collect();
    for &(k, val) in &p.prescribed {
        v[k] = val;
        q[k] = p.q0[k] + h * val;
    }
    let impulses = (0..p.nc())
        .map(|i| {
            let o = omega;
            [h * o[3 * i] * lam[3 * i], h * o[3 * i + 1] * lam[3 * i + 1], h * o[3 * i + 2] * lam[3 * i + 2]]
        })
        .collect();
    StepSolution { v, q: Some(q), impulses, bilateral: vec![], iterations, status }
}
