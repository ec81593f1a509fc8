//! Anderson acceleration (type II) of a fixed-point iteration `x ← g(x)`.
//!
//! With the residual `f_k = g(x_k) − x_k` and the last `m` differences
//! `ΔF = [f_{j+1} − f_j]`, `ΔG = [g(x_{j+1}) − g(x_j)]`, the accelerated iterate is
//! `x_{k+1} = g(x_k) − ΔG θ` with `θ = argmin ||f_k − ΔF θ||₂` (Anderson 1965; the form of
//! Walker & Ni, SIAM J. Numer. Anal. 49 (2011), Eq. (2.2)). On a linear iteration it is
//! equivalent to GMRES (Walker & Ni, Thm. 2.2): an eigenvalue of the iteration matrix close to 1,
//! along which the plain iteration creeps, costs one column of history instead of thousands of
//! iterations. The fixed points are those of `g`: acceleration changes the path, not the answer.
//!
//! The least-squares problem is solved through its `m × m` normal equations with a Tikhonov
//! term `ε tr(ΔFᵀΔF)/m` (ε = 1e-12) so that colinear history columns do not blow up `θ`.
//! Everything is in buffers allocated once ([`Anderson::new`]); [`Anderson::step`] does not allocate.

/// Relative Tikhonov weight of the normal equations.
const RIDGE: f64 = 1e-12;

/// The history of an Anderson-accelerated iteration on vectors of a fixed length.
#[derive(Debug, Clone, Default)]
pub struct Anderson {
    /// Most history columns `m`.
    memory: usize,
    /// Columns `ΔF` and `ΔG`, ring buffers of `memory` vectors each.
    df: Vec<Vec<f64>>,
    dg: Vec<Vec<f64>>,
    /// Number of valid columns and the slot the next one goes to.
    len: usize,
    next: usize,
    /// `f` and `g(x)` of the previous call (valid if `has_prev`).
    f_prev: Vec<f64>,
    g_prev: Vec<f64>,
    has_prev: bool,
    /// Normal equations `ΔFᵀΔF θ = ΔFᵀ f` (row-major `memory × memory`) and `θ`.
    gram: Vec<f64>,
    theta: Vec<f64>,
}

impl Anderson {
    /// An accelerator with `memory` history columns for vectors of length `n`. `memory = 0`
    /// returns `g(x)` unchanged (the plain iteration).
    pub fn new(memory: usize, n: usize) -> Self {
        Self {
            memory,
            df: vec![vec![0.0; n]; memory],
            dg: vec![vec![0.0; n]; memory],
            len: 0,
            next: 0,
            f_prev: vec![0.0; n],
            g_prev: vec![0.0; n],
            has_prev: false,
            gram: vec![0.0; memory * memory],
            theta: vec![0.0; memory],
        }
    }

    /// Resizes for vectors of length `n` (reusing the buffers) and forgets the history.
    pub fn resize(&mut self, memory: usize, n: usize) {
        if self.memory != memory || self.f_prev.len() != n {
            *self = Self::new(memory, n);
        }
        self.restart();
    }

    /// Forgets the history (the next [`Anderson::step`] returns `g(x)`).
    pub fn restart(&mut self) {
        self.len = 0;
        self.next = 0;
        self.has_prev = false;
    }

    /// Number of history columns in use.
    pub fn columns(&self) -> usize {
        self.len
    }

