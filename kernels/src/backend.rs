//! The compute backend of the iterative kernels: sparse matrix–vector products and the vector
//! operations a Krylov iteration needs (dot products, axpy, element-wise products), plus the
//! coarser operations of the contact solvers' device path (Zeng's constraint solve, sparse-inverse
//! global step and Delassus assembly; per-contact NCP evaluation).
//!
//! [`Backend`] is the seam where a device implementation plugs in: [`crate::iterative`] never
//! touches vector entries directly, only through these calls. [`Cpu`] is the sequential f64
//! implementation and the reference; [`crate::gpu::CudaBackend`] (cargo feature `gpu`) is the
//! CUDA one. The coarse operations have default implementations in terms of the primitives (what
//! [`Cpu`] runs); the CUDA backend overrides them with device-resident versions (matrices uploaded
//! once, every Krylov vector kept on the device, only scalars coming back).
//!
//! Run-time selection ([`select`], [`BackendKind`], [`Precision`]) never panics: with no `gpu`
//! feature, no driver, no NVRTC or no device it returns the CPU backend and the reason, and
//! [`set_global`]/[`current`] carry the choice of `signorini run --backend` to the solvers that
//! build their backend with [`current`] (see README "GPU").

use crate::iterative::pcr::{pcr_with, PcrInfo, PcrParams};
use crate::iterative::{KrylovError, KrylovWorkspace, LinearOperator};
use crate::ncp::{self, Ncp, NormalRow};
use crate::sparse::Csr;
use crate::sparse_inverse::SparseInverse;
#[cfg(feature = "gpu")]
use std::sync::Arc;
use std::sync::RwLock;
use std::time::Instant;

/// Floating-point precision of a device backend. The CPU backend is always f64; f32 is a named
/// option of the GPU backend only (never chosen silently).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Double precision (the default everywhere).
    #[default]
    F64,
    /// Single precision on the device (reductions still accumulate in double).
    F32,
}

impl Precision {
    /// Accepted names.
    pub const NAMES: [&'static str; 2] = ["f64", "f32"];
    /// Parses `"f64"` or `"f32"`.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "f64" => Some(Self::F64),
            "f32" => Some(Self::F32),
            _ => None,
        }
    }
    /// `"f64"` or `"f32"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F64 => "f64",
            Self::F32 => "f32",
        }
    }
}

/// Device memory used by a backend (bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceMemory {
    /// Bytes of device buffers the backend holds now.
    pub live_bytes: usize,
    /// Most bytes the backend held at once since it was created (or [`Backend::reset_peak`]).
    pub peak_bytes: usize,
    /// Most device memory in use on the whole device (driver `total − free`) seen at a
    /// synchronisation point, including the context and other processes.
    pub driver_peak_used_bytes: usize,
}

