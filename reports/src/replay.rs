//! The replay pages: one HTML page per case label of a run directory that shows the recorded
//! motion of every solver that ran it side by side, from the trajectory sidecars
//! ([`records::trajectory`]) beside the records.
//!
//! Layout under the output directory (the report's, or the run directory for `signorini view`):
//! `replay/<label>.html` (the page), `replay/data/<sidecar>.js` (the sidecar's gzip bytes in
//! base64, pushed onto `window.SIGNORINI_REPLAY`: a `<script>` works from `file://`, where
//! `fetch` of a sibling file does not), `assets/replay.js` (the viewer) and
//! `assets/three/three.min.js` with its `LICENSE` (three.js r159, its last build usable without
//! ES modules, which Chromium does not load from `file://`). three.js is not in the repository:
//! `ci/fetch-three.sh` fetches the pinned npm package into `reports/assets/vendor/three/`
//! ([`three_dir`]); without it the pages are written and say what is missing.

use records::trajectory::SIDECAR_SUFFIX;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The viewer script.
const VIEWER_JS: &str = include_str!("../assets/replay.js");

/// The pinned three.js version [`three_dir`] holds (`ci/fetch-three.sh`).
pub const THREE_VERSION: &str = "0.159.0";

/// Why replay pages could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// File system error.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Nothing to show.
    #[error("{what}")]
    Nothing {
        /// What was asked and what exists.
        what: String,
    },
    /// The run directory could not be listed.
    #[error(transparent)]
    Input(#[from] records::input::InputError),
    /// A record could not be read.
    #[error(transparent)]
    Record(#[from] records::RecordError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReplayError + '_ {
    move |source| ReplayError::Io { path: path.to_path_buf(), source }
}

/// One solver's sidecar of a case label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidecar {
    /// Solver (with its settings tag, `pgs-1a2b3c4d`, when it ran with other settings).
    pub solver: String,
    /// The sidecar file.
    pub path: PathBuf,
}

/// The sidecars of `run_dir` by case label (from their file names, `<label>__<solver>.traj.json.gz`).
pub fn sidecars(run_dir: &Path) -> Result<BTreeMap<String, Vec<Sidecar>>, ReplayError> {
    let mut out: BTreeMap<String, Vec<Sidecar>> = BTreeMap::new();
    for e in std::fs::read_dir(run_dir).map_err(io(run_dir))? {
        let path = e.map_err(io(run_dir))?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let Some((label, solver)) = name.strip_suffix(SIDECAR_SUFFIX).and_then(|s| s.rsplit_once("__")) else {
            continue;
        };
        out.entry(label.to_string()).or_default().push(Sidecar { solver: solver.to_string(), path });
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| a.solver.cmp(&b.solver));
    }
    Ok(out)
}

/// The page of case label `label`, relative to the output directory.
pub fn page_path(label: &str) -> String {
    format!("replay/{label}.html")
}

/// Where the vendored three.js build is looked for: `$SIGNORINI_THREE_DIR`, else
/// `reports/assets/vendor/three` of this source tree (`ci/fetch-three.sh` puts it there).
pub fn three_dir() -> PathBuf {
    std::env::var_os("SIGNORINI_THREE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/vendor/three"))
}

/// What [`write`] wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    /// The pages, by case label.
    pub pages: Vec<(String, PathBuf)>,
    /// What the pages miss (three.js not fetched).
    pub warnings: Vec<String>,
}

/// Standard base64 (RFC 4648, padded).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A JavaScript string literal of `s`.
fn js_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default().replace("</", "<\\/")
}

