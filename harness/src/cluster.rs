//! Running a suite on a cluster: deterministic shards (`signorini run --shard I/N`) and merging
//! the run directories they write (`signorini merge OUT DIR...`).
//!
//! A suite of `P` pairs is cut into `N` shards; shard `I` runs pairs `i` with `i % N == I`
//! ([`crate::runner::Suite::shard`]), so every pair runs in exactly one shard, whatever `N` is.
//!
//! Merging follows the rule of Siconos' `faf` campaign (whose `collect` step refuses results run
//! with different precisions or timeouts): every record of a merge must come from one code
//! version (`provenance.commit` and `provenance.version`), and two records of the same pair (same
//! file name `<case label>__<solver>.json`) must have the same case and solver parameters (the
//! solver's tolerances are among them). A refused merge writes nothing. Otherwise every record is
//! copied byte for byte into the output directory, atomically (temporary file + rename), with its
//! trajectory sidecar ([`records::trajectory`], copied first, as a run writes it; a stale sidecar
//! of a record that comes without one is removed); a pair found twice with equal parameters keeps
//! its first occurrence and that occurrence's sidecar (the output directory's own records first,
//! then the inputs in command-line order).
//!
//! A shard also writes a [`Manifest`] into its output directory before running anything
//! (`shard-I-of-N.manifest`): the suite's name, `I/N`, the record file names of the whole suite in
//! suite order and, for each pair, its case and the hash of its resolved case parameters (a record
//! name carries the label and the solver settings, not the case parameters). When the inputs of a
//! merge hold manifests, they must agree (one suite, one shard count, the same pairs with the same
//! case parameters), every record must hold the case parameters its manifest lists for it, and the
//! merge knows the expected set: it refuses, with one line naming the missing shards and pairs,
//! unless every pair of the suite has a record; [`merge_partial`] merges what exists and returns
//! the missing pairs.

use records::input::InputError;
use records::trajectory::{sidecar_name, sidecar_path};
use records::{write_atomic, RecordError, RunRecord};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The schema tag of the shard manifests written now.
pub const MANIFEST_SCHEMA: &str = "signorini.shard/2";

/// The schema tag of the manifests of earlier versions (no [`Manifest::cases`]): still read.
pub const MANIFEST_SCHEMA_V1: &str = "signorini.shard/1";

/// What shard `shard` of `shards` of a suite is part of: written by `signorini run --shard` into
/// its output directory, read by [`merge`] to know which records make the whole suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_SCHEMA`] ([`MANIFEST_SCHEMA_V1`] in a manifest of an earlier version).
    pub schema: String,
    /// Suite name.
    pub suite: String,
    /// This shard's index `I` (0-based).
    pub shard: usize,
    /// Number of shards `N`.
    pub shards: usize,
    /// Record file names of every pair of the suite, in suite order: pair `k` belongs to shard
    /// `k mod N`.
    pub pairs: Vec<String>,
    /// For each entry of `pairs`, its case and the hash of its resolved case parameters,
    /// `NAME:HASH` ([`case_key`]): two suites that differ only in a case parameter write the same
    /// record names, and differ here. Empty in a [`MANIFEST_SCHEMA_V1`] manifest.
    #[serde(default)]
    pub cases: Vec<String>,
}

/// A pair's case identity in a manifest: `NAME:HASH`, the case name and the hash of its resolved
/// parameters ([`crate::params::Params::hash`], the `case.params_hash` of its run record).
pub fn case_key(case: &str, params_hash: &str) -> String {
    format!("{case}:{params_hash}")
}

impl Manifest {
    /// The manifest of shard `shard` of `shards` of a suite whose resolved pairs are `pairs` (the
    /// whole suite, in suite order).
    pub fn new(suite: &str, shard: usize, shards: usize, pairs: &[crate::runner::ResolvedPair]) -> Self {
        Manifest {
            schema: MANIFEST_SCHEMA.into(),
            suite: suite.into(),
            shard,
            shards,
            pairs: pairs.iter().map(|p| p.record_name.clone()).collect(),
            cases: pairs.iter().map(|p| case_key(&p.spec.case, &p.case_params.hash())).collect(),
        }
    }

