//! [`SubAdmm`]: Algorithm 2 of Lee et al. 2025 in λ-form (seed-002 §4.3): the v-step per solve
//! unit (Eq. 34, `units.rs`), the closed-form z-step per constraint with the strict operator
//! (Eqs. 35–38), `u = −λ` (Eq. 39), the residuals (42) and the adaptive penalty (43).

use super::settings::{Split, SubAdmmSettings};
use super::units::{Element, JointPart, Unit};
use harness::constraints::{bilateral_rows, contact_rows, ConstraintRows, RowLaw};
use harness::model::BlockKind;
use harness::{IterationLog, SolveError, SolveStatus, Solver, SolverInfo, StepProblem, StepSolution};
use kernels::cone;
use rayon::prelude::*;

const TINY: f64 = 1e-300;

/// One slack block `z_ig` of constraint `i` on group `g` (a body, a subsystem or everything).
struct Block {
    unit: usize,
    /// Indices into the constraint's columns (`ConstraintRows::dofs`).
    cols: Vec<usize>,
    z: [f64; 3],
}

/// One ADMM constraint: a contact, or (split `none`) a bilateral row.
struct Con {
    row: ConstraintRows,
    blocks: Vec<Block>,
    lam: [f64; 3],
    lam_new: [f64; 3],
}

impl Con {
    /// `J_ig v` for block `k`.
    fn block_velocity(&self, k: usize, v: &[f64]) -> [f64; 3] {
        let m = self.row.ncols();
        let mut out = [0.0; 3];
        for (r, o) in out.iter_mut().enumerate().take(self.row.dim) {
            *o = self.blocks[k].cols.iter().map(|&c| self.row.rows[r * m + c] * v[self.row.dofs[c]]).sum();
        }
        out
    }

    /// The z-step of Eqs. (36)–(38) in λ-form; returns `||λ^{l+1} − λ^l||`.
    fn z_step(&mut self, beta: f64, v: &[f64]) -> f64 {
        let nz = self.blocks.len() as f64;
        let mut jv = [0.0; 3];
        self.row.velocity(v, &mut jv);
        let dim = self.row.dim;
        match self.row.law {
            RowLaw::Contact { mu, bias, .. } => {
                let e = [bias, 0.0, 0.0];
                let x: [f64; 3] = std::array::from_fn(|k| self.lam[k] - beta / nz * (jv[k] + e[k]));
                self.lam_new = cone::project_strict(x, mu);
            }
            RowLaw::Bilateral { v_hat, r } => {
                self.lam_new[0] = (beta * (v_hat - jv[0]) + nz * self.lam[0]) / (nz + beta * r);
            }
        }
        for k in 0..self.blocks.len() {
            let bv = self.block_velocity(k, v);
            let (ln, lo) = (self.lam_new, self.lam);
            for (d, z) in self.blocks[k].z.iter_mut().enumerate().take(dim) {
                *z = bv[d] + (ln[d] - lo[d]) / beta;
            }
        }
        let dl: f64 = (0..dim).map(|d| (self.lam_new[d] - self.lam[d]).powi(2)).sum();
        self.lam = self.lam_new;
        dl.sqrt()
    }
}

/// The SubADMM solver.
pub struct SubAdmm {
    settings: SubAdmmSettings,
    cons: Vec<Con>,
    units: Vec<Unit>,
    /// Per unit: `(constraint, block)` pairs and their element matrices.
    unit_blocks: Vec<Vec<(usize, usize)>>,
    elements: Vec<Vec<Element>>,
    b: Vec<f64>,
    v: Vec<f64>,
    mv: Vec<f64>,
    nc: usize,
    pool: Option<rayon::ThreadPool>,
    /// Penalty of the last step (for tests).
    last_beta: f64,
}

impl SubAdmm {
    /// A solver with validated settings.
    pub fn new(settings: SubAdmmSettings) -> Self {
        let pool = (settings.threads > 1)
            .then(|| rayon::ThreadPoolBuilder::new().num_threads(settings.threads).build().ok())
            .flatten();
        Self {
            settings,
            cons: vec![],
            units: vec![],
            unit_blocks: vec![],
            elements: vec![],
            b: vec![],
            v: vec![],
            mv: vec![],
            nc: 0,
            pool,
            last_beta: 0.0,
        }
    }

