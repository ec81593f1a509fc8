//! [`Nsn`]: one time step of Macklin et al.'s non-smooth Newton method (Algorithm 1).

use super::contacts::carried_contacts;
use super::ncp::{fb_row_smoothed, friction_rows, friction_w, normal_row, FrictionRows, Ncp};
use super::schur::{factor_sparse, schur_diagonal, solve, HFactor, LinearWorkspace, SchurOperator};
use super::settings::{ContactEval, Friction, LinearSolver, Mode, NsnSettings, RMode};
use harness::model::ContactCompliance;
use harness::{ContactSet, IterationLog, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::backend::AnyBackend;
use kernels::cholesky::SparseCholesky;
use kernels::sparse::Csr;
use nalgebra::{DMatrix, Vector3};

/// Smallest magnitude treated as nonzero in scales and secant denominators.
const TINY: f64 = 1e-300;

/// The non-smooth Newton solver. Keeps the sparse Cholesky of `H` between steps (symbolic reuse).
pub struct Nsn {
    settings: NsnSettings,
    ncp: Ncp,
    r_mode: RMode,
    linear: LinearSolver,
    /// The compute backend of the run (`--backend` through `SolverContext`; the CPU by default).
    backend: AnyBackend,
    chol: Option<SparseCholesky>,
    /// Work vectors of the Schur solves and the operator's scratch, reused across Newton
    /// iterations and steps.
    linear_ws: LinearWorkspace,
    op_tmp: Vec<f64>,
    /// Preconditioned residual histories of the linear solves of the last step (tests, studies).
    pub(super) last_linear_histories: Vec<Vec<f64>>,
}

impl Nsn {
    /// A solver with validated settings on `backend` (the run's `--backend`).
    pub fn with_backend(settings: NsnSettings, backend: AnyBackend) -> Self {
        Self { backend, ..Self::new(settings) }
    }

    /// A solver with validated settings.
    pub fn new(settings: NsnSettings) -> Self {
        let (ncp, r_mode, linear) = (settings.ncp, settings.r_mode, settings.linear_solver);
        Self {
            settings,
            ncp,
            r_mode,
            linear,
            backend: AnyBackend::default(),
            chol: None,
            linear_ws: LinearWorkspace::default(),
            op_tmp: vec![],
            last_linear_histories: vec![],
        }
    }
}

/// The raw contact Jacobian (rows `(n, t1, t2)` per contact, `3 nc × nv`), prescribed columns dropped.
fn raw_jacobian(cs: &ContactSet, nv: usize, fixed: &[bool]) -> Csr {
    let t: Vec<_> = cs.jacobian_triplets().into_iter().filter(|&(_, c, _)| !fixed[c]).collect();
    Csr::from_triplets(3 * cs.len(), nv, &t)
}

fn dot2(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

/// The NCP Jacobian `J_n` (normal rows scaled by `α`, friction rows by their [`FrictionRows`]
/// mode: scaled, or rotated into `(z, ⊥)` with the magnitude row left empty) and `J_z`, the raw
/// rows `ẑᵀ J_f` of the magnitude rows of projected contacts (their force enters `g`, their row
/// is decoupled).
fn ncp_jacobians(jraw: &Csr, alphas: &[f64], rows: &[FrictionRows]) -> (Csr, Csr) {
    let (mut tn, mut tz) = (Vec::with_capacity(jraw.data.len()), Vec::new());
    let entries = |r: usize| (jraw.indptr[r]..jraw.indptr[r + 1]).map(move |k| (jraw.indices[k], jraw.data[k]));
    for (i, fr) in rows.iter().enumerate() {
        tn.extend(entries(3 * i).map(|(c, v)| (3 * i, c, alphas[i] * v)));
        match *fr {
            FrictionRows::Scaled(_) | FrictionRows::Stick => {
                let sc = if let FrictionRows::Scaled(sc) = *fr { sc } else { 1.0 };
                for r in [3 * i + 1, 3 * i + 2] {
                    tn.extend(entries(r).map(|(c, v)| (r, c, sc * v)));
                }
            }
            FrictionRows::Projected { z, p, .. } => {
                for (t, r) in [(0, 3 * i + 1), (1, 3 * i + 2)] {
                    tz.extend(entries(r).map(|(c, v)| (3 * i + 1, c, z[t] * v)));
                    tn.extend(entries(r).map(|(c, v)| (3 * i + 2, c, p[t] * v)));
                }
            }
        }
    }
    (Csr::from_triplets(jraw.nrows, jraw.ncols, &tn), Csr::from_triplets(jraw.nrows, jraw.ncols, &tz))
}

fn inf_norm(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

impl Solver for Nsn {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.settings.clone();
        let (h, nv, nc) = (p.dt, p.nv(), p.nc());
        if p.nb() > 0 {
            return Err(SolveError::Unsupported { what: "bilateral constraints (joints)".into() });
        }
        if let Some(c) = p.contacts.contacts.iter().find(|c| c.compliance != ContactCompliance::Rigid) {
            return Err(SolveError::Unsupported { what: format!("compliant contact {:?}", c.key) });
        }
        let nonlinear = s.mode == Mode::Nonlinear;
        let fixed_point = s.friction == Friction::FixedPoint;
        let has_def = !p.world.deformables.is_empty();
        let mut fixed = vec![false; nv];
        for &(k, _) in &p.prescribed {
            fixed[k] = true;
        }
        // ũ = u⁻ + h M⁻¹ f_ext (explicit forces; the elastic force is implicit, in g)
        let grad0 = if has_def { p.world.elastic_gradient() } else { vec![0.0; nv] };
        let mut acc: Vec<f64> = p.forces.iter().zip(&grad0).map(|(f, g)| f + g).collect();
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
            let (rn, rf) = match self.r_mode {
                RMode::One => (1.0, 1.0),
                RMode::H2 => (h * h, h),
                RMode::EffectiveMass => (h * h * d0[3 * i], h * 0.5 * (d0[3 * i + 1] + d0[3 * i + 2])),
            };
            r_n[i] = if rn > 0.0 && rn.is_finite() { rn } else { h * h };
            r_f[i] = if rf > 0.0 && rf.is_finite() { rf } else { h };
        }

        // iterate: u⁰ = 0 (prescribed DOFs at their values), λ⁰ = 0 (§8.1)
        let mut u = vec![0.0; nv];
        for &(k, val) in &p.prescribed {
            u[k] = val;
        }
        let mut lam = vec![[0.0f64; 3]; nc];
        let mut q = p.integrate(&u);
        // contacts at an iterate: Eq. 9 (fixed normal, body-fixed points) or re-detected
        let carried = s.contacts == ContactEval::Carried;
        let at = |q: &[f64]| if carried { carried_contacts(p, q) } else { p.contacts_at(q) };
        let mut cs = if nonlinear { at(&q) } else { p.contacts.clone() };
        let mut gs = vec![0.0; nv];
        let mass_dv: Vec<f64> = p.mass.mul(&u_tilde.iter().zip(&p.v0).map(|(a, b)| a - b).collect::<Vec<_>>());
        let scale_g = inf_norm(&mass_dv) + inf_norm(&p.mass.mul(&p.v0)) + TINY;
        let scale_v = inf_norm(&u_tilde.iter().zip(&p.v0).map(|(a, b)| a - b).collect::<Vec<_>>())
            + inf_norm(&p.v0)
            + inf_norm(&u)
            + TINY;
        let scale_x = h * scale_v;

        let m = 3 * nc;
        let (mut g, mut eta, mut cdiag) = (vec![0.0; nv], vec![0.0; m], vec![0.0; m]);
        let (mut x, mut du, mut tmp) = (vec![0.0; m], vec![0.0; nv], vec![0.0; nv]);
        let mut rhs = vec![0.0; m];
        let mut status = SolveStatus::MaxIterations;
        // the previous iterate's largest scaled residual (1 before the first): sets the FB
        // smoothing radius μ = fb_smoothing · res · h s_v
        let mut res_prev = 1.0f64;
        let mut iterations = 0;
        self.last_linear_histories.clear();
        let mut hfac = self.chol.take();
        for k in 0..=s.max_newton_iterations {
            let smoothing = s.fb_smoothing * res_prev * scale_x;
            // 1. raw rows and gaps at the current iterate
            let jraw = raw_jacobian(&cs, nv, &fixed);
            let ju = jraw.mul(&u);
            // 2. NCP rows (Eqs. 93-98, 103-106); friction on or outside the cone: projection rows
            let (mut phi_n_max, mut phi_f_max, mut n_stick, mut n_slip) = (0.0f64, 0.0f64, 0, 0);
            let mut rows = vec![FrictionRows::Scaled(1.0); nc];
            let mut alphas = vec![0.0; nc];
            for i in 0..nc {
                let c = &cs.contacts[i];
                let gap = if nonlinear { c.gap } else { p.contacts.contacts[i].gap + h * ju[3 * i] };
                let bound = c.mu * lam[i][0];
                if bound <= 0.0 {
                    // inactive friction: λ_f = 0 explicitly (README §Errata, "Inactive friction")
                    lam[i][1] = 0.0;
                    lam[i][2] = 0.0;
                }
                // FB with Jacobian smoothing of radius μ (README "Redundant contacts"), or the
                // paper's rows (Eqs. 93–98)
                let row = if self.ncp == Ncp::FischerBurmeister {
                    fb_row_smoothed(gap, lam[i][0], r_n[i], smoothing)
                } else {
                    normal_row(self.ncp, gap, lam[i][0], r_n[i])
                };
                eta[3 * i] = row.phi / h;
                cdiag[3 * i] = row.s / (h * h);
                alphas[i] = row.alpha;
                phi_n_max = phi_n_max.max(row.phi.abs());
                rows[i] = if bound > 0.0 {
                    let vt = [ju[3 * i + 1], ju[3 * i + 2]];
                    let lf = lam[i][1].hypot(lam[i][2]);
                    let fr = friction_rows(fixed_point, vt, [lam[i][1], lam[i][2]], bound, r_f[i]);
                    match fr {
                        FrictionRows::Scaled(_) | FrictionRows::Stick => {
                            let w = if fr == FrictionRows::Stick {
                                0.0
                            } else {
                                friction_w(self.ncp, vt[0].hypot(vt[1]), bound, lf, r_f[i])
                            };
                            if w == 0.0 {
                                n_stick += 1;
                            } else {
                                n_slip += 1;
                            }
                            for t in 1..3 {
                                eta[3 * i + t] = vt[t - 1] + w * lam[i][t];
                                cdiag[3 * i + t] = w / h;
                            }
                        }
                        FrictionRows::Projected { z, p: pp, w_perp, kappa_rho } => {
                            n_slip += 1;
                            let (lz, lp) = (dot2(z, [lam[i][1], lam[i][2]]), dot2(pp, [lam[i][1], lam[i][2]]));
                            // magnitude row (decoupled): r_f (λ_z − μλ_n) = 0 with compliance r_f/h
                            eta[3 * i + 1] = r_f[i] * (lz - bound);
                            cdiag[3 * i + 1] = r_f[i] / h;
                            // perpendicular row: v_p + W_⊥ λ_p = λ_p/(κρ)
                            eta[3 * i + 2] = lp / kappa_rho;
                            cdiag[3 * i + 2] = w_perp / h;
                        }
                    }
                    fr
                } else {
                    for t in 1..3 {
                        eta[3 * i + t] = lam[i][t];
                        cdiag[3 * i + t] = 1.0 / h;
                    }
                    FrictionRows::Scaled(0.0)
                };
                phi_f_max = phi_f_max.max(eta[3 * i + 1].abs()).max(eta[3 * i + 2].abs());
            }
            let (jn, jz) = ncp_jacobians(&jraw, &alphas, &rows);
            // multipliers in the rows' coordinates (rotated (z, ⊥) for projected contacts)
            let lam_rows: Vec<f64> = (0..nc)
                .flat_map(|i| {
                    let l = lam[i];
                    match rows[i] {
                        FrictionRows::Projected { z, p: pp, .. } => {
                            [l[0], dot2(z, [l[1], l[2]]), dot2(pp, [l[1], l[2]])]
                        }
                        FrictionRows::Scaled(_) | FrictionRows::Stick => l,
                    }
                })
                .collect();
            let jnt = jn.transpose();
            // 3. elastic terms at q; g = M (u − ũ) + h ∇U(q) − h Jᵀ λ (Eq. 57 with implicit elasticity)
            let (grad, hess) = if has_def {
                let w = p.world.at_positions(&q);
                (w.elastic_gradient(), w.elastic_hessian(true))
            } else {
                (vec![0.0; nv], None)
            };
            let du_t: Vec<f64> = u.iter().zip(&u_tilde).map(|(a, b)| a - b).collect();
            p.mass.mul_into(&du_t, &mut g);
            let jzt = jz.transpose();
            self.backend_spmv(&jnt, &lam_rows, &mut tmp);
            let mut tmp2 = vec![0.0; nv];
            self.backend_spmv(&jzt, &lam_rows, &mut tmp2);
            for kk in 0..nv {
                g[kk] += h * grad[kk] - h * (tmp[kk] + tmp2[kk]);
                if fixed[kk] {
                    g[kk] = 0.0;
                }
            }
            if !g.iter().chain(&eta).all(|v| v.is_finite()) {
                self.chol = hfac;
                return Err(SolveError::NonFinite { what: format!("Newton residual at iteration {k}") });
            }
            let merit = (g.iter().chain(&eta).map(|v| v * v).sum::<f64>()).sqrt();
            let (res_g, res_n, res_f) = (inf_norm(&g) / scale_g, phi_n_max / scale_x, phi_f_max / scale_v);
            let converged = s.tolerance > 0.0 && res_g.max(res_n).max(res_f) <= s.tolerance;
            res_prev = res_g.max(res_n).max(res_f);
            if converged || k == s.max_newton_iterations {
                if converged {
                    status = SolveStatus::Solved;
                }
                log.record(&[
                    ("merit_l2", merit),
                    ("momentum_rel_linf", res_g),
                    ("ncp_normal_rel_linf", res_n),
                    ("ncp_friction_rel_linf", res_f),
                    ("n_stick", n_stick as f64),
                    ("n_slip", n_slip as f64),
                ]);
                break;
            }
            // 4. H and its block-diagonal inverse (preconditioner)
            let hinv: Vec<DMatrix<f64>>;
            let mut hf = if let Some(k_el) = &hess {
                let mut t = p.mass.triplets();
                for (r, gr) in gs.iter().enumerate() {
                    for pp in k_el.indptr[r]..k_el.indptr[r + 1] {
                        t.push((r, k_el.indices[pp], h * h * k_el.data[pp]));
                    }
                    t.push((r, r, *gr));
                }
                t.retain(|&(r, c, _)| !fixed[r] && !fixed[c]);
                t.extend((0..nv).filter(|&r| fixed[r]).map(|r| (r, r, 1.0)));
                let hm = Csr::from_triplets(nv, nv, &t);
                factor_sparse(&hm, &mut hfac)?;
                hinv = (0..nblocks)
                    .map(|b| {
                        let (o, n) = (p.mass.offset(b), p.mass.blocks()[b].nrows());
                        let blk = DMatrix::from_fn(n, n, |i, j| hm.get(o + i, o + j));
                        blk.try_inverse().unwrap_or_else(|| minv[b].clone())
                    })
                    .collect();
                HFactor::Sparse(hfac.as_mut().expect("factored"), &fixed)
            } else {
                hinv = minv.clone();
                HFactor::Mass(&p.mass)
            };
            // 5. b = J H⁻¹ g' − η  (Eq. 59 times h: unknown x = h Δλ). The magnitude rows of
            //    projected contacts are decoupled (no Δu term): x_z = −h (λ_z − μλ_n) is known,
            //    and its force enters as g' = g − J_zᵀ x_z (block elimination).
            let mut xz = vec![0.0; m];
            for i in 0..nc {
                if matches!(rows[i], FrictionRows::Projected { .. }) {
                    xz[3 * i + 1] = -h * eta[3 * i + 1] / r_f[i];
                }
            }
            let mut gp = g.clone();
            self.backend_spmv(&jzt, &xz, &mut tmp);
            for ((gk, tk), &f) in gp.iter_mut().zip(&tmp).zip(&fixed) {
                if !f {
                    *gk -= tk;
                }
            }
            tmp.copy_from_slice(&gp);
            hf.solve(&mut tmp);
            self.backend_spmv(&jn, &tmp, &mut rhs);
            for (bi, e) in rhs.iter_mut().zip(&eta) {
                *bi -= e;
            }
            let diag: Vec<f64> =
                schur_diagonal(&jn, &hinv, &block_of).iter().zip(&cdiag).map(|(d, c)| d + c + s.epsilon).collect();
            let cshift: Vec<f64> = cdiag.iter().map(|c| c + s.epsilon).collect();
            self.op_tmp.resize(nv, 0.0);
            let mut op = SchurOperator {
                j: &jn,
                jt: &jnt,
                h: &mut hf,
                c: &cshift,
                backend: &self.backend,
                tmp: &mut self.op_tmp,
            };
            let (its, tol) = (s.linear_iterations, s.linear_tolerance);
            let info = solve(self.linear, &mut op, &diag, &rhs, &mut x, its, tol, &mut self.linear_ws)?;
            // 6. Δu = H⁻¹ (Jᵀ x − g)  (Eq. 60)
            for i in 0..nc {
                if matches!(rows[i], FrictionRows::Projected { .. }) {
                    x[3 * i + 1] = xz[3 * i + 1];
                }
            }
            self.backend_spmv(&jnt, &x, &mut du);
            for (d, gk) in du.iter_mut().zip(&gp) {
                *d -= gk;
            }
            hf.solve(&mut du);
            for (d, &f) in du.iter_mut().zip(&fixed) {
                if f {
                    *d = 0.0;
                }
            }
            if !du.iter().chain(&x).all(|v| v.is_finite()) {
                self.chol = hfac;
                return Err(SolveError::NonFinite { what: format!("Newton step at iteration {k}") });
            }
            // 7. damped update (Eqs. 61-63; q from q⁻, README §Errata)
            let t = s.damping;
            for i in 0..nc {
                let (a, b) = (x[3 * i + 1], x[3 * i + 2]);
                let dt_frame = match rows[i] {
                    FrictionRows::Projected { z, p: pp, .. } => [a * z[0] + b * pp[0], a * z[1] + b * pp[1]],
                    FrictionRows::Scaled(_) | FrictionRows::Stick => [a, b],
                };
                lam[i][0] += t * x[3 * i] / h;
                lam[i][1] += t * dt_frame[0] / h;
                lam[i][2] += t * dt_frame[1] / h;
            }
            let u_new: Vec<f64> = u.iter().zip(&du).map(|(a, d)| a + t * d).collect();
            let q_new = p.integrate(&u_new);
            let cs_new = if nonlinear { at(&q_new) } else { cs.clone() };
            // 8. geometric stiffness (§8.3, Eqs. 71-74 with the sign of README §Errata): deformable DOFs only
            if s.geometric_stiffness && nonlinear && has_def && nc > 0 {
                let f_old = cs.transpose_mul(&lam, nv);
                let f_new = cs_new.transpose_mul(&lam, nv);
                let first_def: usize = p.world.deformable_v_offsets().first().copied().unwrap_or(nv);
                for kk in first_def..nv {
                    let step = t * du[kk];
                    if !fixed[kk] && step.abs() > 1e-14 {
                        let c = h * (f_new[kk] - f_old[kk]) / step;
                        gs[kk] = -c.min(0.0);
                    }
                }
            }
            let step_u = t * inf_norm(&du);
            log.record(&[
                ("merit_l2", merit),
                ("momentum_rel_linf", res_g),
                ("ncp_normal_rel_linf", res_n),
                ("ncp_friction_rel_linf", res_f),
                ("n_stick", n_stick as f64),
                ("n_slip", n_slip as f64),
                ("step_u_linf", step_u),
                ("step_lambda_linf", t * inf_norm(&x) / h),
                ("linear_iterations", info.iterations as f64),
                ("linear_rel_residual", info.rel_residual),
            ]);
            self.last_linear_histories.push(info.history);
            u = u_new;
            q = q_new;
            cs = cs_new;
            iterations = k + 1;
        }
        self.chol = hfac;
        // impulses h λ, rotated from the final frames into the problem's frames
        let impulses = (0..nc)
            .map(|i| {
                let world = cs.contacts[i].frame * Vector3::from(lam[i]);
                let local: Vector3<f64> = p.contacts.contacts[i].frame.transpose() * world * h;
                [local.x, local.y, local.z]
            })
            .collect();
        Ok(StepSolution { v: u, q: None, impulses, bilateral: vec![], iterations, status })
    }
}

impl Nsn {
    fn backend_spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]) {
        use kernels::backend::Blas;
        self.backend.spmv(a, x, y);
    }
}