    /// Its file name inside the shard's directory: `shard-I-of-N.manifest`.
    pub fn file_name(&self) -> String {
        format!("shard-{}-of-{}.manifest", self.shard, self.shards)
    }

    /// Writes it into `dir` atomically; returns the path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ClusterError> {
        let path = dir.join(self.file_name());
        let text = serde_json::to_string_pretty(self).map_err(ClusterError::Serialize)?;
        write_atomic(&path, text.as_bytes()).map_err(io(&path))?;
        Ok(path)
    }

    /// Reads a manifest through the bounded reader ([`records::input::read_text`]): a link to
    /// `/dev/zero`, a FIFO or a file above the input limit is refused in one line, never read.
    pub fn read(path: &Path) -> Result<Manifest, ClusterError> {
        let text = records::input::read_text(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a manifest's text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Manifest, ClusterError> {
        let m: Manifest = serde_json::from_str(text)
            .map_err(|error| ClusterError::NotAManifest { file: source.to_string(), source: error })?;
        let cases_ok = match m.schema.as_str() {
            MANIFEST_SCHEMA => m.cases.len() == m.pairs.len(),
            MANIFEST_SCHEMA_V1 => m.cases.is_empty(),
            _ => false,
        };
        if !cases_ok || m.shards == 0 || m.shard >= m.shards {
            return Err(ClusterError::InvalidManifest { file: source.to_string() });
        }
        Ok(m)
    }
}

/// Why a shard manifest could not be written or read, or why a merge was refused: one line
/// naming the files (both files of a conflict) and what differs.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A file could not be written, or a directory created or listed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A manifest could not be serialised.
    #[error(transparent)]
    Serialize(serde_json::Error),
    /// A file of an input could not be read ([`InputError`]).
    #[error(transparent)]
    Input(#[from] InputError),
    /// A `*.json` file of an input is not a run record ([`RecordError`]).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A `*.manifest` file is not a shard manifest.
    #[error("{file}: not a shard manifest: {source}")]
    NotAManifest {
        /// The file (what [`Manifest::parse`] was told the text is).
        file: String,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// A manifest of an unknown schema, whose case list does not match its schema and pair
    /// list, or whose shard index is not below its shard count.
    #[error("{file}: not a valid {MANIFEST_SCHEMA} manifest")]
    InvalidManifest {
        /// The file (what [`Manifest::parse`] was told the text is).
        file: String,
    },
    /// Two manifests of the inputs do not describe one sharded suite.
    #[error("refusing to merge {} and {}: {difference}", first.display(), second.display())]
    ManifestsDiffer {
        /// The first manifest read.
        first: PathBuf,
        /// The manifest that differs from it.
        second: PathBuf,
        /// How.
        difference: Box<ManifestDifference>,
    },
    /// A record's case parameters are not those its suite's manifest lists for it.
    #[error(transparent)]
    RecordCase(Box<RecordCaseMismatch>),
    /// No input directory.
    #[error("merge: no input directory given")]
    NoInputs,
    /// The output directory is one of the inputs.
    #[error(
        "refusing to merge into {}: it is the input {}; give a new output directory",
        out.display(),
        input.display()
    )]
    OutputIsInput {
        /// The output directory.
        out: PathBuf,
        /// The input it is (as given).
        input: PathBuf,
    },
    /// An input is not a directory.
    #[error("{}: not a directory", path.display())]
    NotADirectory {
        /// The input.
        path: PathBuf,
    },
    /// Pairs of a sharded suite have no record ([`merge`]; [`merge_partial`] merges then).
    #[error("refusing to merge: {0} (merge --partial merges what exists)")]
    Missing(Missing),
    /// Two records of different code versions.
    #[error(
        "refusing to merge {} and {}: different code versions ({difference})",
        first.display(),
        second.display()
    )]
    CodeVersions {
        /// The first record of the merge.
        first: PathBuf,
        /// A record of another version.
        second: PathBuf,
        /// The differing field ([`RecordConflict::Commit`] or [`RecordConflict::Version`]).
        difference: Box<RecordConflict>,
    },
    /// Two records of the same pair with different parameters.
    #[error(
        "refusing to merge {} and {}: same pair ({label} / {solver}) with different {difference}",
        first.display(),
        second.display()
    )]
    SamePair {
        /// The record kept so far.
        first: PathBuf,
        /// The other record of its pair.
        second: PathBuf,
        /// The pair's case label.
        label: String,
        /// The pair's solver.
        solver: String,
        /// The first differing field.
        difference: Box<RecordConflict>,
    },
}

