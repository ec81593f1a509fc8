//! `staggered`: staggered projections (Kaufman, Sueda, James & Pai 2008) — the frictional contact
//! problem of a step posed as two coupled convex problems, alternated to their common fixed point:
//! the normal (contact) projection, non-penetration given the current friction impulses, and the
//! friction projection, maximal dissipation in each contact's friction disc of radius `μ λ_n`
//! given the current normal impulses. Each is a QP solved by clarabel; the fixed point satisfies
//! Signorini's condition, Coulomb's exact cone and maximal dissipation at once, i.e. the rigid
//! Coulomb NCP. Method, options, claims and expected failures: `solvers/src/staggered/README.md`.

mod settings;
mod solver;
#[cfg(test)]
mod tests;

pub use settings::StaggeredSettings;
pub use solver::{Staggered, CHANGE_COLUMN};

use api::{AnsweredModel, Capabilities, SolverContext, SolverDef};

/// What staggered projections handle: rigid bodies, rigid and compliant contact (compliance on the
/// diagonal of the normal projection's `W`), the exact friction disc, joint rows (free unknowns of
/// the normal projection), and problems in Delassus form with a symmetric `W`. FEM bodies are not
/// claimed (README §7).
pub fn capabilities() -> Capabilities {
    Capabilities {
        rigid_bodies: true,
        rigid_contact: true,
        compliant_contact: true,
        exact_friction_cone: true,
        bilateral_constraints: true,
        delassus_form: true,
        ..Capabilities::default()
    }
}

impl SolverDef for Staggered {
    type Settings = StaggeredSettings;
    const NAME: &'static str = "staggered";
    const SUMMARY: &'static str =
        "staggered projections: normal QP and friction-disc QP (clarabel) alternated to their fixed point";
    const PAPER: &'static str = concat!(
        "D. M. Kaufman, S. Sueda, D. L. James, D. K. Pai, Staggered projections for frictional contact in multibody ",
        "systems, ACM Trans. Graph. 27(5) (SIGGRAPH Asia 2008); QPs solved with clarabel 0.11 (Goulart & Chen, 2024)"
    );
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: StaggeredSettings, _: &SolverContext) -> Self {
        Staggered::new(settings)
    }
    /// Dense: the step's Delassus matrix `W` is formed densely.
    fn working_memory(_: &StaggeredSettings, size: &api::def::ProblemSize) -> f64 {
        api::def::dense_working_memory(size)
    }
}
