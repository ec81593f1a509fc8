//! `signorini bench-compare BASE NEW`: a regression table of two timing sources.
//!
//! A source is either a criterion output root (e.g. a copy of `target/criterion`; the `new/`
//! estimates of every benchmark are read) or a run directory (the run records' median solve time
//! per step). Rows are matched by benchmark id, or by `case label / solver` for run records.
//!
//! A change is marked **beyond noise** when the ratio `new/base` differs from 1 by more than the
//! threshold (default 5 %) *and*, for criterion sources, the 95 % confidence intervals of the two
//! means do not overlap (criterion's own significance reasoning); run records carry no
//! confidence interval, so only the threshold applies there and the table says so.

use crate::criterion;
use std::path::Path;

/// One timing with an optional 95 % confidence interval (seconds).
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// Identifier used to match rows.
    pub id: String,
    /// Point estimate (s).
    pub value_s: f64,
    /// Confidence interval (s), when the source has one.
    pub ci_s: Option<(f64, f64)>,
    /// What was timed, beyond the id (run records: the case and solver parameter hashes); two
    /// timings of the same id are comparable only when these agree.
    pub params: Option<String>,
    /// The file the timing was read from (named in errors).
    pub file: std::path::PathBuf,
}

/// The kind of a timing source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A run directory: median solve time per step of each record.
    RunRecords,
    /// A criterion output root: mean time per iteration of each benchmark.
    Criterion,
}

impl SourceKind {
    /// "a run directory" or "a criterion root".
    pub fn describe(self) -> &'static str {
        match self {
            SourceKind::RunRecords => "a run directory",
            SourceKind::Criterion => "a criterion root",
        }
    }
}

/// The timings of one source directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// Run records or criterion estimates.
    pub kind: SourceKind,
    /// The timings, one per id.
    pub timings: Vec<Timing>,
}

/// Why two timing sources could not be read ([`read_source`]) or compared ([`compare_sources`]).
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The source is not a directory.
    #[error("{}: not a directory", dir.display())]
    NotADirectory {
        /// The source.
        dir: std::path::PathBuf,
    },
    /// The source could not be listed ([`records::input::InputError`]).
    #[error(transparent)]
    Input(#[from] records::input::InputError),
    /// Its run records could not be read, or two of them are one pair with different parameters
    /// ([`crate::ReadError`]).
    #[error(transparent)]
    Read(#[from] crate::ReadError),
    /// Its criterion estimates could not be read.
    #[error(transparent)]
    Criterion(#[from] criterion::CriterionError),
    /// A timing that is not a finite non-negative number (or whose interval is not finite and
    /// ordered).
    #[error(
        "{}: timing of '{id}' is {value_s:e} s{}: not a finite non-negative time",
        file.display(),
        ci_s.map(|(l, u)| format!(" (interval {l:e} .. {u:e})")).unwrap_or_default()
    )]
    BadTiming {
        /// The file it was read from.
        file: std::path::PathBuf,
        /// Its id.
        id: String,
        /// Its value (s).
        value_s: f64,
        /// Its interval (s), if any.
        ci_s: Option<(f64, f64)>,
    },
    /// Neither run records nor criterion estimates.
    #[error("{}: neither run records nor criterion estimates found", dir.display())]
    Empty {
        /// The source.
        dir: std::path::PathBuf,
    },
    /// A run directory against a criterion root.
    #[error(
        "cannot compare {} with {}: both sides must be run directories or both criterion roots",
        base.describe(),
        new.describe()
    )]
    Kinds {
        /// The base's kind.
        base: SourceKind,
        /// The new source's kind.
        new: SourceKind,
    },
    /// One id timed with different parameters on the two sides.
    #[error(
        "{} and {}: '{id}' was timed with different parameters ({} vs {}); not comparable",
        base_file.display(),
        new_file.display(),
        base_params.as_deref().unwrap_or("-"),
        new_params.as_deref().unwrap_or("-")
    )]
    Parameters {
        /// The id.
        id: String,
        /// The base's file.
        base_file: std::path::PathBuf,
        /// The new source's file.
        new_file: std::path::PathBuf,
        /// The base's parameters.
        base_params: Option<String>,
        /// The new source's parameters.
        new_params: Option<String>,
    },
    /// No id in both sources.
    #[error("nothing compared: no benchmark or pair is in both sources ({base} in base, {new} in new)")]
    NothingCompared {
        /// Timings of the base.
        base: usize,
        /// Timings of the new source.
        new: usize,
    },
}

