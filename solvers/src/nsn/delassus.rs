//! nsn on a problem in Delassus form `u = W r + q` (FCLIB's local problems), `W` as given,
//! non-symmetric included (README "Delassus form").
//!
//! With no positions and no masses, Macklin's Schur-complement system (Eq. 59) at `h = 1` has
//! `J H⁻¹ Jᵀ = W` itself, and the unknowns are the impulses `r`. The Newton system of one iterate
//! is, contact by contact, `P_i ((W + ε I) Δr)_i + C_i Δr_i = b_i`: `P_i` selects (and scales by
//! `α`, or rotates into the friction frame `(z, ⊥)`) the rows of `W` that carry a velocity term,
//! `C_i` holds the rows' compliances, from the same NCP rows as the step (normal row
//! [`normal_row`], friction rows [`friction_rows`] in projection form). `W` is not symmetric in
//! general, so the system is solved by a sparse LU ([`kernels::sparse_lu`]) whose symbolic analysis
//! serves every Newton iteration (the pattern is `W`'s block pattern with full 3×3 blocks) and
//! every later solve of a problem with the same pattern. `ε` is `epsilon` times the mean diagonal
//! of `W`. The step is globalised by a non-monotone Armijo backtracking line search on
//! `Ψ = ½‖Φ‖²` (reference: the largest of the last [`MEMORY`] merits), a watchdog that returns to
//! the lowest-merit iterate after [`WATCHDOG`] iterations without a new one, and projected
//! Gauss–Seidel sweeps on `W` (`toolkit::delassus`) when the line search fails. The iteration
//! stops when the natural-map error normalised as Siconos's `fc3d_compute_error` is at most
//! `tolerance`.

use super::ncp::{friction_rows, normal_row, FrictionRows, Ncp};
use super::settings::{NsnSettings, RMode};
use api::{Block3, DelassusProblem, DelassusSolution, IterationLog, SolveError, SolveStatus};
use kernels::contact_local::{natmap, Local, LocalProblem};
use kernels::sparse_lu::{LuParams, SparseLu};

/// Sufficient-decrease constant `σ` of the Armijo test on the merit `Ψ = ½‖Φ‖²`,
/// `Ψ(r + t Δr) ≤ Ψ_ref − 2σtΨ(r)` (`Ψ'(0) = −‖Φ‖² = −2Ψ` along a Newton direction; `Ψ_ref` the
/// largest of the last [`MEMORY`] merits). The usual small value (Nocedal & Wright §3.1).
const ARMIJO_SIGMA: f64 = 1e-4;

/// Halvings of the step before the line search gives up (`t ≥ 2⁻²⁰ ≈ 1e-6`).
const MAX_BACKTRACKS: usize = 20;

/// Merits the non-monotone line search compares with (Grippo, Lampariello & Lucidi 1986: the
/// largest of the last `MEMORY`). 8 chosen on the FCLIB set (README "Delassus form", where 5 and
/// the monotone search each leave one file unsolved).
const MEMORY: usize = 8;

/// Newton iterations without a new lowest merit after which the watchdog returns to the
/// iterate of the lowest merit (README "Delassus form").
const WATCHDOG: usize = 10;

/// Most Gauss–Seidel sweeps of one fallback.
const MAX_FALLBACK_SWEEPS: usize = 16;

/// How contact `i`'s friction rows are formed at an iterate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
enum FrictionMode {
    /// `μ r_n ≤ 0`: the rows `Δr_t = −r_t` (the projection onto a disk of radius 0).
    #[default]
    Inactive,
    /// `|r_t − u_t/r_f| ≤ μ r_n`: the rows `(W Δr)_t = −u_t`.
    Stick,
    /// Outside: a magnitude row and a perpendicular row ([`FrictionRows::Projected`]).
    Slip,
}