    /// The penalty at the end of the last step (kg).
    pub fn last_beta(&self) -> f64 {
        self.last_beta
    }

    fn setup(&mut self, p: &StepProblem<'_>) -> Result<f64, SolveError> {
        let split = self.settings.split();
        if p.layout.blocks.iter().any(|b| !matches!(b.kind, BlockKind::RigidBody { .. })) {
            return Err(SolveError::Unsupported { what: "deformable bodies (rigid bodies only)".into() });
        }
        let mut rows = contact_rows(p);
        if rows.iter().any(|r| matches!(r.law, RowLaw::Contact { rigid: false, .. })) {
            return Err(SolveError::Unsupported { what: "compliant contact (rigid contact only)".into() });
        }
        self.nc = rows.len();
        let joint_rows = bilateral_rows(p);
        // groups and units
        let nblk = p.layout.blocks.len();
        let group_of = |k: usize| match split {
            Split::Body => k,
            Split::Subsystem => p.layout.blocks[k].subsystem,
            Split::None => 0,
        };
        let unit_key = |k: usize| if split == Split::None { 0 } else { p.layout.blocks[k].subsystem };
        let mut keys: Vec<usize> = (0..nblk).map(unit_key).collect();
        keys.sort_unstable();
        keys.dedup();
        let unit_of = |k: usize| keys.binary_search(&unit_key(k)).expect("unit");
        self.units.clear();
        for u in 0..keys.len() {
            let mut dofs = vec![];
            let mut bodies = vec![];
            for (_, blk) in p.layout.blocks.iter().enumerate().filter(|(k, _)| unit_of(*k) == u) {
                let mb = (0..p.mass.blocks().len()).find(|&m| p.mass.offset(m) == blk.v_offset).expect("mass block");
                bodies.push((dofs.len(), blk.nv, mb));
                dofs.extend(blk.v_offset..blk.v_offset + blk.nv);
            }
            self.units.push(Unit::new(dofs, bodies));
        }
        if split == Split::None {
            rows.extend(joint_rows.iter().cloned());
        } else {
            // joint rows inside their subsystem's unit
            let mut per_unit: Vec<Vec<usize>> = vec![vec![]; self.units.len()];
            for (k, r) in joint_rows.iter().enumerate() {
                per_unit[unit_of(r.blocks[0].0)].push(k);
            }
            for (u, ks) in per_unit.into_iter().enumerate() {
                if ks.is_empty() {
                    continue;
                }
                let unit = &self.units[u];
                let (mut jr, mut vh, mut rr) = (vec![], vec![], vec![]);
                for &k in &ks {
                    let row = &joint_rows[k];
                    jr.push((row.dofs.iter().map(|&g| unit.local(g)).collect(), row.rows.clone()));
                    let RowLaw::Bilateral { v_hat, r } = row.law else { unreachable!() };
                    vh.push(v_hat);
                    rr.push(r);
                }
                self.units[u].set_joints(JointPart::new(jr, vh, rr), ks);
            }
        }
        // constraints and their slack blocks
        self.cons.clear();
        self.unit_blocks = vec![vec![]; self.units.len()];
        self.elements = (0..self.units.len()).map(|_| vec![]).collect();
        for (i, row) in rows.into_iter().enumerate() {
            let mut blocks: Vec<(usize, Block)> = vec![];
            for (bi, &(k, start)) in row.blocks.iter().enumerate() {
                let end = row.blocks.get(bi + 1).map_or(row.ncols(), |b| b.1);
                let g = group_of(k);
                let cols: Vec<usize> = (start..end).collect();
                match blocks.iter_mut().find(|(gg, _)| *gg == g) {
                    Some((_, b)) => b.cols.extend(cols),
                    None => blocks.push((g, Block { unit: unit_of(k), cols, z: [0.0; 3] })),
                }
            }
            let blocks: Vec<Block> = blocks.into_iter().map(|(_, b)| b).collect();
            for (bk, b) in blocks.iter().enumerate() {
                let m = row.ncols();
                let unit = &self.units[b.unit];
                let local = b.cols.iter().map(|&c| unit.local(row.dofs[c])).collect();
                let erows = (0..row.dim)
                    .flat_map(|r| b.cols.iter().map(move |&c| (r, c)))
                    .map(|(r, c)| row.rows[r * m + c])
                    .collect();
                self.unit_blocks[b.unit].push((i, bk));
                self.elements[b.unit].push(Element { local, rows: erows, dim: row.dim });
            }
            self.cons.push(Con { row, blocks, lam: [0.0; 3], lam_new: [0.0; 3] });
        }
        // b = M v*, warm impulses, v0 = v* + M⁻¹ Jᵀ λ, z = J_ig v0
        let v_star = p.free_velocity();
        self.b = p.mass.mul(&v_star);
        let mut imp = vec![0.0; p.nv()];
        for i in 0..self.nc {
            if self.settings.warm_start {
                if let Some(l) = p.warm_impulse(i) {
                    self.cons[i].lam = l;
                    self.cons[i].row.add_transpose(&l, &mut imp);
                }
            }
        }
        p.mass.solve_in_place(&mut imp);
        self.v = v_star.iter().zip(&imp).map(|(a, b)| a + b).collect();
        self.mv = vec![0.0; p.nv()];
        for c in &mut self.cons {
            for k in 0..c.blocks.len() {
                c.blocks[k].z = c.block_velocity(k, &self.v);
            }
        }
        if !self.v.iter().chain(&self.b).all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "problem data (free velocity or warm start)".into() });
        }
        // initial β: geometric mean over bodies in contact of mass / contact points
        if self.settings.beta0 > 0.0 {
            return Ok(self.settings.beta0);
        }
        let mut count = vec![0usize; nblk];
        for c in &self.cons[..self.nc] {
            for &(k, _) in &c.row.blocks {
                count[k] += 1;
            }
        }
        let (mut s, mut n) = (0.0, 0);
        for (k, &cnt) in count.iter().enumerate() {
            if cnt > 0 {
                let off = p.layout.blocks[k].v_offset;
                let m = (0..p.mass.blocks().len()).find(|&m| p.mass.offset(m) == off).expect("mass block");
                s += (p.mass.blocks()[m][(0, 0)] / cnt as f64).ln();
                n += 1;
            }
        }
        Ok(if n > 0 { (s / n as f64).exp() } else { 1.0 })
    }

    fn factor_all(&mut self, p: &StepProblem<'_>, beta: f64) -> Result<(), SolveError> {
        let split = self.settings.split();
        let mass = &p.mass;
        let elements = &self.elements;
        let run = |units: &mut Vec<Unit>| -> Result<(), String> {
            units.par_iter_mut().zip(elements.par_iter()).try_for_each(|(u, e)| u.factor(mass, e, beta, split))
        };
        let r = match &self.pool {
            Some(pool) => pool.install(|| run(&mut self.units)),
            None => self.units.iter_mut().zip(elements).try_for_each(|(u, e)| u.factor(mass, e, beta, split)),
        };
        r.map_err(|what| SolveError::Factorization { what })
    }

    /// v-step (34) in every unit, then scatter into `self.v`.
    fn v_step(&mut self, beta: f64) {
        let (cons, b) = (&self.cons, &self.b);
        let work = |(u, blocks): (&mut Unit, &Vec<(usize, usize)>)| {
            for (k, &g) in u.dofs.iter().enumerate() {
                u.rhs[k] = b[g];
            }
            for &(i, bk) in blocks {
                let c = &cons[i];
                let blk = &c.blocks[bk];
                let m = c.row.ncols();
                for r in 0..c.row.dim {
                    let s = beta * blk.z[r] + c.lam[r];
                    for &col in &blk.cols {
                        let l = u.local(c.row.dofs[col]);
                        u.rhs[l] += c.row.rows[r * m + col] * s;
                    }
                }
            }
            u.solve();
        };
        match &self.pool {
            Some(pool) => pool.install(|| self.units.par_iter_mut().zip(self.unit_blocks.par_iter()).for_each(work)),
            None => self.units.iter_mut().zip(self.unit_blocks.iter()).for_each(work),
        }
        for u in &self.units {
            for (k, &g) in u.dofs.iter().enumerate() {
                self.v[g] = u.v[k];
            }
        }
    }
}

