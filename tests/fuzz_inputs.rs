//! Fuzzing the readers of user input with proptest: the seed corpus in `tests/data/fuzz/` (a suite,
//! a suite with a `[[grid]]`, a gates file, a run record, a shard manifest, a reference-engine
//! trajectory) and the FCLIB fixture, mutated by byte flips, truncations, deletions, duplications
//! and inserted tokens (`nan`, `1e308`, `-1`, `[[case]]`, ...), is fed to the same functions the
//! CLI uses. Every input must give `Ok` or `Err` — never a panic — and a suite that parses must
//! pass or fail the preparation checks (labels, parameters, memory estimate) without panicking
//! either. Beyond "no panic", the targets check what must hold of what is accepted: a grid suite
//! stays within its pair limit, shards partition it and its manifest reads back; a merge of a
//! mutated manifest beside a shard either refuses or keeps the shard's record; a trajectory that
//! passes `grade`'s checks grades to a record carrying every oracle check its case grades (the
//! pinned gate finds no check dropped); a run record is gated with and without pins.
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

/// The seed manifest as the manifest of the other shard (`shard` 0 of 2): the directory of the
/// merge target that holds the seed record.
fn other_shard_manifest() -> String {
    String::from_utf8(corpus("manifest.json")).unwrap().replace("\"shard\": 1", "\"shard\": 0")
}

/// The case the trajectory seed was exported from (slope, `duration = 0.05`), resolved and built.
fn slope_pair() -> &'static (harness::runner::ResolvedPair, Box<dyn harness::PreparedCase>, Vec<String>) {
    static PAIR: std::sync::OnceLock<(harness::runner::ResolvedPair, Box<dyn harness::PreparedCase>, Vec<String>)> =
        std::sync::OnceLock::new();
    PAIR.get_or_init(|| {
        let reg = signorini::registry();
        let mut suite = harness::runner::Suite::single("slope", "pgs");
        suite.apply_overrides(&reg, &[("duration".into(), "0.05".into())]).unwrap();
        let pairs = suite.resolve(&reg).unwrap();
        let checks = harness::runner::oracle_checks(&pairs, 1e9).unwrap().remove(0);
        let pair = pairs.into_iter().next().unwrap();
        let case = pair.case.build().unwrap();
        (pair, case, checks)
    })
}