/// Vector and sparse-matrix primitives (all vectors are `f64` slices of equal length; shapes
/// are programmer errors and are asserted). Device failures in the middle of an operation (out
/// of memory, a launch error) panic with the driver's message; the stepper reports a panicking
/// solver as a failed run.
pub trait Backend: Send + Sync {
    /// Short name for logs ("cpu", "gpu").
    fn name(&self) -> &'static str;
    /// `y = A x`.
    fn spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]);
    /// `x · y`.
    fn dot(&self, x: &[f64], y: &[f64]) -> f64;
    /// `y += alpha x`.
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]);
    /// `y = x + beta y`.
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]);
    /// `z = d ⊙ x` (element-wise product: diagonal scaling, Jacobi preconditioner).
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]);
    /// `y = x`.
    fn copy(&self, x: &[f64], y: &mut [f64]);

    /// Description for run records ("cpu", "gpu NVIDIA H100 (f64)").
    fn label(&self) -> String {
        self.name().to_string()
    }
    /// Arithmetic precision of the backend.
    fn precision(&self) -> Precision {
        Precision::F64
    }
    /// Waits until all queued device work is done (no-op on the CPU). Call before reading a
    /// clock: device launches are asynchronous ([`StageClock`] does it).
    fn sync(&self) {}
    /// Device memory use (`None` on the CPU).
    fn device_memory(&self) -> Option<DeviceMemory> {
        None
    }
    /// Restarts the peak counters of [`Backend::device_memory`].
    fn reset_peak(&self) {}

    /// Zeng's constraint solve: `(Ω W Ω + E) x = b` by Jacobi-preconditioned CR ([`pcr_with`])
    /// from the guess in `x`, with the operator applied as `ω ⊙ (W (ω ⊙ x)) + e ⊙ x` (never
    /// formed). The Krylov vectors and the operator's scratch live in `ws`, so repeated solves of
    /// one size allocate nothing. The device version uploads `W` once and keeps every vector on
    /// the device (it does not use `ws`).
    #[allow(clippy::too_many_arguments)]
    fn pcr_scaled_delassus(
        &self,
        w: &Csr,
        omega: &[f64],
        e: &[f64],
        pinv: &[f64],
        b: &[f64],
        x: &mut [f64],
        params: &PcrParams,
        ws: &mut KrylovWorkspace,
    ) -> Result<PcrInfo, KrylovError> {
        let n = w.nrows;
        let [mut tmp, mut tmp2] = std::mem::take(&mut ws.operator_scratch);
        tmp.resize(n, 0.0);
        tmp2.resize(n, 0.0);
        let mut op = ScaledDelassus { w, omega, e, backend: self, tmp, tmp2 };
        let info = pcr_with(self, &mut op, pinv, b, x, params, ws);
        ws.operator_scratch = [op.tmp, op.tmp2];
        info
    }
    /// The sparse-inverse global step `x = A⁻¹ b = Sᵀ (S b)` (two SpMVs; `tmp` has length `n`).
    /// The device version keeps `S` and `Sᵀ` resident across calls.
    fn sparse_inverse_solve(&self, inv: &SparseInverse, b: &[f64], tmp: &mut [f64], x: &mut [f64]) {
        self.spmv(inv.s(), b, tmp);
        self.spmv(inv.st(), tmp, x);
    }
    /// The Delassus operator `W = (S Hᵀ)ᵀ (S Hᵀ)` (Zeng Eq. 27). The device version computes the
    /// pattern on the host and the values on the device.
    fn delassus(&self, inv: &SparseInverse, h: &Csr) -> Csr {
        inv.delassus(h)
    }
    /// Per-contact normal NCP rows ([`ncp::normal_row`]) for arrays of gaps `c`, multipliers
    /// `lambda` and scales `r`.
    fn ncp_normal_rows(&self, kind: Ncp, c: &[f64], lambda: &[f64], r: &[f64]) -> Vec<NormalRow> {
        assert!(c.len() == lambda.len() && c.len() == r.len(), "ncp_normal_rows: lengths differ");
        c.iter().zip(lambda).zip(r).map(|((&c, &l), &r)| ncp::normal_row(kind, c, l, r)).collect()
    }
    /// Per-contact friction compliance ([`ncp::friction_w`]) into `w`.
    fn friction_compliance(
        &self,
        kind: Ncp,
        slip: &[f64],
        mu_lambda_n: &[f64],
        lambda_f: &[f64],
        r: &[f64],
        w: &mut [f64],
    ) {
        let m = slip.len();
        assert!(
            mu_lambda_n.len() == m && lambda_f.len() == m && r.len() == m && w.len() == m,
            "friction_compliance: lengths differ"
        );
        for i in 0..m {
            w[i] = ncp::friction_w(kind, slip[i], mu_lambda_n[i], lambda_f[i], r[i]);
        }
    }
}

/// The operator `x ↦ ω ⊙ (W (ω ⊙ x)) + e ⊙ x` of Zeng's constraint solve through a backend's
/// primitives (the reference of [`Backend::pcr_scaled_delassus`]).
pub struct ScaledDelassus<'a, B: Backend + ?Sized> {
    /// The Delassus operator `W`.
    pub w: &'a Csr,
    /// The diagonal `Ω`.
    pub omega: &'a [f64],
    /// The diagonal `E`.
    pub e: &'a [f64],
    /// The backend.
    pub backend: &'a B,
    /// Scratch (length `n`).
    pub tmp: Vec<f64>,
    /// Scratch (length `n`).
    pub tmp2: Vec<f64>,
}

impl<B: Backend + ?Sized> LinearOperator for ScaledDelassus<'_, B> {
    fn dim(&self) -> usize {
        self.w.nrows
    }
    fn apply(&mut self, x: &[f64], y: &mut [f64]) {
        self.backend.mul_elem(self.omega, x, &mut self.tmp);
        self.backend.spmv(self.w, &self.tmp, &mut self.tmp2);
        self.backend.mul_elem(self.omega, &self.tmp2, y);
        self.backend.mul_elem(self.e, x, &mut self.tmp);
        self.backend.axpy(1.0, &self.tmp, y);
    }
}

