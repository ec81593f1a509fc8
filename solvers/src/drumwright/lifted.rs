//! The lifted sparse form (README §10.3): `v+`, the impulses and the tangential slacks are all
//! variables, so nothing dense (`M⁻¹`, `Λ`, `E`, `F`) is formed. Variables
//! `x = [v (nv) | γn (na) | γt (2 na: r, s per contact) | γb (nb) | β (2 na)]`.
//!
//! | rows | cone | equation |
//! |---|---|---|
//! | momentum (nv) | zero | `M v - Jnᵀγn - Jtᵀγt - Gbᵀγb = M v*` (Eq. 37; `A'` for `M` on deformable DOFs) |
//! | joints (nb) | zero | `scale (G_b v + r γb) = scale v̂` (Eq. 141; `min_norm` only) |
//! | tangential law (2 na) | zero | `β - γt - c_t J_t v = 0` (Eqs. 139–140, `K_r = 0`, `c_t = h B_r`) |
//! | μ = 0 (2 per contact) | zero | `γt = 0` (README P14: the cone has no interior); with `mu_zero = "unilateral"` the contact has no tangential-law rows (β = 0) |
//! | fixed normal (na) | zero | `γn = γn_fixed` (two-stage, stage 2) |
//! | normal law (na) | nonneg | `scale (J_n v + r γn) ≥ scale v̂` (Eqs. 84 / 137) |
//! | `γn ≥ 0` (na) | nonneg | Eq. 85 |
//! | cone (3 per contact, μ > 0) | SOC(3) | `‖(γr, γs)‖ ≤ μ γn` (Eq. 120 with Eq. 85) |
//!
//! Objective (Eq. 109 in impulse units, same minimiser): `½ζ‖γn‖² + ½‖γt‖² + ½‖β‖²`.
//! `normal_law = "lcp"` instead minimises `½(v - v*)ᵀM(v - v*) + ½ Σ r γ² + Σ γ (G v* - v̂)` over
//! the normal and joint impulses (the dual of the per-row max law, README §10.3), plus the same
//! friction terms.
//!
//! Deformable (FEM) bodies (README §2): their momentum is the linearised implicit step of
//! `toolkit::implicit`, `A' (v - v*) = Jᵀγ` with `A' = M + δt² K'`. Its rows are posed solved for
//! `v`, `v - A'⁻¹Jᵀγ - A'⁻¹G_bᵀγ_b = v*` (the columns `A'⁻¹Jᵀ` over the deformable DOFs, one
//! sparse solve per impulse touching them): the same set of solutions as `A'v - Jᵀγ = A'v*`,
//! but the stiff `δt² K` rows (entries ~1e4 × the node mass on the `E = 1e8` elastic slope)
//! made clarabel stop with `NumericalError` (README §2). A prescribed DOF's column entries are
//! zero (`A'⁻¹` is zero there: the boundary takes whatever reaction it needs), so its row is
//! `v_P = v̄_P`.
//! The `lcp` objective's `½(v - v*)ᵀA'(v - v*)` carries `A'` itself.

use super::model::{ainv_columns, Model};
use super::settings::{DrumwrightSettings, MuZero, NormalLaw};
use super::{Outcome, Stage};
use api::{SolveError, StepProblem};
use toolkit::cone_program::{Program, RowKind, Stats};
use toolkit::implicit::ImplicitElastic;

/// Contact `i`'s Jacobian row `r` (0 = n, 1 = t1, 2 = t2) as `(column, value)` pairs.
pub(crate) fn contact_row(p: &StepProblem<'_>, i: usize, r: usize) -> Vec<(usize, f64)> {
    let mut out = Vec::with_capacity(12);
    for b in &p.contacts.contacts[i].jacobian {
        for c in 0..b.ncols {
            out.push((b.v_offset + c, b.rows[r][c]));
        }
    }
    out
}

/// Joint row `k` as `(column, value)` pairs.
pub(crate) fn joint_row(p: &StepProblem<'_>, k: usize) -> Vec<(usize, f64)> {
    let mut out = Vec::with_capacity(12);
    for b in &p.bilateral.rows[k].jacobian {
        for c in 0..b.ncols {
            out.push((b.v_offset + c, b.row[c]));
        }
    }
    out
}