/// One contact's rows of the Newton system `P (W Δr)_i + C Δr_i = b` (module doc) and its part
/// `Φ_i` of the merit residual.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct ContactRows {
    p: Block3,
    c: Block3,
    b: [f64; 3],
    phi: [f64; 3],
    friction: FrictionMode,
}

/// The per-contact scales of the NCP functions (Eq. 66 at `h = 1`) and the NCP function.
struct Scales<'a> {
    ncp: Ncp,
    rho_n: &'a [f64],
    r_f: &'a [f64],
}

/// The rows of contact `i` at impulses `r` and velocity `u = (W r + q)_i`:
///
/// - normal: `Φ_n = φ(u_n, ρ_n r_n)` ([`normal_row`], FB or min map), row `α (W Δr)_n + S Δr_n = −Φ_n`;
/// - friction, with the bound `μ r_n` and `ρ = 1/r_f` ([`friction_rows`], projection form):
///   `Φ_t = r_f (r_t − proj_{|·| ≤ μ r_n⁺}(r_t − ρ u_t))`, the Alart–Curnier friction residual in
///   velocity units, and its generalized Jacobian: stick `(W Δr)_t = −u_t`; slip, in the frame
///   `(z, ⊥)` of `r_t − ρ u_t`, the magnitude row `Δr_z − μ Δr_n = −(r_z − μ r_n)` (the bound
///   is differentiated, where the step freezes it) and the perpendicular row
///   `(W Δr)_⊥ + W_⊥ Δr_⊥ = −r_⊥/(κρ)`; inactive (`μ r_n ≤ 0`) `Δr_t = −r_t`.
#[allow(clippy::needless_range_loop)] // rows 1 and 2 of several 3-arrays at once
fn contact_rows(sc: &Scales<'_>, mu: f64, i: usize, r: [f64; 3], u: [f64; 3]) -> ContactRows {
    let mut out = ContactRows::default();
    let nr = normal_row(sc.ncp, u[0], r[0], sc.rho_n[i]);
    out.p[0][0] = nr.alpha;
    out.c[0][0] = nr.s;
    out.phi[0] = nr.phi;
    out.b[0] = -nr.phi;
    let (rf, bound) = (sc.r_f[i], mu * r[0]);
    let rt = [r[1], r[2]];
    if bound <= 0.0 {
        out.friction = FrictionMode::Inactive;
        for t in 1..3 {
            out.c[t][t] = 1.0;
            out.b[t] = -r[t];
            out.phi[t] = rf * r[t];
        }
        return out;
    }
    match friction_rows(false, [u[1], u[2]], rt, bound, rf) {
        FrictionRows::Projected { z, p, w_perp, kappa_rho } => {
            out.friction = FrictionMode::Slip;
            let rz = z[0] * rt[0] + z[1] * rt[1];
            let rp = p[0] * rt[0] + p[1] * rt[1];
            out.c[1] = [-mu, z[0], z[1]];
            out.b[1] = -(rz - bound);
            out.p[2] = [0.0, p[0], p[1]];
            out.c[2] = [0.0, w_perp * p[0], w_perp * p[1]];
            out.b[2] = -rp / kappa_rho;
            out.phi[1] = rf * (rt[0] - bound * z[0]);
            out.phi[2] = rf * (rt[1] - bound * z[1]);
        }
        // Stick (and the fixed-point rows, never asked for here)
        _ => {
            out.friction = FrictionMode::Stick;
            for t in 1..3 {
                out.p[t][t] = 1.0;
                out.b[t] = -u[t];
                out.phi[t] = u[t];
            }
        }
    }
    out
}

/// `Σ_i |Φ_i|²` at `(r, u)` (twice the merit `Ψ`).
fn merit2(sc: &Scales<'_>, mu: &[f64], r: &[[f64; 3]], u: &[[f64; 3]]) -> f64 {
    (0..mu.len()).map(|i| contact_rows(sc, mu[i], i, r[i], u[i]).phi.iter().map(|x| x * x).sum::<f64>()).sum()
}

