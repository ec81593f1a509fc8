//! Dense Cholesky `A = L Lᵀ` of small symmetric positive definite matrices (a rigid body's 6×6
//! augmented inertia, a joint Schur complement of a few tens of rows) in caller-owned row-major
//! buffers: no allocation, contiguous inner loops, so a factor is refreshed and solved in place
//! many times (ADMM: factor once per penalty, back-substitute every iteration).
//!
//! Storage after [`factor_in_place`]: the strict lower triangle holds `L`, the diagonal holds
//! `1 / L_ii` (the solves multiply instead of dividing), the strict upper triangle is untouched.
//!
//! A matrix made of dense blocks coupled along a sparse graph (the Schur complement of a
//! kinematic tree's joints: joints couple when they share a body) is factored with the same
//! storage but only over the entries of a [`RowPattern`]: [`RowPattern::block_elimination`]
//! orders the blocks by greedy minimum degree (for a tree, leaves first: no fill, the analogue of
//! Featherstone's branch-induced sparsity) and [`factor_in_place_with`] / [`solve_in_place_with`]
//! touch only the pattern's entries.

use std::collections::BTreeSet;

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
    assert_eq!(l.len(), n * n, "factor must be n × n");
    assert_eq!(x.len(), n, "right-hand side must have n entries");
    match n {
        6 => solve_impl(6, l, x),
        _ => solve_impl(n, l, x),
    }
}

#[inline(always)]
fn solve_impl(n: usize, l: &[f64], x: &mut [f64]) {
    for i in 0..n {
        let row = &l[i * n..i * n + i];
        x[i] = (x[i] - dot(row, &x[..i])) * l[i * n + i];
    }
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
fn dot(a: &[f64], b: &[f64]) -> f64 {
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

/// The entries of each row of `L` that may be nonzero: row `i` holds sorted, disjoint half-open
/// column ranges, the last one ending at `i + 1` (the diagonal).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowPattern {
    ptr: Vec<usize>,
    ranges: Vec<(usize, usize)>,
}

impl RowPattern {
    /// The symbolic block elimination of a symmetric matrix of dense diagonal blocks of `sizes`,
    /// with off-diagonal blocks between `adjacent` blocks (either direction suffices). Blocks are
    /// eliminated in greedy minimum-degree order (ties: lowest index), filling in a clique among
    /// the neighbours of each eliminated block. Returns the order (position → block) and the
    /// pattern of `L` for the matrix with its blocks in that order.
    pub fn block_elimination(sizes: &[usize], adjacent: &[Vec<usize>]) -> (Vec<usize>, Self) {
        let nb = sizes.len();
        assert_eq!(adjacent.len(), nb, "one adjacency list per block");
        let mut adj: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); nb];
        for (a, list) in adjacent.iter().enumerate() {
            for &b in list.iter().filter(|&&b| b != a) {
                adj[a].insert(b);
                adj[b].insert(a);
            }
        }
        let (mut done, mut order) = (vec![false; nb], Vec::with_capacity(nb));
        let mut earlier: Vec<Vec<usize>> = vec![vec![]; nb];
        for _ in 0..nb {
            let j = (0..nb).filter(|&j| !done[j]).min_by_key(|&j| (adj[j].len(), j)).expect("a block left");
            let nbrs: Vec<usize> = std::mem::take(&mut adj[j]).into_iter().collect();
            for &a in &nbrs {
                adj[a].remove(&j);
                adj[a].extend(nbrs.iter().copied().filter(|&b| b != a));
                earlier[a].push(j);
            }
            done[j] = true;
            order.push(j);
        }
        let mut pos = vec![0; nb];
        let mut start = vec![0; nb + 1];
        for (p, &b) in order.iter().enumerate() {
            pos[b] = p;
            start[p + 1] = start[p] + sizes[b];
        }
        let mut pat = Self { ptr: vec![0], ranges: vec![] };
        for (p, &b) in order.iter().enumerate() {
            let mut cols: Vec<(usize, usize)> =
                earlier[b].iter().map(|&j| (start[pos[j]], start[pos[j] + 1])).collect();
            cols.sort_unstable();
            for r in 0..sizes[b] {
                let row_start = pat.ranges.len();
                for &range in cols.iter().chain(std::iter::once(&(start[p], start[p] + r + 1))) {
                    let in_row = pat.ranges.len() > row_start;
                    match pat.ranges.last_mut() {
                        Some(last) if in_row && last.1 == range.0 => last.1 = range.1,
                        _ => pat.ranges.push(range),
                    }
                }
                pat.ptr.push(pat.ranges.len());
            }
        }
        (order, pat)
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// Entries of `L` in the pattern, diagonal included (`n(n+1)/2` when dense).
    pub fn nnz(&self) -> usize {
        self.ranges.iter().map(|(a, b)| b - a).sum()
    }

    fn row(&self, i: usize) -> &[(usize, usize)] {
        &self.ranges[self.ptr[i]..self.ptr[i + 1]]
    }
}

