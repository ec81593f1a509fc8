//! `signorini`: run contact solvers on canonical cases, measure them the same way, gate them.

use clap::{Parser, Subcommand};
use harness::runner::{self, PreparedPair, Progress, Suite};
use harness::stepper::RunOptions;
use indicatif::{ProgressBar, ProgressStyle};
use records::RunStatus;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Standard output written without panicking (`print!` panics on a closed or full stdout): the
/// first failed write is remembered and every later one skipped, so that a command still
/// finishes its work (every record is written whatever happens to stdout). `main` then ends
/// normally after a broken pipe (`run ... | head`: the reader has all it wanted) and with one
/// `error:` line, exit 2, after any other failure (`list > /dev/full`).
mod stdout {
    use std::io::Write;
    use std::sync::Mutex;

    /// The first write error.
    static FAILED: Mutex<Option<std::io::Error>> = Mutex::new(None);

    /// Writes `args` and flushes, unless an earlier write failed.
    pub fn write(args: std::fmt::Arguments<'_>) {
        let mut failed = FAILED.lock().unwrap_or_else(|e| e.into_inner());
        if failed.is_some() {
            return;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
            *failed = Some(e);
        }
    }

    /// Flushes and returns the first write error, if any.
    pub fn finish() -> Option<std::io::Error> {
        write(format_args!(""));
        FAILED.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// `print!` through [`stdout::write`].
macro_rules! out {
    ($($t:tt)*) => {
        stdout::write(format_args!($($t)*))
    };
}

/// `println!` through [`stdout::write`].
macro_rules! outln {
    ($($t:tt)*) => {
        stdout::write(format_args!("{}\n", format_args!($($t)*)))
    };
}

#[derive(Parser)]
#[command(name = "signorini", version, about = "A workbench for frictional-contact solvers")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List solvers and cases with their parameters and defaults.
    List,
    /// Run a suite (default: every solver on every case with its defaults, and on each case's
    /// variants such as `clutter-rigid`) and write run records. Exits 1 when a record could not
    /// be written or no pair completed (every one failed or was skipped).
    Run(RunArgs),
    /// FCLIB (HDF5) problems: export a step of a run, solve a file with a solver, bench solvers on
    /// a directory of files.
    Fclib {
        #[command(subcommand)]
        command: FclibCommand,
    },
    /// Merge run directories (e.g. the shards of a cluster run) into OUT. Refuses records of
    /// different code versions, of the same pair with different parameters, or an incomplete
    /// set of shards (their manifests name every pair of the suite).
    Merge {
        /// Output directory (created if needed; records already there are kept and checked).
        out: PathBuf,
        /// Run directories to merge.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// When the shards' manifests expect pairs that no directory holds, merge what exists,
        /// list what is missing and exit 0 (without it the merge is refused, exit 2).
        #[arg(long)]
        partial: bool,
    },
    /// Compare the timings of two runs (criterion output roots or run directories).
    BenchCompare {
        /// Base: a criterion root (e.g. a saved copy of target/criterion) or a run directory.
        base: PathBuf,
        /// New: same kinds as BASE.
        new: PathBuf,
        /// Relative change below which a difference counts as noise.
        #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
        threshold: f64,
        /// Exit non-zero if anything is slower beyond noise.
        #[arg(long)]
        fail_on_regression: bool,
    },
    /// Compare the results of two run directories record by record, ignoring provenance and
    /// timings (a refactor must leave every other number identical); exits 1 if anything differs.
    DiffRecords {
        /// First run directory.
        a: PathBuf,
        /// Second run directory.
        b: PathBuf,
        /// Also ignore this dotted record path (e.g. `solver.paper` for a field added on purpose).
        #[arg(long, value_name = "PATH")]
        ignore: Vec<String>,
    },
    /// Check a run directory: every oracle check must pass unless the gates file lists it as an
    /// expected failure, and every metric gate must hold; exits non-zero otherwise.
    Gate {
        /// Run directory.
        #[arg(default_value = "runs/default")]
        dir: PathBuf,
        /// Gates file.
        #[arg(long, default_value = "ci/gates.toml")]
        gates: PathBuf,
    },
    /// Write a case's initial world as an MJCF model (model.xml) plus a JSON sidecar (model.json:
    /// run length, coordinate map, contact parameter map) for the reference engines in peers/.
    /// Cases MJCF cannot express are refused with one line (exit 2, nothing written).
    Export {
        /// Case.
        #[arg(long)]
        case: String,
        /// Case parameter overrides `KEY=VALUE`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Output format (only `mjcf`).
        #[arg(long, default_value = "mjcf", value_parser = ["mjcf"])]
        format: String,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
    /// Grade a reference engine's trajectory (peers/run_*.py) with the case's oracle and write a
    /// run record (solver = the engine, marked as a reference engine) into OUT. It replaces an
    /// earlier grade of the same engine, never a solver's own record.
    Grade {
        /// Trajectory file (JSON, schema signorini.trajectory/1).
        trajectory: PathBuf,
        /// Case.
        #[arg(long)]
        case: String,
        /// Case parameter overrides `KEY=VALUE` (the same as for the export).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Engine name for the record (must match the trajectory's).
        #[arg(long)]
        engine: String,
        /// Label of the case variant in the record (default: the case name).
        #[arg(long)]
        label: Option<String>,
        /// Run directory for the record.
        #[arg(long, default_value = "runs/reference")]
        out: PathBuf,
    },
    /// Write the comparison report (index.html + SVG figures, summary.md) of a run directory.
    Report {
        /// Run directory.
        #[arg(default_value = "runs/default")]
        dir: PathBuf,
        /// Output directory (default: <DIR>/report).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Criterion output directory to include (used when it exists).
        #[arg(long, default_value = "target/criterion")]
        criterion: PathBuf,
        /// Gates file (expected failures, metric gates) whose gate check goes into the report.
        #[arg(long)]
        gates: Option<PathBuf>,
        /// Baseline solver: the results table gains the column `solve time / BASELINE` (total
        /// solve time over the baseline's on the same case variant).
        #[arg(long, value_name = "SOLVER")]
        baseline: Option<String>,
    },
}

/// Resource limits of `run`: every pair is checked against them before the suite starts
/// (memory) or while it runs (time); a pair past a time limit is recorded as failed with the
/// reason and the suite goes on.
#[derive(clap::Args)]
struct Limits {
    /// Wall-time limit of one step, in seconds (0: none; at most 1e7, about 115 days).
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS", allow_negative_numbers = true, value_parser = seconds)]
    step_timeout: f64,
    /// Wall-time limit of one pair's run, in seconds (0: none; at most 1e7, about 115 days).
    #[arg(long, default_value_t = 3600.0, value_name = "SECONDS", allow_negative_numbers = true, value_parser = seconds)]
    run_timeout: f64,
    /// Memory one pair may use, e.g. `8G` or `512M` (default: the machine's available memory).
    /// Pairs whose estimate exceeds it are refused before anything runs, naming the parameters.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    max_memory: Option<String>,
}

impl Limits {
    /// The limits as run options (timeouts) and a memory limit in bytes.
    fn resolve(&self) -> Result<(Option<Duration>, Option<Duration>, f64), String> {
        let secs = |name: &str, s: f64| -> Result<Option<Duration>, String> {
            if !(s.is_finite() && (0.0..=MAX_SECONDS).contains(&s)) {
                return Err(format!("--{name} {s}: expected seconds in 0..=1e7 (0: no limit)"));
            }
            (s > 0.0).then(|| Duration::try_from_secs_f64(s).map_err(|e| format!("--{name} {s}: {e}"))).transpose()
        };
        let memory = match &self.max_memory {
            Some(m) => harness::resources::parse_bytes(m).map_err(|e| format!("--max-memory {e}"))?,
            None => harness::resources::default_limit(),
        };
        Ok((secs("step-timeout", self.step_timeout)?, secs("run-timeout", self.run_timeout)?, memory))
    }
}

/// The arguments of `signorini run`.
#[derive(clap::Args)]
struct RunArgs {
    /// Suite: `default`, or a suite TOML file (see ci/quick.toml).
    #[arg(long, default_value = "default")]
    suite: String,
    /// Run only these cases (registry names, or suite labels; repeat the flag or separate
    /// with commas), with every solver of the suite unless --solver is given. In the default
    /// suite a name selects the case's defaults and a variant runs by its label
    /// (`--case clutter-rigid`; `signorini list` names the variants).
    #[arg(long, value_delimiter = ',')]
    case: Vec<String>,
    /// Run these solvers (repeat or separate with commas) on the suite's cases; with a suite
    /// file they replace its `solvers = [...]` list (its `[solver_settings.NAME]` still apply).
    #[arg(long, value_delimiter = ',')]
    solver: Vec<String>,
    /// Override a parameter: `KEY=V` or `case.KEY=V` for cases, `solver.KEY=V` for solvers.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Directory for run records (default: runs/<suite name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Number of steps per run whose per-iteration logs are recorded.
    #[arg(long, default_value_t = 8, allow_negative_numbers = true, value_parser = count)]
    logged_steps: usize,
    /// Run only shard I of N (0 <= I < N): the pairs whose index in the suite is I modulo N.
    /// Merge the shards' directories with `signorini merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,
    /// Compute backend: `cpu`, `gpu` or `auto`. Without a usable GPU (no `gpu` feature, no
    /// driver, no device) `gpu`/`auto` fall back to the CPU with one line saying why; the run
    /// record's provenance.backend says which ran.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu", "auto"])]
    backend: String,
    /// Device arithmetic: `f64` (default) or `f32` (GPU backend only).
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    precision: String,
    /// Reuse the records already in the output directory that this code wrote with the same
    /// parameters (same commit of a clean checkout, version, backend, case and solver
    /// parameters); run the other pairs (missing, truncated or different records).
    #[arg(long)]
    resume: bool,
    /// With --resume: also reuse records written by another commit (or with uncommitted
    /// changes).
    #[arg(long, requires = "resume")]
    resume_any_commit: bool,
    /// Gates file (e.g. ci/gates.toml) whose expected failures the summary's matrix marks as
    /// such (`xfail`); it does not change the exit status (`signorini gate` checks a run).
    #[arg(long, value_name = "FILE")]
    gates: Option<PathBuf>,
    #[command(flatten)]
    limits: Limits,
}

/// Largest time limit accepted (`--step-timeout`, `--run-timeout`, `fclib bench --time-limit`):
/// 1e7 s, about 115 days. Larger values are refused rather than turned into deadlines that
/// `Duration`/`Instant` cannot hold.
const MAX_SECONDS: f64 = 1e7;

/// Value parser of a time limit in seconds: a finite number in `0..=MAX_SECONDS` (0: no limit).
fn seconds(s: &str) -> Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| format!("expected seconds in 0..={MAX_SECONDS:e} (0: no limit)"))?;
    if !(x.is_finite() && (0.0..=MAX_SECONDS).contains(&x)) {
        return Err(format!(
            "expected seconds in 0..={MAX_SECONDS:e} (0: no limit; {MAX_SECONDS:e} s is about 115 days)"
        ));
    }
    Ok(x)
}

