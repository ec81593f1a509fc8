//! The joint rows of a SubADMM unit, enforced exactly inside the v-step (maximal coordinates: the
//! joints of an articulated subsystem are constraints inside the unit, where the paper's reduced
//! coordinates have none): `K v = r + G_uᵀ γ`, `G_u v − v̂ + R γ = 0`, solved by the Schur
//! complement `S = G K⁻¹ Gᵀ + R`: `γ = S⁻¹ (v̂ − G K⁻¹ r)`, `v = K⁻¹ r + W γ` with `W = K⁻¹ Gᵀ`.
//! `W` and the factor of `S` change only with β: computed in [`Joints::factor`], used by every
//! iteration's [`Joints::correct`].
//!
//! `G` is stored per body (a joint row touches two bodies). With a block-diagonal `K` (body split)
//! `W` has the sparsity of `Gᵀ`, `W_b = H_b⁻¹ G_bᵀ`, and `S` gets contributions only between rows
//! that share a body (`S = Σ_b G_b W_b + R`); with a dense `K` (subsystem split) `W` is a dense
//! `n × nr` matrix. `S` is then factored densely; with the body split it keeps the tree's
//! sparsity (joints couple only through a shared body) and is factored by block elimination over
//! the joints, leaves first (`kernels::dense_cholesky::RowPattern`): no fill for a tree, the
//! maximal-coordinate analogue of the paper's tree-sparse LTDL of `A_j + βΣJᵀJ` (§VI-C).

use super::units::{Body, KFactor};
use harness::constraints::{ConstraintRows, RowLaw};
use kernels::dense_cholesky::{
    factor_in_place, factor_in_place_with, solve_in_place, solve_in_place_with, NonPositivePivot, RowPattern,
};

/// `G` restricted to one body.
struct Seg {
    body: Body,
    /// Unit-local indices of the joint rows touching the body.
    rows: Vec<usize>,
    /// `rows.len() × body.n`, row-major.
    g: Vec<f64>,
    /// Block-diagonal `K`: `W_b` stored like `g` (row `a` is `(H_b⁻¹ g_a)ᵀ`); else empty.
    w: Vec<f64>,
}

/// The joint rows of one unit and their Schur complement.
pub(super) struct Joints {
    /// Global indices of the problem's bilateral rows, in unit order.
    pub rows: Vec<usize>,
    v_hat: Vec<f64>,
    r: Vec<f64>,
    segs: Vec<Seg>,
    /// Dense `K`: `W = K⁻¹ Gᵀ`, column-major `n × nr`; else empty.
    w_dense: Vec<f64>,
    /// Block-diagonal `K`: the block-elimination pattern of `S`'s factor; else `S` is dense.
    pattern: Option<RowPattern>,
    /// Factor of `S` (`kernels::dense_cholesky` layout).
    s: Vec<f64>,
    /// Joint impulses of the last solve.
    pub gamma: Vec<f64>,
}

