//! `signorini report`: reads a run directory (and criterion estimates, and a gates file, when
//! given), draws every figure and writes `index.html` (self-contained: inline CSS, one inline
//! script that sorts the tables, SVG figures beside it, nothing fetched from the network) and
//! `summary.md` (for pull requests).

use crate::criterion::{self, Estimate};
use crate::figures::{self, Figure, FigureError};
use crate::gate::{self, GateReport, Gates};
use records::RunRecord;
use std::path::{Path, PathBuf};

/// What to read and where to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Run directory with the run records.
    pub run_dir: PathBuf,
    /// Output directory (created; `figures/*.svg` in it are replaced).
    pub out_dir: PathBuf,
    /// Criterion output directory (e.g. `target/criterion`); skipped when `None` or absent.
    pub criterion: Option<PathBuf>,
    /// Gates (`ci/gates.toml`, loaded with [`gate::load`]), checked against the records when
    /// given (under [`gate::Scope::Directory`]: entries on pairs not in the run directory are
    /// listed as not checked).
    pub gates: Option<Gates>,
    /// Registered defaults, for the results table's settings column
    /// ([`crate::table::Defaults::from_registry`]; empty: every settings cell is missing).
    pub defaults: crate::table::Defaults,
    /// Baseline solver of the results table's ratio column (`--baseline pgs`), when asked for.
    pub baseline: Option<String>,
}

/// Everything the HTML and Markdown writers show.
#[derive(Debug, Clone)]
pub struct Report {
    /// The run directory read.
    pub run_dir: PathBuf,
    /// Its records, sorted by file name.
    pub records: Vec<RunRecord>,
    /// Files of the run directory that could not be read as run records, with the reason.
    pub unreadable: Vec<String>,
    /// Rendered figures, in report order.
    pub figures: Vec<Figure>,
    /// The gate check of the records, when gates were given.
    pub gates: Option<GateReport>,
    /// Criterion estimates and the directory they came from.
    pub criterion: Option<(PathBuf, Vec<Estimate>)>,
    /// Registered defaults (the settings column).
    pub defaults: crate::table::Defaults,
    /// Baseline solver of the ratio column.
    pub baseline: Option<String>,
    /// Links to the claims tables of the solvers that ran ([`crate::claims`]).
    pub claims: Vec<crate::claims::ClaimsLink>,
    /// What the figure budget left out ([`MAX_CASE_LABELS`], [`MAX_SERIES`]), one sentence each;
    /// empty when every figure was drawn.
    pub left_out: Vec<String>,
    /// Case labels with a replay page ([`crate::replay`]; written by [`crate::write_with`]), with
    /// the solvers (names as in the sidecars' file names) whose motion it shows.
    pub replays: std::collections::BTreeMap<String, Vec<String>>,
}

/// Most case labels drawn with their own figures (convergence and physics, two per label): a
/// report of 100,000 records of distinct labels would otherwise draw 200,000 SVGs (about 6 GB).
/// The labels beyond it are in the tables, not in per-case figures; the report says so.
pub const MAX_CASE_LABELS: usize = 40;

/// Most records (series) drawn in one per-case figure; the others are in the tables, and the
/// figure's notes and the report say how many were left out.
pub const MAX_SERIES: usize = 24;

/// How far a report is, for a progress line on long reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// `done` of `total` record files read.
    Read {
        /// Files read so far.
        done: usize,
        /// Files to read.
        total: usize,
    },
    /// `done` figures drawn; per-case figures drawn for `labels_done` of `labels` case labels.
    Figures {
        /// Figures drawn so far.
        done: usize,
        /// Case labels whose per-case figures are drawn so far.
        labels_done: usize,
        /// Case labels that get per-case figures (at most [`MAX_CASE_LABELS`]).
        labels: usize,
    },
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Progress::Read { done, total } => write!(f, "read {done} of {total} record files"),
            Progress::Figures { done, labels_done, labels } => {
                write!(f, "drew {done} figures (per-case figures of {labels_done} of {labels} case labels)")
            }
        }
    }
}

