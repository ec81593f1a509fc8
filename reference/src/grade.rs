//! Grading a foreign trajectory (a reference engine's `q`, `v` per step) with a case's oracle
//! into a `signorini.run/1` record, built like the runner's records.
//!
//! # Trajectory file (`signorini.trajectory/1`, JSON)
//!
//! ```text
//! { "schema": "signorini.trajectory/1",
//!   "engine": { "name": "mujoco", "version": "4.0.0", "settings": { ... } },
//!   "case": "slope", "params_hash": "...",          (optional: checked when present)
//!   "dt": 0.01,
//!   "q": [[...], ...], "v": [[...], ...],            steps + 1 states, signorini's coordinates
//!   "wall_s": [...], "contacts": [...], "iterations": [...],     per step (optional)
//!   "normal_impulse_total": [...],                  per step, N s (optional; engine-reported)
//!   "contact_frames": [{"step": k, "contacts": [[px, py, pz, nx, ny, nz, impulse, penetration], ...]}, ...] }
//!                                                   the engine's contacts at the replay's steps (optional)
//! ```
//!
//! # Metrics of a graded trajectory
//!
//! Computed from the states, as the harness computes them for its own runs: the energies
//! (kinetic, gravity, spring, total, change, injection), linear and angular momentum,
//! `penetration_max` (signorini's contact detection at the state after each step, with the case's
//! margin) and `bilateral_violation_max` (joint drift after each step), plus the momentum drift of
//! closed systems. `n_contacts` is the engine's count, `normal_impulse_total` the engine's report
//! when given. The contact-level metrics need the step's impulses and contact Jacobians, which an
//! engine does not share in signorini's terms (natural map, Signorini product, cone and
//! maximum-dissipation violations, momentum residual, creep and slip speeds, Lee residuals,
//! bilateral residual): they are NaN in the steps and absent from the summary.

use harness::case::{PreparedCase, Scenario, Trace};
use harness::metrics::{penetration_max, EnergyTerms, StepMetrics};
use harness::params::Params;
use harness::trajectory::{Recorder, TrajectoryOption};
use harness::SolveStatus;
use records::trajectory::FrameMetrics;
use records::{
    quantiles, CaseRecord, MeanMax, Provenance, RunRecord, RunStatus, SolverRecord, StageTimes, StepRecord, Summary,
};
use serde::{Deserialize, Serialize};

/// Schema tag of a trajectory file.
pub const TRAJECTORY_SCHEMA: &str = "signorini.trajectory/1";

/// The engine that produced a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Engine {
    /// Engine name (`mujoco`, `drake`).
    pub name: String,
    /// Engine version.
    pub version: String,
    /// Settings used (solver, cone, integrator, ...).
    #[serde(default)]
    pub settings: serde_json::Map<String, serde_json::Value>,
}

/// A foreign trajectory (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// Always [`TRAJECTORY_SCHEMA`].
    pub schema: String,
    /// The engine.
    pub engine: Engine,
    /// Case name, if recorded (checked against `--case`).
    #[serde(default)]
    pub case: Option<String>,
    /// Case parameter hash, if recorded (checked against the graded parameters).
    #[serde(default)]
    pub params_hash: Option<String>,
    /// Time step (s).
    pub dt: f64,
    /// `q[k]`: positions after `k` steps, signorini's coordinates.
    pub q: Vec<Vec<f64>>,
    /// `v[k]`: velocities after `k` steps.
    pub v: Vec<Vec<f64>>,
    /// Wall time of each step (s); `null` for an unknown one.
    #[serde(default, deserialize_with = "nullable_series")]
    pub wall_s: Vec<f64>,
    /// Contacts of each step, as the engine counts them.
    #[serde(default)]
    pub contacts: Vec<usize>,
    /// Solver iterations of each step.
    #[serde(default)]
    pub iterations: Vec<usize>,
    /// Sum of the normal contact impulses of each step (N s), as the engine reports them;
    /// `null` for a step it did not report.
    #[serde(default, deserialize_with = "nullable_series")]
    pub normal_impulse_total: Vec<f64>,
    /// The engine's own contacts at some steps (those of the replay's frames), for the replay
    /// sidecar ([`replay_of`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contact_frames: Vec<ContactFrame>,
}

