//! Tests of the pyramid LCP solvers: Lemke's answer checked against the pyramid model's
//! conditions written independently of the LCP matrix, block PGS against Lemke, the anisotropy
//! against the inscribed polygon's geometry, and steps on hand-built worlds.

use super::*;
use api::{DelassusProblem, IterationLog, Settings, Solver};
use harness::model::{Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{ColliderId, ContactKey, ContactSet, Params, SolveStatus};
use nalgebra::Vector3;
use rstest::rstest;
use std::f64::consts::PI;

/// xorshift64 in [−1, 1).
fn rand(s: &mut u64) -> f64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    (*s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A random Delassus problem of `nc` contacts: `W = J Jᵀ + 0.1 I` with a random `J`
/// (`3 nc × 3 nc`, so `W` is symmetric positive definite as a real `J M⁻¹ Jᵀ` with a regularised
/// mass), `q` random with the normal parts negative (every contact pushed in), `μ ∈ [0.1, 0.9]`.
fn random_problem(nc: usize, seed: u64) -> DelassusProblem {
    let mut s = seed;
    let n = 3 * nc;
    let j: Vec<f64> = (0..n * n).map(|_| rand(&mut s)).collect();
    let mut t = vec![];
    for a in 0..n {
        for b in 0..n {
            let mut x = (0..n).map(|k| j[a * n + k] * j[b * n + k]).sum::<f64>();
            if a == b {
                x += 0.1;
            }
            t.push((a, b, x));
        }
    }
    let q: Vec<f64> = (0..n).map(|a| if a % 3 == 0 { -1.0 + 0.5 * rand(&mut s) } else { rand(&mut s) }).collect();
    let mu: Vec<f64> = (0..nc).map(|_| 0.5 + 0.4 * rand(&mut s)).collect();
    DelassusProblem::from_triplets(&t, q, mu).unwrap()
}

/// The pyramid model's conditions at `r`, written without the LCP: with `u = W r + q`, per
/// contact `r_n ≥ 0`, `u_n ≥ 0`, `r_n u_n = 0`; `r_t` inside the inscribed `d`-gon of radius
/// `μ r_n` (edge normals at `θ_m + π/d`, inradius `μ r_n cos(π/d)`); maximal dissipation over the
/// polygon, `u_tᵀ r_t = min_m μ r_n d_mᵀ u_t`. Returns the largest violation.
fn pyramid_violation(p: &DelassusProblem, r: &[[f64; 3]], d: usize) -> f64 {
    let mut worst = 0.0f64;
    for (i, ri) in r.iter().enumerate() {
        let u = p.velocity_of(i, r);
        let mu = p.mu()[i];
        worst = worst.max(-ri[0]).max(-u[0]).max((ri[0] * u[0]).abs());
        let inradius = mu * ri[0] * (PI / d as f64).cos();
        let mut min_vertex = f64::INFINITY;
        for m in 0..d {
            let th = 2.0 * PI * m as f64 / d as f64;
            let (ce, se) = ((th + PI / d as f64).cos(), (th + PI / d as f64).sin());
            worst = worst.max(ri[1] * ce + ri[2] * se - inradius);
            min_vertex = min_vertex.min(mu * ri[0] * (th.cos() * u[1] + th.sin() * u[2]));
        }
        worst = worst.max((u[1] * ri[1] + u[2] * ri[2] - min_vertex).abs());
    }
    worst
}

fn lemke(facets: usize) -> LcpLemke {
    LcpLemke::new(LemkeSettings { facets, ..LemkeSettings::default() })
}

fn pgs(facets: usize, tolerance: f64) -> LcpPgs {
    LcpPgs::new(LcpPgsSettings { facets, tolerance, max_iterations: 100_000, ..LcpPgsSettings::default() })
}

/// Lemke's answer satisfies the pyramid model exactly (to 1e-10: pivoting over ~40 variables
/// loses a few digits of the O(1) data) on 10 random 4-contact problems, for 4, 8 and 16 facets,
/// and its own residual column is that small too.
#[rstest]
fn lemke_solves_random_contact_problems_exactly(#[values(4, 8, 16)] facets: usize) {
    for seed in 1..=10u64 {
        let p = random_problem(4, seed * 7919);
        let mut log = IterationLog::new();
        let sol = lemke(facets).solve_delassus(&p, &mut log).unwrap();
        assert_eq!(sol.status, SolveStatus::Solved, "seed {seed}");
        let v = pyramid_violation(&p, &sol.impulses, facets);
        assert!(v < 1e-10, "seed {seed}, {facets} facets: violation {v:e}");
        assert!(MODEL.own_residual(&log).unwrap() < 1e-10);
        // the same answer does not satisfy the model of another facet count (the check can fail)
        if sol.impulses.iter().any(|r| r[1].hypot(r[2]) > 1e-3) {
            assert!(pyramid_violation(&p, &sol.impulses, 2 * facets) > 1e-6, "seed {seed}");
        }
    }
}

/// Block PGS on the LCP converges to Lemke's answer: on diagonally dominant problems (a unique
/// solution) the impulses agree to `1e3 ×` PGS's tolerance 1e-12 relative to the largest impulse.
#[rstest]
fn pgs_on_the_lcp_converges_to_lemkes_answer(#[values(4, 16)] facets: usize) {
    for seed in 1..=5u64 {
        let base = random_problem(3, seed * 104_729);
        // make W diagonally dominant: W + 6 I
        let n = 3 * base.nc();
        let mut t = vec![];
        for i in 0..base.nc() {
            for (j, b) in base.row(i) {
                for (r, row) in b.iter().enumerate() {
                    for (c, x) in row.iter().enumerate() {
                        let extra = if 3 * i + r == 3 * j + c { 6.0 } else { 0.0 };
                        t.push((3 * i + r, 3 * j + c, x + extra));
                    }
                }
            }
        }
        let p = DelassusProblem::from_triplets(&t, base.q().to_vec(), base.mu().to_vec()).unwrap();
        assert_eq!(p.nc() * 3, n);
        let exact = lemke(facets).solve_delassus(&p, &mut IterationLog::new()).unwrap();
        let mut log = IterationLog::new();
        let it = pgs(facets, 1e-12).solve_delassus(&p, &mut log).unwrap();
        assert_eq!(it.status, SolveStatus::Solved);
        let scale = exact.impulses.iter().flatten().fold(0.0f64, |m, x| m.max(x.abs()));
        let err = exact
            .impulses
            .iter()
            .flatten()
            .zip(it.impulses.iter().flatten())
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(err < 1e-9 * scale, "seed {seed}: {err:e} (scale {scale})");
        assert!(MODEL.own_residual(&log).unwrap() < 1e-8);
    }
}

/// The anisotropy of the inscribed `d`-gon (README "Anisotropy"): one contact, `W = I`, pressed in
/// (`q_n = −1`, so `r_n = 1`) and driven hard along the tangent direction at angle `ψ` from `t1`.
/// The friction impulse is the projection of `−q_t` onto the polygon: along a facet direction
/// (`ψ = 0`) the vertex, `μ r_n`; mid-way between two (`ψ = π/d`) the edge's midpoint,
/// `μ r_n cos(π/d)`, with no sideways part. Exact to rounding for both methods.
#[rstest]
fn friction_along_a_direction_follows_the_inscribed_polygon(
    #[values(4, 8, 16)] facets: usize,
    #[values(false, true)] mid_edge: bool,
    #[values(false, true)] use_pgs: bool,
) {
    let (mu, drive) = (0.5, 10.0);
    let psi = if mid_edge { PI / facets as f64 } else { 0.0 } + 2.0 * PI / facets as f64;
    let t: Vec<_> = (0..3).map(|k| (k, k, 1.0)).collect();
    let p = DelassusProblem::from_triplets(&t, vec![-1.0, drive * psi.cos(), drive * psi.sin()], vec![mu]).unwrap();
    let mut log = IterationLog::new();
    let r = if use_pgs {
        pgs(facets, 1e-12).solve_delassus(&p, &mut log).unwrap().impulses[0]
    } else {
        lemke(facets).solve_delassus(&p, &mut log).unwrap().impulses[0]
    };
    let expected = if mid_edge { mu * (PI / facets as f64).cos() } else { mu };
    let (along, sideways) = (-(r[1] * psi.cos() + r[2] * psi.sin()), -r[1] * psi.sin() + r[2] * psi.cos());
    assert!((r[0] - 1.0).abs() < 1e-12, "r_n = {}", r[0]);
    assert!((along - expected).abs() < 1e-12, "{facets} facets, psi {psi}: {along} vs {expected}");
    assert!(sideways.abs() < 1e-12, "sideways {sideways}");
}

const G: f64 = 9.81;
const DT: f64 = 0.01;

/// A unit cube (mass `m`) resting on the ground `z = 0` with its four bottom corners in contact,
/// gravity `g` tilted by `a` from `−z` towards the horizontal direction at angle `psi` from `x`
/// (= `t1` for the normal `z`), friction `mu`.
fn box_on_ground(m: f64, a: f64, psi: f64, mu: f64) -> (World, ContactSet) {
    let mat = Material::rigid(mu);
    let mut w = World::new();
    w.gravity = G * Vector3::new(a.sin() * psi.cos(), a.sin() * psi.sin(), -a.cos());
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material: mat,
    });
    let h = 0.05;
    w.bodies.push(RigidBody::new("box", Shape::Box { half_extents: [h; 3] }, m, Vector3::new(0.0, 0.0, h), mat));
    let contacts = (0..4)
        .map(|k| {
            let corner = Vector3::new(if k & 1 == 0 { -h } else { h }, if k & 2 == 0 { -h } else { h }, 0.0);
            let key = ContactKey { a: ColliderId::Body(0), b: ColliderId::Static(0), feature: k };
            w.contact(key, corner, Vector3::z(), 0.0)
        })
        .collect();
    (w, ContactSet { contacts })
}

