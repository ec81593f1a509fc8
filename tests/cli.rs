//! The command line refuses bad input with one clear error line and a non-zero exit, before
//! running anything; and `run` + `gate` work end to end on a small selection.

use std::process::{Command, Output};

fn signorini(args: &[&str], cwd: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_signorini")).args(args).current_dir(cwd).output().expect("binary runs")
}

/// Runs with bad arguments; returns the single error line.
fn refused(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = signorini(args, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "args {args:?}: stderr {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one error line, got {lines:?}");
    assert!(lines[0].starts_with("error: "), "{}", lines[0]);
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "nothing was written");
    lines[0].to_string()
}

#[rstest::rstest]
#[case::unknown_solver(&["run", "--solver", "nope"], "unknown solver 'nope' (known: pgs")]
#[case::unknown_case(&["run", "--case", "nope"], "unknown case 'nope' (known: slope")]
#[case::unknown_param(&["run", "--case", "slope", "--set", "frobnicate=1"], "no case in this run has a parameter 'frobnicate'")]
#[case::unknown_solver_param(&["run", "--set", "solver.frobnicate=1"], "no solver in this run has a parameter 'frobnicate'")]
#[case::negative_mu(&["run", "--case", "slope", "--set", "mu=-0.5"], "mu")]
#[case::nan(&["run", "--case", "slope", "--set", "mu=NaN"], "must be finite")]
#[case::negative_mass(&["run", "--case", "sphere_stack", "--set", "mass=-1"], "mass")]
#[case::bad_type(&["run", "--case", "slope", "--set", "mu=abc"], "expected a number")]
#[case::bad_solver_setting(&["run", "--solver", "pgs", "--set", "solver.max_iterations=0"], "max_iterations")]
#[case::missing_suite(&["run", "--suite", "no/such/suite.toml"], "suite 'no/such/suite.toml'")]
#[case::negative_accuracy(&["run", "--case", "slope", "--accuracy", "-1"], "expected a finite number above 0")]
#[case::zero_accuracy(&["run", "--case", "slope", "--accuracy", "0"], "expected a finite number above 0")]
#[case::bad_choice(&["run", "--case", "slope", "--solver", "pgs", "--set", "solver.local=newton"], "unknown variant `newton`, expected `split` or `cone`")]
fn bad_input_is_refused(#[case] args: &[&str], #[case] needle: &str) {
    let line = refused(args);
    assert!(line.contains(needle), "'{line}' should contain '{needle}'");
}

#[test]
fn malformed_suite_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[[case]]\nname = \"slope\"\nset = { mu = \n").unwrap();
    let line = refused(&["run", "--suite", path.to_str().unwrap()]);
    assert!(line.contains("bad.toml"), "{line}");
    std::fs::write(&path, "[[case]]\nname = \"slope\"\nset = { mu = -1.0 }\n").unwrap();
    let line = refused(&["run", "--suite", path.to_str().unwrap()]);
    assert!(line.contains("mu"), "{line}");
}

#[test]
fn suite_values_stay_typed_and_a_toml_nan_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nan.toml");
    std::fs::write(&path, "solvers = [\"pgs\"]\n[[case]]\nname = \"slope\"\nset = { mu = nan }\n").unwrap();
    let line = refused(&["run", "--suite", path.to_str().unwrap()]);
    assert!(line.contains("'mu'") && line.contains("NaN"), "{line}");
    std::fs::write(&path, "solvers = [\"pgs\"]\n[[case]]\nname = \"slope\"\nset = { mu = \"0.3\" }\n").unwrap();
    let line = refused(&["run", "--suite", path.to_str().unwrap()]);
    assert!(line.contains("expected a number, got a string"), "{line}");
}

