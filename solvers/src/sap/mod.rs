//! `sap`: the Semi-Analytic Primal solver of Castro, Permenter and Han, "An Unconstrained Convex
//! Formulation of Compliant Contact" (IEEE T-RO 2022, arXiv 2110.10107) — the convex
//! approximation of compliant frictional contact solved as an unconstrained, strongly convex
//! problem in the velocities (Eq. 24) by Newton's method with an exact line search.
//!
//! Files (Drake's `multibody/contact_solvers/sap/` layout):
//! - [`settings`]: [`SapSettings`] (scheme, tolerances, β, σ, line search);
//! - [`problem`]: [`SapProblem`] from a `api::StepProblem` — `A` (Eq. 15), `v*` (stage 1),
//!   `J`, per contact `R`, `v̂` (Eq. 29–30), and the joints' holonomic rows (an extension beyond
//!   the paper, as Drake's `SapHolonomicConstraint`);
//! - [`projection`]: `γ = P_F(y)` with its three regions and `G = −∂γ/∂v_c` (App. C–D);
//! - [`model`]: cost `ℓ_p` (Eq. 24), gradient, Hessian `H = A + Jᵀ G J` and its sparse pattern;
//! - [`line_search`]: exact line search (rtsafe), derivatives in O(n_c);
//! - [`solver`]: [`Sap`], the Newton loop (Alg. 2) and the stopping rule (Eq. 26);
//! - [`reference`]: the same primal problem (Eq. 19) solved by clarabel, an independent oracle.
//!
//! Per-contact vectors are in the harness's (n, t1, t2) order throughout; the paper's (t1, t2, n)
//! formulas are rewritten accordingly (README "Conventions").

pub mod line_search;
pub mod model;
pub mod problem;
pub mod projection;
pub mod reference;
pub mod settings;
pub mod solver;
#[cfg(test)]
mod tests;

pub use problem::{ElasticTerm, SapConstraint, SapProblem};
pub use settings::{LineSearchStart, SapSettings, Scheme};
pub use solver::{Criterion, Sap, SapStats};

use api::{Capabilities, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "A. M. Castro, F. N. Permenter, X. Han, An Unconstrained Convex Formulation of Compliant \
Contact, IEEE Transactions on Robotics 39(2), 2023 (arXiv 2110.10107): SAP, two-stage theta-method, analytic \
projection, Newton with exact line search";

/// What SAP handles: rigid bodies, compliant contact, rigid contact (through the near-rigid
/// regularisation, Eq. 29), the exact Coulomb cone, and bilateral constraints as holonomic rows
/// (an extension beyond the paper, as Drake's `SapHolonomicConstraint`; README §2), and FEM
/// deformable bodies through the linearised implicit step `A = M + δt² K` (an extension beyond the
/// paper, as Drake simulates its deformables with SAP; README §2).
pub fn capabilities() -> Capabilities {
    Capabilities {
        rigid_bodies: true,
        deformable_bodies: true,
        compliant_contact: true,
        rigid_contact: true,
        exact_friction_cone: true,
        bilateral_constraints: true,
        ..Capabilities::default()
    }
}

/// The registry definition: `Registry::default().register::<Sap>()` in the root crate.
impl SolverDef for Sap {
    type Settings = SapSettings;
    const NAME: &'static str = "sap";
    const SUMMARY: &'static str =
        "SAP (Castro et al.): convex compliant contact, Newton + exact line search, theta-method";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "rel_tolerance";
    const MODEL: api::AnsweredModel = api::AnsweredModel::Regularised { residual_columns: &["grad_rel"] };
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: SapSettings, _: &SolverContext) -> Self {
        Sap::new(settings)
    }
}