/// Writes the replay pages of `run_dir` into `out_dir`: of case label `case` only when given, with
/// the solvers `solvers` only when not empty (a solver matches by its name or its name with
/// settings tag). Fails when no sidecar matches.
pub fn write(run_dir: &Path, out_dir: &Path, case: Option<&str>, solvers: &[String]) -> Result<Written, ReplayError> {
    let all = sidecars(run_dir)?;
    let wanted = |s: &Sidecar| {
        solvers.is_empty() || solvers.iter().any(|w| *w == s.solver || s.solver.split('-').next() == Some(w.as_str()))
    };
    let chosen: Vec<(String, Vec<Sidecar>)> = all
        .iter()
        .filter(|(label, _)| case.is_none_or(|c| c == label.as_str()))
        .map(|(label, v)| (label.clone(), v.iter().filter(|s| wanted(s)).cloned().collect::<Vec<_>>()))
        .filter(|(_, v)| !v.is_empty())
        .collect();
    if chosen.is_empty() {
        let have: Vec<String> = all
            .iter()
            .map(|(l, v)| format!("{l} ({})", v.iter().map(|s| s.solver.as_str()).collect::<Vec<_>>().join(", ")))
            .collect();
        return Err(ReplayError::Nothing {
            what: format!(
                "{}: no trajectory sidecar{}{} (have: {}); run with --trajectory auto",
                run_dir.display(),
                case.map(|c| format!(" of case '{c}'")).unwrap_or_default(),
                if solvers.is_empty() { String::new() } else { format!(" for solver {}", solvers.join(",")) },
                if have.is_empty() { "none".into() } else { have.join("; ") }
            ),
        });
    }
    let data_dir = out_dir.join("replay/data");
    std::fs::create_dir_all(&data_dir).map_err(io(&data_dir))?;
    let assets = out_dir.join("assets");
    std::fs::create_dir_all(assets.join("three")).map_err(io(&assets))?;
    records::write_atomic(&assets.join("replay.js"), VIEWER_JS.as_bytes()).map_err(io(&assets))?;
    let mut written = Written::default();
    let three = three_dir();
    for f in ["three.min.js", "LICENSE"] {
        let (from, to) = (three.join(f), assets.join("three").join(f));
        match std::fs::read(&from) {
            Ok(bytes) => records::write_atomic(&to, &bytes).map_err(io(&to))?,
            Err(_) if to.is_file() => {}
            Err(e) => written.warnings.push(format!(
                "{}: {e}; the replay pages need three.js {THREE_VERSION}: run `bash ci/fetch-three.sh` (or set \
                 SIGNORINI_THREE_DIR) and write them again",
                from.display()
            )),
        }
    }
    for (label, cars) in chosen {
        let mut scripts = String::new();
        for s in &cars {
            let bytes = std::fs::read(&s.path).map_err(io(&s.path))?;
            let stem = s.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let stem = stem.strip_suffix(SIDECAR_SUFFIX).unwrap_or(&stem).to_string();
            let js = format!(
                "(window.SIGNORINI_REPLAY = window.SIGNORINI_REPLAY || []).push({{case: {}, solver: {}, gz: \"{}\"}});\n",
                js_str(&label),
                js_str(&s.solver),
                base64(&bytes)
            );
            let file = data_dir.join(format!("{stem}.js"));
            records::write_atomic(&file, js.as_bytes()).map_err(io(&file))?;
            scripts += &format!("<script src=\"data/{}.js\"></script>\n", esc(&stem));
        }
        let page = out_dir.join(page_path(&label));
        let names: Vec<&str> = cars.iter().map(|s| s.solver.as_str()).collect();
        records::write_atomic(&page, page_html(&label, &names, &scripts).as_bytes()).map_err(io(&page))?;
        written.pages.push((label, page));
    }
    Ok(written)
}

/// What [`check`] found in a run directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Checked {
    /// Records read.
    pub records: usize,
    /// Sidecars that the page can show ([`records::trajectory::Trajectory::validate`]).
    pub valid: usize,
    /// Frames in those sidecars.
    pub frames: usize,
    /// What is wrong: a record that ran a step without a sidecar, a sidecar the page cannot show,
    /// or a sidecar without a record (one line each).
    pub problems: Vec<String>,
}

