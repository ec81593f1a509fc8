//! `jointed_beam`: a chain of `n` rigid box links joined end to end by hinges about y, the first
//! link hinged to the world at its free end, released horizontal at rest under gravity. With the
//! defaults the hinges are free: a frictionless compound-pendulum chain that swings. With
//! `bending_stiffness = k > 0` every hinge (the pivot included) also carries a torsional spring
//! about y ([`harness::model::JointKind::Angular`], compliance `1/k`, Macklin et al. Eqs. 7–8), so
//! the chain is a cantilever beam: Macklin et al.'s flexible beam (§10.1.2, Fig. 7: 16 rigid
//! bodies of 0.003 kg joined with bending stiffness 250 N m; the link geometry is not given, the
//! variant `jointed_beam-flexible` takes 5 cm × 1 cm × 1 cm links). Their observation — relaxation
//! cannot reach such a joint stiffness within hundreds of iterations, their PCR can — is asserted
//! in `tests/macklin_cases.rs` on this variant.
//!
//! # Scene
//!
//! Link `i = 0 .. n-1`: box `link_length x width x width` (x, y, z), mass `mass`, centre
//! `((i + 1/2) L, 0, 0)`, at rest. Hinge `pivot` (about y) joins link 0 at the origin to the
//! world; hinge `joint_i` joins links `i-1` and `i` at `(i L, 0, 0)`. Gravity along -z. No
//! colliders: no contacts, so the joints are the only constraints and nothing dissipates.
//!
//! # Oracle checks
//!
//! Energy available: the chain's centre of mass can fall at most `n L / 2` below its start, so
//! the kinetic energy stays below `E_s = n m g n L / 2` and each link's angular speed below
//! `ω_max = sqrt(2 E_s / I)` (`I = m (L² + w²)/12` about y through its centre).
//!
//! * `joint_violation` — `max_k StepMetrics.bilateral_violation_max` (m); expected 0. A
//!   velocity-level (linearised) joint leaves a position error of `h² ω² r / 2` per step at an
//!   anchor a distance `r` from a centre turning at `ω` (drumwright README §10.4, the pendulum case's
//!   `h² v² / (2 L)`); two anchors of `r = L/2` at `ω <= ω_max` give `h² ω_max² L / 2 = 6 n² g h² ·
//!   L²/(L² + w²)`. Tolerance: `g h²` times that factor `6 n² L²/(L² + w²)` (about `150 g h²` =
//!   1.5e-3 m at the defaults). Stabilised solvers sit far below it; an unstabilised drift that
//!   accumulates over steps exceeds it.
//! * `energy` — `max_k (E_k − E_0) / E_s` (`StepMetrics.energy`, `E_0` the energy before the
//!   first step); expected 0 (frictionless joints: an implicit or symplectic scheme must not gain
//!   energy). Tolerance: the joint tolerance `δ` lets every centre sit up to `n δ` off (the drifts
//!   of the joints above it add), a potential-energy error `n m g n δ`, i.e. `2 δ / L` of `E_s`;
//!   plus the symplectic-Euler energy oscillation, `h ω_max` relative (first order in `h`).
//!   Free hinges only: the torsional springs' energy is not in `StepMetrics.energy`, so on the
//!   flexible beam the check could not see a gain stored in them, and it is not made there.
//!   The clamped beam's `E_s` is `n m g 2 δ` (no link falls more than the tip, and the tip at
//!   most twice its static sag `δ` below), which sets `ω_max` and the joint tolerance
//!   (1.9e-2 m for the variant).
//! * `tip_deflection` (only with `bending_stiffness > 0`) — the tip's sag below the pivot at the
//!   end of the run (m); expected the cantilever's static deflection. Joint `i` (at `x = i L`,
//!   `i = 0` the pivot) carries the moment of the links beyond it, `M_i = m g L (n − i)² / 2`, and
//!   turns by `θ_i = M_i / k`, which lowers the tip by `θ_i L (n − i)`; summed (small angles):
//!   `δ = m g L² / (2 k) · Σ_{s=1..n} s³` (2.72 mm for the flexible beam). The release transient
//!   decays: the implicit spring law damps the chain's lowest mode `ω_1` (a cantilever of
//!   `EI = k L`, line mass `m / L`, length `n L`: `ω_1 = 3.516 √(k L² / m) / (n L)²`,
//!   79 rad/s for the variant) by `(1 + ω_1² h²)^(-1/2)` per step, to `3e-11` of `δ` after its
//!   100 steps of 10 ms; the small-angle formula is exact to `(Σ θ_i)² ≈ 2e-5` relative.
//!   Tolerance: `0.01 δ` — a solver must reach the joint stiffness to 1 % (a joint 1 % too soft
//!   sags 1 % too far); the discretisation errors above are far below it.

