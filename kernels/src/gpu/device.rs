//! [`Device`]: a CUDA context on one device with the kernels of [`super::SOURCE`] compiled by
//! NVRTC in precision `T`, and the launch helpers the other modules share.

use super::compile::{compile_ptx, KERNELS};
use super::memory::{DeviceSparseInverse, MemTracker};
use super::{driver_error, probe, Real};
use crate::backend::BackendError;
use crate::backend::TransferCounter;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream, LaunchConfig};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

pub(super) const BLOCK: u32 = 256;
pub(super) const DOT_THREADS: u32 = 256;
pub(super) const DOT_MAX_BLOCKS: usize = 1024;

pub(super) struct Funcs {
    f: Vec<CudaFunction>,
}

impl Funcs {
    pub(super) fn get(&self, name: &str) -> &CudaFunction {
        let i = KERNELS.iter().position(|k| *k == name).expect("kernel listed in KERNELS");
        &self.f[i]
    }
}

#[track_caller]
pub(super) fn ok<V, E: std::fmt::Debug>(r: Result<V, E>, what: &str) -> V {
    match r {
        Ok(v) => v,
        Err(e) => panic!("CUDA error in {what}: {e:?}"),
    }
}

pub(super) fn cfg(n: usize) -> LaunchConfig {
    let blocks = (n as u32).div_ceil(BLOCK).max(1);
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 }
}

pub(super) fn i32_of(v: usize, what: &str) -> i32 {
    i32::try_from(v).unwrap_or_else(|_| panic!("{what} = {v} exceeds the 32-bit index range of the GPU kernels"))
}

/// A CUDA context with the compiled kernels, in precision `T`. Its memory layer (allocation,
/// transfers, counters) is in `memory.rs`, its kernel launches in `ops.rs`, its PCR in `pcr.rs`.
pub struct Device<T: Real> {
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    pub(super) funcs: Funcs,
    pub(super) name: String,
    pub(super) mem: Arc<MemTracker>,
    pub(super) transfers: TransferCounter,
    pub(super) si_cache: Mutex<Option<Arc<DeviceSparseInverse<T>>>>,
    pub(super) _t: PhantomData<T>,
}

impl<T: Real> Device<T> {
    /// Opens device `ordinal` and compiles the kernels (after [`probe`]).
    pub fn new(ordinal: usize) -> Result<Self, BackendError> {
        let n = probe()?;
        if ordinal >= n {
            return Err(BackendError::NoSuchDevice { ordinal, present: n });
        }
        let ctx = CudaContext::new(ordinal).map_err(driver_error(&format!("CudaContext::new({ordinal})")))?;
        let name = ctx.name().map_err(driver_error("device name"))?;
        // the same options as the CI check (compile.rs); no arch: the driver JIT-compiles the PTX
        let ptx = compile_ptx(T::PRECISION, None).map_err(BackendError::Compile)?;
        let module = ctx.load_module(ptx).map_err(driver_error("load module"))?;
        let f = KERNELS
            .iter()
            .map(|k| module.load_function(k).map_err(driver_error(&format!("load kernel {k}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let stream = ctx.default_stream();
        Ok(Self {
            ctx,
            stream,
            funcs: Funcs { f },
            name,
            mem: Arc::default(),
            transfers: TransferCounter::default(),
            si_cache: Mutex::new(None),
            _t: PhantomData,
        })
    }

    /// The device's name.
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// Synchronises the stream and samples the driver's used memory.
    pub fn synchronize(&self) {
        ok(self.stream.synchronize(), "synchronize");
        if let Ok((free, total)) = self.ctx.mem_get_info() {
            self.mem.driver_peak.fetch_max(total.saturating_sub(free), Ordering::Relaxed);
        }
    }
}
