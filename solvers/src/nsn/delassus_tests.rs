//! nsn on problems in Delassus form (README "Delassus form"): hand-made problems with their exact
//! solutions, a non-symmetric `W` among them (issue 36), and agreement with nsn's own step path on
//! a symmetric `W = J M⁻¹ Jᵀ`.

use super::*;
use crate::pgs::{Pgs, PgsSettings};
use api::linear::LinearProblem;
use api::{DelassusProblem, IterationLog, Settings, SolveStatus, Solver};
use kernels::contact_local::natmap;
use kernels::BlockDiagonal;
use nalgebra::DMatrix;

fn settings(f: impl FnOnce(&mut NsnSettings)) -> NsnSettings {
    let mut s = NsnSettings { tolerance: 1e-13, ..NsnSettings::default() };
    f(&mut s);
    s.validate().unwrap();
    s
}

/// `‖F_nat(r, W r + q)‖₂`, the absolute natural-map residual, computed here from `r` alone.
fn natmap_abs(p: &DelassusProblem, r: &[[f64; 3]]) -> f64 {
    (0..p.nc())
        .map(|i| natmap(r[i], p.velocity_of(i, r), p.mu()[i]).iter().map(|x| x * x).sum::<f64>())
        .sum::<f64>()
        .sqrt()
}

