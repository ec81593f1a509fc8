//! Sweeps as suites: a `[[grid]]` of a suite file expands into labelled pairs (one per
//! combination of its values, per solver) whose record names never collide, `--shard`
//! partitions the expanded grid, and the values are typed like the other suite overrides.

use harness::runner::{prepare, GridProblem, Suite, SuiteFileError};
use rstest::rstest;
use std::collections::BTreeSet;

/// The issue's example: 2 solvers x 3 time steps x 2 tolerances = 12 pairs, next to one plain case.
const GRID: &str = r#"
name = "grid-test"
solvers = ["pgs"]

[[case]]
name = "slope"

[[grid]]
case = "slope"
solver = ["pgs", "subadmm"]
set = { duration = 0.04 }
[grid.params]
dt = [0.02, 0.01, 0.005]
"solver.tolerance" = [1e-4, 1e-6]
"#;

fn suite(text: &str) -> Result<Suite, SuiteFileError> {
    Suite::from_toml(text, "grid.toml", &signorini::registry())
}

#[test]
fn grid_expands_into_labelled_pairs() {
    let s = suite(GRID).unwrap();
    assert_eq!(s.pairs.len(), 1 + 12);
    let labels: Vec<&str> = s.pairs.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        &labels[..5],
        [
            "slope",
            "slope-dt0.02-tolerance1e-4",
            "slope-dt0.02-tolerance1e-4",
            "slope-dt0.02-tolerance1e-6",
            "slope-dt0.02-tolerance1e-6"
        ]
    );
    assert_eq!(labels[12], "slope-dt0.005-tolerance1e-6");
    let solvers: Vec<&str> = s.pairs[1..3].iter().map(|p| p.solver.as_str()).collect();
    assert_eq!(solvers, ["pgs", "subadmm"]);

    let names = record_names(&s).unwrap();
    assert_eq!(names.iter().collect::<BTreeSet<_>>().len(), 13, "no two pairs write the same record: {names:?}");
    assert!(names.contains(&"slope__pgs.json".to_string()));
    assert!(names.iter().any(|n| n.starts_with("slope-dt0.01-tolerance1e-6__subadmm-")), "{names:?}");

    // The values reach the parameters, typed.
    let pairs = prepare(&signorini::registry(), &s).unwrap();
    let p = pairs.iter().find(|p| p.spec.label == "slope-dt0.005-tolerance1e-4" && p.spec.solver == "subadmm").unwrap();
    assert_eq!(p.case_params.0["dt"], 0.005);
    assert_eq!(p.case_params.0["duration"], 0.04);
    assert_eq!(p.solver_params.0["tolerance"], 1e-4);
    assert_eq!(p.record_name, names[s.pairs.iter().position(|q| q == &p.spec).unwrap()]);
}

/// The record name of every pair of `s`, in suite order, from its one resolution.
fn record_names(s: &Suite) -> Result<Vec<String>, harness::runner::SuiteError> {
    Ok(s.resolve(&signorini::registry())?.into_iter().map(|p| p.record_name).collect())
}

#[rstest]
#[case(2)]
#[case(4)]
#[case(5)]
#[case(20)]
fn shards_partition_the_grid(#[case] n: usize) {
    let full = suite(GRID).unwrap();
    let names = record_names(&full).unwrap();
    let mut seen = vec![];
    for i in 0..n {
        let shard = harness::runner::shard(full.resolve(&signorini::registry()).unwrap(), i, n);
        assert!(shard.iter().all(|p| p.index % n == i), "shard {i} of {n} holds only its indices");
        seen.extend(shard.into_iter().map(|p| p.record_name));
    }
    assert_eq!(seen.len(), names.len(), "every pair in exactly one shard");
    assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), names.into_iter().collect::<BTreeSet<_>>());
}

#[rstest]
#[case("[0.01]", "slope-dt0.01")]
#[case("[1e-6]", "slope-dt1e-6")]
#[case("[0.005]", "slope-dt0.005")]
#[case("[100.0]", "slope-dt100")]
fn labels_show_numbers_short(#[case] values: &str, #[case] label: &str) {
    let s = suite(&format!("solvers = [\"pgs\"]\n[[grid]]\ncase = \"slope\"\n[grid.params]\ndt = {values}\n")).unwrap();
    assert_eq!(s.pairs[0].label, label);
}

#[test]
fn strings_and_booleans_label_as_they_are() {
    let s = suite(
        "solvers = [\"pgs\"]\n[[grid]]\ncase = \"heavy_stack\"\nlabel = \"hs\"\n[grid.params]\nshape = [\"box\", \"sphere\"]\nheavy_on_top = [true, false]\n",
    )
    .unwrap();
    let labels: Vec<&str> = s.pairs.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "hs-heavy_on_toptrue-shapebox",
            "hs-heavy_on_toptrue-shapesphere",
            "hs-heavy_on_topfalse-shapebox",
            "hs-heavy_on_topfalse-shapesphere"
        ]
    );
}

#[test]
fn colliding_labels_are_refused_before_running() {
    // The grid's first point has the label of the plain case and the same (default) settings.
    let text = "solvers = [\"pgs\"]\n[[case]]\nname = \"slope\"\nlabel = \"s-mu0.3\"\n[[grid]]\ncase = \"slope\"\nlabel = \"s\"\n[grid.params]\nmu = [0.3, 0.4]\n";
    let e = record_names(&suite(text).unwrap()).unwrap_err();
    assert!(
        matches!(&e, harness::runner::SuiteError::SameRecord { record, first: 0, second: 1, .. } if record == "s-mu0.3__pgs.json"),
        "{e:?}"
    );
    assert!(e.to_string().contains("would write the same record"), "{e}");
}

