//! An independent reference for SAP's optimum: the same primal problem (Castro et al. Eq. 19)
//! solved by the interior-point conic solver clarabel, the role Gurobi and the Geodesic IPM play
//! in the paper (mapping in README §9).
//!
//! `x = [v; σ]`, `min ½ xᵀ P x + qᵀ x` with `P = blkdiag(A, R)`, `q = [−A v*; 0]`, subject to
//! `s = b − A_cl x ∈ SOC(3)^{n_c}` with, per contact (harness order (n, t1, t2)),
//! `S_i g = (g_n, μ g_t1, μ g_t2)`, `A_cl = [−S J, −S R]`, `b = −S v̂`, so that
//! `s_i = S_i (J_i v − v̂_i + R_i σ_i)` and `s_i ∈ SOC ⇔ g_i ∈ F_i*`. The impulses are the duals:
//! `γ_i = S_iᵀ z_i`. The cost adds back the constant `½ v*ᵀ A v*`, so it equals `ℓ_p` of Eq. 19.
//! A holonomic row (impulse set ℝ, so `F* = {0}`) is one row in the zero cone,
//! `s_k = G_k v − v̂_k + R_k σ_k = 0`, with `γ_k = z_k`; its tangential slacks are left in `x`
//! (cost `½ R σ²`, zero at the optimum).

use super::problem::SapProblem;
use super::projection::ImpulseSet;
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSettingsBuilderError, DefaultSolver, IPSolver, SolverError, SolverStatus,
    SupportedConeT,
};
use toolkit::implicit::shifted_entries;

/// The reference solution.
#[derive(Debug, Clone)]
pub struct ReferenceSolution {
    /// Velocities `v`.
    pub v: Vec<f64>,
    /// Slack impulses `σ` (equal to γ at the optimum, Eq. 21b).
    pub sigma: Vec<[f64; 3]>,
    /// Impulses `γ` recovered from the conic duals.
    pub gamma: Vec<[f64; 3]>,
    /// `ℓ_p(v, σ)` of Eq. 19 (J).
    pub cost: f64,
    /// Interior-point iterations.
    pub iterations: u32,
}

/// Why [`solve_reference`] has no solution.
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    /// The problem has prescribed DOFs, which the reference does not model.
    #[error("the reference takes no prescribed DOFs")]
    PrescribedDofs,
    /// clarabel refused the settings.
    #[error("clarabel settings: {0}")]
    Settings(DefaultSettingsBuilderError),
    /// clarabel refused the problem data.
    #[error("clarabel: {0}")]
    Setup(SolverError),
    /// clarabel stopped without solving (infeasible, iteration limit, ...).
    #[error("clarabel status {0:?}")]
    Status(SolverStatus),
}