fn max_diff(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    a.iter().flatten().zip(b.iter().flatten()).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

/// The exact solution of [`two_contacts`]: contact 0 sticks strictly inside its cone
/// (`|r_t| = 0.1 < μ r_n = 0.5`, `u_0 = 0`); contact 1 slides on the cone boundary
/// (`|r_t| = 1 = μ r_n`) with `u_1 = (0, −0.3 r_t)`, opposite to its friction.
const R_STAR: [[f64; 3]; 2] = [[1.0, 0.1, 0.0], [2.0, 0.6, 0.8]];
const U_STAR: [[f64; 3]; 2] = [[0.0; 3], [0.0, -0.3 * 0.6, -0.3 * 0.8]];

/// A diagonally dominant 6×6 `W` coupling both contacts; `W_ij = S_ij + d_ij`, `W_ji = S_ij − d_ij`
/// with `|d| = 0.01` (relative asymmetry `2 · 0.01 / max|W| = 1e-2`), or `d = 0`; `q = u* − W r*`.
fn two_contacts(skew: f64) -> DelassusProblem {
    let diag = [2.0, 1.5, 1.7, 1.8, 1.2, 1.4];
    let upper = [
        (0, 1, 0.1, 1.0),
        (0, 2, 0.05, -1.0),
        (1, 2, 0.08, 1.0),
        (0, 3, 0.3, 1.0),
        (0, 4, 0.1, -1.0),
        (1, 3, 0.2, 1.0),
        (1, 4, -0.1, 1.0),
        (2, 3, -0.05, -1.0),
        (2, 5, 0.15, 1.0),
        (3, 4, 0.05, 1.0),
        (4, 5, 0.1, -1.0),
    ];
    let mut t: Vec<(usize, usize, f64)> = diag.iter().enumerate().map(|(k, &d)| (k, k, d)).collect();
    for &(i, j, s, sign) in &upper {
        t.push((i, j, s + sign * skew));
        t.push((j, i, s - sign * skew));
    }
    let mut w = DMatrix::<f64>::zeros(6, 6);
    for &(i, j, x) in &t {
        w[(i, j)] += x;
    }
    let r = DMatrix::from_iterator(6, 1, R_STAR.iter().flatten().copied());
    let wr = &w * r;
    let q: Vec<f64> = U_STAR.iter().flatten().zip(wr.iter()).map(|(u, x)| u - x).collect();
    DelassusProblem::from_triplets(&t, q, vec![0.5, 0.5]).unwrap()
}

/// Issue 36's hand-made non-symmetric problem: nsn (FB and min map) reaches the exact solution,
/// natural-map residual ≤ 1e-10 and `r` within 1e-8 of `r*`, in a few Newton iterations
/// (quadratic convergence of the exact generalized Jacobian, README "Delassus form").
#[test]
fn non_symmetric_two_contacts_reach_the_exact_solution() {
    let p = two_contacts(0.01);
    let asym = p.asymmetry();
    assert!((0.009..0.011).contains(&asym), "relative asymmetry {asym}");
    assert!(natmap_abs(&p, &R_STAR) < 1e-15, "r* solves the problem");
    for ncp in [Ncp::FischerBurmeister, Ncp::Min] {
        let mut nsn = Nsn::new(settings(|s| s.ncp = ncp));
        let mut log = IterationLog::new();
        let sol = nsn.solve_delassus(&p, &mut log).unwrap();
        let res = natmap_abs(&p, &sol.impulses);
        assert_eq!(sol.status, SolveStatus::Solved, "{ncp:?}");
        assert!(res <= 1e-10, "{ncp:?}: natural-map residual {res:e}");
        let err = max_diff(&sol.impulses, &R_STAR);
        assert!(err <= 1e-8, "{ncp:?}: |r − r*| = {err:e}");
        assert!(sol.iterations <= 12, "{ncp:?}: {} Newton iterations", sol.iterations);
        // the log's last natural-map residual is the returned iterate's
        let logged = *log.column("natmap_abs_l2").unwrap().last().unwrap();
        assert!((logged - res).abs() <= 1e-14, "{logged:e} vs {res:e}");
    }
}

/// pgs on the same problem (it sweeps `W` as given) reaches the same exact solution.
#[test]
fn pgs_solves_the_non_symmetric_two_contacts_too() {
    let p = two_contacts(0.01);
    let s = PgsSettings { max_iterations: 5000, tolerance: 1e-14, ..PgsSettings::default() };
    s.validate().unwrap();
    let sol = Pgs::new(s).solve_delassus(&p, &mut IterationLog::new()).unwrap();
    let res = natmap_abs(&p, &sol.impulses);
    assert!(res <= 1e-10, "natural-map residual {res:e} after {} sweeps", sol.iterations);
    assert!(max_diff(&sol.impulses, &R_STAR) <= 1e-8);
}

/// A contact duplicated (two contacts with the same rows: `W = [[A, A], [A, A]]`, singular) has
/// many solutions with the same total impulse; nsn still reaches a natural-map residual ≤ 1e-10
/// (the shift `ε` keeps the Newton matrix regular) and the total impulse of the single-contact
/// problem.
#[test]
fn a_duplicated_contact_with_singular_w_is_solved() {
    let a = [[1.0, 0.1, 0.0], [0.1, 0.8, 0.05], [0.0, 0.05, 0.9]];
    let mut t = vec![];
    for (bi, bj) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
        for (i, row) in a.iter().enumerate() {
            for (j, &x) in row.iter().enumerate() {
                t.push((3 * bi + i, 3 * bj + j, x));
            }
        }
    }
    let q0 = [-1.0, 0.6, -0.2];
    let q: Vec<f64> = q0.iter().chain(&q0).copied().collect();
    let p = DelassusProblem::from_triplets(&t, q, vec![0.3, 0.3]).unwrap();
    let single = DelassusProblem::from_triplets(&t[..9], q0.to_vec(), vec![0.3]).unwrap();
    let mut nsn = Nsn::new(settings(|_| {}));
    let one = nsn.solve_delassus(&single, &mut IterationLog::new()).unwrap();
    let mut log = IterationLog::new();
    let sol = nsn.solve_delassus(&p, &mut log).unwrap();
    let res = natmap_abs(&p, &sol.impulses);
    assert!(res <= 1e-10, "natural-map residual {res:e} ({} iterations)", sol.iterations);
    assert_eq!(sol.status, SolveStatus::Solved);
    for a in 0..3 {
        let total = sol.impulses[0][a] + sol.impulses[1][a];
        assert!((total - one.impulses[0][a]).abs() <= 1e-8, "component {a}: {total} vs {}", one.impulses[0][a]);
    }
    assert!(
        one.impulses[0][0] > 0.0
            && (one.impulses[0][1].hypot(one.impulses[0][2]) - 0.3 * one.impulses[0][0]).abs() < 1e-9,
        "the single contact slides: {:?}",
        one.impulses[0]
    );
}

