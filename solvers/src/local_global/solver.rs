//! [`LocalGlobal`]: one time step of Zeng et al.'s non-smooth constrained local-global method
//! (Algorithm 4).

use super::model::{Model, ModelKey, Vec12};
use super::reference::newton_reference;
use super::settings::{GlobalSolve, LocalGlobalSettings, RFactor};
use harness::model::ContactCompliance;
use harness::{IterationLog, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::backend::{AnyBackend, Backend};
use kernels::iterative::{KrylovParams, KrylovWorkspace};
use kernels::ncp::{friction_w, normal_row, schur_diagonal, Ncp};
use kernels::sparse::Csr;
use nalgebra::{DMatrix, Matrix3};
use rayon::prelude::*;

/// The local-global solver. Keeps the constant model (`A`, `S` or the Cholesky factor) between
/// steps while the time step, meshes and prescribed DOFs stay the same.
pub struct LocalGlobal {
    settings: LocalGlobalSettings,
    ncp: Ncp,
    global: GlobalSolve,
    r_factor: RFactor,
    /// The compute backend of the run (`--backend` through `SolverContext`; the CPU by default).
    backend: AnyBackend,
    model: Option<Model>,
    /// Per-element local-step results `(w Gᵀ p, PD energy)` (scratch).
    local: Vec<(Vec12, f64)>,
    /// Work vectors of the constraint solves (Eq. 26), reused across iterations and steps.
    krylov: KrylovWorkspace,
}

impl LocalGlobal {
    /// A solver with validated settings on `backend` (the run's `--backend`).
    pub fn with_backend(settings: LocalGlobalSettings, backend: AnyBackend) -> Self {
        Self { backend, ..Self::new(settings) }
    }

    /// A solver with validated settings.
    pub fn new(settings: LocalGlobalSettings) -> Self {
        let (ncp, global, r_factor) = (settings.ncp, settings.global_solve, settings.r_factor);
        Self {
            settings,
            ncp,
            global,
            r_factor,
            backend: AnyBackend::default(),
            model: None,
            local: vec![],
            krylov: KrylovWorkspace::default(),
        }
    }

    /// Memory of the sparse inverse factor of the current model (after a step with
    /// `global_solve = sparse_inverse`).
    pub fn inverse_memory(&self) -> Option<kernels::sparse_inverse::InverseMemory> {
        match self.model.as_ref().map(|m| &m.inverse) {
            Some(super::model::GlobalInverse::SparseInverse(s)) => Some(s.memory()),
            _ => None,
        }
    }
}

fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

impl Solver for LocalGlobal {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.settings.clone();
        let (h, nv, nc) = (p.dt, p.nv(), p.nc());
        let h2 = h * h;
        if !p.world.bodies.is_empty() {
            return Err(SolveError::Unsupported { what: "rigid bodies (local_global simulates FEM bodies)".into() });
        }
        if p.world.deformables.is_empty() {
            return Err(SolveError::Unsupported { what: "a world without deformable bodies".into() });
        }
        if p.nb() > 0 {
            return Err(SolveError::Unsupported { what: "bilateral constraints (joints)".into() });
        }
        if let Some(c) = p.contacts.contacts.iter().find(|c| c.compliance != ContactCompliance::Rigid) {
            return Err(SolveError::Unsupported { what: format!("compliant contact {:?}", c.key) });
        }
        let mut fixed = vec![false; nv];
        for &(k, _) in &p.prescribed {
            fixed[k] = true;
        }
        // constant model: A, S (once per scene, Algorithm 4 line 1)
        let key = ModelKey::of(p.world, h, &fixed);
        if !self.model.as_ref().is_some_and(|m| m.key == key) {
            self.model = None;
            self.model = Some(Model::build(p.world, h, &fixed, self.global)?);
        }
        let backend = self.backend.clone();
        let model = self.model.as_mut().expect("built above");
        let nf = model.free.len();

        // q̃ = q_t + h v_t + h² M⁻¹ f_ext (f_ext: the problem's forces without the elastic part)
        let grad0 = p.world.elastic_gradient();
        let q_tilde: Vec<f64> =
            (0..nv).map(|k| p.q0[k] + h * p.v0[k] + h2 * (p.forces[k] + grad0[k]) / model.mass[k]).collect();
        // q⁰ = q̃ (PD convention), prescribed DOFs at their targets
        let mut q = q_tilde.clone();
        for &(k, v) in &p.prescribed {
            q[k] = p.q0[k] + h * v;
        }
        if !q.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "inertial predictor q̃".into() });
        }
        // M q̃ − A_fp q_p: the constant part of the free right-hand side
        let mut qp = q.clone();
        for &k in &model.free {
            qp[k] = 0.0;
        }
        let coupling = model.a_full.mul(&qp);
        let b_const: Vec<f64> = model.free.iter().map(|&k| model.mass[k] * q_tilde[k] - coupling[k]).collect();
        let scale_q =
            (h * inf_norm(&p.v0)).max(inf_norm(&q_tilde.iter().zip(&p.q0).map(|(a, b)| a - b).collect::<Vec<_>>()));
        let scale_q = scale_q.max(1e-12);

        // optional ground truth q* (contact-free steps)
        let reference = if s.reference && nc == 0 {
            let (_, e_star, _) = newton_reference(p, &q_tilde, &q, &fixed)?;
            Some(e_star)
        } else {
            None
        };

        // contacts: H (free columns), W = H A⁻¹ Hᵀ once per step (Eq. 27), r-factors (Eq. 28)
        let m = 3 * nc;
        let trip = p.contacts.jacobian_triplets();
        let h_full = Csr::from_triplets(m, nv, &trip);
        let h_free = Csr::from_triplets(
            m,
            nf,
            &trip.iter().filter_map(|&(r, c, v)| Some((r, model.free_of[c]?, v))).collect::<Vec<_>>(),
        );
        let w = if nc > 0 { model.delassus(&h_free) } else { Csr::zeros(0, 0) };
        let wdiag = w.diagonal();
        let rdiag = match self.r_factor {
            RFactor::Delassus => wdiag.clone(),
            RFactor::Mass => {
                let inv: Vec<DMatrix<f64>> =
                    model.free.iter().map(|&k| DMatrix::from_element(1, 1, 1.0 / model.mass[k])).collect();
                let block_of: Vec<(usize, usize)> = (0..nf).map(|i| (i, 0)).collect();
                schur_diagonal(&h_free, &inv, &block_of)
            }
        };
        let (mut r_n, mut r_f) = (vec![h2; nc], vec![h; nc]);
        for i in 0..nc {
            let (rn, rf) = (h2 * rdiag[3 * i], h * 0.5 * (rdiag[3 * i + 1] + rdiag[3 * i + 2]));
            if rn > 0.0 && rn.is_finite() {
                r_n[i] = rn;
            }
            if rf > 0.0 && rf.is_finite() {
                r_f[i] = rf;
            }
        }
        let gap0: Vec<f64> = p.contacts.contacts.iter().map(|c| c.gap).collect();
        let mu: Vec<f64> = p.contacts.contacts.iter().map(|c| c.mu).collect();
        // λ⁰ (forces, N): warm start from the previous impulses / h
        let mut lam = vec![0.0; m];
        if s.warm_start {
            for i in 0..nc {
                if let Some(imp) = p.warm_impulse(i) {
                    for c in 0..3 {
                        lam[3 * i + c] = imp[c] / h;
                    }
                }
            }
        }

        // q⁰ consistent with the warm-started λ⁰: q⁰ = q̃ + h² A⁻¹ Hᵀ λ⁰ (free DOFs), so that the
        // first NCP evaluation sees the previous step's contact forces (README "choices")
        if lam.iter().any(|l| *l != 0.0) {
            let f = h_free.transpose().mul(&lam);
            let (mut t1, mut dx) = (vec![0.0; nf], vec![0.0; nf]);
            model.apply_inverse(&backend, &f, &mut t1, &mut dx);
            for (i, &k) in model.free.iter().enumerate() {
                q[k] += h2 * dx[i];
            }
        }
        // scratch
        let (mut x, mut x_free) = (vec![0.0; nf], vec![0.0; nf]);
        for (i, &k) in model.free.iter().enumerate() {
            x[i] = q[k];
        }
        let (mut b, mut tmp, mut corr, mut force) = (vec![0.0; nf], vec![0.0; nf], vec![0.0; nf], vec![0.0; nf]);
        let (mut omega, mut ediag, mut rhs, mut dlam) = (vec![1.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        let (mut phi, mut y, mut wol, mut dq, mut ol) =
            (vec![0.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        let mut gvec = vec![0.0; nv];
        self.local.resize(model.elements.len(), (Vec12::zeros(), 0.0));
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        let mut e_first = f64::NAN;
        let record_energy = |e: f64, e_first: f64| -> Vec<(&'static str, f64)> {
            let mut row = vec![("incremental_potential_j", e)];
            if let Some(es) = reference {
                row.push(("energy_rel_error", (e - es) / (e_first - es)));
            }
            row
        };
        for k in 0..=s.iterations {
            // (a) local step at q^k, in parallel over elements (Eq. 5): p_i = P_i(G_i q^k)
            let world = p.world;
            let qk = &q;
            self.local.par_iter_mut().zip(model.elements.par_iter()).for_each(|(out, el)| {
                let mut xe = Vec12::zeros();
                for (a, &d) in el.dofs.iter().enumerate() {
                    for i in 0..3 {
                        xe[3 * a + i] = qk[d + i];
                    }
                }
                let fv = el.g * xe;
                let f = Matrix3::from_column_slice(fv.as_slice());
                let mut rhs_e = Vec12::zeros();
                let mut energy = 0.0;
                for (wk, pk) in world.deformables[el.body].projective_terms_at(el.index, &f) {
                    let pv = nalgebra::SVector::<f64, 9>::from_column_slice(pk.as_slice());
                    energy += 0.5 * wk * (fv - pv).norm_squared();
                    rhs_e += wk * el.g.transpose() * pv;
                }
                *out = (rhs_e, energy);
            });
            // PD incremental potential e(q^k) = 1/(2h²)‖q − q̃‖²_M + Σ w/2 ‖G q − p‖² (Eq. 1)
            let inertia: f64 =
                (0..nv).map(|kk| model.mass[kk] * (q[kk] - q_tilde[kk]).powi(2)).sum::<f64>() / (2.0 * h2);
            let energy = inertia + self.local.iter().map(|l| l.1).sum::<f64>();
            if k == 0 {
                e_first = energy;
            }
            if !energy.is_finite() {
                return Err(SolveError::NonFinite { what: format!("local step at iteration {k}") });
            }
            if k == s.iterations {
                log.record(&record_energy(energy, e_first));
                break;
            }
            // (b) b^k = M q̃ + h² Σ w Gᵀ p (Eq. 6), free rows, minus A_fp q_p
            gvec.fill(0.0);
            for (el, (r, _)) in model.elements.iter().zip(&self.local) {
                for (a, &d) in el.dofs.iter().enumerate() {
                    for i in 0..3 {
                        gvec[d + i] += r[3 * a + i];
                    }
                }
            }
            for (i, &kk) in model.free.iter().enumerate() {
                b[i] = b_const[i] + h2 * gvec[kk];
            }
            // (c) global step q_free = A⁻¹ b (Eq. 8: Sᵀ(S b); or triangular solves; or Jacobi)
            model.global_step(&backend, &b, &x, &mut tmp, &mut x_free);
            let mut row = record_energy(energy, e_first);
            if nc == 0 {
                let change = x.iter().zip(&x_free).fold(0.0f64, |mm, (a, c)| mm.max((a - c).abs()));
                x.copy_from_slice(&x_free);
                row.push(("dq_rel_linf", change / scale_q));
                log.record(&row);
                for (i, &kk) in model.free.iter().enumerate() {
                    q[kk] = x[i];
                }
                iterations = k + 1;
                if s.tolerance > 0.0 && change <= s.tolerance * scale_q {
                    status = SolveStatus::Solved;
                    // one more local step is not needed: q is the returned iterate
                    break;
                }
                continue;
            }
            // (d) constraint values at q^k: δ_n = φ0 + H_n (q − q0), h δ̇_f = H_f (q − q0) (Eq. 40)
            let disp: Vec<f64> = q.iter().zip(&p.q0).map(|(a, c)| a - c).collect();
            backend.spmv(&h_full, &disp, &mut dq);
            // (e) NCP rows: Ω, E, φ (Eqs. 46–57 through kernels::ncp)
            let (mut n_stick, mut n_slip, mut phi_n_max, mut phi_f_max) = (0usize, 0usize, 0.0f64, 0.0f64);
            for i in 0..nc {
                let (ln, lt) = (lam[3 * i], [lam[3 * i + 1], lam[3 * i + 2]]);
                let row_n = normal_row(self.ncp, gap0[i] + dq[3 * i], ln, r_n[i]);
                omega[3 * i] = row_n.alpha;
                ediag[3 * i] = row_n.s / h2;
                phi[3 * i] = row_n.phi;
                phi_n_max = phi_n_max.max(row_n.phi.abs());
                let vt = [dq[3 * i + 1] / h, dq[3 * i + 2] / h];
                if ln > 0.0 && mu[i] > 0.0 {
                    let ef = friction_w(self.ncp, vt[0].hypot(vt[1]), mu[i] * ln, lt[0].hypot(lt[1]), r_f[i]);
                    if ef == 0.0 {
                        n_stick += 1;
                    } else {
                        n_slip += 1;
                    }
                    for t in 0..2 {
                        omega[3 * i + 1 + t] = 1.0;
                        ediag[3 * i + 1 + t] = ef / h;
                        phi[3 * i + 1 + t] = vt[t] + ef * lt[t];
                    }
                } else {
                    // λ_n ≤ 0 (or μ = 0): ω_f = 0, E_f = I, φ_f = λ_f drives λ_f → 0 (Eqs. 50, 56)
                    for t in 0..2 {
                        omega[3 * i + 1 + t] = 0.0;
                        ediag[3 * i + 1 + t] = 1.0 / h;
                        phi[3 * i + 1 + t] = lt[t];
                    }
                }
                phi_f_max = phi_f_max.max(phi[3 * i + 1].abs()).max(phi[3 * i + 2].abs());
            }
            if !phi.iter().chain(&ediag).all(|v| v.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("NCP rows at iteration {k}") });
            }
            // (f) y = H (q_0^k − q^k), q_0^k = q_free + h² A⁻¹ Hᵀ Ω λ^k: = H(q_free − q^k) + h² W Ω λ^k
            for (i, v) in tmp.iter_mut().enumerate() {
                *v = x_free[i] - x[i];
            }
            backend.spmv(&h_free, &tmp, &mut y);
            backend.mul_elem(&omega, &lam, &mut ol);
            backend.spmv(&w, &ol, &mut wol);
            backend.axpy(h2, &wol, &mut y);
            // (g) rhs = (1/h²)(h − J A⁻¹ g) (Algorithms 3–4 sign; README erratum 1), per row:
            //     normal −(φ_n + ω_n y_n)/h², friction −(φ_f + ω_f y_f / h)/h
            for i in 0..nc {
                rhs[3 * i] = -(phi[3 * i] + omega[3 * i] * y[3 * i]) / h2;
                for t in 1..3 {
                    let r = 3 * i + t;
                    rhs[r] = -(phi[r] + omega[r] * y[r] / h) / h;
                }
            }
            // (h) (Ω W Ω + E) Δλ = rhs by conjugate residual through the Backend (fixed budget)
            let pinv: Vec<f64> = if s.cr_jacobi {
                (0..m)
                    .map(|r| {
                        let d = omega[r] * omega[r] * wdiag[r] + ediag[r];
                        if d > 0.0 {
                            1.0 / d
                        } else {
                            1.0
                        }
                    })
                    .collect()
            } else {
                vec![1.0; m]
            };
            dlam.fill(0.0);
            let params = KrylovParams { max_iterations: s.cr_iterations, rel_tolerance: 0.0, abs_tolerance: 0.0 };
            let info = backend
                .pcr_scaled_delassus(&w, &omega, &ediag, &pinv, &rhs, &mut dlam, &params, &mut self.krylov)
                .map_err(|e| SolveError::Numerical { what: format!("constraint system at iteration {k}: {e}") })?;
            // (i) λ^{k+1} = λ^k + Δλ (Eq. 23a; no projection, as the paper)
            backend.axpy(1.0, &dlam, &mut lam);
            // (j) q^{k+1} = q_free + h² A⁻¹ Hᵀ Ω λ^{k+1} (Eq. 23b)
            backend.mul_elem(&omega, &lam, &mut ol);
            h_free.transpose().mul_into(&ol, &mut force);
            model.apply_inverse(&backend, &force, &mut tmp, &mut corr);
            let mut change = 0.0f64;
            for i in 0..nf {
                let xn = x_free[i] + h2 * corr[i];
                change = change.max((xn - x[i]).abs());
                x[i] = xn;
            }
            if !x.iter().chain(&lam).all(|v| v.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("constrained global step at iteration {k}") });
            }
            for (i, &kk) in model.free.iter().enumerate() {
                q[kk] = x[i];
            }
            row.extend([
                ("dq_rel_linf", change / scale_q),
                ("ncp_normal_linf_m", phi_n_max),
                ("ncp_friction_linf_mps", phi_f_max),
                ("n_stick", n_stick as f64),
                ("n_slip", n_slip as f64),
                ("cr_iterations", info.iterations as f64),
                ("cr_rel_residual", info.rel_residual),
            ]);
            log.record(&row);
            iterations = k + 1;
            if s.tolerance > 0.0 && change <= s.tolerance * scale_q {
                status = SolveStatus::Solved;
                break;
            }
        }
        if s.tolerance == 0.0 {
            // the paper's stopping rule is the fixed iteration budget (§7.1)
            status = SolveStatus::Solved;
        }
        // v_{t+h} = (q_{t+h} − q_t)/h; prescribed DOFs exactly at their required velocity
        let mut v: Vec<f64> = q.iter().zip(&p.q0).map(|(a, c)| (a - c) / h).collect();
        for &(k, val) in &p.prescribed {
            v[k] = val;
            q[k] = p.q0[k] + h * val;
        }
        // impulses h Ω λ: what the returned q was corrected with (FCLIB order (n, t1, t2))
        let impulses = (0..nc)
            .map(|i| {
                let o = &omega;
                [h * o[3 * i] * lam[3 * i], h * o[3 * i + 1] * lam[3 * i + 1], h * o[3 * i + 2] * lam[3 * i + 2]]
            })
            .collect();
        Ok(StepSolution { v, q: Some(q), impulses, bilateral: vec![], iterations, status })
    }
}
