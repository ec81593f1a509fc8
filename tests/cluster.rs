//! Cluster runs: a suite run in 4 shards and merged equals the unsharded run (oracle values,
//! metrics, statuses, steps; timings and start times aside; the trajectory sidecars with them), and `merge` refuses records of
//! different code versions or of the same pair with different parameters, naming the files and
//! the field, and writing nothing.

use records::trajectory::{sidecar_path, Trajectory};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn signorini(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_signorini")).args(args).current_dir(cwd).output().expect("binary runs")
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Five pairs (short runs) with one solver, so 4 shards hold 2, 1, 1 and 1 pairs.
const SUITE: &str = r#"
name = "cluster-test"
solvers = ["pgs"]
[[case]]
name = "slope"
label = "slope-stick"
set = { angle_deg = 10.0, mu = 0.3, duration = 0.1 }
[[case]]
name = "slope"
label = "slope-slip"
set = { angle_deg = 30.0, mu = 0.3, duration = 0.1 }
[[case]]
name = "slope"
label = "slope-sphere"
set = { shape = "sphere", angle_deg = 20.0, duration = 0.1 }
[[case]]
name = "spring_cylinder"
set = { duration = 0.2 }
[[case]]
name = "sphere_stack"
set = { n = 2, duration = 0.05 }
"#;

/// A record as JSON with everything that depends on the clock removed.
fn without_timings(path: &Path) -> Value {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let o = v.as_object_mut().unwrap();
    o["provenance"].as_object_mut().unwrap().remove("started");
    let summary = o["summary"].as_object_mut().unwrap();
    summary.remove("wall_per_step_s");
    summary.remove("stage_times");
    for s in o["steps"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("wall_s");
    }
    for it in o["iterations"].as_array_mut().unwrap() {
        let log = it["log"].as_object_mut().unwrap();
        let names: Vec<String> =
            log["names"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect();
        let cols = log["columns"].as_array_mut().unwrap();
        for (k, n) in names.iter().enumerate() {
            if n == "time_s" {
                cols[k] = Value::Null;
            }
        }
    }
    v
}

fn records(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

#[test]
fn four_shards_merge_into_the_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("suite.toml"), SUITE).unwrap();
    ok(signorini(&["run", "--suite", "suite.toml", "--out", "full"], d));
    let mut shard_dirs = vec![];
    for i in 0..4 {
        let name = format!("shard{i}");
        // shard 0 runs without trajectories: its records come without sidecars
        let traj = if i == 0 { "off" } else { "auto" };
        let shard = format!("{i}/4");
        ok(signorini(&["run", "--suite", "suite.toml", "--shard", &shard, "--trajectory", traj, "--out", &name], d));
        let n = records(&d.join(&name)).len();
        assert_eq!(n, if i == 0 { 2 } else { 1 }, "shard {i} holds pairs i with i % 4 == {i}");
        shard_dirs.push(name);
    }
    // a stale sidecar in the output directory under the name of a record that comes without one
    let shard0 = records(&d.join("shard0"));
    let stale = sidecar_path(&d.join("merged").join(shard0[0].file_name().unwrap()));
    std::fs::create_dir_all(d.join("merged")).unwrap();
    std::fs::write(&stale, b"stale").unwrap();
    let mut args = vec!["merge", "merged"];
    args.extend(shard_dirs.iter().map(String::as_str));
    let out = ok(signorini(&args, d));
    assert!(String::from_utf8_lossy(&out.stdout).contains("merged 5 records"), "{out:?}");
    // Every record merged with its sidecar: the shards' motion, equal to the unsharded run's; the
    // records of shard 0 have none (and the stale one is gone).
    for r in records(&d.join("merged")) {
        let car = sidecar_path(&r);
        if shard0.iter().any(|s| s.file_name() == r.file_name()) {
            assert!(!car.exists(), "{}: a sidecar the record did not come with", car.display());
            continue;
        }
        let full = sidecar_path(&d.join("full").join(r.file_name().unwrap()));
        let (a, b) = (Trajectory::read(&full).unwrap(), Trajectory::read(&car).unwrap());
        assert!(!b.frames.is_empty(), "{}", car.display());
        assert_eq!(a, b, "{}: merged motion differs from the unsharded run's", car.display());
    }

    let (full, merged) = (records(&d.join("full")), records(&d.join("merged")));
    assert_eq!(full.len(), 5);
    let names = |v: &[PathBuf]| v.iter().map(|p| p.file_name().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(&full), names(&merged));
    for (a, b) in full.iter().zip(&merged) {
        let (va, vb) = (without_timings(a), without_timings(b));
        assert_eq!(va["status"], vb["status"], "{}", a.display());
        assert_eq!(va["summary"]["oracle"], vb["summary"]["oracle"], "{}", a.display());
        assert_eq!(va["summary"]["metrics"], vb["summary"]["metrics"], "{}", a.display());
        assert_eq!(va, vb, "{}: records differ beyond timings", a.display());
    }
    // The merged summary table equals the unsharded one (as JSON, where NaN reads as null).
    let table = |dir: &str| {
        let recs = reports::read_run_dir(&d.join(dir)).unwrap();
        let rows: Vec<_> = recs.iter().map(|r| (&r.case.label, r.status, &r.summary.oracle)).collect();
        serde_json::to_value(rows).unwrap()
    };
    assert_eq!(table("full"), table("merged"));
}

#[test]
fn shard_argument_is_validated() {
    let dir = tempfile::tempdir().unwrap();
    for (arg, needle) in [("4/4", "0..4"), ("0/0", "at least 1"), ("x", "expected I/N")] {
        let out = signorini(&["run", "--case", "slope", "--shard", arg], dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(needle) && err.contains("--shard"), "{arg}: {err}");
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "nothing was written");
}

#[test]
fn empty_shard_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(signorini(&["run", "--case", "slope", "--solver", "pgs", "--shard", "1/2", "--out", "s1"], d));
    assert!(records(&d.join("s1")).is_empty());
}

