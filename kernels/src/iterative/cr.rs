//! Conjugate residual without preconditioning: [`pcr`](super::pcr::pcr) with `P = I`. Its
//! Euclidean residual `||b − A x||_2` is non-increasing (Fong & Saunders 2012). Entry point: [`cr`].

use super::{KrylovError, KrylovInfo, KrylovParams, LinearOperator};
use crate::backend::Backend;

/// Options of [`cr`].
pub type CrParams = KrylovParams;
/// What [`cr`] reports.
pub type CrInfo = KrylovInfo;
/// How [`cr`] breaks down.
pub type CrError = KrylovError;

/// Solves `A x = b` by conjugate residual from the initial guess in `x`.
pub fn cr<B: Backend + ?Sized>(
    backend: &B,
    a: &mut dyn LinearOperator,
    b: &[f64],
    x: &mut [f64],
    params: &CrParams,
) -> Result<CrInfo, CrError> {
    let ones = vec![1.0; a.dim()];
    super::pcr::pcr(backend, a, &ones, b, x, params)
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
