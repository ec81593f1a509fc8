//! [`Resident`]: a device memory layer on which a whole solver step runs with its data resident:
//! matrices and vectors are uploaded before the iteration loop, every operation of the loop takes
//! and gives device handles, and only scalars (reductions: norms, energies, counts) come back to
//! the host while it runs. Implemented by [`HostMirror`] (host memory, counted as if it were a
//! device: the CPU path) and by the CUDA device (`crate::gpu::Device`, feature `gpu`), so that
//! one solver loop runs on both and its transfers are counted the same way
//! ([`Resident::transfers`]).
//!
//! The method operations (NCP rows, Newton right-hand side, Jacobi preconditioner, the PD local
//! step) are those of Zeng et al.'s local-global method; each has its host definition in
//! [`crate::ncp`] / [`crate::pd_local`], which the mirror runs and the device kernels reproduce.

use super::{HostMirror, MirrorVec, Transfers, VectorOps};
use crate::iterative::pcr::{PcrInfo, PcrParams};
use crate::iterative::KrylovError;
use crate::ncp::Ncp;
use crate::pd_local::{HostProjection, PdElements};
use crate::sparse::Csr;

/// Whether a square `m × m` matrix with `nnz` stored entries takes fewer bytes dense than in CSR
/// (`8 m²` against `(8 + 4) nnz + 4 (m + 1)` in f64): the layout a device stores `W` in.
pub fn dense_is_smaller(m: usize, nnz: usize) -> bool {
    8 * m * m <= 12 * nnz + 4 * (m + 1)
}

/// `max(a, b)`, NaN if either is NaN (`f64::max` drops a NaN), as the device's `fmax`-free
/// reductions do.
pub fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// The per-contact constants of a step's NCP rows (each of length `nc`).
pub struct ContactConsts<V> {
    /// Start-of-step gaps (m).
    pub gap0: V,
    /// Friction coefficients.
    pub mu: V,
    /// Complementarity scales `r_n`, `r_f` (Eq. 28).
    pub r_n: V,
    /// See `r_n`.
    pub r_f: V,
}

/// The NCP rows of one iterate on the device: `Ω`, `E`, `φ` (length `3 nc`, order `(n, t1, t2)`),
/// and per contact `|φ_n|`, `max(|φ_t1|, |φ_t2|)` and 0/1 stick and slip flags (length `nc`), the
/// inputs of the statistics a log row needs (reduced to scalars).
pub struct NcpRows<V> {
    /// `Ω`.
    pub omega: V,
    /// `E`.
    pub ediag: V,
    /// `φ`.
    pub phi: V,
    /// `|φ_n|` per contact.
    pub phi_n: V,
    /// `max(|φ_t1|, |φ_t2|)` per contact.
    pub phi_f: V,
    /// 1 where the friction rows stick (`E_f = 0`), else 0.
    pub stick: V,
    /// 1 where they slip (`E_f > 0`), else 0.
    pub slip: V,
}

/// A device memory layer for device-resident solver steps (see the module doc). Vector copies
/// happen only in [`Self::upload`], [`Self::download`] and the `upload_*` methods (each counted
/// in [`Self::transfers`]); reductions count one scalar read each.
pub trait Resident: Sync {
    /// A vector on the device.
    type Vec: Send + Sync;
    /// A sparse matrix on the device.
    type Mat: Send + Sync;
    /// The Delassus operator on the device (CSR or dense, whichever is smaller).
    type Delassus: Send + Sync;
    /// PD element data on the device.
    type Elements: Send + Sync;
    /// The BLAS-1 of the device's vectors (the shared PCR loop's interface).
    type Ops: VectorOps<Vector = Self::Vec> + ?Sized;

    /// The vector operations (`dot` counts a scalar read).
    fn ops(&self) -> &Self::Ops;
    /// Host→device copy of a vector (counted).
    fn upload(&self, x: &[f64]) -> Self::Vec;
    /// A zeroed vector of length `n` (an allocation, no transfer).
    fn zeros(&self, n: usize) -> Self::Vec;
    /// Device→host copy of `out.len()` entries (counted).
    fn download(&self, x: &Self::Vec, out: &mut [f64]);
    /// The transfers counted so far.
    fn transfers(&self) -> Transfers;
    /// Waits for queued device work (before reading a clock; no-op on the host).
    fn sync(&self) {}

