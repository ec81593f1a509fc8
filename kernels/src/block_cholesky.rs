//! Block-sparse Cholesky `A = L Lᵀ` of a symmetric positive definite matrix made of small dense
//! blocks — one per rigid body (6 × 6) or FEM node (3 × 3) — coupled by off-diagonal blocks where
//! two bodies share a contact or an element. This is the structure of SAP's Hessian
//! `H = A + Jᵀ G J` (Castro et al. §IV-D), and the factorization Drake uses for it (a
//! block-sparse supernodal Cholesky over the contact graph's cliques).
//!
//! [`BlockSparseCholesky::analyze`] works on the **block graph**: it orders the blocks by AMD
//! (faer's `amd::order` on the block adjacency, not on the scalar pattern), runs the symbolic
//! block elimination (block elimination tree, the filled block structure of each block column of
//! `L`), lays out the factor as dense row-major blocks, and precomputes where every entry of the
//! input goes. [`BlockSparseCholesky::factorize`] is then dense small-block arithmetic: scatter
//! the values, and for each block column `j` in elimination order
//!
//! ```text
//! L_jj = chol(A_jj)                          (dense_cholesky::factor_in_place)
//! L_ij = A_ij L_jj⁻ᵀ         for i in struct(j)
//! A_ik -= L_ij L_kjᵀ         for i ≥ k in struct(j)   (right-looking update)
//! ```
//!
//! Every block of a rigid-body scene is 6 × 6, so the kernels run with constant trip counts.
//! Input is the scalar lower-triangle CSC pattern of `A` plus the block partition, the same input
//! as [`crate::cholesky::SparseCholesky`], so the two are interchangeable; the factor's storage is
//! allocated at the first factorization and reused, so refactorizations allocate nothing.

use crate::cholesky::{CholeskyError, CholeskyInfo};
use crate::dense_cholesky::{self, dot};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::SymbolicSparseColMatRef;

/// A block-sparse Cholesky factorization whose symbolic analysis is reused across numeric
/// refactorizations with the same pattern (module doc).
#[derive(Debug, Clone)]
pub struct BlockSparseCholesky {
    /// The analysed scalar pattern (lower triangle, CSC).
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Block `b` of the input covers DOFs `offset[b]..offset[b] + size[b]`.
    offset: Vec<usize>,
    size: Vec<usize>,
    /// `perm[p]` = input block at elimination position `p`.
    perm: Vec<usize>,
    /// Start of the diagonal block of position `p` in `values` (row-major `n × n`).
    diag: Vec<usize>,
    /// Block column `p` of `L` below the diagonal: rows `rows[col_start[p]..col_start[p + 1]]`
    /// (positions, ascending), each block `n_row × n_p` row-major at `block[..]`.
    col_start: Vec<usize>,
    rows: Vec<usize>,
    block: Vec<usize>,
    /// Where input entry `k` (CSC order) goes in `values`.
    scatter: Vec<usize>,
    /// The factor: diagonal blocks (with `1 / L_ii` on their diagonals, the layout of
    /// [`dense_cholesky::factor_in_place`]) and off-diagonal blocks; allocated at the first
    /// factorization, so an analysis whose [`BlockSparseCholesky::info`] decides against this
    /// factor costs no factor-sized memory.
    values: Vec<f64>,
    /// Length of `values`.
    len: usize,
    /// Block-ordered copy of a right-hand side.
    work: Vec<f64>,
    /// DOF offset of position `p` in `work`.
    work_offset: Vec<usize>,
    factored: bool,
}

