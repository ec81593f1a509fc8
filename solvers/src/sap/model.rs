//! The unconstrained primal cost of SAP (Castro et al. Eq. 24), its gradient (§IV-A) and the
//! generalized Hessian `H = A + Jᵀ G J` (App. D), with the sparse pattern of `H` for the
//! Cholesky factorization.
//!
//! * `ℓ_p(v) = ½ ‖v − v*‖²_A + Σ_i ½ γ_iᵀ R_i γ_i`, `γ_i = P_F(y_i(v))` (Eq. 24, Eq. 35);
//! * `∇ℓ_p = A (v − v*) − Jᵀ γ` (the momentum residual of Eq. 18);
//! * `H = A + Jᵀ G J`, `G = blockdiag(G_i)` from [`super::projection`].

use super::problem::{ElasticTerm, SapProblem};
use super::projection::{cost, project, project_with_hessian};
use kernels::block_cholesky::BlockSparseCholesky;
use kernels::cholesky::{CholeskyError, CholeskyParams, SparseCholesky};

/// Per-solve scratch of the cost, gradient and Hessian evaluation; reused across iterations and
/// steps (resized per step, never inside the Newton loop).
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// `v − v*`.
    pub dv_star: Vec<f64>,
    /// `A (v − v*)`.
    pub a_dv_star: Vec<f64>,
    /// Contact velocities `J v` (n, t1, t2).
    pub vc: Vec<[f64; 3]>,
    /// Impulses `γ = P_F(y(v))`.
    pub gamma: Vec<[f64; 3]>,
    /// `G_i = −∂γ_i/∂v_c,i`.
    pub g: Vec<[[f64; 3]; 3]>,
    /// `∇ℓ_p`.
    pub grad: Vec<f64>,
    /// `Jᵀ γ` (the generalized contact impulse `j_c`).
    pub jc: Vec<f64>,
    /// `½ ‖v − v*‖²_A` (J).
    pub cost_a: f64,
    /// `Σ ½ γᵀ R γ` (J).
    pub cost_r: f64,
}

impl Evaluation {
    /// Resizes the buffers for `prob`.
    pub fn resize(&mut self, prob: &SapProblem) {
        let (nv, nc) = (prob.nv(), prob.constraints.len());
        for b in [&mut self.dv_star, &mut self.a_dv_star, &mut self.grad, &mut self.jc] {
            b.clear();
            b.resize(nv, 0.0);
        }
        self.vc.clear();
        self.vc.resize(nc, [0.0; 3]);
        self.gamma.clear();
        self.gamma.resize(nc, [0.0; 3]);
        self.g.clear();
        self.g.resize(nc, [[0.0; 3]; 3]);
    }

    /// The cost `ℓ_p(v)` (Eq. 24) = `cost_a + cost_r`.
    pub fn cost(&self) -> f64 {
        self.cost_a + self.cost_r
    }

    /// Evaluates cost, impulses, `G` (if `hessian`) and gradient at `v`. Allocates nothing.
    pub fn calc(&mut self, prob: &SapProblem, v: &[f64], hessian: bool) {
        for ((d, vi), vs) in self.dv_star.iter_mut().zip(v).zip(&prob.v_star) {
            *d = vi - vs;
        }
        prob.a_mul_into(&self.dv_star, &mut self.a_dv_star);
        self.cost_a = 0.5 * self.dv_star.iter().zip(&self.a_dv_star).map(|(a, b)| a * b).sum::<f64>();
        self.cost_r = 0.0;
        self.jc.iter_mut().for_each(|x| *x = 0.0);
        for (i, c) in prob.constraints.iter().enumerate() {
            let vc = c.velocity(v);
            let y = c.unprojected_impulse(vc);
            let gamma = if hessian {
                let (gamma, _, g) = project_with_hessian(y, &c.cone);
                self.g[i] = g;
                gamma
            } else {
                project(y, &c.cone).0
            };
            self.vc[i] = vc;
            self.gamma[i] = gamma;
            self.cost_r += cost(gamma, &c.cone);
            c.add_transpose(gamma, &mut self.jc);
        }
        for ((g, a), j) in self.grad.iter_mut().zip(&self.a_dv_star).zip(&self.jc) {
            *g = a - j;
        }
        // prescribed DOFs stay at v̄_P: the gradient on the free DOFs only
        for (g, &f) in self.grad.iter_mut().zip(&prob.fixed) {
            if f {
                *g = 0.0;
            }
        }
    }
}