/// The contacts an engine reports for one step: per contact `[px, py, pz, nx, ny, nz, normal
/// impulse (N s), penetration (m, >= 0)]` (the layout of [`records::trajectory::Frame::contacts`]),
/// the normal pointing from the first body of the pair to the second as the engine orders them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactFrame {
    /// The step (0-based) whose contacts these are.
    pub step: usize,
    /// The contacts.
    pub contacts: Vec<[f64; 8]>,
}

/// A series whose missing or non-finite entries are written `null` (JSON has no NaN), read as NaN.
fn nullable_series<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let v: Vec<Option<f64>> = Deserialize::deserialize(d)?;
    Ok(v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect())
}

/// Why a trajectory file is refused ([`Trajectory::parse`]) or does not fit the case it is graded
/// on ([`Trajectory::check`]): one line naming the first bad state or step.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrajectoryError {
    /// A non-standard number token (`NaN`, `Infinity`, `-Infinity`: Python's `json.dump` writes
    /// them by default, JSON has none).
    #[error(
        "not a trajectory file: {token} at line {line} column {column}: JSON has no {token}; write a missing or \
         non-finite number as null (Python: json.dump(..., allow_nan=False) finds them; replace them with None)"
    )]
    NonJsonNumber {
        /// `NaN` or `Infinity`.
        token: &'static str,
        /// Line of the parser's error (1-based).
        line: usize,
        /// Column of the parser's error (1-based).
        column: usize,
    },
    /// Not JSON, or a field missing or of the wrong type.
    #[error("not a trajectory file: {why}")]
    NotATrajectory {
        /// The parser's message.
        why: String,
    },
    /// A file of another schema.
    #[error("schema '{found}' is not '{TRAJECTORY_SCHEMA}'")]
    Schema {
        /// Its schema tag.
        found: String,
    },
    /// The trajectory records another case.
    #[error("trajectory is of case '{found}', not '{expected}'")]
    OtherCase {
        /// The case it records.
        found: String,
        /// The case it is graded on.
        expected: String,
    },
    /// The trajectory records other case parameters.
    #[error("trajectory was exported with case parameters {found}, these are {expected} (same --set as the export?)")]
    OtherParams {
        /// The parameter hash it records.
        found: String,
        /// The hash of the parameters it is graded with.
        expected: String,
    },
    /// Another time step.
    #[error("trajectory dt = {found} but the case's dt = {expected}")]
    OtherDt {
        /// The trajectory's (s).
        found: f64,
        /// The case's (s).
        expected: f64,
    },
    /// Not `steps + 1` positions and velocities.
    #[error(
        "trajectory has {positions} positions and {velocities} velocities; the case has {steps} steps ({} states \
         expected)",
        steps + 1
    )]
    StateCount {
        /// Positions given.
        positions: usize,
        /// Velocities given.
        velocities: usize,
        /// The case's steps.
        steps: usize,
    },
    /// A state of the wrong size.
    #[error("state {state} has |q| = {q}, |v| = {v}; the case has nq = {nq}, nv = {nv}")]
    StateSize {
        /// The state (0 = initial).
        state: usize,
        /// Its number of positions.
        q: usize,
        /// Its number of velocities.
        v: usize,
        /// The case's.
        nq: usize,
        /// The case's.
        nv: usize,
    },
    /// A NaN or infinity in a state.
    #[error("state {state} holds a non-finite value ({value})")]
    NonFinite {
        /// The state.
        state: usize,
        /// The value.
        value: f64,
    },
    /// A body's quaternion is not of unit length ([`QUATERNION_TOLERANCE`]).
    #[error(
        "state {state}: {point} has a quaternion of length {length:e}, not 1 (tolerance {QUATERNION_TOLERANCE:e})"
    )]
    Quaternion {
        /// The state.
        state: usize,
        /// The body.
        point: Point,
        /// The quaternion's length.
        length: f64,
    },
    /// The first state is not the case's initial configuration ([`INITIAL_TOLERANCE`]).
    #[error("state 0: {point} is at {found:?}, not at the case's initial configuration {expected:?}")]
    Initial {
        /// The body.
        point: Point,
        /// Its coordinates in the trajectory (position, quaternion).
        found: Vec<f64>,
        /// The case's.
        expected: Vec<f64>,
    },
    /// A body or node does not move as its velocities say ([`MOTION_TOLERANCE`]).
    #[error(
        "step {step}: {point} moves {moved:.3e} m but its velocities say {said:.3e} m (off by {off:.3e} m, more \
         than {:.0}% of the motion): positions and velocities disagree",
        MOTION_TOLERANCE * 100.0
    )]
    Motion {
        /// The step.
        step: usize,
        /// The body or node.
        point: Point,
        /// How far it moves (m).
        moved: f64,
        /// How far its velocities at the step's end say (m).
        said: f64,
        /// The distance from the motion the velocities allow (m).
        off: f64,
    },
    /// A wall time that is negative or not finite.
    #[error("step {step}: wall time {value} s is not a finite non-negative number")]
    WallTime {
        /// The step.
        step: usize,
        /// The time (s).
        value: f64,
    },
    /// A NaN total normal impulse (a missing one is written `null`, read as NaN).
    #[error("step {step}: normal_impulse_total is {value}")]
    NormalImpulse {
        /// The step.
        step: usize,
        /// The value.
        value: f64,
    },
    /// A per-step series of another length than the steps.
    #[error("'{series}' has {len} entries; expected {steps} (one per step) or none")]
    SeriesLength {
        /// The series (`wall_s`, `contacts`, `iterations`, `normal_impulse_total`).
        series: &'static str,
        /// Its length.
        len: usize,
        /// The case's steps.
        steps: usize,
    },
}

