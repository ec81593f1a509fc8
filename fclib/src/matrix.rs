//! FCLIB's compressed-column matrices as `sprs::CsMat<f64>` ([`Csc`]), and the few operations
//! the import, export and error computations need ([`CscOps`]).

use sprs::CsMat;

/// A sparse matrix in compressed-column form (rows sorted within a column, no duplicates): FCLIB's
/// CSparse `(p, i, x)` are `indptr`, `indices` and `data`.
pub type Csc = CsMat<f64>;

/// Construction from triplets and the products used on FCLIB matrices.
pub trait CscOps: Sized {
    /// From `(row, col, value)` triplets of an `m x n` matrix; duplicates are summed (in input
    /// order), explicit zeros kept.
    fn from_triplets(m: usize, n: usize, t: &[(usize, usize, f64)]) -> Self;
    /// `(row, col, value)` triplets in storage order (column order for CSC).
    fn triplets(&self) -> Vec<(usize, usize, f64)>;
    /// `y = A x`.
    fn mul(&self, x: &[f64]) -> Vec<f64>;
    /// `y = A^T x`.
    fn tr_mul(&self, x: &[f64]) -> Vec<f64>;
}

impl CscOps for Csc {
    fn from_triplets(m: usize, n: usize, t: &[(usize, usize, f64)]) -> Csc {
        let mut t = t.to_vec();
        t.sort_by_key(|a| (a.1, a.0));
        let mut p = vec![0usize; n + 1];
        let (mut i, mut x): (Vec<usize>, Vec<f64>) = (vec![], vec![]);
        let mut last: Option<(usize, usize)> = None;
        for (r, c, v) in t {
            if last == Some((r, c)) {
                *x.last_mut().expect("a previous entry") += v;
                continue;
            }
            last = Some((r, c));
            i.push(r);
            x.push(v);
            p[c + 1] += 1;
        }
        for c in 0..n {
            p[c + 1] += p[c];
        }
        CsMat::new_csc((m, n), p, i, x)
    }

    fn triplets(&self) -> Vec<(usize, usize, f64)> {
        self.iter().map(|(&v, (r, c))| (r, c, v)).collect()
    }

    fn mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.rows()];
        for (r, c, v) in self.triplets() {
            y[r] += v * x[c];
        }
        y
    }

    fn tr_mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.cols()];
        for (r, c, v) in self.triplets() {
            y[c] += v * x[r];
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csc_sums_duplicates_and_round_trips() {
        let a = Csc::from_triplets(3, 2, &[(2, 1, 1.0), (0, 0, 2.0), (2, 1, 0.5), (1, 0, -1.0)]);
        assert!(a.is_csc());
        assert_eq!(a.indptr().into_raw_storage(), &[0, 2, 3]);
        assert_eq!(a.triplets(), vec![(0, 0, 2.0), (1, 0, -1.0), (2, 1, 1.5)]);
        assert_eq!(a.mul(&[1.0, 2.0]), vec![2.0, -1.0, 3.0]);
        assert_eq!(a.tr_mul(&[1.0, 1.0, 1.0]), vec![1.0, 1.5]);
        // explicit zeros are kept (FCLIB files may store them)
        assert_eq!(Csc::from_triplets(2, 2, &[(0, 0, 0.0)]).nnz(), 1);
    }
}
