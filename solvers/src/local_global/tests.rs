//! Physics and algebra tests of local_global on hand-built deformable worlds (contacts from
//! `geometry::detect`).

use super::*;
use harness::geometry;
use harness::model::{
    DeformableBody, ElasticMaterial, ElasticModel, Material, PrescribedMotion, StaticCollider, StaticShape, World,
};
use harness::{IterationLog, Settings, SolveStatus, Solver, StepSolution};
use nalgebra::{UnitQuaternion, Vector3};

fn settings(f: impl FnOnce(&mut LocalGlobalSettings)) -> LocalGlobalSettings {
    let mut s = LocalGlobalSettings::default();
    f(&mut s);
    s.validate().unwrap();
    s
}

/// Runs `steps` steps; returns the final world, the last solution and the logs.
fn run(mut world: World, dt: f64, steps: usize, solver: &mut LocalGlobal) -> (World, StepSolution, Vec<IterationLog>) {
    let mut last = None;
    let mut logs = vec![];
    let mut warm = harness::WarmStart::default();
    for _ in 0..steps {
        let contacts = geometry::detect(&world, 0.01);
        let p = world.step_problem(&contacts, dt, Some(&warm)).unwrap();
        let mut log = IterationLog::new();
        let sol = solver.step(&p, &mut log).unwrap();
        let q = sol.q.clone().unwrap();
        let mut next = world.clone();
        next.set_state(&q, &sol.v);
        drop(p);
        warm.impulses = contacts.contacts.iter().map(|c| c.key).zip(sol.impulses.iter().copied()).collect();
        warm.velocity = sol.v.clone();
        world = next;
        last = Some(sol);
        logs.push(log);
    }
    (world, last.unwrap(), logs)
}

fn column(log: &IterationLog, name: &str) -> Vec<f64> {
    let k = log.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no column {name}"));
    log.columns[k].clone()
}

/// A bar `1 × 0.2 × 0.2 m` (`cells` along x, 2 × 2 across), ARAP, ν = 0.45, ρ = 1000 (Table 3),
/// no gravity; its two end faces are turned about the bar axis by `±angle` over one step of `dt`
/// (prescribed motion), from rest — a large twist in one step.
fn twisting_bar(e: f64, cells: usize, angle: f64, dt: f64) -> World {
    let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: e, poisson_ratio: 0.45 };
    let mut b = DeformableBody::box_mesh(
        "bar",
        Vector3::new(0.0, -0.1, -0.1),
        Vector3::new(1.0, 0.2, 0.2),
        [cells, 2, 2],
        1000.0,
        mat,
        Material::rigid(0.0),
    );
    let end = |x: f64| -> Vec<usize> { (0..b.num_nodes()).filter(|&a| (b.rest[a].x - x).abs() < 1e-9).collect() };
    let (left, right) = (end(0.0), end(1.0));
    let spin = |nodes: Vec<usize>, sign: f64| PrescribedMotion {
        nodes,
        center: Vector3::zeros(),
        angular_velocity: Vector3::new(sign * angle / dt, 0.0, 0.0),
        linear_velocity: Vector3::zeros(),
    };
    b.boundary = vec![spin(left, -1.0), spin(right, 1.0)];
    let mut w = World::new();
    w.gravity = Vector3::zeros();
    w.deformables.push(b);
    w
}

/// One step of the twisting bar; the relative energy error per local-global iteration.
fn bar_errors(e: f64, global: &str, iterations: usize) -> Vec<f64> {
    let dt = 0.01;
    let world = twisting_bar(e, 8, 0.5, dt);
    let mut solver = LocalGlobal::new(settings(|s| {
        s.global_solve = harness::params::choice(global).unwrap();
        s.iterations = iterations;
        s.reference = true;
    }));
    let (_, _, logs) = run(world, dt, 1, &mut solver);
    column(&logs[0], "energy_rel_error")
}

