//! [`ConeQp`]: Anitescu's cone complementarity problem (CCP) in dense Delassus form, the problem
//! the classic convex-relaxation solvers (`ccp_pgs`, `ccp_admm`, `apgd`) work on.
//!
//! With `n = 3 nc + nb` unknowns `x = (λ_1, …, λ_nc, γ_1, …, γ_nb)` (one `(n, t1, t2)` impulse per
//! contact, then one impulse per bilateral row) and the affine velocity `u = W x + q`, the CCP is
//!
//! ```text
//! K ∋ x ⊥ W x + q ∈ K*,     K = K_μ1 × … × K_μnc × R^nb,     K* = K_1/μ1 × … × K_1/μnc × {0}^nb,
//! ```
//!
//! i.e. for symmetric positive semi-definite `W` the optimality conditions of the convex program
//! `min ½ xᵀ W x + qᵀ x` over `x ∈ K` (Anitescu 2006, Eq. 20–22: the relaxed velocity `u` lies in
//! the dual cone instead of satisfying Signorini's `u_n = 0` on a sliding contact). The relaxation
//! is the missing De Saxcé term: Coulomb's law is `K ∋ λ ⊥ u + μ ‖u_t‖ e_n ∈ K*`, so a sliding
//! CCP contact separates at the normal velocity `u_n = μ ‖u_t‖` ("gliding").
//!
//! Built from a step ([`ConeQp::assemble`]: `W = J M⁻¹ Jᵀ` from the per-contact blocks of
//! [`crate::contact_blocks`], compliance `r_n` and the rows' `r_k` on the diagonal, `q` the law
//! velocity at `x = 0`, `(u_n − v̂, u_t)` from `v*`) or from a problem in Delassus form
//! ([`ConeQp::from_delassus`], `W` as given, no bilateral rows).

use crate::contact_blocks::ContactBlocks;
use crate::implicit::ImplicitElastic;
use api::{DelassusProblem, DelassusSolution, IterationLog, SolveError, SolveStatus, StepProblem, StepSolution};
use kernels::cone;
use kernels::contact_local::ccp_natmap;

/// The iteration-log column of the CCP's own natural-map residual [`ConeQp::residual`] (the
/// model's residual the CCP solvers declare, shown beside the harness's rigid one).
pub const RESIDUAL_COLUMN: &str = "ccp_natmap_abs_l2";

/// The CCP `K ∋ x ⊥ W x + q ∈ K*` in dense form (module doc).
#[derive(Debug, Clone, Default)]
pub struct ConeQp {
    /// Number of contacts (the first `3 nc` unknowns, `(n, t1, t2)` each).
    pub nc: usize,
    /// Number of bilateral rows (the last `nb` unknowns, free).
    pub nb: usize,
    /// `W`, `n × n`, row-major (m/s per N s).
    pub w: Vec<f64>,
    /// `q = u(0)` (m/s).
    pub q: Vec<f64>,
    /// Friction coefficient of each contact.
    pub mu: Vec<f64>,
}

impl ConeQp {
    /// Number of unknowns, `3 nc + nb`.
    pub fn n(&self) -> usize {
        3 * self.nc + self.nb
    }