impl From<ClusterError> for String {
    fn from(e: ClusterError) -> String {
        e.to_string()
    }
}

/// The `Io` error at `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ClusterError + '_ {
    move |source| ClusterError::Io { path: path.to_path_buf(), source }
}

/// How two manifests of a merge's inputs differ.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestDifference {
    /// They are of different suites.
    #[error("shards of different suites ('{first}' vs '{second}')")]
    Suites {
        /// The first manifest's suite.
        first: String,
        /// The other's.
        second: String,
    },
    /// They cut the suite into different numbers of shards.
    #[error("different shard counts ({first} vs {second})")]
    ShardCounts {
        /// The first manifest's count.
        first: usize,
        /// The other's.
        second: usize,
    },
    /// A pair writes different record names (a record name carries the solver settings' hash,
    /// so shards run with different settings differ there).
    #[error(
        "shards run with different settings: pair {pair} of the suite writes {first} in one and {second} in the \
         other (a record name carries the label and the solver settings' hash)"
    )]
    Settings {
        /// The pair's index in the suite.
        pair: usize,
        /// Its record name in the first manifest.
        first: String,
        /// In the other.
        second: String,
    },
    /// Their pair lists have different lengths (and agree where both have a pair).
    #[error("shards of suites of {first} and {second} pairs")]
    PairCounts {
        /// Pairs of the first manifest.
        first: usize,
        /// Of the other.
        second: usize,
    },
    /// They are of different manifest schemas ([`MANIFEST_SCHEMA`], [`MANIFEST_SCHEMA_V1`]).
    #[error("manifests of different versions ({first} vs {second}): run every shard with one signorini")]
    Versions {
        /// The first manifest's schema.
        first: String,
        /// The other's.
        second: String,
    },
    /// The same pairs with different case parameters: a pair's case or case-parameter hash
    /// differs (a record name does not carry the case parameters).
    #[error(
        "shards run with different case parameters: pair {pair} of the suite ({record}) {}{}; a record name does \
         not carry the case parameters",
        cases_runs(first, second),
        detail.as_ref().map_or(String::new(), |d| format!(" ({d})"))
    )]
    CaseParameters {
        /// The pair's index in the suite.
        pair: usize,
        /// Its record name.
        record: String,
        /// Its case in the first manifest, `NAME:HASH` ([`case_key`]).
        first: String,
        /// In the other.
        second: String,
        /// The first differing case field, when a record of the merge holds each of the two.
        detail: Option<Box<RecordConflict>>,
    },
}

/// How two case identities `NAME:HASH` of one pair differ, as [`ManifestDifference::CaseParameters`]
/// says it.
fn cases_runs(x: &str, y: &str) -> String {
    let split = |k: &str| k.rsplit_once(':').map_or((k.to_string(), String::new()), |(c, h)| (c.into(), h.into()));
    let ((cx, hx), (cy, hy)) = (split(x), split(y));
    if cx == cy {
        format!("runs case {cx} with parameters of hash {hx} in one and {hy} in the other")
    } else {
        format!("runs case {cx} in one and case {cy} in the other")
    }
}

/// A record of a merge whose case parameters are not those its suite's manifest lists for it: a
/// shard's directory that received a record of another run of the pair.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "refusing to merge: {} runs case {have}, but the manifest {} of suite '{suite}' lists {want} for {name} (case \
     NAME:HASH of its parameters): was it run again with other case parameters?",
    record.display(),
    manifest.display()
)]
pub struct RecordCaseMismatch {
    /// The record.
    pub record: PathBuf,
    /// The manifest beside it (else the first manifest of the merge).
    pub manifest: PathBuf,
    /// The manifest's suite.
    pub suite: String,
    /// The record's name.
    pub name: String,
    /// The record's case, `NAME:HASH` ([`case_key`]).
    pub have: String,
    /// The case the manifest lists for it.
    pub want: String,
}