/// The lower-triangle entries of the deformable stiffness as `(csr entry, global row, global
/// column)`.
fn lower_k(e: &ElasticTerm) -> impl Iterator<Item = (usize, usize, usize)> + '_ {
    (0..e.k_dt2.nrows).flat_map(move |r| {
        (e.k_dt2.indptr[r]..e.k_dt2.indptr[r + 1])
            .map(move |k| (k, e.start + r, e.start + e.k_dt2.indices[k]))
            .filter(|&(_, gr, gc)| gr >= gc)
    })
}

/// Where the contribution of one ordered pair of contact sides `(s, t)` goes in the
/// lower-triangle storage of `H`.
#[derive(Debug, Clone, Copy, Default)]
struct PairSlot {
    /// Whether this ordered pair lands in the lower triangle (block(s) ≥ block(t)).
    used: bool,
    /// Offset of block(s) rows inside the columns of block(t) (see [`HessianPattern::index`]).
    rel: usize,
}

/// The lower-triangle CSC pattern of `H = A + Jᵀ G J`: dense diagonal blocks (one per DOF block)
/// plus a dense off-diagonal block for every pair of DOF blocks that share a contact or, for FEM
/// nodes, an element (the stiffness part of `A`). It depends only on which blocks touch (Castro et
/// al. §IV-D), not on contact modes, so its symbolic factorization is reused across Newton
/// iterations and across steps with the same pairs. Prescribed DOFs are identity rows and columns
/// (scaled by their mass), so Newton directions leave them at `v̄_P`.
#[derive(Debug, Clone, Default)]
pub struct HessianPattern {
    /// Column pointers (n + 1).
    pub col_ptr: Vec<usize>,
    /// Row indices.
    pub row_idx: Vec<usize>,
    /// Values, in `row_idx` order.
    pub values: Vec<f64>,
    /// Per block column: the connected blocks below it, sorted, with their row offset `rel`.
    below: Vec<Vec<(usize, usize)>>,
    /// `(v_offset, nv)` per block.
    blocks: Vec<(usize, usize)>,
    /// Per contact `i` with `k` sides, per ordered side pair `(s, t)`: its slot, at
    /// `slots[slot_start[i] + s k + t]`.
    slots: Vec<PairSlot>,
    /// First slot of each contact.
    slot_start: Vec<usize>,
    /// Where each lower-triangle entry of the deformable stiffness (`ElasticTerm::k_dt2`, in
    /// CSR order, upper entries skipped) goes in `values`: `(csr entry, values index)`.
    k_slots: Vec<(usize, usize)>,
    /// Entries of `values` in a prescribed row or column: `(index, diagonal value)` with
    /// `diagonal value` the DOF's mass on the diagonal and 0 elsewhere.
    fixed_slots: Vec<(usize, f64)>,
}

