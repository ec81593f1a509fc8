//! The paper's reduced form (Appendix A, Eqs. 181–188, with the corrected `d`, `e` of README §10.2):
//! `v+`, the joint impulses and the slacks are eliminated and the cone program is posed in
//! `λ* = [γn (na); γt (2 na)]` with a dense Hessian.
//!
//! Joints are folded into the inverse inertia (Eq. 189, written for rigid and soft rows alike):
//! `A_b = G_b M⁻¹ G_bᵀ + R_b`, `Λ = M⁻¹ - M⁻¹G_bᵀ A_b⁻¹ G_b M⁻¹`,
//! `ṽ = v* + M⁻¹G_bᵀ A_b⁻¹ (v̂_b - G_b v*)`, so that `v+ = ṽ + Λ J*ᵀ λ*`. With `D = J* Λ J*ᵀ`:
//! `H = diag(ζ I, I) + T_tᵀ T_t`, `T_t = S_t + c_t D_t` (Eq. 183), `g = T_tᵀ c_t J_t ṽ` (Eq. 184),
//! normal rows `scale (D_n λ* + r γn) ≥ scale (v̂ - J_n ṽ)` (Eqs. 185–186), then `γn ≥ 0` and one
//! SOC(3) per contact. Post-solve (after Eq. 163): `γ_b = A_b⁻¹ (v̂_b - G_b v* - G_b M⁻¹ J*ᵀ λ*)`.
//! Cost `O(n³)` (README P15); kept as the faithful option.
//!
//! Deformable (FEM) bodies (README §2): `M⁻¹` above is `A'⁻¹` of the linearised implicit step on
//! their DOFs (`toolkit::implicit`; zero on prescribed DOFs, so an impulse never moves them) and
//! `v*` the implicit free velocity, so `D = J* Λ J*ᵀ` is the Delassus operator `J A⁻¹ Jᵀ` of
//! that step (dense over the contacts, as for rigid bodies).

use super::lifted::{contact_row, joint_row};
use super::model::{ainv_columns, Model};
use super::settings::{DrumwrightSettings, MuZero};
use super::{Outcome, Stage};
use api::{SolveError, StepProblem};
use nalgebra::{DMatrix, DVector};
use toolkit::cone_program::{Program, RowKind, Stats};
use toolkit::implicit::ImplicitElastic;

