//! The CUDA backend (cargo feature `gpu`): [`CudaBackend`] implements [`Blas`] and [`Backend`] with CUDA C
//! kernels ([`SOURCE`], `kernels/src/gpu/kernels.cu`) compiled by NVRTC when the backend starts.
//!
//! - **Start-up never panics.** cudarc panics when `libcuda`/`libnvrtc` cannot be loaded, so
//!   [`CudaBackend::try_new`] probes both libraries first (`is_culib_present`), then counts
//!   devices (no device is an ordinary error), then compiles; every failure is an `Err(reason)`
//!   that [`crate::backend::select`] turns into a CPU fallback.
//! - **Precision.** f64 by default; f32 only when asked for ([`Precision::F32`]): vectors are
//!   converted on upload/download and reductions still accumulate in double.
//! - **Two levels.** The [`Blas`] primitives (SpMV, dot, axpy, …) take host slices, so each
//!   call uploads its operands and downloads its result: correct and parity-tested, but bound by
//!   transfers. The coarse operations are device-resident: [`Backend::pcr_scaled_delassus`] (Zeng's
//!   constraint solve: `W` uploaded once per call, every CR vector on the device, the PCR loop
//!   shared with the CPU, only the scalars of the recurrences come back), [`Backend::sparse_inverse_solve`] (`S`, `Sᵀ` uploaded
//!   once per factor and cached by [`SparseInverse::id`]), [`Backend::delassus`] (pattern on the
//!   host, values on the device) and the per-contact NCP evaluation. [`Device`] exposes the same
//!   operations on [`DBuf`] device vectors for callers that keep their state on the device.
//! - **Timing and memory.** [`Blas::sync`] synchronises the stream (call it before reading a
//!   clock; [`crate::backend::StageClock`] does) and samples the driver's used memory;
//!   [`Blas::device_memory`] reports the live and peak bytes of the backend's own buffers.
//! - Device errors after start-up (out of memory, a failed launch) panic with the driver's
//!   message: the [`Blas`]/[`Backend`] methods are infallible, and the stepper reports a panicking solver
//!   as a failed run.
//!
//! Modules: `compile` ([`compile_ptx`]: the NVRTC options shared by the runtime and the CI check
//! `ci/gpu/nvrtc-check.sh`, kernel names for compiler errors, `ptxas -v` reports), `device`
//! ([`Device`]: context, loading the compiled kernels, launch helpers), `memory` (device
//! buffers, uploads/downloads counted by a [`TransferCounter`](crate::backend::TransferCounter),
//! [`Device::transfers`]), `ops` (BLAS-1, SpMV and method kernel launches on device buffers),
//! `pcr` (the device-resident constraint solve through the shared PCR loop), `resident` (the
//! [`Resident`](crate::backend::Resident) memory layer of local_global's device-resident step:
//! the whole iteration on device buffers, only scalars back) and `backend` (the
//! [`Blas`]/[`Backend`] implementations and
//! [`CudaBackend`]).

mod backend;
mod compile;
mod device;
mod memory;
mod ops;
mod pcr;
mod resident;

pub use crate::backend::dense_is_smaller;
pub use backend::{CudaBackend, CudaDevice};
pub use compile::{
    compile_ptx, compile_source, kernel_spans, kernels_in_log, nvrtc_available, parse_ptxas, CompileError, PtxasKernel,
    KERNELS, SOURCE_NAME,
};
pub use device::Device;
pub use memory::{DBuf, DeviceCsr, DeviceDelassus, DeviceSparseInverse};
pub use ops::spgemm_pattern;
pub use resident::DeviceElements;

use crate::backend::{BackendError, Precision};
#[cfg(doc)]
use crate::{
    backend::{Backend, Blas},
    sparse_inverse::SparseInverse,
};
use cudarc::driver::{CudaContext, DeviceRepr, ValidAsZeroBits};

/// The CUDA C source of every kernel (compiled with `-DREAL=double` or `-DREAL=float`).
pub const SOURCE: &str = include_str!("kernels.cu");

/// A device scalar type: `f64` or `f32`.
pub trait Real: DeviceRepr + ValidAsZeroBits + Copy + Default + Send + Sync + Unpin + 'static {
    /// The `REAL` of the CUDA source.
    const CUDA: &'static str;
    /// The precision tag.
    const PRECISION: Precision;
    /// Conversion from the host's f64.
    fn from_f64(v: f64) -> Self;
    /// Conversion to the host's f64.
    fn to_f64(self) -> f64;
}

impl Real for f64 {
    const CUDA: &'static str = "double";
    const PRECISION: Precision = Precision::F64;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

impl Real for f32 {
    const CUDA: &'static str = "float";
    const PRECISION: Precision = Precision::F32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
}

/// The [`BackendError::Driver`] of a failed driver call `call`.
pub(crate) fn driver_error(call: &str) -> impl FnOnce(cudarc::driver::DriverError) -> BackendError + '_ {
    move |e| BackendError::Driver { call: call.to_string(), why: format!("{e:?}") }
}

/// Checks that a CUDA backend could start: driver library, NVRTC library, at least one device
/// (in that order, so that no cudarc call can panic on a missing library). `Err` says why not.
pub fn probe() -> Result<usize, BackendError> {
    // SAFETY: these only try to dlopen the libraries; they do not call into them.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(BackendError::NoDriver);
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(BackendError::NoNvrtc);
    }
    let n = CudaContext::device_count().map_err(driver_error("cuInit/device_count"))?;
    if n < 1 {
        return Err(BackendError::NoDevice);
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests;
