//! Suites: a (case variant x solver) matrix, resolved and validated before anything runs, then
//! run pair by pair. Incompatible pairs are skipped with the reason; a failing pair (solver
//! error, non-finite result, even a panic) is recorded and the suite goes on.

use crate::accuracy::Accuracy;
use crate::case::{DecodedCase, PreparedCase, Scenario};
use crate::metrics;
use crate::params::{ParamError, Params};
use crate::registry::{Registry, SolverFactory};
use crate::resources;
use crate::stepper::{simulate_with, RunOptions, RunOutcome, StepDone};
use records::trajectory::Trajectory;
use records::{quantiles, CaseRecord, MeanMax, Provenance, RunRecord, RunStatus, SolverRecord, Summary};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One (case variant, solver) pair of a suite, before validation.
#[derive(Debug, Clone, PartialEq)]
pub struct PairSpec {
    /// Label of the case variant (file names and tables use it).
    pub label: String,
    /// Case registry name.
    pub case: String,
    /// Case parameter overrides, applied in order.
    pub case_set: Vec<(String, Override)>,
    /// Solver registry name.
    pub solver: String,
    /// Solver parameter overrides.
    pub solver_set: Vec<(String, Override)>,
}

/// A parameter override: text from the command line (typed after the parameter's default), or
/// a value already typed by a suite file (checked against the default's type, never re-parsed).
#[derive(Debug, Clone, PartialEq)]
pub enum Override {
    /// `--set key=text`.
    Text(String),
    /// A suite file's typed value.
    Typed(serde_json::Value),
}

impl Override {
    /// Applies the override to `params`.
    pub fn apply(&self, params: &mut Params, key: &str, owner: &str) -> Result<(), ParamError> {
        match self {
            Override::Text(raw) => params.set(key, raw, owner),
            Override::Typed(v) => params.set_value(key, v, owner),
        }
    }
}

/// A named list of pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Suite name.
    pub name: String,
    /// The pairs, in run order.
    pub pairs: Vec<PairSpec>,
    /// The equal-accuracy mode's accuracy (suite key `accuracy`, `signorini run --accuracy`;
    /// `None`: each solver stops on its own criterion). See [`crate::accuracy`].
    pub accuracy: Option<f64>,
}

/// Default bound on the number of pairs of one suite (`signorini run --max-pairs`): every pair is
/// resolved and prepared (its scene built once per distinct case parameters) before the first one
/// runs, so the bound caps the memory of that phase.
pub const DEFAULT_MAX_PAIRS: usize = 100_000;

/// The TOML form of a suite file (see `ci/quick.toml`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: Option<String>,
    /// Solvers to run every case with (default: all registered).
    solvers: Option<Vec<String>>,
    /// Per-solver setting overrides.
    #[serde(default)]
    solver_settings: BTreeMap<String, Params>,
    /// Case variants.
    #[serde(default)]
    case: Vec<CaseEntry>,
    /// Sweeps: grids over case parameters and solver settings.
    #[serde(default)]
    grid: Vec<GridEntry>,
    /// The equal-accuracy mode's accuracy ([`Suite::accuracy`]).
    accuracy: Option<f64>,
}

/// A sweep of a suite file: every combination of the values of `params` (case parameters, or
/// `solver.KEY` settings), on one case, with each of its solvers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GridEntry {
    /// Case registry name.
    case: String,
    /// Label prefix of the expanded variants (default: the case name).
    label: Option<String>,
    /// Solver or solvers (default: the suite's `solvers`).
    solver: Option<OneOrMany>,
    /// Case overrides shared by every point of the grid.
    #[serde(default)]
    set: Params,
    /// `KEY = [values]`: `KEY` or `case.KEY` for a case parameter, `solver.KEY` for a setting.
    params: BTreeMap<String, Vec<serde_json::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// A grid value as it appears in labels: numbers in decimal notation unless the scientific one
/// is shorter by two characters or more (`0.01`, `0.005`, `1e-4`, `1e6`), strings and booleans as
/// they are.
fn label_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => {
                let (plain, sci) = (format!("{x}"), format!("{x:e}"));
                if sci.len() + 1 < plain.len() {
                    sci
                } else {
                    plain
                }
            }
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

impl GridEntry {
    /// The number of points of the grid (the product of its value counts, saturating), computed
    /// without expanding it; with the product as text (`100 x 100 x 3`).
    fn point_count(&self) -> (u64, String) {
        let n = self.params.values().fold(1u64, |n, v| n.saturating_mul(v.len() as u64));
        let text = self.params.values().map(|v| v.len().to_string()).collect::<Vec<_>>().join(" x ");
        (n, text)
    }

    /// The grid's points as `(label, case overrides, solver overrides)`, in row-major order over
    /// the keys (sorted), the last key varying fastest.
    fn points(&self, source: &str) -> Result<Vec<GridPoint>, SuiteFileError> {
        let prefix = self.label.clone().unwrap_or_else(|| self.case.clone());
        let bad = |problem| SuiteFileError::Grid { source_name: source.to_string(), case: self.case.clone(), problem };
        if self.params.is_empty() {
            return Err(bad(GridProblem::NoParams));
        }
        let mut points = vec![GridPoint { label: prefix, case_set: typed(&self.set), solver_set: vec![] }];
        // `KEY` and `case.KEY` name one case parameter: both in one grid would label each point
        // with one value and run the other
        let mut names: BTreeMap<(bool, &str), &str> = BTreeMap::new();
        for key in self.params.keys() {
            let name = match key.split_once('.') {
                Some(("solver", k)) => (true, k),
                Some(("case", k)) => (false, k),
                _ => (false, key.as_str()),
            };
            if let Some(first) = names.insert(name, key) {
                return Err(bad(GridProblem::SameParameter { first: first.to_string(), second: key.clone() }));
            }
        }
        for (key, values) in &self.params {
            if values.is_empty() {
                return Err(bad(GridProblem::NoValues { key: key.clone() }));
            }
            let (is_solver, k) = match key.split_once('.') {
                Some(("solver", k)) => (true, k),
                Some(("case", k)) => (false, k),
                _ => (false, key.as_str()),
            };
            let mut next = Vec::with_capacity(points.len() * values.len());
            for p in &points {
                for v in values {
                    let mut q = p.clone();
                    q.label = format!("{}-{k}{}", q.label, label_value(v));
                    let target = if is_solver { &mut q.solver_set } else { &mut q.case_set };
                    target.push((k.to_string(), Override::Typed(v.clone())));
                    next.push(q);
                }
            }
            points = next;
        }
        Ok(points)
    }
}