impl From<CompareError> for String {
    fn from(e: CompareError) -> String {
        e.to_string()
    }
}

/// Refuses a timing that is not a finite non-negative number.
fn checked(t: Timing) -> Result<Timing, CompareError> {
    let ci_ok = t.ci_s.is_none_or(|(l, u)| l.is_finite() && u.is_finite() && l <= u);
    if !(t.value_s.is_finite() && t.value_s >= 0.0 && ci_ok) {
        return Err(CompareError::BadTiming { file: t.file, id: t.id, value_s: t.value_s, ci_s: t.ci_s });
    }
    Ok(t)
}

/// Reads the timings of a source directory (see the module doc). A run directory whose records
/// hold the same pair twice with different parameters, a missing or non-finite mean, and a
/// negative time are errors naming the file.
pub fn read_source(dir: &Path) -> Result<Source, CompareError> {
    if !dir.is_dir() {
        return Err(CompareError::NotADirectory { dir: dir.to_path_buf() });
    }
    if !records::input::json_files(dir)?.is_empty() {
        let mut records = crate::read_run_dir_files(dir)?;
        crate::unique_pairs(&mut records).map_err(crate::ReadError::from)?;
        let timings = records
            .into_iter()
            .filter(|(_, r)| r.summary.steps > 0)
            .map(|(file, r)| {
                checked(Timing {
                    id: format!("{} / {}", r.case.label, r.solver.name),
                    value_s: r.summary.wall_per_step_s.median,
                    ci_s: None,
                    params: Some(format!("case {} solver {}", r.case.params_hash, r.solver.params_hash)),
                    file,
                })
            })
            .collect::<Result<_, _>>()?;
        return Ok(Source { kind: SourceKind::RunRecords, timings });
    }
    let est = criterion::read(dir)?;
    if est.is_empty() {
        return Err(CompareError::Empty { dir: dir.to_path_buf() });
    }
    let timings = est
        .into_iter()
        .map(|e| {
            checked(Timing {
                id: e.id,
                value_s: e.mean_ns * 1e-9,
                ci_s: Some((e.mean_ci_ns.0 * 1e-9, e.mean_ci_ns.1 * 1e-9)),
                params: None,
                file: e.path.join("estimates.json"),
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Source { kind: SourceKind::Criterion, timings })
}

/// Compares two sources: refuses sources of different kinds, a pair timed with different
/// parameters on the two sides (naming both files), and two sources with no id in common.
pub fn compare_sources(base: &Source, new: &Source, threshold: f64) -> Result<Vec<Row>, CompareError> {
    if base.kind != new.kind {
        return Err(CompareError::Kinds { base: base.kind, new: new.kind });
    }
    for b in &base.timings {
        if let Some(n) = new.timings.iter().find(|n| n.id == b.id && n.params != b.params) {
            return Err(CompareError::Parameters {
                id: b.id.clone(),
                base_file: b.file.clone(),
                new_file: n.file.clone(),
                base_params: b.params.clone(),
                new_params: n.params.clone(),
            });
        }
    }
    let rows = compare(&base.timings, &new.timings, threshold);
    if !rows.iter().any(|r| r.base_s.is_some() && r.new_s.is_some()) {
        return Err(CompareError::NothingCompared { base: base.timings.len(), new: new.timings.len() });
    }
    Ok(rows)
}

/// One row of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Identifier.
    pub id: String,
    /// Base timing (s), if present.
    pub base_s: Option<f64>,
    /// New timing (s), if present.
    pub new_s: Option<f64>,
    /// `new / base`.
    pub ratio: Option<f64>,
    /// Whether the change is beyond noise (see the module doc).
    pub beyond_noise: bool,
    /// Why the two timings cannot be compared, when both exist but no ratio can be formed (a
    /// base time of 0: any new time is infinitely slower, never "within noise").
    pub incomparable: Option<String>,
}

impl Row {
    /// Whether this row fails `bench-compare --fail-on-regression`: slower beyond noise, or not
    /// comparable at all (a base of 0).
    pub fn is_regression(&self) -> bool {
        self.incomparable.is_some() || (self.beyond_noise && self.ratio.is_some_and(|q| q > 1.0))
    }
}

/// Compares two sets of timings.
pub fn compare(base: &[Timing], new: &[Timing], threshold: f64) -> Vec<Row> {
    let mut ids: Vec<&str> = base.iter().chain(new).map(|t| t.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let b = base.iter().find(|t| t.id == id);
            let n = new.iter().find(|t| t.id == id);
            let ratio = match (b, n) {
                (Some(b), Some(n)) if b.value_s > 0.0 => Some(n.value_s / b.value_s),
                _ => None,
            };
            let separated = match (b.and_then(|t| t.ci_s), n.and_then(|t| t.ci_s)) {
                (Some((bl, bu)), Some((nl, nu))) => nl > bu || nu < bl,
                _ => true,
            };
            let beyond_noise = ratio.is_some_and(|r| (r - 1.0).abs() > threshold) && separated;
            let incomparable = match (b, n) {
                (Some(b), Some(_)) if ratio.is_none() => {
                    Some(format!("base time {} s: no ratio to the new time", b.value_s))
                }
                _ => None,
            };
            Row {
                id: id.to_string(),
                base_s: b.map(|t| t.value_s),
                new_s: n.map(|t| t.value_s),
                ratio,
                beyond_noise,
                incomparable,
            }
        })
        .collect()
}

fn fmt_time(s: Option<f64>) -> String {
    match s {
        None => "-".into(),
        Some(s) if s.is_nan() => "NaN".into(),
        Some(s) if s < 1e-6 => format!("{:.1} ns", s * 1e9),
        Some(s) if s < 1e-3 => format!("{:.2} us", s * 1e6),
        Some(s) if s < 1.0 => format!("{:.3} ms", s * 1e3),
        Some(s) => format!("{s:.3} s"),
    }
}

/// The table: id, base, new, ratio, verdict (`slower`/`faster` beyond noise, `~` within noise,
/// `added`/`removed`, `INCOMPARABLE` with the reason).
pub fn table(rows: &[Row]) -> String {
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            let verdict = match (r.base_s, r.new_s, r.ratio) {
                (None, Some(_), _) => "added".to_string(),
                (Some(_), None, _) => "removed".to_string(),
                _ if r.incomparable.is_some() => {
                    format!("INCOMPARABLE ({})", r.incomparable.as_deref().unwrap_or_default())
                }
                (_, _, Some(q)) if r.beyond_noise && q > 1.0 => format!("SLOWER {:+.1}%", (q - 1.0) * 100.0),
                (_, _, Some(q)) if r.beyond_noise => format!("faster {:+.1}%", (q - 1.0) * 100.0),
                _ => "~ (within noise)".to_string(),
            };
            [
                r.id.clone(),
                fmt_time(r.base_s),
                fmt_time(r.new_s),
                r.ratio.map(|q| format!("{q:.3}")).unwrap_or("-".into()),
                verdict,
            ]
        })
        .collect();
    let headers = ["benchmark", "base", "new", "new/base", "verdict"];
    let mut w: Vec<usize> = headers.iter().map(|h| h.len()).collect();
    for c in &cells {
        for (i, x) in c.iter().enumerate() {
            w[i] = w[i].max(x.chars().count());
        }
    }
    let line = |c: &[String]| {
        c.iter()
            .enumerate()
            .map(|(i, x)| format!("{x:<width$}", width = w[i]))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
            + "\n"
    };
    let mut out = line(&headers.map(String::from));
    out += &line(&w.iter().map(|&n| "-".repeat(n)).collect::<Vec<_>>());
    for c in &cells {
        out += &line(c);
    }
    let slower = rows.iter().filter(|r| r.beyond_noise && r.ratio.is_some_and(|q| q > 1.0)).count();
    let incomparable = rows.iter().filter(|r| r.incomparable.is_some()).count();
    let both = rows.iter().filter(|r| r.base_s.is_some() && r.new_s.is_some()).count() - incomparable;
    let incomparable =
        if incomparable > 0 { format!(", {incomparable} incomparable (a base time of 0)") } else { String::new() };
    out += &format!("{both} compared, {slower} slower beyond noise{incomparable}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: &str, v: f64, ci: Option<(f64, f64)>) -> Timing {
        Timing { id: id.into(), value_s: v, ci_s: ci, params: None, file: id.into() }
    }

    #[test]
    fn verdicts_respect_threshold_and_confidence_intervals() {
        let base = [
            t("a", 1.0, Some((0.99, 1.01))),
            t("b", 1.0, Some((0.8, 1.2))),
            t("c", 1.0, Some((0.99, 1.01))),
            t("d", 1.0, Some((0.99, 1.01))),
            t("gone", 1.0, None),
        ];
        let new = [
            t("a", 1.5, Some((1.49, 1.51))),    // slower, separated
            t("b", 1.1, Some((0.9, 1.3))),      // +10% but intervals overlap
            t("c", 1.02, Some((1.015, 1.025))), // separated but under the threshold
            t("d", 0.5, Some((0.49, 0.51))),    // faster
            t("fresh", 1.0, None),
        ];
        let rows = compare(&base, &new, 0.05);
        let by = |id: &str| rows.iter().find(|r| r.id == id).unwrap().clone();
        assert!(by("a").beyond_noise && by("a").ratio == Some(1.5));
        assert!(!by("b").beyond_noise && !by("c").beyond_noise);
        assert!(by("d").beyond_noise);
        let table = table(&rows);
        assert!(table.contains("SLOWER +50.0%") && table.contains("faster -50.0%"), "{table}");
        assert!(
            table.contains("added") && table.contains("removed") && table.contains("1 slower beyond noise"),
            "{table}"
        );
    }

    #[test]
    fn records_without_intervals_use_the_threshold_alone() {
        let rows = compare(&[t("x", 1.0, None)], &[t("x", 1.2, None)], 0.05);
        assert!(rows[0].beyond_noise);
    }

    /// Issue 44.7: a base time of 0 against 13 µs was "within noise" and passed
    /// `--fail-on-regression`; it is incomparable and fails.
    #[test]
    fn a_zero_base_is_incomparable_not_within_noise() {
        let rows = compare(&[t("z", 0.0, None), t("ok", 1.0, None)], &[t("z", 13e-6, None), t("ok", 1.0, None)], 0.05);
        let z = rows.iter().find(|r| r.id == "z").unwrap();
        assert!(z.is_regression() && z.incomparable.as_deref().is_some_and(|w| w.contains("base time 0 s")), "{z:?}");
        assert!(!rows.iter().find(|r| r.id == "ok").unwrap().is_regression());
        let table = table(&rows);
        let line = table.lines().find(|l| l.starts_with("z ")).unwrap();
        assert!(line.contains("INCOMPARABLE (base time 0 s") && !line.contains("within noise"), "{table}");
        assert!(table.contains("1 compared, 0 slower beyond noise, 1 incomparable"), "{table}");
    }
}
