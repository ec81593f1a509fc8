//! [`LemkeSettings`] and [`LcpPgsSettings`]: the options of the two pyramid-LCP solvers.

use serde::{Deserialize, Serialize};

/// Fewest facets of the pyramid: three directions are the fewest that span the tangent plane
/// with nonnegative coefficients (so that `σ = 0` forces `u_t = 0`).
pub const MIN_FACETS: usize = 3;
/// Most facets (the LCP grows by one variable per facet and contact; 64 is far past where the
/// anisotropy `1 − cos(π/d)` stops mattering: 1.2e-3).
pub const MAX_FACETS: usize = 64;

/// Checks `facets` in `MIN_FACETS..=MAX_FACETS`.
fn check_facets(facets: usize) -> Result<(), api::FieldError> {
    if !(MIN_FACETS..=MAX_FACETS).contains(&facets) {
        return Err(api::FieldError::new(
            "facets",
            format!("must be in [{MIN_FACETS}, {MAX_FACETS}] (directions of the friction pyramid), got {facets}"),
        ));
    }
    Ok(())
}

/// Options of `lcp_lemke`: the pyramid LCP solved by Lemke's method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LemkeSettings {
    /// Facets `d` of the friction pyramid: tangent directions `2π m / d`, the first along `t1`
    /// (default 4, as ODE and Bullet's older solvers; 8 and 16 reduce the anisotropy).
    pub facets: usize,
    /// Most complementary pivots per step (default 100000). Lemke's method ends in finitely many
    /// pivots (lexicographic rule); on contact problems it takes about one to two per LCP
    /// variable, `(d + 2)` per contact. Past the budget the step returns the current basic
    /// solution with status `MaxIterations`.
    pub max_pivots: usize,
    /// The step is `Solved` when the returned `z` has `max |min(z, M z + q)| ≤ tolerance ·
    /// max(1, max |q|)` (m/s or N s; default 1e-9); otherwise `AlmostSolved` (pivoting lost
    /// digits). Lemke's answer is exact up to rounding; this only reports it.
    pub tolerance: f64,
}

impl Default for LemkeSettings {
    fn default() -> Self {
        Self { facets: 4, max_pivots: 100_000, tolerance: 1e-9 }
    }
}

impl api::Settings for LemkeSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        check_facets(self.facets)?;
        api::check_budget("max_pivots", self.max_pivots)?;
        api::check_positive("tolerance", self.tolerance)?;
        Ok(())
    }
}

/// Options of `lcp_pgs`: the pyramid LCP solved by block projected Gauss–Seidel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LcpPgsSettings {
    /// Facets `d` of the friction pyramid (default 4; as `lcp_lemke`).
    pub facets: usize,
    /// Most sweeps over all contacts (default 500, as pgs).
    pub max_iterations: usize,
    /// Stop when `||z^{k+1} − z^k||_∞ / max(||z^{k+1}||_∞, tiny) < tolerance` (dimensionless;
    /// default 1e-8, as pgs).
    pub tolerance: f64,
    /// Start from the previous step's impulses, matched by contact key, written on the pyramid
    /// (default true).
    pub warm_start: bool,
}

impl Default for LcpPgsSettings {
    fn default() -> Self {
        Self { facets: 4, max_iterations: 500, tolerance: 1e-8, warm_start: true }
    }
}

impl api::Settings for LcpPgsSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        check_facets(self.facets)?;
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        Ok(())
    }
}
