//! [`Resident`] on the CUDA device: the device-resident solver step of local_global runs here
//! with every vector a [`DBuf`], the matrices [`DeviceCsr`] / [`DeviceDelassus`], the PD element
//! data [`DeviceElements`], and the method kernels `absmax_partial`/`max_partials`,
//! `lg_contact_rows`, `lg_newton_rhs`, `cr_jacobi_pinv` and `pd_local` (kernels.cu). Transfers
//! are counted by the device's [`TransferCounter`](crate::backend::TransferCounter).

use super::device::{cfg, i32_of, ok, Device, DOT_MAX_BLOCKS, DOT_THREADS};
use super::memory::{DBuf, DeviceCsr, DeviceDelassus};
use super::Real;
use crate::backend::{ContactConsts, NcpRows, Resident, Transfers};
use crate::iterative::pcr::{PcrInfo, PcrParams};
use crate::iterative::KrylovError;
use crate::ncp::Ncp;
use crate::pd_local::{HostProjection, PdElements};
use crate::sparse::Csr;
use cudarc::driver::{LaunchConfig, PushKernelArg};

/// PD element data on the device: node DOFs (`int`, 4 per element), `G_e` (108 per element,
/// column-major), the two term weights and a vector of ones (for the energy sum).
pub struct DeviceElements<T> {
    ne: usize,
    dofs: DBuf<i32>,
    g: DBuf<T>,
    w_rot: DBuf<T>,
    w_vol: DBuf<T>,
    energy: std::sync::Mutex<DBuf<T>>,
    ones: DBuf<T>,
}

impl<T: Real> Resident for Device<T> {
    type Vec = DBuf<T>;
    type Mat = DeviceCsr<T>;
    type Delassus = DeviceDelassus<T>;
    type Elements = DeviceElements<T>;
    type Ops = Self;

