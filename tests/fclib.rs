//! FCLIB interoperability: export -> import gives the same problem bit for bit, the imported
//! problem solves to the same answer as the step it came from, the local form is consistent, a
//! file written by libhdf5 (triplet storage, no block sizes) is read, and bad files give an error
//! naming the file and the field.

use fclib::{CscOps, FclibProblem, Info};
use harness::runner::{self, Suite};
use harness::stepper::{simulate, RunOptions};
use harness::IterationLog;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::solver;

/// The world and contacts of `case` after `steps` steps of pgs.
fn state_after(case: &str, sets: &[(&str, &str)], steps: usize) -> (harness::model::World, harness::ContactSet, f64) {
    let reg = signorini::registry();
    let mut suite = Suite::single(case, "pgs");
    let sets: Vec<(String, String)> = sets.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    suite.apply_overrides(&reg, &sets).unwrap();
    let mut pair = runner::prepare(&reg, &suite).unwrap().remove(0);
    pair.scenario.steps = steps;
    let mut solver = reg.find_solver("pgs").unwrap().build(&pair.solver_params).unwrap();
    let out = simulate(&pair.scenario, solver.as_mut(), RunOptions::default(), &mut || {});
    assert!(out.failure.is_none(), "{:?}", out.failure);
    let (world, contacts) = (out.stepper.world().clone(), out.stepper.contacts().clone());
    (world, contacts, pair.scenario.dt)
}

fn pgs() -> Box<dyn harness::Solver> {
    let reg = signorini::registry();
    let e = reg.find_solver("pgs").unwrap();
    let mut p = (e.defaults)();
    p.set("tolerance", "1e-12", "pgs").unwrap();
    p.set("max_iterations", "5000", "pgs").unwrap();
    e.build(&p).unwrap()
}

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

fn assert_bitwise_equal(a: &FclibProblem, b: &FclibProblem) {
    assert_eq!(a, b);
    let (ga, gb) = (a.global.as_ref().unwrap(), b.global.as_ref().unwrap());
    for (x, y) in
        [(ga.m.data(), gb.m.data()), (ga.h.data(), gb.h.data()), (&ga.f, &gb.f), (&ga.w, &gb.w), (&ga.mu, &gb.mu)]
    {
        assert_eq!(bits(x), bits(y));
    }
    let (la, lb) = (a.local.as_ref().unwrap(), b.local.as_ref().unwrap());
    assert_eq!(bits(la.w.data()), bits(lb.w.data()));
    assert_eq!(bits(&la.q), bits(&lb.q));
}

#[test]
fn export_import_is_bit_exact_and_solves_to_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    for (case, sets, step) in [("sphere_stack", vec![("n", "3")], 5), ("slope", vec![("angle_deg", "30")], 20)] {
        let (world, contacts, dt) = state_after(case, &sets, step);
        let p = world.step_problem(&contacts, dt, None).unwrap();
        assert!(p.nc() > 0, "{case}: contacts at step {step}");
        let mut prob =
            fclib::from_step(&p, fclib::LOCAL_LIMIT, Info { title: case.into(), ..Info::default() }).unwrap();
        let mut log = IterationLog::new();
        let original = pgs().step(&p, &mut log).unwrap();
        prob.solution = Some(fclib::solution_of(&p, &original));

        let path = dir.path().join(format!("{case}.hdf5"));
        fclib::write(&path, &prob).unwrap();
        let back = fclib::read(&path).unwrap();
        assert_bitwise_equal(&prob, &back);
        let bg = back.global.as_ref().unwrap();
        assert_eq!(bg.block_sizes, p.mass.blocks().iter().map(|b| b.nrows()).collect::<Vec<_>>());

        // Solve the imported problem: same impulses and velocities as the original step.
        let rep = fclib::solve(&back, pgs().as_mut(), false).unwrap();
        let r0: Vec<f64> = original.impulses.iter().flatten().copied().collect();
        let scale = r0.iter().fold(1e-12f64, |m, x| m.max(x.abs()));
        for (a, b) in rep.r.iter().zip(&r0) {
            assert!((a - b).abs() <= 1e-9 * scale, "{case}: impulse {a} vs {b}");
        }
        let v = rep.v.clone().unwrap();
        for (a, b) in v.iter().zip(&original.v) {
            assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{case}: velocity {a} vs {b}");
        }
        assert!(rep.grade.error < 1e-8, "{case}: natural-map error {}", rep.grade.error);
        assert!(rep.stored.unwrap().error < 1e-8);
        assert!(rep.consistency.unwrap() < 1e-12, "{case}: pgs's v balances its r: {:?}", rep.consistency);

        // The local form agrees with the global one: W r + q = H^T v + w at our solution.
        let local = back.local.as_ref().unwrap();
        let wr = local.w.mul(&rep.r);
        let u_local: Vec<f64> = wr.iter().zip(&local.q).map(|(a, b)| a + b).collect();
        let u_global: Vec<f64> = bg.h.tr_mul(&v).iter().zip(&bg.w).map(|(a, b)| a + b).collect();
        for (a, b) in u_local.iter().zip(&u_global) {
            assert!((a - b).abs() < 1e-9, "{case}: u local {a} vs global {b}");
        }
    }
}

