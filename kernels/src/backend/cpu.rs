//! [`Cpu`]: the sequential f64 backend, the reference every other backend is tested against.

use super::{Backend, Blas};
use crate::sparse::Csr;

/// Sequential CPU backend.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpu;

impl Blas for Cpu {
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

/// The method-specific operations run their reference (default) implementations.
impl Backend for Cpu {}
