//! `pendulum`: Drumwright's absolute-coordinate pendulum (§4.4, Fig. 4), a
//! planar body hinged to the world through a very stiff joint (`k = 1e15`, `b = 1`), released
//! horizontal at rest; optionally with a range-of-motion stop (§5.4, Fig. 6).
//!
//! # Scene
//!
//! The bob (mass `m`, inertia `I` about y, planar x–z DOFs) has its centre at `(L, 0, 0)`; a hinge
//! about y joins its point `(0, 0, 0)` (world) to the world. `limit = "stop"` adds a static
//! frictionless half-space `x ≤ 0` (compliant, `k_limit`, no damping) that the bob's surface
//! (radius `radius`) hits just before the bottom of the swing: the paper's unilateral
//! range-of-motion limit as a contact, with constraint-space inertia `m` instead of `m L²`.
//!
//! # Oracles
//!
//! * `drift` — `max_k |C(q_k)|` over the run (`StepMetrics::bilateral_violation_max`, m). The
//!   linearised joint leaves `h² v²/(2L)` per step, not accumulated (drumwright README §10.4), with the
//!   compound pendulum's peak speed `v² = 2 g L · m L²/(I + m L²)`: expected `h² g m L³/(I + m L²)`,
//!   tolerance 25 % (first-order speed error and sampling of the peak; 9.7e-4 / 9.7e-6 / 9.7e-8 m at
//!   h = 1e-2 / 1e-3 / 1e-4 in an independent run).
//! * `theta_end` (no stop only) — the angle of the body after `T` against the compound pendulum
//!   `(I + m L²) θ̈ = −m g L cos θ` (RK4 with 1e5 steps); tolerance `5 h` rad (first order: an
//!   independent run has error 1e-4 rad at `h = 1e-4`).

use crate::{check, default_struct, trace_is_whole, unmeasured};
use harness::model::{DofMask, Joint, Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{Capabilities, CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("pendulum.toml");
const SOURCE: &str = "cases/src/pendulum.toml";

/// The hinge: `joint = "compliant" | "rigid"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PendulumJoint {
    /// Spring-damper joint with stiffness `k` and damping `b`.
    Compliant,
    /// Rigid joint.
    Rigid,
}

/// The range-of-motion limit: `limit = "none" | "stop"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PendulumLimit {
    /// No limit.
    None,
    /// A compliant frictionless stop at `x = 0`.
    Stop,
}

/// Parameters of `pendulum` (defaults in `cases/src/pendulum.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendulumParams {
    /// Bob mass (kg, > 0).
    pub mass: f64,
    /// Inertia about the hinge axis through the centre of mass (kg m^2, > 0).
    pub inertia: f64,
    /// Joint to centre of mass (m, > 0).
    pub length: f64,
    /// `"compliant"` or `"rigid"`.
    pub joint: PendulumJoint,
    /// Joint stiffness (N/m, > 0).
    pub k: f64,
    /// Joint damping (N s/m, >= 0).
    pub b: f64,
    /// `"none"` or `"stop"`.
    pub limit: PendulumLimit,
    /// Stop stiffness (N/m, > 0).
    pub k_limit: f64,
    /// Bob radius (m, > 0, < length).
    pub radius: f64,
    /// Gravity (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s).
    pub dt: f64,
    /// Duration (s).
    pub duration: f64,
    /// Detection margin (m, > 0).
    pub margin: f64,
}

impl Default for PendulumParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for PendulumParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        for (n, v) in [("mass", self.mass), ("inertia", self.inertia), ("length", self.length), ("k", self.k)] {
            check::positive(n, v)?;
        }
        check::non_negative("b", self.b)?;
        check::positive("k_limit", self.k_limit)?;
        check::positive("radius", self.radius)?;
        if self.radius >= self.length {
            return Err(harness::FieldError::new("radius", format!("must be < length, got {}", self.radius)));
        }
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)
    }
}