/// The resting box (degenerate: four corners, tied ratio tests): Lemke ends `Solved` with the
/// total normal impulse `m g dt` and `v+ = 0` (to rounding); block PGS agrees.
#[test]
fn resting_box_on_four_corners() {
    let (w, cs) = box_on_ground(2.0, 0.0, 0.0, 0.5);
    let p = w.step_problem(&cs, DT, None).unwrap();
    for sol in [
        lemke(4).step(&p, &mut IterationLog::new()).unwrap(),
        pgs(4, 1e-10).step(&p, &mut IterationLog::new()).unwrap(),
    ] {
        assert_eq!(sol.status, SolveStatus::Solved);
        let total: f64 = sol.impulses.iter().map(|l| l[0]).sum();
        assert!((total - 2.0 * G * DT).abs() < 1e-9 * G * DT, "{total}");
        assert!(sol.v.iter().all(|x| x.abs() < 1e-9), "{:?}", sol.v);
    }
}

/// The box on a tilted-gravity ground, sliding (`μ < tan a`): along a facet direction (`ψ = 0`)
/// the velocity gain is the exact cone's `dt g (sin a − μ cos a)`; mid-way (`ψ = π/4` with 4
/// facets) it is `dt g (sin a − μ cos(π/4) cos a)` straight down the slope — the anisotropy in one
/// step (1e-9: Lemke is exact to rounding). Sticking (`μ > tan a / cos(π/4)`) holds it still.
#[rstest]
fn box_slides_with_the_pyramids_friction(#[values(false, true)] mid_edge: bool) {
    let (a, mu) = (30f64.to_radians(), 0.3);
    let psi = if mid_edge { PI / 4.0 } else { 0.0 };
    let (w, cs) = box_on_ground(1.0, a, psi, mu);
    let p = w.step_problem(&cs, DT, None).unwrap();
    let sol = lemke(4).step(&p, &mut IterationLog::new()).unwrap();
    let factor = if mid_edge { (PI / 4.0).cos() } else { 1.0 };
    let gain = DT * G * (a.sin() - mu * factor * a.cos());
    let (along, sideways) = (sol.v[0] * psi.cos() + sol.v[1] * psi.sin(), -sol.v[0] * psi.sin() + sol.v[1] * psi.cos());
    assert!((along - gain).abs() < 1e-9, "{along} vs {gain}");
    assert!(sideways.abs() < 1e-9 && sol.v[2].abs() < 1e-9, "{:?}", sol.v);
    let (w, cs) = box_on_ground(1.0, a, psi, 0.9);
    let p = w.step_problem(&cs, DT, None).unwrap();
    let sol = lemke(4).step(&p, &mut IterationLog::new()).unwrap();
    assert!(sol.v.iter().all(|x| x.abs() < 1e-9), "{:?}", sol.v);
}