/// Every solver that takes rigid contact, on the libhdf5 fixture, on an exported sphere-stack
/// step and on a local-only export of a stack of three boxes (read through its Cholesky view,
/// where contacts act on more than two DOF blocks): no panic, no error, no refusal, and an answer
/// to the FCLIB problem. The solvers of the rigid Coulomb NCP (pgs, nsn, canal, subadmm) must
/// solve it: a natural-map error below 1e-4, four orders of magnitude under the error 1 of an
/// unsolved problem (r = 0), and far above their own stopping tolerances. The regularised models
/// (sap, drumwright) answer a different problem (compliant contact, a regularised friction law),
/// so a finite error and a finite own-model residual are asserted for them.
#[test]
fn every_solver_answers_every_fixture_without_panic() {
    let (world, contacts, dt) = state_after("sphere_stack", &[("n", "3")], 5);
    let p = world.step_problem(&contacts, dt, None).unwrap();
    let exported = fclib::from_step(&p, fclib::LOCAL_LIMIT, Info::default()).unwrap();
    let boxes = [("shape", "box"), ("n", "3"), ("ratio", "1")];
    let (world, contacts, dt) = state_after("heavy_stack", &boxes, 5);
    let p = world.step_problem(&contacts, dt, None).unwrap();
    let mut local_only = fclib::from_step(&p, fclib::LOCAL_LIMIT, Info::default()).unwrap();
    (local_only.form, local_only.global) = (fclib::Form::Local, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("boxes-local.hdf5");
    fclib::write(&path, &local_only).unwrap();
    let local_only = fclib::read(&path).unwrap();
    assert_eq!(local_only.form, fclib::Form::Local);
    let prepared = fclib::Prepared::new(&local_only).unwrap();
    let h = prepared.global_view().unwrap().0.linear.contacts().jacobian_triplets();
    let most_blocks = (0..local_only.nc())
        .map(|i| {
            let mut b: Vec<usize> = h.iter().filter(|t| t.0 / 3 == i).map(|t| t.1 / 6).collect::<Vec<_>>();
            b.sort_unstable();
            b.dedup();
            b.len()
        })
        .max()
        .unwrap();
    assert!(most_blocks > 2, "a contact of the box stack's view acts on {most_blocks} blocks");
    let problems = [
        ("libhdf5 slope", fclib::read(&fixture()).unwrap()),
        ("sphere_stack step 5", exported),
        ("box stack step 5, local only", local_only),
    ];
    let reg = signorini::registry();
    let mut ran = 0;
    for e in reg.solvers.iter().filter(|e| e.capabilities.rigid_contact) {
        for (name, prob) in &problems {
            let mut params = (e.defaults)();
            if e.name == "subadmm" {
                // first order: its 100-iteration default stops at 1.3e-4 on the stack; the test
                // asks whether it converges to the FCLIB answer, not how fast
                params.set("max_iterations", "5000", "subadmm").unwrap();
            }
            let mut solver = e.build(&params).unwrap();
            let result = fclib::solve(prob, solver.as_mut(), e.capabilities.delassus_form);
            if !e.capabilities.rigid_bodies {
                // a deformable-body method: refuses the generic mass matrix with the reason
                let err = result.expect_err(e.name);
                assert!(
                    matches!(err, fclib::SolveFailure::Solver(harness::SolveError::Unsupported { .. })),
                    "{} on {name}: {err}",
                    e.name
                );
                continue;
            }
            let rep = result.unwrap_or_else(|err| panic!("{} on {name}: {err}", e.name));
            let error = rep.grade.error;
            assert!(error.is_finite(), "{} on {name}: error {error}", e.name);
            if !e.model.is_regularised() {
                assert!(error < 1e-4, "{} on {name}: natural-map error {error}", e.name);
            } else {
                let own = e.model.own_residual(&rep.log);
                assert!(own.is_some_and(f64::is_finite), "{} on {name}: own-model residual {own:?}", e.name);
            }
            ran += 1;
        }
    }
    assert!(ran >= 3 * 6, "{ran} solver runs: every rigid-body solver on the three problems");
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fclib/slope_libhdf5.hdf5")
}

#[test]
fn reads_a_file_written_by_libhdf5() {
    let prob = fclib::read(&fixture()).unwrap();
    let g = prob.global.as_ref().unwrap();
    assert_eq!((g.nv(), g.nc()), (6, 4));
    assert_eq!(g.block_sizes, vec![6], "6-DOF blocks found from M's sparsity");
    assert_eq!(prob.info.title, "slope step 50, written by libhdf5");
    assert!(prob.local.is_none());
    assert_eq!(prob.guesses.len(), 1);
    assert!(prob.guesses[0].r.iter().all(|x| *x == 0.0), "the fixture's guess is all zeros");
    let rep = fclib::solve(&prob, pgs().as_mut(), false).unwrap();
    assert!(rep.grade.error < 1e-8, "{}", rep.grade.error);
    assert!(rep.stored.unwrap().error < 1e-8);
    assert_eq!(rep.guesses, vec![None], "an all-zero guess is no answer, not an answer of error 0");
}

/// The fixture with `edit` applied, written to `dir/name`.
fn edited(dir: &Path, name: &str, edit: impl Fn(&mut FclibProblem)) -> PathBuf {
    let mut prob = fclib::read(&fixture()).unwrap();
    edit(&mut prob);
    let path = dir.join(name);
    fclib::write(&path, &prob).unwrap();
    path
}

#[test]
fn bad_files_name_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let expect = |path: &Path, needles: &[&str]| {
        let e = fclib::read(path).unwrap_err().to_string();
        assert!(e.contains(&path.display().to_string()), "'{e}' names the file");
        for n in needles {
            assert!(e.contains(n), "'{e}' should contain '{n}'");
        }
    };
    // Truncated.
    let bytes = std::fs::read(fixture()).unwrap();
    let truncated = d.join("truncated.hdf5");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let e = fclib::read(&truncated).unwrap_err().to_string();
    assert!(e.contains("truncated.hdf5"), "{e}");
    // Not HDF5 at all.
    let text = d.join("text.hdf5");
    std::fs::write(&text, "hello").unwrap();
    expect(&text, &["not a readable HDF5 file"]);
    // HDF5, not FCLIB.
    let other = d.join("other.hdf5");
    let mut fb = fclib::hdf5_pure::FileBuilder::new();
    fb.create_dataset("temperature").with_f64_data(&[1.0, 2.0]);
    std::fs::write(&other, fb.finish().unwrap()).unwrap();
    expect(&other, &["/fclib_global", "not an FCLIB file"]);
    // Mismatched dimensions and bad values.
    expect(
        &edited(d, "mu_len.hdf5", |p| p.global.as_mut().unwrap().mu.pop().map(|_| ()).unwrap()),
        &["/fclib_global/vectors/mu", "length 3"],
    );
    expect(
        &edited(d, "neg_mu.hdf5", |p| p.global.as_mut().unwrap().mu[2] = -0.1),
        &["/fclib_global/vectors/mu", "contact 2", "-0.1"],
    );
    expect(
        &edited(d, "f_len.hdf5", |p| p.global.as_mut().unwrap().f.push(0.0)),
        &["/fclib_global/vectors/f", "length 7"],
    );
    expect(&edited(d, "w_len.hdf5", |p| p.global.as_mut().unwrap().w.truncate(9)), &["/fclib_global/vectors/w"]);
    expect(
        &edited(d, "h_rows.hdf5", |p| {
            let g = p.global.as_mut().unwrap();
            g.h = fclib::Csc::from_triplets(5, 12, &g.h.triplets()[..1]);
        }),
        &["/fclib_global/H/m", "5 rows"],
    );
    expect(
        &edited(d, "nan.hdf5", |p| p.global.as_mut().unwrap().f[0] = f64::NAN),
        &["/fclib_global/vectors/f", "not finite"],
    );
    expect(
        &edited(d, "blocks.hdf5", |p| p.global.as_mut().unwrap().block_sizes = vec![3, 2, 1]),
        &["/fclib_global/M/block_sizes"],
    );
    // The command line reports the same, with exit code 2.
    let out = Command::new(env!("CARGO_BIN_EXE_signorini"))
        .args(["fclib", "solve", d.join("neg_mu.hdf5").to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("neg_mu.hdf5") && err.contains("mu"), "{err}");
}

#[test]
fn cli_export_then_solve() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("stack.hdf5");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_signorini")).args(args).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let f = file.to_str().unwrap();
    let s = run(&["fclib", "export", "--case", "sphere_stack", "--set", "n=2", "--step", "3", f]);
    assert!(s.contains("2 contacts") && s.contains("local form"), "{s}");
    let s = run(&["fclib", "solve", f, "--set", "tolerance=1e-10"]);
    assert!(s.contains("graded from r: error") && s.contains("stored solution: error"), "{s}");
}

