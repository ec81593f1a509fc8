//! The gate check of `signorini gate`: every oracle check of every runnable pair must pass,
//! unless it is a listed expected failure; plus metric thresholds the oracles do not cover.
//!
//! # What is checked
//!
//! 1. **Oracle checks, all of them.** Each run record of the directory whose pair ran (status
//!    `ok` or `failed`; `skipped` pairs have no checks) contributes every check of its
//!    `summary.oracle`. A pair that did not complete (status `failed`) contributes one more
//!    failing check, [`COMPLETED`], whose measured value is the number of completed steps. A new
//!    solver or case needs no entry in the gates file: its checks are gated as soon as it runs.
//! 2. **Expected failures** (`[[expected_failure]]`): a check that fails and is listed passes the
//!    gate and is counted as an expected failure. A listed check that passes fails the gate as an
//!    *unexpected pass* (remove the entry), and an entry whose pair or check is not in the run
//!    directory is a stale entry (an error), so the list stays true.
//! 3. **Metric gates** (`[[gate]]`): bounds on any numeric value under a record's `summary` that is
//!    not itself an oracle verdict (`unconverged_steps`, `metrics.lee_residual.max`, ...).
//! 4. **Stored verdicts.** Each check's verdict is recomputed from its `error` and `tolerance`
//!    ([`records::OracleCheck::passes`]: finite and `error <= tolerance`); a record whose stored
//!    `pass` disagrees is invalid (and the recomputed verdict is the one gated). A completed
//!    record that lacks an oracle check its case grades is invalid: its checks were dropped
//!    (`"oracle": {}`), not absent. The checks a pair's case grades come with the pins
//!    ([`Pin::checks`]) when the gates file names its suite; without a suite, a completed record
//!    with no checks beside another completed record of its case label that has some is invalid.
//!    [`check_dir`] (`signorini gate`) refuses a directory holding an invalid record, in one line
//!    naming it ([`GateReport::invalid`]).
//! 5. **Provenance.** When the gates file names the suite its records come from, every record
//!    must carry the parameter hashes that suite defines now (`load`), and — under
//!    [`Scope::Suite`] — every pair of the suite must have a record. Two records of one
//!    (case label, solver) with different parameters are an error naming both files.
//!
//! # The gates file (`ci/gates.toml`)
//!
//! ```toml
//! suite = "ci/quick.toml"          # optional: pin records to this suite's parameters
//!
//! [[gate]]
//! solver = "pgs"                   # a name, a list of names, or "*" (every solver)
//! case = ["slope-10-stick", "sphere_stack"]   # case labels, likewise
//! metric = "unconverged_steps"     # a dotted path under the record's `summary`
//! max = 0                          # and/or `min`; inclusive; NaN is refused
//! why = "where the threshold comes from"
//!
//! [[expected_failure]]
//! solver = "drumwright"
//! case = "slope-10-slip"
//! check = "acceleration"           # an oracle check, or "completed" for a failed pair
//! measured = 0.229                 # the value when listed (shown beside today's)
//! reason = "why it fails, honestly"
//! see = "solvers/src/drumwright/README.md §7"
//! ```
//!
//! A gate that names both its solvers and its cases explicitly applies to each listed pair, which
//! must have completed; a gate with `"*"` on either side applies to the completed pairs that
//! match (a pair that failed is already an unexpected failure through [`COMPLETED`]). A gate that
//! matches no record is stale. `metric = "oracle.<check>"` alone is refused (the check is gated
//! already); a bound on `oracle.<check>.measured` is allowed, e.g. to keep an expected failure
//! from growing, but it must contain the check's expected value, so that moving a solver toward
//! its paper never breaks the gate.

use records::{RunRecord, RunStatus};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The pseudo-check of a pair whose run did not complete (status `failed`).
pub const COMPLETED: &str = "completed";

/// Solver names or case labels a gate applies to: one name, a list, or `"*"` for all.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Names {
    /// One name, or `"*"`.
    One(String),
    /// A list of names.
    Many(Vec<String>),
}

impl Names {
    /// Whether this is `"*"`.
    pub fn is_all(&self) -> bool {
        matches!(self, Names::One(n) if n == "*")
    }

    /// The names listed (empty for `"*"`).
    pub fn listed(&self) -> Vec<&str> {
        match self {
            _ if self.is_all() => vec![],
            Names::One(n) => vec![n.as_str()],
            Names::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }

    /// Whether `name` is one of these names.
    pub fn matches(&self, name: &str) -> bool {
        self.is_all() || self.listed().contains(&name)
    }
}

impl std::fmt::Display for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Names::One(n) => write!(f, "{n}"),
            Names::Many(v) => write!(f, "{}", v.join(",")),
        }
    }
}

/// One metric gate: a bound on a numeric value of the records it applies to.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gate {
    /// Solver name(s), or `"*"`.
    pub solver: Names,
    /// Case label(s), or `"*"`.
    pub case: Names,
    /// Dotted path under the record's summary, e.g. `metrics.natmap_rel_l2.max`,
    /// `iterations_per_step.mean`, `unconverged_steps`, `oracle.weight_ratio.measured`.
    pub metric: String,
    /// Upper bound (inclusive).
    pub max: Option<f64>,
    /// Lower bound (inclusive).
    pub min: Option<f64>,
    /// Where the threshold comes from (paper, method bound, measured margin).
    pub why: String,
}

/// One listed oracle check that is known to fail.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// Solver name.
    pub solver: String,
    /// Case label.
    pub case: String,
    /// Oracle check name, or [`COMPLETED`] for a pair that does not complete.
    pub check: String,
    /// The measured value when the entry was written (for the report).
    pub measured: f64,
    /// Why it fails.
    pub reason: String,
    /// Where that is explained (a README or paper section).
    pub see: String,
}

/// What the suite a gates file names defines now for one of its pairs ([`load`]): the parameter
/// hashes its record must carry and the oracle checks its case grades.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pin {
    /// Hash of the pair's resolved case parameters (`case.params_hash`).
    pub case_hash: String,
    /// Hash of the pair's solver settings (`solver.params_hash`).
    pub solver_hash: String,
    /// The names of the oracle checks the pair's case grades with these parameters: a completed
    /// record of the pair must carry each of them.
    pub checks: Vec<String>,
}

/// The pins of a suite's pairs by `(solver, case label)`.
pub type Pins = BTreeMap<(String, String), Pin>;

/// A parsed gates file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gates {
    /// Where it came from (for messages).
    pub source: String,
    /// The suite file its records come from, if named.
    pub suite: Option<String>,
    /// Metric gates.
    pub gates: Vec<Gate>,
    /// Expected failures.
    pub expected_failures: Vec<ExpectedFailure>,
    /// Parameter hashes and oracle checks of the suite's pairs (`load`); `None` when not pinned.
    pub pins: Option<Pins>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GatesFile {
    suite: Option<String>,
    #[serde(default)]
    gate: Vec<Gate>,
    #[serde(default)]
    expected_failure: Vec<ExpectedFailure>,
}

/// Why a gates file could not be read ([`parse`], [`load`]) or a run directory gated
/// ([`check_dir`]): one line naming the file and the entry.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// Not TOML, or a key or type the gates format does not have.
    #[error("{source_name}: {why}")]
    Toml {
        /// The gates file.
        source_name: String,
        /// The parser's message, one line.
        why: String,
    },
    /// A malformed `[[gate]]`.
    #[error("{source_name}: gate {index} ({solver} on {case}, {metric}): {problem}")]
    Gate {
        /// The gates file.
        source_name: String,
        /// The gate's position in the file (1-based).
        index: usize,
        /// Its solvers, as written.
        solver: String,
        /// Its cases, as written.
        case: String,
        /// Its metric.
        metric: String,
        /// What is wrong.
        problem: GateProblem,
    },
    /// A malformed `[[expected_failure]]`.
    #[error("{source_name}: expected_failure {index} ({solver} on {case}, {check}): {problem}")]
    ExpectedFailure {
        /// The gates file.
        source_name: String,
        /// The entry's position in the file (1-based).
        index: usize,
        /// Its solver.
        solver: String,
        /// Its case label.
        case: String,
        /// Its oracle check.
        check: String,
        /// What is wrong.
        problem: ExpectedFailureProblem,
    },
    /// The gates file could not be read ([`records::input::InputError`]).
    #[error(transparent)]
    Input(#[from] records::input::InputError),
    /// The suite the gates file names could not be resolved ([`load`]'s `pins_of`).
    #[error("suite named by the gates file {}: {why}", gates_file.display())]
    Suite {
        /// The gates file.
        gates_file: PathBuf,
        /// Why the suite could not be resolved.
        why: String,
    },
    /// The run directory could not be read ([`crate::ReadError`]).
    #[error(transparent)]
    Read(#[from] crate::ReadError),
    /// The run directory holds no run record ([`check_dir`]).
    #[error("{}: no run records (*.json) to gate", dir.display())]
    NoRecords {
        /// The run directory.
        dir: PathBuf,
    },
    /// The run directory holds invalid records ([`check_dir`], [`GateReport::invalid`]): the
    /// first is named, the others counted.
    #[error("refusing to gate {}: {}", dir.display(), first_invalid(invalid))]
    InvalidRecords {
        /// The run directory.
        dir: PathBuf,
        /// One line per invalid record, naming its file (never empty).
        invalid: Vec<String>,
    },
}

/// The first line of `invalid`, and how many more there are: [`GateError::InvalidRecords`].
fn first_invalid(invalid: &[String]) -> String {
    let first = invalid.first().map_or("", String::as_str);
    match invalid.len() {
        0 | 1 => first.to_string(),
        n => format!("{first} (and {} more invalid records)", n - 1),
    }
}

impl From<GateError> for String {
    fn from(e: GateError) -> String {
        e.to_string()
    }
}

/// What is wrong with a `[[gate]]` ([`GateError::Gate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum GateProblem {
    /// It gates an oracle check's pass (`oracle` or `oracle.NAME`), which every check is already.
    #[error("oracle checks are gated already; list a failing one as [[expected_failure]]")]
    OracleCheck,
    /// Neither `max` nor `min`.
    #[error("needs max or min")]
    NoBound,
    /// A NaN bound.
    #[error("a NaN bound can never be checked")]
    NanBound,
    /// `min > max`.
    #[error("min > max")]
    MinAboveMax,
    /// An empty list of solvers or cases.
    #[error("empty list of names")]
    EmptyNames,
    /// No `why`.
    #[error("needs a why")]
    NoWhy,
}

