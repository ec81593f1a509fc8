//! Sparse LU `P A Q = L U` of a square, possibly non-symmetric matrix with the symbolic analysis
//! (COLAMD column ordering, column elimination tree, supernodes) computed once per sparsity
//! pattern and the numeric factorization (partial pivoting by rows) repeated for new values — the
//! linear algebra of Newton methods whose Jacobian keeps its pattern but not its symmetry (nsn on
//! a problem in Delassus form with a non-symmetric `W`).
//!
//! The entry point is [`SparseLu`]: [`SparseLu::analyze`] takes the **full** pattern in
//! compressed sparse column form (rows sorted within each column), [`SparseLu::factorize`] takes
//! values in that pattern's order and [`SparseLu::solve_in_place`] solves `A x = b`. The row
//! pivoting is numeric (chosen anew at every factorization) and stays within the pattern the
//! analysis bounds (that of `AᵀA`'s Cholesky factor), so explicit zeros in the pattern are
//! allowed and a pattern analysed once serves every refactorization. Workspace is allocated at
//! analysis; after the first factorization, refactorizations and solves allocate nothing.
//!
//! Built on faer's low-level API (`factorize_symbolic_lu` + `SymbolicLu::factorize_numeric_lu`),
//! which picks a simplicial (Gilbert–Peierls) or supernodal factorization by flop ratio. Shapes
//! are programmer errors (`assert!`); a matrix with a column that has no possible pivot comes back
//! as [`LuError::Singular`]. A numerically zero pivot is not detected by faer: the solution is
//! then non-finite, which callers check.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, LuSymbolicParams, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

/// Options of [`SparseLu::analyze`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LuParams {
    /// Factor and solve with faer's rayon parallelism instead of sequentially (default false).
    pub parallel: bool,
}

/// A failed analysis or factorization.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LuError {
    /// No pivot could be found for a column: the matrix is structurally (or exactly) singular.
    #[error("matrix singular (no pivot for column {index})")]
    Singular {
        /// Column of the permuted matrix.
        index: usize,
    },
    /// The analysis or factorization failed for a reason other than the values (index overflow,
    /// out of memory).
    #[error("sparse LU failed: {what}")]
    Failed {
        /// faer's message.
        what: String,
    },
}

impl From<faer::sparse::linalg::LuError> for LuError {
    fn from(e: faer::sparse::linalg::LuError) -> Self {
        match e {
            faer::sparse::linalg::LuError::SymbolicSingular { index } => LuError::Singular { index },
            faer::sparse::linalg::LuError::Generic(e) => LuError::Failed { what: format!("{e:?}") },
        }
    }
}

/// A sparse LU factorization whose symbolic part is reused across numeric refactorizations with
/// the same pattern (see the module doc).
pub struct SparseLu {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    symbolic: SymbolicLu<usize>,
    numeric: NumericLu<usize, f64>,
    factor_buf: MemBuffer,
    solve_buf: MemBuffer,
    par: Par,
    factored: bool,
}

impl std::fmt::Debug for SparseLu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseLu")
            .field("n", &self.dim())
            .field("nnz", &self.nnz())
            .field("factored", &self.factored)
            .finish()
    }
}

