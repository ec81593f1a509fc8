//! NCP functions shared by the non-smooth Newton solvers (`nsn`, Macklin et al. 2019, and
//! `local_global`, Zeng et al., whose App. B Eqs. 46–57 are the same functions): the r-scaled
//! normal rows (Macklin App. A; Zeng Eqs. 13–14, 46–48, 52–54) and the friction compliance `W`
//! (Zeng's `E_f`) of the fixed-point friction model (Macklin §5.2, Eqs. 31–37, 100–106; Zeng
//! Eqs. 49–51, 55–57), plus the mass-based complementarity preconditioner diagonal
//! `diag(J M⁻¹ Jᵀ)` (Macklin Eq. 66).
//!
//! All NCP functions are scalar and allocation-free; each returns what the Newton row needs.

use crate::sparse::Csr;
use nalgebra::DMatrix;

/// Which NCP function.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Ncp {
    /// Fischer–Burmeister `φ(a, b) = a + b − sqrt(a² + b²)` (Eq. 23; the paper's default).
    #[default]
    #[serde(rename = "fb")]
    FischerBurmeister,
    /// Minimum map `φ(a, b) = min(a, b)` (Eq. 18).
    #[serde(rename = "min")]
    Min,
}

/// The normal row of one contact: `φ_n(C, λ)` and its partial derivatives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NormalRow {
    /// `φ_n` (m).
    pub phi: f64,
    /// `α = ∂φ_n/∂C` (dimensionless): the NCP Jacobian row is `α ∇C` (Eq. 28).
    pub alpha: f64,
    /// `S = ∂φ_n/∂λ_n` (m/N) (Eqs. 95, 98).
    pub s: f64,
}

/// `φ_n(C, r λ)` with its derivatives: FB Eqs. 93–95 (at `(0, 0)`: `α = 0`, `S = r`, Eqs. 26–27),
/// min map Eqs. 96–98.
pub fn normal_row(ncp: Ncp, c: f64, lambda: f64, r: f64) -> NormalRow {
    match ncp {
        Ncp::FischerBurmeister => {
            let d = c.hypot(r * lambda);
            if d == 0.0 {
                NormalRow { phi: 0.0, alpha: 0.0, s: r }
            } else {
                NormalRow { phi: c + r * lambda - d, alpha: 1.0 - c / d, s: r * (1.0 - r * lambda / d) }
            }
        }
        Ncp::Min => {
            if c <= r * lambda {
                NormalRow { phi: c, alpha: 1.0, s: 0.0 }
            } else {
                NormalRow { phi: r * lambda, alpha: 0.0, s: r }
            }
        }
    }
}

/// The friction compliance `W ≥ 0` (Eqs. 35, 103–105) of one contact with slip speed
/// `v = |J_f u|` (m/s), friction bound `μλ_n > 0` (N), friction magnitude `|λ_f|` (N) and scale
/// `r` ((m/s)/N).
///
/// Inside the cone (`s = μλ_n − |λ_f| ≥ 0`), FB (Eq. 104 with its erratum, nsn README: the first
/// term is `v`, not `v²`): `W = r (R − r s) / (v + r μλ_n − R)`, `R = sqrt(v² + r² s²)`,
/// evaluated in the cancellation-free form (nsn README); 0/0 at `v = 0` gives 0 (stick).
///
/// Outside the cone (`s < 0`) both maps use the min-map compliance `W = (v − r s)/(μλ_n)`
/// (Eq. 105), whose fixed-point update `|λ_f|⁺ = |λ_f| + s = μλ_n` is the projection onto the
/// cone. The FB update `|λ_f|⁺ = |λ_f| + ψ_FB/r` overshoots the projection (`ψ_FB ≤ r s` there),
/// crosses zero at the pole of Eq. 104 (`|s| = sqrt(μ²λ_n² + 2vμλ_n/r)`) and turns `W` negative;
/// any clamp at the pole (a large `W`) wipes out the friction impulse and makes the Newton
/// iteration cycle (the cause of the creeping box, README "Friction outside the cone"). The two
/// branches agree at `s = 0` (`W = v/(μλ_n)`), so `W` is continuous. [`friction_w_fb_raw`] is
/// the unmodified Eq. 104.
/// Min map (Eq. 105): `W = 0` if `v ≤ r s`, else `(v − r s) / (μλ_n)`.
pub fn friction_w(ncp: Ncp, v: f64, mu_lambda_n: f64, lambda_f: f64, r: f64) -> f64 {
    let s = mu_lambda_n - lambda_f;
    let w = match ncp {
        Ncp::FischerBurmeister if s >= 0.0 => {
            let rr = v.hypot(r * s);
            let num = if rr + r * s > 0.0 { v * v / (rr + r * s) } else { 0.0 };
            let den = r * lambda_f + if v + r * s + rr > 0.0 { 2.0 * v * r * s / (v + r * s + rr) } else { 0.0 };
            if num == 0.0 {
                0.0
            } else {
                r * num / den
            }
        }
        _ => {
            if v <= r * s {
                0.0
            } else {
                (v - r * s) / mu_lambda_n
            }
        }
    };
    w.max(0.0)
}

