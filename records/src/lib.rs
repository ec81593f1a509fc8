//! Run records: one versioned JSON file per (case, solver, parameters), written atomically.
//! Users, reports and gates parse them; the layout is [`RunRecord`] below (schema
//! `signorini.run/1`); changing it means a new schema version. This crate holds the types, the
//! one constructor ([`RunRecord::new`]), the readers (with the bounded-input checks of [`input`])
//! and the atomic writer, and nothing of the model, the geometry or the runner, so that reports,
//! the FCLIB bench and the reference-engine grader read and write records without them.

#![deny(missing_docs)]

pub mod input;
mod oracle;
mod step_metrics;
pub mod trajectory;
pub mod yardstick;

use api::{IterationLog, Params, SolveStatus};
pub use oracle::OracleCheck;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
pub use step_metrics::StepMetrics;

/// Why a run record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file could not be read (see [`input::InputError`]).
    #[error(transparent)]
    Input(#[from] input::InputError),
    /// The file is not a run record (not JSON, or a field missing or of the wrong type).
    #[error("{}: not a run record: {why}", path.display())]
    NotARecord {
        /// The file.
        path: std::path::PathBuf,
        /// The parser's message (line and column).
        why: String,
    },
    /// A record of another schema version.
    #[error("{}: schema '{found}' is not '{SCHEMA}'", path.display())]
    Schema {
        /// The file.
        path: std::path::PathBuf,
        /// Its schema tag.
        found: String,
    },
}

impl From<RecordError> for String {
    fn from(e: RecordError) -> String {
        e.to_string()
    }
}

/// The key of `solver.params` that marks a reference engine's record ([`RunRecord::is_reference`]).
pub const REFERENCE_KEY: &str = "reference";

/// The schema tag of the current format.
pub const SCHEMA: &str = "signorini.run/1";

/// Where and from what a record was produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// `git rev-parse HEAD` of the working directory (suffix `-dirty` with uncommitted changes), or "unknown".
    pub commit: String,
    /// signorini version.
    pub version: String,
    /// Host name and CPU model.
    pub machine: String,
    /// Hardware threads available to the process.
    pub threads: usize,
    /// Start time, RFC 3339 UTC.
    pub started: String,
    /// The compute backend of the run (`RunOptions::backend_label`: "cpu", "gpu NVIDIA H100
    /// (f64)", or "cpu (gpu unavailable: <reason>)"). Records written before this field read
    /// back as "cpu". Only the solvers with a device path (nsn, local_global) run on it; the others
    /// always run on the CPU.
    #[serde(default = "default_backend")]
    pub backend: String,
}

fn default_backend() -> String {
    "cpu".into()
}

impl Provenance {
    /// Collects provenance for a run starting now.
    pub fn collect() -> Self {
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        };
        let commit = match git(&["rev-parse", "HEAD"]) {
            Some(c) if !c.is_empty() => {
                let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
                if dirty {
                    format!("{c}-dirty")
                } else {
                    c
                }
            }
            _ => "unknown".into(),
        };
        let host = std::fs::read_to_string("/etc/hostname").map(|s| s.trim().to_string()).unwrap_or_default();
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_string());
        Provenance {
            commit,
            version: env!("CARGO_PKG_VERSION").into(),
            machine: if host.is_empty() { cpu } else { format!("{host} ({cpu})") },
            threads: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            started: rfc3339_now(),
            backend: "cpu".into(),
        }
    }
}

/// Deserializes an `f64` that may have been written as `null`: serde_json writes NaN and
/// infinities as `null`, and they read back as NaN (a missing value, never a number).
pub fn nullable_f64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn rfc3339_now() -> String {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil-from-days (H. Hinnant's algorithm)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Case identity in a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    /// Registry name.
    pub name: String,
    /// Label of this variant within its suite (defaults to the name).
    pub label: String,
    /// Full parameter set used (defaults + overrides).
    pub params: Params,
    /// [`Params::hash`] of `params`.
    pub params_hash: String,
}

/// Solver identity in a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SolverRecord {
    /// Registry name.
    pub name: String,
    /// Full settings used.
    pub params: Params,
    /// [`Params::hash`] of `params`.
    pub params_hash: String,
    /// The paper or reference the method comes from ([`api::SolverDef::PAPER`]; empty in
    /// records written before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub paper: String,
    /// [`Params::hash`] of the solver's default settings: when `params_hash` differs, the record's
    /// file name carries the settings hash (a sweep never overwrites). Empty in older records.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub defaults_hash: String,
}

