//! The per-step data CANAL works on and the per-constraint operators of the AL surrogate.
//!
//! Constraints are contacts (3 rows, `(n, t1, t2)`) and bilateral rows (1 row), flattened into
//! one impulse vector (`off[i]..off[i] + dim_i`). For an AL iteration with outer impulses `λ^l`
//! and penalty `β`, constraint `i` at velocity `v` has the trial impulse (README §10)
//! `λ̃*_i = λ^l_i − β (J_i v + ẽ_i)`, with `ẽ_i = (φ_i/dt + p_i, 0, 0)` for a contact (`p_i` the
//! frozen De Saxcé term `μ ||z^l_t||`, Eq. 21) and `ẽ_k = −v̂_k` for a bilateral row, and the
//! impulse `λ_i = op(λ̃*_i)`:
//! - contact, CANAL: `Π^prox_C` (Euclidean cone projection, Jacobian Eq. 23);
//! - contact, strict variants: `Π^strict_C` (Eq. 17);
//! - bilateral row `G v − v̂ + r γ = 0`: `γ = λ̃* / (1 + β r)` (T = identity for a rigid row).
//!
//! A compliant contact (normal law `u_n + r_n λ_n ≥ 0 ⊥ λ_n ≥ 0`, README §2, an extension) has
//! `op(x) = argmin_{λ ∈ C} ½ r_n λ_n² + ||λ − x||² / (2β)`, the bilateral row's closed form on the
//! normal axis: with `a = 1 + β r_n` and `S = diag(1/√a, 1, 1)` it is `λ = S Π_{C(μ/√a)}(S x)`
//! (the cone projection in the metric `diag(a, 1, 1)`), Jacobian `S J_Π S` (symmetric), potential
//! `||Π_{C(μ/√a)}(S x)||² / (2β)`. Strict variants: `Π^strict_C(x_n / a, x_t)`. At `r_n = 0`,
//! `a = 1`, `S = I` and every operation is the rigid one bit for bit.

use api::StepProblem;
use kernels::cone;
use toolkit::constraints::{bilateral_rows, contact_rows, ConstraintRows, RowLaw};

/// Which contact operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Euclidean projection onto the cone (CANAL).
    Prox,
    /// Nested normal-then-disk projection (Table II baselines).
    Strict,
}

/// The step's constraints, flattened.
#[derive(Debug, Default)]
pub struct Model {
    /// Contacts first (problem order), then bilateral rows.
    pub rows: Vec<ConstraintRows>,
    /// Number of contacts.
    pub nc: usize,
    /// Start of constraint `i` in the flattened impulse vector (length `rows.len() + 1`).
    pub off: Vec<usize>,
}

impl Model {
    /// Builds the model (rigid and compliant contacts, bilateral rows).
    pub fn new(p: &StepProblem<'_>) -> Self {
        let mut rows = contact_rows(p);
        let nc = rows.len();
        rows.extend(bilateral_rows(p));
        let mut off = Vec::with_capacity(rows.len() + 1);
        let mut o = 0;
        off.push(0);
        for r in &rows {
            o += r.dim;
            off.push(o);
        }
        Self { rows, nc, off }
    }

    /// Length of the flattened impulse vector.
    pub fn len(&self) -> usize {
        *self.off.last().unwrap_or(&0)
    }

    /// The bias `ẽ_i` of constraint `i` (first entry; the others are zero) given the frozen
    /// De Saxcé term `p_i` (0 for the strict variants and for bilateral rows).
    pub fn bias(&self, i: usize, p: f64) -> f64 {
        match self.rows[i].law {
            RowLaw::Contact { bias, .. } => bias + p,
            RowLaw::Bilateral { v_hat, .. } => -v_hat,
        }
    }

    /// `λ = op(x)` and, if `jac` is given, `dλ/dx` (row-major `dim x dim`) for constraint `i`.
    pub fn apply(&self, i: usize, op: Op, beta: f64, x: &[f64], out: &mut [f64], jac: Option<&mut [f64]>) {
        match self.rows[i].law {
            RowLaw::Contact { mu, r_n, .. } => {
                let a = 1.0 + beta * r_n;
                // row and column scales of the normal axis: S = diag(1/√a, 1, 1) (prox), the
                // normal clamp of x_n / a (strict); 1 for a rigid contact
                let (sr, sc, l, j) = match op {
                    Op::Prox => {
                        let s = 1.0 / a.sqrt();
                        let (y, mu_s) = ([s * x[0], x[1], x[2]], mu * s);
                        let l = cone::project(y, mu_s);
                        (s, s, [s * l[0], l[1], l[2]], jac.is_some().then(|| cone::project_jacobian(y, mu_s)))
                    }
                    Op::Strict => {
                        let y = [x[0] / a, x[1], x[2]];
                        (
                            1.0,
                            1.0 / a,
                            cone::project_strict(y, mu),
                            jac.is_some().then(|| cone::project_strict_jacobian(y, mu)),
                        )
                    }
                };
                out[..3].copy_from_slice(&l);
                if let (Some(dst), Some(j)) = (jac, j) {
                    for r in 0..3 {
                        for c in 0..3 {
                            let f = if r == 0 { sr } else { 1.0 } * if c == 0 { sc } else { 1.0 };
                            dst[3 * r + c] = f * j[r][c];
                        }
                    }
                }
            }
            RowLaw::Bilateral { r, .. } => {
                let s = 1.0 / (1.0 + beta * r);
                out[0] = s * x[0];
                if let Some(dst) = jac {
                    dst[0] = s;
                }
            }
        }
    }

    #[cfg(test)]
    /// The potential term `ψ_i(x)` of Eq. (22) whose gradient in `x` is `λ_i / β`:
    /// `||Π_{C(μ/√a)}(S x)||² / (2β)` for a contact (`S`, `a` in the module doc; `||Π(x)||² / (2β)`
    /// rigid), `x² / (2β(1 + βr))` for a bilateral row.
    pub fn potential(&self, i: usize, beta: f64, x: &[f64]) -> f64 {
        match self.rows[i].law {
            RowLaw::Contact { mu, r_n, .. } => {
                let s = 1.0 / (1.0 + beta * r_n).sqrt();
                let l = cone::project([s * x[0], x[1], x[2]], mu * s);
                (l[0] * l[0] + l[1] * l[1] + l[2] * l[2]) / (2.0 * beta)
            }
            RowLaw::Bilateral { r, .. } => x[0] * x[0] / (2.0 * beta * (1.0 + beta * r)),
        }
    }

    /// Friction coefficient of contact `i` (0 for bilateral rows).
    pub fn mu(&self, i: usize) -> f64 {
        match self.rows[i].law {
            RowLaw::Contact { mu, .. } => mu,
            RowLaw::Bilateral { .. } => 0.0,
        }
    }
}