/// A stiff box `0.2 m` cube (`cells³`), E = 1e8, ρ = 1000, ν = 0.3, on a plane inclined by
/// `deg` about y, friction `mu`, resting on it.
fn box_on_slope(deg: f64, mu: f64, cells: usize) -> World {
    let a = deg.to_radians();
    let n = Vector3::new(-a.sin(), 0.0, a.cos());
    let mut w = World::new();
    w.statics.push(StaticCollider {
        name: "slope".into(),
        shape: StaticShape::HalfSpace { normal: n, offset: 0.0 },
        material: Material::rigid(mu),
    });
    let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: 1e8, poisson_ratio: 0.3 };
    let mut b = DeformableBody::box_mesh(
        "box",
        Vector3::new(-0.1, -0.1, 0.0),
        Vector3::new(0.2, 0.2, 0.2),
        [cells; 3],
        1000.0,
        mat,
        Material::rigid(mu),
    );
    let rot = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, -a, 0.0));
    for x in b.rest.iter_mut() {
        *x = rot * *x;
    }
    b.positions = b.rest.clone();
    w.deformables.push(b);
    w
}

/// Mean down-slope velocity of the box's nodes.
fn downslope_speed(w: &World, deg: f64) -> f64 {
    let a = deg.to_radians();
    let d = Vector3::new(-a.cos(), 0.0, -a.sin());
    let b = &w.deformables[0];
    b.velocities.iter().map(|v| v.dot(&d)).sum::<f64>() / b.num_nodes() as f64
}

#[test]
fn settings_validate_and_entry_builds() {
    for bad in [
        LocalGlobalSettings { iterations: 0, ..Default::default() },
        LocalGlobalSettings { cr_iterations: 0, ..Default::default() },
        LocalGlobalSettings { tolerance: -1.0, ..Default::default() },
    ] {
        assert!(bad.validate().is_err());
    }
    LocalGlobalSettings::default().validate().unwrap();
    for (key, spelling) in [("global_solve", "lu"), ("ncp", "x"), ("r_factor", "x")] {
        let mut p = harness::Params::from_settings(&LocalGlobalSettings::default());
        p.set(key, spelling, "local_global").unwrap();
        assert!(p.decode::<LocalGlobalSettings>("local_global").is_err(), "{key} = {spelling}");
    }
    assert_eq!(harness::SolverEntry::of::<LocalGlobal>().name, "local_global");
}

/// The paper's iteration budget for Fig. 9: the 30-FPS frame (33.3 ms) at the twisting bar's
/// per-iteration cost of Table 3 (Local 0.87 ms + Global 0.27 ms for 5.3k vertices) ≈ 29
/// local-global iterations; 30 here.
const BUDGET: usize = 30;

fn first_below(errors: &[f64], level: f64) -> Option<usize> {
    errors.iter().position(|e| *e < level)
}

/// Fig. 9 claim, complete solve: on the twisting bar (the `twisting_bar` case's material and
/// geometry: ARAP, ν = 0.45, ρ = 1000, 1 × 0.2 × 0.2 m) the relative energy error against a
/// converged Newton `q*` falls below 1e-3 within the budget across the paper's stiffness sweep
/// (E = 1e5, 1e7, 1e9 here; 1e6 and 1e8 measured too), and decreases monotonically (PD on the ARAP
/// energy is a descent method). Measured: first below 1e-3 at iteration 6 / 18 / 25 /
/// 27 / 27 for E = 1e5 / 1e6 / 1e7 / 1e8 / 1e9; q* is converged to a Newton decrement of 1e-13 of
/// the energy drop, so errors down to ~1e-12 are resolved.
#[test]
fn twisting_bar_energy_error_below_1e_3_within_budget() {
    for e in [1e5, 1e7, 1e9] {
        let err = bar_errors(e, "sparse_inverse", BUDGET);
        assert_eq!(err.len(), BUDGET + 1);
        assert!((err[0] - 1.0).abs() < 1e-12);
        let k = first_below(&err, 1e-3);
        eprintln!("E = {e:e}: error {:.3e} after 5 iterations, first below 1e-3 at {k:?}", err[5]);
        assert!(k.is_some_and(|k| k <= BUDGET), "E = {e:e}: {err:?}");
        for w in err.windows(2) {
            assert!(w[1] <= w[0] + 1e-12, "E = {e:e}: not monotone {err:?}");
        }
    }
}

