//! Velocity-level solvers on FEM deformable bodies through the linearised implicit step of
//! `toolkit::implicit` (`A = M + δt² K`): SAP (cost `½‖v − v*‖²_A + ℓ_R`, an extension beyond
//! Castro et al., as Drake), PGS (Gauss–Seidel on `W = J A⁻¹ Jᵀ`), Drumwright (`A` for `M` in
//! the momentum rows of the lifted cone program, `J A⁻¹ Jᵀ` in the reduced one), CANAL (the
//! AL surrogate (22) with `A` for `M` and `A v*` for `M v*`) and SubADMM (an FEM body is one unit
//! whose v-step matrix is `A' + β Σ JᵀJ`); all extensions beyond the papers.
//! Physics asserted: a bar hanging from its clamped face reaches the FEM model's static
//! equilibrium (free end near `ρ g L²/(2E)`), and so does a column standing on rigid ground
//! (CANAL); free fall conserves momentum; prescribed DOFs come back exactly, also under contact;
//! one step of the elastic slope agrees with nsn (the nonlinear backward-Euler Newton) within
//! bounds derived from each solver's contact model and tolerance; a rigid box on the column is
//! the same step for SubADMM's three splits and CANAL.

use harness::model::{
    DeformableBody, ElasticMaterial, ElasticModel, Material, PrescribedMotion, StaticCollider, StaticShape, World,
};
use harness::runner::{self, Suite};
use harness::stepper::{simulate, RunOptions, Stepper};
use harness::{Capabilities, ContactSet, IterationLog, Scenario, Solver, StepProblem};
use nalgebra::Vector3;
use rstest::rstest;

mod common;
use common::solver;

/// The solver `name` with its default settings; `drumwright-reduced` is drumwright with the
/// paper's reduced form (Appendix A) instead of the default lifted one, `subadmm-none` SubADMM
/// with one global system (split `none`) instead of one per subsystem.
fn named(name: &str) -> Box<dyn Solver> {
    match name {
        "drumwright-reduced" => solver("drumwright", &[("form", "reduced")]),
        "subadmm-none" => solver("subadmm", &[("split", "none")]),
        _ => solver(name, &[]),
    }
}

/// clarabel's gap and feasibility tolerance in [`tight`] drumwright.
const DRUMWRIGHT_TIGHT_TOLERANCE: f64 = 1e-10;

/// Tight settings: the solvers' own stopping tolerances far below the assertions' (so the
/// assertions grade the contact models, not the stopping tests). SubADMM gets a budget that lets
/// its relative residuals reach 1e-10 (first order: 59 and 110 iterations on the elastic slope's
/// first step), so that it stops on its tolerance after a run of iterations at one β.
fn tight(name: &str) -> Box<dyn Solver> {
    let ipm = DRUMWRIGHT_TIGHT_TOLERANCE.to_string();
    match name {
        "sap" => solver(name, &[("rel_tolerance", "1e-12"), ("abs_tolerance", "1e-14"), ("max_iterations", "200")]),
        "pgs" => solver(name, &[("tolerance", "1e-12"), ("max_iterations", "100000")]),
        "drumwright" => solver(name, &[("tolerance", &ipm)]),
        "drumwright-reduced" => solver("drumwright", &[("form", "reduced"), ("tolerance", &ipm)]),
        "subadmm" => solver(name, &[("tolerance", "1e-10"), ("max_iterations", "2000")]),
        _ => solver(name, &[]),
    }
}

/// A co-rotational column `[0, w]² × [0, L]` (ν = 0, 4 cells high) on the ground `z ≥ 0`.
fn column(e: f64, rho: f64, l: f64) -> World {
    let mut w = World::new();
    let mat = ElasticMaterial { model: ElasticModel::CoRotational, youngs_modulus: e, poisson_ratio: 0.0 };
    w.deformables.push(DeformableBody::box_mesh(
        "column",
        Vector3::new(-0.1, -0.1, 0.0),
        Vector3::new(0.2, 0.2, l),
        [1, 1, 4],
        rho,
        mat,
        Material::rigid(0.5),
    ));
    w.statics.push(StaticCollider {
        name: "ground".into(),
        shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
        material: Material::rigid(0.5),
    });
    w
}

