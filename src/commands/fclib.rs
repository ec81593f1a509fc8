//! `signorini fclib`: export a step of a run, solve a file, bench solvers on a directory.

use super::parse_sets;
use crate::cli::{positive_seconds, FclibCommand};
use harness::runner::{self, Suite};
use records::RunStatus;
use std::path::Path;
use std::process::ExitCode;

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

pub(crate) fn fclib_command(command: FclibCommand) -> Result<ExitCode, String> {
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
