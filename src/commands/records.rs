//! Subcommands over run directories: `merge`, `gate`, `report`, `view`, `diff-records`, `bench-compare`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub(crate) fn merge(out: &Path, dirs: &[PathBuf], partial: bool) -> Result<ExitCode, String> {
    let report =
        if partial { harness::cluster::merge_partial(out, dirs)? } else { harness::cluster::merge(out, dirs)? };
    if !report.missing.is_empty() {
        outln!("partial merge: {}", report.missing);
    }
    for (skipped, kept) in &report.duplicates {
        eprintln!(
            "note: {} duplicates {} (same pair and parameters); kept the latter",
            skipped.display(),
            kept.display()
        );
    }
    outln!(
        "merged {} records into {} ({} already there, {} duplicates skipped)",
        report.written.len(),
        out.display(),
        report.kept,
        report.duplicates.len()
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn gate(dir: &Path, gates: &Path) -> Result<ExitCode, String> {
    let gates = signorini::load_gates(gates, &signorini::registry())?;
    let rep = reports::gate::check_dir(dir, &gates)?;
    out!("{}", rep.table());
    Ok(if rep.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

pub(crate) fn report(
    dir: PathBuf,
    out: Option<PathBuf>,
    criterion: PathBuf,
    gates: Option<PathBuf>,
    baseline: Option<String>,
) -> Result<ExitCode, String> {
    let out_dir = out.unwrap_or_else(|| dir.join("report"));
    let reg = signorini::registry();
    let gates = gates.map(|g| signorini::load_gates(&g, &reg)).transpose()?;
    let defaults = signorini::defaults(&reg);
    let opts =
        reports::report::Options { run_dir: dir, out_dir, criterion: Some(criterion), gates, defaults, baseline };
    let rep = reports::write_with(&opts, &mut progress_lines())?;
    outln!(
        "report of {} records ({} figures): {} and {}",
        rep.records.len(),
        rep.figures.len(),
        opts.out_dir.join("index.html").display(),
        opts.out_dir.join("summary.md").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Record files read between two progress lines of a long report.
const PROGRESS_RECORDS: usize = 1000;
/// Case labels drawn between two progress lines of a report with many labels.
const PROGRESS_LABELS: usize = 10;
/// Longest silence on stderr while a report is built.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Prints `report: ...` progress lines on stderr: every [`PROGRESS_RECORDS`] record files read
/// (reports of at least that many), every [`PROGRESS_LABELS`] case labels drawn (reports of at
/// least twice that many), and whenever [`PROGRESS_EVERY`] passed without a line.
fn progress_lines() -> impl FnMut(reports::report::Progress) {
    use reports::report::Progress;
    let mut last = std::time::Instant::now();
    move |p| {
        let milestone = match p {
            Progress::Read { done, total } => total >= PROGRESS_RECORDS && done % PROGRESS_RECORDS == 0,
            Progress::Figures { labels_done, labels, .. } => {
                labels >= 2 * PROGRESS_LABELS && labels_done > 0 && labels_done % PROGRESS_LABELS == 0
            }
        };
        if milestone || last.elapsed() >= PROGRESS_EVERY {
            eprintln!("report: {p}");
            last = std::time::Instant::now();
        }
    }
}

pub(crate) fn diff_records(a: &Path, b: &Path, ignore: &[String]) -> Result<ExitCode, String> {
    let d = reports::diff::diff_dirs(a, b, ignore)?;
    for name in &d.only_in_a {
        outln!("only in {}: {name}", a.display());
    }
    for name in &d.only_in_b {
        outln!("only in {}: {name}", b.display());
    }
    for (name, paths) in &d.differing {
        outln!("{name}: {}", paths.join("; "));
    }
    outln!(
        "{} records compared, {} differ, {} missing on one side",
        d.compared,
        d.differing.len(),
        d.only_in_a.len() + d.only_in_b.len()
    );
    if d.compared == 0 {
        return Err(format!("no records in common between {} and {}", a.display(), b.display()));
    }
    Ok(if d.identical() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

pub(crate) fn bench_compare(
    base: &Path,
    new: &Path,
    threshold: f64,
    fail_on_regression: bool,
) -> Result<ExitCode, String> {
    if !(threshold.is_finite() && threshold >= 0.0) {
        return Err(format!("--threshold must be a non-negative number, got {threshold}"));
    }
    let rows = reports::compare::compare_sources(
        &reports::compare::read_source(base)?,
        &reports::compare::read_source(new)?,
        threshold,
    )?;
    out!("{}", reports::compare::table(&rows));
    // slower beyond noise, or not comparable (a base time of 0 is never "within noise")
    let regressed = rows.iter().any(reports::compare::Row::is_regression);
    Ok(if fail_on_regression && regressed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// `signorini view`: writes the replay page(s) of a run directory and prints their paths.
pub(crate) fn view(
    dir: &Path,
    case: Option<&str>,
    solvers: &[String],
    out: Option<PathBuf>,
) -> Result<ExitCode, String> {
    let out = out.unwrap_or_else(|| dir.to_path_buf());
    let written = reports::replay::write(dir, &out, case, solvers).map_err(|e| e.to_string())?;
    for w in &written.warnings {
        eprintln!("warning: {w}");
    }
    for (_, page) in &written.pages {
        outln!("{}", page.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `signorini view DIR --check`: every record that ran a step has a sidecar the page can show.
pub(crate) fn check_replays(dir: &Path) -> Result<ExitCode, String> {
    let c = reports::replay::check(dir).map_err(|e| e.to_string())?;
    for p in &c.problems {
        eprintln!("replay: {p}");
    }
    outln!(
        "{} records, {} sidecars the replay page can show ({} frames), {} problems",
        c.records,
        c.valid,
        c.frames,
        c.problems.len()
    );
    Ok(if c.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
