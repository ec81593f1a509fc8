//! `signorini run`: a suite resolved once, prepared, run pair by pair with progress, summarised.

use crate::cli::RunArgs;
use harness::runner::{self, PreparedPair, Progress};
use harness::stepper::RunOptions;
use indicatif::{ProgressBar, ProgressStyle};
use records::RunStatus;
use std::path::Path;
use std::process::ExitCode;

/// Resolves `--backend`/`--precision` into the run's backend (passed to the solvers through
/// `RunOptions::backend` and recorded in the run records' provenance).
pub(crate) fn select_backend(backend: &str, precision: &str) -> Result<kernels::backend::Selection, String> {
    use kernels::backend::{BackendKind, Precision};
    let kind = BackendKind::from_name(backend).ok_or_else(|| format!("--backend {backend}: expected cpu|gpu|auto"))?;
    let precision =
        Precision::from_name(precision).ok_or_else(|| format!("--precision {precision}: expected f64|f32"))?;
    let selection = kernels::backend::select(kind, precision)?;
    if let Some(msg) = selection.fallback_message() {
        eprintln!("{msg}");
    } else if kind != BackendKind::Cpu {
        eprintln!("backend: {}", selection.record_label());
    }
    Ok(selection)
}

/// Draws one progress bar over all steps of the suite, with the current pair, step and
/// iterations. When stderr is not a terminal (a batch job's log) the bar is hidden and a line is
/// printed instead every [`PROGRESS_EVERY`].
struct Bar {
    bar: ProgressBar,
    pair: std::sync::Mutex<(String, std::time::Instant)>,
}

/// Interval of the progress lines printed when stderr is not a terminal.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

impl Bar {
    fn new(bar: ProgressBar) -> Self {
        Self { bar, pair: std::sync::Mutex::new((String::new(), std::time::Instant::now())) }
    }
}

impl Progress for Bar {
    fn pair_started(&self, pair: &PreparedPair) {
        let name = format!("{} / {}", pair.spec.label, pair.spec.solver);
        self.bar.set_message(name.clone());
        if let Ok(mut p) = self.pair.lock() {
            p.0 = name;
        }
    }
    fn step(&self, done: &harness::stepper::StepDone) {
        self.bar.inc(1);
        let Ok(mut p) = self.pair.lock() else { return };
        let line = format!("{}: step {} of {}, {} iterations", p.0, done.step + 1, done.steps, done.iterations);
        if self.bar.is_hidden() {
            if p.1.elapsed() >= PROGRESS_EVERY {
                eprintln!("progress: {line}");
                p.1 = std::time::Instant::now();
            }
        } else {
            self.bar.set_message(line);
        }
    }
    fn pair_finished(&self, record: &records::RunRecord) {
        if record.status == RunStatus::Failed {
            self.bar.println(format!(
                "{} / {} failed: {}",
                record.case.label,
                record.solver.name,
                record.reason.clone().unwrap_or_default()
            ));
        }
    }
}

