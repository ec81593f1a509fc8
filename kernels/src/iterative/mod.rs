//! Krylov solvers for symmetric (semi-)definite systems `A x = b` with a matrix-free operator:
//! conjugate gradients ([`cg`]), conjugate residual ([`cr`]) and Jacobi-preconditioned conjugate
//! residual ([`pcr`], Macklin et al. 2019 §8.2). Every vector operation goes through a
//! [`Blas`] backend; the PCR loop itself is shared with the device path
//! ([`pcr::pcr_loop`]).
//!
//! Each solver has a `Params`/`Info`/`Error` triad (faer's `CgParams`/`CgInfo`/`CgError`,
//! `faer/src/operator`). One difference from faer: running out of iterations is *not* an error here —
//! contact solvers run these with a fixed budget and use the last iterate (Macklin §8.2:
//! "can be stopped early with a useful result"), so [`KrylovInfo::converged`] says whether the
//! tolerance was met, and [`KrylovError`] is reserved for breakdowns (a non-positive or
//! non-finite curvature), which leave no usable iterate beyond the last good one.
//!
//! Work vectors: each solver has a `*_with` form taking a [`KrylovWorkspace`] that a caller
//! keeps across solves (a Newton loop calls the linear solver every iteration), so that a solve of
//! `k` iterations costs `k` operator applications and vector operations and no allocation beyond
//! the two residual histories of [`KrylovInfo`]. The plain forms ([`pcr::pcr`], [`cg::cg`],
//! [`cr::cr`]) allocate a fresh workspace per call.

pub mod cg;
pub mod cr;
pub mod pcr;

use crate::backend::Blas;
use crate::sparse::Csr;

/// A square linear operator `y = A x` (matrix-free). `apply` takes `&mut self` so that
/// implementations can keep scratch buffers.
pub trait LinearOperator {
    /// Dimension `n` of `A`.
    fn dim(&self) -> usize;
    /// `y = A x`.
    fn apply(&mut self, x: &[f64], y: &mut [f64]);
}

/// A CSR matrix as an operator through a backend's SpMV.
pub struct CsrOperator<'a, B: Blas + ?Sized> {
    /// The matrix (square).
    pub matrix: &'a Csr,
    /// The backend doing the SpMV.
    pub backend: &'a B,
}

impl<B: Blas + ?Sized> LinearOperator for CsrOperator<'_, B> {
    fn dim(&self) -> usize {
        self.matrix.nrows
    }
    fn apply(&mut self, x: &[f64], y: &mut [f64]) {
        self.backend.spmv(self.matrix, x, y);
    }
}

/// Reusable work vectors of the Krylov solvers (host vectors; every operation on them still goes
/// through the [`Blas`] backend passed to the solver). Sized on first use and resized only when the
/// dimension changes, so one workspace serves every solve of a Newton loop.
#[derive(Debug, Clone, Default)]
pub struct KrylovWorkspace {
    /// Residual `r = b − A x`.
    pub(crate) r: Vec<f64>,
    /// Preconditioned residual `z = P⁻¹ r`.
    pub(crate) z: Vec<f64>,
    /// Search direction `p`.
    pub(crate) p: Vec<f64>,
    /// `A z` (CR) .
    pub(crate) az: Vec<f64>,
    /// `A p`.
    pub(crate) ap: Vec<f64>,
    /// `P⁻¹ A p` (CR).
    pub(crate) pap: Vec<f64>,
    /// All ones: the identity preconditioner of [`cr::cr_with`].
    pub(crate) ones: Vec<f64>,
    /// Scratch of the matrix-free operators the backend builds around a solve
    /// ([`crate::backend::Backend::pcr_scaled_delassus`]); moved out for the solve, so the
    /// solver's own vectors stay borrowable.
    pub(crate) operator_scratch: [Vec<f64>; 2],
}

impl KrylovWorkspace {
    /// A workspace already sized for dimension `n`.
    pub fn new(n: usize) -> Self {
        let mut w = Self::default();
        w.resize(n);
        w
    }

    /// Sizes every vector to `n` (no allocation when `n` does not exceed the largest size seen).
    /// The contents are unspecified: every solver initialises what it reads.
    pub fn resize(&mut self, n: usize) {
        self.resize_work(n);
        self.ones.resize(n, 1.0);
    }