use crate::{check, default_struct, trace_is_whole, unmeasured};
use harness::model::{DofMask, Joint, Material, RigidBody, Shape, World};
use harness::{Capabilities, CaseDef, CaseError, CaseVariant, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("jointed_beam.toml");
const SOURCE: &str = "cases/src/jointed_beam.toml";

/// Most links accepted.
pub const MAX_LINKS: i64 = 1000;

/// Parameters of `jointed_beam` (defaults in `cases/src/jointed_beam.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointedBeamParams {
    /// Number of links (1 ..= `MAX_LINKS`).
    pub n: i64,
    /// Mass of a link (kg, > 0).
    pub mass: f64,
    /// Link length (m, > 0).
    pub link_length: f64,
    /// Edge of a link's square cross-section (m, > 0).
    pub width: f64,
    /// Gravity magnitude along -z (m/s^2, > 0).
    pub gravity: f64,
    /// Torsional stiffness of every hinge (N m/rad, >= 0; 0: free hinges).
    pub bending_stiffness: f64,
    /// Torsional damping of every hinge (N m s/rad, >= 0; used with `bending_stiffness > 0`).
    pub bending_damping: f64,
    /// Time step (s).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
}

impl Default for JointedBeamParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for JointedBeamParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(1..=MAX_LINKS).contains(&self.n) {
            return Err(harness::FieldError::new("n", format!("must be in [1, {MAX_LINKS}], got {}", self.n)));
        }
        check::positive("mass", self.mass)?;
        check::positive("link_length", self.link_length)?;
        check::positive("width", self.width)?;
        check::positive("gravity", self.gravity)?;
        check::non_negative("bending_stiffness", self.bending_stiffness)?;
        check::non_negative("bending_damping", self.bending_damping)?;
        check::time_grid(self.dt, self.duration)
    }
}

