//! `pizza_saver`: Drake's torsional stick/slip test (`multibody/contact_solvers/sap/test/
//! sap_solver_test.cc`) — a flat body on point contacts at radius `R` about
//! its vertical axis, twisted by a torque `Mz`. It sticks below the transition torque
//! `M_crit = mu m g R` and spins up above it.
//!
//! # Scene
//!
//! ```text
//!        top view                              side view
//!   c2 +-----------+ c3                   Mz (about +z)
//!      |     y     |                           ^
//!      |     ^     |                      +----|----+  thin box, half height h
//!      |     +-> x |  corners at R        c    |    c
//!      |           |  from the axis     ===================  ground z <= 0
//!   c0 +-----------+ c1
//! ```
//!
//! * The body is a thin box of half extents `(R/√2, R/√2, h)`, mass `m`, all six DOFs free,
//!   at rest on the ground (half-space `z <= 0`) with its centre on the z axis. Its four bottom
//!   corners are the contact points (box–half-space corner contacts), each at distance `R` from
//!   the vertical axis through the centre of mass. Its inertia about z is that of the box,
//!   `I_z = m ((√2 R)^2 + (√2 R)^2) / 12 = m R^2 / 3`.
//! * Loads: gravity `-g e_z`, the applied torque `Mz e_z` (`RigidBody::applied_torque`) and,
//!   for Drake's NoFriction variant, a horizontal force `push_x e_x` at the centre of mass.
//! * One material on body and ground: friction `mu`, rigid or compliant contact. `k` is the
//!   stiffness of **each contact point** (Drake's convention for this test: each of its spheres
//!   has `k = 1e4 N/m`), so a compliant body starts at the static penetration
//!   `delta = m g / (n k)` of each corner (centre at `z = h - delta`), in equilibrium.
//! * Defaults are Drake's: `m = 3 kg`, `R = 1.5 m`, `g = 10`, `mu = 2/3`, `k = 1e4 N/m`,
//!   `tau_d = dt = 0.01 s`, 40 steps, `Mz = 20 N m` (Stiction test; `Mz = 40` is its Sliding
//!   test), so `M_crit = 30 N m`.
//!
//! **Deviation from Drake.** Drake's pizza saver is a triangle of 3 point contacts (spheres at
//! radius `R` under a light body). Our bodies are single shapes (no compound colliders), so the
//! body is a box and has `n = 4` contacts: the per-contact friction at stiction is
//! `Mz / (n R) = Mz / (4 R)` instead of `Mz / (3 R)`, the normal load per contact `m g / 4`
//! instead of `m g / 3`, and the inertia is the box's. The transition torque
//! `M_crit = mu m g R` is unchanged: whatever the split of the normal load among the contacts, all
//! of them lie at radius `R` and slide perpendicular to it, so the largest friction torque is
//! `sum_i mu f_n,i R = mu m g R`.
//!
//! # Analytic solution
//!
//! * `Mz <= M_crit` — **stiction**: the body stays at rest; the friction forces balance the
//!   torque, `sum_i R f_t,i = Mz`, i.e. `Mz / (n R)` per contact on average (with 4 coplanar
//!   contacts the individual tangential forces are statically indeterminate; their torque is not).
//! * `Mz > M_crit` — **sliding**: every contact slides at full friction `mu f_n,i`, the friction
//!   torque is `M_crit`, and `omega_z' = (Mz - M_crit) / I_z` (a rotation about the principal
//!   axis z has no gyroscopic torque, and symmetric corners give no net force).
//! * `mu = 0`, `push_x != 0` (Drake's NoFriction): `v_x(N dt) = N dt push_x / m`,
//!   `omega_z' = Mz / I_z`.
//!
//! Symplectic Euler integrates these constant accelerations exactly.
//!
//! # Oracle checks
//!
//! With `N` steps, `T = N dt`, `k0 = N / 2` (integer division), `T2 = (N - k0) dt`, `omega_k` the
//! post-step angular velocity about z, the measured mean angular acceleration over the second half
//! `a_w = (omega_N - omega_k0) / T2`, the stiction slip allowance `v_tol = sigma dt g` with
//! `sigma` = [`STICTION_SIGMA`] = 1e-3 (Drake's bound, Castro et al. Eq. 22/31: SAP's regularised
//! stiction slips at about `mu sigma w m g dt <= sigma g dt` here; rigid-contact NCP solvers slip
//! at 0), and the torque tolerance `tau_tol = IMPULSE_REL_TOL m g R` (an error of 0.1 % of each
//! contact's normal load `m g / n` in its friction force, summed over the `n` contacts at lever
//! `R`; the same level as the slope's `IMPULSE_REL_TOL g`):
//!
//! * `regime` (no push) — measured 1 if the corners' slip distance `D = R |dt sum_k omega_k|`
//!   exceeds `D_thr = v_tol T`, else 0; expected 1 iff `Mz > M_crit`; tolerance 0, or 1 (any
//!   answer passes) when the sliding distance `R a T^2 / 2` is within a factor 2 of `D_thr` (just
//!   above the transition, where the two cannot be told apart over the run).
//! * `friction_per_contact` (no push) — the friction force per contact measured through the
//!   torque balance, `(Mz - I_z a_w) / (n R)` (N); expected `min(Mz, M_crit) / (n R)` (stiction:
//!   `Mz / (n R)`, sliding: `mu m g / n`); tolerance `tau_tol / (n R) + I_z (2 v_tol / (R T2)) /
//!   (n R)` at stiction (the second term: a slip speed wandering within `±v_tol` changes `omega`
//!   by at most `2 v_tol / R` over the window), `tau_tol / (n R)` when sliding. At the defaults:
//!   `5 N` sliding, `3.333 N` stiction, tolerance `7.5e-3 + 2.5e-4 N`.
//! * `slip` (no push, stiction) — the largest horizontal speed of a bottom corner,
//!   `max_{k0 < k <= N} max_c |(v_k + w_k x r_c)_xy|` (m/s); expected 0; tolerance `v_tol`
//!   (`1e-4 m/s` at the defaults).
//! * `angular_acceleration` (sliding, or any push) — `a_w` (rad/s^2); expected
//!   `(Mz - M_crit) / I_z` (with `M_crit = 0` when `mu = 0`); tolerance `tau_tol / I_z`. At the
//!   defaults with `Mz = 40`: `4.444 rad/s^2`, tolerance `0.02`.
//! * `push_velocity` (push, `mu = 0`) — `v_x` after the last step (m/s); expected
//!   `N dt push_x / m`; tolerance `IMPULSE_REL_TOL g T` (an impulse error of 0.1 % of the weight
//!   accumulated over the run).
//!
//! A push with friction couples translational and torsional slip and has no closed form, so
//! `push_x != 0` requires `mu = 0` (as in Drake).

