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
//! (`shard-I-of-N.manifest`): the suite's name, `I/N`, and the record file names of the whole
//! suite in suite order. When the inputs of a merge hold manifests, the merge knows the expected
//! set: it refuses, with one line naming the missing shards and pairs, unless every pair of the
//! suite has a record; [`merge_partial`] merges what exists and returns the missing pairs.

use records::{write_atomic, RunRecord};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The schema tag of shard manifests.
pub const MANIFEST_SCHEMA: &str = "signorini.shard/1";

/// What shard `shard` of `shards` of a suite is part of: written by `signorini run --shard` into
/// its output directory, read by [`merge`] to know which records make the whole suite.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`MANIFEST_SCHEMA`].
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
}

impl Manifest {
    /// The manifest of shard `shard` of `shards` of a suite whose pairs write `pairs`.
    pub fn new(suite: &str, shard: usize, shards: usize, pairs: Vec<String>) -> Self {
        Manifest { schema: MANIFEST_SCHEMA.into(), suite: suite.into(), shard, shards, pairs }
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
    fn read(path: &Path) -> Result<Manifest, String> {
        let text = records::input::read_text(path)?;
        let m: Manifest =
            serde_json::from_str(&text).map_err(|e| format!("{}: not a shard manifest: {e}", path.display()))?;
        if m.schema != MANIFEST_SCHEMA || m.shards == 0 || m.shard >= m.shards {
            return Err(format!("{}: not a valid {MANIFEST_SCHEMA} manifest", path.display()));
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

/// Checks the inputs' manifests agree (one suite, one shard count) and finds what is missing
/// from `present` (the record names the merge would hold).
fn missing(inputs: &[PathBuf], present: &BTreeSet<String>) -> Result<Missing, String> {
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
                } else {
                    None
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
    let Some((_, m)) = first else { return Ok(Missing::default()) };
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
    report.missing = missing(inputs, &present)?;
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