/// The first field on which two records of a merge cannot agree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordConflict {
    /// Different commits (any two records).
    #[error("provenance.commit: '{first}' vs '{second}'")]
    Commit {
        /// The first record's.
        first: String,
        /// The other's.
        second: String,
    },
    /// Different versions (any two records).
    #[error("provenance.version: '{first}' vs '{second}'")]
    Version {
        /// The first record's.
        first: String,
        /// The other's.
        second: String,
    },
    /// The same record name for different cases.
    #[error("case.name: '{first}' vs '{second}'")]
    CaseName {
        /// The first record's.
        first: String,
        /// The other's.
        second: String,
    },
    /// The same pair with a different case or solver parameter.
    #[error("{owner}.params.{key}: {} vs {}", show_param(first), show_param(second))]
    Param {
        /// `case` or `solver`.
        owner: &'static str,
        /// The parameter.
        key: String,
        /// The first record's value (`None`: absent).
        first: Option<serde_json::Value>,
        /// The other's.
        second: Option<serde_json::Value>,
    },
}

impl RecordConflict {
    /// Whether the records are of different code versions (commit or version).
    pub fn is_code_version(&self) -> bool {
        matches!(self, RecordConflict::Commit { .. } | RecordConflict::Version { .. })
    }
}

/// A parameter value as a conflict shows it: its JSON, or `(absent)`.
fn show_param(v: &Option<serde_json::Value>) -> String {
    v.as_ref().map_or("(absent)".to_string(), |v| v.to_string())
}

fn manifest_files(dir: &Path) -> Result<Vec<PathBuf>, ClusterError> {
    let rd = std::fs::read_dir(dir).map_err(io(dir))?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "manifest"))
        .collect();
    files.sort();
    Ok(files)
}

/// The shards and pairs a merge lacks, from the manifests of its inputs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Missing {
    /// Suite name of the manifests (empty: the inputs held no manifest).
    pub suite: String,
    /// Number of shards `N` of the manifests.
    pub shard_count: usize,
    /// Number of pairs of the suite.
    pub pair_count: usize,
    /// Shards of which no manifest was found (never started, or their directory not given).
    pub shards: Vec<usize>,
    /// Record names of the suite found in no input.
    pub pairs: Vec<String>,
    /// Input directories that hold no shard manifest (a shard's manifest removed, or a directory
    /// that is not a shard).
    pub inputs_without_manifest: Vec<String>,
}

impl Missing {
    /// Nothing is missing.
    pub fn is_empty(&self) -> bool {
        self.shards.is_empty() && self.pairs.is_empty()
    }
}

impl std::fmt::Display for Missing {
    /// One line: `2 of 10 pairs of suite 'S' missing (no manifest of shard 3/4: ...): a.json, b.json`,
    /// or, when every pair has a record but a shard's manifest is absent, `no manifest of shard 1/2
    /// of suite 'S' in the inputs (none in: DIR); ...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shards: Vec<String> = self.shards.iter().map(|i| format!("{i}/{}", self.shard_count)).collect();
        let without = if self.inputs_without_manifest.is_empty() {
            "its directory not given".to_string()
        } else {
            format!("no manifest in {}", self.inputs_without_manifest.join(", "))
        };
        if self.pairs.is_empty() {
            return write!(
                f,
                "no manifest of shard {} of suite '{}' ({without}), though all {} pairs have a record: was a \
                 manifest removed, or a shard run again without --shard?",
                shards.join(", "),
                self.suite,
                self.pair_count
            );
        }
        write!(f, "{} of {} pairs of suite '{}' missing", self.pairs.len(), self.pair_count, self.suite)?;
        if !shards.is_empty() {
            write!(f, " (no manifest of shard {}: never started or not given; {without})", shards.join(", "))?;
        }
        write!(f, ": {}", self.pairs.join(", "))
    }
}