pub(crate) fn run(args: RunArgs, opts: RunOptions, memory_limit: f64) -> Result<ExitCode, String> {
    let RunArgs {
        suite,
        case,
        solver,
        set,
        out,
        shard,
        resume,
        resume_any_commit,
        gates,
        max_pairs,
        overwrite,
        accuracy,
        ..
    } = args;
    let resume = match (resume, resume_any_commit) {
        (false, _) => runner::Resume::Off,
        (true, false) => runner::Resume::SameCommit,
        (true, true) => runner::Resume::AnyCommit,
    };
    let shard = shard.as_deref().map(harness::cluster::parse_shard).transpose()?;
    let reg = signorini::registry();
    let gates = gates.map(|g| signorini::load_gates(&g, &reg)).transpose()?;
    let sel = signorini::selection::Selection { suite: &suite, cases: &case, solvers: &solver, set: &set, max_pairs };
    let mut suite = signorini::selection::select(&reg, &sel)?;
    if accuracy.is_some() {
        suite.accuracy = accuracy;
    }
    if let Some(eps) = suite.accuracy {
        eprintln!(
            "equal-accuracy mode: every solver stopped by the harness at accuracy {eps:e} (docs/equal-accuracy.md)"
        );
    }
    // Every pair resolved once, before anything runs (names, parameters, record names: two pairs
    // must not write the same file).
    let resolved = suite.resolve(&reg)?;
    // The manifest names the whole suite (record names and case parameters), so that `merge`
    // knows what a complete set is and refuses shards of other case parameters.
    let manifest = shard.map(|(i, n)| harness::cluster::Manifest::new(&suite.name, i, n, &resolved));
    let out = out.unwrap_or_else(|| Path::new("runs").join(&suite.name));
    let shard_total = resolved.len();
    let resolved = match shard {
        Some((i, n)) => runner::shard(resolved, i, n),
        None => resolved,
    };
    // records are sized before the run: logged steps thinned so that a record stays readable
    let pairs = runner::prepare_run(resolved, memory_limit, &opts, records::input::text_limit() as f64)?;
    if let Some(note) = runner::thinning_note(&pairs, opts.logged_steps) {
        eprintln!("{note}");
    }
    // a record of other case parameters (or of another case under the same label) is not replaced
    // silently: case parameters are not part of the file name
    if !overwrite && resume == runner::Resume::Off {
        if let Some(why) = runner::overwrite_refusal(&pairs, &out) {
            return Err(why);
        }
    }
    records::input::check_writable_dir(&out)?;
    let stale = records::input::remove_stale_tmp(&out);
    if stale > 0 {
        eprintln!("removed {stale} temporary files left in {} by an interrupted run", out.display());
    }
    if let (Some((i, n)), Some(manifest)) = (shard, &manifest) {
        manifest.write(&out)?;
        if pairs.is_empty() {
            eprintln!("shard {i}/{n} of suite '{}' is empty ({shard_total} pairs); nothing to run", suite.name);
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!("shard {i}/{n}: {} of {shard_total} pairs", pairs.len());
    }
    let total: u64 = pairs.iter().filter(|p| p.skip.is_none()).map(|p| p.scenario.steps as u64).sum();
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} steps  {msg}")
            .map_err(|e| e.to_string())?
            .progress_chars("=> "),
    );
    eprintln!("running {} pairs of suite '{}' -> {}", pairs.len(), suite.name, out.display());
    let results = runner::run_suite_resuming(&pairs, &out, opts, &Bar::new(bar.clone()), resume);
    bar.finish_and_clear();
    for r in &results {
        if let Some(why) = &r.not_reused {
            eprintln!("resume: ran {} again: {why}", r.record.file_name());
        }
    }
    let records: Vec<_> = results.iter().map(|r| r.record.clone()).collect();
    out!("{}", reports::summary::table(&records, reports::summary::Style::Plain));
    let verdicts = gates.map(|g| {
        let files: Vec<_> = records.iter().map(|r| (out.join(r.file_name()), r.clone())).collect();
        reports::gate::evaluate(&g, &files, reports::gate::Scope::Directory)
    });
    let matrix = reports::matrix::Matrix::build(&records, verdicts.as_ref());
    out!("\n{}", matrix.plain());
    let mut write_errors = 0;
    for r in &results {
        if let Err(e) = &r.path {
            eprintln!("error: could not write run record: {e}");
            write_errors += 1;
        }
    }
    // a pair whose record could not be written is failed, whatever its run did: nothing of it is
    // in the output directory
    let failed = results.iter().filter(|r| r.path.is_err() || r.record.status == RunStatus::Failed).count();
    let skipped = results.iter().filter(|r| r.path.is_ok() && r.record.status == RunStatus::Skipped).count();
    let reused = results.iter().filter(|r| r.reused).count();
    let reused = if resume == runner::Resume::Off { String::new() } else { format!(", {reused} reused") };
    let unwritten = if write_errors > 0 { format!(" ({write_errors} not written)") } else { String::new() };
    outln!(
        "{} pairs: {} ok, {failed} failed{unwritten}, {skipped} skipped{reused}; {}; records in {}",
        records.len(),
        records.len() - failed - skipped,
        matrix.verdict_line(),
        out.display()
    );
    // a suite of which no pair completed (every one failed or was skipped) is not a success
    let completed = records.len() - failed - skipped;
    Ok(if write_errors > 0 || completed == 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