impl PendulumParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Expected maximum drift `h² g m L³/(I + m L²)` (m).
    pub fn drift(&self) -> f64 {
        let (m, l) = (self.mass, self.length);
        self.dt * self.dt * self.gravity * m * l.powi(3) / (self.inertia + m * l * l)
    }
    /// Angle of the compound pendulum at `t` (RK4, 1e5 steps), θ = 0 horizontal, negative below.
    pub fn theta_exact(&self, t: f64) -> f64 {
        let (m, l) = (self.mass, self.length);
        let c = m * self.gravity * l / (self.inertia + m * l * l);
        let f = |th: f64| -c * th.cos();
        let n = 100_000;
        let h = t / n as f64;
        let (mut th, mut w) = (0.0f64, 0.0f64);
        for _ in 0..n {
            let (k1t, k1w) = (w, f(th));
            let (k2t, k2w) = (w + 0.5 * h * k1w, f(th + 0.5 * h * k1t));
            let (k3t, k3w) = (w + 0.5 * h * k2w, f(th + 0.5 * h * k2t));
            let (k4t, k4w) = (w + h * k3w, f(th + h * k3t));
            th += h / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t);
            w += h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
        }
        th
    }
    /// The scene.
    pub fn world(&self) -> World {
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let mat = Material::compliant(0.0, self.k_limit, 0.0);
        let mut bob = RigidBody::new(
            "bob",
            Shape::Sphere { radius: self.radius },
            self.mass,
            Vector3::new(self.length, 0.0, 0.0),
            mat,
        )
        .with_dofs(DofMask::PLANAR_XZ);
        bob.inertia = Vector3::repeat(self.inertia);
        w.bodies.push(bob);
        let j = Joint::hinge_at(&w, 0, None, Vector3::zeros(), Vector3::y()).named("pivot");
        w.joints.push(if self.joint == PendulumJoint::Rigid { j } else { j.with_compliance(self.k, self.b) });
        if self.limit == PendulumLimit::Stop {
            w.statics.push(StaticCollider {
                name: "stop".into(),
                shape: StaticShape::HalfSpace { normal: Vector3::x(), offset: 0.0 },
                material: mat,
            });
        }
        w
    }
}

/// The `pendulum` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pendulum;

