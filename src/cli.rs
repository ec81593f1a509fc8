//! The command line: subcommands, their arguments and the value parsers that bound them.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "signorini", version, about = "A workbench for frictional-contact solvers")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// Merge run directories (e.g. the shards of a cluster run) into OUT, each record with its
    /// trajectory sidecar. Refuses records of different code versions, of the same pair with
    /// different parameters, or an incomplete set of shards (their manifests name every pair of
    /// the suite).
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
    /// Write the replay page of a run directory (the recorded motion of one case, solvers side by
    /// side, from the trajectory sidecars) and print its path: `<OUT>/replay/<case>.html`.
    View {
        /// Run directory (records with their `.traj.json.gz` sidecars).
        dir: PathBuf,
        /// Case label (default: every case label with a sidecar, one page each).
        #[arg(long)]
        case: Option<String>,
        /// Only these solvers (repeat or separate with commas).
        #[arg(long, value_delimiter = ',')]
        solver: Vec<String>,
        /// Output directory (default: DIR).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write nothing: check that every record of DIR that ran a step has a sidecar the page
        /// can show (exit 1 naming each problem).
        #[arg(long, conflicts_with_all = ["case", "solver", "out"])]
        check: bool,
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
pub(crate) struct Limits {
    /// Wall-time limit of one step, in seconds (0: none; at most 1e7, about 115 days).
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS", allow_negative_numbers = true, value_parser = seconds)]
    pub(crate) step_timeout: f64,
    /// Wall-time limit of one pair's run, in seconds (0: none; at most 1e7, about 115 days).
    #[arg(long, default_value_t = 3600.0, value_name = "SECONDS", allow_negative_numbers = true, value_parser = seconds)]
    pub(crate) run_timeout: f64,
    /// Memory one pair may use, e.g. `8G` or `512M` (default: the machine's available memory).
    /// Pairs whose estimate exceeds it are refused before anything runs, naming the parameters.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub(crate) max_memory: Option<String>,
}

impl Limits {
    /// The limits as run options (timeouts) and a memory limit in bytes.
    pub(crate) fn resolve(&self) -> Result<(Option<Duration>, Option<Duration>, f64), String> {
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
pub(crate) struct RunArgs {
    /// Suite: `default`, or a suite TOML file (see ci/quick.toml).
    #[arg(long, default_value = "default")]
    pub(crate) suite: String,
    /// Run only these cases (registry names, or suite labels; repeat the flag or separate
    /// with commas), with every solver of the suite unless --solver is given. In the default
    /// suite a name selects the case's defaults and a variant runs by its label
    /// (`--case clutter-rigid`; `signorini list` names the variants).
    #[arg(long, value_delimiter = ',')]
    pub(crate) case: Vec<String>,
    /// Run these solvers (repeat or separate with commas) on the suite's cases; with a suite
    /// file they replace its `solvers = [...]` list (its `[solver_settings.NAME]` still apply).
    #[arg(long, value_delimiter = ',')]
    pub(crate) solver: Vec<String>,
    /// Override a parameter: `KEY=V` or `case.KEY=V` for cases, `solver.KEY=V` for solvers.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Directory for run records (default: runs/<suite name>).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Number of steps per run whose per-iteration logs are recorded.
    #[arg(long, default_value_t = 8, allow_negative_numbers = true, value_parser = count)]
    pub(crate) logged_steps: usize,
    /// Trajectory sidecar for the replay page (`<record>.traj.json.gz` beside each record):
    /// `auto` (60 frames per simulated second, at most 1200 frames), `stride N` (every N-th
    /// step), or `off`.
    #[arg(long, default_value = "auto", value_name = "off|auto|stride N", value_parser = harness::trajectory::TrajectoryOption::parse)]
    pub(crate) trajectory: harness::trajectory::TrajectoryOption,
    /// Run only shard I of N (0 <= I < N): the pairs whose index in the suite is I modulo N.
    /// Merge the shards' directories with `signorini merge`.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<String>,
    /// Compute backend: `cpu`, `gpu` or `auto`. Without a usable GPU (no `gpu` feature, no
    /// driver, no device) `gpu`/`auto` fall back to the CPU with one line saying why; the run
    /// record's provenance.backend says which ran.
    #[arg(long, default_value = "cpu", value_parser = ["cpu", "gpu", "auto"])]
    pub(crate) backend: String,
    /// Device arithmetic: `f64` (default) or `f32` (GPU backend only).
    #[arg(long, default_value = "f64", value_parser = ["f64", "f32"])]
    pub(crate) precision: String,
    /// Reuse the records already in the output directory that this code wrote with the same
    /// parameters (same commit of a clean checkout, version, backend, case and solver
    /// parameters); run the other pairs (missing, truncated or different records).
    #[arg(long)]
    pub(crate) resume: bool,
    /// With --resume: also reuse records written by another commit (or with uncommitted
    /// changes).
    #[arg(long, requires = "resume")]
    pub(crate) resume_any_commit: bool,
    /// Replace records in the output directory that another run wrote under the same file name
    /// with other case parameters, for another case, or by `grade` (without it, or --resume, such
    /// a run is refused before anything runs, naming the file and both parameter hashes).
    #[arg(long)]
    pub(crate) overwrite: bool,
    /// Gates file (e.g. ci/gates.toml) whose expected failures the summary's matrix marks as
    /// such (`xfail`); it does not change the exit status (`signorini gate` checks a run).
    #[arg(long, value_name = "FILE")]
    pub(crate) gates: Option<PathBuf>,
    /// Largest number of (case, solver) pairs a suite may hold (counted from the suite file before
    /// its [[grid]] entries are expanded; a larger suite is refused at once). Every pair is resolved
    /// and prepared before the first runs, about 40 KB each for the small cases (more for meshed
    /// scenes): the default 100000 keeps that phase near 4 GB.
    #[arg(long, default_value_t = harness::runner::DEFAULT_MAX_PAIRS, value_name = "N", allow_negative_numbers = true, value_parser = positive_count)]
    pub(crate) max_pairs: usize,
    /// Equal-accuracy mode: the harness stops every solver, on every step, at the first iterate
    /// whose yardstick (the natural map of its contact model relative to the free contact
    /// velocity; the momentum error for a regularised model) is at most EPS, or at its budget; the
    /// solver's own tolerance is set out of reach. Overrides the suite file's `accuracy` key.
    /// The records, the matrix and the profiles then compare the time to EPS (docs/equal-accuracy.md).
    #[arg(long, value_name = "EPS", allow_negative_numbers = true, value_parser = accuracy)]
    pub(crate) accuracy: Option<f64>,
    #[command(flatten)]
    pub(crate) limits: Limits,
}

/// Largest time limit accepted (`--step-timeout`, `--run-timeout`, `fclib bench --time-limit`):
/// 1e7 s, about 115 days. Larger values are refused rather than turned into deadlines that
/// `Duration`/`Instant` cannot hold.
pub(crate) const MAX_SECONDS: f64 = 1e7;

/// Value parser of a time limit in seconds: a finite number in `0..=MAX_SECONDS` (0: no limit).
pub(crate) fn seconds(s: &str) -> Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| format!("expected seconds in 0..={MAX_SECONDS:e} (0: no limit)"))?;
    if !(x.is_finite() && (0.0..=MAX_SECONDS).contains(&x)) {
        return Err(format!(
            "expected seconds in 0..={MAX_SECONDS:e} (0: no limit; {MAX_SECONDS:e} s is about 115 days)"
        ));
    }
    Ok(x)
}

/// Value parser of a time limit that must be set: seconds in `(0, MAX_SECONDS]`.
pub(crate) fn positive_seconds(s: &str) -> Result<f64, String> {
    let why = || format!("expected seconds above 0 and at most {MAX_SECONDS:e} (about 115 days)");
    let x: f64 = s.trim().parse().map_err(|_| why())?;
    if !(x.is_finite() && x > 0.0 && x <= MAX_SECONDS) {
        return Err(why());
    }
    Ok(x)
}

/// Value parser of a count (`--logged-steps`): a non-negative integer.
pub(crate) fn count(s: &str) -> Result<usize, String> {
    s.trim().parse().map_err(|_| "expected a non-negative integer".to_string())
}

/// Value parser of an accuracy (`--accuracy`): a finite number above 0.
pub(crate) fn accuracy(s: &str) -> Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| "expected a finite number above 0".to_string())?;
    harness::accuracy::check_eps(x).map_err(|_| "expected a finite number above 0".to_string())
}