impl HessianPattern {
    /// Builds the pattern of `prob` (per step; allocates).
    #[allow(clippy::needless_range_loop)] // side indices address two arrays at once
    pub fn build(&mut self, prob: &SapProblem) {
        let nb = prob.blocks.len();
        self.blocks.clone_from(&prob.blocks);
        self.below.clear();
        self.below.resize(nb, Vec::new());
        // DOF -> (block, local index)
        let mut block_of = vec![(0, 0); prob.nv()];
        for (b, &(o, n)) in prob.blocks.iter().enumerate() {
            for l in 0..n {
                block_of[o + l] = (b, l);
            }
        }
        if let Some(e) = &prob.elastic {
            for (_, r, c) in lower_k(e) {
                let (bi, bj) = (block_of[r].0, block_of[c].0);
                if bi != bj {
                    self.below[bi.min(bj)].push((bi.max(bj), 0));
                }
            }
        }
        for c in &prob.constraints {
            for (k, s) in c.sides.iter().enumerate() {
                for t in &c.sides[..k] {
                    let (hi, lo) = if s.block > t.block { (s.block, t.block) } else { (t.block, s.block) };
                    if hi != lo {
                        self.below[lo].push((hi, 0));
                    }
                }
            }
        }
        for list in &mut self.below {
            list.sort_unstable();
            list.dedup();
            let mut rel = 0;
            for (bi, r) in list.iter_mut() {
                *r = rel;
                rel += prob.blocks[*bi].1;
            }
        }
        self.col_ptr.clear();
        self.row_idx.clear();
        self.col_ptr.push(0);
        for (bj, &(off, n)) in prob.blocks.iter().enumerate() {
            for c in 0..n {
                self.row_idx.extend(off + c..off + n);
                for &(bi, _) in &self.below[bj] {
                    let (oi, ni) = prob.blocks[bi];
                    self.row_idx.extend(oi..oi + ni);
                }
                self.col_ptr.push(self.row_idx.len());
            }
        }
        self.values.clear();
        self.values.resize(self.row_idx.len(), 0.0);
        self.k_slots.clear();
        if let Some(e) = &prob.elastic {
            for (k, r, c) in lower_k(e) {
                let ((bi, ri), (bj, cj)) = (block_of[r], block_of[c]);
                let idx = if bi == bj {
                    // r ≥ c within a block: ri ≥ cj
                    self.index(bi, bj, 0, ri, cj)
                } else {
                    // bi > bj (r > c and blocks are ordered by offset)
                    let p = self.below[bj].binary_search_by_key(&bi, |x| x.0).expect("element pair in pattern");
                    self.index(bi, bj, self.below[bj][p].1, ri, cj)
                };
                self.k_slots.push((k, idx));
            }
        }
        self.fixed_slots.clear();
        if !prob.fixed.is_empty() {
            let mass = prob.mass.diagonal();
            for c in 0..self.col_ptr.len() - 1 {
                for k in self.col_ptr[c]..self.col_ptr[c + 1] {
                    let r = self.row_idx[k];
                    if prob.fixed[r] || prob.fixed[c] {
                        self.fixed_slots.push((k, if r == c { mass[r] } else { 0.0 }));
                    }
                }
            }
        }
        self.slots.clear();
        self.slot_start.clear();
        for c in &prob.constraints {
            self.slot_start.push(self.slots.len());
            for (s, ss) in c.sides.iter().enumerate() {
                for (t, st) in c.sides.iter().enumerate() {
                    let (bs, bt) = (ss.block, st.block);
                    let slot = if bs == bt {
                        PairSlot { used: s == t, rel: 0 }
                    } else if bs > bt {
                        let k = self.below[bt].binary_search_by_key(&bs, |x| x.0).expect("pair in pattern");
                        PairSlot { used: true, rel: self.below[bt][k].1 }
                    } else {
                        PairSlot::default()
                    };
                    self.slots.push(slot);
                }
            }
        }
    }

    /// Index in `values` of entry (row `r` of block `bi`, column `c` of block `bj`), `bi ≥ bj`,
    /// `r ≥ c` when `bi = bj`; `rel` is block `bi`'s offset below `bj` (0 on the diagonal).
    #[inline]
    fn index(&self, bi: usize, bj: usize, rel: usize, r: usize, c: usize) -> usize {
        let (oj, nj) = self.blocks[bj];
        let base = self.col_ptr[oj + c];
        if bi == bj {
            base + r - c
        } else {
            base + (nj - c) + rel + r
        }
    }