use crate::IMPULSE_REL_TOL;
use crate::{check, default_struct, trace_is_whole, unmeasured, ContactModel};
use harness::model::{RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, CaseVariant, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("pizza_saver.toml");
const SOURCE: &str = "cases/src/pizza_saver.toml";

/// Number of contact points (the box's bottom corners).
pub const CONTACTS: usize = 4;

/// Stiction regularisation `sigma` of the slip allowance `sigma dt g` (Castro et al. §V-B: the
/// value the paper and Drake's test use).
pub const STICTION_SIGMA: f64 = 1e-3;

/// Parameters of the `pizza_saver` case (defaults in `cases/src/pizza_saver.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PizzaSaverParams {
    /// Applied torque about the vertical axis `Mz` (N m, >= 0).
    pub torque: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// Body mass (kg, > 0).
    pub mass: f64,
    /// Distance of the contact points from the vertical axis `R` (m, > 0).
    pub radius: f64,
    /// Half height of the thin box (m, > 0).
    pub half_height: f64,
    /// `"rigid"` or `"compliant"`.
    pub contact: ContactModel,
    /// Compliant stiffness of each contact point (N/m, > 0).
    pub k: f64,
    /// Compliant contact dissipation time (s, >= 0).
    pub tau_d: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Horizontal force along +x at the centre of mass (N, finite); nonzero requires `mu = 0`.
    pub push_x: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for PizzaSaverParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for PizzaSaverParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        check::non_negative("torque", self.torque)?;
        check::non_negative("mu", self.mu)?;
        check::positive("mass", self.mass)?;
        check::positive("radius", self.radius)?;
        check::positive("half_height", self.half_height)?;
        check::positive("k", self.k)?;
        check::non_negative("tau_d", self.tau_d)?;
        check::positive("gravity", self.gravity)?;
        check::finite("push_x", self.push_x)?;
        if self.push_x != 0.0 && self.mu != 0.0 {
            return Err(harness::FieldError::new(
                "push_x",
                format!(
                    "a push needs mu = 0 (Drake's NoFriction test; with friction the torsional and \
                 translational slip couple and have no closed form), got push_x = {} with mu = {}",
                    self.push_x, self.mu
                ),
            ));
        }
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        if self.rest_penetration() >= self.half_height {
            return Err(harness::FieldError::new(
                "k",
                format!(
                    "too soft, the static penetration {} m exceeds the half height {} m",
                    self.rest_penetration(),
                    self.half_height
                ),
            ));
        }
        Ok(())
    }
}