impl From<TrajectoryError> for String {
    fn from(e: TrajectoryError) -> String {
        e.to_string()
    }
}

/// A moving point of a world whose motion a trajectory gives: a rigid body's centre or a
/// deformable node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Point {
    /// A rigid body, by name.
    #[error("body '{0}'")]
    Body(String),
    /// A deformable node, by its index among all deformable nodes.
    #[error("deformable node {0}")]
    Node(usize),
}

/// Why `text` failed to parse as JSON at `e`, when the cause is a non-standard number token
/// (`NaN`, `Infinity`, `-Infinity`: Python's `json.dump` writes them by default, JSON has none).
fn non_json_number(text: &str, e: &serde_json::Error) -> Option<TrajectoryError> {
    if !e.is_syntax() {
        return None;
    }
    let line = text.lines().nth(e.line().checked_sub(1)?)?;
    let at = e.column().saturating_sub(1).min(line.len());
    let lo = (0..=at.saturating_sub(12)).rev().find(|&i| line.is_char_boundary(i)).unwrap_or(0);
    let hi = (at.saturating_add(12).min(line.len())..=line.len()).find(|&i| line.is_char_boundary(i))?;
    let around = &line[lo..hi];
    let token = ["NaN", "Infinity"].into_iter().find(|t| around.contains(t))?;
    Some(TrajectoryError::NonJsonNumber { token, line: e.line(), column: e.column() })
}

