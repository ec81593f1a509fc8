//! SAP tests: projection (regions, Moreau conditions, G), gradient/Hessian/line-search derivatives
//! against finite differences, the optimum against clarabel, duality gap, complementarity,
//! warm start, monotone cost, resting particles (compliant and near-rigid), symbolic reuse,
//! settings. Tolerances are stated beside each assertion with their derivation.

use super::line_search::LineSearch;
use super::model::{Evaluation, HessianPattern};
use super::problem::{SapConstraint, SapProblem, Side};
use super::projection::{project, project_with_hessian, ConeParams, ImpulseSet, Region};
use super::reference::solve_reference;
use super::settings::{SapSettings, Scheme};
use super::solver::{Criterion, Sap};
use harness::model::{DofMask, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::stepper::{simulate, RunOptions};
use harness::{Capabilities, IterationLog, Params, Scenario, SolveStatus};
use kernels::BlockDiagonal;
use nalgebra::{DMatrix, Vector3};

/// Seeded uniform numbers in [0, 1) (SplitMix64), so the tests need no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.next()
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

// ---------------------------------------------------------------- projection (README §9, Moreau)

#[test]
fn projection_moreau_conditions_in_every_region() {
    let mut rng = Rng(1);
    let mut seen = [0usize; 3];
    for _ in 0..5000 {
        let c = ConeParams {
            mu: rng.range(0.0, 2.0),
            r_n: rng.range(0.01, 10.0),
            r_t: rng.range(1e-4, 1.0),
            set: ImpulseSet::FrictionCone,
        };
        let y = [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)];
        let (gamma, region) = project(y, &c);
        seen[region as usize] += 1;
        let scale = y.iter().map(|x| x.abs()).fold(0.0, f64::max) * c.r_n.max(c.r_t);
        // γ ∈ F (to round-off, 1e-14 relative)
        let gt = (gamma[1] * gamma[1] + gamma[2] * gamma[2]).sqrt();
        assert!(gt <= c.mu * gamma[0] * (1.0 + 1e-14) + 1e-15 && gamma[0] >= 0.0, "{y:?} {c:?} {gamma:?}");
        // g = −R (y − γ) ∈ F*: μ ‖g_t‖ ≤ g_n
        let r = [c.r_n, c.r_t, c.r_t];
        let g: Vec<f64> = (0..3).map(|k| -r[k] * (y[k] - gamma[k])).collect();
        let g_t = (g[1] * g[1] + g[2] * g[2]).sqrt();
        assert!(c.mu * g_t <= g[0] + 1e-13 * scale, "g not in F*: {y:?} {c:?} {g:?}");
        // complementarity gᵀγ = 0 to round-off (Moreau in the R inner product)
        assert!(dot(&g, &gamma).abs() <= 1e-13 * scale * (1.0 + gamma.iter().map(|x| x.abs()).sum::<f64>()));
    }
    assert!(seen.iter().all(|&n| n > 500), "every region sampled: {seen:?}");
}

#[test]
fn projection_derivative_matches_finite_differences_and_is_symmetric_psd() {
    let mut rng = Rng(2);
    let mut checked = [0usize; 3];
    for _ in 0..3000 {
        let c = ConeParams {
            mu: rng.range(0.1, 1.5),
            r_n: rng.range(0.05, 5.0),
            r_t: rng.range(1e-3, 0.5),
            set: ImpulseSet::FrictionCone,
        };
        let y = [rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), rng.range(-1.0, 1.0)];
        let (_, region, g) = project_with_hessian(y, &c);
        // symmetric and PSD (eigenvalues ≥ −1e-12 ‖G‖)
        let m = nalgebra::Matrix3::from_fn(|i, j| g[i][j]);
        assert!((m - m.transpose()).norm() <= 1e-12 * m.norm());
        let ev = m.symmetric_eigenvalues();
        assert!(ev.iter().all(|&e| e >= -1e-12 * m.norm()), "{ev:?}");
        // G = −∂γ/∂v_c with y = −R⁻¹(v_c − v̂): central differences in v_c, step h
        let r = [c.r_n, c.r_t, c.r_t];
        let h = 1e-7;
        let mut ok = true;
        let mut fd = [[0.0; 3]; 3];
        for k in 0..3 {
            let (mut yp, mut ym) = (y, y);
            yp[k] -= h / r[k]; // v_c,k + h
            ym[k] += h / r[k];
            let ((gp, rp), (gm, rm)) = (project(yp, &c), project(ym, &c));
            ok &= rp == region && rm == region;
            for i in 0..3 {
                fd[i][k] = -(gp[i] - gm[i]) / (2.0 * h);
            }
        }
        if !ok {
            continue; // too close to a region boundary for differences
        }
        checked[region as usize] += 1;
        let scale = m.norm().max(1.0);
        for i in 0..3 {
            for k in 0..3 {
                // central differences: error O(h² γ''') + O(ε γ / h); 1e-5 relative is ample
                assert!(
                    (fd[i][k] - g[i][k]).abs() <= 1e-5 * scale,
                    "{region:?} G[{i}][{k}] {} vs {}",
                    g[i][k],
                    fd[i][k]
                );
            }
        }
    }
    assert!(checked.iter().all(|&n| n > 100), "{checked:?}");
}