/// A file with the local form only (W = H^T M^-1 H of an exported sphere stack) is read through
/// its Cholesky view, and solving it gives the impulses of the global form within the solvers'
/// tolerance; the grading uses the file's W and q.
#[test]
fn local_form_only_file_solves_to_the_global_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (world, contacts, dt) = state_after("sphere_stack", &[("n", "3")], 5);
    let p = world.step_problem(&contacts, dt, None).unwrap();
    let global = fclib::from_step(&p, fclib::LOCAL_LIMIT, Info { title: "stack".into(), ..Info::default() }).unwrap();
    let mut local_only = global.clone();
    (local_only.form, local_only.global) = (fclib::Form::Local, None);
    let path = dir.path().join("local.hdf5");
    fclib::write(&path, &local_only).unwrap();
    // no global form in the file: reading it for the global form names the way out
    let e = fclib::read_as(&path, Some(fclib::Form::Global)).unwrap_err().to_string();
    assert!(e.contains("/fclib_global") && e.contains("--form local"), "{e}");
    let back = fclib::read(&path).unwrap();
    assert_eq!(back.form, fclib::Form::Local);
    assert_eq!(back.info.title, "stack", "the local form's info is read");
    let prepared = fclib::Prepared::new(&back).unwrap();
    let (view, given) = prepared.global_view().unwrap();
    assert_eq!(*given, fclib::Given::CholeskyView { regularisation: 0.0 }, "the stack's W is positive definite");
    let (vg, _) = back.local.as_ref().unwrap().global_view().unwrap();
    assert_eq!(view.linear.nv(), vg.nv());
    let w = &back.local.as_ref().unwrap().w;
    // the view: H^T M^-1 H = W (M = I), H^T M^-1 f + w = q
    let n = w.rows();
    for c in 0..n {
        let mut e = vec![0.0; n];
        e[c] = 1.0;
        let hte = vg.h.tr_mul(&vg.h.mul(&e));
        let wc = w.mul(&e);
        for (a, b) in hte.iter().zip(&wc) {
            assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "column {c}: {a} vs {b}");
        }
    }
    let view_problem = fclib::FclibProblem { form: fclib::Form::Global, global: Some(vg), local: None, ..back.clone() };
    let q = fclib::Grader::new(&view_problem).unwrap().q().to_vec();
    for (a, b) in q.iter().zip(&back.local.as_ref().unwrap().q) {
        assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "q {a} vs {b}");
    }
    // pgs at a tighter tolerance: its own test (relative change 1e-8) stops it at 1.1e-8
    for (name, sets) in [("canal", vec![]), ("nsn", vec![]), ("pgs", vec![("tolerance", "1e-12")])] {
        let delassus = signorini::registry().find_solver(name).unwrap().capabilities.delassus_form;
        let rg = fclib::solve(&global, solver(name, &sets).as_mut(), delassus).unwrap();
        let rl = fclib::solve(&back, solver(name, &sets).as_mut(), delassus).unwrap();
        let (eg, el) = (rg.grade.error, rl.grade.error);
        assert!(eg < 1e-8 && el < 1e-8, "{name}: errors {eg} (global), {el} (local)");
        let scale = rg.r.iter().fold(1e-12f64, |m, x| m.max(x.abs()));
        for (a, b) in rl.r.iter().zip(&rg.r) {
            assert!((a - b).abs() <= 1e-6 * scale, "{name}: local impulse {a} vs global {b}");
        }
    }
}

