//! Per-step setup of SubADMM (Algorithm 2, lines 1–7): the solve units, their kinematic trees
//! (`tree.rs`: the joint rows they absorb; the others become ADMM constraints) and their
//! slack-block elements for the chosen split (Eqs. 30–31), `b = A' v*`, warm impulses,
//! `v⁰ = v* + A'⁻¹ Jᵀ λ`, `z⁰_ig = J_ig v⁰` and the initial β (pseudo-density rule, §VI-D).
//! `A' = M` on rigid bodies; an FEM body's DOFs take the linearised implicit step of
//! `toolkit::implicit` (`A' = M + δt² K'`, prescribed DOFs held at `v̄`; an extension, README §11)
//! and the body is one unit, factored by the sparse path.

use super::settings::Split;
use super::solver::Con;
use super::tree::Forest;
use super::units::{KFactor, Unit};
use api::BlockKind;
use api::{SolveError, StepProblem};
use std::ops::Range;
use toolkit::constraints::{bilateral_rows, contact_rows, ConstraintRows};
use toolkit::implicit::ImplicitElastic;

/// What [`build`] returns.
pub(super) struct Built {
    pub units: Vec<Unit>,
    /// Contacts first (`nc` of them), then the joint rows no tree absorbs.
    pub cons: Vec<Con>,
    pub nc: usize,
    /// Bilateral row index of each constraint after the contacts.
    pub bil: Vec<usize>,
    pub beta: f64,
    /// Symbolic analyses of sparse `K_q` done by this setup.
    pub analyses: usize,
}

/// Builds one step's units and constraints. `beta0 > 0` fixes the initial penalty; `elastic`
/// holds the FEM bodies' linearised implicit step (its symbolic analysis kept across steps);
/// `reuse` are the previous step's sparse `K`s by unit key (split `none`, units with FEM bodies),
/// each kept if its pattern still fits.
pub(super) fn build(
    p: &StepProblem<'_>,
    split: Split,
    warm_start: bool,
    beta0: f64,
    elastic: &mut ImplicitElastic,
    mut reuse: Vec<(usize, KFactor)>,
) -> Result<Built, SolveError> {
    let mut rows = contact_rows(p);
    let nc = rows.len();
    let joint_rows = bilateral_rows(p);
    // b = A' v*, warm impulses, v0 = v* + A'⁻¹ Jᵀ λ (A' = M without FEM bodies, README §11)
    let mut v_star = p.free_velocity();
    if elastic.assemble(p)? {
        elastic.write_free_velocity(&mut v_star);
    }
    let mut b = vec![0.0; p.nv()];
    elastic.mul_into(p, &v_star, &mut b);
    let mut lam0 = vec![[0.0; 3]; nc];
    let mut imp = vec![0.0; p.nv()];
    for (i, (l0, row)) in lam0.iter_mut().zip(&rows).enumerate() {
        if let Some(l) = p.warm_impulse(i).filter(|_| warm_start) {
            *l0 = l;
            row.add_transpose(&l, &mut imp);
        }
    }
    elastic.solve_all_in_place(p, &mut imp);
    let v0: Vec<f64> = v_star.iter().zip(&imp).map(|(a, b)| a + b).collect();
    if !v0.iter().chain(&b).all(|x| x.is_finite()) {
        return Err(SolveError::NonFinite { what: "problem data (free velocity or warm start)".into() });
    }
    // units: subsystems, or everything for split `none`
    let blocks = &p.layout.blocks;
    let unit_key = |k: usize| if split == Split::None { 0 } else { blocks[k].subsystem };
    let mut keys: Vec<usize> = (0..blocks.len()).map(unit_key).collect();
    keys.sort_unstable();
    keys.dedup();
    let unit_of = |k: usize| keys.binary_search(&unit_key(k)).expect("unit");
    let mut members: Vec<Vec<usize>> = vec![vec![]; keys.len()];
    for k in 0..blocks.len() {
        members[unit_of(k)].push(k);
    }
    let mass_of = mass_blocks(p);
    // an FEM body's δt² K' entries and prescribed DOFs, by unit (global indices)
    let block_of = |g: usize| blocks.partition_point(|b| b.v_offset + b.nv <= g);
    let mut stiff: Vec<Vec<(usize, usize, f64)>> = vec![vec![]; keys.len()];
    for e in elastic.stiffness_entries() {
        stiff[unit_of(block_of(e.0))].push(e);
    }
    let mut held: Vec<Vec<(usize, f64)>> = vec![vec![]; keys.len()];
    for &(g, v) in &p.prescribed {
        held[unit_of(block_of(g))].push((g, v));
    }
    let elastic_unit: Vec<bool> =
        members.iter().map(|ks| ks.iter().any(|&k| matches!(blocks[k].kind, BlockKind::Deformable { .. }))).collect();
    let mut units: Vec<Unit> = members
        .iter()
        .enumerate()
        .map(|(j, ks)| {
            let (mut dofs, mut bodies) = (vec![], vec![]);
            for &k in ks {
                // a rigid body's mass block, or an FEM body's node blocks (each node a body)
                let blk = &blocks[k];
                for m in mass_of[k].clone() {
                    bodies.push((dofs.len() + p.mass.offset(m) - blk.v_offset, &p.mass.blocks()[m]));
                }
                dofs.extend(blk.v_offset..blk.v_offset + blk.nv);
            }
            let local = |g: usize| dofs.binary_search(&g).expect("dof of this unit");
            let k_u = stiff[j].iter().map(|&(r, c, x)| (local(r), local(c), x)).collect();
            let bu = dofs.iter().map(|&g| b[g]).collect();
            let key = unit_key(ks[0]);
            let kept = reuse.iter().position(|r| r.0 == key).map(|i| reuse.swap_remove(i).1);
            let k = KFactor::for_unit(split, elastic_unit[j], kept);
            let mut u = Unit::new(key, dofs, &bodies, k_u, bu, k);
            u.set_velocity(&v0);
            u
        })
        .collect();
    // kinematic trees: the joint rows they absorb are exact in the reduced coordinates; loops,
    // compliant and rank-deficient joints stay ADMM constraints (Eqs. 36–37)
    let mut per_unit: Vec<Vec<(usize, usize, &ConstraintRows)>> = vec![vec![]; units.len()];
    for (k, r) in joint_rows.iter().enumerate() {
        per_unit[unit_of(r.blocks[0].0)].push((k, p.bilateral.rows[k].joint, r));
    }
    let mut bil = vec![];
    for ((u, js), hs) in units.iter_mut().zip(&per_unit).zip(&held) {
        let mut hs: Vec<(usize, f64)> = hs.iter().map(|&(g, v)| (u.local(g), v)).collect();
        hs.sort_unstable_by_key(|h| h.0);
        let (f, admm) = Forest::new(&u.bodies, |g| u.local(g), js, &hs);
        bil.extend(admm);
        u.set_forest(f);
    }
    bil.sort_unstable();
    rows.extend(bil.iter().map(|&k| joint_rows[k].clone()));
    // constraints and their slack blocks: one per (constraint, group)
    let group_of = |k: usize| match split {
        Split::Body => k,
        Split::Subsystem => blocks[k].subsystem,
        Split::None => 0,
    };
    let mut cons = Vec::with_capacity(rows.len());
    let mut cols: Vec<(usize, [f64; 3])> = vec![];
    for (i, row) in rows.iter().enumerate() {
        let m = row.ncols();
        let mut con = Con::new(row.law, row.dim, lam0.get(i).copied().unwrap_or_default());
        for (bi, &(k, _)) in row.blocks.iter().enumerate() {
            let g = group_of(k);
            if row.blocks[..bi].iter().any(|&(k2, _)| group_of(k2) == g) {
                continue; // stacked into the block of an earlier body of this group
            }
            cols.clear();
            for (bj, &(_, start)) in row.blocks.iter().enumerate().skip(bi).filter(|(_, b)| group_of(b.0) == g) {
                let end = row.blocks.get(bj + 1).map_or(m, |b| b.1);
                cols.extend((start..end).map(|c| {
                    (row.dofs[c], std::array::from_fn(|r| if r < row.dim { row.rows[r * m + c] } else { 0.0 }))
                }));
            }
            let u = unit_of(k);
            let e = units[u].push_element(i, con.num_blocks(), row.dim, &cols);
            con.push_block(u, e);
        }
        con.init_z(&units);
        cons.push(con);
    }
    let mut analyses = 0;
    for (u, &fem) in units.iter_mut().zip(&elastic_unit) {
        if split == Split::None || fem {
            analyses += usize::from(u.prepare_sparse()?);
        }
    }
    let beta = if beta0 > 0.0 { beta0 } else { pseudo_density(p, &rows[..nc], &mass_of) };
    Ok(Built { units, cons, nc, bil, beta, analyses })
}

