//! Reader for criterion's estimates (criterion 0.8 layout): every `<dir>/**/new/estimates.json`
//! with its sibling `benchmark.json`. Units in the files are nanoseconds per iteration.
//! `change/estimates.json` is not read: criterion leaves it stale on runs without a comparison.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// One benchmark's latest estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// `full_id` from `benchmark.json` (else the directory path relative to the root).
    pub id: String,
    /// Mean time per iteration (ns).
    pub mean_ns: f64,
    /// 95 % confidence interval of the mean (ns).
    pub mean_ci_ns: (f64, f64),
    /// Median time per iteration (ns).
    pub median_ns: f64,
    /// The `new/` directory it was read from.
    pub path: PathBuf,
}

/// Why criterion's estimates could not be read ([`read`]).
#[derive(Debug, thiserror::Error)]
pub enum CriterionError {
    /// A directory could not be walked or a file read ([`records::input::InputError`]).
    #[error(transparent)]
    Input(#[from] records::input::InputError),
    /// An `estimates.json` that is not JSON.
    #[error("{}: {source}", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// An `estimates.json` without `mean.point_estimate`.
    #[error("{}: no mean.point_estimate", path.display())]
    NoMean {
        /// The file.
        path: PathBuf,
    },
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter().try_fold(v, |v, k| v.get(*k)).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// Deepest criterion directory read (group / function / parameter / new is 4 levels).
const MAX_DEPTH: usize = 12;

/// Reads every estimate under `root` (e.g. `target/criterion`; a missing root has none), sorted by
/// id, walking without following symbolic links. A file that is not valid JSON or whose mean is
/// missing is an error naming it; a missing median or interval reads as NaN.
pub fn read(root: &Path) -> Result<Vec<Estimate>, CriterionError> {
    if !root.exists() {
        return Ok(vec![]);
    }
    let dirs: Vec<PathBuf> = records::input::walk_dirs(root, MAX_DEPTH)?
        .into_iter()
        .filter(|d| d.file_name().is_some_and(|n| n == "new") && d.join("estimates.json").is_file())
        .collect();
    let load = |p: &Path| -> Result<Value, CriterionError> {
        let text = records::input::read_text(p)?;
        serde_json::from_str(&text).map_err(|source| CriterionError::NotJson { path: p.to_path_buf(), source })
    };
    let mut out = vec![];
    for d in dirs {
        let est = load(&d.join("estimates.json"))?;
        let bench = load(&d.join("benchmark.json")).ok();
        let id = bench
            .as_ref()
            .and_then(|b| b.get("full_id").and_then(Value::as_str).map(String::from))
            .unwrap_or_else(|| {
                d.parent().and_then(|p| p.strip_prefix(root).ok()).map(|p| p.display().to_string()).unwrap_or_default()
            });
        let mean_ns = num(&est, &["mean", "point_estimate"]);
        if mean_ns.is_nan() {
            return Err(CriterionError::NoMean { path: d.join("estimates.json") });
        }
        out.push(Estimate {
            id,
            mean_ns,
            mean_ci_ns: (
                num(&est, &["mean", "confidence_interval", "lower_bound"]),
                num(&est, &["mean", "confidence_interval", "upper_bound"]),
            ),
            median_ns: num(&est, &["median", "point_estimate"]),
            path: d,
        });
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_new_estimates() {
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("step/pgs/slope/new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(
            new.join("estimates.json"),
            r#"{"mean":{"point_estimate":1500.0,"standard_error":1.0,
                "confidence_interval":{"confidence_level":0.95,"lower_bound":1400.0,"upper_bound":1600.0}},
                "median":{"point_estimate":1450.0}}"#,
        )
        .unwrap();
        std::fs::write(new.join("benchmark.json"), r#"{"full_id":"step/pgs/slope"}"#).unwrap();
        let base = dir.path().join("step/pgs/slope/base");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("estimates.json"), "{}").unwrap();
        let e = read(dir.path()).unwrap();
        assert_eq!(e.len(), 1, "only new/ is read");
        assert_eq!(e[0].id, "step/pgs/slope");
        assert_eq!((e[0].mean_ns, e[0].mean_ci_ns, e[0].median_ns), (1500.0, (1400.0, 1600.0), 1450.0));
        assert!(read(&dir.path().join("none")).unwrap().is_empty());
    }
}