/// One point of a grid.
#[derive(Debug, Clone)]
struct GridPoint {
    label: String,
    case_set: Vec<(String, Override)>,
    solver_set: Vec<(String, Override)>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    name: String,
    label: Option<String>,
    #[serde(default)]
    set: Params,
    /// Solver or solvers of this entry only (default: the suite's `solvers`), e.g. a default
    /// case kept in a quick suite for the one solver that fails it (an expected failure).
    solver: Option<OneOrMany>,
}

impl OneOrMany {
    /// The solvers an entry runs: its own list (checked against the registry, narrowed by
    /// `--solver`) or, without one, the suite's.
    fn resolve(
        own: Option<&OneOrMany>,
        suite: &[String],
        narrowed_by: Option<&[String]>,
        reg: &Registry,
        source: &str,
    ) -> Result<Vec<String>, SuiteFileError> {
        let Some(own) = own else { return Ok(suite.to_vec()) };
        let own = match own {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        };
        for s in &own {
            reg.find_solver(s).map_err(unknown(source))?;
        }
        Ok(own.into_iter().filter(|s| narrowed_by.is_none_or(|o| o.contains(s))).collect())
    }
}

/// Why a suite file could not be read into a [`Suite`] ([`Suite::from_toml`] and its variants):
/// one line starting with the file's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SuiteFileError {
    /// Not TOML, or a key or type the suite format does not have.
    #[error("{source_name}: {why}")]
    Toml {
        /// The file.
        source_name: String,
        /// The parser's message, one line.
        why: String,
    },
    /// An unknown case or solver name.
    #[error("{source_name}: {error}")]
    Unknown {
        /// The file.
        source_name: String,
        /// The name and the known ones.
        error: crate::registry::UnknownName,
    },
    /// Neither `[[case]]` nor `[[grid]]` entries.
    #[error("{source_name}: no [[case]] or [[grid]] entries")]
    Empty {
        /// The file.
        source_name: String,
    },
    /// More pairs than the bound ([`Suite::from_toml_limited`]).
    #[error(
        "{source_name}: {} pairs{}, more than --max-pairs {max_pairs}; split the suite or raise --max-pairs",
        if *count == u64::MAX { format!("more than {}", u64::MAX) } else { count.to_string() },
        largest.as_ref().map(|why| format!(" (largest: {why})")).unwrap_or_default()
    )]
    TooManyPairs {
        /// The file.
        source_name: String,
        /// The number of pairs (saturating: `u64::MAX` means more than that).
        count: u64,
        /// The grid that makes most pairs: `[[grid]] 'LABEL': 100 x 100 values x 2 solvers`.
        largest: Option<String>,
        /// The bound.
        max_pairs: usize,
    },
    /// A malformed `[[grid]]`.
    #[error(
        "{source_name}: [[grid]] on '{case}'{}{problem}",
        if *problem == GridProblem::NoParams { " " } else { ": " }
    )]
    Grid {
        /// The file.
        source_name: String,
        /// The grid's case.
        case: String,
        /// What is wrong.
        problem: GridProblem,
    },
}

/// What is wrong with a `[[grid]]` of a suite file ([`SuiteFileError::Grid`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GridProblem {
    /// No `[grid.params]`.
    #[error("has no [grid.params]")]
    NoParams,
    /// `KEY` and `case.KEY` (or `solver.KEY` twice) name one parameter.
    #[error("{first} and {second} are the same parameter; give it once")]
    SameParameter {
        /// The first spelling.
        first: String,
        /// The second.
        second: String,
    },
    /// A key with an empty list of values.
    #[error("{key} has no values")]
    NoValues {
        /// The key.
        key: String,
    },
}

impl From<SuiteFileError> for String {
    fn from(e: SuiteFileError) -> String {
        e.to_string()
    }
}

/// The [`SuiteFileError::Unknown`] of the file `source`.
fn unknown(source: &str) -> impl FnOnce(crate::registry::UnknownName) -> SuiteFileError + '_ {
    move |error| SuiteFileError::Unknown { source_name: source.to_string(), error }
}

/// Why command-line options do not apply to a suite ([`Suite::apply_overrides`],
/// [`Suite::select_cases`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    /// A `--set` key that no pair has.
    #[error("--set {key}={value}: no {owner} in this run has a parameter '{param}'")]
    UnusedOverride {
        /// The key as given (`solver.KEY`, `case.KEY` or `KEY`).
        key: String,
        /// The value as given.
        value: String,
        /// `solver` or `case`.
        owner: &'static str,
        /// The key without its prefix.
        param: String,
    },
    /// A `--case` that names no pair of the suite.
    #[error("--case {case}: no case of suite '{suite}' has this name or label (known: {})", known.join(", "))]
    UnknownCase {
        /// The name given.
        case: String,
        /// The suite.
        suite: String,
        /// The suite's case labels, sorted.
        known: Vec<String>,
    },
}

impl From<SelectionError> for String {
    fn from(e: SelectionError) -> String {
        e.to_string()
    }
}

fn typed(p: &Params) -> Vec<(String, Override)> {
    p.0.iter().map(|(k, v)| (k.clone(), Override::Typed(v.clone()))).collect()
}

impl Suite {
    /// Every registered case with its defaults and then each of its variants
    /// ([`crate::CaseVariant`], label `NAME-SUFFIX`), times every registered solver.
    pub fn default_suite(reg: &Registry) -> Suite {
        let mut pairs = Vec::new();
        for c in &reg.cases {
            let variants = c.variants().iter().map(|v| (v.label(c.name()), typed(&v.params(c.name()))));
            for (label, case_set) in std::iter::once((c.name().to_string(), vec![])).chain(variants) {
                pairs.extend(reg.solvers.iter().map(|s| PairSpec {
                    label: label.clone(),
                    case: c.name().to_string(),
                    case_set: case_set.clone(),
                    solver: s.name.to_string(),
                    solver_set: vec![],
                }));
            }
        }
        Suite { name: "default".into(), pairs, accuracy: None }
    }

