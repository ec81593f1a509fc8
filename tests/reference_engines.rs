//! Reference engines: the MJCF export (round trip through an XML parser, sidecar map, refusals)
//! and `signorini grade` (refusal of malformed trajectories; a signorini run converted to a
//! trajectory gets the same oracle verdicts as the run itself).

use harness::runner::{prepare, Suite};
use harness::stepper::{simulate, RunOptions};
use records::Provenance;
use reference::{Engine, Trajectory, TrajectoryError};
use std::process::Command;

fn build(case: &str, set: &[(&str, &str)]) -> (harness::Params, harness::Scenario) {
    let reg = signorini::registry();
    let c = reg.find_case(case).unwrap();
    let mut p = c.defaults();
    for (k, v) in set {
        p.set(k, v, case).unwrap();
    }
    let sc = c.prepare(&p).unwrap().scenario().clone();
    (p, sc)
}

fn exported(case: &str, set: &[(&str, &str)]) -> reference::Export {
    let (p, sc) = build(case, set);
    reference::export(case, &p, &sc).unwrap()
}

/// (name, type) of the geoms of `body` (None: the world body's own geoms).
fn geoms(doc: &roxmltree::Document, body: Option<&str>) -> Vec<(String, String)> {
    let parent = match body {
        None => doc.descendants().find(|n| n.has_tag_name("worldbody")).unwrap(),
        Some(b) => doc.descendants().find(|n| n.has_tag_name("body") && n.attribute("name") == Some(b)).unwrap(),
    };
    parent
        .children()
        .filter(|n| n.has_tag_name("geom"))
        .map(|n| (n.attribute("name").unwrap().to_string(), n.attribute("type").unwrap().to_string()))
        .collect()
}

#[test]
fn slope_exports_a_free_box_on_a_tilted_plane() {
    let e = exported("slope", &[]);
    let doc = roxmltree::Document::parse(&e.mjcf).expect("well-formed XML");
    let bodies: Vec<&str> =
        doc.descendants().filter(|n| n.has_tag_name("body")).map(|n| n.attribute("name").unwrap()).collect();
    assert_eq!(bodies, ["b0_box"]);
    assert_eq!(geoms(&doc, None), [("static0_slope".to_string(), "plane".to_string())]);
    assert_eq!(geoms(&doc, Some("b0_box")), [("b0_box_g0".to_string(), "box".to_string())]);
    assert!(doc.descendants().any(|n| n.has_tag_name("freejoint")));
    let opt = doc.descendants().find(|n| n.has_tag_name("option")).unwrap();
    assert_eq!(opt.attribute("timestep"), Some("0.01"));
    assert_eq!(opt.attribute("gravity"), Some("0.0 0.0 -9.81"));
    // the plane's normal (its z axis) is the slope's normal (-sin a, 0, cos a)
    let plane = doc.descendants().find(|n| n.attribute("name") == Some("static0_slope")).unwrap();
    let q: Vec<f64> = plane.attribute("quat").unwrap().split(' ').map(|x| x.parse().unwrap()).collect();
    let r = nalgebra::UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[0], q[1], q[2], q[3]));
    let a = 10f64.to_radians();
    assert!((r * nalgebra::Vector3::z() - nalgebra::Vector3::new(-a.sin(), 0.0, a.cos())).norm() < 1e-12);
    let s = &e.sidecar;
    assert_eq!((s.nq, s.nv, s.mj_nq, s.mj_nv, s.steps), (7, 6, 7, 6, 100));
    assert_eq!(s.bodies[0].joint, reference::mjcf::BodyJoint::Free);
    assert_eq!((s.bodies[0].q_offset, s.bodies[0].v_offset, s.bodies[0].dofs), (0, 0, [true; 6]));
    assert_eq!(s.geoms.iter().map(|g| g.mapping.as_str()).collect::<Vec<_>>(), ["rigid", "rigid"]);
    // the sidecar survives a JSON round trip
    let back: reference::Sidecar = serde_json::from_str(&serde_json::to_string(s).unwrap()).unwrap();
    assert_eq!(&back, s);
}

