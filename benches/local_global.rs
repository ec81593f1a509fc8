//! Criterion benchmark of one local_global step (Zeng et al. Algorithm 4, defaults: 5 L-G
//! iterations, 10 CR iterations, sparse inverse) on a stiff box (ARAP, E = 1e8) resting on a
//! 10° slope with its bottom nodes in contact, at three mesh sizes (`n³` cells, 6 tets each),
//! advanced 5 steps first (`simulate`, then the stepper's problem) so that contacts and warm
//! starts are realistic. Worlds are built here
//! with `DeformableBody::box_mesh` (no case dependency). The memory of `S` is printed per size.
//!
//! `cargo bench --bench local_global` (add `-- --quick` for a fast pass).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use harness::model::{DeformableBody, ElasticMaterial, ElasticModel, Material, StaticCollider, StaticShape, World};
use harness::stepper::{simulate, RunOptions};
use harness::{IterationLog, Scenario, Solver};
use nalgebra::{UnitQuaternion, Vector3};
use solvers::local_global::{LocalGlobal, LocalGlobalSettings};
use std::hint::black_box;
use std::time::Duration;

fn box_on_slope(cells: usize) -> World {
    let a = 10f64.to_radians();
    let n = Vector3::new(-a.sin(), 0.0, a.cos());
    let mut w = World::new();
    w.statics.push(StaticCollider {
        name: "slope".into(),
        shape: StaticShape::HalfSpace { normal: n, offset: 0.0 },
        material: Material::rigid(0.3),
    });
    let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: 1e8, poisson_ratio: 0.3 };
    let mut b = DeformableBody::box_mesh(
        "box",
        Vector3::new(-0.1, -0.1, 0.0),
        Vector3::new(0.2, 0.2, 0.2),
        [cells; 3],
        1000.0,
        mat,
        Material::rigid(0.3),
    );
    let rot = UnitQuaternion::from_scaled_axis(Vector3::new(0.0, -a, 0.0));
    b.rest.iter_mut().for_each(|x| *x = rot * *x);
    b.positions = b.rest.clone();
    w.deformables.push(b);
    w
}

fn local_global_benches(c: &mut Criterion) {
    let dt = 0.01;
    let mut group = c.benchmark_group("local_global");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    for cells in [4usize, 8, 12] {
        let mut solver = LocalGlobal::new(LocalGlobalSettings::default());
        let sc = Scenario { world: box_on_slope(cells), dt, steps: 5, margin: 0.01, needs: Default::default() };
        let o = simulate(&sc, &mut solver, RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        assert!(o.failure.is_none(), "box {cells}^3: {:?}", o.failure);
        let p = o.stepper.problem().expect("assembles");
        let mem = solver.inverse_memory().expect("sparse inverse");
        let nodes = o.stepper.world().deformables[0].num_nodes();
        eprintln!(
            "local_global box {cells}^3: {nodes} nodes, {} contacts, nnz(S) = {}, S {:.2} MB vs dense A^-1 {:.2} MB",
            p.nc(),
            mem.nnz_s,
            mem.s_value_bytes as f64 / 1048576.0,
            mem.dense_sym_bytes as f64 / 1048576.0
        );
        group.bench_function(BenchmarkId::new("step", format!("box-{nodes}-nodes")), |b| {
            b.iter(|| black_box(solver.step(black_box(&p), &mut IterationLog::new())))
        });
    }
    group.finish();
}

criterion_group!(benches, local_global_benches);
criterion_main!(benches);