/// Checks that every record of `run_dir` that recorded a step has a trajectory sidecar the
/// replay page can show (its loader's assumptions: [`records::trajectory::Trajectory::validate`]),
/// for the record's case label and solver, and that every sidecar belongs to a record. A record
/// that ran no step (a skipped pair) needs none.
pub fn check(run_dir: &Path) -> Result<Checked, ReplayError> {
    use records::trajectory::{sidecar_path, Trajectory};
    let mut out = Checked::default();
    let mut with_record = std::collections::BTreeSet::new();
    for path in records::input::json_files(run_dir)? {
        let r = records::RunRecord::read(&path)?;
        out.records += 1;
        let car = sidecar_path(&path);
        with_record.insert(car.clone());
        if !car.exists() {
            if !r.steps.is_empty() {
                out.problems.push(format!("{}: ran {} steps and has no sidecar", path.display(), r.steps.len()));
            }
            continue;
        }
        match Trajectory::read_valid(&car) {
            Err(e) => out.problems.push(e.to_string()),
            Ok(t) if t.case != r.case.label || t.solver != r.solver.name => out.problems.push(format!(
                "{}: the motion of {} / {}, beside the record of {} / {}",
                car.display(),
                t.case,
                t.solver,
                r.case.label,
                r.solver.name
            )),
            Ok(t) => {
                out.valid += 1;
                out.frames += t.frames.len();
            }
        }
    }
    for cars in sidecars(run_dir)?.values() {
        for s in cars.iter().filter(|s| !with_record.contains(&s.path)) {
            out.problems.push(format!("{}: no record beside it", s.path.display()));
        }
    }
    Ok(out)
}

