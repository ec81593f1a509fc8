//! `local_global`: Zeng et al.'s real-time hyperelastic simulator with robust frictional contact —
//! projective-dynamics local-global integration (Eqs. 5–6) whose global step uses the sparse
//! inverse Cholesky factor `A⁻¹ = Sᵀ S` (Eqs. 7–8, [`kernels::sparse_inverse`]), with contact and
//! exact Coulomb friction as an NCP solved by one non-smooth Newton update inside every
//! local-global iteration (Eqs. 15–23, Algorithms 3–4), the Delassus operator
//! `W = (S Hᵀ)ᵀ (S Hᵀ)` built once per step (Eq. 27) and the stiffness-aware complementarity
//! preconditioner `r = h² W_jj` / `h W_jj` (Eq. 28).
//!
//! Per step (Algorithm 4): `q̃ = q_t + h v_t + h² M⁻¹ f_ext`, `q⁰ = q̃`; `K` times: local step
//! `p_i = P_i(G_i q^k)` in parallel (rayon), `b = M q̃ + h² Σ w_i G_iᵀ p_i`, `q_free = A⁻¹ b`;
//! with contacts: `Ω`, `E`, `φ` from the NCP functions ([`kernels::ncp`]), the constraint system
//! `(Ω W Ω + E) Δλ = (1/h²)(h − J A⁻¹ g)` by conjugate residual on the device-resident vectors,
//! `λ += Δλ`, `q = q_free + h² A⁻¹ Hᵀ Ω λ`. Method, options, errata handling and deviations:
//! `solvers/src/local_global/README.md`.
//!
//! Layout (as `sap/`): `model` (the constant model: elements, `A`, its inverse), `problem` (per
//! step: checks, `q̃`, `H`, `W`, `r`, warm start), `resident` (the device-resident iteration on a
//! [`kernels::backend::Resident`] memory layer: the CPU's host mirror or the CUDA device; copies
//! counted in [`StepTransfers`]), `solver` (setup and dispatch to the backend), `reference` (the
//! Newton ground truth).

mod model;
mod problem;
mod reference;
mod resident;
mod settings;
mod solver;
#[cfg(test)]
mod tests;

pub use reference::{incremental_potential, newton_reference};
pub use resident::StepTransfers;
pub use settings::{GlobalSolve, LocalGlobalSettings, RFactor};
pub use solver::LocalGlobal;

use api::{Capabilities, SolverContext, SolverDef};

/// The reference recorded in run records (`solver.paper`).
pub const PAPER: &str = "Z. Zeng, S. Luo, F. Shi, Z. Zhang: Fast But Accurate: A Real-Time Hyperelastic Simulator \
with Robust Frictional Contact (arXiv 2503.15078)";

/// What local_global handles: deformable bodies in projective form against static colliders, with
/// rigid (Signorini) contact and the exact Coulomb cone. No rigid bodies, no joints.
pub fn capabilities() -> Capabilities {
    Capabilities {
        deformable_bodies: true,
        projective_elasticity: true,
        rigid_contact: true,
        exact_friction_cone: true,
        ..Capabilities::default()
    }
}

/// The registry definition: `Registry::default().register::<LocalGlobal>()` in the root crate.
impl SolverDef for LocalGlobal {
    type Settings = LocalGlobalSettings;
    const NAME: &'static str = "local_global";
    const SUMMARY: &'static str =
        "Zeng et al. local-global PD with sparse inverse S = L^-1 P and NCP friction (FB/min, CR), FEM bodies";
    const PAPER: &'static str = PAPER;
    const BUDGET: &'static str = "iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: api::AnsweredModel = api::AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        capabilities()
    }
    fn from_settings(settings: LocalGlobalSettings, ctx: &SolverContext) -> Self {
        LocalGlobal::with_backend(settings, ctx.backend.clone())
    }
    /// With the sparse inverse, building `S = L⁻¹ P` dominates: peak resident memory measured at
    /// about `16 dofs²` bytes (twisting bar, release: 3.7 GB at 15.3k DOFs, 14.9 GB at 33.5k; the
    /// 62k-DOF bar was killed out of memory at 24 GB before this estimate existed). Measured while
    /// `A` stored its exact-zero coordinate couplings, which made `S` 3.5× larger (README, claims
    /// table): an upper bound now, not re-measured. The other global solves keep to the sparse
    /// default.
    fn working_memory(s: &LocalGlobalSettings, size: &api::def::ProblemSize) -> f64 {
        let base = api::def::sparse_working_memory(size);
        match s.global_solve {
            GlobalSolve::SparseInverse => base + SPARSE_INVERSE_BYTES_PER_DOF2 * size.dofs * size.dofs,
            GlobalSolve::Cholesky | GlobalSolve::Jacobi => base,
        }
    }
}

/// Peak bytes per squared DOF of building and holding the sparse inverse factor (see
/// [`LocalGlobal`]'s `working_memory`).
const SPARSE_INVERSE_BYTES_PER_DOF2: f64 = 16.0;
