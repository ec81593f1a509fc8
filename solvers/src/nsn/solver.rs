//! [`Nsn`]: one time step of Macklin et al.'s non-smooth Newton method (Algorithm 1).

use super::delassus::DelassusWork;
use super::model::{
    append_joint_rows, joint_jacobian, multipliers_in_rows, ncp_jacobians, ncp_rows, raw_jacobian, rows_to_frame,
    NcpRows, RowOptions,
};
use super::ncp::Ncp;
use super::newton::{direction, Direction, NewtonSystem, NewtonWork};
use super::problem::{inf_norm, NsnProblem};
use super::schur::LinearWorkspace;
use super::settings::{ContactEval, Friction, LinearSolver, Mode, NsnSettings, RMode};
use api::BilateralSet;
use api::{
    ContactSet, ElasticEval, IterationLog, Reevaluation, SolveError, SolveStatus, Solver, StepProblem, StepSolution,
};
use kernels::backend::AnyBackend;
use kernels::cholesky::SparseCholesky;
use kernels::sparse::Csr;
use nalgebra::Vector3;

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
    /// Preconditioned residual histories of the linear solves of the last step (tests, studies);
    /// those of the first [`KEPT_HISTORIES`] Newton iterations, so that a huge Newton budget
    /// cannot fill the memory with them.
    pub(super) last_linear_histories: Vec<Vec<f64>>,
    /// The LU and vectors of the Delassus-form path (README "Delassus form").
    delassus: DelassusWork,
}

/// Newton iterations per step whose linear-solve residual history is kept.
const KEPT_HISTORIES: usize = 64;

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
            delassus: DelassusWork::default(),
        }
    }
}

/// One Newton iterate: velocity `u`, multipliers `λ` (forces, contact frames of `cs`), joint
/// multipliers `λ_b` (forces), positions `q = q⁻ + h G u`, the contacts and the joint rows at `q`.
struct Iterate {
    u: Vec<f64>,
    lam: Vec<[f64; 3]>,
    lam_b: Vec<f64>,
    q: Vec<f64>,
    cs: ContactSet,
    bil: BilateralSet,
}

/// The residual of one iterate: `g` (Eq. 57), the merit `‖(g, η)‖₂` and the scaled maxima.
struct Residual {
    g: Vec<f64>,
    merit: f64,
    res_g: f64,
    res_n: f64,
    res_f: f64,
    res_b: f64,
}

impl Residual {
    fn max(&self) -> f64 {
        self.res_g.max(self.res_n).max(self.res_f).max(self.res_b)
    }

