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

/// Writes `prob` with `answer` as its stored solution to `path` (atomically).
fn write_answer(path: &Path, prob: &fclib::FclibProblem, answer: fclib::Solution) -> Result<(), String> {
    let mut with = prob.clone();
    with.solution = Some(answer);
    fclib::write(path, &with).map_err(|e| e.to_string())
}

fn fclib_bench(
    dir: &Path,
    solvers: &[String],
    protocol: &fclib::bench::Protocol,
    out: &Path,
    write_solutions: bool,
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
        let prepared = match fclib::Prepared::new(&prob) {
            Ok(p) if p.condense != protocol.condense => p.keeping_global(),
            Ok(p) => p,
            Err(e) => {
                outln!("ungradable: {}: {e}", file.display());
                unreadable += 1;
                continue;
            }
        };
        for e in &entries {
            let fclib::bench::Outcome { record: rec, answer } =
                fclib::bench::run_one(&prepared, file, e, protocol, &provenance)?;
            rec.write_atomic(out).map_err(|err| format!("{}: {err}", out.display()))?;
            if let (true, Some(answer)) = (write_solutions, answer) {
                let dir = out.join("solutions");
                std::fs::create_dir_all(&dir).map_err(|err| format!("{}: {err}", dir.display()))?;
                write_answer(&dir.join(format!("{}__{}.hdf5", rec.case.label, e.name)), &prob, answer)?;
            }
            pairs += 1;
            let m = |k: &str| rec.summary.metrics.get(k).map(|s| s.last);
            let ok = rec.status == RunStatus::Ok && rec.summary.unconverged_steps == 0;
            solved += usize::from(ok);
            match rec.status {
                RunStatus::Ok => outln!(
                    "{:<40} {:<11} {:<8} error {:.2e}  {:>6} it  {:.3e} s{}{}",
                    rec.case.label,
                    e.name,
                    if ok { "solved" } else { "unsolved" },
                    m("fclib_error").unwrap_or(f64::NAN),
                    rec.summary.iterations_per_step.max,
                    rec.summary.stage_times.solve_s,
                    m("model_residual").map(|r| format!("  own model residual {r:.2e}")).unwrap_or_default(),
                    rec.reason.as_deref().map(|r| format!("  ({r})")).unwrap_or_default()
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
        "{} files ({unreadable} unreadable) x {} solvers: {pairs} pairs, {solved} reached \
         ||F||/max(||q||,||r||,||u||) <= {:e}; records in {}",
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
            let dofs = prob.nv().unwrap_or(0);
            if local_only {
                if prob.local.is_none() {
                    return Err(format!(
                        "--local-only: {} contacts, 3 x contacts is above --local-limit {local_limit}",
                        prob.nc()
                    ));
                }
                prob.form = fclib::Form::Local;
                prob.global = None;
                // a stored v belongs to the global form only
                if let Some(s) = &mut prob.solution {
                    s.v.clear();
                }
            }
            fclib::write(&out, &prob).map_err(|e| e.to_string())?;
            outln!(
                "wrote {}: {} DOFs, {} contacts{}",
                out.display(),
                dofs,
                prob.nc(),
                if prob.local.is_some() { ", local form included" } else { "" }
            );
            Ok(ExitCode::SUCCESS)
        }
        FclibCommand::Bench {
            dir,
            solver,
            tolerance,
            max_iterations,
            time_limit,
            form,
            out,
            write_solutions,
            stop,
            keep_global,
        } => {
            let protocol = fclib::bench::Protocol {
                tolerance,
                max_iterations,
                time_limit_s: time_limit,
                form: parse_form(&form)?,
                stop: stop.parse().map_err(|e| format!("--stop {e}"))?,
                condense: !keep_global,
            };
            fclib_bench(&dir, &solver, &protocol, &out, write_solutions)
        }
        FclibCommand::Grade { problem, answer, form } => {
            let prob = fclib::read_as(&problem, parse_form(&form)?).map_err(|e| e.to_string())?;
            let answer = match &answer {
                Some(a) => fclib::read_solution(a, prob.nc()).map_err(|e| e.to_string())?,
                None => prob.solution.clone().ok_or_else(|| format!("{}: no stored solution", problem.display()))?,
            };
            let grader = fclib::Grader::new(&prob).map_err(|e| format!("{}: {e}", problem.display()))?;
            let g = grader.grade(&answer.r);
            let json = serde_json::json!({
                "error": g.error,
                "natmap_1q": g.error_1q,
                "natmap_rel_q": g.error_rel_q,
                "residual": g.residual,
                "contacts": prob.nc(),
                "form": prob.form.to_string(),
            });
            outln!("{json}");
            Ok(ExitCode::SUCCESS)
        }
        FclibCommand::Solve { file, solver, set, form, write_solution, keep_global } => {
            if let Some(w) = &write_solution {
                if let Some(why) = records::input::not_replaceable(w) {
                    return Err(format!("{}: {why}", w.display()));
                }
            }
            let entry = reg.find_solver(&solver).map_err(|e| e.to_string())?;
            fclib::bench::accepts(entry)?;
            let mut params = (entry.defaults)();
            for (k, v) in parse_sets(&set)? {
                let k = k.strip_prefix("solver.").unwrap_or(&k).to_string();
                params.set(&k, &v, &format!("solver '{solver}'")).map_err(|e| e.to_string())?;
            }
            let mut s = entry.build(&params).map_err(|e| e.to_string())?;
            let prob = fclib::read_as(&file, parse_form(&form)?).map_err(|e| e.to_string())?;
            let prepared = fclib::Prepared::new(&prob).map_err(|e| format!("{}: {e}", file.display()))?;
            let prepared = if keep_global { prepared.keeping_global() } else { prepared };
            let rep = prepared
                .solve(s.as_mut(), entry.capabilities.delassus_form, None)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            outln!(
                "{}: {} form, {} contacts{}; given to {solver} as the {}",
                file.display(),
                prob.form,
                prob.nc(),
                prob.nv().map(|n| format!(", {n} DOFs")).unwrap_or_default(),
                rep.given
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
            let g = &rep.grade;
            outln!(
                "{solver}: status {:?} (its claim), {} iterations, {:.3e} s; graded from r: error {:.3e} \
                 (||F||/max(||q||,||r||,||u||)), ||F||/(1+||q||) {:.3e}, ||F||/||q|| {:.3e}{}",
                rep.status,
                rep.iterations,
                rep.wall_s,
                g.error,
                g.error_1q,
                g.error_rel_q,
                rep.consistency
                    .map(|c| format!(", ||Mv-Hr-f||/max(||f||,||Hr||) of its v {c:.3e}"))
                    .unwrap_or_default()
            );
            match &rep.stored {
                Some(s) => outln!("stored solution: error {:.3e}", s.error),
                None => outln!("stored solution: none (absent, or all zeros)"),
            }
            for (k, e) in rep.guesses.iter().enumerate() {
                match e {
                    Some(e) => outln!("guess {}: error {:.3e}", k + 1, e.error),
                    None => outln!("guess {}: empty (absent, or all zeros)", k + 1),
                }
            }
            if let Some(w) = &write_solution {
                write_answer(w, &prob, fclib::answer(&rep))?;
                outln!("wrote {} (the problem, with this answer as /solution)", w.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