/// What is wrong with an `[[expected_failure]]` ([`GateError::ExpectedFailure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ExpectedFailureProblem {
    /// No `reason` or no `see`.
    #[error("needs a reason and a see")]
    NoReasonOrSee,
    /// The same (solver, case, check) twice.
    #[error("listed twice")]
    ListedTwice,
}

/// Parses a gates file (no pinning); `source` names it in errors.
pub fn parse(text: &str, source: &str) -> Result<Gates, GateError> {
    let f: GatesFile = toml::from_str(text)
        .map_err(|e| GateError::Toml { source_name: source.to_string(), why: api::params::toml_message(&e) })?;
    for (i, g) in f.gate.iter().enumerate() {
        let err = |problem| {
            Err(GateError::Gate {
                source_name: source.to_string(),
                index: i + 1,
                solver: g.solver.to_string(),
                case: g.case.to_string(),
                metric: g.metric.clone(),
                problem,
            })
        };
        let parts: Vec<&str> = g.metric.split('.').collect();
        if parts.first() == Some(&"oracle") && parts.len() <= 2 {
            return err(GateProblem::OracleCheck);
        }
        if g.max.is_none() && g.min.is_none() {
            return err(GateProblem::NoBound);
        }
        if g.max.is_some_and(f64::is_nan) || g.min.is_some_and(f64::is_nan) {
            return err(GateProblem::NanBound);
        }
        if let (Some(a), Some(b)) = (g.min, g.max) {
            if a > b {
                return err(GateProblem::MinAboveMax);
            }
        }
        if g.solver.listed().is_empty() && !g.solver.is_all() || g.case.listed().is_empty() && !g.case.is_all() {
            return err(GateProblem::EmptyNames);
        }
        if g.why.trim().is_empty() {
            return err(GateProblem::NoWhy);
        }
    }
    let mut seen = BTreeSet::new();
    for (i, e) in f.expected_failure.iter().enumerate() {
        let err = |problem| GateError::ExpectedFailure {
            source_name: source.to_string(),
            index: i + 1,
            solver: e.solver.clone(),
            case: e.case.clone(),
            check: e.check.clone(),
            problem,
        };
        if e.reason.trim().is_empty() || e.see.trim().is_empty() {
            return Err(err(ExpectedFailureProblem::NoReasonOrSee));
        }
        if !seen.insert((&e.solver, &e.case, &e.check)) {
            return Err(err(ExpectedFailureProblem::ListedTwice));
        }
    }
    Ok(Gates {
        source: source.to_string(),
        suite: f.suite,
        gates: f.gate,
        expected_failures: f.expected_failure,
        pins: None,
    })
}

/// Reads and parses a gates file. When it names a suite (a path relative to the gates file's
/// folder), `pins_of` gives the parameter hashes and oracle checks that suite defines now (the
/// caller resolves it), and the gates are pinned to them; its error is kept as
/// [`GateError::Suite`]'s text.
pub fn load<E: std::fmt::Display>(
    path: &Path,
    pins_of: impl FnOnce(&Path) -> Result<Pins, E>,
) -> Result<Gates, GateError> {
    let text = records::input::read_text(path)?;
    let mut gates = parse(&text, &path.display().to_string())?;
    if let Some(suite) = &gates.suite {
        let suite = path.parent().unwrap_or(Path::new("")).join(suite);
        gates.pins =
            Some(pins_of(&suite).map_err(|e| GateError::Suite { gates_file: path.to_path_buf(), why: e.to_string() })?);
    }
    Ok(gates)
}

/// Which pairs the run directory is supposed to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The whole run the gates describe (`signorini gate`): every pair of the pinned suite must
    /// have a record, and an entry or gate naming a pair that is not there is stale.
    Suite,
    /// Whatever the directory holds (`signorini report`): entries on other pairs are only listed
    /// as not checked here.
    Directory,
}

/// How one oracle check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Passed, not listed.
    Pass,
    /// Failed, listed as expected.
    ExpectedFailure,
    /// Failed, not listed: fails the gate.
    UnexpectedFailure,
    /// Listed, but passed: fails the gate (remove the entry).
    UnexpectedPass,
}

impl Outcome {
    /// Whether this outcome lets the gate pass.
    pub fn ok(self) -> bool {
        matches!(self, Outcome::Pass | Outcome::ExpectedFailure)
    }
}

/// The verdict on one oracle check of one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckVerdict {
    /// Solver name.
    pub solver: String,
    /// Case label.
    pub case: String,
    /// Check name ([`COMPLETED`] for a pair that did not complete).
    pub check: String,
    /// Measured value now.
    pub measured: f64,
    /// The outcome.
    pub outcome: Outcome,
    /// The check's error against its tolerance, or the failed run's reason.
    pub note: String,
    /// The expected-failure entry, when listed.
    pub entry: Option<ExpectedFailure>,
}

/// The verdict of one metric gate on one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The gate.
    pub gate: Gate,
    /// Solver of the pair.
    pub solver: String,
    /// Case label of the pair.
    pub case: String,
    /// The value, if found.
    pub value: Option<f64>,
    /// Pass or fail.
    pub pass: bool,
    /// Why it failed (empty when it passed).
    pub note: String,
}

/// Everything the gate check found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GateReport {
    /// Where the gates came from.
    pub source: String,
    /// One verdict per oracle check of every runnable pair (and per listed check of a pair).
    pub checks: Vec<CheckVerdict>,
    /// One verdict per metric gate and pair it applies to.
    pub gates: Vec<Verdict>,
    /// Errors that fail the gate by themselves: stale entries, conflicting or unpinned records,
    /// pairs of the suite without a record.
    pub errors: Vec<String>,
    /// Records that cannot be gated as they are, one line each naming the file: a stored verdict
    /// its own numbers contradict, or a completed record that lacks oracle checks its case grades.
    /// They fail the gate, and [`check_dir`] refuses the directory.
    pub invalid: Vec<String>,
    /// Entries and gates on pairs not in this directory (only under [`Scope::Directory`]).
    pub not_here: Vec<String>,
}

/// The counts the gate prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Oracle checks that passed.
    pub checks_passed: usize,
    /// Listed checks that failed.
    pub expected_failures: usize,
    /// Unlisted checks that failed.
    pub unexpected_failures: usize,
    /// Listed checks that passed.
    pub unexpected_passes: usize,
    /// Metric gate verdicts that passed.
    pub gates_passed: usize,
    /// Metric gate verdicts that failed.
    pub gates_failed: usize,
    /// Errors and invalid records.
    pub errors: usize,
}

impl GateReport {
    /// The counts.
    pub fn counts(&self) -> Counts {
        let n = |o: Outcome| self.checks.iter().filter(|c| c.outcome == o).count();
        Counts {
            checks_passed: n(Outcome::Pass),
            expected_failures: n(Outcome::ExpectedFailure),
            unexpected_failures: n(Outcome::UnexpectedFailure),
            unexpected_passes: n(Outcome::UnexpectedPass),
            gates_passed: self.gates.iter().filter(|v| v.pass).count(),
            gates_failed: self.gates.iter().filter(|v| !v.pass).count(),
            errors: self.errors.len() + self.invalid.len(),
        }
    }

    /// Whether the gate passes.
    pub fn passed(&self) -> bool {
        self.errors.is_empty()
            && self.invalid.is_empty()
            && self.checks.iter().all(|c| c.outcome.ok())
            && self.gates.iter().all(|v| v.pass)
    }

    /// The two count lines.
    pub fn count_lines(&self) -> String {
        let c = self.counts();
        format!(
            "oracle checks: {} passed, {} expected failures, {} unexpected failures, {} unexpected passes\n\
             metric gates: {} passed, {} failed; errors: {}\n",
            c.checks_passed,
            c.expected_failures,
            c.unexpected_failures,
            c.unexpected_passes,
            c.gates_passed,
            c.gates_failed,
            c.errors
        )
    }