    /// The log row of this residual and the rows' stick/slip counts.
    fn log_row(&self, rows: &NcpRows) -> [(&'static str, f64); 7] {
        [
            ("merit_l2", self.merit),
            ("momentum_rel_linf", self.res_g),
            ("ncp_normal_rel_linf", self.res_n),
            ("ncp_friction_rel_linf", self.res_f),
            ("joint_rel_linf", self.res_b),
            ("n_stick", rows.n_stick as f64),
            ("n_slip", rows.n_slip as f64),
        ]
    }
}

impl Solver for Nsn {
    fn solve_delassus(
        &mut self,
        p: &api::DelassusProblem,
        log: &mut IterationLog,
    ) -> Result<api::DelassusSolution, SolveError> {
        use api::Settings;
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("nsn settings: {e}") })?;
        super::delassus::solve(&self.settings, &mut self.delassus, p, log)
    }

    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.settings.clone();
        // a problem with no configuration (an FCLIB problem: gaps linear in the velocity, nothing
        // to re-detect) is the linearised NCP whatever the mode: both formulations coincide there
        let nonlinear = s.mode == Mode::Nonlinear && !p.q0.is_empty();
        let fixed_point = s.friction == Friction::FixedPoint;
        let pb = NsnProblem::new(p, self.r_mode)?;
        let (h, nv, nc) = (pb.h, pb.nv, pb.nc);
        // contacts at an iterate: Eq. 9 (fixed normal, body-fixed points) or re-detected
        let carried = s.contacts == ContactEval::Carried;
        let how = if carried { Reevaluation::Carried } else { Reevaluation::Features };
        let at = |q: &[f64]| p.contacts_at(q, how);
        // joint rows at an iterate: re-evaluated at q (Eq. 47, no index reduction) or fixed
        let bil_at = |q: &[f64]| if nonlinear && p.nb() > 0 { p.bilateral_at(q) } else { p.bilateral.clone() };
        let q = p.integrate(&pb.u0);
        let cs = if nonlinear { at(&q) } else { p.contacts.clone() };
        let bil = bil_at(&q);
        let mut it = Iterate { u: pb.u0.clone(), lam: vec![[0.0f64; 3]; nc], lam_b: vec![0.0; p.nb()], q, cs, bil };
        let mut gs = vec![0.0; nv];
        let mut status = SolveStatus::MaxIterations;
        // the lowest-merit iterate so far: returned when the budget runs out or the iteration
        // diverges (README "Safeguard: the best iterate"); the merit of the start sets the
        // divergence threshold
        let mut best: Option<Best> = None;
        let mut merit0 = f64::INFINITY;
        // the previous iterate's largest scaled residual (1 before the first): sets the FB
        // smoothing radius μ = fb_smoothing · res · h s_v
        let mut res_prev = 1.0f64;
        let mut iterations = 0;
        self.last_linear_histories.clear();
        let mut hfac = self.chol.take();
        for k in 0..=s.max_newton_iterations {
            let o =
                RowOptions { ncp: self.ncp, nonlinear, fixed_point, smoothing: s.fb_smoothing * res_prev * pb.scale_x };
            // 1. raw rows and gaps at the current iterate
            let jraw = raw_jacobian(&it.cs, nv, &pb.fixed);
            let ju = jraw.mul(&it.u);
            // 2. NCP rows (Eqs. 93-98, 103-106); friction on or outside the cone: projection rows
            let mut rows = ncp_rows(&pb, &o, &it.cs, p.contacts, &ju, &mut it.lam);
            // joint rows: identity NCP functions (Eqs. 47, 55, 58)
            let jb = joint_jacobian(&it.bil, nv, &pb.fixed);
            append_joint_rows(&mut rows, h, nonlinear, &it.bil, &p.bilateral, &it.bil.velocities(&it.u), &it.lam_b);
            let (jn, jz) = ncp_jacobians(&jraw, &rows.alphas, &rows.rows, &jb);
            let (jnt, jzt) = (jn.transpose(), jz.transpose());
            // 3. elastic terms at q; g = M (u − ũ) + h ∇U(q) − h Jᵀ λ (Eq. 57 with implicit elasticity)
            let elastic =
                if pb.has_def { p.elastic_at(&it.q) } else { ElasticEval { gradient: vec![0.0; nv], hessian: None } };
            let lam_rows = multipliers_in_rows(&it.lam, &rows.rows, &it.lam_b);
            let r = self.residual(p, &pb, &it.u, &elastic.gradient, &jnt, &jzt, &lam_rows, &rows);
            let finite = r.merit.is_finite() && r.g.iter().chain(&rows.eta).all(|v| v.is_finite());
            if !finite && best.is_none() {
                self.chol = hfac;
                return Err(SolveError::NonFinite { what: format!("Newton residual at iteration {k}") });
            }
            if k == 0 {
                merit0 = r.merit;
            }
            // (a start of zero merit, already the solution, has no threshold: round-off is no divergence)
            let diverged = !finite || (merit0 > 0.0 && r.merit > DIVERGENCE_FACTOR * merit0);
            if finite && best.as_ref().is_none_or(|b| r.merit < b.merit) {
                best = Some(Best::of(p, h, &it, r.merit));
            }
            let converged = finite && s.tolerance > 0.0 && r.max() <= s.tolerance;
            res_prev = r.max();
            if converged || diverged || k == s.max_newton_iterations {
                if converged {
                    status = SolveStatus::Solved;
                } else if diverged {
                    status = SolveStatus::InsufficientProgress;
                }
                log.record(&r.log_row(&rows));
                if log.wants_iterates() && finite {
                    log.iterate(&it.u, &impulses_in_problem_frames(p, &it), &joint_impulses(h, &it));
                }
                break;
            }
            // 4.–6. the Newton direction (Eqs. 59–60)
            let sys = NewtonSystem {
                jn: &jn,
                jnt: &jnt,
                jzt: &jzt,
                rows: &rows,
                g: &r.g,
                hess: elastic.hessian.as_ref(),
                gs: &gs,
            };
            let work = NewtonWork {
                linear: self.linear,
                backend: &self.backend,
                hfac: &mut hfac,
                op_tmp: &mut self.op_tmp,
                ws: &mut self.linear_ws,
            };
            let Direction { x, du, info } = direction(&pb, &p.mass, &s, &sys, work)?;
            if !du.iter().chain(&x).all(|v| v.is_finite()) {
                // a non-finite direction from a finite iterate: stop with the best iterate
                status = SolveStatus::InsufficientProgress;
                log.record(&r.log_row(&rows));
                break;
            }
            // 7. damped update (Eqs. 61-63; q from q⁻, README §Errata)
            let t = s.damping;
            let next = damped_update(p, &pb, &it, &rows, &x, &du, t, |q| {
                (if nonlinear { at(q) } else { it.cs.clone() }, bil_at(q))
            });
            // 8. geometric stiffness (§8.3, Eqs. 71-74 with the sign of README §Errata): deformable DOFs only
            if s.geometric_stiffness && nonlinear && pb.has_def && nc > 0 {
                geometric_stiffness(p, &pb, &it.cs, &next.cs, &next.lam, &du, t, &mut gs);
            }
            let mut row = r.log_row(&rows).to_vec();
            row.extend([
                ("step_u_linf", t * inf_norm(&du)),
                ("step_lambda_linf", t * inf_norm(&x) / h),
                ("linear_iterations", info.iterations as f64),
                ("linear_rel_residual", info.rel_residual),
            ]);
            log.record(&row);
            if log.wants_iterates() {
                log.iterate(&it.u, &impulses_in_problem_frames(p, &it), &joint_impulses(h, &it));
            }
            if log.should_stop() {
                // the current iterate is evaluated and kept as a candidate above; `next` is not.
                // Stopped by the harness's rule: this iterate is the one it measured
                status = log.stop_status();
                break;
            }
            if self.last_linear_histories.len() < KEPT_HISTORIES {
                self.last_linear_histories.push(info.history);
            }
            it = next;
            iterations = k + 1;
        }
        self.chol = hfac;
        if matches!(status, SolveStatus::Solved | SolveStatus::Stopped) {
            let impulses = impulses_in_problem_frames(p, &it);
            let bilateral = joint_impulses(h, &it);
            return Ok(StepSolution { v: it.u, q: None, impulses, bilateral, iterations, status });
        }
        let b = best.expect("a finite iterate was evaluated");
        Ok(StepSolution { v: b.u, q: None, impulses: b.impulses, bilateral: b.bilateral, iterations, status })
    }
}