    /// Uploads a CSR matrix (row pointers, column indices, values: three counted copies, fewer
    /// for empty arrays).
    fn upload_matrix(&self, a: &Csr) -> Self::Mat;
    /// `y = A x`.
    fn spmv(&self, a: &Self::Mat, x: &Self::Vec, y: &mut Self::Vec);
    /// Uploads `W` (dense when [`dense_is_smaller`]: one copy; else as [`Self::upload_matrix`]).
    fn upload_delassus(&self, w: &Csr) -> Self::Delassus;
    /// `y = W x`.
    fn apply_delassus(&self, w: &Self::Delassus, x: &Self::Vec, y: &mut Self::Vec);
    /// Jacobi-preconditioned CR on `(Ω W Ω + E) x = b` from the guess in `x`, every vector on the
    /// device ([`crate::iterative::pcr::pcr_loop`]).
    #[allow(clippy::too_many_arguments)]
    fn pcr_scaled_delassus(
        &self,
        w: &Self::Delassus,
        omega: &Self::Vec,
        e: &Self::Vec,
        pinv: &Self::Vec,
        b: &Self::Vec,
        x: &mut Self::Vec,
        params: &PcrParams,
    ) -> Result<PcrInfo, KrylovError>;

    /// `max |x_i|`, NaN if any entry is NaN (one scalar read; 0 for an empty vector).
    fn absmax(&self, x: &Self::Vec) -> f64;
    /// `Σ_i m_i (a_i − b_i)²` with scratch `t1`, `t2` (one scalar read).
    fn mass_dist2(&self, m: &Self::Vec, a: &Self::Vec, b: &Self::Vec, t1: &mut Self::Vec, t2: &mut Self::Vec) -> f64;

    /// Uploads the element data of a PD local step.
    fn upload_elements(&self, el: &PdElements) -> Self::Elements;
    /// The PD local step at `q` ([`crate::pd_local::local_step_host`]): `r` (length `12 ne`)
    /// receives the per-element `Σ w Gᵀ p`; returns the summed PD energy (one scalar read). The
    /// host runs `host`; a device runs its own projection kernel (see [`crate::pd_local`]).
    fn pd_local_step(&self, el: &Self::Elements, host: &dyn HostProjection, q: &Self::Vec, r: &mut Self::Vec) -> f64;

    /// The NCP rows of every contact ([`crate::ncp::contact_rows`]) from `dq = H (q − q_t)` and
    /// the multipliers `lam`.
    fn ncp_rows(
        &self,
        ncp: Ncp,
        h: f64,
        dq: &Self::Vec,
        lam: &Self::Vec,
        c: &ContactConsts<Self::Vec>,
        out: &mut NcpRows<Self::Vec>,
    );
    /// The constraint system's right-hand side per contact ([`crate::ncp::newton_rhs`]).
    fn newton_rhs(&self, h: f64, phi: &Self::Vec, omega: &Self::Vec, y: &Self::Vec, rhs: &mut Self::Vec);
    /// The Jacobi preconditioner per row ([`crate::ncp::cr_jacobi_pinv`]).
    fn cr_jacobi_pinv(&self, omega: &Self::Vec, wdiag: &Self::Vec, ediag: &Self::Vec, pinv: &mut Self::Vec);
}

/// The mirror's matrices: the host matrix plus the bytes its upload stood for.
pub struct MirrorMat(Csr);

/// The mirror's Delassus operator.
pub struct MirrorDelassus(Csr);

impl HostMirror {
    /// Counts the upload of a CSR matrix as a device stores it (`int` pointers and indices).
    fn count_csr(&self, a: &Csr) {
        self.count_upload(4 * (a.nrows + 1));
        self.count_upload(4 * a.nnz());
        self.count_upload(8 * a.nnz());
    }
}

impl Resident for HostMirror {
    type Vec = MirrorVec;
    type Mat = MirrorMat;
    type Delassus = MirrorDelassus;
    type Elements = PdElements;
    type Ops = Self;