/// One provenance for every record the targets build (collecting it runs git).
fn provenance() -> records::Provenance {
    static P: std::sync::OnceLock<records::Provenance> = std::sync::OnceLock::new();
    P.get_or_init(records::Provenance::collect).clone()
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
            // what the CLI does with a record it read: the summary table and the gate check,
            // without a suite and pinned to the seed's pair (its hashes and oracle checks)
            let _ = reports::summary::table(std::slice::from_ref(&r), reports::summary::Style::Plain);
            let mut gates = reports::gate::parse("", "fuzz").unwrap();
            let files = [(path.clone(), r)];
            let _ = reports::gate::evaluate(&gates, &files, reports::gate::Scope::Suite);
            let seed: records::RunRecord = serde_json::from_slice(&corpus("record.json")).unwrap();
            let pin = reports::gate::Pin {
                case_hash: seed.case.params_hash.clone(),
                solver_hash: seed.solver.params_hash.clone(),
                checks: seed.summary.oracle.keys().cloned().collect(),
            };
            gates.suite = Some("fuzz.toml".into());
            gates.pins = Some(reports::gate::Pins::from([((seed.solver.name, seed.case.label), pin)]));
            let rep = reports::gate::evaluate(&gates, &files, reports::gate::Scope::Suite);
            // every line the gate prints about an invalid record names the file
            prop_assert!(rep.invalid.iter().all(|l| l.starts_with(&path.display().to_string())), "{:?}", rep.invalid);
        }
    }

    #[test]
    fn grid_suites_expand_or_fail_cleanly(e in edits()) {
        let text = String::from_utf8_lossy(&apply(&corpus("suite-grid.toml"), &e)).into_owned();
        let reg = signorini::registry();
        if let Ok(suite) = harness::runner::Suite::from_toml_limited(&text, "fuzz", &reg, None, 64) {
            prop_assert!(suite.pairs.len() <= 64, "{} pairs past the limit", suite.pairs.len());
            if let Ok(pairs) = suite.resolve(&reg) {
                // the manifest a shard writes reads back as written, and the shards partition
                let m = harness::cluster::Manifest::new(&suite.name, 1, 3, &pairs);
                let text = serde_json::to_string(&m).unwrap();
                prop_assert_eq!(harness::cluster::Manifest::parse(&text, "fuzz").map_err(|e| e.to_string()), Ok(m));
                let n = pairs.len();
                let shard = harness::runner::shard(pairs, 1, 3);
                prop_assert!(shard.iter().all(|p| p.index % 3 == 1));
                prop_assert_eq!(shard.len(), (n + 1) / 3);
            }
        }
    }

    #[test]
    fn shard_manifests_read_or_merge_cleanly(e in edits()) {
        let text = apply(&corpus("manifest.json"), &e);
        if let Ok(m) = harness::cluster::Manifest::parse(&String::from_utf8_lossy(&text), "fuzz") {
            prop_assert!(m.shard < m.shards && (m.cases.is_empty() || m.cases.len() == m.pairs.len()));
        }
        // shard 0 holds the seed record and its manifest; shard 1 the mutated manifest
        let dir = tempfile::tempdir().unwrap();
        let (a, b, out) = (dir.path().join("a"), dir.path().join("b"), dir.path().join("out"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::fs::write(a.join("slope__pgs.json"), corpus("record.json")).unwrap();
        std::fs::write(a.join("shard-0-of-2.manifest"), other_shard_manifest()).unwrap();
        std::fs::write(b.join("shard-1-of-2.manifest"), &text).unwrap();
        if let Ok(rep) = harness::cluster::merge_partial(&out, &[a, b]) {
            // a merge that goes through copies the shard's record byte for byte
            prop_assert_eq!(rep.written.len(), 1);
            prop_assert_eq!(std::fs::read(out.join("slope__pgs.json")).unwrap(), corpus("record.json"));
        }
    }

    #[test]
    fn trajectories_grade_or_fail_cleanly(e in edits()) {
        let text = String::from_utf8_lossy(&apply(&corpus("trajectory.json"), &e)).into_owned();
        let (pair, case, checks) = slope_pair();
        let Ok(t) = reference::Trajectory::parse(&text) else { return Ok(()) };
        if t.check("slope", &pair.case_params, case.scenario()).is_ok() {
            let record = reference::grade(case.as_ref(), "slope", &t, provenance());
            // a graded trajectory carries every check its case grades: the pinned gate finds none
            // dropped
            let names: Vec<String> = record.summary.oracle.keys().cloned().collect();
            prop_assert_eq!(&names, checks);
            let mut gates = reports::gate::parse("suite = \"fuzz.toml\"\n", "fuzz").unwrap();
            let pin = reports::gate::Pin {
                case_hash: record.case.params_hash.clone(),
                solver_hash: record.solver.params_hash.clone(),
                checks: checks.clone(),
            };
            gates.pins = Some(reports::gate::Pins::from([((t.engine.name.clone(), "slope".to_string()), pin)]));
            let rep = reports::gate::evaluate(&gates, &[(PathBuf::from("t.json"), record)], reports::gate::Scope::Suite);
            prop_assert!(rep.invalid.iter().all(|l| !l.contains("dropped")), "{:?}", rep.invalid);
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
        // the same bytes as an answer (`fclib grade --answer`): read, checked against the
        // fixture's 4 contacts, and graded, or refused cleanly
        if let Ok(answer) = fclib::read_solution(&path, 4) {
            prop_assert_eq!(answer.r.len(), 12);
            prop_assert!(answer.r.iter().all(|x| x.is_finite()));
            let prob = fclib::read(&fclib_fixture()).unwrap();
            let g = fclib::Grader::new(&prob).unwrap().grade(&answer.r);
            // an absurd answer may overflow to inf / inf: NaN, which no tolerance accepts
            prop_assert!(g.error >= 0.0 || g.error.is_nan(), "error {}", g.error);
        }
    }
}
