//! The [`Blas`] and [`Backend`] implementations of the CUDA device on host slices (the primitives
//! upload their operands and download their result; the coarse operations keep their data on
//! the device), and [`CudaBackend`], the device in the precision chosen at start-up.

use super::device::Device;
use super::Real;
use crate::backend::{Backend, Blas, DeviceMemory, Precision, Transfers};
use crate::iterative::pcr::{PcrInfo, PcrParams};
use crate::iterative::{KrylovError, KrylovWorkspace};
use crate::ncp::{Ncp, NormalRow};
use crate::sparse::Csr;
use crate::sparse_inverse::SparseInverse;

impl<T: Real> Blas for Device<T> {
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
        Some(self.memory())
    }
    fn reset_peak(&self) {
        Device::reset_peak(self)
    }
}

impl<T: Real> Backend for Device<T> {
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
        let fb = kind == Ncp::FischerBurmeister;
        self.ncp_normal(m, fb, &dc, &dl, &dr, &mut phi, &mut alpha, &mut s);
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
        self.friction_w(m, kind == Ncp::FischerBurmeister, &dv, &dm, &dl, &dr, &mut dw);
        self.download(&dw, w);
    }
}

enum Inner {
    F64(Device<f64>),
    F32(Device<f32>),
}

/// A [`CudaBackend`]'s device in its precision.
pub enum CudaDevice<'a> {
    /// Double precision.
    F64(&'a Device<f64>),
    /// Single precision.
    F32(&'a Device<f32>),
}

/// The CUDA backend in the precision chosen at start-up (see the module doc).
pub struct CudaBackend {
    inner: Inner,
}

impl CudaBackend {
    /// Starts the backend on device `ordinal` in `precision`; `Err(reason)` (never a panic) where
    /// the driver, NVRTC or a device is missing or the kernels do not compile.
    pub fn try_new(ordinal: usize, precision: Precision) -> Result<Self, crate::backend::BackendError> {
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

    /// The device in its precision (for code generic over [`Resident`](crate::backend::Resident)).
    pub fn device(&self) -> CudaDevice<'_> {
        match &self.inner {
            Inner::F64(d) => CudaDevice::F64(d),
            Inner::F32(d) => CudaDevice::F32(d),
        }
    }

    /// The host↔device transfers of the device so far ([`Device::transfers`]).
    pub fn transfers(&self) -> Transfers {
        match &self.inner {
            Inner::F64(d) => d.transfers(),
            Inner::F32(d) => d.transfers(),
        }
    }

    fn dev(&self) -> &dyn Backend {
        match &self.inner {
            Inner::F64(d) => d,
            Inner::F32(d) => d,
        }
    }
}

crate::backend::forward_backend!(CudaBackend, dev);