/// The natural-map residual of `(r, u)`: `(‖F‖₂, ‖F‖₂ / max(‖q‖, ‖r‖, ‖u‖))` with
/// `F_i = r_i − P_K(r_i − u_i − μ_i ‖u_T,i‖ e_n)`, the normalisation of Siconos's
/// `fc3d_compute_error` (issue 36; `‖F‖` itself when all three norms vanish).
fn natmap_errors(mu: &[f64], q_norm: f64, r: &[[f64; 3]], u: &[[f64; 3]]) -> (f64, f64) {
    let (mut f2, mut r2, mut u2) = (0.0, 0.0, 0.0);
    for i in 0..mu.len() {
        f2 += natmap(r[i], u[i], mu[i]).iter().map(|x| x * x).sum::<f64>();
        r2 += r[i].iter().map(|x| x * x).sum::<f64>();
        u2 += u[i].iter().map(|x| x * x).sum::<f64>();
    }
    let f = f2.sqrt();
    let scale = q_norm.max(r2.sqrt()).max(u2.sqrt());
    (f, if scale > f64::EPSILON { f / scale } else { f })
}

/// The CSC pattern of the Newton matrix: `W`'s block pattern with full 3×3 blocks, and the
/// position of entry `(a, b)` of stored block `k` (`W`'s storage order) in it.
struct Pattern {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// `slot[9 k + 3 a + b]`.
    slot: Vec<usize>,
}

impl Pattern {
    fn of(p: &DelassusProblem) -> Self {
        let nc = p.nc();
        // block columns: (block row i, stored block k), i increasing
        let mut cols: Vec<Vec<(usize, usize)>> = vec![vec![]; nc];
        let mut k = 0;
        for i in 0..nc {
            for (j, _) in p.row(i) {
                cols[j].push((i, k));
                k += 1;
            }
        }
        let mut col_ptr = Vec::with_capacity(3 * nc + 1);
        let mut row_idx = Vec::with_capacity(9 * k);
        let mut slot = vec![0; 9 * k];
        col_ptr.push(0);
        for col in &cols {
            for b in 0..3 {
                for &(i, kk) in col {
                    for a in 0..3 {
                        slot[9 * kk + 3 * a + b] = row_idx.len();
                        row_idx.push(3 * i + a);
                    }
                }
                col_ptr.push(row_idx.len());
            }
        }
        Self { col_ptr, row_idx, slot }
    }
}

/// Work memory of the Delassus path, kept by the solver across calls: the LU (its symbolic
/// analysis is reused while `W`'s pattern is the same) and the iteration's vectors, so that the
/// Newton loop allocates nothing.
#[derive(Debug, Default)]
pub(super) struct DelassusWork {
    lu: Option<SparseLu>,
    values: Vec<f64>,
    rho_n: Vec<f64>,
    r_f: Vec<f64>,
    rows: Vec<ContactRows>,
    locals: Vec<LocalProblem>,
    r: Vec<[f64; 3]>,
    u: Vec<[f64; 3]>,
    r_try: Vec<[f64; 3]>,
    u_try: Vec<[f64; 3]>,
    best: Vec<[f64; 3]>,
    anchor: Vec<[f64; 3]>,
    dr: Vec<f64>,
    wdr: Vec<f64>,
    wr: Vec<f64>,
}

/// `u = W r + q` into `u`, through the flat scratch `wr`.
fn velocities(p: &DelassusProblem, r: &[[f64; 3]], wr: &mut Vec<f64>, u: &mut [[f64; 3]]) {
    p.mul(r.as_flattened(), wr);
    for (ui, (w, q)) in u.as_flattened_mut().iter_mut().zip(wr.iter().zip(p.q())) {
        *ui = w + q;
    }
}

/// `P W_ij` for a block `W_ij` (the velocity part of the Newton matrix's block).
fn times(pm: &Block3, w: &Block3) -> Block3 {
    let mut out = [[0.0; 3]; 3];
    for a in 0..3 {
        for b in 0..3 {
            out[a][b] = pm[a][0] * w[0][b] + pm[a][1] * w[1][b] + pm[a][2] * w[2][b];
        }
    }
    out
}

