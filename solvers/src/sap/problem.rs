//! [`SapProblem`]: the data of one SAP solve, built from a [`api::StepProblem`] — the
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
//!
//! Holonomic (bilateral) rows — an extension beyond the paper, as Drake's `SapHolonomicConstraint`
//! (README §2, "Holonomic constraints"): each joint row `g_k(q) = C_k` of
//! `StepProblem::bilateral` becomes one more constraint with Jacobian `G_k` in its first row and
//! impulse set ℝ (no cone projection), so `ℓ_p` gains the unconstrained quadratic
//! `(G_k v − v̂_k)²/(2 R_k)` and `A (v − v*) = Jᵀ γ + Gᵀ γ_b`. With `w_k = G_k M⁻¹ G_kᵀ` (the
//! exact scalar Delassus entry) and `τ_k = b/k` (Drake's relaxation time, damping `b = τ k`):
//! compliant `(k, b)`: `R_k = max(β² w_k/(4π²), 1/(δt k (δt + τ_k)))`, `v̂_k = −C_k/(δt + τ_k)`
//! (= `BilateralRow::law`, which also covers `k = 0`); rigid: the near-rigid `R_k = β² w_k/(4π²)`,
//! `v̂_k = −C_k/(δt + rigid_tau_d_over_dt · δt)`, the same regularisation as a rigid contact.
//!
//! Deformable (FEM) bodies — an extension beyond the paper, as Drake simulates its FEM
//! deformables with SAP (README §2, "Deformable bodies"): their DOFs take the linearised
//! backward-Euler step of `toolkit::implicit` whatever the scheme, `A = M + δt² K` with the
//! sparse elastic stiffness `K` (so `A` is [`SapProblem::a`] plus [`ElasticTerm`]) and
//! `A (v* − v0) = δt f(q0) − δt² K v0`; prescribed DOFs are held at their values (`v*_P = v̄_P`,
//! Newton directions zero there: [`SapProblem::fixed`]). The DOF blocks of SAP are the mass
//! matrix's blocks (one per rigid body, one per FEM node), so a node contact has one 3-column side.

use super::projection::{ConeParams, ImpulseSet};
use super::settings::SapSettings;
use api::ContactCompliance;
use api::{SolveError, StepProblem};
use kernels::sparse::Csr;
use kernels::BlockDiagonal;
use smallvec::SmallVec;
use std::borrow::Cow;
use toolkit::implicit::{add_shifted_mul, ImplicitElastic};

/// The rows of one constraint's Jacobian acting on one DOF block.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Side {
    /// Index of the DOF block (body) in the layout.
    pub block: usize,
    /// First velocity index of the block.
    pub v_offset: usize,
    /// Number of columns (≤ 6).
    pub ncols: usize,
    /// Rows `(n, t1, t2)` (a holonomic row: its Jacobian row first, then zeros); the first
    /// `ncols` columns are used.
    pub j: [[f64; 6]; 3],
}

/// One constraint of the SAP problem: a frictional contact or a holonomic row
/// ([`ConeParams::set`]); for a holonomic row read `(n, t1, t2)` as `(row, 0, 0)` below.
#[derive(Debug, Clone, PartialEq)]
pub struct SapConstraint {
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

impl SapConstraint {
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

