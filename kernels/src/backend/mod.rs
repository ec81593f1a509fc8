//! The compute backend of the iterative kernels, in two traits:
//!
//! - [`Blas`]: the primitives — sparse matrix–vector products and the vector operations a Krylov
//!   iteration needs (dot products, axpy, element-wise products) — and the device's housekeeping
//!   (synchronisation, memory);
//! - [`Backend`] (`: Blas`): the coarser operations of the contact solvers' device path (Zeng's
//!   constraint solve, sparse-inverse global step and Delassus assembly; per-contact NCP
//!   evaluation), with default implementations in terms of the primitives.
//!
//! This is the seam where a device implementation plugs in: [`crate::iterative`] never touches
//! vector entries directly, only through these calls. [`Cpu`] is the sequential f64
//! implementation and the reference; [`crate::gpu::CudaBackend`] (cargo feature `gpu`) is the
//! CUDA one, which overrides the coarse operations with device-resident versions (matrices
//! uploaded once, every Krylov vector kept on the device, only scalars coming back).
//! [`VectorOps`] is the same vector algebra over a backend's own vector type (host slices,
//! device buffers), the one interface of the shared PCR loop
//! ([`crate::iterative::pcr::pcr_loop`]); [`HostMirror`] is a host-memory mirror of a device's
//! memory that counts host↔device transfers with the device's [`TransferCounter`];
//! [`Resident`] is the device memory layer a whole solver step runs on with its data resident
//! (implemented by [`HostMirror`] and the CUDA device: local_global's device-resident step).
//!
//! Modules: [`cpu`](Cpu), selection ([`select`], [`BackendKind`], [`AnyBackend`]),
//! stage timing ([`StageClock`], [`SolverStageTimes`]), transfers ([`TransferCounter`],
//! [`HostMirror`]).
//!
//! Run-time selection ([`select`], [`BackendKind`], [`Precision`]) never panics: with no `gpu`
//! feature, no driver, no NVRTC or no device it returns the CPU backend and the reason. The choice
//! of `signorini run --backend` reaches the solvers through the run options
//! (`harness::stepper::RunOptions::backend` → `harness::SolverContext`), never through a global.

mod cpu;
mod resident;
mod select;
mod timing;
mod transfers;
mod vector_ops;

pub use cpu::Cpu;
pub use resident::{dense_is_smaller, nan_max, ContactConsts, MirrorDelassus, MirrorMat, NcpRows, Resident};
pub use select::{gpu_probe, select, try_gpu, AnyBackend, BackendError, BackendKind, Selection};
pub use timing::{SolverStageTimes, Stage, StageClock};
pub use transfers::{HostMirror, MirrorVec, TransferCounter, Transfers};
pub use vector_ops::{OnHost, VectorOps};

use crate::iterative::pcr::{pcr_with, PcrInfo, PcrParams};
use crate::iterative::{KrylovError, KrylovWorkspace, LinearOperator};
use crate::ncp::{self, Ncp, NormalRow};
use crate::sparse::Csr;
use crate::sparse_inverse::SparseInverse;

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
    /// Most bytes the backend held at once since it was created (or [`Blas::reset_peak`]).
    pub peak_bytes: usize,
    /// Most device memory in use on the whole device (driver `total − free`) seen at a
    /// synchronisation point, including the context and other processes.
    pub driver_peak_used_bytes: usize,
}

/// The primitives: SpMV and the BLAS-1 vector operations of a Krylov iteration (all vectors are
/// `f64` host slices of equal length; shapes are programmer errors and are asserted), plus the
/// device's housekeeping (name, precision, synchronisation, memory). Device failures in the
/// middle of an operation (out of memory, a launch error) panic with the driver's message; the
/// stepper reports a panicking solver as a failed run.
pub trait Blas: Send + Sync {
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
    /// Restarts the peak counters of [`Blas::device_memory`].
    fn reset_peak(&self) {}
}

