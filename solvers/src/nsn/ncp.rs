//! The NCP functions of Macklin et al. 2019 in their r-scaled forms (Appendix A) and the
//! friction compliance `W` of the fixed-point friction model (§5.2, Eqs. 31–37, 100–106).
//!
//! All functions are scalar and allocation-free; each returns what the Newton row needs.

// The shared NCP functions live in `kernels::ncp` (also used by `local_global`); re-exported
// here with unchanged signatures.
pub use kernels::ncp::{friction_w, friction_w_fb_raw, normal_row, Ncp, NormalRow};

/// How the two friction rows of an active contact (`μλ_n > 0`) are formed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FrictionRows {
    /// The paper's rows `φ_f = J_f u + W λ_f` (Eq. 36) with the scalar compliance of
    /// [`friction_w`]; the value is the factor on the rows of `J_f` (1 active, 0 inactive).
    Scaled(f64),
    /// On or outside the cone with `|λ_f − ρ v_t| ≤ μλ_n`: the projection sticks, `W = 0`
    /// (`φ_f = J_f u`).
    Stick,
    /// On or outside the cone with `|λ_f − ρ v_t| > μλ_n` (`ρ = 1/r`): the rows of the
    /// projection (Alart–Curnier) form `λ_f = proj(λ_f − ρ v_t)` in the frame `(z, ⊥)`, with
    /// `z = (λ_f − ρ v_t)/|·|`: a *magnitude* row `λ_z = μλ_n` with no velocity term and a
    /// *perpendicular* row `v_⊥ + W_⊥ λ_⊥ = 0`, `W_⊥ = (1 − κ)/(κρ)`, `κ = μλ_n/|λ_f − ρ v_t|`
    /// (the linearisation of the projection with `μλ_n` frozen, divided by `κρ`; residual
    /// `λ_⊥/(κρ)`). For a slip `v_t` opposite to `λ_f` at the cone limit, `W_⊥ = v/(μλ_n)`, the
    /// paper's `W` there.
    Projected {
        /// Unit `z` in `(t1, t2)` coordinates.
        z: [f64; 2],
        /// Unit `⊥ = (−z₂, z₁)`.
        p: [f64; 2],
        /// `W_⊥` ((m/s)/N).
        w_perp: f64,
        /// `κρ` (N/(m/s)).
        kappa_rho: f64,
    },
}

