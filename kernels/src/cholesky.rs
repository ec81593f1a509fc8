//! Sparse Cholesky `A = L Lᵀ` of a symmetric positive definite matrix with the symbolic analysis
//! (AMD fill-reducing ordering, elimination tree, supernodes) computed once per sparsity pattern
//! and the numeric factorization repeated for new values — the linear algebra of Newton methods
//! whose Hessian keeps its pattern across iterations (SAP: `H = A + Jᵀ G J`, Castro et al. §IV-D).
//!
//! The entry point is [`SparseCholesky`]: [`SparseCholesky::analyze`] takes the pattern of the
//! **lower triangle** in compressed sparse column form (rows sorted within each column, diagonal
//! present), [`SparseCholesky::factorize`] takes values in that pattern's order and
//! [`SparseCholesky::solve_in_place`] solves `A x = b`. Workspace is allocated at analysis and
//! reused, so refactorizations and solves allocate nothing.
//!
//! Built on faer's low-level API (`factorize_symbolic_cholesky` + `factorize_numeric_llt`), which
//! picks a simplicial or supernodal factorization by flop ratio. Shapes are programmer errors
//! (`assert!`); a matrix that is not numerically positive definite comes back as
//! [`CholeskyError::NotPositiveDefinite`].

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor::LltRegularization;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

/// Options of [`SparseCholesky::analyze`]. The fill-reducing ordering is always AMD (faer 0.24.4's
/// simplicial path panics with `SymmetricOrdering::Identity` on a lower-triangle input, so no
/// other ordering is offered).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CholeskyParams {
    /// Run the numeric factorization and the solves with faer's rayon parallelism instead of
    /// sequentially (default false: sequential is faster below about 10⁴ unknowns on two cores,
    /// measured with faer 0.24).
    pub parallel: bool,
    /// Always use the supernodal factorization (default false: faer chooses by its flop-ratio
    /// heuristic). Large matrices made of dense blocks (SAP's Hessian: 6 × 6 per body, coupled by
    /// contacts) factor faster supernodally well below faer's threshold (measured on SAP's
    /// clutter Hessian by `cargo bench --bench sap -- hessian_factor`, where the block-sparse
    /// [`crate::block_cholesky`] beats both).
    pub supernodal: bool,
}

/// faer's symbolic options for `params`.
fn symbolic_params(params: CholeskyParams) -> CholeskySymbolicParams<'static> {
    let mut p = CholeskySymbolicParams::default();
    if params.supernodal {
        p.supernodal_flop_ratio_threshold = faer::sparse::linalg::SupernodalThreshold::FORCE_SUPERNODAL;
    }
    p
}

/// What a factorization reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CholeskyInfo {
    /// Dimension `n`.
    pub n: usize,
    /// Stored entries of the lower triangle of `A`.
    pub nnz_a: usize,
    /// Stored entries of the factor `L`.
    pub nnz_l: usize,
    /// Whether faer chose the supernodal (true) or simplicial (false) factorization.
    pub supernodal: bool,
    /// Floating-point operations of one numeric factorization, `Σ_j c_j²` with `c_j` the entries
    /// of column `j` of `L` (diagonal included): eliminating column `j` scales its `c_j − 1`
    /// off-diagonal entries and updates the `(c_j − 1) c_j / 2` entries of the trailing lower
    /// triangle they touch with one multiply and one add each, `c_j² − 1` operations plus the
    /// square root (the usual count, e.g. CHOLMOD's `fl`). A supernodal factor counts its
    /// supernodes' structure, which may hold explicit zeros where faer merged supernodes (relaxed
    /// amalgamation): the work it does, at least the count of the exact pattern.
    pub flops: u64,
}

