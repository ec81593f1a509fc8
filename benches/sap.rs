//! Criterion benchmark of one SAP step (Castro et al. Alg. 1–2) on clutter with 40 bodies (the
//! paper's base case, §VI-C) and on the sphere stack, each advanced with SAP itself to the middle
//! of its run so that contacts and warm starts are realistic. Scenes come from the case builders
//! through the registry, as in `benches/step.rs`.
//!
//! `cargo bench --bench sap` (add `-- --quick` for a fast pass).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use harness::runner::{self, Override, PairSpec, Suite};
use harness::stepper::{simulate, RunOptions};
use harness::{IterationLog, Scenario};
use std::hint::black_box;
use std::time::Duration;

fn sap_benches(c: &mut Criterion) {
    let reg = signorini::registry();
    let spec = |label: &str, case: &str, set: &[(&str, &str)]| PairSpec {
        label: label.into(),
        case: case.into(),
        case_set: set.iter().map(|(k, v)| (k.to_string(), Override::Text(v.to_string()))).collect(),
        solver: "sap".into(),
        solver_set: vec![],
    };
    let suite = Suite {
        name: "sap-bench".into(),
        pairs: vec![
            spec("clutter-40", "clutter", &[("bodies", "40"), ("duration", "3.0")]),
            spec("sphere_stack", "sphere_stack", &[]),
        ],
    };
    let pairs = runner::prepare(&reg, &suite).expect("valid pairs");
    let mut group = c.benchmark_group("sap");
    group.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for pair in &pairs {
        let entry = reg.find_solver("sap").expect("registered");
        let mut solver = entry.build(&pair.solver_params).expect("valid settings");
        let sc = &pair.scenario;
        let half = Scenario { steps: sc.steps / 2, ..sc.clone() };
        let o = simulate(&half, solver.as_mut(), RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        assert!(o.failure.is_none(), "{}: {:?}", pair.spec.label, o.failure);
        let p = o.stepper.problem().expect("assembles");
        group.bench_function(BenchmarkId::new("step", &pair.spec.label), |b| {
            b.iter(|| black_box(solver.step(black_box(&p), &mut IterationLog::new())))
        });
    }
    group.finish();
}

criterion_group!(benches, sap_benches);
criterion_main!(benches);
