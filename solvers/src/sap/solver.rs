//! [`Sap`]: the Newton iteration of SAP (Castro et al. Alg. 2, §IV) with the stopping rule
//! Eq. 25–26 checked before any Newton step, the exact line search, and the step's outputs
//! (`v+`, `γ`, `q+` of Eq. 12).

use super::line_search::LineSearch;
use super::model::{Evaluation, HessianFactor, HessianPattern};
use super::problem::SapProblem;
use super::settings::SapSettings;
use api::{IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem, StepSolution};
use toolkit::implicit::ImplicitElastic;

/// Which criterion ended a solve (Drake's `SapStatistics` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Criterion {
    /// Eq. 26 held.
    Optimality,
    /// The cost stagnated at round-off with α > 0.5 (Drake's cost criterion; status `AlmostSolved`).
    CostStagnation,
    /// `max_iterations` Newton steps were taken.
    MaxIterations,
}

/// Statistics of the last solve.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SapStats {
    /// Newton iterations (factorizations).
    pub iterations: usize,
    /// Total line-search iterations.
    pub ls_iterations: usize,
    /// Cost `ℓ_p` of each evaluated iterate (J).
    pub cost: Vec<f64>,
    /// `‖D̃ ∇ℓ‖` of each evaluated iterate (√J).
    pub grad_scaled_l2: Vec<f64>,
    /// Step lengths.
    pub alpha: Vec<f64>,
    /// The criterion that fired (None before the first solve).
    pub criterion: Option<Criterion>,
}

/// The SAP solver (see the module doc and `solvers/src/sap/README.md`).
#[derive(Debug)]
pub struct Sap {
    settings: SapSettings,
    eval: Evaluation,
    pattern: HessianPattern,
    factor: HessianFactor,
    ls: LineSearch,
    /// Current iterate.
    v: Vec<f64>,
    /// Newton direction.
    dv: Vec<f64>,
    /// `diag(M)^{-1/2}` (Eq. 25).
    d_scale: Vec<f64>,
    /// `M v`.
    p: Vec<f64>,
    /// The deformable bodies' linearised implicit step (symbolic analysis kept across steps).
    elastic: ImplicitElastic,
    /// Statistics of the last solve.
    pub stats: SapStats,
}

