//! The compute backend of the iterative kernels: sparse matrix–vector products and the vector
//! operations a Krylov iteration needs (dot products, axpy, element-wise products).
//!
//! [`Backend`] is the seam where a device implementation plugs in: [`crate::iterative`] never
//! touches vector entries directly, only through these calls. [`Cpu`] is the sequential f64
//! implementation; the GPU issue adds a CUDA one (cargo feature `gpu`) behind the same trait.

use crate::sparse::Csr;

/// Vector and sparse-matrix primitives (all vectors are `f64` slices of equal length; shapes
/// are programmer errors and are asserted).
pub trait Backend: Send + Sync {
    /// Short name for logs ("cpu").
    fn name(&self) -> &'static str;
    /// `y = A x`.
    fn spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]);
    /// `x · y`.
    fn dot(&self, x: &[f64], y: &[f64]) -> f64;
    /// `y += alpha x`.
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]);
    /// `y = x + beta y`.
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]);
    /// `z = d ⊙ x` (element-wise product: diagonal scaling, Jacobi preconditioner).
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]);
    /// `y = x`.
    fn copy(&self, x: &[f64], y: &mut [f64]);
}

/// Sequential CPU backend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpu;

impl Backend for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]) {
        a.mul_into(x, y);
    }
    #[track_caller]
    fn dot(&self, x: &[f64], y: &[f64]) -> f64 {
        assert_eq!(x.len(), y.len(), "dot: lengths differ");
        x.iter().zip(y).map(|(a, b)| a * b).sum()
    }
    #[track_caller]
    fn axpy(&self, alpha: f64, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), y.len(), "axpy: lengths differ");
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi += alpha * xi;
        }
    }
    #[track_caller]
    fn xpby(&self, x: &[f64], beta: f64, y: &mut [f64]) {
        assert_eq!(x.len(), y.len(), "xpby: lengths differ");
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi = xi + beta * *yi;
        }
    }
    #[track_caller]
    fn mul_elem(&self, d: &[f64], x: &[f64], z: &mut [f64]) {
        assert!(d.len() == x.len() && x.len() == z.len(), "mul_elem: lengths differ");
        for ((zi, di), xi) in z.iter_mut().zip(d).zip(x) {
            *zi = di * xi;
        }
    }
    fn copy(&self, x: &[f64], y: &mut [f64]) {
        y.copy_from_slice(x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_primitives() {
        let b = Cpu;
        let a = Csr::from_triplets(2, 2, &[(0, 0, 2.0), (1, 0, 1.0), (1, 1, 3.0)]);
        let mut y = vec![0.0; 2];
        b.spmv(&a, &[1.0, 1.0], &mut y);
        assert_eq!(y, vec![2.0, 4.0]);
        assert_eq!(b.dot(&y, &[1.0, 1.0]), 6.0);
        b.axpy(2.0, &[1.0, 1.0], &mut y);
        assert_eq!(y, vec![4.0, 6.0]);
        b.xpby(&[1.0, 1.0], 0.5, &mut y);
        assert_eq!(y, vec![3.0, 4.0]);
        let mut z = vec![0.0; 2];
        b.mul_elem(&[2.0, 0.5], &y, &mut z);
        assert_eq!(z, vec![6.0, 2.0]);
    }
}
