//! FCLIB problems solved as given and graded by the harness alone: a non-symmetric `W` taken as
//! it is by the solvers that work on `W` and refused, with its measured asymmetry, by those that
//! need it symmetric; a global problem whose `M` has a block above 6 DOFs; a solver whose `v`
//! does not balance its `r` graded on `r`; answers written as FCLIB solutions and graded back.

use api::{IterationLog, Params, SolveError, SolveStatus, Solver, SolverContext, StepProblem, StepSolution};
use fclib::{CscOps, FclibProblem, Form, GlobalProblem, LocalProblem};
use std::path::Path;
use std::process::Command;

mod common;
use common::solver;

/// The exact solution of [`skewed`]: contact 0 sticks inside its cone (`u_0 = 0`), contact 1
/// slides on the cone's boundary (`|r_t| = mu r_n`, `u_t` opposite to `r_t`, `u_n = 0`).
const R_STAR: [f64; 6] = [1.0, 0.1, 0.0, 2.0, 0.6, 0.8];
const U_STAR: [f64; 6] = [0.0, 0.0, 0.0, 0.0, -0.3 * 0.6, -0.3 * 0.8];

/// A two-contact local problem with a non-symmetric `W` (relative asymmetry 0.04) and the
/// exact solution [`R_STAR`]: `q = u* - W r*`.
fn skewed() -> LocalProblem {
    let mut t: Vec<(usize, usize, f64)> =
        [2.0, 1.5, 1.5, 2.5, 1.8, 1.6].iter().enumerate().map(|(i, &x)| (i, i, x)).collect();
    t.extend([(0, 3, 0.3), (3, 0, 0.25), (1, 4, 0.1), (4, 1, 0.05), (2, 5, -0.1), (0, 1, 0.05), (1, 0, 0.02)]);
    let w = fclib::Csc::from_triplets(6, 6, &t);
    let wr = w.mul(&R_STAR);
    let q = U_STAR.iter().zip(&wr).map(|(u, x)| u - x).collect();
    LocalProblem { w, q, mu: vec![0.5, 0.5] }
}

#[test]
fn the_skewed_problem_is_what_it_claims() {
    let p = FclibProblem::local_only(skewed());
    assert!((p.local.as_ref().unwrap().asymmetry() - 0.04).abs() < 1e-15);
    // its exact solution grades 0 on the harness's error; the symmetrised W's answer does not
    let g = fclib::Grader::new(&p).unwrap();
    assert!(g.grade(&R_STAR).error < 1e-15, "{}", g.grade(&R_STAR).error);
    for (a, b) in g.grade(&R_STAR).u.iter().zip(U_STAR) {
        assert!((a - b).abs() < 1e-15);
    }
}