#[test]
fn holonomic_row_is_not_projected() {
    // impulse set ℝ: γ = (y_n, 0, 0) of either sign, G = diag(1/R, 0, 0), cost ½ R γ²
    let c = ConeParams { mu: 0.0, r_n: 0.25, r_t: 0.25, set: ImpulseSet::Unconstrained };
    for y in [[-3.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]] {
        let (gamma, region, g) = project_with_hessian(y, &c);
        assert_eq!((gamma, region), ([y[0], 0.0, 0.0], Region::Holonomic));
        assert_eq!(g, [[4.0, 0.0, 0.0], [0.0; 3], [0.0; 3]]);
        assert_eq!(super::projection::cost(gamma, &c), 0.125 * y[0] * y[0]);
    }
}

#[test]
fn frictionless_contact_never_pulls() {
    let c = ConeParams { mu: 0.0, r_n: 0.5, r_t: 0.01, set: ImpulseSet::FrictionCone };
    assert_eq!(project([-1.0, 0.0, 0.0], &c).0, [0.0; 3]);
    assert_eq!(project([2.0, 1.0, -3.0], &c).0, [2.0, 0.0, 0.0]);
    let (_, _, g) = project_with_hessian([2.0, 1.0, 0.0], &c);
    assert_eq!(g, [[2.0, 0.0, 0.0], [0.0; 3], [0.0; 3]]);
}

// ---------------------------------------------------------------- random problems

/// A random problem: `nb` free 6-DOF bodies with diagonal mass (so `A = M` diagonal and the
/// stopping norm is the `A⁻¹` norm of the gradient), `nc` contacts between random bodies or a
/// body and the world, random Jacobians, μ, R, v̂ and v*.
fn random_problem(seed: u64, nb: usize, nc: usize) -> SapProblem<'static> {
    random_problem_on(seed, nb, nc, false, 0)
}

/// [`random_problem`]; with `three`, every contact between two bodies acts on a third one too (a
/// contact of a linear problem, e.g. the Cholesky view of an FCLIB local problem); `nh` holonomic
/// rows (impulse set ℝ) on one or two random bodies follow the contacts.
fn random_problem_on(seed: u64, nb: usize, nc: usize, three: bool, nh: usize) -> SapProblem<'static> {
    let mut rng = Rng(seed);
    let blocks: Vec<DMatrix<f64>> =
        (0..nb).map(|_| DMatrix::from_diagonal(&nalgebra::DVector::from_fn(6, |_, _| rng.range(0.5, 3.0)))).collect();
    let mass = BlockDiagonal::new(blocks);
    let nv = 6 * nb;
    let v_star: Vec<f64> = (0..nv).map(|_| rng.range(-1.0, 1.0)).collect();
    let mut contacts = vec![];
    for _ in 0..nc {
        let a = (rng.next() * nb as f64) as usize;
        let two = nb > 1 && rng.next() < 0.5;
        let mut b = (rng.next() * nb as f64) as usize;
        if b == a {
            b = (a + 1) % nb;
        }
        let third = three && two && nb > 2;
        let mut side = |blk: usize| {
            let mut j = [[0.0; 6]; 3];
            for row in j.iter_mut() {
                for x in row.iter_mut() {
                    *x = rng.range(-1.0, 1.0);
                }
            }
            Side { block: blk, v_offset: 6 * blk, ncols: 6, j }
        };
        let mut sides = if two { smallvec::smallvec![side(a), side(b)] } else { smallvec::smallvec![side(a)] };
        if third {
            let c = (0..nb).find(|&c| c != a && c != b).expect("a third body");
            sides.push(side(c));
        }
        let cone = ConeParams {
            mu: rng.range(0.0, 1.2),
            r_n: rng.range(0.01, 0.5),
            r_t: rng.range(1e-3, 0.05),
            set: ImpulseSet::FrictionCone,
        };
        contacts.push(SapConstraint { sides, cone, v_hat_n: rng.range(-0.5, 0.5), w: 1.0 });
    }
    for _ in 0..nh {
        let a = (rng.next() * nb as f64) as usize;
        let b = (a + 1) % nb;
        let two = rng.next() < 0.5;
        let mut side = |blk: usize| {
            let mut j = [[0.0; 6]; 3];
            j[0].iter_mut().for_each(|x| *x = rng.range(-1.0, 1.0));
            Side { block: blk, v_offset: 6 * blk, ncols: 6, j }
        };
        let sides = if two { smallvec::smallvec![side(a), side(b)] } else { smallvec::smallvec![side(a)] };
        let r = rng.range(0.01, 0.5);
        let cone = ConeParams { mu: 0.0, r_n: r, r_t: r, set: ImpulseSet::Unconstrained };
        contacts.push(SapConstraint { sides, cone, v_hat_n: rng.range(-0.5, 0.5), w: 1.0 });
    }
    let v0 = vec![0.0; nv];
    SapProblem::from_parts(0.01, mass, v_star, v0, contacts)
}