/// `Σ_j c_j²` over the column counts of the factor `symbolic` describes ([`CholeskyInfo::flops`]).
fn factor_flops(symbolic: &SymbolicCholesky<usize>) -> u64 {
    use faer::sparse::linalg::cholesky::SymbolicCholeskyRaw;
    let sq = |c: usize| (c * c) as u64;
    match symbolic.raw() {
        SymbolicCholeskyRaw::Simplicial(l) => l.col_ptr().windows(2).map(|w| sq(w[1] - w[0])).sum(),
        SymbolicCholeskyRaw::Supernodal(l) => {
            // supernode s: columns begin..end share the rows below the diagonal block, so column
            // k of s has (end - begin - k) entries in the block plus those rows
            let rows = l.col_ptr_for_row_idx();
            (0..l.n_supernodes())
                .map(|s| {
                    let width = l.supernode_end()[s] - l.supernode_begin()[s];
                    let below = rows[s + 1] - rows[s];
                    (1..=width).map(|k| sq(k + below)).sum::<u64>()
                })
                .sum()
        }
    }
}

/// A failed analysis or factorization.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CholeskyError {
    /// A pivot was not positive: the matrix is not (numerically) positive definite.
    #[error("matrix not positive definite (pivot {index})")]
    NotPositiveDefinite {
        /// Index of the pivot in the permuted order.
        index: usize,
    },
    /// The symbolic analysis failed (index overflow or out of memory).
    #[error("symbolic analysis failed: {what}")]
    Symbolic {
        /// faer's message.
        what: String,
    },
}

/// A sparse Cholesky factorization whose symbolic part is reused across numeric
/// refactorizations with the same pattern (see the module doc).
pub struct SparseCholesky {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    symbolic: SymbolicCholesky<usize>,
    l_values: Vec<f64>,
    factor_buf: MemBuffer,
    solve_buf: MemBuffer,
    par: Par,
    factored: bool,
}

impl std::fmt::Debug for SparseCholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseCholesky").field("info", &self.info()).field("factored", &self.factored).finish()
    }
}

