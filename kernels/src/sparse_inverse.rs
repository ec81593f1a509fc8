//! The sparse inverse Cholesky factor of Zeng et al. (§4, Theorem 1, Eqs. 7–8): for a constant SPD
//! matrix `A` with fill-reducing permutation `P` and `P A Pᵀ = L Lᵀ`,
//!
//! ```text
//! S = L⁻¹ P,      A⁻¹ = Sᵀ S,      x = A⁻¹ b = Sᵀ (S b)      (two SpMVs, Eq. 8)
//! ```
//!
//! The paper writes `S = L⁻¹ I` and drops `P` (an erratum; local_global README); with an ordering the factor
//! has to carry it, as here. Theorem 1 (Bridson & Tang 1999; Benzi & Tůma 2000): column `j` of
//! `L⁻¹` is nonzero exactly on the path from `j` to its root in the elimination tree of `P A Pᵀ`, so
//! each column is one sparse triangular solve `L x = e_j` restricted to that path. Columns are
//! independent and computed in parallel (rayon). `S` is stored in CSR together with `Sᵀ` (CSR),
//! the layout a GPU SpMV reads as is; both products go through a [`Backend`].
//!
//! The entry point is [`SparseInverse::new`]. The ordering is faer's AMD (the paper uses nested
//! dissection, which faer does not offer; any fill-reducing ordering keeps Theorem 1 true, only
//! `nnz(S)` changes). [`elimination_tree`] predicts the pattern from `A` alone; [`spgemm`] forms
//! the Delassus operator `W = (S Hᵀ)ᵀ (S Hᵀ)` (Eq. 27); [`InverseMemory`] compares the bytes of `S`
//! with a dense `A⁻¹` (Tables 1–2).

use crate::backend::Backend;
use crate::cholesky::CholeskyError;
use crate::sparse::Csr;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Par, Side};
use rayon::prelude::*;

/// Memory of the sparse inverse factor against a dense inverse (paper Tables 1–2, in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InverseMemory {
    /// Dimension `n`.
    pub n: usize,
    /// Stored entries of `S`.
    pub nnz_s: usize,
    /// Stored entries of the Cholesky factor `L`.
    pub nnz_l: usize,
    /// `8 nnz(S)`: the values of `S` in double (the paper's "S (MB)" column counts doubles).
    pub s_value_bytes: usize,
    /// `S` as stored here: CSR with 8-byte indices, `16 nnz(S) + 8 (n + 1)` (one copy; `Sᵀ`
    /// doubles it).
    pub s_csr_bytes: usize,
    /// A dense `n × n` inverse in double, `8 n²`.
    pub dense_bytes: usize,
    /// The upper triangle of a dense symmetric inverse, `8 n (n + 1) / 2` — the convention of the
    /// paper's "dense A⁻¹" column (Zeng et al. §7.2, Tables 1–2: e.g. 893.33 MiB at 5.1k vertices).
    pub dense_sym_bytes: usize,
}

impl InverseMemory {
    /// `s_value_bytes / dense_sym_bytes` (the paper's S / dense ratio).
    pub fn ratio(&self) -> f64 {
        self.s_value_bytes as f64 / self.dense_sym_bytes.max(1) as f64
    }
}

/// The sparse inverse factor `S = L⁻¹ P` of an SPD matrix (see the module doc).
#[derive(Debug, Clone)]
pub struct SparseInverse {
    s: Csr,
    st: Csr,
    perm: Vec<usize>,
    parent: Vec<Option<usize>>,
    nnz_l: usize,
    /// Identity of this factor (clones share it: the factor is immutable), the key under which a
    /// device backend caches its uploaded copy of `S` and `Sᵀ`.
    id: u64,
}

