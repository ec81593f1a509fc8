//! [`Canal`]: Algorithm 1 of Lee et al. 2025 in λ-form (README §10): the AL outer loop with
//! the frozen De Saxcé term, the cascaded Newton inner solve (Eqs. 21–26) and the penalty update
//! (Eq. 27). The Table II baselines' inner solves are in `strict.rs`.

use super::model::{Model, Op};
use super::settings::{CanalSettings, Inner};
use api::{IterationLog, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use kernels::assembly::SymmetricPattern;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use toolkit::implicit::ImplicitElastic;

const TINY: f64 = 1e-300;
/// A Newton step shorter than this fraction of `||v||` is round-off: the inner solve stops there
/// (all three inner solvers, so that Table II compares them at the same inner tolerance).
pub(super) const ROUNDOFF: f64 = 1e-14;

/// Whether a step of squared length `step2` from a velocity of squared length `v2` is below
/// round-off ([`ROUNDOFF`]).
pub(super) fn below_roundoff(step2: f64, v2: f64) -> bool {
    step2.sqrt() <= ROUNDOFF * v2.sqrt()
}

/// Counters of the last step (for the Table II ablation and the tests).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CanalStats {
    /// AL iterations.
    pub al_iterations: usize,
    /// Inner (Newton, dogleg or damped-Newton) iterations summed over the AL iterations.
    pub inner_iterations: usize,
    /// AL iterations whose inner solve missed `newton_tolerance`.
    pub inner_failures: usize,
    /// Final `||J v − z||_2` (m/s).
    pub al_residual: f64,
    /// Final penalty (kg).
    pub beta: f64,
    /// The last inner solve's relative residual `||r(v)||_2 / max(||b||, ||A v||, ||Jᵀλ||)` at the
    /// returned `(v, λ = Λ(v))`: their momentum error (README §7), at most `newton_tolerance`
    /// when that solve converged.
    pub inner_residual_rel: f64,
}

/// The CANAL solver.
pub struct Canal {
    pub(super) settings: CanalSettings,
    pub(super) model: Model,
    pub(super) nv: usize,
    /// The deformable bodies' linearised implicit step (README §2, an extension): `A = M + δt² K`
    /// on their DOFs, `M` on the rigid bodies; `A = M` without deformables.
    pub(super) elastic: ImplicitElastic,
    /// `b = A v*`.
    pub(super) b: Vec<f64>,
    /// `||b||_2 = ||A v*||_2`: the floor of the impulse-change test's denominator (N s).
    impulse_scale: f64,
    pub(super) v: Vec<f64>,
    /// Outer impulses `λ^l` (`= −u^l`).
    pub(super) lam: Vec<f64>,
    /// `Λ(v) = op(λ̃*(v))` at the current inner iterate.
    pub(super) lam_new: Vec<f64>,
    /// Trial impulses `λ̃*(v)`.
    pub(super) x: Vec<f64>,
    /// `dΛ/dλ̃*` per constraint (`dim²` each, at `joff[i]`).
    pub(super) jac: Vec<f64>,
    pub(super) joff: Vec<usize>,
    /// Frozen De Saxcé term `p_i = μ_i ||z^l_{i,t}||` per constraint.
    pub(super) p: Vec<f64>,
    pub(super) r: Vec<f64>,
    pub(super) d: Vec<f64>,
    /// `A v` at the current inner iterate.
    pub(super) mv: Vec<f64>,
    /// `A d` (line search).
    ad: Vec<f64>,
    pub(super) w: Vec<f64>,
    pub(super) jtl: Vec<f64>,
    pattern: SymmetricPattern,
    chol: Option<SparseCholesky>,
    hvals: Vec<f64>,
    /// Each lower entry of `δt² K'`: `(index in hvals, value)`.
    k_slots: Vec<(usize, f64)>,
    /// Entries of `hvals` in a prescribed row or column: `(value index, the DOF's mass on the
    /// diagonal, 0 elsewhere)`.
    fixed_slots: Vec<(usize, f64)>,
    local: Vec<f64>,
    /// `||r|| / scale` of the last [`Self::evaluate`] (the pair `(v, lam_new)`).
    last_residual_rel: f64,
    stats: CanalStats,
}