impl Trajectory {
    /// Parses a trajectory file's text; the error is one line.
    pub fn parse(text: &str) -> Result<Trajectory, TrajectoryError> {
        let t: Trajectory = serde_json::from_str(text).map_err(|e| {
            non_json_number(text, &e).unwrap_or_else(|| TrajectoryError::NotATrajectory { why: e.to_string() })
        })?;
        if t.schema != TRAJECTORY_SCHEMA {
            return Err(TrajectoryError::Schema { found: t.schema });
        }
        Ok(t)
    }

    /// Checks that the trajectory is a whole run of `scenario` (case `case`, parameters `params`):
    /// the same `dt`, `steps + 1` finite states of the right sizes, a possible motion (unit
    /// quaternions, positions consistent with the velocities over each step, the case's initial
    /// configuration; see [`MOTION_TOLERANCE`], [`QUATERNION_TOLERANCE`]), finite non-negative
    /// wall times, per-step series of `steps` entries. The error is one line naming the first bad
    /// step.
    pub fn check(&self, case: &str, params: &Params, scenario: &Scenario) -> Result<(), TrajectoryError> {
        if let Some(c) = &self.case {
            if c != case {
                return Err(TrajectoryError::OtherCase { found: c.clone(), expected: case.to_string() });
            }
        }
        if let Some(h) = &self.params_hash {
            if *h != params.hash() {
                return Err(TrajectoryError::OtherParams { found: h.clone(), expected: params.hash() });
            }
        }
        let same_dt = (self.dt - scenario.dt).abs() <= 1e-12 * scenario.dt; // false for NaN
        if !same_dt {
            return Err(TrajectoryError::OtherDt { found: self.dt, expected: scenario.dt });
        }
        let (n, nq, nv) = (scenario.steps, scenario.world.positions().len(), scenario.world.velocities().len());
        if self.q.len() != n + 1 || self.v.len() != n + 1 {
            return Err(TrajectoryError::StateCount { positions: self.q.len(), velocities: self.v.len(), steps: n });
        }
        for (k, (q, v)) in self.q.iter().zip(&self.v).enumerate() {
            if q.len() != nq || v.len() != nv {
                return Err(TrajectoryError::StateSize { state: k, q: q.len(), v: v.len(), nq, nv });
            }
            if let Some(&x) = q.iter().chain(v).find(|x| !x.is_finite()) {
                return Err(TrajectoryError::NonFinite { state: k, value: x });
            }
        }
        self.check_motion(scenario)?;
        if let Some((k, &x)) = self.wall_s.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x >= 0.0)) {
            return Err(TrajectoryError::WallTime { step: k, value: x });
        }
        if let Some((k, &x)) = self.normal_impulse_total.iter().enumerate().find(|(_, x)| x.is_nan()) {
            return Err(TrajectoryError::NormalImpulse { step: k, value: x });
        }
        for (name, len) in [
            ("wall_s", self.wall_s.len()),
            ("contacts", self.contacts.len()),
            ("iterations", self.iterations.len()),
            ("normal_impulse_total", self.normal_impulse_total.len()),
        ] {
            if len != 0 && len != n {
                return Err(TrajectoryError::SeriesLength { series: name, len, steps: n });
            }
        }
        Ok(())
    }
}

/// How far a body's quaternion may be from unit length: `| |q| - 1 | <= QUATERNION_TOLERANCE`.
/// Engines normalise their quaternions to rounding (1e-15); 1e-6 leaves room for single-precision
/// exports and refuses zero, scaled or unnormalised ones.
pub const QUATERNION_TOLERANCE: f64 = 1e-6;