static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl SparseInverse {
    /// Factors the symmetric positive definite `a` (full symmetric CSR; only the upper triangle of
    /// each row is read) and forms `S` column by column along the elimination tree.
    #[track_caller]
    pub fn new(a: &Csr) -> Result<Self, CholeskyError> {
        assert_eq!(a.nrows, a.ncols, "SparseInverse needs a square matrix");
        let n = a.nrows;
        let (cp, ri, vals) = a.lower_csc();
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &cp, None, &ri);
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
            ..Default::default()
        };
        let symbolic = factorize_symbolic_cholesky(sym, Side::Lower, SymmetricOrdering::Amd, params)
            .map_err(|e| CholeskyError::Symbolic { what: format!("{e:?}") })?;
        let mut l_values = vec![0.0; symbolic.len_val()];
        let mut buf = MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()));
        symbolic
            .factorize_numeric_llt::<f64>(
                &mut l_values,
                SparseColMatRef::new(sym, &vals),
                Side::Lower,
                LltRegularization::default(),
                Par::Seq,
                MemStack::new(&mut buf),
                Default::default(),
            )
            .map_err(|e| match e {
                faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } => {
                    CholeskyError::NotPositiveDefinite { index }
                }
            })?;
        let SymbolicCholeskyRaw::Simplicial(simp) = symbolic.raw() else {
            return Err(CholeskyError::Symbolic { what: "faer chose a supernodal factor".into() });
        };
        let l_cp: Vec<usize> = simp.col_ptr().to_vec();
        let l_ri: Vec<usize> = simp.row_idx().to_vec();
        let perm: Vec<usize> = match symbolic.perm() {
            Some(p) => p.arrays().0.to_vec(),
            None => (0..n).collect(),
        };
        // etree of P A Pᵀ read off L: parent(j) = first off-diagonal row of column j
        let mut parent = vec![None; n];
        for j in 0..n {
            let (s, e) = (l_cp[j], l_cp[j + 1]);
            assert!(s < e && l_ri[s] == j, "simplicial L must store the diagonal first in column {j}");
            if e > s + 1 {
                parent[j] = Some(l_ri[s + 1]);
            }
        }
        // column j of L⁻¹: L x = e_j on the etree path of j (Theorem 1), in parallel
        let columns: Vec<(Vec<usize>, Vec<f64>)> = (0..n)
            .into_par_iter()
            .map_init(
                || vec![0.0f64; n],
                |x, j| {
                    let mut rows = Vec::new();
                    let mut k = Some(j);
                    while let Some(c) = k {
                        rows.push(c);
                        k = parent[c];
                    }
                    x[j] = 1.0;
                    for &c in &rows {
                        let (s, e) = (l_cp[c], l_cp[c + 1]);
                        let xc = x[c] / l_values[s];
                        x[c] = xc;
                        for p in s + 1..e {
                            x[l_ri[p]] -= l_values[p] * xc;
                        }
                    }
                    let v: Vec<f64> = rows.iter().map(|&r| std::mem::take(&mut x[r])).collect();
                    (rows, v)
                },
            )
            .collect();
        // S[i, perm[j]] = (L⁻¹)[i, j]: S x = L⁻¹ (P x) with (P x)_j = x_{perm[j]}
        let nnz: usize = columns.iter().map(|c| c.0.len()).sum();
        let mut t = Vec::with_capacity(nnz);
        for (j, (rows, v)) in columns.into_iter().enumerate() {
            t.extend(rows.into_iter().zip(v).map(|(r, val)| (r, perm[j], val)));
        }
        let s = Csr::from_triplets(n, n, &t);
        let st = s.transpose();
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Self { s, st, perm, parent, nnz_l: l_ri.len(), id })
    }

    /// Dimension `n`.
    pub fn dim(&self) -> usize {
        self.s.nrows
    }

    /// `S = L⁻¹ P` (CSR).
    pub fn s(&self) -> &Csr {
        &self.s
    }

    /// `Sᵀ` (CSR).
    pub fn st(&self) -> &Csr {
        &self.st
    }

    /// The fill-reducing ordering: row `i` of `P A Pᵀ` is row `perm[i]` of `A`.
    pub fn perm(&self) -> &[usize] {
        &self.perm
    }

    /// The elimination tree of `P A Pᵀ` (parent of each permuted column; `None` at a root), as
    /// read off the factor.
    pub fn etree(&self) -> &[Option<usize>] {
        &self.parent
    }

    /// Identity of this factor (unique per [`SparseInverse::new`]; clones share it).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `x = A⁻¹ b = Sᵀ (S b)`: two SpMVs through `backend` (Eq. 8, via
    /// [`Backend::sparse_inverse_solve`], which a device backend runs with `S` resident); `tmp`
    /// has length `n`.
    #[track_caller]
    pub fn solve<B: Backend + ?Sized>(&self, backend: &B, b: &[f64], tmp: &mut [f64], x: &mut [f64]) {
        backend.sparse_inverse_solve(self, b, tmp, x);
    }

    /// Bytes of `S` against a dense `A⁻¹`.
    pub fn memory(&self) -> InverseMemory {
        let n = self.dim();
        let nnz = self.s.nnz();
        InverseMemory {
            n,
            nnz_s: nnz,
            nnz_l: self.nnz_l,
            s_value_bytes: 8 * nnz,
            s_csr_bytes: 16 * nnz + 8 * (n + 1),
            dense_bytes: 8 * n * n,
            dense_sym_bytes: 8 * n * (n + 1) / 2,
        }
    }

    /// `Y = S Hᵀ` for a constraint Jacobian `h` (`m × n`), the factor of `W = Yᵀ Y` (Eq. 27).
    #[track_caller]
    pub fn times_transpose(&self, h: &Csr) -> Csr {
        assert_eq!(h.ncols, self.dim(), "H must have n columns");
        spgemm(&self.s, &h.transpose())
    }

    /// The Delassus operator `W = H A⁻¹ Hᵀ = (S Hᵀ)ᵀ (S Hᵀ)` (Eq. 27), two SpGEMMs.
    pub fn delassus(&self, h: &Csr) -> Csr {
        let y = self.times_transpose(h);
        spgemm(&y.transpose(), &y)
    }
}