#[test]
fn spring_cylinder_exports_planar_joints_with_the_spring_on_the_slide() {
    let e = exported("spring_cylinder", &[("mu", "0"), ("dt", "0.002")]);
    let doc = roxmltree::Document::parse(&e.mjcf).unwrap();
    let joints: Vec<(&str, &str)> = doc
        .descendants()
        .filter(|n| n.has_tag_name("joint"))
        .map(|n| (n.attribute("type").unwrap(), n.attribute("axis").unwrap()))
        .collect();
    assert_eq!(joints, [("slide", "1.0 0.0 0.0"), ("slide", "0.0 0.0 1.0"), ("hinge", "0.0 1.0 0.0")]);
    let x = doc.descendants().find(|n| n.has_tag_name("joint")).unwrap();
    assert_eq!((x.attribute("stiffness"), x.attribute("springref")), (Some("100.0"), Some("-0.1")));
    assert_eq!(geoms(&doc, Some("b0_cylinder"))[0].1, "cylinder");
    let s = &e.sidecar;
    assert_eq!((s.nq, s.nv, s.mj_nq, s.mj_nv), (7, 3, 3, 3));
    assert_eq!(s.bodies[0].dofs, [true, false, true, false, true, false]);
    let adr: Vec<(usize, usize)> = s.bodies[0].joints.iter().map(|j| (j.qpos_adr, j.dof_adr)).collect();
    assert_eq!(adr, [(0, 0), (1, 1), (2, 2)]);
    // at dt = 2 ms the Kelvin-Voigt map is stable: solref = (-k/m_row, -k tau_d/m_row), k per
    // point = 1e4/2, MuJoCo's row mass of the planar body 3 m / 2
    let body_geom = s.geoms.iter().find(|g| g.body == Some(0)).unwrap();
    assert_eq!(body_geom.mapping, "direct");
    assert_eq!(body_geom.solref, [-5e3 / 0.75, -5e3 * 0.02 / 0.75]);
    // at the default 20 ms it is not, and the export says so
    let e = exported("spring_cylinder", &[]);
    assert!(e.sidecar.geoms.iter().any(|g| g.mapping == "rigid_fallback"));
    assert!(e.sidecar.notes.iter().any(|n| n.contains("cannot take at dt = 0.02")));
}

#[test]
fn sphere_stack_and_clutter_export_every_body() {
    let e = exported("sphere_stack", &[]);
    let doc = roxmltree::Document::parse(&e.mjcf).unwrap();
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("body")).count(), 5);
    assert_eq!(e.sidecar.nq, 35);
    let e = exported("clutter", &[("bodies", "40")]);
    let doc = roxmltree::Document::parse(&e.mjcf).unwrap();
    assert_eq!(doc.descendants().filter(|n| n.has_tag_name("body")).count(), 40);
    assert_eq!(geoms(&doc, None).len(), 5, "ground + 4 walls");
}

#[test]
fn pendulum_exports_its_hinge_at_the_pivot() {
    let e = exported("pendulum", &[]);
    let doc = roxmltree::Document::parse(&e.mjcf).unwrap();
    let j = doc.descendants().find(|n| n.has_tag_name("joint")).unwrap();
    assert_eq!(j.attribute("type"), Some("hinge"));
    assert_eq!(j.attribute("pos"), Some("-1.0 0.0 0.0"));
    assert_eq!(e.sidecar.bodies[0].joint, reference::mjcf::BodyJoint::WorldJoint);
}

#[test]
fn deformable_case_is_refused() {
    let (p, sc) = build("twisting_bar", &[]);
    let err = reference::export("twisting_bar", &p, &sc).unwrap_err();
    assert_eq!(err.reason, reference::mjcf::Unexportable::Deformables);
    assert_eq!(err.to_string(), "case 'twisting_bar' cannot be exported as MJCF: it has deformable (FEM) bodies");
}

/// A signorini run of `case` with `solver`, as a trajectory, and the run's own record.
fn own_run(case: &str, set: &[(&str, &str)], solver: &str) -> (Trajectory, records::RunRecord) {
    let reg = signorini::registry();
    let mut suite = Suite::single(case, solver);
    suite.pairs[0].case_set =
        set.iter().map(|(k, v)| (k.to_string(), harness::runner::Override::Text(v.to_string()))).collect();
    let pair = prepare(&reg, &suite).unwrap().remove(0);
    let mut s = reg.find_solver(solver).unwrap().build(&pair.solver_params).unwrap();
    let out = simulate(&pair.scenario, s.as_mut(), RunOptions::default(), &mut || {});
    let engine = Engine { name: format!("{solver}-as-engine"), version: "test".into(), settings: Default::default() };
    let t = reference::from_trace(&out.trace, engine, case, &pair.case_params, out.solve_times.clone());
    let rec =
        harness::runner::run_pair(&pair, RunOptions::default(), &Provenance::collect(), &harness::runner::NoProgress);
    (t, rec)
}

