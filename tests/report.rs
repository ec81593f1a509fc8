//! End-to-end tests of `signorini report`: a small fixture of run records is produced by the real
//! pipeline (registry, runner, short durations), completed with synthetic records (a second
//! solver, a skipped and a failed pair, a NaN and a missing metric), and every figure type, the
//! HTML page and the Markdown table are checked against the records.

use harness::runner::{self, NoProgress, PairSpec, Suite};
use harness::stepper::RunOptions;
use records::{RunRecord, RunStatus};
use reports::report::{self, Options};
use std::path::Path;

fn pair(label: &str, case: &str, set: &[(&str, &str)]) -> PairSpec {
    PairSpec {
        label: label.into(),
        case: case.into(),
        case_set: set.iter().map(|(k, v)| (k.to_string(), harness::runner::Override::Text(v.to_string()))).collect(),
        solver: "pgs".into(),
        solver_set: vec![],
    }
}

/// Runs the tiny suite and adds synthetic records; returns all records (also written to `dir`).
fn fixture(dir: &Path) -> Vec<RunRecord> {
    let reg = signorini::registry();
    let suite = Suite {
        name: "report-test".into(),
        pairs: vec![
            pair("slope-dt0.01", "slope", &[("duration", "0.1"), ("dt", "0.01")]),
            pair("slope-dt0.005", "slope", &[("duration", "0.1"), ("dt", "0.005")]),
            pair("stack", "sphere_stack", &[("n", "2"), ("duration", "0.1")]),
        ],
        accuracy: None,
    };
    let pairs = runner::prepare(&reg, &suite).unwrap();
    let mut records: Vec<RunRecord> = runner::run_suite(&pairs, dir, RunOptions::default(), &NoProgress)
        .into_iter()
        .map(|(r, path)| {
            path.unwrap();
            r
        })
        .collect();
    assert!(records.iter().all(|r| r.status == RunStatus::Ok), "fixture runs complete");
    // A second solver "other": twice as slow on the slopes, skipped on the stack.
    for r in records.clone() {
        let mut o = r.clone();
        o.solver.name = "other".into();
        if r.case.name == "sphere_stack" {
            o.status = RunStatus::Skipped;
            o.reason = Some("other does not support multi-body stacks".into());
            o.summary = Default::default();
            o.steps.clear();
            o.iterations.clear();
        } else {
            o.summary.stage_times.solve_s *= 2.0;
            o.summary.wall_per_step_s.median *= 2.0;
            if let Some(m) = o.summary.metrics.get_mut("natmap_rel_l2") {
                m.max = f64::NAN;
            }
            o.summary.metrics.remove("creep_speed_max");
            if r.case.label == "slope-dt0.005" {
                // unconverged on 2 steps but within the oracle (its checks pass)
                o.summary.unconverged_steps = 2;
            }
        }
        records.push(o);
    }
    // A failed pair: "broken" fails the slope after its first steps.
    let mut f = records[0].clone();
    f.solver.name = "broken".into();
    f.status = RunStatus::Failed;
    f.reason = Some("step 3: non-finite impulse".into());
    f.steps.truncate(3);
    f.summary.steps = 3;
    f.summary.failures = 1;
    records.push(f);
    for r in &records {
        r.write_atomic(dir).unwrap();
    }
    records
}

fn build(dir: &Path, gates: Option<&str>) -> (report::Report, std::path::PathBuf) {
    build_with(dir, gates, None).unwrap()
}

fn build_with(
    dir: &Path,
    gates: Option<&str>,
    baseline: Option<&str>,
) -> Result<(report::Report, std::path::PathBuf), reports::ReportError> {
    let out = dir.join("report");
    let gates = gates.map(|text| reports::gate::parse(text, "gates.toml").unwrap());
    let opts = Options {
        run_dir: dir.to_path_buf(),
        out_dir: out.clone(),
        criterion: None,
        gates,
        defaults: signorini::defaults(&signorini::registry()),
        baseline: baseline.map(String::from),
    };
    Ok((reports::write(&opts)?, out))
}

