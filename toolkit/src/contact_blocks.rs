//! [`ContactBlocks`]: the per-contact Delassus blocks of a step, the building blocks of
//! Gauss–Seidel and Jacobi-type contact solvers (`pgs`, and a solver of your own:
//! `docs/adding-a-solver.md`).
//!
//! For contact `i` acting on bodies `b` with Jacobian blocks `J_b` (rows `(n, t1, t2)`) and mass
//! blocks `M_b`, a block keeps `J_b` and `G_b = M_b⁻¹ J_bᵀ`, so that
//! - `u_i = J_i v = Σ_b J_b v_b` ([`ContactBlock::velocity`]),
//! - changing the impulse by `Δ` changes the velocity by `M⁻¹ J_iᵀ Δ` ([`ContactBlock::apply`]),
//!   touching only the contact's bodies,
//! - the Delassus block `W_ii = Σ_b J_b G_b` and the normal law of the step form the contact's
//!   [`LocalProblem`] (`kernels::contact_local`).
//!
//! The step's bilateral (joint) rows get the same treatment as scalar blocks
//! ([`BilateralBlock`]): `G_k v`, `v += M⁻¹ G_kᵀ Δγ` and the Delassus entry `w_k = G_k M⁻¹ G_kᵀ`
//! with the row's law `G_k v − v̂_k + r_k γ_k = 0` ([`api::BilateralRow::law`]).
//!
//! A contact between bodies has one or two sides, stored inline; a contact of a linear problem
//! may act on any number of DOF blocks (the Cholesky view of an FCLIB local problem: `fclib`
//! crate), whose sides spill to the heap, so scenes keep their layout and allocate nothing more.
//!
//! Deformable (FEM) bodies ([`ContactBlocks::assemble_implicit`]): their DOFs move by the
//! linearised implicit step of [`crate::implicit`], `A (v − v*) = Jᵀλ` with the sparse
//! `A = M + δt² K`, so a contact on a node changes every free node's velocity: its block keeps the
//! dense columns `A⁻¹ J_dᵀ` over the deformable DOFs (zero on prescribed ones, which keep `v̄_P`),
//! and `W_ii = J_i A⁻¹ J_iᵀ` is the Delassus block of the implicit step.

use crate::implicit::ImplicitElastic;
use api::DofLayout;
use api::SolveError;
use api::StepProblem;
use kernels::contact_local::{natmap, LocalProblem};
use smallvec::SmallVec;

/// The rows of one contact's Jacobian acting on one body, and their mass-weighted transpose.
#[derive(Debug, Clone, Copy, Default)]
struct Side {
    /// First velocity index of the body.
    v_offset: usize,
    /// Number of velocity DOFs of the body (≤ 6).
    ncols: usize,
    /// `J_b`, rows `(n, t1, t2)`.
    j: [[f64; 6]; 3],
    /// `G_b = M_b⁻¹ J_bᵀ`, so that changing the impulse by `Δ` changes `v_b` by `G_b Δ` (zero on
    /// a deformable side: the contact's [`ContactBlock`] `implicit` columns move those DOFs).
    g: [[f64; 3]; 6],
}

/// The velocity change of a contact on deformable DOFs: `A⁻¹ J_dᵀ` from `start` on.
#[derive(Debug, Clone, Default)]
struct ImplicitColumns {
    /// First deformable DOF.
    start: usize,
    /// Row `k`: the change of `v[start + k]` per unit impulse `(n, t1, t2)`.
    g: Vec<[f64; 3]>,
}

/// One contact of the step: its bodies, its local problem and its gap bias.
#[derive(Debug, Clone, Default)]
pub struct ContactBlock {
    /// One side per dynamic body (DOF block) it acts on: 1 or 2 for a contact between bodies.
    sides: SmallVec<[Side; 2]>,
    /// Delassus block, friction and normal law.
    pub local: LocalProblem,
    /// `φ0 / dt` (m/s): the bias of the harness's reference NCP (`u + (φ0/dt) e_n`).
    pub bias_n: f64,
    /// `A⁻¹ J_dᵀ` of a contact on deformable DOFs (module doc).
    implicit: Option<ImplicitColumns>,
}

