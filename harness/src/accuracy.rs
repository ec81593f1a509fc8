//! The equal-accuracy mode (`signorini run --accuracy EPS`, suite key `accuracy = EPS`): every
//! solver is stopped by the harness, on every step, at the first iterate it hands over whose
//! yardstick is at most `EPS`, or by its budget (iteration cap, time limit), so that times and
//! iteration counts compare solvers at one accuracy instead of at each solver's own criterion.
//!
//! - **The yardstick** ([`StopMeasure`]): for a solver of the contact model itself, the natural
//!   map of each contact's own law relative to the free contact velocity,
//!   `||F(λ, J v + w)||_2 / ||J v* + w||_2` (toolkit `ContactBlocks::residuals(v, λ).1 /
//!   ||q||_2`, the column `yardstick_model_natmap_rel` of the convergence figures; the rigid
//!   natural map `natmap_rel_l2` where every contact is rigid), or Castro et al.'s momentum error
//!   (Eq. 32, `yardstick_momentum_rel`) when it is larger: an iterate must satisfy the contact
//!   law and the momentum balance both (for PGS and CANAL, whose iterates balance momentum, the
//!   second is round-off). For Anitescu's CCP (ccp_pgs, ccp_admm, apgd) the same with the CCP's
//!   natural map `λ − P_K(λ − ũ)` (no De Saxcé shift); for the pyramid LCP (lcp_pgs, lcp_lemke)
//!   with the natural map of its polygonal friction law, at the solver's `facets`. For SAP's
//!   regularised model the momentum error alone: its impulses follow from the velocity by the
//!   model's own law, so momentum balance (the gradient of SAP's convex cost) is its model's only
//!   residual. For drumwright's cone program the program's infeasibility (normal rows, cone,
//!   bilateral rows) and the momentum error; its optimality is not measured (the multipliers it
//!   needs are not in an answer). The rigid error stays in each step's `natmap_rel_l2`, beside it.
//! - **The solver's own tolerance** (the setting [`api::SolverDef::TOLERANCE`] names) is set to
//!   [`OWN_TOLERANCE_UNDER_HARNESS`], out of reach, so its own criterion does not stop it first.
//!   A solver whose iterations run inside a library, or whose iterates are no answers
//!   ([`api::SolverDef::HARNESS_STOPS`] false: drumwright's interior point, Lemke's pivots), is
//!   not stopped: its tolerance is set to `EPS`, and the harness grades its answer alone.
//! - **A step reached `EPS`** when the answer the solver returned measures at most `EPS` (the
//!   harness evaluates the answer once more, so a solver that returns without handing over an
//!   iterate, e.g. on a step without contacts, is measured too). Its time is the solver's wall
//!   time with the harness's yardstick evaluations left out.
//!
//! With the mode off nothing of this runs: the log has no stopping rule and the records are
//! those of the default mode, byte for byte apart from timings.

use crate::log::IterationLog;
use crate::metrics::yardstick::{stop_yardstick, StopMeasure};
use crate::params::{ParamError, Params};
use crate::problem::StepProblem;
use crate::solver::StepSolution;
use api::{AnsweredModel, SolverEntry, StopRule, Yardstick};
use records::StepAccuracy;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A solver's own tolerance when the harness stops it: far below anything reachable in double
/// precision, so only the harness's rule, the budget or the time limit end it.
pub const OWN_TOLERANCE_UNDER_HARNESS: f64 = 1e-300;

/// The equal-accuracy mode of one pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    /// The accuracy.
    pub eps: f64,
    /// The yardstick.
    pub measure: StopMeasure,
    /// The contact model the solver answers: read only to record its own residual beside the
    /// verdict ([`StepAccuracy::own`]), never to decide it.
    pub model: AnsweredModel,
    /// Whether the harness's rule can stop the solver ([`api::SolverDef::HARNESS_STOPS`]).
    pub harness_stops: bool,
}

/// Why an accuracy is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("accuracy {0}: expected a finite number above 0")]
pub struct BadAccuracy(pub f64);