/// The elimination tree of the symmetric matrix `a` permuted by `perm` (row `i` of the permuted
/// matrix is row `perm[i]` of `a`), from the pattern alone (Liu's algorithm with path
/// compression): `parent[j]` is the smallest `i > j` with `L_ij ≠ 0`. By Theorem 1 the pattern of
/// column `j` of `L⁻¹` is `j` and its ancestors.
#[track_caller]
pub fn elimination_tree(a: &Csr, perm: &[usize]) -> Vec<Option<usize>> {
    let n = a.nrows;
    assert_eq!(perm.len(), n, "perm length");
    let mut inv = vec![0; n];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    let mut parent = vec![None; n];
    let mut ancestor: Vec<Option<usize>> = vec![None; n];
    for (j, &orig) in perm.iter().enumerate() {
        for &c in &a.indices[a.indptr[orig]..a.indptr[orig + 1]] {
            let mut r = inv[c];
            if r >= j {
                continue;
            }
            while let Some(next) = ancestor[r] {
                if next == j {
                    break;
                }
                ancestor[r] = Some(j);
                r = next;
            }
            if ancestor[r].is_none() {
                ancestor[r] = Some(j);
                parent[r] = Some(j);
            }
        }
    }
    parent
}

/// `C = A B` for CSR matrices (Gustavson's row-by-row algorithm, rows in parallel); entries
/// that are structurally present but cancel to zero are kept.
#[track_caller]
pub fn spgemm(a: &Csr, b: &Csr) -> Csr {
    assert_eq!(a.ncols, b.nrows, "spgemm: inner dimensions differ");
    let ncols = b.ncols;
    let rows: Vec<(Vec<usize>, Vec<f64>)> = (0..a.nrows)
        .into_par_iter()
        .map_init(
            || (vec![0.0f64; ncols], vec![false; ncols]),
            |(acc, seen), r| {
                let mut cols = Vec::new();
                for p in a.indptr[r]..a.indptr[r + 1] {
                    let (k, av) = (a.indices[p], a.data[p]);
                    for q in b.indptr[k]..b.indptr[k + 1] {
                        let c = b.indices[q];
                        if !seen[c] {
                            seen[c] = true;
                            cols.push(c);
                        }
                        acc[c] += av * b.data[q];
                    }
                }
                cols.sort_unstable();
                let vals = cols
                    .iter()
                    .map(|&c| {
                        seen[c] = false;
                        std::mem::take(&mut acc[c])
                    })
                    .collect();
                (cols, vals)
            },
        )
        .collect();
    let mut indptr = Vec::with_capacity(a.nrows + 1);
    indptr.push(0);
    let (mut indices, mut data) = (Vec::new(), Vec::new());
    for (c, v) in rows {
        indices.extend(c);
        data.extend(v);
        indptr.push(indices.len());
    }
    Csr { nrows: a.nrows, ncols, indptr, indices, data }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Cpu;
    use crate::cholesky::{CholeskyParams, SparseCholesky};

    /// The 3D 7-point Laplacian on an `k × k × k` grid plus `shift · I` (SPD), 3 DOF per node
    /// with a small coupling between the DOFs of a node — the shape of a PD global matrix.
    fn grid_matrix(k: usize, shift: f64) -> Csr {
        let id = |i: usize, j: usize, l: usize| i + k * (j + k * l);
        let n = k * k * k;
        let mut t = Vec::new();
        for l in 0..k {
            for j in 0..k {
                for i in 0..k {
                    let a = id(i, j, l);
                    let mut nb = vec![];
                    if i + 1 < k {
                        nb.push(id(i + 1, j, l));
                    }
                    if j + 1 < k {
                        nb.push(id(i, j + 1, l));
                    }
                    if l + 1 < k {
                        nb.push(id(i, j, l + 1));
                    }
                    for b in nb {
                        for d in 0..3 {
                            let (p, q) = (3 * a + d, 3 * b + d);
                            t.extend([(p, p, 1.0), (q, q, 1.0), (p, q, -1.0), (q, p, -1.0)]);
                        }
                    }
                    for d in 0..3 {
                        t.push((3 * a + d, 3 * a + d, shift));
                        let e = (d + 1) % 3;
                        t.extend([(3 * a + d, 3 * a + e, 0.01), (3 * a + e, 3 * a + d, 0.01)]);
                    }
                }
            }
        }
        Csr::from_triplets(3 * n, 3 * n, &t)
    }

    fn inf(x: &[f64]) -> f64 {
        x.iter().fold(0.0, |m, v| m.max(v.abs()))
    }

    /// `Sᵀ S b` equals the Cholesky solve (same ordering, same factor values) to round-off:
    /// both are backward-stable evaluations of `A⁻¹ b`, so they agree to `c ε κ(A) ‖x‖`; with
    /// `κ ≈ 50` here, `1e3 ε ‖x‖` is a safe bound (local_global README, Oracles).
    #[test]
    fn sparse_inverse_solve_equals_cholesky_solve() {
        let a = grid_matrix(5, 0.5);
        let n = a.nrows;
        let inv = SparseInverse::new(&a).unwrap();
        let (cp, ri, vals) = a.lower_csc();
        let mut chol = SparseCholesky::analyze(n, cp, ri, CholeskyParams::default()).unwrap();
        chol.factorize(&vals).unwrap();
        for seed in 0..3 {
            let b: Vec<f64> = (0..n).map(|i| ((i * 7 + seed * 13) as f64 * 0.37).sin()).collect();
            let (mut tmp, mut x) = (vec![0.0; n], vec![0.0; n]);
            inv.solve(&Cpu, &b, &mut tmp, &mut x);
            let mut y = b.clone();
            chol.solve_in_place(&mut y);
            let diff: Vec<f64> = x.iter().zip(&y).map(|(p, q)| p - q).collect();
            assert!(inf(&diff) <= 1e3 * f64::EPSILON * inf(&y), "diff {}", inf(&diff));
            // and it solves A x = b
            let r: Vec<f64> = a.mul(&x).iter().zip(&b).map(|(p, q)| p - q).collect();
            assert!(inf(&r) <= 1e3 * f64::EPSILON * inf(&b));
        }
    }

    /// Theorem 1: the pattern of column `j` of `L⁻¹` (column `perm[j]` of `S`) is exactly the
    /// etree path from `j` to its root, with the etree predicted from `A`'s pattern alone.
    #[test]
    fn pattern_of_s_equals_elimination_tree_prediction() {
        let a = grid_matrix(4, 0.1);
        let n = a.nrows;
        let inv = SparseInverse::new(&a).unwrap();
        let predicted = elimination_tree(&a, inv.perm());
        assert_eq!(predicted, inv.etree(), "etree from A's pattern = etree read off L");
        let st = inv.st(); // row c of Sᵀ = column c of S
        let mut total = 0;
        for j in 0..n {
            let mut path = vec![];
            let mut k = Some(j);
            while let Some(c) = k {
                path.push(c);
                k = predicted[c];
            }
            let c = inv.perm()[j];
            let rows = &st.indices[st.indptr[c]..st.indptr[c + 1]];
            path.sort_unstable();
            assert_eq!(rows, &path[..], "column {j}");
            // no structural entry is an exact zero here (cancellation is possible in general)
            assert!(st.data[st.indptr[c]..st.indptr[c + 1]].iter().all(|v| *v != 0.0));
            total += path.len();
        }
        assert_eq!(inv.memory().nnz_s, total);
        // lower triangular in the permuted order: S[i, perm[j]] ≠ 0 only for i >= j
        let mut pinv = vec![0; n];
        for (i, &p) in inv.perm().iter().enumerate() {
            pinv[p] = i;
        }
        for i in 0..n {
            for &c in &inv.s().indices[inv.s().indptr[i]..inv.s().indptr[i + 1]] {
                assert!(pinv[c] <= i);
            }
        }
    }

    /// `W = (S Hᵀ)ᵀ (S Hᵀ)` equals `H A⁻¹ Hᵀ` column by column through Cholesky solves, and is
    /// symmetric (Eq. 27).
    #[test]
    fn delassus_from_s_equals_h_ainv_ht() {
        let a = grid_matrix(3, 1.0);
        let n = a.nrows;
        let h = Csr::from_triplets(3, n, &[(0, 2, 1.0), (1, 0, 0.6), (1, 1, 0.8), (2, n - 1, 1.0), (2, 4, -0.5)]);
        let inv = SparseInverse::new(&a).unwrap();
        let w = inv.delassus(&h);
        let (cp, ri, vals) = a.lower_csc();
        let mut chol = SparseCholesky::analyze(n, cp, ri, CholeskyParams::default()).unwrap();
        chol.factorize(&vals).unwrap();
        let ht = h.transpose();
        for c in 0..3 {
            let mut e = vec![0.0; 3];
            e[c] = 1.0;
            let mut x = ht.mul(&e);
            chol.solve_in_place(&mut x);
            let col = h.mul(&x);
            for r in 0..3 {
                assert!((w.get(r, c) - col[r]).abs() <= 1e3 * f64::EPSILON * inf(&col));
                assert!((w.get(r, c) - w.get(c, r)).abs() <= 1e3 * f64::EPSILON * inf(&col));
            }
        }
    }

    #[test]
    fn spgemm_matches_dense_product() {
        let a = Csr::from_triplets(2, 3, &[(0, 0, 1.0), (0, 2, 2.0), (1, 1, -1.0)]);
        let b = Csr::from_triplets(3, 2, &[(0, 1, 3.0), (1, 0, 4.0), (2, 0, 5.0), (2, 1, 1.0)]);
        let c = spgemm(&a, &b);
        assert_eq!(c.to_dense(), vec![vec![10.0, 5.0], vec![-4.0, 0.0]]);
    }

    /// The memory accounting of Tables 1–2: dense counts follow `n²` and `n(n+1)/2` doubles, and
    /// `S` stays far below the dense inverse for a 3D grid.
    #[test]
    fn memory_accounting() {
        let inv = SparseInverse::new(&grid_matrix(6, 0.5)).unwrap();
        let m = inv.memory();
        assert_eq!(m.dense_bytes, 8 * m.n * m.n);
        assert_eq!(m.dense_sym_bytes, 4 * m.n * (m.n + 1));
        assert_eq!(m.s_value_bytes, 8 * m.nnz_s);
        assert!(m.nnz_s >= m.nnz_l, "S has at least the fill of L (Theorem 1 paths ⊇ L's rows)");
        assert!(m.ratio() < 0.5, "ratio {}", m.ratio());
    }
}
