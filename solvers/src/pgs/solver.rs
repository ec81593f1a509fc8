//! [`Pgs`]: per-step setup (Delassus blocks, warm start), the Gauss–Seidel sweeps and the stopping test.

use super::local::{natmap, LocalProblem};
use super::settings::PgsSettings;
use harness::{IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::cone;

/// Denominator floor of the relative change when every impulse is zero.
const TINY: f64 = f64::MIN_POSITIVE;

/// The rows of one contact's Jacobian acting on one body, and their mass-weighted transpose.
#[derive(Debug, Clone, Copy, Default)]
struct Side {
    /// First velocity index of the body.
    v_offset: usize,
    /// Number of velocity DOFs of the body (≤ 6).
    ncols: usize,
    /// `J_b`, rows `(n, t1, t2)`.
    j: [[f64; 6]; 3],
    /// `G_b = M_b⁻¹ J_bᵀ`, so that changing the impulse by `Δ` changes `v_b` by `G_b Δ`.
    g: [[f64; 3]; 6],
}

/// One contact of the step: its bodies, its local problem and its gap bias.
#[derive(Debug, Clone, Copy, Default)]
struct Block {
    /// One side per dynamic body (1 or 2).
    sides: [Side; 2],
    /// Number of sides used.
    n_sides: usize,
    /// Delassus block, friction and normal law.
    local: LocalProblem,
    /// `φ0 / dt` (m/s): the bias of the harness's reference NCP, for the logged residual.
    bias_n: f64,
}

impl Block {
    /// `u = J_i v` (m/s).
    fn velocity(&self, v: &[f64]) -> [f64; 3] {
        let mut u = [0.0; 3];
        for s in &self.sides[..self.n_sides] {
            let vb = &v[s.v_offset..s.v_offset + s.ncols];
            for (ur, row) in u.iter_mut().zip(&s.j) {
                *ur += row.iter().zip(vb).map(|(a, b)| a * b).sum::<f64>();
            }
        }
        u
    }

    /// `v += M⁻¹ J_iᵀ d`: touches only the contact's bodies.
    fn apply(&self, d: [f64; 3], v: &mut [f64]) {
        for s in &self.sides[..self.n_sides] {
            for (vc, gc) in v[s.v_offset..s.v_offset + s.ncols].iter_mut().zip(&s.g) {
                *vc += gc[0] * d[0] + gc[1] * d[1] + gc[2] * d[2];
            }
        }
    }
}

/// Projected Gauss–Seidel on the velocity-level Coulomb NCP with the exact friction cone. See the
/// module documentation and `solvers/src/pgs/README.md` for the method.
///
/// The struct keeps its buffers between steps, so a step allocates only its returned solution and
/// a few per-step vectors (the free velocity, one mass-block inverse per body), never per sweep.
#[derive(Debug, Clone)]
pub struct Pgs {
    settings: PgsSettings,
    /// Per-contact data of the current step.
    blocks: Vec<Block>,
    /// Inverse mass block of every body, dense 6×6 (only the leading `nv` × `nv` part is used).
    minv: Vec<[[f64; 6]; 6]>,
    /// Impulses of the current iterate, `(n, t1, t2)` per contact (N s).
    lambda: Vec<[f64; 3]>,
    /// Free velocity `v*`.
    vstar: Vec<f64>,
    /// Velocity of the current iterate, `v = v* + M⁻¹ Jᵀ λ`.
    v: Vec<f64>,
}

impl Pgs {
    /// A solver with the given settings (validated by the registry before this is called; `step`
    /// checks them again and refuses invalid ones).
    pub fn new(settings: PgsSettings) -> Self {
        Self { settings, blocks: vec![], minv: vec![], lambda: vec![], vstar: vec![], v: vec![] }
    }

    /// The settings.
    pub fn settings(&self) -> &PgsSettings {
        &self.settings
    }

    /// Builds the per-contact blocks, `v*`, and the starting impulses and velocity.
    fn setup(&mut self, p: &StepProblem<'_>) -> Result<(), SolveError> {
        let unsupported = |what: String| SolveError::Unsupported { what };
        let layout = &p.layout;
        if !p.mass.is_factored() || p.mass.blocks().len() != layout.blocks.len() {
            return Err(unsupported("mass matrix not factored or not one block per layout block".into()));
        }
        self.minv.clear();
        for (i, blk) in layout.blocks.iter().enumerate() {
            if blk.nv > 6 {
                return Err(unsupported(format!("pgs handles blocks of at most 6 DOFs, block {i} has {}", blk.nv)));
            }
            let inv = p.mass.block_inverse(i);
            let mut m = [[0.0; 6]; 6];
            for (r, row) in m.iter_mut().enumerate().take(blk.nv) {
                for (c, x) in row.iter_mut().enumerate().take(blk.nv) {
                    *x = inv[(r, c)];
                }
            }
            self.minv.push(m);
        }
        self.vstar = p.free_velocity();
        if self.vstar.len() != p.nv() {
            return Err(unsupported(format!("free velocity has {} entries, layout {}", self.vstar.len(), p.nv())));
        }
        if !self.vstar.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "free velocity v*".into() });
        }
        self.v.clear();
        self.v.extend_from_slice(&self.vstar);
        self.blocks.clear();
        self.lambda.clear();
        for (i, c) in p.contacts.contacts.iter().enumerate() {
            let (v_hat, r_n) = p.normal_law(i);
            let bias_n = p.bias(i)[0];
            if ![c.gap, c.mu, v_hat, r_n, bias_n].iter().all(|x| x.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("data of contact {i} (gap, mu, normal law)") });
            }
            if c.mu < 0.0 || r_n < 0.0 {
                return Err(unsupported(format!("contact {i}: mu = {} and r_n = {r_n} must be >= 0", c.mu)));
            }
            if c.jacobian.len() > 2 {
                return Err(unsupported(format!("contact {i} acts on {} blocks (at most 2)", c.jacobian.len())));
            }
            let mut block = Block { n_sides: c.jacobian.len(), bias_n, ..Block::default() };
            let mut w = [[0.0; 3]; 3];
            for (side, jb) in block.sides.iter_mut().zip(&c.jacobian) {
                let b = layout
                    .blocks
                    .binary_search_by_key(&jb.v_offset, |b| b.v_offset)
                    .map_err(|_| unsupported(format!("contact {i}: no DOF block starts at {}", jb.v_offset)))?;
                if jb.ncols != layout.blocks[b].nv {
                    return Err(unsupported(format!(
                        "contact {i}: Jacobian block width {} != {}",
                        jb.ncols, layout.blocks[b].nv
                    )));
                }
                if !jb.rows.iter().flatten().all(|x| x.is_finite()) {
                    return Err(SolveError::NonFinite { what: format!("Jacobian of contact {i}") });
                }
                let (n, minv) = (jb.ncols, &self.minv[b]);
                *side = Side { v_offset: jb.v_offset, ncols: n, j: jb.rows, g: [[0.0; 3]; 6] };
                for (col, g) in side.g.iter_mut().enumerate().take(n) {
                    for (r, x) in g.iter_mut().enumerate() {
                        *x = (0..n).map(|k| minv[col][k] * jb.rows[r][k]).sum();
                    }
                }
                for (r, wr) in w.iter_mut().enumerate() {
                    for (s, x) in wr.iter_mut().enumerate() {
                        *x += (0..n).map(|k| jb.rows[r][k] * side.g[k][s]).sum::<f64>();
                    }
                }
            }
            block.local = LocalProblem::new(w, c.mu, v_hat, r_n);
            let warm = if self.settings.warm_start && !block.local.is_inert() { p.warm_impulse(i) } else { None };
            let lambda0 = match warm {
                Some(l) if l.iter().all(|x| x.is_finite()) => cone::project(l, c.mu),
                _ => [0.0; 3],
            };
            block.apply(lambda0, &mut self.v);
            self.blocks.push(block);
            self.lambda.push(lambda0);
        }
        Ok(())
    }

    /// Natural-map residuals `(natmap_abs_l2, natmap_model_abs_l2)` of the current iterate (N s):
    /// the harness's reference law (rigid, `u = J v + (φ0/dt) e_n`) and the law PGS solves
    /// (compliance included). They coincide when every contact is rigid.
    fn residuals(&self) -> (f64, f64) {
        let (mut reference, mut model) = (0.0, 0.0);
        for (b, lam) in self.blocks.iter().zip(&self.lambda) {
            let u = b.velocity(&self.v);
            let r = natmap(*lam, [u[0] + b.bias_n, u[1], u[2]], b.local.mu);
            reference += r.iter().map(|x| x * x).sum::<f64>();
            model += b.local.natmap(u, *lam).iter().map(|x| x * x).sum::<f64>();
        }
        (reference.sqrt(), model.sqrt())
    }
}