    /// Fills `values` with `H = A + Jᵀ G J` at the `G` of `eval` (prescribed rows and columns:
    /// their mass on the diagonal, zero elsewhere). Allocates nothing.
    #[allow(clippy::needless_range_loop)] // small dense blocks indexed by row and column
    pub fn assemble(&mut self, prob: &SapProblem, eval: &Evaluation) {
        self.values.iter_mut().for_each(|x| *x = 0.0);
        for (b, blk) in prob.a.blocks().iter().enumerate() {
            let n = blk.nrows();
            for c in 0..n {
                let k0 = self.index(b, b, 0, c, c);
                for (h, a) in self.values[k0..k0 + n - c].iter_mut().zip(&blk.column(c).as_slice()[c..]) {
                    *h += a;
                }
            }
        }
        for (i, c) in prob.constraints.iter().enumerate() {
            let g = &eval.g[i];
            if g.iter().flatten().all(|&x| x == 0.0) {
                continue; // a separated contact (region III of Eq. 22) adds nothing
            }
            let (k, start) = (c.sides.len(), self.slot_start[i]);
            for (t, st) in c.sides.iter().enumerate() {
                // G J_t (3 × n_t)
                let mut gj = [[0.0; 6]; 3];
                for (r, row) in gj.iter_mut().enumerate() {
                    for (col, x) in row.iter_mut().enumerate().take(st.ncols) {
                        *x = g[r][0] * st.j[0][col] + g[r][1] * st.j[1][col] + g[r][2] * st.j[2][col];
                    }
                }
                for (s, ss) in c.sides.iter().enumerate() {
                    let slot = self.slots[start + s * k + t];
                    if !slot.used {
                        continue;
                    }
                    let diag = ss.block == st.block;
                    for col in 0..st.ncols {
                        let r0 = if diag { col } else { 0 };
                        // a block column's rows are contiguous in `values`
                        let k0 = self.index(ss.block, st.block, slot.rel, r0, col);
                        let g = [gj[0][col], gj[1][col], gj[2][col]];
                        for (r, h) in (r0..ss.ncols).zip(&mut self.values[k0..k0 + ss.ncols - r0]) {
                            *h += ss.j[0][r] * g[0] + ss.j[1][r] * g[1] + ss.j[2][r] * g[2];
                        }
                    }
                }
            }
        }
        if let Some(e) = &prob.elastic {
            for &(k, idx) in &self.k_slots {
                self.values[idx] += e.k_dt2.data[k];
            }
        }
        for &(idx, x) in &self.fixed_slots {
            self.values[idx] = x;
        }
    }

    /// `(v_offset, nv)` of each DOF block (the mass matrix's blocks: bodies, FEM nodes).
    pub fn blocks(&self) -> &[(usize, usize)] {
        &self.blocks
    }

    /// `H` as a dense matrix (tests).
    pub fn to_dense(&self) -> nalgebra::DMatrix<f64> {
        let n = self.col_ptr.len() - 1;
        let mut h = nalgebra::DMatrix::zeros(n, n);
        for c in 0..n {
            for k in self.col_ptr[c]..self.col_ptr[c + 1] {
                let r = self.row_idx[k];
                h[(r, c)] = self.values[k];
                h[(c, r)] = self.values[k];
            }
        }
        h
    }
}

/// The factorization of `H`, with its symbolic analysis kept while the pattern is unchanged.
///
/// `H` is made of dense per-body blocks coupled by contacts, so it is factored block by block
/// over the body graph (`kernels::block_cholesky`, the structure Drake's SAP factors), with the
/// blocks ordered by AMD. A factor of more than [`BLOCK_MAX_FLOPS`] (a large, nearly dense `H`,
/// e.g. the Cholesky view of a big FCLIB local problem) goes to faer's supernodal
/// factorization instead, whose large dense kernels win there.
#[derive(Debug, Default)]
pub struct HessianFactor {
    llt: Option<Factor>,
    /// Symbolic analyses performed so far (statistics; tests assert reuse).
    pub analyses: usize,
}

/// The factorization [`HessianFactor`] chose for the current pattern.
#[derive(Debug)]
enum Factor {
    Block(BlockSparseCholesky),
    Supernodal(SparseCholesky),
}

/// Above this many flops per factorization (`CholeskyInfo::flops`), `H` is factored by faer's
/// supernodal Cholesky: its fill has grown into large dense supernodes, where faer's big dense
/// kernels beat many 6 × 6 block products. Measured (release, one factorization, block vs faer
/// supernodal): the settled 80-object clutter (3.3e5 flops) 70 vs 130 µs; a dense `H` of 6 × 6
/// blocks with `n` = 300 (9e6 flops) 1.1 vs 1.7 ms; the settled 320-object clutter (1.8e7
/// flops) 2.11 vs 1.46 ms; dense `n` = 600 (7.2e7 flops) 8.1 vs 4.7 ms, `n` = 2400 511 vs 125 ms.
pub const BLOCK_MAX_FLOPS: u64 = 10_000_000;

