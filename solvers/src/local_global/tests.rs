//! Physics and algebra tests of local_global on hand-built deformable worlds (contacts from
//! `geometry::detect`).

use super::*;
use harness::geometry;
use harness::model::{DeformableBody, ElasticMaterial, ElasticModel, Material, PrescribedMotion, StaticCollider, StaticShape, World};
use harness::{IterationLog, Params, Settings, SolveStatus, Solver, StepProblem, StepSolution};
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
        let p = StepProblem::new(&world, &contacts, dt, Some(&warm)).unwrap();
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
        s.global_solve = global.into();
        s.iterations = iterations;
        s.reference = true;
    }));
    let (_, _, logs) = run(world, dt, 1, &mut solver);
    column(&logs[0], "energy_rel_error")
}

#[test]
fn explore_bar() {
    for e in [1e5, 1e7, 1e9] {
        let si = bar_errors(e, "sparse_inverse", 30);
        let ja = bar_errors(e, "jacobi", 300);
        let first = |v: &[f64]| v.iter().position(|x| *x < 1e-3);
        eprintln!("E={e:e}: SI first<1e-3 at {:?}, vals {:?}", first(&si), &si[..8]);
        eprintln!("   jacobi first<1e-3 at {:?}, last {:?}", first(&ja), ja.last());
    }
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
fn explore_slope() {
    let deg = 10.0f64;
    let mu_star = deg.to_radians().tan();
    for r in ["delassus", "mass"] {
        for dmu in [-0.1, -0.01, -0.001, 0.001, 0.01] {
            let mut solver = LocalGlobal::new(settings(|s| {
                s.iterations = 10;
                s.cr_iterations = 24;
                s.r_factor = r.into();
            }));
            let steps = 30;
            let (w, _, _) = run(box_on_slope(deg, mu_star + dmu, 2), 0.01, steps, &mut solver);
            let v = downslope_speed(&w, deg);
            let expect = (9.81 * (deg.to_radians().sin() - (mu_star + dmu) * deg.to_radians().cos())).max(0.0) * 0.3;
            eprintln!("{r} dmu={dmu}: v={v:.6e} expect {expect:.6e}");
        }
    }
}

#[test]
fn settings_validate_and_entry_builds() {
    let _ = (Params::default(), SolveStatus::Solved);
    for bad in [
        LocalGlobalSettings { iterations: 0, ..Default::default() },
        LocalGlobalSettings { cr_iterations: 0, ..Default::default() },
        LocalGlobalSettings { global_solve: "lu".into(), ..Default::default() },
        LocalGlobalSettings { ncp: "x".into(), ..Default::default() },
        LocalGlobalSettings { r_factor: "x".into(), ..Default::default() },
        LocalGlobalSettings { tolerance: -1.0, ..Default::default() },
    ] {
        assert!(bad.validate().is_err());
    }
    LocalGlobalSettings::default().validate().unwrap();
    assert_eq!(entry().name, "local_global");
}

#[test]
fn zz_debug_slope() {
    let deg = 10.0f64;
    for (ncp, dmu) in [("fb", 0.01), ("min", 0.01), ("fb", 0.001), ("min", 0.001)] {
    let mu = deg.to_radians().tan() + dmu;
    let mut solver = LocalGlobal::new(settings(|s| {
        s.iterations = 10;
        s.cr_iterations = 24;
        s.ncp = ncp.into();
    }));
    let mut w = box_on_slope(deg, mu, 2);
    let mut vs = vec![];
    for _ in 0..10 {
        let (w2, _, _) = run(w, 0.01, 3, &mut solver);
        vs.push(downslope_speed(&w2, deg));
        w = w2;
    }
    eprintln!("{ncp} {dmu}: {:?}", vs.iter().map(|v| format!("{v:.2e}")).collect::<Vec<_>>());
    }
}
