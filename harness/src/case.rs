//! The interface of a canonical case: parameters -> [`Scenario`], and an oracle that grades a
//! finished run's [`Trace`].

use crate::metrics::StepMetrics;
use crate::model::World;
use crate::params::{ParamError, Params};
use crate::solver::Capabilities;
use serde::{Deserialize, Serialize};

/// A built scene ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Initial world.
    pub world: World,
    /// Time step (s).
    pub dt: f64,
    /// Number of steps.
    pub steps: usize,
    /// Contact detection margin (m): pairs closer than this become (speculative) contacts.
    pub margin: f64,
    /// What a solver must support to run it.
    pub needs: Capabilities,
}

/// The states and metrics of a run, as the oracle sees them.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Time step (s).
    pub dt: f64,
    /// `q[k]` = positions after `k` steps (`q[0]` initial).
    pub q: Vec<Vec<f64>>,
    /// `v[k]` = velocities after `k` steps.
    pub v: Vec<Vec<f64>>,
    /// `metrics[k]` = metrics of step `k + 1` (from `q[k]` to `q[k+1]`).
    pub metrics: Vec<StepMetrics>,
    /// Whether the run completed all steps.
    pub completed: bool,
}

/// One oracle check, with the same name across solvers (stored in the run record's
/// `oracle` list).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OracleCheck {
    /// Check name (e.g. `acceleration`, `slides`, `e_q`).
    pub name: String,
    /// Measured value.
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub measured: f64,
    /// Expected value.
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub expected: f64,
    /// `|measured - expected|` unless the check says otherwise.
    #[serde(deserialize_with = "crate::record::nullable_f64")]
    pub error: f64,
    /// Tolerance on `error`.
    #[serde(deserialize_with = "crate::record::nullable_f64")]
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

/// Error building a case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaseError {
    /// A parameter is unknown or invalid.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The built world is invalid.
    #[error("case '{case}': {why}")]
    Invalid {
        /// Case name.
        case: String,
        /// What is wrong.
        why: String,
    },
}

/// A canonical case. Implementations live in the `cases` crate, one file per scene, with
/// default parameters in a TOML file beside the code.
pub trait Case: Send + Sync {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// One-line description.
    fn summary(&self) -> &'static str;
    /// Default parameters.
    fn defaults(&self) -> Params;
    /// Builds the scene. Must validate parameters (ranges, finiteness) with errors naming them.
    fn build(&self, params: &Params) -> Result<Scenario, CaseError>;
    /// Grades a run against the case's analytic expectations.
    fn oracle(&self, params: &Params, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck>;
}
