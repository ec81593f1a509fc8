//! RaiSim's per-contact exact solve (Hwangbo, Lee & Hutter 2018, Sec. III): one contact's
//! Coulomb problem with every other impulse frozen.
//!
//! The contact sees `u(λ) = W λ + c` (`W` its 3×3 Delassus block with the normal compliance on
//! `W_nn`, `c` the law velocity at zero impulse of this contact) and the law
//! `K_μ ∋ λ ⊥ u + μ ‖u_t‖ e_n ∈ K_μ*`. Three cases, tried in order:
//!
//! 1. **open** — `c_n ≥ 0`: the contact separates with `λ = 0`;
//! 2. **stick** — `λ = −W⁻¹ c` (so `u = 0`) lies in the cone: take it;
//! 3. **slide** — `λ` on the cone's boundary with `u_n = 0`. The plane `u_n = 0` cuts the cone in an
//!    ellipse, parametrised by the direction `e(θ) = (cos θ, sin θ)` of `λ_t`: from `u_n = 0` and
//!    `‖λ_t‖ = μ λ_n`, `‖λ_t‖ = ρ(θ) = −μ c_n / (W_nn + μ W_nt e(θ))` and `λ_n = ρ / μ`. Maximal
//!    dissipation asks the slip `u_t(θ) = c_t + W_tn λ_n + W_tt λ_t` to be opposite to `e(θ)`:
//!    `h(θ) = e(θ)^⊥ · u_t(θ) = 0` with `e(θ) · u_t(θ) ≤ 0`. The root is bracketed on a grid of
//!    [`SECTORS`] angles and found by bisection on `θ` (the paper's bisection on the ellipse) to
//!    [`BISECTIONS`] halvings.
//!
//! When no bracket is found (`W_nn + μ W_nt e ≤ 0` somewhere on the ellipse, a Painlevé-like
//! local problem, or a slip too small to resolve), the slide falls back to the `split` local
//! solve of `kernels::contact_local` (exact normal, then the exact disk problem).

use kernels::contact_local::LocalProblem;

/// Number of equal sectors the ellipse is scanned in for a sign change of `h`.
pub const SECTORS: usize = 32;
/// Bisection halvings of the bracketing sector (`2π / 32 / 2^60` rad: below round-off).
pub const BISECTIONS: usize = 60;

/// Which case of the module doc answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// Separating, `λ = 0`.
    Open,
    /// Sticking, `u = 0`.
    Stick,
    /// Sliding, found by bisection on the ellipse.
    Slide,
    /// Sliding, no bracket: the `split` local solve.
    Fallback,
}

/// The exact impulse of one contact (module doc): `l` its local problem (Delassus block, `μ`,
/// normal law), `u` its law-free velocity `J_i v` at the current iterate, `lambda` its current
/// impulse.
pub fn solve(l: &LocalProblem, u: [f64; 3], lambda: [f64; 3]) -> ([f64; 3], Case) {
    let mut w = l.w;
    w[0][0] += l.r_n;
    // the law velocity at the current impulse, then at zero impulse of this contact
    let ul = l.law_velocity(u, lambda);
    let c = [0, 1, 2].map(|a| ul[a] - (0..3).map(|b| w[a][b] * lambda[b]).sum::<f64>());
    if c[0] >= 0.0 {
        return ([0.0; 3], Case::Open);
    }
    if let Some(s) = solve3(w, [-c[0], -c[1], -c[2]]) {
        if s[0] >= 0.0 && s[1].hypot(s[2]) <= l.mu * s[0] {
            return (s, Case::Stick);
        }
    }
    match slide(&w, c, l.mu) {
        Some(s) => (s, Case::Slide),
        None => (l.split(u, lambda), Case::Fallback),
    }
}

/// The sliding impulse on the ellipse at direction `θ` and `h(θ)`, `e · u_t` there; `None` where
/// the ellipse's radius is not positive and finite.
fn on_ellipse(w: &[[f64; 3]; 3], c: [f64; 3], mu: f64, theta: f64) -> Option<([f64; 3], f64, f64)> {
    let e = [theta.cos(), theta.sin()];
    let denom = w[0][0] + mu * (w[0][1] * e[0] + w[0][2] * e[1]);
    let rho = -mu * c[0] / denom;
    if !(rho.is_finite() && rho > 0.0 && denom > 0.0) {
        return None;
    }
    let lam = [rho / mu, rho * e[0], rho * e[1]];
    let ut = [1, 2].map(|a| c[a] + (0..3).map(|b| w[a][b] * lam[b]).sum::<f64>());
    Some((lam, -e[1] * ut[0] + e[0] * ut[1], e[0] * ut[0] + e[1] * ut[1]))
}

/// The sliding case by bracketing and bisection (module doc); `None` without a valid bracket.
fn slide(w: &[[f64; 3]; 3], c: [f64; 3], mu: f64) -> Option<[f64; 3]> {
    if mu <= 0.0 {
        return None; // frictionless: the split solve's exact normal update is the answer
    }
    let step = std::f64::consts::TAU / SECTORS as f64;
    let mut best: Option<([f64; 3], f64)> = None;
    for k in 0..SECTORS {
        let (mut a, mut b) = (k as f64 * step, (k + 1) as f64 * step);
        let (Some((_, ha, _)), Some((_, hb, _))) = (on_ellipse(w, c, mu, a), on_ellipse(w, c, mu, b)) else {
            continue;
        };
        if ha * hb > 0.0 {
            continue;
        }
        let mut fa = ha;
        for _ in 0..BISECTIONS {
            let m = 0.5 * (a + b);
            let Some((_, hm, _)) = on_ellipse(w, c, mu, m) else { break };
            if (hm <= 0.0) == (fa <= 0.0) {
                (a, fa) = (m, hm);
            } else {
                b = m;
            }
        }
        let Some((lam, h, along)) = on_ellipse(w, c, mu, 0.5 * (a + b)) else { continue };
        // the root must oppose the slip (e · u_t ≤ 0); of several, the smallest |h|
        if along <= 0.0 && best.is_none_or(|(_, bh)| h.abs() < bh) {
            best = Some((lam, h.abs()));
        }
    }
    best.map(|(lam, _)| lam)
}

/// `A⁻¹ b` for a 3×3 matrix by Cramer's rule; `None` when `A` is singular to round-off.
fn solve3(a: [[f64; 3]; 3], b: [f64; 3]) -> Option<[f64; 3]> {
    let det = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(&a);
    let scale = a.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
    if d.abs() <= 1e-12 * scale * scale * scale || !d.is_finite() {
        return None;
    }
    Some([0, 1, 2].map(|col| {
        let mut m = a;
        for r in 0..3 {
            m[r][col] = b[r];
        }
        det(&m) / d
    }))
}
