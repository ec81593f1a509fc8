//! The per-step data of the non-smooth Newton method, computed once from the
//! [`api::StepProblem`] before the first iterate: the explicit free velocity `ũ` (Eq. 57
//! with the elastic force implicit), the inverse mass blocks, the complementarity preconditioner
//! `r` (Eq. 66) and the residual scales.

use super::model::{joint_jacobian, raw_jacobian};
use super::schur::schur_diagonal;
use super::settings::RMode;
use api::ContactCompliance;
use api::{SolveError, StepProblem};
use nalgebra::DMatrix;

/// Smallest magnitude treated as nonzero in scales and secant denominators.
pub(super) const TINY: f64 = 1e-300;

/// `‖x‖_∞`.
pub(super) fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// The per-step data (see the module doc).
pub(super) struct NsnProblem {
    /// Time step `h` (s).
    pub h: f64,
    pub nv: usize,
    pub nc: usize,
    /// Whether the problem has deformable bodies (implicit elasticity, sparse `H`).
    pub has_def: bool,
    /// Prescribed DOFs (their velocity is fixed; rows and columns dropped).
    pub fixed: Vec<bool>,
    /// `ũ = u⁻ + h M⁻¹ f_ext` (explicit forces; the elastic force is implicit, in `g`).
    pub u_tilde: Vec<f64>,
    /// Inverse mass blocks and the DOF → (block, local index) map.
    pub minv: Vec<DMatrix<f64>>,
    pub block_of: Vec<(usize, usize)>,
    /// Complementarity preconditioner per contact: normal `r_n` and friction `r_f` (Eq. 66).
    pub r_n: Vec<f64>,
    pub r_f: Vec<f64>,
    /// Normal compliance per contact (README "Compliant contact"): `e = 1/k` (m/N) of Eq. 7 and
    /// the Kelvin–Voigt dissipation time `τ_d` (s); both 0 for a rigid contact.
    pub compliance: Vec<f64>,
    pub tau_d: Vec<f64>,
    /// The start iterate `u⁰` (prescribed DOFs at their values, zero elsewhere).
    pub u0: Vec<f64>,
    /// Residual scales: momentum (N s), velocity (m/s) and position (m), with the joints' share
    /// (README "Joints").
    pub scale_g: f64,
    pub scale_v: f64,
    pub scale_x: f64,
}

impl NsnProblem {
    /// The per-step data of `p` (fails on a non-finite free velocity).
    pub(super) fn new(p: &StepProblem<'_>, r_mode: RMode) -> Result<Self, SolveError> {
        let (h, nv, nc) = (p.dt, p.nv(), p.nc());
        let has_def = p.layout.has_deformables();
        let mut fixed = vec![false; nv];
        for &(k, _) in &p.prescribed {
            fixed[k] = true;
        }
        // ũ = u⁻ + h M⁻¹ f_ext (explicit forces; the elastic force is implicit, in g)
        let mut acc = p.external_forces();
        p.mass.solve_in_place(&mut acc);
        let u_tilde: Vec<f64> = p.v0.iter().zip(&acc).map(|(v, a)| v + h * a).collect();
        if !u_tilde.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "free velocity".into() });
        }
        // mass blocks: inverse and the DOF -> (block, local) map
        let nblocks = p.mass.blocks().len();
        let minv: Vec<DMatrix<f64>> = (0..nblocks).map(|b| p.mass.block_inverse(b)).collect();
        let mut block_of = vec![(0, 0); nv];
        for b in 0..nblocks {
            for l in 0..p.mass.blocks()[b].nrows() {
                block_of[p.mass.offset(b) + l] = (b, l);
            }
        }
        // complementarity preconditioner r (Eq. 66), once per step from the raw rows at q0
        let d0 = schur_diagonal(&raw_jacobian(p.contacts, nv, &fixed), &minv, &block_of);
        let (mut r_n, mut r_f) = (vec![0.0; nc], vec![0.0; nc]);
        for i in 0..nc {
            let (rn, rf) = match r_mode {
                RMode::One => (1.0, 1.0),
                RMode::H2 => (h * h, h),
                RMode::EffectiveMass => (h * h * d0[3 * i], h * 0.5 * (d0[3 * i + 1] + d0[3 * i + 2])),
            };
            r_n[i] = if rn > 0.0 && rn.is_finite() { rn } else { h * h };
            r_f[i] = if rf > 0.0 && rf.is_finite() { rf } else { h };
        }
        let (compliance, tau_d) = p
            .contacts
            .contacts
            .iter()
            .map(|c| match c.compliance {
                ContactCompliance::Rigid => (0.0, 0.0),
                ContactCompliance::Compliant { stiffness, dissipation_time } => (1.0 / stiffness, dissipation_time),
            })
            .unzip();
        // iterate: u⁰ = 0 (prescribed DOFs at their values), λ⁰ = 0 (§8.1)
        let mut u0 = vec![0.0; nv];
        for &(k, val) in &p.prescribed {
            u0[k] = val;
        }
        // joints: the velocity their laws ask for, |v̂_k| (|C|/h for a rigid row), and the impulse
        // that would give it, |v̂_k| / [G M⁻¹ Gᵀ]_kk (a displaced spring at rest moves nothing
        // else: without these the scales would vanish)
        let wb = schur_diagonal(&joint_jacobian(&p.bilateral, nv, &fixed), &minv, &block_of);
        let (mut joint_v, mut joint_g) = (0.0f64, 0.0f64);
        for (row, w) in p.bilateral.rows.iter().zip(&wb) {
            let v_hat = row.law(h).0.abs();
            joint_v = joint_v.max(v_hat);
            if *w > 0.0 {
                joint_g = joint_g.max(v_hat / w);
            }
        }
        let mass_dv: Vec<f64> = p.mass.mul(&u_tilde.iter().zip(&p.v0).map(|(a, b)| a - b).collect::<Vec<_>>());
        let scale_g = inf_norm(&mass_dv) + inf_norm(&p.mass.mul(&p.v0)) + joint_g + TINY;
        let scale_v = inf_norm(&u_tilde.iter().zip(&p.v0).map(|(a, b)| a - b).collect::<Vec<_>>())
            + inf_norm(&p.v0)
            + inf_norm(&u0)
            + joint_v
            + TINY;
        let scale_x = h * scale_v;
        Ok(Self {
            h,
            nv,
            nc,
            has_def,
            fixed,
            u_tilde,
            minv,
            block_of,
            r_n,
            r_f,
            compliance,
            tau_d,
            u0,
            scale_g,
            scale_v,
            scale_x,
        })
    }

    /// Number of mass blocks.
    pub(super) fn nblocks(&self) -> usize {
        self.minv.len()
    }
}