#[rstest]
#[case("dt = []", Some(GridProblem::NoValues { key: "dt".into() }), "dt has no values")]
#[case("dt = 0.01", None, "grid.toml")]
#[case("", Some(GridProblem::NoParams), "has no [grid.params]")]
fn malformed_grids_are_refused(#[case] params: &str, #[case] problem: Option<GridProblem>, #[case] needle: &str) {
    let text = format!("solvers = [\"pgs\"]\n[[grid]]\ncase = \"slope\"\n[grid.params]\n{params}\n");
    let e = suite(&text).unwrap_err();
    match problem {
        Some(p) => assert!(matches!(&e, SuiteFileError::Grid { problem, .. } if *problem == p), "{e:?}"),
        None => assert!(matches!(e, SuiteFileError::Toml { .. }), "{e:?}"),
    }
    assert!(e.to_string().contains(needle), "{e}");
}

#[rstest]
#[case("dt = [\"fast\"]", "dt")]
#[case("nope = [1.0]", "unknown parameter 'nope'")]
#[case("\"solver.nope\" = [1]", "unknown parameter 'nope'")]
fn grid_values_are_typed_like_suite_overrides(#[case] params: &str, #[case] needle: &str) {
    let text = format!("solvers = [\"pgs\"]\n[[grid]]\ncase = \"slope\"\n[grid.params]\n{params}\n");
    let s = suite(&text).unwrap();
    let e = prepare(&signorini::registry(), &s).err().expect("refused before running");
    assert!(matches!(e, harness::runner::SuiteError::Param(_)), "a parameter error: {e:?}");
    assert!(e.to_string().contains(needle), "{e}");
}

#[test]
fn solver_option_narrows_a_grid() {
    let s = Suite::from_toml_with_solvers(GRID, "grid.toml", &signorini::registry(), Some(&["subadmm".to_string()]))
        .unwrap();
    let solvers: BTreeSet<&str> = s.pairs.iter().map(|p| p.solver.as_str()).collect();
    assert_eq!(solvers, BTreeSet::from(["subadmm"]));
    assert_eq!(s.pairs.len(), 1 + 6);
}

/// A grid over `dt` run end to end: its records are one sweep for the report, which draws the
/// error against dt with the observed order of accuracy.
#[test]
fn report_reads_the_order_of_accuracy_off_a_dt_grid() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("grid.toml"),
        "name = \"order\"\n[[grid]]\ncase = \"slope\"\nsolver = \"pgs\"\nset = { angle_deg = 30.0, mu = 0.3, duration = 0.2 }\n[grid.params]\ndt = [0.02, 0.01, 0.005]\n",
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_signorini");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(bin).args(args).current_dir(d).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert!(run(&["run", "--suite", "grid.toml", "--out", "runs"]).contains("3 pairs: 3 ok"));
    run(&["report", "runs"]);
    assert!(d.join("runs/report/figures/order-slope.svg").is_file());
    let html = std::fs::read_to_string(d.join("runs/report/index.html")).unwrap();
    assert!(html.contains("Order of accuracy on slope"), "report has the figure");
    let caption = html.split("Error against the time step").nth(1).expect("the figure's description");
    assert!(caption.contains("pgs: oracle") && caption.contains("observed order"), "{caption:.400}");
    assert!(caption.contains("dt = 0.005, 0.01, 0.02"), "the grid's three time steps: {caption:.600}");
}

/// A `[[case]]` entry with its own `solver` runs with those solvers only (a default case kept in a
/// quick suite for the one solver that fails it); `--solver` narrows it like a grid's list.
#[test]
fn a_case_entry_can_name_its_own_solvers() {
    let text = r#"
name = "own"
solvers = ["pgs", "sap"]

[[case]]
name = "slope"

[[case]]
name = "table_pile"
solver = "nsn"

[[case]]
name = "sphere_stack"
solver = ["canal", "subadmm"]
"#;
    let s = suite(text).unwrap();
    let pairs: Vec<(&str, &str)> = s.pairs.iter().map(|p| (p.label.as_str(), p.solver.as_str())).collect();
    assert_eq!(
        pairs,
        [
            ("slope", "pgs"),
            ("slope", "sap"),
            ("table_pile", "nsn"),
            ("sphere_stack", "canal"),
            ("sphere_stack", "subadmm")
        ]
    );
    let reg = signorini::registry();
    let narrowed = Suite::from_toml_with_solvers(text, "own.toml", &reg, Some(&["canal".to_string()])).unwrap();
    let pairs: Vec<(&str, &str)> = narrowed.pairs.iter().map(|p| (p.label.as_str(), p.solver.as_str())).collect();
    assert_eq!(pairs, [("slope", "canal"), ("sphere_stack", "canal")]);
    let e = suite(&text.replace("solver = \"nsn\"", "solver = \"nope\"")).unwrap_err();
    assert!(matches!(&e, SuiteFileError::Unknown { error, .. } if error.name == "nope"), "{e:?}");
    assert!(e.to_string().contains("unknown solver 'nope'"), "{e}");
}
