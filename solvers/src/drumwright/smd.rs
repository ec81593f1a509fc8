//! The spring–mass–damper schemes of §3 (Eqs. 7–14) as exact iteration matrices
//! `y₁ = A y₀`, `y = (x, v)`, for `m ẍ + b ẋ + k x = 0`, and their spectral radii: the oracle
//! layer behind the paper's stability figures (Figs. 1–3, §3.1; README §10.4). The constraint
//! solver applied to one spring is the implicit scheme exactly (README §10.4, tested in `tests.rs`).

/// Time-stepping scheme of §3.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Eqs. 7–8: `x₁ = x₀ + h v₀`, `v₁ = v₀ - (h/m)(b v₀ + k x₀)`.
    Explicit,
    /// Eqs. 11–12: `v₁ = v₀ - (h/m)(b v₁ + k x₀)`, `x₁ = x₀ + h v₁`.
    SemiImplicit,
    /// Eqs. 13–14: `v₁ = v₀ - (h/m)(b v₁ + k x₁)`, `x₁ = x₀ + h v₁`.
    Implicit,
}

/// The iteration matrix `A` (row-major 2×2) of `scheme` for mass `m`, stiffness `k`, damping `b`
/// and step `h` (the paper's §3.1).
pub fn iteration_matrix(scheme: Scheme, m: f64, k: f64, b: f64, h: f64) -> [[f64; 2]; 2] {
    match scheme {
        Scheme::Explicit => [[1.0, h], [-h * k / m, 1.0 - h * b / m]],
        Scheme::SemiImplicit => {
            let beta = 1.0 + h * b / m;
            [[1.0 - h * h * k / (m * beta), h / beta], [-h * k / (m * beta), 1.0 / beta]]
        }
        Scheme::Implicit => {
            let delta = 1.0 + h * b / m + h * h * k / m;
            [[1.0 - h * h * k / (m * delta), h / delta], [-h * k / (m * delta), 1.0 / delta]]
        }
    }
}

/// Spectral radius of a real 2×2 matrix from its trace and determinant (moduli of the roots of
/// `λ² - tr λ + det`).
pub fn spectral_radius(a: [[f64; 2]; 2]) -> f64 {
    let tr = a[0][0] + a[1][1];
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    let disc = tr * tr / 4.0 - det;
    if disc >= 0.0 {
        let s = disc.sqrt();
        (tr / 2.0 + s).abs().max((tr / 2.0 - s).abs())
    } else {
        det.sqrt()
    }
}

/// Closed-form stability verdicts (README §10.4): explicit Euler is stable iff `|1 + h λ_c| < 1` for
/// both continuous eigenvalues `λ_c = (-b ± √(b² - 4mk))/(2m)`; semi-implicit iff
/// `h² k/m < 4 + 2 h b/m`; implicit always (for `k, b ≥ 0`, `h > 0`).
pub fn is_stable_closed_form(scheme: Scheme, m: f64, k: f64, b: f64, h: f64) -> bool {
    match scheme {
        Scheme::Explicit => {
            let disc = b * b - 4.0 * m * k;
            if disc >= 0.0 {
                let s = disc.sqrt();
                [(-b + s) / (2.0 * m), (-b - s) / (2.0 * m)].iter().all(|l| (1.0 + h * l).abs() < 1.0)
            } else {
                let (re, im) = (-b / (2.0 * m), (-disc).sqrt() / (2.0 * m));
                (1.0 + h * re).powi(2) + (h * im).powi(2) < 1.0
            }
        }
        Scheme::SemiImplicit => h * h * k / m < 4.0 + 2.0 * h * b / m,
        Scheme::Implicit => true,
    }
}
