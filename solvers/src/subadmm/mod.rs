//! `subadmm`: subsystem-based ADMM (Lee et al. 2025, Algorithm 2).
//!
//! Problem as in `canal` (`A = M`, `b = M v*`, rigid SCC per contact, velocity-level law per joint
//! row). Each iteration solves one small SPD system per subsystem (a free body, or bodies joined by
//! joints: the DOF layout's `subsystem` ids, in the joint space of their kinematic tree: CRBA and
//! tree `LᵀDL`), in parallel, then a closed-form strict projection per
//! contact (Eq. 38), in parallel; the penalty adapts to the primal/dual residual ratio (43) from the
//! paper's pseudo-density initial value. `split = body | subsystem | none` gives the Table III
//! ablation. FEM deformable bodies (an extension) take the linearised backward-Euler step of
//! `toolkit::implicit`: each is one unit whose dynamics matrix is `A' = M + δt² K'` (sparse
//! factor), `b = A' v*`, prescribed DOFs held exactly. Equations, defaults, choices and
//! deviations: `solvers/src/subadmm/README.md`.

mod settings;
mod setup;
mod solver;
#[cfg(test)]
mod tests;
mod tree;
mod units;

pub use settings::{Split, SubAdmmSettings};
pub use solver::SubAdmm;

use api::{Capabilities, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "J. Lee, M. Lee, S. Park, J. Yun, D. Lee, Variations of Augmented Lagrangian for \
Robotic Multi-Contact Simulation (2025): SubADMM, Algorithm 2, Eqs. (28)-(43)";

/// What SubADMM handles: rigid bodies, rigid contact with the exact cone, compliant contact (an
/// extension: the Kelvin–Voigt law as the regularisation of the normal row, README §2), bilateral
/// joints, FEM deformable bodies (an extension: their linearised implicit step, README §11).
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

/// The registry definition: `Registry::default().register::<SubAdmm>()` in the root crate.
impl SolverDef for SubAdmm {
    type Settings = SubAdmmSettings;
    const NAME: &'static str = "subadmm";
    const SUMMARY: &'static str =
        "subsystem-based ADMM, per-subsystem solves in parallel, strict cone projection (Lee et al. 2025)";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: api::AnsweredModel = api::AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: SubAdmmSettings, _: &SolverContext) -> Self {
        SubAdmm::new(settings)
    }
}