#[test]
fn every_figure_type_renders_with_its_series_and_sources() {
    let dir = tempfile::tempdir().unwrap();
    let records = fixture(dir.path());
    let (rep, out) = build(dir.path(), None);
    assert_eq!(rep.records.len(), records.len());
    let expect = [
        // (kind, title contains, series over all panels)
        ("profile", "profiles", 8), // pgs, other, other's lenient line, broken x (time, iterations)
        ("timing", "Timing", 3),    // pgs, other, broken (3 completed steps)
        ("work_precision", "dt sweep", 2), // pgs and other over dt = 0.005, 0.01
        ("order_of_accuracy", "Order of accuracy on slope", 2), // the same sweeps against dt
        ("convergence", "slope-dt0.01", 6), // 3 solvers x 2 panels
        ("convergence", "stack", 2), // pgs only (other skipped)
        ("physics", "slope-dt0.01", 9), // 3 solvers x 3 panels
        ("physics", "stack", 3),
    ];
    for (kind, title, series) in expect {
        let f = rep.figures.iter().find(|f| f.kind == kind && f.title.contains(title)).unwrap_or_else(|| {
            panic!("no {kind} figure '{title}' in {:?}", rep.figures.iter().map(|f| &f.title).collect::<Vec<_>>())
        });
        assert_eq!(f.series, series, "{kind} {title}");
        let svg = std::fs::read_to_string(out.join(&f.file)).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{}", f.file);
        let lines = svg.matches("<polyline").count();
        let markers = svg.matches("<circle").count();
        assert!(lines + markers >= series, "{}: {lines} polylines + {markers} markers < {series} series", f.file);
        assert!(!f.sources.is_empty(), "{} names its records", f.file);
        for src in &f.sources {
            let r = records.iter().find(|r| src.starts_with(&r.file_name())).expect("source is a record");
            assert!(src.contains(&r.case.params_hash) && src.contains(&r.solver.params_hash), "{src}");
            assert!(src.contains(&r.provenance.commit.chars().take(7).collect::<String>()), "{src}");
        }
    }
    // the profile tells "unconverged but within the oracle" from "failed": other's dashed line
    let prof = rep.figures.iter().find(|f| f.kind == "profile").unwrap();
    assert!(
        prof.description.contains("other: |P_s| = 2, solved 1, unconverged but within the oracle 1, failed 0")
            && prof.description.contains("broken: |P_s| = 1, solved 0, failed 1"),
        "{}",
        prof.description
    );
    let svg = std::fs::read_to_string(out.join(&prof.file)).unwrap();
    assert_eq!(svg.matches("other + 1 unconverged within oracle").count(), 2, "one dashed line per panel");
    // legends name the solvers, all drawn on the harness's yardstick on one common step
    let conv = rep.figures.iter().find(|f| f.kind == "convergence").unwrap();
    let svg = std::fs::read_to_string(out.join(&conv.file)).unwrap();
    assert!(svg.contains("\npgs\n") && svg.contains("\nother\n"), "legend names the solvers");
    assert!(!svg.contains("own "), "no solver falls back to its own residual");
    assert!(conv.description.contains("all on step"), "{}", conv.description);

    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    for f in &rep.figures {
        assert!(html.contains(&format!("<img src=\"{}\"", f.file)), "{} in index.html", f.file);
        assert!(out.join(&f.file).is_file());
    }
    for r in &records {
        assert!(html.contains(&r.case.params_hash));
    }
    assert_eq!(html.matches("<script").count(), 1, "one inline script (table sorting)");
    assert!(html.contains("<script>") && !html.contains("<script src"), "inline, nothing fetched");
    assert!(!html.contains("http://") && !html.contains("https://"), "self-contained");
    assert!(html.contains("other does not support multi-body stacks") && html.contains("step 3: non-finite impulse"));
}

/// The cells of the Markdown results row of (case, solver).
fn md_row(md: &str, case: &str, solver: &str) -> Vec<String> {
    let results = md.split("## Results").nth(1).unwrap().split("\n## ").next().unwrap();
    results
        .lines()
        .filter(|l| l.starts_with("| "))
        .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect::<Vec<_>>())
        .find(|c| c[0] == case && c[1] == solver)
        .unwrap_or_else(|| panic!("no row for {case} / {solver}"))
}