fn page_html(label: &str, solvers: &[&str], scripts: &str) -> String {
    let title = format!("Replay: {} — {}", esc(label), esc(&solvers.join(", ")));
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<script>window.__replayErrors = [];
window.addEventListener('error', function (e) {{ window.__replayErrors.push(String(e.message)); }});
(function () {{ var ce = console.error; console.error = function () {{
  window.__replayErrors.push([].map.call(arguments, String).join(' ')); return ce.apply(console, arguments); }}; }})();</script>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 12px 18px; color: #222; }}
#replay-views {{ display: flex; flex-wrap: wrap; gap: 10px; }}
.view {{ flex: 1 1 360px; min-width: 300px; border: 1px solid #ccd; border-radius: 4px; padding: 4px; }}
.view canvas {{ width: 100%; height: 380px; display: block; cursor: grab; }}
.view-title {{ font-weight: 600; padding: 2px 4px; }}
.view-notes {{ font-size: 12px; padding: 0 4px 4px 4px; }}
.metrics table {{ border-collapse: collapse; font-size: 13px; }}
.metrics td {{ padding: 1px 8px 1px 4px; }}
.metrics td:first-child {{ color: #667; }}
.unconverged {{ color: #b03020; font-weight: 600; }}
#replay-bar {{ display: flex; align-items: center; gap: 12px; margin: 8px 0; flex-wrap: wrap; }}
#replay-step {{ flex: 1 1 300px; }}
.muted {{ color: #667; }}
</style></head><body>
<h1>{title}</h1>
<p class="muted">Recorded motion of case <b>{label}</b> (trajectory sidecars beside the run records). Drag to orbit,
shift-drag to pan, scroll to zoom; every view follows. Each frame shows the state at the end of its step and the
contacts detected there, coloured by their penetration, with the normal impulse the step gave each (arrows);
the metrics are the step's.
<span id="replay-legend"></span></p>
<div id="replay-bar"><button id="replay-play">play</button>
<input id="replay-step" type="range" min="0" max="0" value="0" step="1"> <span id="replay-step-label"></span>
<label>speed <select id="replay-speed"><option value="0.1">0.1×</option><option value="0.25">0.25×</option>
<option value="0.5">0.5×</option><option value="1" selected>1×</option><option value="2">2×</option><option value="4">4×</option></select></label>
<label><input id="replay-contacts" type="checkbox" checked> contacts</label>
<label><input id="replay-arrows" type="checkbox" checked> impulse arrows</label></div>
<p id="replay-status" class="muted">loading…</p>
<div id="replay-views"></div>
<script src="../assets/three/three.min.js"></script>
{scripts}<script src="../assets/replay.js"></script>
</body></html>
"#,
        label = esc(label)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        for (x, want) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE=")]
        {
            assert_eq!(base64(x.as_bytes()), want);
        }
    }

    /// The check finds every record that ran without motion the page can show, a sidecar of
    /// another pair, and a sidecar without a record; a skipped record needs none.
    #[test]
    fn the_check_names_records_without_a_showable_sidecar() {
        use crate::test_records::record;
        use records::trajectory::{sidecar_path, BodyGeometry, Frame, Part, PartShape, Trajectory, TRAJECTORY_SCHEMA};
        use records::{RunStatus, StepRecord};
        let run = tempfile::tempdir().unwrap();
        let motion = |case: &str, solver: &str| Trajectory {
            schema: TRAJECTORY_SCHEMA.into(),
            case: case.into(),
            solver: solver.into(),
            dt: 0.01,
            stride: 1,
            steps: 2,
            bodies: vec![BodyGeometry {
                name: "ball".into(),
                parts: vec![Part { shape: PartShape::Sphere { radius: 0.1 }, pos: [0.0; 3], rot: [0., 0., 0., 1.] }],
            }],
            frames: vec![Frame { step: 0, poses: vec![[0., 0., 0.1, 0., 0., 0., 1.]], ..Default::default() }],
            ..Default::default()
        };
        let step = StepRecord {
            step: 0,
            status: api::SolveStatus::Solved,
            iterations: 1,
            wall_s: 0.0,
            metrics: records::StepMetrics::unmeasured(0.01),
            accuracy: None,
        };
        let write = |label: &str, solver: &str, status: RunStatus, traj: Option<Trajectory>| {
            let mut r = record(label, solver, status, 1.0, &[]);
            if status != RunStatus::Skipped {
                r.steps = vec![step.clone()];
            }
            let path = run.path().join(r.file_name());
            std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
            if let Some(t) = traj {
                t.write_atomic(&sidecar_path(&path)).unwrap();
            }
        };
        write("slope", "pgs", RunStatus::Ok, Some(motion("slope", "pgs")));
        write("slope", "sap", RunStatus::Skipped, None);
        let c = check(run.path()).unwrap();
        assert_eq!((c.records, c.valid, c.frames, c.problems.len()), (2, 1, 1, 0), "{c:?}");
        write("slope", "nsn", RunStatus::Failed, None);
        write("arch", "pgs", RunStatus::Ok, Some(motion("slope", "pgs")));
        write("box", "pgs", RunStatus::Ok, Some(Trajectory { frames: vec![], ..motion("box", "pgs") }));
        motion("lost", "pgs").write_atomic(&run.path().join(format!("lost__pgs{SIDECAR_SUFFIX}"))).unwrap();
        let c = check(run.path()).unwrap();
        assert_eq!((c.records, c.valid), (5, 1), "{c:?}");
        let all = c.problems.join("\n");
        for needle in
            ["slope__nsn.json: ran 1 steps and has no sidecar", "the motion of slope / pgs", "no frame", "lost__pgs"]
        {
            assert!(all.contains(needle), "{needle}: {all}");
        }
        assert_eq!(c.problems.len(), 4, "{all}");
    }

    #[test]
    fn pages_group_sidecars_by_case_and_filter_solvers() {
        let run = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        for name in ["slope__pgs", "slope__nsn", "slope__sap-1234abcd", "clutter__pgs"] {
            std::fs::write(run.path().join(format!("{name}{SIDECAR_SUFFIX}")), b"\x1f\x8b").unwrap();
            std::fs::write(run.path().join(format!("{name}.json")), b"{}").unwrap();
        }
        let s = sidecars(run.path()).unwrap();
        assert_eq!(s.keys().collect::<Vec<_>>(), ["clutter", "slope"]);
        assert_eq!(s["slope"].iter().map(|c| c.solver.as_str()).collect::<Vec<_>>(), ["nsn", "pgs", "sap-1234abcd"]);
        let w = write(run.path(), out.path(), Some("slope"), &["pgs".into(), "sap".into()]).unwrap();
        assert_eq!(w.pages.len(), 1);
        let page = std::fs::read_to_string(&w.pages[0].1).unwrap();
        assert!(page.contains("data/slope__pgs.js") && page.contains("data/slope__sap-1234abcd.js"));
        assert!(!page.contains("slope__nsn"));
        let data = std::fs::read_to_string(out.path().join("replay/data/slope__pgs.js")).unwrap();
        assert!(data.contains("gz: \"H4s=\""), "{data}");
        assert!(out.path().join("assets/replay.js").is_file());
        let e = write(run.path(), out.path(), Some("arch"), &[]).unwrap_err().to_string();
        assert!(
            e.contains("no trajectory sidecar of case 'arch'") && e.contains("slope (nsn, pgs, sap-1234abcd)"),
            "{e}"
        );
    }
}
