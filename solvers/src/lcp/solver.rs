//! [`LcpLemke`] and [`LcpPgs`]: the pyramid LCP of [`super::core::Core`] solved by Lemke's method
//! or by block projected Gauss–Seidel, on step problems and on problems in Delassus form.

use super::core::Core;
use super::pyramid::SweepScratch;
use super::settings::{LcpPgsSettings, LemkeSettings};
use api::{
    DelassusProblem, DelassusSolution, IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem,
    StepSolution,
};
use kernels::lcp::{Lemke, Pivot};

/// The log column of the LCP's own residual, `max |min(z, M z + q)|` (the answered model's
/// residual, beside the harness's rigid natural map).
pub const LCP_RESIDUAL: &str = "lcp_minmap_abs_linf";

/// The pyramid LCP solved by Lemke's method (README).
#[derive(Debug)]
pub struct LcpLemke {
    settings: LemkeSettings,
    core: Core,
    lemke: Lemke,
    m: Vec<f64>,
    cover: Vec<f64>,
}

impl LcpLemke {
    /// A solver with the given settings.
    pub fn new(settings: LemkeSettings) -> Self {
        Self { settings, core: Core::default(), lemke: Lemke::default(), m: vec![], cover: vec![] }
    }

    /// Pivots to the end on the LCP of `self.core`; `step` says whether velocities are formed
    /// for the iterates handed to the log. Returns the pivots taken and the status.
    fn solve(&mut self, log: &mut IterationLog, step: bool) -> Result<(usize, SolveStatus), SolveError> {
        self.core.lcp.dense(&mut self.m);
        let (mut state, mut pivots) = (Pivot::Ray, 0);
        let mut status = SolveStatus::MaxIterations;
        // the two covering vectors, the σ rows' 0 first (README "Choices"); the second only
        // after a secondary ray of the first
        for sigma in [0.0, 1.0] {
            self.core.lcp.covering(sigma, &mut self.cover);
            state = self.lemke.start_covering(&self.m, self.core.lcp.q(), &self.cover);
            pivots += usize::from(state == Pivot::Continue);
            while state == Pivot::Continue {
                log.record(&[("artificial_z0", self.lemke.z0())]);
                if log.wants_iterates() {
                    self.lemke.z(&mut self.core.z);
                    self.core.update_impulses(step);
                    log.iterate(&self.core.v, &self.core.lambda, &[]);
                }
                if log.should_stop() {
                    status = log.stop_status();
                    break;
                }
                if pivots >= self.settings.max_pivots {
                    break;
                }
                state = self.lemke.pivot();
                pivots += 1;
            }
            if state != Pivot::Ray {
                break;
            }
        }
        self.lemke.z(&mut self.core.z);
        let res = self.core.lcp.min_map_linf(&self.core.z);
        let scale = self.core.lcp.q().iter().fold(1.0f64, |m, x| m.max(x.abs()));
        if state == Pivot::Ray {
            // With a covering vector > 0 and this copositive M, a secondary ray leaves from a basis
            // whose z0 is 0 in exact arithmetic, i.e. from a solution (README, "Secondary rays"):
            // in floating point z0 stays a rounding residue there; the basic solution is taken
            // when it solves the LCP to the tolerance.
            if res > self.settings.tolerance * scale {
                return Err(SolveError::Infeasible {
                    what: format!(
                        "Lemke's method ended on a secondary ray after {pivots} pivots with z0 = {:.1e} and the \
                         basic solution's min map {res:.1e} (no LCP solution found: digits lost; README)",
                        self.lemke.z0()
                    ),
                });
            }
            state = Pivot::Solved;
        }
        self.core.check_finite(&format!("after {pivots} pivots"))?;
        self.core.update_impulses(step);
        if state == Pivot::Solved {
            status =
                if res <= self.settings.tolerance * scale { SolveStatus::Solved } else { SolveStatus::AlmostSolved };
        }
        log.record(&[("artificial_z0", self.lemke.z0()), (LCP_RESIDUAL, res)]);
        log.iterate(&self.core.v, &self.core.lambda, &[]);
        Ok((pivots, status))
    }
}

impl Solver for LcpLemke {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("lcp_lemke settings: {e}") })?;
        self.core.setup_step(p, self.settings.facets)?;
        let (iterations, status) = self.solve(log, true)?;
        Ok(self.core.step_solution(iterations, status))
    }

    fn solve_delassus(&mut self, p: &DelassusProblem, log: &mut IterationLog) -> Result<DelassusSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("lcp_lemke settings: {e}") })?;
        self.core.setup_delassus(p, self.settings.facets)?;
        let (iterations, status) = self.solve(log, false)?;
        Ok(DelassusSolution { impulses: self.core.lambda.clone(), iterations, status })
    }
}

/// The pyramid LCP solved by block projected Gauss–Seidel (README).
#[derive(Debug)]
pub struct LcpPgs {
    settings: LcpPgsSettings,
    core: Core,
    scratch: SweepScratch,
}

impl LcpPgs {
    /// A solver with the given settings.
    pub fn new(settings: LcpPgsSettings) -> Self {
        Self { settings, core: Core::default(), scratch: SweepScratch::default() }
    }

    /// Sweeps on the LCP of `self.core` from its current `z` until the relative change is below
    /// `tolerance` or the budget is spent; `step` as [`LcpLemke::solve`].
    fn solve(&mut self, log: &mut IterationLog, step: bool) -> Result<(usize, SolveStatus), SolveError> {
        let mut status = SolveStatus::MaxIterations;
        let mut iterations = 0;
        if self.core.active.is_empty() {
            return Ok((0, SolveStatus::Solved));
        }
        for k in 1..=self.settings.max_iterations {
            let Some((change, size)) = self.core.lcp.sweep(&mut self.core.z, &mut self.scratch) else {
                return Err(SolveError::Infeasible {
                    what: format!("a contact's pyramid LCP has no solution at sweep {k} (Lemke ray)"),
                });
            };
            self.core.check_finite(&format!("at sweep {k}"))?;
            self.core.update_impulses(step);
            let rel_change = change / size.max(f64::MIN_POSITIVE);
            log.record(&[("rel_change_linf", rel_change), (LCP_RESIDUAL, self.core.lcp.min_map_linf(&self.core.z))]);
            log.iterate(&self.core.v, &self.core.lambda, &[]);
            iterations = k;
            if log.should_stop() {
                status = log.stop_status();
                break;
            }
            if rel_change < self.settings.tolerance {
                status = SolveStatus::Solved;
                break;
            }
        }
        Ok((iterations, status))
    }
}

impl Solver for LcpPgs {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("lcp_pgs settings: {e}") })?;
        self.core.setup_step(p, self.settings.facets)?;
        if self.settings.warm_start {
            for a in 0..self.core.active.len() {
                if let Some(l) = p.warm_impulse(self.core.active[a]).filter(|l| l.iter().all(|x| x.is_finite())) {
                    self.core.lcp.warm(a, l, &mut self.core.z);
                }
            }
        }
        let (iterations, status) = self.solve(log, true)?;
        Ok(self.core.step_solution(iterations, status))
    }

    fn solve_delassus(&mut self, p: &DelassusProblem, log: &mut IterationLog) -> Result<DelassusSolution, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("lcp_pgs settings: {e}") })?;
        self.core.setup_delassus(p, self.settings.facets)?;
        let (iterations, status) = self.solve(log, false)?;
        Ok(DelassusSolution { impulses: self.core.lambda.clone(), iterations, status })
    }
}