/// Value parser of a time limit that must be set: seconds in `(0, MAX_SECONDS]`.
fn positive_seconds(s: &str) -> Result<f64, String> {
    let why = || format!("expected seconds above 0 and at most {MAX_SECONDS:e} (about 115 days)");
    let x: f64 = s.trim().parse().map_err(|_| why())?;
    if !(x.is_finite() && x > 0.0 && x <= MAX_SECONDS) {
        return Err(why());
    }
    Ok(x)
}

/// Value parser of a count (`--logged-steps`): a non-negative integer.
fn count(s: &str) -> Result<usize, String> {
    s.trim().parse().map_err(|_| "expected a non-negative integer".to_string())
}

/// Parses the command line. A value refused by a value parser is reported in one line (`error:
/// invalid value 'V' for '--FLAG': why`, exit 2) like every other refusal; other command-line
/// errors (unknown flags, `--help`) are clap's own.
fn parse_cli() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: invalid value").trim_end());
            std::process::exit(2);
        }
        Err(e) => e.exit(),
    }
}

fn main() -> ExitCode {
    let cli = parse_cli();
    // a mistyped input limit is refused, not silently replaced by the default
    if let Err(e) = records::input::env_limit() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::List => {
            out!("{}", list());
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => args.limits.resolve().and_then(|(step_timeout, run_timeout, memory)| {
            let selection = select_backend(&args.backend, &args.precision)?;
            let opts = RunOptions {
                logged_steps: args.logged_steps,
                backend: Some(selection),
                step_timeout,
                run_timeout,
                ..Default::default()
            };
            run(args, opts, memory)
        }),
        Command::Merge { out, dirs, partial } => merge(&out, &dirs, partial),
        Command::Fclib { command } => fclib_command(command),
        Command::Gate { dir, gates } => gate(&dir, &gates),
        Command::BenchCompare { base, new, threshold, fail_on_regression } => {
            bench_compare(&base, &new, threshold, fail_on_regression)
        }
        Command::Report { dir, out, criterion, gates, baseline } => report(dir, out, criterion, gates, baseline),
        Command::DiffRecords { a, b, ignore } => diff_records(&a, &b, &ignore),
        Command::Export { case, set, format: _, out } => export_mjcf(&case, &set, &out),
        Command::Grade { trajectory, case, set, engine, label, out } => {
            grade(&trajectory, &case, &set, &engine, label, &out)
        }
    };
    let stdout_error = stdout::finish();
    match result {
        Ok(code) => match stdout_error {
            // the reader stopped reading (`| head`, `| true`): a normal end, the work is done
            Some(e) if e.kind() == std::io::ErrorKind::BrokenPipe => code,
            Some(e) => {
                eprintln!("error: writing to standard output: {e}");
                ExitCode::from(2)
            }
            None => code,
        },
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Resolves `--backend`/`--precision` into the run's backend (passed to the solvers through
/// `RunOptions::backend` and recorded in the run records' provenance).
fn select_backend(backend: &str, precision: &str) -> Result<kernels::backend::Selection, String> {
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

fn list() -> String {
    let reg = signorini::registry();
    let mut s = String::from("solvers:\n");
    for e in &reg.solvers {
        s += &format!("  {:<16} {}\n", e.name, e.summary);
        s += &format!("  {:<16} capabilities: {:?}\n", "", e.capabilities);
        for (k, v) in &(e.defaults)().0 {
            s += &format!("  {:<16}   solver.{k} = {v}\n", "");
        }
    }
    s += "cases:\n";
    for c in &reg.cases {
        s += &format!("  {:<16} {}\n", c.name(), c.summary());
        for (k, v) in &c.defaults().0 {
            s += &format!("  {:<16}   {k} = {v}\n", "");
        }
        for v in c.variants() {
            let set = v.set.replace('\n', "; ");
            s += &format!("  {:<16}   variant {} ({set}): {}\n", "", v.label(c.name()), v.why);
        }
    }
    s
}

fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>, String> {
    set.iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| format!("--set '{kv}': expected KEY=VALUE"))
        })
        .collect()
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

fn run(args: RunArgs, opts: RunOptions, memory_limit: f64) -> Result<ExitCode, String> {
    let RunArgs { suite, case, solver, set, out, shard, resume, resume_any_commit, gates, .. } = args;
    let resume = match (resume, resume_any_commit) {
        (false, _) => runner::Resume::Off,
        (true, false) => runner::Resume::SameCommit,
        (true, true) => runner::Resume::AnyCommit,
    };
    let shard = shard.as_deref().map(harness::cluster::parse_shard).transpose()?;
    let reg = signorini::registry();
    let gates = gates.map(|g| signorini::load_gates(&g, &reg)).transpose()?;
    for s in &solver {
        reg.find_solver(s).map_err(|e| e.to_string())?;
    }
    let mut suite = if suite == "default" {
        let mut all = Suite::default_suite(&reg);
        for c in &case {
            if !all.pairs.iter().any(|p| &p.label == c) {
                reg.find_case(c).map_err(|e| e.to_string())?;
            }
        }
        // a case name selects its defaults (label = name), a variant its label
        if !case.is_empty() {
            all.pairs.retain(|p| case.contains(&p.label));
        }
        if !solver.is_empty() {
            all.pairs.retain(|p| solver.contains(&p.solver));
        }
        if !(case.is_empty() && solver.is_empty()) {
            all.name = "selection".into();
        }
        all
    } else {
        let text = records::input::read_text(Path::new(&suite)).map_err(|e| {
            let why = e.strip_prefix(&format!("{suite}: ")).unwrap_or(&e);
            format!("suite '{suite}': {why}")
        })?;
        let s = Suite::from_toml_with_solvers(&text, &suite, &reg, (!solver.is_empty()).then_some(solver.as_slice()))?;
        // the file's `name` becomes a folder (runs/NAME): the rules of case labels, which name
        // files (a suite without one is named by its path, as before)
        if let Some(why) = records::input::label_error(&s.name).filter(|_| s.name != suite) {
            return Err(format!(
                "suite '{suite}': name {:?} {why}; a suite name follows the rules of case labels (it names the \
                 output folder runs/NAME)",
                s.name
            ));
        }
        s
    };
    suite.select_cases(&case)?;
    suite.apply_overrides(&reg, &parse_sets(&set)?)?;
    if suite.pairs.is_empty() {
        return Err("nothing to run: the selection matches no (case, solver) pair".into());
    }
    // Every pair resolved once, before anything runs (names, parameters, record names: two pairs
    // must not write the same file).
    let resolved = suite.resolve(&reg)?;
    let names: Vec<String> = resolved.iter().map(|p| p.record_name.clone()).collect();
    let out = out.unwrap_or_else(|| Path::new("runs").join(&suite.name));
    let shard_total = resolved.len();
    let resolved = match shard {
        Some((i, n)) => runner::shard(resolved, i, n),
        None => resolved,
    };
    let pairs = runner::prepare_with(resolved, memory_limit)?;
    records::input::check_writable_dir(&out)?;
    let stale = records::input::remove_stale_tmp(&out);
    if stale > 0 {
        eprintln!("removed {stale} temporary files left in {} by an interrupted run", out.display());
    }
    if let Some((i, n)) = shard {
        // The manifest names the whole suite, so that `merge` knows what a complete set is.
        harness::cluster::Manifest::new(&suite.name, i, n, names).write(&out)?;
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

#[derive(Subcommand)]
enum FclibCommand {
    /// Run CASE with SOLVER up to step STEP and write that step's problem (global form, local
    /// form when small, the solver's answer as /solution) as an FCLIB file.
    Export {
        /// Case.
        #[arg(long)]
        case: String,
        /// Solver whose run leads to the step (and whose answer is stored).
        #[arg(long, default_value = "pgs")]
        solver: String,
        /// Step index (0-based).
        #[arg(long, default_value_t = 0)]
        step: usize,
        /// Parameter overrides, as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write the local form (W, q, mu) when 3 x contacts is at most this.
        #[arg(long, default_value_t = fclib::LOCAL_LIMIT)]
        local_limit: usize,
        /// Write the local form only (no /fclib_global), as LMGC90's dumps are.
        #[arg(long)]
        local_only: bool,
        /// Output file (.hdf5).
        out: PathBuf,
    },
    /// Solve an FCLIB file with a solver; prints our natural-map error and that of the stored
    /// solution and guesses.
    Solve {
        /// FCLIB file.
        file: PathBuf,
        /// Solver.
        #[arg(long, default_value = "pgs")]
        solver: String,
        /// Solver setting overrides `KEY=VALUE` (or `solver.KEY=VALUE`).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Form given to the solver: `global` or `local` (default: global when the file has it).
        #[arg(long)]
        form: Option<String>,
    },
    /// Run solvers on every *.hdf5 under DIR with one protocol (error ||F|| / (1 + ||q||) below
    /// a tolerance, an iteration budget, a time limit) and write one run record per (problem,
    /// solver) into OUT (`signorini report OUT` draws the performance profiles).
    Bench {
        /// Directory of FCLIB files (searched recursively).
        dir: PathBuf,
        /// Solvers, comma-separated (default: every solver that takes FCLIB problems).
        #[arg(long, value_delimiter = ',')]
        solver: Vec<String>,
        /// Tolerance on ||F|| / (1 + ||q||); also each solver's `tolerance` setting.
        #[arg(long, default_value_t = 1e-8, allow_negative_numbers = true)]
        tolerance: f64,
        /// Iteration budget (each solver's outer-iteration setting).
        #[arg(long, default_value_t = 1000)]
        max_iterations: usize,
        /// Time limit per (problem, solver), seconds (more than 0, at most 1e7: about 115 days).
        #[arg(long, default_value_t = 10.0, allow_negative_numbers = true, value_parser = positive_seconds)]
        time_limit: f64,
        /// Form given to the solvers: `global` or `local` (default: global when the file has it).
        #[arg(long)]
        form: Option<String>,
        /// Output directory of the run records.
        #[arg(long, default_value = "runs/fclib")]
        out: PathBuf,
    },
}

fn parse_form(form: &Option<String>) -> Result<Option<fclib::Form>, String> {
    form.as_deref().map(|f| f.parse::<fclib::Form>().map_err(|e| format!("--form: {e}"))).transpose()
}

fn fclib_bench(
    dir: &Path,
    solvers: &[String],
    protocol: &fclib::bench::Protocol,
    out: &Path,
) -> Result<ExitCode, String> {
    let reg = signorini::registry();
    let p = protocol;
    if !(p.tolerance.is_finite() && p.tolerance > 0.0) {
        return Err(format!("--tolerance {}: must be a positive number", p.tolerance));
    }
    positive_seconds(&p.time_limit_s.to_string()).map_err(|e| format!("--time-limit {}: {e}", p.time_limit_s))?;
    harness::check_budget("--max-iterations", p.max_iterations).map_err(|e| format!("{}: {}", e.field, e.reason))?;
    let entries: Vec<&harness::SolverEntry> = if solvers.is_empty() {
        reg.solvers.iter().filter(|e| fclib::bench::accepts(e).is_ok()).collect()
    } else {
        let mut v = vec![];
        for s in solvers {
            let e = reg.find_solver(s).map_err(|e| e.to_string())?;
            fclib::bench::accepts(e)?;
            v.push(e);
        }
        v
    };
    let files = fclib::bench::files(dir)?;
    if files.is_empty() {
        return Err(format!("{}: no *.hdf5 files", dir.display()));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let provenance = records::Provenance::collect();
    let (mut solved, mut pairs, mut unreadable) = (0, 0, 0);
    for file in &files {
        let prob = match fclib::read_as(file, p.form) {
            Ok(prob) => prob,
            Err(e) => {
                outln!("unreadable: {e}");
                unreadable += 1;
                continue;
            }
        };
        for e in &entries {
            let rec = fclib::bench::run_one(&prob, file, e, protocol, &provenance)?;
            rec.write_atomic(out).map_err(|err| format!("{}: {err}", out.display()))?;
            pairs += 1;
            let m = |k: &str| rec.summary.metrics.get(k).map(|s| s.last);
            let ok = rec.status == RunStatus::Ok && rec.summary.unconverged_steps == 0;
            solved += usize::from(ok);
            match rec.status {
                RunStatus::Ok => outln!(
                    "{:<40} {:<11} {:<8} error {:.2e}  {:>6} it  {:.3e} s{}",
                    rec.case.label,
                    e.name,
                    if ok { "solved" } else { "unsolved" },
                    m("fclib_error").unwrap_or(f64::NAN),
                    rec.summary.iterations_per_step.max,
                    rec.summary.stage_times.solve_s,
                    m("model_residual").map(|r| format!("  own model residual {r:.2e}")).unwrap_or_default()
                ),
                _ => outln!(
                    "{:<40} {:<11} {:<8} {}",
                    rec.case.label,
                    e.name,
                    if rec.status == RunStatus::Failed { "failed" } else { "skipped" },
                    rec.reason.as_deref().unwrap_or("")
                ),
            }
        }
    }
    outln!(
        "{} files ({unreadable} unreadable) x {} solvers: {pairs} pairs, {solved} reached ||F||/(1+||q||) <= {:e}; \
         records in {}",
        files.len(),
        entries.len(),
        p.tolerance,
        out.display()
    );
    Ok(if unreadable > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn fclib_command(command: FclibCommand) -> Result<ExitCode, String> {
    let reg = signorini::registry();
    match command {
        FclibCommand::Export { case, solver, step, set, local_limit, local_only, out } => {
            // before the run that leads to the step (fclib::write checks again)
            if let Some(why) = records::input::not_replaceable(&out) {
                return Err(format!("{}: {why}", out.display()));
            }
            let mut suite = Suite::single(&case, &solver);
            reg.find_case(&case).map_err(|e| e.to_string())?;
            reg.find_solver(&solver).map_err(|e| e.to_string())?;
            suite.apply_overrides(&reg, &parse_sets(&set)?)?;
            let pair = runner::prepare(&reg, &suite)?.remove(0);
            if let Some(why) = &pair.skip {
                return Err(why.clone());
            }
            let mut s = reg
                .find_solver(&solver)
                .map_err(|e| e.to_string())?
                .build(&pair.solver_params)
                .map_err(|e| e.to_string())?;
            let info = fclib::Info {
                title: format!("signorini {case} step {step}"),
                description: format!(
                    "case {case} (params hash {}), reached with solver {solver}; solution = {solver}'s answer",
                    pair.case_params.hash()
                ),
                math_info: "rigid Coulomb NCP; f = M v* (free momentum), w = (phi0/dt, 0, 0), H = J^T; \
                            compliance of compliant contacts not included"
                    .into(),
            };
            let mut prob = fclib::export_step(&pair.scenario, s.as_mut(), step, local_limit, info)?;
            if local_only {
                if prob.local.is_none() {
                    return Err(format!(
                        "--local-only: {} contacts, 3 x contacts is above --local-limit {local_limit}",
                        prob.global.nc()
                    ));
                }
                prob.form = fclib::Form::Local;
            }
            fclib::write(&out, &prob).map_err(|e| e.to_string())?;
            outln!(
                "wrote {}: {} DOFs, {} contacts{}",
                out.display(),
                prob.global.nv(),
                prob.global.nc(),
                if prob.local.is_some() { ", local form included" } else { "" }
            );
            Ok(ExitCode::SUCCESS)
        }
        FclibCommand::Bench { dir, solver, tolerance, max_iterations, time_limit, form, out } => {
            let protocol = fclib::bench::Protocol {
                tolerance,
                max_iterations,
                time_limit_s: time_limit,
                form: parse_form(&form)?,
            };
            fclib_bench(&dir, &solver, &protocol, &out)
        }
        FclibCommand::Solve { file, solver, set, form } => {
            let entry = reg.find_solver(&solver).map_err(|e| e.to_string())?;
            fclib::bench::accepts(entry)?;
            let mut params = (entry.defaults)();
            for (k, v) in parse_sets(&set)? {
                let k = k.strip_prefix("solver.").unwrap_or(&k).to_string();
                params.set(&k, &v, &format!("solver '{solver}'")).map_err(|e| e.to_string())?;
            }
            let mut s = entry.build(&params).map_err(|e| e.to_string())?;
            let prob = fclib::read_as(&file, parse_form(&form)?).map_err(|e| e.to_string())?;
            let rep = fclib::solve(&prob, s.as_mut()).map_err(|e| format!("{}: {e}", file.display()))?;
            outln!(
                "{}: {} form, {} DOFs, {} contacts{}",
                file.display(),
                prob.form,
                prob.global.nv(),
                prob.global.nc(),
                if prob.form == fclib::Form::Local {
                    format!(" (Cholesky view of W, regularisation epsilon = {:.1e})", prob.regularisation)
                } else {
                    String::new()
                }
            );
            if entry.model.is_regularised() {
                outln!(
                    "note: {solver} solves a regularised (compliant) model, not the rigid Coulomb NCP graded below; \
                     its own residual: {}",
                    entry
                        .model
                        .own_residual(&rep.log)
                        .map(|r| format!("{r:.3e}"))
                        .unwrap_or_else(|| "not in its log".into())
                );
            }
            outln!(
                "{solver}: status {:?}, {} iterations, {:.3e} s, natural-map error (Siconos, /||q||) {:.3e}",
                rep.status,
                rep.iterations,
                rep.wall_s,
                rep.error
            );
            match rep.stored_error {
                Some(e) => outln!("stored solution: natural-map error {e:.3e}"),
                None => outln!("stored solution: none"),
            }
            for (k, e) in rep.guess_errors.iter().enumerate() {
                outln!("guess {}: natural-map error {e:.3e}", k + 1);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn merge(out: &Path, dirs: &[PathBuf], partial: bool) -> Result<ExitCode, String> {
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

fn gate(dir: &Path, gates: &Path) -> Result<ExitCode, String> {
    let gates = signorini::load_gates(gates, &signorini::registry())?;
    let rep = reports::gate::check_dir(dir, &gates)?;
    out!("{}", rep.table());
    Ok(if rep.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn report(
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
    let rep = reports::write(&opts)?;
    outln!(
        "report of {} records ({} figures): {} and {}",
        rep.records.len(),
        rep.figures.len(),
        opts.out_dir.join("index.html").display(),
        opts.out_dir.join("summary.md").display()
    );
    Ok(ExitCode::SUCCESS)
}

fn diff_records(a: &Path, b: &Path, ignore: &[String]) -> Result<ExitCode, String> {
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

fn bench_compare(base: &Path, new: &Path, threshold: f64, fail_on_regression: bool) -> Result<ExitCode, String> {
    if !(threshold.is_finite() && threshold >= 0.0) {
        return Err(format!("--threshold must be a non-negative number, got {threshold}"));
    }
    let rows = reports::compare::compare_sources(
        &reports::compare::read_source(base)?,
        &reports::compare::read_source(new)?,
        threshold,
    )?;
    out!("{}", reports::compare::table(&rows));
    let regressed = rows.iter().any(|r| r.beyond_noise && r.ratio.is_some_and(|q| q > 1.0));
    Ok(if fail_on_regression && regressed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Resolves a case with `--set` overrides: (case, full parameters, built and validated scene).
fn build_case(reg: &harness::Registry, case: &str, set: &[String]) -> Result<Box<dyn harness::PreparedCase>, String> {
    let c = reg.find_case(case).map_err(|e| e.to_string())?;
    let mut params = c.defaults();
    for (k, v) in parse_sets(set)? {
        let k = k.strip_prefix("case.").unwrap_or(&k).to_string();
        params.set(&k, &v, &format!("case '{case}'")).map_err(|e| e.to_string())?;
    }
    let prepared = c.prepare(&params).map_err(|e| format!("case '{case}': {e}"))?;
    prepared.scenario().world.validate().map_err(|e| format!("case '{case}': {e}"))?;
    Ok(prepared)
}

fn export_mjcf(case: &str, set: &[String], out: &Path) -> Result<ExitCode, String> {
    let reg = signorini::registry();
    let prepared = build_case(&reg, case, set)?;
    let export = reference::export(case, &prepared.params_json(), prepared.scenario())?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let (xml, json) = reference::mjcf::write(&export, out).map_err(|e| format!("{}: {e}", out.display()))?;
    outln!(
        "wrote {} and {}: {} bodies, {} geoms, {} steps of {} s",
        xml.display(),
        json.display(),
        export.sidecar.bodies.len(),
        export.sidecar.geoms.len(),
        export.sidecar.steps,
        export.sidecar.dt
    );
    for n in &export.sidecar.notes {
        outln!("note: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

fn grade(
    trajectory: &Path,
    case: &str,
    set: &[String],
    engine: &str,
    label: Option<String>,
    out: &Path,
) -> Result<ExitCode, String> {
    // the label names the record file, as in `run`
    let label = label.unwrap_or_else(|| case.to_string());
    if let Some(why) = records::input::label_error(&label) {
        return Err(format!("--label {label:?} {why}"));
    }
    let reg = signorini::registry();
    let prepared = build_case(&reg, case, set)?;
    let text = records::input::read_text(trajectory)?;
    let t = reference::Trajectory::parse(&text).map_err(|e| format!("{}: {e}", trajectory.display()))?;
    if t.engine.name != engine {
        return Err(format!("{}: trajectory is from engine '{}', not '{engine}'", trajectory.display(), t.engine.name));
    }
    t.check(case, &prepared.params_json(), prepared.scenario())
        .map_err(|e| format!("{}: {e}", trajectory.display()))?;
    let record = reference::grade(prepared.as_ref(), &label, &t, records::Provenance::collect());
    // A reference record is named like a solver's (LABEL__ENGINE.json): it may replace an earlier
    // grade of the same engine, never a solver's own record (`--engine pgs --out RUNDIR`).
    let target = out.join(record.file_name());
    if std::fs::symlink_metadata(&target).is_ok() {
        let old = records::RunRecord::read(&target).map_err(|e| format!("{e}; refusing to replace it"))?;
        if !(old.is_reference() && old.solver.name == engine) {
            return Err(format!(
                "{}: exists and is the record of solver '{}', not a reference record of engine '{engine}'; refusing \
                 to replace it (grade into another --out)",
                target.display(),
                old.solver.name
            ));
        }
    }
    let path = record.write_atomic(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (name, check) in &record.summary.oracle {
        outln!(
            "{label} / {engine}: {name} = {:.4e} (expected {:.4e}, error {:.3e}, tolerance {:.3e}) {}",
            check.measured,
            check.expected,
            check.error,
            check.tolerance,
            if check.pass { "pass" } else { "FAIL" }
        );
    }
    outln!("wrote {}", path.display());
    Ok(ExitCode::SUCCESS)
}