impl Canal {
    /// A solver with validated settings.
    pub fn new(settings: CanalSettings) -> Self {
        Self {
            settings,
            model: Model::default(),
            nv: 0,
            elastic: ImplicitElastic::default(),
            b: vec![],
            impulse_scale: 0.0,
            v: vec![],
            lam: vec![],
            lam_new: vec![],
            x: vec![],
            jac: vec![],
            joff: vec![],
            p: vec![],
            r: vec![],
            d: vec![],
            mv: vec![],
            ad: vec![],
            w: vec![],
            jtl: vec![],
            pattern: SymmetricPattern::default(),
            chol: None,
            hvals: vec![],
            k_slots: vec![],
            fixed_slots: vec![],
            local: vec![],
            last_residual_rel: f64::NAN,
            stats: CanalStats::default(),
        }
    }

    /// Counters of the last step.
    pub fn stats(&self) -> CanalStats {
        self.stats
    }

    #[cfg(test)]
    pub(super) fn setup_for_tests(&mut self, p: &StepProblem<'_>) {
        self.setup(p).expect("setup");
    }

    fn setup(&mut self, p: &StepProblem<'_>) -> Result<(), SolveError> {
        self.model = Model::new(p);
        self.nv = p.nv();
        let n = self.model.len();
        // deformable DOFs: the linearised implicit step, A = M + δt² K and its v* (README §2)
        let mut v_star = p.free_velocity();
        if self.elastic.assemble(p)? {
            self.elastic.write_free_velocity(&mut v_star);
        }
        self.b = vec![0.0; self.nv];
        self.elastic.mul_into(p, &v_star, &mut self.b);
        self.impulse_scale = self.b.iter().map(|a| a * a).sum::<f64>().sqrt();
        self.lam = vec![0.0; n];
        if self.settings.warm_start {
            for i in 0..self.model.nc {
                if let Some(l) = p.warm_impulse(i) {
                    self.lam[self.model.off[i]..self.model.off[i] + 3].copy_from_slice(&l);
                }
            }
        }
        // v = v* + A⁻¹ Jᵀ λ (consistent with the warm impulses; prescribed DOFs stay at v̄_P)
        let mut imp = vec![0.0; self.nv];
        for (i, row) in self.model.rows.iter().enumerate() {
            row.add_transpose(&self.lam[self.model.off[i]..self.model.off[i + 1]], &mut imp);
        }
        self.elastic.solve_all_in_place(p, &mut imp);
        self.v = v_star.iter().zip(&imp).map(|(a, b)| a + b).collect();
        self.lam_new = self.lam.clone();
        self.x = vec![0.0; n];
        self.joff.clear();
        let mut o = 0;
        for row in &self.model.rows {
            self.joff.push(o);
            o += row.dim * row.dim;
        }
        self.jac = vec![0.0; o];
        self.p = vec![0.0; self.model.rows.len()];
        self.r = vec![0.0; self.nv];
        self.d = vec![0.0; self.nv];
        self.mv = vec![0.0; self.nv];
        self.ad = vec![0.0; self.nv];
        self.w = vec![0.0; n];
        self.jtl = vec![0.0; self.nv];
        if !self.v.iter().chain(&self.b).chain(&self.lam).all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "problem data (free velocity or warm start)".into() });
        }
        if self.settings.inner == Inner::Cascaded {
            // z^0: warm-started from the previous step (paper §3.5), whose converged slack is
            // z_t = J_t v_prev (README §3); J_t v at the start velocity without a warm start
            match p.warm_start.filter(|w| self.settings.warm_start && w.velocity.len() == self.nv) {
                Some(w) => {
                    let v = std::mem::replace(&mut self.v, w.velocity.clone());
                    self.update_de_saxce(None, 1.0);
                    self.v = v;
                }
                None => self.update_de_saxce(None, 1.0),
            }
            // Hessian pattern: mass blocks, then one dense block per constraint, and the entries
            // of δt² K on the deformable DOFs
            let mut elems: Vec<Vec<usize>> = (0..p.mass.blocks().len())
                .map(|k| (p.mass.offset(k)..p.mass.offset(k) + p.mass.blocks()[k].nrows()).collect())
                .collect();
            elems.extend(self.model.rows.iter().map(|r| r.dofs.clone()));
            let lower_k: Vec<(usize, usize, f64)> =
                self.elastic.stiffness_entries().filter(|&(r, c, _)| r >= c).collect();
            let entries: Vec<(usize, usize)> = lower_k.iter().map(|&(r, c, _)| (r, c)).collect();
            let pattern = SymmetricPattern::with_entries(self.nv, &elems, &entries);
            self.k_slots =
                lower_k.iter().map(|&(r, c, x)| (pattern.position(r, c).expect("entry in the pattern"), x)).collect();
            self.fixed_slots.clear();
            if !p.prescribed.is_empty() {
                let mass = p.mass.diagonal();
                for c in 0..self.nv {
                    for e in pattern.col_ptr[c]..pattern.col_ptr[c + 1] {
                        let r = pattern.row_idx[e];
                        if self.elastic.is_fixed(r) || self.elastic.is_fixed(c) {
                            self.fixed_slots.push((e, if r == c { mass[r] } else { 0.0 }));
                        }
                    }
                }
            }
            let same = self.chol.as_ref().is_some_and(|c| c.has_pattern(&pattern.col_ptr, &pattern.row_idx));
            if !same {
                let c = SparseCholesky::analyze(
                    self.nv,
                    pattern.col_ptr.clone(),
                    pattern.row_idx.clone(),
                    CholeskyParams::default(),
                )
                .map_err(|e| SolveError::Factorization { what: format!("Hessian analysis: {e}") })?;
                self.chol = Some(c);
            }
            self.hvals = vec![0.0; pattern.nnz()];
            let m = self.model.rows.iter().map(|r| r.ncols()).max().unwrap_or(0).max(6);
            self.local = vec![0.0; m * m];
            self.pattern = pattern;
        }
        self.stats = CanalStats::default();
        Ok(())
    }

    /// Freezes `p_i = μ_i ||z_{i,t}||` with `z_t = J_t v + (λ^{l+1}_t − λ^l_t)/β` (`prev = λ^l`;
    /// `None` at the start of a step: `z_t = J_t v`).
    fn update_de_saxce(&mut self, prev: Option<&[f64]>, beta: f64) {
        let mut jv = [0.0; 3];
        for i in 0..self.model.nc {
            let o = self.model.off[i];
            self.model.rows[i].velocity(&self.v, &mut jv);
            let (mut z1, mut z2) = (jv[1], jv[2]);
            if let Some(prev) = prev {
                z1 += (self.lam[o + 1] - prev[o + 1]) / beta;
                z2 += (self.lam[o + 2] - prev[o + 2]) / beta;
            }
            self.p[i] = self.model.mu(i) * (z1 * z1 + z2 * z2).sqrt();
        }
    }

    /// Evaluates `λ̃*`, `Λ = op(λ̃*)` (and `dΛ/dλ̃*` if `want_jac`) and `r = A v − b − Jᵀ Λ` at the
    /// current `v` (0 on prescribed DOFs); returns `(||r||_2, scale)` with
    /// `scale = max(||b||, ||A v||, ||Jᵀ Λ||)`.
    pub(super) fn evaluate(&mut self, p: &StepProblem<'_>, op: Op, beta: f64, want_jac: bool) -> (f64, f64) {
        let mut jv = [0.0; 3];
        self.jtl.iter_mut().for_each(|a| *a = 0.0);
        let pterm = op == Op::Prox;
        for i in 0..self.model.rows.len() {
            let (o, e) = (self.model.off[i], self.model.off[i + 1]);
            let row = &self.model.rows[i];
            row.velocity(&self.v, &mut jv);
            let bias = self.model.bias(i, if pterm { self.p[i] } else { 0.0 });
            jv[0] += bias;
            for ((x, l), u) in self.x[o..e].iter_mut().zip(&self.lam[o..e]).zip(&jv) {
                *x = l - beta * u;
            }
            let jslot = if want_jac {
                let jo = self.joff[i];
                Some(&mut self.jac[jo..jo + row.dim * row.dim])
            } else {
                None
            };
            self.model.apply(i, op, beta, &self.x[o..e], &mut self.lam_new[o..e], jslot);
            row.add_transpose(&self.lam_new[o..e], &mut self.jtl);
        }
        self.elastic.mul_into(p, &self.v, &mut self.mv);
        let (mut nr, mut nb, mut nm, mut nj) = (0.0, 0.0, 0.0, 0.0);
        for k in 0..self.nv {
            // a prescribed DOF's row is dropped (the boundary supplies its reaction)
            self.r[k] = if self.elastic.is_fixed(k) { 0.0 } else { self.mv[k] - self.b[k] - self.jtl[k] };
            nr += self.r[k] * self.r[k];
            nb += self.b[k] * self.b[k];
            nm += self.mv[k] * self.mv[k];
            nj += self.jtl[k] * self.jtl[k];
        }
        let (nr, scale) = (nr.sqrt(), nb.sqrt().max(nm.sqrt()).max(nj.sqrt()).max(TINY));
        self.last_residual_rel = nr / scale;
        (nr, scale)
    }

    /// Cascaded Newton on `h` (Eq. 22) with the exact line search; returns `(iterations, converged)`.
    fn inner_cascaded(
        &mut self,
        p: &StepProblem<'_>,
        beta: f64,
        log: &IterationLog,
    ) -> Result<(usize, bool), SolveError> {
        let tol = self.settings.newton_tolerance;
        for k in 0..self.settings.max_newton_iterations {
            if log.past_deadline() {
                // unconverged: the AL loop sees the deadline too and returns its iterate, the pair
                // (v, Λ(v)) (v has moved since the last evaluation)
                self.evaluate(p, Op::Prox, beta, false);
                return Ok((k, false));
            }
            let (nr, scale) = self.evaluate(p, Op::Prox, beta, true);
            if !nr.is_finite() {
                return Err(SolveError::NonFinite { what: format!("CANAL residual at Newton iteration {k}") });
            }
            if nr <= tol * scale {
                return Ok((k, true));
            }
            // H = A + β Σ J_iᵀ D_i J_i (Eq. 24; A = M + δt² K on deformable DOFs, README §2)
            self.hvals.iter_mut().for_each(|a| *a = 0.0);
            let nm = p.mass.blocks().len();
            for (kb, blk) in p.mass.blocks().iter().enumerate() {
                let m = blk.nrows();
                for a in 0..m {
                    for c in 0..m {
                        self.local[a * m + c] = blk[(a, c)];
                    }
                }
                self.pattern.add_element(kb, &self.local[..m * m], &mut self.hvals);
            }
            for (i, row) in self.model.rows.iter().enumerate() {
                let (jo, dim, m) = (self.joff[i], row.dim, row.ncols());
                let mut dw = [0.0; 9];
                for (t, s) in dw.iter_mut().zip(&self.jac[jo..jo + dim * dim]) {
                    *t = beta * s;
                }
                row.weighted_gram(&dw[..dim * dim], &mut self.local[..m * m]);
                self.pattern.add_element(nm + i, &self.local[..m * m], &mut self.hvals);
            }
            for &(idx, x) in &self.k_slots {
                self.hvals[idx] += x;
            }
            for &(idx, x) in &self.fixed_slots {
                self.hvals[idx] = x;
            }
            let chol = self.chol.as_mut().expect("analysed in setup");
            chol.factorize(&self.hvals)
                .map_err(|e| SolveError::Factorization { what: format!("CANAL Hessian (Eq. 24): {e}") })?;
            for (d, r) in self.d.iter_mut().zip(&self.r) {
                *d = -r;
            }
            chol.solve_in_place(&mut self.d);
            if !self.fixed_slots.is_empty() {
                // prescribed DOFs stay at v̄_P (their rows of H are decoupled; exact zeros)
                for (k, d) in self.d.iter_mut().enumerate() {
                    if self.elastic.is_fixed(k) {
                        *d = 0.0;
                    }
                }
            }
            let v2: f64 = self.v.iter().map(|v| v * v).sum();
            if below_roundoff(self.d.iter().map(|d| d * d).sum(), v2) {
                // the Newton step is below round-off of v: the floor of the factorization at this β
                return Ok((k + 1, true));
            }
            let alpha = self.line_search(p, beta)?;
            if alpha == 0.0 {
                // no descent along d: round-off at the minimum (line_search)
                return Ok((k + 1, true));
            }
            for (v, d) in self.v.iter_mut().zip(&self.d) {
                *v += alpha * d;
            }
        }
        let (nr, scale) = self.evaluate(p, Op::Prox, beta, false);
        Ok((self.settings.max_newton_iterations, nr <= tol * scale))
    }

    /// Exact line search (Eq. 26): the root of `φ'(α) = dᵀ(A v − b) + α dᵀ A d − Σ w_iᵀ Λ_i(α)`,
    /// `w_i = J_i d`, `Λ_i(α) = Π(λ̃*_i − α β w_i)`, by rtsafe with `φ''` from the Jacobians.
    fn line_search(&mut self, p: &StepProblem<'_>, beta: f64) -> Result<f64, SolveError> {
        let mut wi = [0.0; 3];
        for (i, row) in self.model.rows.iter().enumerate() {
            row.velocity(&self.d, &mut wi);
            self.w[self.model.off[i]..self.model.off[i + 1]].copy_from_slice(&wi[..row.dim]);
        }
        self.elastic.mul_into(p, &self.d, &mut self.ad);
        let dmd: f64 = self.d.iter().zip(&self.ad).map(|(d, a)| d * a).sum();
        let c0: f64 = self.d.iter().zip(self.mv.iter().zip(&self.b)).map(|(d, (m, b))| d * (m - b)).sum();
        let (model, x, w) = (&self.model, &self.x, &self.w);
        let dphi = |alpha: f64| -> (f64, f64) {
            let (mut f, mut df) = (c0 + alpha * dmd, dmd);
            let (mut xa, mut l, mut j) = ([0.0; 3], [0.0; 3], [0.0; 9]);
            for i in 0..model.rows.len() {
                let (o, e) = (model.off[i], model.off[i + 1]);
                let dim = e - o;
                for k in 0..dim {
                    xa[k] = x[o + k] - alpha * beta * w[o + k];
                }
                model.apply(i, Op::Prox, beta, &xa[..dim], &mut l[..dim], Some(&mut j[..dim * dim]));
                for r in 0..dim {
                    f -= w[o + r] * l[r];
                    for c in 0..dim {
                        df += beta * w[o + r] * j[r * dim + c] * w[o + c];
                    }
                }
            }
            (f, df)
        };
        let (f0, _) = dphi(0.0);
        if f0 >= 0.0 || !f0.is_finite() {
            // not a descent direction (round-off at convergence): no step
            return Ok(0.0);
        }
        let norm = -f0;
        let g = |a: f64| {
            let (f, df) = dphi(a);
            (f / norm, df / norm)
        };
        let mut hi = 1.0;
        let mut lo = 0.0;
        while g(hi).0 < 0.0 {
            lo = hi;
            hi *= 2.0;
            if hi > 1e8 {
                return Ok(lo);
            }
        }
        kernels::roots::rtsafe(g, lo, hi, 1e-14 * hi, 1e-12, self.settings.line_search_iterations)
            .map(|(a, _)| a)
            .map_err(|e| SolveError::LineSearch { what: format!("CANAL exact line search: {e}") })
    }
}

