//! Block-diagonal symmetric positive (semi-)definite matrices: the mass matrix of a set of bodies
//! (one dense block per body, at most 6x6 for a rigid body) and the non-contact stiffness.

use nalgebra::DMatrix;

/// A block of a [`BlockDiagonal`] could not be factored: it is not symmetric positive definite.
#[derive(Debug, Clone, PartialEq)]
pub struct NotPositiveDefinite {
    /// Index of the offending block.
    pub block: usize,
}

impl std::fmt::Display for NotPositiveDefinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "block {} is not symmetric positive definite", self.block)
    }
}
impl std::error::Error for NotPositiveDefinite {}

/// A square block-diagonal matrix. Block `i` occupies rows and columns
/// `offsets[i] .. offsets[i] + blocks[i].nrows()`.
#[derive(Debug, Clone, Default)]
pub struct BlockDiagonal {
    blocks: Vec<DMatrix<f64>>,
    offsets: Vec<usize>,
    n: usize,
    /// Lower Cholesky factors, present after [`BlockDiagonal::factor`].
    chol: Vec<DMatrix<f64>>,
}

impl BlockDiagonal {
    /// Builds the matrix from its blocks (each must be square).
    pub fn new(blocks: Vec<DMatrix<f64>>) -> Self {
        let mut offsets = Vec::with_capacity(blocks.len());
        let mut n = 0;
        for b in &blocks {
            assert_eq!(b.nrows(), b.ncols(), "blocks must be square");
            offsets.push(n);
            n += b.nrows();
        }
        Self { blocks, offsets, n, chol: Vec::new() }
    }

    /// The zero matrix with the same block structure as `self`.
    pub fn zeros_like(&self) -> Self {
        Self::new(self.blocks.iter().map(|b| DMatrix::zeros(b.nrows(), b.ncols())).collect())
    }

    /// Dimension of the (square) matrix.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// The blocks in order.
    pub fn blocks(&self) -> &[DMatrix<f64>] {
        &self.blocks
    }

    /// Mutable access to block `i` (invalidates any factorization).
    pub fn block_mut(&mut self, i: usize) -> &mut DMatrix<f64> {
        self.chol.clear();
        &mut self.blocks[i]
    }

    /// First row/column of block `i`.
    pub fn offset(&self, i: usize) -> usize {
        self.offsets[i]
    }

