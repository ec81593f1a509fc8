//! The analytic R-norm projection onto the friction cone, `γ = P_F(y)` (Castro et al. Eq. 23 and
//! its closed form of §V-A / App. C), and its derivative `G = −∂γ/∂v_c = (∂γ/∂y) R⁻¹` (App. D,
//! Eq. 37 mapped through Eq. 38).
//!
//! Order: the harness's **(n, t1, t2)**. The paper writes per-contact vectors as (t1, t2, n); every
//! formula below is the paper's with the normal component moved first: `y = (y_n, y_t)`,
//! `R = diag(R_n, R_t, R_t)`, `F = {‖γ_t‖ ≤ μ γ_n}`, `F* = {μ ‖g_t‖ ≤ g_n}`.
//!
//! With `y_r = ‖y_t‖`, `t̂ = y_t / y_r`, `μ̃ = μ √(R_t/R_n)`, `μ̂ = μ R_t/R_n`, `f = 1/(1+μ̃²)`:
//!
//! | region | condition | `γ` | `G` |
//! |---|---|---|---|
//! | I stiction | `y_r ≤ μ y_n` | `y` | `R⁻¹` |
//! | II sliding | `−μ̂ y_r < y_n < y_r/μ` | `γ_n = f (y_n + μ̂ y_r)`, `γ_t = μ γ_n t̂` | `(f/R_n) a aᵀ + (μ γ_n / (R_t y_r)) blockdiag(0, I − t̂t̂ᵀ)`, `a = (1, μ t̂)` |
//! | III no contact | otherwise | 0 | 0 |
//!
//! A holonomic (bilateral) row — an extension beyond the paper, as Drake's
//! `SapHolonomicConstraint` — has the impulse set ℝ instead of `F` ([`ImpulseSet::Unconstrained`]):
//! its first component is not projected, `γ = (y_n, 0, 0)`, `G = diag(1/R_n, 0, 0)`
//! ([`Region::Holonomic`]), so its cost `½ R_n γ_n²` is an unconstrained quadratic in `v`.
//!
//! Boundaries (README §9): ∂F belongs to region I, the sliding inequalities are strict,
//! so ∂F° belongs to region III (Drake's convention). `μ = 0` is handled as the μ → 0 limit of
//! region II: `γ = (max(y_n, 0), 0, 0)`, `G = diag([y_n > 0]/R_n, 0, 0)` (the μ → 0 limit, README §9). Region II
//! needs `y_r > 0`, so no soft norm is needed: `γ_n / y_r` stays bounded there.

/// The three regions of the projection (App. C).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Region I: `y ∈ F`, `γ = y`.
    Stiction,
    /// Region II: `γ` on the cone's boundary.
    Sliding,
    /// Region III: `y` in the polar cone, `γ = 0`.
    NoContact,
    /// A holonomic row: `γ = (y_n, 0, 0)`, no projection.
    Holonomic,
}

/// The convex set an impulse lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImpulseSet {
    /// The friction cone `F = {‖γ_t‖ ≤ μ γ_n}` of a contact.
    FrictionCone,
    /// ℝ for the first component, nothing else: a holonomic (bilateral) row whose Jacobian has
    /// only its first row (the tangential rows are zero and `γ_t = 0`).
    Unconstrained,
}

/// Per-constraint regularisation, friction and impulse set: `R = diag(r_n, r_t, r_t)`, μ and `F`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConeParams {
    /// Friction coefficient μ (≥ 0).
    pub mu: f64,
    /// Normal regularisation `R_n` (s/kg, > 0).
    pub r_n: f64,
    /// Tangential regularisation `R_t` (s/kg, > 0).
    pub r_t: f64,
    /// The set `γ` is projected onto.
    pub set: ImpulseSet,
}

/// `γ = P_F(y)` (Eq. 23 closed form) and its region.
pub fn project(y: [f64; 3], c: &ConeParams) -> ([f64; 3], Region) {
    let (gamma, region, _) = project_impl(y, c, false);
    (gamma, region)
}

/// `γ = P_F(y)`, its region and `G = −∂γ/∂v_c = (∂γ/∂y) R⁻¹` (3×3, symmetric PSD).
pub fn project_with_hessian(y: [f64; 3], c: &ConeParams) -> ([f64; 3], Region, [[f64; 3]; 3]) {
    project_impl(y, c, true)
}

/// The regulariser cost `ℓ_R = ½ γᵀ R γ` of one contact (Eq. 35) (J).
pub fn cost(gamma: [f64; 3], c: &ConeParams) -> f64 {
    0.5 * (c.r_n * gamma[0] * gamma[0] + c.r_t * (gamma[1] * gamma[1] + gamma[2] * gamma[2]))
}

fn project_impl(y: [f64; 3], c: &ConeParams, hessian: bool) -> ([f64; 3], Region, [[f64; 3]; 3]) {
    let mut g = [[0.0; 3]; 3];
    let (mu, r_n, r_t) = (c.mu, c.r_n, c.r_t);
    let y_n = y[0];
    if c.set == ImpulseSet::Unconstrained {
        g[0][0] = 1.0 / r_n;
        return ([y_n, 0.0, 0.0], Region::Holonomic, g);
    }
    let y_r = (y[1] * y[1] + y[2] * y[2]).sqrt();
    if mu == 0.0 {
        if y_n > 0.0 {
            g[0][0] = 1.0 / r_n;
            let region = if y_r == 0.0 { Region::Stiction } else { Region::Sliding };
            return ([y_n, 0.0, 0.0], region, g);
        }
        return ([0.0; 3], Region::NoContact, g);
    }
    if y_r <= mu * y_n {
        if hessian {
            g[0][0] = 1.0 / r_n;
            g[1][1] = 1.0 / r_t;
            g[2][2] = 1.0 / r_t;
        }
        return (y, Region::Stiction, g);
    }
    let mu_hat = mu * r_t / r_n;
    if -mu_hat * y_r < y_n && y_n < y_r / mu {
        let mu_tilde2 = mu * mu_hat; // μ̃² = μ² R_t / R_n
        let f = 1.0 / (1.0 + mu_tilde2);
        let gn = f * (y_n + mu_hat * y_r);
        let t = [y[1] / y_r, y[2] / y_r];
        let gamma = [gn, mu * gn * t[0], mu * gn * t[1]];
        if hessian {
            let a = [1.0, mu * t[0], mu * t[1]];
            let s = f / r_n;
            for (i, gi) in g.iter_mut().enumerate() {
                for (j, gij) in gi.iter_mut().enumerate() {
                    *gij = s * a[i] * a[j];
                }
            }
            let d = mu * gn / (r_t * y_r);
            // P⊥ = I − t̂ t̂ᵀ on the tangent plane
            g[1][1] += d * (1.0 - t[0] * t[0]);
            g[2][2] += d * (1.0 - t[1] * t[1]);
            g[1][2] -= d * t[0] * t[1];
            g[2][1] -= d * t[0] * t[1];
        }
        return (gamma, Region::Sliding, g);
    }
    ([0.0; 3], Region::NoContact, g)
}