/// Outcome of a (case, solver) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every step produced a usable result.
    Ok,
    /// A step failed (the reason says which and why); steps before it are recorded.
    Failed,
    /// The pair was not run (the reason says why, e.g. a missing capability).
    Skipped,
}

/// Median and 95th percentile.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    /// Median.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub median: f64,
    /// 95th percentile (nearest rank).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub p95: f64,
}

/// Mean and maximum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MeanMax {
    /// Mean.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub mean: f64,
    /// Maximum.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub max: f64,
}

/// Max, mean and last value of a per-step metric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MetricStat {
    /// Maximum over steps (NaN if any step is NaN).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub max: f64,
    /// Mean over steps.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub mean: f64,
    /// Value at the last step.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub last: f64,
}

/// Seconds spent per stage over the whole run (rapier's `StagesCounters`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StageTimes {
    /// Contact detection.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub detect_s: f64,
    /// Step-problem assembly (mass, forces).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub assemble_s: f64,
    /// `Solver::step`.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub solve_s: f64,
    /// Metric evaluation.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub metrics_s: f64,
}

/// Per-run summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Steps completed.
    pub steps: usize,
    /// Failed steps (0 or 1: a run stops at its first failure).
    pub failures: usize,
    /// Steps whose status was not converged (`MaxIterations`, `InsufficientProgress`).
    pub unconverged_steps: usize,
    /// Wall time of `Solver::step` per step (s).
    pub wall_per_step_s: Quantiles,
    /// Solver iterations per step.
    pub iterations_per_step: MeanMax,
    /// Time per stage over the run.
    pub stage_times: StageTimes,
    /// The solver's own stages inside `stage_times.solve_s` (s, totals over the run), for solvers
    /// that report them ([`api::IterationLog::add_stage`]; e.g. local_global: `local`,
    /// `global`, `contact`, `setup`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub solver_stages_s: BTreeMap<String, f64>,
    /// Statistics of every numeric [`StepMetrics`] field.
    pub metrics: BTreeMap<String, MetricStat>,
    /// Oracle checks by name.
    pub oracle: BTreeMap<String, OracleCheck>,
    /// For closed systems (no gravity, springs, statics or locked DOFs): max over steps of the
    /// change of `||linear momentum||` and `||angular momentum||` from the initial state.
    pub momentum_drift: Option<MomentumDrift>,
    /// The equal-accuracy mode (`signorini run --accuracy EPS`): its accuracy, yardstick and how
    /// the steps met it; absent from a run in the default mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<AccuracySummary>,
}

/// How a run in the equal-accuracy mode met its accuracy (`summary.accuracy`): the harness
/// stopped the solver at the first iterate whose yardstick was at most `eps`, or the solver
/// ran to its budget. In this mode `summary.unconverged_steps` counts the steps that did not
/// reach `eps`; a run with such steps is *unconverged at EPS*, with `best` the best value its
/// worst step reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracySummary {
    /// The accuracy.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub eps: f64,
    /// The yardstick, by the iteration-log columns it reads: the larger of
    /// [`yardstick::MODEL_NATMAP`] and [`yardstick::MOMENTUM`], or [`yardstick::MOMENTUM`] alone
    /// for a regularised model.
    pub yardstick: String,
    /// The solver's own tolerance in this mode (out of reach when the harness stops it; `eps`
    /// when it cannot: its iterations run inside a library).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub own_tolerance: f64,
    /// Steps whose answer met `eps`.
    pub reached_steps: usize,
    /// `reached_steps` over the steps run.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub fraction_reached: f64,
    /// Median over the steps that met `eps` of the solver's time to meet it (s; NaN if none).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub time_to_eps_median_s: f64,
    /// The largest of those times (s; NaN if none).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub time_to_eps_worst_s: f64,
    /// The solver's time over every step (s): the cost the matrix and the performance profiles
    /// compare in this mode.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub total_time_s: f64,
    /// The largest over the steps of each step's best yardstick: at most `eps` when every step
    /// met it, else the best value the worst step reached.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub best: f64,
}