/// Value parser of a positive count (`--max-pairs`).
pub(crate) fn positive_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a whole number from 1 to {}", usize::MAX)),
    }
}

/// Parses the command line. A value refused by a value parser is reported in one line (`error:
/// invalid value 'V' for '--FLAG': why`, exit 2) like every other refusal; other command-line
/// errors (unknown flags, `--help`) are clap's own.
pub(crate) fn parse_cli() -> Cli {
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

#[derive(Subcommand)]
pub(crate) enum FclibCommand {
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
        /// Give a global problem to a solver that works on W (pgs, nsn) in its global form
        /// (default: condensed to W = H^T M^-1 H with M as written).
        #[arg(long)]
        keep_global: bool,
        /// Write the problem with the solver's answer as its /solution (r, u, and v for the
        /// global form) to this FCLIB file (atomically), for anyone to grade.
        #[arg(long, value_name = "OUT.hdf5")]
        write_solution: Option<PathBuf>,
    },
    /// Grade an answer to an FCLIB problem with the harness's grader (from its r alone): the
    /// /solution of ANSWER (any HDF5 file with /solution/r), or the problem's own stored
    /// solution. Prints one JSON object: error (Siconos's ||F||/max(||q||,||r||,||u||)),
    /// natmap_1q, natmap_rel_q, residual, contacts, form.
    Grade {
        /// FCLIB file of the problem.
        problem: PathBuf,
        /// File holding the answer as /solution (default: the problem file's own).
        #[arg(long)]
        answer: Option<PathBuf>,
        /// Form graded: `global` or `local` (default: global when the file has it).
        #[arg(long)]
        form: Option<String>,
    },
    /// Run solvers on every *.hdf5 under DIR with one protocol (Siconos's error ||F|| /
    /// max(||q||, ||r||, ||u||), computed by the harness from the answer's r, below a tolerance,
    /// an iteration budget, a time limit) and write one run record per (problem, solver) into OUT
    /// (`signorini report OUT` draws the performance profiles).
    Bench {
        /// Directory of FCLIB files (searched recursively).
        dir: PathBuf,
        /// Solvers, comma-separated (default: every solver that takes FCLIB problems).
        #[arg(long, value_delimiter = ',')]
        solver: Vec<String>,
        /// Tolerance on Siconos's error ||F|| / max(||q||, ||r||, ||u||); also each solver's
        /// stopping tolerance (the setting its definition names).
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
        /// What stops a solver of the rigid problem: `harness` (equal accuracy: the harness grades
        /// every iterate and stops it once the error meets the tolerance; its own tolerance is set
        /// out of reach) or `solver` (its own criterion, its tolerance the protocol's).
        #[arg(long, default_value = "harness")]
        stop: String,
        /// Give global problems to the solvers that work on W (pgs, nsn) in their global form
        /// (default: condensed to W = H^T M^-1 H with M as written, as Siconos's local solvers
        /// get them; a non-symmetric M is condensed either way).
        #[arg(long)]
        keep_global: bool,
        /// Also write each answer as an FCLIB file (the problem with the answer as /solution) to
        /// OUT/solutions/PROBLEM__SOLVER.hdf5.
        #[arg(long)]
        write_solutions: bool,
    },
}
