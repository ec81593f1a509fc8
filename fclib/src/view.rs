//! A global FCLIB problem as the solvers are given it: a [`LinearProblem`] (a step problem
//! without a world), with `M` of any block size.
//!
//! A step problem's contact Jacobian blocks hold at most 6 columns (a rigid body), while finite
//! element files have mass blocks of 24 or 81 DOFs. Such a block `M_b = L L^T` (Cholesky of its
//! symmetric part, [`GlobalProblem::mass`]) is given to the solvers in the variables `v'_b = L^T
//! v_b`: `M'_b = I` (split into blocks of at most 6 DOFs), `H'_b = L^-1 H_b`, `f'_b = L^-1 f_b`.
//! Then `H'^T M'^-1 H' = H^T M^-1 H` and `H'^T M'^-1 f' = H^T M^-1 f`: the same local problem,
//! the same impulses; the velocity of the file is `v_b = L^-T v'_b` ([`GlobalView::velocity`]).
//! Blocks of at most 6 DOFs are given as they are.

use crate::matrix::CscOps;
use crate::problem::{GlobalProblem, ProblemError};
use api::FieldError;
use harness::linear::LinearProblem;
use kernels::BlockDiagonal;
use nalgebra::{DMatrix, DVector};

/// Largest diagonal block of `M` a step problem takes as it is (the width of a Jacobian block).
pub const MAX_BLOCK: usize = 6;

/// A block given in whitened variables: DOFs `offset..offset + l.nrows()`, `v = L^-T v'`.
#[derive(Debug, Clone)]
struct Whitened {
    offset: usize,
    l: DMatrix<f64>,
}

/// The global problem as given to the solvers, and the map back to the file's velocities.
#[derive(Debug, Clone)]
pub struct GlobalView {
    /// What the solvers read.
    pub linear: LinearProblem,
    whitened: Vec<Whitened>,
}

impl GlobalView {
    /// The file's velocity `v` of the solvers' velocity (module doc).
    pub fn velocity(&self, v_view: &[f64]) -> Vec<f64> {
        let mut v = v_view.to_vec();
        for w in &self.whitened {
            let n = w.l.nrows();
            let mut x = DVector::from_column_slice(&v[w.offset..w.offset + n]);
            // v_b = L^-T v'_b
            w.l.transpose().solve_upper_triangular_mut(&mut x);
            v[w.offset..w.offset + n].copy_from_slice(x.as_slice());
        }
        v
    }

    /// How many blocks of `M` are given in whitened variables.
    pub fn whitened_blocks(&self) -> usize {
        self.whitened.len()
    }
}

impl GlobalProblem {
    /// The problem as the solvers are given it (module doc; `harness::linear` for the mapping and
    /// limits). Errors name the field.
    pub fn to_linear(&self) -> Result<GlobalView, ProblemError> {
        let nc = self.nc();
        let mut w_n = Vec::with_capacity(nc);
        for i in 0..nc {
            let wi = &self.w[3 * i..3 * i + 3];
            if wi[1] != 0.0 || wi[2] != 0.0 {
                return Err(FieldError::new(
                    "w",
                    format!(
                        "contact {i} has a tangential bias ({}, {}); signorini's step problem has a normal bias only",
                        wi[1], wi[2]
                    ),
                )
                .into());
            }
            w_n.push(wi[0]);
        }
        let mass = self.mass()?;
        // J = H^T as (contact row, DOF, value)
        let mut j: Vec<(usize, usize, f64)> = self.h.triplets().into_iter().map(|(r, c, x)| (c, r, x)).collect();
        let mut f = self.f.clone();
        let (mut blocks, mut whitened) = (vec![], vec![]);
        let mut offset = 0;
        for (k, b) in mass.blocks().iter().enumerate() {
            let n = b.nrows();
            if n <= MAX_BLOCK {
                blocks.push(b.clone());
                offset += n;
                continue;
            }
            let l = b
                .clone()
                .cholesky()
                .ok_or_else(|| FieldError::new("M", format!("diagonal block {k} ({n} DOFs) is not positive definite")))?
                .l();
            // f'_b = L^-1 f_b
            let mut fb = DVector::from_column_slice(&f[offset..offset + n]);
            l.solve_lower_triangular_mut(&mut fb);
            f[offset..offset + n].copy_from_slice(fb.as_slice());
            // H'_b = L^-1 H_b, one contact row of J at a time
            let range = offset..offset + n;
            let (inside, outside): (Vec<_>, Vec<_>) = j.into_iter().partition(|t| range.contains(&t.1));
            j = outside;
            let mut rows: std::collections::BTreeMap<usize, DVector<f64>> = Default::default();
            for (r, c, x) in inside {
                rows.entry(r).or_insert_with(|| DVector::zeros(n))[c - offset] += x;
            }
            for (r, mut col) in rows {
                l.solve_lower_triangular_mut(&mut col);
                j.extend(col.iter().enumerate().filter(|(_, x)| **x != 0.0).map(|(c, x)| (r, offset + c, *x)));
            }
            let mut left = n;
            while left > 0 {
                let s = left.min(MAX_BLOCK);
                blocks.push(DMatrix::identity(s, s));
                left -= s;
            }
            whitened.push(Whitened { offset, l });
            offset += n;
        }
        let linear = LinearProblem::new(BlockDiagonal::new(blocks), &j, f, &w_n, &self.mu)?;
        Ok(GlobalView { linear, whitened })
    }
}