    /// One case with one solver.
    pub fn single(case: &str, solver: &str) -> Suite {
        Suite {
            name: format!("{case}-{solver}"),
            pairs: vec![PairSpec {
                label: case.into(),
                case: case.into(),
                case_set: vec![],
                solver: solver.into(),
                solver_set: vec![],
            }],
            accuracy: None,
        }
    }

    /// Parses a suite file. `source` names it in errors.
    pub fn from_toml(text: &str, source: &str, reg: &Registry) -> Result<Suite, SuiteFileError> {
        Self::from_toml_with_solvers(text, source, reg, None)
    }

    /// Parses a suite file, running its cases with `solvers` instead of the file's `solvers` list
    /// when given (`signorini run --suite FILE --solver NAME`: a new solver on a suite's cases;
    /// the file's `[solver_settings.NAME]` still apply). At most [`DEFAULT_MAX_PAIRS`] pairs.
    pub fn from_toml_with_solvers(
        text: &str,
        source: &str,
        reg: &Registry,
        solvers_override: Option<&[String]>,
    ) -> Result<Suite, SuiteFileError> {
        Self::from_toml_limited(text, source, reg, solvers_override, DEFAULT_MAX_PAIRS)
    }

    /// [`Suite::from_toml_with_solvers`] with a bound on the number of pairs
    /// (`signorini run --max-pairs`): the count (each `[[case]]` times its solvers, each
    /// `[[grid]]`'s product of value counts times its solvers, saturating) is computed from the
    /// file before any grid is expanded, and a suite above `max_pairs` is refused with the count
    /// and the grid that makes it, in constant time and memory (a 10^10-point grid is never
    /// materialised).
    pub fn from_toml_limited(
        text: &str,
        source: &str,
        reg: &Registry,
        solvers_override: Option<&[String]>,
        max_pairs: usize,
    ) -> Result<Suite, SuiteFileError> {
        let f: SuiteFile = toml::from_str(text).map_err(|e| SuiteFileError::Toml {
            source_name: source.to_string(),
            why: crate::params::toml_message(&e),
        })?;
        let solvers: Vec<String> = match solvers_override {
            Some(names) => names.to_vec(),
            None => f.solvers.unwrap_or_else(|| reg.solvers.iter().map(|s| s.name.to_string()).collect()),
        };
        for s in solvers.iter().chain(f.solver_settings.keys()) {
            reg.find_solver(s).map_err(unknown(source))?;
        }
        if f.case.is_empty() && f.grid.is_empty() {
            return Err(SuiteFileError::Empty { source_name: source.to_string() });
        }
        if let Some(eps) = f.accuracy {
            crate::accuracy::check_eps(eps)
                .map_err(|e| SuiteFileError::Toml { source_name: source.to_string(), why: e.to_string() })?;
        }
        let settings = |s: &str| f.solver_settings.get(s).map(typed).unwrap_or_default();
        // The pair count, before anything is expanded.
        let mut case_solvers = Vec::with_capacity(f.case.len());
        let mut count = 0u64;
        for c in &f.case {
            reg.find_case(&c.name).map_err(unknown(source))?;
            let s = OneOrMany::resolve(c.solver.as_ref(), &solvers, solvers_override, reg, source)?;
            count = count.saturating_add(s.len() as u64);
            case_solvers.push(s);
        }
        let mut grid_solvers = Vec::with_capacity(f.grid.len());
        let mut largest: Option<(u64, String)> = None;
        for g in &f.grid {
            reg.find_case(&g.case).map_err(unknown(source))?;
            // `--solver` narrows a grid's own list.
            let s = OneOrMany::resolve(g.solver.as_ref(), &solvers, solvers_override, reg, source)?;
            let (points, product) = g.point_count();
            let n = points.saturating_mul(s.len() as u64);
            count = count.saturating_add(n);
            if largest.as_ref().is_none_or(|(m, _)| n > *m) {
                let prefix = g.label.as_deref().unwrap_or(&g.case);
                largest = Some((n, format!("[[grid]] '{prefix}': {product} values x {} solvers", s.len())));
            }
            grid_solvers.push(s);
        }
        if count > max_pairs as u64 {
            return Err(SuiteFileError::TooManyPairs {
                source_name: source.to_string(),
                count,
                largest: largest.map(|(_, why)| why),
                max_pairs,
            });
        }
        let mut pairs = Vec::with_capacity(count as usize);
        for (c, solvers) in f.case.iter().zip(&case_solvers) {
            for s in solvers {
                pairs.push(PairSpec {
                    label: c.label.clone().unwrap_or_else(|| c.name.clone()),
                    case: c.name.clone(),
                    case_set: typed(&c.set),
                    solver: s.clone(),
                    solver_set: settings(s),
                });
            }
        }
        for (g, grid_solvers) in f.grid.iter().zip(&grid_solvers) {
            for point in g.points(source)? {
                for s in grid_solvers {
                    let mut solver_set = settings(s);
                    solver_set.extend(point.solver_set.iter().cloned());
                    pairs.push(PairSpec {
                        label: point.label.clone(),
                        case: g.case.clone(),
                        case_set: point.case_set.clone(),
                        solver: s.clone(),
                        solver_set,
                    });
                }
            }
        }
        Ok(Suite { name: f.name.unwrap_or_else(|| source.to_string()), pairs, accuracy: f.accuracy })
    }