/// pgs (W_ij rows, Siconos's NSGS) and nsn (Newton on `W`) take `W` as given and reach the exact
/// solution; the solvers that need a symmetric `W` are refused before they run, with the
/// measured asymmetry.
#[test]
fn a_non_symmetric_w_is_solved_as_given_or_refused() {
    let prob = FclibProblem::local_only(skewed());
    let prepared = fclib::Prepared::new(&prob).unwrap();
    let rep = prepared
        .solve(solver("pgs", &[("tolerance", "1e-14"), ("max_iterations", "10000")]).as_mut(), true, None)
        .unwrap();
    assert_eq!(rep.given, fclib::Given::Delassus { w_asymmetry: 0.04 });
    // pgs stops when the relative change of r is below 1e-14; a contraction factor of 0.9 or
    // less per sweep leaves the error within 1e-12
    assert!(rep.grade.error <= 1e-10, "pgs: error {}", rep.grade.error);
    for (a, b) in rep.r.iter().zip(R_STAR) {
        assert!((a - b).abs() <= 1e-8, "pgs: r {a} vs {b}");
    }
    // nsn's Newton on W (its own test on Siconos's error, here at 1e-12)
    let rep = prepared.solve(solver("nsn", &[("tolerance", "1e-12")]).as_mut(), true, None).unwrap();
    assert_eq!(rep.given, fclib::Given::Delassus { w_asymmetry: 0.04 });
    assert!(rep.grade.error <= 1e-10, "nsn: error {}", rep.grade.error);
    for (a, b) in rep.r.iter().zip(R_STAR) {
        assert!((a - b).abs() <= 1e-8, "nsn: r {a} vs {b}");
    }
    let why = prepared.check(false).unwrap_err().to_string();
    assert!(why.contains("W is not symmetric") && why.contains("4.00e-2") && why.contains("1e-10"), "{why}");

    // the bench: every symmetric-only solver skipped with that reason, pgs graded
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("files")).unwrap();
    fclib::write(&dir.path().join("files/skewed.hdf5"), &prob).unwrap();
    let out = dir.path().join("runs");
    let o = Command::new(env!("CARGO_BIN_EXE_signorini"))
        .args(["fclib", "bench", dir.path().join("files").to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--solver", "pgs,nsn,canal,subadmm,sap,drumwright", "--tolerance", "1e-10"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let records = reports::read_run_dir(&out).unwrap();
    assert_eq!(records.len(), 6);
    for r in &records {
        assert_eq!(r.case.params.0["w_asymmetry"].as_f64(), Some(0.04));
        if r.solver.name == "pgs" || r.solver.name == "nsn" {
            // graded by the harness, stopped by it at 1e-10
            assert_eq!((r.status, r.summary.unconverged_steps), (records::RunStatus::Ok, 0), "{}", r.solver.name);
            assert!(r.summary.metrics["fclib_error"].last <= 1e-10, "{}", r.solver.name);
            continue;
        }
        assert_eq!(r.status, records::RunStatus::Skipped, "{}", r.solver.name);
        let why = r.reason.as_deref().unwrap_or_default();
        assert!(why.contains("W is not symmetric") && why.contains("4.00e-2"), "{}: {why}", r.solver.name);
    }
}

/// pgs, whose `v` is replaced: its impulses halved, its velocity the one of its true answer, its
/// status `Solved`. Graded from its own `v` it would look solved.
struct HalfImpulses(Box<dyn Solver>);

impl Solver for HalfImpulses {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        let mut s = self.0.step(p, log)?;
        for r in &mut s.impulses {
            *r = r.map(|x| 0.5 * x);
        }
        s.status = SolveStatus::Solved;
        Ok(s)
    }
}

/// The bench grades the impulses, not the velocity a solver returns with them: a `v` that does
/// not balance `r` shows in `consistency`, and a `Solved` claim above the tolerance is recorded
/// as such.
#[test]
fn a_velocity_inconsistent_with_the_impulses_is_graded_on_the_impulses() {
    let prob = fclib::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fclib/slope_libhdf5.hdf5")).unwrap();
    let mut reg = signorini::registry();
    let pgs = reg.solvers.remove(reg.solvers.iter().position(|e| e.name == "pgs").unwrap());
    let entry = api::SolverEntry {
        name: "half-impulses",
        prepare: Box::new(|p: &Params| {
            let inner = (signorini::registry().find_solver("pgs").unwrap().prepare)(p)?;
            Ok(Box::new(move |ctx: &SolverContext| Box::new(HalfImpulses(inner(ctx))) as Box<dyn Solver>)
                as api::def::SolverFactory)
        }),
        ..pgs
    };
    let protocol = fclib::bench::Protocol {
        tolerance: 1e-8,
        max_iterations: 1000,
        time_limit_s: 10.0,
        form: None,
        stop: fclib::bench::Stop::Solver,
        condense: false,
    };
    // the global form itself (a solver on the condensed W returns no velocity of its own)
    let prepared = fclib::Prepared::new(&prob).unwrap().keeping_global();
    let provenance = records::Provenance::collect();
    let path = Path::new("slope.hdf5");
    let honest = fclib::bench::run_one(
        &prepared,
        path,
        signorini::registry().find_solver("pgs").unwrap(),
        &protocol,
        &provenance,
    )
    .unwrap()
    .record;
    let liar = fclib::bench::run_one(&prepared, path, &entry, &protocol, &provenance).unwrap().record;
    let m = |r: &records::RunRecord, k: &str| r.summary.metrics[k].last;
    assert_eq!(honest.summary.unconverged_steps, 0);
    assert!(m(&honest, "consistency") < 1e-12, "pgs's v balances its r: {}", m(&honest, "consistency"));
    assert_eq!(liar.summary.unconverged_steps, 1, "graded on r: error {}", m(&liar, "fclib_error"));
    assert!(m(&liar, "fclib_error") > 0.1, "{}", m(&liar, "fclib_error"));
    assert!(m(&liar, "consistency") > 0.1, "its v does not balance its r: {}", m(&liar, "consistency"));
    assert!(liar.reason.as_deref().unwrap_or_default().starts_with(fclib::bench::CLAIMED_SOLVED), "{:?}", liar.reason);
    // condensed (the default for a solver on W): no velocity of the solver's to check; the answer
    // carries the velocity that balances its impulses, computed by the harness
    let condensed = fclib::Prepared::new(&prob).unwrap();
    let rep = condensed.solve(solver("pgs", &[]).as_mut(), true, None).unwrap();
    assert!(matches!(rep.given, fclib::Given::Condensed { .. }), "{:?}", rep.given);
    assert_eq!(rep.consistency, None);
    assert_eq!(rep.v, condensed.grader.velocity_of(&rep.r));
}