/// NaN in the data (a contact's gap) is an error, not a panic.
#[test]
fn nan_in_the_data_is_refused() {
    let (w, mut cs) = box_on_ground(1.0, 0.0, 0.0, 0.5);
    let key = cs.contacts[0].key;
    cs.contacts[0] = w.contact(key, Vector3::zeros(), Vector3::z(), f64::NAN);
    let p = w.step_problem(&cs, DT, None).unwrap();
    assert!(matches!(lemke(4).step(&p, &mut IterationLog::new()), Err(api::SolveError::NonFinite { .. })));
    assert!(matches!(pgs(4, 1e-8).step(&p, &mut IterationLog::new()), Err(api::SolveError::NonFinite { .. })));
}

/// Invalid settings fail decoding naming their field; unknown keys are rejected.
#[test]
fn settings_are_validated() {
    fn bad<S: Settings + serde::Serialize + Default>(owner: &str, key: &str, value: &str) {
        let mut p = Params::from_settings(&S::default());
        let decoded = p
            .set(key, value, owner)
            .map_err(|e| e.to_string())
            .and_then(|_| p.decode::<S>(owner).map(|_| ()).map_err(|e| e.to_string()));
        let e = decoded.expect_err("invalid value accepted");
        assert!(e.contains(key), "{e}");
    }
    for (k, v) in [("facets", "2"), ("facets", "65"), ("max_pivots", "0"), ("tolerance", "0")] {
        bad::<LemkeSettings>("lcp_lemke", k, v);
    }
    for (k, v) in [("facets", "2"), ("max_iterations", "0"), ("tolerance", "-1")] {
        bad::<LcpPgsSettings>("lcp_pgs", k, v);
    }
    let mut p = Params::from_settings(&LcpPgsSettings::default());
    assert!(p.set("omega", "1", "lcp_pgs").is_err() || p.decode::<LcpPgsSettings>("lcp_pgs").is_err());
    LemkeSettings::default().validate().unwrap();
    LcpPgsSettings::default().validate().unwrap();
    assert_eq!(harness::SolverEntry::of::<LcpLemke>().name, "lcp_lemke");
    assert_eq!(harness::SolverEntry::of::<LcpPgs>().name, "lcp_pgs");
}