/// What the analytic solution predicts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PizzaSaverExpectation {
    /// Whether the contacts slide (`Mz > M_crit`).
    pub slides: bool,
    /// Transition torque `mu m g R` (N m).
    pub transition_torque: f64,
    /// Friction force per contact `min(Mz, M_crit) / (n R)` (N).
    pub friction_per_contact: f64,
    /// Angular acceleration about z, `max(Mz - M_crit, 0) / I_z` (rad/s^2).
    pub angular_acceleration: f64,
}

impl PizzaSaverParams {
    /// Contact model.
    pub fn contact_model(&self) -> ContactModel {
        self.contact
    }
    /// Half side of the square footprint, `R / √2` (m).
    pub fn half_side(&self) -> f64 {
        self.radius / std::f64::consts::SQRT_2
    }
    /// Moment of inertia about the vertical axis, `m R^2 / 3` (kg m^2).
    pub fn inertia_z(&self) -> f64 {
        self.mass * self.radius * self.radius / 3.0
    }
    /// Static penetration of each corner at rest: 0 (rigid) or `m g / (n k)` (m).
    pub fn rest_penetration(&self) -> f64 {
        match self.contact_model() {
            ContactModel::Rigid => 0.0,
            ContactModel::Compliant => self.mass * self.gravity / (CONTACTS as f64 * self.k),
        }
    }
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Slip allowance `v_tol = STICTION_SIGMA dt g` (m/s).
    pub fn slip_tolerance(&self, dt: f64) -> f64 {
        STICTION_SIGMA * dt * self.gravity
    }
    /// Torque tolerance `IMPULSE_REL_TOL m g R` (N m).
    pub fn torque_tolerance(&self) -> f64 {
        IMPULSE_REL_TOL * self.mass * self.gravity * self.radius
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = self.contact_model().material(self.mu, self.k, self.tau_d);
        let a = self.half_side();
        let shape = Shape::Box { half_extents: [a, a, self.half_height] };
        let centre = Vector3::new(0.0, 0.0, self.half_height - self.rest_penetration());
        let mut body = RigidBody::new("pizza_saver", shape, self.mass, centre, material);
        body.applied_torque = Vector3::new(0.0, 0.0, self.torque);
        body.applied_force = Vector3::new(self.push_x, 0.0, 0.0);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        w.bodies.push(body);
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        w
    }