/// A semi-definite W (a contact with a zero tangential row) gets the smallest regularisation
/// that factors, reported; the view of a dense W has a contact on three DOF blocks, and every
/// solver that takes FCLIB answers it: pgs, subadmm and canal solve the file's W, sap and
/// drumwright their own regularised model.
#[test]
fn local_view_regularises_and_every_solver_takes_contacts_on_many_blocks() {
    // 5 contacts all coupled through a dense W: in the view (contacts paired into 6-DOF blocks)
    // contact 4 acts on 3 blocks
    let nc = 5;
    let n = 3 * nc;
    let mut t = vec![];
    for i in 0..n {
        for j in 0..n {
            let x = if i == j { 2.0 } else { 0.1 };
            t.push((i, j, x));
        }
    }
    // zero the last tangential row and column: W only semi-definite
    let t: Vec<_> = t.into_iter().filter(|&(i, j, _)| i != n - 1 && j != n - 1).collect();
    let w = fclib::Csc::from_triplets(n, n, &t);
    let q: Vec<f64> = (0..n).map(|i| if i % 3 == 0 { -1.0 } else { 0.1 }).collect();
    let local = fclib::LocalProblem { w, q, mu: vec![0.5; nc] };
    let (g, eps) = local.global_view().unwrap();
    assert!(eps > 0.0 && eps <= 1e-12 * 2.0, "regularisation {eps}");
    // H^T H = W + eps I
    for (c, x) in [(0usize, 2.0 + eps), (n - 1, eps)] {
        let mut e = vec![0.0; n];
        e[c] = 1.0;
        let col = g.h.tr_mul(&g.h.mul(&e));
        assert!((col[c] - x).abs() <= 1e-12, "diagonal {c}: {} vs {x}", col[c]);
    }
    let mut blocks: Vec<usize> = g.h.triplets().into_iter().filter(|t| t.1 >= 12).map(|t| t.0 / 6).collect();
    blocks.sort_unstable();
    blocks.dedup();
    assert_eq!(blocks, vec![0, 1, 2], "contact 4 acts on three blocks of the view");
    let prob = fclib::FclibProblem::local_only(local);
    // W is diagonally dominant (off-diagonal row sums at most 1.4 < 2): the exact solvers
    // converge; 1e-6 is a hundred times their 1e-8 stopping tolerances, the margin a contraction
    // factor of up to 0.99 leaves between the last change and the error
    for (name, sets) in [("pgs", vec![]), ("canal", vec![]), ("subadmm", vec![("max_iterations", "5000")])] {
        let rep = fclib::solve(&prob, solver(name, &sets).as_mut(), false).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(rep.grade.error < 1e-6, "{name} on the regularised view: {}", rep.grade.error);
    }
    // the regularised models answer their own model: finite rigid error, own residual reported
    for name in ["sap", "drumwright"] {
        let rep = fclib::solve(&prob, solver(name, &[]).as_mut(), false).unwrap_or_else(|e| panic!("{name}: {e}"));
        let model = signorini::registry().find_solver(name).unwrap().model;
        assert!(model.is_regularised(), "{name} declares a regularised model");
        let own = model.own_residual(&rep.log).unwrap();
        let error = rep.grade.error;
        assert!(error.is_finite() && own.is_finite(), "{name}: error {error}, own residual {own}");
    }
    // the deformable-only method is refused before anything runs
    let reg = signorini::registry();
    let why = fclib::bench::accepts(reg.find_solver("local_global").unwrap()).unwrap_err();
    assert!(matches!(why, fclib::bench::BenchError::Unsupported { rigid_bodies: false, .. }), "{why:?}");
    assert!(why.to_string().contains("rigid bodies: false"), "{why}");
}

