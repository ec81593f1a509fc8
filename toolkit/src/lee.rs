//! The cross-solver contact residual of Lee et al. 2025 ("Variations of augmented Lagrangian for
//! robotic multi-contact simulation", §VII), which their figures and
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

use api::StepProblem;
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

#[cfg(test)]
mod tests {
    //! A sphere (M = 2 kg, R = 0.1 m, I = 0.4 M R² = 0.008 kg m²) resting on the ground, one
    //! contact below its centre with gap 0, `dt = 0.01 s`, `g = 9.81`, `mu = 0.5`. The frame is
    //! `(n, t1, t2) = (z, x, y)`; with `r = (0, 0, -R)` the contact velocity is
    //! `u = (v_z, v_x - R w_y, v_y + R w_x)`, so `W = J M⁻¹ Jᵀ = diag(1/M, 1/M + R²/I, 1/M + R²/I)
    //! = diag(0.5, 1.75, 1.75)` and `J v* = (-g dt, 0, 0)`.

    use super::*;
    use api::contact::{ColliderId, ContactKey, ContactSet};
    use harness::model::{Material, RigidBody, Shape, StaticCollider, StaticShape, World};
    use nalgebra::Vector3;

    fn sphere_on_ground() -> (World, ContactSet) {
        let mut w = World::new();
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material: Material::rigid(0.5),
        });
        w.bodies.push(RigidBody::new(
            "ball",
            Shape::Sphere { radius: 0.1 },
            2.0,
            Vector3::new(0.0, 0.0, 0.1),
            Material::rigid(0.5),
        ));
        let key = ContactKey { a: ColliderId::Body(0), b: ColliderId::Static(0), feature: 0 };
        let c = w.contact(key, Vector3::zeros(), Vector3::z(), 0.0);
        (w, ContactSet { contacts: vec![c] })
    }

    /// The exact resting impulse `(M g dt, 0, 0)` gives `v̂ = 0`, `F = 0`: residual 0 and the capped
    /// `-log10`.
    #[test]
    fn exact_resting_impulse_has_zero_residual() {
        let (w, cs) = sphere_on_ground();
        let p = w.step_problem(&cs, 0.01, None).unwrap();
        let r = lee_residual(&p, &[[2.0 * 9.81 * 0.01, 0.0, 0.0]], &[]);
        assert!(r.abs < 1e-17 && r.rel < 1e-16, "{r:?}");
        assert!(r.neglog10 > 16.0, "{r:?}");
    }

    /// `λ = (0.1, 0.2, 0)` N s, hand-computed:
    /// `v̂ = v* + M⁻¹Jᵀλ` gives `u = J v̂ = (-0.0981 + 0.1/2, 0.2 · 1.75, 0) = (-0.0481, 0.35, 0)`.
    /// Unit weight: `λ - u = (0.1481, -0.15, 0)` lies outside the cone (`0.15 > 0.5 · 0.1481`), so
    /// `T = (0.1481, -0.074050, 0)` and `F = λ - T = (-0.0481, 0.27405, 0)`:
    /// `abs = ‖F‖ / 1 = sqrt(0.0481² + 0.27405²) = 0.2782391…`.
    /// Normalised: `m = 3 / tr W = 3/4 = 0.75 kg`; `λ - m u = (0.136075, -0.0625, 0)` is inside the
    /// cone (`0.0625 < 0.0680375`), so `G = m u = (-0.036075, 0.2625, 0)`, `‖G‖ = 0.264967…`,
    /// divided by `max(‖λ‖, m ‖J v* + e‖) = max(sqrt(0.05), 0.75 · 0.0981) = 0.2236068…`.
    #[test]
    fn sliding_impulse_matches_the_hand_computed_residual() {
        let (w, cs) = sphere_on_ground();
        let p = w.step_problem(&cs, 0.01, None).unwrap();
        let r = lee_residual(&p, &[[0.1, 0.2, 0.0]], &[]);
        let abs = (0.0481f64.powi(2) + 0.27405f64.powi(2)).sqrt();
        assert!((abs - 0.278_239_1).abs() < 1e-7);
        assert!((r.abs - abs).abs() < 1e-14, "abs {} vs {abs}", r.abs);
        assert!((r.neglog10 + abs.log10()).abs() < 1e-12);
        let rel = (0.036075f64.powi(2) + 0.2625f64.powi(2)).sqrt() / 0.05f64.sqrt();
        assert!((r.rel - rel).abs() < 1e-13, "rel {} vs {rel}", r.rel);
        // inside the cone with unit weight: F = u exactly, (-0.0481, 0.0525, 0)
        let r = lee_residual(&p, &[[0.1, 0.03, 0.0]], &[]);
        assert!((r.abs - (0.0481f64.powi(2) + 0.0525f64.powi(2)).sqrt()).abs() < 1e-14, "{r:?}");
    }
}
