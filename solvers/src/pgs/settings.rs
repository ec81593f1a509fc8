//! [`PgsSettings`]: the options of PGS, their defaults and their validation.

use kernels::contact_local::Local;
use serde::{Deserialize, Serialize};

/// Options of the projected Gauss–Seidel solver. Every field has a default, so a run names only
/// what it changes (`signorini run --set solver.omega=1.3` goes through [`api::Params`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PgsSettings {
    /// Most sweeps over all contacts (default 500). PGS converges linearly, at a rate that degrades
    /// with the conditioning of the Delassus matrix (stacks, mass ratios); 500 sweeps reach
    /// `tolerance` on the small canonical cases and bound the cost elsewhere, where the run then
    /// reports `MaxIterations` instead of hiding the slow convergence.
    pub max_iterations: usize,
    /// Stop when `||λ^{k+1} − λ^k||_∞ / max(||λ^{k+1}||_∞, tiny) < tolerance` (dimensionless;
    /// default 1e-8).
    pub tolerance: f64,
    /// Local solver per contact: `"split"` (exact normal update, then exact tangential update on
    /// the friction disk) or `"cone"` (one De Saxcé projection onto the cone) (default `"split"`).
    pub local: Local,
    /// Over-relaxation factor `ω` in (0, 2): `λ ← P_K(λ + ω (λ_local − λ))` (default 1).
    pub omega: f64,
    /// Start from the previous step's impulses, matched by contact key (default true).
    pub warm_start: bool,
    /// Order of the contacts within a sweep (joint rows always come first, in order):
    /// `"forward"` (detection order), `"symmetric"` (forward and backward sweeps alternate:
    /// symmetric Gauss–Seidel) or `"shuffled"` (a new pseudo-random permutation every sweep,
    /// seeded identically every step, so runs are reproducible) (default `"forward"`).
    pub order: SweepOrder,
    /// Anderson acceleration of the sweep (`kernels::anderson`): the number of past sweeps whose
    /// differences extrapolate the next iterate (0 = plain PGS). The accelerated impulses are
    /// projected onto their cones; a sweep whose residual `||g(x) − x||₂` grows more than
    /// [`ANDERSON_RESTART`]-fold over the previous one restarts the history. The fixed points,
    /// and so the stopping test and the answer, are those of plain PGS (default 0).
    pub anderson_memory: usize,
    /// Nonsmooth nonlinear conjugate gradient acceleration of the sweep (NNCG; Silcowitz, Niebe
    /// & Erleben, The Visual Computer 26 (2010)): after each sweep `x ← PGS(x) + β p` with the
    /// Fletcher–Reeves `β = ||∇f_{k+1}||² / ||∇f_k||²`, `∇f = −(PGS(x) − x)`, and
    /// `p ← β p − ∇f`; `p = 0` (restart) when `β > 1`. As in the paper the extrapolated impulses
    /// are not projected (the next sweep projects each contact), and the last sweep is never
    /// extrapolated. The fixed points, and so the stopping test and the answer, are those of
    /// plain PGS. Not together with `anderson_memory > 0` (default false).
    pub nncg: bool,
    /// Sweep each island on its own (default false): the contacts and joint rows are split into
    /// islands, groups joined through moving bodies (the ground joins nothing), and each island
    /// sweeps until its own stopping test holds or `max_iterations` is spent. Islands do not
    /// interact within a step, so the fixed points are those of one sweep over everything; a
    /// converged island stops costing sweeps while another still converges. The step converges
    /// when every island does; its `iterations` are the most sweeps any island took.
    pub islands: bool,
}

/// Growth of the sweep residual that restarts the Anderson history ([`PgsSettings::anderson_memory`]).
pub const ANDERSON_RESTART: f64 = 2.0;

/// Contact order within a sweep ([`PgsSettings::order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepOrder {
    /// Detection order every sweep.
    Forward,
    /// Forward, then backward, alternating.
    Symmetric,
    /// A fresh pseudo-random permutation every sweep.
    Shuffled,
}

impl Default for PgsSettings {
    fn default() -> Self {
        Self {
            max_iterations: 500,
            tolerance: 1e-8,
            local: Local::Split,
            omega: 1.0,
            warm_start: true,
            order: SweepOrder::Forward,
            anderson_memory: 0,
            nncg: false,
            islands: false,
        }
    }
}

impl api::Settings for PgsSettings {
    fn validate(&self) -> Result<(), api::FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        if self.anderson_memory > 50 {
            return Err(api::FieldError::new(
                "anderson_memory",
                format!("must be at most 50 (a few past sweeps suffice), got {}", self.anderson_memory),
            ));
        }
        if self.nncg && self.anderson_memory > 0 {
            return Err(api::FieldError::new(
                "nncg",
                format!(
                    "cannot be combined with anderson_memory = {} (both extrapolate the sweep; choose one)",
                    self.anderson_memory
                ),
            ));
        }
        api::check_in("omega", self.omega, api::Bound::Open(0.0), api::Bound::Open(2.0))?;
        Ok(())
    }
}
