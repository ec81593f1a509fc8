//! Reading run records and turning them into tables and gate verdicts.
//!
//! - [`read_run_dir`]: every run record of a run directory, sorted by file name.
//! - [`summary`]: the plain-text / Markdown table printed at the end of `signorini run`.
//! - [`diff`]: `signorini diff-records`: two run directories compared with provenance and
//!   timings removed.
//! - [`gate`]: the gate check: every oracle check of a run directory, expected failures and
//!   metric gates (`ci/gates.toml`).
//! - [`report`]: `signorini report`: the HTML + Markdown comparison report (linking each solver's
//!   claims table, [`claims`]), built from
//!   [`figures`] (plotters SVGs), [`profile`] (Dolan–Moré performance profiles), [`table`]
//!   (the solver × case table), [`matrix`] (the case × solver matrix of verdicts and relative
//!   times), [`html`], [`markdown`] and [`criterion`] (estimates reader).

pub mod accuracy;
pub mod claims;
pub mod compare;
pub mod criterion;
pub mod diff;
pub mod figures;
pub mod gate;
pub mod html;
pub mod html_matrix;
pub mod markdown;
pub mod matrix;
pub mod profile;
pub mod replay;
pub mod report;
pub mod summary;
pub mod table;
#[cfg(test)]
mod test_records;
pub mod text;

use records::input::InputError;
use records::{RecordError, RunRecord};
use std::path::{Path, PathBuf};

pub use report::ReportError;

/// Why a run directory could not be read ([`read_run_dir`] and its variants).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The directory could not be listed ([`InputError`]).
    #[error(transparent)]
    Input(#[from] InputError),
    /// A `*.json` file is not a readable run record ([`RecordError`]).
    #[error(transparent)]
    Record(#[from] RecordError),
    /// Two records of one pair that differ ([`unique_pairs`]).
    #[error(transparent)]
    Pair(#[from] PairConflict),
}

impl From<ReadError> for String {
    fn from(e: ReadError) -> String {
        e.to_string()
    }
}

/// Two records of the same (case label, solver) pair in one directory that are not copies of
/// each other ([`unique_pairs`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} and {}: the same pair ({label} / {solver}) with {difference} in one directory; move one of them to its own \
     directory",
    first.display(),
    second.display()
)]
pub struct PairConflict {
    /// The record read first.
    pub first: PathBuf,
    /// The other record.
    pub second: PathBuf,
    /// The pair's case label.
    pub label: String,
    /// The pair's solver.
    pub solver: String,
    /// How they differ.
    pub difference: PairDifference,
}

/// How two records of one pair differ ([`PairConflict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PairDifference {
    /// Their case parameter hashes.
    #[error("different case parameters")]
    CaseParameters,
    /// Their solver parameter hashes.
    #[error("different solver parameters")]
    SolverParameters,
    /// The same parameters, other results: two runs.
    #[error("the same parameters but different results (two runs)")]
    Results,
}

/// Reads every `*.json` run record in `dir` (not recursive), sorted by file name. Files that are
/// not run records are errors naming the file.
pub fn read_run_dir(dir: &Path) -> Result<Vec<RunRecord>, ReadError> {
    Ok(read_run_dir_files(dir)?.into_iter().map(|(_, r)| r).collect())
}

/// A run record with the file it was read from.
pub type RecordFile = (PathBuf, RunRecord);

/// [`read_run_dir`] with the file each record came from.
pub fn read_run_dir_files(dir: &Path) -> Result<Vec<RecordFile>, ReadError> {
    let files: Vec<RecordFile> = records::input::json_files(dir)?
        .into_iter()
        .map(|p| RunRecord::read(&p).map(|r| (p, r)))
        .collect::<Result<_, _>>()?;
    Ok(files)
}

/// Checks that no two records of `files` in one directory are the same (case label, solver)
/// pair run with different parameters: a gate, a report row or a timing comparison would
/// otherwise depend on which file is read last. The error names both files and whether the case
/// or the solver parameters differ. A copy of a record (the same content under another name) is
/// the same pair once: the later copies are removed from `files` and counted in the result. The
/// same pair and parameters recorded twice with different results is an error too (which run
/// would a table show?).
pub fn unique_pairs(files: &mut Vec<RecordFile>) -> Result<usize, PairConflict> {
    let mut seen: std::collections::BTreeMap<(String, String, Option<PathBuf>), usize> = Default::default();
    let mut copies = vec![];
    for (k, (path, r)) in files.iter().enumerate() {
        let key = (r.case.label.clone(), r.solver.name.clone(), path.parent().map(Path::to_path_buf));
        let Some(&j) = seen.get(&key) else {
            seen.insert(key, k);
            continue;
        };
        let (first, fr) = &files[j];
        let difference = if fr.case.params_hash != r.case.params_hash {
            PairDifference::CaseParameters
        } else if fr.solver.params_hash != r.solver.params_hash {
            PairDifference::SolverParameters
        } else if serde_json::to_value(fr).ok() != serde_json::to_value(r).ok() {
            PairDifference::Results
        } else {
            copies.push(k);
            continue;
        };
        return Err(PairConflict {
            first: first.clone(),
            second: path.clone(),
            label: r.case.label.clone(),
            solver: r.solver.name.clone(),
            difference,
        });
    }
    for &k in copies.iter().rev() {
        files.remove(k);
    }
    Ok(copies.len())
}

