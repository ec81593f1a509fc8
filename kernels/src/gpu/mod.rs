//! The CUDA backend (cargo feature `gpu`): [`CudaBackend`] implements [`Backend`] with CUDA C
//! kernels ([`SOURCE`], `kernels/src/gpu/kernels.cu`) compiled by NVRTC when the backend starts.
//!
//! - **Start-up never panics.** cudarc panics when `libcuda`/`libnvrtc` cannot be loaded, so
//!   [`CudaBackend::try_new`] probes both libraries first (`is_culib_present`), then counts
//!   devices (no device is an ordinary error), then compiles; every failure is an `Err(reason)`
//!   that [`crate::backend::select`] turns into a CPU fallback.
//! - **Precision.** f64 by default; f32 only when asked for ([`Precision::F32`]): vectors are
//!   converted on upload/download and reductions still accumulate in double.
//! - **Two levels.** The [`Backend`] primitives (SpMV, dot, axpy, …) take host slices, so each
//!   call uploads its operands and downloads its result: correct and parity-tested, but bound by
//!   transfers. The coarse operations are device-resident: [`Backend::pcr_scaled_delassus`] (Zeng's
//!   constraint solve: `W` uploaded once per call, every CR vector on the device, only the
//!   scalars of the recurrences come back), [`Backend::sparse_inverse_solve`] (`S`, `Sᵀ` uploaded
//!   once per factor and cached by [`SparseInverse::id`]), [`Backend::delassus`] (pattern on the
//!   host, values on the device) and the per-contact NCP evaluation. [`Device`] exposes the same
//!   operations on [`DBuf`] device vectors for callers that keep their state on the device.
//! - **Timing and memory.** [`Backend::sync`] synchronises the stream (call it before reading a
//!   clock; [`crate::backend::StageClock`] does) and samples the driver's used memory;
//!   [`Backend::device_memory`] reports the live and peak bytes of the backend's own buffers.
//! - Device errors after start-up (out of memory, a failed launch) panic with the driver's
//!   message: the [`Backend`] methods are infallible, and the stepper reports a panicking solver
//!   as a failed run.

use crate::backend::{Backend, DeviceMemory, Precision};
use crate::iterative::pcr::{PcrInfo, PcrParams};
use crate::iterative::{done, KrylovError, KrylovInfo, KrylovWorkspace};
use crate::ncp::{Ncp, NormalRow};
use crate::sparse::Csr;
use crate::sparse_inverse::SparseInverse;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The CUDA C source of every kernel (compiled with `-DREAL=double` or `-DREAL=float`).
pub const SOURCE: &str = include_str!("kernels.cu");

const BLOCK: u32 = 256;
const DOT_THREADS: u32 = 256;
const DOT_MAX_BLOCKS: usize = 1024;
const KERNELS: [&str; 11] = [
    "spmv_csr",
    "gemv_dense",
    "dot_partial",
    "sum_partials",
    "axpy",
    "xpby",
    "mul_elem",
    "scale_add",
    "ncp_normal",
    "friction_w",
    "csr_rowdot",
];

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

/// Checks that a CUDA backend could start: driver library, NVRTC library, at least one device
/// (in that order, so that no cudarc call can panic on a missing library). `Err` says why not.
pub fn probe() -> Result<usize, String> {
    // SAFETY: these only try to dlopen the libraries; they do not call into them.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("libcuda.so not found (no NVIDIA driver)".into());
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("libnvrtc.so not found (CUDA runtime compiler missing)".into());
    }
    let n = CudaContext::device_count().map_err(|e| format!("cuInit/device_count: {e:?}"))?;
    if n < 1 {
        return Err("no CUDA device".into());
    }
    Ok(n as usize)
}

#[derive(Debug, Default)]
struct MemTracker {
    live: AtomicUsize,
    peak: AtomicUsize,
    driver_peak: AtomicUsize,
}

impl MemTracker {
    fn add(&self, bytes: usize) {
        let now = self.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
}

/// A device buffer whose bytes count towards the backend's [`DeviceMemory`].
pub struct DBuf<T> {
    /// The device memory.
    pub slice: CudaSlice<T>,
    bytes: usize,
    mem: Arc<MemTracker>,
}

impl<T> DBuf<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }
}