/// `--case` and `--solver` take lists and narrow a suite file: its labels and case settings are
/// kept, `--solver` replaces its solver list, and a sweep of a solver setting writes one record
/// per setting (the file name carries the settings hash when they differ from the defaults).
#[test]
fn case_and_solver_lists_combine_with_a_suite() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        "name = \"s\"\nsolvers = [\"sap\"]\n[[case]]\nname = \"slope\"\nlabel = \"a\"\nset = { duration = 0.03 }\n\
         [[case]]\nname = \"slope\"\nlabel = \"b\"\nset = { duration = 0.03, mu = 0.1 }\n\
         [[case]]\nname = \"sphere_stack\"\nset = { duration = 0.03 }\n",
    )
    .unwrap();
    let (s, out) = (suite.to_str().unwrap(), dir.path().join("out"));
    let o = out.to_str().unwrap();
    let run =
        signorini(&["run", "--suite", s, "--case", "b,sphere_stack", "--solver", "pgs,canal", "--out", o], dir.path());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    // each record with its replay sidecar (`--trajectory auto`, the default)
    let pairs = ["b__canal", "b__pgs", "sphere_stack__canal", "sphere_stack__pgs"];
    let want: Vec<String> = pairs.iter().flat_map(|p| [format!("{p}.json"), format!("{p}.traj.json.gz")]).collect();
    assert_eq!(names, want);
    let b: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("b__pgs.json")).unwrap()).unwrap();
    assert_eq!(b["case"]["params"]["mu"], 0.1);
    assert!(b["solver"]["paper"].as_str().unwrap().contains("Gauss"));

    for omega in ["1.2", "1.4"] {
        let set = format!("solver.omega={omega}");
        let run =
            signorini(&["run", "--suite", s, "--case", "a", "--solver", "pgs", "--set", &set, "--out", o], dir.path());
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    }
    let swept: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("a__pgs-") && n.ends_with(".json"))
        .collect();
    assert_eq!(swept.len(), 2, "{swept:?}");
    let refused = signorini(&["run", "--suite", s, "--case", "nope", "--out", o], dir.path());
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--case nope"));
}

#[test]
fn malformed_gates_file_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let gates = dir.path().join("gates.toml");
    std::fs::write(&gates, "[[gate]]\nsolver = \"pgs\"\n").unwrap();
    let out = signorini(&["gate", dir.path().to_str().unwrap(), "--gates", gates.to_str().unwrap()], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gates.toml"));
}

#[test]
fn run_then_gate_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        signorini(&["run", "--case", "slope", "--solver", "pgs", "--set", "duration=0.2", "--out", "r"], dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("slope") && stdout.contains("pgs") && stdout.contains("1 ok"), "{stdout}");
    assert!(dir.path().join("r/slope__pgs.json").exists());

    let gates = dir.path().join("g.toml");
    let gate = |max: f64| {
        std::fs::write(
            &gates,
            format!("[[gate]]\nsolver = \"pgs\"\ncase = \"slope\"\nmetric = \"metrics.penetration_max.max\"\nmax = {max:e}\nwhy = \"test\"\n"),
        )
        .unwrap();
        signorini(&["gate", "r", "--gates", "g.toml"], dir.path())
    };
    assert!(gate(1.0).status.success());
    let failing = gate(-1.0);
    assert_eq!(failing.status.code(), Some(1));
    let table = String::from_utf8_lossy(&failing.stdout);
    assert!(
        table.contains("FAIL") && table.contains("metrics.penetration_max.max") && table.contains("> max"),
        "{table}"
    );
    assert!(table.contains("metric gates: 0 passed, 1 failed"), "{table}");
}

/// A gates file that names its suite pins the records to the suite's parameters: records made
/// with other parameters fail the gate instead of passing silently; expected failures must stay
/// true (a listed check that passes, or one that does not exist, fails the gate).
#[test]
fn gate_detects_parameter_drift_and_untrue_expected_failures() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "solvers = [\"pgs\"]\n[[case]]\nname = \"slope\"\nset = { duration = 0.2 }\n",
    )
    .unwrap();
    let gate = |gates: &str| {
        std::fs::write(dir.path().join("g.toml"), format!("suite = \"s.toml\"\n{gates}")).unwrap();
        signorini(&["gate", "r", "--gates", "g.toml"], dir.path())
    };
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--suite", "s.toml", "--out", "r"];
        args.extend_from_slice(extra);
        assert!(signorini(&args, dir.path()).status.success());
    };
    run(&[]);
    let ok = gate("");
    let table = String::from_utf8_lossy(&ok.stdout).to_string();
    assert!(ok.status.success(), "{table}");
    assert!(table.contains("0 expected failures, 0 unexpected failures, 0 unexpected passes"), "{table}");

    let entry = |check: &str| {
        format!(
            "[[expected_failure]]\nsolver = \"pgs\"\ncase = \"slope\"\ncheck = \"{check}\"\nmeasured = 0\n\
             reason = \"r\"\nsee = \"s\"\n"
        )
    };
    let passes = gate(&entry("slides"));
    assert_eq!(passes.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&passes.stdout).contains("UNEXPECTED PASS"));
    let stale = gate(&entry("no_such_check"));
    assert_eq!(stale.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&stale.stdout).contains("stale expected_failure slope / pgs / no_such_check"));

    // replacing a record of other case parameters needs --overwrite (it is refused otherwise)
    run(&["--set", "mu=0.25", "--overwrite"]);
    let drifted = gate("");
    assert_eq!(drifted.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&drifted.stdout).contains("case parameters differ from s.toml"));
}

