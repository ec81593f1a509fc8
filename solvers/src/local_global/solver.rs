//! [`LocalGlobal`]: one time step of Zeng et al.'s non-smooth constrained local-global method
//! (Algorithm 4): the host setup (constant model, predictor, contact system), then the
//! device-resident iteration ([`super::resident`]) on the run's backend.

use super::model::{Model, ModelKey};
use super::problem::{check_supported, fixed_dofs, warm_lambda, ContactSystem, Predictor};
use super::reference::newton_reference;
use super::resident::{run_step, DeviceModel, StepData, StepResult, StepTransfers};
use super::settings::{GlobalSolve, LocalGlobalSettings, RFactor};
use api::{IterationLog, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::backend::{AnyBackend, HostMirror};
use kernels::ncp::Ncp;
use std::time::Instant;

/// The constant model on each memory layer the solver may run on (uploaded once per
/// factorisation; dropped when the model is rebuilt).
#[derive(Default)]
struct DeviceModels {
    /// The CPU backend's memory layer: host memory counted as a device.
    mirror: HostMirror,
    on_mirror: Option<DeviceModel<HostMirror>>,
    #[cfg(feature = "gpu")]
    on_f64: Option<DeviceModel<kernels::gpu::Device<f64>>>,
    #[cfg(feature = "gpu")]
    on_f32: Option<DeviceModel<kernels::gpu::Device<f32>>>,
}

impl DeviceModels {
    fn clear(&mut self) {
        self.on_mirror = None;
        #[cfg(feature = "gpu")]
        {
            self.on_f64 = None;
            self.on_f32 = None;
        }
    }
}

/// The local-global solver. Keeps the constant model (`A`, `S` or the Cholesky factor, and its
/// device copy) between steps while the time step, meshes and prescribed DOFs stay the same.
pub struct LocalGlobal {
    settings: LocalGlobalSettings,
    ncp: Ncp,
    global: GlobalSolve,
    r_factor: RFactor,
    /// The compute backend of the run (`--backend` through `SolverContext`; the CPU by default).
    backend: AnyBackend,
    model: Option<Model>,
    device: DeviceModels,
    last_transfers: Option<StepTransfers>,
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
            device: DeviceModels::default(),
            last_transfers: None,
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

    /// The host↔device transfers of the last successful step, by phase (on the CPU backend,
    /// those of its host mirror).
    pub fn last_transfers(&self) -> Option<StepTransfers> {
        self.last_transfers
    }
}

impl LocalGlobal {
    /// The constant model for `p` (Algorithm 4 line 1): kept while its [`ModelKey`] holds.
    fn ensure_model(&mut self, p: &StepProblem<'_>, fixed: &[bool]) -> Result<(), SolveError> {
        let key = ModelKey::of(p.model(), p.dt, fixed);
        if !self.model.as_ref().is_some_and(|m| m.key == key) {
            self.model = None;
            self.device.clear();
            self.model = Some(Model::build(p, key, fixed, self.global)?);
        }
        Ok(())
    }
}

impl Solver for LocalGlobal {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.settings.clone();
        check_supported(p)?;
        self.last_transfers = None;
        // per-stage times (README, "CPU timing"): setup, local, global, contact
        let setup_start = Instant::now();
        let fixed = fixed_dofs(p);
        // constant model: A, S (once per scene, Algorithm 4 line 1)
        self.ensure_model(p, &fixed)?;
        let model = self.model.as_mut().expect("built above");
        let pred = Predictor::new(p, model)?;
        // optional ground truth q* (contact-free steps)
        let reference = if s.reference && p.nc() == 0 {
            let (_, e_star, _) = newton_reference(p, &pred.q_tilde, &pred.q_start, &fixed)?;
            Some(e_star)
        } else {
            None
        };
        let cs = ContactSystem::new(p, model, self.r_factor);
        let lam0 = warm_lambda(p, &s);
        let data = StepData { p, s: &s, ncp: self.ncp, model, pred: &pred, cs: &cs, lam0, reference, setup_start };
        let dev = &mut self.device;
        let (res, transfers) = match &self.backend {
            AnyBackend::Cpu => run_step(&dev.mirror, &mut dev.on_mirror, data, log)?,
            #[cfg(feature = "gpu")]
            AnyBackend::Gpu(g) => match g.device() {
                kernels::gpu::CudaDevice::F64(d) => run_step(d, &mut dev.on_f64, data, log)?,
                kernels::gpu::CudaDevice::F32(d) => run_step(d, &mut dev.on_f32, data, log)?,
            },
        };
        self.last_transfers = Some(transfers);
        let StepResult { q, lam, omega, iterations, status } = res;
        Ok(finish(p, &s, q, &lam, &omega, iterations, status))
    }
}

/// The step's solution from the last iterate: `v = (q − q_t)/h` with prescribed DOFs exactly at
/// their required velocity, impulses `h Ω λ` (what the returned `q` was corrected with, FCLIB
/// order `(n, t1, t2)`). With `tolerance = 0` the paper's fixed iteration budget (§7.1) is the
/// stopping rule, and the step counts as solved.
pub(super) fn finish(
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