    /// `y = A x`.
    pub fn mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.n];
        self.mul_into(x, &mut y);
        y
    }

    /// `y = A x` into a caller-owned buffer.
    pub fn mul_into(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.n);
        assert_eq!(y.len(), self.n);
        for (b, &o) in self.blocks.iter().zip(&self.offsets) {
            let k = b.nrows();
            let (x, y) = (&x[o..o + k], &mut y[o..o + k]);
            // a rigid body's 6×6 (or a node's 3×3) block at a size known to the compiler
            match k {
                6 => mul_block(&b.as_slice()[..36], 6, &x[..6], &mut y[..6]),
                3 => mul_block(&b.as_slice()[..9], 3, &x[..3], &mut y[..3]),
                _ => mul_block(b.as_slice(), k, x, y),
            }
        }
    }

    /// `x^T A x`.
    pub fn quad(&self, x: &[f64]) -> f64 {
        let y = self.mul(x);
        x.iter().zip(&y).map(|(a, b)| a * b).sum()
    }

    /// Computes and caches the Cholesky factor of every block.
    pub fn factor(&mut self) -> Result<(), NotPositiveDefinite> {
        self.chol.clear();
        for (i, b) in self.blocks.iter().enumerate() {
            let c = b.clone().cholesky().ok_or(NotPositiveDefinite { block: i })?;
            // `unpack` zeroes the upper triangle in place: the values of `l()`, without its copy
            self.chol.push(c.unpack());
        }
        Ok(())
    }

    /// Whether [`BlockDiagonal::factor`] has been called since the last change.
    pub fn is_factored(&self) -> bool {
        self.chol.len() == self.blocks.len()
    }

    /// Solves `A x = b` in place with the cached factors, block by block, without allocating.
    /// Panics if not factored.
    pub fn solve_in_place(&self, b: &mut [f64]) {
        assert!(self.is_factored(), "BlockDiagonal::factor must be called before solve");
        assert_eq!(b.len(), self.n);
        for (i, &o) in self.offsets.iter().enumerate() {
            let k = self.chol[i].nrows();
            self.solve_block_in_place(i, &mut b[o..o + k]);
        }
    }

    /// Solves `B_i x = b` in place for one block `i` (`b` of the block's size) with its cached
    /// factor `L`, without allocating: `L y = b` column by column, then `Lᵀ x = y` row by row, the
    /// operations (and so the rounding) of nalgebra's triangular solves. Panics if not factored.
    pub fn solve_block_in_place(&self, i: usize, b: &mut [f64]) {
        self.solve_block_many_in_place(i, [b]);
    }

    /// Solves `B_i x_m = b_m` in place for `M` right-hand sides of block `i` at once (each of the
    /// block's size), each rounded exactly as [`Self::solve_block_in_place`] rounds it alone; the
    /// independent solves are interleaved, so their divisions overlap (e.g. `M⁻¹ Jᵀ` for the three
    /// rows of a contact Jacobian). Panics if not factored.
    pub fn solve_block_many_in_place<const M: usize>(&self, i: usize, b: [&mut [f64]; M]) {
        assert!(self.is_factored(), "BlockDiagonal::factor must be called before solve");
        let l = &self.chol[i];
        let k = l.nrows();
        assert!(b.iter().all(|b| b.len() == k), "right-hand sides must have the block's size");
        // a rigid body's 6×6 (or a node's 3×3) factor at a size known to the compiler
        match k {
            6 => cholesky_solve(&l.as_slice()[..36], 6, b.map(|b| &mut b[..6])),
            3 => cholesky_solve(&l.as_slice()[..9], 3, b.map(|b| &mut b[..3])),
            _ => cholesky_solve(l.as_slice(), k, b),
        }
    }

    /// Solves `L_i y_m = b_m` in place, with `L_i` the Cholesky factor of block `i` (`B_i = L_i L_iᵀ`),
    /// for `M` right-hand sides at once: the forward half of [`Self::solve_block_many_in_place`],
    /// so that `bᵀ B_i⁻¹ c = (L_i⁻¹ b)ᵀ (L_i⁻¹ c)` costs one triangular solve per vector. Panics
    /// if not factored.
    pub fn forward_block_many_in_place<const M: usize>(&self, i: usize, mut b: [&mut [f64]; M]) {
        assert!(self.is_factored(), "BlockDiagonal::factor must be called before solve");
        let l = &self.chol[i];
        let k = l.nrows();
        assert!(b.iter().all(|b| b.len() == k), "right-hand sides must have the block's size");
        match k {
            6 => forward_solve(&l.as_slice()[..36], 6, &mut b.each_mut().map(|b| &mut b[..6])),
            3 => forward_solve(&l.as_slice()[..9], 3, &mut b.each_mut().map(|b| &mut b[..3])),
            _ => forward_solve(l.as_slice(), k, &mut b),
        }
    }

    /// The inverse of block `i` (dense; blocks are small). Panics if not factored.
    pub fn block_inverse(&self, i: usize) -> DMatrix<f64> {
        assert!(self.is_factored(), "BlockDiagonal::factor must be called before block_inverse");
        let l = &self.chol[i];
        let mut inv = DMatrix::identity(l.nrows(), l.nrows());
        l.solve_lower_triangular_mut(&mut inv);
        l.tr_solve_lower_triangular_mut(&mut inv);
        inv
    }

    /// The diagonal entries.
    pub fn diagonal(&self) -> Vec<f64> {
        self.diagonal_iter().collect()
    }

    /// The diagonal entries in order, without collecting them.
    pub fn diagonal_iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.blocks.iter().flat_map(|b| (0..b.nrows()).map(move |i| b[(i, i)]))
    }

    /// Lower-or-full triplets `(row, col, value)` of all nonzero entries (both triangles).
    pub fn triplets(&self) -> Vec<(usize, usize, f64)> {
        let mut t = Vec::new();
        for (b, &o) in self.blocks.iter().zip(&self.offsets) {
            for j in 0..b.ncols() {
                for i in 0..b.nrows() {
                    if b[(i, j)] != 0.0 {
                        t.push((o + i, o + j, b[(i, j)]));
                    }
                }
            }
        }
        t
    }
}