/// `eps` if it is an accuracy (finite, above 0).
pub fn check_eps(eps: f64) -> Result<f64, BadAccuracy> {
    if eps.is_finite() && eps > 0.0 {
        Ok(eps)
    } else {
        Err(BadAccuracy(eps))
    }
}

impl Accuracy {
    /// The mode at `eps` for a solver of the rigid contact model that the harness can stop.
    pub fn new(eps: f64) -> Self {
        Accuracy { eps, measure: StopMeasure::ContactModel, model: AnsweredModel::RigidCoulomb, harness_stops: true }
    }

    /// The mode at `eps` for the solver `entry` with the settings `params` (the pyramid model's
    /// facet count is read from them: an error when they hold none).
    pub fn for_solver(eps: f64, entry: &SolverEntry, params: &Params) -> Result<Self, ParamError> {
        let measure = StopMeasure::of(entry.model, params).map_err(|e| ParamError::BadValue {
            key: e.setting.to_string(),
            owner: entry.name.to_string(),
            why: e.to_string(),
        })?;
        Ok(Accuracy { eps, measure, model: entry.model, harness_stops: entry.harness_stops })
    }

    /// The solver's own tolerance in this mode (see the module doc).
    pub fn own_tolerance(&self) -> f64 {
        if self.harness_stops {
            OWN_TOLERANCE_UNDER_HARNESS
        } else {
            self.eps
        }
    }

    /// Sets `entry`'s own tolerance in `params` to [`Self::own_tolerance`].
    pub fn apply(&self, entry: &SolverEntry, params: &mut Params) -> Result<(), ParamError> {
        params.set_value(entry.tolerance, &serde_json::Value::from(self.own_tolerance()), entry.name)
    }

    /// The step's yardstick, timed: the clock holds the nanoseconds spent in it.
    fn timed_yardstick(&self, problem: &StepProblem<'_>) -> (Yardstick, Arc<AtomicU64>) {
        let inner = stop_yardstick(problem, self.measure);
        let clock = Arc::new(AtomicU64::new(0));
        let c = Arc::clone(&clock);
        let timed: Yardstick = Arc::new(move |v, imp, g| {
            let t = Instant::now();
            let y = inner(v, imp, g);
            c.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
            y
        });
        (timed, clock)
    }

    /// `log` with this mode's stopping rule on `problem`, and what [`Self::grade`] needs after
    /// the step.
    /// A solver the harness cannot stop ([`api::SolverDef::HARNESS_STOPS`] false) gets no rule:
    /// its own tolerance, set to `EPS`, ends its solve, and [`Self::grade`] measures the answer.
    pub fn arm(&self, problem: &StepProblem<'_>, log: IterationLog) -> (IterationLog, ArmedStep) {
        let (yardstick, clock) = self.timed_yardstick(problem);
        let log = if self.harness_stops {
            log.with_stop_rule(StopRule { yardstick: Arc::clone(&yardstick), eps: self.eps })
        } else {
            log
        };
        (log, ArmedStep { yardstick, clock })
    }

    /// The step's verdict from its `log`, the answer `sol` and the solver's wall time `wall_s`:
    /// the harness's yardstick on the answer alone decides; the solver's own residual is only
    /// recorded beside it.
    pub fn grade(&self, armed: &ArmedStep, log: &IterationLog, sol: &StepSolution, wall_s: f64) -> StepAccuracy {
        let answer = (armed.yardstick)(&sol.v, &sol.impulses, &sol.bilateral);
        let best = match log.best_yardstick() {
            Some(b) if !answer.is_nan() => b.min(answer),
            Some(b) => b,
            None => answer,
        };
        let reached = answer <= self.eps;
        let yardstick_s = armed.clock.load(Ordering::Relaxed) as f64 * 1e-9;
        StepAccuracy {
            reached,
            iterations: sol.iterations,
            time_s: (wall_s - yardstick_s).max(0.0),
            best,
            own: self.model.own_residual(log),
        }
    }
}

/// A step armed with the stopping rule ([`Accuracy::arm`]).
pub struct ArmedStep {
    yardstick: Yardstick,
    clock: Arc<AtomicU64>,
}