/// Fig. 9 claim, incomplete baseline: one Jacobi sweep per global step does not reach 1e-3 within
/// the same budget at E ≥ 1e7, where the complete solve does (measured on this 8 × 2 × 2 bar:
/// Jacobi first below 1e-3 at iterations 57 / 60 for E = 1e7 / 1e9; the paper's 5k-vertex bar
/// needs > 1000 — the Jacobi count grows with the mesh diameter).
#[test]
fn jacobi_baseline_misses_1e_3_within_budget_at_high_stiffness() {
    for e in [1e7, 1e9] {
        let jac = bar_errors(e, "jacobi", BUDGET);
        let si = bar_errors(e, "sparse_inverse", BUDGET);
        assert!(first_below(&jac, 1e-3).is_none(), "E = {e:e}: {jac:?}");
        assert!(first_below(&si, 1e-3).is_some(), "E = {e:e}: {si:?}");
        assert!(jac[BUDGET] > 3.0 * si[BUDGET], "E = {e:e}: jacobi {} vs complete {}", jac[BUDGET], si[BUDGET]);
    }
}

/// `SᵀS = A⁻¹`: sparse-inverse iterates equal pre-factorized Cholesky iterates up to rounding.
/// Contact-free (the twisting bar, 10 L-G iterations): positions agree to 1e-10 of the step's
/// largest displacement (round-off of two SpMVs vs two triangular solves, `κ(A)` ≈ 1e3, compounded
/// over 10 iterations). With contacts (stiff box on the slope, 5 steps × 5 non-smooth Newton
/// updates with unconverged 10-iteration CR solves, which amplify the round-off of `W`): 1e-7 of
/// the box size (measured 3.7e-9 m), total impulses to 1e-5 of the normal one (measured 1.8e-6).
#[test]
fn sparse_inverse_iterates_equal_cholesky_iterates() {
    let bar = |g: &str| {
        let mut solver = LocalGlobal::new(settings(|s| {
            s.global_solve = harness::params::choice(g).unwrap();
            s.iterations = 10;
        }));
        let w0 = twisting_bar(1e7, 8, 0.5, 0.01);
        let q0 = w0.positions();
        let (w, _, _) = run(w0, 0.01, 1, &mut solver);
        (q0, w.positions())
    };
    let (q0, qa) = bar("sparse_inverse");
    let (_, qb) = bar("cholesky");
    let disp = qa.iter().zip(&q0).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    let dq = qa.iter().zip(&qb).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(dq <= 1e-10 * disp, "bar: positions differ by {dq} (displacement {disp})");

    let mu = 10f64.to_radians().tan() + 0.05;
    let box_run = |g: &str| {
        let mut solver = LocalGlobal::new(settings(|s| s.global_solve = harness::params::choice(g).unwrap()));
        run(box_on_slope(10.0, mu, 2), 0.01, 5, &mut solver)
    };
    let (wa, sa, _) = box_run("sparse_inverse");
    let (wb, sb, _) = box_run("cholesky");
    let dq = wa.positions().iter().zip(&wb.positions()).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(dq < 1e-7 * 0.2, "box: positions differ by {dq}");
    // individual impulses of redundant contacts are not unique (README §Errata and derivations): compare the sums
    let sum = |s: &StepSolution| (0..3).map(|c| s.impulses.iter().map(|l| l[c]).sum::<f64>()).collect::<Vec<_>>();
    let (ta, tb) = (sum(&sa), sum(&sb));
    for c in 0..3 {
        assert!((ta[c] - tb[c]).abs() <= 1e-5 * ta[0].abs(), "{ta:?} vs {tb:?}");
    }
}

