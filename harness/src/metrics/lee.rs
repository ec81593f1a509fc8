//! The cross-solver contact residual of Lee et al. 2025 ("Variations of augmented Lagrangian for
//! robotic multi-contact simulation", §VII; seed-002 notes §6.1), which their figures and
//! Tables II–III report as `−log10`.
//!
//! Only the solver's impulses are used, so dual (PGS) and primal–dual (CANAL, SubADMM) solvers are
//! graded alike:
//! 1. project the velocity, `v̂ = v* + M⁻¹ (Jᵀ λ + Gᵀ γ)` (momentum balance holds exactly);
//! 2. per contact, with the strict operator `T` of their Eq. (17) ([`kernels::cone::project_strict`])
//!    and unit weight, `F_i = λ_i − T(λ_i − (J_i v̂ + e_i))`, `e_i = (φ_i/dt, 0, 0)`; per bilateral
//!    row (`T` = identity, not in the paper, whose robots use reduced coordinates)
//!    `F_k = G_k v̂ − v̂_k + r_k γ_k`;
//! 3. `lee_residual = ||F||_2 / max(n_c, 1)`.
//!
//! It mixes units (N s and m/s, unit weight), as the paper's does: SI values, not scale-free. The
//! normalised form `lee_residual_rel` uses the weight `m_i = 3 / tr(W_ii)`, `W_ii = J_i M⁻¹ J_iᵀ`
//! (an effective mass, kg) in place of 1, so every entry is an impulse, and divides by
//! `max(||λ||_2, ||m ⊙ (J v* + e)||_2)`: dimensionless and invariant to the choice of units.

use crate::problem::StepProblem;
use kernels::cone;
use nalgebra::{DMatrix, DVector};

/// The residual in the paper's form and normalised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeeResidual {
    /// `||F||_2 / max(n_c, 1)` in SI (mixed N s and m/s, unit weight).
    pub abs: f64,
    /// `-log10(abs)` (capped at `-log10(f64::MIN_POSITIVE)` for an exact zero).
    pub neglog10: f64,
    /// Effective-mass-weighted, scale-free variant (see the module doc).
    pub rel: f64,
}

/// The residual of contact impulses `lambda` and bilateral impulses `gamma` (empty when the
/// problem has no joints) for `problem`.
pub fn lee_residual(problem: &StepProblem<'_>, lambda: &[[f64; 3]], gamma: &[f64]) -> LeeResidual {
    let nv = problem.nv();
    let v_star = problem.free_velocity();
    let mut imp = problem.contacts.transpose_mul(lambda, nv);
    if gamma.len() == problem.nb() {
        for (row, g) in problem.bilateral.rows.iter().zip(gamma) {
            row.add_transpose(*g, &mut imp);
        }
    }
    problem.mass.solve_in_place(&mut imp);
    let v: Vec<f64> = v_star.iter().zip(&imp).map(|(a, b)| a + b).collect();
    // inverse mass blocks by velocity offset, for the effective masses
    let inv: Vec<(usize, DMatrix<f64>)> =
        (0..problem.mass.blocks().len()).map(|b| (problem.mass.offset(b), problem.mass.block_inverse(b))).collect();
    let inv_of = |off: usize| -> &DMatrix<f64> {
        let k = inv.binary_search_by_key(&off, |(o, _)| *o).unwrap_or_else(|i| i.saturating_sub(1));
        &inv[k].1
    };
    let (mut f2, mut g2, mut den_l, mut den_q) = (0.0, 0.0, 0.0, 0.0);
    for (i, (c, l)) in problem.contacts.contacts.iter().zip(lambda).enumerate() {
        let u = c.velocity(&v);
        let u_free = c.velocity(&v_star);
        let e = problem.bias(i);
        let un = [u[0] + e[0], u[1], u[2]];
        let x = [l[0] - un[0], l[1] - un[1], l[2] - un[2]];
        let t = cone::project_strict(x, c.mu);
        f2 += (0..3).map(|k| (l[k] - t[k]).powi(2)).sum::<f64>();
        // tr(W_ii) = sum over blocks and rows of j M_b^-1 j^T
        let mut tr = 0.0;
        for blk in &c.jacobian {
            let minv = inv_of(blk.v_offset);
            for r in 0..3 {
                let j = DVector::from_iterator(blk.ncols, blk.rows[r][..blk.ncols].iter().copied());
                tr += j.dot(&(minv.view((0, 0), (blk.ncols, blk.ncols)) * &j));
            }
        }
        let m = if tr > 0.0 { 3.0 / tr } else { 0.0 };
        let xw = [l[0] - m * un[0], l[1] - m * un[1], l[2] - m * un[2]];
        let tw = cone::project_strict(xw, c.mu);
        g2 += (0..3).map(|k| (l[k] - tw[k]).powi(2)).sum::<f64>();
        den_l += l.iter().map(|a| a * a).sum::<f64>();
        den_q += m * m * ((u_free[0] + e[0]).powi(2) + u_free[1].powi(2) + u_free[2].powi(2));
    }
    if gamma.len() == problem.nb() {
        for (row, g) in problem.bilateral.rows.iter().zip(gamma) {
            let (vh, r) = row.law(problem.dt);
            let res = row.velocity(&v) - vh + r * g;
            let mut w = 0.0;
            for blk in &row.jacobian {
                let minv = inv_of(blk.v_offset);
                let j = DVector::from_iterator(blk.ncols, blk.row[..blk.ncols].iter().copied());
                w += j.dot(&(minv.view((0, 0), (blk.ncols, blk.ncols)) * &j));
            }
            let m = if w > 0.0 { 1.0 / w } else { 0.0 };
            f2 += res * res;
            g2 += (m * res).powi(2);
            den_l += g * g;
            den_q += (m * (row.velocity(&v_star) - vh)).powi(2);
        }
    }
    let abs = f2.sqrt() / problem.nc().max(1) as f64;
    let den = den_l.sqrt().max(den_q.sqrt());
    let rel = if den > f64::MIN_POSITIVE { g2.sqrt() / den } else { g2.sqrt() };
    LeeResidual { abs, neglog10: -abs.max(f64::MIN_POSITIVE).log10(), rel }
}