impl SparseLu {
    /// Symbolic analysis of the pattern `(col_ptr, row_idx)` of an `n × n` matrix: `col_ptr` has
    /// `n + 1` entries, rows are sorted and unique in each column. Allocates the workspace.
    #[track_caller]
    pub fn analyze(n: usize, col_ptr: Vec<usize>, row_idx: Vec<usize>, params: LuParams) -> Result<Self, LuError> {
        assert_eq!(col_ptr.len(), n + 1, "col_ptr must have n + 1 entries");
        assert_eq!(*col_ptr.last().unwrap_or(&0), row_idx.len(), "col_ptr[n] must equal row_idx.len()");
        for j in 0..n {
            let rows = &row_idx[col_ptr[j]..col_ptr[j + 1]];
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "rows of column {j} must be sorted and unique");
            assert!(rows.iter().all(|&r| r < n), "row index out of range in column {j}");
        }
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_lu(sym, LuSymbolicParams::default())
            .map_err(|e| LuError::Failed { what: format!("{e:?}") })?;
        let par = if params.parallel { faer::get_global_parallelism() } else { Par::Seq };
        let factor_buf = MemBuffer::new(symbolic.factorize_numeric_lu_scratch::<f64>(par, Default::default()));
        let solve_buf = MemBuffer::new(symbolic.solve_in_place_scratch::<f64>(1, par));
        Ok(Self { col_ptr, row_idx, symbolic, numeric: NumericLu::new(), factor_buf, solve_buf, par, factored: false })
    }

    /// Dimension `n`.
    pub fn dim(&self) -> usize {
        self.col_ptr.len() - 1
    }

    /// Number of stored entries (the length `values` must have).
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Whether the analysed pattern is exactly `(col_ptr, row_idx)` (then the symbolic part can
    /// be reused for it).
    pub fn has_pattern(&self, col_ptr: &[usize], row_idx: &[usize]) -> bool {
        self.col_ptr == col_ptr && self.row_idx == row_idx
    }

    /// Numeric factorization of the matrix with the analysed pattern and these `values` (same
    /// order as `row_idx`). Allocates nothing once a first factorization has sized the factors
    /// (faer keeps their capacity).
    #[track_caller]
    pub fn factorize(&mut self, values: &[f64]) -> Result<(), LuError> {
        assert_eq!(values.len(), self.nnz(), "values must match the analysed pattern");
        self.factored = false;
        let n = self.dim();
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx);
        let a = SparseColMatRef::new(sym, values);
        self.symbolic.factorize_numeric_lu::<f64>(
            &mut self.numeric,
            a,
            self.par,
            MemStack::new(&mut self.factor_buf),
            Default::default(),
        )?;
        self.factored = true;
        Ok(())
    }

    /// Solves `A x = b` in place (`rhs` holds `b` on entry, `x` on return) with the last
    /// successful factorization. Allocates nothing. Panics if there is none.
    #[track_caller]
    pub fn solve_in_place(&mut self, rhs: &mut [f64]) {
        assert!(self.factored, "SparseLu::factorize must succeed before solve_in_place");
        let n = self.dim();
        assert_eq!(rhs.len(), n, "rhs length must equal the dimension");
        let lu = LuRef::new_unchecked(&self.symbolic, &self.numeric);
        let x = MatMut::from_column_major_slice_mut(rhs, n, 1);
        lu.solve_in_place_with_conj(Conj::No, x, self.par, MemStack::new(&mut self.solve_buf));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random sparse non-symmetric matrix (dense storage), fixed seed, diagonally weighted so
    /// that it is well conditioned, with a banded-plus-random pattern.
    fn random_nonsymmetric(n: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut s = seed;
        let mut rnd = move || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
        };
        let mut a = vec![vec![0.0; n]; n];
        for (i, row) in a.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                if i == j {
                    *x = 0.5 * n as f64 * (1.0 + rnd());
                } else if i.abs_diff(j) <= 1 || rnd() > 0.35 {
                    *x = rnd();
                }
            }
        }
        a
    }

    /// The CSC pattern and values of the dense `a` (entries that are not zero; `keep` adds
    /// explicit zeros at those positions).
    fn csc(a: &[Vec<f64>], keep: &[(usize, usize)]) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        let n = a.len();
        let (mut cp, mut ri, mut val) = (vec![0], vec![], vec![]);
        for j in 0..n {
            for (i, row) in a.iter().enumerate() {
                if row[j] != 0.0 || keep.contains(&(i, j)) {
                    ri.push(i);
                    val.push(row[j]);
                }
            }
            cp.push(ri.len());
        }
        (cp, ri, val)
    }

    use crate::cholesky::tests::residual_inf;

    /// Backward stability: `||A x − b||∞ ≤ 1e2 ε ||A||∞ ||x||∞`.
    fn assert_solves(a: &[Vec<f64>], x: &[f64], b: &[f64]) {
        let norm_a = a.iter().map(|r| r.iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
        let norm_x = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let res = residual_inf(a, x, b);
        assert!(res <= 1e2 * f64::EPSILON * norm_a * norm_x, "residual {res:e}");
    }

    #[test]
    fn solves_a_non_symmetric_system_to_a_multiple_of_epsilon() {
        for (n, parallel) in [(40, false), (40, true), (300, false)] {
            let a = random_nonsymmetric(n, 11);
            assert!((0..n).any(|i| (0..n).any(|j| a[i][j] != a[j][i])));
            let (cp, ri, val) = csc(&a, &[]);
            let mut lu = SparseLu::analyze(n, cp, ri, LuParams { parallel }).unwrap();
            lu.factorize(&val).unwrap();
            let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
            let mut x = b.clone();
            lu.solve_in_place(&mut x);
            assert_solves(&a, &x, &b);
        }
    }

    /// New values on the analysed pattern — including a zero diagonal, so that the row pivoting
    /// must differ from the first factorization's — are solved with the reused symbolic part as
    /// well as by a fresh analysis.
    #[test]
    fn refactorization_with_reused_symbolic_pivots_anew() {
        let n = 30;
        let a = random_nonsymmetric(n, 5);
        let keep: Vec<(usize, usize)> = (0..n).map(|i| (i, i)).collect();
        let (cp, ri, val) = csc(&a, &keep);
        let mut lu = SparseLu::analyze(n, cp.clone(), ri.clone(), LuParams::default()).unwrap();
        lu.factorize(&val).unwrap();
        // same pattern, new values: diagonal of rows 0..5 zeroed, off-diagonals scaled
        let mut a2 = a.clone();
        for (i, row) in a2.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                if i == j && i < 5 {
                    *x = 0.0;
                } else if i != j {
                    *x *= -3.0;
                }
            }
        }
        let (cp2, ri2, val2) = csc(&a2, &keep);
        assert!(lu.has_pattern(&cp2, &ri2), "explicit zeros keep the pattern");
        lu.factorize(&val2).unwrap();
        let b: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let mut x = b.clone();
        lu.solve_in_place(&mut x);
        assert_solves(&a2, &x, &b);
        let mut fresh = SparseLu::analyze(n, cp2, ri2, LuParams::default()).unwrap();
        fresh.factorize(&val2).unwrap();
        let mut y = b.clone();
        fresh.solve_in_place(&mut y);
        assert_eq!(x, y, "same symbolic + same values = same solution, bit for bit");
    }

    #[test]
    fn a_structurally_singular_matrix_is_an_error() {
        // [[1, 2], [0, 0]]: row 1 empty
        let mut lu = SparseLu::analyze(2, vec![0, 1, 2], vec![0, 0], LuParams::default()).unwrap();
        assert!(matches!(lu.factorize(&[1.0, 2.0]), Err(LuError::Singular { .. })));
    }
}
