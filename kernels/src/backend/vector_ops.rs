//! [`VectorOps`]: the vector algebra of a Krylov iteration over a backend's own vector type, so
//! that one loop ([`crate::iterative::pcr::pcr_loop`]) runs on host slices ([`OnHost`], any
//! [`Blas`]), on device buffers (the CUDA device) and on the [`HostMirror`](super::HostMirror).

use super::Blas;

/// The five vector operations of the PCR recurrences on vectors of type [`Self::Vector`]. Every
/// implementation must do, for the same inputs, what the [`Blas`] method of the same name does
/// (the host one calls it); reductions return an `f64` on the host.
pub trait VectorOps {
    /// Where the vectors live (`[f64]` on the host, a device buffer on a device).
    type Vector: ?Sized;
    /// `x · y`.
    fn dot(&self, x: &Self::Vector, y: &Self::Vector) -> f64;
    /// `y += alpha x`.
    fn axpy(&self, alpha: f64, x: &Self::Vector, y: &mut Self::Vector);
    /// `y = x + beta y`.
    fn xpby(&self, x: &Self::Vector, beta: f64, y: &mut Self::Vector);
    /// `z = d ⊙ x`.
    fn mul_elem(&self, d: &Self::Vector, x: &Self::Vector, z: &mut Self::Vector);
    /// `y = x`.
    fn copy(&self, x: &Self::Vector, y: &mut Self::Vector);
}

/// A [`Blas`] backend's operations on host slices.
#[derive(Debug, Clone, Copy)]
pub struct OnHost<'a, B: ?Sized>(pub &'a B);

impl<B: Blas + ?Sized> VectorOps for OnHost<'_, B> {
    type Vector = [f64];
    #[track_caller]
    fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
        self.0.dot(x, y)
    }
    #[track_caller]
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]) {
        self.0.axpy(alpha, x, y)
    }
    #[track_caller]
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]) {
        self.0.xpby(x, beta, y)
    }
    #[track_caller]
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]) {
        self.0.mul_elem(d, x, z)
    }
    #[track_caller]
    fn copy(&self, x: &[f64], y: &mut [f64]) {
        self.0.copy(x, y)
    }
}