/// A small step problem in the FCLIB global form (`api::linear::LinearProblem`, `dt = 1`): a
/// particle on the ground pushed against a rigid body that rests on the ground off its centre,
/// three contacts. Returns the problem and its Delassus form `W = J M⁻¹ Jᵀ`, `q = J M⁻¹ f + w`.
fn step_and_delassus() -> (LinearProblem, DelassusProblem) {
    let m0 = DMatrix::identity(3, 3) * 2.0;
    let m1 = DMatrix::from_diagonal(&nalgebra::DVector::from_vec(vec![1.0, 1.0, 1.0, 0.1, 0.2, 0.15]));
    let mass = BlockDiagonal::new(vec![m0, m1]);
    let nv = 9;
    let mut j = DMatrix::<f64>::zeros(9, nv);
    // contact 0: particle on the ground, frame (z, x, y)
    j[(0, 2)] = 1.0;
    j[(1, 0)] = 1.0;
    j[(2, 1)] = 1.0;
    // contact 1: particle against the body along x (relative velocity particle − body point at
    // offset c from the body's centre), frame (−x, y, z)
    let c = nalgebra::Vector3::new(0.2, 0.0, 0.1);
    let frame1 = [nalgebra::Vector3::new(-1.0, 0.0, 0.0), nalgebra::Vector3::y(), nalgebra::Vector3::z()];
    for (row, d) in frame1.iter().enumerate() {
        for k in 0..3 {
            j[(3 + row, k)] = d[k];
            j[(3 + row, 3 + k)] = -d[k];
        }
        let ang = c.cross(d);
        for k in 0..3 {
            j[(3 + row, 6 + k)] = -ang[k];
        }
    }
    // contact 2: body on the ground at offset (0.1, 0.05, −0.1), frame (z, x, y)
    let c2 = nalgebra::Vector3::new(0.1, 0.05, -0.1);
    let frame2 = [nalgebra::Vector3::z(), nalgebra::Vector3::x(), nalgebra::Vector3::y()];
    for (row, d) in frame2.iter().enumerate() {
        for k in 0..3 {
            j[(6 + row, 3 + k)] = d[k];
        }
        let ang = c2.cross(d);
        for k in 0..3 {
            j[(6 + row, 6 + k)] = ang[k];
        }
    }
    let v_star = [0.5, 0.0, -1.0, -0.1, 0.2, -1.0, 0.1, 0.0, 0.3];
    let mut f = vec![0.0; nv];
    mass.mul_into(&v_star, &mut f);
    let gaps = [0.0, 0.01, 0.0];
    let mu = [0.3, 0.2, 0.5];
    let triplets: Vec<(usize, usize, f64)> = (0..9)
        .flat_map(|r| (0..nv).map(move |c| (r, c)))
        .filter(|&(r, c)| j[(r, c)] != 0.0)
        .map(|(r, c)| (r, c, j[(r, c)]))
        .collect();
    let lp = LinearProblem::new(mass.clone(), &triplets, f.clone(), &gaps, &mu).unwrap();
    // W = J M⁻¹ Jᵀ, q = J M⁻¹ f + w
    let mut minv_jt = j.transpose();
    for col in 0..9 {
        let mut x: Vec<f64> = minv_jt.column(col).iter().copied().collect();
        let mut m = mass.clone();
        m.factor().unwrap();
        m.solve_in_place(&mut x);
        minv_jt.set_column(col, &nalgebra::DVector::from_vec(x));
    }
    let w = &j * &minv_jt;
    let mut vs = f.clone();
    let mut m = mass;
    m.factor().unwrap();
    m.solve_in_place(&mut vs);
    let jv = &j * nalgebra::DVector::from_vec(vs);
    let q: Vec<f64> = (0..9).map(|r| jv[r] + if r % 3 == 0 { gaps[r / 3] } else { 0.0 }).collect();
    let wt: Vec<(usize, usize, f64)> = (0..9)
        .flat_map(|r| (0..9).map(move |c| (r, c)))
        .filter(|&(r, c)| w[(r, c)] != 0.0)
        .map(|(r, c)| (r, c, w[(r, c)]))
        .collect();
    (lp, DelassusProblem::from_triplets(&wt, q, mu.to_vec()).unwrap())
}