/// [`factor_in_place`] over the entries of `pattern` only (which must contain the factor's
/// fill, as [`RowPattern::block_elimination`]'s does); entries outside it are neither read nor
/// written.
#[track_caller]
pub fn factor_in_place_with(pattern: &RowPattern, a: &mut [f64]) -> Result<(), NonPositivePivot> {
    let n = pattern.dim();
    assert_eq!(a.len(), n * n, "matrix must match the pattern");
    for i in 0..n {
        let (done, rest) = a.split_at_mut(i * n);
        let row = &mut rest[..n];
        let ri = pattern.row(i);
        for &(s, e) in ri {
            for k in s..e.min(i) {
                let lk = &done[k * n..(k + 1) * n];
                let acc = pattern_dot(row, ri, lk, pattern.row(k), k);
                row[k] = (row[k] - acc) * lk[k];
            }
        }
        let d = row[i] - pattern_dot(row, ri, row, ri, i);
        if !(d > 0.0 && d.is_finite()) {
            return Err(NonPositivePivot { index: i });
        }
        row[i] = 1.0 / d.sqrt();
    }
    Ok(())
}

/// [`solve_in_place`] with a factor from [`factor_in_place_with`] (`2 nnz` multiply-adds).
#[track_caller]
pub fn solve_in_place_with(pattern: &RowPattern, l: &[f64], x: &mut [f64]) {
    let n = pattern.dim();
    assert_eq!(l.len(), n * n, "factor must match the pattern");
    assert_eq!(x.len(), n, "right-hand side must have n entries");
    for i in 0..n {
        let row = &l[i * n..(i + 1) * n];
        let s: f64 = pattern.row(i).iter().map(|&(a, b)| dot(&row[a..b.min(i)], &x[a..b.min(i)])).sum();
        x[i] = (x[i] - s) * row[i];
    }
    for i in (0..n).rev() {
        let row = &l[i * n..(i + 1) * n];
        let xi = x[i] * row[i];
        x[i] = xi;
        for &(a, b) in pattern.row(i) {
            let b = b.min(i);
            for (xj, lij) in x[a..b].iter_mut().zip(&row[a..b]) {
                *xj -= lij * xi;
            }
        }
    }
}

/// `Σ x_m y_m` over the columns `m < limit` in both range lists.
fn pattern_dot(x: &[f64], rx: &[(usize, usize)], y: &[f64], ry: &[(usize, usize)], limit: usize) -> f64 {
    let (mut p, mut q, mut acc) = (0, 0, 0.0);
    while p < rx.len() && q < ry.len() {
        let (lo, hi) = (rx[p].0.max(ry[q].0), rx[p].1.min(ry[q].1).min(limit));
        if lo < hi {
            acc += dot(&x[lo..hi], &y[lo..hi]);
        }
        if rx[p].1 <= ry[q].1 {
            p += 1;
        } else {
            q += 1;
        }
    }
    acc
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

    /// A star of blocks (a trunk joint group coupled to four hips, each hip to a knee: the
    /// quadruped's joint graph): the block order puts leaves first, the pattern has fewer entries
    /// than the dense triangle, and the pattern factor solves the permuted system to rounding.
    #[test]
    fn block_pattern_factor_solves_the_permuted_system() {
        // blocks 0..4 hips (mutually adjacent), 4..8 knees (knee k adjacent to hip k)
        let sizes = [5, 5, 5, 5, 5, 5, 5, 5];
        let mut adjacent: Vec<Vec<usize>> = (0..4).map(|h| (0..4).filter(|&o| o != h).collect()).collect();
        adjacent.extend((0..4).map(|k| vec![k]));
        let (order, pat) = RowPattern::block_elimination(&sizes, &adjacent);
        assert!(order[..4].iter().all(|&b| b >= 4), "knees first: {order:?}");
        let n = 40;
        // knees 4 × 15; hip h: its knee (5 × 5), the hips before it (25 h), its own triangle (15)
        assert_eq!(pat.nnz(), 60 + 100 + 150 + 60, "dense would be {}", n * (n + 1) / 2);
        // SPD matrix on the block graph, in the elimination order
        let dense = spd(n);
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let (bi, bj) = (order[i / 5], order[j / 5]);
                if bi == bj || adjacent[bi].contains(&bj) || adjacent[bj].contains(&bi) {
                    a[i * n + j] = dense[i * n + j];
                }
            }
        }
        // diagonally dominant: SPD whatever the zeroed blocks
        for i in 0..n {
            a[i * n + i] += (0..n).map(|j| a[i * n + j].abs()).sum::<f64>();
        }
        let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37 + 0.5).sin()).collect();
        let (mut l, mut x) = (a.clone(), b.clone());
        factor_in_place_with(&pat, &mut l).unwrap();
        solve_in_place_with(&pat, &l, &mut x);
        let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs())) * x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for i in 0..n {
            let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
            assert!((ax - b[i]).abs() < 1e-12 * scale, "row {i}");
        }
    }
}
