//! [`Staggered`]: Kaufman, Sueda, James & Pai's staggered projections on the Delassus form of a
//! step (`toolkit::cone_qp`: `u = W x + q`, `x = (λ_1, …, λ_nc, γ_1, …, γ_nb)`).
//!
//! One fixed-point iteration from the friction impulses `λ_t^k` (README §2–§3):
//!
//! ```text
//! normal projection:   (λ_n, γ)^{k+1} = argmin ½ yᵀ W_NN y + (q_N + W_NT λ_t^k)ᵀ y   over λ_n ≥ 0, γ free
//! friction projection: λ_t^{k+1}      = argmin ½ zᵀ W_TT z + (q_T + W_TN (λ_n, γ)^{k+1})ᵀ z
//!                                        over ‖z_i‖ ≤ μ_i λ_n,i^{k+1} for every contact i
//! stop when ‖x^{k+1} − x^k‖_∞ < tolerance · ‖x^{k+1}‖_∞ (the fixed point)
//! ```
//!
//! Each projection is a convex QP (the second with one disc per contact, a second-order cone of a
//! fixed radius) solved by clarabel (`toolkit::cone_program`). `N` collects the normal rows of the
//! contacts that act on something and the joint rows, `T` the tangential rows of the contacts with
//! a disc of positive radius (the others' friction is 0).

use super::settings::StaggeredSettings;
use api::{
    DelassusProblem, DelassusSolution, IterationLog, Settings, SolveError, SolveStatus, Solver, StepProblem,
    StepSolution,
};
use toolkit::cone_program::{worse, ClarabelSettings, Program, RowKind, Stats};
use toolkit::cone_qp::{ConeQp, Origin, Outcome, StepCcp};

/// Relative asymmetry of `W` above which a Delassus problem is refused: a projection is a QP
/// with the Hessian `W` (round-off of a condensed symmetric `W` is far below).
const ASYMMETRY_LIMIT: f64 = 1e-10;

/// Floor of the impulse scale in the fixed-point test (all-zero impulses are a fixed point).
const TINY: f64 = 1e-300;

/// What an infeasibility certificate of either projection means.
const INFEASIBLE_NOTE: &str =
    "both projections are feasible by construction (zero impulses satisfy them), so this is numerical";

/// The log column of the fixed-point test (written on each friction row).
pub const CHANGE_COLUMN: &str = "rel_change_linf";

/// Staggered projections (module doc; README).
#[derive(Debug)]
pub struct Staggered {
    settings: StaggeredSettings,
    /// The step's Delassus form and the way back to velocities.
    step: StepCcp,
}

impl Staggered {
    /// A solver with the given settings.
    pub fn new(settings: StaggeredSettings) -> Self {
        Self { settings, step: StepCcp::default() }
    }

    fn validated(&self) -> Result<StaggeredSettings, SolveError> {
        self.settings.validate().map_err(|e| SolveError::Unsupported { what: format!("staggered settings: {e}") })?;
        Ok(self.settings.clone())
    }
}

/// Which of the two problems a projection solves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Projection {
    /// Non-penetration (and the joint rows) with the friction impulses fixed.
    Normal,
    /// Maximal dissipation in the discs `‖λ_t,i‖ ≤ μ_i λ_n,i` with the normal impulses fixed.
    Friction,
}

impl Projection {
    fn name(self) -> &'static str {
        match self {
            Projection::Normal => "normal projection",
            Projection::Friction => "friction projection",
        }
    }
}

/// The QP in the unknowns `vars` (indices into `x`) with every other unknown fixed at its value in
/// `x`: `min ½ yᵀ W_vv y + (u_v − W_vv x_v)ᵀ y`, `u = W x + q` (so the linear term is `q_v` plus
/// what the fixed unknowns contribute). The Hessian is the symmetric part of `W_vv`.
fn restricted(qp: &ConeQp, x: &[f64], vars: &[usize], u: &mut Vec<f64>) -> Program {
    qp.velocity(x, u);
    let mut prog = Program::new(vars.len()).with_infeasible_note(INFEASIBLE_NOTE);
    for (j, &r) in vars.iter().enumerate() {
        let row = qp.row(r);
        prog.q[j] = u[r] - vars.iter().map(|&c| row[c] * x[c]).sum::<f64>();
        prog.p_add(j, j, row[r]);
        for (l, &c) in vars.iter().enumerate().skip(j + 1) {
            prog.p_add(j, l, 0.5 * (row[c] + qp.row(c)[r]));
        }
    }
    prog
}