    /// Applies command-line overrides to every pair. `solver.KEY=V` goes to the pairs whose
    /// solver has `KEY`; `KEY=V` or `case.KEY=V` to the pairs whose case has `KEY`. A key that no
    /// pair accepts is an error.
    pub fn apply_overrides(&mut self, reg: &Registry, sets: &[(String, String)]) -> Result<(), SelectionError> {
        for (key, value) in sets {
            let (is_solver, k) = match key.split_once('.') {
                Some(("solver", k)) => (true, k),
                Some(("case", k)) => (false, k),
                _ => (false, key.as_str()),
            };
            let mut used = false;
            for p in &mut self.pairs {
                let has = if is_solver {
                    reg.find_solver(&p.solver).map(|s| (s.defaults)().contains(k)).unwrap_or(false)
                } else {
                    reg.find_case(&p.case).map(|c| c.defaults().contains(k)).unwrap_or(false)
                };
                if has {
                    used = true;
                    let target = if is_solver { &mut p.solver_set } else { &mut p.case_set };
                    target.push((k.to_string(), Override::Text(value.clone())));
                }
            }
            if !used {
                return Err(SelectionError::UnusedOverride {
                    key: key.clone(),
                    value: value.clone(),
                    owner: if is_solver { "solver" } else { "case" },
                    param: k.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Keeps the pairs whose case (registry name or label) is in `cases`, when given. Every name
    /// must select at least one pair.
    pub fn select_cases(&mut self, cases: &[String]) -> Result<(), SelectionError> {
        if cases.is_empty() {
            return Ok(());
        }
        for c in cases {
            if !self.pairs.iter().any(|p| &p.case == c || &p.label == c) {
                let known: std::collections::BTreeSet<&str> = self.pairs.iter().map(|p| p.label.as_str()).collect();
                return Err(SelectionError::UnknownCase {
                    case: c.clone(),
                    suite: self.name.clone(),
                    known: known.into_iter().map(String::from).collect(),
                });
            }
        }
        self.pairs.retain(|p| cases.iter().any(|c| &p.case == c || &p.label == c));
        Ok(())
    }
}

/// Why a suite could not be resolved ([`Suite::resolve`]) or prepared ([`prepare_with`]): each
/// variant names the pair (case label, solver) and the offending value.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// A case label that cannot name a record file.
    #[error("suite '{suite}': case label {label:?} {why}")]
    Label {
        /// The suite.
        suite: String,
        /// The label.
        label: String,
        /// Why it cannot name a file.
        why: String,
    },
    /// An unknown case or solver name.
    #[error(transparent)]
    Unknown(#[from] crate::registry::UnknownName),
    /// An unknown key or invalid value among a pair's case or solver parameters.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A case's parameters do not decode, or its scene is invalid.
    #[error("case '{case}' ({label}): {error}")]
    Case {
        /// The case.
        case: String,
        /// The variant's label.
        label: String,
        /// What is wrong.
        error: String,
    },
    /// Two pairs would write the same record file.
    #[error(
        "suite '{suite}': pairs {first} ({first_pair}) and {second} ({second_pair}) would write the same record \
         {record}; give them different labels"
    )]
    SameRecord {
        /// The suite.
        suite: String,
        /// Index of the first pair.
        first: usize,
        /// Its `label / solver`.
        first_pair: String,
        /// Index of the second pair.
        second: usize,
        /// Its `label / solver`.
        second_pair: String,
        /// The record file name.
        record: String,
    },
    /// A pair's memory estimate is over the limit (the message names what to reduce;
    /// [`resources::ResourceError::OverMemory`]).
    #[error(transparent)]
    Memory(resources::ResourceError),
    /// A pair's record would be larger than its readers accept, even without iteration logs
    /// ([`resources::RecordShape::fit`]).
    #[error("{pair}: {error}")]
    Record {
        /// The pair: `case 'C' (LABEL) with SOLVER`.
        pair: String,
        /// Why ([`resources::ResourceError::RecordTooLarge`]).
        error: resources::ResourceError,
    },
}

impl From<SuiteError> for String {
    fn from(e: SuiteError) -> String {
        e.to_string()
    }
}

/// One pair of a suite, resolved once ([`Suite::resolve`]): names looked up, parameters decoded
/// and validated, hashes and the record name computed. Everything after resolution (sharding,
/// shard manifests, gate pins, resume, preparation, the run and its record) reads these fields
/// and looks nothing up again.
pub struct ResolvedPair {
    /// Position of the pair in its suite (shard `I` of `N` runs the pairs with `index % N == I`).
    pub index: usize,
    /// The spec it came from.
    pub spec: PairSpec,
    /// The case with its decoded parameters (shared by the pairs of one case variant).
    pub case: Arc<dyn DecodedCase>,
    /// Full case parameters, decoded (as stored in the run record).
    pub case_params: Params,
    /// Full solver settings (defaults with the pair's overrides).
    pub solver_params: Params,
    /// Hash of the solver's default settings (a record of other settings carries the settings
    /// hash in its file name).
    pub solver_defaults_hash: String,
    /// The paper the solver implements ([`api::SolverDef::PAPER`]).
    pub paper: &'static str,
    /// What the solver supports.
    pub capabilities: api::Capabilities,
    /// The solver's working-memory estimate ([`api::SolverDef::working_memory`]).
    pub working_memory: fn(&Params, &api::ProblemSize) -> f64,
    /// The solver's outer iteration budget in these settings ([`api::SolverDef::BUDGET`]; `None`
    /// when it is not a whole number), which bounds the rows of its iteration logs.
    pub iteration_budget: Option<usize>,
    /// Makes the solver from the settings decoded and validated here.
    pub solver: SolverFactory,
    /// The file name of its run record ([`records::record_file_name`]).
    pub record_name: String,
    /// The equal-accuracy mode of the pair (`None`: off).
    pub accuracy: Option<Accuracy>,
}

impl Suite {
    /// Resolves every pair once: unknown names, labels that cannot name a file, unknown or invalid
    /// parameters and two pairs that would write the same record are refused here, before any
    /// scene is built. A case variant's parameters are decoded once for all its solvers.
    pub fn resolve(&self, reg: &Registry) -> Result<Vec<ResolvedPair>, SuiteError> {
        let mut decoded: BTreeMap<String, Arc<dyn DecodedCase>> = BTreeMap::new();
        let mut seen: BTreeMap<String, (usize, String)> = BTreeMap::new();
        let mut out = Vec::with_capacity(self.pairs.len());
        for (index, spec) in self.pairs.iter().enumerate() {
            if let Some(why) = records::input::label_error(&spec.label) {
                return Err(SuiteError::Label { suite: self.name.clone(), label: spec.label.clone(), why });
            }
            let case = reg.find_case(&spec.case)?;
            let solver = reg.find_solver(&spec.solver)?;
            let mut cp = case.defaults();
            for (k, v) in &spec.case_set {
                v.apply(&mut cp, k, &format!("case '{}'", spec.case))?;
            }
            let key = format!("{}:{}", spec.case, cp.hash());
            let dc = match decoded.get(&key) {
                Some(dc) => Arc::clone(dc),
                None => {
                    let dc: Arc<dyn DecodedCase> = Arc::from(case.decode(&cp).map_err(|e| SuiteError::Case {
                        case: spec.case.clone(),
                        label: spec.label.clone(),
                        error: e.to_string(),
                    })?);
                    decoded.insert(key, Arc::clone(&dc));
                    dc
                }
            };
            let mut sp = (solver.defaults)();
            for (k, v) in &spec.solver_set {
                v.apply(&mut sp, k, &format!("solver '{}'", spec.solver))?;
            }
            // the mode sets the solver's own tolerance last: the harness decides when it stops
            let accuracy = self.accuracy.map(|eps| Accuracy::for_solver(eps, solver, &sp)).transpose()?;
            if let Some(a) = &accuracy {
                a.apply(solver, &mut sp)?;
            }
            let factory = (solver.prepare)(&sp)?;
            let solver_defaults_hash = (solver.defaults)().hash();
            let record_name = records::record_file_name(&spec.label, &spec.solver, &sp.hash(), &solver_defaults_hash);
            // Compared in lower case: `a__pgs.json` and `A__pgs.json` are one file on the
            // case-insensitive file systems of macOS and Windows.
            if let Some((j, earlier)) = seen.get(&record_name.to_lowercase()) {
                let q = &self.pairs[*j];
                let record = if *earlier == record_name {
                    record_name
                } else {
                    format!("{earlier} / {record_name} (equal ignoring letter case: one file on macOS and Windows)")
                };
                return Err(SuiteError::SameRecord {
                    suite: self.name.clone(),
                    first: *j,
                    first_pair: format!("{} / {}", q.label, q.solver),
                    second: index,
                    second_pair: format!("{} / {}", spec.label, spec.solver),
                    record,
                });
            }
            seen.insert(record_name.to_lowercase(), (index, record_name.clone()));
            let iteration_budget = sp.0.get(solver.budget).and_then(|v| v.as_u64()).map(|b| b as usize);
            out.push(ResolvedPair {
                index,
                spec: spec.clone(),
                case_params: dc.params_json(),
                case: dc,
                solver_params: sp,
                solver_defaults_hash,
                paper: solver.paper,
                capabilities: solver.capabilities,
                working_memory: solver.working_memory,
                iteration_budget,
                solver: factory,
                record_name,
                accuracy,
            });
        }
        Ok(out)
    }
}

/// Keeps the pairs of shard `shard` of `n`: those whose index in the suite is `shard` modulo `n`
/// (deterministic slicing for clusters).
pub fn shard(pairs: Vec<ResolvedPair>, shard: usize, n: usize) -> Vec<ResolvedPair> {
    pairs.into_iter().filter(|p| p.index % n == shard).collect()
}

/// A resolved pair with its scene built, its memory checked and its capabilities matched.
pub struct PreparedPair {
    /// Position of the pair in its suite.
    pub index: usize,
    /// The spec it came from.
    pub spec: PairSpec,
    /// The paper the solver implements.
    pub paper: &'static str,
    /// Hash of the solver's default settings.
    pub solver_defaults_hash: String,
    /// Full case parameters (the decoded ones, as stored in the run record).
    pub case_params: Params,
    /// The case with its decoded parameters and scene; grades the run.
    pub case: Arc<dyn PreparedCase>,
    /// Full solver parameters.
    pub solver_params: Params,
    /// Makes the solver from the settings decoded and validated by [`prepare`].
    pub solver: SolverFactory,
    /// The built scene (a copy of `case.scenario()` for the run).
    pub scenario: Scenario,
    /// Why the pair will be skipped (missing capabilities), if it will.
    pub skip: Option<String>,
    /// The file name of its run record ([`RunRecord::file_name`]).
    pub record_name: String,
    /// The most steps whose iteration logs its record can keep and stay below the record
    /// readers' input limit ([`resources::RecordShape::fit`]); [`run_pair`] keeps the logs of at
    /// most this many steps whatever `RunOptions::logged_steps` asks.
    pub max_logged_steps: usize,
    /// The equal-accuracy mode of the pair (`None`: off); [`run_pair`] runs it so, whatever
    /// `RunOptions::accuracy` says.
    pub accuracy: Option<Accuracy>,
}

/// Resolves `suite` ([`Suite::resolve`]) and prepares its pairs under the machine's available
/// memory ([`prepare_with`]).
pub fn prepare(reg: &Registry, suite: &Suite) -> Result<Vec<PreparedPair>, SuiteError> {
    prepare_with(suite.resolve(reg)?, resources::default_limit())
}

/// [`prepare_run`] for runs with the default [`RunOptions`] and records below the readers' input
/// limit ([`records::input::text_limit`]).
pub fn prepare_with(pairs: Vec<ResolvedPair>, memory_limit: f64) -> Result<Vec<PreparedPair>, SuiteError> {
    prepare_run(pairs, memory_limit, &RunOptions::default(), records::input::text_limit() as f64)
}

/// One line saying which pairs keep fewer logged steps than `requested`
/// (`--logged-steps`) so that their records stay readable ([`PreparedPair::max_logged_steps`]),
/// or `None` when every pair keeps what was asked.
pub fn thinning_note(pairs: &[PreparedPair], requested: usize) -> Option<String> {
    let thinned: Vec<&PreparedPair> =
        pairs.iter().filter(|p| p.skip.is_none() && requested.min(p.scenario.steps) > p.max_logged_steps).collect();
    let first = thinned.first()?;
    let kept = thinned.iter().map(|p| p.max_logged_steps);
    let (lo, hi) = (kept.clone().min().unwrap_or(0), kept.max().unwrap_or(0));
    let kept = if lo == hi { format!("{lo}") } else { format!("{lo} to {hi}") };
    let which = if thinned.len() == 1 {
        format!("{} / {}", first.spec.label, first.spec.solver)
    } else {
        format!("{} pairs (first {} / {})", thinned.len(), first.spec.label, first.spec.solver)
    };
    Some(format!(
        "note: --logged-steps {requested}: {which} keep the iteration logs of {kept} steps, so that each record \
         stays below the {}-byte limit of the record readers ({})",
        records::input::text_limit(),
        records::input::LIMIT_VAR
    ))
}

/// Builds each resolved pair's scene (once per distinct case parameters), validates it and checks
/// the memory the pair needs against `memory_limit` (bytes; `signorini run --max-memory`): a pair
/// whose estimate ([`crate::resources`]) exceeds it is refused, before its scene is built when the
/// case can tell its size from its parameters. A pair whose solver lacks what the scene needs is
/// kept, marked to be skipped with the reason.
///
/// Each pair's record is sized before the run ([`resources::RecordShape`]: the step records
/// `opts` keeps and the logs of the logged steps at their largest): the logged steps are thinned
/// so that the record stays below `max_record_bytes` (the readers' input limit), and a pair whose
/// step records alone exceed it is refused. The memory estimate counts the logs and the record.
pub fn prepare_run(
    pairs: Vec<ResolvedPair>,
    memory_limit: f64,
    opts: &RunOptions,
    max_record_bytes: f64,
) -> Result<Vec<PreparedPair>, SuiteError> {
    let mut out = Vec::with_capacity(pairs.len());
    let mut built: BTreeMap<String, Arc<dyn PreparedCase>> = BTreeMap::new();
    for r in pairs {
        let spec = &r.spec;
        let key = format!("{}:{}", spec.case, r.case_params.hash());
        let what = format!("case '{}' ({})", spec.case, spec.label);
        let hint = r.case.size_hint();
        if !built.contains_key(&key) {
            if let Some(size) = &hint {
                resources::scene_estimate(size).check(memory_limit, &what).map_err(SuiteError::Memory)?;
            }
            let invalid = |e: String| SuiteError::Case { case: spec.case.clone(), label: spec.label.clone(), error: e };
            let pc = r.case.build().map_err(|e| invalid(e.to_string()))?;
            pc.scenario().world.validate().map_err(|e| invalid(e.to_string()))?;
            built.insert(key.clone(), Arc::from(pc));
        }
        let prepared_case = Arc::clone(&built[&key]);
        let scenario = prepared_case.scenario().clone();
        let missing = r.capabilities.missing(&scenario.needs);
        let skip = (!missing.is_empty()).then(|| format!("{} does not support {}", spec.solver, missing.join(", ")));
        let mut max_logged_steps = opts.logged_steps;
        if skip.is_none() {
            let steps = scenario.steps;
            let widest = resources::RecordShape::new(steps, opts.max_recorded_steps, steps, r.iteration_budget);
            let room = widest
                .fit(max_record_bytes)
                .map_err(|error| SuiteError::Record { pair: format!("{what} with {}", spec.solver), error })?
                .logged_steps;
            max_logged_steps = room;
            let record = resources::RecordShape { logged_steps: opts.logged_steps.min(room), ..widest };
            let driver = match &hint {
                Some(h) => format!("duration (steps = duration / dt = {}) or {}", scenario.steps, h.driver),
                None => format!("duration (steps = duration / dt = {}) or the scene's size", scenario.steps),
            };
            let size = scenario.problem_size(&driver);
            resources::run_estimate(&size, (r.working_memory)(&r.solver_params, &size), &record)
                .check(memory_limit, &format!("{what} with {}", spec.solver))
                .map_err(SuiteError::Memory)?;
        }
        out.push(PreparedPair {
            index: r.index,
            spec: r.spec,
            paper: r.paper,
            solver_defaults_hash: r.solver_defaults_hash,
            case_params: r.case_params,
            case: prepared_case,
            solver_params: r.solver_params,
            solver: r.solver,
            scenario,
            skip,
            record_name: r.record_name,
            max_logged_steps,
            accuracy: r.accuracy,
        });
    }
    Ok(out)
}

/// The oracle checks each pair's case grades, by name, in the order of `pairs`: what a completed
/// record of the pair must carry (`signorini gate` refuses a record whose checks were dropped).
/// Each distinct case variant's scene is built once, after the memory check of [`prepare_run`],
/// and graded on an empty trace: a trace that is not a whole run grades to the same checks,
/// unmeasured ([`crate::CaseDef::grade`]).
pub fn oracle_checks(pairs: &[ResolvedPair], memory_limit: f64) -> Result<Vec<Vec<String>>, SuiteError> {
    let mut by_case: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut out = Vec::with_capacity(pairs.len());
    for r in pairs {
        let spec = &r.spec;
        let key = format!("{}:{}", spec.case, r.case_params.hash());
        if !by_case.contains_key(&key) {
            if let Some(size) = r.case.size_hint() {
                let what = format!("case '{}' ({})", spec.case, spec.label);
                resources::scene_estimate(&size).check(memory_limit, &what).map_err(SuiteError::Memory)?;
            }
            let pc = r.case.build().map_err(|e| SuiteError::Case {
                case: spec.case.clone(),
                label: spec.label.clone(),
                error: e.to_string(),
            })?;
            let mut names: Vec<String> = pc.grade(&crate::case::Trace::default()).into_iter().map(|c| c.name).collect();
            names.sort();
            names.dedup();
            by_case.insert(key.clone(), names);
        }
        out.push(by_case[&key].clone());
    }
    Ok(out)
}

/// Receives progress events (the CLI draws a bar; tests ignore them).
pub trait Progress {
    /// A pair starts, with its number of steps.
    fn pair_started(&self, _pair: &PreparedPair) {}
    /// One step completed.
    fn step(&self, _done: &StepDone) {}
    /// A pair finished.
    fn pair_finished(&self, _record: &RunRecord) {}
}

/// Ignores progress.
pub struct NoProgress;
impl Progress for NoProgress {}

/// Runs one prepared pair and builds its record. Never panics: a panic inside the solver is
/// caught and recorded as a failure.
pub fn run_pair(pair: &PreparedPair, opts: RunOptions, provenance: &Provenance, progress: &dyn Progress) -> RunRecord {
    run_pair_traced(pair, opts, provenance, progress).0
}

/// [`run_pair`], also returning the trajectory the run recorded (`None` when
/// [`RunOptions::trajectory`] is off or the pair did not run).
pub fn run_pair_traced(
    pair: &PreparedPair,
    opts: RunOptions,
    provenance: &Provenance,
    progress: &dyn Progress,
) -> (RunRecord, Option<Trajectory>) {
    let spec = &pair.spec;
    let mut record = RunRecord::new(
        provenance.clone(),
        CaseRecord::new(&spec.case, &spec.label, pair.case_params.clone()),
        SolverRecord::new(&spec.solver, pair.solver_params.clone(), pair.paper, pair.solver_defaults_hash.clone()),
    );
    record.reason = pair.skip.clone();
    if pair.skip.is_some() {
        return (record, None);
    }
    progress.pair_started(pair);
    let opts =
        RunOptions { logged_steps: opts.logged_steps.min(pair.max_logged_steps), accuracy: pair.accuracy, ..opts };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut solver = (pair.solver)(&opts.solver_context());
        Ok::<RunOutcome, String>(simulate_with(&pair.scenario, solver.as_mut(), opts.clone(), &mut |d| {
            progress.step(d)
        }))
    }));
    let outcome = match result {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            record.status = RunStatus::Failed;
            record.reason = Some(e);
            return (record, None);
        }
        Err(panic) => {
            record.status = RunStatus::Failed;
            record.reason =
                Some(format!("panicked outside the solver: {}", crate::stepper::panic_message(panic.as_ref())));
            return (record, None);
        }
    };
    record.summary = summarize(&outcome, &pair.scenario);
    record.summary.accuracy = pair
        .accuracy
        .map(|a| records::AccuracySummary::of(a.eps, &a.measure.name(), a.own_tolerance(), &outcome.accuracy));
    if outcome.trace.completed {
        for check in pair.case.grade(&outcome.trace) {
            record.summary.oracle.insert(check.name.clone(), check);
        }
        record.status = RunStatus::Ok;
    } else {
        record.status = RunStatus::Failed;
        record.reason = outcome.failure.clone();
    }
    let trajectory =
        outcome.trajectory.map(|t| Trajectory { case: spec.label.clone(), solver: spec.solver.clone(), ..t });
    record.steps = outcome.steps;
    record.step_stride = outcome.step_stride;
    record.iterations =
        outcome.iteration_logs.into_iter().map(|(step, log)| records::IterationRecord { step, log }).collect();
    (record, trajectory)
}