/// `fclib bench` end to end on two exported problems: one record per (problem, solver), the
/// protocol's error below the tolerance for the exact solvers, an exhausted budget recorded as
/// unsolved, and the performance profile of the records.
#[test]
fn bench_end_to_end_on_exported_problems() {
    let dir = tempfile::tempdir().unwrap();
    let (files, out) = (dir.path().join("files"), dir.path().join("runs"));
    std::fs::create_dir_all(&files).unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_signorini")).args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let stack = files.join("stack-3.hdf5");
    let slope = files.join("slope-20.hdf5");
    run(&["fclib", "export", "--case", "sphere_stack", "--set", "n=3", "--step", "3", stack.to_str().unwrap()]);
    run(&["fclib", "export", "--case", "slope", "--step", "20", "--local-only", slope.to_str().unwrap()]);
    let s =
        run(&["fclib", "bench", files.to_str().unwrap(), "--solver", "pgs,canal,sap", "--out", out.to_str().unwrap()]);
    assert!(s.contains("2 files (0 unreadable) x 3 solvers: 6 pairs"), "{s}");
    let records = reports::read_run_dir(&out).unwrap();
    assert_eq!(records.len(), 6);
    for r in &records {
        assert_eq!(r.case.name, "fclib");
        let form = r.case.params.0["form"].as_str().unwrap();
        assert_eq!(form, if r.case.label == "slope-20" { "local" } else { "global" });
        let family =
            if r.case.label == "slope-20" { "signorini slope step 20" } else { "signorini sphere_stack step 3" };
        assert_eq!(r.case.params.0["family"].as_str().unwrap(), family, "the family is the file's title");
        assert_eq!(r.status, records::RunStatus::Ok, "{} {}: {:?}", r.case.label, r.solver.name, r.reason);
        if r.solver.name == "sap" {
            // the regularised model: graded on the rigid error, its own residual recorded apart
            assert!(r.summary.metrics["model_residual"].last.is_finite(), "{}: sap's own residual", r.case.label);
            continue;
        }
        // the harness stops pgs and canal at the tolerance (equal accuracy)
        let err = r.summary.metrics["fclib_error"].last;
        assert!(err <= 1e-8 && r.summary.unconverged_steps == 0, "{} {}: error {err}", r.case.label, r.solver.name);
        assert_eq!(r.case.params.0["stop"].as_str(), Some("harness"));
        assert!(r.summary.iterations_per_step.max >= 1.0 && r.summary.stage_times.solve_s > 0.0);
    }
    // a one-iteration budget: pgs cannot reach 1e-8 on the stack, and says so
    let tight = dir.path().join("tight");
    run(&[
        "fclib",
        "bench",
        files.to_str().unwrap(),
        "--solver",
        "pgs",
        "--max-iterations",
        "1",
        "--out",
        tight.to_str().unwrap(),
    ]);
    let r = reports::read_run_dir(&tight).unwrap().into_iter().find(|r| r.case.label == "stack-3").unwrap();
    assert_eq!(r.summary.unconverged_steps, 1, "error {}", r.summary.metrics["fclib_error"].last);
    assert!(r.summary.metrics["fclib_error"].last > 1e-8);
    // a time limit shorter than one sweep: pgs stops after its first sweep with that iterate,
    // which is graded (a finite error) and counted as unsolved, the reason saying why
    let late = dir.path().join("late");
    let files_arg = files.to_str().unwrap();
    run(&["fclib", "bench", files_arg, "--solver", "pgs", "--time-limit", "1e-9", "--out", late.to_str().unwrap()]);
    for r in reports::read_run_dir(&late).unwrap() {
        assert_eq!(r.status, records::RunStatus::Ok, "{}: {:?}", r.case.label, r.reason);
        assert_eq!(r.summary.unconverged_steps, 1, "{}", r.case.label);
        assert_eq!(r.summary.iterations_per_step.max, 1.0, "{}: one sweep", r.case.label);
        assert!(r.summary.metrics["fclib_error"].last.is_finite(), "{}: the answer is graded", r.case.label);
        let why = r.reason.as_deref().unwrap_or_default();
        assert!(why.contains("stopped at the time limit (0.000000001 s)"), "{}: {why}", r.case.label);
    }
    // each solver on its own criterion (--stop solver): pgs meets its own test (relative change
    // below 1e-8) at an error just above 1e-8 on the stack (measured 1.14e-8), a claim the harness
    // overrules, and says so
    let own = dir.path().join("own");
    let out_own = own.to_str().unwrap();
    run(&["fclib", "bench", files_arg, "--solver", "pgs", "--stop", "solver", "--out", out_own]);
    let r = reports::read_run_dir(&own).unwrap().into_iter().find(|r| r.case.label == "stack-3").unwrap();
    let why = r.reason.as_deref().unwrap_or_default();
    assert_eq!(r.summary.unconverged_steps, 1, "{why}");
    assert!(why.starts_with(fclib::bench::CLAIMED_SOLVED), "{why}");
    assert_eq!(r.case.params.0["stop"].as_str(), Some("solver"));
    // the profile of the campaign: canal and pgs answer both problems
    use reports::profile::{cost_table, ratios, rho, Cost, Measure};
    let table = cost_table(&records, Measure::Iterations);
    assert_eq!(table.problems, vec!["slope-20".to_string(), "stack-3".to_string()]);
    let (canal, pgs) = (0, 1);
    assert_eq!(table.solvers[canal], "canal");
    let r = ratios(&table.costs, 1.0);
    assert!(matches!(table.costs[0][pgs], Cost::Solved(_)) && matches!(table.costs[1][pgs], Cost::Solved(_)));
    assert_eq!(rho(&r, canal, f64::MAX), 1.0, "canal solves both problems");
    // the report shows the regularised model's own residual apart from the profiles
    let report = dir.path().join("report");
    run(&["report", out.to_str().unwrap(), "--out", report.to_str().unwrap()]);
    let md = std::fs::read_to_string(report.join("summary.md")).unwrap();
    let section = md.split("## FCLIB: regularised models, own-model residual apart").nth(1).expect("the section");
    let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| ") && l.contains(" | sap | ")).collect();
    assert_eq!(rows.len(), 2, "one sap row per problem: {section}");
    for r in records.iter().filter(|r| r.solver.name == "sap") {
        let own = reports::table::cell(Some(r.summary.metrics["model_residual"].last));
        let row = rows.iter().find(|l| l.starts_with(&format!("| {} | sap | ", r.case.label))).unwrap();
        assert!(row.ends_with(&format!(" | {own} |")), "{row} shows the own residual {own}");
    }
    assert!(!section.contains(" | pgs | ") && !section.contains(" | canal | "), "only regularised models");
    let html = std::fs::read_to_string(report.join("index.html")).unwrap();
    assert!(html.contains("FCLIB: regularised models, own-model residual apart"));
}