impl Report {
    /// The context of the results table's rows.
    pub fn row_context(&self) -> crate::table::Context<'_> {
        crate::table::Context {
            gates: self.gates.as_ref(),
            defaults: &self.defaults,
            baseline: self.baseline.as_deref(),
            records: &self.records,
        }
    }

    /// The case × solver matrix of the records.
    pub fn matrix(&self) -> crate::matrix::Matrix {
        crate::matrix::Matrix::build(&self.records, self.gates.as_ref())
    }
}

/// Case labels in the order of first appearance.
pub fn case_labels(records: &[RunRecord]) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for r in records {
        if !out.contains(&r.case.label) {
            out.push(r.case.label.clone());
        }
    }
    out
}

/// Draws the figures of `records` into `out_dir/figures` within the figure budget: per-case
/// figures for the first [`MAX_CASE_LABELS`] case labels, each with at most [`MAX_SERIES`]
/// records. Returns the figures and one sentence per thing the budget left out.
pub fn draw_figures(
    records: &[RunRecord],
    out_dir: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<Figure>, Vec<String>), FigureError> {
    let order = figures::solver_order(records);
    let mut out = vec![];
    out.extend(figures::profiles::figure(out_dir, records, &order)?);
    out.extend(figures::profiles::fclib_figures(out_dir, records, &order)?);
    out.extend(figures::timing::figure(out_dir, records, &order)?);
    out.extend(figures::time_to_accuracy::figure(out_dir, records, &order)?);
    out.extend(figures::scaling::figures(out_dir, records, &order)?);
    out.extend(figures::work_precision::figures(out_dir, records, &order)?);
    out.extend(figures::order::figures(out_dir, records, &order)?);
    out.extend(figures::setting_convergence::figures(out_dir, records)?);
    let mut left_out = vec![];
    let mut labels = case_labels(records);
    if labels.len() > MAX_CASE_LABELS {
        left_out.push(format!(
            "Per-case figures (convergence, physics) are drawn for the first {MAX_CASE_LABELS} of {} case labels \
             (figure budget); the other {} labels ({} … {}) are in the tables only.",
            labels.len(),
            labels.len() - MAX_CASE_LABELS,
            labels[MAX_CASE_LABELS],
            labels[labels.len() - 1]
        ));
        labels.truncate(MAX_CASE_LABELS);
    }
    // records by label in one pass (a filter per label is quadratic in the records)
    let mut by_label: std::collections::HashMap<&str, Vec<&RunRecord>> = Default::default();
    for r in records {
        by_label.entry(r.case.label.as_str()).or_default().push(r);
    }
    let mut thinned = (0, 0);
    progress(Progress::Figures { done: out.len(), labels_done: 0, labels: labels.len() });
    for (k, label) in labels.iter().enumerate() {
        let mut rs = by_label.remove(label.as_str()).unwrap_or_default();
        let extra = rs.len().saturating_sub(MAX_SERIES);
        rs.truncate(MAX_SERIES);
        let drawn = out.len();
        out.extend(figures::convergence::figure(out_dir, label, &rs, &order)?);
        out.extend(figures::physics::figure(out_dir, label, &rs, &order)?);
        if extra > 0 {
            thinned = (thinned.0 + 1, thinned.1 + extra);
            for f in &mut out[drawn..] {
                f.notes.push(format!("{extra} more record(s) of {label} not drawn (at most {MAX_SERIES} per figure)"));
            }
        }
        progress(Progress::Figures { done: out.len(), labels_done: k + 1, labels: labels.len() });
    }
    if thinned.0 > 0 {
        left_out.push(format!(
            "{} case label(s) have more than {MAX_SERIES} records: their per-case figures show the first \
             {MAX_SERIES} (by file name), {} record(s) in all are in the tables only.",
            thinned.0, thinned.1
        ));
    }
    Ok((out, left_out))
}