/// Two 6-DOF "bodies" coupled into one 12-DOF diagonal block of `M` (as a finite element's mass
/// matrix is), two contacts: given to the solvers in whitened variables, the answer solves the
/// problem of the given `M` (graded with an LU of `M` itself) and its velocity balances it.
fn coupled(skew: f64) -> FclibProblem {
    let mut m = vec![];
    for i in 0..12 {
        m.push((i, i, 2.0 + 0.1 * i as f64));
    }
    for (i, j, x) in [(0usize, 6usize, 0.5), (1, 7, 0.4), (2, 8, -0.3), (3, 9, 0.2)] {
        m.push((i, j, x));
        m.push((j, i, x * (1.0 + skew)));
    }
    let mut h = vec![];
    for c in 0..2 {
        for k in 0..3 {
            h.push((6 * c + k, 3 * c + k, 1.0));
            h.push((6 * c + 3 + (k + 1) % 3, 3 * c + k, 0.2));
        }
    }
    let f = (0..12).map(|i| if i % 6 == 0 { -1.0 } else { 0.05 * i as f64 }).collect();
    let g = GlobalProblem {
        m: fclib::Csc::from_triplets(12, 12, &m),
        block_sizes: vec![12],
        h: fclib::Csc::from_triplets(12, 6, &h),
        f,
        w: vec![0.01, 0.0, 0.0, -0.02, 0.0, 0.0],
        mu: vec![0.3, 0.6],
    };
    FclibProblem::global_only(g)
}

