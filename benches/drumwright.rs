//! Criterion benchmark of one Drumwright step (lifted cone program, clarabel) on the sphere stack
//! with 10 and 100 spheres (the paper's Fig. 10 scene), after 20 steps so that every contact is
//! established. `cargo bench --bench drumwright` (add `-- --quick` for a fast pass).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use harness::stepper::{simulate, RunOptions};
use harness::{Case, IterationLog, Scenario};
use std::hint::black_box;
use std::time::Duration;

fn drumwright_stack(c: &mut Criterion) {
    let reg = signorini::registry();
    let entry = reg.find_solver("drumwright").expect("registered");
    let mut group = c.benchmark_group("drumwright");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    for n in [10, 100] {
        let case = cases::SphereStack;
        let mut params = case.defaults();
        params.set("n", &n.to_string(), "sphere_stack").expect("n is a parameter");
        let sc = case.prepare(&params).expect("builds").scenario().clone();
        let mut solver = entry.build(&(entry.defaults)()).expect("default settings");
        let warm = Scenario { steps: 20, ..sc.clone() };
        let o = simulate(&warm, solver.as_mut(), RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        assert!(o.failure.is_none(), "{:?}", o.failure);
        let p = o.stepper.problem().expect("assembles");
        group.bench_function(BenchmarkId::new("sphere_stack", n), |b| {
            b.iter(|| black_box(solver.step(black_box(&p), &mut IterationLog::new())))
        });
    }
    group.finish();
}

criterion_group!(benches, drumwright_stack);
criterion_main!(benches);