impl AccuracySummary {
    /// The summary of `steps` run at accuracy `eps` with `yardstick` and the solver's
    /// `own_tolerance`.
    pub fn of(eps: f64, yardstick: &str, own_tolerance: f64, steps: &[StepAccuracy]) -> Self {
        let reached: Vec<f64> = steps.iter().filter(|s| s.reached).map(|s| s.time_s).collect();
        let worst = reached.iter().copied().fold(f64::NAN, f64::max);
        // a step whose yardstick could not be measured counts as the worst
        let best = steps
            .iter()
            .map(|s| if s.best.is_nan() { f64::INFINITY } else { s.best })
            .fold(f64::NEG_INFINITY, f64::max);
        AccuracySummary {
            eps,
            yardstick: yardstick.to_string(),
            own_tolerance,
            reached_steps: reached.len(),
            fraction_reached: if steps.is_empty() { f64::NAN } else { reached.len() as f64 / steps.len() as f64 },
            time_to_eps_median_s: quantiles(&reached).median,
            time_to_eps_worst_s: worst,
            total_time_s: steps.iter().map(|s| s.time_s).sum(),
            best: if steps.is_empty() { f64::NAN } else { best },
        }
    }

    /// Whether some step did not meet `eps` (the pair is *unconverged at EPS*).
    pub fn unconverged(&self) -> bool {
        self.fraction_reached.is_nan() || self.fraction_reached < 1.0
    }
}

/// One step in the equal-accuracy mode (`steps[k].accuracy`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepAccuracy {
    /// Whether the answer the solver returned met the accuracy.
    pub reached: bool,
    /// The solver's iterations: to meet the accuracy when `reached`, else all it made.
    pub iterations: usize,
    /// The solver's time (s, the harness's yardstick evaluations left out): to meet the accuracy
    /// when `reached`, else all it took.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub time_s: f64,
    /// The smallest yardstick of the iterates it handed over and of its answer (NaN when none
    /// could be measured).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub best: f64,
    /// The solver's own residual at its answer (`api::AnsweredModel::own_residual`: the last
    /// value of its residual columns, e.g. the pyramid LCP's min map, drumwright's interior-point
    /// residuals), recorded beside the harness's measure; it decides nothing. Absent for a
    /// solver of the rigid model and where the log lacks the columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<f64>,
}

/// Momentum drift of a closed system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MomentumDrift {
    /// `max_k ||p_k - p_0||` (kg m/s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub linear: f64,
    /// `max_k ||L_k - L_0||` (kg m^2/s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub angular: f64,
}

/// One step in the record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Step index (0-based).
    pub step: usize,
    /// Solver status.
    pub status: SolveStatus,
    /// Solver iterations.
    pub iterations: usize,
    /// Wall time of `Solver::step` (s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub wall_s: f64,
    /// Harness metrics.
    pub metrics: StepMetrics,
    /// The equal-accuracy mode's verdict on this step (absent in the default mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<StepAccuracy>,
}

/// The iteration log of one selected step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IterationRecord {
    /// Step index.
    pub step: usize,
    /// The solver's per-iteration columns.
    pub log: IterationLog,
}

/// One run record: the file format users, reports and gates parse.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Provenance.
    pub provenance: Provenance,
    /// Case identity.
    pub case: CaseRecord,
    /// Solver identity.
    pub solver: SolverRecord,
    /// Outcome.
    pub status: RunStatus,
    /// Why it failed or was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Summary.
    pub summary: Summary,
    /// Every `step_stride`-th step (all of them for runs of at most the recording limit).
    pub steps: Vec<StepRecord>,
    /// Stride of `steps` (1 = every step).
    pub step_stride: usize,
    /// Iteration logs of selected steps.
    pub iterations: Vec<IterationRecord>,
}