/// Solves one cone program of `stage`; `elastic`: the deformable bodies' implicit step,
/// assembled for `p` (`None` without deformable bodies).
pub(crate) fn solve(
    p: &StepProblem<'_>,
    m: &Model,
    s: &DrumwrightSettings,
    mut elastic: Option<&mut ImplicitElastic>,
    stage: Stage<'_>,
    stats: &mut Vec<Stats>,
) -> Result<Outcome, SolveError> {
    let (nv, na, nb) = (p.nv(), m.na(), p.nb());
    let friction = !matches!(stage, Stage::NormalOnly);
    let nt = if friction { 2 * na } else { 0 };
    let nx = na + nt;
    // rows of J*: normal rows first, then (r, s) per contact
    let rows: Vec<Vec<(usize, f64)>> = (0..nx)
        .map(|k| {
            if k < na {
                contact_row(p, m.active[k], 0)
            } else {
                contact_row(p, m.active[(k - na) / 2], 1 + (k - na) % 2)
            }
        })
        .collect();
    let apply = |row: &[(usize, f64)], x: &[f64]| row.iter().map(|&(c, v)| v * x[c]).sum::<f64>();
    let mut mj = ainv_columns(p, elastic.as_deref_mut(), nx, |k, out| rows[k].iter().for_each(|&(c, v)| out[c] += v));
    let mut v_tilde = DVector::from_column_slice(&m.v_star);
    // joint elimination
    let mut joint_solve: Option<(nalgebra::linalg::FullPivLU<f64, nalgebra::Dyn, nalgebra::Dyn>, DMatrix<f64>)> = None;
    if nb > 0 {
        let grows: Vec<Vec<(usize, f64)>> = (0..nb).map(|k| joint_row(p, k)).collect();
        let mg = ainv_columns(p, elastic, nb, |k, out| grows[k].iter().for_each(|&(c, v)| out[c] += v));
        let mut ab = DMatrix::from_fn(nb, nb, |i, j| apply(&grows[i], mg.column(j).as_slice()));
        for k in 0..nb {
            ab[(k, k)] += m.bilateral[k].r;
        }
        let lu = ab.full_piv_lu();
        let rhs = DVector::from_fn(nb, |k, _| m.bilateral[k].vhat - apply(&grows[k], &m.v_star));
        let y = lu.solve(&rhs).ok_or_else(|| SolveError::Factorization {
            what: "joint matrix G_b M⁻¹ G_bᵀ + R_b is singular (redundant rigid joint rows)".into(),
        })?;
        v_tilde += &mg * &y;
        // Λ J*ᵀ = M⁻¹J*ᵀ - M⁻¹G_bᵀ A_b⁻¹ G_b M⁻¹ J*ᵀ
        let gmj = DMatrix::from_fn(nb, nx, |i, j| apply(&grows[i], mj.column(j).as_slice()));
        let corr = lu.solve(&gmj).ok_or_else(|| SolveError::Factorization { what: "joint matrix".into() })?;
        mj -= &mg * &corr;
        joint_solve = Some((lu, gmj));
    }
    let lj = mj; // Λ J*ᵀ (nv × nx)
    let d = DMatrix::from_fn(nx, nx, |i, j| apply(&rows[i], lj.column(j).as_slice()));
    let jv: Vec<f64> = rows.iter().map(|r| apply(r, v_tilde.as_slice())).collect();

    let mut prog = Program::new(nx).with_infeasible_note(super::INFEASIBLE_NOTE);
    let mut h = DMatrix::<f64>::zeros(nx, nx);
    for a in 0..na {
        h[(a, a)] += m.zeta;
    }
    if friction {
        // T_t = S_t + c_t D_t (nt × nx)
        let mut tt = d.rows(na, nt).into_owned() * m.ct;
        for t in 0..nt {
            tt[(t, na + t)] += 1.0;
            h[(na + t, na + t)] += 1.0;
        }
        // μ = 0 as a §5 unilateral row (`mu_zero = "unilateral"`): no slack β in the objective
        let no_slack = |t: usize| s.mu_zero == MuZero::Unilateral && m.mu[t / 2] == 0.0;
        for t in (0..nt).filter(|&t| no_slack(t)) {
            tt.row_mut(t).fill(0.0);
        }
        h += tt.transpose() * &tt;
        let dvec = DVector::from_fn(nt, |t, _| if no_slack(t) { 0.0 } else { m.ct * jv[na + t] });
        let g = tt.transpose() * dvec;
        prog.q.copy_from_slice(g.as_slice());
    }
    for i in 0..nx {
        for j in i..nx {
            prog.p_add(i, j, h[(i, j)]);
        }
    }
    match stage {
        Stage::FrictionGiven(gn) => {
            for (a, g) in gn.iter().enumerate() {
                prog.row(RowKind::Zero, vec![(a, 1.0)], *g);
            }
        }
        _ => {
            for a in 0..na {
                let l = m.normal[a];
                let mut row: Vec<(usize, f64)> = (0..nx).map(|j| (j, l.scale * d[(a, j)])).collect();
                row[a].1 += l.scale * l.r;
                prog.row(RowKind::Nonneg, row, l.scale * (l.vhat - jv[a]));
                prog.row(RowKind::Nonneg, vec![(a, 1.0)], 0.0);
            }
        }
    }
    if friction {
        for a in 0..na {
            if m.mu[a] == 0.0 {
                prog.row(RowKind::Zero, vec![(na + 2 * a, 1.0)], 0.0);
                prog.row(RowKind::Zero, vec![(na + 2 * a + 1, 1.0)], 0.0);
            } else {
                prog.soc(a, na + 2 * a, na + 2 * a + 1, m.mu[a]);
            }
        }
    }
    let name = match stage {
        Stage::Joint => "reduced",
        Stage::NormalOnly => "reduced normal stage",
        Stage::FrictionGiven(_) => "reduced friction stage",
    };
    let sol = prog.solve(&s.clarabel(), stats, name)?;
    let x = DVector::from_vec(sol.x);
    let v = &v_tilde + &lj * &x;
    let gb = match joint_solve {
        None => vec![],
        Some((lu, gmj)) => {
            let rhs = DVector::from_fn(nb, |k, _| m.bilateral[k].vhat - apply(&joint_row(p, k), &m.v_star)) - gmj * &x;
            lu.solve(&rhs)
                .ok_or_else(|| SolveError::Factorization { what: "joint matrix".into() })?
                .iter()
                .copied()
                .collect()
        }
    };
    debug_assert_eq!(v.len(), nv);
    Ok(Outcome {
        v: v.iter().copied().collect(),
        gn: x.as_slice()[..na].to_vec(),
        gt: (0..na).map(|a| if friction { [x[na + 2 * a], x[na + 2 * a + 1]] } else { [0.0, 0.0] }).collect(),
        gb,
        status: sol.status,
        iterations: sol.iterations as usize,
    })
}