    /// `W_ii = Σ_sides J_s M_s⁻¹ J_sᵀ = Σ_sides X_sᵀ X_s` with `X_s = L_s⁻¹ J_sᵀ` and `M_s = L_s L_sᵀ`
    /// the mass block's Cholesky factor: one forward solve for the three rows together, and the
    /// product of symmetric entries computed once.
    fn delassus(&self, mass: &BlockDiagonal) -> [[f64; 3]; 3] {
        let mut w = [[0.0; 3]; 3];
        for s in &self.sides {
            let n = s.ncols;
            let mut x = s.j;
            mass.forward_block_many_in_place(s.block, x.each_mut().map(|row| &mut row[..n]));
            for r in 0..3 {
                for q in r..3 {
                    let d = (0..n).map(|a| x[r][a] * x[q][a]).sum::<f64>();
                    w[r][q] += d;
                    if q != r {
                        w[q][r] += d;
                    }
                }
            }
        }
        w
    }
}

/// The deformable bodies' stiffness part of `A` (module doc): `A = a + δt² K'` where `K'` acts on
/// the DOFs from `start` on (local indices), prescribed rows and columns zero.
#[derive(Debug, Clone)]
pub struct ElasticTerm {
    /// First deformable DOF.
    pub start: usize,
    /// `δt² K'` (`toolkit::implicit::ImplicitElastic::stiffness_dt2`).
    pub k_dt2: Csr,
}

/// The data of one SAP solve (see the module doc). Built per step by [`SapProblem::from_step`], it
/// borrows the step's factored mass matrix (`'p`) instead of copying it, and `A` too where `A = M`.
#[derive(Debug, Clone)]
pub struct SapProblem<'p> {
    /// Time step δt (s).
    pub dt: f64,
    /// θ and θ_vq of Eq. 6.
    pub theta: (f64, f64),
    /// Mass matrix `M(q0)`, factored (for the stopping-rule scaling `diag(M)^{-1/2}` and
    /// `p = M v`, Eq. 25; borrowed from the step's problem by [`SapProblem::from_step`]).
    pub mass: Cow<'p, BlockDiagonal>,
    /// Linearised momentum matrix `A` (Eq. 15), factored: its block-diagonal part (all of `A`
    /// without deformable bodies; their mass blocks with them). Borrowed where it is `M` (no
    /// stiffness or θ θ_vq = 0).
    pub a: Cow<'p, BlockDiagonal>,
    /// The deformable bodies' stiffness part of `A`, if any.
    pub elastic: Option<ElasticTerm>,
    /// Prescribed DOFs (empty, or one flag per DOF): `v*` holds their required value and the
    /// Newton iteration keeps them there.
    pub fixed: Vec<bool>,
    /// Free velocity `v*` (stage 1).
    pub v_star: Vec<f64>,
    /// Velocity at the start of the step (borrowed from the step's problem by
    /// [`SapProblem::from_step`]).
    pub v0: Cow<'p, [f64]>,
    /// Constraints: the step's contacts first (in problem order), then its holonomic rows (in
    /// `StepProblem::bilateral` order).
    pub constraints: Vec<SapConstraint>,
    /// How many of `constraints` are contacts.
    pub n_contacts: usize,
    /// `(v_offset, nv)` of each DOF block (the blocks of the mass matrix).
    pub blocks: Vec<(usize, usize)>,
}

impl SapProblem<'static> {
    /// A problem from raw data (tests and the reference path): `A` = `mass` (θ = 0), `v*`, and
    /// constraints whose sides name blocks of `mass`, contacts before holonomic rows.
    pub fn from_parts(
        dt: f64,
        mass: BlockDiagonal,
        v_star: Vec<f64>,
        v0: Vec<f64>,
        constraints: Vec<SapConstraint>,
    ) -> Self {
        let mut a = mass.clone();
        a.factor().expect("from_parts: mass must be SPD");
        let blocks = (0..mass.blocks().len()).map(|i| (mass.offset(i), mass.blocks()[i].nrows())).collect();
        let n_contacts = constraints.iter().take_while(|c| c.cone.set == ImpulseSet::FrictionCone).count();
        assert!(
            constraints[n_contacts..].iter().all(|c| c.cone.set == ImpulseSet::Unconstrained),
            "from_parts: contacts must come before holonomic rows"
        );
        Self {
            dt,
            theta: (0.0, 0.0),
            mass: Cow::Owned(mass),
            a: Cow::Owned(a),
            elastic: None,
            fixed: vec![],
            v_star,
            v0: Cow::Owned(v0),
            constraints,
            n_contacts,
            blocks,
        }
    }
}

impl<'p> SapProblem<'p> {
    /// Number of velocity DOFs.
    pub fn nv(&self) -> usize {
        self.v_star.len()
    }

    /// `y = A x` (with the deformable stiffness part).
    pub fn a_mul_into(&self, x: &[f64], y: &mut [f64]) {
        self.a.mul_into(x, y);
        if let Some(e) = &self.elastic {
            add_shifted_mul(&e.k_dt2, e.start, x, y);
        }
    }

    /// Whether DOF `k` is prescribed.
    pub fn is_fixed(&self, k: usize) -> bool {
        self.fixed.get(k).copied().unwrap_or(false)
    }

