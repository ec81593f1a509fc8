//! Criterion benchmark of one SAP step (Castro et al. Alg. 1–2) on clutter with 40 bodies (the
//! paper's base case, §VI-C) and on the sphere stack, each advanced with SAP itself to the middle
//! of its run so that contacts and warm starts are realistic. Scenes come from the case builders
//! through the registry, as in `benches/step.rs`.
//!
//! `hessian_factor/*` times one numeric Cholesky of SAP's Hessian `H = A + Jᵀ G J` on the settled
//! 80-object clutter (9 s), faer's supernodal and simplicial factorizations and the block-sparse one
//! (`kernels::block_cholesky`, what SAP uses) on the same pattern, and prints the
//! factor's size and flop count (`kernels::cholesky::CholeskyInfo`) so that the achieved flop
//! rate is flops / time (the SAP README's "Cost at scale").
//!
//! `cargo bench --bench sap` (add `-- --quick` for a fast pass).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use harness::runner::{self, Override, PairSpec, Suite};
use harness::stepper::{simulate, RunOptions};
use harness::{IterationLog, Scenario};
use kernels::block_cholesky::BlockSparseCholesky;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use solvers::sap::model::{Evaluation, HessianPattern};
use solvers::sap::{Sap, SapProblem, SapSettings};
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
        accuracy: None,
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

fn hessian_factor_benches(c: &mut Criterion) {
    let reg = signorini::registry();
    let suite = Suite {
        name: "sap-factor-bench".into(),
        pairs: vec![PairSpec {
            label: "clutter-80".into(),
            case: "clutter".into(),
            case_set: [("bodies", "80"), ("duration", "9")]
                .iter()
                .map(|(k, v)| (k.to_string(), Override::Text(v.to_string())))
                .collect(),
            solver: "sap".into(),
            solver_set: vec![],
        }],
        accuracy: None,
    };
    let pair = runner::prepare(&reg, &suite).expect("valid pair").remove(0);
    let settings = SapSettings::default();
    let mut sap = Sap::new(settings.clone());
    let o = simulate(&pair.scenario, &mut sap, RunOptions { logged_steps: 0, ..Default::default() }, &mut || {});
    assert!(o.failure.is_none(), "{:?}", o.failure);
    let p = o.stepper.problem().expect("assembles");
    let prob = SapProblem::from_step(&p, &settings, &mut Default::default()).expect("SAP problem");
    // H at the previous step's velocity, the warm start of this step's first Newton iteration
    let v = p.warm_start.map_or_else(|| p.v0.clone(), |w| w.velocity.clone());
    let mut eval = Evaluation::default();
    eval.resize(&prob);
    eval.calc(&prob, &v, true);
    let mut h = HessianPattern::default();
    h.build(&prob);
    h.assemble(&prob, &eval);
    let n = h.col_ptr.len() - 1;
    let mut group = c.benchmark_group("sap/hessian_factor");
    group.sample_size(50).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    for supernodal in [true, false] {
        let params = CholeskyParams { supernodal, ..Default::default() };
        let mut llt = SparseCholesky::analyze(n, h.col_ptr.clone(), h.row_idx.clone(), params).expect("analysis");
        let info = llt.info();
        eprintln!(
            "clutter-80 H: n {} contacts {} nnz(A lower) {} nnz(L) {} supernodal {} flops {}",
            info.n, prob.n_contacts, info.nnz_a, info.nnz_l, info.supernodal, info.flops
        );
        let name = if supernodal { "supernodal" } else { "simplicial" };
        group.bench_function(BenchmarkId::new(name, "clutter-80"), |b| {
            b.iter(|| llt.factorize(black_box(&h.values)).expect("SPD"))
        });
    }
    let mut block =
        BlockSparseCholesky::analyze(n, h.col_ptr.clone(), h.row_idx.clone(), h.blocks()).expect("analysis");
    let info = block.info();
    eprintln!("clutter-80 H, block: nnz(L) {} flops {}", info.nnz_l, info.flops);
    group.bench_function(BenchmarkId::new("block", "clutter-80"), |b| {
        b.iter(|| block.factorize(black_box(&h.values)).expect("SPD"))
    });
    group.finish();
}

criterion_group!(benches, sap_benches, hessian_factor_benches);
criterion_main!(benches);
