//! [`SapProblem`]: the data of one SAP solve, built from a [`harness::StepProblem`] — the
//! linearised momentum matrix `A`, the free velocity `v*`, the contact Jacobian `J`, and per
//! contact `R_i`, `v̂_i`, μ_i (Castro et al. §II-D and §V). It knows nothing about the solver.
//!
//! Two-stage θ-method (Eq. 6–18), with `K = −∂f/∂(dq)` in velocity coordinates
//! (`StepProblem::stiffness`) and no damping (`D = 0` in the harness model):
//!
//! * `A = M + θ θ_vq δt² K + θ δt D` (Eq. 15 with the θ_vq reading of README §9);
//! * stage 1, `m(v*) = 0` (Eq. 13–14) linearised about `v0` — exact for forces linear in `q` and a
//!   constant mass matrix: `A (v* − v0) = δt f(q0, v0) − θ δt² K v0`. For θ = 0 this is
//!   `v* = v0 + δt M⁻¹ f(q0, v0)`, the harness's `free_velocity()`;
//! * stage 2 (Eq. 18): `A (v − v*) = Jᵀ γ`;
//! * positions (Eq. 11–12): `q+ = q0 + δt N(q0) (θ_vq v + (1 − θ_vq) v0)`.
//!
//! Regularisation from physical parameters (§V, Eq. 29–30), per contact `i`:
//! `w_i = ‖W_ii‖_F / 3` with `W_ii = Σ_b J_ib M_b⁻¹ J_ibᵀ` (the paper's Delassus estimate with `M`);
//! compliant `(k, τ_d)`: `R_n = max(β² w_i / (4π²), 1 / (δt k (δt + τ_d)))`, `v̂_n = −φ0 / (δt + τ_d)`;
//! harness-rigid: `R_n = β² w_i / (4π²)` (the near-rigid branch, `k → ∞`), `τ_d = rigid_tau_d_over_dt · δt`;
//! always `R_t = σ w_i`, `v̂_t = 0`. Vectors are in the harness order (n, t1, t2).

use super::projection::ConeParams;
use super::settings::SapSettings;
use harness::model::ContactCompliance;
use harness::{SolveError, StepProblem};
use kernels::BlockDiagonal;
use smallvec::SmallVec;

/// The rows of one contact's Jacobian acting on one DOF block.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Side {
    /// Index of the DOF block (body) in the layout.
    pub block: usize,
    /// First velocity index of the block.
    pub v_offset: usize,
    /// Number of columns (≤ 6).
    pub ncols: usize,
    /// Rows `(n, t1, t2)`; the first `ncols` columns are used.
    pub j: [[f64; 6]; 3],
}

/// One contact of the SAP problem.
#[derive(Debug, Clone, PartialEq)]
pub struct SapContact {
    /// One side per DOF block involved: 1 or 2 for a contact between bodies (stored inline), any
    /// number for a contact of a linear problem (e.g. the Cholesky view of an FCLIB local problem).
    pub sides: SmallVec<[Side; 2]>,
    /// μ and `R = diag(R_n, R_t, R_t)`.
    pub cone: ConeParams,
    /// `v̂_n` (m/s); `v̂_t = 0`.
    pub v_hat_n: f64,
    /// Delassus estimate `w_i = ‖W_ii‖_F / 3` (1/kg).
    pub w: f64,
}

impl SapContact {
    /// `v_c,i = J_i v` in (n, t1, t2) (m/s).
    pub fn velocity(&self, v: &[f64]) -> [f64; 3] {
        let mut u = [0.0; 3];
        for s in &self.sides {
            let vb = &v[s.v_offset..s.v_offset + s.ncols];
            for (ur, row) in u.iter_mut().zip(&s.j) {
                *ur += row.iter().zip(vb).map(|(a, b)| a * b).sum::<f64>();
            }
        }
        u
    }

    /// `out += J_iᵀ γ`.
    pub fn add_transpose(&self, gamma: [f64; 3], out: &mut [f64]) {
        for s in &self.sides {
            for (c, o) in out[s.v_offset..s.v_offset + s.ncols].iter_mut().enumerate() {
                *o += s.j[0][c] * gamma[0] + s.j[1][c] * gamma[1] + s.j[2][c] * gamma[2];
            }
        }
    }