/// Lemke never ends on a ray on one contact with a positive definite `W` (the LCP has a solution:
/// `σ = max_m(−d_mᵀ q_t)` and `λ = 0` when separating), pressed or separating, including the
/// degenerate data of contacts at rest (`q_t = 0`) and ill-conditioned blocks (eigenvalues
/// spread by 1e4): 20000 random problems per facet count. Before the degenerate-zero threshold
/// of `kernels::lcp` this cycled (8 facets); with the covering vector 1 on the `σ` rows it ended
/// on rays with separating contacts (README "Choices").
#[rstest]
fn lemke_never_rays_on_one_contact(#[values(4, 8)] facets: usize) {
    let mut s = 0xdead_beef_u64;
    for trial in 0..20000 {
        let a: Vec<f64> = (0..9).map(|_| rand(&mut s)).collect();
        let scale = [1.0, 10f64.powf(2.0 * rand(&mut s)), 10f64.powf(2.0 * rand(&mut s))];
        let mut t = vec![];
        for r in 0..3 {
            for c in 0..3 {
                let x = (0..3).map(|k| a[r * 3 + k] * a[c * 3 + k] * scale[k]).sum::<f64>()
                    + if r == c { 1e-3 } else { 0.0 };
                t.push((r, c, x));
            }
        }
        let rest = trial % 2 == 0;
        let qn = if trial % 3 == 0 { rand(&mut s) } else { -rand(&mut s).abs() };
        let q = vec![qn, if rest { 0.0 } else { rand(&mut s) }, if rest { 0.0 } else { rand(&mut s) }];
        let p = DelassusProblem::from_triplets(&t, q, vec![0.5 + 0.4 * rand(&mut s)]).unwrap();
        let sol = lemke(facets).solve_delassus(&p, &mut IterationLog::new());
        let sol = sol.unwrap_or_else(|e| panic!("trial {trial}: {e}"));
        let size = sol.impulses[0].iter().fold(1.0f64, |m, x| m.max(x.abs()));
        let v = pyramid_violation(&p, &sol.impulses, facets);
        assert!(v < 1e-9 * size * size, "trial {trial}: {v:e}, {:?} {:?}", sol.impulses, sol.status);
    }
}