fn tight() -> SapSettings {
    SapSettings { rel_tolerance: 1e-10, ..SapSettings::default() }
}

#[test]
fn gradient_and_hessian_match_finite_differences() {
    // plain contacts, contacts on three bodies, contacts with holonomic rows
    for (seed, three, nh) in (0..5).flat_map(|s| [(s, false, 0), (s, true, 0), (s, false, 3)]) {
        let prob = random_problem_on(10 + seed, 3, 5, three, nh);
        if three {
            assert!(prob.constraints.iter().any(|c| c.sides.len() == 3), "seed {seed}: a contact on three bodies");
        }
        let nv = prob.nv();
        let mut rng = Rng(100 + seed);
        let v: Vec<f64> = (0..nv).map(|_| rng.range(-1.0, 1.0)).collect();
        let mut e = Evaluation::default();
        e.resize(&prob);
        e.calc(&prob, &v, true);
        let (grad, l0) = (e.grad.clone(), e.cost());
        let mut pat = HessianPattern::default();
        pat.build(&prob);
        pat.assemble(&prob, &e);
        let h = pat.to_dense();
        let regions = |v: &[f64]| -> Vec<Region> {
            prob.constraints.iter().map(|c| project(c.unprojected_impulse(c.velocity(v)), &c.cone).1).collect()
        };
        let r0 = regions(&v);
        let step = 1e-6;
        let mut e2 = Evaluation::default();
        e2.resize(&prob);
        for k in 0..nv {
            let (mut vp, mut vm) = (v.clone(), v.clone());
            vp[k] += step;
            vm[k] -= step;
            e2.calc(&prob, &vp, false);
            let (lp, gp) = (e2.cost(), e2.grad.clone());
            e2.calc(&prob, &vm, false);
            let (lm, gm) = (e2.cost(), e2.grad.clone());
            // ℓ is C¹ with Lipschitz gradient: central differences accurate to O(h² + ε ℓ/h)
            assert!(
                ((lp - lm) / (2.0 * step) - grad[k]).abs() <= 1e-6 * (1.0 + grad[k].abs()),
                "seed {seed} grad[{k}]"
            );
            if regions(&vp) == r0 && regions(&vm) == r0 {
                for i in 0..nv {
                    let fd = (gp[i] - gm[i]) / (2.0 * step);
                    assert!((fd - h[(i, k)]).abs() <= 1e-5 * (1.0 + h[(i, k)].abs()), "seed {seed} H[{i},{k}]");
                }
            }
        }
        assert!(l0.is_finite());
    }
}