    /// The gate's verdict on one pair, for the results table: `(text, passes)`, `None` when
    /// nothing of the gates applies to it.
    pub fn pair_cell(&self, solver: &str, case: &str) -> Option<(String, bool)> {
        let checks: Vec<&CheckVerdict> = self.checks.iter().filter(|c| c.solver == solver && c.case == case).collect();
        let gates: Vec<&Verdict> = self.gates.iter().filter(|v| v.solver == solver && v.case == case).collect();
        if checks.is_empty() && gates.is_empty() {
            return None;
        }
        let mut bad: Vec<String> = checks
            .iter()
            .filter(|c| !c.outcome.ok())
            .map(|c| match c.outcome {
                Outcome::UnexpectedPass => format!("{} (unexpected pass)", c.check),
                _ => c.check.clone(),
            })
            .collect();
        bad.extend(gates.iter().filter(|v| !v.pass).map(|v| v.gate.metric.clone()));
        let expected: Vec<&str> =
            checks.iter().filter(|c| c.outcome == Outcome::ExpectedFailure).map(|c| c.check.as_str()).collect();
        let n = checks.len() + gates.len();
        let mut text = if bad.is_empty() {
            format!("PASS {n}/{n}")
        } else {
            format!("FAIL {}/{n}: {}", bad.len(), bad.join(", "))
        };
        if !expected.is_empty() {
            text += &format!(" (expected failures: {})", expected.join(", "));
        }
        Some((text, bad.is_empty()))
    }

    /// Every reason the gate fails, one line each (empty when it passes).
    pub fn problems(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .checks
            .iter()
            .filter(|c| !c.outcome.ok())
            .map(|c| match c.outcome {
                Outcome::UnexpectedPass => format!(
                    "{} / {}: oracle.{} = {} passes but is listed as an expected failure: remove the entry",
                    c.case,
                    c.solver,
                    c.check,
                    fmt(Some(c.measured))
                ),
                _ => format!(
                    "{} / {}: oracle.{} = {} fails: {}",
                    c.case,
                    c.solver,
                    c.check,
                    fmt(Some(c.measured)),
                    c.note
                ),
            })
            .collect();
        out.extend(self.gates.iter().filter(|v| !v.pass).map(|v| {
            format!(
                "{} / {}: {} = {} fails {}: {}",
                v.case,
                v.solver,
                v.gate.metric,
                fmt(v.value),
                bounds(&v.gate),
                v.note
            )
        }));
        out.extend(self.invalid.iter().cloned());
        out.extend(self.errors.iter().cloned());
        out
    }

    /// The readable report: counts, then every problem, then the expected failures.
    pub fn table(&self) -> String {
        let mut out = format!("gates of {}\n", self.source);
        out += &self.count_lines();
        let problems: Vec<[String; 5]> = self
            .checks
            .iter()
            .filter(|c| !c.outcome.ok())
            .map(|c| {
                let (word, note) = match c.outcome {
                    Outcome::UnexpectedPass => {
                        ("UNEXPECTED PASS", "listed as expected failure; remove the entry".into())
                    }
                    _ => ("FAIL", c.note.clone()),
                };
                [
                    word.into(),
                    c.solver.clone(),
                    c.case.clone(),
                    format!("oracle.{} = {}", c.check, fmt(Some(c.measured))),
                    note,
                ]
            })
            .chain(self.gates.iter().filter(|v| !v.pass).map(|v| {
                [
                    "FAIL".into(),
                    v.solver.clone(),
                    v.case.clone(),
                    format!("{} = {}", v.gate.metric, fmt(v.value)),
                    format!("{}: {}", bounds(&v.gate), v.note),
                ]
            }))
            .collect();
        if !problems.is_empty() {
            out += "\nfailing:\n";
            out += &columns(&["result", "solver", "case", "value", "why it fails"], &problems);
        }
        if !self.errors.is_empty() || !self.invalid.is_empty() {
            out += "\nerrors:\n";
            for e in self.invalid.iter().chain(&self.errors) {
                out += &format!("  {e}\n");
            }
        }
        let expected: Vec<[String; 5]> = self
            .checks
            .iter()
            .filter(|c| c.outcome == Outcome::ExpectedFailure)
            .filter_map(|c| {
                let e = c.entry.as_ref()?;
                Some([
                    c.solver.clone(),
                    c.case.clone(),
                    c.check.clone(),
                    format!("{} (listed {})", fmt(Some(c.measured)), fmt(Some(e.measured))),
                    format!("{} (see {})", e.reason, e.see),
                ])
            })
            .collect();
        if !expected.is_empty() {
            out += "\nexpected failures:\n";
            out += &columns(&["solver", "case", "check", "measured", "reason"], &expected);
        }
        if !self.not_here.is_empty() {
            out += &format!(
                "\n{} entr(ies) of {} name pairs that are not in this run directory (not checked here)\n",
                self.not_here.len(),
                self.source
            );
        }
        out += if self.passed() { "\ngate: PASS\n" } else { "\ngate: FAIL\n" };
        out
    }
}

fn columns<const N: usize>(headers: &[&str; N], rows: &[[String; N]]) -> String {
    // each column as wide as its widest cell, in characters (the last one is not padded)
    let mut w: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in w.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::from("  ");
        if let Some((last, init)) = cells.split_last() {
            for (c, width) in init.iter().zip(&w) {
                s += &format!("{c:<width$}  ");
            }
            s += last;
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&headers.map(String::from));
    for r in rows {
        out += &line(r);
    }
    out
}

fn bounds(g: &Gate) -> String {
    match (g.min, g.max) {
        (Some(a), None) => format!(">= {}", fmt(Some(a))),
        (None, Some(b)) => format!("<= {}", fmt(Some(b))),
        (Some(a), Some(b)) => format!("in [{}, {}]", fmt(Some(a)), fmt(Some(b))),
        (None, None) => "-".into(),
    }
}

/// A number for the tables.
pub fn fmt(x: Option<f64>) -> String {
    match x {
        Some(v) if v != 0.0 && (v.abs() < 1e-3 || v.abs() >= 1e4) => format!("{v:.3e}"),
        Some(v) => format!("{v:.4}"),
        None => "-".into(),
    }
}

fn lookup<'a>(v: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// Checks one metric gate on one record.
pub fn check_metric(gate: &Gate, r: &RunRecord) -> Verdict {
    let verdict = |value, pass, note: String| Verdict {
        gate: gate.clone(),
        solver: r.solver.name.clone(),
        case: r.case.label.clone(),
        value,
        pass,
        note,
    };
    if r.status != RunStatus::Ok {
        let status = if r.status == RunStatus::Failed { "did not complete" } else { "was skipped" };
        return verdict(None, false, format!("pair {status}: {}", r.reason.clone().unwrap_or_default()));
    }
    let summary = serde_json::to_value(&r.summary).unwrap_or_default();
    let value = match lookup(&summary, &gate.metric) {
        None => return verdict(None, false, format!("'{}' not in the record", gate.metric)),
        Some(serde_json::Value::Bool(b)) => Some(if *b { 1.0 } else { 0.0 }),
        // non-finite numbers are serialized as null (records::nullable_f64)
        Some(serde_json::Value::Null) => Some(f64::NAN),
        Some(v) => v.as_f64(),
    };
    let Some(x) = value else {
        return verdict(None, false, format!("'{}' is not a number", gate.metric));
    };
    if x.is_nan() {
        return verdict(Some(x), false, "value is NaN".into());
    }
    if let Some(m) = gate.max.filter(|&m| x > m) {
        return verdict(Some(x), false, format!("{} > max {}", fmt(Some(x)), fmt(Some(m))));
    }
    if let Some(m) = gate.min.filter(|&m| x < m) {
        return verdict(Some(x), false, format!("{} < min {}", fmt(Some(x)), fmt(Some(m))));
    }
    verdict(Some(x), true, String::new())
}