/// Writes a copy of `src` into `dir` with `edit` applied to its JSON.
fn edited(src: &Path, dir: &Path, edit: impl Fn(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    edit(&mut v);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(src.file_name().unwrap()), serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn merge_refuses_inconsistent_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(signorini(&["run", "--case", "slope", "--solver", "pgs", "--set", "duration=0.05", "--out", "a"], d));
    let rec = d.join("a/slope__pgs.json");
    let refuse = |dirs: &[&str], needles: &[&str]| {
        let mut args = vec!["merge", "out"];
        args.extend_from_slice(dirs);
        let out = signorini(&args, d);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(out.status.code(), Some(2), "{dirs:?}: {err}");
        for n in needles {
            assert!(err.contains(n), "'{err}' should contain '{n}'");
        }
        assert!(!d.join("out").exists(), "a refused merge writes nothing");
    };
    // Same pair, different solver tolerance.
    let tol_key = {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&rec).unwrap()).unwrap();
        let keys: Vec<String> = v["solver"]["params"].as_object().unwrap().keys().cloned().collect();
        keys.into_iter().find(|k| k.contains("tol")).expect("pgs has a tolerance setting")
    };
    edited(&rec, &d.join("b"), |v| v["solver"]["params"][&tol_key] = Value::from(0.5));
    refuse(&["a", "b"], &["a/slope__pgs.json", "b/slope__pgs.json", &format!("solver.params.{tol_key}")]);
    // Same pair, different case parameter.
    edited(&rec, &d.join("c"), |v| v["case"]["params"]["mu"] = Value::from(0.9));
    refuse(&["a", "c"], &["case.params.mu", "c/slope__pgs.json"]);
    // Different code version, even for different pairs.
    edited(&rec, &d.join("e"), |v| {
        v["provenance"]["commit"] = Value::from("0123abcd");
        v["case"]["label"] = Value::from("other");
    });
    let other = d.join("e/other__pgs.json");
    std::fs::rename(d.join("e/slope__pgs.json"), &other).unwrap();
    refuse(&["a", "e"], &["provenance.commit", "0123abcd", "other__pgs.json"]);
    edited(&rec, &d.join("f"), |v| v["provenance"]["version"] = Value::from("9.9.9"));
    refuse(&["a", "f"], &["provenance.version", "9.9.9"]);
    // Not a directory, and not a run record.
    refuse(&["a", "nope"], &["nope: not a directory"]);
    std::fs::create_dir_all(d.join("g")).unwrap();
    std::fs::write(d.join("g/junk.json"), "{}").unwrap();
    refuse(&["a", "g"], &["junk.json", "not a run record"]);

    // A duplicate with equal parameters is fine: the first one is kept.
    edited(&rec, &d.join("h"), |v| v["provenance"]["started"] = Value::from("2000-01-01T00:00:00Z"));
    ok(signorini(&["merge", "out", "a", "h"], d));
    assert_eq!(std::fs::read(d.join("out/slope__pgs.json")).unwrap(), std::fs::read(&rec).unwrap());
    // Merging again into the same directory keeps what is there and still checks it.
    ok(signorini(&["merge", "out", "h"], d));
    let out = signorini(&["merge", "out", "b"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("out/slope__pgs.json"));
}