/// Runs the stiff box (E = 1e8, `cells³`) on the 10° slope for `steps` steps of 0.01 s with the
/// Fig. 7 settings (10 L-G, 24 CR iterations); returns the mean down-slope speed after every step
/// and the last step's log.
fn slope_speeds(dmu: f64, r_factor: &str, cells: usize, steps: usize) -> (Vec<f64>, IterationLog) {
    let deg = 10.0f64;
    let mu = deg.to_radians().tan() + dmu;
    let mut solver = LocalGlobal::new(settings(|s| {
        s.iterations = 10;
        s.cr_iterations = 24;
        s.r_factor = harness::params::choice(r_factor).unwrap();
    }));
    let mut world = box_on_slope(deg, mu, cells);
    let mut speeds = vec![];
    let mut last_log = IterationLog::new();
    let mut warm = harness::WarmStart::default();
    for _ in 0..steps {
        let (w, sol, logs) = step_warm(world, &mut solver, &mut warm);
        assert_eq!(sol.status, SolveStatus::Solved);
        speeds.push(downslope_speed(&w, deg));
        last_log = logs;
        world = w;
    }
    (speeds, last_log)
}

/// One step of 0.01 s from `world`, warm-started from and updating `warm`.
fn step_warm(
    world: World,
    solver: &mut LocalGlobal,
    warm: &mut harness::WarmStart,
) -> (World, StepSolution, IterationLog) {
    let contacts = geometry::detect(&world, 0.01);
    let p = world.step_problem(&contacts, 0.01, Some(warm)).unwrap();
    let mut log = IterationLog::new();
    let sol = solver.step(&p, &mut log).unwrap();
    let mut next = world.clone();
    next.set_state(sol.q.as_ref().unwrap(), &sol.v);
    drop(p);
    warm.impulses = contacts.contacts.iter().map(|c| c.key).zip(sol.impulses.iter().copied()).collect();
    warm.velocity = sol.v.clone();
    (next, sol, log)
}

/// Sliding acceleration `g (sin θ − μ cos θ)` at `μ = tan θ + dmu` (§7.5, Fig. 7).
fn slide_accel(dmu: f64) -> f64 {
    let a = 10f64.to_radians();
    9.81 * (a.sin() - (a.tan() + dmu) * a.cos())
}

/// Mean acceleration over the second half of a run (m/s²): `(v_N − v_{N/2}) / (N/2 · 0.01)`;
/// free of the settling transient of the first steps.
fn second_half_accel(v: &[f64]) -> f64 {
    let (n, k0) = (v.len(), v.len() / 2);
    (v[n - 1] - v[k0 - 1]) / ((n - k0) as f64 * 0.01)
}

/// Fig. 7 with the W-based preconditioner (Eq. 28), 3³-cell box (16 contacts), 0.2 s: the
/// threshold is resolved to 0.001 in μ, as the paper reports. μ* + 0.001 sticks (creep < 1e-4 m/s
/// after 0.1 s; measured 1.75e-5) and μ* − 0.001 slides: speed > 1e-3 m/s after 0.16 s (measured
/// 2.83e-3; analytic 1.55e-3 plus a ~1.3e-3 m/s settling kick of the first steps) and second-half
/// acceleration within 30 % of `g (sin θ − μ cos θ)` = 9.66e-3 m/s² (measured 7.46e-3: the
/// iterate's friction is 0.1 % above the cone bound, Σ|λ_f|/Σλ_n = 0.17551 vs μ = 0.17533, which
/// is ~20 % of this tiny net force). Tolerance of the acceleration, from the claim itself: friction
/// resolved to ±0.001 in μ means an effective friction coefficient within `μ ± 0.001`, i.e. an
/// acceleration within `g cos θ · 0.001` = 9.66e-3 m/s² of `g (sin θ − μ cos θ)` (100 % of this
/// small net acceleration; measured 23 %).
#[test]
fn stick_slip_threshold_with_delassus_preconditioner() {
    let (stick, _) = slope_speeds(0.001, "delassus", 3, 10);
    assert!(stick[9].abs() < 1e-4, "μ* + 0.001: {stick:?}");
    let (slide, _) = slope_speeds(-0.001, "delassus", 3, 16);
    let (acc, expect) = (second_half_accel(&slide), slide_accel(-0.001));
    assert!(slide[15] > 1e-3, "μ* − 0.001: {slide:?}");
    let resolution = 9.81 * 10f64.to_radians().cos() * 0.001;
    assert!((acc - expect).abs() < resolution, "μ* − 0.001: a = {acc} vs {expect}");
}

