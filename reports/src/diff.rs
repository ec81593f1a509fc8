//! `signorini diff-records`: are two run directories the same results?
//!
//! A refactor that must not change any number (a new trait layout, a module split) is checked by
//! running the same suite before and after and comparing the run records field by field, as
//! JSON, with everything that legitimately differs between two runs of the same code removed:
//!
//! - `provenance` (commit, machine, start time, threads, backend label);
//! - every timing: object keys ending in `_s` (`wall_s`, `wall_per_step_s`, `solve_time_s`, …),
//!   `stage_times`, and the columns of per-iteration logs whose name ends in `_s` or contains
//!   `time`;
//! - any further dotted path given with `--ignore` (e.g. `solver.paper` when a field was added
//!   on purpose).
//!
//! Everything else (statuses, per-step metrics, oracle checks, iteration counts, per-iteration
//! residuals) must be equal to the last bit; two NaNs (JSON `null`) count as equal. A record
//! whose `schema` is not this code's ([`records::SCHEMA`]) is refused, not compared.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// What differs between two run directories.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct RecordDiff {
    /// Record files present in both directories.
    pub compared: usize,
    /// File names present only in the first directory.
    pub only_in_a: Vec<String>,
    /// File names present only in the second directory.
    pub only_in_b: Vec<String>,
    /// Per differing file: its name and the first differing paths (`path: a vs b`).
    pub differing: Vec<(String, Vec<String>)>,
}

impl RecordDiff {
    /// No file missing on either side and no differing value.
    pub fn identical(&self) -> bool {
        self.only_in_a.is_empty() && self.only_in_b.is_empty() && self.differing.is_empty()
    }
}

/// Why two run directories could not be compared ([`diff_dirs`]).
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A directory could not be listed or a file read ([`records::input::InputError`]).
    #[error(transparent)]
    Input(#[from] records::input::InputError),
    /// A record file that is not JSON.
    #[error("{}: not JSON: {source}", path.display())]
    NotJson {
        /// The file.
        path: std::path::PathBuf,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// A record of another schema.
    #[error("{}: schema '{found}' is not '{}'; refusing to compare", path.display(), records::SCHEMA)]
    Schema {
        /// The file.
        path: std::path::PathBuf,
        /// Its schema tag.
        found: String,
    },
    /// A JSON file without a schema tag.
    #[error("{}: no schema tag; not a {} record", path.display(), records::SCHEMA)]
    NoSchema {
        /// The file.
        path: std::path::PathBuf,
    },
}

impl From<DiffError> for String {
    fn from(e: DiffError) -> String {
        e.to_string()
    }
}

/// At most this many differing paths are kept per file.
const MAX_PATHS: usize = 8;

/// Compares every `*.json` record of `a` with the file of the same name in `b`.
pub fn diff_dirs(a: &Path, b: &Path, ignore: &[String]) -> Result<RecordDiff, DiffError> {
    let (fa, fb) = (json_files(a)?, json_files(b)?);
    let mut out = RecordDiff {
        only_in_a: fa.difference(&fb).cloned().collect(),
        only_in_b: fb.difference(&fa).cloned().collect(),
        ..Default::default()
    };
    for name in fa.intersection(&fb) {
        let (va, vb) = (read_json(&a.join(name))?, read_json(&b.join(name))?);
        let mut paths = vec![];
        diff_values(&comparable(va, "", ignore), &comparable(vb, "", ignore), "", &mut paths);
        out.compared += 1;
        if !paths.is_empty() {
            out.differing.push((name.clone(), paths));
        }
    }
    Ok(out)
}

fn json_files(dir: &Path) -> Result<BTreeSet<String>, DiffError> {
    Ok(records::input::json_files(dir)?
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect())
}

/// A record as JSON, refused unless its `schema` is this code's run-record schema (a record of
/// another schema, e.g. `signorini.run/99`, has fields that mean something else).
fn read_json(path: &Path) -> Result<Value, DiffError> {
    let text = records::input::read_text(path)?;
    let v: Value =
        serde_json::from_str(&text).map_err(|source| DiffError::NotJson { path: path.to_path_buf(), source })?;
    match v.get("schema").and_then(Value::as_str) {
        Some(records::SCHEMA) => Ok(v),
        Some(other) => Err(DiffError::Schema { path: path.to_path_buf(), found: other.to_string() }),
        None => Err(DiffError::NoSchema { path: path.to_path_buf() }),
    }
}

/// `v` without provenance, timings and the ignored paths (`path` is `v`'s dotted path).
fn comparable(v: Value, path: &str, ignore: &[String]) -> Value {
    match v {
        Value::Object(map) => {
            let is_log = map.contains_key("names") && map.contains_key("columns");
            let mut kept = serde_json::Map::new();
            for (k, x) in map {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                let timing = k == "provenance" || k == "stage_times" || k.ends_with("_s");
                if timing || ignore.contains(&p) {
                    continue;
                }
                kept.insert(k, comparable(x, &p, ignore));
            }
            if is_log {
                drop_timing_columns(&mut kept);
            }
            Value::Object(kept)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|x| comparable(x, path, ignore)).collect()),
        other => other,
    }
}

