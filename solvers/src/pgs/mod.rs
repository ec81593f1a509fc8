//! `pgs`: projected (nonsmooth) Gauss–Seidel on the velocity-level Coulomb NCP with the exact
//! friction cone, per-contact 3×3 blocks — the baseline every other method is compared with, and
//! the worked example of `docs/adding-a-solver.md`.
//!
//! Problem (harness/src/problem.rs): `M (v − v*) = Jᵀ λ`, `u_i = J_i v`; per contact the normal
//! law `u_n − v̂ + r_n λ_n ≥ 0 ⊥ λ_n ≥ 0` (`(v̂, r_n)` = [`api::StepProblem::normal_law`],
//! `r_n = 0` for rigid contact) and Coulomb friction `||λ_t|| ≤ μ λ_n` with maximal dissipation.
//!
//! Bilateral (joint) rows `G_k v − v̂_k + r_k γ_k = 0` ([`api::BilateralRow::law`])
//! are solved in the same sweep, before the contacts, as ODE, Bullet and Box2D do: the row's
//! exact scalar update `γ_k ← γ_k − ω (G_k v − v̂_k + r_k γ_k) / (w_k + r_k)`, unclamped, with
//! `w_k = G_k M⁻¹ G_kᵀ` (`toolkit::contact_blocks::BilateralBlock`), warm-started from the
//! previous step's impulse of the same row.
//!
//! One sweep visits the contacts in problem order; for contact `i` it computes `u_i = J_i v`, the
//! local update `λ_i ← P_K(λ_i + ω (local(u_i, λ_i) − λ_i))` and then `v += M⁻¹ J_iᵀ Δλ_i`, which
//! touches only the contact's bodies (one or two in a scene; any number of DOF blocks in the
//! Cholesky view of an FCLIB local problem). The per-contact blocks are `toolkit::contact_blocks` and the local
//! solvers (`local = "split"` or `"cone"`) `kernels::contact_local`, shared with any solver built
//! the same way; the stopping test is the relative change of `λ` in the max norm. Method, options,
//! choices and limitations: `solvers/src/pgs/README.md`.

mod delassus;
mod islands;
mod settings;
mod solver;
#[cfg(test)]
mod tests;

pub use kernels::contact_local::Local;
pub use settings::{PgsSettings, SweepOrder};
pub use solver::Pgs;

use api::{Capabilities, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "Projected (nonsmooth) Gauss-Seidel, per-contact blocks, exact Coulomb cone: \
M. Jean, The non-smooth contact dynamics method, CMAME 177 (1999); Acary & Brogliato, Numerical Methods \
for Nonsmooth Dynamical Systems (2008), ch. 13 (NSGS); De Saxce & Feng (1991) for the cone fixed point";

/// What PGS handles: rigid bodies with rigid or compliant contact, the exact cone, bilateral
/// joint rows in the same sweep, and FEM deformable bodies on the Delassus operator of their
/// linearised implicit step (README).
pub fn capabilities() -> Capabilities {
    Capabilities {
        rigid_bodies: true,
        deformable_bodies: true,
        rigid_contact: true,
        compliant_contact: true,
        exact_friction_cone: true,
        bilateral_constraints: true,
        delassus_form: true,
        ..Capabilities::default()
    }
}

/// The registry definition: `Registry::default().register::<Pgs>()` in the root crate.
impl SolverDef for Pgs {
    type Settings = PgsSettings;
    const NAME: &'static str = "pgs";
    const SUMMARY: &'static str = "projected Gauss-Seidel, per-contact blocks, exact Coulomb cone (baseline)";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: api::AnsweredModel = api::AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: PgsSettings, _: &SolverContext) -> Self {
        Pgs::new(settings)
    }
}