#[test]
fn a_mass_block_above_six_dofs_is_given_in_whitened_variables() {
    let prob = coupled(0.0);
    let prepared = fclib::Prepared::new(&prob).unwrap();
    let reg = signorini::registry();
    for name in ["pgs", "nsn", "canal"] {
        let e = reg.find_solver(name).unwrap();
        let mut s = e.build(&e.with_budget_and_tolerance(1000, 1e-12).unwrap()).unwrap();
        let rep = prepared.solve(s.as_mut(), false, None).unwrap();
        assert_eq!(rep.given, fclib::Given::Global { whitened: 1, m_asymmetry: 0.0 }, "{name}");
        assert!(rep.grade.error <= 1e-9, "{name}: error {}", rep.grade.error);
        assert!(rep.r.iter().any(|x| *x != 0.0), "{name}: contacts are loaded");
        // pgs recomputes v = v* + M^-1 J^T r from its r: the map back to the file's v is checked
        // to round-off; nsn's and canal's v are their iterates', balanced to their inner solves
        let c = rep.consistency.unwrap();
        let bound = if name == "pgs" { 1e-12 } else { 1e-8 };
        assert!(c <= bound, "{name}: v mapped back balances r: {c}");
    }
    // M symmetric only to 1e-7 (as LMGC90's finite-element files store it, where that skew part
    // moves W by several per cent): the solvers reading a mass matrix refuse it with the measured
    // asymmetry; those working on W are given the W condensed with M as written, and solve it
    let skewed = coupled(1e-7);
    let prepared_skewed = fclib::Prepared::new(&skewed).unwrap();
    let why = prepared_skewed.check(false).unwrap_err().to_string();
    assert!(why.contains("M is not symmetric") && why.contains("1.61e-8") && why.contains("1e-10"), "{why}");
    let fclib::Given::Condensed { m_asymmetry, w_asymmetry } = prepared_skewed.check(true).unwrap() else {
        panic!("condensed for a Delassus solver")
    };
    assert!((m_asymmetry - 0.5e-7 / 3.1).abs() < 1e-12 && w_asymmetry > 0.0, "{m_asymmetry} {w_asymmetry}");
    let e = reg.find_solver("pgs").unwrap();
    let mut s = e.build(&e.with_budget_and_tolerance(10_000, 1e-14).unwrap()).unwrap();
    let rep = prepared_skewed.solve(s.as_mut(), true, None).unwrap();
    assert!(rep.grade.error <= 1e-10, "pgs on the condensed W, graded with M as written: {}", rep.grade.error);

    // condensed as Siconos does (--form local on a global-only file): W = H^T M^-1 H with M as
    // written, and the Delassus answer of pgs is the global answer
    let g = prob.global.as_ref().unwrap();
    let local = g.condense().unwrap();
    assert!(local.asymmetry() < 1e-15, "M symmetric: W symmetric ({})", local.asymmetry());
    assert!(skewed.global.unwrap().condense().unwrap().asymmetry() > 1e-9, "a skewed M skews W");
    let condensed = FclibProblem { form: Form::Local, local: Some(local), ..prob.clone() };
    let on_w = fclib::Prepared::new(&condensed).unwrap().solve(s.as_mut(), true, None).unwrap();
    let on_m = prepared.solve(s.as_mut(), false, None).unwrap();
    assert!(on_w.grade.error <= 1e-10, "{}", on_w.grade.error);
    // both answers graded on the global problem
    let (a, b) = (prepared.grader.grade(&on_w.r).error, prepared.grader.grade(&on_m.r).error);
    assert!(a <= 1e-10 && b <= 1e-10, "{a} {b}");
}