impl ContactBlock {
    /// `u = J_i v` (m/s).
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

    /// `v += M⁻¹ J_iᵀ d` (rigid sides: touches only the contact's bodies; deformable sides:
    /// `A⁻¹ J_dᵀ d` on every deformable DOF).
    pub fn apply(&self, d: [f64; 3], v: &mut [f64]) {
        for s in &self.sides {
            for (vc, gc) in v[s.v_offset..s.v_offset + s.ncols].iter_mut().zip(&s.g) {
                *vc += gc[0] * d[0] + gc[1] * d[1] + gc[2] * d[2];
            }
        }
        if let Some(im) = &self.implicit {
            for (vc, gc) in v[im.start..].iter_mut().zip(&im.g) {
                *vc += gc[0] * d[0] + gc[1] * d[1] + gc[2] * d[2];
            }
        }
    }

    /// The first velocity index of every DOF block the contact moves: its rigid (or linear) sides,
    /// and for a contact on deformable DOFs the first deformable DOF (its implicit columns move
    /// every deformable DOF). Two contacts that share none of these do not interact within a step.
    pub fn dof_blocks(&self) -> impl Iterator<Item = usize> + '_ {
        self.sides.iter().map(|s| s.v_offset).chain(self.implicit.as_ref().map(|im| im.start))
    }
}

/// One body's part of a bilateral row: `G_b` and `M_b⁻¹ G_bᵀ`.
#[derive(Debug, Clone, Copy, Default)]
struct RowSide {
    /// First velocity index of the body.
    v_offset: usize,
    /// Number of velocity DOFs of the body (≤ 6).
    ncols: usize,
    /// `G_b`.
    g: [f64; 6],
    /// `M_b⁻¹ G_bᵀ`.
    mg: [f64; 6],
}

/// One bilateral row of the step: law `G v − v̂ + r γ = 0` ([`api::BilateralRow::law`]).
#[derive(Debug, Clone, Default)]
pub struct BilateralBlock {
    /// One side per body the row acts on (one or two).
    sides: SmallVec<[RowSide; 2]>,
    /// Delassus entry `w = G M⁻¹ Gᵀ` (> 0; 1/kg or 1/(kg m²)).
    pub w: f64,
    /// Target velocity `v̂` (m/s or rad/s).
    pub v_hat: f64,
    /// Regularisation `r ≥ 0` (0: rigid row).
    pub r: f64,
}

impl BilateralBlock {
    /// `G v`.
    pub fn velocity(&self, v: &[f64]) -> f64 {
        self.sides.iter().map(|s| s.g[..s.ncols].iter().zip(&v[s.v_offset..]).map(|(a, b)| a * b).sum::<f64>()).sum()
    }

    /// `v += M⁻¹ Gᵀ d`: touches only the row's bodies.
    pub fn apply(&self, d: f64, v: &mut [f64]) {
        for s in &self.sides {
            for (vc, m) in v[s.v_offset..s.v_offset + s.ncols].iter_mut().zip(&s.mg) {
                *vc += m * d;
            }
        }
    }

    /// The first velocity index of every body the row acts on.
    pub fn dof_blocks(&self) -> impl Iterator<Item = usize> + '_ {
        self.sides.iter().map(|s| s.v_offset)
    }

    /// The law's residual `G v − v̂ + r γ` (m/s or rad/s).
    pub fn residual(&self, v: &[f64], gamma: f64) -> f64 {
        self.velocity(v) - self.v_hat + self.r * gamma
    }

    /// The impulse that zeroes the residual with the other rows held: `γ − (G v − v̂ + r γ) / (w + r)`
    /// (the exact scalar solve of the row, unclamped).
    pub fn solve(&self, v: &[f64], gamma: f64) -> f64 {
        gamma - self.residual(v, gamma) / (self.w + self.r)
    }
}

/// Every contact block of a step, with the buffers reused from step to step.
#[derive(Debug, Clone, Default)]
pub struct ContactBlocks {
    /// One block per contact of the problem, in problem order.
    pub blocks: Vec<ContactBlock>,
    /// One block per bilateral row of the problem, in problem order.
    pub bilateral: Vec<BilateralBlock>,
    /// Inverse mass block of every body, dense 6×6 (only the leading `nv` × `nv` part is used).
    minv: Vec<[[f64; 6]; 6]>,
}