/// Perturbation of the ±0.001 claim (Fig. 7): with Macklin's mass-based preconditioner in place of
/// the W-based one (`r_factor = "mass"`, an existing setting) on the same 3³ box, μ* − 0.001
/// falsely sticks (creep below the 1e-3 m/s that the W preconditioner's slide exceeds), so the
/// threshold is not resolved to 0.001.
#[test]
fn stick_slip_threshold_at_0_001_fails_with_mass_preconditioner() {
    let (slide, _) = slope_speeds(-0.001, "mass", 3, 16);
    eprintln!("mass preconditioner, μ* − 0.001: {slide:?}");
    assert!(slide[15] <= 1e-3, "μ* − 0.001 slides with the mass preconditioner: {slide:?}");
}

/// Measured limitation (README "Stick/slip"): on the 2³-cell box (a 3 × 3 grid of 9 redundant
/// contacts) the paper's fixed-point friction rows lock into a period-2 cycle — over-loaded
/// contacts (|λ_f| ≈ 2 μλ_n) get a large frozen `E_f` and shed their load onto the others, then
/// back — so μ* − 0.001 falsely sticks (measured 2.9e-5 m/s) whatever the budget (the same with 300
/// L-G and exact 100-iteration CR solves). Asserted: false stick after 0.1 s, and the friction
/// residual of the last iterations alternating by more than 2× (measured 2.7e-3 / 1.6e-2 m/s).
#[test]
fn stick_slip_two_cell_box_cycles_and_falsely_sticks() {
    let (v, log) = slope_speeds(-0.001, "delassus", 2, 10);
    assert!(v[9].abs() < 1e-4, "{v:?}");
    let phi = column(&log, "ncp_friction_linf_mps");
    let k = phi.len() - 2; // the last row holds only the energy
    let (a, b) = (phi[k], phi[k - 1]);
    assert!(a.max(b) > 2.0 * a.min(b), "no cycle: {phi:?}");
}

/// Fig. 7 with Macklin's mass-based preconditioner on the same 3³ box: false sticking well below
/// μ* (μ* − 0.05 creeps below 1e-3 m/s after 0.1 s instead of sliding at 0.048 m/s; measured
/// 1.64e-4), and only μ* − 0.1 slides (second-half acceleration within 10 % of 0.966 m/s²;
/// measured 0.972) — precision 0.1, as the paper reports.
#[test]
fn stick_slip_threshold_with_mass_preconditioner_is_worse() {
    let (false_stick, _) = slope_speeds(-0.05, "mass", 3, 10);
    assert!(false_stick[9].abs() < 1e-3, "μ* − 0.05: {false_stick:?}");
    let (slide, _) = slope_speeds(-0.1, "mass", 3, 10);
    let (acc, expect) = (second_half_accel(&slide), slide_accel(-0.1));
    assert!((acc - expect).abs() < 0.1 * expect, "μ* − 0.1: a = {acc} vs {expect}");
}

