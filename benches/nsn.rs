//! Criterion benchmarks of one nsn step (Macklin et al. 2019) on the issue-6 cases: the 4096:1
//! heavy stack (spheres and boxes, heavy on top) and the twisting bar (default 4 x 1 x 1 mesh and a
//! finer 8 x 2 x 2 one), each measured after the case has run to its midpoint with nsn (contacts
//! established, the bar twisted). Scenes come from the registry's case builders, like
//! benches/step.rs.
//!
//! `cargo bench --bench nsn` (add `-- --quick` for a fast pass); ids are `nsn/<case label>`.

use criterion::{criterion_group, criterion_main, Criterion};
use harness::runner::{self, Override, PairSpec, Suite};
use harness::stepper::{simulate, RunOptions};
use harness::{IterationLog, Scenario};
use std::hint::black_box;
use std::time::Duration;

fn pair(label: &str, case: &str, set: &[(&str, &str)]) -> PairSpec {
    PairSpec {
        label: label.into(),
        case: case.into(),
        case_set: set.iter().map(|(k, v)| (k.to_string(), Override::Text(v.to_string()))).collect(),
        solver: "nsn".into(),
        solver_set: vec![],
    }
}

fn nsn_benches(c: &mut Criterion) {
    let reg = signorini::registry();
    let suite = Suite {
        name: "bench-nsn".into(),
        pairs: vec![
            pair("heavy_stack-sphere", "heavy_stack", &[]),
            pair("heavy_stack-box", "heavy_stack", &[("shape", "box")]),
            pair("twisting_bar-4x1x1", "twisting_bar", &[]),
            pair("twisting_bar-8x2x2", "twisting_bar", &[("nx", "8"), ("ny", "2"), ("nz", "2")]),
        ],
        accuracy: None,
    };
    let pairs = runner::prepare(&reg, &suite).expect("benchmark suite is valid");
    let mut group = c.benchmark_group("nsn");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    for pair in &pairs {
        let entry = reg.find_solver(&pair.spec.solver).expect("registered");
        let mut solver = entry.build(&pair.solver_params).expect("valid settings");
        let sc = &pair.scenario;
        let half = Scenario { steps: sc.steps / 2, ..sc.clone() };
        let o = simulate(&half, solver.as_mut(), RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        if let Some(why) = o.failure {
            eprintln!("skipping {}: the run to the midpoint failed: {why}", pair.spec.label);
            continue;
        }
        let p = o.stepper.problem().expect("assembles");
        group.bench_function(pair.spec.label.clone(), |b| {
            b.iter(|| black_box(solver.step(black_box(&p), &mut IterationLog::new())))
        });
    }
    group.finish();
}

criterion_group!(benches, nsn_benches);
criterion_main!(benches);