impl<T> Drop for DBuf<T> {
    fn drop(&mut self) {
        self.mem.live.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// A CSR matrix on the device (`int` row pointers and column indices).
pub struct DeviceCsr<T> {
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    indptr: DBuf<i32>,
    indices: DBuf<i32>,
    data: DBuf<T>,
}

/// The Delassus operator on the device: CSR, or dense (row-major) when that is smaller.
pub enum DeviceDelassus<T> {
    /// Sparse.
    Csr(DeviceCsr<T>),
    /// Dense `m × m`, row-major.
    Dense {
        /// Dimension.
        m: usize,
        /// Values.
        data: DBuf<T>,
    },
}

impl<T> DeviceDelassus<T> {
    /// Dimension.
    pub fn dim(&self) -> usize {
        match self {
            Self::Csr(a) => a.nrows,
            Self::Dense { m, .. } => *m,
        }
    }
}

/// Whether a square `m × m` matrix with `nnz` stored entries takes fewer bytes dense than in CSR
/// (`8 m²` against `(8 + 4) nnz + 4 (m + 1)` in f64).
pub fn dense_is_smaller(m: usize, nnz: usize) -> bool {
    8 * m * m <= 12 * nnz + 4 * (m + 1)
}

/// `S` and `Sᵀ` of a [`SparseInverse`] on the device.
pub struct DeviceSparseInverse<T> {
    /// Identity of the host factor.
    pub id: u64,
    /// `S`.
    pub s: DeviceCsr<T>,
    /// `Sᵀ`.
    pub st: DeviceCsr<T>,
}

struct Funcs {
    f: Vec<CudaFunction>,
}

impl Funcs {
    fn get(&self, name: &str) -> &CudaFunction {
        let i = KERNELS.iter().position(|k| *k == name).expect("kernel listed in KERNELS");
        &self.f[i]
    }
}

#[track_caller]
fn ok<V, E: std::fmt::Debug>(r: Result<V, E>, what: &str) -> V {
    match r {
        Ok(v) => v,
        Err(e) => panic!("CUDA error in {what}: {e:?}"),
    }
}

fn cfg(n: usize) -> LaunchConfig {
    let blocks = (n as u32).div_ceil(BLOCK).max(1);
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

fn i32_of(v: usize, what: &str) -> i32 {
    i32::try_from(v).unwrap_or_else(|_| panic!("{what} = {v} exceeds the 32-bit index range of the GPU kernels"))
}

/// A CUDA context with the compiled kernels, in precision `T`.
pub struct Device<T: Real> {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    funcs: Funcs,
    name: String,
    mem: Arc<MemTracker>,
    si_cache: Mutex<Option<Arc<DeviceSparseInverse<T>>>>,
    _t: PhantomData<T>,
}

impl<T: Real> Device<T> {
    /// Opens device `ordinal` and compiles the kernels (after [`probe`]).
    pub fn new(ordinal: usize) -> Result<Self, String> {
        let n = probe()?;
        if ordinal >= n {
            return Err(format!("CUDA device {ordinal} requested, {n} present"));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| format!("CudaContext::new({ordinal}): {e:?}"))?;
        let name = ctx.name().map_err(|e| format!("device name: {e:?}"))?;
        let opts = CompileOptions {
            fmad: Some(false),
            options: vec![format!("-DREAL={}", T::CUDA)],
            name: Some("signorini_kernels.cu".into()),
            ..Default::default()
        };
        let ptx = compile_ptx_with_opts(SOURCE, opts).map_err(|e| format!("NVRTC compile: {e:?}"))?;
        let module = ctx.load_module(ptx).map_err(|e| format!("load module: {e:?}"))?;
        let f = KERNELS
            .iter()
            .map(|k| module.load_function(k).map_err(|e| format!("load kernel {k}: {e:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        let stream = ctx.default_stream();
        Ok(Self {
            ctx,
            stream,
            funcs: Funcs { f },
            name,
            mem: Arc::default(),
            si_cache: Mutex::new(None),
            _t: PhantomData,
        })
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.name
    }

    fn track<U>(&self, slice: CudaSlice<U>) -> DBuf<U> {
        let bytes = slice.len() * std::mem::size_of::<U>();
        self.mem.add(bytes);
        DBuf { slice, bytes, mem: self.mem.clone() }
    }

    /// Uploads a host vector (converted to `T`).
    pub fn upload(&self, x: &[f64]) -> DBuf<T> {
        let v: Vec<T> = x.iter().map(|&a| T::from_f64(a)).collect();
        self.upload_raw(&v)
    }

    /// Uploads a slice as is.
    pub fn upload_raw<U: DeviceRepr + ValidAsZeroBits>(&self, x: &[U]) -> DBuf<U> {
        if x.is_empty() {
            return self.zeros_raw(0);
        }
        self.track(ok(self.stream.clone_htod(x), "upload"))
    }

    /// A zeroed vector of length `n`.
    pub fn zeros(&self, n: usize) -> DBuf<T> {
        self.zeros_raw(n)
    }

    fn zeros_raw<U: DeviceRepr + ValidAsZeroBits>(&self, n: usize) -> DBuf<U> {
        self.track(ok(self.stream.alloc_zeros::<U>(n.max(1)), "alloc"))
    }

    /// Downloads into a host vector (converted to f64; `out.len()` entries).
    pub fn download(&self, x: &DBuf<T>, out: &mut [f64]) {
        if out.is_empty() {
            return;
        }
        let v: Vec<T> = ok(self.stream.clone_dtoh(&x.slice), "download");
        for (o, a) in out.iter_mut().zip(v) {
            *o = a.to_f64();
        }
    }

    /// Uploads a CSR matrix.
    pub fn upload_csr(&self, a: &Csr) -> DeviceCsr<T> {
        i32_of(a.nnz(), "nnz");
        let indptr: Vec<i32> = a.indptr.iter().map(|&v| v as i32).collect();
        let indices: Vec<i32> = a.indices.iter().map(|&v| v as i32).collect();
        DeviceCsr {
            nrows: a.nrows,
            ncols: a.ncols,
            indptr: self.upload_raw(&indptr),
            indices: self.upload_raw(&indices),
            data: self.upload(&a.data),
        }
    }

    /// Uploads `W` as CSR, or dense when [`dense_is_smaller`].
    pub fn upload_delassus(&self, w: &Csr) -> DeviceDelassus<T> {
        assert_eq!(w.nrows, w.ncols, "W must be square");
        let m = w.nrows;
        if m > 0 && dense_is_smaller(m, w.nnz()) {
            let mut d = vec![0.0; m * m];
            for r in 0..m {
                for k in w.indptr[r]..w.indptr[r + 1] {
                    d[r * m + w.indices[k]] = w.data[k];
                }
            }
            DeviceDelassus::Dense { m, data: self.upload(&d) }
        } else {
            DeviceDelassus::Csr(self.upload_csr(w))
        }
    }

    /// `y = A x`.
    pub fn spmv(&self, a: &DeviceCsr<T>, x: &DBuf<T>, y: &mut DBuf<T>) {
        if a.nrows == 0 {
            return;
        }
        let n = i32_of(a.nrows, "rows");
        let mut b = self.stream.launch_builder(self.funcs.get("spmv_csr"));
        b.arg(&n).arg(&a.indptr.slice).arg(&a.indices.slice).arg(&a.data.slice).arg(&x.slice).arg(&mut y.slice);
        // SAFETY: argument list matches the kernel signature; lengths are checked by the callers.
        ok(unsafe { b.launch(cfg(a.nrows)) }, "spmv_csr");
    }

    /// `y = W x` for either Delassus layout.
    pub fn apply_delassus(&self, w: &DeviceDelassus<T>, x: &DBuf<T>, y: &mut DBuf<T>) {
        match w {
            DeviceDelassus::Csr(a) => self.spmv(a, x, y),
            DeviceDelassus::Dense { m, data } => {
                if *m == 0 {
                    return;
                }
                let mi = i32_of(*m, "m");
                let mut b = self.stream.launch_builder(self.funcs.get("gemv_dense"));
                b.arg(&mi).arg(&mi).arg(&data.slice).arg(&x.slice).arg(&mut y.slice);
                // SAFETY: as in spmv.
                ok(unsafe { b.launch(cfg(*m)) }, "gemv_dense");
            }
        }
    }

    /// `x · y` (first `n` entries), accumulated in double.
    pub fn dot(&self, n: usize, x: &DBuf<T>, y: &DBuf<T>) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let blocks = n.div_ceil(DOT_THREADS as usize).clamp(1, DOT_MAX_BLOCKS);
        let mut partial = self.zeros_raw::<f64>(blocks);
        let mut out = self.zeros_raw::<f64>(1);
        let ni = i32_of(n, "n");
        let mut b = self.stream.launch_builder(self.funcs.get("dot_partial"));
        b.arg(&ni).arg(&x.slice).arg(&y.slice).arg(&mut partial.slice);
        let c = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (DOT_THREADS, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: as in spmv; DOT_THREADS matches the kernel's shared array.
        ok(unsafe { b.launch(c) }, "dot_partial");
        let bi = blocks as i32;
        let mut b = self.stream.launch_builder(self.funcs.get("sum_partials"));
        b.arg(&bi).arg(&partial.slice).arg(&mut out.slice);
        let c = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (DOT_THREADS, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: as above.
        ok(unsafe { b.launch(c) }, "sum_partials");
        ok(self.stream.clone_dtoh(&out.slice), "dot download")[0]
    }

    fn elementwise3(&self, name: &str, n: usize, a: &DBuf<T>, b_: &DBuf<T>, out: &mut DBuf<T>) {
        if n == 0 {
            return;
        }
        let ni = i32_of(n, "n");
        let mut b = self.stream.launch_builder(self.funcs.get(name));
        b.arg(&ni).arg(&a.slice).arg(&b_.slice).arg(&mut out.slice);
        // SAFETY: kernels (int, const real*, const real*, real*).
        ok(unsafe { b.launch(cfg(n)) }, name);
    }

    /// `y += alpha x`.
    pub fn axpy(&self, n: usize, alpha: f64, x: &DBuf<T>, y: &mut DBuf<T>) {
        if n == 0 {
            return;
        }
        let (ni, a) = (i32_of(n, "n"), T::from_f64(alpha));
        let mut b = self.stream.launch_builder(self.funcs.get("axpy"));
        b.arg(&ni).arg(&a).arg(&x.slice).arg(&mut y.slice);
        // SAFETY: (int, real, const real*, real*).
        ok(unsafe { b.launch(cfg(n)) }, "axpy");
    }

    /// `y = x + beta y`.
    pub fn xpby(&self, n: usize, x: &DBuf<T>, beta: f64, y: &mut DBuf<T>) {
        if n == 0 {
            return;
        }
        let (ni, be) = (i32_of(n, "n"), T::from_f64(beta));
        let mut b = self.stream.launch_builder(self.funcs.get("xpby"));
        b.arg(&ni).arg(&x.slice).arg(&be).arg(&mut y.slice);
        // SAFETY: (int, const real*, real, real*).
        ok(unsafe { b.launch(cfg(n)) }, "xpby");
    }

    /// `z = d ⊙ x`.
    pub fn mul_elem(&self, n: usize, d: &DBuf<T>, x: &DBuf<T>, z: &mut DBuf<T>) {
        self.elementwise3("mul_elem", n, d, x, z);
    }

    /// `y = x` (device to device).
    pub fn copy(&self, x: &DBuf<T>, y: &mut DBuf<T>) {
        ok(self.stream.memcpy_dtod(&x.slice, &mut y.slice), "copy");
    }

    /// `y = (Ω W Ω + E) x` with scratch `t1`, `t2`.
    #[allow(clippy::too_many_arguments)]
    pub fn apply_scaled_delassus(
        &self,
        w: &DeviceDelassus<T>,
        omega: &DBuf<T>,
        e: &DBuf<T>,
        x: &DBuf<T>,
        t1: &mut DBuf<T>,
        t2: &mut DBuf<T>,
        y: &mut DBuf<T>,
    ) {
        let n = w.dim();
        if n == 0 {
            return;
        }
        self.mul_elem(n, omega, x, t1);
        self.apply_delassus(w, t1, t2);
        let ni = i32_of(n, "n");
        let mut b = self.stream.launch_builder(self.funcs.get("scale_add"));
        b.arg(&ni).arg(&omega.slice).arg(&t2.slice).arg(&e.slice).arg(&x.slice).arg(&mut y.slice);
        // SAFETY: (int, 4 × const real*, real*).
        ok(unsafe { b.launch(cfg(n)) }, "scale_add");
    }

    /// Jacobi-preconditioned CR on `(Ω W Ω + E) x = b` with every vector on the device: the same
    /// recurrences, in the same order, as [`crate::iterative::pcr::pcr`] (only the reductions sum
    /// in a different order). `x` holds the initial guess and receives the solution.
    #[allow(clippy::too_many_arguments)]
    pub fn pcr_scaled_delassus(
        &self,
        w: &DeviceDelassus<T>,
        omega: &DBuf<T>,
        e: &DBuf<T>,
        pinv: &DBuf<T>,
        b: &DBuf<T>,
        x: &mut DBuf<T>,
        params: &PcrParams,
    ) -> Result<PcrInfo, KrylovError> {
        const ROUND_OFF: f64 = 1e-24;
        let n = w.dim();
        let (mut t1, mut t2) = (self.zeros(n), self.zeros(n));
        let mut r = self.zeros(n);
        self.apply_scaled_delassus(w, omega, e, x, &mut t1, &mut t2, &mut r);
        self.xpby(n, b, -1.0, &mut r);
        let mut z = self.zeros(n);
        self.mul_elem(n, pinv, &r, &mut z);
        let mut p = self.zeros(n);
        self.copy(&z, &mut p);
        let mut az = self.zeros(n);
        self.apply_scaled_delassus(w, omega, e, &z, &mut t1, &mut t2, &mut az);
        let mut ap = self.zeros(n);
        self.copy(&az, &mut ap);
        let mut pap = self.zeros(n);
        let mut zaz = self.dot(n, &z, &az);
        let zaz0 = zaz.abs();
        let bnorm = self.dot(n, b, b).sqrt();
        let mut info = KrylovInfo::default();
        let mut rn = self.dot(n, &r, &r).sqrt();
        info.residual_history.push(rn);
        info.precond_residual_history.push(self.dot(n, &r, &z).max(0.0).sqrt());
        let mut converged = done(params, rn, bnorm);
        let mut k = 0;
        while !converged && k < params.max_iterations {
            self.mul_elem(n, pinv, &ap, &mut pap);
            let denom = self.dot(n, &ap, &pap);
            if !denom.is_finite() || !zaz.is_finite() {
                return Err(KrylovError::NonFinite { iteration: k });
            }
            if denom <= 0.0 || zaz <= 0.0 {
                if zaz.abs() <= ROUND_OFF * zaz0 || denom.abs() <= ROUND_OFF * zaz0 {
                    break;
                }
                return Err(KrylovError::NonPositiveCurvature { iteration: k, value: denom.min(zaz) });
            }
            let alpha = zaz / denom;
            self.axpy(n, alpha, &p, x);
            self.axpy(n, -alpha, &ap, &mut r);
            self.axpy(n, -alpha, &pap, &mut z);
            self.apply_scaled_delassus(w, omega, e, &z, &mut t1, &mut t2, &mut az);
            let zaz_new = self.dot(n, &z, &az);
            let beta = zaz_new / zaz;
            zaz = zaz_new;
            self.xpby(n, &z, beta, &mut p);
            self.xpby(n, &az, beta, &mut ap);
            k += 1;
            rn = self.dot(n, &r, &r).sqrt();
            info.residual_history.push(rn);
            info.precond_residual_history.push(self.dot(n, &r, &z).max(0.0).sqrt());
            converged = done(params, rn, bnorm);
        }
        info.iterations = k;
        info.abs_residual = rn;
        info.rel_residual = if bnorm > 0.0 { rn / bnorm } else { 0.0 };
        info.converged = converged;
        Ok(info)
    }

    /// Uploads `S` and `Sᵀ` (or returns the cached copy of the same factor).
    pub fn sparse_inverse(&self, inv: &SparseInverse) -> Arc<DeviceSparseInverse<T>> {
        let mut cache = self.si_cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = cache.as_ref().filter(|c| c.id == inv.id()) {
            return c.clone();
        }
        *cache = None; // free the old factor before uploading the new one
        let d =
            Arc::new(DeviceSparseInverse { id: inv.id(), s: self.upload_csr(inv.s()), st: self.upload_csr(inv.st()) });
        *cache = Some(d.clone());
        d
    }

    /// `x = Sᵀ (S b)` on the device.
    pub fn sparse_inverse_solve(&self, inv: &DeviceSparseInverse<T>, b: &DBuf<T>, tmp: &mut DBuf<T>, x: &mut DBuf<T>) {
        self.spmv(&inv.s, b, tmp);
        self.spmv(&inv.st, tmp, x);
    }

    /// `c_val[k] = dot(row c_row[k] of A, row c_col[k] of B)` on the pattern `(ptr, idx)` of C.
    fn rowdot(&self, ptr: &[usize], idx: &[usize], a: &DeviceCsr<T>, b: &DeviceCsr<T>) -> Vec<f64> {
        let nnz = idx.len();
        let mut out = vec![0.0; nnz];
        if nnz == 0 {
            return out;
        }
        let mut rows = Vec::with_capacity(nnz);
        for r in 0..ptr.len() - 1 {
            rows.extend(std::iter::repeat_n(r as i32, ptr[r + 1] - ptr[r]));
        }
        let cols: Vec<i32> = idx.iter().map(|&c| c as i32).collect();
        let (dr, dc) = (self.upload_raw(&rows), self.upload_raw(&cols));
        let mut val = self.zeros(nnz);
        let ni = i32_of(nnz, "nnz");
        let mut l = self.stream.launch_builder(self.funcs.get("csr_rowdot"));
        l.arg(&ni)
            .arg(&dr.slice)
            .arg(&dc.slice)
            .arg(&a.indptr.slice)
            .arg(&a.indices.slice)
            .arg(&a.data.slice)
            .arg(&b.indptr.slice)
            .arg(&b.indices.slice)
            .arg(&b.data.slice)
            .arg(&mut val.slice);
        // SAFETY: argument list matches csr_rowdot; patterns index rows inside A and B.
        ok(unsafe { l.launch(cfg(nnz)) }, "csr_rowdot");
        self.download(&val, &mut out);
        out
    }

    /// `W = (S Hᵀ)ᵀ (S Hᵀ)`: the patterns of `Yᵀ = H Sᵀ` and `W = Yᵀ Y` on the host (symbolic
    /// products), the values on the device (sorted-row merges, one thread per entry).
    pub fn delassus(&self, inv: &SparseInverse, h: &Csr) -> Csr {
        assert_eq!(h.ncols, inv.dim(), "H must have n columns");
        let ds = self.sparse_inverse(inv);
        let dh = self.upload_csr(h);
        let (yt_ptr, yt_idx) = spgemm_pattern(h, inv.st());
        let yt_val = self.rowdot(&yt_ptr, &yt_idx, &dh, &ds.s);
        let yt = Csr { nrows: h.nrows, ncols: inv.dim(), indptr: yt_ptr, indices: yt_idx, data: yt_val };
        let y = yt.transpose();
        let (w_ptr, w_idx) = spgemm_pattern(&yt, &y);
        let dyt = self.upload_csr(&yt);
        let w_val = self.rowdot(&w_ptr, &w_idx, &dyt, &dyt);
        Csr { nrows: h.nrows, ncols: h.nrows, indptr: w_ptr, indices: w_idx, data: w_val }
    }

    /// Synchronises the stream and samples the driver's used memory.
    pub fn synchronize(&self) {
        ok(self.stream.synchronize(), "synchronize");
        if let Ok((free, total)) = self.ctx.mem_get_info() {
            self.mem.driver_peak.fetch_max(total.saturating_sub(free), Ordering::Relaxed);
        }
    }
}

/// The pattern `(indptr, indices)` of `A B` (sorted columns), without values.
pub fn spgemm_pattern(a: &Csr, b: &Csr) -> (Vec<usize>, Vec<usize>) {
    assert_eq!(a.ncols, b.nrows, "spgemm_pattern: inner dimensions differ");
    let mut seen = vec![usize::MAX; b.ncols];
    let mut ptr = Vec::with_capacity(a.nrows + 1);
    ptr.push(0);
    let mut idx = Vec::new();
    for r in 0..a.nrows {
        let start = idx.len();
        for &k in &a.indices[a.indptr[r]..a.indptr[r + 1]] {
            for &c in &b.indices[b.indptr[k]..b.indptr[k + 1]] {
                if seen[c] != r {
                    seen[c] = r;
                    idx.push(c);
                }
            }
        }
        idx[start..].sort_unstable();
        ptr.push(idx.len());
    }
    (ptr, idx)
}

impl<T: Real> Backend for Device<T> {
    fn name(&self) -> &'static str {
        "gpu"
    }
    #[track_caller]
    fn spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), a.ncols, "x length");
        assert_eq!(y.len(), a.nrows, "y length");
        let (da, dx) = (self.upload_csr(a), self.upload(x));
        let mut dy = self.zeros(a.nrows);
        Device::spmv(self, &da, &dx, &mut dy);
        self.download(&dy, y);
    }
    #[track_caller]
    fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
        assert_eq!(x.len(), y.len(), "dot: lengths differ");
        Device::dot(self, x.len(), &self.upload(x), &self.upload(y))
    }
    #[track_caller]
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), y.len(), "axpy: lengths differ");
        let (dx, mut dy) = (self.upload(x), self.upload(y));
        Device::axpy(self, x.len(), alpha, &dx, &mut dy);
        self.download(&dy, y);
    }
    #[track_caller]
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]) {
        assert_eq!(x.len(), y.len(), "xpby: lengths differ");
        let (dx, mut dy) = (self.upload(x), self.upload(y));
        Device::xpby(self, x.len(), &dx, beta, &mut dy);
        self.download(&dy, y);
    }
    #[track_caller]
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]) {
        assert!(d.len() == x.len() && x.len() == z.len(), "mul_elem: lengths differ");
        let (dd, dx) = (self.upload(d), self.upload(x));
        let mut dz = self.zeros(z.len());
        Device::mul_elem(self, z.len(), &dd, &dx, &mut dz);
        self.download(&dz, z);
    }
    fn copy(&self, x: &[f64], y: &mut [f64]) {
        // a host-to-host copy through the device would only round-trip (and round in f32)
        y.copy_from_slice(x);
        if T::PRECISION == Precision::F32 {
            for v in y.iter_mut() {
                *v = (*v as f32) as f64;
            }
        }
    }
    fn label(&self) -> String {
        format!("gpu {} ({})", self.name, T::PRECISION.name())
    }
    fn precision(&self) -> Precision {
        T::PRECISION
    }
    fn sync(&self) {
        self.synchronize();
    }
    fn device_memory(&self) -> Option<DeviceMemory> {
        Some(DeviceMemory {
            live_bytes: self.mem.live.load(Ordering::Relaxed),
            peak_bytes: self.mem.peak.load(Ordering::Relaxed),
            driver_peak_used_bytes: self.mem.driver_peak.load(Ordering::Relaxed),
        })
    }
    fn reset_peak(&self) {
        self.mem.peak.store(self.mem.live.load(Ordering::Relaxed), Ordering::Relaxed);
        self.mem.driver_peak.store(0, Ordering::Relaxed);
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
        _ws: &mut KrylovWorkspace,
    ) -> Result<PcrInfo, KrylovError> {
        let n = w.nrows;
        assert!(
            [omega.len(), e.len(), pinv.len(), b.len(), x.len()].iter().all(|&l| l == n),
            "pcr_scaled_delassus: lengths must equal dim W"
        );
        let dw = self.upload_delassus(w);
        let (dom, de, dp, db) = (self.upload(omega), self.upload(e), self.upload(pinv), self.upload(b));
        let mut dx = self.upload(x);
        let res = Device::pcr_scaled_delassus(self, &dw, &dom, &de, &dp, &db, &mut dx, params);
        self.download(&dx, x); // the last good iterate also on a breakdown
        res
    }
    fn sparse_inverse_solve(&self, inv: &SparseInverse, b: &[f64], tmp: &mut [f64], x: &mut [f64]) {
        let n = inv.dim();
        assert!(b.len() == n && tmp.len() == n && x.len() == n, "sparse_inverse_solve: lengths");
        let ds = self.sparse_inverse(inv);
        let db = self.upload(b);
        let (mut dt, mut dx) = (self.zeros(n), self.zeros(n));
        Device::sparse_inverse_solve(self, &ds, &db, &mut dt, &mut dx);
        self.download(&dt, tmp);
        self.download(&dx, x);
    }
    fn delassus(&self, inv: &SparseInverse, h: &Csr) -> Csr {
        Device::delassus(self, inv, h)
    }
    fn ncp_normal_rows(&self, kind: Ncp, c: &[f64], lambda: &[f64], r: &[f64]) -> Vec<NormalRow> {
        let m = c.len();
        assert!(lambda.len() == m && r.len() == m, "ncp_normal_rows: lengths differ");
        if m == 0 {
            return vec![];
        }
        let (dc, dl, dr) = (self.upload(c), self.upload(lambda), self.upload(r));
        let (mut phi, mut alpha, mut s) = (self.zeros(m), self.zeros(m), self.zeros(m));
        let (mi, fb) = (i32_of(m, "m"), i32::from(kind == Ncp::FischerBurmeister));
        let mut b = self.stream.launch_builder(self.funcs.get("ncp_normal"));
        b.arg(&mi)
            .arg(&fb)
            .arg(&dc.slice)
            .arg(&dl.slice)
            .arg(&dr.slice)
            .arg(&mut phi.slice)
            .arg(&mut alpha.slice)
            .arg(&mut s.slice);
        // SAFETY: (int, int, 3 × const real*, 3 × real*), all of length m.
        ok(unsafe { b.launch(cfg(m)) }, "ncp_normal");
        let (mut hp, mut ha, mut hs) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        self.download(&phi, &mut hp);
        self.download(&alpha, &mut ha);
        self.download(&s, &mut hs);
        (0..m).map(|i| NormalRow { phi: hp[i], alpha: ha[i], s: hs[i] }).collect()
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
        let m = slip.len();
        assert!(
            mu_lambda_n.len() == m && lambda_f.len() == m && r.len() == m && w.len() == m,
            "friction_compliance: lengths differ"
        );
        if m == 0 {
            return;
        }
        let (dv, dm, dl, dr) = (self.upload(slip), self.upload(mu_lambda_n), self.upload(lambda_f), self.upload(r));
        let mut dw = self.zeros(m);
        let (mi, fb) = (i32_of(m, "m"), i32::from(kind == Ncp::FischerBurmeister));
        let mut b = self.stream.launch_builder(self.funcs.get("friction_w"));
        b.arg(&mi).arg(&fb).arg(&dv.slice).arg(&dm.slice).arg(&dl.slice).arg(&dr.slice).arg(&mut dw.slice);
        // SAFETY: (int, int, 4 × const real*, real*), all of length m.
        ok(unsafe { b.launch(cfg(m)) }, "friction_w");
        self.download(&dw, w);
    }
}

