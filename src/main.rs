//! `signorini`: run contact solvers on canonical cases, measure them the same way, gate them.

//!
//! One module per group of subcommands: `cli` (the command line), `commands::run`,
//! `commands::fclib`, `commands::records` (merge, gate, report, diff-records, bench-compare),
//! `commands::reference` (export, grade), `commands::list`.

use harness::stepper::RunOptions;
use std::process::ExitCode;

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
        $crate::stdout::write(format_args!($($t)*))
    };
}

/// `println!` through [`stdout::write`].
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::stdout::write(format_args!("{}\n", format_args!($($t)*)))
    };
}

mod cli;
mod commands;

fn main() -> ExitCode {
    let cli = cli::parse_cli();
    // a mistyped input limit is refused, not silently replaced by the default
    if let Err(e) = records::input::env_limit() {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        cli::Command::List => {
            out!("{}", commands::list::list());
            Ok(ExitCode::SUCCESS)
        }
        cli::Command::Run(args) => args.limits.resolve().and_then(|(step_timeout, run_timeout, memory)| {
            let selection = commands::run::select_backend(&args.backend, &args.precision)?;
            let opts = RunOptions {
                logged_steps: args.logged_steps,
                trajectory: args.trajectory,
                backend: Some(selection),
                step_timeout,
                run_timeout,
                ..Default::default()
            };
            commands::run::run(args, opts, memory)
        }),
        cli::Command::Merge { out, dirs, partial } => commands::records::merge(&out, &dirs, partial),
        cli::Command::Fclib { command } => commands::fclib::fclib_command(command),
        cli::Command::Gate { dir, gates } => commands::records::gate(&dir, &gates),
        cli::Command::BenchCompare { base, new, threshold, fail_on_regression } => {
            commands::records::bench_compare(&base, &new, threshold, fail_on_regression)
        }
        cli::Command::Report { dir, out, criterion, gates, baseline } => {
            commands::records::report(dir, out, criterion, gates, baseline)
        }
        cli::Command::View { dir, check: true, .. } => commands::records::check_replays(&dir),
        cli::Command::View { dir, case, solver, out, .. } => {
            commands::records::view(&dir, case.as_deref(), &solver, out)
        }
        cli::Command::DiffRecords { a, b, ignore } => commands::records::diff_records(&a, &b, &ignore),
        cli::Command::Export { case, set, format: _, out } => commands::reference::export_mjcf(&case, &set, &out),
        cli::Command::Grade { trajectory, case, set, engine, label, out } => {
            commands::reference::grade(&trajectory, &case, &set, &engine, label, &out)
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