    /// Fills `self` with the CCP of a step whose blocks are `blocks` and free velocity `vstar`
    /// (deformable DOFs: the implicit step's `v*`). Column `j` of `W` is `J M⁻¹ Jᵀ e_j`, formed
    /// by applying a unit impulse to a zero velocity and reading every constraint's velocity.
    pub fn assemble(&mut self, blocks: &ContactBlocks, vstar: &[f64]) -> Result<(), SolveError> {
        let (nc, nb) = (blocks.blocks.len(), blocks.bilateral.len());
        let n = 3 * nc + nb;
        self.nc = nc;
        self.nb = nb;
        self.w.clear();
        self.w.resize(n * n, 0.0);
        self.q.clear();
        self.mu.clear();
        let mut v = vec![0.0; vstar.len()];
        for col in 0..n {
            v.fill(0.0);
            if col < 3 * nc {
                let mut e = [0.0; 3];
                e[col % 3] = 1.0;
                blocks.blocks[col / 3].apply(e, &mut v);
            } else {
                blocks.bilateral[col - 3 * nc].apply(1.0, &mut v);
            }
            for (i, b) in blocks.blocks.iter().enumerate() {
                let u = b.velocity(&v);
                for (a, x) in u.iter().enumerate() {
                    self.w[(3 * i + a) * n + col] = *x;
                }
            }
            for (k, b) in blocks.bilateral.iter().enumerate() {
                self.w[(3 * nc + k) * n + col] = b.velocity(&v);
            }
        }
        for (i, b) in blocks.blocks.iter().enumerate() {
            self.w[(3 * i) * n + 3 * i] += b.local.r_n;
            let u = b.velocity(vstar);
            self.q.extend([u[0] - b.local.v_hat, u[1], u[2]]);
            self.mu.push(b.local.mu);
        }
        for (k, b) in blocks.bilateral.iter().enumerate() {
            self.w[(3 * nc + k) * n + 3 * nc + k] += b.r;
            self.q.push(b.velocity(vstar) - b.v_hat);
        }
        if !self.w.iter().chain(&self.q).all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "Delassus matrix W or free velocity of the CCP".into() });
        }
        Ok(())
    }

    /// The CCP of a problem in Delassus form, `W` and `q` as given (no bilateral rows).
    pub fn from_delassus(p: &DelassusProblem) -> Self {
        let nc = p.nc();
        let n = 3 * nc;
        let mut w = vec![0.0; n * n];
        for i in 0..nc {
            for (j, b) in p.row(i) {
                for (a, row) in b.iter().enumerate() {
                    w[(3 * i + a) * n + 3 * j..(3 * i + a) * n + 3 * j + 3].copy_from_slice(row);
                }
            }
        }
        Self { nc, nb: 0, w, q: p.q().to_vec(), mu: p.mu().to_vec() }
    }

    /// Row `r` of `W`.
    pub fn row(&self, r: usize) -> &[f64] {
        let n = self.n();
        &self.w[r * n..(r + 1) * n]
    }

    /// `u = W x + q`.
    pub fn velocity(&self, x: &[f64], u: &mut Vec<f64>) {
        u.clear();
        u.extend((0..self.n()).map(|r| self.q[r] + dot(self.row(r), x)));
    }

    /// Projects `x` onto `K` in place (each contact onto its cone, bilateral rows unchanged).
    pub fn project(&self, x: &mut [f64]) {
        for (i, &mu) in self.mu.iter().enumerate() {
            let p = cone::project([x[3 * i], x[3 * i + 1], x[3 * i + 2]], mu);
            x[3 * i..3 * i + 3].copy_from_slice(&p);
        }
    }

    /// The CCP's natural-map residual `‖x − P_K(x − u)‖₂` at `x` with `u = W x + q` (the solver's
    /// own model residual; 0 exactly at a CCP solution). A bilateral row contributes `u_k`.
    pub fn residual(&self, x: &[f64], u: &[f64]) -> f64 {
        let mut s = 0.0;
        for (i, &mu) in self.mu.iter().enumerate() {
            let l = [x[3 * i], x[3 * i + 1], x[3 * i + 2]];
            let r = ccp_natmap(l, [u[3 * i], u[3 * i + 1], u[3 * i + 2]], mu);
            s += r.iter().map(|a| a * a).sum::<f64>();
        }
        s += u[3 * self.nc..].iter().map(|a| a * a).sum::<f64>();
        s.sqrt()
    }

    /// The objective `½ xᵀ W x + qᵀ x` given `u = W x + q`: `½ xᵀ (u + q)`.
    pub fn objective(&self, x: &[f64], u: &[f64]) -> f64 {
        0.5 * x.iter().zip(u.iter().zip(&self.q)).map(|(a, (b, c))| a * (b + c)).sum::<f64>()
    }

    /// The largest eigenvalue of the symmetric part of `W` by power iteration from the all-ones
    /// vector (`iterations` products at most; stops when the estimate changes by less than
    /// `1e-10` relative). 0 for an empty or zero `W`.
    pub fn largest_eigenvalue(&self, iterations: usize) -> f64 {
        let n = self.n();
        if n == 0 {
            return 0.0;
        }
        let mut x = vec![1.0 / (n as f64).sqrt(); n];
        let mut y = vec![0.0; n];
        let mut lambda = 0.0;
        for _ in 0..iterations {
            for (r, yr) in y.iter_mut().enumerate() {
                *yr = (0..n).map(|c| 0.5 * (self.w[r * n + c] + self.w[c * n + r]) * x[c]).sum();
            }
            let norm = y.iter().map(|a| a * a).sum::<f64>().sqrt();
            if norm == 0.0 || !norm.is_finite() {
                return 0.0;
            }
            let next = dot(&x, &y);
            x.iter_mut().zip(&y).for_each(|(a, b)| *a = b / norm);
            if (next - lambda).abs() <= 1e-10 * next.abs() {
                return next;
            }
            lambda = next;
        }
        lambda
    }

    /// The relative asymmetry `max |W − Wᵀ| / max |W|` (0 for a zero `W`).
    pub fn asymmetry(&self) -> f64 {
        let n = self.n();
        let scale = self.w.iter().fold(0.0f64, |m, a| m.max(a.abs()));
        let mut diff = 0.0f64;
        for r in 0..n {
            for c in r + 1..n {
                diff = diff.max((self.w[r * n + c] - self.w[c * n + r]).abs());
            }
        }
        if scale > 0.0 {
            diff / scale
        } else {
            0.0
        }
    }
}