fn summarize(o: &RunOutcome, scenario: &Scenario) -> Summary {
    let mut s = Summary {
        steps: o.trace.metrics.len(),
        failures: usize::from(o.failure.is_some()),
        wall_per_step_s: quantiles(&o.solve_times),
        stage_times: o.stage_times,
        solver_stages_s: o.solver_stages.clone(),
        ..Default::default()
    };
    let iters: Vec<f64> = o.iterations.iter().map(|&i| i as f64).collect();
    if !iters.is_empty() {
        s.iterations_per_step = MeanMax {
            mean: iters.iter().sum::<f64>() / iters.len() as f64,
            max: iters.iter().copied().fold(0.0, f64::max),
        };
    }
    s.unconverged_steps = o.unconverged;
    s.metrics = records::summarize_metrics(&o.trace.metrics, |_| true);
    s.momentum_drift = metrics::momentum::drift(&scenario.world, &o.trace);
    s
}

/// Why [`run_one`] did not run its pair.
#[derive(Debug, thiserror::Error)]
pub enum RunOneError {
    /// The pair could not be resolved or prepared: an unknown name or parameter, an invalid value.
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// The runner would skip the pair: the solver lacks a capability the case needs.
    #[error("{case} / {solver} would be skipped: {why}")]
    Skipped {
        /// The case.
        case: String,
        /// The solver.
        solver: String,
        /// What is missing (`pgs does not support deformable bodies`).
        why: String,
    },
}