/// Checks the records of a run directory (`(file, record)`, e.g. from
/// [`crate::read_run_dir_files`]) against `gates`.
pub fn evaluate(gates: &Gates, records: &[(PathBuf, RunRecord)], scope: Scope) -> GateReport {
    let mut rep = GateReport { source: gates.source.clone(), ..Default::default() };
    // One record per (solver, case label); conflicting duplicates are errors.
    let mut pairs: BTreeMap<(String, String), (&Path, &RunRecord)> = BTreeMap::new();
    let mut conflicted = BTreeSet::new();
    for (path, r) in records {
        let key = (r.solver.name.clone(), r.case.label.clone());
        match pairs.get(&key) {
            Some((first, q))
                if (&q.case.params_hash, &q.solver.params_hash) != (&r.case.params_hash, &r.solver.params_hash) =>
            {
                rep.errors.push(format!(
                    "{} / {}: two records with different parameters: {} and {}",
                    key.1,
                    key.0,
                    first.display(),
                    path.display()
                ));
                conflicted.insert(key);
            }
            Some(_) => {}
            None => {
                pairs.insert(key, (path.as_path(), r));
            }
        }
    }
    for k in &conflicted {
        pairs.remove(k);
    }
    if let Some(pins) = &gates.pins {
        let suite = gates.suite.as_deref().unwrap_or("the suite");
        for ((solver, case), (path, r)) in &pairs {
            match pins.get(&(solver.clone(), case.clone())) {
                None => rep.errors.push(format!("{}: {case} / {solver} is not a pair of {suite}", path.display())),
                Some(Pin { case_hash: ch, solver_hash: sh, .. }) => {
                    if *ch != r.case.params_hash {
                        rep.errors.push(format!(
                            "{}: case parameters differ from {suite} (hash {} != pinned {ch})",
                            path.display(),
                            r.case.params_hash
                        ));
                    }
                    if *sh != r.solver.params_hash {
                        rep.errors.push(format!(
                            "{}: solver parameters differ from {suite} (hash {} != pinned {sh})",
                            path.display(),
                            r.solver.params_hash
                        ));
                    }
                }
            }
        }
        if scope == Scope::Suite {
            for (solver, case) in pins.keys() {
                let key = (solver.clone(), case.clone());
                if !pairs.contains_key(&key) && !conflicted.contains(&key) {
                    rep.errors.push(format!("{case} / {solver}: pair of {suite} has no run record"));
                }
            }
        }
    }
    let stale = |rep: &mut GateReport, what: String, pair_here: bool| {
        if pair_here || scope == Scope::Suite {
            rep.errors.push(what);
        } else {
            rep.not_here.push(what);
        }
    };

    // Oracle checks and expected failures.
    let mut listed: BTreeMap<(&str, &str, &str), &ExpectedFailure> = BTreeMap::new();
    for e in &gates.expected_failures {
        listed.insert((&e.solver, &e.case, &e.check), e);
    }
    let mut used = BTreeSet::new();
    dropped_checks(gates, &pairs, &mut rep);
    for ((solver, case), (path, r)) in &pairs {
        if r.status == RunStatus::Skipped {
            continue;
        }
        // the verdict is recomputed from the record's numbers; a stored flag that disagrees is an
        // error (a record edited or written by a broken grader), and the recomputed verdict counts
        for c in r.summary.oracle.values().filter(|c| !c.consistent()) {
            rep.invalid.push(format!(
                "{}: oracle.{} stores pass = {} but error {} against tolerance {} {} (the verdict is error <= \
                 tolerance, finite)",
                path.display(),
                c.name,
                c.pass,
                fmt(Some(c.error)),
                fmt(Some(c.tolerance)),
                if c.pass { "fails" } else { "passes" }
            ));
        }
        let mut checks: Vec<(String, f64, bool, String)> = r
            .summary
            .oracle
            .values()
            .map(|c| {
                let note = format!(
                    "error {} > tolerance {} (expected {})",
                    fmt(Some(c.error)),
                    fmt(Some(c.tolerance)),
                    fmt(Some(c.expected))
                );
                (c.name.clone(), c.measured, records::OracleCheck::passes(c.error, c.tolerance), note)
            })
            .collect();
        let completed_listed = listed.contains_key(&(solver.as_str(), case.as_str(), COMPLETED));
        if r.status == RunStatus::Failed || completed_listed {
            let note = format!("did not complete: {}", r.reason.clone().unwrap_or_default());
            checks.push((COMPLETED.into(), r.summary.steps as f64, r.status == RunStatus::Ok, note));
        }
        for (check, measured, pass, note) in checks {
            let entry = listed.get(&(solver.as_str(), case.as_str(), check.as_str())).copied();
            if let Some(e) = entry {
                used.insert((e.solver.as_str(), e.case.as_str(), e.check.as_str()));
            }
            let outcome = match (pass, entry.is_some()) {
                (true, false) => Outcome::Pass,
                (false, true) => Outcome::ExpectedFailure,
                (false, false) => Outcome::UnexpectedFailure,
                (true, true) => Outcome::UnexpectedPass,
            };
            rep.checks.push(CheckVerdict {
                solver: solver.clone(),
                case: case.clone(),
                check,
                measured,
                outcome,
                note: if pass { String::new() } else { note },
                entry: entry.cloned(),
            });
        }
    }
    for e in &gates.expected_failures {
        if used.contains(&(e.solver.as_str(), e.case.as_str(), e.check.as_str())) {
            continue;
        }
        let here = pairs.get(&(e.solver.clone(), e.case.clone()));
        let why = match here {
            None if conflicted.contains(&(e.solver.clone(), e.case.clone())) => continue,
            None => "no run record for this pair".to_string(),
            Some((_, r)) if r.status == RunStatus::Skipped => {
                format!("the pair is skipped ({})", r.reason.clone().unwrap_or_default())
            }
            Some((_, r)) => format!(
                "no such check (the pair has: {})",
                r.summary.oracle.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        };
        stale(
            &mut rep,
            format!("stale expected_failure {} / {} / {}: {why}", e.case, e.solver, e.check),
            here.is_some(),
        );
    }

    // Metric gates.
    for g in &gates.gates {
        let what = format!("gate {} on {} / {}", g.metric, g.case, g.solver);
        if !g.solver.is_all() && !g.case.is_all() {
            for s in g.solver.listed() {
                for c in g.case.listed() {
                    match pairs.get(&(s.to_string(), c.to_string())) {
                        Some((_, r)) => rep.gates.push(check_metric(g, r)),
                        None if conflicted.contains(&(s.to_string(), c.to_string())) => {}
                        None => stale(&mut rep, format!("{what}: no run record for {c} / {s}"), false),
                    }
                }
            }
            continue;
        }
        let matching: Vec<&RunRecord> = pairs
            .values()
            .map(|(_, r)| *r)
            .filter(|r| g.solver.matches(&r.solver.name) && g.case.matches(&r.case.label))
            .collect();
        let named_here = |name: &str, of: fn(&RunRecord) -> &str| pairs.values().any(|(_, r)| of(r) == name);
        for s in g.solver.listed() {
            if !named_here(s, |r| &r.solver.name) {
                stale(&mut rep, format!("{what}: no run record of solver {s}"), false);
            }
        }
        for c in g.case.listed() {
            if !named_here(c, |r| &r.case.label) {
                stale(&mut rep, format!("{what}: no run record of case {c}"), false);
            }
        }
        for r in matching.into_iter().filter(|r| r.status == RunStatus::Ok) {
            rep.gates.push(check_metric(g, r));
        }
    }
    rep
}

/// Completed records that lack oracle checks their case grades ([`GateReport::invalid`]). With
/// pins, the checks of each pair come from its suite ([`Pin::checks`]): a record missing any of
/// them, alone or not, is named with the missing checks (a record whose case parameters differ
/// from the pin is an error already, and its checks may differ). Without pins, only a record
/// with no checks at all beside another completed record of its case label that has some is
/// caught.
fn dropped_checks(gates: &Gates, pairs: &BTreeMap<(String, String), (&Path, &RunRecord)>, rep: &mut GateReport) {
    let completed = |r: &RunRecord| r.status == RunStatus::Ok;
    if let Some(pins) = &gates.pins {
        let suite = gates.suite.as_deref().unwrap_or("the suite");
        for (key, (path, r)) in pairs {
            let Some(pin) = pins.get(key).filter(|p| completed(r) && p.case_hash == r.case.params_hash) else {
                continue;
            };
            let missing: Vec<&str> =
                pin.checks.iter().filter(|c| !r.summary.oracle.contains_key(*c)).map(String::as_str).collect();
            if missing.is_empty() {
                continue;
            }
            let has = if r.summary.oracle.is_empty() {
                "no oracle check".to_string()
            } else {
                format!("{} of its {} oracle checks", pin.checks.len() - missing.len(), pin.checks.len())
            };
            rep.invalid.push(format!(
                "{}: completed with {has}: missing {} that case {} of {suite} grades; the checks were dropped from \
                 the record",
                path.display(),
                missing.join(", "),
                key.1
            ));
        }
        return;
    }
    // A completed pair whose record has no oracle checks while another completed record of the
    // same case label has some: the checks were dropped (`"oracle": {}`), not absent.
    let mut graded: BTreeMap<&str, &Path> = BTreeMap::new();
    for (path, r) in pairs.values() {
        if completed(r) && !r.summary.oracle.is_empty() {
            graded.entry(r.case.label.as_str()).or_insert(*path);
        }
    }
    for ((_, case), (path, r)) in pairs {
        if let Some(other) = graded.get(case.as_str()).filter(|_| completed(r) && r.summary.oracle.is_empty()) {
            rep.invalid.push(format!(
                "{}: completed without oracle checks, but {} of the same case {case} has them: the checks were \
                 dropped from the record",
                path.display(),
                other.display()
            ));
        }
    }
}

/// Reads the run directory `dir` and checks it against `gates` under [`Scope::Suite`]. A
/// directory without run records is an error: with no suite named by the gates, nothing would be
/// checked and the gate would pass; so is one holding an invalid record ([`GateReport::invalid`]:
/// a stored verdict its numbers contradict, oracle checks dropped), named in one line
/// ([`GateError::InvalidRecords`]).
pub fn check_dir(dir: &Path, gates: &Gates) -> Result<GateReport, GateError> {
    let files = crate::read_run_dir_files(dir)?;
    if files.is_empty() {
        return Err(GateError::NoRecords { dir: dir.to_path_buf() });
    }
    let rep = evaluate(gates, &files, Scope::Suite);
    if !rep.invalid.is_empty() {
        return Err(GateError::InvalidRecords { dir: dir.to_path_buf(), invalid: rep.invalid });
    }
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use records::MetricStat;

    /// A record of `solver` on `case` with one oracle check `slides` (passing or not) and a
    /// natural-map residual.
    fn record(solver: &str, case: &str, status: RunStatus, slides_pass: bool, natmap_max: f64) -> RunRecord {
        let mut r = crate::test_records::record(case, solver, status, 0.0, &[("slides", slides_pass)]);
        r.summary.metrics.insert("natmap_rel_l2".into(), MetricStat { max: natmap_max, mean: 0.0, last: 0.0 });
        r.reason = (status != RunStatus::Ok).then(|| "step 3: boom".into());
        r
    }

    fn dir(records: Vec<RunRecord>) -> Vec<(PathBuf, RunRecord)> {
        records
            .into_iter()
            .map(|r| (PathBuf::from(format!("run/{}__{}.json", r.case.label, r.solver.name)), r))
            .collect()
    }

    const EXPECTED: &str = "[[expected_failure]]\nsolver = \"pgs\"\ncase = \"slope-a\"\ncheck = \"slides\"\n\
                            measured = 1.0\nreason = \"it slides\"\nsee = \"README §7\"\n";

    fn check(gates: &str, records: Vec<RunRecord>) -> GateReport {
        evaluate(&parse(gates, "g.toml").unwrap(), &dir(records), Scope::Suite)
    }

    #[test]
    fn every_passing_oracle_check_passes_without_any_gate() {
        let rep = check("", vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)]);
        assert!(rep.passed(), "{}", rep.table());
        assert_eq!(rep.counts(), Counts { checks_passed: 1, ..Default::default() });
        assert_eq!(rep.pair_cell("pgs", "slope-a"), Some(("PASS 1/1".into(), true)));
    }

    /// A stored `pass` that its own numbers contradict (`measured = 5, tolerance = 0, pass = true`
    /// counted as passed) is an error naming the file, and the recomputed verdict is gated.
    #[test]
    fn a_stored_verdict_that_its_numbers_contradict_is_an_error() {
        let mut forged = record("pgs", "slope-a", RunStatus::Ok, true, 0.0);
        let c = forged.summary.oracle.get_mut("slides").unwrap();
        (c.measured, c.expected, c.error, c.tolerance, c.pass) = (5.0, 0.0, 5.0, 0.0, true);
        let rep = check("", vec![forged.clone()]);
        assert!(!rep.passed(), "{}", rep.table());
        assert_eq!(rep.counts().unexpected_failures, 1, "the recomputed verdict counts");
        assert_eq!((rep.errors.len(), rep.invalid.len()), (0, 1), "{:?}", rep.invalid);
        assert!(
            rep.invalid[0].starts_with("run/slope-a__pgs.json: oracle.slides stores pass = true"),
            "{}",
            rep.invalid[0]
        );
        // a NaN error never passes, whatever the flag says
        let c = forged.summary.oracle.get_mut("slides").unwrap();
        (c.error, c.tolerance) = (f64::NAN, 1.0);
        assert!(!check("", vec![forged.clone()]).passed());
        // a failing flag on a passing error is refused too
        let c = forged.summary.oracle.get_mut("slides").unwrap();
        (c.error, c.tolerance, c.pass) = (0.1, 1.0, false);
        let rep = check("", vec![forged]);
        assert!(rep.invalid[0].contains("stores pass = false"), "{:?}", rep.invalid);
    }

    /// Without a suite, `"oracle": {}` on a completed pair whose case label other records grade is
    /// invalid (the pair's checks were silently dropped from the gate).
    #[test]
    fn a_record_with_its_checks_dropped_is_an_error() {
        let mut emptied = record("sap", "slope-a", RunStatus::Ok, true, 0.0);
        emptied.summary.oracle.clear();
        let rep = check("", vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0), emptied.clone()]);
        assert!(!rep.passed(), "{}", rep.table());
        assert!(
            rep.invalid[0]
                .contains("run/slope-a__sap.json: completed without oracle checks, but run/slope-a__pgs.json"),
            "{:?}",
            rep.invalid
        );
        // alone, or beside a pair that did not complete, there is nothing to compare with (a
        // gates file pinned to the suite knows the checks: the next test)
        assert!(check("", vec![emptied.clone()]).passed());
        let mut failed = record("pgs", "slope-a", RunStatus::Failed, true, 0.0);
        failed.summary.oracle.clear();
        let rep = check("", vec![failed, emptied]);
        assert!(rep.invalid.is_empty() && rep.errors.is_empty(), "{:?} {:?}", rep.invalid, rep.errors);
    }

    /// Pinned to its suite, the gate knows which checks each pair's case grades ([`Pin::checks`]):
    /// a lone record with `"oracle": {}`, or without one of its checks, is invalid, naming the file
    /// and the missing checks, and `check_dir` refuses its directory in one line. A pair that did
    /// not complete has no checks to carry, and a record of other case parameters than the pin's
    /// is an error of its own (its checks may differ).
    #[test]
    fn a_lone_record_without_the_checks_its_case_grades_is_invalid() {
        let h = api::Params::default().hash();
        let pin = |checks: &[&str]| Pin {
            case_hash: h.clone(),
            solver_hash: h.clone(),
            checks: checks.iter().map(|c| c.to_string()).collect(),
        };
        let mut g = parse("suite = \"s.toml\"\n", "g.toml").unwrap();
        g.pins = Some(Pins::from([(("pgs".into(), "slope-a".into()), pin(&["acceleration", "slides"]))]));
        let eval = |r: RunRecord| evaluate(&g, &dir(vec![r]), Scope::Suite);
        let mut emptied = record("pgs", "slope-a", RunStatus::Ok, true, 0.0);
        emptied.summary.oracle.clear();
        let rep = eval(emptied.clone());
        assert!(!rep.passed() && rep.errors.is_empty(), "{}", rep.table());
        assert_eq!(
            rep.invalid,
            ["run/slope-a__pgs.json: completed with no oracle check: missing acceleration, slides that case slope-a \
              of s.toml grades; the checks were dropped from the record"]
        );
        // one check of two kept
        let rep = eval(record("pgs", "slope-a", RunStatus::Ok, true, 0.0));
        assert_eq!(rep.invalid.len(), 1, "{:?}", rep.invalid);
        assert!(rep.invalid[0].contains("completed with 1 of its 2 oracle checks: missing acceleration that"));
        // every check there: valid
        let mut whole = record("pgs", "slope-a", RunStatus::Ok, true, 0.0);
        let mut acc = whole.summary.oracle["slides"].clone();
        acc.name = "acceleration".into();
        whole.summary.oracle.insert("acceleration".into(), acc);
        assert!(eval(whole).passed());
        // a failed pair carries no checks; other case parameters are a pin error, not a drop
        let mut failed = emptied.clone();
        failed.status = RunStatus::Failed;
        assert!(eval(failed).invalid.is_empty());
        let mut other = emptied.clone();
        other.case.params_hash = "other".into();
        let rep = eval(other);
        assert!(rep.invalid.is_empty() && rep.errors[0].contains("case parameters differ"), "{:?}", rep.errors);

        // check_dir refuses the directory, naming the record
        let tmp = tempfile::tempdir().unwrap();
        emptied.write_atomic(tmp.path()).unwrap();
        let e = check_dir(tmp.path(), &g).unwrap_err();
        assert!(matches!(&e, GateError::InvalidRecords { invalid, .. } if invalid.len() == 1), "{e:?}");
        let e = e.to_string();
        assert!(e.starts_with(&format!("refusing to gate {}: ", tmp.path().display())), "{e}");
        assert!(e.contains("slope-a__pgs.json: completed with no oracle check: missing acceleration, slides"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn an_unlisted_failing_oracle_check_fails_the_gate() {
        let rep = check("", vec![record("pgs", "slope-a", RunStatus::Ok, false, 0.0)]);
        assert!(!rep.passed());
        assert_eq!(rep.counts().unexpected_failures, 1);
        let table = rep.table();
        for needle in ["FAIL", "pgs", "slope-a", "oracle.slides = 1.0000", "tolerance 0.5000", "1 unexpected failures"]
        {
            assert!(table.contains(needle), "missing {needle} in\n{table}");
        }
        assert!(table.ends_with("gate: FAIL\n"), "{table}");
    }

    #[test]
    fn a_listed_expected_failure_passes_and_is_counted_with_its_reason() {
        let rep = check(EXPECTED, vec![record("pgs", "slope-a", RunStatus::Ok, false, 0.0)]);
        assert!(rep.passed(), "{}", rep.table());
        assert_eq!(rep.counts(), Counts { expected_failures: 1, ..Default::default() });
        let table = rep.table();
        for needle in [
            "0 passed, 1 expected failures, 0 unexpected failures, 0 unexpected passes",
            "it slides (see README §7)",
            "1.0000 (listed 1.0000)",
        ] {
            assert!(table.contains(needle), "missing {needle} in\n{table}");
        }
        assert_eq!(rep.pair_cell("pgs", "slope-a"), Some(("PASS 1/1 (expected failures: slides)".into(), true)));
    }

    #[test]
    fn an_expected_failure_that_passes_fails_as_unexpected_pass() {
        let rep = check(EXPECTED, vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)]);
        assert!(!rep.passed());
        assert_eq!(rep.counts().unexpected_passes, 1);
        assert!(rep.table().contains("UNEXPECTED PASS"), "{}", rep.table());
        assert!(rep.problems()[0].contains("remove the entry"), "{:?}", rep.problems());
    }

    #[test]
    fn stale_entries_are_errors() {
        let other_check = EXPECTED.replace("check = \"slides\"", "check = \"acceleration\"");
        let rep = check(&other_check, vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)]);
        assert!(!rep.passed());
        assert!(
            rep.errors[0]
                .contains("stale expected_failure slope-a / pgs / acceleration: no such check (the pair has: slides)"),
            "{:?}",
            rep.errors
        );
        let other_pair = EXPECTED.replace("slope-a", "slope-b");
        let rep = check(&other_pair, vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)]);
        assert!(rep.errors[0].contains("no run record for this pair"), "{:?}", rep.errors);
        let rep = check(EXPECTED, vec![record("pgs", "slope-a", RunStatus::Skipped, true, 0.0)]);
        assert!(rep.errors[0].contains("the pair is skipped"), "{:?}", rep.errors);
        // A report on part of a run only notes entries on pairs it does not hold.
        let g = parse(&other_pair, "g.toml").unwrap();
        let rep = evaluate(&g, &dir(vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)]), Scope::Directory);
        assert!(rep.passed() && rep.not_here.len() == 1, "{}", rep.table());
        // a gate with a wildcard on one side is stale for each listed name with no record, only
        // for those
        let gate = |solver: &str, case: &str| {
            format!(
                "[[gate]]\nsolver = {solver}\ncase = {case}\nmetric = \"natmap_rel_l2.max\"\nmax = 1\nwhy = \"w\"\n"
            )
        };
        let here = || vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)];
        let rep = check(&gate("[\"pgs\", \"nsn\"]", "\"*\""), here());
        let what = "gate natmap_rel_l2.max on * / pgs,nsn";
        assert_eq!(rep.errors, [format!("{what}: no run record of solver nsn")]);
        let rep = check(&gate("\"*\"", "[\"slope-a\", \"slope-b\"]"), here());
        let what = "gate natmap_rel_l2.max on slope-a,slope-b / *";
        assert_eq!(rep.errors, [format!("{what}: no run record of case slope-b")]);
    }

    #[test]
    fn a_failed_pair_fails_its_completed_check_unless_listed() {
        let failed = || vec![record("pgs", "slope-a", RunStatus::Failed, true, 0.0)];
        let rep = check("", failed());
        assert!(!rep.passed());
        let c = rep.checks.iter().find(|c| c.check == COMPLETED).unwrap();
        assert_eq!((c.outcome, c.measured), (Outcome::UnexpectedFailure, 10.0));
        assert!(c.note.contains("step 3: boom"), "{}", c.note);
        let listed = EXPECTED.replace("check = \"slides\"", "check = \"completed\"");
        assert!(check(&listed, failed()).passed());
        // and a pair that completes again makes the entry an unexpected pass
        let rep = check(&listed, vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)]);
        assert_eq!(rep.counts().unexpected_passes, 1, "{}", rep.table());
    }

    #[test]
    fn skipped_pairs_have_no_checks() {
        let rep = check("", vec![record("pgs", "slope-a", RunStatus::Skipped, false, 0.0)]);
        assert!(rep.passed() && rep.checks.is_empty());
        assert_eq!(rep.pair_cell("pgs", "slope-a"), None);
    }

    #[test]
    fn nan_bounds_and_redundant_oracle_gates_are_refused() {
        let gate = |body: &str| format!("[[gate]]\nsolver = \"pgs\"\ncase = \"c\"\n{body}\nwhy = \"w\"\n");
        for (body, kind, needle) in [
            ("metric = \"metrics.x.max\"\nmax = nan", GateProblem::NanBound, "NaN bound"),
            ("metric = \"metrics.x.max\"\nmin = nan", GateProblem::NanBound, "NaN bound"),
            ("metric = \"metrics.x.max\"", GateProblem::NoBound, "needs max or min"),
            ("metric = \"metrics.x.max\"\nmin = 2\nmax = 1", GateProblem::MinAboveMax, "min > max"),
            ("metric = \"oracle.slides\"", GateProblem::OracleCheck, "gated already"),
        ] {
            let e = parse(&gate(body), "g.toml").unwrap_err();
            assert!(matches!(e, GateError::Gate { index: 1, problem, .. } if problem == kind), "{body}: {e:?}");
            let e = e.to_string();
            assert!(e.starts_with("g.toml: gate 1 (pgs on c") && e.contains(needle), "{body}: {e}");
        }
        let e = parse(&format!("{EXPECTED}{EXPECTED}"), "g.toml").unwrap_err();
        assert!(
            matches!(e, GateError::ExpectedFailure { index: 2, problem: ExpectedFailureProblem::ListedTwice, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("listed twice"));
        let e = parse("[[gate]]\nsolver = 1\n", "g.toml").unwrap_err();
        assert!(matches!(e, GateError::Toml { .. }), "{e:?}");
        assert!(e.to_string().starts_with("g.toml:"));
    }

    #[test]
    fn metric_gates_apply_to_listed_pairs_and_wildcards() {
        let records = || {
            vec![
                record("pgs", "slope-a", RunStatus::Ok, true, 1e-7),
                record("pgs", "slope-b", RunStatus::Ok, true, 1e-3),
                record("sap", "slope-a", RunStatus::Ok, true, 1e-3),
            ]
        };
        let gate = |solver: &str, case: &str| {
            format!("[[gate]]\nsolver = {solver}\ncase = {case}\nmetric = \"metrics.natmap_rel_l2.max\"\nmax = 1e-6\nwhy = \"w\"\n")
        };
        let rep = check(&gate("\"pgs\"", "\"*\""), records());
        assert_eq!((rep.counts().gates_passed, rep.counts().gates_failed), (1, 1));
        assert!(rep.table().contains("slope-b") && rep.table().contains("> max 1.000e-6"), "{}", rep.table());
        assert_eq!(rep.pair_cell("pgs", "slope-b").unwrap().0, "FAIL 1/2: metrics.natmap_rel_l2.max");
        let rep = check(&gate("[\"pgs\", \"sap\"]", "\"slope-a\""), records());
        assert_eq!((rep.counts().gates_passed, rep.counts().gates_failed), (1, 1));
        assert!(check(&gate("\"pgs\"", "[\"slope-a\"]"), records()).passed());
        // a gate naming a pair that is not there is stale
        let rep = check(&gate("\"pgs\"", "\"slope-c\""), records());
        assert!(rep.errors[0].contains("no run record for slope-c / pgs"), "{:?}", rep.errors);
        let rep = check(&gate("\"nsn\"", "\"*\""), records());
        assert!(rep.errors[0].contains("no run record of solver nsn"), "{:?}", rep.errors);
        // a NaN value fails
        let rep = check(&gate("\"pgs\"", "\"slope-a\""), vec![record("pgs", "slope-a", RunStatus::Ok, true, f64::NAN)]);
        assert_eq!(rep.gates[0].note, "value is NaN");
    }

    #[test]
    fn records_with_other_parameters_than_the_suite_pins_are_flagged() {
        let mut g = parse("suite = \"s.toml\"\n", "g.toml").unwrap();
        let mut pins = Pins::new();
        // the synthetic records' case and solver parameters are both empty: one hash
        let h = api::Params::default().hash();
        let pin = |case_hash: &str| Pin { case_hash: case_hash.into(), solver_hash: h.clone(), checks: vec![] };
        pins.insert(("pgs".into(), "slope-a".into()), pin(&h));
        pins.insert(("pgs".into(), "slope-b".into()), pin(&h));
        g.pins = Some(pins.clone());
        let r = dir(vec![record("pgs", "slope-a", RunStatus::Ok, true, 0.0)]);
        let rep = evaluate(&g, &r, Scope::Suite);
        assert_eq!(rep.errors, ["slope-b / pgs: pair of s.toml has no run record"]);
        assert!(evaluate(&g, &r, Scope::Directory).passed());
        pins.insert(("pgs".into(), "slope-a".into()), pin("changed"));
        g.pins = Some(pins);
        let rep = evaluate(&g, &r, Scope::Directory);
        assert_eq!(
            rep.errors,
            [format!("run/slope-a__pgs.json: case parameters differ from s.toml (hash {h} != pinned changed)")]
        );
        let extra = dir(vec![record("nsn", "slope-a", RunStatus::Ok, true, 0.0)]);
        let rep = evaluate(&g, &extra, Scope::Directory);
        assert!(rep.errors[0].contains("slope-a / nsn is not a pair of s.toml"), "{:?}", rep.errors);
    }

    #[test]
    fn two_records_of_one_pair_with_different_parameters_are_an_error_naming_both() {
        let a = record("pgs", "slope-a", RunStatus::Ok, true, 0.0);
        let mut b = a.clone();
        b.solver.params_hash = "other".into();
        let records = vec![(PathBuf::from("run/a.json"), a.clone()), (PathBuf::from("run/sub/a.json"), b)];
        let rep = evaluate(&parse("", "g.toml").unwrap(), &records, Scope::Suite);
        assert!(!rep.passed());
        assert_eq!(rep.errors, ["slope-a / pgs: two records with different parameters: run/a.json and run/sub/a.json"]);
        // an expected failure or a gate on that pair is not stale besides: the conflict is the error
        let gates = format!(
            "{EXPECTED}[[gate]]\nsolver = \"pgs\"\ncase = \"slope-a\"\nmetric = \"unconverged_steps\"\nmax = 0\nwhy = \"w\"\n"
        );
        let rep = evaluate(&parse(&gates, "g.toml").unwrap(), &records, Scope::Suite);
        assert_eq!(rep.errors, ["slope-a / pgs: two records with different parameters: run/a.json and run/sub/a.json"]);
        // the same parameters twice (a copy) are one pair
        let same = vec![(PathBuf::from("run/a.json"), a.clone()), (PathBuf::from("run/b.json"), a)];
        assert!(evaluate(&parse("", "g.toml").unwrap(), &same, Scope::Suite).passed());
    }
}

/// Tests written against the mutants cargo-mutants left alive in this file (ci/mutants.sh gate;
/// docs/mutation-testing.md).
#[cfg(test)]
mod mutant_tests {
    use super::*;

    /// `"*"` names every pair and lists none; one name or a list lists exactly those.
    #[test]
    fn names_list_and_match() {
        let all = Names::One("*".into());
        assert!(all.is_all() && all.listed().is_empty() && all.matches("anything"));
        let one = Names::One("pgs".into());
        assert!(!one.is_all() && one.listed() == ["pgs"] && one.matches("pgs") && !one.matches("sap"));
        let many = Names::Many(vec!["pgs".into(), "sap".into()]);
        assert!(many.listed() == ["pgs", "sap"] && many.matches("sap") && !many.matches("nsn"));
        // a list that happens to hold "*" is a list, not the wildcard
        let odd = Names::Many(vec!["*".into()]);
        assert!(!odd.is_all() && odd.listed() == ["*"] && !odd.matches("pgs"));
    }

    /// Only gates on an oracle check itself (`oracle.CHECK`) are refused as redundant; a
    /// two-part metric path of any other kind, or a deeper oracle path, is a gate like any other.
    #[test]
    fn only_oracle_checks_themselves_are_redundant_gates() {
        let gate = |metric: &str| {
            format!("[[gate]]\nsolver = \"pgs\"\ncase = \"c\"\nmetric = \"{metric}\"\nmax = 1\nwhy = \"w\"\n")
        };
        for ok in ["unconverged_steps", "metrics.natmap_rel_l2", "oracle.slides.error"] {
            assert!(parse(&gate(ok), "g.toml").is_ok(), "{ok}");
        }
        for refused in ["oracle", "oracle.slides"] {
            let e = parse(&gate(refused), "g.toml").unwrap_err();
            assert!(matches!(e, GateError::Gate { problem: GateProblem::OracleCheck, .. }), "{refused}: {e:?}");
            assert!(e.to_string().contains("gated already"), "{refused}: {e}");
        }
    }

    /// `min = max` pins one value and is a valid gate; an empty list of solvers or of cases (either
    /// one alone) names nothing and is refused.
    #[test]
    fn bounds_may_meet_and_name_lists_may_not_be_empty() {
        let gate = |names: &str, bounds: &str| {
            format!("[[gate]]\n{names}\nmetric = \"unconverged_steps\"\n{bounds}\nwhy = \"w\"\n")
        };
        assert!(parse(&gate("solver = \"pgs\"\ncase = \"c\"", "min = 1\nmax = 1"), "g.toml").is_ok());
        for names in ["solver = []\ncase = \"c\"", "solver = \"pgs\"\ncase = []"] {
            let e = parse(&gate(names, "max = 1"), "g.toml").unwrap_err();
            assert!(matches!(e, GateError::Gate { problem: GateProblem::EmptyNames, .. }), "{names}: {e:?}");
            assert!(e.to_string().contains("empty list of names"), "{names}: {e}");
        }
    }

    /// `"*"` for solver and case is a valid gate (the wildcard is not an empty list).
    #[test]
    fn wildcards_are_not_empty_lists() {
        let g = "[[gate]]\nsolver = \"*\"\ncase = \"*\"\nmetric = \"unconverged_steps\"\nmax = 0\nwhy = \"w\"\n";
        assert!(parse(g, "g.toml").is_ok());
    }

    /// An expected failure needs both a reason and a `see`; either one missing is refused.
    #[test]
    fn expected_failures_need_a_reason_and_a_see() {
        let entry = |reason: &str, see: &str| {
            format!(
                "[[expected_failure]]\nsolver = \"pgs\"\ncase = \"c\"\ncheck = \"slides\"\nmeasured = 1.0\n\
                 reason = \"{reason}\"\nsee = \"{see}\"\n"
            )
        };
        assert!(parse(&entry("r", "s"), "g.toml").is_ok());
        for (reason, see) in [("", "s"), ("r", " "), ("", "")] {
            let e = parse(&entry(reason, see), "g.toml").unwrap_err();
            let kind = ExpectedFailureProblem::NoReasonOrSee;
            assert!(matches!(e, GateError::ExpectedFailure { problem, .. } if problem == kind), "{e:?}");
            assert!(e.to_string().contains("needs a reason and a see"), "{reason:?} {see:?}: {e}");
        }
    }

    /// `load` reads the file and pins it to the suite it names, that path taken relative to the
    /// gates file's folder.
    #[test]
    fn load_pins_the_suite_named_relative_to_the_gates_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("g.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "suite = \"s.toml\"\n").unwrap();
        let mut asked = None;
        let g = load(&path, |suite| {
            asked = Some(suite.to_path_buf());
            let mut pins = Pins::new();
            let pin = Pin { case_hash: "h".into(), solver_hash: "k".into(), checks: vec!["slides".into()] };
            pins.insert(("pgs".into(), "a".into()), pin);
            Ok::<_, String>(pins)
        })
        .unwrap();
        assert_eq!(asked, Some(dir.path().join("sub").join("s.toml")));
        assert_eq!(g.suite.as_deref(), Some("s.toml"));
        assert_eq!(g.pins.map(|p| p.len()), Some(1));
        assert!(g.source.ends_with("g.toml"));
        let e = load(&path, |_| Err("no such suite")).unwrap_err();
        assert!(matches!(&e, GateError::Suite { gates_file, why } if *gates_file == path && why == "no such suite"));
        let e = e.to_string();
        assert!(e.contains("no such suite") && e.contains("g.toml"), "{e}");
    }

    /// A listed expected failure that passes reads as an unexpected pass in the pair's cell.
    #[test]
    fn an_unexpected_pass_is_named_in_the_pair_cell() {
        let g = parse(
            "[[expected_failure]]\nsolver = \"pgs\"\ncase = \"a\"\ncheck = \"slides\"\nmeasured = 1.0\nreason = \"r\"\nsee = \"s\"\n",
            "g.toml",
        )
        .unwrap();
        let r = crate::test_records::record("a", "pgs", RunStatus::Ok, 0.0, &[("slides", true)]);
        let rep = evaluate(&g, &[(PathBuf::from("run/a__pgs.json"), r)], Scope::Directory);
        assert_eq!(rep.pair_cell("pgs", "a"), Some(("FAIL 1/1: slides (unexpected pass)".into(), false)));
    }

    /// The problems list names the failing gates and only them.
    #[test]
    fn problems_list_only_the_failing_gates() {
        let problems = super::tests_support::one_of_two_gates_failing().problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("a / sap: metrics.natmap_rel_l2.max"), "{problems:?}");
    }

    /// A metric gate's bounds are inclusive: the value at `max` or at `min` passes, beyond them it
    /// fails naming the bound; a pair that failed or was skipped fails the gate saying which.
    #[test]
    fn metric_bounds_are_inclusive_and_incomplete_pairs_fail() {
        let gate = |bounds: &str| {
            let text = format!(
                "[[gate]]\nsolver = \"*\"\ncase = \"*\"\nmetric = \"metrics.natmap_rel_l2.max\"\n{bounds}\nwhy = \"w\"\n"
            );
            parse(&text, "g.toml").unwrap().gates.remove(0)
        };
        let (_, r) = super::tests_support::record("pgs", "a", 2.0);
        assert!(check_metric(&gate("max = 2.0"), &r).pass);
        assert!(check_metric(&gate("min = 2.0"), &r).pass);
        let v = check_metric(&gate("max = 1.5"), &r);
        assert!(!v.pass && v.note.contains("> max"), "{v:?}");
        let v = check_metric(&gate("min = 2.5"), &r);
        assert!(!v.pass && v.note.contains("< min"), "{v:?}");
        let mut failed = r.clone();
        failed.status = RunStatus::Failed;
        let v = check_metric(&gate("max = 3.0"), &failed);
        assert!(!v.pass && v.note.contains("did not complete"), "{v:?}");
        let mut skipped = r;
        skipped.status = RunStatus::Skipped;
        let v = check_metric(&gate("max = 3.0"), &skipped);
        assert!(!v.pass && v.note.contains("was skipped"), "{v:?}");
    }

    /// The counts split the metric gates into passed and failed.
    #[test]
    fn counts_split_passing_and_failing_gates() {
        let rep = super::tests_support::one_of_two_gates_failing();
        let c = rep.counts();
        assert_eq!((c.gates_passed, c.gates_failed), (1, 1), "{c:?}");
        assert_eq!(rep.source, "g.toml", "the report names its gates file");
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    fn gate(metric: &str, min: Option<f64>, max: Option<f64>) -> Gate {
        let names = |n: &str| Names::One(n.into());
        Gate { solver: names("*"), case: names("*"), metric: metric.into(), min, max, why: "w".into() }
    }

    fn check(
        solver: &str,
        case: &str,
        name: &str,
        measured: f64,
        outcome: Outcome,
        listed: Option<f64>,
    ) -> CheckVerdict {
        let entry = listed.map(|m| ExpectedFailure {
            solver: solver.into(),
            case: case.into(),
            check: name.into(),
            measured: m,
            reason: format!("{name} is known"),
            see: "README §7".into(),
        });
        let note = format!("error of {name}");
        CheckVerdict { solver: solver.into(), case: case.into(), check: name.into(), measured, outcome, note, entry }
    }

    fn failing(g: Gate, solver: &str, case: &str, value: Option<f64>, note: &str) -> Verdict {
        Verdict { gate: g, solver: solver.into(), case: case.into(), value, pass: false, note: note.into() }
    }

    /// A block of rows laid out by the rule the table promises: two spaces of indent, every column
    /// but the last as wide as its widest cell (header included, counted in characters) and
    /// followed by two spaces, the last column as it is, no trailing blanks.
    fn aligned(rows: &[[&str; 5]]) -> String {
        let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap();
        let mut starts = vec![2];
        for i in 0..4 {
            starts.push(starts[i] + width(i) + 2);
        }
        let mut out = String::new();
        for r in rows {
            let mut line: Vec<char> = vec![' '; starts[4]];
            for (i, cell) in r.iter().enumerate() {
                line.truncate(starts[i]);
                line.resize(starts[i], ' ');
                line.extend(cell.chars());
            }
            out += line.iter().collect::<String>().trim_end();
            out += "\n";
        }
        out
    }

    /// The number format: four decimals between 1e-3 (inclusive) and 1e4 (exclusive) and for
    /// zero, three significant decimals in scientific notation outside, `-` for no value.
    #[test]
    fn numbers_are_fixed_inside_one_thousandth_to_ten_thousand_and_scientific_outside() {
        let cases = [
            (0.0, "0.0000"),
            (-0.0, "-0.0000"),
            (1e-3, "0.0010"),
            (9.99e-4, "9.990e-4"),
            (-2e-5, "-2.000e-5"),
            (1.5, "1.5000"),
            (9999.0, "9999.0000"),
            (1e4, "1.000e4"),
            (-12340.0, "-1.234e4"),
            (f64::INFINITY, "inf"),
            (f64::NAN, "NaN"),
        ];
        for (x, text) in cases {
            assert_eq!(fmt(Some(x)), text, "{x}");
        }
        assert_eq!(fmt(None), "-");
    }

    /// Bounds read as the gate's inequality, in the table's number format.
    #[test]
    fn bounds_read_as_the_inequality() {
        assert_eq!(bounds(&gate("m", Some(1e-5), None)), ">= 1.000e-5");
        assert_eq!(bounds(&gate("m", None, Some(2.0))), "<= 2.0000");
        assert_eq!(bounds(&gate("m", Some(0.0), Some(3e4))), "in [0.0000, 3.000e4]");
        assert_eq!(bounds(&gate("m", None, None)), "-");
    }

    /// Columns: the widest cell of a column (header or row) sets its width; the last column is
    /// not padded.
    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        assert_eq!(columns(&["a", "bb"], &[["ccc".into(), "d".into()]]), "  a    bb\n  ccc  d\n");
        assert_eq!(columns(&["long", "x"], &[["s".into(), String::new()]]), "  long  x\n  s\n");
        // counted in characters, not bytes
        assert_eq!(columns(&["§§", "x"], &[["abc".into(), "y".into()]]), "  §§   x\n  abc  y\n");
        let rows = [["FAIL", "pgs", "slope-10-slip", "v", "why"], ["UNEXPECTED PASS", "sap", "a", "w", "x"]];
        let as_strings = rows.map(|r| r.map(String::from));
        let expected = aligned(&[["h1", "h2", "h3", "h4", "h5"], rows[0], rows[1]]);
        assert_eq!(columns(&["h1", "h2", "h3", "h4", "h5"], &as_strings), expected);
    }

    /// A report with nothing to say: its source, the counts, the verdict, and no section.
    #[test]
    fn a_passing_report_is_its_counts_and_its_verdict() {
        let rep = GateReport {
            source: "ci/gates.toml".into(),
            checks: vec![check("pgs", "a", "slides", 0.0, Outcome::Pass, None)],
            ..Default::default()
        };
        assert_eq!(rep.table(), format!("gates of ci/gates.toml\n{}\ngate: PASS\n", rep.count_lines()));
        assert!(rep.count_lines().starts_with("oracle checks: 1 passed, 0 expected failures"));
    }

    /// Every section in order, each from its own part of the report: failing checks and gates (an
    /// unexpected pass says so), errors (invalid records first), expected failures (only those,
    /// with the listed value beside today's) and the entries not in this directory.
    #[test]
    fn the_table_lays_out_every_section_from_the_report() {
        let rep = GateReport {
            source: "g.toml".into(),
            checks: vec![
                check("pgs", "a", "slides", 0.0, Outcome::Pass, None),
                check("nsn", "slope-10-slip", "acceleration", 2.5e-4, Outcome::UnexpectedFailure, None),
                check("sap", "a", "slides", 0.0, Outcome::UnexpectedPass, Some(1.0)),
                check("drumwright", "b", "acceleration", 0.229, Outcome::ExpectedFailure, Some(0.2)),
            ],
            gates: vec![
                failing(gate("unconverged_steps", None, Some(0.0)), "pgs", "a", Some(3.0), "3.0000 > max 0.0000"),
                failing(gate("metrics.x.max", Some(1.0), Some(2e4)), "sap", "b", None, "'metrics.x.max' not in"),
                Verdict { pass: true, ..failing(gate("m", None, Some(1.0)), "pgs", "b", Some(0.5), "") },
            ],
            errors: vec!["stale entry".into()],
            invalid: vec!["run/a__pgs.json: forged".into()],
            not_here: vec!["x".into(), "y".into()],
        };
        let failing_rows = aligned(&[
            ["result", "solver", "case", "value", "why it fails"],
            ["FAIL", "nsn", "slope-10-slip", "oracle.acceleration = 2.500e-4", "error of acceleration"],
            ["UNEXPECTED PASS", "sap", "a", "oracle.slides = 0.0000", "listed as expected failure; remove the entry"],
            ["FAIL", "pgs", "a", "unconverged_steps = 3.0000", "<= 0.0000: 3.0000 > max 0.0000"],
            ["FAIL", "sap", "b", "metrics.x.max = -", "in [1.0000, 2.000e4]: 'metrics.x.max' not in"],
        ]);
        let expected_rows = aligned(&[
            ["solver", "case", "check", "measured", "reason"],
            ["drumwright", "b", "acceleration", "0.2290 (listed 0.2000)", "acceleration is known (see README §7)"],
        ]);
        let want = format!(
            "gates of g.toml\n{}\nfailing:\n{failing_rows}\nerrors:\n  run/a__pgs.json: forged\n  stale entry\n\
             \nexpected failures:\n{expected_rows}\n2 entr(ies) of g.toml name pairs that are not in this run \
             directory (not checked here)\n\ngate: FAIL\n",
            rep.count_lines()
        );
        assert_eq!(rep.table(), want);
        let counts = Counts {
            checks_passed: 1,
            expected_failures: 1,
            unexpected_failures: 1,
            unexpected_passes: 1,
            gates_passed: 1,
            gates_failed: 2,
            errors: 2,
        };
        assert_eq!(rep.counts(), counts);
        assert_eq!(
            rep.count_lines(),
            "oracle checks: 1 passed, 1 expected failures, 1 unexpected failures, 1 unexpected passes\n\
             metric gates: 1 passed, 2 failed; errors: 2\n"
        );
    }

    /// A gate error reads the same as a `String` (the command line's error) as it displays.
    #[test]
    fn a_gate_error_becomes_its_message() {
        let e = GateError::NoRecords { dir: PathBuf::from("runs/x") };
        assert_eq!(String::from(e), "runs/x: no run records (*.json) to gate");
    }

    /// The errors section appears for errors alone and for invalid records alone; a report whose
    /// only problem is an error fails.
    #[test]
    fn errors_and_invalid_records_each_open_the_errors_section() {
        let only = |errors: Vec<String>, invalid: Vec<String>| {
            GateReport { source: "g".into(), errors, invalid, ..Default::default() }.table()
        };
        let t = only(vec!["e1".into()], vec![]);
        assert!(t.ends_with("\nerrors:\n  e1\n\ngate: FAIL\n"), "{t}");
        let t = only(vec![], vec!["i1".into()]);
        assert!(t.ends_with("\nerrors:\n  i1\n\ngate: FAIL\n"), "{t}");
    }
}