impl BlockSparseCholesky {
    /// Symbolic analysis of the lower-triangle pattern `(col_ptr, row_idx)` of an `n × n`
    /// symmetric matrix (rows sorted and `>= col` in each column) whose DOFs are partitioned into
    /// the contiguous blocks `blocks` = `(offset, size)`, ascending and covering `0..n`. Entries
    /// may be missing inside a block; the analysis stores every block densely.
    #[track_caller]
    pub fn analyze(
        n: usize,
        col_ptr: Vec<usize>,
        row_idx: Vec<usize>,
        blocks: &[(usize, usize)],
    ) -> Result<Self, CholeskyError> {
        assert_eq!(col_ptr.len(), n + 1, "col_ptr must have n + 1 entries");
        assert_eq!(*col_ptr.last().unwrap_or(&0), row_idx.len(), "col_ptr[n] must equal row_idx.len()");
        let nb = blocks.len();
        let mut block_of = vec![(usize::MAX, 0); n];
        let mut next = 0;
        for (b, &(o, s)) in blocks.iter().enumerate() {
            assert!(o == next && s > 0, "blocks must be non-empty, contiguous and ascending");
            for l in 0..s {
                block_of[o + l] = (b, l);
            }
            next = o + s;
        }
        assert_eq!(next, n, "blocks must cover 0..n");
        // block adjacency (both triangles, for AMD)
        let mut adj: Vec<Vec<usize>> = vec![vec![]; nb];
        for c in 0..n {
            let rows = &row_idx[col_ptr[c]..col_ptr[c + 1]];
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "rows of column {c} must be sorted and unique");
            assert!(rows.first().is_none_or(|&r| r >= c), "column {c} has an entry above the diagonal");
            for &r in rows {
                assert!(r < n, "row index out of range in column {c}");
                let (bi, bj) = (block_of[r].0, block_of[c].0);
                if bi != bj {
                    adj[bi].push(bj);
                    adj[bj].push(bi);
                }
            }
        }
        for a in &mut adj {
            a.sort_unstable();
            a.dedup();
        }
        let (perm, pos) = amd_order(&adj)?;
        // symbolic block elimination: struct(p) = adj_lower(p) ∪ struct(children) \ {p}
        let mut structs: Vec<Vec<usize>> = Vec::with_capacity(nb);
        let mut children: Vec<Vec<usize>> = vec![vec![]; nb];
        for p in 0..nb {
            let mut s: Vec<usize> = adj[perm[p]].iter().map(|&b| pos[b]).filter(|&q| q > p).collect();
            for &c in &children[p] {
                s.extend(structs[c].iter().copied().filter(|&q| q > p));
            }
            s.sort_unstable();
            s.dedup();
            if let Some(&parent) = s.first() {
                children[parent].push(p);
            }
            structs.push(s);
        }
        // layout: per position, the diagonal block then the column's blocks
        let size: Vec<usize> = blocks.iter().map(|b| b.1).collect();
        let np = |p: usize| size[perm[p]];
        let (mut diag, mut col_start, mut rows, mut block) = (vec![], vec![0], vec![], vec![]);
        let mut len = 0;
        for (p, s) in structs.iter().enumerate() {
            diag.push(len);
            len += np(p) * np(p);
            for &q in s {
                rows.push(q);
                block.push(len);
                len += np(q) * np(p);
            }
            col_start.push(rows.len());
        }
        // start of block (row position q, column position p), q > p
        let find = |q: usize, p: usize| -> usize {
            let r = &rows[col_start[p]..col_start[p + 1]];
            block[col_start[p] + r.binary_search(&q).expect("fill closes under elimination")]
        };
        let mut scatter = Vec::with_capacity(row_idx.len());
        for c in 0..n {
            for &r in &row_idx[col_ptr[c]..col_ptr[c + 1]] {
                let ((bi, ri), (bj, cj)) = (block_of[r], block_of[c]);
                let (pi, pj) = (pos[bi], pos[bj]);
                scatter.push(if bi == bj {
                    diag[pi] + ri * size[bi] + cj // r ≥ c inside a block: lower triangle
                } else if pi > pj {
                    find(pi, pj) + ri * size[bj] + cj
                } else {
                    find(pj, pi) + cj * size[bi] + ri // the transposed entry
                });
            }
        }
        let mut work_offset = Vec::with_capacity(nb);
        let mut o = 0;
        for p in 0..nb {
            work_offset.push(o);
            o += np(p);
        }
        Ok(Self {
            col_ptr,
            row_idx,
            offset: blocks.iter().map(|b| b.0).collect(),
            size,
            perm,
            diag,
            col_start,
            rows,
            block,
            scatter,
            values: Vec::new(),
            len,
            work: vec![0.0; n],
            work_offset,
            factored: false,
        })
    }

    /// Dimension `n`.
    pub fn dim(&self) -> usize {
        self.col_ptr.len() - 1
    }

    /// Whether the analysed pattern is exactly `(col_ptr, row_idx)` with these blocks.
    pub fn has_pattern(&self, col_ptr: &[usize], row_idx: &[usize], blocks: &[(usize, usize)]) -> bool {
        self.col_ptr == col_ptr
            && self.row_idx == row_idx
            && blocks.len() == self.size.len()
            && blocks.iter().zip(self.offset.iter().zip(&self.size)).all(|(b, (&o, &s))| *b == (o, s))
    }

    /// Sizes and flop count of the factor (`supernodal` is true: every block column is a
    /// supernode). `nnz_l` counts the stored lower triangle of `L` (diagonal blocks' lower
    /// triangles plus the off-diagonal blocks); `flops` is `Σ_c count_c²` over its scalar
    /// columns, as [`CholeskyInfo::flops`] (the blocks are dense, so this is the work done).
    pub fn info(&self) -> CholeskyInfo {
        let (mut nnz_l, mut flops) = (0usize, 0u64);
        for p in 0..self.perm.len() {
            let n = self.size[self.perm[p]];
            let below: usize =
                self.rows[self.col_start[p]..self.col_start[p + 1]].iter().map(|&q| self.size[self.perm[q]]).sum();
            nnz_l += n * (n + 1) / 2 + below * n;
            flops += (1..=n).map(|k| ((k + below) * (k + below)) as u64).sum::<u64>();
        }
        CholeskyInfo { n: self.dim(), nnz_a: self.row_idx.len(), nnz_l, supernodal: true, flops }
    }

    /// Numeric factorization of the matrix with the analysed pattern and these lower-triangle
    /// `values` (the order of `row_idx`). Allocates only at the first call. A non-positive pivot is
    /// [`CholeskyError::NotPositiveDefinite`] with its index in the elimination order.
    #[track_caller]
    pub fn factorize(&mut self, values: &[f64]) -> Result<(), CholeskyError> {
        assert_eq!(values.len(), self.row_idx.len(), "values must match the analysed pattern");
        self.factored = false;
        self.values.clear();
        self.values.resize(self.len, 0.0);
        for (&k, &x) in self.scatter.iter().zip(values) {
            self.values[k] = x;
        }
        for p in 0..self.perm.len() {
            let nj = self.size[self.perm[p]];
            let (d0, col) = (self.diag[p], self.col_start[p]..self.col_start[p + 1]);
            dense_cholesky::factor_in_place(nj, &mut self.values[d0..d0 + nj * nj])
                .map_err(|e| CholeskyError::NotPositiveDefinite { index: self.work_offset[p] + e.index })?;
            // L_ij = A_ij L_jj⁻ᵀ: each row x of the block solves L_jj xᵀ = a (forward substitution)
            for (&q, &b0) in self.rows[col.clone()].iter().zip(&self.block[col.clone()]) {
                let ni = self.size[self.perm[q]];
                let (head, tail) = self.values.split_at_mut(b0);
                solve_rows(nj, &head[d0..d0 + nj * nj], &mut tail[..ni * nj]);
            }
            // A_ik -= L_ij L_kjᵀ for the pairs a ≥ b of the column's rows; block (rows[a], rows[b])
            // is found by walking column rows[b]'s sorted rows, which contain rows[a] (fill closes
            // under elimination): no stored update list, whose size would grow as nb³ on a dense H
            for b in col.clone() {
                let (qb, lb) = (self.rows[b], self.block[b]);
                let nk = self.size[self.perm[qb]];
                let mut k = self.col_start[qb];
                for a in b..col.end {
                    let (qa, la) = (self.rows[a], self.block[a]);
                    let ni = self.size[self.perm[qa]];
                    let t = if a == b {
                        self.diag[qb]
                    } else {
                        while self.rows[k] != qa {
                            k += 1;
                            debug_assert!(k < self.col_start[qb + 1], "fill closes under elimination");
                        }
                        self.block[k]
                    };
                    // the target lies in a later column, after both source blocks in storage
                    let (src, dst) = self.values.split_at_mut(t);
                    let (lia, lkb) = (&src[la..la + ni * nj], &src[lb..lb + nk * nj]);
                    sub_abt(ni, nk, nj, lia, lkb, &mut dst[..ni * nk], a == b);
                }
            }
        }
        self.factored = true;
        Ok(())
    }

    /// Solves `A x = b` in place (`rhs` holds `b` on entry, `x` on return) with the last
    /// successful factorization. Allocates nothing. Panics if there is none.
    #[track_caller]
    pub fn solve_in_place(&mut self, rhs: &mut [f64]) {
        assert!(self.factored, "BlockSparseCholesky::factorize must succeed before solve_in_place");
        assert_eq!(rhs.len(), self.dim(), "rhs length must equal the dimension");
        let nb = self.perm.len();
        for p in 0..nb {
            let (b, w) = (self.perm[p], self.work_offset[p]);
            self.work[w..w + self.size[b]].copy_from_slice(&rhs[self.offset[b]..self.offset[b] + self.size[b]]);
        }
        // L y = b
        for p in 0..nb {
            let nj = self.size[self.perm[p]];
            let (d0, w) = (self.diag[p], self.work_offset[p]);
            let (head, tail) = self.work.split_at_mut(w + nj);
            let yj = &mut head[w..];
            dense_cholesky::forward_in_place(nj, &self.values[d0..d0 + nj * nj], yj);
            for k in self.col_start[p]..self.col_start[p + 1] {
                let (q, b0) = (self.rows[k], self.block[k]);
                let ni = self.size[self.perm[q]];
                let wi = self.work_offset[q] - (w + nj);
                for (r, row) in self.values[b0..b0 + ni * nj].chunks_exact(nj).enumerate() {
                    tail[wi + r] -= dot(row, yj);
                }
            }
        }
        // Lᵀ x = y
        for p in (0..nb).rev() {
            let nj = self.size[self.perm[p]];
            let (d0, w) = (self.diag[p], self.work_offset[p]);
            let (head, tail) = self.work.split_at_mut(w + nj);
            let xj = &mut head[w..];
            for k in self.col_start[p]..self.col_start[p + 1] {
                let (q, b0) = (self.rows[k], self.block[k]);
                let ni = self.size[self.perm[q]];
                let wi = self.work_offset[q] - (w + nj);
                for (r, row) in self.values[b0..b0 + ni * nj].chunks_exact(nj).enumerate() {
                    let xi = tail[wi + r];
                    for (x, l) in xj.iter_mut().zip(row) {
                        *x -= l * xi;
                    }
                }
            }
            dense_cholesky::backward_in_place(nj, &self.values[d0..d0 + nj * nj], xj);
        }
        for p in 0..nb {
            let (b, w) = (self.perm[p], self.work_offset[p]);
            rhs[self.offset[b]..self.offset[b] + self.size[b]].copy_from_slice(&self.work[w..w + self.size[b]]);
        }
    }
}