    /// `y_i = −R_i⁻¹ (v_c,i − v̂_i)` (Eq. 23's argument) (N s).
    pub fn unprojected_impulse(&self, vc: [f64; 3]) -> [f64; 3] {
        [-(vc[0] - self.v_hat_n) / self.cone.r_n, -vc[1] / self.cone.r_t, -vc[2] / self.cone.r_t]
    }

    /// `W_ii` from the inverse mass blocks of its sides.
    fn delassus(&self, minv: &[nalgebra::DMatrix<f64>]) -> [[f64; 3]; 3] {
        let mut w = [[0.0; 3]; 3];
        for s in &self.sides {
            let m = &minv[s.block];
            for (r, wr) in w.iter_mut().enumerate() {
                for (q, x) in wr.iter_mut().enumerate() {
                    for a in 0..s.ncols {
                        for b in 0..s.ncols {
                            *x += s.j[r][a] * m[(a, b)] * s.j[q][b];
                        }
                    }
                }
            }
        }
        w
    }
}

/// The data of one SAP solve (see the module doc).
#[derive(Debug, Clone)]
pub struct SapProblem {
    /// Time step δt (s).
    pub dt: f64,
    /// θ and θ_vq of Eq. 6.
    pub theta: (f64, f64),
    /// Mass matrix `M(q0)` (for the stopping-rule scaling `diag(M)^{-1/2}` and `p = M v`, Eq. 25).
    pub mass: BlockDiagonal,
    /// Linearised momentum matrix `A` (Eq. 15), factored.
    pub a: BlockDiagonal,
    /// Free velocity `v*` (stage 1).
    pub v_star: Vec<f64>,
    /// Velocity at the start of the step.
    pub v0: Vec<f64>,
    /// Contacts.
    pub contacts: Vec<SapContact>,
    /// `(v_offset, nv)` of each DOF block.
    pub blocks: Vec<(usize, usize)>,
}

impl SapProblem {
    /// Number of velocity DOFs.
    pub fn nv(&self) -> usize {
        self.v_star.len()
    }

    /// A problem from raw data (tests and the reference path): `A` = `mass` (θ = 0), `v*`, and
    /// contacts whose sides name blocks of `mass`.
    pub fn from_parts(dt: f64, mass: BlockDiagonal, v_star: Vec<f64>, v0: Vec<f64>, contacts: Vec<SapContact>) -> Self {
        let mut a = mass.clone();
        a.factor().expect("from_parts: mass must be SPD");
        let blocks = (0..mass.blocks().len()).map(|i| (mass.offset(i), mass.blocks()[i].nrows())).collect();
        Self { dt, theta: (0.0, 0.0), mass, a, v_star, v0, contacts, blocks }
    }