/// Sequential CPU backend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpu;

impl Backend for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]) {
        a.mul_into(x, y);
    }
    #[track_caller]
    fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
        assert_eq!(x.len(), y.len(), "dot: lengths differ");
        x.iter().zip(y).map(|(a, b)| a * b).sum()
    }
    #[track_caller]
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), y.len(), "axpy: lengths differ");
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi += alpha * xi;
        }
    }
    #[track_caller]
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]) {
        assert_eq!(x.len(), y.len(), "xpby: lengths differ");
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi = xi + beta * *yi;
        }
    }
    #[track_caller]
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]) {
        assert!(d.len() == x.len() && x.len() == z.len(), "mul_elem: lengths differ");
        for ((zi, di), xi) in z.iter_mut().zip(d).zip(x) {
            *zi = di * xi;
        }
    }
    fn copy(&self, x: &[f64], y: &mut [f64]) {
        y.copy_from_slice(x);
    }
}

/// Which backend `signorini run --backend` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// The sequential CPU backend (the default).
    #[default]
    Cpu,
    /// The CUDA backend; falls back to the CPU, with the reason, where it cannot start.
    Gpu,
    /// The CUDA backend where one can start, else the CPU.
    Auto,
}

impl BackendKind {
    /// Accepted names.
    pub const NAMES: [&'static str; 3] = ["cpu", "gpu", "auto"];
    /// Parses `"cpu"`, `"gpu"` or `"auto"`.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "cpu" => Some(Self::Cpu),
            "gpu" => Some(Self::Gpu),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }
}

/// A backend chosen at run time: the CPU one or (feature `gpu`) a CUDA one. Cheap to clone
/// (the device context is shared).
#[derive(Clone, Default)]
pub enum AnyBackend {
    /// [`Cpu`].
    #[default]
    Cpu,
    /// [`crate::gpu::CudaBackend`].
    #[cfg(feature = "gpu")]
    Gpu(Arc<crate::gpu::CudaBackend>),
}

impl std::fmt::Debug for AnyBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyBackend({})", self.label())
    }
}

impl AnyBackend {
    fn inner(&self) -> &dyn Backend {
        match self {
            Self::Cpu => &Cpu,
            #[cfg(feature = "gpu")]
            Self::Gpu(g) => g.as_ref(),
        }
    }
}

impl Backend for AnyBackend {
    fn name(&self) -> &'static str {
        self.inner().name()
    }
    fn spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]) {
        self.inner().spmv(a, x, y)
    }
    fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
        self.inner().dot(x, y)
    }
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]) {
        self.inner().axpy(alpha, x, y)
    }
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]) {
        self.inner().xpby(x, beta, y)
    }
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]) {
        self.inner().mul_elem(d, x, z)
    }
    fn copy(&self, x: &[f64], y: &mut [f64]) {
        self.inner().copy(x, y)
    }
    fn label(&self) -> String {
        self.inner().label()
    }
    fn precision(&self) -> Precision {
        self.inner().precision()
    }
    fn sync(&self) {
        self.inner().sync()
    }
    fn device_memory(&self) -> Option<DeviceMemory> {
        self.inner().device_memory()
    }
    fn reset_peak(&self) {
        self.inner().reset_peak()
    }
    fn pcr_scaled_delassus(
        &self,
        w: &Csr,
        omega: &[f64],
        e: &[f64],
        pinv: &[f64],
        b: &[f64],
        x: &mut [f64],
        params: &PcrParams,
        ws: &mut KrylovWorkspace,
    ) -> Result<PcrInfo, KrylovError> {
        self.inner().pcr_scaled_delassus(w, omega, e, pinv, b, x, params, ws)
    }
    fn sparse_inverse_solve(&self, inv: &SparseInverse, b: &[f64], tmp: &mut [f64], x: &mut [f64]) {
        self.inner().sparse_inverse_solve(inv, b, tmp, x)
    }
    fn delassus(&self, inv: &SparseInverse, h: &Csr) -> Csr {
        self.inner().delassus(inv, h)
    }
    fn ncp_normal_rows(&self, kind: Ncp, c: &[f64], lambda: &[f64], r: &[f64]) -> Vec<NormalRow> {
        self.inner().ncp_normal_rows(kind, c, lambda, r)
    }
    fn friction_compliance(
        &self,
        kind: Ncp,
        slip: &[f64],
        mu_lambda_n: &[f64],
        lambda_f: &[f64],
        r: &[f64],
        w: &mut [f64],
    ) {
        self.inner().friction_compliance(kind, slip, mu_lambda_n, lambda_f, r, w)
    }
}

