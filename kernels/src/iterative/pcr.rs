//! Preconditioned conjugate residual (Macklin et al. 2019 §8.2, Eq. 69; Saad 2003 Alg. 6.20 with
//! a left Jacobi preconditioner `P⁻¹ = diag(A)⁻¹`).
//!
//! CR minimises `||b − A x||` in the `P⁻¹`-norm over the Krylov space, so the preconditioned
//! residual `sqrt(r·P⁻¹r)` decreases monotonically for a symmetric positive (semi-)definite `A`
//! and the iteration can be stopped at any point with a useful result (the paper's reason to
//! prefer it to CG on near-singular contact systems). One operator application per iteration.
//! The entry points are [`pcr`] and [`pcr_with`] (reused work vectors); both run [`pcr_loop`],
//! the one loop every backend shares (host slices, device buffers).

use super::{done, info_for, KrylovError, KrylovInfo, KrylovParams, KrylovWorkspace, LinearOperator};
use crate::backend::{Blas, OnHost, VectorOps};

/// Curvatures below this fraction of the initial `z·Az` count as round-off: the iteration stops
/// (as converged as it can get) instead of reporting a breakdown.
const ROUND_OFF: f64 = 1e-24;

/// Options of [`pcr`].
pub type PcrParams = KrylovParams;
/// What [`pcr`] reports.
pub type PcrInfo = KrylovInfo;
/// How [`pcr`] breaks down.
pub type PcrError = KrylovError;

/// Solves `A x = b` by Jacobi-preconditioned CR from the initial guess in `x`. `pinv` is the
/// diagonal preconditioner `P⁻¹` (entries > 0; pass ones for plain CR). The preconditioned
/// residual history is in [`KrylovInfo::precond_residual_history`]. Allocates
/// its work vectors; [`pcr_with`] reuses them.
#[track_caller]
pub fn pcr<B: Blas + ?Sized>(
    backend: &B,
    a: &mut dyn LinearOperator,
    pinv: &[f64],
    b: &[f64],
    x: &mut [f64],
    params: &PcrParams,
) -> Result<PcrInfo, PcrError> {
    pcr_with(backend, a, pinv, b, x, params, &mut KrylovWorkspace::default())
}

/// [`pcr`] with the work vectors of `ws` (resized to the operator's dimension if needed): no
/// allocation besides the residual histories.
#[track_caller]
pub fn pcr_with<B: Blas + ?Sized>(
    backend: &B,
    a: &mut dyn LinearOperator,
    pinv: &[f64],
    b: &[f64],
    x: &mut [f64],
    params: &PcrParams,
    ws: &mut KrylovWorkspace,
) -> Result<PcrInfo, PcrError> {
    let n = a.dim();
    assert!(b.len() == n && x.len() == n && pinv.len() == n, "pcr: lengths must equal the operator dimension");
    ws.resize_work(n);
    let KrylovWorkspace { r, z, p, az, ap, pap, .. } = ws;
    let vectors = PcrVectors {
        r: r.as_mut_slice(),
        z: z.as_mut_slice(),
        p: p.as_mut_slice(),
        az: az.as_mut_slice(),
        ap: ap.as_mut_slice(),
        pap: pap.as_mut_slice(),
    };
    pcr_loop(&OnHost(backend), |x: &[f64], y: &mut [f64]| a.apply(x, y), pinv, b, x, vectors, params)
}

/// The work vectors of [`pcr_loop`], in the backend's vector type (each of the system's length).
pub struct PcrVectors<'a, V: ?Sized> {
    /// Residual `r = b − A x`.
    pub r: &'a mut V,
    /// Preconditioned residual `z = P⁻¹ r`.
    pub z: &'a mut V,
    /// Search direction `p`.
    pub p: &'a mut V,
    /// `A z`.
    pub az: &'a mut V,
    /// `A p`.
    pub ap: &'a mut V,
    /// `P⁻¹ A p`.
    pub pap: &'a mut V,
}