impl Solver for Canal {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.setup(p)?;
        let s = self.settings.clone();
        let inner = s.inner;
        let mut beta = s.beta0;
        let mut al_prev = f64::INFINITY;
        let mut status = SolveStatus::MaxIterations;
        let mut prev = vec![0.0; self.lam.len()];
        let mut impulses = vec![[0.0; 3]; self.model.nc];
        let mut gamma = vec![0.0; self.model.rows.len() - self.model.nc];
        let mut iterations = 0;
        for l in 0..s.max_al_iterations {
            iterations = l + 1;
            let (k, ok) = match inner {
                Inner::Cascaded => self.inner_cascaded(p, beta, log)?,
                Inner::TrDogleg | Inner::DampedNewton => self.inner_strict(p, beta, inner, log)?,
            };
            self.stats.inner_iterations += k;
            self.stats.inner_residual_rel = self.last_residual_rel;
            self.stats.inner_failures += usize::from(!ok);
            // AL update (Eq. 12): u = −λ^{l+1}; ||J v − z|| = ||λ^{l+1} − λ^l|| / β
            prev.copy_from_slice(&self.lam);
            self.lam.copy_from_slice(&self.lam_new);
            let dl = prev.iter().zip(&self.lam).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt();
            let al_res = dl / beta;
            // relative to the impulses, floored by the step's momentum scale ||M v*|| (README §6)
            let lam_norm = self.lam.iter().map(|a| a * a).sum::<f64>().sqrt();
            let rel_change = dl / lam_norm.max(self.impulse_scale).max(TINY);
            if inner == Inner::Cascaded {
                self.update_de_saxce(Some(&prev), beta);
            }
            for (i, imp) in impulses.iter_mut().enumerate() {
                imp.copy_from_slice(&self.lam[self.model.off[i]..self.model.off[i] + 3]);
            }
            for (k, g) in gamma.iter_mut().enumerate() {
                *g = self.lam[self.model.off[self.model.nc + k]];
            }
            if !al_res.is_finite() || self.lam.iter().any(|a| !a.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("impulses at AL iteration {l}") });
            }
            let lee = toolkit::lee_residual(p, &impulses, &gamma);
            log.record(&[
                ("al_residual_l2", al_res),
                ("rel_change_l2", rel_change),
                ("lee_residual", lee.abs),
                ("inner_iters", k as f64),
                ("inner_converged", f64::from(u8::from(ok))),
                ("beta", beta),
            ]);
            log.iterate(&self.v, &impulses, &gamma);
            if log.should_stop() {
                status = log.stop_status();
                break;
            }
            self.stats.al_residual = al_res;
            self.stats.beta = beta;
            if al_res < s.al_tolerance && rel_change < s.impulse_tolerance {
                status = SolveStatus::Solved;
                break;
            }
            // Eq. (27) is the `else` branch of Alg. 1 line 16: β grows only while ||J v − z|| is
            // above θ_th^AL (not while only the impulse test keeps the loop running)
            if l > 0 && al_res >= s.al_tolerance && al_res > s.zeta * al_prev {
                beta = (s.kappa * beta).min(s.beta_max);
            }
            al_prev = al_res;
        }
        self.stats.al_iterations = iterations;
        if self.v.iter().any(|x| !x.is_finite()) {
            return Err(SolveError::NonFinite { what: "CANAL velocity".into() });
        }
        Ok(StepSolution { v: self.v.clone(), q: None, impulses, bilateral: gamma, iterations, status })
    }
}