/// The mass blocks of every layout block (both ordered by velocity offset): one for a rigid body,
/// one per node for an FEM body.
fn mass_blocks(p: &StepProblem<'_>) -> Vec<Range<usize>> {
    let mut m = 0;
    p.layout
        .blocks
        .iter()
        .map(|blk| {
            while p.mass.offset(m) < blk.v_offset {
                m += 1;
            }
            assert_eq!(p.mass.offset(m), blk.v_offset, "mass block of a layout block");
            let start = m;
            while m < p.mass.blocks().len() && p.mass.offset(m) < blk.v_offset + blk.nv {
                m += 1;
            }
            let end = p.mass.offset(m - 1) + p.mass.blocks()[m - 1].nrows();
            assert_eq!(end, blk.v_offset + blk.nv, "mass blocks of a layout block");
            start..m
        })
        .collect()
}

/// The paper's initial β: geometric mean over bodies in contact of mass / contact points (an FEM
/// body's mass is the sum of its nodes'); 1 kg with no contact.
fn pseudo_density(p: &StepProblem<'_>, contacts: &[ConstraintRows], mass_of: &[Range<usize>]) -> f64 {
    let mut count = vec![0usize; p.layout.blocks.len()];
    for c in contacts {
        for &(k, _) in &c.blocks {
            count[k] += 1;
        }
    }
    let (mut s, mut n) = (0.0, 0);
    for (k, &cnt) in count.iter().enumerate().filter(|(_, &c)| c > 0) {
        let m: f64 = mass_of[k].clone().map(|m| p.mass.blocks()[m][(0, 0)]).sum();
        s += (m / cnt as f64).ln();
        n += 1;
    }
    if n > 0 {
        (s / n as f64).exp()
    } else {
        1.0
    }
}
