//! The kernel launches of [`Device`] on device buffers: BLAS-1 (dot, axpy, xpby, element-wise
//! product, copy) and SpMV — also as [`VectorOps`] for the shared PCR loop — and the method
//! kernels (scaled Delassus operator, sparse-inverse global step, Delassus assembly, per-contact
//! NCP rows and friction compliance).

use super::device::{cfg, i32_of, ok, Device, DOT_MAX_BLOCKS, DOT_THREADS};
use super::memory::{DBuf, DeviceCsr, DeviceDelassus, DeviceSparseInverse};
use super::Real;
use crate::backend::VectorOps;
use crate::sparse::Csr;
use crate::sparse_inverse::SparseInverse;
use cudarc::driver::{LaunchConfig, PushKernelArg};

impl<T: Real> Device<T> {
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
        self.transfers.scalar_read();
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

    /// Per-contact normal NCP rows on the device: `(phi, alpha, s)` of `(c, lambda, r)`
    /// (`fb`: Fischer–Burmeister, else the min map), all of length `m`.
    #[allow(clippy::too_many_arguments)]
    pub fn ncp_normal(
        &self,
        m: usize,
        fb: bool,
        dc: &DBuf<T>,
        dl: &DBuf<T>,
        dr: &DBuf<T>,
        phi: &mut DBuf<T>,
        alpha: &mut DBuf<T>,
        s: &mut DBuf<T>,
    ) {
        let (mi, fb) = (i32_of(m, "m"), i32::from(fb));
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
    }

    /// Per-contact friction compliance on the device (`fb`: Fischer–Burmeister, else the min
    /// map), all of length `m`.
    #[allow(clippy::too_many_arguments)]
    pub fn friction_w(
        &self,
        m: usize,
        fb: bool,
        dv: &DBuf<T>,
        dm: &DBuf<T>,
        dl: &DBuf<T>,
        dr: &DBuf<T>,
        dw: &mut DBuf<T>,
    ) {
        let (mi, fb) = (i32_of(m, "m"), i32::from(fb));
        let mut b = self.stream.launch_builder(self.funcs.get("friction_w"));
        b.arg(&mi).arg(&fb).arg(&dv.slice).arg(&dm.slice).arg(&dl.slice).arg(&dr.slice).arg(&mut dw.slice);
        // SAFETY: (int, int, 4 × const real*, real*), all of length m.
        ok(unsafe { b.launch(cfg(m)) }, "friction_w");
    }
}

/// The device's BLAS-1 on device buffers (lengths are the buffers' own), for
/// [`crate::iterative::pcr::pcr_loop`].
impl<T: Real> VectorOps for Device<T> {
    type Vector = DBuf<T>;
    fn dot(&self, x: &DBuf<T>, y: &DBuf<T>) -> f64 {
        Device::dot(self, x.len(), x, y)
    }
    fn axpy(&self, alpha: f64, x: &DBuf<T>, y: &mut DBuf<T>) {
        Device::axpy(self, y.len(), alpha, x, y)
    }
    fn xpby(&self, x: &DBuf<T>, beta: f64, y: &mut DBuf<T>) {
        Device::xpby(self, y.len(), x, beta, y)
    }
    fn mul_elem(&self, d: &DBuf<T>, x: &DBuf<T>, z: &mut DBuf<T>) {
        Device::mul_elem(self, z.len(), d, x, z)
    }
    fn copy(&self, x: &DBuf<T>, y: &mut DBuf<T>) {
        Device::copy(self, x, y)
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