    /// Sizes the work vectors (not `ones`) to `n`.
    pub(crate) fn resize_work(&mut self, n: usize) {
        for v in [&mut self.r, &mut self.z, &mut self.p, &mut self.az, &mut self.ap, &mut self.pap] {
            v.resize(n, 0.0);
        }
    }

    /// The dimension it is sized for.
    pub fn dim(&self) -> usize {
        self.r.len()
    }
}

/// A [`KrylovInfo`] with its residual histories reserved for `max_iterations` iterations.
pub(crate) fn info_for(params: &KrylovParams) -> KrylovInfo {
    let cap = params.max_iterations.saturating_add(1).min(1 << 16);
    KrylovInfo {
        residual_history: Vec::with_capacity(cap),
        precond_residual_history: Vec::with_capacity(cap),
        ..Default::default()
    }
}

/// Stopping rule shared by the Krylov solvers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KrylovParams {
    /// Most iterations (each costs one operator application).
    pub max_iterations: usize,
    /// Stop when `||b - A x||_2 <= rel_tolerance ||b||_2` (0 disables: fixed budget).
    pub rel_tolerance: f64,
    /// Stop when `||b - A x||_2 <= abs_tolerance` (0 disables).
    pub abs_tolerance: f64,
}

impl Default for KrylovParams {
    fn default() -> Self {
        Self { max_iterations: 100, rel_tolerance: 1e-10, abs_tolerance: 0.0 }
    }
}

/// What a Krylov solve reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KrylovInfo {
    /// Iterations done.
    pub iterations: usize,
    /// `||b - A x||_2` at the returned `x` (recursively updated residual).
    pub abs_residual: f64,
    /// `abs_residual / ||b||_2` (0 if `b = 0`).
    pub rel_residual: f64,
    /// Whether a tolerance was met (false: the budget ran out; `x` is still the last iterate).
    pub converged: bool,
    /// `||r_k||_2` for `k = 0..=iterations` (`r_0 = b - A x_0`).
    pub residual_history: Vec<f64>,
    /// `sqrt(r_k · P⁻¹ r_k)`, the preconditioned residual norm (equals `residual_history`
    /// without a preconditioner). PCR minimises it, so it is non-increasing.
    pub precond_residual_history: Vec<f64>,
}

/// A breakdown: the iteration cannot continue (the last good iterate is left in `x`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KrylovError {
    /// A curvature `p·A p` (CG) or `Ap·P⁻¹Ap` (CR) was not positive: the operator or the
    /// preconditioner is not positive definite on the Krylov space.
    #[error("non-positive curvature {value} at iteration {iteration}")]
    NonPositiveCurvature {
        /// Iteration index.
        iteration: usize,
        /// The offending value.
        value: f64,
    },
    /// A NaN or infinity appeared.
    #[error("non-finite value at iteration {iteration}")]
    NonFinite {
        /// Iteration index.
        iteration: usize,
    },
}

/// Whether the stopping rule is met for residual norm `r` and right-hand-side norm `b`.
pub(crate) fn done(p: &KrylovParams, r: f64, b: f64) -> bool {
    r <= p.abs_tolerance || (p.rel_tolerance > 0.0 && r <= p.rel_tolerance * b) || r == 0.0
}

#[cfg(test)]
pub(crate) mod test_systems {
    use crate::sparse::Csr;

    /// A deterministic, badly scaled SPD (or PSD if `singular`) matrix `A = Bᵀ D B + shift I`.
    pub fn ill_scaled(n: usize, singular: bool) -> Csr {
        let mut t = Vec::new();
        // tridiagonal B with scales over 6 decades
        let scale = |i: usize| 10f64.powf(-3.0 + 6.0 * i as f64 / n as f64);
        let mut dense = vec![vec![0.0; n]; n];
        for i in 0..n {
            let rank_cut = singular && i == n - 1;
            let rows: Vec<(usize, f64)> = if rank_cut { vec![] } else { vec![(i, 1.0), ((i + 1) % n, -0.7)] };
            for &(a, va) in &rows {
                for &(b, vb) in &rows {
                    dense[a][b] += scale(i) * va * vb;
                }
            }
        }
        for (i, row) in dense.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    t.push((i, j, v));
                }
            }
        }
        Csr::from_triplets(n, n, &t)
    }
}

#[cfg(test)]
mod workspace_tests {
    //! The workspace forms reuse their vectors: counted with a per-thread counting allocator
    //! (installed for this test binary; it only counts and forwards to the system allocator).
    use super::test_systems::ill_scaled;
    use super::*;
    use crate::backend::Cpu;
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    struct Counting;