/// The inputs' manifests, checked to agree: one suite, one shard count, the same pairs with the
/// same case parameters. Returns the first one with its path and the shards found, or `None`
/// when no input holds a manifest. `found` (the records of the merge) names the differing case
/// parameter when two manifests list other case parameters for one pair.
fn manifests(
    inputs: &[PathBuf],
    found: &[Found],
) -> Result<Option<(PathBuf, Manifest, BTreeSet<usize>)>, ClusterError> {
    let mut first: Option<(PathBuf, Manifest)> = None;
    let mut shards = BTreeSet::new();
    for dir in inputs {
        for path in manifest_files(dir)? {
            let m = Manifest::read(&path)?;
            if let Some((p0, m0)) = &first {
                let difference = if m0.suite != m.suite {
                    Some(ManifestDifference::Suites { first: m0.suite.clone(), second: m.suite.clone() })
                } else if m0.shards != m.shards {
                    Some(ManifestDifference::ShardCounts { first: m0.shards, second: m.shards })
                } else if m0.pairs != m.pairs {
                    Some(pairs_difference(&m0.pairs, &m.pairs))
                } else if m0.schema != m.schema {
                    Some(ManifestDifference::Versions { first: m0.schema.clone(), second: m.schema.clone() })
                } else {
                    cases_difference(m0, &m, found)
                };
                if let Some(difference) = difference {
                    return Err(ClusterError::ManifestsDiffer {
                        first: p0.clone(),
                        second: path,
                        difference: Box::new(difference),
                    });
                }
            }
            shards.insert(m.shard);
            if first.is_none() {
                first = Some((path, m));
            }
        }
    }
    Ok(first.map(|(p, m)| (p, m, shards)))
}

/// What `present` (the record names the merge would hold) lacks of the suite of manifest `m`,
/// of which the shards `shards` were found.
fn missing(
    inputs: &[PathBuf],
    m: &Manifest,
    shards: &BTreeSet<usize>,
    present: &BTreeSet<String>,
) -> Result<Missing, ClusterError> {
    let mut without = vec![];
    for dir in inputs {
        if manifest_files(dir)?.is_empty() {
            without.push(dir.display().to_string());
        }
    }
    Ok(Missing {
        suite: m.suite.clone(),
        shard_count: m.shards,
        pair_count: m.pairs.len(),
        shards: (0..m.shards).filter(|i| !shards.contains(i)).collect(),
        pairs: m.pairs.iter().filter(|p| !present.contains(*p)).cloned().collect(),
        inputs_without_manifest: without,
    })
}

/// A record's case identity, as a manifest lists it ([`case_key`]).
fn record_case(r: &RunRecord) -> String {
    case_key(&r.case.name, &r.case.params_hash)
}

/// How the pair lists of two manifests of one suite differ: the first pair whose record names
/// differ (a record name carries the solver settings' hash, so shards run with different settings
/// differ there), or the lengths.
fn pairs_difference(a: &[String], b: &[String]) -> ManifestDifference {
    match a.iter().zip(b).enumerate().find(|(_, (x, y))| x != y) {
        Some((pair, (x, y))) => ManifestDifference::Settings { pair, first: x.clone(), second: y.clone() },
        None => ManifestDifference::PairCounts { first: a.len(), second: b.len() },
    }
}

/// A `--shard` that is not `I/N` with `0 <= I < N` ([`parse_shard`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--shard '{text}': {problem}")]
pub struct ShardError {
    /// The text given.
    pub text: String,
    /// What is wrong with it.
    pub problem: ShardProblem,
}

/// What is wrong with a `--shard` ([`ShardError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ShardProblem {
    /// No `/`.
    #[error("expected I/N, e.g. 0/4")]
    NotIOfN,
    /// `I` is not a non-negative integer.
    #[error("I must be a non-negative integer")]
    BadIndex,
    /// `N` is not a non-negative integer.
    #[error("N must be a positive integer")]
    BadCount,
    /// `N` is 0.
    #[error("N must be at least 1")]
    ZeroCount,
    /// `I >= N`.
    #[error("I must be in 0..{count} (shards are numbered from 0)")]
    IndexOutOfRange {
        /// `N`.
        count: usize,
    },
}

impl From<ShardError> for String {
    fn from(e: ShardError) -> String {
        e.to_string()
    }
}