impl CaseDef for Pendulum {
    type Params = PendulumParams;
    const NAME: &'static str = "pendulum";
    const SUMMARY: &'static str =
        "planar pendulum on a stiff joint (k = 1e15; Drumwright Fig. 4), optional range-of-motion stop (Fig. 6)";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &PendulumParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs = Capabilities {
            rigid_bodies: true,
            bilateral_constraints: true,
            compliant_contact: p.limit == PendulumLimit::Stop,
            ..Default::default()
        };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs })
    }
    fn grade(&self, p: &PendulumParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let t = p.steps() as f64 * p.dt;
        let mut out = Vec::new();
        let whole = trace_is_whole(scenario, trace);
        let drift = trace.metrics.iter().map(|m| m.bilateral_violation_max).fold(0.0, f64::max);
        out.push(if whole {
            OracleCheck::abs("drift", drift, p.drift(), 0.25 * p.drift())
        } else {
            unmeasured("drift", p.drift(), 0.25 * p.drift())
        });
        if p.limit == PendulumLimit::None {
            let exact = p.theta_exact(t);
            out.push(if whole {
                let q = &trace.q[trace.q.len() - 1];
                // angle of the centre about the pivot, measured from +x towards +z, unwrapped
                // into (-2 pi, 0] (the bob swings down through -pi/2 and up towards -pi)
                let mut th = q[2].atan2(q[0]);
                if th > 0.0 {
                    th -= 2.0 * std::f64::consts::PI;
                }
                OracleCheck::abs("theta_end", th, exact, 5.0 * p.dt)
            } else {
                unmeasured("theta_end", exact, 5.0 * p.dt)
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::Case;

    #[test]
    fn reference_angle_matches_the_independent_integration() {
        // reference (drumwright README §10.4): theta(1 s) = -2.965836575631 for m = 1, I = 0.01, L = 1, g = 9.8
        let p = PendulumParams::default();
        assert!((p.theta_exact(1.0) + 2.965836575631).abs() < 1e-9);
        assert!((p.drift() - 9.703e-6).abs() < 1e-8);
        let sc = crate::test_util::build(&Pendulum, &Pendulum.defaults()).unwrap();
        assert_eq!(sc.world.joints.len(), 1);
    }

    /// A run that ends with the bob at angle `theta` about the pivot (from +x towards +z) and
    /// joint violations `drift` at its steps.
    fn swing(sc: &Scenario, theta: f64, drift: &[f64]) -> Trace {
        let (q0, v0) = (sc.world.positions(), sc.world.velocities());
        let l = q0[0];
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q0.clone()], v: vec![v0.clone()], metrics: vec![] };
        for k in 1..=sc.steps {
            let mut q = q0.clone();
            if k == sc.steps {
                (q[0], q[2]) = (l * theta.cos(), l * theta.sin());
            }
            tr.q.push(q);
            tr.v.push(v0.clone());
            let bilateral_violation_max = drift.get(k - 1).copied().unwrap_or(0.0);
            tr.metrics.push(harness::StepMetrics { bilateral_violation_max, ..Default::default() });
        }
        tr
    }

    /// `theta_end` reads the final angle unwrapped into (−2π, 0] (through the bottom of the
    /// swing, past −π, as the bob swings up on the far side), against `theta_exact(T)` within
    /// `5 h`; `drift` is the largest joint violation against `p.drift()` within 25 %; a run
    /// that did not complete measures nothing.
    #[test]
    fn checks_read_the_final_angle_and_the_largest_drift() {
        use crate::test_util::{check, names, oracle};
        let prm = Pendulum.defaults();
        let p: PendulumParams = prm.decode("pendulum").unwrap();
        let sc = crate::test_util::build(&Pendulum, &prm).unwrap();
        let exact = p.theta_exact(p.steps() as f64 * p.dt);
        assert!(exact < -0.5 * std::f64::consts::PI && exact > -std::f64::consts::PI, "{exact}");
        let drift = [0.5 * p.drift(), 1.1 * p.drift(), 0.9 * p.drift()];
        for theta in [exact, exact + 2.0 * p.dt, -3.5, -0.25, 0.0] {
            let c = oracle(&Pendulum, &prm, &sc, &swing(&sc, theta, &drift));
            assert_eq!(names(&c), ["drift", "theta_end"]);
            let end = check(&c, "theta_end");
            assert!((end.measured - theta).abs() < 1e-12, "{theta}: {end:?}");
            assert_eq!((end.expected, end.tolerance), (exact, 5.0 * p.dt));
            assert_eq!(end.pass, (theta - exact).abs() <= 5.0 * p.dt, "{theta}");
            let d = check(&c, "drift");
            assert_eq!((d.measured, d.expected, d.tolerance), (1.1 * p.drift(), p.drift(), 0.25 * p.drift()));
            assert!(d.pass);
        }
        let far = oracle(&Pendulum, &prm, &sc, &swing(&sc, exact, &[1.3 * p.drift()]));
        assert!(!check(&far, "drift").pass);
        let mut cut = swing(&sc, exact, &drift);
        cut.completed = false;
        let c = oracle(&Pendulum, &prm, &sc, &cut);
        assert_eq!(names(&c), ["drift", "theta_end"]);
        assert!(c.iter().all(|c| c.measured.is_nan() && !c.pass), "{c:?}");
        assert_eq!(check(&c, "drift").tolerance, 0.25 * p.drift());
        assert_eq!(check(&c, "theta_end").tolerance, 5.0 * p.dt);
        // with the stop there is no closed form for the angle
        let stop = crate::test_util::params(&Pendulum, &[("limit", "stop")]);
        let sc = crate::test_util::build(&Pendulum, &stop).unwrap();
        assert_eq!(names(&oracle(&Pendulum, &stop, &sc, &swing(&sc, exact, &drift))), ["drift"]);
    }
}
