//! `lcp_lemke` and `lcp_pgs`: the velocity-level contact LCP with a polyhedral (pyramidal)
//! friction cone of Stewart & Trinkle (1996) and Anitescu & Potra (1997) — the model of ODE's and
//! Bullet's older solvers and of ContactBench's LCP — solved by Lemke's complementary pivoting
//! method (exact, lexicographic anti-cycling rule, `kernels::lcp`) or by block projected
//! Gauss–Seidel on the same LCP (each contact's `d + 2`-variable LCP solved exactly by Lemke with
//! the others frozen).
//!
//! The LCP and its friction set: [`pyramid`]; the shared step and Delassus-form assembly:
//! [`core`]; the two methods: [`solver`]. Both answer the pyramid model, not the rigid Coulomb
//! cone: their own residual is the LCP's min map (log column `lcp_minmap_abs_linf`), graded
//! beside the harness's rigid natural map. Method, choices, claims and expected failures:
//! `solvers/src/lcp/README.md`.

pub mod core;
pub mod pyramid;
mod settings;
mod solver;
#[cfg(test)]
mod tests;

pub use settings::{LcpPgsSettings, LemkeSettings, MAX_FACETS, MIN_FACETS};
pub use solver::{LcpLemke, LcpPgs, LCP_RESIDUAL};

use api::{AnsweredModel, Capabilities, ProblemSize, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "D. E. Stewart & J. C. Trinkle, An implicit time-stepping scheme for rigid body dynamics \
with inelastic collisions and Coulomb friction, IJNME 39 (1996); M. Anitescu & F. A. Potra, Formulating dynamic \
multi-rigid-body contact problems with friction as solvable linear complementarity problems, Nonlinear Dynamics 14 \
(1997); C. E. Lemke, Bimatrix equilibrium points and mathematical programming, Management Science 11 (1965)";

/// What both LCP solvers handle: rigid bodies with rigid or compliant contact (the compliance
/// `r_n` enters the normal row's diagonal), a polyhedral cone (not the exact one), problems in
/// Delassus form. No joints (bilateral rows would be free LCP variables; not formulated here) and
/// no deformable bodies.
pub fn capabilities() -> Capabilities {
    Capabilities {
        rigid_bodies: true,
        rigid_contact: true,
        compliant_contact: true,
        exact_friction_cone: false,
        delassus_form: true,
        ..Capabilities::default()
    }
}

/// The answered model: the pyramid LCP with the facets of the setting `facets`, its own residual
/// the min map of the LCP. The harness grades it on the natural map of the pyramid's contact law
/// (`kernels::pyramid`), which it computes from an answer `(v, λ)` itself.
const MODEL: AnsweredModel = AnsweredModel::Pyramid { facets: "facets", residual_columns: &[LCP_RESIDUAL] };

impl SolverDef for LcpLemke {
    type Settings = LemkeSettings;
    const NAME: &'static str = "lcp_lemke";
    const SUMMARY: &'static str =
        "pyramidal-cone LCP (Stewart-Trinkle / Anitescu-Potra), Lemke's method, lexicographic";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_pivots";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = MODEL;
    /// Lemke's intermediate bases (`z0 > 0`) are no answers of the model: the harness does not
    /// stop the pivoting; in the equal-accuracy mode it grades the final answer on the pyramid's
    /// natural map (README §6).
    const HARNESS_STOPS: bool = false;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: LemkeSettings, _: &SolverContext) -> Self {
        LcpLemke::new(settings)
    }
    /// The dense LCP matrix and Lemke's tableau: `3 n²` doubles, `n = (d + 2)` per contact.
    fn working_memory(settings: &LemkeSettings, size: &ProblemSize) -> f64 {
        let n = (settings.facets + 2) as f64 * size.contacts;
        api::def::sparse_working_memory(size) + 3.0 * 8.0 * n * n
    }
}

impl SolverDef for LcpPgs {
    type Settings = LcpPgsSettings;
    const NAME: &'static str = "lcp_pgs";
    const SUMMARY: &'static str = "pyramidal-cone LCP (Stewart-Trinkle / Anitescu-Potra), block projected Gauss-Seidel";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = MODEL;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: LcpPgsSettings, _: &SolverContext) -> Self {
        LcpPgs::new(settings)
    }
}