/// `X L_jjᵀ = A` for the `nj`-column rows of `x` (holding `A` on entry), with `l` the factor of
/// [`dense_cholesky::factor_in_place`] (`1 / L_cc` on its diagonal): forward substitution on all
/// rows at once, column by column, so the rows' operations are independent of each other.
#[inline]
fn solve_rows(nj: usize, l: &[f64], x: &mut [f64]) {
    if nj == 6 {
        solve_rows_impl(6, l, x) // a rigid body: constant trip counts
    } else {
        solve_rows_impl(nj, l, x)
    }
}

#[inline(always)]
fn solve_rows_impl(nj: usize, l: &[f64], x: &mut [f64]) {
    for c in 0..nj {
        let d = l[c * nj + c];
        for row in x.chunks_exact_mut(nj) {
            row[c] *= d;
            let xc = row[c];
            for k in c + 1..nj {
                row[k] -= l[k * nj + c] * xc;
            }
        }
    }
}

/// `C -= A Bᵀ` with `A` (`ni × nj`), `B` (`nk × nj`), `C` (`ni × nk`), all row-major; only the
/// lower triangle of `C` when `lower` (a diagonal block, `A = B`).
#[inline]
fn sub_abt(ni: usize, nk: usize, nj: usize, a: &[f64], b: &[f64], c: &mut [f64], lower: bool) {
    if ni == 6 && nk == 6 && nj == 6 {
        let six = "6 × 6 blocks";
        return sub_abt6(a.try_into().expect(six), b.try_into().expect(six), c.try_into().expect(six), lower);
    }
    for r in 0..ni {
        let ar = &a[r * nj..r * nj + nj];
        let end = if lower { r + 1 } else { nk };
        for (s, cs) in c[r * nk..r * nk + end].iter_mut().enumerate() {
            *cs -= dot(ar, &b[s * nj..s * nj + nj]);
        }
    }
}

