//! A flat view of one step's constraints for primal–dual solvers that treat contacts and joint
//! rows alike (augmented-Lagrangian and ADMM methods: `canal`, `subadmm`): every constraint is a
//! small dense row block `J_i` (3 rows for a contact, 1 for a bilateral row) on the velocity
//! indices of the bodies it touches, with its law.
//!
//! - Contact `i` (rows `(n, t1, t2)`): `u_i = J_i v + (w_i, 0, 0)` with the normal law
//!   `u_n + r_n lambda_n >= 0 ⊥ lambda_n >= 0` and Coulomb friction with `mu_i`; `(w_i, r_n)` =
//!   `(-v_hat, r_n)` of [`StepProblem::normal_law`]: rigid `w_i = phi0_i / dt`, `r_n = 0`
//!   ([`StepProblem::bias`]); compliant `w_i = phi0_i / (dt + tau_d)`, `r_n = 1/(dt k (dt + tau_d))`.
//! - Bilateral row `k`: `G_k v - v_hat_k + r_k gamma_k = 0` ([`api::BilateralRow::law`]).

use api::StepProblem;

/// The law of one constraint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowLaw {
    /// Frictional contact, rigid or compliant (a solver that supports only rigid contact checks
    /// `r_n == 0`).
    Contact {
        /// Friction coefficient.
        mu: f64,
        /// Normal bias `w = -v_hat` (m/s): `phi0 / dt` rigid, `phi0 / (dt + tau_d)` compliant.
        bias: f64,
        /// Normal compliance `r_n` (s/kg; 0: rigid).
        r_n: f64,
    },
    /// Bilateral row: `G v - v_hat + r gamma = 0`.
    Bilateral {
        /// Target velocity (m/s or rad/s).
        v_hat: f64,
        /// Compliance (0: rigid).
        r: f64,
    },
}

/// One constraint's Jacobian block on the velocity DOFs of the bodies it touches.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintRows {
    /// Global velocity indices of the columns (the DOFs of each touched body, in order).
    pub dofs: Vec<usize>,
    /// Number of rows (3 for a contact, 1 for a bilateral row).
    pub dim: usize,
    /// `dim x dofs.len()` coefficients, row-major.
    pub rows: Vec<f64>,
    /// Per touched body: its [`api::DofLayout`] block index and its first local column.
    pub blocks: Vec<(usize, usize)>,
    /// The law.
    pub law: RowLaw,
}

impl ConstraintRows {
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.dofs.len()
    }

    /// `out = J_i v` (length `dim`).
    pub fn velocity(&self, v: &[f64], out: &mut [f64]) {
        let m = self.dofs.len();
        for (r, o) in out.iter_mut().enumerate().take(self.dim) {
            *o = self.rows[r * m..(r + 1) * m].iter().zip(&self.dofs).map(|(a, &d)| a * v[d]).sum();
        }
    }

    /// `out += J_i^T lambda`.
    pub fn add_transpose(&self, lambda: &[f64], out: &mut [f64]) {
        let m = self.dofs.len();
        for (r, l) in lambda.iter().enumerate().take(self.dim) {
            for (a, &d) in self.rows[r * m..(r + 1) * m].iter().zip(&self.dofs) {
                out[d] += a * l;
            }
        }
    }

    /// The local `m x m` matrix `J_i^T D J_i` (row-major) for a `dim x dim` row-major `D`.
    pub fn weighted_gram(&self, d: &[f64], out: &mut [f64]) {
        let (m, n) = (self.dofs.len(), self.dim);
        out.iter_mut().for_each(|x| *x = 0.0);
        for r in 0..n {
            for s in 0..n {
                let w = d[r * n + s];
                if w == 0.0 {
                    continue;
                }
                for a in 0..m {
                    let ja = self.rows[r * m + a] * w;
                    if ja == 0.0 {
                        continue;
                    }
                    for b in 0..m {
                        out[a * m + b] += ja * self.rows[s * m + b];
                    }
                }
            }
        }
    }
}

/// The index of the layout block that holds velocity index `off`.
fn block_of_offset<'p>(p: &'p StepProblem<'_>) -> impl Fn(usize) -> usize + 'p {
    move |off| p.layout.blocks.binary_search_by_key(&off, |b| b.v_offset).unwrap_or_else(|i| i.saturating_sub(1))
}

/// The contacts of `p`, in problem order.
pub fn contact_rows(p: &StepProblem<'_>) -> Vec<ConstraintRows> {
    let block = block_of_offset(p);
    p.contacts
        .contacts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let m: usize = c.jacobian.iter().map(|b| b.ncols).sum();
            let mut dofs = Vec::with_capacity(m);
            let mut rows = vec![0.0; 3 * m];
            let mut blocks = Vec::with_capacity(c.jacobian.len());
            for blk in &c.jacobian {
                let start = dofs.len();
                blocks.push((block(blk.v_offset), start));
                for k in 0..blk.ncols {
                    dofs.push(blk.v_offset + k);
                    for r in 0..3 {
                        rows[r * m + start + k] = blk.rows[r][k];
                    }
                }
            }
            let (v_hat, r_n) = p.normal_law(i);
            let law = RowLaw::Contact { mu: c.mu, bias: -v_hat, r_n };
            ConstraintRows { dofs, dim: 3, rows, blocks, law }
        })
        .collect()
}

/// The bilateral rows of `p`, in problem order.
pub fn bilateral_rows(p: &StepProblem<'_>) -> Vec<ConstraintRows> {
    let block = block_of_offset(p);
    p.bilateral
        .rows
        .iter()
        .map(|row| {
            let mut dofs = Vec::new();
            let mut rows = Vec::new();
            let mut blocks = Vec::new();
            for g in &row.jacobian {
                blocks.push((block(g.v_offset), dofs.len()));
                for k in 0..g.ncols {
                    dofs.push(g.v_offset + k);
                    rows.push(g.row[k]);
                }
            }
            let (v_hat, r) = row.law(p.dt);
            ConstraintRows { dofs, dim: 1, rows, blocks, law: RowLaw::Bilateral { v_hat, r } }
        })
        .collect()
}