/// Translation invariance: in free fall with no contacts or boundary conditions the
/// elastic forces sum to zero, so the linear momentum changes by exactly `h m g` per step
/// (tolerance 1e-9 relative: round-off of the global solves).
#[test]
fn free_fall_momentum_changes_by_h_m_g() {
    let mut w = box_on_slope(0.0, 0.5, 2);
    w.statics.clear();
    let (p0, m) = (w.deformables[0].linear_momentum(), w.deformables[0].total_mass());
    let mut solver = LocalGlobal::new(settings(|_| {}));
    let (w1, _, _) = run(w, 0.01, 3, &mut solver);
    let dp = w1.deformables[0].linear_momentum() - p0;
    let expect = Vector3::new(0.0, 0.0, -9.81 * m * 0.03);
    assert!((dp - expect).norm() < 1e-9 * expect.norm(), "{dp:?} vs {expect:?}");
}

/// Memory of `S` for several mesh sizes (paper Tables 1–2 trend): `S` grows far slower than the
/// dense inverse, so its share falls with the mesh size, and at the 6³ box (343 nodes) it is
/// already below the top of the paper's range at 5k–21k vertices (15.3 %, Tables 1–2): a share
/// that falls with size stays inside it at the paper's sizes (the 4600-vertex bar: 8.1 %,
/// `s_is_a_fraction_of_the_dense_inverse_at_the_papers_bar_size`). Printed with `--nocapture`.
#[test]
fn memory_table_of_s() {
    let mut ratios = vec![];
    eprintln!("| mesh | nodes | DOF | nnz(L) | nnz(S) | S (MB) | dense A^-1 (MB) | S / dense |");
    for cells in [2usize, 4, 6] {
        let mut w = box_on_slope(0.0, 0.5, cells);
        w.statics.clear();
        let mut solver = LocalGlobal::new(settings(|s| s.iterations = 1));
        let (_, _, _) = run(w.clone(), 0.01, 1, &mut solver);
        let m = solver.inverse_memory().unwrap();
        eprintln!(
            "| box {cells}^3 | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} |",
            w.deformables[0].num_nodes(),
            m.n,
            m.nnz_l,
            m.nnz_s,
            m.s_value_bytes as f64 / 1048576.0,
            m.dense_sym_bytes as f64 / 1048576.0,
            m.ratio()
        );
        ratios.push(m.ratio());
    }
    assert!(ratios.windows(2).all(|w| w[1] < w[0]), "{ratios:?}");
    assert!(ratios[2] <= PAPER_MAX_S_FRACTION, "{ratios:?}");
}

/// The largest share of `S` in a dense `A⁻¹` in Zeng et al.'s Tables 1–2 (5k–21k vertices).
const PAPER_MAX_S_FRACTION: f64 = 0.153;

/// Zeng et al. §7.2, Table 2 (bar row), a study (14 min in a debug build on a loaded 2-core
/// machine, so not in CI; `memory_table_of_s` checks the trend and the range there): at the
/// paper's smallest bar (1 × 0.2 × 0.2 m, 5.3k vertices, 26.4k tets) the sparse inverse factor `S`
/// takes 125.02 MB against 961.48 MB for the dense upper triangle of `A⁻¹`, 13.0 % (across Tables
/// 1–2, 5k–21k vertices: 3.3–15.3 %). On a bar of the same shape and about the same vertex count
/// (45 × 9 × 9 cells, 4600 vertices, 13 500 DOF) `S` takes 56.3 MB against 695 MB, 8.1 % (28.0 %
/// while `A` stored the exact-zero couplings between coordinates, README claims table). Asserted:
/// the share is at most the top of the paper's range. The same is printed (and asserted) for the
/// three bars of the Table 3 frame timings (`docs/gpu-timings.md`: 50 × 9 × 9, 65 × 12 × 12 and
/// 80 × 15 × 15 cells), so that the device memory measured there can be set beside `S`'s own size.
/// Run with `cargo test --release -p solvers s_is_a_fraction -- --ignored --nocapture`.
#[test]
#[ignore]
fn s_is_a_fraction_of_the_dense_inverse_at_the_papers_bar_size() {
    for cells in [[45, 9, 9], [50, 9, 9], [65, 12, 12], [80, 15, 15]] {
        let t0 = std::time::Instant::now();
        let mut w = twisting_bar(1e5, cells[0], 0.0, 0.01);
        let elastic = w.deformables[0].elastic;
        let mut bar = DeformableBody::box_mesh(
            "bar",
            Vector3::new(0.0, -0.1, -0.1),
            Vector3::new(1.0, 0.2, 0.2),
            cells,
            1000.0,
            elastic,
            Material::rigid(0.0),
        );
        bar.boundary = vec![PrescribedMotion::fixed((0..bar.num_nodes()).filter(|&a| bar.rest[a].x < 1e-9).collect())];
        w.deformables[0] = bar;
        let nodes = w.deformables[0].num_nodes();
        let mut solver = LocalGlobal::new(settings(|s| s.iterations = 1));
        run(w, 0.01, 1, &mut solver);
        let m = solver.inverse_memory().unwrap();
        eprintln!(
            "bar {cells:?}: {nodes} nodes, {} DOF, nnz(S) {}, S values {:.1} MiB, S as CSR {:.1} MiB, dense {:.1} MiB, \
             ratio {:.4} ({:?})",
            m.n,
            m.nnz_s,
            m.s_value_bytes as f64 / 1048576.0,
            m.s_csr_bytes as f64 / 1048576.0,
            m.dense_sym_bytes as f64 / 1048576.0,
            m.ratio(),
            t0.elapsed()
        );
        assert!(m.ratio() <= PAPER_MAX_S_FRACTION, "{cells:?}: {m:?}");
    }
}