impl CaseRecord {
    /// The identity of case `name` run as variant `label` with `params` (their hash computed).
    pub fn new(name: &str, label: &str, params: Params) -> Self {
        CaseRecord { name: name.into(), label: label.into(), params_hash: params.hash(), params }
    }
}

impl SolverRecord {
    /// The identity of solver `name` run with `params` (their hash computed); `paper` and the
    /// hash of its default settings may be empty (a reference engine has neither).
    pub fn new(name: &str, params: Params, paper: &str, defaults_hash: String) -> Self {
        SolverRecord { name: name.into(), params_hash: params.hash(), params, paper: paper.into(), defaults_hash }
    }
}

impl RunRecord {
    /// The one constructor: a record of `case` run by `solver`, not run yet (status `skipped`
    /// without a reason, empty summary, no steps, stride 1); whoever runs the pair fills in the
    /// outcome.
    pub fn new(provenance: Provenance, case: CaseRecord, solver: SolverRecord) -> RunRecord {
        RunRecord {
            schema: SCHEMA.into(),
            provenance,
            case,
            solver,
            status: RunStatus::Skipped,
            reason: None,
            summary: Summary::default(),
            steps: vec![],
            step_stride: 1,
            iterations: vec![],
        }
    }

    /// File name for this record inside a run directory: `<case label>__<solver>.json`, or
    /// `<case label>__<solver>-<first 8 hex digits of the settings hash>.json` when the solver ran
    /// with other settings than its defaults, so that the records of a settings sweep sit side by
    /// side.
    pub fn file_name(&self) -> String {
        let s = &self.solver;
        record_file_name(&self.case.label, &s.name, &s.params_hash, &s.defaults_hash)
    }

    /// Whether this is a reference engine's record (`solver.params.reference = true`, written by
    /// `signorini grade`); false for every solver's record, including records written before the
    /// marker existed.
    pub fn is_reference(&self) -> bool {
        self.solver.params.0.get(REFERENCE_KEY).and_then(|v| v.as_bool()).unwrap_or(false)
    }

    /// Reads a record, checking the schema tag.
    pub fn read(path: &Path) -> Result<RunRecord, RecordError> {
        let text = crate::input::read_text(path)?;
        let r: RunRecord = serde_json::from_str(&text)
            .map_err(|e| RecordError::NotARecord { path: path.to_path_buf(), why: e.to_string() })?;
        if r.schema != SCHEMA {
            return Err(RecordError::Schema { path: path.to_path_buf(), found: r.schema });
        }
        Ok(r)
    }

    /// Writes the record into `dir` atomically (temporary file + rename); returns the path.
    pub fn write_atomic(&self, dir: &Path) -> std::io::Result<std::path::PathBuf> {
        let path = dir.join(self.file_name());
        write_atomic(&path, serde_json::to_string_pretty(self).map_err(std::io::Error::other)?.as_bytes())?;
        Ok(path)
    }
}

/// The file name of the record of case variant `label` run by `solver` with settings of hash
/// `params_hash` (see [`RunRecord::file_name`]); `defaults_hash` is the hash of the solver's
/// default settings (empty: unknown, no settings tag). Lets a runner know a pair's record name
/// before running it (resume, shard manifests).
pub fn record_file_name(label: &str, solver: &str, params_hash: &str, defaults_hash: &str) -> String {
    let clean = |s: &str| {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
            .collect::<String>()
    };
    let tag = if defaults_hash.is_empty() || params_hash == defaults_hash {
        String::new()
    } else {
        format!("-{}", clean(&params_hash.chars().take(8).collect::<String>()))
    };
    format!("{}__{}{tag}.json", clean(label), clean(solver))
}