/// The static equilibrium `f(q) = m g − ∂U/∂x = 0` of `world`'s free DOFs (prescribed DOFs
/// held), by Newton's method with the exact (unprojected) elastic Hessian, dense: the oracle of
/// the FEM model itself, independent of any time stepping.
fn static_equilibrium(mut world: World, prescribed: &[usize]) -> World {
    let nv = world.layout().nv;
    let free: Vec<usize> = (0..nv).filter(|k| !prescribed.contains(k)).collect();
    for _ in 0..50 {
        let f = world.forces();
        let h = world.elastic_hessian(false).unwrap().to_dense();
        let hf = nalgebra::DMatrix::from_fn(free.len(), free.len(), |i, j| h[free[i]][free[j]]);
        let ff = nalgebra::DVector::from_iterator(free.len(), free.iter().map(|&k| f[k]));
        let dx = hf.lu().solve(&ff).unwrap();
        let mut q = world.positions();
        for (i, &k) in free.iter().enumerate() {
            q[k] += dx[i];
        }
        world.set_state(&q, &vec![0.0; nv]);
        if dx.amax() < 1e-15 {
            break;
        }
    }
    world
}

/// A co-rotational bar hanging from its clamped (prescribed) top face settles to the static
/// equilibrium of the FEM model: at rest the linearised implicit step leaves `f(q) = 0` on the
/// free DOFs, whatever the linearisation. The oracle is that equilibrium computed by Newton on
/// `f` ([`static_equilibrium`]); the free end's drop is about `ρ g L²/(2E)` (the 1D bar; the
/// 1 × 1-cell section's tets are not exactly 1D, so only the order of magnitude is asserted
/// against it: within 20 %). Steps of `ω₁ δt = 5` (`ω₁ = π c/(2L)`, the lowest mode) damp the
/// start-up vibration by about `1/(1 + 25)` per step, below 1e-13 after the 30 steps; 1e-9 of the
/// drop leaves a margin of 1e4 for that and for round-off.
#[rstest]
fn hanging_bar_reaches_the_static_deflection(#[values("sap", "pgs", "drumwright", "canal", "subadmm")] name: &str) {
    let (e, rho, l, g): (f64, f64, f64, f64) = (1e6, 1000.0, 0.5, 9.81);
    let mut world = column(e, rho, l);
    world.statics.clear();
    world.gravity = Vector3::new(0.0, 0.0, -g);
    let bar = &mut world.deformables[0];
    let top: Vec<usize> = (0..bar.num_nodes()).filter(|&a| bar.rest[a].z > l - 1e-9).collect();
    let fixed: Vec<usize> = top.iter().flat_map(|&a| (0..3).map(move |i| 3 * a + i)).collect();
    bar.boundary.push(PrescribedMotion::fixed(top));
    let oracle = static_equilibrium(world.clone(), &fixed);
    let sc = settling(world, e, rho, l);
    let mut s = solver(name, &[]);
    let o = simulate(&sc, s.as_mut(), RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
    assert!(o.failure.is_none(), "{name}: {:?}", o.failure);
    let (bar, exact) = (&o.stepper.world().deformables[0], &oracle.deformables[0]);
    let analytic = rho * g * l * l / (2.0 * e);
    for a in (0..bar.num_nodes()).filter(|&a| bar.rest[a].z < 1e-9) {
        let (drop, want) = (bar.rest[a].z - bar.positions[a].z, exact.rest[a].z - exact.positions[a].z);
        assert!(
            (bar.positions[a] - exact.positions[a]).norm() < 1e-9 * want,
            "{name}: node {a} drops {drop}, equilibrium {want}"
        );
        assert!((want - analytic).abs() < 0.2 * analytic, "equilibrium drop {want} vs 1D {analytic}");
    }
}

/// 30 steps of `world` (a column of length `l`, Young's modulus `e`, density `rho`) with
/// `ω₁ δt = 5` for its first axial mode `ω₁ = π √(E/ρ) / 2l`: the implicit step damps that mode by
/// `1/(1 + 25)` per step, so the column settles to its static equilibrium.
fn settling(world: World, e: f64, rho: f64, l: f64) -> Scenario {
    let omega1 = std::f64::consts::PI * (e / rho).sqrt() / (2.0 * l);
    Scenario {
        world,
        dt: 5.0 / omega1,
        steps: 30,
        margin: 0.01,
        needs: Capabilities { deformable_bodies: true, ..Default::default() },
    }
}

/// The column standing on rigid ground with friction (μ = 0.5) settles to the static equilibrium
/// of the FEM model with its base nodes held where they stand: rigid contact keeps them at
/// `z = 0` and, the material having ν = 0, the base carries almost no shear, far inside the
/// friction cone, so they stick. CANAL's contacts are exact at its fixed point, so the oracle is
/// [`static_equilibrium`] with the base DOFs prescribed, to within what the stopping tests leave:
/// per step the velocity is within `δv = (2 ε_λ + 2 ε_N)(‖A v*‖ + ‖λ‖)/m_min` of the exact step
/// (derivation at `elastic_slope_step_agrees_with_nsn`), and the implicit step damps a position
/// error by `1/(1 + (ω₁δt)²) = 1/26` per step (`ω₁ δt = 5` as for the hanging bar), so the
/// positions settle within `δt δv/(1 − 1/26)`, bounded by `2 δt δv`; plus the hanging bar's
/// `1e-9` of the drop for the start-up vibration.
#[test]
fn canal_column_on_the_ground_reaches_the_static_shortening() {
    let (e, rho, l, g): (f64, f64, f64, f64) = (1e6, 1000.0, 0.5, 9.81);
    let mut world = column(e, rho, l);
    world.gravity = Vector3::new(0.0, 0.0, -g);
    let bar = &world.deformables[0];
    let base: Vec<usize> =
        (0..bar.num_nodes()).filter(|&a| bar.rest[a].z < 1e-9).flat_map(|a| (0..3).map(move |i| 3 * a + i)).collect();
    let oracle = static_equilibrium(world.clone(), &base);
    let sc = settling(world, e, rho, l);
    let mut canal = solver("canal", &[]);
    let mut stepper = Stepper::new(&sc);
    let mut dv = 0.0f64;
    for _ in 0..sc.steps {
        let p = stepper.problem().unwrap();
        assert_eq!(p.nc(), 4, "the base's four nodes touch the ground");
        let sol = canal.step(&p, &mut IterationLog::default()).unwrap();
        assert_eq!(sol.status, harness::SolveStatus::Solved);
        dv = dv.max(canal_velocity_bound(&p, &sol));
        drop(p);
        stepper.advance(&sol);
    }
    let (bar, exact) = (&stepper.world().deformables[0], &oracle.deformables[0]);
    let top = (0..bar.num_nodes()).filter(|&a| bar.rest[a].z > l - 1e-9);
    let analytic = rho * g * l * l / (2.0 * e);
    for a in top {
        let (drop, want) = (bar.rest[a].z - bar.positions[a].z, exact.rest[a].z - exact.positions[a].z);
        let tol = 1e-9 * want + 2.0 * sc.dt * dv;
        let err = (bar.positions[a] - exact.positions[a]).norm();
        assert!(err < tol, "node {a} drops {drop}, equilibrium {want} (error {err:e} >= {tol:e})");
        assert!((want - analytic).abs() < 0.2 * analytic, "equilibrium drop {want} vs 1D {analytic}");
    }
}

/// A stretched bar in free fall (no contact): elastic forces and `K` are internal (translations
/// are in every element Hessian's null space, projected or not), so each step changes the linear
/// momentum by exactly `M g δt`, to round-off (1e-10 relative over 10 steps of a vibrating bar).
#[rstest]
fn free_fall_conserves_momentum(#[values("sap", "pgs", "drumwright", "canal", "subadmm")] name: &str) {
    let mut w = column(1e5, 1000.0, 1.0);
    w.statics.clear();
    for x in &mut w.deformables[0].positions {
        x.z *= 1.1;
    }
    let (dt, n) = (0.01, 10);
    let mass = w.deformables[0].total_mass();
    let mut s = solver(name, &[]);
    let contacts = ContactSet::default();
    for _ in 0..n {
        let (q, v) = {
            let p = w.step_problem(&contacts, dt, None).unwrap();
            let sol = s.step(&p, &mut IterationLog::default()).unwrap();
            (sol.q.clone().unwrap_or_else(|| p.integrate(&sol.v)), sol.v)
        };
        w.set_state(&q, &v);
    }
    let expect = Vector3::new(0.0, 0.0, -9.81 * mass * dt * n as f64);
    let p = w.linear_momentum();
    assert!((p - expect).norm() < 1e-10 * expect.norm(), "{name}: {p} vs {expect}");
    assert!(w.elastic_energy() > 0.0, "the bar vibrates");
}

/// The stepper at the start of `case` (its default parameters and `sets`).
fn start_of(case: &str, sets: &[(&str, &str)]) -> Scenario {
    let reg = signorini::registry();
    let mut suite = Suite::single(case, "nsn");
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    suite.apply_overrides(&reg, &sets).unwrap();
    runner::prepare(&reg, &suite).unwrap().remove(0).scenario
}

/// A column standing on the ground whose top face is driven down and twisted (prescribed):
/// the bottom nodes' contacts push back while the top DOFs are prescribed.
fn pressed_column() -> Scenario {
    let (e, rho, l) = (1e6, 1000.0, 0.5);
    let mut world = column(e, rho, l);
    let bar = &mut world.deformables[0];
    let top: Vec<usize> = (0..bar.num_nodes()).filter(|&a| bar.rest[a].z > l - 1e-9).collect();
    bar.boundary.push(PrescribedMotion {
        nodes: top,
        center: Vector3::new(0.0, 0.0, l),
        angular_velocity: Vector3::new(0.0, 0.0, 0.5),
        linear_velocity: Vector3::new(0.0, 0.0, -0.01),
    });
    Scenario {
        world,
        dt: 0.01,
        steps: 5,
        margin: 0.01,
        needs: Capabilities { deformable_bodies: true, ..Default::default() },
    }
}

/// Prescribed DOFs: the returned `v+` is the required value bit for bit (and `q+` with it, since
/// deformable DOFs take `q+ = q0 + δt v+`) — on the twisting bar (no contact) and on the pressed
/// column, where the bottom nodes' contacts carry load (the prescribed rows take no impulse).
#[rstest]
fn prescribed_dofs_are_returned_exactly(
    #[values("sap", "pgs", "drumwright", "drumwright-reduced", "canal", "subadmm", "subadmm-none")] name: &str,
    #[values("twisting_bar", "pressed_column")] scene: &str,
) {
    let sc = if scene == "twisting_bar" { start_of("twisting_bar", &[]) } else { pressed_column() };
    let mut stepper = Stepper::new(&sc);
    let mut s = named(name);
    let mut pushed = 0.0;
    for _ in 0..5 {
        let p = stepper.problem().unwrap();
        assert!(!p.prescribed.is_empty());
        let sol = s.step(&p, &mut IterationLog::default()).unwrap();
        for &(k, v) in &p.prescribed {
            assert_eq!(sol.v[k].to_bits(), v.to_bits(), "{name}: DOF {k}");
        }
        pushed += sol.impulses.iter().map(|l| l[0]).sum::<f64>();
        drop(p);
        stepper.advance(&sol);
    }
    if scene == "pressed_column" {
        assert!(pushed > 0.0, "{name}: the ground pushes back");
    }
}

/// The velocity error CANAL's default stopping tests allow on one step with FEM bodies:
/// `2 (ε_λ + ε_N) (‖A v*‖ + ‖λ‖) / m_min` (the AL impulse and Newton tolerances, scaled as its
/// residuals are, over the smallest mass).
fn canal_velocity_bound(p: &harness::StepProblem<'_>, sol: &harness::StepSolution) -> f64 {
    let s = solvers::canal::CanalSettings::default();
    let mut elastic = toolkit::implicit::ImplicitElastic::default();
    assert!(elastic.assemble(p).unwrap());
    let mut v_star = p.free_velocity();
    elastic.write_free_velocity(&mut v_star);
    let mut b = vec![0.0; p.nv()];
    elastic.mul_into(p, &v_star, &mut b);
    let norm = |x: &mut dyn Iterator<Item = f64>| x.map(|a| a * a).sum::<f64>().sqrt();
    let lam = norm(&mut sol.impulses.iter().flatten().copied());
    let m_min = p.mass.diagonal().into_iter().fold(f64::INFINITY, f64::min);
    2.0 * (s.impulse_tolerance + s.newton_tolerance) * (norm(&mut b.into_iter()) + lam) / m_min
}

/// Most iterations over which [`subadmm_velocity_bound`] measures SubADMM's contraction rate.
const RATE_WINDOW: usize = 10;

/// The velocity error SubADMM's returned iterate can carry on one step, a posteriori from the
/// residuals (42) of its last iteration `l` (derivation at `elastic_slope_step_agrees_with_nsn`):
/// `(‖J‖_F √n_c β θ_p ρ/(1 − ρ) + √n_u θ_d)/m_min` over `n_u` units, with `ρ` the primal
/// residual's mean contraction per iteration over the last iterations at the final β (so that
/// the iteration map is the same throughout the window; at most [`RATE_WINDOW`], at least 2) and
/// `‖J‖_F ≥ ‖J‖₂` the Frobenius norm of the contact Jacobian.
fn subadmm_velocity_bound(p: &StepProblem<'_>, log: &IterationLog, units: usize) -> f64 {
    let col = |n: &str| log.column(n).expect("SubADMM log column");
    let (primal, dual, beta) = (col("primal_max"), col("dual_max"), col("beta"));
    let l = primal.len() - 1;
    let w = (1..=RATE_WINDOW.min(l)).take_while(|&k| beta[l - k] == beta[l]).last().unwrap_or(0);
    assert!(w >= 2, "at least two iterations at the final beta");
    let rho = (primal[l] / primal[l - w]).powf(1.0 / w as f64);
    assert!(rho < 1.0, "SubADMM contracts over the window: rho = {rho}");
    let m_min = p.mass.diagonal().into_iter().fold(f64::INFINITY, f64::min);
    (jacobian_frobenius(p) * (p.nc() as f64).sqrt() * beta[l] * primal[l] * rho / (1.0 - rho)
        + (units as f64).sqrt() * dual[l])
        / m_min
}

/// `‖J‖_F`, the Frobenius norm of the contact Jacobian of `p` (an upper bound of `‖J‖₂`).
fn jacobian_frobenius(p: &StepProblem<'_>) -> f64 {
    toolkit::constraints::contact_rows(p).iter().flat_map(|r| r.rows.iter()).map(|a| a * a).sum::<f64>().sqrt()
}

/// A rigid box (1 kg) resting on the column (its four top nodes touch the box's bottom face),
/// the column on the ground, μ = 0.5: one step in which the box's contacts couple a rigid unit
/// and the FEM unit. SubADMM's splits factor different matrices — `body` and `subsystem`: the
/// box's tree `LᵀDL` or dense Cholesky and the column's sparse `A' + β Σ JᵀJ`, each node-box
/// contact with two slack blocks (`|Z_i| = 2`); `none`: one sparse system over both, every
/// contact one block — but have the same fixed point, the exact step (rigid contact, `A'` for
/// `M`), which CANAL solves too. So each split's velocity is within its a-posteriori bound of it
/// ([`subadmm_velocity_bound`], tolerance 1e-10), two splits agree within the sum of their
/// bounds, and each agrees with CANAL within its bound plus CANAL's
/// ([`canal_velocity_bound`], derived there for `‖J‖₂ = 1`; here `‖J‖₂ ≤ ‖J‖_F` multiplies its
/// impulse term, so it is scaled by `max(1, ‖J‖_F)`).
#[test]
fn subadmm_splits_agree_on_a_box_on_the_column() {
    use harness::model::{RigidBody, Shape};
    let (e, rho, l) = (1e6, 1000.0, 0.5);
    let mut world = column(e, rho, l);
    world.bodies.push(RigidBody::new(
        "box",
        Shape::Box { half_extents: [0.15, 0.15, 0.05] },
        1.0,
        Vector3::new(0.0, 0.0, l + 0.05),
        Material::rigid(0.5),
    ));
    let sc = Scenario {
        world,
        dt: 0.01,
        steps: 1,
        margin: 0.01,
        needs: Capabilities { deformable_bodies: true, ..Default::default() },
    };
    let stepper = Stepper::new(&sc);
    let p = stepper.problem().unwrap();
    assert_eq!(p.nc(), 8, "four nodes on the ground, four under the box");
    let runs: Vec<(harness::StepSolution, f64)> = [("body", 2), ("subsystem", 2), ("none", 1)]
        .iter()
        .map(|&(split, units)| {
            let mut s = solver("subadmm", &[("split", split), ("tolerance", "1e-10"), ("max_iterations", "2000")]);
            let mut log = IterationLog::default();
            let sol = s.step(&p, &mut log).unwrap();
            assert_eq!(sol.status, harness::SolveStatus::Solved, "{split}");
            let bound = subadmm_velocity_bound(&p, &log, units);
            (sol, bound)
        })
        .collect();
    for (a, b) in runs.iter().zip(&runs[1..]) {
        let diff = a.0.v.iter().zip(&b.0.v).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(diff <= a.1 + b.1, "splits differ by {diff:e} > {:e}", a.1 + b.1);
    }
    let canal = solver("canal", &[]).step(&p, &mut IterationLog::default()).unwrap();
    assert_eq!(canal.status, harness::SolveStatus::Solved);
    let canal_bound = canal_velocity_bound(&p, &canal) * jacobian_frobenius(&p).max(1.0);
    for (sol, bound) in &runs {
        let diff = sol.v.iter().zip(&canal.v).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        assert!(diff <= bound + canal_bound, "SubADMM and CANAL differ by {diff:e} > {:e}", bound + canal_bound);
    }
}

/// One step of the elastic slope (stiff cube at rest on the 10° plane, sticking and sliding) by
/// sap, pgs, canal and subadmm against nsn, which solves the nonlinear backward-Euler step with
/// exact rigid contact to 1e-9. From the stress-free start the elastic force is linear over the step (the
/// linearisation error is second order in the step's strain, ~1e-11 here), so the velocities
/// differ by the contact laws only: PGS is rigid too (impulses within `1e3 × 1e-12`), SAP's
/// near-rigid regularisation lets a node carrying `λ_n` move at `u_n = −R_n λ_n` with
/// `R_n = β² w/(4π²)`, `w = 1/m_a`, `λ_n ≤ m_a g δt` (its share of the weight, with the
/// elastic ringing at most doubling it), so `|Δv| ≤ 2 β² g δt/(4π²)` (β = 1), and along the
/// slope its friction cone is regularised by `R_t = σ w` in the same way (σ = 1e-3 ≪ β²/(4π²)).
/// CANAL (default settings) is rigid too, exact up to its stopping tests: at the stop the last AL
/// update moved the impulses by `‖Δλ‖ ≤ ε_λ max(‖λ‖, ‖A v*‖)` (`impulse_tolerance`), so the
/// impulses are within `‖Δλ‖/(1 − ρ) ≤ 2‖Δλ‖` of the fixed point (the outer contraction
/// `ρ ≤ μ²/(1 + μ²) < ½`, README §7), and the inner residual `r = A v − A v* − JᵀΛ` is below
/// `ε_N max(‖A v*‖, ‖A v‖, ‖JᵀΛ‖)`; one contact per node with an orthonormal frame (`‖J‖ = 1`)
/// and `A ⪰ M` give `‖Δv‖ ≤ (2 ε_λ + 2 ε_N)(‖A v*‖ + ‖λ‖)/m_min`, on top of PGS's budget for
/// nsn's tolerance and the linearisation.
/// SubADMM (tolerance 1e-10, solved) is rigid too, exact at its fixed point; its returned
/// `(v, λ)` are the last v-step's velocity and the z-step's impulses after it, for which (42)
/// gives `θ_d = ‖A'_FF v_F − b_F − (Jᵀλ)_F‖` (the cube is the only unit, and `N` selects its free
/// DOFs) and `θ_p = max_i ‖Δλ_i‖/β`. With the exact solution `(v°, λ°)`,
/// `v − v° = A'_FF⁻¹((Jᵀ(λ − λ°))_F + r_F)`, so `‖v − v°‖ ≤ (‖λ − λ°‖ + θ_d)/m_min` (`A' ⪰ M`,
/// `‖J‖ = 1` as above). At one β and a settled active set ADMM is an affine fixed-point
/// iteration whose steps contract by a constant factor `ρ`, so the impulses are within the tail
/// `Σ_{k>l} ‖Δλ^k‖ ≤ β θ_p ρ/(1 − ρ)` per contact, `√n_c` times that in the 2-norm;
/// `ρ` is measured from the log over the last iterations at one β ([`subadmm_velocity_bound`];
/// 0.63 and 0.65 here). Its term is ~1e-11 m/s, so nsn's budget dominates the bound.
#[rstest]
fn elastic_slope_step_agrees_with_nsn(
    #[values("sap", "pgs", "canal", "subadmm")] name: &str,
    #[values("0.3", "0.1")] mu: &str,
) {
    let sc = start_of("elastic_slope", &[("mu", mu)]);
    let stepper = Stepper::new(&sc);
    let p = stepper.problem().unwrap();
    assert!(p.nc() > 0);
    let reference = tight("nsn").step(&p, &mut IterationLog::default()).unwrap();
    let mut log = IterationLog::default();
    let sol = tight(name).step(&p, &mut log).unwrap();
    let g = 9.81;
    let tol = match name {
        "sap" => 2.0 * g * p.dt / (4.0 * std::f64::consts::PI.powi(2)),
        "canal" => 1e-6 * g * p.dt + canal_velocity_bound(&p, &sol),
        "subadmm" => {
            assert_eq!(sol.status, harness::SolveStatus::Solved, "mu = {mu}: SubADMM stops on its tolerance");
            1e-6 * g * p.dt + subadmm_velocity_bound(&p, &log, 1)
        }
        _ => 1e-6 * g * p.dt,
    };
    let diff = sol.v.iter().zip(&reference.v).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff < tol, "{name}, mu = {mu}: max |v - v_nsn| = {diff:.3e} >= {tol:.3e}");
}