    fn ops(&self) -> &Self {
        self
    }
    fn upload(&self, x: &[f64]) -> DBuf<T> {
        Device::upload(self, x)
    }
    fn zeros(&self, n: usize) -> DBuf<T> {
        Device::zeros(self, n)
    }
    fn download(&self, x: &DBuf<T>, out: &mut [f64]) {
        Device::download(self, x, out)
    }
    fn transfers(&self) -> Transfers {
        Device::transfers(self)
    }
    fn sync(&self) {
        self.synchronize();
    }
    fn upload_matrix(&self, a: &Csr) -> DeviceCsr<T> {
        self.upload_csr(a)
    }
    fn spmv(&self, a: &DeviceCsr<T>, x: &DBuf<T>, y: &mut DBuf<T>) {
        Device::spmv(self, a, x, y)
    }
    fn upload_delassus(&self, w: &Csr) -> DeviceDelassus<T> {
        Device::upload_delassus(self, w)
    }
    fn apply_delassus(&self, w: &DeviceDelassus<T>, x: &DBuf<T>, y: &mut DBuf<T>) {
        Device::apply_delassus(self, w, x, y)
    }
    fn pcr_scaled_delassus(
        &self,
        w: &DeviceDelassus<T>,
        omega: &DBuf<T>,
        e: &DBuf<T>,
        pinv: &DBuf<T>,
        b: &DBuf<T>,
        x: &mut DBuf<T>,
        params: &PcrParams,
    ) -> Result<PcrInfo, KrylovError> {
        Device::pcr_scaled_delassus(self, w, omega, e, pinv, b, x, params)
    }
    fn absmax(&self, x: &DBuf<T>) -> f64 {
        let n = x.len();
        if n == 0 {
            self.transfers.scalar_read();
            return 0.0;
        }
        let blocks = n.div_ceil(DOT_THREADS as usize).clamp(1, DOT_MAX_BLOCKS);
        let mut partial = self.zeros_raw::<f64>(blocks);
        let mut out = self.zeros_raw::<f64>(1);
        let ni = i32_of(n, "n");
        let mut b = self.stream.launch_builder(self.funcs.get("absmax_partial"));
        b.arg(&ni).arg(&x.slice).arg(&mut partial.slice);
        let c = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (DOT_THREADS, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: (int, const real*, double*); DOT_THREADS matches the kernel's shared array.
        ok(unsafe { b.launch(c) }, "absmax_partial");
        let bi = blocks as i32;
        let mut b = self.stream.launch_builder(self.funcs.get("max_partials"));
        b.arg(&bi).arg(&partial.slice).arg(&mut out.slice);
        let c = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (DOT_THREADS, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: as above.
        ok(unsafe { b.launch(c) }, "max_partials");
        self.transfers.scalar_read();
        ok(self.stream.clone_dtoh(&out.slice), "absmax download")[0]
    }
    fn mass_dist2(&self, m: &DBuf<T>, a: &DBuf<T>, b: &DBuf<T>, t1: &mut DBuf<T>, t2: &mut DBuf<T>) -> f64 {
        Device::copy(self, a, t1);
        Device::axpy(self, a.len(), -1.0, b, t1);
        Device::mul_elem(self, a.len(), m, t1, t2);
        Device::dot(self, a.len(), t2, t1)
    }
    fn upload_elements(&self, el: &PdElements) -> DeviceElements<T> {
        let ne = el.len();
        let dofs: Vec<i32> = el.dofs.iter().flat_map(|d| d.map(|k| i32_of(k, "DOF index"))).collect();
        let g: Vec<f64> = el.g.iter().flat_map(|g| g.as_slice().to_vec()).collect();
        DeviceElements {
            ne,
            dofs: self.upload_raw(&dofs),
            g: Device::upload(self, &g),
            w_rot: Device::upload(self, &el.w_rot),
            w_vol: Device::upload(self, &el.w_vol),
            energy: std::sync::Mutex::new(Device::zeros(self, ne)),
            ones: Device::upload(self, &vec![1.0; ne]),
        }
    }
    fn pd_local_step(&self, el: &DeviceElements<T>, _host: &dyn HostProjection, q: &DBuf<T>, r: &mut DBuf<T>) -> f64 {
        assert_eq!(r.len(), 12 * el.ne, "pd_local_step: r has 12 entries per element");
        if el.ne == 0 {
            self.transfers.scalar_read();
            return 0.0;
        }
        let mut energy = el.energy.lock().unwrap_or_else(|e| e.into_inner());
        let ni = i32_of(el.ne, "elements");
        let mut b = self.stream.launch_builder(self.funcs.get("pd_local"));
        b.arg(&ni)
            .arg(&el.dofs.slice)
            .arg(&el.g.slice)
            .arg(&el.w_rot.slice)
            .arg(&el.w_vol.slice)
            .arg(&q.slice)
            .arg(&mut r.slice)
            .arg(&mut energy.slice);
        // SAFETY: (int, const int*, 4 × const real*, 2 × real*); DOF indices were uploaded from
        // the elements of the same model as q.
        ok(unsafe { b.launch(cfg(el.ne)) }, "pd_local");
        Device::dot(self, el.ne, &energy, &el.ones)
    }
    fn ncp_rows(
        &self,
        ncp: Ncp,
        h: f64,
        dq: &DBuf<T>,
        lam: &DBuf<T>,
        c: &ContactConsts<DBuf<T>>,
        out: &mut NcpRows<DBuf<T>>,
    ) {
        let nc = c.gap0.len();
        if nc == 0 {
            return;
        }
        let (ni, fb, hh) = (i32_of(nc, "contacts"), i32::from(ncp == Ncp::FischerBurmeister), T::from_f64(h));
        let mut b = self.stream.launch_builder(self.funcs.get("lg_contact_rows"));
        b.arg(&ni)
            .arg(&fb)
            .arg(&hh)
            .arg(&dq.slice)
            .arg(&lam.slice)
            .arg(&c.gap0.slice)
            .arg(&c.mu.slice)
            .arg(&c.r_n.slice)
            .arg(&c.r_f.slice)
            .arg(&mut out.omega.slice)
            .arg(&mut out.ediag.slice)
            .arg(&mut out.phi.slice)
            .arg(&mut out.phi_n.slice)
            .arg(&mut out.phi_f.slice)
            .arg(&mut out.stick.slice)
            .arg(&mut out.slip.slice);
        // SAFETY: (int, int, real, 6 × const real*, 7 × real*); 3-per-contact vectors have 3 nc
        // entries, the others nc (the caller's layout, NcpRows).
        ok(unsafe { b.launch(cfg(nc)) }, "lg_contact_rows");
    }
    fn newton_rhs(&self, h: f64, phi: &DBuf<T>, omega: &DBuf<T>, y: &DBuf<T>, rhs: &mut DBuf<T>) {
        let m = rhs.len();
        if m == 0 {
            return;
        }
        let (mi, hh) = (i32_of(m, "rows"), T::from_f64(h));
        let mut b = self.stream.launch_builder(self.funcs.get("lg_newton_rhs"));
        b.arg(&mi).arg(&hh).arg(&phi.slice).arg(&omega.slice).arg(&y.slice).arg(&mut rhs.slice);
        // SAFETY: (int, real, 3 × const real*, real*), all of length m.
        ok(unsafe { b.launch(cfg(m)) }, "lg_newton_rhs");
    }
    fn cr_jacobi_pinv(&self, omega: &DBuf<T>, wdiag: &DBuf<T>, ediag: &DBuf<T>, pinv: &mut DBuf<T>) {
        let m = pinv.len();
        if m == 0 {
            return;
        }
        let mi = i32_of(m, "rows");
        let mut b = self.stream.launch_builder(self.funcs.get("cr_jacobi_pinv"));
        b.arg(&mi).arg(&omega.slice).arg(&wdiag.slice).arg(&ediag.slice).arg(&mut pinv.slice);
        // SAFETY: (int, 3 × const real*, real*), all of length m.
        ok(unsafe { b.launch(cfg(m)) }, "cr_jacobi_pinv");
    }
}