/// The outcome of [`select`].
#[derive(Debug, Clone)]
pub struct Selection {
    /// What was asked for.
    pub requested: BackendKind,
    /// The backend that runs.
    pub backend: AnyBackend,
    /// Why a GPU was asked for (`gpu` or `auto`) and the CPU runs (`None` if nothing fell back).
    pub fallback_reason: Option<String>,
}

impl Selection {
    /// What the run record stores: the backend's label, plus the fallback reason if any
    /// (`"cpu (gpu requested: built without the `gpu` cargo feature)"`).
    pub fn record_label(&self) -> String {
        match &self.fallback_reason {
            Some(r) => format!("cpu (gpu unavailable: {r})"),
            None => self.backend.label(),
        }
    }
    /// The one line printed when a GPU was asked for and the CPU runs instead.
    pub fn fallback_message(&self) -> Option<String> {
        let kind = if self.requested == BackendKind::Auto { "auto" } else { "gpu" };
        self.fallback_reason.as_ref().map(|r| format!("backend {kind}: GPU unavailable ({r}); falling back to CPU"))
    }
}

/// Why no CUDA backend can start here, or the backend. Never panics (the driver and NVRTC are
/// probed before any cudarc call that would panic on a missing library).
pub fn try_gpu(precision: Precision) -> Result<AnyBackend, String> {
    #[cfg(feature = "gpu")]
    {
        crate::gpu::CudaBackend::try_new(0, precision).map(|g| AnyBackend::Gpu(Arc::new(g)))
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = precision;
        Err("built without the `gpu` cargo feature (rebuild with `--features gpu`)".into())
    }
}

/// `Ok` where a CUDA backend starts here (f64), else why not (what `--backend gpu` would print).
pub fn gpu_probe() -> Result<(), String> {
    try_gpu(Precision::F64).map(|_| ())
}

/// Resolves a backend request. `Cpu` always gives the CPU (f64; asking for f32 on the CPU is an
/// error: there is no silent precision change). `Gpu`/`Auto` give the CUDA backend in
/// `precision` where it starts, else the CPU with [`Selection::fallback_reason`].
pub fn select(kind: BackendKind, precision: Precision) -> Result<Selection, String> {
    match kind {
        BackendKind::Cpu => {
            if precision != Precision::F64 {
                return Err("precision f32 needs the GPU backend (the CPU backend is f64 only)".into());
            }
            Ok(Selection { requested: kind, backend: AnyBackend::Cpu, fallback_reason: None })
        }
        BackendKind::Gpu | BackendKind::Auto => Ok(match try_gpu(precision) {
            Ok(b) => Selection { requested: kind, backend: b, fallback_reason: None },
            Err(reason) => Selection { requested: kind, backend: AnyBackend::Cpu, fallback_reason: Some(reason) },
        }),
    }
}

static GLOBAL: RwLock<Option<Selection>> = RwLock::new(None);

/// Makes `selection` the process-wide backend ([`current`]); `signorini run --backend` calls it
/// once before building solvers.
pub fn set_global(selection: Selection) {
    *GLOBAL.write().unwrap_or_else(|e| e.into_inner()) = Some(selection);
}