#[test]
fn line_search_derivatives_match_finite_differences() {
    let prob = random_problem(7, 3, 6);
    let nv = prob.nv();
    let mut rng = Rng(8);
    let v: Vec<f64> = (0..nv).map(|_| rng.range(-1.0, 1.0)).collect();
    let dv: Vec<f64> = (0..nv).map(|_| rng.range(-1.0, 1.0)).collect();
    let mut e = Evaluation::default();
    e.resize(&prob);
    e.calc(&prob, &v, true);
    let mut ls = LineSearch::default();
    ls.setup(&prob, &e, &dv);
    let mut e2 = Evaluation::default();
    e2.resize(&prob);
    for alpha in [0.0, 0.3, 0.77, 1.2] {
        let (l, d1, d2) = ls.eval(&prob, &e, alpha);
        // ℓ(α) equals the full cost at v + α Δv
        let va: Vec<f64> = v.iter().zip(&dv).map(|(a, b)| a + alpha * b).collect();
        e2.calc(&prob, &va, false);
        assert!((l - e2.cost()).abs() <= 1e-12 * (1.0 + l.abs()));
        let h = 1e-6;
        let (lp, dp, _) = ls.eval(&prob, &e, alpha + h);
        let (lm, dm, _) = ls.eval(&prob, &e, alpha - h);
        assert!(((lp - lm) / (2.0 * h) - d1).abs() <= 1e-6 * (1.0 + d1.abs()), "alpha {alpha}");
        // ℓ'' has jumps at region changes; compare only where it is locally smooth
        let (_, _, d2p) = ls.eval(&prob, &e, alpha + h);
        let (_, _, d2m) = ls.eval(&prob, &e, alpha - h);
        if (d2p - d2m).abs() <= 1e-9 * d2.abs() {
            assert!(((dp - dm) / (2.0 * h) - d2).abs() <= 1e-5 * (1.0 + d2.abs()), "alpha {alpha}");
        }
    }
}

/// The Newton direction `Δv = −H⁻¹∇ℓ` at `v` and the evaluation there (with `G`).
fn newton_direction(prob: &SapProblem, v: &[f64]) -> (Evaluation, Vec<f64>) {
    let mut e = Evaluation::default();
    e.resize(prob);
    e.calc(prob, v, true);
    let mut pat = HessianPattern::default();
    pat.build(prob);
    pat.assemble(prob, &e);
    let g = nalgebra::DVector::from_column_slice(&e.grad);
    let dv = -pat.to_dense().cholesky().expect("H is SPD").solve(&g);
    (e, dv.as_slice().to_vec())
}

#[test]
fn both_line_search_starts_find_the_same_minimiser() {
    use super::settings::LineSearchStart::{AlphaMax, Newton};
    let s = SapSettings::default();
    let mut saved = 0i64;
    for seed in 0..40 {
        let prob = random_problem(500 + seed, 3, 6);
        let mut rng = Rng(600 + seed);
        let v: Vec<f64> = (0..prob.nv()).map(|_| rng.range(-1.0, 1.0)).collect();
        let (e, dv) = newton_direction(&prob, &v);
        let mut ls = LineSearch::default();
        ls.setup(&prob, &e, &dv);
        let search = |start| ls.search(&prob, &e, s.alpha_max, s.ls_tolerance, s.ls_max_iterations, start).unwrap();
        let (a, b) = (search(AlphaMax), search(Newton));
        // ℓ is convex along Δv, so its minimiser on [0, α_max] is unique: both searches stop on
        // it (|ℓ'| ≤ tol·|ℓ'(0)| or a bracket narrower than tol·α₀, both relative 1e-8) or both
        // take α_max where ℓ still decreases; a root to 1e-8 relative in α gives ℓ to ~1e-16
        let (la, _, _) = ls.eval(&prob, &e, a.alpha);
        let (lb, _, _) = ls.eval(&prob, &e, b.alpha);
        assert!((a.alpha - b.alpha).abs() <= 1e-6 * a.alpha, "seed {seed}: alpha {} vs {}", a.alpha, b.alpha);
        assert!((la - lb).abs() <= 1e-12 * la.abs().max(1.0), "seed {seed}: cost {la} vs {lb}");
        // the Newton start pays one extra evaluation only when it must still test α_max
        assert!(b.iterations <= a.iterations + 1, "seed {seed}: {} vs {} evaluations", b.iterations, a.iterations);
        saved += a.iterations as i64 - b.iterations as i64;
    }
    assert!(saved > 0, "the Newton start saves evaluations overall ({saved})");
    // with every contact separated along the whole segment ℓ is quadratic: its minimiser is the
    // Newton step α = 1, found by the Newton start in one evaluation and by Drake's order in two
    let mut prob = random_problem(77, 3, 6);
    for c in &mut prob.constraints {
        c.v_hat_n = -1e6; // y_n = −(v_n − v̂_n)/R_n ≪ 0 for any velocity of the test: region III
    }
    let v = vec![0.0; prob.nv()];
    let (e, dv) = newton_direction(&prob, &v);
    assert!(e.gamma.iter().all(|g| *g == [0.0; 3]), "every contact separated");
    let mut ls = LineSearch::default();
    ls.setup(&prob, &e, &dv);
    let search = |start| ls.search(&prob, &e, s.alpha_max, s.ls_tolerance, s.ls_max_iterations, start).unwrap();
    let (a, b) = (search(AlphaMax), search(Newton));
    assert_eq!((a.iterations, b.iterations), (2, 1));
    assert!((a.alpha - 1.0).abs() <= 1e-12 && (b.alpha - 1.0).abs() <= 1e-12, "{} {}", a.alpha, b.alpha);
}

