//! [`SolveError`]: how a step fails when it produced nothing usable (a usable iterate comes back
//! with a [`crate::SolveStatus`] instead).

/// A step that produced nothing usable. The runner adds the step index.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SolveError {
    /// A NaN or infinity appeared.
    #[error("non-finite value in {what}")]
    NonFinite {
        /// Where it appeared.
        what: String,
    },
    /// A matrix factorization failed.
    #[error("factorization failed: {what}")]
    Factorization {
        /// Which matrix and why.
        what: String,
    },
    /// The line search could not find an acceptable step.
    #[error("line search failed: {what}")]
    LineSearch {
        /// Details.
        what: String,
    },
    /// The problem (as the solver formulates it) has no solution.
    #[error("infeasible: {what}")]
    Infeasible {
        /// Details.
        what: String,
    },
    /// The problem contains something the solver does not support.
    #[error("unsupported: {what}")]
    Unsupported {
        /// What.
        what: String,
    },
    /// The solver panicked (caught by the stepper; a bug in the solver).
    #[error("solver panicked: {what}")]
    Panic {
        /// The panic message.
        what: String,
    },
    /// Any other numerical breakdown.
    #[error("numerical failure: {what}")]
    Numerical {
        /// Details.
        what: String,
    },
}
