//! Assembly of sparse symmetric matrices `A = sum_e P_e^T A_e P_e` from small dense element
//! matrices (a body's mass block, a contact's `J_i^T D_i J_i`), into the lower-triangle compressed
//! sparse column layout that [`crate::cholesky::SparseCholesky`] takes. The pattern and every
//! element's scatter positions are computed once ([`SymmetricPattern::new`]); refilling values for
//! new element matrices (every Newton iteration) is then a plain scatter-add with no search.

/// The lower-triangle CSC pattern of a sum of dense symmetric element matrices, with the position
/// of every element entry in the value array.
#[derive(Debug, Clone, Default)]
pub struct SymmetricPattern {
    n: usize,
    /// Column pointers (length `n + 1`).
    pub col_ptr: Vec<usize>,
    /// Row indices, sorted within each column; the diagonal is always present.
    pub row_idx: Vec<usize>,
    /// Per element: its global indices and, for each local pair `(a, b)` (row-major, `m x m`), the
    /// value position of the global entry if it lies in the lower triangle, else `usize::MAX`.
    elements: Vec<(Vec<usize>, Vec<usize>)>,
}

impl SymmetricPattern {
    /// The pattern of an `n x n` matrix with one dense block per element (`elements[e]` lists the
    /// element's global indices, distinct, each `< n`) plus the full diagonal.
    pub fn new(n: usize, elements: &[Vec<usize>]) -> Self {
        Self::with_entries(n, elements, &[])
    }

    /// As [`Self::new`], plus the single entries `entries` (`(row, column)`, either triangle;
    /// e.g. the pattern of a sparse stiffness matrix added by [`Self::position`]).
    pub fn with_entries(n: usize, elements: &[Vec<usize>], entries: &[(usize, usize)]) -> Self {
        let mut cols: Vec<Vec<usize>> = (0..n).map(|c| vec![c]).collect();
        for &(r, c) in entries {
            assert!(r < n && c < n, "entry ({r}, {c}) out of range {n}");
            if r != c {
                cols[r.min(c)].push(r.max(c));
            }
        }
        for dofs in elements {
            for &r in dofs {
                assert!(r < n, "index {r} out of range {n}");
                for &c in dofs {
                    if r > c {
                        cols[c].push(r);
                    }
                }
            }
        }
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut row_idx = Vec::new();
        col_ptr.push(0);
        for col in &mut cols {
            col.sort_unstable();
            col.dedup();
            row_idx.extend_from_slice(col);
            col_ptr.push(row_idx.len());
        }
        let find = |r: usize, c: usize| -> usize {
            let (s, e) = (col_ptr[c], col_ptr[c + 1]);
            s + row_idx[s..e].binary_search(&r).expect("entry in pattern")
        };
        let elements = elements
            .iter()
            .map(|dofs| {
                let mut pos = Vec::with_capacity(dofs.len() * dofs.len());
                for &r in dofs {
                    for &c in dofs {
                        pos.push(if r >= c { find(r, c) } else { usize::MAX });
                    }
                }
                (dofs.clone(), pos)
            })
            .collect();
        Self { n, col_ptr, row_idx, elements }
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Stored entries (lower triangle).
    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Number of elements.
    pub fn num_elements(&self) -> usize {
        self.elements.len()
    }

    /// The global indices of element `e`.
    pub fn element_dofs(&self, e: usize) -> &[usize] {
        &self.elements[e].0
    }

    /// `values += P_e^T local P_e` (lower part), `local` the element's `m x m` matrix, row-major.
    pub fn add_element(&self, e: usize, local: &[f64], values: &mut [f64]) {
        let pos = &self.elements[e].1;
        assert_eq!(local.len(), pos.len());
        for (p, v) in pos.iter().zip(local) {
            if *p != usize::MAX {
                values[*p] += v;
            }
        }
    }

    /// Index in the value array of entry `(r, c)` or `(c, r)` (the lower one), if in the pattern.
    pub fn position(&self, r: usize, c: usize) -> Option<usize> {
        let (r, c) = (r.max(c), r.min(c));
        let (s, e) = (self.col_ptr[c], self.col_ptr[c + 1]);
        self.row_idx[s..e].binary_search(&r).ok().map(|k| s + k)
    }

    /// `values[diag(i)] += d` for the diagonal entry of row `i`.
    pub fn add_diagonal(&self, i: usize, d: f64, values: &mut [f64]) {
        values[self.col_ptr[i]] += d; // the diagonal is the first (smallest) row of column i
    }

    /// `y = A x` from lower-triangle values in this pattern.
    pub fn mul(&self, values: &[f64], x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for c in 0..self.n {
            let range = self.col_ptr[c]..self.col_ptr[c + 1];
            for (&r, &a) in self.row_idx[range.clone()].iter().zip(&values[range]) {
                y[r] += a * x[c];
                if r != c {
                    y[c] += a * x[r];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cholesky::{CholeskyParams, SparseCholesky};

    #[test]
    fn assembles_overlapping_elements_and_solves() {
        // two 2x2 elements sharing index 1, plus the identity on 0..4
        let p = SymmetricPattern::new(4, &[vec![0, 1], vec![3, 1]]);
        let mut values = vec![0.0; p.nnz()];
        for i in 0..4 {
            p.add_diagonal(i, 1.0, &mut values);
        }
        p.add_element(0, &[2.0, 1.0, 1.0, 3.0], &mut values);
        p.add_element(1, &[4.0, -1.0, -1.0, 5.0], &mut values);
        // dense: [[3,1,0,0],[1,9,0,-1],[0,0,1,0],[0,-1,0,5]]
        let q = SymmetricPattern::with_entries(4, &[vec![0, 1]], &[(1, 3)]);
        let mut qv = vec![0.0; q.nnz()];
        for i in 0..4 {
            q.add_diagonal(i, 1.0, &mut qv);
        }
        q.add_element(0, &[2.0, 1.0, 1.0, 3.0], &mut qv);
        q.add_diagonal(1, 5.0, &mut qv);
        q.add_diagonal(3, 4.0, &mut qv);
        qv[q.position(1, 3).unwrap()] -= 1.0;
        assert_eq!((q.position(3, 1), q.position(2, 0)), (p.position(3, 1), None));
        assert_eq!((q.col_ptr.clone(), q.row_idx.clone(), &qv), (p.col_ptr.clone(), p.row_idx.clone(), &values));
        let x = [1.0, 2.0, 3.0, 4.0];
        let mut y = [0.0; 4];
        p.mul(&values, &x, &mut y);
        assert_eq!(y, [5.0, 15.0, 3.0, 18.0]);
        let mut ch =
            SparseCholesky::analyze(4, p.col_ptr.clone(), p.row_idx.clone(), CholeskyParams::default()).unwrap();
        ch.factorize(&values).unwrap();
        ch.solve_in_place(&mut y);
        for (a, b) in y.iter().zip(&x) {
            assert!((a - b).abs() < 1e-13);
        }
    }
}
