//! [`ImplicitElastic`]: the linearised implicit (backward-Euler) step of the deformable (FEM)
//! bodies of a [`StepProblem`], shared by the velocity-level solvers that take deformables
//! (`sap`, `pgs`, `drumwright`, `canal`, `subadmm`): their dynamics matrix `A`, their free
//! velocity `v*`, and solves with `A`.
//!
//! # Derivation
//!
//! On the deformable DOFs `x` (node positions, velocities `v`), backward Euler with the contact
//! impulses `Jᵀγ` reads `M (v − v0) = δt f(q1) + Jᵀγ`, `q1 = q0 + δt v`, where `f = −∂U/∂x + m g`
//! ([`StepProblem::forces`] at `q0`). Linearised at `q0`, `f(q1) ≈ f(q0) − K (q1 − q0) =
//! f(q0) − δt K v` with `K = −∂f/∂x = ∂²U/∂x²` ([`StepProblem::elastic_hessian`], PSD-projected
//! per element, plus the rigid force stiffness [`StepProblem::stiffness`], whose deformable
//! blocks are zero), so
//!
//! `(M + δt² K) v = M v0 + δt f(q0) + Jᵀγ`, i.e. `A (v − v*) = Jᵀγ` with
//! `A = M + δt² K` and `A v* = M v0 + δt f(q0)` — equivalently `A (v* − v0) = δt f(q0) − δt² K v0`.
//!
//! This is one Newton step of the backward-Euler momentum equation from `v0` (exact for linear
//! elasticity), the step Drake takes for its FEM deformables before the contact solve. `A` is SPD
//! (`M` is, `K` is PSD after the projection).
//!
//! Prescribed DOFs `P` (with end-of-step velocities `v̄_P`, [`StepProblem::prescribed`]) are
//! eliminated: their rows are dropped (the boundary supplies whatever reaction they need) and
//! their columns move to the right-hand side, so on the free DOFs `F`
//! `A_FF v*_F = (M v0 + δt f(q0))_F − A_FP v̄_P`, `v*_P = v̄_P`, and for any impulses
//! `v = v* + A_FF⁻¹ (Jᵀγ)_F` (zero change on `P`). The matrix kept here is `A` with the
//! prescribed rows and columns reduced to their mass diagonal (`A'`, block-diagonal between `F`
//! and `P`): `½‖v − v*‖²_A'` is then the cost on `F` whenever `v_P = v̄_P`.
//!
//! `A'` is factored by [`SparseCholesky`] (faer, AMD); its pattern (the mesh connectivity, with
//! the prescribed off-diagonal entries kept as explicit zeros) does not change from step to step,
//! so the symbolic analysis is done once per run ([`ImplicitElastic::symbolic_analyses`]).

use api::SolveError;
use api::StepProblem;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use kernels::sparse::Csr;

/// The linearised implicit step of the deformable bodies of one step (module doc), with the
/// factorization's symbolic analysis kept across steps.
#[derive(Debug, Default)]
pub struct ImplicitElastic {
    /// First deformable velocity index (deformables follow the rigid bodies); `nv` without any.
    start: usize,
    /// Prescribed DOF mask over all `nv` DOFs.
    fixed: Vec<bool>,
    /// `δt² K` on the deformable DOFs in local indices (`i − start`), prescribed rows and columns
    /// zeroed (kept as explicit zeros).
    k_dt2: Csr,
    /// `v*` on the deformable DOFs (local indices).
    v_star: Vec<f64>,
    /// Factor of `A'` (local indices).
    chol: Option<SparseCholesky>,
    /// Symbolic analyses so far.
    analyses: usize,
}