impl From<RunOneError> for String {
    fn from(e: RunOneError) -> String {
        e.to_string()
    }
}

/// Why a run record could not be written into the output directory ([`run_suite`],
/// [`PairResult::path`]).
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", dir.display())]
pub struct RecordWriteError {
    /// The output directory.
    pub dir: PathBuf,
    /// The error.
    pub source: std::io::Error,
}

/// Runs one (case, solver) pair with `--set`-style overrides, as
/// `signorini run --case C --solver S --set ...` does, and returns its record without writing it.
/// `Err` says what the CLI would print: an unknown name or parameter, an invalid value, or a pair
/// the runner would skip (with the missing capability). The record's own status says whether the
/// run completed.
pub fn run_one(
    reg: &Registry,
    case: &str,
    case_set: &[(&str, &str)],
    solver: &str,
    solver_set: &[(&str, &str)],
) -> Result<RunRecord, RunOneError> {
    let owned =
        |sets: &[(&str, &str)]| sets.iter().map(|(k, v)| (k.to_string(), Override::Text(v.to_string()))).collect();
    let suite = Suite {
        name: format!("{case}-{solver}"),
        pairs: vec![PairSpec {
            label: case.into(),
            case: case.into(),
            case_set: owned(case_set),
            solver: solver.into(),
            solver_set: owned(solver_set),
        }],
        accuracy: None,
    };
    let pair = prepare(reg, &suite)?.remove(0);
    if let Some(why) = &pair.skip {
        return Err(RunOneError::Skipped { case: case.to_string(), solver: solver.to_string(), why: why.clone() });
    }
    Ok(run_pair(&pair, RunOptions::default(), &Provenance::collect(), &NoProgress))
}

