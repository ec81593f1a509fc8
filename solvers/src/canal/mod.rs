//! `canal`: Cascaded Newton-based Augmented Lagrangian (Lee et al. 2025, Algorithm 1).
//!
//! Problem (harness/src/problem.rs, `θ = 0` so `v̂ = v+`, `A = M`, `b = M v*`):
//! `M v = b + Jᵀ λ + Gᵀ γ` with the Signorini–Coulomb law per contact (rigid, or the compliant
//! normal law as the regularisation of the normal row, an extension) and the velocity-level law
//! per bilateral row. FEM deformable bodies (an extension) take the linearised backward-Euler step
//! of `toolkit::implicit`: `A = M + δt² K` and `b = A v*` on their DOFs, prescribed DOFs held.
//! Each AL iteration freezes the De Saxcé term
//! `p_i = μ_i ||z_{i,t}||` at the previous slack, which turns the surrogate into the minimisation
//! of a strongly convex piecewise-quadratic `h(v)` (Eq. 22) whose gradient is the residual (21);
//! `h` is minimised by Newton steps with the Hessian (24), factored by the sparse Cholesky of
//! `kernels` with the symbolic analysis reused, and the exact line search (26) by rtsafe.
//! The multiplier update is `u = −λ` (Eq. 12), the penalty rule Eq. (27). Options `inner =
//! trdogleg | damped_newton` swap the inner solve for the strict-operator baselines of Table II
//! (`strict.rs`). Equations, defaults, choices and deviations: `solvers/src/canal/README.md`.

mod model;
mod settings;
mod solver;
mod strict;
#[cfg(test)]
pub(crate) mod tests;

pub use settings::{CanalSettings, Inner};
pub use solver::{Canal, CanalStats};

use api::{Capabilities, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "J. Lee, M. Lee, S. Park, J. Yun, D. Lee, Variations of Augmented Lagrangian for \
Robotic Multi-Contact Simulation (2025): CANAL, Algorithm 1, Eqs. (11)-(27)";

/// What CANAL handles: rigid bodies, rigid contact with the exact cone, compliant contact (an
/// extension: the Kelvin–Voigt law as the regularisation of the normal row, README §2), bilateral
/// joints, FEM deformable bodies (an extension: their linearised implicit step, README §2).
pub fn capabilities() -> Capabilities {
    Capabilities {
        rigid_bodies: true,
        deformable_bodies: true,
        rigid_contact: true,
        compliant_contact: true,
        exact_friction_cone: true,
        bilateral_constraints: true,
        ..Capabilities::default()
    }
}

/// The registry definition: `Registry::default().register::<Canal>()` in the root crate.
impl SolverDef for Canal {
    type Settings = CanalSettings;
    const NAME: &'static str = "canal";
    const SUMMARY: &'static str = "cascaded Newton-based augmented Lagrangian, exact cone (Lee et al. 2025)";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_al_iterations";
    const TOLERANCE: &'static str = "al_tolerance";
    const MODEL: api::AnsweredModel = api::AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: CanalSettings, _: &SolverContext) -> Self {
        Canal::new(settings)
    }
}