    /// The contacts' impulses `(γ_n, γ_t1, γ_t2)` and the holonomic rows' impulses of `gamma`
    /// (one entry per constraint).
    pub fn split_impulses<'g>(&self, gamma: &'g [[f64; 3]]) -> (&'g [[f64; 3]], Vec<f64>) {
        let (contacts, rows) = gamma.split_at(self.n_contacts);
        (contacts, rows.iter().map(|g| g[0]).collect())
    }

    /// Builds the problem of one step (Eq. 15, stage 1, Eq. 29–30; module doc); `elastic` holds
    /// the deformable bodies' implicit step (and its symbolic analysis across steps).
    pub fn from_step(
        p: &'p StepProblem<'_>,
        s: &SapSettings,
        elastic: &mut ImplicitElastic,
    ) -> Result<Self, SolveError> {
        let unsupported = |what: String| SolveError::Unsupported { what };
        let (theta, theta_vq) = s.thetas();
        let dt = p.dt;
        let nb = p.mass.blocks().len();
        if !p.mass.is_factored() {
            return Err(unsupported("mass matrix not factored".into()));
        }
        // each rigid body is one mass block (its Jacobian blocks are checked against them below)
        if let Some(b) = p.layout.blocks.iter().find(|b| {
            matches!(b.kind, api::BlockKind::RigidBody { .. })
                && (0..nb).all(|i| p.mass.offset(i) != b.v_offset || p.mass.blocks()[i].nrows() != b.nv)
        }) {
            return Err(unsupported(format!("rigid body at DOF {} is not one mass block", b.v_offset)));
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
        if p.mass.blocks().iter().chain(p.stiffness.blocks()).any(|b| !b.as_slice().iter().all(|x| x.is_finite())) {
            return Err(SolveError::NonFinite { what: "mass or stiffness matrix".into() });
        }
        // without stiffness (rigid bodies, springs elsewhere) A is M, already factored
        let no_stiffness = p.stiffness.blocks().iter().all(|k| k.as_slice().iter().all(|&x| x == 0.0));
        let a = if c == 0.0 || no_stiffness {
            Cow::Borrowed(&p.mass)
        } else {
            let mut a =
                BlockDiagonal::new(p.mass.blocks().iter().zip(p.stiffness.blocks()).map(|(m, k)| m + k * c).collect());
            a.factor().map_err(|e| SolveError::Factorization {
                what: format!("linearised momentum matrix A = M + theta theta_vq dt^2 K (Eq. 15): {e}"),
            })?;
            Cow::Owned(a)
        };
        // stage 1: A (v* − v0) = δt f0 − θ δt² K v0 (with K = 0, K v0 is +0 and δt f0 − 0 = δt f0
        // exactly: the product is skipped, not the rounding changed)
        let mut rhs: Vec<f64> = if no_stiffness {
            p.forces.iter().map(|f| dt * f).collect()
        } else {
            let kv0 = p.stiffness.mul(&p.v0);
            p.forces.iter().zip(&kv0).map(|(f, kv)| dt * f - theta * dt * dt * kv).collect()
        };
        a.solve_in_place(&mut rhs);
        // v* = v0 + (v* − v0), in the solve's buffer (IEEE addition commutes exactly)
        for (d, v) in rhs.iter_mut().zip(&p.v0) {
            *d += v;
        }
        let mut v_star = rhs;
        // deformable DOFs: the linearised backward-Euler step (toolkit::implicit)
        let (elastic_term, fixed) = if elastic.assemble(p)? {
            let start = elastic.start();
            elastic.write_free_velocity(&mut v_star);
            let fixed =
                if p.prescribed.is_empty() { vec![] } else { (0..p.nv()).map(|k| elastic.is_fixed(k)).collect() };
            (Some(ElasticTerm { start, k_dt2: elastic.stiffness_dt2().clone() }), fixed)
        } else {
            (None, vec![])
        };
        if !v_star.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "free velocity v*".into() });
        }
        let blocks: Vec<(usize, usize)> = (0..nb).map(|b| (p.mass.offset(b), p.mass.blocks()[b].nrows())).collect();
        let mut constraints = Vec::with_capacity(p.nc() + p.nb());
        // the DOF block a Jacobian block acts on, checked (width, finite entries)
        let side =
            |v_offset: usize, ncols: usize, finite: bool, what: &dyn Fn() -> String| -> Result<Side, SolveError> {
                let b = blocks
                    .binary_search_by_key(&v_offset, |b| b.0)
                    .map_err(|_| unsupported(format!("{}: no DOF block starts at {v_offset}", what())))?;
                if ncols != blocks[b].1 || ncols > 6 {
                    return Err(unsupported(format!("{}: Jacobian block width {ncols} != {}", what(), blocks[b].1)));
                }
                if !finite {
                    return Err(SolveError::NonFinite { what: format!("Jacobian of {}", what()) });
                }
                Ok(Side { block: b, v_offset, ncols, j: [[0.0; 6]; 3] })
            };
        let beta2 = s.beta * s.beta / (4.0 * std::f64::consts::PI * std::f64::consts::PI);
        for (i, c) in p.contacts.contacts.iter().enumerate() {
            if !(c.gap.is_finite() && c.mu.is_finite()) || c.mu < 0.0 {
                return Err(SolveError::NonFinite { what: format!("gap or mu of contact {i} (mu must be >= 0)") });
            }
            let mut sides = SmallVec::with_capacity(c.jacobian.len());
            for jb in &c.jacobian {
                let what = || format!("contact {i}");
                sides.push(Side {
                    j: jb.rows,
                    ..side(jb.v_offset, jb.ncols, jb.rows.iter().flatten().all(|x| x.is_finite()), &what)?
                });
            }
            let cone = ConeParams { mu: c.mu, r_n: 1.0, r_t: 1.0, set: ImpulseSet::FrictionCone };
            let mut contact = SapConstraint { sides, cone, v_hat_n: 0.0, w: 0.0 };
            let w_ii = contact.delassus(&p.mass);
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
            contact.cone = ConeParams { mu: c.mu, r_n, r_t: s.sigma * w, set: ImpulseSet::FrictionCone };
            contact.v_hat_n = -c.gap / (dt + tau_d);
            if !(r_n > 0.0
                && contact.cone.r_t > 0.0
                && [r_n, contact.cone.r_t, contact.v_hat_n].iter().all(|x| x.is_finite()))
            {
                return Err(SolveError::NonFinite { what: format!("regularisation of contact {i}") });
            }
            constraints.push(contact);
        }
        // holonomic rows (module doc; README §2 "Holonomic constraints")
        for (k, row) in p.bilateral.rows.iter().enumerate() {
            if !row.violation.is_finite() {
                return Err(SolveError::NonFinite { what: format!("violation of bilateral row {k}") });
            }
            let mut sides = SmallVec::with_capacity(row.jacobian.len());
            for gb in &row.jacobian {
                let what = || format!("bilateral row {k}");
                let mut j = [[0.0; 6]; 3];
                j[0] = gb.row;
                sides.push(Side { j, ..side(gb.v_offset, gb.ncols, gb.row.iter().all(|x| x.is_finite()), &what)? });
            }
            let cone = ConeParams { mu: 0.0, r_n: 1.0, r_t: 1.0, set: ImpulseSet::Unconstrained };
            let mut hc = SapConstraint { sides, cone, v_hat_n: 0.0, w: 0.0 };
            // the row's exact Delassus entry G M⁻¹ Gᵀ (a 1 × 1 block: no Frobenius average needed)
            let w = hc.delassus(&p.mass)[0][0];
            if !(w.is_finite() && w > 0.0) {
                return Err(unsupported(format!(
                    "bilateral row {k}: Delassus entry w = {w} (a row that moves no DOF)"
                )));
            }
            let near_rigid = beta2 * w;
            let (r, v_hat) = match row.compliance {
                None => (near_rigid, -row.violation / (dt + s.rigid_tau_d_over_dt * dt)),
                Some(_) => {
                    let (v_hat, r) = row.law(dt);
                    (near_rigid.max(r), v_hat)
                }
            };
            if !(r > 0.0 && r.is_finite() && v_hat.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("regularisation of bilateral row {k}") });
            }
            hc.w = w;
            // R_t is never used (γ_t = 0 and the tangential rows are zero); R_n keeps it positive
            hc.cone = ConeParams { mu: 0.0, r_n: r, r_t: r, set: ImpulseSet::Unconstrained };
            hc.v_hat_n = v_hat;
            constraints.push(hc);
        }
        Ok(Self {
            dt,
            theta: (theta, theta_vq),
            mass: Cow::Borrowed(&p.mass),
            a,
            elastic: elastic_term,
            fixed,
            v_star,
            v0: Cow::Borrowed(&p.v0),
            constraints,
            n_contacts: p.nc(),
            blocks,
        })
    }
}