#[test]
fn markdown_table_matches_the_records() {
    let dir = tempfile::tempdir().unwrap();
    let records = fixture(dir.path());
    // A metric gate that fails, an expected failure (the failed pair), an entry on a pair this
    // run directory does not hold (noted, not checked).
    let gates = "[[gate]]\nsolver = \"pgs\"\ncase = \"slope-dt0.01\"\nmetric = \"iterations_per_step.mean\"\nmax = 0.5\nwhy = \"t\"\n\n\
                 [[gate]]\nsolver = \"pgs\"\ncase = \"not-in-this-run\"\nmetric = \"steps\"\nmin = 1\nwhy = \"t\"\n\n\
                 [[expected_failure]]\nsolver = \"broken\"\ncase = \"slope-dt0.01\"\ncheck = \"completed\"\nmeasured = 3\n\
                 reason = \"fails at step 3 by design\"\nsee = \"tests/report.rs\"\n";
    std::fs::write(dir.path().join("zz-not-a-record.json"), "{}").unwrap();
    let (_, out) = build(dir.path(), Some(gates));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("1 file(s) could not be read") && md.contains("zz-not-a-record.json"), "listed, not hidden");
    let headers: Vec<&str> = reports::table::HEADERS.to_vec();
    let col = |h: &str| headers.iter().position(|x| *x == h).unwrap();
    for r in &records {
        let row = md_row(&md, &r.case.label, &r.solver.name);
        assert_eq!(row.len(), headers.len());
        let status = match r.status {
            RunStatus::Ok => "ok",
            RunStatus::Failed => "failed",
            RunStatus::Skipped => "skipped",
        };
        assert_eq!(row[col("status")], status);
        if r.status == RunStatus::Skipped {
            assert_eq!(row[col("steps")], "—");
            assert_eq!(row[col("solve ms/step median")], "—", "no invented cost for a skipped pair");
            assert_eq!(row[col("natmap_ rel_l2 max")], "—");
        } else {
            assert_eq!(row[col("steps")], r.summary.steps.to_string());
            let s = &r.summary;
            assert_eq!(row[col("iters/ step")], reports::figures::fmt_num(s.iterations_per_step.mean));
            assert_eq!(row[col("solve ms/step median")], reports::figures::fmt_num(s.wall_per_step_s.median * 1e3));
            assert_eq!(row[col("penetration max [m]")], reports::figures::fmt_num(s.metrics["penetration_max"].max));
            match s.metrics.get("natmap_rel_l2") {
                Some(m) if m.max.is_nan() => assert_eq!(row[col("natmap_ rel_l2 max")], "NaN"),
                Some(m) => assert_eq!(row[col("natmap_ rel_l2 max")], reports::figures::fmt_num(m.max)),
                None => unreachable!(),
            }
            if !s.metrics.contains_key("creep_speed_max") {
                assert_eq!(row[col("creep speed max [m/s]")], "—", "a missing metric shows as missing");
            }
        }
        if let Some(reason) = &r.reason {
            assert!(md.contains(&format!("`{}` / `{}`: **{status}**: {reason}", r.case.label, r.solver.name)));
        }
        for c in r.summary.oracle.values() {
            assert!(md.contains(&format!(
                "| {} | {} | {} | {} |",
                r.case.label,
                r.solver.name,
                c.name,
                reports::figures::fmt_num(c.measured)
            )));
        }
    }
    let checks = |label: &str| {
        let r = records.iter().find(|r| r.case.label == label && r.solver.name == "pgs").unwrap();
        assert!(r.summary.oracle.values().all(|c| c.pass), "the fixture's oracle checks pass");
        r.summary.oracle.len()
    };
    let n = checks("stack");
    assert_eq!(md_row(&md, "stack", "pgs")[col("gates")], format!("PASS {n}/{n}"));
    let n = checks("slope-dt0.01") + 1;
    assert_eq!(md_row(&md, "slope-dt0.01", "pgs")[col("gates")], format!("FAIL 1/{n}: iterations_per_step.mean"));
    assert_eq!(
        md_row(&md, "slope-dt0.01", "broken")[col("gates")],
        format!("PASS {n}/{n} (expected failures: completed)"),
        "the failed pair's oracle checks and its listed completed check"
    );
    assert_eq!(md_row(&md, "stack", "other")[col("gates")], "not gated", "a skipped pair has no checks");
    assert!(md.contains("**Gate: FAIL** (`gates.toml`)"), "the metric gate fails");
    let counts_row = md
        .split("## Gates")
        .nth(1)
        .unwrap()
        .lines()
        .find(|l| l.starts_with("| ") && !l.contains("oracle checks passed"));
    let total =
        records.iter().filter(|r| r.status != RunStatus::Skipped).map(|r| r.summary.oracle.len()).sum::<usize>();
    assert_eq!(counts_row.unwrap(), format!("| {total} | 1 | 0 | 0 | 0 | 1 | 0 |"));
    assert!(
        md.contains("| slope-dt0.01 | broken | completed | 3 | 3 | fails at step 3 by design | tests/report.rs |"),
        "{md}"
    );
    assert!(md.contains("1 entr(ies) of `gates.toml` name pairs that are not in this run directory"));
    assert!(md.contains("7 run records: 5 ok, 1 failed, 1 skipped"));
}