    fn ops(&self) -> &Self {
        self
    }
    fn upload(&self, x: &[f64]) -> MirrorVec {
        HostMirror::upload(self, x)
    }
    fn zeros(&self, n: usize) -> MirrorVec {
        HostMirror::zeros(self, n)
    }
    fn download(&self, x: &MirrorVec, out: &mut [f64]) {
        HostMirror::download(self, x, out)
    }
    fn transfers(&self) -> Transfers {
        HostMirror::transfers(self)
    }
    fn upload_matrix(&self, a: &Csr) -> MirrorMat {
        self.count_csr(a);
        MirrorMat(a.clone())
    }
    fn spmv(&self, a: &MirrorMat, x: &MirrorVec, y: &mut MirrorVec) {
        super::Blas::spmv(&super::Cpu, &a.0, &x.0, &mut y.0);
    }
    fn upload_delassus(&self, w: &Csr) -> MirrorDelassus {
        if w.nrows > 0 && dense_is_smaller(w.nrows, w.nnz()) {
            self.count_upload(8 * w.nrows * w.nrows);
        } else {
            self.count_csr(w);
        }
        MirrorDelassus(w.clone())
    }
    fn apply_delassus(&self, w: &MirrorDelassus, x: &MirrorVec, y: &mut MirrorVec) {
        super::Blas::spmv(&super::Cpu, &w.0, &x.0, &mut y.0);
    }
    fn pcr_scaled_delassus(
        &self,
        w: &MirrorDelassus,
        omega: &MirrorVec,
        e: &MirrorVec,
        pinv: &MirrorVec,
        b: &MirrorVec,
        x: &mut MirrorVec,
        params: &PcrParams,
    ) -> Result<PcrInfo, KrylovError> {
        use crate::iterative::pcr::{pcr_loop, PcrVectors};
        let n = w.0.nrows;
        let (mut t1, mut t2) = (self.zeros(n), self.zeros(n));
        let [mut r, mut z, mut p, mut az, mut ap, mut pap] = std::array::from_fn(|_| self.zeros(n));
        let vectors = PcrVectors { r: &mut r, z: &mut z, p: &mut p, az: &mut az, ap: &mut ap, pap: &mut pap };
        // the operator of `super::ScaledDelassus`, op by op (the host reference's rounding)
        let apply = |x: &MirrorVec, y: &mut MirrorVec| {
            self.mul_elem(omega, x, &mut t1);
            self.apply_delassus(w, &t1, &mut t2);
            self.mul_elem(omega, &t2, y);
            self.mul_elem(e, x, &mut t1);
            self.axpy(1.0, &t1, y);
        };
        pcr_loop(self, apply, pinv, b, x, vectors, params)
    }
    fn absmax(&self, x: &MirrorVec) -> f64 {
        self.count_scalar();
        x.0.iter().fold(0.0, |m, v| nan_max(m, v.abs()))
    }
    fn mass_dist2(&self, m: &MirrorVec, a: &MirrorVec, b: &MirrorVec, _t1: &mut MirrorVec, _t2: &mut MirrorVec) -> f64 {
        self.count_scalar();
        (0..m.len()).map(|k| m.0[k] * (a.0[k] - b.0[k]).powi(2)).sum()
    }
    fn upload_elements(&self, el: &PdElements) -> PdElements {
        // as the device stores them: int DOFs, G, the two weights, and a vector of ones
        if !el.is_empty() {
            let ne = el.len();
            for bytes in [4 * 4 * ne, 8 * 108 * ne, 8 * ne, 8 * ne, 8 * ne] {
                self.count_upload(bytes);
            }
        }
        el.clone()
    }
    fn pd_local_step(&self, el: &PdElements, host: &dyn HostProjection, q: &MirrorVec, r: &mut MirrorVec) -> f64 {
        let mut energy = vec![0.0; el.len()];
        crate::pd_local::local_step_host(el, host, &q.0, &mut r.0, &mut energy);
        self.count_scalar();
        energy.iter().sum::<f64>()
    }
    fn ncp_rows(
        &self,
        ncp: Ncp,
        h: f64,
        dq: &MirrorVec,
        lam: &MirrorVec,
        c: &ContactConsts<MirrorVec>,
        out: &mut NcpRows<MirrorVec>,
    ) {
        use crate::ncp::{contact_rows, FrictionState};
        for i in 0..c.gap0.len() {
            let at = |v: &MirrorVec| [v.0[3 * i], v.0[3 * i + 1], v.0[3 * i + 2]];
            let rows = contact_rows(ncp, h, at(dq), c.gap0.0[i], c.mu.0[i], c.r_n.0[i], c.r_f.0[i], at(lam));
            out.omega.0[3 * i..3 * i + 3].copy_from_slice(&rows.omega);
            out.ediag.0[3 * i..3 * i + 3].copy_from_slice(&rows.ediag);
            out.phi.0[3 * i..3 * i + 3].copy_from_slice(&rows.phi);
            out.phi_n.0[i] = rows.phi[0].abs();
            out.phi_f.0[i] = nan_max(rows.phi[1].abs(), rows.phi[2].abs());
            out.stick.0[i] = f64::from(u8::from(rows.friction == FrictionState::Stick));
            out.slip.0[i] = f64::from(u8::from(rows.friction == FrictionState::Slip));
        }
    }
    fn newton_rhs(&self, h: f64, phi: &MirrorVec, omega: &MirrorVec, y: &MirrorVec, rhs: &mut MirrorVec) {
        for i in 0..rhs.len() / 3 {
            let at = |v: &MirrorVec| [v.0[3 * i], v.0[3 * i + 1], v.0[3 * i + 2]];
            rhs.0[3 * i..3 * i + 3].copy_from_slice(&crate::ncp::newton_rhs(h, at(phi), at(omega), at(y)));
        }
    }
    fn cr_jacobi_pinv(&self, omega: &MirrorVec, wdiag: &MirrorVec, ediag: &MirrorVec, pinv: &mut MirrorVec) {
        for (k, p) in pinv.0.iter_mut().enumerate() {
            *p = crate::ncp::cr_jacobi_pinv(omega.0[k], wdiag.0[k], ediag.0[k]);
        }
    }
}
