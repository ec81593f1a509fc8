//! Fuzzing the readers of user input with proptest: the seed corpus in `tests/data/fuzz/` (a suite,
//! a gates file, a run record) and the FCLIB fixture, mutated by byte flips, truncations,
//! deletions, duplications and inserted tokens (`nan`, `1e308`, `-1`, `[[case]]`, ...), is fed to
//! the same functions the CLI uses. Every input must give `Ok` or `Err` — never a panic — and a
//! suite that parses must pass or fail the preparation checks (labels, parameters, memory
//! estimate) without panicking either.
//!
//! The number of cases per target is [`config`]'s (`FUZZ_CASES`, default 2,000): bounded time in
//! CI. A failing input is shrunk and saved by proptest under `proptest-regressions/`, which is
//! committed with the fix so that it is replayed forever.

use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz").join(name)).unwrap()
}

fn fclib_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fclib/slope_libhdf5.hdf5")
}

/// Tokens a hostile or careless user writes into text files.
const TOKENS: &[&str] = &[
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e308",
    "1e-300",
    "999999999999",
    "\"\"",
    "\"../../x\"",
    "[",
    "]",
    "{",
    "}",
    "=",
    ",",
    "\n[[case]]\nname = \"slope\"\n",
    "\n[[gate]]\n",
    "null",
    "true",
    "\"\\u0000\"",
    "'",
    "#",
];

/// One edit of a byte string.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Truncate(usize),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Token(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Flip(i, b)),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<usize>(), 1usize..256).prop_map(|(i, n)| Edit::Duplicate(i, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(i, t)| Edit::Token(i, t)),
    ]
}

fn apply(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for e in edits {
        let at = |i: usize, b: &Vec<u8>| if b.is_empty() { 0 } else { i % (b.len() + 1) };
        match *e {
            Edit::Flip(i, x) if !b.is_empty() => {
                let k = i % b.len();
                b[k] ^= x;
            }
            Edit::Flip(..) => {}
            Edit::Truncate(i) => b.truncate(at(i, &b)),
            Edit::Delete(i, n) => {
                let k = at(i, &b);
                b.drain(k..(k + n).min(b.len()));
            }
            Edit::Duplicate(i, n) => {
                let k = at(i, &b);
                let piece: Vec<u8> = b[k..(k + n).min(b.len())].to_vec();
                b.splice(k..k, piece);
            }
            Edit::Token(i, t) => {
                let k = at(i, &b);
                b.splice(k..k, TOKENS[t].bytes());
            }
        }
    }
    b
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    proptest::collection::vec(edit(), 1..6)
}

/// Cases per target: `FUZZ_CASES`, default 2,000 (about a second per target in a debug build).
fn config() -> ProptestConfig {
    let cases = std::env::var("FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(2000);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// A flip found by `fclib_files_read_or_fail_cleanly` (FUZZ_CASES = 30,000): one byte of a
/// matrix's dimension field in the FCLIB fixture turned it into a 1.7e9-column matrix, and the
/// reader allocated 13.7 GB for its column pointers before any check. A declared size that does
/// not match the stored vectors is now refused first.
#[test]
fn a_corrupted_matrix_dimension_is_refused_before_allocating() {
    let seed = std::fs::read(fclib_fixture()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.hdf5");
    std::fs::write(&path, apply(&seed, &[Edit::Flip(6808636905947176919, 102)])).unwrap();
    let e = fclib::read(&path).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("expected"), "{e}");
}

/// A flip found by `fclib_files_read_or_fail_cleanly` (FUZZ_CASES = 100,000, which did not finish
/// in 300 s): one byte of `/guesses/number_of_guesses` in the FCLIB fixture turned the count 1
/// into 838,860,801, and the reader looked up that many absent `/guesses/k` groups one by one,
/// collecting an empty guess for each (the fuzz run sat in that loop). A count beyond the stored
/// groups is now refused at the first absent one.
#[test]
fn a_corrupted_guess_count_is_refused_at_the_first_missing_guess() {
    let seed = std::fs::read(fclib_fixture()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.hdf5");
    std::fs::write(&path, apply(&seed, &[Edit::Flip(11424235168168642088, 50)])).unwrap();
    let e = fclib::read(&path).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("/guesses/2") && e.contains("number_of_guesses"), "{e}");
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn suites_parse_or_fail_cleanly(e in edits()) {
        let text = String::from_utf8_lossy(&apply(&corpus("suite.toml"), &e)).into_owned();
        let reg = signorini::registry();
        if let Ok(suite) = harness::runner::Suite::from_toml(&text, "fuzz", &reg) {
            if suite.pairs.len() <= 16 {
                if let Ok(pairs) = suite.resolve(&reg) {
                    let _ = harness::runner::prepare_with(pairs, 256.0 * 1024.0 * 1024.0);
                }
            }
        }
    }

    #[test]
    fn gates_parse_or_fail_cleanly(e in edits()) {
        let text = String::from_utf8_lossy(&apply(&corpus("gates.toml"), &e)).into_owned();
        if let Ok(g) = reports::gate::parse(&text, "fuzz") {
            // a parsed gates file never holds a NaN bound
            for gate in &g.gates {
                prop_assert!(!gate.max.is_some_and(f64::is_nan) && !gate.min.is_some_and(f64::is_nan));
            }
        }
    }

    #[test]
    fn run_records_read_or_fail_cleanly(e in edits()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, apply(&corpus("record.json"), &e)).unwrap();
        if let Ok(r) = records::RunRecord::read(&path) {
            // what the CLI does with a record it read: the summary table and the gate check
            let _ = reports::summary::table(std::slice::from_ref(&r), reports::summary::Style::Plain);
            let gates = reports::gate::parse("", "fuzz").unwrap();
            let _ = reports::gate::evaluate(&gates, &[(path.clone(), r)], reports::gate::Scope::Suite);
        }
    }

    #[test]
    fn fclib_files_read_or_fail_cleanly(e in proptest::collection::vec(edit(), 1..4)) {
        let seed = std::fs::read(fclib_fixture()).unwrap();
        // binary edits only: tokens and duplications of text make little sense inside HDF5
        let e: Vec<Edit> = e.into_iter().filter(|e| matches!(e, Edit::Flip(..) | Edit::Truncate(_))).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.hdf5");
        std::fs::write(&path, apply(&seed, &e)).unwrap();
        if let Ok(prob) = fclib::read(&path) {
            let reg = signorini::registry();
            let entry = reg.find_solver("pgs").unwrap();
            let mut solver = entry.build(&(entry.defaults)()).unwrap();
            let _ = fclib::solve(&prob, solver.as_mut(), entry.capabilities.delassus_form);
        }
    }
}
