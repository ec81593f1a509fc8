//! Criterion benchmark of Lee et al.'s Table III ablation (§VII-D2, Fig. 12): one SubADMM step
//! on the `robots` case (unactuated box-and-hinge quadrupeds standing on the floor) with 1, 4, 8
//! and 27 robots, for the three slack splits of `solvers/src/subadmm` (README §2):
//!
//! | paper label | `split` | velocity step |
//! |---|---|---|
//! | SubADMM | `body` | per robot, CRBA with augmented body inertias and tree `LᵀDL` in joint space (Eqs. 30–31, 40–41) |
//! | No Body | `subsystem` | per robot, dense joint-space matrix `NᵀKN` and dense Cholesky (their prior work, ref. [34]) |
//! | No Sub | `none` | one global sparse joint-space factor over all robots (Eq. 28) |
//!
//! each with `threads = 1` and `2`. As in the paper every variant runs exactly 100 iterations
//! (`tolerance = 1e-300`, so the stopping test never fires). Every variant steps from the same
//! state: the scene is advanced to the middle of its run (the robots have landed and stand; warm
//! impulses are realistic) with the default CANAL, so the benchmarked problem does not depend on
//! SubADMM's implementation and timings of two SubADMM versions compare the same work. The
//! number of penalty changes (each refactors every unit) and the paper's residual (−log10, as in
//! Table III) per variant are printed at setup.
//!
//! `SUBADMM_ROBOTS` and `SUBADMM_THREADS` (comma-separated) replace the robot counts and thread
//! counts; `ci/gpu/run-on-device.sh` uses them for Table III at 1–16 threads on a many-core machine.
//!
//! `cargo bench --bench subadmm` (add `-- --quick` for a fast pass); ids are
//! `subadmm/<label>/robots-<N>/threads-<T>`. The time ratios No Sub / SubADMM and No Body /
//! SubADMM at 8 robots are the numbers to put beside the paper's 2.78× and 1.46×, and No Sub /
//! SubADMM at 27 robots beside its 3.63×.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use harness::runner::{self, Override, PairSpec, Suite};
use harness::stepper::{simulate, RunOptions};
use harness::{IterationLog, Params, Scenario};
use std::hint::black_box;
use std::time::Duration;

/// (paper label, `split`).
const VARIANTS: [(&str, &str); 3] = [("SubADMM", "body"), ("No Sub", "none"), ("No Body", "subsystem")];

/// A comma-separated list of counts from the environment variable `var`, or `default`.
fn counts(var: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(var) {
        Ok(v) => v
            .split(',')
            .map(|t| t.trim().parse().unwrap_or_else(|_| panic!("{var}={v}: expected counts like 1,2,4")))
            .collect(),
        Err(_) => default.to_vec(),
    }
}

fn subadmm_benches(c: &mut Criterion) {
    let (robot_counts, thread_counts) = (counts("SUBADMM_ROBOTS", &[1, 4, 8, 27]), counts("SUBADMM_THREADS", &[1, 2]));
    let reg = signorini::registry();
    let entry = reg.find_solver("subadmm").expect("registered");
    let mut group = c.benchmark_group("subadmm");
    group.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    for &robots in &robot_counts {
        let spec = PairSpec {
            label: format!("robots-{robots}"),
            case: "robots".into(),
            case_set: vec![("robots".into(), Override::Text(robots.to_string()))],
            solver: "subadmm".into(),
            solver_set: vec![],
        };
        let suite = Suite { name: "subadmm-bench".into(), pairs: vec![spec], accuracy: None };
        let pair = runner::prepare(&reg, &suite).expect("valid pair").remove(0);
        let sc = &pair.scenario;
        let half = Scenario { steps: sc.steps / 2, ..sc.clone() };
        let canal = reg.find_solver("canal").expect("registered");
        let mut advance = canal.build(&Params::default()).expect("valid settings");
        let o = simulate(&half, advance.as_mut(), RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
        assert!(o.failure.is_none(), "robots-{robots}: {:?}", o.failure);
        let p = o.stepper.problem().expect("assembles");
        eprintln!(
            "robots-{robots}: {} bodies, {} DOFs, {} contacts, {} joint rows",
            o.stepper.world().bodies.len(),
            p.nv(),
            p.nc(),
            p.nb()
        );
        for (label, split) in VARIANTS {
            for &threads in &thread_counts {
                let mut params: Params = pair.solver_params.clone();
                for (k, v) in
                    [("split", split.to_string()), ("threads", threads.to_string()), ("tolerance", "1e-300".into())]
                {
                    params.set(k, &v, "subadmm").expect("known key");
                }
                let mut solver = entry.build(&params).expect("valid settings");
                if threads == thread_counts[0] {
                    let mut log = IterationLog::new();
                    let sol = solver.step(&p, &mut log).expect("solves");
                    let beta = log.column("beta").expect("logged");
                    let changes = beta.windows(2).filter(|w| w[0] != w[1]).count();
                    let res = harness::metrics::lee_residual(&p, &sol.impulses, &sol.bilateral).neglog10;
                    eprintln!(
                        "  {label}: {changes} penalty changes (refactorisations) in {} iterations, residual -log10 {res:.3}",
                        beta.len()
                    );
                }
                let id = BenchmarkId::new(label, format!("robots-{robots}/threads-{threads}"));
                group.bench_function(id, |b| {
                    b.iter(|| black_box(solver.step(black_box(&p), &mut IterationLog::new()).expect("solves")))
                });
            }
        }
    }
    group.finish();
}

criterion_group!(benches, subadmm_benches);
criterion_main!(benches);