/// Relative tolerance of the step consistency check ([`Trajectory::check`]): the displacement of a
/// body (or deformable node) over step `k` must lie within this fraction of the step's motion of
/// the segment between `dt v_k` and `dt v_{k+1}`.
///
/// The harness integrates `x_{k+1} = x_k + dt v_{k+1}` (symplectic Euler), which sits on the
/// segment's end; θ-method integrators (`x_{k+1} = x_k + dt (θ v_{k+1} + (1 − θ) v_k)`, SAP's
/// `theta_vq`, explicit Euler at θ = 0) sit on it too, so every first-order engine passes exactly
/// (to rounding). 1% of the motion covers what an engine's conversion to signorini's coordinates
/// adds at second order in `dt` (a velocity reported at a point slightly off the centre of mass of
/// a spinning body); an impossible motion (a box at rest rising 1 m per step, a jump to 1e308) is
/// off by about 100%.
pub const MOTION_TOLERANCE: f64 = 1e-2;

/// Absolute slack of the step consistency check, relative to the size of the coordinates: rounding
/// of `x + dt v` in double precision is about 1e-16 |x|; 1e-9 (1 + |x|) m leaves a wide margin
/// for bodies at rest.
pub const ROUNDING_TOLERANCE: f64 = 1e-9;

/// How far the first state's body coordinates may be from the case's initial configuration,
/// relative: `|q0_j - q_j| <= INITIAL_TOLERANCE (1 + |q_j|)`. The MJCF export writes numbers that
/// round-trip exactly, so an engine starts there to rounding; a trajectory shifted into the plane
/// from its first state on is refused.
pub const INITIAL_TOLERANCE: f64 = 1e-6;

/// Distance from `x` to the segment `[a, b]` (3-vectors).
fn distance_to_segment(x: [f64; 3], a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let w = [x[0] - a[0], x[1] - a[1], x[2] - a[2]];
    let dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    let t = if dd > 0.0 { ((w[0] * d[0] + w[1] * d[1] + w[2] * d[2]) / dd).clamp(0.0, 1.0) } else { 0.0 };
    norm3([w[0] - t * d[0], w[1] - t * d[1], w[2] - t * d[2]])
}

/// Euclidean norm without overflow (`1e308` stays finite).
fn norm3(x: [f64; 3]) -> f64 {
    x[0].hypot(x[1]).hypot(x[2])
}

