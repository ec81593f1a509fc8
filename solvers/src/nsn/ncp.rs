//! The NCP functions of Macklin et al. 2019 in their r-scaled forms (Appendix A) and the
//! friction compliance `W` of the fixed-point friction model (§5.2, Eqs. 31–37, 100–106).
//!
//! All functions are scalar and allocation-free; each returns what the Newton row needs.

// The shared NCP functions live in `kernels::ncp` (also used by `local_global`), with the
// paper's scalar examples (Figs. 6 and 9) as their tests; re-exported here with unchanged
// signatures.
pub use kernels::ncp::{friction_w, friction_w_fb_raw, normal_row, Ncp, NormalRow};

/// The FB row of `(C, λ)` (Eqs. 93–95) with its derivatives replaced by those of the smoothed
/// function `φ_μ = C + rλ − sqrt(C² + r²λ² + 2μ²)` (Jacobian smoothing, Kanzow & Pieper 1999):
/// `α = 1 − C/D`, `S = r(1 − rλ/D)`, `D = sqrt(C² + r²λ² + 2μ²)`; `phi` stays the exact FB value,
/// so the Newton iteration solves the paper's equations and only its matrix changes. Far from
/// the origin (`μ ≪ |(C, rλ)|`) this is the FB Jacobian; within `μ` of it `(α, S) → (1, r)`
/// continuously, where the paper's generalized Jacobian jumps between `(0, r)` (separating),
/// `(2, r)` (penetrating) and `(1, 0)` (loaded) with the sign of round-off (README "Redundant
/// contacts"). `mu = 0` returns the row unchanged (`(0, 0)` keeps Eqs. 26–27). `mu` in metres.
pub fn fb_row_smoothed(c: f64, lambda: f64, r: f64, mu: f64) -> NormalRow {
    let row = normal_row(Ncp::FischerBurmeister, c, lambda, r);
    if mu <= 0.0 {
        return row;
    }
    let d = (c * c + (r * lambda).powi(2) + 2.0 * mu * mu).sqrt();
    NormalRow { phi: row.phi, alpha: 1.0 - c / d, s: r * (1.0 - r * lambda / d) }
}

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