#[cfg(test)]
mod tests_support {
    use super::*;
    use records::MetricStat;

    /// One gate (`natmap_rel_l2.max <= 1e-6` on every pair) over two pairs: pgs on `a` passes
    /// (1e-7), sap on `a` fails (1e-3).
    pub(super) fn one_of_two_gates_failing() -> GateReport {
        let records = vec![record("pgs", "a", 1e-7), record("sap", "a", 1e-3)];
        let g = parse(
            "[[gate]]\nsolver = \"*\"\ncase = \"*\"\nmetric = \"metrics.natmap_rel_l2.max\"\nmax = 1e-6\nwhy = \"w\"\n",
            "g.toml",
        )
        .unwrap();
        evaluate(&g, &records, Scope::Directory)
    }

    /// A record of `solver` on `case` at `run/CASE__SOLVER.json` with `natmap_rel_l2.max`.
    pub(super) fn record(solver: &str, case: &str, natmap_max: f64) -> (PathBuf, RunRecord) {
        let mut r = crate::test_records::record(case, solver, RunStatus::Ok, 0.0, &[]);
        r.summary.metrics.insert("natmap_rel_l2".into(), MetricStat { max: natmap_max, mean: 0.0, last: 0.0 });
        (PathBuf::from(format!("run/{case}__{solver}.json")), r)
    }
}