/// The mean of the positive, finite diagonal entries of `W` (1 if there are none): the scale of
/// the shift `ε` and of a contact whose own diagonal is not positive.
fn mean_diagonal(p: &DelassusProblem) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for i in 0..p.nc() {
        for a in 0..3 {
            let d = p.diagonal(i)[a][a];
            if d.is_finite() && d > 0.0 {
                sum += d;
                count += 1;
            }
        }
    }
    if count > 0 {
        sum / count as f64
    } else {
        1.0
    }
}

/// The NCP scales of Eq. 66 at `h = 1` (`effective_mass`: `ρ_n = W_nn`, `r_f` the mean of the two
/// tangential diagonal entries of `W_ii`; `one` and `h2`: 1). A non-positive or non-finite
/// entry gets `w_bar`, the mean diagonal.
fn scales(p: &DelassusProblem, mode: RMode, w_bar: f64, rho_n: &mut Vec<f64>, r_f: &mut Vec<f64>) {
    rho_n.clear();
    r_f.clear();
    for i in 0..p.nc() {
        if mode != RMode::EffectiveMass {
            rho_n.push(1.0);
            r_f.push(1.0);
            continue;
        }
        let d = p.diagonal(i);
        let pick = |x: f64| if x.is_finite() && x > 0.0 { x } else { w_bar };
        rho_n.push(pick(d[0][0]));
        r_f.push(pick(0.5 * (d[1][1] + d[2][2])));
    }
}

/// The last [`MEMORY`] merits, the reference of the non-monotone line search.
#[derive(Debug, Clone, Copy, Default)]
struct MeritHistory {
    values: [f64; MEMORY],
    len: usize,
    next: usize,
}

impl MeritHistory {
    fn push(&mut self, m: f64) {
        self.values[self.next] = m;
        self.next = (self.next + 1) % MEMORY;
        self.len = (self.len + 1).min(MEMORY);
    }

    fn clear(&mut self) {
        self.len = 0;
        self.next = 0;
    }