/// Runs every prepared pair, writing each record atomically into `out_dir` as soon as it is
/// done. Returns the records with their paths; a record that could not be written is returned
/// with the I/O error in place of a path.
pub fn run_suite(
    pairs: &[PreparedPair],
    out_dir: &Path,
    opts: RunOptions,
    progress: &dyn Progress,
) -> Vec<(RunRecord, Result<PathBuf, RecordWriteError>)> {
    run_suite_resuming(pairs, out_dir, opts, progress, Resume::Off).into_iter().map(|r| (r.record, r.path)).collect()
}

/// Which records already in the output directory a run reuses instead of running their pair
/// again (`signorini run --resume`, `--resume-any-commit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Resume {
    /// Run every pair.
    #[default]
    Off,
    /// Reuse a record written by this very code: same commit (a clean checkout: a `-dirty` or
    /// unknown commit is never the same), same version, backend, case and solver parameters.
    SameCommit,
    /// As [`Resume::SameCommit`], but a record of another commit is reused too.
    AnyCommit,
}

/// Why `existing` (the record found under a pair's file name) cannot stand for a run of `pair`
/// by the code described by `current`, or `None` when it can.
pub fn reuse_refusal(
    existing: &RunRecord,
    pair: &PreparedPair,
    current: &Provenance,
    resume: Resume,
) -> Option<String> {
    let (old, spec) = (&existing.provenance, &pair.spec);
    if resume == Resume::SameCommit {
        let clean = |c: &str| c != "unknown" && !c.ends_with("-dirty");
        if !clean(&current.commit) {
            return Some(format!(
                "this build's commit is '{}' (uncommitted changes or no git): only --resume-any-commit reuses records",
                current.commit
            ));
        }
        if old.commit != current.commit {
            return Some(format!(
                "written by commit {}, this is {} (--resume-any-commit reuses it)",
                old.commit, current.commit
            ));
        }
    }
    let checks = [
        ("version", old.version.as_str(), current.version.as_str()),
        ("backend", old.backend.as_str(), current.backend.as_str()),
        ("case", existing.case.name.as_str(), spec.case.as_str()),
        ("label", existing.case.label.as_str(), spec.label.as_str()),
        ("solver", existing.solver.name.as_str(), spec.solver.as_str()),
    ];
    if let Some((what, a, b)) = checks.into_iter().find(|(_, a, b)| a != b) {
        return Some(format!("{what} '{a}' differs from '{b}'"));
    }
    if existing.case.params != pair.case_params {
        return Some("case parameters differ".into());
    }
    if existing.solver.params != pair.solver_params {
        return Some("solver settings differ".into());
    }
    let (old_eps, eps) = (existing.summary.accuracy.as_ref().map(|a| a.eps), pair.accuracy.map(|a| a.eps));
    if old_eps != eps {
        let mode = |e: Option<f64>| e.map_or("the default mode".to_string(), |e| format!("accuracy {e:e}"));
        return Some(format!("run in {}, this run is in {}", mode(old_eps), mode(eps)));
    }
    None
}