/// `y = B x` for one dense `k × k` block `B` stored column-major in `b` (row by row, each sum
/// over the columns in order). Inlined into each call site, so a constant `k` unrolls the loops
/// and drops the bounds checks; the operations (and so the rounding) are the same for every `k`.
#[inline(always)]
fn mul_block(b: &[f64], k: usize, x: &[f64], y: &mut [f64]) {
    for i in 0..k {
        let mut s = 0.0;
        for j in 0..k {
            s += b[j * k + i] * x[j];
        }
        y[i] = s;
    }
}

/// Solves `L y = b` in place for one lower Cholesky factor `L` (`k × k`, column-major in `l`) and
/// each of the `M` right-hand sides, column by column (the first half of [`cholesky_solve`]).
#[inline(always)]
fn forward_solve<const M: usize>(l: &[f64], k: usize, b: &mut [&mut [f64]; M]) {
    for c in 0..k {
        let d = l[c * k + c];
        for b in b.iter_mut() {
            b[c] /= d;
        }
        for r in c + 1..k {
            let lrc = l[c * k + r];
            for b in b.iter_mut() {
                b[r] += -b[c] * lrc;
            }
        }
    }
}

/// Solves `L Lᵀ x = b` in place for one lower Cholesky factor `L` (`k × k`, column-major in `l`)
/// and each of the `M` right-hand sides `b`: `L y = b` column by column, then `Lᵀ x = y` row by
/// row, the operations (and so the rounding) of nalgebra's triangular solves, for every right-hand
/// side the same as alone (the loop over them is innermost). Inlined like [`mul_block`].
#[inline(always)]
fn cholesky_solve<const M: usize>(l: &[f64], k: usize, mut b: [&mut [f64]; M]) {
    forward_solve(l, k, &mut b);
    for r in (0..k).rev() {
        let d = l[r * k + r];
        for b in &mut b {
            let dot: f64 = (r + 1..k).map(|c| l[r * k + c] * b[c]).fold(0.0, |s, x| s + x);
            b[r] = (b[r] - dot) / d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solve_inverts_mul() {
        let b0 = DMatrix::from_row_slice(2, 2, &[4.0, 1.0, 1.0, 3.0]);
        let b1 = DMatrix::from_row_slice(1, 1, &[2.0]);
        let mut a = BlockDiagonal::new(vec![b0, b1]);
        a.factor().unwrap();
        let x = [1.0, -2.0, 0.5];
        let mut y = a.mul(&x);
        assert_eq!(y, vec![2.0, -5.0, 1.0]);
        a.solve_in_place(&mut y);
        for (p, q) in y.iter().zip(&x) {
            assert!((p - q).abs() < 1e-15);
        }
        let inv = a.block_inverse(0);
        assert!((inv[(0, 0)] - 3.0 / 11.0).abs() < 1e-15);
        // one block alone: B_0⁻¹ (1, −2) = (5, −9)/11
        let mut z = [1.0, -2.0];
        a.solve_block_in_place(0, &mut z);
        assert!((z[0] - 5.0 / 11.0).abs() < 1e-15 && (z[1] + 9.0 / 11.0).abs() < 1e-15, "{z:?}");
    }

    /// Reproducible numbers in `[-0.5, 0.5)` from a xorshift64 state (Marsaglia 2003).
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        }
    }

    /// The allocation-free solves round exactly as nalgebra's triangular solves with the same
    /// factor (forward by columns, backward by rows): results are unchanged bit for bit.
    #[test]
    fn solves_match_nalgebra_bit_for_bit() {
        let mut next = uniform(0x9e37_79b9_7f4a_7c15);
        let blocks: Vec<DMatrix<f64>> = [6, 3, 6, 1]
            .iter()
            .map(|&k| {
                let x = DMatrix::from_fn(k, k, |_, _| next());
                &x * x.transpose() + DMatrix::identity(k, k) * 0.1
            })
            .collect();
        let mut a = BlockDiagonal::new(blocks.clone());
        a.factor().unwrap();
        let rhs: Vec<f64> = (0..a.dim()).map(|_| next()).collect();
        let mut ours = rhs.clone();
        a.solve_in_place(&mut ours);
        let mut theirs = vec![];
        for (i, b) in blocks.iter().enumerate() {
            let l = b.clone().cholesky().unwrap().l();
            let o = a.offset(i);
            let mut x = nalgebra::DVector::from_column_slice(&rhs[o..o + b.nrows()]);
            l.solve_lower_triangular_mut(&mut x);
            l.tr_solve_lower_triangular_mut(&mut x);
            theirs.extend(x.iter().copied());
        }
        assert_eq!(ours, theirs);
        // three right-hand sides of one block at once: each as alone
        for (i, b) in blocks.iter().enumerate() {
            let k = b.nrows();
            let mut rows: [Vec<f64>; 3] = std::array::from_fn(|_| (0..k).map(|_| next()).collect());
            let alone: Vec<Vec<f64>> = rows
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    a.solve_block_in_place(i, &mut r);
                    r
                })
                .collect();
            a.solve_block_many_in_place(i, rows.each_mut().map(|r| r.as_mut_slice()));
            assert_eq!(rows.to_vec(), alone);
        }
    }

    /// The forward half alone: nalgebra's lower-triangular solve bit for bit (as the full solve
    /// matches nalgebra's two solves), and `(L⁻¹ b)ᵀ (L⁻¹ c) = bᵀ B⁻¹ c` to round-off.
    #[test]
    fn forward_solve_is_half_of_the_solve() {
        let mut next = uniform(0x2f1e_93a7_0c44_b5d1);
        for k in [6, 3, 5] {
            let x = DMatrix::from_fn(k, k, |_, _| next());
            let b = &x * x.transpose() + DMatrix::identity(k, k) * 0.1;
            let mut a = BlockDiagonal::new(vec![b.clone()]);
            a.factor().unwrap();
            let (u, v): (Vec<f64>, Vec<f64>) = ((0..k).map(|_| next()).collect(), (0..k).map(|_| next()).collect());
            let (mut fu, mut fv) = (u.clone(), v.clone());
            a.forward_block_many_in_place(0, [fu.as_mut_slice(), fv.as_mut_slice()]);
            let mut y = nalgebra::DVector::from_column_slice(&u);
            a.chol[0].solve_lower_triangular_mut(&mut y);
            assert_eq!(fu, y.as_slice(), "k = {k}");
            let mut binv_v = v.clone();
            a.solve_block_in_place(0, &mut binv_v);
            let exact: f64 = u.iter().zip(&binv_v).map(|(p, q)| p * q).sum();
            let ours: f64 = fu.iter().zip(&fv).map(|(p, q)| p * q).sum();
            // B = XXᵀ + 0.1 I with |X_ij| ≤ 1/2, k ≤ 6: λ ∈ [0.1, 1.6], |u_i|, |v_i| ≤ 1/2, so each
            // side's rounding is below k² κ ε ‖u‖‖v‖/λ_min ≈ 36 · 16 · 2.2e-16 · 1.5 / 0.1 ≈ 2e-12
            assert!((ours - exact).abs() <= 2e-12, "k = {k}: {ours} vs {exact}");
        }
    }

    /// `mul_into` at the block sizes it specialises (6, 3) and at the others sums each row over
    /// the columns in order, as the plain loop over the dense blocks does: bit for bit.
    #[test]
    fn mul_matches_plain_loop_bit_for_bit() {
        let mut next = uniform(0x2545_f491_4f6c_dd1d);
        let blocks: Vec<DMatrix<f64>> =
            [6, 3, 6, 1, 4].iter().map(|&k| DMatrix::from_fn(k, k, |_, _| next())).collect();
        let a = BlockDiagonal::new(blocks.clone());
        let x: Vec<f64> = (0..a.dim()).map(|_| next()).collect();
        let mut theirs = vec![];
        for (i, b) in blocks.iter().enumerate() {
            let o = a.offset(i);
            for r in 0..b.nrows() {
                let mut s = 0.0;
                for c in 0..b.ncols() {
                    s += b[(r, c)] * x[o + c];
                }
                theirs.push(s);
            }
        }
        assert_eq!(a.mul(&x), theirs);
    }

    #[test]
    fn non_spd_block_is_reported() {
        let mut a = BlockDiagonal::new(vec![DMatrix::identity(2, 2), DMatrix::from_row_slice(1, 1, &[-1.0])]);
        assert_eq!(a.factor(), Err(NotPositiveDefinite { block: 1 }));
    }
}