/// Solves one projection in place on `x`; returns clarabel's status.
fn project(
    which: Projection,
    qp: &ConeQp,
    x: &mut [f64],
    normal: &[usize],
    clarabel: &ClarabelSettings,
    stats: &mut Vec<Stats>,
    scratch: &mut (Vec<usize>, Vec<f64>),
) -> Result<SolveStatus, SolveError> {
    let (vars, u) = scratch;
    vars.clear();
    match which {
        Projection::Normal => vars.extend_from_slice(normal),
        Projection::Friction => {
            for i in 0..qp.nc {
                // the disc of radius μ_i λ_n,i; a contact without one (open, frictionless or
                // inert) has no friction impulse
                let radius = qp.mu[i] * x[3 * i];
                if radius > 0.0 && normal.binary_search(&(3 * i)).is_ok() {
                    vars.extend([3 * i + 1, 3 * i + 2]);
                } else {
                    x[3 * i + 1] = 0.0;
                    x[3 * i + 2] = 0.0;
                }
            }
        }
    }
    if vars.is_empty() {
        return Ok(SolveStatus::Solved);
    }
    let mut prog = restricted(qp, x, vars, u);
    match which {
        Projection::Normal => {
            for (j, &r) in vars.iter().enumerate() {
                if r < 3 * qp.nc {
                    prog.row(RowKind::Nonneg, vec![(j, 1.0)], 0.0);
                }
            }
        }
        Projection::Friction => {
            for j in (0..vars.len()).step_by(2) {
                let i = vars[j] / 3;
                prog.disc(j, j + 1, qp.mu[i] * x[3 * i]);
            }
        }
    }
    let sol = prog.solve(clarabel, stats, which.name())?;
    for (&r, &y) in vars.iter().zip(&sol.x) {
        x[r] = y;
    }
    if which == Projection::Normal {
        // the interior point's normal impulses are positive to its tolerance; the disc radius
        // takes the nonnegative part
        for &r in vars.iter().filter(|&&r| r < 3 * qp.nc) {
            x[r] = x[r].max(0.0);
        }
    }
    Ok(sol.status)
}

/// The staggered projections (module doc) from `x`, which becomes the last iterate.
fn staggered(s: &StaggeredSettings, qp: &ConeQp, origin: Origin<'_>, x: &mut [f64], log: &mut IterationLog) -> Outcome {
    let n = qp.n();
    if n == 0 {
        return Ok((0, SolveStatus::Solved));
    }
    // the normal projection's unknowns: the normal rows of contacts that act on something, and
    // the joint rows (sorted: the friction projection looks contacts up in it)
    let mut normal = Vec::with_capacity(qp.nc + qp.nb);
    for i in 0..qp.nc {
        if qp.row(3 * i)[3 * i] > 0.0 {
            normal.push(3 * i);
        } else {
            x[3 * i..3 * i + 3].fill(0.0);
        }
    }
    normal.extend(3 * qp.nc..n);
    let clarabel = s.clarabel();
    let mut stats = Vec::with_capacity(2);
    let mut scratch = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut prev = x.to_vec();
    let mut v = vec![];
    for k in 1..=s.max_iterations {
        let mut qp_status = SolveStatus::Solved;
        for which in [Projection::Normal, Projection::Friction] {
            stats.clear();
            let status = project(which, qp, x, &normal, &clarabel, &mut stats, &mut scratch)?;
            qp_status = worse(qp_status, status);
            if let Some(i) = x.iter().position(|a| !a.is_finite()) {
                return Err(SolveError::NonFinite {
                    what: format!("unknown {i} after the {} of iteration {k}", which.name()),
                });
            }
            let (ipm, r_prim, r_dual) =
                stats.first().map_or((0.0, 0.0, 0.0), |st| (st.iterations as f64, st.r_prim, st.r_dual));
            let mut row = vec![
                ("projection", if which == Projection::Normal { 0.0 } else { 1.0 }),
                ("ipm_iterations", ipm),
                ("r_prim", r_prim),
                ("r_dual", r_dual),
            ];
            let change = if which == Projection::Friction {
                let diff = x.iter().zip(&prev).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
                let size = x.iter().fold(0.0f64, |m, a| m.max(a.abs()));
                let c = diff / size.max(TINY);
                row.push((CHANGE_COLUMN, c));
                Some(c)
            } else {
                None
            };
            log.record(&row);
            origin.hand_over(x, log, &mut v);
            if log.should_stop() {
                return Ok((k, log.stop_status()));
            }
            if change.is_some_and(|c| c < s.tolerance) {
                return Ok((k, worse(SolveStatus::Solved, qp_status)));
            }
        }
        prev.copy_from_slice(x);
    }
    Ok((s.max_iterations, SolveStatus::MaxIterations))
}

impl Solver for Staggered {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let s = self.validated()?;
        toolkit::cone_qp::solve_step(&mut self.step, p, s.warm_start, log, |qp, origin, x, log| {
            staggered(&s, qp, origin, x, log)
        })
    }

    fn solve_delassus(&mut self, p: &DelassusProblem, log: &mut IterationLog) -> Result<DelassusSolution, SolveError> {
        let s = self.validated()?;
        let asymmetry = p.asymmetry();
        if asymmetry > ASYMMETRY_LIMIT {
            return Err(SolveError::Unsupported {
                what: format!(
                    "a non-symmetric W (relative asymmetry {asymmetry:.3e}): each projection is a QP with Hessian W"
                ),
            });
        }
        toolkit::cone_qp::solve_delassus(p, log, |qp, origin, x, log| staggered(&s, qp, origin, x, log))
    }
}