/// `(ℓ_p(v), ℓ_d(γ), max_i |g_i·γ_i|)` of Eq. 19/22 at `(v, γ)`, `σ = γ`.
fn primal_dual(prob: &SapProblem, v: &[f64], gamma: &[[f64; 3]]) -> (f64, f64, f64) {
    let nv = prob.nv();
    let mut e = Evaluation::default();
    e.resize(prob);
    e.calc(prob, v, false);
    let lp = e.cost();
    let mut jtg = vec![0.0; nv];
    for (c, g) in prob.constraints.iter().zip(gamma) {
        c.add_transpose(*g, &mut jtg);
    }
    let mut ainv = jtg.clone();
    prob.a.solve_in_place(&mut ainv);
    let mut ld = 0.5 * dot(&jtg, &ainv);
    let mut comp: f64 = 0.0;
    for (c, g) in prob.constraints.iter().zip(gamma) {
        let r = [c.cone.r_n, c.cone.r_t, c.cone.r_t];
        let vs = c.velocity(&prob.v_star);
        let vc = c.velocity(v);
        let v_hat = [c.v_hat_n, 0.0, 0.0];
        for k in 0..3 {
            ld += 0.5 * r[k] * g[k] * g[k] + (vs[k] - v_hat[k]) * g[k];
        }
        let gi: f64 = (0..3).map(|k| (vc[k] - v_hat[k] + r[k] * g[k]) * g[k]).sum();
        comp = comp.max(gi.abs());
    }
    (lp, ld, comp)
}

#[test]
fn optimum_equals_clarabel_with_zero_duality_gap() {
    // plain contacts, contacts on three bodies, contacts with holonomic rows
    for (seed, three, nh) in (0..8).flat_map(|s| [(s, false, 0), (s, true, 0), (s, false, 4)]) {
        let prob = random_problem_on(200 + seed, 4, 8, three, nh);
        let settings = tight();
        let mut sap = Sap::new(settings.clone());
        let (v, status) = sap.solve(&prob, &prob.v0, &mut IterationLog::new()).unwrap();
        assert_eq!(status, SolveStatus::Solved);
        let gamma = sap.impulses().to_vec();
        let reference = solve_reference(&prob, 1e-10).unwrap();
        // With A = M diagonal the stopping norm ‖D̃∇ℓ‖ is ‖∇ℓ‖_{A⁻¹}, and strong convexity of ℓ_p in
        // the A norm gives ‖v − v_opt‖_A ≤ ‖∇ℓ(v)‖_{A⁻¹} ≤ ε_r max(‖D̃p‖, ‖D̃ j_c‖) (Eq. 26).
        let mut p = vec![0.0; prob.nv()];
        prob.mass.mul_into(&v, &mut p);
        let dnorm = |x: &[f64]| x.iter().zip(prob.mass.diagonal()).map(|(a, m)| a * a / m).sum::<f64>().sqrt();
        let mut e = Evaluation::default();
        e.resize(&prob);
        e.calc(&prob, &v, false);
        let bound = settings.rel_tolerance * dnorm(&p).max(dnorm(&e.jc));
        let diff: Vec<f64> = v.iter().zip(&reference.v).map(|(a, b)| a - b).collect();
        let a_norm = prob.a.quad(&diff).sqrt();
        // + the interior-point solution's own error: its cost is optimal to the gap tolerance
        // tol (relative), and ½‖v − v_opt‖²_A ≤ ℓ(v) − ℓ* gives √(2 tol (1 + |ℓ|)) in the A norm
        let ipm = (2.0 * 1e-10 * (1.0 + reference.cost.abs())).sqrt();
        assert!(a_norm <= bound + ipm, "seed {seed}: ‖v_sap − v_ipm‖_A = {a_norm:e} > {bound:e}");
        assert!((e.cost() - reference.cost).abs() <= 1e-8 * (1.0 + reference.cost.abs()), "seed {seed} cost");
        for (g, r) in gamma.iter().zip(&reference.gamma) {
            for k in 0..3 {
                assert!((g[k] - r[k]).abs() <= 1e-5 * (1.0 + r[k].abs()), "seed {seed} γ {g:?} vs {r:?}");
            }
        }
        // zero duality gap (Theorem 1): ℓ_p(v) + ℓ_d(γ) = 0 at the optimum; at the SAP iterate it
        // is O(‖∇ℓ‖²) ≤ (ε_r scale)² plus round-off
        let (lp, ld, comp) = primal_dual(&prob, &v, &gamma);
        assert!((lp + ld).abs() <= 1e-10 * (1.0 + lp.abs()), "seed {seed}: gap {}", lp + ld);
        // SAP's own complementarity g·γ is zero to round-off (Moreau, README §9)
        let gscale = gamma.iter().flatten().map(|x| x.abs()).fold(0.0, f64::max);
        assert!(comp <= 1e-13 * (1.0 + gscale), "seed {seed}: |g·γ| = {comp:e}");
    }
}