impl Joints {
    /// The joint rows `(global index, row)` of a unit with `bodies`; `local` maps a global DOF to
    /// the unit's local index. With a block-diagonal `K` (`block_k`) the rows are grouped into
    /// joints (rows on the same bodies) and ordered for the block elimination of `S` (leaves of
    /// the tree first, no fill); otherwise `S` is dense and the order is kept.
    pub fn new(
        rows: &[(usize, &ConstraintRows)],
        bodies: &[Body],
        local: impl Fn(usize) -> usize,
        block_k: bool,
    ) -> Self {
        let body_of = |g: usize| {
            let l = local(g);
            (bodies.partition_point(|b| b.off + b.n <= l), l)
        };
        // joints: groups of rows on the same bodies; joints sharing a body couple in S
        let mut joints: Vec<(Vec<usize>, Vec<usize>)> = vec![]; // (bodies, rows)
        for (k, (_, row)) in rows.iter().enumerate() {
            let mut on: Vec<usize> = row.dofs.iter().map(|&g| body_of(g).0).collect();
            on.dedup();
            match joints.iter_mut().find(|j| j.0 == on) {
                Some(j) => j.1.push(k),
                None => joints.push((on, vec![k])),
            }
        }
        let (order, pattern) = if block_k {
            let adjacent: Vec<Vec<usize>> = joints
                .iter()
                .map(|a| (0..joints.len()).filter(|&b| joints[b].0.iter().any(|x| a.0.contains(x))).collect())
                .collect();
            let sizes: Vec<usize> = joints.iter().map(|j| j.1.len()).collect();
            let (order, pattern) = RowPattern::block_elimination(&sizes, &adjacent);
            (order.iter().flat_map(|&j| joints[j].1.iter().copied()).collect(), Some(pattern))
        } else {
            ((0..rows.len()).collect::<Vec<usize>>(), None)
        };
        let mut segs: Vec<Seg> = vec![];
        let mut seg_of = vec![usize::MAX; bodies.len()];
        let (mut v_hat, mut r) = (Vec::with_capacity(rows.len()), Vec::with_capacity(rows.len()));
        for (k, &o) in order.iter().enumerate() {
            let row = rows[o].1;
            let RowLaw::Bilateral { v_hat: vh, r: rr } = row.law else { unreachable!("joint rows are bilateral") };
            v_hat.push(vh);
            r.push(rr);
            for (&g, &a) in row.dofs.iter().zip(&row.rows) {
                let (bi, l) = body_of(g);
                if seg_of[bi] == usize::MAX {
                    seg_of[bi] = segs.len();
                    segs.push(Seg { body: bodies[bi], rows: vec![], g: vec![], w: vec![] });
                }
                let seg = &mut segs[seg_of[bi]];
                let n = seg.body.n;
                if seg.rows.last() != Some(&k) {
                    seg.rows.push(k);
                    seg.g.resize(seg.g.len() + n, 0.0);
                }
                let a0 = (seg.rows.len() - 1) * n;
                seg.g[a0 + l - seg.body.off] += a;
            }
        }
        let nr = rows.len();
        Self {
            rows: order.iter().map(|&o| rows[o].0).collect(),
            v_hat,
            r,
            segs,
            w_dense: vec![],
            pattern,
            s: vec![0.0; nr * nr],
            gamma: vec![0.0; nr],
        }
    }

    /// `W = K⁻¹ Gᵀ` and the factor of `S = G W + R` for the freshly factored `K` of a unit with
    /// `n` DOFs. Redundant rows (closed loops) get a `1e-12 ‖diag S‖∞` regularisation.
    pub fn factor(&mut self, k: &mut KFactor, bodies: &[Body], n: usize) -> Result<(), String> {
        let nr = self.rows.len();
        if matches!(k, KFactor::Blocks(_)) {
            for seg in &mut self.segs {
                seg.w.clone_from(&seg.g);
                for w in seg.w.chunks_exact_mut(seg.body.n) {
                    k.solve_body(&seg.body, w);
                }
            }
        } else {
            self.w_dense.clear();
            self.w_dense.resize(n * nr, 0.0);
            for seg in &self.segs {
                let (o, m) = (seg.body.off, seg.body.n);
                for (&ka, g) in seg.rows.iter().zip(seg.g.chunks_exact(m)) {
                    self.w_dense[ka * n + o..ka * n + o + m].copy_from_slice(g);
                }
            }
            for col in self.w_dense.chunks_exact_mut(n) {
                k.solve(bodies, col);
            }
        }
        self.assemble_s(0.0);
        if self.factor_s().is_ok() {
            return Ok(());
        }
        self.assemble_s(0.0);
        let scale = (0..nr).map(|k| self.s[k * nr + k]).fold(0.0, f64::max);
        self.assemble_s(1e-12 * scale);
        self.factor_s().map_err(|e| format!("joint Schur complement: {e}"))
    }