/// Removes the timing columns of an iteration log (`{"names": [...], "columns": [[...], ...]}`).
fn drop_timing_columns(log: &mut serde_json::Map<String, Value>) {
    let (Some(Value::Array(names)), Some(Value::Array(columns))) = (log.get("names"), log.get("columns")) else {
        return;
    };
    let keep: Vec<bool> =
        names.iter().map(|n| n.as_str().is_none_or(|n| !(n.ends_with("_s") || n.contains("time")))).collect();
    if keep.len() != columns.len() {
        return;
    }
    let pick = |xs: &Vec<Value>| xs.iter().zip(&keep).filter(|(_, k)| **k).map(|(x, _)| x.clone()).collect();
    let (names, columns) = (pick(names), pick(columns));
    log.insert("names".into(), Value::Array(names));
    log.insert("columns".into(), Value::Array(columns));
}

fn diff_values(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    if out.len() >= MAX_PATHS {
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => diff_values(u, v, &p, out),
                    (Some(_), None) => out.push(format!("{p}: only in the first")),
                    (None, Some(_)) => out.push(format!("{p}: only in the second")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                diff_values(u, v, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => {}
        _ if a == b => {}
        _ => out.push(format!("{path}: {} vs {}", short(a), short(b))),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 {
        format!("{}…", &s[..s.char_indices().nth(57).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(dir: &Path, name: &str, v: &Value) {
        std::fs::write(dir.join(name), v.to_string()).unwrap();
    }

    fn record(wall: f64, natmap: f64) -> Value {
        json!({
            "schema": "signorini.run/1",
            "provenance": {"commit": "abc", "started": "now"},
            "summary": {"wall_per_step_s": {"median": wall}, "stage_times": {"solve_s": wall},
                        "metrics": {"natmap": {"max": natmap}}, "oracle": {"e_q": {"measured": null}}},
            "steps": [{"step": 0, "wall_s": wall, "iterations": 3}],
            "iterations": [{"step": 0, "log": {"names": ["time_s", "residual"],
                                               "columns": [[wall], [natmap]]}}]
        })
    }

    /// A record of another schema is refused, not compared field by field.
    #[test]
    fn records_of_another_schema_are_refused() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(a.path(), "x__pgs.json", &record(1.0, 1e-9));
        let mut other = record(1.0, 1e-9);
        other["schema"] = json!("signorini.run/99");
        write(b.path(), "x__pgs.json", &other);
        let e = diff_dirs(a.path(), b.path(), &[]).unwrap_err();
        assert!(matches!(&e, DiffError::Schema { found, .. } if found == "signorini.run/99"), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("x__pgs.json") && e.contains("signorini.run/99"), "{e}");
        other.as_object_mut().unwrap().remove("schema");
        write(b.path(), "x__pgs.json", &other);
        let e = diff_dirs(a.path(), b.path(), &[]).unwrap_err();
        assert!(matches!(e, DiffError::NoSchema { .. }), "{e:?}");
        assert!(e.to_string().contains("no schema"));
    }

    #[test]
    fn timing_and_provenance_are_ignored_and_results_are_not() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(a.path(), "x__pgs.json", &record(1.0, 1e-9));
        let mut other = record(2.0, 1e-9);
        other["provenance"]["commit"] = json!("def");
        write(b.path(), "x__pgs.json", &other);
        let d = diff_dirs(a.path(), b.path(), &[]).unwrap();
        assert!(d.identical(), "{d:?}");
        assert_eq!(d.compared, 1);

        write(b.path(), "x__pgs.json", &record(2.0, 2e-9));
        let d = diff_dirs(a.path(), b.path(), &[]).unwrap();
        assert!(!d.identical());
        let paths = &d.differing[0].1;
        assert!(paths.iter().any(|p| p.starts_with("summary.metrics.natmap.max")), "{paths:?}");
        assert!(paths.iter().any(|p| p.starts_with("iterations[0].log.columns[0][0]")), "{paths:?}");
    }

    #[test]
    fn added_fields_and_missing_files_are_reported_unless_ignored() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(a.path(), "x__pgs.json", &record(1.0, 1e-9));
        write(a.path(), "y__pgs.json", &record(1.0, 1e-9));
        let mut added = record(1.0, 1e-9);
        added["solver"] = json!({"paper": "Moreau 1988"});
        write(b.path(), "x__pgs.json", &added);
        let d = diff_dirs(a.path(), b.path(), &[]).unwrap();
        assert_eq!(d.only_in_a, ["y__pgs.json"]);
        assert_eq!(d.differing[0].1, ["solver: only in the second"]);
        let d = diff_dirs(a.path(), b.path(), &["solver".into()]).unwrap();
        assert!(d.differing.is_empty(), "{d:?}");
    }
}