/// Every registered solver names its outer iteration budget (an integer setting) and its stopping
/// tolerance (a number) among its own settings, and `fclib bench` sets exactly those two, to the
/// protocol's values, leaving every other setting at its default.
#[test]
fn every_solver_declares_its_budget_and_tolerance_and_the_bench_sets_exactly_those() {
    let reg = signorini::registry();
    let protocol = fclib::bench::Protocol {
        tolerance: 3e-7,
        max_iterations: 123,
        time_limit_s: 1.0,
        form: None,
        stop: fclib::bench::Stop::Solver,
        condense: true,
    };
    for e in &reg.solvers {
        let defaults = (e.defaults)();
        let budget = defaults.0.get(e.budget).unwrap_or_else(|| panic!("{}: no setting '{}'", e.name, e.budget));
        assert!(budget.is_u64(), "{}: budget '{}' = {budget} is not an integer", e.name, e.budget);
        let tol = defaults.0.get(e.tolerance).unwrap_or_else(|| panic!("{}: no setting '{}'", e.name, e.tolerance));
        assert!(tol.is_f64(), "{}: tolerance '{}' = {tol} is not a number", e.name, e.tolerance);
        assert_ne!(e.budget, e.tolerance, "{}", e.name);
        let set = fclib::bench::settings(e, &protocol).unwrap();
        let changed: std::collections::BTreeSet<&str> =
            set.0.keys().filter(|k| set.0.get(*k) != defaults.0.get(*k)).map(String::as_str).collect();
        let mut expected: std::collections::BTreeSet<&str> = [e.budget, e.tolerance].into();
        expected.retain(|k| defaults.0[*k] != set.0[*k]);
        assert_eq!(changed, expected, "{}: the bench changes only the declared settings", e.name);
        assert_eq!(set.0[e.budget].as_u64(), Some(123), "{}", e.name);
        assert_eq!(set.0[e.tolerance].as_f64(), Some(3e-7), "{}", e.name);
        assert_eq!(set.0.len(), defaults.0.len(), "{}: no setting added", e.name);
        e.build(&set).unwrap_or_else(|err| panic!("{}: the bench's settings are valid: {err}", e.name));
    }
}