/// The PCR recurrences, once for every backend: on host slices through a [`Blas`]
/// ([`pcr_with`], via [`OnHost`]), on device buffers (the CUDA backend's device-resident
/// constraint solve) and on [`crate::backend::HostMirror`] vectors. `apply` is `y = A x` on the
/// backend's vectors, `x` holds the initial guess and receives the last iterate (also on a
/// breakdown). Only the scalars of the recurrences (dot products) come back to the host; the
/// loop allocates nothing beyond the two residual histories.
#[track_caller]
pub fn pcr_loop<O: VectorOps + ?Sized>(
    ops: &O,
    mut apply: impl FnMut(&O::Vector, &mut O::Vector),
    pinv: &O::Vector,
    b: &O::Vector,
    x: &mut O::Vector,
    vectors: PcrVectors<'_, O::Vector>,
    params: &PcrParams,
) -> Result<PcrInfo, PcrError> {
    let PcrVectors { r, z, p, az, ap, pap } = vectors;
    apply(x, r);
    ops.xpby(b, -1.0, r); // r = b - A x
    ops.mul_elem(pinv, r, z);
    ops.copy(z, p);
    apply(z, az);
    ops.copy(az, ap);
    let mut zaz = ops.dot(z, az);
    let zaz0 = zaz.abs();
    let bnorm = ops.dot(b, b).sqrt();
    let mut info = info_for(params);
    let mut rn = ops.dot(r, r).sqrt();
    info.residual_history.push(rn);
    info.precond_residual_history.push(ops.dot(r, z).max(0.0).sqrt());
    let mut converged = done(params, rn, bnorm);
    let mut k = 0;
    while !converged && k < params.max_iterations {
        ops.mul_elem(pinv, ap, pap);
        let denom = ops.dot(ap, pap);
        if !denom.is_finite() || !zaz.is_finite() {
            return Err(KrylovError::NonFinite { iteration: k });
        }
        if denom <= 0.0 || zaz <= 0.0 {
            if zaz.abs() <= ROUND_OFF * zaz0 || denom.abs() <= ROUND_OFF * zaz0 {
                break; // at round-off (or r in the null space of A): nothing left to reduce
            }
            return Err(KrylovError::NonPositiveCurvature { iteration: k, value: denom.min(zaz) });
        }
        let alpha = zaz / denom;
        ops.axpy(alpha, p, x);
        ops.axpy(-alpha, ap, r);
        ops.axpy(-alpha, pap, z);
        apply(z, az);
        let zaz_new = ops.dot(z, az);
        let beta = zaz_new / zaz;
        zaz = zaz_new;
        ops.xpby(z, beta, p);
        ops.xpby(az, beta, ap);
        k += 1;
        rn = ops.dot(r, r).sqrt();
        info.residual_history.push(rn);
        info.precond_residual_history.push(ops.dot(r, z).max(0.0).sqrt());
        converged = done(params, rn, bnorm);
    }
    info.iterations = k;
    info.abs_residual = rn;
    info.rel_residual = if bnorm > 0.0 { rn / bnorm } else { 0.0 };
    info.converged = converged;
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::super::test_systems::ill_scaled;
    use super::super::CsrOperator;
    use super::*;
    use crate::backend::Cpu;

    #[test]
    fn solves_spd_and_preconditioned_residual_is_monotone() {
        let a = ill_scaled(60, false);
        let b: Vec<f64> = (0..60).map(|i| ((i * 7 % 11) as f64 - 5.0) * 1e-2).collect();
        let pinv: Vec<f64> = a.diagonal().iter().map(|d| 1.0 / d).collect();
        let mut x = vec![0.0; 60];
        let params = PcrParams { max_iterations: 400, rel_tolerance: 1e-10, abs_tolerance: 0.0 };
        let info = pcr(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &pinv, &b, &mut x, &params).unwrap();
        assert!(info.converged, "{info:?}");
        let r: f64 = a.mul(&x).iter().zip(&b).map(|(ax, b)| (ax - b).powi(2)).sum::<f64>().sqrt();
        let bn = b.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(r <= 1e-9 * bn, "true residual {r}");
        // monotone in the P⁻¹-norm (round-off slack: 1e-12 relative)
        for w in info.precond_residual_history.windows(2) {
            assert!(w[1] <= w[0] * (1.0 + 1e-12), "{:?}", info.precond_residual_history);
        }
    }

    #[test]
    fn singular_consistent_system_is_monotone_and_finite() {
        let a = ill_scaled(40, true);
        let xs: Vec<f64> = (0..40).map(|i| (i as f64).sin()).collect();
        let b = a.mul(&xs); // consistent right-hand side
        let pinv: Vec<f64> = a.diagonal().iter().map(|d| if *d > 0.0 { 1.0 / d } else { 1.0 }).collect();
        let mut x = vec![0.0; 40];
        let params = PcrParams { max_iterations: 40, rel_tolerance: 0.0, abs_tolerance: 0.0 };
        let info = pcr(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &pinv, &b, &mut x, &params).unwrap();
        assert!(x.iter().all(|v| v.is_finite()));
        for w in info.precond_residual_history.windows(2) {
            assert!(w[1] <= w[0] * (1.0 + 1e-12));
        }
        assert!(info.precond_residual_history.last().unwrap() < &(1e-3 * info.precond_residual_history[0]));
    }
}