impl Solver for SubAdmm {
    fn info(&self) -> SolverInfo {
        SolverInfo {
            name: "subadmm".into(),
            paper: super::PAPER.into(),
            capabilities: super::capabilities(),
            params: serde_json::to_value(&self.settings).unwrap_or(serde_json::Value::Null),
        }
    }

    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let mut beta = self.setup(p)?;
        self.factor_all(p, beta)?;
        let s = self.settings.clone();
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        let mut last_adapt = 0;
        let nv = p.nv();
        let mut dual = vec![0.0; nv];
        for l in 1..=s.max_iterations {
            iterations = l;
            self.v_step(beta);
            // z-step (35)–(38) and u = −λ (39)
            let v = &self.v;
            let dl_max = match &self.pool {
                Some(pool) => {
                    pool.install(|| self.cons.par_iter_mut().map(|c| c.z_step(beta, v)).reduce(|| 0.0, f64::max))
                }
                None => self.cons.iter_mut().map(|c| c.z_step(beta, v)).fold(0.0, f64::max),
            };
            let lam_max = self.cons.iter().map(|c| c.lam.iter().map(|x| x * x).sum::<f64>().sqrt()).fold(0.0, f64::max);
            // residuals (42): θ_p = max ||J_ij v_j − z_ij|| = max ||Δλ_i|| / β; θ_d per unit
            let theta_p = dl_max / beta;
            p.mass.mul_into(&self.v, &mut self.mv);
            for ((d, m), b) in dual.iter_mut().zip(&self.mv).zip(&self.b) {
                *d = m - b;
            }
            for c in &self.cons {
                let neg: [f64; 3] = std::array::from_fn(|k| -c.lam[k]);
                c.row.add_transpose(&neg, &mut dual);
            }
            let (mut theta_d, mut scale) = (0.0f64, TINY);
            for u in &self.units {
                if let Some(jp) = u.joints.as_ref() {
                    for (k, (cols, vals)) in jp.rows.iter().enumerate() {
                        for (&c, &a) in cols.iter().zip(vals) {
                            dual[u.dofs[c]] -= a * u.gamma[k];
                        }
                    }
                }
                let nd: f64 = u.dofs.iter().map(|&g| dual[g] * dual[g]).sum::<f64>().sqrt();
                let nb: f64 = u.dofs.iter().map(|&g| self.b[g] * self.b[g]).sum::<f64>().sqrt();
                let nm: f64 = u.dofs.iter().map(|&g| self.mv[g] * self.mv[g]).sum::<f64>().sqrt();
                theta_d = theta_d.max(nd);
                scale = scale.max(nb).max(nm);
            }
            let primal_rel = dl_max / lam_max.max(TINY);
            let dual_rel = theta_d / scale;
            if !(theta_p.is_finite() && theta_d.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("SubADMM residuals at iteration {l}") });
            }
            log.record(&[
                ("primal_max", theta_p),
                ("dual_max", theta_d),
                ("primal_rel", primal_rel),
                ("dual_rel", dual_rel),
                ("beta", beta),
            ]);
            if primal_rel < s.tolerance && dual_rel < s.tolerance {
                status = SolveStatus::Solved;
                break;
            }
            // adaptive penalty (43), unit-consistent: compare β θ_p (N s) with θ_d (N s)
            if s.gamma > 0.0 && l - last_adapt >= s.adapt_interval && theta_p > 0.0 && theta_d > 0.0 {
                let (pp, dd) = (beta * theta_p, theta_d);
                if pp > s.gamma * dd || dd > s.gamma * pp {
                    beta *= (pp / dd).sqrt().clamp(0.01, 100.0);
                    last_adapt = l;
                    self.factor_all(p, beta)?;
                }
            }
        }
        self.last_beta = beta;
        let impulses: Vec<[f64; 3]> = self.cons[..self.nc].iter().map(|c| c.lam).collect();
        let mut bilateral = vec![0.0; p.nb()];
        if self.settings.split() == Split::None {
            for (k, c) in self.cons[self.nc..].iter().enumerate() {
                bilateral[k] = c.lam[0];
            }
        } else {
            for u in &self.units {
                for (k, &row) in u.joint_rows.iter().enumerate() {
                    bilateral[row] = u.gamma[k];
                }
            }
        }
        if self.v.iter().chain(impulses.iter().flatten()).any(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite { what: "SubADMM velocity or impulses".into() });
        }
        Ok(StepSolution { v: self.v.clone(), q: None, impulses, bilateral, iterations, status })
    }
}
