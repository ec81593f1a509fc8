//! Reading run records and turning them into tables and gate verdicts.
//!
//! - [`read_run_dir`]: every run record of a run directory, sorted by file name.
//! - [`summary`]: the plain-text / Markdown table printed at the end of `signorini run`.
//! - [`diff`]: `signorini diff-records`: two run directories compared with provenance and
//!   timings removed.
//! - [`gate`]: the gate check: every oracle check of a run directory, expected failures and
//!   metric gates (`ci/gates.toml`).
//! - [`report`]: `signorini report`: the HTML + Markdown comparison report, built from
//!   [`figures`] (plotters SVGs), [`profile`] (Dolan–Moré performance profiles), [`table`]
//!   (the solver × case table), [`html`], [`markdown`] and [`criterion`] (estimates reader).

pub mod compare;
pub mod criterion;
pub mod diff;
pub mod figures;
pub mod gate;
pub mod html;
pub mod markdown;
pub mod profile;
pub mod report;
pub mod summary;
pub mod table;

use harness::record::RunRecord;
use std::path::{Path, PathBuf};

/// Reads every `*.json` run record in `dir` (not recursive), sorted by file name. Files that are
/// not run records are errors naming the file.
pub fn read_run_dir(dir: &Path) -> Result<Vec<RunRecord>, String> {
    Ok(read_run_dir_files(dir)?.into_iter().map(|(_, r)| r).collect())
}

/// A run record with the file it was read from.
pub type RecordFile = (PathBuf, RunRecord);

/// [`read_run_dir`] with the file each record came from.
pub fn read_run_dir_files(dir: &Path) -> Result<Vec<RecordFile>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    paths.into_iter().map(|p| RunRecord::read(&p).map(|r| (p, r))).collect()
}

/// Like [`read_run_dir`], but a file that is not a readable run record is returned as an error
/// message next to the records that could be read (the report lists it instead of stopping), and
/// the run directories one level below `dir` are read too, after `dir`'s own records (a *study*
/// directory: one subdirectory per variant of a suite, e.g. `runs/nsn-convergence/r-one`, whose
/// records share file names and differ in a setting; ci/studies/nsn-convergence.toml).
pub fn read_run_dir_partial(dir: &Path) -> Result<(Vec<RunRecord>, Vec<String>), String> {
    let (records, errors) = read_run_dir_partial_files(dir)?;
    Ok((records.into_iter().map(|(_, r)| r).collect(), errors))
}

/// [`read_run_dir_partial`] with the file each record came from.
pub fn read_run_dir_partial_files(dir: &Path) -> Result<(Vec<RecordFile>, Vec<String>), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let (mut subdirs, mut paths) = (vec![], vec![]);
    for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
            continue;
        }
        if p.is_dir() {
            subdirs.push(p);
        } else if p.extension().is_some_and(|x| x == "json") {
            paths.push(p);
        }
    }
    paths.sort();
    subdirs.sort();
    for d in subdirs {
        let mut inner: Vec<_> = std::fs::read_dir(&d)
            .map_err(|e| format!("{}: {e}", d.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.extension().is_some_and(|x| x == "json")
                    && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect();
        inner.sort();
        paths.extend(inner);
    }
    let (mut records, mut errors) = (vec![], vec![]);
    for p in paths {
        match RunRecord::read(&p) {
            Ok(r) => records.push((p, r)),
            Err(e) => errors.push(e),
        }
    }
    Ok((records, errors))
}