impl Solver for Pgs {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("pgs settings: {e}") })?;
        let local = self.settings.local;
        let (omega, tolerance) = (self.settings.omega, self.settings.tolerance);
        self.setup(p)?;

        let mut iterations = 0;
        let mut status = SolveStatus::Solved;
        if !self.blocks.is_empty() {
            status = SolveStatus::MaxIterations;
            for k in 1..=self.settings.max_iterations {
                let (mut change, mut size) = (0.0f64, 0.0f64);
                for (i, (b, lam)) in self.blocks.iter().zip(self.lambda.iter_mut()).enumerate() {
                    if b.local.is_inert() {
                        continue;
                    }
                    let target = b.local.solve(local, b.velocity(&self.v), *lam);
                    let relaxed = [0, 1, 2].map(|r| lam[r] + omega * (target[r] - lam[r]));
                    let new = cone::project(relaxed, b.local.mu);
                    if !new.iter().all(|x| x.is_finite()) {
                        return Err(SolveError::NonFinite { what: format!("impulse of contact {i} at sweep {k}") });
                    }
                    let d = [new[0] - lam[0], new[1] - lam[1], new[2] - lam[2]];
                    b.apply(d, &mut self.v);
                    *lam = new;
                    change = d.iter().fold(change, |m, x| m.max(x.abs()));
                    size = new.iter().fold(size, |m, x| m.max(x.abs()));
                }
                let rel_change = change / size.max(TINY);
                let (natmap_ref, natmap_model) = self.residuals();
                log.record(&[
                    ("rel_change_linf", rel_change),
                    ("natmap_abs_l2", natmap_ref),
                    ("natmap_model_abs_l2", natmap_model),
                ]);
                iterations = k;
                if rel_change < tolerance {
                    status = SolveStatus::Solved;
                    break;
                }
            }
        }

        // Recompute v = v* + M⁻¹ Jᵀ λ from scratch, dropping the round-off of the incremental updates.
        self.v.copy_from_slice(&self.vstar);
        for (b, lam) in self.blocks.iter().zip(&self.lambda) {
            b.apply(*lam, &mut self.v);
        }
        if !self.v.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "velocity v+".into() });
        }
        Ok(StepSolution {
            v: self.v.clone(),
            q: None,
            impulses: self.lambda.clone(),
            bilateral: vec![],
            iterations,
            status,
        })
    }
}