impl JointedBeamParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Energy scale `E_s` (J): the most potential energy the chain can release. Free hinges:
    /// `n m g n L / 2` (the centre of mass falls at most `n L / 2`). Clamped beam: no link falls
    /// more than the tip, and the tip at most twice its static sag (a linear system released from
    /// rest overshoots its static shape at most by the same amount): `n m g 2 δ`.
    pub fn energy_scale(&self) -> f64 {
        let n = self.n as f64;
        if self.bending_stiffness > 0.0 {
            return n * self.mass * self.gravity * 2.0 * self.static_tip_deflection();
        }
        n * self.mass * self.gravity * n * self.link_length / 2.0
    }
    /// Largest angular speed of a link, `sqrt(2 E_s / I)` (rad/s).
    pub fn omega_max(&self) -> f64 {
        let (l, w) = (self.link_length, self.width);
        let inertia = self.mass * (l * l + w * w) / 12.0;
        (2.0 * self.energy_scale() / inertia).sqrt()
    }
    /// Tolerance of `joint_violation`, `h² ω_max² L / 2` (m).
    pub fn joint_tolerance(&self, dt: f64) -> f64 {
        dt * dt * self.omega_max().powi(2) * self.link_length / 2.0
    }
    /// Tolerance of `energy` (relative to `E_s`): `2 δ / L + h ω_max`.
    pub fn energy_tolerance(&self, dt: f64) -> f64 {
        2.0 * self.joint_tolerance(dt) / self.link_length + dt * self.omega_max()
    }
    /// Static sag of the tip of the clamped beam (m, small angles; see the module doc):
    /// `m g L² / (2 k) Σ_{s=1..n} s³`; 0 for free hinges (no static shape).
    pub fn static_tip_deflection(&self) -> f64 {
        if self.bending_stiffness == 0.0 {
            return 0.0;
        }
        let n = self.n as f64;
        let sum_cubes = (n * (n + 1.0) / 2.0).powi(2);
        self.mass * self.gravity * self.link_length.powi(2) / (2.0 * self.bending_stiffness) * sum_cubes
    }
    /// The scene.
    pub fn world(&self) -> World {
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let l = self.link_length;
        let half = [0.5 * l, 0.5 * self.width, 0.5 * self.width];
        for i in 0..self.n as usize {
            let c = Vector3::new((i as f64 + 0.5) * l, 0.0, 0.0);
            let shape = Shape::Box { half_extents: half };
            w.bodies.push(
                RigidBody::new(format!("link_{i}"), shape, self.mass, c, Material::rigid(0.0))
                    .with_dofs(DofMask::PLANAR_XZ),
            );
        }
        w.joints.push(Joint::hinge_at(&w, 0, None, Vector3::zeros(), Vector3::y()).named("pivot"));
        for i in 1..self.n as usize {
            let p = Vector3::new(i as f64 * l, 0.0, 0.0);
            w.joints.push(Joint::hinge_at(&w, i, Some(i - 1), p, Vector3::y()).named(format!("joint_{i}")));
        }
        if self.bending_stiffness > 0.0 {
            let (k, b) = (self.bending_stiffness, self.bending_damping);
            for i in 0..self.n as usize {
                let parent = i.checked_sub(1);
                let spring = Joint::angular_at(&w, i, parent, Vector3::y(), k, b).named(format!("bending_{i}"));
                w.joints.push(spring);
            }
        }
        w
    }
    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (jt, et) = (self.joint_tolerance(scenario.dt), self.energy_tolerance(scenario.dt));
        let (sag, sag_tol) = (self.static_tip_deflection(), 0.01 * self.static_tip_deflection());
        let flexible = self.bending_stiffness > 0.0;
        if !trace_is_whole(scenario, trace) || trace.metrics.is_empty() {
            if flexible {
                return vec![unmeasured("joint_violation", 0.0, jt), unmeasured("tip_deflection", sag, sag_tol)];
            }
            return vec![unmeasured("joint_violation", 0.0, jt), unmeasured("energy", 0.0, et)];
        }
        let nan_max = |a: f64, b: f64| if a.is_nan() || b.is_nan() { f64::NAN } else { a.max(b) };
        let viol = trace.metrics.iter().map(|m| m.bilateral_violation_max).fold(0.0, nan_max);
        let e0 = trace.metrics[0].energy - trace.metrics[0].energy_change;
        let gain = trace.metrics.iter().map(|m| m.energy - e0).fold(0.0, nan_max) / self.energy_scale();
        if flexible {
            let tip = self.tip_sag(&scenario.world, trace);
            return vec![
                OracleCheck::abs("joint_violation", viol, 0.0, jt),
                OracleCheck::abs("tip_deflection", tip, sag, sag_tol),
            ];
        }
        vec![OracleCheck::abs("joint_violation", viol, 0.0, jt), OracleCheck::abs("energy", gain, 0.0, et)]
    }
    /// The tip's sag below the pivot (m) in the last state of `trace`: the far end of the last
    /// link, `x + R (L/2, 0, 0)` (positions are 7 numbers per body, `x` then the quaternion
    /// `w, i, j, k`).
    fn tip_sag(&self, world: &World, trace: &Trace) -> f64 {
        let mut end = world.clone();
        let (q, v) = (trace.q.last().expect("whole trace"), trace.v.last().expect("whole trace"));
        end.set_state(q, v);
        let last = end.bodies.last().expect("n >= 1");
        let tip = last.position + last.orientation * Vector3::new(0.5 * self.link_length, 0.0, 0.0);
        -tip.z
    }
}

/// The `jointed_beam` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct JointedBeam;