/// Drumwright keeps the symbolic analysis of the deformable `A'` for the whole run (the mesh and
/// the prescribed set do not change), in both forms, and SubADMM that of the FEM unit's sparse
/// `K_q` (besides, a node contact's slack block lies on its node's DOFs, already coupled in the
/// pattern by the node's mass block), with one unit per body and with one global system: one
/// analysis over the pressed column's five steps in contact.
#[rstest]
fn fem_matrix_is_analysed_once_per_run(
    #[values("drumwright", "drumwright-reduced", "subadmm", "subadmm-none")] name: &str,
) {
    use solvers::drumwright::{Drumwright, DrumwrightSettings, Form};
    use solvers::subadmm::{Split, SubAdmm, SubAdmmSettings};
    let run = |s: &mut dyn Solver| {
        let o = simulate(&pressed_column(), s, RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        assert!(o.failure.is_none(), "{name}: {:?}", o.failure);
    };
    let analyses = if name.starts_with("drumwright") {
        let form = if name == "drumwright" { Form::Lifted } else { Form::Reduced };
        let mut d = Drumwright::new(DrumwrightSettings { form, ..Default::default() });
        run(&mut d);
        d.symbolic_analyses()
    } else {
        let split = if name == "subadmm" { Split::Body } else { Split::None };
        let mut s = SubAdmm::new(SubAdmmSettings { split, ..Default::default() });
        run(&mut s);
        s.symbolic_analyses()
    };
    assert_eq!(analyses, 1, "{name}");
}

/// One step of the elastic slope (module doc of `cases/src/elastic_slope.rs`: 1 kg stiff cube,
/// four node contacts, 10°) by drumwright, whose contact model is not Coulomb's rigid law:
///
/// - the lifted form (`A'` in the momentum rows) and the paper's reduced form (`J A⁻¹ Jᵀ`) solve
///   the same program: impulses agree to 1e-6 of the total normal impulse (as for rigid bodies,
///   README §10.4; both at clarabel tolerance 1e-10);
/// - sticking (μ = 0.3 > tan 10°): the tangential damper `β = γ_t + c_t J_t v` lets a contact
///   creep at the single-contact closed form `v_free / a`, `a = 1 + c_t / m̂_t` (README §10.4,
///   "Block on an incline"), with `v_free = g sin(10°) δt` the slip of one free step. A node
///   contact's effective mass is at most the body's, `m̂_t ≤ m` (`J A⁻¹ Jᵀ ≥ 1/m` by
///   Cauchy–Schwarz with the rigid translation, on which `K` vanishes), so against nsn's rigid
///   stick every velocity differs by at most `v_free / (1 + c_t / m)` (1.7e-4 m/s at
///   `c_t = h B_r = 100` kg; nsn's own error, 1e-9, and the linearisation, 1e-11, are far below);
/// - sliding (μ = 0.1): the joint program raises the normal impulses to widen the cone (P2,
///   README §10.1): their sum exceeds nsn's (rigid Coulomb: the weight's normal share less the
///   cube's elastic compression) by far more than the two solvers' tolerances (1e-6 relative;
///   measured 7 %), pushing the cube off the plane.
#[rstest]
fn drumwright_elastic_slope_step(#[values("0.3", "0.1")] mu: &str) {
    let sc = start_of("elastic_slope", &[("mu", mu)]);
    let stepper = Stepper::new(&sc);
    let p = stepper.problem().unwrap();
    assert_eq!(p.nc(), 4);
    let lifted = tight("drumwright").step(&p, &mut IterationLog::default()).unwrap();
    let reduced = tight("drumwright-reduced").step(&p, &mut IterationLog::default()).unwrap();
    let reference = tight("nsn").step(&p, &mut IterationLog::default()).unwrap();
    let normal = |s: &harness::StepSolution| s.impulses.iter().map(|l| l[0]).sum::<f64>();
    for (a, b) in lifted.impulses.iter().zip(&reduced.impulses) {
        for k in 0..3 {
            assert!((a[k] - b[k]).abs() <= 1e-6 * normal(&lifted), "lifted {a:?} vs reduced {b:?}");
        }
    }
    let (g, angle, mass) = (9.81, 10f64.to_radians(), stepper.world().deformables[0].total_mass());
    let ct = solvers::drumwright::DrumwrightSettings::default().tangential_damping_dt;
    if mu == "0.3" {
        let bound = g * angle.sin() * p.dt / (1.0 + ct / mass);
        for sol in [&lifted, &reduced] {
            let diff = sol.v.iter().zip(&reference.v).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(diff < bound, "max |v - v_nsn| = {diff:.3e} >= creep bound {bound:.3e}");
        }
    } else {
        let (inflated, rigid) = (normal(&lifted), normal(&reference));
        assert!(inflated > (1.0 + 1e-6) * rigid, "P2: total normal impulse {inflated:.6e} vs nsn {rigid:.6e}");
    }
}

/// SAP's optimum on an FEM problem (the elastic slope's first step, sparse `A = M + δt² K`)
/// equals the interior-point solution of the same convex program (clarabel, `reference.rs`, with
/// `A`'s element couplings in `P`). Bound as for rigid bodies (sap `tests.rs`): strong convexity
/// in the `A` norm gives `‖v − v_opt‖_A ≤ ‖∇ℓ‖_{A⁻¹} ≤ ‖∇ℓ‖_{M⁻¹}` (`A ⪰ M`), the stopping norm
/// of Eq. 26, so `≤ ε_r max(‖D̃p‖, ‖D̃ j_c‖)`; plus the interior point's `√(2 tol (1 + |ℓ|))`.
#[test]
fn sap_optimum_on_the_elastic_slope_equals_clarabel() {
    use solvers::sap::{reference::solve_reference, Sap, SapProblem, SapSettings};
    for mu in ["0.3", "0.1"] {
        let sc = start_of("elastic_slope", &[("mu", mu)]);
        let stepper = Stepper::new(&sc);
        let p = stepper.problem().unwrap();
        let settings = SapSettings { rel_tolerance: 1e-12, abs_tolerance: 1e-14, ..SapSettings::default() };
        let prob = SapProblem::from_step(&p, &settings, &mut Default::default()).unwrap();
        assert!(prob.elastic.is_some() && prob.n_contacts > 0);
        let mut sap = Sap::new(settings.clone());
        let (v, _) = sap.solve(&prob, &prob.v0, &mut IterationLog::default()).unwrap();
        let reference = solve_reference(&prob, 1e-10).unwrap();
        let dnorm = |x: &[f64]| x.iter().zip(prob.mass.diagonal()).map(|(a, m)| a * a / m).sum::<f64>().sqrt();
        let mut mv = vec![0.0; prob.nv()];
        prob.mass.mul_into(&v, &mut mv);
        let mut jc = vec![0.0; prob.nv()];
        for (c, g) in prob.constraints.iter().zip(sap.impulses()) {
            c.add_transpose(*g, &mut jc);
        }
        let bound = settings.rel_tolerance * dnorm(&mv).max(dnorm(&jc));
        let diff: Vec<f64> = v.iter().zip(&reference.v).map(|(a, b)| a - b).collect();
        let mut a_diff = vec![0.0; prob.nv()];
        prob.a_mul_into(&diff, &mut a_diff);
        let a_norm = diff.iter().zip(&a_diff).map(|(a, b)| a * b).sum::<f64>().sqrt();
        let ipm = (2.0 * 1e-10 * (1.0 + reference.cost.abs())).sqrt();
        assert!(a_norm <= bound + ipm, "mu = {mu}: ‖v_sap − v_ipm‖_A = {a_norm:e} > {:e}", bound + ipm);
    }
}
