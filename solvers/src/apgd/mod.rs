//! `apgd`: accelerated projected gradient descent on Anitescu's CCP (Mazhar, Heyn, Negrut,
//! Tasora 2015, Chrono's APGD): Nesterov's accelerated projected gradient on the convex program
//! `min ½ xᵀ W x + qᵀ x` over the friction cones (`toolkit::cone_qp`), with a backtracking
//! Lipschitz estimate that shrinks by 0.9 every iteration, the gradient restart of the momentum,
//! and the best iterate by the residual as the answer. Method, options and expected failures:
//! `solvers/src/apgd/README.md`.

mod settings;
mod solver;
#[cfg(test)]
mod tests;

pub use settings::ApgdSettings;
pub use solver::Apgd;

use api::{AnsweredModel, Capabilities, SolverContext, SolverDef};

/// The log column of the CCP's own natural-map residual (`toolkit::cone_qp`).
pub const CCP_RESIDUAL: &str = toolkit::cone_qp::RESIDUAL_COLUMN;

/// What APGD handles: the CCP's (rigid bodies, rigid and compliant contact, joint rows as free
/// unknowns, FEM deformable bodies through the implicit step's Delassus operator), and problems in
/// Delassus form with a symmetric `W` (a non-symmetric one has no objective to descend: refused).
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

impl SolverDef for Apgd {
    type Settings = ApgdSettings;
    const NAME: &'static str = "apgd";
    const SUMMARY: &'static str =
        "Nesterov-accelerated projected gradient on Anitescu's CCP, adaptive step and restart (Chrono)";
    const PAPER: &'static str = concat!(
        "H. Mazhar, T. Heyn, D. Negrut, A. Tasora, Using Nesterov's method to accelerate multibody dynamics with ",
        "friction and contact, ACM Trans. Graph. 34(3) (2015); the CCP of M. Anitescu, Math. Program. 105 (2006)"
    );
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = AnsweredModel::Relaxed { residual_columns: &[CCP_RESIDUAL] };
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: ApgdSettings, _: &SolverContext) -> Self {
        Apgd::new(settings)
    }
    fn working_memory(_: &ApgdSettings, size: &api::def::ProblemSize) -> f64 {
        api::def::dense_working_memory(size)
    }
}