impl SparseCholesky {
    /// Symbolic analysis of the lower-triangle pattern `(col_ptr, row_idx)` of an `n × n`
    /// symmetric matrix: `col_ptr` has `n + 1` entries, rows are sorted and `>= col` in each
    /// column. Allocates the factor and all workspace.
    #[track_caller]
    pub fn analyze(
        n: usize,
        col_ptr: Vec<usize>,
        row_idx: Vec<usize>,
        params: CholeskyParams,
    ) -> Result<Self, CholeskyError> {
        assert_eq!(col_ptr.len(), n + 1, "col_ptr must have n + 1 entries");
        assert_eq!(*col_ptr.last().unwrap_or(&0), row_idx.len(), "col_ptr[n] must equal row_idx.len()");
        for j in 0..n {
            let rows = &row_idx[col_ptr[j]..col_ptr[j + 1]];
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "rows of column {j} must be sorted and unique");
            assert!(rows.first().is_none_or(|&r| r >= j), "column {j} has an entry above the diagonal");
            assert!(rows.iter().all(|&r| r < n), "row index out of range in column {j}");
        }
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(sym, Side::Lower, SymmetricOrdering::Amd, symbolic_params(params))
            .map_err(|e| CholeskyError::Symbolic { what: format!("{e:?}") })?;
        let par = if params.parallel { faer::get_global_parallelism() } else { Par::Seq };
        let factor_buf = MemBuffer::new(symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()));
        let solve_buf = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(1, par));
        let l_values = vec![0.0; symbolic.len_val()];
        Ok(Self { col_ptr, row_idx, symbolic, l_values, factor_buf, solve_buf, par, factored: false })
    }

    /// Dimension `n`.
    pub fn dim(&self) -> usize {
        self.col_ptr.len() - 1
    }

    /// Number of stored entries of the lower triangle (the length `values` must have).
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Whether the analysed pattern is exactly `(col_ptr, row_idx)` (then the symbolic part can
    /// be reused for it).
    pub fn has_pattern(&self, col_ptr: &[usize], row_idx: &[usize]) -> bool {
        self.col_ptr == col_ptr && self.row_idx == row_idx
    }

    /// Sizes and the kind of factorization chosen.
    pub fn info(&self) -> CholeskyInfo {
        CholeskyInfo {
            n: self.dim(),
            nnz_a: self.nnz(),
            nnz_l: self.symbolic.len_val(),
            supernodal: matches!(
                self.symbolic.raw(),
                faer::sparse::linalg::cholesky::SymbolicCholeskyRaw::Supernodal(_)
            ),
            flops: factor_flops(&self.symbolic),
        }
    }

    /// Numeric factorization of the matrix with the analysed pattern and these lower-triangle
    /// `values` (same order as `row_idx`). Allocates nothing.
    #[track_caller]
    pub fn factorize(&mut self, values: &[f64]) -> Result<(), CholeskyError> {
        assert_eq!(values.len(), self.nnz(), "values must match the analysed pattern");
        self.factored = false;
        let n = self.dim();
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let a = SparseColMatRef::new(sym, values);
        self.symbolic
            .factorize_numeric_llt::<f64>(
                &mut self.l_values,
                a,
                Side::Lower,
                LltRegularization::default(),
                self.par,
                MemStack::new(&mut self.factor_buf),
                Default::default(),
            )
            .map_err(|e| match e {
                faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } => {
                    CholeskyError::NotPositiveDefinite { index }
                }
            })?;
        self.factored = true;
        Ok(())
    }

    /// Solves `A x = b` in place (`rhs` holds `b` on entry, `x` on return) with the last
    /// successful factorization. Allocates nothing. Panics if there is none.
    #[track_caller]
    pub fn solve_in_place(&mut self, rhs: &mut [f64]) {
        assert!(self.factored, "SparseCholesky::factorize must succeed before solve_in_place");
        let n = self.dim();
        assert_eq!(rhs.len(), n, "rhs length must equal the dimension");
        let llt = faer::sparse::linalg::cholesky::LltRef::new(&self.symbolic, &self.l_values);
        let x = MatMut::from_column_major_slice_mut(rhs, n, 1);
        llt.solve_in_place_with_conj(Conj::No, x, self.par, MemStack::new(&mut self.solve_buf));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A random sparse SPD matrix (dense storage) with a fixed seed: `B Bᵀ + n I` restricted to a
    /// banded-plus-random pattern. Linear congruential generator, so no dependency is needed.
    #[allow(clippy::needless_range_loop)] // symmetric fill: a[i][j] and a[j][i] together
    fn random_spd(n: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut s = seed;
        let mut rnd = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
        };
        let mut a = vec![vec![0.0; n]; n];
        for i in 0..n {
            a[i][i] = n as f64;
            for j in 0..i {
                if (i - j) <= 2 || rnd() > 0.4 {
                    let v = rnd();
                    a[i][j] = v;
                    a[j][i] = v;
                }
            }
        }
        a
    }

    /// The lower triangle of the dense symmetric `a` in CSC form `(col_ptr, row_idx, values)`,
    /// diagonal always present.
    pub(crate) fn lower_csc(a: &[Vec<f64>]) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let n = a.len();
        let (mut cp, mut ri, mut val) = (vec![0], vec![], vec![]);
        for j in 0..n {
            for (i, row) in a.iter().enumerate().skip(j) {
                if row[j] != 0.0 || i == j {
                    ri.push(i);
                    val.push(row[j]);
                }
            }
            cp.push(ri.len());
        }
        (cp, ri, val)
    }

    /// `||A x - b||_inf` of a dense `A`.
    pub(crate) fn residual_inf(a: &[Vec<f64>], x: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(row, bi)| (row.iter().zip(x).map(|(p, q)| p * q).sum::<f64>() - bi).abs())
            .fold(0.0, f64::max)
    }

    #[test]
    fn solves_to_a_multiple_of_epsilon() {
        for (parallel, supernodal) in [(false, false), (true, false), (false, true)] {
            let n = 40;
            let a = random_spd(n, 7);
            let (cp, ri, val) = lower_csc(&a);
            let mut llt = SparseCholesky::analyze(n, cp, ri, CholeskyParams { parallel, supernodal }).unwrap();
            llt.factorize(&val).unwrap();
            if supernodal {
                assert!(llt.info().supernodal, "forced supernodal");
            }
            let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
            let mut x = b.clone();
            llt.solve_in_place(&mut x);
            // ||A x - b||_inf <= 1e2 eps ||A||_inf ||x||_inf (backward stable Cholesky)
            let norm_a = a.iter().map(|r| r.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
            let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(residual_inf(&a, &x, &b) <= 1e2 * f64::EPSILON * norm_a * norm_x);
        }
    }

    /// A dense `n × n` matrix has column counts `n, n − 1, …, 1`, so one factorization costs
    /// `Σ_{c=1..n} c² = n (n + 1) (2 n + 1) / 6` operations whatever faer's choice; a tridiagonal
    /// one (no fill: counts 2, …, 2, 1) costs `4 (n − 1) + 1` simplicially, and at least that
    /// supernodally (merged supernodes carry explicit zeros).
    #[test]
    fn flops_are_the_sum_of_squared_column_counts() {
        let n: usize = 24;
        let dense: Vec<Vec<f64>> =
            (0..n).map(|i| (0..n).map(|j| if i == j { 2.0 * n as f64 } else { 1.0 }).collect()).collect();
        let tri: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            4.0
                        } else if i.abs_diff(j) == 1 {
                            -1.0
                        } else {
                            0.0
                        }
                    })
                    .collect()
            })
            .collect();
        for supernodal in [false, true] {
            let (cp, ri, _) = lower_csc(&dense);
            let llt = SparseCholesky::analyze(n, cp, ri, CholeskyParams { supernodal, ..Default::default() }).unwrap();
            assert_eq!(llt.info().flops, (n * (n + 1) * (2 * n + 1) / 6) as u64, "dense, supernodal {supernodal}");
            let (cp, ri, _) = lower_csc(&tri);
            let llt = SparseCholesky::analyze(n, cp, ri, CholeskyParams { supernodal, ..Default::default() }).unwrap();
            let exact = (4 * (n - 1) + 1) as u64;
            if supernodal {
                assert!(llt.info().flops >= exact, "tridiagonal, supernodal: {}", llt.info().flops);
            } else {
                assert_eq!(llt.info().nnz_l, 2 * n - 1, "AMD keeps a tridiagonal matrix fill-free");
                assert_eq!(llt.info().flops, exact, "tridiagonal, simplicial");
            }
        }
    }

    #[test]
    fn refactorization_with_reused_symbolic_equals_fresh() {
        let n = 30;
        let a = random_spd(n, 3);
        let (cp, ri, val) = lower_csc(&a);
        let mut reused = SparseCholesky::analyze(n, cp.clone(), ri.clone(), CholeskyParams::default()).unwrap();
        reused.factorize(&val).unwrap();
        // new values on the same pattern: scale off-diagonals and shift the diagonal
        let val2: Vec<f64> = val
            .iter()
            .zip(&ri)
            .enumerate()
            .map(|(k, (v, &r))| {
                let col = cp.partition_point(|&p| p <= k) - 1;
                if r == col {
                    v + 3.0
                } else {
                    -0.7 * v
                }
            })
            .collect();
        reused.factorize(&val2).unwrap();
        assert!(reused.has_pattern(&cp, &ri));
        let mut fresh = SparseCholesky::analyze(n, cp, ri, CholeskyParams::default()).unwrap();
        fresh.factorize(&val2).unwrap();
        assert_eq!(reused.l_values, fresh.l_values, "same symbolic + same values = same factor, bit for bit");
        let b: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let (mut x1, mut x2) = (b.clone(), b.clone());
        reused.solve_in_place(&mut x1);
        fresh.solve_in_place(&mut x2);
        assert_eq!(x1, x2);
    }

    #[test]
    fn indefinite_matrix_is_an_error() {
        // [[1, 2], [2, 1]] has eigenvalues 3 and -1
        let mut llt = SparseCholesky::analyze(2, vec![0, 2, 3], vec![0, 1, 1], CholeskyParams::default()).unwrap();
        assert!(matches!(llt.factorize(&[1.0, 2.0, 1.0]), Err(CholeskyError::NotPositiveDefinite { .. })));
    }
}