/// Why running `pairs` into `out_dir` would silently replace a record of another run, or `None`:
/// a record already under a pair's file name (or, on a case-insensitive file system, under a name
/// differing only in letter case) that belongs to another case, label or solver, is a reference
/// engine's grade, or holds the same pair run with other case parameters (case parameters, unlike
/// solver settings, are not part of the file name). The message names the file and both case
/// parameter hashes. Unreadable files (a truncated record) are not considered: a run replaces
/// them, as before. `signorini run` refuses such a run unless `--overwrite` or `--resume` is given.
pub fn overwrite_refusal(pairs: &[PreparedPair], out_dir: &Path) -> Option<String> {
    pairs.iter().find_map(|p| {
        let path = out_dir.join(&p.record_name);
        if !path.is_file() {
            return None;
        }
        let old = RunRecord::read(&path).ok()?;
        let (spec, hash) = (&p.spec, p.case_params.hash());
        let why = if old.is_reference() {
            format!("holds the reference engine '{}' graded on '{}'", old.solver.name, old.case.label)
        } else if old.case.label != spec.label || old.solver.name != spec.solver {
            format!("holds the record of {} / {}", old.case.label, old.solver.name)
        } else if old.case.name != spec.case {
            format!("holds label '{}' of case '{}', not of '{}'", old.case.label, old.case.name, spec.case)
        } else if old.case.params_hash != hash {
            "holds this pair run with other case parameters".to_string()
        } else {
            return None;
        };
        Some(format!(
            "{}: {why} (case parameters {}, this run's {hash}); refusing to replace it: pass --overwrite, \
             --resume, or another --out",
            path.display(),
            old.case.params_hash
        ))
    })
}

/// Writes `record` into `out_dir` atomically, its trajectory sidecar first
/// ([`records::trajectory::sidecar_name`]) so that a record never names motion that is not there;
/// without a trajectory, a sidecar left by an earlier run of the same file name is removed.
pub fn write_with_sidecar(
    record: &RunRecord,
    trajectory: Option<&Trajectory>,
    out_dir: &Path,
) -> std::io::Result<PathBuf> {
    let sidecar = out_dir.join(records::trajectory::sidecar_name(&record.file_name()));
    match trajectory {
        Some(t) => t.write_atomic(&sidecar).map_err(std::io::Error::other)?,
        None => match std::fs::remove_file(&sidecar) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        },
    }
    record.write_atomic(out_dir)
}

/// The outcome of one pair of [`run_suite_resuming`].
pub struct PairResult {
    /// The pair's record (read back from `out_dir` when reused).
    pub record: RunRecord,
    /// Where it was written, or why it could not be.
    pub path: Result<PathBuf, RecordWriteError>,
    /// Whether an existing record was reused instead of running the pair.
    pub reused: bool,
    /// Why a record found under the pair's file name was not reused (and the pair ran).
    pub not_reused: Option<String>,
}

/// [`run_suite`], reusing the records already in `out_dir` that `resume` accepts
/// ([`reuse_refusal`]); a record that is missing, unreadable (a truncated file, not a run record)
/// or refused is run again and overwritten.
pub fn run_suite_resuming(
    pairs: &[PreparedPair],
    out_dir: &Path,
    opts: RunOptions,
    progress: &dyn Progress,
    resume: Resume,
) -> Vec<PairResult> {
    let provenance = Provenance { backend: opts.backend_label(), ..Provenance::collect() };
    pairs
        .iter()
        .map(|p| {
            let path = out_dir.join(&p.record_name);
            let mut not_reused = None;
            if resume != Resume::Off && path.is_file() {
                match RunRecord::read(&path) {
                    Ok(old) => match reuse_refusal(&old, p, &provenance, resume) {
                        None => return PairResult { record: old, path: Ok(path), reused: true, not_reused: None },
                        Some(why) => not_reused = Some(why),
                    },
                    Err(e) => not_reused = Some(e.to_string()),
                }
            }
            let (r, trajectory) = run_pair_traced(p, opts.clone(), &provenance, progress);
            progress.pair_finished(&r);
            let path = write_with_sidecar(&r, trajectory.as_ref(), out_dir)
                .map_err(|source| RecordWriteError { dir: out_dir.to_path_buf(), source });
            PairResult { record: r, path, reused: false, not_reused }
        })
        .collect()
}