/// The merit `‖[g; η]‖₂` at which an iteration counts as diverged, as a multiple of the merit
/// of the step's starting iterate (`u⁰`, `λ = 0`). The damped iteration's transient excursions
/// on the default suite reach about 10³ times the start (a contact re-detected deep in
/// penetration, README "Safeguard: the best iterate"); 10⁶ leaves three orders of magnitude
/// above them and stops a runaway iterate long before it overflows.
const DIVERGENCE_FACTOR: f64 = 1e6;

/// What a step returns of an iterate: `u`, the impulses in the problem's frames and the joint
/// impulses, with the iterate's merit `‖[g; η]‖₂`.
struct Best {
    merit: f64,
    u: Vec<f64>,
    impulses: Vec<[f64; 3]>,
    bilateral: Vec<f64>,
}

impl Best {
    fn of(p: &StepProblem<'_>, h: f64, it: &Iterate, merit: f64) -> Self {
        Self { merit, u: it.u.clone(), impulses: impulses_in_problem_frames(p, it), bilateral: joint_impulses(h, it) }
    }
}

/// The joint impulses `h λ_b` (N s), one per bilateral row.
fn joint_impulses(h: f64, it: &Iterate) -> Vec<f64> {
    it.lam_b.iter().map(|l| h * l).collect()
}

/// The impulses `h λ`, rotated from the final frames of `it` into the problem's frames.
fn impulses_in_problem_frames(p: &StepProblem<'_>, it: &Iterate) -> Vec<[f64; 3]> {
    (0..p.nc())
        .map(|i| {
            let world = it.cs.contacts[i].frame * Vector3::from(it.lam[i]);
            let local: Vector3<f64> = p.contacts.contacts[i].frame.transpose() * world * p.dt;
            [local.x, local.y, local.z]
        })
        .collect()
}