impl Trajectory {
    /// Checks that the motion is possible (the states are already known finite and of the right
    /// sizes): the first state is the case's initial configuration (within [`INITIAL_TOLERANCE`],
    /// quaternions up to sign), every body's quaternion is of unit length within
    /// [`QUATERNION_TOLERANCE`], and over every step each body's centre and each deformable node
    /// moves as its velocities say (within [`MOTION_TOLERANCE`] of the motion, see there). The
    /// rotational part is checked through the unit quaternions only. The error names the first bad
    /// step or state.
    fn check_motion(&self, scenario: &Scenario) -> Result<(), TrajectoryError> {
        let world = &scenario.world;
        let bodies = world.bodies.len();
        let points = |q: &[f64]| -> Vec<[f64; 3]> {
            let mut p: Vec<[f64; 3]> = (0..bodies).map(|i| [q[7 * i], q[7 * i + 1], q[7 * i + 2]]).collect();
            p.extend(q[7 * bodies..].chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
            p
        };
        let name = |i: usize| {
            if i < bodies {
                Point::Body(world.bodies[i].name.clone())
            } else {
                Point::Node(i - bodies)
            }
        };
        for (k, q) in self.q.iter().enumerate() {
            for i in 0..bodies {
                let n = q[7 * i + 3..7 * i + 7].iter().map(|x| x * x).sum::<f64>().sqrt();
                if (n - 1.0).abs() > QUATERNION_TOLERANCE {
                    return Err(TrajectoryError::Quaternion { state: k, point: name(i), length: n });
                }
            }
        }
        let q0 = world.positions();
        for i in 0..bodies {
            let o = 7 * i;
            let off = |sign: f64| {
                (0..7)
                    .map(|j| {
                        let s = if j < 3 { 1.0 } else { sign };
                        (self.q[0][o + j] - s * q0[o + j]).abs() / (1.0 + q0[o + j].abs())
                    })
                    .fold(0.0, f64::max)
            };
            if off(1.0).min(off(-1.0)) > INITIAL_TOLERANCE {
                return Err(TrajectoryError::Initial {
                    point: name(i),
                    found: self.q[0][o..o + 7].to_vec(),
                    expected: q0[o..o + 7].to_vec(),
                });
            }
        }
        for k in 0..self.q.len().saturating_sub(1) {
            let (x0, x1) = (points(&self.q[k]), points(&self.q[k + 1]));
            let explicit = points(&world.integrate_positions(&self.q[k], &self.v[k], self.dt));
            let symplectic = points(&world.integrate_positions(&self.q[k], &self.v[k + 1], self.dt));
            for i in 0..x0.len() {
                let d = |a: [f64; 3], b: [f64; 3]| norm3([a[0] - b[0], a[1] - b[1], a[2] - b[2]]);
                let motion = d(x1[i], x0[i]).max(d(explicit[i], x0[i])).max(d(symplectic[i], x0[i]));
                let off = distance_to_segment(x1[i], explicit[i], symplectic[i]);
                let allowed = MOTION_TOLERANCE * motion + ROUNDING_TOLERANCE * (1.0 + norm3(x0[i]));
                if off.is_nan() || allowed.is_nan() || off > allowed {
                    return Err(TrajectoryError::Motion {
                        step: k,
                        point: name(i),
                        moved: d(x1[i], x0[i]),
                        said: d(symplectic[i], x0[i]),
                        off,
                    });
                }
            }
        }
        Ok(())
    }
}

/// The metrics that a trajectory cannot give (NaN in steps, absent from the summary).
pub const UNMEASURED: &[&str] = &[
    "momentum_rel",
    "natmap_abs_l2",
    "natmap_rel_l2",
    "natmap_rel1_l2",
    "signorini_max",
    "cone_violation_max",
    "mdp_violation_max",
    "creep_speed_max",
    "slip_speed_max",
    "bilateral_residual",
    "lee_residual",
    "lee_residual_neglog10",
    "lee_residual_rel",
    "n_active",
    "n_stick",
    "n_slip",
];

/// The oracle's view of a checked trajectory: states plus the metrics computable from them.
pub fn trace_of(t: &Trajectory, scenario: &Scenario) -> Trace {
    let mut w = scenario.world.clone();
    w.set_state(&t.q[0], &t.v[0]);
    let mut e_prev = EnergyTerms::of(&w).total;
    let mut metrics = Vec::with_capacity(scenario.steps);
    for k in 0..scenario.steps {
        w.set_state(&t.q[k + 1], &t.v[k + 1]);
        let e = EnergyTerms::of(&w);
        let contacts = harness::geometry::detect(&w, scenario.margin);
        let change = e.total - e_prev;
        e_prev = e.total;
        metrics.push(StepMetrics {
            n_contacts: t.contacts.get(k).copied().unwrap_or(0),
            penetration_max: penetration_max(&contacts),
            kinetic: e.kinetic,
            gravity: e.gravity,
            spring: e.spring,
            elastic: e.elastic,
            energy: e.total,
            energy_change: change,
            energy_injection: change.max(0.0),
            linear_momentum: w.linear_momentum().norm(),
            angular_momentum: w.angular_momentum().norm(),
            normal_impulse_total: t.normal_impulse_total.get(k).copied().unwrap_or(f64::NAN),
            bilateral_violation_max: w.bilateral_rows().violation_max(),
            ..StepMetrics::unmeasured((k + 1) as f64 * scenario.dt)
        });
    }
    Trace { dt: scenario.dt, q: t.q.clone(), v: t.v.clone(), metrics, completed: true }
}

/// The replay sidecar ([`records::trajectory`]) of a checked trajectory: the engine's poses on the
/// case's scene at the default stride ([`replay_stride`]) and the graded metrics of `trace`
/// ([`trace_of`]; the residual is not measured, NaN). A frame's contacts are the engine's own
/// ([`Trajectory::contact_frames`]: point, normal, normal impulse, penetration) when it reported
/// that step; otherwise those signorini detects at the engine's poses, with impulse 0 (an engine
/// shares no per-contact impulse otherwise). The sidecar's notes say which.
pub fn replay_of(t: &Trajectory, scenario: &Scenario, trace: &Trace, label: &str) -> records::trajectory::Trajectory {
    let n = scenario.steps;
    let mut rec = Recorder::new(&scenario.world, scenario.dt, n, replay_stride(scenario));
    let mut w = scenario.world.clone();
    let engine: std::collections::HashMap<usize, &ContactFrame> =
        t.contact_frames.iter().map(|f| (f.step, f)).collect();
    let recorded: Vec<usize> = (0..n).filter(|&k| rec.wants(k, n)).collect();
    let mut from_engine = 0;
    for &k in &recorded {
        w.set_state(&t.q[k + 1], &t.v[k + 1]);
        w.time = (k + 1) as f64 * scenario.dt;
        let m = &trace.metrics[k];
        let metrics = FrameMetrics {
            penetration_max: m.penetration_max,
            natmap_abs_l2: f64::NAN,
            natmap_rel_l2: f64::NAN,
            iterations: t.iterations.get(k).copied().unwrap_or(0),
            unconverged: None,
        };
        match engine.get(&k) {
            Some(f) => {
                from_engine += 1;
                rec.record_rows(k, &w, f.contacts.iter().map(|c| c.map(|x| x as f32)).collect(), metrics);
            }
            None => rec.record(k, &w, &harness::geometry::detect(&w, scenario.margin), None, metrics),
        }
    }
    let name = &t.engine.name;
    let mut notes = vec![format!(
        "{name}'s trajectory graded by signorini: the residual is not measured (n/a); the penetration under the \
         view is signorini's at {name}'s poses"
    )];
    if from_engine > 0 {
        notes.push(format!(
            "contacts: {name}'s own in {from_engine} of {} frames (point, normal, normal impulse, penetration), \
             as the step's solve saw them: at the state the step started from",
            recorded.len()
        ));
    }
    if from_engine < recorded.len() {
        notes.push(format!(
            "contacts: signorini's detection at {name}'s poses in {} of {} frames (impulse not reported: 0)",
            recorded.len() - from_engine,
            recorded.len()
        ));
    }
    records::trajectory::Trajectory { case: label.to_string(), solver: name.clone(), notes, ..rec.finish() }
}

/// The stride of a graded trajectory's replay (a run's default, [`TrajectoryOption::Auto`]); the
/// export names it (`replay_stride`) so that an engine runner reports its contacts at these steps
/// (and the last).
pub fn replay_stride(scenario: &Scenario) -> usize {
    TrajectoryOption::Auto.stride(scenario.steps, scenario.dt, &scenario.world).unwrap_or(1)
}

/// Grades a checked trajectory with `case`'s oracle and builds its run record: solver = the
/// engine (name as given, `solver.params` = `{ reference: true, engine, version, settings }`),
/// timings from the trajectory's per-step wall times.
pub fn grade(case: &dyn PreparedCase, label: &str, t: &Trajectory, provenance: Provenance) -> RunRecord {
    let (params, scenario) = (&case.params_json(), case.scenario());
    let trace = trace_of(t, scenario);
    let mut sp = Params::default();
    sp.0.insert(records::REFERENCE_KEY.into(), serde_json::Value::Bool(true));
    sp.0.insert("engine".into(), t.engine.name.clone().into());
    sp.0.insert("version".into(), t.engine.version.clone().into());
    sp.0.insert("settings".into(), serde_json::Value::Object(t.engine.settings.clone()));
    let mut summary = Summary {
        steps: scenario.steps,
        failures: 0,
        unconverged_steps: 0,
        wall_per_step_s: quantiles(&t.wall_s),
        stage_times: StageTimes { solve_s: t.wall_s.iter().sum(), ..Default::default() },
        ..Default::default()
    };
    if !t.iterations.is_empty() {
        let it: Vec<f64> = t.iterations.iter().map(|&i| i as f64).collect();
        summary.iterations_per_step =
            MeanMax { mean: it.iter().sum::<f64>() / it.len() as f64, max: it.iter().copied().fold(0.0, f64::max) };
    } else {
        summary.iterations_per_step = MeanMax { mean: f64::NAN, max: f64::NAN };
    }
    summary.metrics = records::summarize_metrics(&trace.metrics, |k| {
        !(UNMEASURED.contains(&k) || (k == "normal_impulse_total" && t.normal_impulse_total.is_empty()))
    });
    summary.momentum_drift = harness::metrics::momentum::drift(&scenario.world, &trace);
    for check in case.grade(&trace) {
        summary.oracle.insert(check.name.clone(), check);
    }
    let steps = trace
        .metrics
        .iter()
        .enumerate()
        .map(|(k, m)| StepRecord {
            step: k,
            status: SolveStatus::Solved,
            iterations: t.iterations.get(k).copied().unwrap_or(0),
            wall_s: t.wall_s.get(k).copied().unwrap_or(f64::NAN),
            metrics: m.clone(),
            accuracy: None,
        })
        .collect();
    let mut record = RunRecord::new(
        provenance,
        CaseRecord::new(case.name(), label, params.clone()),
        SolverRecord::new(&t.engine.name, sp, "", String::new()),
    );
    record.status = RunStatus::Ok;
    record.summary = summary;
    record.steps = steps;
    record
}

/// A trajectory from a signorini run's trace (for tests and for comparing engines on equal
/// terms): `engine` names it.
pub fn from_trace(trace: &Trace, engine: Engine, case: &str, params: &Params, wall_s: Vec<f64>) -> Trajectory {
    Trajectory {
        schema: TRAJECTORY_SCHEMA.into(),
        engine,
        case: Some(case.into()),
        params_hash: Some(params.hash()),
        dt: trace.dt,
        q: trace.q.clone(),
        v: trace.v.clone(),
        wall_s,
        contacts: trace.metrics.iter().map(|m| m.n_contacts).collect(),
        iterations: vec![],
        normal_impulse_total: trace.metrics.iter().map(|m| m.normal_impulse_total).collect(),
        contact_frames: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 44.10: a trajectory with Python's default `NaN` token gave "expected value at line 1
    /// column 134"; the message now says JSON has no NaN and how to write it, and `null` reads.
    #[test]
    fn nan_tokens_are_explained_and_null_reads_as_nan() {
        let text = |x: &str| {
            format!(
                r#"{{"schema": "{TRAJECTORY_SCHEMA}", "engine": {{"name": "e", "version": "1"}}, "dt": 0.01,
                "q": [[0.0], [1.0]], "v": [[0.0], [0.0]], "wall_s": [{x}], "normal_impulse_total": [{x}]}}"#
            )
        };
        let e = Trajectory::parse(&text("NaN")).unwrap_err();
        assert!(matches!(e, TrajectoryError::NonJsonNumber { token: "NaN", line: 2, .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("JSON has no NaN") && e.contains("as null") && e.contains("line 2"), "{e}");
        let e = Trajectory::parse(&text("-Infinity")).unwrap_err().to_string();
        assert!(e.contains("JSON has no Infinity"), "{e}");
        let t = Trajectory::parse(&text("null")).unwrap();
        assert!(t.wall_s[0].is_nan() && t.normal_impulse_total[0].is_nan());
        // other syntax errors keep serde's message
        let e = Trajectory::parse("{\"schema\": ").unwrap_err().to_string();
        assert!(e.starts_with("not a trajectory file: EOF"), "{e}");
    }
}
