//! A contact problem in Delassus (local) form, `u = W r + q`, `K_mu ∋ r ⊥ u + mu ||u_T|| e_n ∈
//! K_mu*`, as FCLIB's local problems and Siconos's `FrictionContactProblem` state it: the
//! Delassus matrix `W` is given, not built from masses and Jacobians, and it need not be
//! symmetric (files written from a non-symmetric assembly, or by a code that condensed a
//! non-symmetric `M`).
//!
//! A solver that works on `W` directly (Gauss–Seidel sweeps, Newton methods on `W`) declares
//! [`crate::Capabilities::delassus_form`] and implements [`crate::Solver::solve_delassus`]; it must
//! take `W` as it is. The harness gives every other solver a problem in Delassus form only
//! through a global view of a symmetric `W`, and refuses a non-symmetric one for it.
//!
//! `W` is stored by 3×3 blocks in block-compressed rows (the layout of Siconos's
//! `SparseBlockStructuredMatrix` with 3×3 blocks): block row `i` holds the blocks `W_ij` of
//! contact `i`, columns sorted, the diagonal block always present (zero when absent from the
//! input).

use crate::params::FieldError;

/// A 3×3 block, row-major, rows and columns `(n, t1, t2)`.
pub type Block3 = [[f64; 3]; 3];

/// `u = W r + q` with friction coefficients `mu`; `nc` contacts, per-contact triples normal first.
#[derive(Debug, Clone, PartialEq)]
pub struct DelassusProblem {
    row_start: Vec<usize>,
    cols: Vec<usize>,
    blocks: Vec<Block3>,
    diag: Vec<usize>,
    q: Vec<f64>,
    mu: Vec<f64>,
}