/// A step's CCP with what it takes to go back to velocities: the per-contact blocks, the
/// deformable bodies' implicit step and `v*` (buffers kept from step to step).
#[derive(Debug, Default)]
pub struct StepCcp {
    /// The CCP of the step.
    pub qp: ConeQp,
    /// Per-contact and per-row blocks of the step.
    pub blocks: ContactBlocks,
    /// The deformable bodies' linearised implicit step.
    elastic: ImplicitElastic,
    /// Free velocity `v*` (deformable DOFs: the implicit step's).
    pub vstar: Vec<f64>,
}

impl StepCcp {
    /// Builds the blocks, `v*` and the CCP of `p`.
    pub fn assemble(&mut self, p: &StepProblem<'_>) -> Result<(), SolveError> {
        self.blocks.assemble_implicit(p, &mut self.elastic)?;
        // deformable DOFs: the linearised implicit step's v* (prescribed DOFs at v̄_P)
        self.elastic.free_velocity(p, &mut self.vstar)?;
        self.qp.assemble(&self.blocks, &self.vstar)
    }

    /// The starting point: the previous step's impulses matched by key (projected onto `K`) where
    /// `warm` and available, else 0.
    pub fn start(&self, p: &StepProblem<'_>, warm: bool, x: &mut Vec<f64>) {
        x.clear();
        for (i, b) in self.blocks.blocks.iter().enumerate() {
            let w = if warm && !b.local.is_inert() { p.warm_impulse(i) } else { None };
            x.extend(match w {
                Some(l) if l.iter().all(|a| a.is_finite()) => cone::project(l, b.local.mu),
                _ => [0.0; 3],
            });
        }
        for k in 0..self.blocks.bilateral.len() {
            x.push(if warm { p.warm_bilateral(k).filter(|g| g.is_finite()).unwrap_or(0.0) } else { 0.0 });
        }
    }

    /// `v = v* + M⁻¹ (Jᵀ λ + Gᵀ γ)` of the unknowns `x`.
    pub fn velocity(&self, x: &[f64], v: &mut Vec<f64>) {
        v.clear();
        v.extend_from_slice(&self.vstar);
        for (i, b) in self.blocks.blocks.iter().enumerate() {
            b.apply([x[3 * i], x[3 * i + 1], x[3 * i + 2]], v);
        }
        let nc = self.blocks.blocks.len();
        for (k, b) in self.blocks.bilateral.iter().enumerate() {
            b.apply(x[3 * nc + k], v);
        }
    }

    /// The contact impulses and bilateral impulses of `x`.
    pub fn split(&self, x: &[f64]) -> (Vec<[f64; 3]>, Vec<f64>) {
        let nc = self.blocks.blocks.len();
        ((0..nc).map(|i| [x[3 * i], x[3 * i + 1], x[3 * i + 2]]).collect(), x[3 * nc..].to_vec())
    }
}

/// Where a CCP came from, to hand its iterates to the harness's yardstick.
#[derive(Debug, Clone, Copy)]
pub enum Origin<'a> {
    /// A time step: an iterate is the velocity `v* + M⁻¹ (Jᵀ λ + Gᵀ γ)` with its impulses.
    Step(&'a StepCcp),
    /// A problem in Delassus form: the impulses alone.
    Delassus,
}

impl Origin<'_> {
    /// `log.iterate(...)` of the unknowns `x` (call right after `log.record`); on a step the
    /// velocity is formed only when the log wants iterates.
    pub fn hand_over(&self, x: &[f64], log: &mut IterationLog, v: &mut Vec<f64>) {
        match self {
            Origin::Step(s) => {
                if log.wants_iterates() {
                    s.velocity(x, v);
                    let (l, g) = s.split(x);
                    log.iterate(v, &l, &g);
                }
            }
            Origin::Delassus => {
                let l: Vec<[f64; 3]> = x.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
                log.iterate(&[], &l, &[]);
            }
        }
    }
}

/// A CCP algorithm's answer: iterations of its main loop and its status (the unknowns are
/// written in place).
pub type Outcome = Result<(usize, SolveStatus), SolveError>;

