//! Jacobi-preconditioned conjugate gradients (Hestenes–Stiefel; Saad 2003 Alg. 9.1). Minimises
//! the `A`-norm of the error, so its residual may rise between iterations (Macklin §8.2, the
//! reason nsn defaults to [`pcr`](super::pcr::pcr)). Entry points: [`cg`] and [`cg_with`] (reused
//! work vectors).

use super::{done, info_for, KrylovError, KrylovInfo, KrylovParams, KrylovWorkspace, LinearOperator};
use crate::backend::Blas;

/// Options of [`cg`].
pub type CgParams = KrylovParams;
/// What [`cg`] reports.
pub type CgInfo = KrylovInfo;
/// How [`cg`] breaks down.
pub type CgError = KrylovError;

/// Solves `A x = b` by PCG with the diagonal preconditioner `pinv` (ones: plain CG) from the
/// initial guess in `x`. Allocates its work vectors; [`cg_with`] reuses them.
#[track_caller]
pub fn cg<B: Blas + ?Sized>(
    backend: &B,
    a: &mut dyn LinearOperator,
    pinv: &[f64],
    b: &[f64],
    x: &mut [f64],
    params: &CgParams,
) -> Result<CgInfo, CgError> {
    cg_with(backend, a, pinv, b, x, params, &mut KrylovWorkspace::default())
}

/// [`cg`] with the work vectors of `ws` (resized to the operator's dimension if needed): no
/// allocation besides the residual histories.
#[track_caller]
pub fn cg_with<B: Blas + ?Sized>(
    backend: &B,
    a: &mut dyn LinearOperator,
    pinv: &[f64],
    b: &[f64],
    x: &mut [f64],
    params: &CgParams,
    ws: &mut KrylovWorkspace,
) -> Result<CgInfo, CgError> {
    let n = a.dim();
    assert!(b.len() == n && x.len() == n && pinv.len() == n, "cg: lengths must equal the operator dimension");
    ws.resize_work(n);
    let KrylovWorkspace { r, z, p, ap, .. } = ws;
    a.apply(x, r);
    backend.xpby(b, -1.0, r);
    backend.mul_elem(pinv, r, z);
    backend.copy(z, p);
    let mut rz = backend.dot(r, z);
    let rz0 = rz.abs();
    let bnorm = backend.dot(b, b).sqrt();
    let mut rn = backend.dot(r, r).sqrt();
    let mut info = info_for(params);
    info.residual_history.push(rn);
    info.precond_residual_history.push(rz.max(0.0).sqrt());
    let mut converged = done(params, rn, bnorm);
    let mut k = 0;
    while !converged && k < params.max_iterations {
        a.apply(p, ap);
        let pap = backend.dot(p, ap);
        if !pap.is_finite() {
            return Err(KrylovError::NonFinite { iteration: k });
        }
        if pap <= 0.0 {
            if rz.abs() <= 1e-24 * rz0 || pap.abs() <= 1e-24 * rz0 {
                break;
            }
            return Err(KrylovError::NonPositiveCurvature { iteration: k, value: pap });
        }
        let alpha = rz / pap;
        backend.axpy(alpha, p, x);
        backend.axpy(-alpha, ap, r);
        backend.mul_elem(pinv, r, z);
        let rz_new = backend.dot(r, z);
        let beta = rz_new / rz;
        rz = rz_new;
        backend.xpby(z, beta, p);
        k += 1;
        rn = backend.dot(r, r).sqrt();
        info.residual_history.push(rn);
        info.precond_residual_history.push(rz.max(0.0).sqrt());
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
    fn solves_spd() {
        let a = ill_scaled(50, false);
        let b: Vec<f64> = (0..50).map(|i| (i as f64).cos()).collect();
        let pinv: Vec<f64> = a.diagonal().iter().map(|d| 1.0 / d).collect();
        let mut x = vec![0.0; 50];
        let params = CgParams { max_iterations: 500, rel_tolerance: 1e-10, abs_tolerance: 0.0 };
        let info = cg(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &pinv, &b, &mut x, &params).unwrap();
        assert!(info.converged);
        let r: f64 = a.mul(&x).iter().zip(&b).map(|(ax, b)| (ax - b).powi(2)).sum::<f64>().sqrt();
        assert!(r < 1e-9 * 50f64.sqrt());
    }
}