/// How the case parameters of two manifests with the same pairs differ, if they do: the first
/// pair whose case or case-parameter hash differs, with the first differing parameter when a
/// record of the merge holds each of the two (the pairs of one case variant share its parameters,
/// so another solver's record of the variant usually does).
fn cases_difference(a: &Manifest, b: &Manifest, found: &[Found]) -> Option<ManifestDifference> {
    let (pair, (x, y)) = a.cases.iter().zip(&b.cases).enumerate().find(|(_, (x, y))| x != y)?;
    let with = |key: &str| found.iter().find(|f| record_case(&f.record) == key).map(|f| &f.record);
    let detail = match (with(x), with(y)) {
        (Some(rx), Some(ry)) if rx.case.name != ry.case.name => {
            Some(RecordConflict::CaseName { first: rx.case.name.clone(), second: ry.case.name.clone() })
        }
        (Some(rx), Some(ry)) => params_diff("case", &rx.case.params, &ry.case.params),
        _ => None,
    };
    Some(ManifestDifference::CaseParameters {
        pair,
        record: a.pairs[pair].clone(),
        first: x.clone(),
        second: y.clone(),
        detail: detail.map(Box::new),
    })
}

/// Refuses a record whose case parameters are not those its suite's manifest `m` (at `path`)
/// lists for it: a shard's directory that received a record of another run of the pair. The
/// error names the manifest beside the record when there is one.
fn records_match_manifest(path: &Path, m: &Manifest, found: &[Found]) -> Result<(), ClusterError> {
    if m.cases.is_empty() {
        return Ok(());
    }
    let listed: BTreeMap<&str, &str> =
        m.pairs.iter().map(String::as_str).zip(m.cases.iter().map(String::as_str)).collect();
    for f in found {
        let name = f.record.file_name();
        let Some(&want) = listed.get(name.as_str()) else { continue };
        let have = record_case(&f.record);
        if have != want {
            // the manifest beside the record when there is one (they all agree)
            let beside = f.path.parent().and_then(|d| manifest_files(d).ok()?.into_iter().next());
            return Err(ClusterError::RecordCase(Box::new(RecordCaseMismatch {
                record: f.path.clone(),
                manifest: beside.unwrap_or_else(|| path.to_path_buf()),
                suite: m.suite.clone(),
                name,
                have,
                want: want.to_string(),
            })));
        }
    }
    Ok(())
}

/// Parses `I/N` (0 <= I < N, N >= 1).
pub fn parse_shard(text: &str) -> Result<(usize, usize), ShardError> {
    let bad = |problem| ShardError { text: text.to_string(), problem };
    let (i, n) = text.split_once('/').ok_or_else(|| bad(ShardProblem::NotIOfN))?;
    let i: usize = i.trim().parse().map_err(|_| bad(ShardProblem::BadIndex))?;
    let n: usize = n.trim().parse().map_err(|_| bad(ShardProblem::BadCount))?;
    if n == 0 {
        return Err(bad(ShardProblem::ZeroCount));
    }
    if i >= n {
        return Err(bad(ShardProblem::IndexOutOfRange { count: n }));
    }
    Ok((i, n))
}

/// What a merge did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergeReport {
    /// Records written into the output directory (paths there).
    pub written: Vec<PathBuf>,
    /// Records already in the output directory and kept.
    pub kept: usize,
    /// `(skipped file, file kept instead)`: the same pair with equal parameters found twice.
    pub duplicates: Vec<(PathBuf, PathBuf)>,
    /// What the inputs' shard manifests expect and no input holds (empty unless
    /// [`merge_partial`]: [`merge`] refuses then).
    pub missing: Missing,
}

/// One record found by a merge.
struct Found {
    path: PathBuf,
    bytes: Vec<u8>,
    record: RunRecord,
    in_out_dir: bool,
}

fn json_files(dir: &Path) -> Result<Vec<PathBuf>, ClusterError> {
    Ok(records::input::json_files(dir)?)
}

fn read_found(path: &Path, in_out_dir: bool) -> Result<Found, ClusterError> {
    let record = RunRecord::read(path)?;
    let bytes = records::input::read_bytes(path, records::input::text_limit())?;
    Ok(Found { path: path.to_path_buf(), bytes, record, in_out_dir })
}

/// The first differing entry of two parameter sets.
fn params_diff(owner: &'static str, a: &crate::params::Params, b: &crate::params::Params) -> Option<RecordConflict> {
    let keys: std::collections::BTreeSet<&String> = a.0.keys().chain(b.0.keys()).collect();
    for k in keys {
        let (x, y) = (a.0.get(k), b.0.get(k));
        if x != y {
            return Some(RecordConflict::Param { owner, key: k.clone(), first: x.cloned(), second: y.cloned() });
        }
    }
    None
}