/// Like [`read_run_dir`], but a file that is not a readable run record is returned as an error
/// message next to the records that could be read (the report lists it instead of stopping), and
/// the run directories one level below `dir` are read too, after `dir`'s own records (a *study*
/// directory: one subdirectory per variant of a suite, e.g. `runs/nsn-convergence/r-one`, whose
/// records share file names and differ in a setting; ci/studies/nsn-convergence.toml).
pub fn read_run_dir_partial(dir: &Path) -> Result<(Vec<RunRecord>, Vec<String>), ReadError> {
    let (records, errors) = read_run_dir_partial_files(dir)?;
    Ok((records.into_iter().map(|(_, r)| r).collect(), errors))
}

/// [`read_run_dir_partial`] with the file each record came from.
pub fn read_run_dir_partial_files(dir: &Path) -> Result<(Vec<RecordFile>, Vec<String>), ReadError> {
    read_run_dir_partial_files_with(dir, &mut |_| {})
}

/// [`read_run_dir_partial_files`], telling `progress` about every file read
/// ([`report::Progress::Read`]).
pub fn read_run_dir_partial_files_with(
    dir: &Path,
    progress: &mut dyn FnMut(report::Progress),
) -> Result<(Vec<RecordFile>, Vec<String>), ReadError> {
    let mut paths = records::input::json_files(dir)?;
    for d in records::input::list_dir(dir)?.1 {
        paths.extend(records::input::json_files(&d)?);
    }
    let (mut records, mut errors) = (vec![], vec![]);
    let total = paths.len();
    for (k, p) in paths.into_iter().enumerate() {
        match RunRecord::read(&p) {
            Ok(r) => records.push((p, r)),
            Err(e) => errors.push(e.to_string()),
        }
        progress(report::Progress::Read { done: k + 1, total });
    }
    unique_pairs(&mut records)?;
    Ok((records, errors))
}

/// Builds the report and writes `index.html` and `summary.md` into `opts.out_dir`.
pub fn write(opts: &report::Options) -> Result<report::Report, ReportError> {
    write_with(opts, &mut |_| {})
}

/// [`write`], telling `progress` how far the reading and the drawing are
/// ([`report::build_with`]).
pub fn write_with(
    opts: &report::Options,
    progress: &mut dyn FnMut(report::Progress),
) -> Result<report::Report, ReportError> {
    let mut report = report::build_with(opts, progress)?;
    if !replay::sidecars(&opts.run_dir).map(|s| s.is_empty()).unwrap_or(true) {
        let written = replay::write(&opts.run_dir, &opts.out_dir, None, &[])?;
        report.left_out.extend(written.warnings);
        let all = replay::sidecars(&opts.run_dir)?;
        report.replays = written
            .pages
            .into_iter()
            .map(|(label, _)| {
                let solvers = all.get(&label).map(|v| v.iter().map(|s| s.solver.clone()).collect()).unwrap_or_default();
                (label, solvers)
            })
            .collect();
    }
    for (name, text) in [("index.html", html::index(&report)), ("summary.md", markdown::summary(&report))] {
        let path = opts.out_dir.join(name);
        records::write_atomic(&path, text.as_bytes()).map_err(|source| ReportError::Io { path, source })?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 44.10: a copy of a record under another name was "different solver parameters".
    #[test]
    fn a_copy_of_a_record_is_one_pair_and_real_differences_are_named() {
        let r = test_records::record("slope", "pgs", records::RunStatus::Ok, 1.0, &[]);
        let file = |name: &str, r: &RunRecord| (PathBuf::from(format!("run/{name}")), r.clone());
        let mut files = vec![file("a.json", &r), file("copy.json", &r)];
        assert_eq!(unique_pairs(&mut files), Ok(1));
        assert_eq!(files.len(), 1);
        let mut other = r.clone();
        other.summary.stage_times.solve_s = 2.0;
        let e = unique_pairs(&mut vec![file("a.json", &r), file("b.json", &other)]).unwrap_err();
        assert_eq!(e.difference, PairDifference::Results);
        let e = e.to_string();
        assert!(e.contains("the same parameters but different results"), "{e}");
        let mut tuned = r.clone();
        tuned.solver.params_hash = "other".into();
        let e = unique_pairs(&mut vec![file("a.json", &r), file("b.json", &tuned)]).unwrap_err();
        assert_eq!(e.difference, PairDifference::SolverParameters);
        let e = e.to_string();
        assert!(e.contains("with different solver parameters"), "{e}");
        // another directory is another pair
        let mut files = vec![file("a.json", &r), (PathBuf::from("run/sub/a.json"), tuned)];
        assert_eq!(unique_pairs(&mut files), Ok(0));
    }
}