    thread_local! {
        static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    }

    // SAFETY: forwards every call to `System` unchanged; the counter is a plain thread-local
    // `Cell` (const-initialised, so touching it never allocates).
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
            System.alloc(layout)
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            System.dealloc(ptr, layout)
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
            System.realloc(ptr, layout, new_size)
        }
    }

    #[global_allocator]
    static GLOBAL: Counting = Counting;

    /// Allocations made by `f` on this thread.
    fn allocations(f: impl FnOnce()) -> usize {
        let before = ALLOCATIONS.with(|c| c.get());
        f();
        ALLOCATIONS.with(|c| c.get()) - before
    }

    type Solve = fn(&Csr, &[f64], &[f64], &mut [f64], &KrylovParams, &mut KrylovWorkspace) -> KrylovInfo;

    const SOLVERS: [(&str, Solve); 3] = [
        ("pcr", |a, pinv, b, x, p, ws| {
            pcr::pcr_with(&Cpu, &mut CsrOperator { matrix: a, backend: &Cpu }, pinv, b, x, p, ws).unwrap()
        }),
        ("cg", |a, pinv, b, x, p, ws| {
            cg::cg_with(&Cpu, &mut CsrOperator { matrix: a, backend: &Cpu }, pinv, b, x, p, ws).unwrap()
        }),
        ("cr", |a, _, b, x, p, ws| {
            cr::cr_with(&Cpu, &mut CsrOperator { matrix: a, backend: &Cpu }, b, x, p, ws).unwrap()
        }),
    ];

    /// A warmed workspace makes a fixed-budget solve allocation-free apart from the two residual
    /// histories (exactly 2 allocations, whatever the dimension and the iteration count), and the
    /// result is bit-identical to the allocating form.
    #[test]
    fn warmed_workspace_allocates_only_the_histories() {
        for n in [10usize, 200] {
            let a = ill_scaled(n, false);
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let pinv: Vec<f64> = a.diagonal().iter().map(|d| 1.0 / d).collect();
            let params = KrylovParams { max_iterations: 30, rel_tolerance: 0.0, abs_tolerance: 0.0 };
            for (name, solve) in SOLVERS {
                let mut ws = KrylovWorkspace::new(n);
                let mut x = vec![0.0; n];
                let first = solve(&a, &pinv, &b, &mut x, &params, &mut ws);
                x.fill(0.0);
                let mut again = KrylovInfo::default();
                let count = allocations(|| again = solve(&a, &pinv, &b, &mut x, &params, &mut ws));
                assert_eq!(count, 2, "{name} n={n}: {count} allocations");
                assert_eq!(first, again, "{name} n={n}: a reused workspace changed the result");
                let mut y = vec![0.0; n];
                let plain = match name {
                    "pcr" => pcr::pcr(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &pinv, &b, &mut y, &params),
                    "cg" => cg::cg(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &pinv, &b, &mut y, &params),
                    _ => cr::cr(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &b, &mut y, &params),
                }
                .unwrap();
                assert_eq!(plain, again, "{name} n={n}");
                assert_eq!(x, y, "{name} n={n}");
            }
        }
    }

    /// One workspace serves systems of different sizes in turn (shrinking and growing).
    #[test]
    fn workspace_follows_the_dimension() {
        let mut ws = KrylovWorkspace::default();
        for n in [40usize, 12, 40, 60] {
            let a = ill_scaled(n, false);
            let b = vec![1.0; n];
            let pinv: Vec<f64> = a.diagonal().iter().map(|d| 1.0 / d).collect();
            let params = KrylovParams { max_iterations: 400, rel_tolerance: 1e-10, abs_tolerance: 0.0 };
            let mut x = vec![0.0; n];
            let info = pcr::pcr_with(
                &Cpu,
                &mut CsrOperator { matrix: &a, backend: &Cpu },
                &pinv,
                &b,
                &mut x,
                &params,
                &mut ws,
            )
            .unwrap();
            assert!(info.converged, "n={n}: {info:?}");
            assert_eq!(ws.dim(), n);
            let r: f64 = a.mul(&x).iter().zip(&b).map(|(ax, b)| (ax - b).powi(2)).sum::<f64>().sqrt();
            assert!(r <= 1e-9 * (n as f64).sqrt(), "n={n}: true residual {r}");
        }
    }
}