    /// Given `x_k` and `g(x_k)`, writes the accelerated `x_{k+1}` into `out` and records the pair.
    pub fn step(&mut self, x: &[f64], gx: &[f64], out: &mut [f64]) {
        let n = self.f_prev.len();
        assert!(x.len() == n && gx.len() == n && out.len() == n, "Anderson: vector length");
        out.copy_from_slice(gx);
        if self.memory == 0 {
            return;
        }
        if self.has_prev {
            let slot = self.next;
            for i in 0..n {
                let f = gx[i] - x[i];
                self.df[slot][i] = f - self.f_prev[i];
                self.dg[slot][i] = gx[i] - self.g_prev[i];
            }
            self.next = (slot + 1) % self.memory;
            self.len = (self.len + 1).min(self.memory);
        }
        for i in 0..n {
            self.f_prev[i] = gx[i] - x[i];
        }
        self.g_prev.copy_from_slice(gx);
        self.has_prev = true;
        let m = self.len;
        if m == 0 {
            return;
        }
        // normal equations over the valid columns (slots 0..m; their order does not matter)
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
        let mut trace = 0.0;
        for a in 0..m {
            for b in 0..=a {
                let v = dot(&self.df[a], &self.df[b]);
                self.gram[a * m + b] = v;
                self.gram[b * m + a] = v;
            }
            trace += self.gram[a * m + a];
            self.theta[a] = dot(&self.df[a], &self.f_prev);
        }
        if !(trace.is_finite() && trace > 0.0) {
            return;
        }
        let ridge = RIDGE * trace / m as f64;
        for a in 0..m {
            self.gram[a * m + a] += ridge;
        }
        if crate::dense_cholesky::factor_in_place(m, &mut self.gram[..m * m]).is_err() {
            return;
        }
        crate::dense_cholesky::solve_in_place(m, &self.gram[..m * m], &mut self.theta[..m]);
        if !self.theta[..m].iter().all(|t| t.is_finite()) {
            return;
        }
        for (col, t) in self.dg[..m].iter().zip(&self.theta[..m]) {
            for (o, d) in out.iter_mut().zip(col) {
                *o -= t * d;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a linear contraction `g(x) = B x + c` with one eigenvalue 0.999 (the plain iteration
    /// needs ~20,000 iterations for 1e-8), Anderson with `m ≥ n` is GMRES and reaches the fixed
    /// point in at most `n + 1` iterations up to round-off.
    #[test]
    fn accelerates_a_slow_linear_iteration_to_its_fixed_point() {
        let n = 4;
        let eig = [0.999, 0.5, -0.3, 0.1];
        // B = Q diag(eig) Qᵀ with a Householder Q (symmetric, orthogonal)
        let w = [0.5, -0.5, 0.5, 0.5];
        let q = |i: usize, j: usize| (if i == j { 1.0 } else { 0.0 }) - 2.0 * w[i] * w[j];
        let b: Vec<f64> = (0..n * n).map(|k| (0..n).map(|l| q(k / n, l) * eig[l] * q(k % n, l)).sum()).collect();
        let c = [1.0, 2.0, -1.0, 0.5];
        let g = |x: &[f64]| -> Vec<f64> {
            (0..n).map(|i| (0..n).map(|j| b[i * n + j] * x[j]).sum::<f64>() + c[i]).collect()
        };
        // fixed point by (I − B) x = c through the eigen-decomposition
        let xstar: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|l| q(i, l) / (1.0 - eig[l]) * (0..n).map(|j| q(j, l) * c[j]).sum::<f64>()).sum())
            .collect();
        let mut acc = Anderson::new(n, n);
        let mut x = vec![0.0; n];
        let mut out = vec![0.0; n];
        for _ in 0..n + 2 {
            let gx = g(&x);
            acc.step(&x, &gx, &mut out);
            x.copy_from_slice(&out);
        }
        let err = x.iter().zip(&xstar).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        let scale = xstar.iter().map(|a| a.abs()).fold(0.0, f64::max);
        assert!(err < 1e-8 * scale, "Anderson error {err:e} (|x*| = {scale:e})");
        // the plain iteration after the same number of steps is far off
        let mut y = vec![0.0; n];
        for _ in 0..n + 2 {
            y = g(&y);
        }
        let plain = y.iter().zip(&xstar).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(plain > 0.5 * scale, "plain iteration error {plain:e}");
    }

    /// `memory = 0` and a restart give the plain iteration.
    #[test]
    fn zero_memory_and_restart_return_g() {
        let mut acc = Anderson::new(0, 2);
        let mut out = [0.0; 2];
        acc.step(&[1.0, 2.0], &[3.0, 4.0], &mut out);
        assert_eq!(out, [3.0, 4.0]);
        let mut acc = Anderson::new(3, 2);
        acc.step(&[1.0, 2.0], &[3.0, 4.0], &mut out);
        acc.restart();
        acc.step(&[5.0, 1.0], &[2.0, 7.0], &mut out);
        assert_eq!(out, [2.0, 7.0]);
        assert_eq!(acc.columns(), 0);
    }
}