enum Inner {
    F64(Device<f64>),
    F32(Device<f32>),
}

/// The CUDA backend in the precision chosen at start-up (see the module doc).
pub struct CudaBackend {
    inner: Inner,
}

impl CudaBackend {
    /// Starts the backend on device `ordinal` in `precision`; `Err(reason)` (never a panic) where
    /// the driver, NVRTC or a device is missing or the kernels do not compile.
    pub fn try_new(ordinal: usize, precision: Precision) -> Result<Self, String> {
        let inner = match precision {
            Precision::F64 => Inner::F64(Device::new(ordinal)?),
            Precision::F32 => Inner::F32(Device::new(ordinal)?),
        };
        Ok(Self { inner })
    }

    /// The f64 device, if that is the precision.
    pub fn device_f64(&self) -> Option<&Device<f64>> {
        match &self.inner {
            Inner::F64(d) => Some(d),
            Inner::F32(_) => None,
        }
    }

    /// The f32 device, if that is the precision.
    pub fn device_f32(&self) -> Option<&Device<f32>> {
        match &self.inner {
            Inner::F32(d) => Some(d),
            Inner::F64(_) => None,
        }
    }

    fn dev(&self) -> &dyn Backend {
        match &self.inner {
            Inner::F64(d) => d,
            Inner::F32(d) => d,
        }
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "gpu"
    }
    fn spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]) {
        self.dev().spmv(a, x, y)
    }
    fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
        self.dev().dot(x, y)
    }
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]) {
        self.dev().axpy(alpha, x, y)
    }
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]) {
        self.dev().xpby(x, beta, y)
    }
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]) {
        self.dev().mul_elem(d, x, z)
    }
    fn copy(&self, x: &[f64], y: &mut [f64]) {
        self.dev().copy(x, y)
    }
    fn label(&self) -> String {
        self.dev().label()
    }
    fn precision(&self) -> Precision {
        self.dev().precision()
    }
    fn sync(&self) {
        self.dev().sync()
    }
    fn device_memory(&self) -> Option<DeviceMemory> {
        self.dev().device_memory()
    }
    fn reset_peak(&self) {
        self.dev().reset_peak()
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
        self.dev().pcr_scaled_delassus(w, omega, e, pinv, b, x, params, ws)
    }
    fn sparse_inverse_solve(&self, inv: &SparseInverse, b: &[f64], tmp: &mut [f64], x: &mut [f64]) {
        self.dev().sparse_inverse_solve(inv, b, tmp, x)
    }
    fn delassus(&self, inv: &SparseInverse, h: &Csr) -> Csr {
        self.dev().delassus(inv, h)
    }
    fn ncp_normal_rows(&self, kind: Ncp, c: &[f64], lambda: &[f64], r: &[f64]) -> Vec<NormalRow> {
        self.dev().ncp_normal_rows(kind, c, lambda, r)
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
        self.dev().friction_compliance(kind, slip, mu_lambda_n, lambda_f, r, w)
    }
}

#[cfg(test)]
mod tests;