impl HessianFactor {
    /// Factors `H` (values of `pattern`), re-running the symbolic analysis only if the pattern
    /// changed since the last call.
    pub fn factorize(&mut self, pattern: &HessianPattern) -> Result<(), CholeskyError> {
        let n = pattern.col_ptr.len() - 1;
        let reuse = self.llt.as_ref().is_some_and(|l| match l {
            Factor::Block(b) => b.has_pattern(&pattern.col_ptr, &pattern.row_idx, &pattern.blocks),
            Factor::Supernodal(s) => s.has_pattern(&pattern.col_ptr, &pattern.row_idx),
        });
        if !reuse {
            let block =
                BlockSparseCholesky::analyze(n, pattern.col_ptr.clone(), pattern.row_idx.clone(), &pattern.blocks)?;
            self.llt = Some(if block.info().flops > BLOCK_MAX_FLOPS {
                let params = CholeskyParams { supernodal: true, ..CholeskyParams::default() };
                Factor::Supernodal(SparseCholesky::analyze(
                    n,
                    pattern.col_ptr.clone(),
                    pattern.row_idx.clone(),
                    params,
                )?)
            } else {
                Factor::Block(block)
            });
            self.analyses += 1;
        }
        match self.llt.as_mut().expect("analysed") {
            Factor::Block(b) => b.factorize(&pattern.values),
            Factor::Supernodal(s) => s.factorize(&pattern.values),
        }
    }

    /// Solves `H x = b` in place with the last factorization.
    pub fn solve_in_place(&mut self, rhs: &mut [f64]) {
        match self.llt.as_mut().expect("factorize first") {
            Factor::Block(b) => b.solve_in_place(rhs),
            Factor::Supernodal(s) => s.solve_in_place(rhs),
        }
    }
}

#[cfg(test)]
mod factor_choice_tests {
    use super::*;

    /// A dense SPD `H` of `nb` 6 × 6 blocks, every pair coupled, as a [`HessianPattern`].
    fn dense_pattern(nb: usize) -> HessianPattern {
        let n = 6 * nb;
        let entry = |i: usize, j: usize| {
            if i == j {
                n as f64
            } else {
                ((i.min(j) * 7 + i.max(j) * 13) % 17) as f64 / 17.0 - 0.5
            }
        };
        let (mut col_ptr, mut row_idx, mut values) = (vec![0], vec![], vec![]);
        for c in 0..n {
            for r in c..n {
                row_idx.push(r);
                values.push(entry(r, c));
            }
            col_ptr.push(row_idx.len());
        }
        HessianPattern {
            col_ptr,
            row_idx,
            values,
            blocks: (0..nb).map(|b| (6 * b, 6)).collect(),
            ..HessianPattern::default()
        }
    }

    /// Small `H` is factored by blocks, a dense one above [`BLOCK_MAX_FLOPS`] (`n = 600`: `n³/3`
    /// ≈ 7.2e7) by faer's supernodal Cholesky; both solve `H x = b` to a backward-stable residual
    /// (`‖H x − b‖∞ ≤ 1e2 ε ‖H‖∞ ‖x‖∞`).
    #[test]
    fn large_dense_hessians_go_to_the_supernodal_factor() {
        for (nb, block) in [(10, true), (100, false)] {
            let p = dense_pattern(nb);
            let mut f = HessianFactor::default();
            f.factorize(&p).unwrap();
            assert_eq!(matches!(f.llt, Some(Factor::Block(_))), block, "nb = {nb}");
            let h = p.to_dense();
            let b: Vec<f64> = (0..h.nrows()).map(|i| (i as f64 * 0.3).cos()).collect();
            let mut x = b.clone();
            f.solve_in_place(&mut x);
            let hx = &h * nalgebra::DVector::from_column_slice(&x);
            let res = hx.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max);
            let norm_h = h.row_iter().map(|r| r.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
            let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(res <= 1e2 * f64::EPSILON * norm_h * norm_x, "nb = {nb}: residual {res:e}");
        }
    }
}
