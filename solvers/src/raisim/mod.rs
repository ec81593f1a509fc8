//! `raisim`: RaiSim's per-contact iteration (Hwangbo, Lee & Hutter 2018): a Gauss–Seidel sweep
//! in which each contact's Coulomb problem, the others frozen, is solved exactly — open, sticking,
//! or sliding found by bisection on the ellipse where the plane `u_n = 0` cuts the friction cone.
//! The exact law (Signorini and the second-order cone with maximal dissipation), not a relaxation.
//! Method, options and limitations: `solvers/src/raisim/README.md`.

mod local;
mod settings;
mod solver;
#[cfg(test)]
mod tests;

pub use local::{solve as solve_contact, Case};
pub use settings::RaisimSettings;
pub use solver::Raisim;

use api::{AnsweredModel, Capabilities, SolverContext, SolverDef};

/// What RaiSim's sweep handles: rigid bodies with rigid or compliant contact, the exact cone, joint
/// rows in the same sweep (their exact scalar solve), FEM deformable bodies through the linearised
/// implicit step's Delassus blocks, and problems in Delassus form.
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

impl SolverDef for Raisim {
    type Settings = RaisimSettings;
    const NAME: &'static str = "raisim";
    const SUMMARY: &'static str = "RaiSim's per-contact iteration: exact per-contact Coulomb solve by bisection on the cone boundary, Gauss-Seidel sweep";
    const PAPER: &'static str =
        "J. Hwangbo, J. Lee, M. Hutter, Per-contact iteration method for solving contact dynamics, \
IEEE Robotics and Automation Letters 3(2) (2018)";
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: RaisimSettings, _: &SolverContext) -> Self {
        Raisim::new(settings)
    }
}