/// Why two records of a merge cannot live together, if they cannot: different code versions
/// (any two records), or, for the same pair, different parameters.
fn conflict(a: &Found, b: &Found) -> Option<RecordConflict> {
    let (ra, rb) = (&a.record, &b.record);
    if ra.provenance.commit != rb.provenance.commit {
        return Some(RecordConflict::Commit {
            first: ra.provenance.commit.clone(),
            second: rb.provenance.commit.clone(),
        });
    }
    if ra.provenance.version != rb.provenance.version {
        return Some(RecordConflict::Version {
            first: ra.provenance.version.clone(),
            second: rb.provenance.version.clone(),
        });
    }
    if ra.file_name() == rb.file_name() {
        if ra.case.name != rb.case.name {
            return Some(RecordConflict::CaseName { first: ra.case.name.clone(), second: rb.case.name.clone() });
        }
        if let Some(d) = params_diff("case", &ra.case.params, &rb.case.params) {
            return Some(d);
        }
        if let Some(d) = params_diff("solver", &ra.solver.params, &rb.solver.params) {
            return Some(d);
        }
    }
    None
}

/// Merges the run records of `inputs` into `out` (created if needed; records already there take
/// part in the checks and are kept). Checks everything before writing anything; the error names
/// both files and the differing field, or the shards and pairs missing from a sharded suite
/// (see [`Manifest`]).
pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<MergeReport, ClusterError> {
    merge_impl(out, inputs, false)
}

/// [`merge`], except that pairs missing from a sharded suite do not stop it: what exists is
/// merged and the missing shards and pairs are returned in [`MergeReport::missing`].
pub fn merge_partial(out: &Path, inputs: &[PathBuf]) -> Result<MergeReport, ClusterError> {
    merge_impl(out, inputs, true)
}

fn merge_impl(out: &Path, inputs: &[PathBuf], partial: bool) -> Result<MergeReport, ClusterError> {
    if inputs.is_empty() {
        return Err(ClusterError::NoInputs);
    }
    // Writing into one of the inputs would change an input while it is merged (and count its
    // records twice): refused, comparing resolved paths (`merge sh0 sh0 sh1`, `merge ./sh0 sh0`).
    if let Ok(o) = std::fs::canonicalize(out) {
        if let Some(dir) = inputs.iter().find(|d| std::fs::canonicalize(d).is_ok_and(|d| d == o)) {
            return Err(ClusterError::OutputIsInput { out: out.to_path_buf(), input: dir.clone() });
        }
    }
    let mut found: Vec<Found> = vec![];
    if out.is_dir() {
        for p in json_files(out)? {
            found.push(read_found(&p, true)?);
        }
    }
    for dir in inputs {
        if !dir.is_dir() {
            return Err(ClusterError::NotADirectory { path: dir.clone() });
        }
        // An empty directory is fine: a shard of a suite with fewer pairs than shards is empty.
        for p in json_files(dir)? {
            found.push(read_found(&p, false)?);
        }
    }
    let mut report = MergeReport::default();
    let present: BTreeSet<String> = found.iter().map(|f| f.record.file_name()).collect();
    if let Some((path, m, shards)) = manifests(inputs, &found)? {
        records_match_manifest(&path, &m, &found)?;
        report.missing = missing(inputs, &m, &shards, &present)?;
    }
    if !report.missing.is_empty() && !partial {
        return Err(ClusterError::Missing(report.missing));
    }
    if found.is_empty() {
        std::fs::create_dir_all(out).map_err(io(out))?;
        return Ok(report);
    }
    // One code version for the whole merge: compare everything with the first record.
    let first = &found[0];
    for f in &found[1..] {
        if let Some(difference) = conflict(first, f).filter(RecordConflict::is_code_version) {
            return Err(ClusterError::CodeVersions {
                first: first.path.clone(),
                second: f.path.clone(),
                difference: Box::new(difference),
            });
        }
    }
    // Same pair: same parameters; keep the first occurrence.
    let mut chosen: BTreeMap<String, usize> = BTreeMap::new();
    for (k, f) in found.iter().enumerate() {
        match chosen.get(&f.record.file_name()) {
            None => {
                chosen.insert(f.record.file_name(), k);
            }
            Some(&j) => {
                if let Some(difference) = conflict(&found[j], f) {
                    return Err(ClusterError::SamePair {
                        first: found[j].path.clone(),
                        second: f.path.clone(),
                        label: f.record.case.label.clone(),
                        solver: f.record.solver.name.clone(),
                        difference: Box::new(difference),
                    });
                }
                report.duplicates.push((f.path.clone(), found[j].path.clone()));
            }
        }
    }
    // The trajectory sidecars of the records to write, read before anything is written.
    let mut sidecars: BTreeMap<&str, Option<Vec<u8>>> = BTreeMap::new();
    for (name, &k) in &chosen {
        if !found[k].in_out_dir {
            sidecars.insert(name, read_sidecar(&found[k].path)?);
        }
    }
    std::fs::create_dir_all(out).map_err(io(out))?;
    for (name, &k) in &chosen {
        let f = &found[k];
        if f.in_out_dir {
            report.kept += 1;
            continue;
        }
        // the sidecar first, as a run writes it: a record never names motion that is not there;
        // a record without one removes a stale sidecar of its name
        let car = out.join(sidecar_name(name));
        match sidecars.get(name.as_str()).and_then(Option::as_ref) {
            Some(bytes) => write_atomic(&car, bytes).map_err(io(&car))?,
            None => match std::fs::remove_file(&car) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&car)(e)),
                _ => {}
            },
        }
        let dest = out.join(name);
        write_atomic(&dest, &f.bytes).map_err(io(&dest))?;
        report.written.push(dest);
    }
    Ok(report)
}