/// The process-wide selection, if [`set_global`] was called.
pub fn global_selection() -> Option<Selection> {
    GLOBAL.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The process-wide backend: what [`set_global`] chose, else the CPU (the default of every
/// solver and of every test).
pub fn current() -> AnyBackend {
    global_selection().map(|s| s.backend).unwrap_or_default()
}

/// The process-wide backend's record label (`"cpu"` unless [`set_global`] chose otherwise).
pub fn current_label() -> String {
    global_selection().map(|s| s.record_label()).unwrap_or_else(|| "cpu".into())
}

/// Per-stage times of one solver step, the columns of Zeng et al. Table 3 (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SolverStageTimes {
    /// Schur complement / Delassus assembly `W = (S Hᵀ)ᵀ (S Hᵀ)`.
    pub delassus_s: f64,
    /// Local step (per-element projections).
    pub local_s: f64,
    /// Global step (`Sᵀ S b`).
    pub global_s: f64,
    /// Constraint solve (NCP evaluation + CR/PCR).
    pub constraint_s: f64,
    /// Constraint correction (`q += Sᵀ S (h² Jᵀ Δλ)`).
    pub correction_s: f64,
}

impl SolverStageTimes {
    /// Column names for an iteration log / report table, in Table 3 order.
    pub const COLUMNS: [&'static str; 5] =
        ["t_delassus_s", "t_local_s", "t_global_s", "t_constraint_s", "t_correction_s"];
    /// Sum of the stages.
    pub fn total(&self) -> f64 {
        self.delassus_s + self.local_s + self.global_s + self.constraint_s + self.correction_s
    }
    /// `(name, seconds)` pairs in [`Self::COLUMNS`] order (for `IterationLog::record`).
    pub fn entries(&self) -> [(&'static str, f64); 5] {
        let c = Self::COLUMNS;
        [
            (c[0], self.delassus_s),
            (c[1], self.local_s),
            (c[2], self.global_s),
            (c[3], self.constraint_s),
            (c[4], self.correction_s),
        ]
    }
    /// Adds `other` stage by stage.
    pub fn add(&mut self, other: &SolverStageTimes) {
        self.delassus_s += other.delassus_s;
        self.local_s += other.local_s;
        self.global_s += other.global_s;
        self.constraint_s += other.constraint_s;
        self.correction_s += other.correction_s;
    }
}

/// Which Table 3 stage a [`StageClock`] interval is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// [`SolverStageTimes::delassus_s`].
    Delassus,
    /// [`SolverStageTimes::local_s`].
    Local,
    /// [`SolverStageTimes::global_s`].
    Global,
    /// [`SolverStageTimes::constraint_s`].
    Constraint,
    /// [`SolverStageTimes::correction_s`].
    Correction,
}

/// A stage timer that synchronises the backend before every clock read, so asynchronous device
/// work is charged to the stage that queued it (timing done right on a GPU; free on the CPU).
pub struct StageClock<'a, B: Backend + ?Sized> {
    backend: &'a B,
    last: Instant,
    /// Accumulated times.
    pub times: SolverStageTimes,
}

impl<'a, B: Backend + ?Sized> StageClock<'a, B> {
    /// Starts the clock (after a synchronisation).
    pub fn start(backend: &'a B) -> Self {
        backend.sync();
        Self { backend, last: Instant::now(), times: SolverStageTimes::default() }
    }
    /// Charges the time since the previous lap (or the start) to `stage`.
    pub fn lap(&mut self, stage: Stage) {
        self.backend.sync();
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        let t = &mut self.times;
        match stage {
            Stage::Delassus => t.delassus_s += dt,
            Stage::Local => t.local_s += dt,
            Stage::Global => t.global_s += dt,
            Stage::Constraint => t.constraint_s += dt,
            Stage::Correction => t.correction_s += dt,
        }
    }
    /// Restarts the interval without charging it (time spent outside the five stages).
    pub fn skip(&mut self) {
        self.backend.sync();
        self.last = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_primitives() {
        let b = Cpu;
        let a = Csr::from_triplets(2, 2, &[(0, 0, 2.0), (1, 0, 1.0), (1, 1, 3.0)]);
        let mut y = vec![0.0; 2];
        b.spmv(&a, &[1.0, 1.0], &mut y);
        assert_eq!(y, vec![2.0, 4.0]);
        assert_eq!(b.dot(&y, &[1.0, 1.0]), 6.0);
        b.axpy(2.0, &[1.0, 1.0], &mut y);
        assert_eq!(y, vec![4.0, 6.0]);
        b.xpby(&[1.0, 1.0], 0.5, &mut y);
        assert_eq!(y, vec![3.0, 4.0]);
        let mut z = vec![0.0; 2];
        b.mul_elem(&[2.0, 0.5], &y, &mut z);
        assert_eq!(z, vec![6.0, 2.0]);
    }

    /// Asking for a GPU where none can start gives the CPU, the reason and one message line:
    /// without the feature the reason names the feature; with it (on a machine without a
    /// driver or device) it is the probe's reason. Never a panic.
    #[test]
    fn gpu_request_falls_back_to_cpu_with_reason() {
        for kind in [BackendKind::Gpu, BackendKind::Auto] {
            let s = select(kind, Precision::F64).unwrap();
            let Some(reason) = s.fallback_reason.clone() else {
                #[cfg(feature = "gpu")]
                {
                    assert_eq!(s.backend.name(), "gpu");
                    continue;
                }
                #[cfg(not(feature = "gpu"))]
                unreachable!("a GPU started without the `gpu` feature");
            };
            #[cfg(not(feature = "gpu"))]
            assert!(reason.contains("without the `gpu` cargo feature"), "{reason}");
            #[cfg(feature = "gpu")]
            assert_eq!(Err(reason.clone()), crate::gpu::probe().map(|_| ()), "reason is the probe's");
            assert_eq!(s.backend.name(), "cpu");
            assert_eq!(s.backend.precision(), Precision::F64);
            let msg = s.fallback_message().unwrap();
            assert!(msg.contains(&reason) && msg.ends_with("falling back to CPU") && !msg.contains('\n'), "{msg}");
            assert_eq!(s.record_label(), format!("cpu (gpu unavailable: {reason})"));
        }
    }

    /// The CPU is the default everywhere: `AnyBackend::default()`, `select(Cpu)`, and
    /// [`current`] until [`set_global`] is called (no test in this crate calls it); f32 on the
    /// CPU is refused rather than silently ignored.
    #[test]
    fn cpu_is_the_default_backend() {
        assert_eq!(AnyBackend::default().name(), "cpu");
        assert_eq!(current().name(), "cpu");
        assert_eq!(current_label(), "cpu");
        let s = select(BackendKind::Cpu, Precision::F64).unwrap();
        assert!(s.fallback_reason.is_none() && s.fallback_message().is_none());
        assert_eq!(s.record_label(), "cpu");
        assert!(select(BackendKind::Cpu, Precision::F32).is_err());
        assert_eq!(BackendKind::from_name("auto"), Some(BackendKind::Auto));
        assert_eq!(BackendKind::from_name("cuda"), None);
        assert_eq!(Precision::from_name("f32").map(Precision::name), Some("f32"));
        assert!(Cpu.device_memory().is_none());
    }

    /// The trait's default coarse operations equal the primitives they are made of, and
    /// `AnyBackend::Cpu` dispatches to them.
    #[test]
    fn default_coarse_operations_and_stage_clock() {
        let w = Csr::from_triplets(3, 3, &[(0, 0, 4.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 3.0), (2, 2, 2.0)]);
        let (omega, e) = (vec![1.0, 0.5, 1.0], vec![0.0, 0.1, 0.0]);
        let pinv = vec![1.0; 3];
        let b = vec![1.0, 2.0, 3.0];
        let params = PcrParams { max_iterations: 50, rel_tolerance: 1e-14, abs_tolerance: 0.0 };
        let (mut x, mut ws) = (vec![0.0; 3], KrylovWorkspace::default());
        let info = AnyBackend::Cpu.pcr_scaled_delassus(&w, &omega, &e, &pinv, &b, &mut x, &params, &mut ws).unwrap();
        assert!(info.converged);
        // a second solve from the same guess reuses the workspace and returns the same answer
        let mut x2 = vec![0.0; 3];
        AnyBackend::Cpu.pcr_scaled_delassus(&w, &omega, &e, &pinv, &b, &mut x2, &params, &mut ws).unwrap();
        assert_eq!(x, x2);
        let mut op =
            ScaledDelassus { w: &w, omega: &omega, e: &e, backend: &Cpu, tmp: vec![0.0; 3], tmp2: vec![0.0; 3] };
        let mut ax = vec![0.0; 3];
        op.apply(&x, &mut ax);
        assert!(ax.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12), "{ax:?}");
        let rows = Cpu.ncp_normal_rows(Ncp::FischerBurmeister, &[0.0, 1.0], &[0.0, 2.0], &[0.3, 1.0]);
        assert_eq!(rows[0], ncp::normal_row(Ncp::FischerBurmeister, 0.0, 0.0, 0.3));
        assert_eq!(rows[1], ncp::normal_row(Ncp::FischerBurmeister, 1.0, 2.0, 1.0));
        let mut clock = StageClock::start(&Cpu);
        std::thread::sleep(std::time::Duration::from_millis(2));
        clock.lap(Stage::Constraint);
        clock.skip();
        clock.lap(Stage::Local);
        assert!(clock.times.constraint_s >= 0.002 && clock.times.total() >= clock.times.constraint_s);
        assert_eq!(clock.times.entries()[3].0, "t_constraint_s");
    }
}