/// Eq. 104 as printed (with the `v` erratum) for any `s`: `None` past its pole (non-positive
/// denominator). Reference for the Fig. 6 curve; the solver uses [`friction_w`].
pub fn friction_w_fb_raw(v: f64, mu_lambda_n: f64, lambda_f: f64, r: f64) -> Option<f64> {
    let s = mu_lambda_n - lambda_f;
    let rr = v.hypot(r * s);
    let den = v + r * mu_lambda_n - rr;
    (den > 0.0).then(|| r * (rr - r * s) / den)
}

/// Whether a contact's friction rows are active, and in which state ([`contact_rows`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrictionState {
    /// `λ_n ≤ 0` or `μ = 0`: friction rows off (`ω_f = 0`, `φ_f = λ_f`).
    Off,
    /// Compliance `E_f = 0`.
    Stick,
    /// Compliance `E_f > 0`.
    Slip,
}

/// The three NCP rows `(n, t1, t2)` of one contact in Zeng et al.'s local-global step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactRows {
    /// `Ω` (diagonal).
    pub omega: [f64; 3],
    /// `E = (E_n/h², E_f/h, E_f/h)` (diagonal).
    pub ediag: [f64; 3],
    /// `φ`.
    pub phi: [f64; 3],
    /// The friction rows' state.
    pub friction: FrictionState,
}

/// The NCP rows of one contact in Zeng et al.'s local-global step (Eqs. 46–57) from its
/// constraint values `dq = H (q − q_t)` (`(δ_n − φ₀, h δ̇_t1, h δ̇_t2)`, Eq. 40), start gap `gap0`,
/// friction coefficient `mu`, complementarity scales `r_n`, `r_f` (Eq. 28) and multipliers `lam`:
/// normal row [`normal_row`] at `δ_n = gap0 + dq_n`; friction `φ_f = δ̇_f + E_f λ_f` with the
/// compliance [`friction_w`] when `λ_n > 0` and `μ > 0`, else `ω_f = 0`, `E_f = I`, `φ_f = λ_f`
/// (Eqs. 50, 56). The device kernel `lg_contact_rows` (kernels/src/gpu/kernels.cu) computes the
/// same per contact.
#[allow(clippy::too_many_arguments)]
pub fn contact_rows(
    ncp: Ncp,
    h: f64,
    dq: [f64; 3],
    gap0: f64,
    mu: f64,
    r_n: f64,
    r_f: f64,
    lam: [f64; 3],
) -> ContactRows {
    let h2 = h * h;
    let (ln, lt) = (lam[0], [lam[1], lam[2]]);
    let row_n = normal_row(ncp, gap0 + dq[0], ln, r_n);
    let (mut omega, mut ediag, mut phi) = ([row_n.alpha, 0.0, 0.0], [row_n.s / h2, 0.0, 0.0], [row_n.phi, 0.0, 0.0]);
    let vt = [dq[1] / h, dq[2] / h];
    let friction = if ln > 0.0 && mu > 0.0 {
        let ef = friction_w(ncp, vt[0].hypot(vt[1]), mu * ln, lt[0].hypot(lt[1]), r_f);
        for t in 0..2 {
            omega[1 + t] = 1.0;
            ediag[1 + t] = ef / h;
            phi[1 + t] = vt[t] + ef * lt[t];
        }
        if ef == 0.0 {
            FrictionState::Stick
        } else {
            FrictionState::Slip
        }
    } else {
        // λ_n ≤ 0 (or μ = 0): ω_f = 0, E_f = I, φ_f = λ_f drives λ_f → 0 (Eqs. 50, 56)
        for t in 0..2 {
            omega[1 + t] = 0.0;
            ediag[1 + t] = 1.0 / h;
            phi[1 + t] = lt[t];
        }
        FrictionState::Off
    };
    ContactRows { omega, ediag, phi, friction }
}