impl ImplicitElastic {
    /// Assembles and factors `A'` and computes `v*` for `p` (module doc). Returns `false` (and
    /// holds nothing) when `p` has no deformable body.
    pub fn assemble(&mut self, p: &StepProblem<'_>) -> Result<bool, SolveError> {
        let nv = p.nv();
        let Some(start) = p.layout.first_deformable_v_offset() else {
            self.start = nv;
            self.fixed.clear();
            self.v_star.clear();
            self.k_dt2 = Csr::zeros(0, 0);
            return Ok(false);
        };
        let nonfinite = |what: &str| SolveError::NonFinite { what: what.into() };
        let h = p.elastic_hessian().ok_or_else(|| SolveError::Unsupported {
            what: "deformable bodies without an elastic Hessian in the problem".into(),
        })?;
        let (nd, dt) = (nv - start, p.dt);
        if h.nrows != nv || p.mass.dim() != nv || p.stiffness.dim() != nv {
            return Err(SolveError::Unsupported { what: "elastic Hessian, mass or stiffness is not nv x nv".into() });
        }
        self.start = start;
        self.fixed.clear();
        self.fixed.resize(nv, false);
        for &(k, _) in &p.prescribed {
            if k < start {
                return Err(SolveError::Unsupported { what: format!("prescribed DOF {k} is not deformable") });
            }
            self.fixed[k] = true;
        }
        // δt² K on the deformable range (elastic Hessian + rigid force stiffness), local indices
        let mut t = Vec::with_capacity(h.nnz() + 3 * nd);
        for r in start..nv {
            for k in h.indptr[r]..h.indptr[r + 1] {
                let c = h.indices[k];
                if c >= start {
                    t.push((r - start, c - start, dt * dt * h.data[k]));
                }
            }
        }
        t.extend(
            p.stiffness
                .triplets()
                .into_iter()
                .filter(|&(r, c, _)| r >= start && c >= start)
                .map(|(r, c, x)| (r - start, c - start, dt * dt * x)),
        );
        let k_full = Csr::from_triplets(nd, nd, &t);
        if !k_full.data.iter().all(|x| x.is_finite()) {
            return Err(nonfinite("elastic Hessian"));
        }
        let mass = Csr::from_triplets(
            nd,
            nd,
            &p.mass
                .triplets()
                .into_iter()
                .filter(|&(r, c, _)| r >= start && c >= start)
                .map(|(r, c, x)| (r - start, c - start, x))
                .collect::<Vec<_>>(),
        );
        // right-hand side A v* = M v0 + δt f(q0) on F, minus A_FP v̄_P; v*_P = v̄_P
        let v0 = &p.v0[start..];
        let mut b = mass.mul(v0);
        for (bi, f) in b.iter_mut().zip(&p.forces[start..]) {
            *bi += dt * f;
        }
        let mut vbar = vec![0.0; nd];
        for &(k, v) in &p.prescribed {
            vbar[k - start] = v;
        }
        let m_vbar = mass.mul(&vbar);
        let k_vbar = k_full.mul(&vbar);
        for (i, bi) in b.iter_mut().enumerate() {
            *bi -= m_vbar[i] + k_vbar[i];
        }
        // A' = M + δt² K with prescribed rows/columns reduced to their mass diagonal
        self.k_dt2 = k_full;
        let fixed = &self.fixed[start..];
        for r in 0..nd {
            for k in self.k_dt2.indptr[r]..self.k_dt2.indptr[r + 1] {
                if fixed[r] || fixed[self.k_dt2.indices[k]] {
                    self.k_dt2.data[k] = 0.0;
                }
            }
        }
        let mut a_t: Vec<(usize, usize, f64)> = Vec::with_capacity(self.k_dt2.nnz() + mass.nnz());
        for r in 0..nd {
            for k in self.k_dt2.indptr[r]..self.k_dt2.indptr[r + 1] {
                a_t.push((r, self.k_dt2.indices[k], self.k_dt2.data[k]));
            }
            for k in mass.indptr[r]..mass.indptr[r + 1] {
                let c = mass.indices[k];
                if !(fixed[r] || fixed[c]) || r == c {
                    a_t.push((r, c, mass.data[k]));
                }
            }
        }
        let a = Csr::from_triplets(nd, nd, &a_t);
        let (cp, ri, vals) = a.lower_csc();
        let factor_err = |e: kernels::cholesky::CholeskyError| SolveError::Factorization {
            what: format!("linearised implicit step A = M + dt^2 K of the deformable bodies: {e}"),
        };
        if !self.chol.as_ref().is_some_and(|c| c.has_pattern(&cp, &ri)) {
            self.chol = Some(SparseCholesky::analyze(nd, cp, ri, CholeskyParams::default()).map_err(factor_err)?);
            self.analyses += 1;
        }
        self.chol.as_mut().expect("analysed above").factorize(&vals).map_err(factor_err)?;
        for (bi, &f) in b.iter_mut().zip(fixed) {
            if f {
                *bi = 0.0;
            }
        }
        self.chol.as_mut().expect("factored above").solve_in_place(&mut b);
        for (bi, (&f, &vb)) in b.iter_mut().zip(fixed.iter().zip(&vbar)) {
            if f {
                *bi = vb;
            }
        }
        if !b.iter().all(|x| x.is_finite()) {
            return Err(nonfinite("free velocity v* of the deformable bodies"));
        }
        self.v_star = b;
        Ok(true)
    }