#[test]
fn cli_writes_the_report_and_refuses_an_empty_dir() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path());
    let out = dir.path().join("out");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_signorini")).args(args).current_dir(dir.path()).output().unwrap()
    };
    let o = run(&["report", dir.path().to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("index.html").is_file() && out.join("summary.md").is_file());
    assert!(out.join("figures/profiles.svg").is_file());
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = run(&["report", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no run records"));
}

/// A study directory (one subdirectory per variant, as ci/studies/nsn-convergence.toml writes
/// them) gives one merit-vs-Newton-iteration figure per swept setting (Macklin et al. Figs.
/// 17–18): one series per value of `r_mode` and per value of `linear_solver`, the shared baseline
/// (effective_mass + pcr, in two directories) counted once, every series the logged step's full
/// iteration log (fixed budget: `max_newton_iterations + 1` points). The per-case convergence
/// figure tells the variants apart by their differing settings.
#[test]
fn study_directory_gives_merit_per_iteration_by_setting() {
    let dir = tempfile::tempdir().unwrap();
    let reg = signorini::registry();
    let budget = 4;
    let case = [("shape", "sphere"), ("n", "3"), ("duration", "0.0166")];
    let variants = [
        ("r-effective_mass", "r_mode", "effective_mass"),
        ("r-one", "r_mode", "one"),
        ("r-h2", "r_mode", "h2"),
        ("linear-pcr", "linear_solver", "pcr"),
        ("linear-pcg", "linear_solver", "pcg"),
    ];
    for (sub, key, value) in variants {
        let b = budget.to_string();
        let set = [("tolerance", "0"), ("max_newton_iterations", b.as_str()), (key, value)];
        let r = runner::run_one(&reg, "heavy_stack", &case, "nsn", &set).unwrap();
        assert_eq!(r.status, RunStatus::Ok, "{sub}: {:?}", r.reason);
        let d = dir.path().join(sub);
        std::fs::create_dir(&d).unwrap();
        r.write_atomic(&d).unwrap();
    }
    let (rep, out) = build(dir.path(), None);
    assert_eq!(rep.records.len(), variants.len(), "the subdirectories are read");
    for (key, values) in [("r_mode", &["effective_mass", "h2", "one"][..]), ("linear_solver", &["pcg", "pcr"][..])] {
        let f = rep
            .figures
            .iter()
            .find(|f| f.kind == "setting_convergence" && f.title.contains(&format!("by {key}")))
            .unwrap_or_else(|| {
                panic!("no figure by {key}: {:?}", rep.figures.iter().map(|f| &f.title).collect::<Vec<_>>())
            });
        assert_eq!(f.series, values.len(), "{key}: one series per value, the baseline once");
        assert!(f.title.starts_with("merit_l2 per iteration"), "{}", f.title);
        let svg = std::fs::read_to_string(out.join(&f.file)).unwrap();
        for v in values {
            assert!(svg.contains(&format!("{key} = {v}")), "{key} = {v} in the legend of {}", f.file);
        }
        assert!(svg.matches("<circle").count() >= values.len() * (budget + 1), "every iteration drawn");
        assert!(f.description.contains(&format!("at iteration {budget}")), "{}", f.description);
    }
    let conv = rep.figures.iter().find(|f| f.kind == "convergence").unwrap();
    let svg = std::fs::read_to_string(out.join(&conv.file)).unwrap();
    assert!(svg.contains("nsn [linear_solver=pcg, r_mode=effective_mass]"), "variants named");
    assert!(svg.contains("nsn [linear_solver=pcr, r_mode=one]"));
    assert!(!svg.contains(": merit_l2"), "the variants share the yardstick, not nsn's own merit");
}

/// The matrix view: one cell per (case, solver) pair of the run directory, each with the pair's
/// oracle verdict and its total solve time over the fastest passing solver's on that case
/// ("other" is the fixture's pgs at twice the solve time), the skipped pair's reason as a
/// footnote, the failed pair without a time; in index.html and summary.md.
#[test]
fn matrix_has_one_cell_per_pair_with_verdicts_and_relative_times() {
    let dir = tempfile::tempdir().unwrap();
    let records = fixture(dir.path());
    let (rep, out) = build(dir.path(), None);
    let m = rep.matrix();
    assert_eq!(m.cells.iter().flatten().flatten().count(), records.len(), "one cell per pair");
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(html.matches("data-pair=\"").count(), records.len(), "one HTML cell per pair");
    for r in &records {
        let id = format!("data-pair=\"{}__{}\"", r.case.label, r.solver.name);
        assert_eq!(html.matches(&id).count(), 1, "{id}");
        let c = m.get(&r.case.label, &r.solver.name).unwrap();
        let want = match (r.status, r.solver.name.as_str()) {
            (RunStatus::Skipped, _) => reports::matrix::Verdict::Skipped,
            (RunStatus::Failed, _) => reports::matrix::Verdict::Fail,
            _ => reports::matrix::Verdict::Pass,
        };
        assert_eq!(c.verdict, want, "{} / {}", r.case.label, r.solver.name);
        let pgs = records.iter().find(|p| p.case.label == r.case.label && p.solver.name == "pgs").unwrap();
        let ratio = r.summary.stage_times.solve_s / pgs.summary.stage_times.solve_s;
        match r.status {
            RunStatus::Ok => assert_eq!(c.ratio, Some(ratio), "relative to pgs, the fastest pass"),
            _ => assert_eq!(c.ratio, None),
        }
    }
    let other = m.get("slope-dt0.01", "other").unwrap();
    assert_eq!(other.ratio, Some(2.0), "the fixture doubles other's solve time");
    assert!(html.contains(">pass 2.0×</td>") && html.contains("class=\"v v-win\""));
    assert!(
        html.contains("skip<sup>1</sup>")
            && html.contains("<li>skipped: other does not support multi-body stacks</li>")
    );
    let n = records.len();
    assert!(html.contains(&format!(
        "{n} pairs: 6 ran, 1 skipped; 5 ran and pass their oracle checks, 0 expected failures, 1 fail"
    )));
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let section = md.split("## Matrix: who wins where").nth(1).unwrap().split("## Results").next().unwrap();
    assert!(section.contains("| case | broken | other | pgs |"), "solvers sorted by name: {section}");
    assert!(section.contains("| slope-dt0.01 | FAIL | pass 2.0× | **pass 1.0×** |"), "{section}");
    assert!(section.contains("| stack | — | skip [1] | **pass 1.0×** |"), "{section}");
}

/// `--baseline pgs`: the results table gains `solve time / pgs`, the total solve time over pgs's
/// on the same variant (2 for "other", 1 for pgs, missing for the failed pair); the settings
/// column tells the two points of the dt sweep apart; an unknown baseline is refused; the
/// work–precision points carry their dt.
#[test]
fn baseline_ratio_and_settings_columns() {
    let dir = tempfile::tempdir().unwrap();
    let records = fixture(dir.path());
    let err = build_with(dir.path(), None, Some("nosuch")).unwrap_err();
    assert!(matches!(&err, reports::ReportError::NoBaseline { baseline, .. } if baseline == "nosuch"), "{err:?}");
    let err = err.to_string();
    assert!(err.contains("--baseline nosuch: no record of solver 'nosuch'"), "{err}");
    let (rep, out) = build_with(dir.path(), None, Some("pgs")).unwrap();
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let headers = reports::table::headers(Some("pgs"));
    let col = |h: &str| headers.iter().position(|x| x == h).unwrap();
    let row = |case: &str, solver: &str| {
        let results = md.split("## Results").nth(1).unwrap().split("\n## ").next().unwrap();
        results
            .lines()
            .filter(|l| l.starts_with("| "))
            .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect::<Vec<_>>())
            .find(|c| c[0] == case && c[1] == solver)
            .unwrap()
    };
    assert_eq!(row("slope-dt0.01", "other").len(), headers.len());
    for r in &records {
        let want = match r.status {
            RunStatus::Ok => reports::figures::fmt_num(
                r.summary.stage_times.solve_s
                    / records
                        .iter()
                        .find(|p| p.case.label == r.case.label && p.solver.name == "pgs")
                        .unwrap()
                        .summary
                        .stage_times
                        .solve_s,
            ),
            _ => "—".into(),
        };
        assert_eq!(row(&r.case.label, &r.solver.name)[col("solve time / pgs")], want);
    }
    assert_eq!(row("slope-dt0.01", "other")[col("solve time / pgs")], "2");
    let (a, b) =
        (row("slope-dt0.01", "pgs")[col("settings")].clone(), row("slope-dt0.005", "pgs")[col("settings")].clone());
    assert_ne!(a, b, "the two points of the dt sweep are told apart");
    assert!(b.contains("dt=0.005") && b.contains("duration=0.1"), "{b}");
    assert_eq!(row("stack", "pgs")[col("settings")], "duration=0.1, n=2", "only what differs from the defaults");
    let wp = rep.figures.iter().find(|f| f.kind == "work_precision").unwrap();
    let svg = std::fs::read_to_string(out.join(&wp.file)).unwrap();
    assert!(svg.contains("dt=0.005") && svg.contains("dt=0.01"), "points labelled with the swept value");
}

/// A sweep over a size parameter (sphere_stack's `n`, three sizes, real runs) gives the scaling
/// figure: one line per solver with its fitted exponent, shown in the HTML timing section.
#[test]
fn a_size_sweep_gives_the_scaling_figure() {
    let dir = tempfile::tempdir().unwrap();
    let reg = signorini::registry();
    let pairs: Vec<PairSpec> = ["2", "3", "4"]
        .iter()
        .map(|n| pair(&format!("stack-n{n}"), "sphere_stack", &[("n", n), ("duration", "0.05")]))
        .collect();
    let suite = Suite { name: "scaling-test".into(), pairs, accuracy: None };
    let prepared = runner::prepare(&reg, &suite).unwrap();
    for (_, path) in runner::run_suite(&prepared, dir.path(), RunOptions::default(), &NoProgress) {
        path.unwrap();
    }
    let (rep, out) = build(dir.path(), None);
    let f = rep.figures.iter().find(|f| f.kind == "scaling").expect("a scaling figure");
    assert_eq!(f.title, "Scaling on sphere_stack (n)");
    assert_eq!(f.series, 1, "pgs alone");
    assert_eq!(f.sources.len(), 3, "one source per size");
    assert!(f.description.contains("pgs: exponent "), "{}", f.description);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("Scaling on sphere_stack (n)") && html.contains(&f.file), "the figure is in the page");
}