/// Writes `bytes` to `path` atomically: a temporary sibling file is written, synced and renamed.
/// The temporary name is short, `.tmp.PID.N` ([`input::tmp_name`]), so that any name the file
/// system accepts for `path` (up to 255 bytes) can be written; it used to be `.NAME.PID.tmp`, 14
/// bytes longer than the name itself.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(input::tmp_name());
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Median and 95th percentile (nearest rank) of `x` (NaN if empty).
pub fn quantiles(x: &[f64]) -> Quantiles {
    if x.is_empty() {
        return Quantiles { median: f64::NAN, p95: f64::NAN };
    }
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    let rank = |p: f64| s[((p * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1];
    let median = if s.len() % 2 == 1 { s[s.len() / 2] } else { 0.5 * (s[s.len() / 2 - 1] + s[s.len() / 2]) };
    Quantiles { median, p95: rank(0.95) }
}

/// Max (NaN-propagating), mean and last of a series (NaN if empty).
pub fn metric_stat(x: &[f64]) -> MetricStat {
    if x.is_empty() {
        return MetricStat { max: f64::NAN, mean: f64::NAN, last: f64::NAN };
    }
    let max =
        x.iter().copied().fold(f64::NEG_INFINITY, |a, b| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) });
    MetricStat { max, mean: x.iter().sum::<f64>() / x.len() as f64, last: x[x.len() - 1] }
}

/// Max / mean / last of every numeric field of the per-step metrics, by field name, for the
/// fields `keep` accepts (the time `t` is never summarised). Shared by the runner and by the
/// grading of foreign trajectories, so both summarise a run the same way.
pub fn summarize_metrics(
    metrics: &[StepMetrics],
    keep: impl Fn(&str) -> bool,
) -> std::collections::BTreeMap<String, MetricStat> {
    // one step's JSON object at a time (a whole run's would take kilobytes per step), its
    // numbers appended to one series per kept key
    let mut series: Vec<(String, Vec<f64>)> = vec![];
    for (k, m) in metrics.iter().enumerate() {
        let Ok(serde_json::Value::Object(map)) = serde_json::to_value(m) else { continue };
        if series.is_empty() && k == 0 {
            series = map
                .keys()
                .filter(|key| key.as_str() != "t" && keep(key))
                .map(|key| (key.clone(), Vec::with_capacity(metrics.len())))
                .collect();
        }
        for (key, s) in &mut series {
            s.push(map.get(key.as_str()).and_then(|v| v.as_f64()).unwrap_or(f64::NAN));
        }
    }
    series.into_iter().map(|(key, s)| (key, metric_stat(&s))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_nearest_rank() {
        let x: Vec<f64> = (1..=20).map(f64::from).collect();
        let q = quantiles(&x);
        assert_eq!((q.median, q.p95), (10.5, 19.0));
        assert_eq!(quantiles(&[3.0]).p95, 3.0);
    }

    #[test]
    fn stat_propagates_nan() {
        assert!(metric_stat(&[1.0, f64::NAN, 2.0]).max.is_nan());
        let s = metric_stat(&[1.0, 3.0, 2.0]);
        assert_eq!((s.max, s.mean, s.last), (3.0, 2.0, 2.0));
    }

    #[test]
    fn nan_round_trips_as_null() {
        let m = MetricStat { max: f64::NAN, mean: f64::INFINITY, last: 1.0 };
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"max":null,"mean":null,"last":1.0}"#);
        let back: MetricStat = serde_json::from_str(&text).unwrap();
        assert!(back.max.is_nan() && back.mean.is_nan() && back.last == 1.0);
    }

    #[test]
    fn timestamp_shape() {
        let t = rfc3339_now();
        assert_eq!(t.len(), 20);
        assert!(t.starts_with("20") && t.ends_with('Z'));
    }

    #[test]
    fn atomic_write_replaces_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"first version, long").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left behind");
    }

    /// Issue 44.10: an output name of 255 bytes failed because the temporary name was longer.
    #[test]
    fn the_longest_file_name_can_be_written() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(format!("{}.json", "x".repeat(250)));
        write_atomic(&p, b"{}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file left behind");
    }
}
