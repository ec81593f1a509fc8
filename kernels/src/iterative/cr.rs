//! Conjugate residual without preconditioning: [`pcr`](super::pcr::pcr) with `P = I`. Its
//! Euclidean residual `||b − A x||_2` is non-increasing (Fong & Saunders 2012). Entry points:
//! [`cr`] and [`cr_with`] (reused work vectors).

use super::{KrylovError, KrylovInfo, KrylovParams, KrylovWorkspace, LinearOperator};
use crate::backend::Blas;

/// Options of [`cr`].
pub type CrParams = KrylovParams;
/// What [`cr`] reports.
pub type CrInfo = KrylovInfo;
/// How [`cr`] breaks down.
pub type CrError = KrylovError;

/// Solves `A x = b` by conjugate residual from the initial guess in `x`. Allocates its work
/// vectors; [`cr_with`] reuses them.
pub fn cr<B: Blas + ?Sized>(
    backend: &B,
    a: &mut dyn LinearOperator,
    b: &[f64],
    x: &mut [f64],
    params: &CrParams,
) -> Result<CrInfo, CrError> {
    cr_with(backend, a, b, x, params, &mut KrylovWorkspace::default())
}

/// [`cr`] with the work vectors of `ws` (including its vector of ones, the identity
/// preconditioner): no allocation besides the residual histories.
pub fn cr_with<B: Blas + ?Sized>(
    backend: &B,
    a: &mut dyn LinearOperator,
    b: &[f64],
    x: &mut [f64],
    params: &CrParams,
    ws: &mut KrylovWorkspace,
) -> Result<CrInfo, CrError> {
    ws.ones.resize(a.dim(), 1.0);
    let ones = std::mem::take(&mut ws.ones);
    let out = super::pcr::pcr_with(backend, a, &ones, b, x, params, ws);
    ws.ones = ones;
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_systems::ill_scaled;
    use super::super::CsrOperator;
    use super::*;
    use crate::backend::Cpu;

    #[test]
    fn euclidean_residual_is_monotone() {
        let a = ill_scaled(30, false);
        let b = vec![1.0; 30];
        let mut x = vec![0.0; 30];
        let params = CrParams { max_iterations: 25, rel_tolerance: 0.0, abs_tolerance: 0.0 };
        let info = cr(&Cpu, &mut CsrOperator { matrix: &a, backend: &Cpu }, &b, &mut x, &params).unwrap();
        for w in info.residual_history.windows(2) {
            assert!(w[1] <= w[0] * (1.0 + 1e-12), "{:?}", info.residual_history);
        }
    }
}