    /// The analytic prediction (no push, or a frictionless push).
    pub fn expectation(&self) -> PizzaSaverExpectation {
        let m_crit = self.mu * self.mass * self.gravity * self.radius;
        let slides = self.torque > m_crit;
        PizzaSaverExpectation {
            slides,
            transition_torque: m_crit,
            friction_per_contact: self.torque.min(m_crit) / (CONTACTS as f64 * self.radius),
            angular_acceleration: (self.torque - m_crit).max(0.0) / self.inertia_z(),
        }
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let exp = self.expectation();
        let (dt, n) = (scenario.dt, scenario.steps);
        let k0 = n / 2;
        let (t_all, t_half) = (n as f64 * dt, (n - k0) as f64 * dt);
        let (nr, iz) = (CONTACTS as f64 * self.radius, self.inertia_z());
        let v_tol = self.slip_tolerance(dt);
        let tau_tol = self.torque_tolerance();
        let acc_tol = tau_tol / iz;
        let push = self.push_x != 0.0;
        let d_thr = v_tol * t_all;
        let regime_exp = if exp.slides { 1.0 } else { 0.0 };
        let regime_tol = if exp.slides && 0.5 * self.radius * exp.angular_acceleration * t_all * t_all <= 2.0 * d_thr {
            1.0
        } else {
            0.0
        };
        let creep_term = if exp.slides { 0.0 } else { iz * 2.0 * v_tol / (self.radius * t_half) };
        let friction_tol = (tau_tol + creep_term) / nr;
        let push_exp = t_all * self.push_x / self.mass;
        let push_tol = IMPULSE_REL_TOL * self.gravity * t_all;

        let whole = trace_is_whole(scenario, trace);
        let wz = |k: usize| trace.v[k][5];
        let a_w = if whole { (wz(n) - wz(k0)) / t_half } else { f64::NAN };
        let mut out = Vec::new();
        if push {
            let vx = if whole { trace.v[n][0] } else { f64::NAN };
            out.push(OracleCheck::abs("push_velocity", vx, push_exp, push_tol));
            out.push(OracleCheck::abs("angular_acceleration", a_w, exp.angular_acceleration, acc_tol));
        } else {
            let (regime, friction) = if whole {
                let theta = dt * (1..=n).map(wz).sum::<f64>();
                let regime = if (self.radius * theta).abs() > d_thr { 1.0 } else { 0.0 };
                (regime, (self.torque - iz * a_w) / nr)
            } else {
                (f64::NAN, f64::NAN)
            };
            out.push(OracleCheck::abs("regime", regime, regime_exp, regime_tol));
            out.push(OracleCheck::abs("friction_per_contact", friction, exp.friction_per_contact, friction_tol));
            if exp.slides {
                out.push(OracleCheck::abs("angular_acceleration", a_w, exp.angular_acceleration, acc_tol));
            } else {
                let slip = if whole {
                    (k0 + 1..=n).map(|k| self.corner_slip(&trace.q[k], &trace.v[k])).fold(0.0, f64::max)
                } else {
                    f64::NAN
                };
                out.push(OracleCheck::abs("slip", slip, 0.0, v_tol));
            }
        }
        if !whole {
            return out.into_iter().map(|c| unmeasured(&c.name, c.expected, c.tolerance)).collect();
        }
        out
    }

    /// Largest horizontal speed of the four bottom corners at state `(q, v)` (m/s).
    pub fn corner_slip(&self, q: &[f64], v: &[f64]) -> f64 {
        let rot = UnitQuaternion::from_quaternion(Quaternion::new(q[3], q[4], q[5], q[6]));
        let (lin, ang) = (Vector3::new(v[0], v[1], v[2]), Vector3::new(v[3], v[4], v[5]));
        let a = self.half_side();
        let mut max: f64 = 0.0;
        for (sx, sy) in [(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)] {
            let r = rot * Vector3::new(sx * a, sy * a, -self.half_height);
            let u = lin + ang.cross(&r);
            max = max.max(u.x.hypot(u.y));
        }
        max
    }
}

/// The `pizza_saver` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct PizzaSaver;