/// Solves Eq. 19 for `prob` with clarabel to gap and feasibility tolerances `tol`.
pub fn solve_reference(prob: &SapProblem, tol: f64) -> Result<ReferenceSolution, ReferenceError> {
    let (nv, nc) = (prob.nv(), prob.constraints.len());
    let n = nv + 3 * nc;
    // P: upper triangle of blkdiag(A, R)
    if prob.fixed.iter().any(|&f| f) {
        return Err(ReferenceError::PrescribedDofs);
    }
    let (mut pi, mut pj, mut pv) = (vec![], vec![], vec![]);
    if let Some(e) = &prob.elastic {
        // the deformable stiffness part of A, upper triangle
        for (r, c, x) in shifted_entries(&e.k_dt2, e.start).filter(|&(r, c, _)| c >= r) {
            pi.push(r);
            pj.push(c);
            pv.push(x);
        }
    }
    for (b, blk) in prob.a.blocks().iter().enumerate() {
        let o = prob.a.offset(b);
        for c in 0..blk.ncols() {
            for r in 0..=c {
                if blk[(r, c)] != 0.0 {
                    pi.push(o + r);
                    pj.push(o + c);
                    pv.push(blk[(r, c)]);
                }
            }
        }
    }
    for (i, c) in prob.constraints.iter().enumerate() {
        for (k, r) in [c.cone.r_n, c.cone.r_t, c.cone.r_t].into_iter().enumerate() {
            pi.push(nv + 3 * i + k);
            pj.push(nv + 3 * i + k);
            pv.push(r);
        }
    }
    let p = CscMatrix::new_from_triplets(n, n, pi, pj, pv);
    let mut av = vec![0.0; nv];
    prob.a_mul_into(&prob.v_star, &mut av);
    let mut q: Vec<f64> = av.iter().map(|x| -x).collect();
    q.resize(n, 0.0);
    let (mut ai, mut aj, mut aval) = (vec![], vec![], vec![]);
    // first cone row of each constraint: 3 rows per contact, 1 per holonomic row
    let rows_of = |set: ImpulseSet| if set == ImpulseSet::FrictionCone { 3 } else { 1 };
    let mut row0 = Vec::with_capacity(nc + 1);
    row0.push(0);
    for c in &prob.constraints {
        row0.push(row0.last().expect("non-empty") + rows_of(c.cone.set));
    }
    let m = row0[nc];
    let mut b = vec![0.0; m];
    for (i, c) in prob.constraints.iter().enumerate() {
        let scale = [1.0, c.cone.mu, c.cone.mu];
        let nr = rows_of(c.cone.set);
        for s in &c.sides {
            for (r, sr) in scale.iter().enumerate().take(nr) {
                for col in 0..s.ncols {
                    let x = s.j[r][col] * sr;
                    if x != 0.0 {
                        ai.push(row0[i] + r);
                        aj.push(s.v_offset + col);
                        aval.push(-x);
                    }
                }
            }
        }
        let rr = [c.cone.r_n, c.cone.r_t, c.cone.r_t];
        for r in 0..nr {
            if scale[r] * rr[r] != 0.0 {
                ai.push(row0[i] + r);
                aj.push(nv + 3 * i + r);
                aval.push(-scale[r] * rr[r]);
            }
        }
        b[row0[i]] = -c.v_hat_n; // v̂_t = 0
    }
    let a = CscMatrix::new_from_triplets(m, n, ai, aj, aval);
    let cones: Vec<SupportedConeT<f64>> = prob
        .constraints
        .iter()
        .map(|c| match c.cone.set {
            ImpulseSet::FrictionCone => SupportedConeT::SecondOrderConeT(3),
            ImpulseSet::Unconstrained => SupportedConeT::ZeroConeT(1),
        })
        .collect();
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(tol)
        .tol_gap_rel(tol)
        .tol_feas(tol)
        .max_iter(200)
        .build()
        .map_err(ReferenceError::Settings)?;
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings).map_err(ReferenceError::Setup)?;
    solver.solve();
    let sol = &solver.solution;
    if !matches!(sol.status, SolverStatus::Solved) {
        return Err(ReferenceError::Status(sol.status));
    }
    let v = sol.x[..nv].to_vec();
    let sigma: Vec<[f64; 3]> =
        (0..nc).map(|i| [sol.x[nv + 3 * i], sol.x[nv + 3 * i + 1], sol.x[nv + 3 * i + 2]]).collect();
    let gamma: Vec<[f64; 3]> = prob
        .constraints
        .iter()
        .enumerate()
        .map(|(i, c)| match c.cone.set {
            ImpulseSet::FrictionCone => {
                let z = &sol.z[row0[i]..row0[i] + 3];
                [z[0], c.cone.mu * z[1], c.cone.mu * z[2]]
            }
            ImpulseSet::Unconstrained => [sol.z[row0[i]], 0.0, 0.0],
        })
        .collect();
    let vs_a_vs: f64 = prob.v_star.iter().zip(&av).map(|(a, b)| a * b).sum();
    Ok(ReferenceSolution { v, sigma, gamma, cost: sol.obj_val + 0.5 * vs_a_vs, iterations: sol.iterations })
}