#[test]
fn exact_guess_takes_zero_newton_iterations_and_cost_is_monotone() {
    for seed in 0..5 {
        let prob = random_problem(300 + seed, 3, 7);
        let mut sap = Sap::new(SapSettings::default());
        let guess = vec![0.0; prob.nv()];
        let (v, status) = sap.solve(&prob, &guess, &mut IterationLog::new()).unwrap();
        assert_eq!((status, sap.stats.criterion), (SolveStatus::Solved, Some(Criterion::Optimality)));
        assert!(sap.stats.iterations >= 1);
        // ℓ_p decreases monotonically (exact line search on a convex function), up to Drake's slop
        for w in sap.stats.cost.windows(2) {
            assert!(w[1] <= w[0] + 1000.0 * f64::EPSILON * w[0].abs().max(1.0), "{:?}", sap.stats.cost);
        }
        // the converged iterate passes the test before any Newton step (Drake's ConvergenceWithExactGuess)
        let mut log = IterationLog::new();
        let (v2, status) = sap.solve(&prob, &v, &mut log).unwrap();
        assert_eq!((status, sap.stats.iterations), (SolveStatus::Solved, 0));
        assert_eq!(v2, v);
        assert_eq!(log.len(), 1);
        assert!(log.column("grad_scaled_l2").is_some() && log.column("cost").is_some());
    }
}

#[test]
fn max_iterations_is_a_status_not_an_error() {
    let prob = random_problem(5, 3, 8);
    let mut sap = Sap::new(SapSettings { max_iterations: 1, rel_tolerance: 1e-14, ..SapSettings::default() });
    let (_, status) = sap.solve(&prob, &vec![0.0; prob.nv()], &mut IterationLog::new()).unwrap();
    assert_eq!((status, sap.stats.criterion), (SolveStatus::MaxIterations, Some(Criterion::MaxIterations)));
    assert_eq!(sap.stats.iterations, 1);
}

// ---------------------------------------------------------------- worlds through the stepper

fn ground(material: Material) -> StaticCollider {
    StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material,
    }
}

/// A sphere of mass `m`, radius `r` resting on the ground (gap `z0 - r`), free 6 DOF.
fn resting_sphere(material: Material, m: f64, r: f64, z0: f64) -> Scenario {
    let mut w = World::new();
    w.bodies.push(RigidBody::new("ball", Shape::Sphere { radius: r }, m, Vector3::new(0.0, 0.0, z0), material));
    w.statics.push(ground(material));
    let needs = Capabilities { rigid_bodies: true, ..Default::default() };
    Scenario { world: w, dt: 0.01, steps: 300, margin: 0.01, needs }
}