/// On a symmetric `W = J M⁻¹ Jᵀ` the Delassus answer is nsn's own step answer on the same
/// problem (linearised, `dt = 1`, direct Schur solve), to 1e-8.
#[test]
fn symmetric_w_agrees_with_the_step_problem_answer() {
    let (lp, p) = step_and_delassus();
    assert!(p.asymmetry() < 1e-15, "{}", p.asymmetry());
    let mut nsn = Nsn::new(settings(|_| {}));
    let mut log = IterationLog::new();
    let sol = nsn.solve_delassus(&p, &mut log).unwrap();
    let res = natmap_abs(&p, &sol.impulses);
    assert_eq!(sol.status, SolveStatus::Solved);
    assert!(res <= 1e-10, "natural-map residual {res:e}");
    let step_settings = settings(|s| {
        s.linear_solver = LinearSolver::Direct;
        s.tolerance = 1e-12;
        s.max_newton_iterations = 200;
    });
    let step = Nsn::new(step_settings).step(&lp.step_problem(), &mut IterationLog::new()).unwrap();
    assert_eq!(step.status, SolveStatus::Solved);
    let diff = max_diff(&sol.impulses, &step.impulses);
    assert!(diff <= 1e-8, "Delassus {:?} vs step {:?}: {diff:e}", sol.impulses, step.impulses);
    // not a trivial answer: some contact carries load and one slides
    let slides =
        sol.impulses.iter().zip(p.mu()).any(|(r, m)| r[0] > 1e-3 && (r[1].hypot(r[2]) - m * r[0]).abs() < 1e-9);
    assert!(slides, "{:?}", sol.impulses);
}

/// The LU's symbolic analysis is kept across solves of problems with the same pattern, and a
/// second solve of the same problem gives the same answer, bit for bit.
#[test]
fn a_second_solve_reuses_the_analysis_and_repeats_the_answer() {
    let p = two_contacts(0.01);
    let mut nsn = Nsn::new(settings(|_| {}));
    let a = nsn.solve_delassus(&p, &mut IterationLog::new()).unwrap();
    let b = nsn.solve_delassus(&p, &mut IterationLog::new()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn no_contacts_is_solved_at_once_and_a_past_deadline_stops_the_newton_loop() {
    let p = DelassusProblem::from_triplets(&[], vec![], vec![]).unwrap();
    let sol = Nsn::new(settings(|_| {})).solve_delassus(&p, &mut IterationLog::new()).unwrap();
    assert_eq!((sol.status, sol.iterations, sol.impulses.len()), (SolveStatus::Solved, 0, 0));
    let p = two_contacts(0.01);
    let mut log = IterationLog::with_deadline(Some(std::time::Instant::now()));
    let sol = Nsn::new(settings(|_| {})).solve_delassus(&p, &mut log).unwrap();
    assert_eq!((sol.status, sol.iterations), (SolveStatus::TimeLimit, 1));
    assert_eq!(log.len(), 1);
}

#[test]
fn nsn_declares_the_delassus_form() {
    assert!(capabilities().delassus_form);
}
