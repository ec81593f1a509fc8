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
//! copied byte for byte into the output directory, atomically (temporary file + rename); a pair
//! found twice with equal parameters keeps its first occurrence (the output directory's own
//! records first, then the inputs in command-line order).
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

use records::{write_atomic, RunRecord};
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
    pub fn write(&self, dir: &Path) -> Result<PathBuf, String> {
        let path = dir.join(self.file_name());
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        write_atomic(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    }

    /// Reads a manifest through the bounded reader ([`records::input::read_text`]): a link to
    /// `/dev/zero`, a FIFO or a file above the input limit is refused in one line, never read.
    pub fn read(path: &Path) -> Result<Manifest, String> {
        let text = records::input::read_text(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a manifest's text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| format!("{source}: not a shard manifest: {e}"))?;
        let cases_ok = match m.schema.as_str() {
            MANIFEST_SCHEMA => m.cases.len() == m.pairs.len(),
            MANIFEST_SCHEMA_V1 => m.cases.is_empty(),
            _ => false,
        };
        if !cases_ok || m.shards == 0 || m.shard >= m.shards {
            return Err(format!("{source}: not a valid {MANIFEST_SCHEMA} manifest"));
        }
        Ok(m)
    }
}

fn manifest_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rd = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
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
fn manifests(inputs: &[PathBuf], found: &[Found]) -> Result<Option<(PathBuf, Manifest, BTreeSet<usize>)>, String> {
    let mut first: Option<(PathBuf, Manifest)> = None;
    let mut shards = BTreeSet::new();
    for dir in inputs {
        for path in manifest_files(dir)? {
            let m = Manifest::read(&path)?;
            if let Some((p0, m0)) = &first {
                let why = if m0.suite != m.suite {
                    Some(format!("shards of different suites ('{}' vs '{}')", m0.suite, m.suite))
                } else if m0.shards != m.shards {
                    Some(format!("different shard counts ({} vs {})", m0.shards, m.shards))
                } else if m0.pairs != m.pairs {
                    Some(pairs_difference(&m0.pairs, &m.pairs))
                } else if m0.schema != m.schema {
                    Some(format!(
                        "manifests of different versions ({} vs {}): run every shard with one signorini",
                        m0.schema, m.schema
                    ))
                } else {
                    cases_difference(m0, &m, found)
                };
                if let Some(why) = why {
                    return Err(format!("refusing to merge {} and {}: {why}", p0.display(), path.display()));
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
) -> Result<Missing, String> {
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
fn pairs_difference(a: &[String], b: &[String]) -> String {
    match a.iter().zip(b).enumerate().find(|(_, (x, y))| x != y) {
        Some((i, (x, y))) => format!(
            "shards run with different settings: pair {i} of the suite writes {x} in one and {y} in the other (a \
             record name carries the label and the solver settings' hash)"
        ),
        None => format!("shards of suites of {} and {} pairs", a.len(), b.len()),
    }
}

/// How the case parameters of two manifests with the same pairs differ, if they do: the first
/// pair whose case or case-parameter hash differs, with the first differing parameter when a
/// record of the merge holds each of the two (the pairs of one case variant share its parameters,
/// so another solver's record of the variant usually does).
fn cases_difference(a: &Manifest, b: &Manifest, found: &[Found]) -> Option<String> {
    let (i, (x, y)) = a.cases.iter().zip(&b.cases).enumerate().find(|(_, (x, y))| x != y)?;
    let with = |key: &str| found.iter().find(|f| record_case(&f.record) == key).map(|f| &f.record);
    let detail = match (with(x), with(y)) {
        (Some(rx), Some(ry)) if rx.case.name != ry.case.name => {
            format!(" (case.name: '{}' vs '{}')", rx.case.name, ry.case.name)
        }
        (Some(rx), Some(ry)) => {
            params_diff("case", &rx.case.params, &ry.case.params).map(|d| format!(" ({d})")).unwrap_or_default()
        }
        _ => String::new(),
    };
    let split = |k: &str| k.rsplit_once(':').map_or((k.to_string(), String::new()), |(c, h)| (c.into(), h.into()));
    let ((cx, hx), (cy, hy)) = (split(x), split(y));
    let runs = if cx == cy {
        format!("runs case {cx} with parameters of hash {hx} in one and {hy} in the other")
    } else {
        format!("runs case {cx} in one and case {cy} in the other")
    };
    Some(format!(
        "shards run with different case parameters: pair {i} of the suite ({}) {runs}{detail}; a record name does \
         not carry the case parameters",
        a.pairs[i]
    ))
}

/// Refuses a record whose case parameters are not those its suite's manifest `m` (at `path`)
/// lists for it: a shard's directory that received a record of another run of the pair. The
/// error names the manifest beside the record when there is one.
fn records_match_manifest(path: &Path, m: &Manifest, found: &[Found]) -> Result<(), String> {
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
            return Err(format!(
                "refusing to merge: {} runs case {have}, but the manifest {} of suite '{}' lists {want} for {name} \
                 (case NAME:HASH of its parameters): was it run again with other case parameters?",
                f.path.display(),
                beside.as_deref().unwrap_or(path).display(),
                m.suite
            ));
        }
    }
    Ok(())
}

/// Parses `I/N` (0 <= I < N, N >= 1).
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = |why: &str| format!("--shard '{text}': {why}");
    let (i, n) = text.split_once('/').ok_or_else(|| bad("expected I/N, e.g. 0/4"))?;
    let i: usize = i.trim().parse().map_err(|_| bad("I must be a non-negative integer"))?;
    let n: usize = n.trim().parse().map_err(|_| bad("N must be a positive integer"))?;
    if n == 0 {
        return Err(bad("N must be at least 1"));
    }
    if i >= n {
        return Err(bad(&format!("I must be in 0..{n} (shards are numbered from 0)")));
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

fn json_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    Ok(records::input::json_files(dir)?)
}

fn read_found(path: &Path, in_out_dir: bool) -> Result<Found, String> {
    let record = RunRecord::read(path)?;
    let bytes = records::input::read_bytes(path, records::input::text_limit())?;
    Ok(Found { path: path.to_path_buf(), bytes, record, in_out_dir })
}

/// The first differing entry of two parameter sets, as `field: a vs b`.
fn params_diff(what: &str, a: &crate::params::Params, b: &crate::params::Params) -> Option<String> {
    let keys: std::collections::BTreeSet<&String> = a.0.keys().chain(b.0.keys()).collect();
    for k in keys {
        let (x, y) = (a.0.get(k), b.0.get(k));
        if x != y {
            let show = |v: Option<&serde_json::Value>| v.map_or("(absent)".to_string(), |v| v.to_string());
            return Some(format!("{what}.params.{k}: {} vs {}", show(x), show(y)));
        }
    }
    None
}

/// Why two records of a merge cannot live together, if they cannot: different code versions
/// (any two records), or, for the same pair, different parameters.
fn conflict(a: &Found, b: &Found) -> Option<String> {
    let (ra, rb) = (&a.record, &b.record);
    if ra.provenance.commit != rb.provenance.commit {
        return Some(format!("provenance.commit: '{}' vs '{}'", ra.provenance.commit, rb.provenance.commit));
    }
    if ra.provenance.version != rb.provenance.version {
        return Some(format!("provenance.version: '{}' vs '{}'", ra.provenance.version, rb.provenance.version));
    }
    if ra.file_name() == rb.file_name() {
        if ra.case.name != rb.case.name {
            return Some(format!("case.name: '{}' vs '{}'", ra.case.name, rb.case.name));
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
pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<MergeReport, String> {
    merge_impl(out, inputs, false)
}

/// [`merge`], except that pairs missing from a sharded suite do not stop it: what exists is
/// merged and the missing shards and pairs are returned in [`MergeReport::missing`].
pub fn merge_partial(out: &Path, inputs: &[PathBuf]) -> Result<MergeReport, String> {
    merge_impl(out, inputs, true)
}

fn merge_impl(out: &Path, inputs: &[PathBuf], partial: bool) -> Result<MergeReport, String> {
    if inputs.is_empty() {
        return Err("merge: no input directory given".into());
    }
    // Writing into one of the inputs would change an input while it is merged (and count its
    // records twice): refused, comparing resolved paths (`merge sh0 sh0 sh1`, `merge ./sh0 sh0`).
    if let Ok(o) = std::fs::canonicalize(out) {
        if let Some(dir) = inputs.iter().find(|d| std::fs::canonicalize(d).is_ok_and(|d| d == o)) {
            return Err(format!(
                "refusing to merge into {}: it is the input {}; give a new output directory",
                out.display(),
                dir.display()
            ));
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
            return Err(format!("{}: not a directory", dir.display()));
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
        return Err(format!("refusing to merge: {} (merge --partial merges what exists)", report.missing));
    }
    if found.is_empty() {
        std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
        return Ok(report);
    }
    // One code version for the whole merge: compare everything with the first record.
    let first = &found[0];
    for f in &found[1..] {
        if let Some(why) = conflict(first, f).filter(|w| w.starts_with("provenance.")) {
            return Err(format!(
                "refusing to merge {} and {}: different code versions ({why})",
                first.path.display(),
                f.path.display()
            ));
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
                if let Some(why) = conflict(&found[j], f) {
                    return Err(format!(
                        "refusing to merge {} and {}: same pair ({} / {}) with different {why}",
                        found[j].path.display(),
                        f.path.display(),
                        f.record.case.label,
                        f.record.solver.name
                    ));
                }
                report.duplicates.push((f.path.clone(), found[j].path.clone()));
            }
        }
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (name, &k) in &chosen {
        let f = &found[k];
        if f.in_out_dir {
            report.kept += 1;
            continue;
        }
        let dest = out.join(name);
        write_atomic(&dest, &f.bytes).map_err(|e| format!("{}: {e}", dest.display()))?;
        report.written.push(dest);
    }
    Ok(report)
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
            assert_eq!(e, format!("m: not a valid {MANIFEST_SCHEMA} manifest"), "{bad}");
        }
        assert_eq!(case_key("slope", "00ff"), "slope:00ff");
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(parse_shard("0/4"), Ok((0, 4)));
        assert_eq!(parse_shard("3/4"), Ok((3, 4)));
        assert_eq!(parse_shard("0/1"), Ok((0, 1)));
        for (bad, needle) in
            [("4/4", "0..4"), ("1/0", "at least 1"), ("-1/2", "non-negative"), ("2", "I/N"), ("a/b", "non-negative")]
        {
            let e = parse_shard(bad).unwrap_err();
            assert!(e.contains(needle) && e.contains(bad), "{bad}: {e}");
        }
    }
}
