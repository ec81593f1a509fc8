//! `ccp_pgs` and `ccp_admm`: Anitescu's cone complementarity relaxation of Coulomb friction (the
//! contact model of MuJoCo and of ContactBench's CCP solvers), solved by projected Gauss–Seidel
//! and by ContactBench's dual ADMM with its spectral `ρ` update.
//!
//! Both solve the CCP `K ∋ x ⊥ W x + q ∈ K*` of `toolkit::cone_qp` (the convex program
//! `min ½ xᵀ W x + qᵀ x` over the product of friction cones, joint rows free): Coulomb's law with the
//! De Saxcé term `μ ‖u_t‖ e_n` dropped, so a sliding contact separates at `u_n = μ ‖u_t‖`. The two
//! methods are two registered names (two columns of the matrix, one model); method, options and
//! the expected failures of the relaxation: `solvers/src/ccp/README.md`.

mod admm;
mod pgs;
mod settings;
#[cfg(test)]
mod tests;

pub use admm::CcpAdmm;
pub use pgs::CcpPgs;
pub use settings::{CcpAdmmSettings, CcpPgsSettings, RhoUpdate};

use api::{AnsweredModel, Capabilities, SolverContext, SolverDef};

/// The log column of the CCP's own natural-map residual (`toolkit::cone_qp`).
pub const CCP_RESIDUAL: &str = toolkit::cone_qp::RESIDUAL_COLUMN;

/// The CCP is a relaxation of the rigid NCP: its residual column is graded as the model's own.
const MODEL: AnsweredModel = AnsweredModel::Relaxed { residual_columns: &[CCP_RESIDUAL] };

/// What both CCP solvers handle: rigid bodies, rigid and compliant contact (compliance on the
/// diagonal of `W`), joint rows (free unknowns of the CCP), FEM deformable bodies through the
/// linearised implicit step's Delassus operator, and problems in Delassus form. The cone is the
/// exact second-order cone: the relaxation is in the law (no De Saxcé term), not in the cone.
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

impl SolverDef for CcpPgs {
    type Settings = CcpPgsSettings;
    const NAME: &'static str = "ccp_pgs";
    const SUMMARY: &'static str = "Anitescu's CCP (convex relaxation, MuJoCo/ContactBench) by projected Gauss-Seidel";
    const PAPER: &'static str = concat!(
        "M. Anitescu, Optimization-based simulation of nonsmooth rigid multibody dynamics, Math. Program. 105 (2006); ",
        "projected Gauss-Seidel on the CCP as in ContactBench: Q. Le Lidec et al., Contact models in robotics: a comparative analysis, IEEE T-RO (2024)"
    );
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = MODEL;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: CcpPgsSettings, _: &SolverContext) -> Self {
        CcpPgs::new(settings)
    }
    fn working_memory(_: &CcpPgsSettings, size: &api::def::ProblemSize) -> f64 {
        api::def::dense_working_memory(size)
    }
}

impl SolverDef for CcpAdmm {
    type Settings = CcpAdmmSettings;
    const NAME: &'static str = "ccp_admm";
    const SUMMARY: &'static str =
        "Anitescu's CCP (convex relaxation) by ContactBench's dual ADMM with spectral rho update";
    const PAPER: &'static str = concat!(
        "M. Anitescu, Optimization-based simulation of nonsmooth rigid multibody dynamics, Math. Program. 105 (2006); ",
        "ADMM on the CCP with spectral rho update: Q. Le Lidec et al., Contact models in robotics: a comparative analysis, IEEE T-RO (2024)"
    );
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = MODEL;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: CcpAdmmSettings, _: &SolverContext) -> Self {
        CcpAdmm::new(settings)
    }
    fn working_memory(_: &CcpAdmmSettings, size: &api::def::ProblemSize) -> f64 {
        api::def::dense_working_memory(size)
    }
}
