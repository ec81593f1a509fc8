//! Criterion benchmarks: one time step of every registered solver on every registered case at its
//! default parameters, plus size sweeps of the scalable canonical cases (sphere_stack with 5, 20
//! and 100 spheres; clutter with 8, 20, 40, 80, 160 and 320 bodies, the scaling study of issue 19
//! for every solver that runs clutter), each measured after the case has run to its
//! midpoint (so contacts are established and warm starts are realistic). Scenes come from the
//! case builders and solvers from the registry: no scene code is duplicated here. Incompatible
//! pairs are skipped exactly as the runner skips them.
//!
//! `cargo bench --bench step` (add `-- --quick` for a fast pass); ids are
//! `step/<solver>/<case label>`, e.g. `cargo bench --bench step -- 'sap/clutter|pgs/clutter'` for
//! the clutter sweep of SAP and PGS alone (the large sizes take minutes to reach their midpoint
//! with the slower solvers). `cargo bench --bench step -- detect/` times contact detection alone
//! on the clutter sizes.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use harness::runner::{self, Override, Suite};
use harness::stepper::{simulate, RunOptions};
use harness::{geometry, IterationLog, Scenario};
use std::hint::black_box;
use std::time::Duration;

/// Whether benchmark `id` passes criterion's filter, the first positional argument (a regex):
/// reaching a scene's midpoint is the expensive part, so benchmarks whose id contains none of the
/// `|`-separated alternatives of that argument are not even set up.
fn wanted(id: &str) -> bool {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    filter.as_deref().is_none_or(|f| f.split('|').any(|alt| id.contains(alt)))
}

fn step_benches(c: &mut Criterion) {
    let reg = signorini::registry();
    let mut suite = Suite::default_suite(&reg);
    let sizes: [(&str, &str, &[&str]); 2] =
        [("sphere_stack", "n", &["20", "100"]), ("clutter", "bodies", &["8", "20", "40", "80", "160", "320"])];
    for (case, key, values) in sizes {
        if reg.find_case(case).is_err() {
            continue;
        }
        for value in values {
            for s in &reg.solvers {
                let mut pair = Suite::single(case, s.name).pairs.remove(0);
                pair.label = format!("{case}-{key}{value}");
                pair.case_set.push((key.to_string(), Override::Text(value.to_string())));
                suite.pairs.push(pair);
            }
        }
    }
    let pairs = runner::prepare(&reg, &suite).expect("benchmark suite is valid");
    let mut group = c.benchmark_group("step");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for pair in pairs.iter().filter(|p| p.skip.is_none()) {
        if !wanted(&format!("step/{}/{}", pair.spec.solver, pair.spec.label)) {
            continue;
        }
        let entry = reg.find_solver(&pair.spec.solver).expect("registered");
        let mut solver = entry.build(&pair.solver_params).expect("valid settings");
        // advance the scene to its midpoint with the same solver
        let sc = &pair.scenario;
        let half = Scenario { steps: sc.steps / 2, ..sc.clone() };
        let o = simulate(&half, solver.as_mut(), RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        if let Some(why) = o.failure {
            eprintln!("skipping {} / {}: the run to the midpoint failed: {why}", pair.spec.label, pair.spec.solver);
            continue;
        }
        let p = o.stepper.problem().expect("assembles");
        group.bench_function(BenchmarkId::new(pair.spec.solver.clone(), &pair.spec.label), |b| {
            b.iter(|| black_box(solver.step(black_box(&p), &mut IterationLog::new())))
        });
    }
    group.finish();
}

/// Contact detection alone (`geometry::detect_for_step`, broad and narrow phase) on the clutter
/// scaling sizes at their midpoint, reached with SAP: ids `detect/clutter-bodiesN`. Issue 19 asks
/// that detection stay a small share of the step at 320 objects; compare with `step/sap/...`.
fn detect_benches(c: &mut Criterion) {
    let reg = signorini::registry();
    if reg.find_case("clutter").is_err() {
        return;
    }
    let mut group = c.benchmark_group("detect");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for bodies in ["40", "80", "320"] {
        let label = format!("clutter-bodies{bodies}");
        if !wanted(&format!("detect/{label}")) {
            continue;
        }
        let mut suite = Suite::single("clutter", "sap");
        suite.pairs[0].case_set.push(("bodies".to_string(), Override::Text(bodies.to_string())));
        let pair = runner::prepare(&reg, &suite).expect("benchmark suite is valid").remove(0);
        let mut solver = reg.find_solver("sap").expect("registered").build(&pair.solver_params).expect("valid");
        let sc = &pair.scenario;
        let half = Scenario { steps: sc.steps / 2, ..sc.clone() };
        let o = simulate(&half, solver.as_mut(), RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        if let Some(why) = o.failure {
            eprintln!("skipping detect/{label}: the run to the midpoint failed: {why}");
            continue;
        }
        let world = o.stepper.world();
        group.bench_function(BenchmarkId::from_parameter(&label), |b| {
            b.iter(|| black_box(geometry::detect_for_step(black_box(world), sc.margin, sc.dt)))
        });
    }
    group.finish();
}

criterion_group!(benches, step_benches, detect_benches);
criterion_main!(benches);