/// The bytes of the trajectory sidecar beside the record at `record` (`None`: it has none).
fn read_sidecar(record: &Path) -> Result<Option<Vec<u8>>, ClusterError> {
    let path = sidecar_path(record);
    match std::fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(&path)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manifest lists a case identity per pair (schema 2); a manifest of an earlier version
    /// (schema 1, none) is still read, and one whose lists disagree in length is refused.
    #[test]
    fn manifests_list_a_case_per_pair() {
        let v2 = r#"{"schema":"signorini.shard/2","suite":"s","shard":0,"shards":2,
                     "pairs":["a__pgs.json","a__sap.json"],"cases":["slope:00ff","slope:00ff"]}"#;
        let m = Manifest::parse(v2, "m").unwrap();
        assert_eq!(m.cases, ["slope:00ff", "slope:00ff"]);
        let v1 = r#"{"schema":"signorini.shard/1","suite":"s","shard":1,"shards":2,"pairs":["a__pgs.json"]}"#;
        assert!(Manifest::parse(v1, "m").unwrap().cases.is_empty());
        for bad in [
            v2.replace(r#","slope:00ff"]"#, "]"),
            v2.replace("shard/2", "shard/1"),
            v1.replace("shard/1", "shard/2"),
            v1.replace("shard/1", "shard/9"),
        ] {
            let e = Manifest::parse(&bad, "m").unwrap_err();
            assert!(matches!(&e, ClusterError::InvalidManifest { file } if file == "m"), "{bad}: {e:?}");
            assert_eq!(e.to_string(), format!("m: not a valid {MANIFEST_SCHEMA} manifest"), "{bad}");
        }
        assert_eq!(case_key("slope", "00ff"), "slope:00ff");
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(parse_shard("0/4"), Ok((0, 4)));
        assert_eq!(parse_shard("3/4"), Ok((3, 4)));
        assert_eq!(parse_shard("0/1"), Ok((0, 1)));
        for (bad, problem, needle) in [
            ("4/4", ShardProblem::IndexOutOfRange { count: 4 }, "0..4"),
            ("1/0", ShardProblem::ZeroCount, "at least 1"),
            ("-1/2", ShardProblem::BadIndex, "non-negative"),
            ("2", ShardProblem::NotIOfN, "I/N"),
            ("a/b", ShardProblem::BadIndex, "non-negative"),
        ] {
            let e = parse_shard(bad).unwrap_err();
            assert_eq!(e, ShardError { text: bad.into(), problem });
            let e = e.to_string();
            assert!(e.contains(needle) && e.contains(bad), "{bad}: {e}");
        }
    }
}
