//! `LᵀDL` factorisation of a symmetric positive definite matrix with branch-induced sparsity
//! (Featherstone, *Rigid Body Dynamics Algorithms* §6.5): the joint-space inertia of a kinematic
//! tree, where entry `(i, j)` can be nonzero only if DOF `i` is an ancestor of DOF `j` or the
//! reverse. With the DOFs numbered parents first (`parent[i] < i`), eliminating from the last DOF
//! backwards fills nothing: `L` (unit lower triangular) has the sparsity of `H`'s lower triangle,
//! and a factorisation costs `Σ depth²` instead of `n³/6`.
//!
//! Storage: `n × n` row-major, only the lower triangle's ancestor entries `(i, j)`, `j` an ancestor
//! of `i`, are read and written: after [`factor_in_place`] they hold `L_ij`, the diagonal holds
//! `D_ii`. No allocation.

use crate::dense_cholesky::NonPositivePivot;

/// Marks a DOF without parent (a root).
pub const NO_PARENT: usize = usize::MAX;

/// Factors `H = Lᵀ D L` in place (`h`: `n × n` row-major, `n = parent.len()`, `parent[i] < i` or
/// [`NO_PARENT`]).
#[track_caller]
pub fn factor_in_place(parent: &[usize], h: &mut [f64]) -> Result<(), NonPositivePivot> {
    let n = parent.len();
    assert_eq!(h.len(), n * n, "matrix must be n × n");
    debug_assert!(parent.iter().enumerate().all(|(i, &p)| p == NO_PARENT || p < i), "parents first");
    for k in (0..n).rev() {
        let d = h[k * n + k];
        if !(d > 0.0 && d.is_finite()) {
            return Err(NonPositivePivot { index: k });
        }
        let mut i = parent[k];
        while i != NO_PARENT {
            let a = h[k * n + i] / d;
            let mut j = i;
            while j != NO_PARENT {
                h[i * n + j] -= a * h[k * n + j];
                j = parent[j];
            }
            h[k * n + i] = a;
            i = parent[i];
        }
    }
    Ok(())
}

/// Solves `H x = b` in place (`x` holds `b` on entry) with the factor of [`factor_in_place`]:
/// `Lᵀ y = b` (leaves to root), `z = D⁻¹ y`, `L x = z` (root to leaves); `2 Σ depth + n`
/// multiply-adds.
#[track_caller]
pub fn solve_in_place(parent: &[usize], l: &[f64], x: &mut [f64]) {
    let n = parent.len();
    assert_eq!(l.len(), n * n, "factor must be n × n");
    assert_eq!(x.len(), n, "right-hand side length");
    for k in (0..n).rev() {
        let xk = x[k];
        let mut i = parent[k];
        while i != NO_PARENT {
            x[i] -= l[k * n + i] * xk;
            i = parent[i];
        }
    }
    for k in 0..n {
        x[k] /= l[k * n + k];
    }
    for k in 0..n {
        let mut s = x[k];
        let mut i = parent[k];
        while i != NO_PARENT {
            s -= l[k * n + i] * x[i];
            i = parent[i];
        }
        x[k] = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A branched tree of 9 DOFs: root chain 0-1, then branches {2, 3, 4} and {5, 6}, and {7, 8}
    /// off DOF 3.
    fn tree() -> Vec<usize> {
        vec![NO_PARENT, 0, 1, 2, 3, 1, 5, 3, 7]
    }

    fn ancestors(parent: &[usize], mut i: usize) -> Vec<usize> {
        let mut a = vec![];
        while i != NO_PARENT {
            a.push(i);
            i = parent[i];
        }
        a
    }

    /// `H = Σ_k w_k u_k u_kᵀ` with `u_k` supported on the ancestors-or-self of `k` (entry `k`
    /// nonzero, so the `u_k` are independent) and `w_k > 0`: SPD with exactly branch-induced
    /// sparsity.
    fn tree_spd(parent: &[usize]) -> Vec<f64> {
        let n = parent.len();
        let mut h = vec![0.0; n * n];
        for k in 0..n {
            let anc = ancestors(parent, k);
            let w = 1.0 + k as f64;
            for &i in &anc {
                for &j in &anc {
                    let (ci, cj) = (1.0 + 0.1 * i as f64, 1.0 + 0.1 * j as f64);
                    h[i * n + j] += w * ci * cj;
                }
            }
        }
        h
    }

    #[test]
    fn solves_like_a_dense_solve_and_fills_nothing() {
        let parent = tree();
        let n = parent.len();
        let h = tree_spd(&parent);
        let mut f = h.clone();
        // poison the entries the factorisation must not read
        for i in 0..n {
            for j in 0..n {
                if !ancestors(&parent, i).contains(&j) {
                    f[i * n + j] = f64::NAN;
                }
            }
        }
        factor_in_place(&parent, &mut f).unwrap();
        let b: Vec<f64> = (0..n).map(|k| (k as f64 * 0.7).sin() + 0.3).collect();
        let mut x = b.clone();
        solve_in_place(&parent, &f, &mut x);
        // H x = b (symmetric: H is stored in full by tree_spd)
        for i in 0..n {
            let hx: f64 = (0..n).map(|j| h[i * n + j] * x[j]).sum();
            assert!((hx - b[i]).abs() < 1e-12 * (1.0 + b[i].abs()), "row {i}: {hx} vs {}", b[i]);
        }
        // no fill: every non-ancestor entry is still the poison
        for i in 0..n {
            for j in 0..n {
                assert_eq!(f[i * n + j].is_nan(), !ancestors(&parent, i).contains(&j), "({i}, {j})");
            }
        }
    }

    #[test]
    fn a_chain_is_a_dense_ldlt() {
        let n = 5;
        let parent: Vec<usize> = (0..n).map(|i| if i == 0 { NO_PARENT } else { i - 1 }).collect();
        let h: Vec<f64> = (0..n * n).map(|k| if k / n == k % n { 4.0 } else { 1.0 }).collect();
        let mut f = h.clone();
        factor_in_place(&parent, &mut f).unwrap();
        let mut x = vec![1.0; n];
        solve_in_place(&parent, &f, &mut x);
        // (4 I + (11ᵀ − I)) x = 1 has x = 1/(4 + 4) per entry
        for v in x {
            assert!((v - 1.0 / 8.0).abs() < 1e-15);
        }
    }

    #[test]
    fn a_non_positive_pivot_is_reported() {
        let parent = vec![NO_PARENT, 0];
        let mut h = vec![1.0, 0.0, 2.0, 1.0]; // [[1, 2], [2, 1]]: indefinite
        assert_eq!(factor_in_place(&parent, &mut h), Err(NonPositivePivot { index: 0 }));
    }
}