/// Solves one cone program of `stage`; `elastic`: the deformable bodies' implicit step,
/// assembled for `p` (`None` without deformable bodies).
pub(crate) fn solve(
    p: &StepProblem<'_>,
    m: &Model,
    s: &DrumwrightSettings,
    elastic: Option<&mut ImplicitElastic>,
    stage: Stage<'_>,
    stats: &mut Vec<Stats>,
) -> Result<Outcome, SolveError> {
    let (nv, na, nb) = (p.nv(), m.na(), p.nb());
    let friction = !matches!(stage, Stage::NormalOnly);
    let nt = if friction { 2 * na } else { 0 };
    let (iv, ign, igt, igb) = (0, nv, nv + na, nv + na + nt);
    let ibeta = igb + nb;
    let nvar = ibeta + nt;
    let lcp = s.normal_law == NormalLaw::Lcp;
    let mut prog = Program::new(nvar).with_infeasible_note(super::INFEASIBLE_NOTE);

    // objective
    if lcp {
        for (bi, blk) in p.mass.blocks().iter().enumerate() {
            let o = p.mass.offset(bi);
            for i in 0..blk.nrows() {
                for j in i..blk.ncols() {
                    prog.p_add(iv + o + i, iv + o + j, blk[(i, j)]);
                }
            }
        }
        for (r, c, k) in elastic.as_deref().into_iter().flat_map(|e| e.stiffness_entries()) {
            if c >= r {
                prog.p_add(iv + r, iv + c, k);
            }
        }
        for (j, av) in m.a_v_star.iter().enumerate() {
            prog.q[iv + j] = -av;
        }
        let vs = &m.v_star;
        let dot = |row: &[(usize, f64)]| row.iter().map(|&(c, v)| v * vs[c]).sum::<f64>();
        for (a, &ci) in m.active.iter().enumerate() {
            if !matches!(stage, Stage::FrictionGiven(_)) {
                prog.p_add(ign + a, ign + a, m.normal[a].r);
                prog.q[ign + a] = dot(&contact_row(p, ci, 0)) - m.normal[a].vhat;
            }
        }
        for k in 0..nb {
            prog.p_add(igb + k, igb + k, m.bilateral[k].r);
            prog.q[igb + k] = dot(&joint_row(p, k)) - m.bilateral[k].vhat;
        }
    } else {
        for a in 0..na {
            prog.p_add(ign + a, ign + a, m.zeta);
        }
    }
    for t in 0..nt {
        prog.p_add(igt + t, igt + t, 1.0);
        prog.p_add(ibeta + t, ibeta + t, 1.0);
    }

    // momentum rows (Eq. 37): M v - Jᵀγ - G_bᵀγ_b = M v* on the rigid DOFs, v - A'⁻¹(Jᵀγ + G_bᵀγ_b) = v*
    // on the deformable ones (from `start` on; module doc)
    let start = elastic.as_deref().map_or(nv, |e| e.start());
    let mut impulses: Vec<(usize, Vec<(usize, f64)>)> = Vec::with_capacity(na + nt + nb);
    for (a, &ci) in m.active.iter().enumerate() {
        impulses.push((ign + a, contact_row(p, ci, 0)));
        if friction {
            impulses.extend((0..2).map(|r| (igt + 2 * a + r, contact_row(p, ci, 1 + r))));
        }
    }
    impulses.extend((0..nb).map(|k| (igb + k, joint_row(p, k))));
    let mut mom: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nv];
    for (bi, blk) in p.mass.blocks().iter().enumerate() {
        let o = p.mass.offset(bi);
        for i in (0..blk.nrows()).filter(|&i| o + i < start) {
            for j in 0..blk.ncols() {
                mom[o + i].push((iv + o + j, blk[(i, j)]));
            }
        }
    }
    for (var, row) in &impulses {
        for &(c, v) in row.iter().filter(|&&(c, _)| c < start) {
            mom[c].push((*var, -v));
        }
    }
    if let Some(e) = elastic {
        let on_deformable: Vec<&(usize, Vec<(usize, f64)>)> =
            impulses.iter().filter(|(_, row)| row.iter().any(|&(c, _)| c >= start)).collect();
        let cols = ainv_columns(p, Some(e), on_deformable.len(), |k, out| {
            on_deformable[k].1.iter().filter(|&&(c, _)| c >= start).for_each(|&(c, v)| out[c] += v)
        });
        for (r, row) in mom.iter_mut().enumerate().skip(start) {
            row.push((iv + r, 1.0));
            row.extend(on_deformable.iter().enumerate().map(|(k, (var, _))| (*var, -cols[(r, k)])));
        }
    }
    for (r, row) in mom.into_iter().enumerate() {
        let b = if r < start { m.a_v_star[r] } else { m.v_star[r] };
        prog.row(RowKind::Zero, row, b);
    }
    // joint rows (Eq. 141)
    if !lcp {
        for k in 0..nb {
            let l = m.bilateral[k];
            let mut row: Vec<(usize, f64)> = joint_row(p, k).into_iter().map(|(c, v)| (iv + c, l.scale * v)).collect();
            row.push((igb + k, l.scale * l.r));
            prog.row(RowKind::Zero, row, l.scale * l.vhat);
        }
    }
    // tangential law and cones
    if friction {
        let unilateral = s.mu_zero == MuZero::Unilateral;
        for (a, &ci) in m.active.iter().enumerate() {
            // μ = 0 as a §5 unilateral row: no tangential law, so β is free and ends at 0
            let skip_law = unilateral && m.mu[a] == 0.0;
            for r in (0..2).filter(|_| !skip_law) {
                let (gt, b) = (igt + 2 * a + r, ibeta + 2 * a + r);
                let mut row: Vec<(usize, f64)> =
                    contact_row(p, ci, 1 + r).into_iter().map(|(c, v)| (iv + c, -m.ct * v)).collect();
                row.push((b, 1.0));
                row.push((gt, -1.0));
                prog.row(RowKind::Zero, row, 0.0);
            }
            if m.mu[a] == 0.0 {
                prog.row(RowKind::Zero, vec![(igt + 2 * a, 1.0)], 0.0);
                prog.row(RowKind::Zero, vec![(igt + 2 * a + 1, 1.0)], 0.0);
            } else {
                prog.soc(ign + a, igt + 2 * a, igt + 2 * a + 1, m.mu[a]);
            }
        }
    }
    match stage {
        Stage::FrictionGiven(gn) => {
            for (a, g) in gn.iter().enumerate() {
                prog.row(RowKind::Zero, vec![(ign + a, 1.0)], *g);
            }
        }
        _ => {
            for (a, &ci) in m.active.iter().enumerate() {
                if !lcp {
                    let l = m.normal[a];
                    let mut row: Vec<(usize, f64)> =
                        contact_row(p, ci, 0).into_iter().map(|(c, v)| (iv + c, l.scale * v)).collect();
                    row.push((ign + a, l.scale * l.r));
                    prog.row(RowKind::Nonneg, row, l.scale * l.vhat);
                }
                prog.row(RowKind::Nonneg, vec![(ign + a, 1.0)], 0.0);
            }
        }
    }

    let name = match stage {
        Stage::Joint => "lifted",
        Stage::NormalOnly => "lifted normal stage",
        Stage::FrictionGiven(_) => "lifted friction stage",
    };
    let sol = prog.solve(&s.clarabel(), stats, name)?;
    let x = sol.x;
    Ok(Outcome {
        v: x[iv..iv + nv].to_vec(),
        gn: x[ign..ign + na].to_vec(),
        gt: (0..na).map(|a| if friction { [x[igt + 2 * a], x[igt + 2 * a + 1]] } else { [0.0, 0.0] }).collect(),
        gb: x[igb..igb + nb].to_vec(),
        status: sol.status,
        iterations: sol.iterations as usize,
    })
}