    /// First deformable velocity index (`nv` without deformables).
    pub fn start(&self) -> usize {
        self.start
    }

    /// Whether DOF `k` (global index) is prescribed.
    pub fn is_fixed(&self, k: usize) -> bool {
        self.fixed.get(k).copied().unwrap_or(false)
    }

    /// `v*` on the deformable DOFs, from [`Self::start`] on (prescribed DOFs at `v̄_P`).
    pub fn v_star(&self) -> &[f64] {
        &self.v_star
    }

    /// Writes [`Self::v_star`] onto the deformable DOFs of the global velocity `v` (length
    /// `nv`), leaving the rigid DOFs as they are; nothing without deformable bodies.
    pub fn write_free_velocity(&self, v: &mut [f64]) {
        v[self.start..self.start + self.v_star.len()].copy_from_slice(&self.v_star);
    }

    /// The step's free velocity `v*` into `out`: the problem's rigid `v*` with [`Self::v_star`] on
    /// the deformable DOFs; refused when its length is not the layout's or an entry is not finite.
    pub fn free_velocity(&self, p: &StepProblem<'_>, out: &mut Vec<f64>) -> Result<(), SolveError> {
        *out = p.free_velocity();
        if out.len() != p.nv() {
            return Err(SolveError::Unsupported {
                what: format!("free velocity has {} entries, layout {}", out.len(), p.nv()),
            });
        }
        self.write_free_velocity(out);
        if !out.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "free velocity v*".into() });
        }
        Ok(())
    }

    /// `A' − M = δt² K` on the deformable DOFs in local indices (`global − start`), with the
    /// prescribed rows and columns zero (stored as explicit zeros).
    pub fn stiffness_dt2(&self) -> &Csr {
        &self.k_dt2
    }

    /// The entries `(row, column, value)` of `δt² K'` in global indices (prescribed rows and
    /// columns stored as explicit zeros): with `StepProblem::mass`, the entries of `A'`.
    pub fn stiffness_entries(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        shifted_entries(&self.k_dt2, self.start)
    }

    /// `y[start..] += δt² K' x[start..]` (global vectors of length `nv`): with
    /// `StepProblem::mass`, the product with `A'`.
    pub fn add_stiffness_mul(&self, x: &[f64], y: &mut [f64]) {
        add_shifted_mul(&self.k_dt2, self.start, x, y);
    }

    /// `x[start..] ← A_FF⁻¹ x_F` on the free deformable DOFs, `0` on the prescribed ones (the
    /// velocity change an impulse `x` causes); rigid entries untouched.
    pub fn solve_in_place(&mut self, x: &mut [f64]) {
        let s = self.start;
        let xd = &mut x[s..];
        for (xi, &f) in xd.iter_mut().zip(&self.fixed[s..]) {
            if f {
                *xi = 0.0;
            }
        }
        self.chol.as_mut().expect("assemble first").solve_in_place(xd);
        for (xi, &f) in xd.iter_mut().zip(&self.fixed[s..]) {
            if f {
                *xi = 0.0;
            }
        }
    }

    /// `y = A' x` over all `nv` DOFs of `p` (the problem last [`Self::assemble`]d): `M x` on the
    /// rigid bodies, `(M + δt² K') x` on the deformable DOFs.
    pub fn mul_into(&self, p: &StepProblem<'_>, x: &[f64], y: &mut [f64]) {
        p.mass.mul_into(x, y);
        self.add_stiffness_mul(x, y);
    }

    /// `x ← A'⁻¹ x` over all `nv` DOFs of `p` (the problem last [`Self::assemble`]d): `M⁻¹ x` on
    /// the rigid bodies, [`Self::solve_in_place`] on the deformable DOFs (prescribed entries 0).
    pub fn solve_all_in_place(&mut self, p: &StepProblem<'_>, x: &mut [f64]) {
        let s = self.start;
        let xd = x[s..].to_vec();
        p.mass.solve_in_place(x);
        if s < x.len() {
            x[s..].copy_from_slice(&xd);
            self.solve_in_place(x);
        }
    }

    /// Symbolic analyses of `A'` so far (one per run while the mesh and the prescribed set stay).
    pub fn symbolic_analyses(&self) -> usize {
        self.analyses
    }
}