/// Why a report could not be built ([`build`]) or written ([`crate::write`]).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The run directory could not be read ([`crate::ReadError`]).
    #[error(transparent)]
    Read(#[from] crate::ReadError),
    /// The run directory holds no readable run record, and these files that are not one.
    #[error("{}", unreadable.first().map_or("", String::as_str))]
    OnlyUnreadable {
        /// One message per file that is not a readable run record (at least one).
        unreadable: Vec<String>,
    },
    /// The run directory holds no `*.json` file.
    #[error("{}: no run records (*.json) to report on", dir.display())]
    NoRecords {
        /// The run directory.
        dir: PathBuf,
    },
    /// `--baseline` names a solver without a record here.
    #[error(
        "--baseline {baseline}: no record of solver '{baseline}' in {} (solvers here: {})",
        dir.display(),
        solvers.join(", ")
    )]
    NoBaseline {
        /// The solver asked for.
        baseline: String,
        /// The run directory.
        dir: PathBuf,
        /// The solvers that have records, sorted.
        solvers: Vec<String>,
    },
    /// criterion's estimates could not be read.
    #[error(transparent)]
    Criterion(#[from] criterion::CriterionError),
    /// A figure could not be drawn or written.
    #[error(transparent)]
    Figure(#[from] FigureError),
    /// A replay page could not be written.
    #[error(transparent)]
    Replay(#[from] crate::replay::ReplayError),
    /// An old figure could not be removed, or a page written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl From<ReportError> for String {
    fn from(e: ReportError) -> String {
        e.to_string()
    }
}

/// Reads the inputs and draws the figures (writes only `out_dir/figures`).
pub fn build(opts: &Options) -> Result<Report, ReportError> {
    build_with(opts, &mut |_| {})
}

/// [`build`], telling `progress` about every record file read and every case label drawn (the
/// CLI prints a line now and then on long reports).
pub fn build_with(opts: &Options, progress: &mut dyn FnMut(Progress)) -> Result<Report, ReportError> {
    let (files, unreadable) = crate::read_run_dir_partial_files_with(&opts.run_dir, progress)?;
    if files.is_empty() {
        if !unreadable.is_empty() {
            return Err(ReportError::OnlyUnreadable { unreadable });
        }
        return Err(ReportError::NoRecords { dir: opts.run_dir.clone() });
    }
    let gates = opts.gates.as_ref().map(|g| gate::evaluate(g, &files, gate::Scope::Directory));
    let records: Vec<RunRecord> = files.into_iter().map(|(_, r)| r).collect();
    if let Some(b) = &opts.baseline {
        if !records.iter().any(|r| &r.solver.name == b && !r.is_reference()) {
            let mut here: Vec<String> = records.iter().map(|r| r.solver.name.clone()).collect();
            here.sort();
            here.dedup();
            return Err(ReportError::NoBaseline { baseline: b.clone(), dir: opts.run_dir.clone(), solvers: here });
        }
    }
    let criterion = match &opts.criterion {
        Some(dir) if dir.is_dir() => Some((dir.clone(), criterion::read(dir)?)),
        _ => None,
    };
    let fig_dir = opts.out_dir.join("figures");
    if let Ok(entries) = std::fs::read_dir(&fig_dir) {
        for p in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if p.extension().is_some_and(|x| x == "svg") {
                std::fs::remove_file(&p).map_err(|source| ReportError::Io { path: p.clone(), source })?;
            }
        }
    }
    let (figures, left_out) = draw_figures(&records, &opts.out_dir, progress)?;
    let claims = crate::claims::links(&records, &crate::claims::source_root(), &opts.out_dir);
    Ok(Report {
        run_dir: opts.run_dir.clone(),
        records,
        unreadable,
        figures,
        gates,
        criterion,
        defaults: opts.defaults.clone(),
        baseline: opts.baseline.clone(),
        claims,
        left_out,
        replays: Default::default(),
    })
}

/// One line per distinct commit among `records`: `commit (n records)`.
pub fn commits(records: &[RunRecord]) -> Vec<String> {
    let mut seen: Vec<(String, usize)> = vec![];
    for r in records {
        match seen.iter_mut().find(|(c, _)| *c == r.provenance.commit) {
            Some((_, n)) => *n += 1,
            None => seen.push((r.provenance.commit.clone(), 1)),
        }
    }
    seen.into_iter().map(|(c, n)| format!("{c} ({n} records)")).collect()
}