impl DelassusProblem {
    /// The problem with `W` given by `(row, col, value)` triplets of a `3 nc × 3 nc` matrix
    /// (duplicates summed), `q` (`3 nc`) and `mu` (`nc`). Errors name the field: a size that does
    /// not match `mu`, an entry out of range, a non-finite value or a negative or non-finite
    /// friction coefficient.
    pub fn from_triplets(triplets: &[(usize, usize, f64)], q: Vec<f64>, mu: Vec<f64>) -> Result<Self, FieldError> {
        let nc = mu.len();
        let n = 3 * nc;
        if q.len() != n {
            return Err(FieldError::new("q", format!("has {} entries; {nc} contacts need {n}", q.len())));
        }
        if let Some(i) = q.iter().position(|x| !x.is_finite()) {
            return Err(FieldError::new("q", format!("entry {i} is {}", q[i])));
        }
        if let Some(i) = mu.iter().position(|m| !(m.is_finite() && *m >= 0.0)) {
            return Err(FieldError::new("mu", format!("contact {i} has friction coefficient {}", mu[i])));
        }
        let mut rows: Vec<std::collections::BTreeMap<usize, Block3>> = vec![Default::default(); nc];
        for (i, row) in rows.iter_mut().enumerate() {
            row.insert(i, [[0.0; 3]; 3]);
        }
        for &(r, c, x) in triplets {
            if r >= n || c >= n {
                return Err(FieldError::new("W", format!("entry ({r}, {c}) is outside {n} x {n}")));
            }
            if !x.is_finite() {
                return Err(FieldError::new("W", format!("entry ({r}, {c}) is {x}")));
            }
            rows[r / 3].entry(c / 3).or_insert([[0.0; 3]; 3])[r % 3][c % 3] += x;
        }
        let (mut row_start, mut cols, mut blocks, mut diag) = (vec![0], vec![], vec![], vec![]);
        for (i, row) in rows.into_iter().enumerate() {
            for (j, b) in row {
                if j == i {
                    diag.push(cols.len());
                }
                cols.push(j);
                blocks.push(b);
            }
            row_start.push(cols.len());
        }
        Ok(Self { row_start, cols, blocks, diag, q, mu })
    }

    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.mu.len()
    }

    /// `q` (`3 nc`).
    pub fn q(&self) -> &[f64] {
        &self.q
    }

    /// Contact `i`'s part of `q`.
    pub fn q_of(&self, i: usize) -> [f64; 3] {
        [self.q[3 * i], self.q[3 * i + 1], self.q[3 * i + 2]]
    }

    /// Friction coefficients (`nc`).
    pub fn mu(&self) -> &[f64] {
        &self.mu
    }

    /// The diagonal block `W_ii`.
    pub fn diagonal(&self, i: usize) -> &Block3 {
        &self.blocks[self.diag[i]]
    }

    /// The stored blocks `(j, W_ij)` of block row `i`, columns increasing.
    pub fn row(&self, i: usize) -> impl Iterator<Item = (usize, &Block3)> {
        let range = self.row_start[i]..self.row_start[i + 1];
        self.cols[range.clone()].iter().copied().zip(&self.blocks[range])
    }

    /// Number of stored 3×3 blocks.
    pub fn stored_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// `u_i = (W r + q)_i`, contact `i`'s velocity at impulses `r` (one triple per contact).
    pub fn velocity_of(&self, i: usize, r: &[[f64; 3]]) -> [f64; 3] {
        let mut u = self.q_of(i);
        for (j, b) in self.row(i) {
            for (a, row) in u.iter_mut().zip(b) {
                *a += row[0] * r[j][0] + row[1] * r[j][1] + row[2] * r[j][2];
            }
        }
        u
    }

    /// `u = W r + q` for every contact, into `u` (resized).
    pub fn velocities(&self, r: &[[f64; 3]], u: &mut Vec<[f64; 3]>) {
        u.clear();
        u.extend((0..self.nc()).map(|i| self.velocity_of(i, r)));
    }

    /// `y = W x` (`3 nc` each), into `y` (resized).
    pub fn mul(&self, x: &[f64], y: &mut Vec<f64>) {
        y.clear();
        y.resize(x.len(), 0.0);
        for i in 0..self.nc() {
            for (j, b) in self.row(i) {
                for (a, row) in b.iter().enumerate() {
                    y[3 * i + a] += row[0] * x[3 * j] + row[1] * x[3 * j + 1] + row[2] * x[3 * j + 2];
                }
            }
        }
    }

    /// The relative asymmetry `max |W − Wᵀ| / max |W|` (0 for a symmetric or zero `W`).
    pub fn asymmetry(&self) -> f64 {
        let mut scale = 0.0f64;
        let mut diff = 0.0f64;
        for i in 0..self.nc() {
            for (j, b) in self.row(i) {
                let t = self.block(j, i);
                for a in 0..3 {
                    for c in 0..3 {
                        scale = scale.max(b[a][c].abs());
                        let other = t.map_or(0.0, |t| t[c][a]);
                        diff = diff.max((b[a][c] - other).abs());
                    }
                }
            }
        }
        if scale > 0.0 {
            diff / scale
        } else {
            0.0
        }
    }

    /// The stored block `W_ij`, if any.
    pub fn block(&self, i: usize, j: usize) -> Option<&Block3> {
        let range = self.row_start[i]..self.row_start[i + 1];
        self.cols[range.clone()].binary_search(&j).ok().map(|k| &self.blocks[range.start + k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_contacts(skew: f64) -> DelassusProblem {
        let mut t = vec![];
        for k in 0..6 {
            t.push((k, k, 2.0));
        }
        t.push((0, 3, 0.5));
        t.push((3, 0, 0.5 + skew));
        DelassusProblem::from_triplets(&t, vec![-1.0, 0.0, 0.0, -2.0, 0.1, 0.0], vec![0.5, 0.3]).unwrap()
    }

    #[test]
    fn blocks_products_and_asymmetry() {
        let p = two_contacts(0.25);
        assert_eq!(p.nc(), 2);
        assert_eq!(p.stored_blocks(), 4);
        assert_eq!(p.diagonal(1)[0][0], 2.0);
        assert_eq!(p.block(1, 0).unwrap()[0][0], 0.75);
        let r = [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
        // u_0 = q_0 + 2 r_0 + 0.5 r_1, u_1 = q_1 + 0.75 r_0 + 2 r_1
        assert_eq!(p.velocity_of(0, &r), [-1.0 + 2.0 + 1.0, 0.0, 0.0]);
        assert_eq!(p.velocity_of(1, &r), [-2.0 + 0.75 + 4.0, 0.1, 0.0]);
        let mut y = vec![];
        p.mul(&[1.0, 0.0, 0.0, 2.0, 0.0, 0.0], &mut y);
        assert_eq!(y, vec![3.0, 0.0, 0.0, 4.75, 0.0, 0.0]);
        // |0.75 - 0.5| / 2
        assert_eq!(p.asymmetry(), 0.125);
        assert_eq!(two_contacts(0.0).asymmetry(), 0.0);
    }

    #[test]
    fn bad_input_names_the_field() {
        let e = DelassusProblem::from_triplets(&[(6, 0, 1.0)], vec![0.0; 6], vec![0.1, 0.1]).unwrap_err();
        assert_eq!(e.field, "W");
        let e = DelassusProblem::from_triplets(&[], vec![0.0; 5], vec![0.1, 0.1]).unwrap_err();
        assert_eq!(e.field, "q");
        let e = DelassusProblem::from_triplets(&[], vec![0.0; 6], vec![0.1, -1.0]).unwrap_err();
        assert_eq!(e.field, "mu");
        let e = DelassusProblem::from_triplets(&[(0, 0, f64::NAN)], vec![0.0; 6], vec![0.1, 0.1]).unwrap_err();
        assert_eq!(e.field, "W");
    }
}