/// Runs shards `which` of 4 of SUITE into `shard{i}`; returns the directory names.
fn run_shards(d: &Path, which: &[usize]) -> Vec<String> {
    std::fs::write(d.join("suite.toml"), SUITE).unwrap();
    which
        .iter()
        .map(|i| {
            let name = format!("shard{i}");
            ok(signorini(&["run", "--suite", "suite.toml", "--shard", &format!("{i}/4"), "--out", &name], d));
            assert!(d.join(&name).join(format!("shard-{i}-of-4.manifest")).is_file(), "shard {i} wrote its manifest");
            name
        })
        .collect()
}

fn merge_args<'a>(out: &'a str, dirs: &'a [String], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["merge", out];
    args.extend(dirs.iter().map(String::as_str));
    args.extend_from_slice(extra);
    args
}

#[test]
fn merge_refuses_a_lost_shard_and_partial_merges_what_exists() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Shard 3 of 4 never ran (cancelled, or its node died before it started): its pair is
    // index 3 of SUITE.
    let dirs = run_shards(d, &[0, 1, 2]);
    let out = signorini(&merge_args("merged", &dirs, &[]), d);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    for needle in [
        "error: refusing to merge",
        "1 of 5 pairs of suite 'cluster-test' missing",
        "shard 3/4",
        "spring_cylinder__pgs.json",
    ] {
        assert!(err.contains(needle), "'{err}' should contain '{needle}'");
    }
    assert!(!d.join("merged").exists(), "a refused merge writes nothing");

    // --partial merges the 4 records that exist, lists the missing one and exits 0.
    let out = ok(signorini(&merge_args("partial", &dirs, &["--partial"]), d));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("partial merge: 1 of 5 pairs of suite 'cluster-test' missing"), "{stdout}");
    assert!(stdout.contains("spring_cylinder__pgs.json") && stdout.contains("merged 4 records"), "{stdout}");
    assert_eq!(records(&d.join("partial")).len(), 4);

    // Re-running the lost shard alone completes the set.
    let mut all = dirs.clone();
    all.extend(run_shards(d, &[3]));
    let out = ok(signorini(&merge_args("merged", &all, &[]), d));
    assert!(String::from_utf8_lossy(&out.stdout).contains("merged 5 records"), "{out:?}");
}

#[test]
fn merge_refuses_a_shard_killed_midway() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dirs = run_shards(d, &[0, 1, 2, 3]);
    // Shard 0 (pairs 0 and 4) was killed after its first pair: its manifest is there, one
    // record is not.
    std::fs::remove_file(d.join("shard0/sphere_stack__pgs.json")).unwrap();
    let out = signorini(&merge_args("merged", &dirs, &[]), d);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("1 of 5 pairs of suite 'cluster-test' missing: sphere_stack__pgs.json"), "{err}");
    assert!(!err.contains("no manifest"), "every shard started: {err}");
}

#[test]
fn merge_refuses_shards_of_different_shard_counts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut dirs = run_shards(d, &[0, 1, 2, 3]);
    ok(signorini(&["run", "--suite", "suite.toml", "--shard", "1/2", "--out", "half"], d));
    dirs.push("half".into());
    let out = signorini(&merge_args("merged", &dirs, &[]), d);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("different shard counts (4 vs 2)") && err.contains("shard-1-of-2.manifest"), "{err}");
}