    fn factor_s(&mut self) -> Result<(), NonPositivePivot> {
        match &self.pattern {
            Some(p) => factor_in_place_with(p, &mut self.s),
            None => factor_in_place(self.rows.len(), &mut self.s),
        }
    }

    /// `S = G W + R + shift I` (full matrix) into `self.s`.
    fn assemble_s(&mut self, shift: f64) {
        let nr = self.rows.len();
        self.s.iter_mut().for_each(|x| *x = 0.0);
        for (k, &rk) in self.r.iter().enumerate() {
            self.s[k * nr + k] = rk + shift;
        }
        let n = self.w_dense.len() / nr.max(1);
        for seg in &self.segs {
            let (o, m) = (seg.body.off, seg.body.n);
            for (&ka, ga) in seg.rows.iter().zip(seg.g.chunks_exact(m)) {
                let srow = &mut self.s[ka * nr..(ka + 1) * nr];
                if self.w_dense.is_empty() {
                    for (&kc, wc) in seg.rows.iter().zip(seg.w.chunks_exact(m)) {
                        srow[kc] += dot(ga, wc);
                    }
                } else {
                    for (sl, wl) in srow.iter_mut().zip(self.w_dense.chunks_exact(n)) {
                        *sl += dot(ga, &wl[o..o + m]);
                    }
                }
            }
        }
    }

    /// Given `x = K⁻¹ r`, sets `γ = S⁻¹ (v̂ − G x)` and `x ← x + W γ`.
    pub fn correct(&mut self, x: &mut [f64]) {
        let nr = self.rows.len();
        self.gamma.copy_from_slice(&self.v_hat);
        for seg in &self.segs {
            let (o, m) = (seg.body.off, seg.body.n);
            for (&ka, ga) in seg.rows.iter().zip(seg.g.chunks_exact(m)) {
                self.gamma[ka] -= dot(ga, &x[o..o + m]);
            }
        }
        match &self.pattern {
            Some(p) => solve_in_place_with(p, &self.s, &mut self.gamma),
            None => solve_in_place(nr, &self.s, &mut self.gamma),
        }
        if self.w_dense.is_empty() {
            for seg in &self.segs {
                let (o, m) = (seg.body.off, seg.body.n);
                for (&ka, wa) in seg.rows.iter().zip(seg.w.chunks_exact(m)) {
                    axpy(self.gamma[ka], wa, &mut x[o..o + m]);
                }
            }
        } else {
            for (&gl, wl) in self.gamma.iter().zip(self.w_dense.chunks_exact(x.len())) {
                axpy(gl, wl, x);
            }
        }
    }

    /// `r −= G_uᵀ γ`.
    pub fn subtract_transpose(&self, r: &mut [f64]) {
        for seg in &self.segs {
            let (o, m) = (seg.body.off, seg.body.n);
            for (&ka, ga) in seg.rows.iter().zip(seg.g.chunks_exact(m)) {
                axpy(-self.gamma[ka], ga, &mut r[o..o + m]);
            }
        }
    }
}

/// `a · b`, with a fixed-size path for a rigid body's 6 DOFs (the common case: unrolled).
#[inline(always)]
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    match (<&[f64; 6]>::try_from(a), <&[f64; 6]>::try_from(b)) {
        (Ok(a), Ok(b)) => a.iter().zip(b).map(|(x, y)| x * y).sum(),
        _ => a.iter().zip(b).map(|(x, y)| x * y).sum(),
    }
}

/// `y += a x`, with the same 6-DOF path as [`dot`].
#[inline(always)]
pub(super) fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    match (<&[f64; 6]>::try_from(x), <&mut [f64; 6]>::try_from(&mut *y)) {
        (Ok(x), Ok(y)) => y.iter_mut().zip(x).for_each(|(yi, xi)| *yi += a * xi),
        _ => y.iter_mut().zip(x).for_each(|(yi, xi)| *yi += a * xi),
    }
}
