//! Compressed sparse row matrices ([`Csr`]): assembly from triplets (duplicates summed),
//! transpose, diagonal, and the lower-triangle CSC pattern that [`crate::cholesky`] takes.
//!
//! The three arrays `indptr`, `indices`, `data` are the layout a GPU SpMV reads as is, which is
//! why this type (and not `sprs::CsMat`) is what [`crate::backend::Blas::spmv`] takes.
//! Shapes are programmer errors and are `assert!`ed.

/// An `nrows × ncols` matrix in CSR form; column indices sorted and unique within each row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Csr {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Row pointers (`nrows + 1` entries).
    pub indptr: Vec<usize>,
    /// Column index of each stored entry.
    pub indices: Vec<usize>,
    /// Value of each stored entry.
    pub data: Vec<f64>,
}

impl Csr {
    /// The empty `nrows × ncols` matrix.
    pub fn zeros(nrows: usize, ncols: usize) -> Self {
        Self { nrows, ncols, indptr: vec![0; nrows + 1], indices: vec![], data: vec![] }
    }

    /// Assembles from `(row, col, value)` triplets; duplicates are summed, explicit zeros kept.
    #[track_caller]
    pub fn from_triplets(nrows: usize, ncols: usize, triplets: &[(usize, usize, f64)]) -> Self {
        let mut t: Vec<(usize, usize, f64)> = triplets.to_vec();
        for &(r, c, _) in &t {
            assert!(r < nrows && c < ncols, "triplet ({r}, {c}) outside {nrows} x {ncols}");
        }
        t.sort_unstable_by_key(|a| (a.0, a.1));
        let mut indptr = vec![0usize; nrows + 1];
        let mut indices = Vec::with_capacity(t.len());
        let mut data: Vec<f64> = Vec::with_capacity(t.len());
        let mut last: Option<(usize, usize)> = None;
        for (r, c, v) in t {
            if last == Some((r, c)) {
                *data.last_mut().expect("entry exists") += v;
            } else {
                indices.push(c);
                data.push(v);
                indptr[r + 1] += 1;
                last = Some((r, c));
            }
        }
        for r in 0..nrows {
            indptr[r + 1] += indptr[r];
        }
        Self { nrows, ncols, indptr, indices, data }
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.data.len()
    }

    /// `y = A x` (sequential reference; backends may parallelise).
    #[track_caller]
    pub fn mul_into(&self, x: &[f64], y: &mut [f64]) {
        assert_eq!(x.len(), self.ncols, "x length");
        assert_eq!(y.len(), self.nrows, "y length");
        for (r, yr) in y.iter_mut().enumerate() {
            let (a, b) = (self.indptr[r], self.indptr[r + 1]);
            *yr = self.indices[a..b].iter().zip(&self.data[a..b]).map(|(&c, v)| v * x[c]).sum();
        }
    }

    /// `A x` as a new vector.
    pub fn mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.nrows];
        self.mul_into(x, &mut y);
        y
    }

    /// The transpose, in CSR form.
    pub fn transpose(&self) -> Csr {
        let mut t = Vec::with_capacity(self.nnz());
        for r in 0..self.nrows {
            for k in self.indptr[r]..self.indptr[r + 1] {
                t.push((self.indices[k], r, self.data[k]));
            }
        }
        Csr::from_triplets(self.ncols, self.nrows, &t)
    }

    /// Entry `(r, c)` (0 if not stored).
    pub fn get(&self, r: usize, c: usize) -> f64 {
        let (a, b) = (self.indptr[r], self.indptr[r + 1]);
        self.indices[a..b].binary_search(&c).map_or(0.0, |k| self.data[a + k])
    }

    /// The main diagonal (length `min(nrows, ncols)`).
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.nrows.min(self.ncols)).map(|i| self.get(i, i)).collect()
    }

    /// The dense matrix, row-major `nrows × ncols` (tests and small direct solves).
    pub fn to_dense(&self) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0.0; self.ncols]; self.nrows];
        for (r, row) in d.iter_mut().enumerate() {
            for k in self.indptr[r]..self.indptr[r + 1] {
                row[self.indices[k]] += self.data[k];
            }
        }
        d
    }

    /// For a square symmetric matrix: its lower triangle in CSC form `(col_ptr, row_idx,
    /// values)`, which is the upper triangle of the CSR rows. This is the input of
    /// [`crate::cholesky::SparseCholesky`]. Every diagonal entry is stored (0 if absent).
    #[track_caller]
    pub fn lower_csc(&self) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
        assert_eq!(self.nrows, self.ncols, "lower_csc needs a square matrix");
        let n = self.nrows;
        let mut col_ptr = vec![0usize; n + 1];
        let mut row_idx = Vec::new();
        let mut vals = Vec::new();
        for j in 0..n {
            // column j of the lower triangle = row j of the upper triangle (symmetry)
            let (a, b) = (self.indptr[j], self.indptr[j + 1]);
            if self.indices[a..b].binary_search(&j).is_err() {
                row_idx.push(j);
                vals.push(0.0);
            }
            for k in a..b {
                let c = self.indices[k];
                if c >= j {
                    row_idx.push(c);
                    vals.push(self.data[k]);
                }
            }
            // keep rows sorted: the inserted diagonal goes first, the rest is sorted already
            col_ptr[j + 1] = row_idx.len();
        }
        (col_ptr, row_idx, vals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triplets_sum_duplicates_and_multiply() {
        let a = Csr::from_triplets(2, 3, &[(0, 0, 1.0), (1, 2, 2.0), (0, 0, 3.0), (0, 1, -1.0)]);
        assert_eq!(a.nnz(), 3);
        assert_eq!(a.get(0, 0), 4.0);
        assert_eq!(a.mul(&[1.0, 2.0, 3.0]), vec![2.0, 6.0]);
        let t = a.transpose();
        assert_eq!(t.mul(&[1.0, 1.0]), vec![4.0, -1.0, 2.0]);
        assert_eq!(a.diagonal(), vec![4.0, 0.0]);
    }

    #[test]
    fn lower_csc_has_every_diagonal() {
        let a = Csr::from_triplets(3, 3, &[(0, 1, 2.0), (1, 0, 2.0), (0, 0, 5.0), (2, 2, 1.0)]);
        let (cp, ri, v) = a.lower_csc();
        assert_eq!(cp, vec![0, 2, 3, 4]);
        assert_eq!(ri, vec![0, 1, 1, 2]);
        assert_eq!(v, vec![5.0, 2.0, 0.0, 1.0]);
    }
}
