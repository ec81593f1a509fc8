//! The device memory layer of [`Device`]: buffers that count their bytes ([`DBuf`]; live and peak
//! bytes for [`crate::backend::DeviceMemory`]), uploads and downloads counted by the device's
//! [`TransferCounter`](crate::backend::TransferCounter) ([`Device::transfers`]), device CSR
//! matrices, the Delassus operator in its smaller layout and the cached sparse-inverse factor.

use super::device::{i32_of, ok, Device};
use super::Real;
use crate::backend::{dense_is_smaller, DeviceMemory, Transfers};
use crate::sparse::Csr;
use crate::sparse_inverse::SparseInverse;
use cudarc::driver::{CudaSlice, DeviceRepr, ValidAsZeroBits};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Debug, Default)]
pub(super) struct MemTracker {
    pub(super) live: AtomicUsize,
    pub(super) peak: AtomicUsize,
    pub(super) driver_peak: AtomicUsize,
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
    /// Elements in use (the allocation has at least one, even for an empty vector).
    len: usize,
    bytes: usize,
    mem: Arc<MemTracker>,
}

impl<T> DBuf<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
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
    pub(super) indptr: DBuf<i32>,
    pub(super) indices: DBuf<i32>,
    pub(super) data: DBuf<T>,
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

/// `S` and `Sᵀ` of a [`SparseInverse`] on the device.
pub struct DeviceSparseInverse<T> {
    /// Identity of the host factor.
    pub id: u64,
    /// `S`.
    pub s: DeviceCsr<T>,
    /// `Sᵀ`.
    pub st: DeviceCsr<T>,
}

impl<T: Real> Device<T> {
    fn track<U>(&self, slice: CudaSlice<U>, len: usize) -> DBuf<U> {
        let bytes = slice.len() * std::mem::size_of::<U>();
        self.mem.add(bytes);
        DBuf { slice, len, bytes, mem: self.mem.clone() }
    }

    /// Uploads a host vector (converted to `T`).
    pub fn upload(&self, x: &[f64]) -> DBuf<T> {
        let v: Vec<T> = x.iter().map(|&a| T::from_f64(a)).collect();
        self.upload_raw(&v)
    }

    /// Uploads a slice as is (one counted transfer unless empty).
    pub fn upload_raw<U: DeviceRepr + ValidAsZeroBits>(&self, x: &[U]) -> DBuf<U> {
        if x.is_empty() {
            return self.zeros_raw(0);
        }
        self.transfers.upload(std::mem::size_of_val(x));
        self.track(ok(self.stream.clone_htod(x), "upload"), x.len())
    }

    /// A zeroed vector of length `n`.
    pub fn zeros(&self, n: usize) -> DBuf<T> {
        self.zeros_raw(n)
    }

    pub(super) fn zeros_raw<U: DeviceRepr + ValidAsZeroBits>(&self, n: usize) -> DBuf<U> {
        self.track(ok(self.stream.alloc_zeros::<U>(n.max(1)), "alloc"), n)
    }

    /// Downloads into a host vector (converted to f64; `out.len()` entries; one counted
    /// transfer unless empty).
    pub fn download(&self, x: &DBuf<T>, out: &mut [f64]) {
        if out.is_empty() {
            return;
        }
        let v: Vec<T> = ok(self.stream.clone_dtoh(&x.slice), "download");
        self.transfers.download(std::mem::size_of_val(v.as_slice()));
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

    /// The host↔device transfers of this device so far (vector uploads and downloads with
    /// their bytes; the scalars read back by reductions apart).
    pub fn transfers(&self) -> Transfers {
        self.transfers.get()
    }

    /// Live and peak bytes of this device's buffers, and the driver's peak.
    pub fn memory(&self) -> DeviceMemory {
        DeviceMemory {
            live_bytes: self.mem.live.load(Ordering::Relaxed),
            peak_bytes: self.mem.peak.load(Ordering::Relaxed),
            driver_peak_used_bytes: self.mem.driver_peak.load(Ordering::Relaxed),
        }
    }

    /// Restarts the peak counters of [`Device::memory`].
    pub fn reset_peak(&self) {
        self.mem.peak.store(self.mem.live.load(Ordering::Relaxed), Ordering::Relaxed);
        self.mem.driver_peak.store(0, Ordering::Relaxed);
    }
}
