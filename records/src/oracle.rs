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
    /// `error <= tolerance` and `error` finite ([`OracleCheck::passes`]; false if anything is NaN).
    pub pass: bool,
}

impl OracleCheck {
    /// A check with `error = |measured - expected|`.
    pub fn abs(name: &str, measured: f64, expected: f64, tolerance: f64) -> Self {
        Self::with_error(name, measured, expected, (measured - expected).abs(), tolerance)
    }
    /// A check with an explicit error measure.
    pub fn with_error(name: &str, measured: f64, expected: f64, error: f64, tolerance: f64) -> Self {
        Self { name: name.into(), measured, expected, error, tolerance, pass: Self::passes(error, tolerance) }
    }

    /// The verdict of an error against a tolerance: `error` finite and `error <= tolerance` (false
    /// if either is NaN). `pass` is always this; `signorini gate` recomputes it from a record's
    /// numbers and refuses a record whose stored flag disagrees.
    pub fn passes(error: f64, tolerance: f64) -> bool {
        error.is_finite() && error <= tolerance
    }

    /// Whether the stored `pass` is the verdict of the stored `error` and `tolerance`.
    pub fn consistent(&self) -> bool {
        self.pass == Self::passes(self.error, self.tolerance)
    }
}
