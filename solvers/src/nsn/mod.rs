//! `nsn`: the non-smooth Newton method of Macklin et al. 2019 — position-level backward Euler
//! with contact and Coulomb friction as NCP functions (Fischer–Burmeister or minimum map),
//! friction as a fixed-point compliance, the complementarity preconditioner, and a damped
//! Schur-complement Newton step solved by preconditioned conjugate residual.
//!
//! Per step (Algorithm 1; README §Errata): `ũ = u⁻ + h M⁻¹ f_ext`; `r` per contact from the raw rows at `q⁻`
//! (Eq. 66); from `u = 0`, `λ = 0`, repeat: re-evaluate contacts at `q = q⁻ + h G u`
//! (`StepProblem::contacts_at`), NCP rows `φ_n`, `α`, `S` (Eqs. 93–98) and friction `W` (Eqs. 103–106),
//! residuals `g = M(u − ũ) + h ∇U(q) − h Jᵀλ`, `η = [φ_n/h; φ_f]` (Eqs. 57–58), solve
//! `(J H⁻¹ Jᵀ + C + εI) hΔλ = J H⁻¹ g − η` (Eq. 59), `Δu = H⁻¹(J hΔλ... ` (Eq. 60), update with
//! damping `t` (Eqs. 61–63). Method, options, errata handling and deviations:
//! `solvers/src/nsn/README.md`.
//!
//! Problems in Delassus form `u = W r + q` (FCLIB's local problems, `W` possibly
//! non-symmetric): [`delassus`], the same NCP rows on the impulses with `J H⁻¹ Jᵀ = W`, a sparse
//! LU Newton step and a non-monotone line search (README "Delassus form").
//!
//! Layout (as `sap/`): [`problem`] (per-step data: `ũ`, `M⁻¹` blocks, `r`, scales), [`model`] (the
//! NCP rows, Jacobians and residual at an iterate), [`newton`] (`H`, the Schur solve, `Δu`),
//! [`schur`] (the Schur operator and linear solvers), `solver` (the Newton loop, damped update,
//! geometric stiffness).

mod delassus;
#[cfg(test)]
mod delassus_tests;
mod model;
mod ncp;
mod newton;
mod problem;
mod schur;
mod settings;
mod solver;
#[cfg(test)]
mod tests;

pub use ncp::{friction_w, friction_w_fb_raw, normal_row, Ncp, NormalRow};
pub use settings::{ContactEval, Friction, LinearSolver, Mode, NsnSettings, RMode};
pub use solver::Nsn;

use api::{Capabilities, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "M. Macklin, K. Erleben, M. Mueller, N. Chentanez, S. Jeschke, V. Makoviychuk: \
Non-Smooth Newton Methods for Deformable Multi-Body Dynamics, ACM TOG 38(5) 140 (2019)";

/// What nsn handles: rigid and deformable bodies with rigid or compliant contact (Eq. 7's
/// compliance on the contact rows plus Kelvin–Voigt damping, README "Compliant contact"), the
/// exact (smooth) cone, and bilateral joints (rigid or compliant) as equality rows of the same
/// Newton system; problems in Delassus form with `W` as given (README "Delassus form").
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

/// The registry definition: `Registry::default().register::<Nsn>()` in the root crate.
impl SolverDef for Nsn {
    type Settings = NsnSettings;
    const NAME: &'static str = "nsn";
    const SUMMARY: &'static str =
        "Macklin et al. 2019 non-smooth Newton (FB/min NCP, PCR), position level, rigid + FEM bodies; Delassus form by sparse LU";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "max_newton_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: api::AnsweredModel = api::AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: NsnSettings, ctx: &SolverContext) -> Self {
        Nsn::with_backend(settings, ctx.backend.clone())
    }
    /// The Krylov solvers work matrix-free; the assembled-Schur solvers (`jacobi`, `gauss_seidel`,
    /// `direct`) form a dense matrix of three rows per contact.
    fn working_memory(s: &NsnSettings, size: &api::def::ProblemSize) -> f64 {
        let base = api::def::sparse_working_memory(size);
        match s.linear_solver {
            LinearSolver::Pcr | LinearSolver::Pcg => base,
            LinearSolver::Jacobi | LinearSolver::GaussSeidel | LinearSolver::Direct => {
                base + 2.0 * 8.0 * (3.0 * size.contacts).powi(2)
            }
        }
    }
}
