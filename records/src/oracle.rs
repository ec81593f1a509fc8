//! [`OracleCheck`]: one analytic check of a case as a record stores it.

use serde::{Deserialize, Serialize};

/// One oracle check, with the same name across solvers (stored in the run record's
/// `oracle` list).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OracleCheck {
    /// Check name (e.g. `acceleration`, `slides`, `e_q`).
    pub name: String,
    /// Measured value.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub measured: f64,
    /// Expected value.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub expected: f64,
    /// `|measured - expected|` unless the check says otherwise.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub error: f64,
    /// Tolerance on `error`.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub tolerance: f64,
    /// `error <= tolerance` (false if anything is NaN).
    pub pass: bool,
}

impl OracleCheck {
    /// A check with `error = |measured - expected|`.
    pub fn abs(name: &str, measured: f64, expected: f64, tolerance: f64) -> Self {
        Self::with_error(name, measured, expected, (measured - expected).abs(), tolerance)
    }
    /// A check with an explicit error measure.
    pub fn with_error(name: &str, measured: f64, expected: f64, error: f64, tolerance: f64) -> Self {
        Self { name: name.into(), measured, expected, error, tolerance, pass: error <= tolerance }
    }
}