impl Sap {
    /// A solver with the given settings (validated by the registry; `step` checks them again).
    pub fn new(settings: SapSettings) -> Self {
        Self {
            settings,
            eval: Evaluation::default(),
            pattern: HessianPattern::default(),
            factor: HessianFactor::default(),
            ls: LineSearch::default(),
            v: vec![],
            dv: vec![],
            d_scale: vec![],
            p: vec![],
            elastic: ImplicitElastic::default(),
            stats: SapStats::default(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &SapSettings {
        &self.settings
    }

    /// Symbolic analyses of `H` performed so far (each new contact-graph pattern costs one).
    pub fn symbolic_analyses(&self) -> usize {
        self.factor.analyses
    }

    /// Symbolic analyses of the deformable bodies' `A` so far (one per run).
    pub fn elastic_symbolic_analyses(&self) -> usize {
        self.elastic.symbolic_analyses()
    }

    /// The last iterate's impulses `γ` (n, t1, t2) per constraint (a holonomic row's is
    /// `(γ, 0, 0)`; [`SapProblem::split_impulses`]).
    pub fn impulses(&self) -> &[[f64; 3]] {
        &self.eval.gamma
    }

    /// Solves `min_v ℓ_p(v)` (Eq. 24) for `prob` from the initial guess `guess` (Alg. 2). Returns
    /// the velocity and the status; impulses are in [`Sap::impulses`], statistics in `self.stats`.
    pub fn solve(
        &mut self,
        prob: &SapProblem,
        guess: &[f64],
        log: &mut IterationLog,
    ) -> Result<(Vec<f64>, SolveStatus), SolveError> {
        let s = &self.settings;
        let nv = prob.nv();
        assert_eq!(guess.len(), nv, "guess must have nv entries");
        self.stats = SapStats::default();
        self.eval.resize(prob);
        self.v.clear();
        self.v.extend_from_slice(guess);
        self.dv.clear();
        self.dv.resize(nv, 0.0);
        self.p.clear();
        self.p.resize(nv, 0.0);
        self.d_scale.clear();
        self.d_scale.extend(prob.mass.diagonal_iter().map(|m| 1.0 / m.sqrt()));
        if !self.d_scale.iter().all(|x| x.is_finite()) {
            return Err(SolveError::Unsupported { what: "mass matrix with a non-positive diagonal".into() });
        }
        // prescribed DOFs start (and stay: zero gradient, identity Hessian rows) at v̄_P = v*_P
        for (k, v) in self.v.iter_mut().enumerate() {
            if prob.is_fixed(k) {
                *v = prob.v_star[k];
            }
        }
        let mut prev_cost = f64::NAN;
        let mut prev_alpha = f64::NAN;
        let mut status = SolveStatus::MaxIterations;
        for k in 0..=s.max_iterations {
            let hessian = k < s.max_iterations;
            self.eval.calc(prob, &self.v, hessian);
            let cost = self.eval.cost();
            if !cost.is_finite() || !self.eval.grad.iter().all(|x| x.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("cost or gradient at Newton iteration {k}") });
            }
            // Eq. 25–26: ‖D̃∇ℓ‖ < ε_a + ε_r max(‖D̃ p‖, ‖D̃ j_c‖), D̃ = diag(M)^{-1/2}, p = M v
            prob.mass.mul_into(&self.v, &mut self.p);
            let norm = |x: &[f64]| x.iter().zip(&self.d_scale).map(|(a, d)| (a * d) * (a * d)).sum::<f64>().sqrt();
            let grad_norm = norm(&self.eval.grad);
            let scale = norm(&self.p).max(norm(&self.eval.jc));
            self.stats.cost.push(cost);
            self.stats.grad_scaled_l2.push(grad_norm);
            let optimal = grad_norm < s.abs_tolerance + s.rel_tolerance * scale;
            let stagnated = k > 0
                && (cost - prev_cost).abs() < s.cost_abs_tolerance + s.cost_rel_tolerance * 0.5 * (cost + prev_cost)
                && prev_alpha > 0.5;
            let row = |alpha: f64, ls: f64| {
                [
                    ("cost", cost),
                    ("grad_scaled_l2", grad_norm),
                    ("grad_rel", grad_norm / scale.max(f64::MIN_POSITIVE)),
                    ("alpha", alpha),
                    ("ls_iters", ls),
                ]
            };
            if optimal || stagnated || k == s.max_iterations {
                let (criterion, st) = if optimal {
                    (Criterion::Optimality, SolveStatus::Solved)
                } else if stagnated {
                    (Criterion::CostStagnation, SolveStatus::AlmostSolved)
                } else {
                    (Criterion::MaxIterations, SolveStatus::MaxIterations)
                };
                // the last row takes no step: α = 0, no line search (not NaN: run records store
                // the logs as JSON, where NaN becomes null and does not read back)
                log.record(&row(0.0, 0.0));
                hand_over(log, prob, &self.v, &self.eval.gamma);
                self.stats.criterion = Some(criterion);
                status = st;
                break;
            }
            // v_k is handed over before its Newton step, its row's α and line-search iterations
            // filled in after the search: the harness's stopping rule (equal-accuracy mode)
            // measures v_k and, once it meets the accuracy, takes no step (from an iterate at the
            // optimum to round-off the direction is noise and the line search fails)
            let rows = log.len();
            log.record(&row(0.0, 0.0));
            let recorded = log.len() > rows;
            hand_over(log, prob, &self.v, &self.eval.gamma);
            if log.should_stop() {
                status = log.stop_status();
                break;
            }
            // Newton direction: H Δv = −∇ℓ, H = A + Jᵀ G J (the pattern is built at the step's
            // first Newton iteration: a warm start that already meets Eq. 26 needs none)
            if k == 0 {
                self.pattern.build(prob);
            }
            self.pattern.assemble(prob, &self.eval);
            self.factor.factorize(&self.pattern).map_err(|e| SolveError::Factorization {
                what: format!("Hessian H = A + J^T G J at Newton iteration {k}: {e}"),
            })?;
            for (d, g) in self.dv.iter_mut().zip(&self.eval.grad) {
                *d = -g;
            }
            self.factor.solve_in_place(&mut self.dv);
            self.ls.setup(prob, &self.eval, &self.dv);
            let r = self.ls.search(prob, &self.eval, s.alpha_max, s.ls_tolerance, s.ls_max_iterations, s.ls_start)?;
            if recorded {
                log.set(rows, "alpha", r.alpha);
                log.set(rows, "ls_iters", r.iterations as f64);
            }
            for (v, d) in self.v.iter_mut().zip(&self.dv) {
                *v += r.alpha * d;
            }
            self.stats.iterations += 1;
            self.stats.ls_iterations += r.iterations;
            self.stats.alpha.push(r.alpha);
            prev_cost = cost;
            prev_alpha = r.alpha;
        }
        Ok((self.v.clone(), status))
    }
}

/// Hands the iterate `(v, γ)` to the log, contacts and holonomic rows apart (only when it keeps
/// iterates: splitting allocates).
fn hand_over(log: &mut IterationLog, prob: &SapProblem, v: &[f64], gamma: &[[f64; 3]]) {
    if log.wants_iterates() {
        let (contacts, bilateral) = prob.split_impulses(gamma);
        log.iterate(v, contacts, &bilateral);
    }
}

impl Solver for Sap {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("invalid settings: {e}") })?;
        let prob = SapProblem::from_step(p, &self.settings, &mut self.elastic)?;
        let nv = prob.nv();
        // initial guess: the previous step's velocity (§IV; warm starts make SAP fast), else v*
        let warm =
            p.warm_start.map(|w| w.velocity.as_slice()).filter(|w| w.len() == nv && w.iter().all(|x| x.is_finite()));
        let guess: &[f64] = match (self.settings.warm_start, warm) {
            (true, Some(w)) => w,
            (true, None) => &prob.v0,
            (false, _) => &prob.v_star,
        };
        let (v, status) = if prob.constraints.is_empty() {
            // no contact: the minimiser of ½‖v − v*‖²_A is v* (Drake's early exit)
            self.stats = SapStats { criterion: Some(Criterion::Optimality), ..SapStats::default() };
            self.eval.resize(&prob);
            (prob.v_star.clone(), SolveStatus::Solved)
        } else {
            self.solve(&prob, guess, log)?
        };
        // Eq. 11–12: q+ = q0 + δt N(q0) (θ_vq v + (1 − θ_vq) v0); deformable DOFs take the
        // backward-Euler q+ = q0 + δt v (toolkit::implicit)
        let theta_vq = prob.theta.1;
        let mut v_vq: Vec<f64> =
            v.iter().zip(prob.v0.iter()).map(|(a, b)| theta_vq * a + (1.0 - theta_vq) * b).collect();
        if let Some(e) = &prob.elastic {
            v_vq[e.start..].copy_from_slice(&v[e.start..]);
        }
        let q = p.integrate(&v_vq);
        let (impulses, bilateral) = prob.split_impulses(&self.eval.gamma);
        Ok(StepSolution {
            v,
            q: Some(q),
            impulses: impulses.to_vec(),
            bilateral,
            iterations: self.stats.iterations,
            status,
        })
    }
}
