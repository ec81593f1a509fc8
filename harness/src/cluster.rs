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

use crate::record::{write_atomic, RunRecord};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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
}

/// One record found by a merge.
struct Found {
    path: PathBuf,
    bytes: Vec<u8>,
    record: RunRecord,
    in_out_dir: bool,
}

fn json_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    crate::input::json_files(dir)
}

fn read_found(path: &Path, in_out_dir: bool) -> Result<Found, String> {
    let record = RunRecord::read(path)?;
    let bytes = crate::input::read_bytes(path, crate::input::text_limit())?;
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
/// both files and the differing field.
pub fn merge(out: &Path, inputs: &[PathBuf]) -> Result<MergeReport, String> {
    if inputs.is_empty() {
        return Err("merge: no input directory given".into());
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