/// The index of the layout's DOF block that a Jacobian block starting at `v_offset` with `ncols`
/// columns acts on; `who` names the constraint in the error ("contact 3", "bilateral row 0").
fn rigid_block(
    layout: &DofLayout,
    v_offset: usize,
    ncols: usize,
    who: impl Fn() -> String,
) -> Result<usize, SolveError> {
    let b = layout
        .blocks
        .binary_search_by_key(&v_offset, |b| b.v_offset)
        .map_err(|_| SolveError::Unsupported { what: format!("{}: no DOF block starts at {v_offset}", who()) })?;
    if ncols != layout.blocks[b].nv {
        return Err(SolveError::Unsupported {
            what: format!("{}: Jacobian block width {ncols} != {}", who(), layout.blocks[b].nv),
        });
    }
    Ok(b)
}

impl ContactBlocks {
    /// Builds the blocks of `p`: one per contact, with its Delassus block `W_ii`, `μ`, the normal
    /// law `(v̂, r_n)` of [`StepProblem::normal_law`] and the gap bias. Refuses (as
    /// `SolveError::Unsupported`) bodies of more than 6 DOFs and reports non-finite data as `SolveError::NonFinite`.
    pub fn assemble(&mut self, p: &StepProblem<'_>) -> Result<(), SolveError> {
        self.assemble_with(p, None)
    }

    /// As [`Self::assemble`], and deformable bodies through their linearised implicit step
    /// (`elastic` assembled here for `p`; module doc): the caller's free velocity must then be
    /// [`ImplicitElastic::v_star`] on the deformable DOFs.
    pub fn assemble_implicit(&mut self, p: &StepProblem<'_>, elastic: &mut ImplicitElastic) -> Result<(), SolveError> {
        self.assemble_with(p, Some(elastic))
    }