/// `run`'s summary shows the unconverged steps (pgs capped at one iteration per step on a
/// stack), the matrix view (one cell per pair, the skipped pair's reason as a footnote) and the
/// summary line's count of pairs that ran and pass their oracle checks, all as the records say.
#[test]
fn run_summary_shows_unconverged_steps_and_the_matrix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"u\"\nsolvers = [\"pgs\", \"local_global\"]\n[solver_settings.pgs]\nmax_iterations = 1\n\
         [[case]]\nname = \"sphere_stack\"\nset = { n = 3, duration = 0.1 }\n",
    )
    .unwrap();
    let o = signorini(&["run", "--suite", "s.toml", "--out", "r"], dir.path());
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    let file = std::fs::read_dir(dir.path().join("r"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name().unwrap().to_string_lossy().starts_with("sphere_stack__pgs")
                && p.extension().is_some_and(|x| x == "json")
        })
        .unwrap();
    let rec = records::RunRecord::read(&file).unwrap();
    let (n, steps) = (rec.summary.unconverged_steps, rec.summary.steps);
    assert!(n > 0, "one iteration per step does not reach pgs's tolerance on a stack");
    let lines: Vec<&str> = stdout.lines().collect();
    let col = lines[0].find("unconv. steps").expect("the table has the column");
    let row = lines.iter().find(|l| l.starts_with("sphere_stack") && l.contains("pgs")).unwrap();
    assert!(row[col..].starts_with(&format!("{n} ")), "{row}");
    let pass = rec.summary.oracle.values().all(|c| c.pass);
    let word = if pass { "pass" } else { "FAIL" };
    assert!(stdout.contains(&format!("unconverged: sphere_stack / pgs: {n}/{steps} steps ({word})")), "{stdout}");
    let matrix = lines.iter().position(|l| l.starts_with("case") && l.contains("local_global")).unwrap();
    let cells = lines[matrix + 2];
    // the fastest passing solver's time is 1.0x; without a passing solver there is no ratio
    let text = if pass { "pass* 1.0x" } else { "FAIL*" };
    assert!(cells.starts_with("sphere_stack") && cells.contains(text), "{cells}");
    assert!(cells.contains("skip[1]"), "{cells}");
    assert!(stdout.contains("[1] local_global does not support rigid"), "{stdout}");
    let (p, f) = if pass { (1, 0) } else { (0, 1) };
    assert!(
        stdout.contains(&format!(
            "2 pairs: 1 ok, 0 failed, 1 skipped; {p} ran and pass their oracle checks, 0 expected failures, {f} fail; \
             1 ran with unconverged steps ({p} of them pass their oracle checks); records in r"
        )),
        "{stdout}"
    );
}

/// `--accuracy` overrides the suite file's `accuracy` key: the record states the mode at the
/// command line's accuracy, and the summary lists the pair unconverged at it.
#[test]
fn the_accuracy_flag_overrides_the_suite_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        "name = \"a\"\naccuracy = 1e-4\nsolvers = [\"pgs\"]\n[solver_settings.pgs]\nmax_iterations = 3\n\
         [[case]]\nname = \"sphere_stack\"\nset = { n = 3, duration = 0.05 }\n",
    )
    .unwrap();
    let o = signorini(&["run", "--suite", "s.toml", "--out", "r", "--accuracy", "1e-300"], dir.path());
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    // the record (its trajectory sidecar, `.traj.json.gz`, sits beside it)
    let file = std::fs::read_dir(dir.path().join("r"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let rec = records::RunRecord::read(&file).unwrap();
    let a = rec.summary.accuracy.expect("the record states the mode");
    assert_eq!((a.eps, a.reached_steps), (1e-300, 0));
    assert!(stdout.contains("unconverged at 1e-300: sphere_stack / pgs"), "{stdout}");
}

/// The default suite runs each case's variants beside its defaults: a case name selects the
/// defaults only, a variant runs by its label and records under it with the variant's settings.
#[test]
fn default_suite_variants_run_by_label() {
    let dir = tempfile::tempdir().unwrap();
    let run = |case: &str, out: &str| {
        let o =
            signorini(&["run", "--case", case, "--solver", "pgs", "--set", "duration=0.1", "--out", out], dir.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut names: Vec<String> = std::fs::read_dir(dir.path().join(out))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with("__pgs.json"))
            .collect();
        names.sort();
        names
    };
    assert_eq!(run("spring_cylinder", "a"), ["spring_cylinder__pgs.json"]);
    assert_eq!(run("spring_cylinder-rigid", "b"), ["spring_cylinder-rigid__pgs.json"]);
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("b/spring_cylinder-rigid__pgs.json")).unwrap())
            .unwrap();
    assert_eq!(record["case"]["params"]["contact"], "rigid", "{}", record["case"]);
}