#[rstest::rstest]
#[case::slope("slope", &[], "pgs")]
#[case::slope_sliding("slope", &[("mu", "0.1")], "pgs")]
#[case::spring_cylinder("spring_cylinder", &[("mu", "0"), ("duration", "1")], "sap")]
#[case::sphere_stack("sphere_stack", &[], "pgs")]
#[case::pendulum("pendulum", &[("duration", "0.2")], "drumwright")]
fn grading_a_signorini_run_reproduces_its_oracle_verdicts(
    #[case] case: &str,
    #[case] set: &[(&str, &str)],
    #[case] solver: &str,
) {
    let (t, rec) = own_run(case, set, solver);
    let reg = signorini::registry();
    let c = reg.find_case(case).unwrap();
    let (p, sc) = build(case, set);
    t.check(case, &p, &sc).unwrap();
    let graded = reference::grade(c.prepare(&p).unwrap().as_ref(), case, &t, Provenance::collect());
    assert!(graded.is_reference() && !rec.is_reference());
    assert_eq!(graded.summary.oracle.keys().collect::<Vec<_>>(), rec.summary.oracle.keys().collect::<Vec<_>>());
    for (name, a) in &graded.summary.oracle {
        let b = &rec.summary.oracle[name];
        assert_eq!(a.pass, b.pass, "{case} {name}: graded {a:?} vs run {b:?}");
        let scale = b.measured.abs().max(1e-12);
        assert!((a.measured - b.measured).abs() <= 1e-9 * scale, "{case} {name}: {} vs {}", a.measured, b.measured);
    }
    // contact-level metrics are absent, energy metrics present
    assert!(!graded.summary.metrics.contains_key("natmap_rel_l2"));
    assert!(graded.summary.metrics.contains_key("energy"));
    // the record reads back as a run record
    let dir = tempfile::tempdir().unwrap();
    let path = graded.write_atomic(dir.path()).unwrap();
    records::RunRecord::read(&path).unwrap();
}