/// The friction rows of an active contact with tangential velocity `vt` (m/s), friction force
/// `lf` (N, `(t1, t2)`), bound `μλ_n > 0` (N) and scale `r` ((m/s)/N).
///
/// Projection form (`fixed_point_inside = false`, the default `friction = "projection"`):
/// [`FrictionRows::Stick`] when `|λ_f − v_t/r| ≤ μλ_n`, else [`FrictionRows::Projected`].
/// With `fixed_point_inside` (`friction = "fixed_point"`), strictly inside the cone
/// (`|λ_f| < μλ_n`) the paper's scalar `W` rows ([`FrictionRows::Scaled`]), the projection rows
/// on and outside it.
///
/// Why (README "Friction rows"): the fixed-point `W` row, with `W` frozen, solves
/// `λ_f = −v_t/W`; when the other contacts of a body hold its velocity (a box on four corners)
/// an over-loaded contact has `v_t ≈ 0`, so the row *removes* its friction instead of returning
/// it to the cone, and the iterate swings the load between contacts without converging. The
/// magnitude row keeps it at `μλ_n`.
pub fn friction_rows(fixed_point_inside: bool, vt: [f64; 2], lf: [f64; 2], mu_lambda_n: f64, r: f64) -> FrictionRows {
    let lf_norm = lf[0].hypot(lf[1]);
    if fixed_point_inside && lf_norm < mu_lambda_n {
        return FrictionRows::Scaled(1.0);
    }
    let rho = 1.0 / r;
    let zv = [lf[0] - rho * vt[0], lf[1] - rho * vt[1]];
    let zn = zv[0].hypot(zv[1]);
    // inside or on the cone (and NaN, which the caller reports as non-finite): stick
    if zn.partial_cmp(&mu_lambda_n) != Some(std::cmp::Ordering::Greater) {
        return FrictionRows::Stick;
    }
    let z = [zv[0] / zn, zv[1] / zn];
    let kappa = mu_lambda_n / zn;
    FrictionRows::Projected { z, p: [-z[1], z[0]], w_perp: (1.0 - kappa) / (kappa * rho), kappa_rho: kappa * rho }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Macklin Fig. 9 / notes §7 and §14.1: `c(λ) = λ/4 − 1/8 ≥ 0 ⊥ λ ≥ 0`, solution `λ* = 1/2`;
    /// scalar Newton `λ ← λ − φ/(α c' + S)` from `λ₀ = −3`.
    fn newton_trace(ncp: Ncp, r: f64, steps: usize) -> Vec<f64> {
        let mut lam = -3.0;
        let mut out = vec![lam];
        for _ in 0..steps {
            let row = normal_row(ncp, lam / 4.0 - 0.125, lam, r);
            let d = row.alpha * 0.25 + row.s;
            lam -= row.phi / d;
            out.push(lam);
        }
        out
    }

    #[test]
    fn fig9_min_map_with_effective_mass_r_converges_in_one_step() {
        assert_eq!(newton_trace(Ncp::Min, 0.25, 1), vec![-3.0, 0.5]);
        // r = 1: -3 -> 0 -> 0.5
        assert_eq!(newton_trace(Ncp::Min, 1.0, 2), vec![-3.0, 0.0, 0.5]);
    }

    #[test]
    fn fig9_fischer_burmeister_traces() {
        // golden values of notes §7 (printed to 3-5 digits)
        let t = newton_trace(Ncp::FischerBurmeister, 0.25, 5);
        for (got, want, tol) in [(t[1], 0.258, 1e-3), (t[2], 0.431, 1e-3), (t[3], 0.4946, 1e-4), (t[4], 0.49997, 1e-5)]
        {
            assert!((got - want).abs() < tol, "{t:?}");
        }
        assert!((t[5] - 0.5).abs() < 1e-9);
        let t = newton_trace(Ncp::FischerBurmeister, 1.0, 5);
        for (got, want, tol) in [(t[1], 0.070, 1e-3), (t[2], 0.252, 1e-3), (t[3], 0.457, 1e-3), (t[4], 0.49946, 1e-5)] {
            assert!((got - want).abs() < tol, "{t:?}");
        }
    }

    #[test]
    fn fb_subgradient_at_origin() {
        assert_eq!(normal_row(Ncp::FischerBurmeister, 0.0, 0.0, 0.3), NormalRow { phi: 0.0, alpha: 0.0, s: 0.3 });
    }

    /// Notes §14.2 / §4.3: `u = 0.5 m/s`, `μλ_n = 5 N`, `r = 1`: at the cone limit both maps give
    /// `W = v/(μλ_n) = 0.1`; the FB curve values of the notes (3 digits) for the raw Eq. 104, and
    /// the projection branch of [`friction_w`] outside the cone.
    #[test]
    fn fig6_friction_compliance() {
        for ncp in [Ncp::FischerBurmeister, Ncp::Min] {
            assert!((friction_w(ncp, 0.5, 5.0, 5.0, 1.0) - 0.1).abs() < 1e-15, "{ncp:?}");
            assert!((friction_w(ncp, 0.5, 5.0, 5.0, 7.3) - 0.1).abs() < 1e-14, "{ncp:?}");
        }
        for (lf, w) in [(0.0, 0.0525), (4.0, 0.0269), (6.0, 0.483), (8.0, 2.46), (10.0, 21.1)] {
            let got = friction_w_fb_raw(0.5, 5.0, lf, 1.0).unwrap();
            assert!((got - w).abs() < 5e-3 * w.max(0.1), "|λ_f| = {lf}: {got} vs {w}");
            if lf <= 5.0 {
                let solver_w = friction_w(Ncp::FischerBurmeister, 0.5, 5.0, lf, 1.0);
                assert!((solver_w - got).abs() < 1e-12 * got.max(1e-3), "|λ_f| = {lf}");
            }
        }
        // past the pole (|λ_f| ≈ 10.48) the raw formula has no value
        assert_eq!(friction_w_fb_raw(0.5, 5.0, 10.5, 1.0), None);
        // outside the cone the solver's W is the projection: |λ_f|⁺ = |λ_f| + s = μλ_n, i.e.
        // W = (v − r s)/(μλ_n); finite and positive at and beyond the pole
        for lf in [6.0, 10.48, 10.5, 100.0] {
            let want = (0.5 + (lf - 5.0)) / 5.0;
            for ncp in [Ncp::FischerBurmeister, Ncp::Min] {
                assert!((friction_w(ncp, 0.5, 5.0, lf, 1.0) - want).abs() < 1e-14, "{ncp:?} {lf}");
            }
        }
        // continuity at the cone boundary
        let below = friction_w(Ncp::FischerBurmeister, 0.5, 5.0, 5.0 - 1e-9, 1.0);
        let above = friction_w(Ncp::FischerBurmeister, 0.5, 5.0, 5.0 + 1e-9, 1.0);
        assert!((below - above).abs() < 1e-8);
        // stick: v = 0 inside the cone gives 0 (0/0 resolved)
        assert_eq!(friction_w(Ncp::FischerBurmeister, 0.0, 5.0, 0.0, 1.0), 0.0);
        assert_eq!(friction_w(Ncp::Min, 0.0, 5.0, 2.0, 1.0), 0.0);
    }
}
