//! Per-step setup of SubADMM (Algorithm 2, lines 1–7): the solve units, their kinematic trees
//! (`tree.rs`: the joint rows they absorb; the others become ADMM constraints) and their
//! slack-block elements for the chosen split (Eqs. 30–31), `b = M v*`, warm impulses,
//! `v⁰ = v* + M⁻¹ Jᵀ λ`, `z⁰_ig = J_ig v⁰` and the initial β (pseudo-density rule, §VI-D).

use super::settings::Split;
use super::solver::Con;
use super::tree::Forest;
use super::units::{KFactor, Unit};
use harness::constraints::{bilateral_rows, contact_rows, ConstraintRows};
use harness::model::BlockKind;
use harness::{SolveError, StepProblem};

/// What [`build`] returns.
pub(super) struct Built {
    pub units: Vec<Unit>,
    /// Contacts first (`nc` of them), then the joint rows no tree absorbs.
    pub cons: Vec<Con>,
    pub nc: usize,
    /// Bilateral row index of each constraint after the contacts.
    pub bil: Vec<usize>,
    pub beta: f64,
}

/// Builds one step's units and constraints. `beta0 > 0` fixes the initial penalty; `reuse` is the
/// previous step's sparse `K` (split `none`), kept if its pattern still fits.
pub(super) fn build(
    p: &StepProblem<'_>,
    split: Split,
    warm_start: bool,
    beta0: f64,
    reuse: Option<KFactor>,
) -> Result<Built, SolveError> {
    if p.layout.blocks.iter().any(|b| !matches!(b.kind, BlockKind::RigidBody { .. })) {
        return Err(SolveError::Unsupported { what: "deformable bodies (rigid bodies only)".into() });
    }
    let mut rows = contact_rows(p);
    let nc = rows.len();
    let joint_rows = bilateral_rows(p);
    // b = M v*, warm impulses, v0 = v* + M⁻¹ Jᵀ λ
    let v_star = p.free_velocity();
    let b = p.mass.mul(&v_star);
    let mut lam0 = vec![[0.0; 3]; nc];
    let mut imp = vec![0.0; p.nv()];
    for (i, (l0, row)) in lam0.iter_mut().zip(&rows).enumerate() {
        if let Some(l) = p.warm_impulse(i).filter(|_| warm_start) {
            *l0 = l;
            row.add_transpose(&l, &mut imp);
        }
    }
    p.mass.solve_in_place(&mut imp);
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
    let mut reuse = reuse;
    let mut units: Vec<Unit> = members
        .iter()
        .map(|ks| {
            let (mut dofs, mut bodies) = (vec![], vec![]);
            for &k in ks {
                let (blk, m) = (&blocks[k], &p.mass.blocks()[mass_of[k]]);
                assert_eq!(m.nrows(), blk.nv, "mass block size");
                bodies.push((dofs.len(), m));
                dofs.extend(blk.v_offset..blk.v_offset + blk.nv);
            }
            let bu = dofs.iter().map(|&g| b[g]).collect();
            let mut u = Unit::new(dofs, &bodies, bu, KFactor::for_split(split, reuse.take()));
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
    for (u, js) in units.iter_mut().zip(&per_unit) {
        let (f, admm) = Forest::new(&u.bodies, |g| u.local(g), js);
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
    if split == Split::None {
        for u in &mut units {
            u.prepare_sparse().map_err(|what| SolveError::Factorization { what })?;
        }
    }
    let beta = if beta0 > 0.0 { beta0 } else { pseudo_density(p, &rows[..nc], &mass_of) };
    Ok(Built { units, cons, nc, bil, beta })
}

/// The mass block of every layout block (both ordered by velocity offset).
fn mass_blocks(p: &StepProblem<'_>) -> Vec<usize> {
    let mut m = 0;
    p.layout
        .blocks
        .iter()
        .map(|blk| {
            while p.mass.offset(m) < blk.v_offset {
                m += 1;
            }
            assert_eq!(p.mass.offset(m), blk.v_offset, "mass block of a layout block");
            m
        })
        .collect()
}

/// The paper's initial β: geometric mean over bodies in contact of mass / contact points; 1 kg
/// with no contact.
fn pseudo_density(p: &StepProblem<'_>, contacts: &[ConstraintRows], mass_of: &[usize]) -> f64 {
    let mut count = vec![0usize; p.layout.blocks.len()];
    for c in contacts {
        for &(k, _) in &c.blocks {
            count[k] += 1;
        }
    }
    let (mut s, mut n) = (0.0, 0);
    for (k, &cnt) in count.iter().enumerate().filter(|(_, &c)| c > 0) {
        s += (p.mass.blocks()[mass_of[k]][(0, 0)] / cnt as f64).ln();
        n += 1;
    }
    if n > 0 {
        (s / n as f64).exp()
    } else {
        1.0
    }
}
