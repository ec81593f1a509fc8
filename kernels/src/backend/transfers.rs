//! Host↔device transfers: [`TransferCounter`] (kept by every device memory layer: the CUDA
//! device's and [`HostMirror`]'s) and [`HostMirror`], a host-memory mirror of a device's memory
//! layer whose vectors ([`MirrorVec`]) are reached only through uploads and downloads.
//!
//! The counter separates vector copies (uploads and downloads of whole vectors, with their
//! bytes) from the scalars a reduction returns to the host (the `dot` of a recurrence), so that a
//! test can assert that an iteration loop moves no vector between host and device: snapshot
//! [`TransferCounter::get`] before and after the loop and compare the vector counts.

use super::{Blas, Cpu, VectorOps};
use crate::sparse::Csr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Host↔device copies counted so far (a snapshot of a [`TransferCounter`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Transfers {
    /// Host-to-device vector copies.
    pub uploads: usize,
    /// Bytes copied host to device.
    pub upload_bytes: usize,
    /// Device-to-host vector copies.
    pub downloads: usize,
    /// Bytes copied device to host.
    pub download_bytes: usize,
    /// Scalars read back by reductions (one per `dot`).
    pub scalar_reads: usize,
}

impl Transfers {
    /// Vector copies in either direction (scalar reads excluded).
    pub fn vector_copies(&self) -> usize {
        self.uploads + self.downloads
    }
    /// The transfers counted between the snapshot `earlier` and this one.
    pub fn since(&self, earlier: &Transfers) -> Transfers {
        Transfers {
            uploads: self.uploads - earlier.uploads,
            upload_bytes: self.upload_bytes - earlier.upload_bytes,
            downloads: self.downloads - earlier.downloads,
            download_bytes: self.download_bytes - earlier.download_bytes,
            scalar_reads: self.scalar_reads - earlier.scalar_reads,
        }
    }
}

/// Counts the host↔device copies of one device memory layer (thread-safe).
#[derive(Debug, Default)]
pub struct TransferCounter {
    uploads: AtomicUsize,
    upload_bytes: AtomicUsize,
    downloads: AtomicUsize,
    download_bytes: AtomicUsize,
    scalar_reads: AtomicUsize,
}

impl TransferCounter {
    /// Counts one host-to-device copy of `bytes` bytes.
    pub fn upload(&self, bytes: usize) {
        self.uploads.fetch_add(1, Ordering::Relaxed);
        self.upload_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    /// Counts one device-to-host copy of `bytes` bytes.
    pub fn download(&self, bytes: usize) {
        self.downloads.fetch_add(1, Ordering::Relaxed);
        self.download_bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    /// Counts one scalar read back by a reduction.
    pub fn scalar_read(&self) {
        self.scalar_reads.fetch_add(1, Ordering::Relaxed);
    }
    /// The counts so far.
    pub fn get(&self) -> Transfers {
        Transfers {
            uploads: self.uploads.load(Ordering::Relaxed),
            upload_bytes: self.upload_bytes.load(Ordering::Relaxed),
            downloads: self.downloads.load(Ordering::Relaxed),
            download_bytes: self.download_bytes.load(Ordering::Relaxed),
            scalar_reads: self.scalar_reads.load(Ordering::Relaxed),
        }
    }
}

/// A vector in [`HostMirror`]'s "device" memory.
#[derive(Debug, Clone, PartialEq)]
pub struct MirrorVec(pub(super) Vec<f64>);

impl MirrorVec {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// Whether it has no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A host-memory mirror of a device's memory layer: the same `upload`/`zeros`/`download`
/// interface as the CUDA device, transfers counted by the same [`TransferCounter`], and the
/// [`VectorOps`] of [`Cpu`] (bit-identical to it) on its vectors. It runs device-resident
/// algorithms where no device is present, so that their transfer pattern can be tested.
#[derive(Debug, Default)]
pub struct HostMirror {
    transfers: TransferCounter,
}

impl HostMirror {
    /// Copies a host vector into mirror memory (one counted transfer unless empty, as on the
    /// device).
    pub fn upload(&self, x: &[f64]) -> MirrorVec {
        self.count_upload(std::mem::size_of_val(x));
        MirrorVec(x.to_vec())
    }
    /// Counts one upload of `bytes` bytes (none for an empty array, as on the device).
    pub(super) fn count_upload(&self, bytes: usize) {
        if bytes > 0 {
            self.transfers.upload(bytes);
        }
    }
    /// Counts one scalar read back by a reduction.
    pub(super) fn count_scalar(&self) {
        self.transfers.scalar_read();
    }
    /// A zeroed vector of length `n` (an allocation, not a transfer).
    pub fn zeros(&self, n: usize) -> MirrorVec {
        MirrorVec(vec![0.0; n])
    }
    /// Copies a mirror vector to the host (`out.len()` entries; one counted transfer unless
    /// empty, as on the device).
    pub fn download(&self, x: &MirrorVec, out: &mut [f64]) {
        if out.is_empty() {
            return;
        }
        self.transfers.download(std::mem::size_of_val(out));
        out.copy_from_slice(&x.0[..out.len()]);
    }
    /// `y = A x` with `A` resident (not counted: the matrix stands for one uploaded once).
    pub fn spmv(&self, a: &Csr, x: &MirrorVec, y: &mut MirrorVec) {
        Cpu.spmv(a, &x.0, &mut y.0);
    }
    /// The transfers counted so far.
    pub fn transfers(&self) -> Transfers {
        self.transfers.get()
    }
}

impl VectorOps for HostMirror {
    type Vector = MirrorVec;
    fn dot(&self, x: &MirrorVec, y: &MirrorVec) -> f64 {
        self.transfers.scalar_read();
        Cpu.dot(&x.0, &y.0)
    }
    fn axpy(&self, alpha: f64, x: &MirrorVec, y: &mut MirrorVec) {
        Cpu.axpy(alpha, &x.0, &mut y.0)
    }
    fn xpby(&self, x: &MirrorVec, beta: f64, y: &mut MirrorVec) {
        Cpu.xpby(&x.0, beta, &mut y.0)
    }
    fn mul_elem(&self, d: &MirrorVec, x: &MirrorVec, z: &mut MirrorVec) {
        Cpu.mul_elem(&d.0, &x.0, &mut z.0)
    }
    fn copy(&self, x: &MirrorVec, y: &mut MirrorVec) {
        Cpu.copy(&x.0, &mut y.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iterative::pcr::{pcr, pcr_loop, PcrParams, PcrVectors};
    use crate::iterative::CsrOperator;

    /// The counter counts every upload and download with its bytes, and a dot's scalar apart;
    /// the shared PCR loop on mirror vectors moves no vector between host and "device" (only
    /// the scalars of the recurrences come back), whatever the number of iterations, and gives
    /// the host PCR's bits.
    #[test]
    fn transfer_counter_counts_and_pcr_loop_moves_no_vector() {
        let n = 30;
        let a = crate::iterative::test_systems::ill_scaled(n, false);
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let pinv: Vec<f64> = a.diagonal().iter().map(|d| 1.0 / d).collect();
        for iterations in [1usize, 5, 20] {
            let m = HostMirror::default();
            assert_eq!(m.transfers(), Transfers::default());
            let (db, dp, mut dx) = (m.upload(&b), m.upload(&pinv), m.zeros(n));
            let after_upload = m.transfers();
            assert_eq!((after_upload.uploads, after_upload.upload_bytes), (2, 2 * 8 * n));
            assert_eq!(after_upload.downloads, 0);
            let [mut r, mut z, mut p, mut az, mut ap, mut pap] = std::array::from_fn(|_| m.zeros(n));
            let params = PcrParams { max_iterations: iterations, rel_tolerance: 0.0, abs_tolerance: 0.0 };
            let vectors = PcrVectors { r: &mut r, z: &mut z, p: &mut p, az: &mut az, ap: &mut ap, pap: &mut pap };
            let info =
                pcr_loop(&m, |x, y| m.spmv(&a, x, y), &dp, &db, &mut dx, vectors, &params).expect("no breakdown");
            assert_eq!(info.iterations, iterations);
            let after_loop = m.transfers();
            assert_eq!(after_loop.vector_copies(), after_upload.vector_copies(), "a vector copy inside the loop");
            assert!(after_loop.scalar_reads > after_upload.scalar_reads);
            let mut x = vec![0.0; n];
            m.download(&dx, &mut x);
            let t = m.transfers();
            assert_eq!((t.downloads, t.download_bytes), (1, 8 * n));
            // bit-identical to the host PCR
            let mut y = vec![0.0; n];
            let host = pcr(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &pinv, &b, &mut y, &params).unwrap();
            assert_eq!(x, y);
            assert_eq!(host, info);
        }
    }
}