/// [`sub_abt`] for 6 × 6 blocks (two rigid bodies): `Bᵀ` is formed once so that each row of `C`
/// is six independent multiply-add chains over contiguous data (vectorisable), instead of 36 dot
/// products whose serial additions wait on each other.
#[inline(always)]
fn sub_abt6(a: &[f64; 36], b: &[f64; 36], c: &mut [f64; 36], lower: bool) {
    let mut bt = [0.0; 36];
    for s in 0..6 {
        for t in 0..6 {
            bt[t * 6 + s] = b[s * 6 + t];
        }
    }
    for r in 0..6 {
        let mut acc = [0.0; 6];
        for t in 0..6 {
            let x = a[r * 6 + t];
            for s in 0..6 {
                acc[s] += x * bt[t * 6 + s];
            }
        }
        let end = if lower { r + 1 } else { 6 };
        for s in 0..end {
            c[r * 6 + s] -= acc[s];
        }
    }
}

/// AMD ordering of the graph `adj` (symmetric adjacency lists, no self loops): `(perm, pos)` with
/// `perm[p]` the vertex eliminated at position `p` and `pos` its inverse.
fn amd_order(adj: &[Vec<usize>]) -> Result<(Vec<usize>, Vec<usize>), CholeskyError> {
    let nb = adj.len();
    let (mut col_ptr, mut row_idx) = (Vec::with_capacity(nb + 1), vec![]);
    col_ptr.push(0);
    for a in adj {
        row_idx.extend_from_slice(a);
        col_ptr.push(row_idx.len());
    }
    let (mut perm, mut pos) = (vec![0usize; nb], vec![0usize; nb]);
    let sym = SymbolicSparseColMatRef::new_checked(nb, nb, &col_ptr, None, &row_idx);
    let mut buf = MemBuffer::new(faer::sparse::linalg::amd::order_scratch::<usize>(nb, row_idx.len()));
    faer::sparse::linalg::amd::order(&mut perm, &mut pos, sym, Default::default(), MemStack::new(&mut buf))
        .map_err(|e| CholeskyError::Symbolic { what: format!("{e:?}") })?;
    // faer's convention: (P A Pᵀ)[i, j] = A[perm[i], perm[j]]; check it is a permutation whose
    // inverse is `pos`, whatever the convention, so a mix-up can only cost fill, not correctness
    debug_assert!((0..nb).all(|p| pos[perm[p]] == p));
    Ok((perm, pos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cholesky::tests::lower_csc;
    use crate::cholesky::{CholeskyParams, SparseCholesky};

    /// A block-sparse SPD matrix: `nb` dense blocks of the given sizes, coupled along the edges
    /// `(i, j)` by random dense blocks, with a dominant diagonal (so SPD): returned dense.
    fn block_spd(sizes: &[usize], edges: &[(usize, usize)], seed: u64) -> (Vec<Vec<f64>>, Vec<(usize, usize)>) {
        let mut s = seed;
        let mut rnd = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
        };
        let mut blocks = vec![];
        let mut o = 0;
        for &n in sizes {
            blocks.push((o, n));
            o += n;
        }
        let n = o;
        let mut a = vec![vec![0.0; n]; n];
        let mut fill = |bi: usize, bj: usize, a: &mut Vec<Vec<f64>>| {
            let ((oi, ni), (oj, nj)) = (blocks[bi], blocks[bj]);
            for r in 0..ni {
                for c in 0..nj {
                    if bi != bj || r > c {
                        let v = rnd();
                        a[oi + r][oj + c] = v;
                        a[oj + c][oi + r] = v;
                    }
                }
            }
        };
        for b in 0..sizes.len() {
            fill(b, b, &mut a);
        }
        for &(i, j) in edges {
            fill(i, j, &mut a);
        }
        for (i, row) in a.iter_mut().enumerate() {
            row[i] = 1.0 + row.iter().map(|x| x.abs()).sum::<f64>();
        }
        (a, blocks)
    }

    /// A pile-like graph (a chain, a few long-range couplings, a hub) and an FEM-like mix of 3 × 3
    /// and 6 × 6 blocks: the solve is backward stable, `‖A x − b‖∞ ≤ 1e2 ε ‖A‖∞ ‖x‖∞` (Cholesky's
    /// backward error is a small multiple of `n ε`; `n ≤ 90` here), and it agrees with faer's
    /// scalar factorization of the same matrix to that accuracy.
    #[test]
    fn solves_block_sparse_systems_like_the_scalar_factorization() {
        let chain: Vec<(usize, usize)> = (1..12).map(|i| (i, i - 1)).chain([(7, 2), (11, 0), (9, 4)]).collect();
        let hub: Vec<(usize, usize)> = (1..8).map(|i| (i, 0)).chain([(5, 3)]).collect();
        for (sizes, edges) in [
            (vec![6; 12], chain.clone()),
            ([6, 3, 3, 6, 3, 6, 3, 3, 6, 3, 3, 6].to_vec(), chain),
            (vec![6; 8], hub),
            (vec![6; 10], (0..10).flat_map(|i| (0..i).map(move |j| (i, j))).collect()), // dense
            (vec![6], vec![]),
            (vec![6, 6, 6], vec![]),
        ] {
            let (a, blocks) = block_spd(&sizes, &edges, 11);
            let n = a.len();
            let (cp, ri, val) = lower_csc(&a);
            let mut llt = BlockSparseCholesky::analyze(n, cp.clone(), ri.clone(), &blocks).unwrap();
            assert!(llt.has_pattern(&cp, &ri, &blocks));
            llt.factorize(&val).unwrap();
            let b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin() + 0.1).collect();
            let mut x = b.clone();
            llt.solve_in_place(&mut x);
            let norm_a = a.iter().map(|r| r.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
            let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let tol = 1e2 * f64::EPSILON * norm_a * norm_x;
            let res = a
                .iter()
                .zip(&b)
                .map(|(row, bi)| (row.iter().zip(&x).map(|(p, q)| p * q).sum::<f64>() - bi).abs())
                .fold(0.0, f64::max);
            assert!(res <= tol, "sizes {sizes:?}: residual {res:e} > {tol:e}");
            let mut scalar = SparseCholesky::analyze(n, cp, ri, CholeskyParams::default()).unwrap();
            scalar.factorize(&val).unwrap();
            let mut y = b.clone();
            scalar.solve_in_place(&mut y);
            let diff = x.iter().zip(&y).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            assert!(diff <= 1e2 * f64::EPSILON * norm_a * norm_x, "sizes {sizes:?}: differs from faer by {diff:e}");
        }
    }

    /// A chain of `m` blocks has no fill in any order AMD can pick for a path (a path graph's
    /// minimum-degree elimination starts at an end): `L` has the lower triangles of the `m`
    /// diagonal blocks and `m − 1` off-diagonal blocks, and the flop count is the sum of squared
    /// column counts of that structure.
    #[test]
    fn a_chain_of_bodies_factors_without_fill() {
        let m = 10;
        let edges: Vec<(usize, usize)> = (1..m).map(|i| (i, i - 1)).collect();
        let (a, blocks) = block_spd(&vec![6; m], &edges, 5);
        let (cp, ri, _) = lower_csc(&a);
        let llt = BlockSparseCholesky::analyze(a.len(), cp, ri, &blocks).unwrap();
        let info = llt.info();
        assert_eq!(info.nnz_l, m * 21 + (m - 1) * 36);
        // m − 1 block columns with one 6-row block below, the last with none
        let with_below: u64 = (1..=6u64).map(|k| (k + 6) * (k + 6)).sum();
        let last: u64 = (1..=6u64).map(|k| k * k).sum();
        assert_eq!(info.flops, (m as u64 - 1) * with_below + last);
    }

    #[test]
    fn an_indefinite_block_is_an_error() {
        // one 2 × 2 block [[1, 2], [2, 1]] (eigenvalues 3 and −1)
        let mut llt = BlockSparseCholesky::analyze(2, vec![0, 2, 3], vec![0, 1, 1], &[(0, 2)]).unwrap();
        assert!(matches!(llt.factorize(&[1.0, 2.0, 1.0]), Err(CholeskyError::NotPositiveDefinite { index: 1 })));
    }
}