    /// The largest stored merit (`-∞` when empty).
    fn max(&self) -> f64 {
        self.values[..self.len].iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
}

/// The rows of every contact at `(r, u)` into `rows`: `(Σ|Φ_i|², sticking, sliding)`.
fn all_rows(
    sc: &Scales<'_>,
    mu: &[f64],
    r: &[[f64; 3]],
    u: &[[f64; 3]],
    rows: &mut [ContactRows],
) -> (f64, usize, usize) {
    let (mut m2, mut stick, mut slip) = (0.0, 0, 0);
    for (i, row) in rows.iter_mut().enumerate() {
        *row = contact_rows(sc, mu[i], i, r[i], u[i]);
        m2 += row.phi.iter().map(|x| x * x).sum::<f64>();
        match row.friction {
            FrictionMode::Stick => stick += 1,
            FrictionMode::Slip => slip += 1,
            FrictionMode::Inactive => {}
        }
    }
    (m2, stick, slip)
}

/// The Newton matrix `P (W + ε I) + C` in `W`'s block pattern into `values`, and `b` into `rhs`.
#[allow(clippy::needless_range_loop)] // 3×3 block arithmetic over three arrays
fn assemble(p: &DelassusProblem, pat: &Pattern, rows: &[ContactRows], shift: f64, values: &mut [f64], rhs: &mut [f64]) {
    let mut k = 0;
    for (i, ri) in rows.iter().enumerate() {
        for (j, wb) in p.row(i) {
            let mut blk = times(&ri.p, wb);
            if j == i {
                for a in 0..3 {
                    for b in 0..3 {
                        blk[a][b] += ri.c[a][b] + shift * ri.p[a][b];
                    }
                }
            }
            for (a, row) in blk.iter().enumerate() {
                for (b, x) in row.iter().enumerate() {
                    values[pat.slot[9 * k + 3 * a + b]] = *x;
                }
            }
            k += 1;
        }
        rhs[3 * i..3 * i + 3].copy_from_slice(&ri.b);
    }
}

/// The solve (module doc, README "Delassus form"): Newton directions from the sparse LU, the
/// non-monotone Armijo line search, the watchdog and the fallback sweeps; stops when the
/// normalised natural-map error is at most `tolerance`.
pub(super) fn solve(
    s: &NsnSettings,
    w: &mut DelassusWork,
    p: &DelassusProblem,
    log: &mut IterationLog,
) -> Result<DelassusSolution, SolveError> {
    let nc = p.nc();
    if nc == 0 {
        log.record(&[("natmap_abs_l2", 0.0), ("natmap_rel", 0.0)]);
        return Ok(DelassusSolution { impulses: vec![], iterations: 0, status: SolveStatus::Solved });
    }
    let n = 3 * nc;
    let mu = p.mu();
    let q_norm = p.q().iter().map(|x| x * x).sum::<f64>().sqrt();
    let w_bar = mean_diagonal(p);
    // the shift ε relative to W's scale (README "Delassus form")
    let shift = s.epsilon * w_bar;
    scales(p, s.r_mode, w_bar, &mut w.rho_n, &mut w.r_f);
    // the symbolic analysis: once per pattern of W (kept across calls)
    let pat = Pattern::of(p);
    if !w.lu.as_ref().is_some_and(|lu| lu.has_pattern(&pat.col_ptr, &pat.row_idx)) {
        w.lu = Some(
            SparseLu::analyze(n, pat.col_ptr.clone(), pat.row_idx.clone(), LuParams::default())
                .map_err(|e| SolveError::Factorization { what: format!("Newton matrix (pattern of W): {e}") })?,
        );
    }
    w.values.clear();
    w.values.resize(pat.row_idx.len(), 0.0);
    for v in [&mut w.r, &mut w.u, &mut w.r_try, &mut w.u_try, &mut w.best, &mut w.anchor] {
        v.clear();
        v.resize(nc, [0.0; 3]);
    }
    w.rows.clear();
    w.rows.resize(nc, ContactRows::default());
    w.locals.clear();
    w.locals.extend((0..nc).map(|i| toolkit::delassus::local_problem(p, i)));
    w.dr.clear();
    w.dr.resize(n, 0.0);
    velocities(p, &w.r, &mut w.wr, &mut w.u);
    let DelassusWork { lu, values, rho_n, r_f, rows, locals, r, u, r_try, u_try, best, anchor, dr, wdr, wr } = w;
    let lu = lu.as_mut().expect("analysed above");
    let sc = Scales { ncp: s.ncp, rho_n, r_f };
    let mut history = MeritHistory::default();
    // the lowest natural-map error (returned unless solved) and the lowest merit (the watchdog's anchor)
    let mut best_err = f64::INFINITY;
    let (mut anchor_m2, mut since_anchor, mut returns) = (f64::INFINITY, 0usize, 0usize);
    let mut restarts = 0usize;
    let mut status = SolveStatus::MaxIterations;
    let mut iterations = 0;
    for k in 0..=s.max_newton_iterations {
        // 1. rows, merit and natural-map error of the iterate
        let (mut m2, n_stick, n_slip) = all_rows(&sc, mu, r, u, rows);
        let (nat_abs, nat_rel) = natmap_errors(mu, q_norm, r, u);
        let finite = m2.is_finite() && nat_rel.is_finite();
        if finite && nat_rel < best_err {
            best_err = nat_rel;
            best.copy_from_slice(r);
        }
        let row = [
            ("merit_l2", m2.sqrt()),
            ("natmap_abs_l2", nat_abs),
            ("natmap_rel", nat_rel),
            ("n_stick", n_stick as f64),
            ("n_slip", n_slip as f64),
        ];
        // the harness's stopping rule (equal accuracy) measures this iterate
        log.iterate(&[], r, &[]);
        let done = if !finite {
            status = SolveStatus::InsufficientProgress;
            true
        } else if log.accuracy_reached() {
            status = SolveStatus::Stopped;
            true
        } else if s.tolerance > 0.0 && nat_rel <= s.tolerance {
            status = SolveStatus::Solved;
            true
        } else {
            k == s.max_newton_iterations
        };
        if done {
            log.record(&row);
            break;
        }
        // 2. the watchdog: a new lowest merit becomes the anchor; after WATCHDOG iterations without
        //    one the iteration returns to the anchor and the history restarts there (monotone step)
        if m2 < anchor_m2 {
            (anchor_m2, since_anchor, returns) = (m2, 0, 0);
            anchor.copy_from_slice(r);
        } else {
            since_anchor += 1;
            if since_anchor >= WATCHDOG {
                r.copy_from_slice(anchor);
                velocities(p, r, wr, u);
                m2 = all_rows(&sc, mu, r, u, rows).0;
                history.clear();
                (since_anchor, returns, restarts) = (0, returns + 1, restarts + 1);
            }
        }
        history.push(m2);
        // 3. the direction by the sparse LU (symbolic part reused)
        assemble(p, &pat, rows, shift, values, dr);
        let direction_ok = lu.factorize(values).is_ok() && {
            lu.solve_in_place(dr);
            dr.iter().all(|x| x.is_finite())
        };
        // 4. non-monotone Armijo backtracking on Ψ = ½‖Φ‖²: Ψ(t) ≤ max(last MEMORY Ψ) − 2σtΨ
        let (mut t, mut accepted, mut trials) = (1.0, false, 0);
        if direction_ok {
            p.mul(dr, wdr);
            let reference = history.max();
            for _ in 0..=MAX_BACKTRACKS {
                trials += 1;
                for i in 0..nc {
                    for a in 0..3 {
                        r_try[i][a] = r[i][a] + t * dr[3 * i + a];
                        u_try[i][a] = u[i][a] + t * wdr[3 * i + a];
                    }
                }
                if merit2(&sc, mu, r_try, u_try) <= reference - 2.0 * ARMIJO_SIGMA * t * m2 {
                    accepted = true;
                    break;
                }
                t *= 0.5;
            }
        }
        // 5. the step, or the fallback: projected Gauss–Seidel sweeps on W, one more for every
        //    return to the same anchor (so that a return cannot repeat the same cycle)
        let fallback = if accepted { 0 } else { (1 + returns).min(MAX_FALLBACK_SWEEPS) };
        if accepted {
            r.copy_from_slice(r_try);
        } else {
            t = 0.0;
            for _ in 0..fallback {
                for (i, l) in locals.iter().enumerate() {
                    if !l.is_inert() {
                        r[i] = toolkit::delassus::gauss_seidel_update(p, l, Local::Split, 1.0, i, r);
                    }
                }
            }
        }
        velocities(p, r, wr, u);
        log.record(&[
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            ("step_length", t),
            ("line_search_trials", trials as f64),
            ("fallback_sweeps", fallback as f64),
            ("watchdog_returns", restarts as f64),
        ]);
        iterations = k + 1;
        if log.past_deadline() {
            status = SolveStatus::TimeLimit;
            break;
        }
    }
    let impulses = if matches!(status, SolveStatus::Solved | SolveStatus::Stopped) { r.clone() } else { best.clone() };
    Ok(DelassusSolution { impulses, iterations, status })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A non-symmetric 3×3 `W` of one contact.
    const W: Block3 = [[1.0, 0.1, 0.05], [0.12, 0.8, 0.02], [0.03, 0.01, 0.9]];

    fn mul(w: &Block3, x: [f64; 3]) -> [f64; 3] {
        [0, 1, 2].map(|a| w[a][0] * x[0] + w[a][1] * x[1] + w[a][2] * x[2])
    }

    /// The rows are the generalized Jacobian of `Φ` in every branch: with `Δr` solving the
    /// contact's Newton system `(P W + C) Δr = b`, `Φ(r + h Δr) = (1 − h) Φ(r) + O(h²)` (the
    /// Newton direction's defining property, `J_Φ Δr = −Φ`), checked to 0.1 % of the slope.
    #[test]
    fn the_rows_are_the_derivative_of_the_merit_residual_in_every_branch() {
        let (rho_n, r_f) = ([W[0][0]], [0.5 * (W[1][1] + W[2][2])]);
        let cases = [
            // (r, u, friction mode)
            ([-0.2, 0.1, 0.05], [0.3, 0.1, -0.2], FrictionMode::Inactive),
            ([1.0, 0.1, 0.0], [0.01, 0.02, -0.01], FrictionMode::Stick),
            ([1.0, 0.6, 0.1], [0.02, -0.3, 0.1], FrictionMode::Slip),
            ([0.4, 0.3, -0.1], [-0.05, 0.2, 0.3], FrictionMode::Slip),
        ];
        for ncp in [Ncp::FischerBurmeister, Ncp::Min] {
            let sc = Scales { ncp, rho_n: &rho_n, r_f: &r_f };
            for (r, u, mode) in cases {
                let rows = contact_rows(&sc, 0.5, 0, r, u);
                assert_eq!(rows.friction, mode, "{r:?} {u:?}");
                let pw = times(&rows.p, &W);
                let a = nalgebra::Matrix3::from_fn(|i, j| pw[i][j] + rows.c[i][j]);
                let dr = a.lu().solve(&nalgebra::Vector3::from(rows.b)).expect("regular");
                let dr = [dr[0], dr[1], dr[2]];
                let du = mul(&W, dr);
                let h = 1e-7;
                let moved =
                    contact_rows(&sc, 0.5, 0, [0, 1, 2].map(|k| r[k] + h * dr[k]), [0, 1, 2].map(|k| u[k] + h * du[k]));
                let norm = rows.phi.iter().map(|x| x * x).sum::<f64>().sqrt();
                let err = (0..3).map(|k| (moved.phi[k] - (1.0 - h) * rows.phi[k]).powi(2)).sum::<f64>().sqrt();
                assert!(err <= 1e-3 * h * norm, "{ncp:?} {mode:?}: {err:e} vs {:e}", h * norm);
            }
        }
    }

    #[test]
    fn the_merit_history_keeps_the_last_memory_values() {
        let mut h = MeritHistory::default();
        assert_eq!(h.max(), f64::NEG_INFINITY);
        for m in [5.0, 1.0, 2.0] {
            h.push(m);
        }
        assert_eq!(h.max(), 5.0);
        for _ in 0..MEMORY - 1 {
            h.push(0.5);
        }
        assert_eq!(h.max(), 2.0, "5 and 1 have left the window");
        h.clear();
        h.push(0.25);
        assert_eq!(h.max(), 0.25);
    }

    /// The Newton matrix's pattern is `W`'s blocks in full, and every stored block's entries
    /// have distinct slots.
    #[test]
    fn the_pattern_holds_every_entry_of_the_stored_blocks_once() {
        let t = [(0, 0, 1.0), (1, 4, 0.5), (5, 5, 1.0), (8, 2, 0.1)];
        let p = DelassusProblem::from_triplets(&t, vec![0.0; 9], vec![0.1; 3]).unwrap();
        let pat = Pattern::of(&p);
        // blocks (0,0), (0,1), (1,1), (2,0), (2,2)
        assert_eq!(p.stored_blocks(), 5);
        assert_eq!(pat.row_idx.len(), 45);
        let mut slots = pat.slot.clone();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(slots.len(), 45);
        // column 2 (block column 0) holds block rows 0 and 2
        assert_eq!(&pat.row_idx[pat.col_ptr[2]..pat.col_ptr[3]], &[0, 1, 2, 6, 7, 8]);
    }
}