/// The damped update (Eqs. 61–63; `q` from `q⁻`, README §Errata): `λ += t x / h` (friction
/// components rotated back into the contact frame; joint multipliers from the rows after the
/// contacts'), `u += t Δu`, `q = q⁻ + h G u`, and the contacts and joint rows at the new `q`
/// (`rows_at`).
#[allow(clippy::too_many_arguments)]
fn damped_update(
    p: &StepProblem<'_>,
    pb: &NsnProblem,
    it: &Iterate,
    rows: &NcpRows,
    x: &[f64],
    du: &[f64],
    t: f64,
    rows_at: impl Fn(&[f64]) -> (ContactSet, BilateralSet),
) -> Iterate {
    let h = pb.h;
    let mut lam = it.lam.clone();
    for i in 0..pb.nc {
        let dt_frame = rows_to_frame(&rows.rows[i], x[3 * i + 1], x[3 * i + 2]);
        lam[i][0] += t * x[3 * i] / h;
        lam[i][1] += t * dt_frame[0] / h;
        lam[i][2] += t * dt_frame[1] / h;
    }
    let lam_b: Vec<f64> = it.lam_b.iter().zip(&x[3 * pb.nc..]).map(|(l, xb)| l + t * xb / h).collect();
    let u: Vec<f64> = it.u.iter().zip(du).map(|(a, d)| a + t * d).collect();
    let q = p.integrate(&u);
    let (cs, bil) = rows_at(&q);
    Iterate { u, lam, lam_b, q, cs, bil }
}

/// The geometric stiffness diagonal (§8.3, Eqs. 71–74 with the sign of README §Errata) on the
/// deformable DOFs: the secant `c = h (Jᵀλ|_new − Jᵀλ|_old) / (t Δu)` per DOF, `c_GS = max(−c, 0)`.
#[allow(clippy::too_many_arguments)]
fn geometric_stiffness(
    p: &StepProblem<'_>,
    pb: &NsnProblem,
    cs_old: &ContactSet,
    cs_new: &ContactSet,
    lam: &[[f64; 3]],
    du: &[f64],
    t: f64,
    gs: &mut [f64],
) {
    let (h, nv) = (pb.h, pb.nv);
    let f_old = cs_old.transpose_mul(lam, nv);
    let f_new = cs_new.transpose_mul(lam, nv);
    let first_def: usize = p.layout.first_deformable_v_offset().unwrap_or(nv);
    for kk in first_def..nv {
        let step = t * du[kk];
        if !pb.fixed[kk] && step.abs() > 1e-14 {
            let c = h * (f_new[kk] - f_old[kk]) / step;
            gs[kk] = -c.min(0.0);
        }
    }
}

impl Nsn {
    /// The momentum residual `g = M (u − ũ) + h ∇U(q) − h (J_nᵀ + J_zᵀ) λ` (zero on prescribed
    /// DOFs) and its scaled maxima.
    #[allow(clippy::too_many_arguments)]
    fn residual(
        &self,
        p: &StepProblem<'_>,
        pb: &NsnProblem,
        u: &[f64],
        grad: &[f64],
        jnt: &Csr,
        jzt: &Csr,
        lam_rows: &[f64],
        rows: &NcpRows,
    ) -> Residual {
        let (h, nv) = (pb.h, pb.nv);
        let mut g = vec![0.0; nv];
        let du_t: Vec<f64> = u.iter().zip(&pb.u_tilde).map(|(a, b)| a - b).collect();
        p.mass.mul_into(&du_t, &mut g);
        let (mut tmp, mut tmp2) = (vec![0.0; nv], vec![0.0; nv]);
        self.backend_spmv(jnt, lam_rows, &mut tmp);
        self.backend_spmv(jzt, lam_rows, &mut tmp2);
        for kk in 0..nv {
            g[kk] += h * grad[kk] - h * (tmp[kk] + tmp2[kk]);
            if pb.fixed[kk] {
                g[kk] = 0.0;
            }
        }
        let merit = (g.iter().chain(&rows.eta).map(|v| v * v).sum::<f64>()).sqrt();
        let (res_g, res_n, res_f, res_b) = (
            inf_norm(&g) / pb.scale_g,
            rows.phi_n_max / pb.scale_x,
            rows.phi_f_max / pb.scale_v,
            rows.phi_b_max / pb.scale_x,
        );
        Residual { g, merit, res_g, res_n, res_f, res_b }
    }
}

impl Nsn {
    fn backend_spmv(&self, a: &Csr, x: &[f64], y: &mut [f64]) {
        use kernels::backend::Blas;
        self.backend.spmv(a, x, y);
    }
}