/// The method-specific operations of the contact solvers' device path (Zeng's constraint solve,
/// sparse-inverse global step and Delassus assembly; per-contact NCP evaluation). Each has a
/// default implementation in terms of the [`Blas`] primitives (what [`Cpu`] runs); a device
/// backend overrides them with device-resident versions.
pub trait Backend: Blas {
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
pub struct ScaledDelassus<'a, B: Blas + ?Sized> {
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

impl<B: Blas + ?Sized> LinearOperator for ScaledDelassus<'_, B> {
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

/// Implements [`Blas`] and [`Backend`] for `$ty` by forwarding every method to the
/// `&dyn Backend` that its method `$inner` returns: the one forwarding impl, shared by
/// [`AnyBackend`] and the CUDA backend (which forwards to its device of the chosen precision).
macro_rules! forward_backend {
    ($ty:ty, $inner:ident) => {
        impl $crate::backend::Blas for $ty {
            fn name(&self) -> &'static str {
                self.$inner().name()
            }
            fn spmv(&self, a: &$crate::sparse::Csr, x: &[f64], y: &mut [f64]) {
                self.$inner().spmv(a, x, y)
            }
            fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
                self.$inner().dot(x, y)
            }
            fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]) {
                self.$inner().axpy(alpha, x, y)
            }
            fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]) {
                self.$inner().xpby(x, beta, y)
            }
            fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]) {
                self.$inner().mul_elem(d, x, z)
            }
            fn copy(&self, x: &[f64], y: &mut [f64]) {
                self.$inner().copy(x, y)
            }
            fn label(&self) -> String {
                self.$inner().label()
            }
            fn precision(&self) -> $crate::backend::Precision {
                self.$inner().precision()
            }
            fn sync(&self) {
                self.$inner().sync()
            }
            fn device_memory(&self) -> Option<$crate::backend::DeviceMemory> {
                self.$inner().device_memory()
            }
            fn reset_peak(&self) {
                self.$inner().reset_peak()
            }
        }

        impl $crate::backend::Backend for $ty {
            fn pcr_scaled_delassus(
                &self,
                w: &$crate::sparse::Csr,
                omega: &[f64],
                e: &[f64],
                pinv: &[f64],
                b: &[f64],
                x: &mut [f64],
                params: &$crate::iterative::pcr::PcrParams,
                ws: &mut $crate::iterative::KrylovWorkspace,
            ) -> Result<$crate::iterative::pcr::PcrInfo, $crate::iterative::KrylovError> {
                self.$inner().pcr_scaled_delassus(w, omega, e, pinv, b, x, params, ws)
            }
            fn sparse_inverse_solve(
                &self,
                inv: &$crate::sparse_inverse::SparseInverse,
                b: &[f64],
                tmp: &mut [f64],
                x: &mut [f64],
            ) {
                self.$inner().sparse_inverse_solve(inv, b, tmp, x)
            }
            fn delassus(
                &self,
                inv: &$crate::sparse_inverse::SparseInverse,
                h: &$crate::sparse::Csr,
            ) -> $crate::sparse::Csr {
                self.$inner().delassus(inv, h)
            }
            fn ncp_normal_rows(
                &self,
                kind: $crate::ncp::Ncp,
                c: &[f64],
                lambda: &[f64],
                r: &[f64],
            ) -> Vec<$crate::ncp::NormalRow> {
                self.$inner().ncp_normal_rows(kind, c, lambda, r)
            }
            fn friction_compliance(
                &self,
                kind: $crate::ncp::Ncp,
                slip: &[f64],
                mu_lambda_n: &[f64],
                lambda_f: &[f64],
                r: &[f64],
                w: &mut [f64],
            ) {
                self.$inner().friction_compliance(kind, slip, mu_lambda_n, lambda_f, r, w)
            }
        }
    };
}
pub(crate) use forward_backend;

#[cfg(test)]
mod tests;
