//! Run-time selection of the backend: [`BackendKind`] (what `signorini run --backend` asks
//! for), [`select`] (never panics: with no `gpu` feature, no driver, no NVRTC or no device it
//! returns the CPU and the reason) and [`AnyBackend`] (the chosen backend, passed to the solvers
//! through the run options: there is no process-wide backend).

use super::{Backend, Blas, Cpu, Precision};
#[cfg(feature = "gpu")]
use std::sync::Arc;

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
    /// The selected backend as a trait object.
    fn inner(&self) -> &(dyn Backend + 'static) {
        match self {
            Self::Cpu => &Cpu,
            #[cfg(feature = "gpu")]
            Self::Gpu(g) => g.as_ref(),
        }
    }
}

/// Every operation of [`Blas`] and [`Backend`] can be called on an `AnyBackend` with either
/// trait in scope (the dispatch goes through the selected `dyn Backend`).
impl std::ops::Deref for AnyBackend {
    type Target = dyn Backend;
    fn deref(&self) -> &Self::Target {
        self.inner()
    }
}

super::forward_backend!(AnyBackend, inner);

/// The outcome of [`select`].
#[derive(Debug, Clone)]
pub struct Selection {
    /// What was asked for.
    pub requested: BackendKind,
    /// The backend that runs.
    pub backend: AnyBackend,
    /// Why a GPU was asked for (`gpu` or `auto`) and the CPU runs (`None` if nothing fell back).
    pub fallback_reason: Option<BackendError>,
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

/// Why no CUDA backend can start here ([`try_gpu`], [`gpu_probe`], `gpu::probe`,
/// `gpu::CudaBackend::try_new`), or why a backend request is refused ([`select`]). Every message
/// is one short clause (it is printed inside `backend gpu: GPU unavailable (...)`), except the
/// NVRTC log of kernels that do not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// The crate was built without the `gpu` cargo feature.
    #[error("built without the `gpu` cargo feature (rebuild with `--features gpu`)")]
    NoGpuFeature,
    /// `libcuda.so` cannot be loaded.
    #[error("libcuda.so not found (no NVIDIA driver)")]
    NoDriver,
    /// `libnvrtc.so` cannot be loaded.
    #[error("libnvrtc.so not found (CUDA runtime compiler missing)")]
    NoNvrtc,
    /// The driver reports no device.
    #[error("no CUDA device")]
    NoDevice,
    /// The device asked for is not there.
    #[error("CUDA device {ordinal} requested, {present} present")]
    NoSuchDevice {
        /// The device asked for.
        ordinal: usize,
        /// The number of devices.
        present: usize,
    },
    /// A driver call failed (initialisation, context, device name, loading the module or a
    /// kernel).
    #[error("{call}: {why}")]
    Driver {
        /// The call (`cuInit/device_count`, `CudaContext::new(0)`, `load kernel spmv_csr`, ...).
        call: String,
        /// The driver's error.
        why: String,
    },
    /// The kernels do not compile.
    #[cfg(feature = "gpu")]
    #[error(transparent)]
    Compile(crate::gpu::CompileError),
    /// f32 asked for on the CPU, which is f64 only.
    #[error("precision f32 needs the GPU backend (the CPU backend is f64 only)")]
    F32OnCpu,
}

impl From<BackendError> for String {
    fn from(e: BackendError) -> String {
        e.to_string()
    }
}

/// Why no CUDA backend can start here, or the backend. Never panics (the driver and NVRTC are
/// probed before any cudarc call that would panic on a missing library).
pub fn try_gpu(precision: Precision) -> Result<AnyBackend, BackendError> {
    #[cfg(feature = "gpu")]
    {
        crate::gpu::CudaBackend::try_new(0, precision).map(|g| AnyBackend::Gpu(Arc::new(g)))
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = precision;
        Err(BackendError::NoGpuFeature)
    }
}

/// `Ok` where a CUDA backend starts here (f64), else why not (what `--backend gpu` would print).
pub fn gpu_probe() -> Result<(), BackendError> {
    try_gpu(Precision::F64).map(|_| ())
}

/// Resolves a backend request. `Cpu` always gives the CPU (f64; asking for f32 on the CPU is an
/// error: there is no silent precision change). `Gpu`/`Auto` give the CUDA backend in
/// `precision` where it starts, else the CPU with [`Selection::fallback_reason`].
pub fn select(kind: BackendKind, precision: Precision) -> Result<Selection, BackendError> {
    match kind {
        BackendKind::Cpu => {
            if precision != Precision::F64 {
                return Err(BackendError::F32OnCpu);
            }
            Ok(Selection { requested: kind, backend: AnyBackend::Cpu, fallback_reason: None })
        }
        BackendKind::Gpu | BackendKind::Auto => Ok(match try_gpu(precision) {
            Ok(b) => Selection { requested: kind, backend: b, fallback_reason: None },
            Err(reason) => Selection { requested: kind, backend: AnyBackend::Cpu, fallback_reason: Some(reason) },
        }),
    }
}