    /// Builds the problem of one step (Eq. 15, stage 1, Eq. 29–30; module doc).
    pub fn from_step(p: &StepProblem<'_>, s: &SapSettings) -> Result<Self, SolveError> {
        let unsupported = |what: String| SolveError::Unsupported { what };
        let (theta, theta_vq) = s.thetas();
        let dt = p.dt;
        let nb = p.layout.blocks.len();
        if !p.mass.is_factored() || p.mass.blocks().len() != nb {
            return Err(unsupported("mass matrix not factored or not one block per layout block".into()));
        }
        if p.stiffness.dim() != p.nv() || p.stiffness.blocks().len() != nb {
            return Err(unsupported("stiffness matrix does not have the mass matrix's block structure".into()));
        }
        if p.forces.len() != p.nv() || p.v0.len() != p.nv() {
            return Err(unsupported("forces or v0 do not have nv entries".into()));
        }
        if !p.forces.iter().chain(&p.v0).all(|x| x.is_finite()) || !dt.is_finite() {
            return Err(SolveError::NonFinite { what: "forces, v0 or dt".into() });
        }
        // A = M + θ θ_vq δt² K (Eq. 15, D = 0)
        let c = theta * theta_vq * dt * dt;
        let blocks_a: Vec<_> = p.mass.blocks().iter().zip(p.stiffness.blocks()).map(|(m, k)| m + k * c).collect();
        if blocks_a.iter().any(|b| !b.iter().all(|x| x.is_finite())) {
            return Err(SolveError::NonFinite { what: "mass or stiffness matrix".into() });
        }
        let mut a = BlockDiagonal::new(blocks_a);
        a.factor().map_err(|e| SolveError::Factorization {
            what: format!("linearised momentum matrix A = M + theta theta_vq dt^2 K (Eq. 15): {e}"),
        })?;
        // stage 1: A (v* − v0) = δt f0 − θ δt² K v0
        let kv0 = p.stiffness.mul(&p.v0);
        let mut rhs: Vec<f64> = p.forces.iter().zip(&kv0).map(|(f, kv)| dt * f - theta * dt * dt * kv).collect();
        a.solve_in_place(&mut rhs);
        let v_star: Vec<f64> = p.v0.iter().zip(&rhs).map(|(v, d)| v + d).collect();
        if !v_star.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "free velocity v*".into() });
        }
        let minv: Vec<_> = (0..nb).map(|b| p.mass.block_inverse(b)).collect();
        let blocks: Vec<(usize, usize)> = p.layout.blocks.iter().map(|b| (b.v_offset, b.nv)).collect();
        let mut contacts = Vec::with_capacity(p.nc());
        let beta2 = s.beta * s.beta / (4.0 * std::f64::consts::PI * std::f64::consts::PI);
        for (i, c) in p.contacts.contacts.iter().enumerate() {
            if !(c.gap.is_finite() && c.mu.is_finite()) || c.mu < 0.0 {
                return Err(SolveError::NonFinite { what: format!("gap or mu of contact {i} (mu must be >= 0)") });
            }
            let mut sides = SmallVec::with_capacity(c.jacobian.len());
            for jb in &c.jacobian {
                let b = p
                    .layout
                    .blocks
                    .binary_search_by_key(&jb.v_offset, |b| b.v_offset)
                    .map_err(|_| unsupported(format!("contact {i}: no DOF block starts at {}", jb.v_offset)))?;
                if jb.ncols != blocks[b].1 || jb.ncols > 6 {
                    return Err(unsupported(format!(
                        "contact {i}: Jacobian block width {} != {}",
                        jb.ncols, blocks[b].1
                    )));
                }
                if !jb.rows.iter().flatten().all(|x| x.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("Jacobian of contact {i}") });
                }
                sides.push(Side { block: b, v_offset: jb.v_offset, ncols: jb.ncols, j: jb.rows });
            }
            let mut contact =
                SapContact { sides, cone: ConeParams { mu: c.mu, r_n: 1.0, r_t: 1.0 }, v_hat_n: 0.0, w: 0.0 };
            let w_ii = contact.delassus(&minv);
            let w = w_ii.iter().flatten().map(|x| x * x).sum::<f64>().sqrt() / 3.0;
            if !(w.is_finite() && w > 0.0) {
                return Err(unsupported(format!(
                    "contact {i}: Delassus estimate w = {w} (a contact that moves no DOF)"
                )));
            }
            let near_rigid = beta2 * w;
            let (r_n, tau_d) = match c.compliance {
                ContactCompliance::Rigid => (near_rigid, s.rigid_tau_d_over_dt * dt),
                ContactCompliance::Compliant { stiffness, dissipation_time } => {
                    let r = 1.0 / (dt * stiffness * (dt + dissipation_time));
                    (near_rigid.max(r), dissipation_time)
                }
            };
            contact.w = w;
            contact.cone = ConeParams { mu: c.mu, r_n, r_t: s.sigma * w };
            contact.v_hat_n = -c.gap / (dt + tau_d);
            if !(r_n > 0.0
                && contact.cone.r_t > 0.0
                && [r_n, contact.cone.r_t, contact.v_hat_n].iter().all(|x| x.is_finite()))
            {
                return Err(SolveError::NonFinite { what: format!("regularisation of contact {i}") });
            }
            contacts.push(contact);
        }
        Ok(Self { dt, theta: (theta, theta_vq), mass: p.mass.clone(), a, v_star, v0: p.v0.clone(), contacts, blocks })
    }
}
