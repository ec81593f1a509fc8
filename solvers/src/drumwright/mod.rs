//! `drumwright`: Drumwright's unconditionally stable first-order constraint solver — every
//! constraint (joint, normal contact, tangential contact) is a virtual spring–damper in
//! constraint space, integrated by implicit Euler in the constraint variables and symplectic
//! Euler in the state; one step is one linear solve (joints only) or one convex QP / SOCP
//! (contacts), solved with clarabel.
//!
//! Problem (impulse units, `γ = h λ`; README.md for the full table with equation numbers):
//! `M (v+ - v*) = J_nᵀγ_n + J_tᵀγ_t + G_bᵀγ_b` (Eq. 37), joint rows `G_b v+ + r γ_b = v̂`
//! (Eqs. 51–53, 141), normal rows `J_n v+ + r γ_n ≥ v̂`, `γ_n ≥ 0` (Eqs. 84–85), tangential
//! slack `β = γ_t + h B_r J_t v+` (Eqs. 139–140), cone `‖γ_t‖ ≤ μ γ_n` (Eq. 120), objective
//! `½ζ‖γ_n‖² + ½‖γ_t‖² + ½‖β‖²` (Eq. 109). Rigid contacts and joints are the limit `K → ∞`
//! (`r = 0`). Lifted sparse form ([`lifted`], default) or the paper's reduced form
//! ([`reduced`]); options in [`DrumwrightSettings`]; the §3 integrator oracles in [`smd`].
//! FEM deformable bodies (an extension beyond the paper, README §2): `M` becomes the linearised
//! implicit step's `A = M + δt² K` on their DOFs (`toolkit::implicit`).

mod lifted;
mod model;
mod reduced;
mod settings;
pub mod smd;
mod solver;
#[cfg(test)]
mod tests;

pub use settings::{
    DrumwrightSettings, Form, FrictionSolve, GdotTerm, MuZero, NormalLaw, NormalModel, RowScaling, ZetaRule,
};
pub use solver::Drumwright;

use api::{Capabilities, SolveStatus, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "E. M. Drumwright, An Unconditionally Stable First-Order Constraint Solver for \
Multibody Systems (Toyota Research Institute, c. 2018); convex QP/SOCP solved with clarabel 0.11 \
(Goulart & Chen, 2024)";

/// What a clarabel infeasibility certificate means for drumwright's programs.
pub(crate) const INFEASIBLE_NOTE: &str =
    "the problem is always feasible (README §10.3), so this is numerical (large h B_r, README P4)";

/// What the solver handles: rigid bodies, joints, compliant contact (its native model) and rigid
/// contact (the `K → ∞` limit of the same law), with the exact friction cone; and FEM deformable
/// bodies through the linearised implicit step `A = M + δt² K` in place of `M` (an extension
/// beyond the paper, the route Drake takes with SAP; README §2).
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

/// The registry definition: `Registry::default().register::<Drumwright>()` in the root crate.
impl SolverDef for Drumwright {
    type Settings = DrumwrightSettings;
    const NAME: &'static str = "drumwright";
    const SUMMARY: &'static str =
        "Drumwright's first-order constraint solver: spring-damper constraints, convex QP/SOCP (clarabel)";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_iter";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: api::AnsweredModel = api::AnsweredModel::ConeProgram { residual_columns: &["r_prim", "r_dual"] };
    // the interior-point iterations run inside clarabel; only each cone program's answer is
    // handed over
    const HARNESS_STOPS: bool = false;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: DrumwrightSettings, _: &SolverContext) -> Self {
        Drumwright::new(settings)
    }
    /// Dense: the joint and Delassus matrices of the cone programs are formed densely.
    fn working_memory(_: &DrumwrightSettings, size: &api::def::ProblemSize) -> f64 {
        api::def::dense_working_memory(size)
    }
}

/// Which part of the problem one cone program solves.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stage<'a> {
    /// Normal and friction together (the paper).
    Joint,
    /// Frictionless normal problem (two-stage, stage 1).
    NormalOnly,
    /// Friction with the normal impulses fixed (two-stage, stage 2).
    FrictionGiven(&'a [f64]),
}

/// What a formulation returns (active contacts only).
pub(crate) struct Outcome {
    pub v: Vec<f64>,
    pub gn: Vec<f64>,
    pub gt: Vec<[f64; 2]>,
    pub gb: Vec<f64>,
    pub status: SolveStatus,
    pub iterations: usize,
}