/// The right-hand side of Zeng et al.'s constraint system, `(1/h²)(h − J A⁻¹ g)` (Algorithms
/// 3–4 sign), per contact from `φ`, `Ω` and `y = H (q_0^k − q^k)`: normal `−(φ_n + ω_n y_n)/h²`,
/// friction `−(φ_f + ω_f y_f / h)/h`. The device kernel `lg_newton_rhs` computes the same.
pub fn newton_rhs(h: f64, phi: [f64; 3], omega: [f64; 3], y: [f64; 3]) -> [f64; 3] {
    let h2 = h * h;
    let mut rhs = [-(phi[0] + omega[0] * y[0]) / h2, 0.0, 0.0];
    for r in 1..3 {
        rhs[r] = -(phi[r] + omega[r] * y[r] / h) / h;
    }
    rhs
}

/// The Jacobi preconditioner of the constraint system, `1 / diag(Ω W Ω + E)` per row (1 where
/// the diagonal is not positive). The device kernel `cr_jacobi_pinv` computes the same.
pub fn cr_jacobi_pinv(omega: f64, wdiag: f64, ediag: f64) -> f64 {
    let d = omega * omega * wdiag + ediag;
    if d > 0.0 {
        1.0 / d
    } else {
        1.0
    }
}

/// `[J B⁻¹ Jᵀ]_ii` for every row of `j`, with `B⁻¹` given by dense inverse blocks
/// (`block_of[k] = (block, local index)` of column `k`): exact for a block-diagonal `B`. With
/// `B = M` this is the diagonal of Macklin's mass-based complementarity preconditioner (Eq. 66).
pub fn schur_diagonal(j: &Csr, inv: &[DMatrix<f64>], block_of: &[(usize, usize)]) -> Vec<f64> {
    (0..j.nrows)
        .map(|r| {
            let (a, b) = (j.indptr[r], j.indptr[r + 1]);
            let mut s = 0.0;
            for p in a..b {
                let (bp, lp) = block_of[j.indices[p]];
                for q in a..b {
                    let (bq, lq) = block_of[j.indices[q]];
                    if bp == bq {
                        s += j.data[p] * j.data[q] * inv[bp][(lp, lq)];
                    }
                }
            }
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Macklin Fig. 9 (§7): `c(λ) = λ/4 − 1/8 ≥ 0 ⊥ λ ≥ 0`, solution `λ* = 1/2`;
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
        // golden values of an independent scalar Newton run (3-5 digits; nsn README)
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

    /// Macklin Fig. 6 setup (nsn README): `u = 0.5 m/s`, `μλ_n = 5 N`, `r = 1`: at the cone limit both maps give
    /// `W = v/(μλ_n) = 0.1`; FB curve values of an independent evaluation (3 digits) for the raw Eq. 104, and
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
        // the cancellation-free form is Eq. 104 at any scale r, not only r = 1
        for r in [0.3, 7.3] {
            for lf in [0.0, 2.0, 4.0] {
                let raw = friction_w_fb_raw(0.5, 5.0, lf, r).unwrap();
                let solver_w = friction_w(Ncp::FischerBurmeister, 0.5, 5.0, lf, r);
                assert!(raw > 0.0 && (solver_w - raw).abs() < 1e-12 * raw, "r {r} |λ_f| {lf}: {solver_w} vs {raw}");
            }
        }
        // past the pole (|λ_f| ≈ 10.48) the raw formula has no value, nor on it: at v = 0, r = 1,
        // μλ_n = 1, |λ_f| = 2 the denominator v + r μλ_n − R is exactly 0
        assert_eq!(friction_w_fb_raw(0.5, 5.0, 10.5, 1.0), None);
        assert_eq!(friction_w_fb_raw(0.0, 1.0, 2.0, 1.0), None);
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

    /// The right-hand side row by row: normal `−(φ_n + ω_n y_n)/h²`, friction
    /// `−(φ_f + ω_f y_f / h)/h`.
    #[test]
    fn newton_rhs_scales_normal_and_friction_rows() {
        let (h, phi, omega, y) = (0.1, [1.0, 2.0, -3.0], [0.5, 1.0, 0.25], [4.0, -6.0, 8.0]);
        let want = [-(1.0 + 2.0) / 0.01, -(2.0 - 60.0) / 0.1, -(-3.0 + 20.0) / 0.1];
        let got = newton_rhs(h, phi, omega, y);
        for r in 0..3 {
            assert!((got[r] - want[r]).abs() < 1e-12 * want[r].abs(), "row {r}: {got:?} vs {want:?}");
        }
    }

    /// The Jacobi entry is `1 / (ω² W + E)`, and 1 where that diagonal is not positive.
    #[test]
    fn jacobi_entry_inverts_the_positive_diagonal_only() {
        assert_eq!(cr_jacobi_pinv(2.0, 0.5, 1.0), 1.0 / 3.0);
        assert_eq!(cr_jacobi_pinv(0.0, 0.5, 0.25), 4.0);
        assert_eq!(cr_jacobi_pinv(0.0, 0.5, 0.0), 1.0);
        assert_eq!(cr_jacobi_pinv(1.0, -2.0, 1.0), 1.0);
    }

    /// `[J B⁻¹ Jᵀ]_ii` by hand: two bodies of one DOF each and one of two, `B⁻¹` block-diagonal;
    /// a row touching two blocks gets no cross term, a row inside one block gets its coupling.
    #[test]
    fn schur_diagonal_sums_within_blocks_only() {
        use nalgebra::dmatrix;
        let inv = vec![dmatrix![2.0], dmatrix![0.5], dmatrix![1.0, 0.25; 0.25, 3.0]];
        let block_of = [(0, 0), (1, 0), (2, 0), (2, 1)];
        let j = Csr::from_triplets(3, 4, &[(0, 0, 1.0), (0, 1, 2.0), (1, 2, 1.0), (1, 3, -2.0), (2, 3, 3.0)]);
        let d = schur_diagonal(&j, &inv, &block_of);
        // row 0: 1·2·1 + 2·0.5·2; row 1: 1·1·1 + 2·(1·0.25·(−2)) + (−2)·3·(−2); row 2: 3·3·3
        assert_eq!(d, [2.0 + 2.0, 1.0 - 1.0 + 12.0, 27.0]);
    }

    /// A contact's rows: the normal row at `δ_n = gap0 + dq_n` scaled by `1/h²`; with `λ_n > 0` and
    /// `μ > 0` the friction rows at the slip speed `|dq_t|/h` with `E_f = W(v, μλ_n, |λ_f|)`
    /// (stick when `W = 0`, slip otherwise); else friction off (`ω_f = 0`, `E_f = I`,
    /// `φ_f = λ_f`).
    #[test]
    fn contact_rows_follow_the_normal_row_and_the_friction_state() {
        let (h, r_n, r_f) = (0.01, 2.0, 3.0);
        let n = normal_row(Ncp::FischerBurmeister, 0.1 + 0.02, 0.5, r_n);
        // slipping: dq_t = (0.03, 0.04) h → v = 5, λ_t = (0.3, 0.4) inside the cone μλ_n = 1
        let rows = contact_rows(Ncp::FischerBurmeister, h, [0.02, 0.0003, 0.0004], 0.1, 2.0, r_n, r_f, [0.5, 0.3, 0.4]);
        let ef = friction_w(Ncp::FischerBurmeister, 0.05, 1.0, 0.5, r_f);
        assert!(ef > 0.0 && rows.friction == FrictionState::Slip, "{rows:?}");
        assert_eq!(rows.omega, [n.alpha, 1.0, 1.0]);
        let want_e = [n.s / (h * h), ef / h, ef / h];
        let want_phi = [n.phi, 0.03 + ef * 0.3, 0.04 + ef * 0.4];
        for r in 0..3 {
            assert!((rows.ediag[r] - want_e[r]).abs() < 1e-12 * want_e[r].abs(), "{rows:?}");
            assert!((rows.phi[r] - want_phi[r]).abs() < 1e-12 * want_phi[r].abs(), "{rows:?}");
        }
        // sticking: no slip speed inside the cone gives W = 0
        let rows = contact_rows(Ncp::Min, h, [0.0, 0.0, 0.0], 0.1, 2.0, r_n, r_f, [0.5, 0.3, 0.4]);
        assert_eq!((rows.friction, rows.ediag[1], rows.phi[1]), (FrictionState::Stick, 0.0, 0.0), "{rows:?}");
        // friction off: no normal impulse, or no friction coefficient
        for (mu, ln) in [(2.0, 0.0), (2.0, -0.5), (0.0, 0.5)] {
            let rows =
                contact_rows(Ncp::FischerBurmeister, h, [0.02, 0.0003, 0.0004], 0.1, mu, r_n, r_f, [ln, 0.3, 0.4]);
            assert_eq!(rows.friction, FrictionState::Off, "mu {mu} λ_n {ln}");
            // the normal row is the one of normal_row, untouched by the friction rows
            let n = normal_row(Ncp::FischerBurmeister, 0.1 + 0.02, ln, r_n);
            assert_eq!((rows.omega[0], rows.ediag[0], rows.phi[0]), (n.alpha, n.s / (h * h), n.phi), "λ_n {ln}");
            assert_eq!(
                (&rows.omega[1..], &rows.ediag[1..], &rows.phi[1..]),
                (&[0.0; 2][..], &[100.0; 2][..], &[0.3, 0.4][..])
            );
        }
    }
}