impl CaseDef for PizzaSaver {
    type Params = PizzaSaverParams;
    const NAME: &'static str = "pizza_saver";
    const SUMMARY: &'static str =
        "flat box on 4 corner contacts at radius R twisted by a torque (Drake's pizza saver): torsional stick/slip";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    const VARIANTS: &'static [CaseVariant] = &[CaseVariant {
        suffix: "rigid",
        set: "contact = \"rigid\"",
        why: "the same stiction test with rigid contact (corner penetration 0), for the rigid-contact solvers",
    }];
    fn scenario(&self, p: &PizzaSaverParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: p.contact_model().needs() })
    }
    fn grade(&self, p: &PizzaSaverParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::StepMetrics;
    use harness::{Case, Params};
    use rstest::rstest;

    fn params(overrides: &[(&str, &str)]) -> Params {
        crate::test_util::params(&PizzaSaver, overrides)
    }

    use crate::test_util::check as get;

    /// A synthetic run: the body spins up about z at the constant angular acceleration `alpha` and
    /// translates along x at `ax` (symplectic Euler: `w_k = k dt alpha`, `theta_k = sum w`).
    fn spinning(sc: &Scenario, alpha: f64, ax: f64) -> Trace {
        let (dt, n) = (sc.dt, sc.steps);
        let q0 = sc.world.positions();
        let mut tr = Trace { dt, completed: true, q: vec![q0.clone()], v: vec![vec![0.0; 6]], metrics: vec![] };
        let (mut theta, mut x) = (0.0, 0.0);
        for k in 1..=n {
            let (w, vx) = (k as f64 * dt * alpha, k as f64 * dt * ax);
            theta += dt * w;
            x += dt * vx;
            let rot = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), theta);
            let c = rot.quaternion().coords;
            let mut q = q0.clone();
            q[0] = x;
            q[3..7].copy_from_slice(&[c.w, c.x, c.y, c.z]);
            tr.q.push(q);
            tr.v.push(vec![vx, 0.0, 0.0, 0.0, 0.0, w]);
            tr.metrics.push(StepMetrics { t: k as f64 * dt, n_contacts: 4, n_active: 4, ..Default::default() });
        }
        tr
    }

    #[test]
    fn defaults_parse_and_build_a_valid_world() {
        let p: PizzaSaverParams = PizzaSaver.defaults().decode("pizza_saver").unwrap();
        assert_eq!(p, PizzaSaverParams::default());
        let sc = crate::test_util::build(&PizzaSaver, &PizzaSaver.defaults()).unwrap();
        sc.world.validate().unwrap();
        assert_eq!(sc.steps, 40);
        assert!(sc.needs.compliant_contact && !sc.needs.rigid_contact);
        let e = p.expectation();
        assert!((e.transition_torque - 30.0).abs() < 1e-12 && !e.slides);
        assert!((e.friction_per_contact - 20.0 / 6.0).abs() < 1e-12);
        // the box's inertia about z is m R^2 / 3
        assert!((sc.world.bodies[0].inertia.z - p.inertia_z()).abs() < 1e-12);
        assert_eq!(sc.world.bodies[0].applied_torque, Vector3::new(0.0, 0.0, 20.0));
    }

    /// The expectation is the Coulomb threshold `M_c = mu m g R` of four corners at radius `R`:
    /// below or at it the box sticks and each corner carries `torque / (4 R)`; above it slides
    /// with `(torque - M_c) / I_z`, `I_z = m R² / 3`, each corner carrying `M_c / (4 R)`.
    #[test]
    fn expectation_is_the_coulomb_threshold_of_four_corners() {
        let at = PizzaSaverParams { mu: 0.5, torque: 22.5, ..PizzaSaverParams::default() };
        let e = at.expectation();
        assert_eq!((e.slides, e.transition_torque, e.angular_acceleration), (false, 0.5 * 3.0 * 10.0 * 1.5, 0.0));
        assert_eq!(e.friction_per_contact, 22.5 / 6.0);
        let above = PizzaSaverParams { torque: 31.5, ..at };
        let e = above.expectation();
        assert!(e.slides && e.transition_torque == 22.5, "{e:?}");
        assert_eq!(e.friction_per_contact, 22.5 / 6.0);
        assert!((e.angular_acceleration - 9.0 / (3.0 * 1.5 * 1.5 / 3.0)).abs() < 1e-14, "{e:?}");
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&PizzaSaver);
    }

    #[rstest]
    #[case::rigid("rigid", 0.0)]
    #[case::compliant("compliant", 3.0 * 10.0 / 4e4)]
    fn four_corners_touch_at_radius_r(#[case] contact: &str, #[case] penetration: f64) {
        let sc = crate::test_util::build(&PizzaSaver, &params(&[("contact", contact)])).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), CONTACTS);
        for c in &cs.contacts {
            assert!((c.gap + penetration).abs() < 1e-12, "gap {}", c.gap);
            assert!((c.point.xy().norm() - 1.5).abs() < 1e-12, "{:?}", c.point);
            assert!((c.normal() - Vector3::z()).norm() < 1e-15);
        }
    }

    #[rstest]
    #[case::negative_torque("torque", "-1", "torque: must be >= 0")]
    #[case::negative_mu("mu", "-0.1", "mu: must be >= 0")]
    #[case::negative_mass("mass", "-3", "mass: must be > 0")]
    #[case::zero_radius("radius", "0", "radius: must be > 0")]
    #[case::bad_contact("contact", "soft", "contact:")]
    #[case::push_with_friction("push_x", "1", "push_x: a push needs mu = 0")]
    #[case::zero_dt("dt", "0", "dt:")]
    #[case::zero_margin("margin", "0", "margin:")]
    #[case::too_soft("k", "1", "k: too soft")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&PizzaSaver, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[test]
    fn non_finite_values_are_rejected_by_name() {
        for (p, name) in [
            (PizzaSaverParams { mu: f64::NAN, ..Default::default() }, "mu:"),
            (PizzaSaverParams { torque: f64::NAN, ..Default::default() }, "torque:"),
            (PizzaSaverParams { push_x: f64::INFINITY, ..Default::default() }, "push_x:"),
        ] {
            assert!(p.validate().unwrap_err().to_string().starts_with(name));
        }
    }

    #[test]
    fn stiction_at_rest_passes_with_the_exact_friction() {
        let prm = PizzaSaver.defaults();
        let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
        let checks = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &spinning(&sc, 0.0, 0.0));
        assert_eq!(
            checks.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["regime", "friction_per_contact", "slip"]
        );
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        let f = get(&checks, "friction_per_contact");
        assert!((f.measured - 20.0 / 6.0).abs() < 1e-12);
        // tolerance: 1e-3 m g R / (n R) plus the creep term I_z 2 v_tol / (R T2) / (n R)
        let creep = 2.25 * 2.0 * 1e-4 / (1.5 * 0.2) / 6.0;
        assert!((f.tolerance - (1e-3 * 45.0 / 6.0 + creep)).abs() < 1e-15, "{}", f.tolerance);
        assert!((get(&checks, "slip").tolerance - 1e-4).abs() < 1e-18);
    }

    #[test]
    fn creeping_rotation_fails_slip_and_regime() {
        let prm = PizzaSaver.defaults();
        let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
        // a slow spin-up: w = 0.05 rad/s at the end, corners slip at 0.075 m/s
        let checks = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &spinning(&sc, 0.125, 0.0));
        let slip = get(&checks, "slip");
        assert!((slip.measured - 1.5 * 0.125 * 0.4).abs() < 1e-9 && !slip.pass, "{slip:?}");
        assert!(!get(&checks, "regime").pass);
        // the friction measured through the torque balance is short by I_z alpha / (n R)
        let f = get(&checks, "friction_per_contact");
        assert!((f.measured - (20.0 - 2.25 * 0.125) / 6.0).abs() < 1e-9 && !f.pass, "{f:?}");
    }

    #[rstest]
    #[case::exact(None, true)]
    #[case::too_slow(Some(1.0), false)]
    fn sliding_angular_acceleration(#[case] alpha: Option<f64>, #[case] pass: bool) {
        let prm = params(&[("torque", "40")]);
        let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
        let exact = (40.0 - 30.0) / 2.25;
        let alpha = alpha.unwrap_or(exact);
        let checks = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &spinning(&sc, alpha, 0.0));
        assert_eq!(
            checks.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["regime", "friction_per_contact", "angular_acceleration"]
        );
        let a = get(&checks, "angular_acceleration");
        assert!((a.expected - exact).abs() < 1e-12);
        assert!((a.tolerance - 1e-3 * 3.0 * 10.0 * 1.5 / 2.25).abs() < 1e-15);
        assert_eq!(a.pass, pass, "{a:?}");
        assert_eq!(get(&checks, "friction_per_contact").pass, pass);
        assert!(get(&checks, "regime").pass && get(&checks, "regime").measured == 1.0);
    }

    #[test]
    fn frictionless_push_checks_the_velocity() {
        let prm = params(&[("mu", "0"), ("push_x", "1"), ("torque", "0")]);
        let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
        let checks = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &spinning(&sc, 0.0, 1.0 / 3.0));
        assert_eq!(
            checks.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
            ["push_velocity", "angular_acceleration"]
        );
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        assert!((get(&checks, "push_velocity").expected - 0.4 / 3.0).abs() < 1e-15);
        let slow = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &spinning(&sc, 0.0, 0.3));
        assert!(!get(&slow, "push_velocity").pass);
    }

    /// A run spinning at the steady `w` about z from its first step on.
    fn steady(sc: &Scenario, w: f64) -> Trace {
        let mut tr = spinning(sc, 0.0, 0.0);
        tr.v.iter_mut().skip(1).for_each(|v| v[5] = w);
        tr
    }

    /// The regime's threshold is the slip allowance over the run, `d_thr = v_tol T` with `v_tol =
    /// STICTION_SIGMA h g` (1e-4 m/s, T = 0.4 s at the defaults): a rim turning `0.9 d_thr`
    /// sticks, `1.1 d_thr` slides. A slide too slow to exceed twice `d_thr` (torque 1e-3 N m
    /// above the Coulomb threshold of 30 N m) is not graded on its regime (tolerance 1). The
    /// push: `T F / m` within `IMPULSE_REL_TOL g T`.
    #[test]
    fn regime_and_push_tolerances_are_their_derivation() {
        let prm = PizzaSaver.defaults();
        let p: PizzaSaverParams = prm.decode("pizza_saver").unwrap();
        let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
        let t = sc.steps as f64 * sc.dt;
        let d_thr = 1e-3 * sc.dt * 10.0 * t;
        assert!((p.slip_tolerance(sc.dt) * t - d_thr).abs() < 1e-18);
        for (f, regime) in [(0.9, 0.0), (1.1, 1.0)] {
            let w = f * d_thr / (p.radius * t);
            let c = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &steady(&sc, w));
            let r = get(&c, "regime");
            assert_eq!((r.measured, r.expected, r.tolerance), (regime, 0.0, 0.0), "{f}");
        }
        // 2.25e-3 N m above: a rim slide of 1.5 d_thr (graded), 1 / R² of it without the factor R
        for (torque, tol) in [("30.001", 1.0), ("30.00225", 0.0), ("30.01", 0.0), ("40", 0.0)] {
            let prm = params(&[("torque", torque)]);
            let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
            let r = get(&crate::test_util::oracle(&PizzaSaver, &prm, &sc, &steady(&sc, 0.0)), "regime").clone();
            assert_eq!((r.expected, r.tolerance), (1.0, tol), "torque {torque}");
        }
        // the slip is read from state n/2 + 1 on
        let k0 = sc.steps / 2;
        let mut late = spinning(&sc, 0.0, 0.0);
        late.v[k0][5] = 0.1;
        assert_eq!(get(&crate::test_util::oracle(&PizzaSaver, &prm, &sc, &late), "slip").measured, 0.0);
        late.v[k0 + 1][5] = 0.1;
        let slip = get(&crate::test_util::oracle(&PizzaSaver, &prm, &sc, &late), "slip").measured;
        assert!((slip - 0.1 * p.half_side() * 2f64.sqrt()).abs() < 1e-12, "{slip}");
        let prm = params(&[("mu", "0"), ("push_x", "2"), ("torque", "0")]);
        let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
        let c = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &spinning(&sc, 0.0, 2.0 / 3.0));
        let push = get(&c, "push_velocity");
        assert!((push.expected - 0.4 * 2.0 / 3.0).abs() < 1e-15, "{push:?}");
        assert!((push.tolerance - 1e-3 * 10.0 * 0.4).abs() < 1e-15, "{push:?}");
        assert!((push.measured - 0.4 * 2.0 / 3.0).abs() < 1e-12 && push.pass, "{push:?}");
    }

    #[test]
    fn incomplete_trace_fails_every_check() {
        let prm = PizzaSaver.defaults();
        let sc = crate::test_util::build(&PizzaSaver, &prm).unwrap();
        let mut tr = spinning(&sc, 0.0, 0.0);
        tr.completed = false;
        let checks = crate::test_util::oracle(&PizzaSaver, &prm, &sc, &tr);
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| !c.pass && c.measured.is_nan()));
    }
}