    fn assemble_with(
        &mut self,
        p: &StepProblem<'_>,
        mut elastic: Option<&mut ImplicitElastic>,
    ) -> Result<(), SolveError> {
        let unsupported = |what: String| SolveError::Unsupported { what };
        let layout = &p.layout;
        let start = match elastic.as_deref_mut() {
            Some(e) => {
                if e.assemble(p)? {
                    e.start()
                } else {
                    p.nv()
                }
            }
            None => p.nv(),
        };
        let rigid = layout.blocks.iter().filter(|b| b.v_offset < start).count();
        if !p.mass.is_factored() || (start == p.nv() && p.mass.blocks().len() != layout.blocks.len()) {
            return Err(unsupported("mass matrix not factored or not one block per layout block".into()));
        }
        self.minv.clear();
        for (i, blk) in layout.blocks.iter().enumerate().take(rigid) {
            if blk.nv > 6 {
                return Err(unsupported(format!(
                    "contact blocks take bodies of at most 6 DOFs, block {i} has {}",
                    blk.nv
                )));
            }
            let inv = p.mass.block_inverse(i);
            let mut m = [[0.0; 6]; 6];
            for (r, row) in m.iter_mut().enumerate().take(blk.nv) {
                for (c, x) in row.iter_mut().enumerate().take(blk.nv) {
                    *x = inv[(r, c)];
                }
            }
            self.minv.push(m);
        }
        self.blocks.clear();
        for (i, c) in p.contacts.contacts.iter().enumerate() {
            let (v_hat, r_n) = p.normal_law(i);
            let bias_n = p.bias(i)[0];
            if ![c.gap, c.mu, v_hat, r_n, bias_n].iter().all(|x| x.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("data of contact {i} (gap, mu, normal law)") });
            }
            if c.mu < 0.0 || r_n < 0.0 {
                return Err(unsupported(format!("contact {i}: mu = {} and r_n = {r_n} must be >= 0", c.mu)));
            }
            let mut block = ContactBlock { bias_n, ..ContactBlock::default() };
            let mut w = [[0.0; 3]; 3];
            // the deformable sides: J_dᵀ, then A⁻¹ J_dᵀ and W_ii += J_d A⁻¹ J_dᵀ
            if let (true, Some(e)) = (c.jacobian.iter().any(|jb| jb.v_offset >= start), elastic.as_deref_mut()) {
                let mut cols = [vec![0.0; p.nv()], vec![0.0; p.nv()], vec![0.0; p.nv()]];
                for jb in c.jacobian.iter().filter(|jb| jb.v_offset >= start) {
                    if jb.v_offset + jb.ncols > p.nv() || !jb.rows.iter().flatten().all(|x| x.is_finite()) {
                        return Err(SolveError::NonFinite { what: format!("Jacobian of contact {i}") });
                    }
                    for (r, col) in cols.iter_mut().enumerate() {
                        for k in 0..jb.ncols {
                            col[jb.v_offset + k] += jb.rows[r][k];
                        }
                    }
                    block.sides.push(Side { v_offset: jb.v_offset, ncols: jb.ncols, j: jb.rows, g: [[0.0; 3]; 6] });
                }
                let jd = cols.clone();
                for col in &mut cols {
                    e.solve_in_place(col);
                }
                for (r, wr) in w.iter_mut().enumerate() {
                    for (s, x) in wr.iter_mut().enumerate() {
                        *x += jd[r][start..].iter().zip(&cols[s][start..]).map(|(a, b)| a * b).sum::<f64>();
                    }
                }
                let g = (start..p.nv()).map(|k| [cols[0][k], cols[1][k], cols[2][k]]).collect();
                block.implicit = Some(ImplicitColumns { start, g });
            }
            for jb in c.jacobian.iter().filter(|jb| jb.v_offset < start) {
                let b = rigid_block(layout, jb.v_offset, jb.ncols, || format!("contact {i}"))?;
                if !jb.rows.iter().flatten().all(|x| x.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("Jacobian of contact {i}") });
                }
                let (n, minv) = (jb.ncols, &self.minv[b]);
                let mut side = Side { v_offset: jb.v_offset, ncols: n, j: jb.rows, g: [[0.0; 3]; 6] };
                for (col, g) in side.g.iter_mut().enumerate().take(n) {
                    for (r, x) in g.iter_mut().enumerate() {
                        *x = (0..n).map(|k| minv[col][k] * jb.rows[r][k]).sum();
                    }
                }
                for (r, wr) in w.iter_mut().enumerate() {
                    for (s, x) in wr.iter_mut().enumerate() {
                        *x += (0..n).map(|k| jb.rows[r][k] * side.g[k][s]).sum::<f64>();
                    }
                }
                block.sides.push(side);
            }
            block.local = LocalProblem::new(w, c.mu, v_hat, r_n);
            self.blocks.push(block);
        }
        self.bilateral.clear();
        for (k, row) in p.bilateral.rows.iter().enumerate() {
            let (v_hat, r) = row.law(p.dt);
            let mut block = BilateralBlock { v_hat, r, ..BilateralBlock::default() };
            for gb in &row.jacobian {
                let b = rigid_block(layout, gb.v_offset, gb.ncols, || format!("bilateral row {k}"))?;
                let (n, minv) = (gb.ncols, &self.minv[b]);
                let mut side = RowSide { v_offset: gb.v_offset, ncols: n, g: gb.row, mg: [0.0; 6] };
                for (col, m) in side.mg.iter_mut().enumerate().take(n) {
                    *m = (0..n).map(|c| minv[col][c] * gb.row[c]).sum();
                }
                block.w += (0..n).map(|c| gb.row[c] * side.mg[c]).sum::<f64>();
                block.sides.push(side);
            }
            if ![block.w, v_hat, r].iter().all(|x| x.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("data of bilateral row {k} (G, law)") });
            }
            if block.w + r <= 0.0 || r < 0.0 {
                return Err(unsupported(format!(
                    "bilateral row {k}: w = {} and r = {r} (a row that moves no DOF)",
                    block.w
                )));
            }
            self.bilateral.push(block);
        }
        Ok(())
    }

    /// Natural-map residuals `(natmap_abs_l2, natmap_model_abs_l2)` of impulses `lambda` at
    /// velocity `v` (N s): against the harness's reference law (rigid, `u = J v + (φ0/dt) e_n`)
    /// and against each block's own law (compliance included). They coincide when every contact
    /// is rigid.
    pub fn residuals(&self, v: &[f64], lambda: &[[f64; 3]]) -> (f64, f64) {
        self.residuals_of(0..self.blocks.len().min(lambda.len()), v, lambda)
    }

    /// The natural-map residual of Anitescu's CCP, `||λ − P_K(λ − ũ)||_2` over every contact
    /// (N s), with `ũ` each block's law velocity (compliance included) and no De Saxcé shift: the
    /// residual of the convex relaxation the CCP solvers answer ([`kernels::contact_local::ccp_natmap`]).
    pub fn ccp_residual(&self, v: &[f64], lambda: &[[f64; 3]]) -> f64 {
        let mut sum = 0.0;
        for (b, lam) in self.blocks.iter().zip(lambda) {
            let u = b.local.law_velocity(b.velocity(v), *lam);
            sum += kernels::contact_local::ccp_natmap(*lam, u, b.local.mu).iter().map(|x| x * x).sum::<f64>();
        }
        sum.sqrt()
    }

    /// The natural-map residual of the pyramid LCP's contact law with `facets` facets (the
    /// Stewart–Trinkle / Anitescu–Potra model, [`kernels::pyramid::natmap`]),
    /// `||F(λ, ũ)||_2` over every contact (N s), with `ũ` each block's law velocity (compliance
    /// included): zero exactly where some `(β, σ)` solves the LCP with `λ = E z`.
    pub fn pyramid_residual(&self, v: &[f64], lambda: &[[f64; 3]], facets: usize) -> f64 {
        let mut sum = 0.0;
        for (b, lam) in self.blocks.iter().zip(lambda) {
            let u = b.local.law_velocity(b.velocity(v), *lam);
            sum += kernels::pyramid::natmap(*lam, u, b.local.mu, facets).iter().map(|x| x * x).sum::<f64>();
        }
        sum.sqrt()
    }

    /// How far `(v, λ, γ)` lies outside the feasible set of a cone program over the contact law
    /// (Drumwright's: each contact's normal row `ũ_n = u_n − v̂ + r_n λ_n ≥ 0`, its impulse in the
    /// Coulomb cone, each bilateral row's law `G v − v̂ + r γ = 0`): the 2-norm of the normal
    /// rows' violations `max(0, −ũ_n)`, the cone distances `||λ − P_K(λ)||` and the bilateral
    /// residuals (the mixed units of a natural map). `gamma` shorter than the rows: those rows
    /// count as `γ = 0`.
    pub fn program_infeasibility(&self, v: &[f64], lambda: &[[f64; 3]], gamma: &[f64]) -> f64 {
        let mut sum = 0.0;
        for (b, lam) in self.blocks.iter().zip(lambda) {
            let u = b.local.law_velocity(b.velocity(v), *lam);
            let p = kernels::cone::project(*lam, b.local.mu);
            sum += (-u[0]).max(0.0).powi(2) + (0..3).map(|i| (lam[i] - p[i]).powi(2)).sum::<f64>();
        }
        for (k, row) in self.bilateral.iter().enumerate() {
            sum += row.residual(v, gamma.get(k).copied().unwrap_or(0.0)).powi(2);
        }
        sum.sqrt()
    }

    /// [`Self::residuals`] over the contacts `which` only (e.g. one island of a step), summed in
    /// the order given.
    pub fn residuals_of(&self, which: impl IntoIterator<Item = usize>, v: &[f64], lambda: &[[f64; 3]]) -> (f64, f64) {
        let (mut reference, mut model) = (0.0, 0.0);
        for (b, lam) in which.into_iter().map(|i| (&self.blocks[i], &lambda[i])) {
            let u = b.velocity(v);
            let r = natmap(*lam, [u[0] + b.bias_n, u[1], u[2]], b.local.mu);
            reference += r.iter().map(|x| x * x).sum::<f64>();
            model += b.local.natmap(u, *lam).iter().map(|x| x * x).sum::<f64>();
        }
        (reference.sqrt(), model.sqrt())
    }
}