impl CaseDef for JointedBeam {
    type Params = JointedBeamParams;
    const NAME: &'static str = "jointed_beam";
    const SUMMARY: &'static str =
        "chain of 5 rigid links on frictionless hinges released horizontal (Macklin's jointed beam): joints hold, no energy gain";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    const VARIANTS: &'static [CaseVariant] = &[CaseVariant {
        suffix: "flexible",
        set: "n = 16\nmass = 0.003\nlink_length = 0.05\nwidth = 0.01\nbending_stiffness = 250.0\ndt = 0.01\nduration = 1.0",
        why: "Macklin's flexible beam: 16 links of 0.003 kg, bending stiffness 250 N m, clamped; static tip sag",
    }];
    fn scenario(&self, p: &JointedBeamParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs = Capabilities { rigid_bodies: true, bilateral_constraints: true, ..Default::default() };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: 0.01 * p.width, needs })
    }
    fn grade(&self, p: &JointedBeamParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::StepMetrics;
    use harness::{Case, Params};
    use rstest::rstest;

    #[test]
    fn defaults_build_a_chain_and_every_parameter_is_in_the_toml() {
        let p = JointedBeamParams::default();
        let sc = crate::test_util::build(&JointedBeam, &JointedBeam.defaults()).unwrap();
        assert_eq!((sc.world.bodies.len(), sc.world.joints.len()), (5, 5));
        let jt = p.joint_tolerance(p.dt);
        assert!(jt > 1.4e-3 && jt < 1.5e-3, "{jt}");
        let mut a: Vec<_> = JointedBeam.defaults().0.keys().cloned().collect();
        let mut b: Vec<_> = Params::from_settings(&p).0.keys().cloned().collect();
        a.sort();
        b.sort();
        assert_eq!(a, b);
    }

    /// The flexible variant: 16 links, 16 hinges and 16 bending springs; the static sag is the
    /// closed form `m g L² / (2 k) (n (n + 1) / 2)²` = 2.7217 mm; the tip check reads the last
    /// state (a straight beam fails it, one lowered by the sag passes), and the energy check is
    /// not made (the springs' energy is not in the metric).
    #[test]
    fn flexible_variant_is_a_clamped_beam_graded_on_its_static_sag() {
        let v = JointedBeam::VARIANTS.iter().find(|v| v.suffix == "flexible").unwrap();
        let mut prm = JointedBeam.defaults();
        for (k, val) in v.params("jointed_beam").0 {
            prm.0.insert(k, val);
        }
        let sc = crate::test_util::build(&JointedBeam, &prm).unwrap();
        assert_eq!((sc.world.bodies.len(), sc.world.joints.len()), (16, 32));
        assert!(sc.world.joints[16..].iter().all(|j| j.is_spring()));
        let p: JointedBeamParams = prm.decode("jointed_beam").unwrap();
        let sag = p.static_tip_deflection();
        let by_hand = 0.003 * 9.81 * 0.05 * 0.05 / (2.0 * 250.0) * (16.0 * 17.0 / 2.0_f64).powi(2);
        assert!((sag - by_hand).abs() < 1e-15 && (sag - 2.7217e-3).abs() < 1e-7, "{sag}");
        let (q, v0) = (sc.world.positions(), sc.world.velocities());
        let trace_ending_at = |dz: f64| {
            let mut w = sc.world.clone();
            for b in w.bodies.iter_mut() {
                b.position.z -= dz;
            }
            let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q.clone()], v: vec![v0.clone()], metrics: vec![] };
            for k in 1..=sc.steps {
                tr.q.push(if k == sc.steps { w.positions() } else { q.clone() });
                tr.v.push(v0.clone());
                tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, ..Default::default() });
            }
            crate::test_util::oracle(&JointedBeam, &prm, &sc, &tr)
        };
        let names = crate::test_util::names;
        let straight = trace_ending_at(0.0);
        assert_eq!(names(&straight), ["joint_violation", "tip_deflection"]);
        assert!(!straight[1].pass && (straight[1].measured).abs() < 1e-15);
        let sagged = trace_ending_at(sag);
        assert!(sagged[1].pass && (sagged[1].measured - sag).abs() < 1e-12, "{:?}", sagged[1]);
        assert!(!trace_ending_at(1.02 * sag)[1].pass);
    }

    #[rstest]
    #[case("n", "0", "n:")]
    #[case("mass", "0", "mass:")]
    #[case("link_length", "-1", "link_length:")]
    #[case("width", "0", "width:")]
    #[case("dt", "0", "dt:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let mut p = JointedBeam.defaults();
        p.set(key, raw, "jointed_beam").unwrap();
        let e = crate::test_util::build(&JointedBeam, &p).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    #[test]
    fn exact_trace_passes_drift_and_gain_fail() {
        let prm = JointedBeam.defaults();
        let sc = crate::test_util::build(&JointedBeam, &prm).unwrap();
        let (q, v) = (sc.world.positions(), sc.world.velocities());
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q.clone()], v: vec![v.clone()], metrics: vec![] };
        for k in 1..=sc.steps {
            tr.q.push(q.clone());
            tr.v.push(v.clone());
            tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, ..Default::default() });
        }
        assert!(crate::test_util::oracle(&JointedBeam, &prm, &sc, &tr).iter().all(|c| c.pass));
        let mut bad = tr.clone();
        for m in bad.metrics.iter_mut() {
            m.bilateral_violation_max = 0.01;
            m.energy = 1.0;
        }
        bad.metrics[0].energy_change = 1.0; // E_0 = 0: a gain of 1 J = 0.41 E_s
        assert!(crate::test_util::oracle(&JointedBeam, &prm, &sc, &bad).iter().all(|c| !c.pass));
        bad.completed = false;
        assert!(crate::test_util::oracle(&JointedBeam, &prm, &sc, &bad).iter().all(|c| c.measured.is_nan()));
    }

    /// The checks' values and tolerances: the largest joint violation of the run, and the largest
    /// energy above the start `E_0 = E(1) − ΔE(1)` over the energy scale `E_s`; tolerances the
    /// derived joint and energy tolerances (tested below), the sag's 1 %.
    #[test]
    fn checks_read_the_largest_violation_and_energy_gain() {
        use crate::test_util::{check, names, oracle};
        let prm = JointedBeam.defaults();
        let p: JointedBeamParams = prm.decode("jointed_beam").unwrap();
        let sc = crate::test_util::build(&JointedBeam, &prm).unwrap();
        let (q, v) = (sc.world.positions(), sc.world.velocities());
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q.clone()], v: vec![v.clone()], metrics: vec![] };
        let (jt, et, e_s) = (p.joint_tolerance(sc.dt), p.energy_tolerance(sc.dt), p.energy_scale());
        for k in 1..=sc.steps {
            tr.q.push(q.clone());
            tr.v.push(v.clone());
            let wave = (0.7 * k as f64).sin();
            let (bilateral_violation_max, energy) = (0.4 * jt * (1.0 + wave), 5.0 + 0.3 * et * e_s * wave);
            tr.metrics.push(StepMetrics { bilateral_violation_max, energy, ..Default::default() });
        }
        tr.metrics[0].energy_change = tr.metrics[0].energy - 5.0;
        let c = oracle(&JointedBeam, &prm, &sc, &tr);
        assert_eq!(names(&c), ["joint_violation", "energy"]);
        assert!(c.iter().all(|c| c.pass), "{c:?}");
        let viol = tr.metrics.iter().map(|m| m.bilateral_violation_max).fold(0.0, f64::max);
        let gain = tr.metrics.iter().map(|m| m.energy - 5.0).fold(0.0, f64::max) / e_s;
        let (j, e) = (check(&c, "joint_violation"), check(&c, "energy"));
        assert!(j.measured == viol && j.tolerance == jt, "{j:?}");
        assert!((e.measured - gain).abs() < 1e-12 * gain && e.tolerance == et, "{e:?} vs {gain}");
        // an undefined violation or energy anywhere in the run is not a small one
        let mut nan = tr.clone();
        nan.metrics[3].bilateral_violation_max = f64::NAN;
        nan.metrics[4].energy = f64::NAN;
        let c = oracle(&JointedBeam, &prm, &sc, &nan);
        assert!(c.iter().all(|c| c.measured.is_nan() && !c.pass), "{c:?}");
        let flex = crate::test_util::params(&JointedBeam, &[("bending_stiffness", "250")]);
        let p: JointedBeamParams = flex.decode("jointed_beam").unwrap();
        let sc = crate::test_util::build(&JointedBeam, &flex).unwrap();
        let mut cut = Trace { dt: sc.dt, completed: false, ..Default::default() };
        cut.q.push(sc.world.positions());
        let c = oracle(&JointedBeam, &flex, &sc, &cut);
        assert_eq!(names(&c), ["joint_violation", "tip_deflection"]);
        let tip = check(&c, "tip_deflection");
        assert!(tip.measured.is_nan() && tip.tolerance == 0.01 * p.static_tip_deflection(), "{tip:?}");
    }

    /// The joint and energy tolerances are their derivations, by hand for free hinges:
    /// `E_s = n m g n L / 2`, `I = m (L² + w²)/12`, `ω_max² = 2 E_s / I`, joint tolerance
    /// `h² ω_max² L / 2`, energy tolerance `2 δ / L + h ω_max`.
    #[test]
    fn tolerances_are_their_derivation() {
        let p = JointedBeamParams { n: 3, mass: 0.3, link_length: 0.25, width: 0.05, ..Default::default() };
        let e_s = 3.0 * 0.3 * p.gravity * 3.0 * 0.25 / 2.0;
        let inertia = 0.3 * (0.25 * 0.25 + 0.05 * 0.05) / 12.0;
        let w2 = 2.0 * e_s / inertia;
        let h = 0.004;
        let joint = h * h * w2 * 0.25 / 2.0;
        let energy = 2.0 * joint / 0.25 + h * w2.sqrt();
        let (jt, et) = (p.joint_tolerance(h), p.energy_tolerance(h));
        assert!((jt - joint).abs() < 1e-14 * joint, "{jt} vs {joint}");
        assert!((et - energy).abs() < 1e-14 * energy, "{et} vs {energy}");
    }
}
