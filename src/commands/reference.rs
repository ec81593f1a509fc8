//! `signorini export` (a case as MJCF for the reference engines) and `signorini grade` (a foreign
//! trajectory graded by the case's oracle into a run record).

use super::parse_sets;
use std::path::Path;
use std::process::ExitCode;

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

pub(crate) fn export_mjcf(case: &str, set: &[String], out: &Path) -> Result<ExitCode, String> {
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

pub(crate) fn grade(
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
    // the replay sidecar first, as `run` writes it (the record never names motion that is not there)
    let trace = reference::trace_of(&t, prepared.scenario());
    let replay = reference::replay_of(&t, prepared.scenario(), &trace, &label);
    replay.validate().map_err(|why| format!("{}: its replay could not be shown: {why}", trajectory.display()))?;
    let path = harness::runner::write_with_sidecar(&record, Some(&replay), out)
        .map_err(|e| format!("{}: {e}", out.display()))?;
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