/// Solves the CCP of step `p` with `run` (given the CCP, the origin, the starting point —
/// warm-started if `warm` — to overwrite with the answer, and the log) and returns the step's
/// solution with `v = v* + M⁻¹ (Jᵀ λ + Gᵀ γ)` recomputed from the answer.
pub fn solve_step(
    ccp: &mut StepCcp,
    p: &StepProblem<'_>,
    warm: bool,
    log: &mut IterationLog,
    run: impl FnOnce(&ConeQp, Origin<'_>, &mut [f64], &mut IterationLog) -> Outcome,
) -> Result<StepSolution, SolveError> {
    ccp.assemble(p)?;
    let mut x = vec![];
    ccp.start(p, warm, &mut x);
    let (iterations, status) = run(&ccp.qp, Origin::Step(ccp), &mut x, log)?;
    let mut v = vec![];
    ccp.velocity(&x, &mut v);
    if !v.iter().chain(&x).all(|a| a.is_finite()) {
        return Err(SolveError::NonFinite { what: "velocity v+ or impulses of the CCP answer".into() });
    }
    let (impulses, bilateral) = ccp.split(&x);
    Ok(StepSolution { v, q: None, impulses, bilateral, iterations, status })
}

/// Solves the CCP of a problem in Delassus form (`W` as given) with `run` from zero impulses.
pub fn solve_delassus(
    p: &DelassusProblem,
    log: &mut IterationLog,
    run: impl FnOnce(&ConeQp, Origin<'_>, &mut [f64], &mut IterationLog) -> Outcome,
) -> Result<DelassusSolution, SolveError> {
    let qp = ConeQp::from_delassus(p);
    if !qp.w.iter().chain(&qp.q).chain(&qp.mu).all(|a| a.is_finite()) {
        return Err(SolveError::NonFinite { what: "W, q or mu of the Delassus problem".into() });
    }
    let mut x = vec![0.0; qp.n()];
    let (iterations, status) = run(&qp, Origin::Delassus, &mut x, log)?;
    if !x.iter().all(|a| a.is_finite()) {
        return Err(SolveError::NonFinite { what: "impulses of the CCP answer".into() });
    }
    Ok(DelassusSolution { impulses: x.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(), iterations, status })
}

/// `aᵀ b`.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A point mass on a plane, `W = I`, free velocity `q = (−1, 2, 0)`, `μ = 0.5`: the CCP is the
    /// projection `x = P_K(−q)`, sliding: `x_n = (μ ‖q_t‖ − q_n)/(1 + μ²) = 1.6`, `x_t = −μ x_n`;
    /// the velocity `u = x + q` lies on the dual cone's boundary with `u_n = μ ‖u_t‖` (the
    /// gliding the Coulomb law forbids), and the residual is zero.
    #[test]
    fn the_ccp_of_a_sliding_point_mass_separates_at_mu_times_slip() {
        let qp =
            ConeQp { nc: 1, nb: 0, w: vec![1., 0., 0., 0., 1., 0., 0., 0., 1.], q: vec![-1., 2., 0.], mu: vec![0.5] };
        let mut x = vec![1.0, -2.0, 0.0];
        qp.project(&mut x);
        assert!((x[0] - 1.6).abs() < 1e-15 && (x[1] + 0.8).abs() < 1e-15, "{x:?}");
        let mut u = vec![];
        qp.velocity(&x, &mut u);
        assert!((u[0] - 0.5 * u[1].abs()).abs() < 1e-15, "u_n = {} vs mu |u_t| = {}", u[0], 0.5 * u[1].abs());
        assert!(qp.residual(&x, &u) < 1e-15);
        // the Coulomb answer (x_n = 1, x_t = -0.5) is not a CCP solution
        let coulomb = [1.0, -0.5, 0.0];
        qp.velocity(&coulomb, &mut u);
        assert!(qp.residual(&coulomb, &u) > 0.1);
    }

    #[test]
    fn power_iteration_finds_the_largest_eigenvalue() {
        // symmetric part of [[2, 1], [0, 3]] padded to one contact: eigenvalues of [[2, .5], [.5, 3]] and 1
        let qp = ConeQp { nc: 1, nb: 0, w: vec![2., 1., 0., 0., 3., 0., 0., 0., 1.], q: vec![0.; 3], mu: vec![0.1] };
        let want = 2.5 + (0.25f64 + 0.25).sqrt();
        assert!((qp.largest_eigenvalue(200) - want).abs() < 1e-8);
        assert!((qp.asymmetry() - 1.0 / 3.0).abs() < 1e-15);
    }
}