#[test]
fn malformed_trajectories_are_refused() {
    let (t, _) = own_run("slope", &[], "pgs");
    let (p, sc) = build("slope", &[]);
    let mut short = t.clone();
    short.q.pop();
    let e = short.check("slope", &p, &sc).unwrap_err();
    assert_eq!(e, TrajectoryError::StateCount { positions: 100, velocities: 101, steps: 100 });
    assert!(e.to_string().contains("101 states expected"));
    let mut narrow = t.clone();
    narrow.v[3].pop();
    assert!(matches!(narrow.check("slope", &p, &sc), Err(TrajectoryError::StateSize { state: 3, .. })));
    assert!(narrow.check("slope", &p, &sc).unwrap_err().to_string().contains("state 3 has |q| = 7, |v| = 5"));
    let mut nan = t.clone();
    nan.q[5][0] = f64::NAN;
    assert!(matches!(nan.check("slope", &p, &sc), Err(TrajectoryError::NonFinite { state: 5, .. })));
    assert!(nan.check("slope", &p, &sc).unwrap_err().to_string().contains("non-finite"));
    let mut dt = t.clone();
    dt.dt = 0.02;
    assert!(matches!(dt.check("slope", &p, &sc), Err(TrajectoryError::OtherDt { .. })));
    assert!(dt.check("slope", &p, &sc).unwrap_err().to_string().contains("dt"));
    let mut wall = t.clone();
    wall.wall_s.pop();
    let e = wall.check("slope", &p, &sc).unwrap_err();
    assert_eq!(e, TrajectoryError::SeriesLength { series: "wall_s", len: 99, steps: 100 });
    assert!(e.to_string().contains("'wall_s' has 99 entries"));
    let e = t.check("sphere_stack", &p, &sc).unwrap_err();
    assert!(matches!(&e, TrajectoryError::OtherCase { found, .. } if found == "slope"), "{e:?}");
    assert!(e.to_string().contains("case 'slope'"));
    // impossible motion: a jump of the box's centre at step 40, a scaled quaternion, a negative time
    let mut jump = t.clone();
    jump.q[41][0] += 0.01;
    let e = jump.check("slope", &p, &sc).unwrap_err();
    assert!(matches!(e, TrajectoryError::Motion { step: 40, .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.starts_with("step 40: body ") && e.contains("disagree"), "{e}");
    let mut quat = t.clone();
    quat.q[12][3] *= 1.0 + 1e-5;
    assert!(matches!(quat.check("slope", &p, &sc), Err(TrajectoryError::Quaternion { state: 12, .. })));
    assert!(quat.check("slope", &p, &sc).unwrap_err().to_string().starts_with("state 12: body "));
    let mut wall = t.clone();
    wall.wall_s[2] = -1e-9;
    assert!(matches!(wall.check("slope", &p, &sc), Err(TrajectoryError::WallTime { step: 2, .. })));
    assert!(wall.check("slope", &p, &sc).unwrap_err().to_string().starts_with("step 2: wall time"));
    // an engine integrating with the velocity at the start of the step (explicit Euler, theta = 0)
    // moves as its velocities say too: accepted
    let sliding = own_run("slope", &[("mu", "0.1")], "pgs").0;
    let mut explicit = sliding.clone();
    for k in 0..explicit.q.len() - 1 {
        for a in 0..3 {
            explicit.q[k + 1][a] = explicit.q[k][a] + explicit.dt * explicit.v[k][a];
        }
        explicit.q[k + 1][3..7].copy_from_slice(&sliding.q[k + 1][3..7]);
    }
    let (ps, scs) = build("slope", &[("mu", "0.1")]);
    explicit.check("slope", &ps, &scs).unwrap();
    let e = Trajectory::parse("{\"schema\": \"x\"}").unwrap_err();
    assert!(matches!(e, TrajectoryError::NotATrajectory { .. }), "{e:?}");
    assert!(e.to_string().starts_with("not a trajectory file"));
}

#[test]
fn cli_grade_refuses_a_wrong_length_trajectory_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, _) = own_run("slope", &[], "pgs");
    t.q.truncate(50);
    t.v.truncate(50);
    let path = dir.path().join("t.json");
    std::fs::write(&path, serde_json::to_string(&t).unwrap()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_signorini"))
        .args(["grade", path.to_str().unwrap(), "--case", "slope", "--engine", "pgs-as-engine", "--out"])
        .arg(dir.path().join("runs"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("50 positions"), "{stderr}");
    assert!(!dir.path().join("runs").exists(), "nothing written");
}

#[test]
fn cli_export_refuses_a_deformable_case_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_signorini"))
        .args(["export", "--case", "twisting_bar", "--format", "mjcf", "--out"])
        .arg(dir.path().join("x"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.trim(), "error: case 'twisting_bar' cannot be exported as MJCF: it has deformable (FEM) bodies");
    assert!(!dir.path().join("x").exists());
}

#[test]
fn report_shows_reference_rows_in_italics_and_keeps_them_out_of_the_profiles() {
    let (t, rec) = own_run("slope", &[], "pgs");
    let reg = signorini::registry();
    let (p, _) = build("slope", &[]);
    let graded = reference::grade(
        reg.find_case("slope").unwrap().prepare(&p).unwrap().as_ref(),
        "slope",
        &t,
        Provenance::collect(),
    );
    let dir = tempfile::tempdir().unwrap();
    graded.write_atomic(dir.path()).unwrap();
    rec.write_atomic(dir.path()).unwrap();
    let opts = reports::report::Options {
        run_dir: dir.path().to_path_buf(),
        out_dir: dir.path().join("report"),
        criterion: None,
        gates: None,
        defaults: signorini::defaults(&reg),
        baseline: None,
    };
    reports::write(&opts).unwrap();
    let md = std::fs::read_to_string(dir.path().join("report/summary.md")).unwrap();
    assert!(md.contains("*pgs-as-engine (reference engine)*"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    assert!(html.contains("<td class=\"ref\">pgs-as-engine (reference engine)</td>"));
    assert!(
        html.contains(
            "<th class=\"ref\" title=\"reference engine\">pgs-as-engine<br><small>reference engine</small></th>"
        ),
        "the matrix marks the reference engine's column"
    );
    assert!(graded.is_reference() && !rec.is_reference());
}

/// Issue 40: `signorini grade` writes a replay sidecar beside the reference record, the same way
/// `run` does: the engine's poses on the case's scene. A signorini run converted to an engine
/// trajectory must replay exactly as the run's own sidecar (same frames, poses and penetrations).
#[test]
fn cli_grade_writes_the_replay_sidecar_of_the_engine_poses() {
    let dir = tempfile::tempdir().unwrap();
    let (mut t, _) = own_run("clutter", &[("duration", "0.3")], "pgs");
    // the engine's own contacts at one replay step (step 2: the default stride of this run is 2):
    // two rows the detection would not give (impulses, a point off the scene)
    let engine_rows = vec![[0.1, 0.2, 0.3, 0.0, 0.0, 1.0, 0.25, 1e-4], [5.0, 5.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.0]];
    t.contact_frames = vec![reference::ContactFrame { step: 2, contacts: engine_rows.clone() }];
    let path = dir.path().join("t.json");
    std::fs::write(&path, serde_json::to_string(&t).unwrap()).unwrap();
    let runs = dir.path().join("runs");
    let bin = env!("CARGO_BIN_EXE_signorini");
    let out = Command::new(bin)
        .args([
            "grade",
            path.to_str().unwrap(),
            "--case",
            "clutter",
            "--set",
            "duration=0.3",
            "--engine",
            "pgs-as-engine",
        ])
        .arg("--out")
        .arg(&runs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(bin)
        .args(["run", "--case", "clutter", "--solver", "pgs", "--set", "duration=0.3", "--trajectory", "auto", "--out"])
        .arg(&runs)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let read = |name: &str| records::trajectory::Trajectory::read(&runs.join(name)).unwrap();
    let (engine, own) = (read("clutter__pgs-as-engine.traj.json.gz"), read("clutter__pgs.traj.json.gz"));
    assert_eq!(engine.solver, "pgs-as-engine");
    assert_eq!((engine.bodies.len(), engine.statics.len()), (own.bodies.len(), own.statics.len()));
    assert_eq!(engine.frames.len(), own.frames.len());
    assert!(engine.frames.len() > 2);
    for (a, b) in engine.frames.iter().zip(&own.frames) {
        assert_eq!(a.step, b.step);
        assert_eq!(a.poses, b.poses, "step {}", a.step);
        // the same poses through two detection calls (the grader's `detect`, the stepper's
        // `detect_for_step`): equal up to round-off
        let (pa, pb) = (a.metrics.penetration_max, b.metrics.penetration_max);
        assert!((pa - pb).abs() <= 1e-12 + 1e-9 * pb.abs(), "step {}: {pa} vs {pb}", a.step);
        assert!(a.metrics.natmap_abs_l2.is_nan(), "an engine's residual is not measured");
        assert_eq!(a.metrics.unconverged, None, "an engine reports no convergence: none is claimed for it");
        assert!(b.metrics.unconverged.is_some(), "signorini's solver reports its status");
        if a.step == 2 {
            let want: Vec<[f32; 8]> = engine_rows.iter().map(|r| r.map(|x| x as f32)).collect();
            assert_eq!(a.contacts, want, "the engine's contacts, as it reported them");
        } else {
            // signorini's detection at the engine's poses (the graded penetration is its largest),
            // impulse 0
            let deepest = a.contacts.iter().map(|c| f64::from(c[7])).fold(0.0, f64::max);
            assert!((deepest - pa).abs() <= 1e-6 * pa.abs() + 1e-9, "step {}: {deepest} vs {pa}", a.step);
            assert!(a.contacts.iter().all(|c| c[6] == 0.0), "step {}", a.step);
        }
    }
    let n = engine.frames.len();
    assert!(engine.notes.iter().any(|s| s.contains("pgs-as-engine's own in 1 of")), "{:?}", engine.notes);
    assert!(engine
        .notes
        .iter()
        .any(|s| s.contains(&format!("detection at pgs-as-engine's poses in {} of {n}", n - 1))));
    assert!(own.notes.is_empty());
    // both sidecars are ones the page can show, each beside its record
    let out = Command::new(bin).arg("view").arg(&runs).arg("--check").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("2 records, 2 sidecars the replay page can show"));
    // the replay page shows both side by side
    let out = Command::new(bin).args(["view"]).arg(&runs).args(["--case", "clutter"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(runs.join("replay/clutter.html")).unwrap();
    assert!(page.contains("data/clutter__pgs-as-engine.js") && page.contains("data/clutter__pgs.js"));
}