/// `y[start..] += K x[start..]` for a square `K` on the DOFs from `start` on (local indices),
/// `x`, `y` global vectors: the deformable part of a product with `A' = M + δt² K'`.
pub fn add_shifted_mul(k: &Csr, start: usize, x: &[f64], y: &mut [f64]) {
    for (r, yr) in y[start..start + k.nrows].iter_mut().enumerate() {
        let (a, b) = (k.indptr[r], k.indptr[r + 1]);
        *yr += k.indices[a..b].iter().zip(&k.data[a..b]).map(|(&c, kc)| kc * x[start + c]).sum::<f64>();
    }
}

/// The entries `(row, column, value)` of a square `K` on the DOFs from `start` on (local
/// indices, as [`add_shifted_mul`]) in global indices, row by row.
pub fn shifted_entries(k: &Csr, start: usize) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
    (0..k.nrows)
        .flat_map(move |r| (k.indptr[r]..k.indptr[r + 1]).map(move |i| (start + r, start + k.indices[i], k.data[i])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use api::contact::ContactSet;
    use harness::model::{DeformableBody, ElasticMaterial, ElasticModel, Material, PrescribedMotion, World};
    use nalgebra::Vector3;

    /// A co-rotational bar `[0, L] × [0, w]²` (ν = 0) hanging from its clamped face `x = L`
    /// under gravity along −x.
    fn hanging_bar(e: f64, rho: f64, l: f64, g: f64) -> World {
        let mut w = World::new();
        w.gravity = Vector3::new(-g, 0.0, 0.0);
        let mat = ElasticMaterial { model: ElasticModel::CoRotational, youngs_modulus: e, poisson_ratio: 0.0 };
        let mut bar = DeformableBody::box_mesh(
            "bar",
            Vector3::zeros(),
            Vector3::new(l, 0.2, 0.2),
            [4, 1, 1],
            rho,
            mat,
            Material::rigid(0.0),
        );
        let top: Vec<usize> = (0..bar.num_nodes()).filter(|&a| bar.rest[a].x > l - 1e-9).collect();
        bar.boundary.push(PrescribedMotion::fixed(top));
        w.deformables.push(bar);
        w
    }

    /// Steps `world` `n` times with the linearised implicit step alone (no contacts).
    fn step(world: &mut World, dt: f64, n: usize, elastic: &mut ImplicitElastic) {
        let contacts = ContactSet::default();
        for _ in 0..n {
            let (q, v) = {
                let p = world.step_problem(&contacts, dt, None).unwrap();
                assert!(elastic.assemble(&p).unwrap());
                let mut v = p.free_velocity();
                elastic.write_free_velocity(&mut v);
                for &(k, vk) in &p.prescribed {
                    assert_eq!(v[k], vk, "prescribed DOF {k} returned exactly");
                }
                (p.integrate(&v), v)
            };
            world.set_state(&q, &v);
        }
    }

    /// The fixed point of the linearised implicit step (`v = v0 = 0`) is the static equilibrium
    /// `f(q) = 0` on the free DOFs, whatever the linearisation. A bar hanging from its clamped
    /// face, stepped with `ω₁ δt = 5` for its lowest mode `ω₁ = π c/(2L)` (damped by about
    /// `1/(1 + 25)` per step, below round-off after 30 steps), ends with a force residual below
    /// 1e-9 of a node's weight (round-off of the solves), and its free end near the 1D drop
    /// `ρ g L²/(2E)` (within 20 %: the 1 × 1-cell section is not exactly 1D; the exact discrete
    /// equilibrium is the oracle of `tests/fem_velocity_solvers.rs`).
    #[test]
    fn hanging_bar_comes_to_static_equilibrium() {
        let (e, rho, l, g): (f64, f64, f64, f64) = (1e6, 1000.0, 1.0, 9.81);
        let mut w = hanging_bar(e, rho, l, g);
        let omega1 = std::f64::consts::PI * (e / rho).sqrt() / (2.0 * l);
        let mut elastic = ImplicitElastic::default();
        step(&mut w, 5.0 / omega1, 30, &mut elastic);
        let fixed: Vec<usize> = w.prescribed_velocities(1.0).iter().map(|p| p.0).collect();
        let weight = w.deformables[0].node_masses().iter().fold(0.0f64, |m, x| m.max(*x)) * g;
        let f = w.forces();
        let residual = (0..f.len()).filter(|k| !fixed.contains(k)).fold(0.0f64, |m, k| m.max(f[k].abs()));
        assert!(residual < 1e-9 * weight, "force residual {residual} N");
        let expect = rho * g * l * l / (2.0 * e);
        let bar = &w.deformables[0];
        for a in (0..bar.num_nodes()).filter(|&a| bar.rest[a].x < 1e-9) {
            let drop = bar.rest[a].x - bar.positions[a].x;
            assert!((drop - expect).abs() < 0.2 * expect, "free end drops {drop}, 1D {expect}");
        }
        // the pattern never changes: one symbolic analysis for the whole run
        assert_eq!(elastic.symbolic_analyses(), 1);
    }

    /// A stretched bar in free fall: the elastic forces and `K` are internal (every element's
    /// Hessian, projected or not, has the translations in its null space), so the linearised step
    /// changes the linear momentum by exactly `M g δt` per step, to round-off.
    #[test]
    fn free_fall_conserves_momentum() {
        let mut w = hanging_bar(1e5, 1000.0, 1.0, 9.81);
        w.deformables[0].boundary.clear();
        for x in &mut w.deformables[0].positions {
            x.x *= 1.1;
        }
        let (dt, n) = (0.01, 10);
        let mass = w.deformables[0].total_mass();
        step(&mut w, dt, n, &mut ImplicitElastic::default());
        let expect = Vector3::new(-9.81 * mass * dt * n as f64, 0.0, 0.0);
        let p = w.linear_momentum();
        assert!((p - expect).norm() < 1e-10 * expect.norm(), "{p} vs {expect}");
        assert!(w.elastic_energy() > 0.0, "the bar vibrates");
    }
}