/// The transfers of one step on `backend`'s memory layer: the constant model uploaded on the
/// first step only, the step's data uploaded before the loop, nothing but scalars inside the
/// loop, the result downloaded once after it. Every count derived from the step's structure
/// (`resident.rs`): the twisting bar (no contacts, sparse inverse) and the stick–slip box
/// (16 contacts, warm-started second step).
fn assert_device_resident_transfers(backend: kernels::backend::AnyBackend) {
    use kernels::backend::dense_is_smaller;
    // uploads of the constant model: elements (DOFs, G, two weights, ones), mass, the assembly
    // and injection matrices, S and Sᵀ (CSR: three arrays each)
    const MODEL_UPLOADS: usize = 5 + 1 + 3 + 3 + 2 * 3;
    // scalars per iteration: mass term and element energies, then without contacts max |Δx|;
    // with contacts max |φ_n|, max |φ_f|, max |E|, stick and slip counts, the CR loop's dots
    // (4 + 4 per CR iteration; one more if it stops at round-off), max |Δx|, max |λ|
    let (k_lg, budget) = (6usize, 10usize);
    let mut solver = LocalGlobal::with_backend(settings(|s| s.iterations = k_lg), backend.clone());
    let world = twisting_bar(1e7, 8, 0.5, 0.01);
    let contacts = geometry::detect(&world, 0.01);
    let p = world.step_problem(&contacts, 0.01, None).unwrap();
    let (nv, nf) = (p.nv(), p.nv() - p.prescribed.len());
    for step in 0..2 {
        let mut log = IterationLog::new();
        solver.step(&p, &mut log).unwrap();
        let t = solver.last_transfers().expect("a step ran");
        let model = if step == 0 { MODEL_UPLOADS } else { 0 };
        assert_eq!((t.model.uploads, t.model.downloads), (model, 0), "step {step}: {t:?}");
        // q̃ and q_p (nv), M q̃ − A_fp q_p and x⁰ (nf)
        assert_eq!((t.setup.uploads, t.setup.upload_bytes), (4, 8 * (2 * nv + 2 * nf)), "{t:?}");
        assert_eq!((t.setup.downloads, t.setup.scalar_reads), (0, 0), "{t:?}");
        assert_eq!(t.iterations.vector_copies(), 0, "a vector copy inside the loop: {t:?}");
        assert_eq!(t.iterations.scalar_reads, 3 * k_lg + 2, "{t:?}");
        assert_eq!((t.finish.uploads, t.finish.downloads, t.finish.download_bytes), (0, 1, 8 * nv), "{t:?}");
    }

    let mu = 10f64.to_radians().tan() - 0.05;
    let mut solver = LocalGlobal::with_backend(settings(|s| s.cr_iterations = budget), backend);
    let mut world = box_on_slope(10.0, mu, 3);
    let mut warm = harness::WarmStart::default();
    for step in 0..2 {
        let contacts = geometry::detect(&world, 0.01);
        let p = world.step_problem(&contacts, 0.01, Some(&warm)).unwrap();
        let (nv, nc) = (p.nv(), p.nc());
        assert_eq!(nc, 16, "the 3³ box rests on its 16 bottom nodes");
        let m = 3 * nc;
        let mut log = IterationLog::new();
        let sol = solver.step(&p, &mut log).unwrap();
        let t = solver.last_transfers().expect("a step ran");
        assert_eq!(t.model.uploads, if step == 0 { MODEL_UPLOADS } else { 0 }, "{t:?}");
        // W: one copy dense (16 contacts: 48 × 48), else three
        let fixed = super::problem::fixed_dofs(&p);
        let key = super::model::ModelKey::of(p.model(), 0.01, &fixed);
        let mut model = super::model::Model::build(&p, key, &fixed, GlobalSolve::SparseInverse).unwrap();
        let w = super::problem::ContactSystem::new(&p, &mut model, RFactor::Delassus).w;
        let w_uploads = if dense_is_smaller(m, w.nnz()) { 1 } else { 3 };
        // + q_t; H, H_free, H_freeᵀ; W; diag W; gap, μ, r_n, r_f; λ⁰; ones (m, nc)
        assert_eq!(t.setup.uploads, 4 + 1 + 9 + w_uploads + 1 + 4 + 1 + 2, "step {step}: {t:?}");
        assert_eq!(t.setup.downloads, 0, "{t:?}");
        assert_eq!(t.iterations.vector_copies(), 0, "a vector copy inside the loop: {t:?}");
        let cr = column(&log, "cr_iterations");
        let cr: Vec<usize> = cr.iter().filter(|v| v.is_finite()).map(|&v| v as usize).collect();
        assert_eq!(cr.len(), LocalGlobalSettings::default().iterations, "one CR solve per L-G iteration");
        let base: usize = cr.iter().map(|k| 13 + 4 * k).sum::<usize>() + 2;
        let stops = cr.iter().filter(|&&k| k < budget).count();
        assert!((base..=base + stops).contains(&t.iterations.scalar_reads), "{t:?} vs {base} + ≤ {stops}");
        // q (nv), λ and Ω (m each)
        assert_eq!((t.finish.downloads, t.finish.download_bytes), (3, 8 * (nv + 2 * m)), "{t:?}");
        assert_eq!(t.finish.uploads, 0);
        let mut next = world.clone();
        next.set_state(sol.q.as_ref().unwrap(), &sol.v);
        drop(p);
        warm.impulses = contacts.contacts.iter().map(|c| c.key).zip(sol.impulses.iter().copied()).collect();
        warm.velocity = sol.v.clone();
        world = next;
    }
}

/// Issue 22 item 2 on the CPU: the CPU backend runs the device-resident step on its host mirror;
/// its loop moves no vector between host and "device" (see [`assert_device_resident_transfers`]).
#[test]
fn device_resident_step_moves_no_vector_inside_the_loop_on_the_cpu_mirror() {
    assert_device_resident_transfers(kernels::backend::AnyBackend::Cpu);
}

/// The same on the CUDA device, where one can start; else skipped with the reason.
#[cfg(feature = "gpu")]
#[test]
fn device_resident_step_moves_no_vector_inside_the_loop_on_the_gpu() {
    match kernels::backend::try_gpu(kernels::backend::Precision::F64) {
        Ok(backend) => assert_device_resident_transfers(backend),
        Err(reason) => println!("skipping GPU test: {reason}"),
    }
}
