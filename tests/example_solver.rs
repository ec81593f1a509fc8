//! Adding a solver, measured: the projected Jacobi solver of `example_solver/jacobi.rs`, written
//! the way `docs/adding-a-solver.md` says, outside the solvers crate and against the solver API
//! alone (its only signorini imports are `api` and `kernels`; checked below), registered with
//! one line and run on every case of the quick suite that CI gates. It needs no gate of its own:
//! every oracle check of every pair it runs must pass unless
//! `tests/data/example-solver-gates.toml` lists it as an expected failure (with its measured
//! value and reason), exactly as a real solver is gated by `ci/gates.toml`.

#[path = "example_solver/jacobi.rs"]
mod jacobi;

use harness::runner::{self, NoProgress, Suite};
use harness::stepper::RunOptions;
use jacobi::ProjectedJacobi;

/// The solver's file names no signorini crate but the solver API and the numerics: what a solver
/// author needs is all in `api` (and `kernels`).
#[test]
fn the_example_solver_uses_only_the_api_and_kernels() {
    let text = std::fs::read_to_string("tests/example_solver/jacobi.rs").unwrap();
    let crates: std::collections::BTreeSet<&str> =
        text.lines().filter_map(|l| l.trim_start().strip_prefix("use ")).filter_map(|u| u.split("::").next()).collect();
    assert_eq!(crates.into_iter().collect::<Vec<_>>(), ["api", "kernels", "serde"], "{text}");
    for other in ["harness::", "toolkit::", "solvers::", "records::", "cases::"] {
        assert!(!text.contains(other), "jacobi.rs names {other}");
    }
}

/// The example registers with one line and runs every quick-suite case it supports; its oracle
/// checks are gated like any solver's, against its own expected-failures file.
#[test]
fn projected_jacobi_runs_the_quick_suite_under_the_gate() {
    let reg = signorini::registry().register::<ProjectedJacobi>();
    let text = std::fs::read_to_string("ci/quick.toml").unwrap();
    let suite = Suite::from_toml_with_solvers(&text, "ci/quick.toml", &reg, Some(&["jacobi".into()])).unwrap();
    let pairs = runner::prepare(&reg, &suite).unwrap();
    let ran = pairs.iter().filter(|p| p.skip.is_none()).count();
    assert!(ran >= 10, "jacobi runs {ran} quick-suite cases");
    let dir = tempfile::tempdir().unwrap();
    let out = runner::run_suite(&pairs, dir.path(), RunOptions::default(), &NoProgress);
    let records: Vec<_> = out.into_iter().map(|(r, path)| (path.unwrap(), r)).collect();
    let gates_text = std::fs::read_to_string("tests/data/example-solver-gates.toml").unwrap();
    let gates = reports::gate::parse(&gates_text, "tests/data/example-solver-gates.toml").unwrap();
    let report = reports::gate::evaluate(&gates, &records, reports::gate::Scope::Directory);
    assert!(report.passed(), "{}", report.table());
    assert!(report.counts().checks_passed > 0, "{}", report.count_lines());
}

/// A bad setting is refused naming its field, before anything runs.
#[test]
fn projected_jacobi_settings_are_checked() {
    let reg = signorini::registry().register::<ProjectedJacobi>();
    let err = runner::run_one(&reg, "slope", &[], "jacobi", &[("relaxation", "1.5")]).unwrap_err();
    assert!(matches!(err, runner::RunOneError::Suite(_)), "refused before running: {err:?}");
    let err = err.to_string();
    assert!(err.contains("relaxation") && err.contains("(0, 1]"), "{err}");
}
