//! `signorini run --resume`: a suite interrupted after some pairs (simulated by deleting one
//! record and truncating another) is completed by re-running only what is missing; a changed
//! parameter, a record of another commit and a build with uncommitted changes force a re-run
//! (`--resume-any-commit` accepts other commits).

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn signorini(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_signorini")).args(args).current_dir(cwd).output().expect("binary runs")
}

fn ok(out: Output) -> (String, String) {
    let (o, e) = (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string());
    assert!(out.status.success(), "stdout: {o}\nstderr: {e}");
    (o, e)
}

fn git(args: &[&str], cwd: &Path) {
    let out = Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A clean git checkout (records carry its commit) holding a three-pair suite.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("suite.toml"),
        r#"
name = "resume-test"
solvers = ["pgs"]
[[case]]
name = "slope"
label = "slope-stick"
set = { angle_deg = 10.0, mu = 0.3, duration = 0.05 }
[[case]]
name = "slope"
label = "slope-slip"
set = { angle_deg = 30.0, mu = 0.3, duration = 0.05 }
[[case]]
name = "spring_cylinder"
set = { duration = 0.05 }
"#,
    )
    .unwrap();
    git(&["init", "-q"], d);
    git(&["add", "suite.toml"], d);
    git(&["commit", "-q", "-m", "suite"], d);
    dir
}

const NAMES: [&str; 3] = ["slope-stick__pgs.json", "slope-slip__pgs.json", "spring_cylinder__pgs.json"];

fn read(d: &Path, name: &str) -> Vec<u8> {
    std::fs::read(d.join("out").join(name)).unwrap()
}

fn edit(d: &Path, name: &str, f: impl Fn(&mut Value)) {
    let p = d.join("out").join(name);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

fn resume(d: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec!["run", "--suite", "suite.toml", "--out", "out", "--resume"];
    args.extend_from_slice(extra);
    ok(signorini(&args, d))
}

#[test]
fn resume_reuses_finished_pairs_and_reruns_the_rest() {
    let dir = checkout();
    let d = dir.path();
    let (first, _) = ok(signorini(&["run", "--suite", "suite.toml", "--out", "out"], d));
    assert!(
        first.contains(
            // spring_cylinder's 3 steps are too short for its frequency check
            "3 pairs: 3 ok, 0 failed, 0 skipped; 2 ran and pass their oracle checks, 0 expected failures, 1 fail"
        ),
        "{first}"
    );
    assert!(first.contains("; records in out"), "{first}");
    let before: Vec<Vec<u8>> = NAMES.iter().map(|n| read(d, n)).collect();

    // Nothing to do: every record is reused, byte for byte.
    let (o, _) = resume(d, &[]);
    assert!(o.contains("3 pairs: 3 ok, 0 failed, 0 skipped, 3 reused"), "{o}");
    assert_eq!(NAMES.iter().map(|n| read(d, n)).collect::<Vec<_>>(), before);

    // A killed suite: one record never written, one cut off mid-write (not valid JSON).
    std::fs::remove_file(d.join("out").join(NAMES[0])).unwrap();
    std::fs::write(d.join("out").join(NAMES[1]), &before[1][..before[1].len() / 2]).unwrap();
    let (o, e) = resume(d, &[]);
    assert!(o.contains("3 pairs: 3 ok, 0 failed, 0 skipped, 1 reused"), "{o}");
    assert!(e.contains(&format!("resume: ran {} again", NAMES[1])) && e.contains("not a run record"), "{e}");
    assert_eq!(read(d, NAMES[2]), before[2], "the finished pair is not run again");
    for n in &NAMES[..2] {
        let v: Value = serde_json::from_slice(&read(d, n)).unwrap();
        assert_eq!(v["status"], "ok", "{n} was run again and is complete");
    }
}

#[test]
fn changed_parameter_forces_a_rerun() {
    let dir = checkout();
    let d = dir.path();
    ok(signorini(&["run", "--suite", "suite.toml", "--out", "out"], d));
    // Same labels (same file names), other case parameters: nothing is reused.
    let (o, e) = resume(d, &["--set", "gravity=9.5"]);
    assert!(o.contains("3 pairs: 3 ok, 0 failed, 0 skipped, 0 reused"), "{o}");
    assert!(e.contains("case parameters differ"), "{e}");
    let v: Value = serde_json::from_slice(&read(d, NAMES[0])).unwrap();
    assert_eq!(v["case"]["params"]["gravity"], 9.5, "the record was rewritten with the new parameter");
    // A solver setting edited in a record (as if written with other settings) is not reused.
    edit(d, NAMES[2], |v| v["solver"]["params"]["max_iterations"] = Value::from(7));
    let (o, e) = resume(d, &["--set", "gravity=9.5"]);
    assert!(o.contains("2 reused"), "{o}");
    assert!(e.contains(&format!("resume: ran {} again: solver settings differ", NAMES[2])), "{e}");
}

#[test]
fn record_of_another_commit_needs_the_flag() {
    let dir = checkout();
    let d = dir.path();
    ok(signorini(&["run", "--suite", "suite.toml", "--out", "out"], d));
    let other = "0123456789abcdef0123456789abcdef01234567";
    edit(d, NAMES[1], |v| v["provenance"]["commit"] = Value::from(other));
    let edited = read(d, NAMES[1]);
    let (o, e) = resume(d, &[]);
    assert!(o.contains("2 reused"), "{o}");
    assert!(e.contains(&format!("written by commit {other}")), "{e}");
    assert_ne!(read(d, NAMES[1]), edited, "re-run with this commit");

    edit(d, NAMES[1], |v| v["provenance"]["commit"] = Value::from(other));
    let edited = read(d, NAMES[1]);
    let (o, _) = resume(d, &["--resume-any-commit"]);
    assert!(o.contains("3 reused"), "{o}");
    assert_eq!(read(d, NAMES[1]), edited, "reused as it is");
}

#[test]
fn uncommitted_changes_reuse_nothing_without_the_flag() {
    let dir = checkout();
    let d = dir.path();
    ok(signorini(&["run", "--suite", "suite.toml", "--out", "out"], d));
    // A tracked file changed: the build's commit reads `<sha>-dirty`, like the records it writes.
    std::fs::write(d.join("suite.toml"), std::fs::read_to_string(d.join("suite.toml")).unwrap() + "\n# edited\n")
        .unwrap();
    ok(signorini(&["run", "--suite", "suite.toml", "--out", "out"], d));
    let v: Value = serde_json::from_slice(&read(d, NAMES[0])).unwrap();
    assert!(v["provenance"]["commit"].as_str().unwrap().ends_with("-dirty"));
    let (o, e) = resume(d, &[]);
    assert!(o.contains("0 reused"), "{o}");
    assert!(e.contains("uncommitted changes or no git"), "{e}");
    let (o, _) = resume(d, &["--resume-any-commit"]);
    assert!(o.contains("3 reused"), "{o}");
}

#[test]
fn resume_any_commit_requires_resume() {
    let dir = checkout();
    let out = signorini(&["run", "--suite", "suite.toml", "--resume-any-commit"], dir.path());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume"));
}
