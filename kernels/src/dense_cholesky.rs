//! Dense Cholesky `A = L Lᵀ` of small symmetric positive definite matrices (a rigid body's 6×6
//! augmented inertia, the joint-space matrix of a robot of a few tens of DOFs) in caller-owned row-major
//! buffers: no allocation, contiguous inner loops, so a factor is refreshed and solved in place
//! many times (ADMM: factor once per penalty, back-substitute every iteration).
//!
//! Storage after [`factor_in_place`]: the strict lower triangle holds `L`, the diagonal holds
//! `1 / L_ii` (the solves multiply instead of dividing), the strict upper triangle is untouched.
//! A tree's joint-space matrix, with its branch-induced sparsity, has its own factorisation:
//! [`crate::tree_ldl`].

/// A pivot of [`factor_in_place`] was not positive: the matrix is not (numerically) positive
/// definite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("dense matrix not positive definite (pivot {index})")]
pub struct NonPositivePivot {
    /// Row of the failed pivot.
    pub index: usize,
}

/// Factors the `n × n` matrix `a` (row-major, only the lower triangle is read) in place
/// (row-oriented Cholesky–Banachiewicz, `n³/6` multiply-adds); see the module doc for the layout.
#[track_caller]
pub fn factor_in_place(n: usize, a: &mut [f64]) -> Result<(), NonPositivePivot> {
    assert_eq!(a.len(), n * n, "matrix must be n × n");
    match n {
        6 => factor_impl(6, a), // a rigid body: constant trip counts, unrolled
        _ => factor_impl(n, a),
    }
}

#[inline(always)]
fn factor_impl(n: usize, a: &mut [f64]) -> Result<(), NonPositivePivot> {
    for j in 0..n {
        let (done, rest) = a.split_at_mut(j * n);
        let row = &mut rest[..n];
        for k in 0..j {
            let lk = &done[k * n..k * n + k];
            let s = row[k] - dot(&row[..k], lk);
            row[k] = s * done[k * n + k];
        }
        let d = row[j] - dot(&row[..j], &row[..j]);
        if !(d > 0.0 && d.is_finite()) {
            return Err(NonPositivePivot { index: j });
        }
        row[j] = 1.0 / d.sqrt();
    }
    Ok(())
}

/// Solves `A x = b` in place (`x` holds `b` on entry) with the factor of [`factor_in_place`]:
/// forward `L y = b` and backward `Lᵀ x = y`, both sweeping rows of `L` (`n²` multiply-adds).
#[track_caller]
pub fn solve_in_place(n: usize, l: &[f64], x: &mut [f64]) {
    forward_in_place(n, l, x);
    backward_in_place(n, l, x);
}

/// Solves `L y = b` in place (`x` holds `b` on entry) with the factor of [`factor_in_place`]
/// (the first half of [`solve_in_place`]; `n²/2` multiply-adds).
#[track_caller]
pub fn forward_in_place(n: usize, l: &[f64], x: &mut [f64]) {
    assert_eq!(l.len(), n * n, "factor must be n × n");
    assert_eq!(x.len(), n, "right-hand side must have n entries");
    match n {
        6 => forward_impl(6, l, x),
        _ => forward_impl(n, l, x),
    }
}

/// Solves `Lᵀ x = y` in place (`x` holds `y` on entry) with the factor of [`factor_in_place`]
/// (the second half of [`solve_in_place`]).
#[track_caller]
pub fn backward_in_place(n: usize, l: &[f64], x: &mut [f64]) {
    assert_eq!(l.len(), n * n, "factor must be n × n");
    assert_eq!(x.len(), n, "right-hand side must have n entries");
    match n {
        6 => backward_impl(6, l, x),
        _ => backward_impl(n, l, x),
    }
}

#[inline(always)]
fn forward_impl(n: usize, l: &[f64], x: &mut [f64]) {
    for i in 0..n {
        let row = &l[i * n..i * n + i];
        x[i] = (x[i] - dot(row, &x[..i])) * l[i * n + i];
    }
}

#[inline(always)]
fn backward_impl(n: usize, l: &[f64], x: &mut [f64]) {
    for i in (0..n).rev() {
        let xi = x[i] * l[i * n + i];
        x[i] = xi;
        for (xj, lij) in x[..i].iter_mut().zip(&l[i * n..i * n + i]) {
            *xj -= lij * xi;
        }
    }
}

/// Dot product with four partial sums (independent add chains: pipelined and vectorisable).
#[inline(always)]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    let mut s = [0.0; 4];
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            s[k] += x[k] * y[k];
        }
    }
    (s[0] + s[1]) + (s[2] + s[3]) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `A = B Bᵀ + n I` with a deterministic `B`: well conditioned (κ ≤ a few tens).
    fn spd(n: usize) -> Vec<f64> {
        let b: Vec<f64> = (0..n * n).map(|k| ((k * 7919 + 13) % 101) as f64 / 101.0 - 0.5).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] =
                    (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>() + if i == j { n as f64 } else { 0.0 };
            }
        }
        a
    }

    /// Backward stable: the residual `‖A x − b‖∞` is a few `n ε ‖A‖ ‖x‖`; 1e-12 relative is far
    /// above that for `n ≤ 40` and κ ≈ 10.
    #[test]
    fn solves_spd_systems_to_rounding() {
        for n in [1, 2, 6, 13, 40] {
            let a = spd(n);
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37 + 0.5).sin()).collect();
            let mut l = a.clone();
            factor_in_place(n, &mut l).unwrap();
            let mut x = b.clone();
            solve_in_place(n, &l, &mut x);
            let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs())) * x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for i in 0..n {
                let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
                assert!((ax - b[i]).abs() < 1e-12 * scale, "n = {n}, row {i}");
            }
        }
    }

    #[test]
    fn indefinite_matrix_reports_its_pivot() {
        // [[1, 2], [2, 1]]: second pivot 1 − 4 < 0
        let mut a = vec![1.0, 2.0, 2.0, 1.0];
        assert_eq!(factor_in_place(2, &mut a), Err(NonPositivePivot { index: 1 }));
    }
}