fn final_gap(sc: &Scenario, settings: SapSettings) -> (f64, Sap) {
    let mut sap = Sap::new(settings);
    let o = simulate(sc, &mut sap, RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
    assert!(o.failure.is_none(), "{:?}", o.failure);
    let b = &o.stepper.world().bodies[0];
    let Shape::Sphere { radius } = b.shape else { unreachable!() };
    (b.position.z - radius, sap)
}

#[test]
fn resting_particle_compliant_penetration_is_mg_over_k() {
    // m = 2, k = 1e4, τ_d = 0.01, δt = 0.01: T_n = 2π√(m/k) = 0.089 s > δt, compliant branch
    // (R_n = 1/(δt k (δt+τ_d)) = 0.5 > β² w/(4π²) = 0.021). Equilibrium of Eq. 2: φ = −mg/k.
    let (m, k) = (2.0, 1e4);
    let sc = resting_sphere(Material::compliant(0.5, k, 0.01), m, 0.1, 0.1);
    let (phi, _) = final_gap(&sc, SapSettings::default());
    let expected = -m * 9.81 / k;
    // the damped oscillation (ζ = τ_d ω/2 = 0.35) has decayed by e^-75 after 3 s; the remaining
    // error is the solve's: impulse error ≤ ε_r (relative) ⇒ φ error ≤ ~ε_r |φ| (1e-4 leaves margin)
    assert!((phi - expected).abs() <= 1e-4 * expected.abs(), "φ = {phi:e}, expected {expected:e}");
}

#[test]
fn resting_particle_near_rigid_matches_the_discrete_steady_state() {
    // README §9 "Resting particle": φ = −m g δt (δt + τ_d) R_n with R_n = β² w / (4π²); for a free sphere
    // W_ii = diag(1, 1 + l²/I, 1 + l²/I)/m with I = 0.4 m r² and l the lever arm of the contact
    // point, which the harness puts midway between the surfaces, l = r + φ/2 (φ < 0); so
    // w = ‖W_ii‖_F / 3 = √(1 + 2 (1 + l²/(0.4 r²))²)/(3m).
    let (m, r, dt) = (2.0, 0.1, 0.01);
    let rn = |phi: f64| {
        let t = 1.0 + (r + 0.5 * phi).powi(2) / (0.4 * r * r);
        (1.0 + 2.0 * t * t).sqrt() / (3.0 * m) / (4.0 * std::f64::consts::PI.powi(2))
    };
    for (material, tau_d, settings) in [
        (Material::rigid(0.5), 0.0, SapSettings::default()),
        (Material::rigid(0.5), dt, SapSettings { rigid_tau_d_over_dt: 1.0, ..SapSettings::default() }),
        (Material::compliant(0.5, 1e12, dt), dt, SapSettings::default()),
    ] {
        let sc = resting_sphere(material, m, r, r);
        let (phi, _) = final_gap(&sc, settings);
        let expected = -m * 9.81 * dt * (dt + tau_d) * rn(phi);
        // settled (the near-rigid response is overdamped within a few steps); solver tolerance 1e-6
        assert!((phi - expected).abs() <= 1e-4 * expected.abs(), "τ_d {tau_d}: φ = {phi:e}, expected {expected:e}");
    }
}

#[test]
fn pushed_particle_creeps_at_rt_f_dt_and_slides_above_the_threshold() {
    // README §9 (creep, threshold): a sphere-less point mass (a sphere with only its translations free, so
    // W_ii = I/m, w = √3/(3m)) pushed by F along x: stiction creep v_s = R_t F δt with
    // R_t = σ w; above μ m g it slides with a = (F − μ m g)/m.
    let (m, mu, dt) = (2.0, 0.5, 0.01);
    for (frac, sticks) in [(0.9, true), (1.5, false)] {
        let mut sc = resting_sphere(Material::rigid(mu), m, 0.1, 0.1);
        sc.world.bodies[0] = sc.world.bodies[0].clone().with_dofs(DofMask([true, true, true, false, false, false]));
        let f = frac * mu * m * 9.81;
        sc.world.bodies[0].applied_force = Vector3::new(f, 0.0, 0.0);
        sc.steps = 100;
        let mut sap = Sap::new(SapSettings::default());
        let o = simulate(&sc, &mut sap, RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        assert!(o.failure.is_none());
        let vx: Vec<f64> = o.trace.v.iter().map(|v| v[0]).collect();
        let w = 3f64.sqrt() / (3.0 * m);
        if sticks {
            let vs = 1e-3 * w * f * dt;
            // the creep is reached after the first step and stays: relative 1e-4 (solver tolerance)
            assert!((vx[50] - vs).abs() <= 1e-4 * vs + 1e-10, "creep {} vs {vs}", vx[50]);
            assert!(vs <= 1e-3 * mu * 9.81 * dt, "Eq. 31 bound σ μ g δt (w m = 0.577 < 1)");
        } else {
            // window 30..70: by step ~90 the gliding lift below exceeds the 1 cm detection margin
            let a = (vx[70] - vx[30]) / (40.0 * dt);
            let expected = (f - mu * m * 9.81) / m;
            assert!((a - expected).abs() <= 1e-4 * expected, "a = {a}, expected {expected}");
            // the convex approximation's gliding (README §9 "Gliding", τ_d = 0): φ ≈ δt μ ‖v_t‖, so
            // the body rises at v_z = δt μ a — the signature of Anitescu-type models
            let vz = o.trace.v[50][2];
            assert!((vz - dt * mu * expected).abs() <= 1e-4 * vz, "v_z = {vz}");
        }
    }
}

#[test]
fn symbolic_factorization_is_reused_across_steps_with_the_same_pattern() {
    let sc = resting_sphere(Material::rigid(0.5), 1.0, 0.1, 0.1);
    let sc = Scenario { steps: 20, ..sc };
    // cold start from v* every step, so every step factors at least once
    let (_, sap) = final_gap(&sc, SapSettings { warm_start: false, ..SapSettings::default() });
    assert_eq!(sap.symbolic_analyses(), 1);
}

#[test]
fn midpoint_returns_q_from_the_averaged_velocity() {
    // a free-falling sphere (no contact within the margin): v+ = v0 − g δt, and with midpoint
    // q+ = q0 + δt (v+ + v0)/2 — the exact parabola
    let mut sc = resting_sphere(Material::rigid(0.5), 1.0, 0.1, 5.0);
    sc.steps = 10;
    let mut sap = Sap::new(SapSettings::with_scheme(Scheme::Midpoint));
    let o = simulate(&sc, &mut sap, RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
    let t: f64 = 10.0 * sc.dt;
    let z = o.stepper.world().bodies[0].position.z;
    assert!((z - (5.0 - 0.5 * 9.81 * t * t)).abs() <= 1e-12, "{z}");
}

// ---------------------------------------------------------------- settings

#[test]
fn settings_validation_names_the_field() {
    let entry = harness::SolverEntry::of::<Sap>();
    let defaults = (entry.defaults)();
    assert!(entry.build(&defaults).is_ok());
    for (key, value) in [
        ("scheme", "leapfrog"),
        ("theta", "0.5"),
        ("rel_tolerance", "2"),
        ("max_iterations", "0"),
        ("beta", "0"),
        ("sigma", "-1"),
        ("alpha_max", "0.5"),
        ("ls_tolerance", "0"),
        ("rigid_tau_d_over_dt", "-1"),
    ] {
        let mut p = defaults.clone();
        p.set(key, value, "sap").unwrap();
        let e = p.decode::<SapSettings>("sap").unwrap_err().to_string();
        assert!(e.contains(&format!("'{key}'")) && e.contains(&format!("{key}:")), "{key}: {e}");
    }
    let mut p = defaults.clone();
    p.set("scheme", "custom", "sap").unwrap();
    assert!(p.decode::<SapSettings>("sap").is_err(), "custom needs theta and theta_vq in [0, 1]");
    p.set("theta", "0.5", "sap").unwrap();
    p.set("theta_vq", "1", "sap").unwrap();
    assert_eq!(p.decode::<SapSettings>("sap").unwrap().thetas(), (0.5, 1.0));
    let mut p = defaults.clone();
    p.set("scheme", "midpoint", "sap").unwrap();
    p.set("theta", "0.5", "sap").unwrap();
    assert_eq!(p.decode::<SapSettings>("sap").unwrap().thetas(), (0.5, 0.5));
    let mut bad = defaults;
    bad.0.insert("omgea".into(), serde_json::json!(1.0));
    assert!(bad.decode::<SapSettings>("sap").is_err());
    let _ = Params::default();
}