/// `fclib solve --write-solution` writes the problem with the answer as `/solution`; read back,
/// its stored solution grades to the error printed. A stored solution of zeros is no solution.
#[test]
fn answers_are_written_as_fclib_solutions_and_placeholders_are_not_graded() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("skewed.hdf5");
    let mut prob = FclibProblem::local_only(skewed());
    prob.solution = Some(fclib::Solution { v: vec![], u: vec![0.0; 6], r: vec![0.0; 6] });
    fclib::write(&input, &prob).unwrap();
    let out = dir.path().join("answer.hdf5");
    let o = Command::new(env!("CARGO_BIN_EXE_signorini"))
        .args(["fclib", "solve", input.to_str().unwrap(), "--solver", "pgs", "--set", "tolerance=1e-14"])
        .args(["--write-solution", out.to_str().unwrap()])
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(s.contains("stored solution: none (absent, or all zeros)"), "{s}");
    assert!(s.contains("W as given"), "{s}");
    let back = fclib::read(&out).unwrap();
    let stored = back.solution.as_ref().unwrap();
    assert_eq!(stored.r.len(), 6);
    let g = fclib::Grader::new(&back).unwrap().grade_stored(stored).unwrap();
    assert!(s.contains(&format!("graded from r: error {:.3e}", g.error)), "{s} / {}", g.error);
    for (a, b) in stored.u.iter().zip(&g.u) {
        assert_eq!(a, b, "the written u is W r + q");
    }
    // `fclib grade` grades any file's /solution against the problem with the same grader
    let o = Command::new(env!("CARGO_BIN_EXE_signorini"))
        .args(["fclib", "grade", input.to_str().unwrap(), "--answer", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["error"].as_f64(), Some(g.error));
    assert_eq!(j["natmap_1q"].as_f64(), Some(g.error_1q));
    // an answer of the wrong size is refused, naming the field
    let other = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fclib/slope_libhdf5.hdf5");
    let o = Command::new(env!("CARGO_BIN_EXE_signorini"))
        .args(["fclib", "grade", input.to_str().unwrap(), "--answer", other.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("/solution/r") && err.contains("length 12 != 6"), "{err}");
}

#[test]
fn the_error_is_siconos_scaling_and_the_other_columns_are_kept() {
    // one contact, W = I, q tiny, r huge and wrong: ||q|| = 1e-6, ||r|| = 1e3, ||u|| ~ 1e3
    let l = LocalProblem {
        w: fclib::Csc::from_triplets(3, 3, &[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0)]),
        q: vec![1e-6, 0.0, 0.0],
        mu: vec![0.5],
    };
    let g = fclib::Grader::new(&FclibProblem::local_only(l)).unwrap().grade(&[1e3, 0.0, 0.0]);
    // u = (1e3 + 1e-6, 0, 0); r - u - mu |u_t| e_n = (-1e-6, 0, 0) projects to 0: F = r
    assert!((g.residual - 1e3).abs() < 1e-9);
    let u = 1e3 + 1e-6;
    assert!((g.error - 1e3 / u).abs() < 1e-15, "Siconos: ||F|| / max(||q||, ||r||, ||u||) = {}", g.error);
    assert!((g.error_1q - 1e3 / (1.0 + 1e-6)).abs() < 1e-9, "||F|| / (1 + ||q||) = {}", g.error_1q);
    assert!((g.error_rel_q - 1e9).abs() < 1e-3, "||F|| / ||q|| = {}", g.error_rel_q);
}

/// Equal accuracy: the harness's rule stops pgs at the first sweep whose impulses grade within
/// `eps`, although pgs's own test (relative change below 1e-14) would go on; with a budget too
/// small to get there, pgs runs out and the best error it reached is kept.
#[test]
fn the_harness_stops_a_solver_at_the_accuracy_and_keeps_the_best_otherwise() {
    let prob = FclibProblem::local_only(skewed());
    let prepared = fclib::Prepared::new(&prob).unwrap();
    let pgs = |budget: &str| solver("pgs", &[("tolerance", "1e-14"), ("max_iterations", budget)]);
    let free = prepared.solve(pgs("10000").as_mut(), true, None).unwrap();
    let stopped = prepared.solve_to(pgs("10000").as_mut(), true, None, 1e-6).unwrap();
    assert_eq!(stopped.status, api::SolveStatus::Stopped);
    assert!(stopped.grade.error <= 1e-6, "{}", stopped.grade.error);
    assert!(stopped.iterations < free.iterations, "{} vs {}", stopped.iterations, free.iterations);
    let y = stopped.log.column("yardstick").unwrap();
    assert_eq!(y.len(), stopped.iterations);
    assert!(y[y.len() - 2] > 1e-6 && y[y.len() - 1] <= 1e-6, "stopped at the first sweep within eps: {y:?}");
    assert_eq!(y[y.len() - 1], stopped.grade.error, "the yardstick is the grade");
    let short = prepared.solve_to(pgs("2").as_mut(), true, None, 1e-12).unwrap();
    assert_eq!(short.status, api::SolveStatus::MaxIterations);
    let best = short.log.best_yardstick().unwrap();
    assert!(
        best > 1e-12 && best == short.log.column("yardstick").unwrap().iter().cloned().fold(f64::INFINITY, f64::min)
    );
}
