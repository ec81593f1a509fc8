//! `spring_cylinder`: a solid cylinder on the ground pulled by a horizontal spring — Castro et
//! al. (SAP) §VI-B, Figs. 4–7 (exact solutions: sap README §9). It oscillates sliding (frictionless) or rolling
//! (enough friction), and grades the time integration: position error, frequency and energy.
//!
//! # Scene
//!
//! ```text
//!   wall
//!    |                          .---.
//!    |/\/\/\/\/\/\/\/\/\/\/\/\/( o  )    spring k_s along x, attached at the axis
//!    |                          '---'    cylinder: radius R, axis along y (out of the page)
//!   =====================================  ground: half-space z <= 0, normal +z
//!    x = 0 (rest)              x = x0
//! ```
//!
//! * A solid cylinder (`Shape::Cylinder`, axis = body y) of radius `radius`, mass `mass`,
//!   restricted to the x-z plane (`DofMask::PLANAR_XZ`: `v = (vx, vz, wy)`). Its inertia about y
//!   is `I = 1/2 m R^2`; `half_height` only sets the collision length, not this inertia.
//! * A one-dimensional spring along x (`axis = Some(x)`, rest length 0, anchor `(0, 0, R)`,
//!   attached at the axis), so the force is `-k_s x` with no torque.
//! * The ground is the half-space `z <= 0`. Body and ground share one material (`mu`, and
//!   `contact = "compliant"` with `k`, `tau_d` as in the paper, or `"rigid"`). `k` is the
//!   stiffness of the whole line contact, as in the paper's single contact; the narrow phase
//!   represents the lying cylinder by the 2 ends of its lowest generator, so each point gets
//!   `k / 2` (and `tau_d`), and the total normal force per unit penetration is `k`.
//! * Initial state: axis at `x = x0`, at rest, at the resting height `z0 = R` (rigid) or
//!   `z0 = R - m g / k` (compliant: the static penetration, as in the independent run of solvers/src/sap/README.md §9).
//! * Defaults are the paper's: R = 0.05, m = 0.5, k_s = 100, x0 = 0.1, mu = 1, k = 1e4,
//!   tau_d = 0.02, dt = 0.02, 5 s.
//!
//! # Analytic solution and regimes
//!
//! With `omega_f = sqrt(k_s / m)` and `omega_r = sqrt(k_s / (m + I/R^2)) = sqrt(2 k_s / (3 m))`:
//!
//! * `mu = 0` — **frictionless**: `x_e(t) = x0 cos(omega_f t)`, no rotation.
//! * `mu >= mu_roll = k_s |x0| / (3 m g)` (0.68 at the defaults) — **rolling**: rolling needs a
//!   friction force `k_s x / 3 <= mu m g` at the extremes, and then `x_e(t) = x0 cos(omega_r t)`.
//! * `0 < mu < mu_roll` — **stick-slip**: the cylinder slips near the extremes; there is no closed
//!   form, so only the energy bound below is checked. Within a few percent of `mu_roll` the regime
//!   is ambiguous (the discrete amplitude slightly exceeds `x0`).
//!
//! # Discrete reference
//!
//! The harness's default integration is symplectic Euler (`v+ = v + dt M^-1 f(q)`,
//! `q+ = q + dt v+`). On the linear oscillator `x'' = -omega^2 x` its iterates are exactly samples
//! of a sinusoid of frequency `omega_d = (2/dt) asin(omega dt / 2)`, and its energy oscillates in a
//! band of relative width about `omega dt` (solvers/src/sap/README.md §9). The oracle runs this recurrence for the
//! regime's `omega` from `(x0, 0)` over the same steps — the *reference* — and derives tolerances
//! from it: a solver is accepted if it is no less accurate than symplectic Euler with a safety
//! factor. At the defaults (rolling): reference `e_q = 1.30e-2 m`, band `23.4 %`; frictionless:
//! `1.92e-2 m`, `28.9 %` (an independent SAP run, solvers/src/sap/README.md §9, reports 1.300e-2, 23.5 % and 28.9 %).
//!
//! # Oracle checks
//!
//! With `t_k = k dt`, `x_k` the axis position, `T = N dt`:
//!
//! * `e_q` (frictionless, rolling) — `sqrt((1/T) int_0^T (x - x_e)^2 dt)` by the trapezoid rule on
//!   the steps (m); expected 0; tolerance `2 e_q(reference)`: the first-order symplectic Euler is
//!   dominated by its phase error, and a method may be up to twice as inaccurate before it fails
//!   (midpoint and SAP's symplectic Euler pass; implicit Euler's 6e-2 at the defaults fails).
//! * `frequency` (frictionless, rolling) — `pi (n_c - 1) / (t_last - t_first)` from the `n_c`
//!   zero crossings of `x` (linear interpolation between steps) (rad/s); expected the exact
//!   `omega`; tolerance `2 |omega_d - omega| + omega dt / (t_last - t_first)`: twice symplectic
//!   Euler's frequency error plus the resolution of one step over the measured span. It separates
//!   rolling from sliding (22 % apart) and accepts integrators at least half as accurate in phase
//!   speed as symplectic Euler (midpoint's `(2/dt) atan(omega dt/2)` passes).
//! * `energy_band` (frictionless, rolling) — `(max E - min E) / E_0` over the run, with
//!   `E = 1/2 m (vx^2 + vz^2) + 1/2 I wy^2 + 1/2 k_s x^2 + m g (z - z_0)` (mechanical energy relative
//!   to the initial height, so `E_0 = 1/2 k_s x0^2` is the oscillating energy). An upper-bound
//!   check: expected the reference band `b`, error `max(0, measured - b)`, tolerance `b / 2`, i.e.
//!   it passes if the band is at most 1.5 times symplectic Euler's. Methods that conserve energy
//!   better (midpoint: ~0) pass; methods that dissipate (implicit Euler loses everything in 5 s,
//!   band ~1) fail.
//! * `energy_gain` (stick-slip only) — `(max E - E_0) / E_0`; expected 0; error
//!   `max(0, measured)`; tolerance `1.5 g_f`, with `g_f` the largest rise of the frictionless
//!   reference above its initial energy (about `omega_f dt / 2`): friction only removes energy, so
//!   the energy may exceed `E_0` by no more than the integrator's own band of the stiffest mode.

use crate::{check, default_struct, trace_is_whole, unmeasured, ContactModel};
use harness::model::{DofMask, RigidBody, Shape, Spring, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, CaseVariant, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("spring_cylinder.toml");
const SOURCE: &str = "cases/src/spring_cylinder.toml";

/// Parameters of the `spring_cylinder` case (defaults in `cases/src/spring_cylinder.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpringCylinderParams {
    /// Cylinder radius R (m, > 0).
    pub radius: f64,
    /// Half length along the axis (m, > 0).
    pub half_height: f64,
    /// Mass (kg, > 0).
    pub mass: f64,
    /// Spring stiffness (N/m, > 0).
    pub k_s: f64,
    /// Initial displacement from the spring's rest position (m, nonzero).
    pub x0: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// `"compliant"` or `"rigid"`.
    pub contact: ContactModel,
    /// Compliant stiffness of the whole line contact (N/m, > 0), split over its 2 points.
    pub k: f64,
    /// Compliant contact dissipation time (s, >= 0).
    pub tau_d: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s); symplectic Euler must be stable: `sqrt(k_s/m) dt < 2`.
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for SpringCylinderParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for SpringCylinderParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        check::positive("radius", self.radius)?;
        check::positive("half_height", self.half_height)?;
        check::positive("mass", self.mass)?;
        check::positive("k_s", self.k_s)?;
        check::finite("x0", self.x0)?;
        if self.x0 == 0.0 {
            return Err(harness::FieldError::new("x0", "must be nonzero (the cylinder would not move)"));
        }
        check::non_negative("mu", self.mu)?;
        check::positive("k", self.k)?;
        check::non_negative("tau_d", self.tau_d)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        let wdt = self.omega_frictionless() * self.dt;
        if wdt >= 2.0 {
            return Err(harness::FieldError::new(
                "dt",
                format!("symplectic Euler is unstable for the spring unless sqrt(k_s/m) dt < 2, got {wdt}"),
            ));
        }
        if self.rest_penetration() >= self.radius {
            return Err(harness::FieldError::new(
                "k",
                format!("too soft, the static penetration m g / k = {} m exceeds the radius", self.rest_penetration()),
            ));
        }
        Ok(())
    }
}

/// Which analytic solution applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Regime {
    /// `mu = 0`: slides, `omega = sqrt(k_s/m)`.
    Frictionless,
    /// `mu >= k_s |x0| / (3 m g)`: rolls without slipping, `omega = sqrt(2 k_s / (3 m))`.
    Rolling,
    /// In between: stick-slip, no closed form.
    StickSlip,
}

/// The symplectic-Euler reference of a linear oscillator (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Positions `x_k`, `k = 0..=steps`.
    pub x: Vec<f64>,
    /// Velocities `v_k`.
    pub v: Vec<f64>,
    /// `(max E - min E) / E_0` with `E = 1/2 v^2 + 1/2 omega^2 x^2`.
    pub band: f64,
    /// `(max E - E_0) / E_0`.
    pub gain: f64,
}

impl Reference {
    /// Runs `v+ = v - dt omega^2 x`, `x+ = x + dt v+` from `(x0, 0)` for `steps` steps.
    pub fn symplectic_euler(omega: f64, x0: f64, dt: f64, steps: usize) -> Self {
        let (mut x, mut v) = (x0, 0.0);
        let (mut xs, mut vs) = (vec![x], vec![v]);
        for _ in 0..steps {
            v -= dt * omega * omega * x;
            x += dt * v;
            xs.push(x);
            vs.push(v);
        }
        let e: Vec<f64> = xs.iter().zip(&vs).map(|(x, v)| 0.5 * v * v + 0.5 * omega * omega * x * x).collect();
        let (band, gain) = band_and_gain(&e);
        Reference { x: xs, v: vs, band, gain }
    }
}

/// `((max - min) / e[0], (max - e[0]) / e[0])` of an energy history.
pub fn band_and_gain(e: &[f64]) -> (f64, f64) {
    let max = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = e.iter().copied().fold(f64::INFINITY, f64::min);
    ((max - min) / e[0], (max - e[0]) / e[0])
}

/// The discrete frequency of symplectic Euler on `x'' = -omega^2 x`: `(2/dt) asin(omega dt / 2)`.
pub fn symplectic_euler_frequency(omega: f64, dt: f64) -> f64 {
    2.0 / dt * (0.5 * omega * dt).asin()
}

/// `sqrt((1/T) int_0^T (x(t) - x_e(t))^2 dt)` by the trapezoid rule on samples `x[k]` at `k dt`.
pub fn l2_error(x: &[f64], dt: f64, exact: impl Fn(f64) -> f64) -> f64 {
    let n = x.len() - 1;
    if n == 0 {
        return (x[0] - exact(0.0)).abs();
    }
    let sq = |k: usize| (x[k] - exact(k as f64 * dt)).powi(2);
    let inner: f64 = (1..n).map(sq).sum();
    let integral = dt * (0.5 * (sq(0) + sq(n)) + inner);
    (integral / (n as f64 * dt)).sqrt()
}

/// Times of the sign changes of `x[k]` (samples at `k dt`), by linear interpolation.
pub fn zero_crossings(x: &[f64], dt: f64) -> Vec<f64> {
    x.windows(2)
        .enumerate()
        .filter(|(_, w)| (w[0] > 0.0 && w[1] <= 0.0) || (w[0] < 0.0 && w[1] >= 0.0))
        .map(|(k, w)| (k as f64 + w[0] / (w[0] - w[1])) * dt)
        .collect()
}

impl SpringCylinderParams {
    /// Contact model.
    pub fn contact_model(&self) -> ContactModel {
        self.contact
    }
    /// Moment of inertia about the axis, `1/2 m R^2`.
    pub fn inertia(&self) -> f64 {
        0.5 * self.mass * self.radius * self.radius
    }
    /// Number of points by which the narrow phase represents the lying cylinder's line contact
    /// (the two ends of the lowest generator).
    pub const CONTACT_POINTS: usize = 2;
    /// Static penetration: 0 (rigid) or `m g / k`.
    pub fn rest_penetration(&self) -> f64 {
        match self.contact_model() {
            ContactModel::Rigid => 0.0,
            ContactModel::Compliant => self.mass * self.gravity / self.k,
        }
    }
    /// Initial height of the axis, `R - rest_penetration`.
    pub fn z0(&self) -> f64 {
        self.radius - self.rest_penetration()
    }
    /// Friction needed to roll through the extremes: `k_s |x0| / (3 m g)`.
    pub fn mu_roll(&self) -> f64 {
        self.k_s * self.x0.abs() / (3.0 * self.mass * self.gravity)
    }
    /// Which analytic solution applies.
    pub fn regime(&self) -> Regime {
        if self.mu == 0.0 {
            Regime::Frictionless
        } else if self.mu >= self.mu_roll() {
            Regime::Rolling
        } else {
            Regime::StickSlip
        }
    }
    /// `sqrt(k_s / m)`.
    pub fn omega_frictionless(&self) -> f64 {
        (self.k_s / self.mass).sqrt()
    }
    /// `sqrt(k_s / (m + I/R^2)) = sqrt(2 k_s / (3 m))`.
    pub fn omega_rolling(&self) -> f64 {
        (self.k_s / (self.mass + self.inertia() / (self.radius * self.radius))).sqrt()
    }
    /// Angular frequency of the analytic solution (None for stick-slip).
    pub fn omega(&self) -> Option<f64> {
        match self.regime() {
            Regime::Frictionless => Some(self.omega_frictionless()),
            Regime::Rolling => Some(self.omega_rolling()),
            Regime::StickSlip => None,
        }
    }
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = self.contact_model().material(self.mu, self.k / Self::CONTACT_POINTS as f64, self.tau_d);
        let shape = Shape::Cylinder { radius: self.radius, half_height: self.half_height };
        let body = RigidBody::new("cylinder", shape, self.mass, Vector3::new(self.x0, 0.0, self.z0()), material)
            .with_dofs(DofMask::PLANAR_XZ);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        w.bodies.push(body);
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        w.springs.push(Spring {
            body: 0,
            local_point: Vector3::zeros(),
            anchor: Vector3::new(0.0, 0.0, self.radius),
            stiffness: self.k_s,
            rest_length: 0.0,
            axis: Some(Vector3::x()),
        });
        w
    }

    /// Mechanical energy relative to the initial height at state `(q, v)` (`v = (vx, vz, wy)`).
    pub fn energy(&self, q: &[f64], v: &[f64]) -> f64 {
        0.5 * self.mass * (v[0] * v[0] + v[1] * v[1])
            + 0.5 * self.inertia() * v[2] * v[2]
            + 0.5 * self.k_s * q[0] * q[0]
            + self.mass * self.gravity * (q[2] - self.z0())
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let whole = trace_is_whole(scenario, trace);
        let energies = || -> Vec<f64> { trace.q.iter().zip(&trace.v).map(|(q, v)| self.energy(q, v)).collect() };
        let Some(omega) = self.omega() else {
            let g_f = Reference::symplectic_euler(self.omega_frictionless(), self.x0, dt, n).gain;
            let tol = 1.5 * g_f;
            if !whole {
                return vec![unmeasured("energy_gain", 0.0, tol)];
            }
            let (_, gain) = band_and_gain(&energies());
            return vec![OracleCheck::with_error("energy_gain", gain, 0.0, gain.max(0.0), tol)];
        };
        let reference = Reference::symplectic_euler(omega, self.x0, dt, n);
        let exact = |t: f64| self.x0 * (omega * t).cos();
        let eq_tol = 2.0 * l2_error(&reference.x, dt, exact);
        let freq_err_ref = 2.0 * (symplectic_euler_frequency(omega, dt) - omega).abs();
        let band_tol = 0.5 * reference.band;
        if !whole {
            return vec![
                unmeasured("e_q", 0.0, eq_tol),
                unmeasured("frequency", omega, freq_err_ref + omega * dt / (n as f64 * dt)),
                unmeasured("energy_band", reference.band, band_tol),
            ];
        }
        let x: Vec<f64> = trace.q.iter().map(|q| q[0]).collect();
        let e_q = l2_error(&x, dt, exact);
        let crossings = zero_crossings(&x, dt);
        let frequency = match crossings.as_slice() {
            [first, .., last] => {
                let span = last - first;
                let measured = std::f64::consts::PI * (crossings.len() - 1) as f64 / span;
                OracleCheck::abs("frequency", measured, omega, freq_err_ref + omega * dt / span)
            }
            _ => unmeasured("frequency", omega, freq_err_ref + omega * dt / (n as f64 * dt)),
        };
        let (band, _) = band_and_gain(&energies());
        vec![
            OracleCheck::abs("e_q", e_q, 0.0, eq_tol),
            frequency,
            OracleCheck::with_error("energy_band", band, reference.band, (band - reference.band).max(0.0), band_tol),
        ]
    }
}

/// The `spring_cylinder` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpringCylinder;

impl CaseDef for SpringCylinder {
    type Params = SpringCylinderParams;
    const NAME: &'static str = "spring_cylinder";
    const SUMMARY: &'static str =
        "cylinder on the ground pulled by a spring (SAP §VI-B): sliding or rolling oscillation, e_q, frequency, energy band";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    const VARIANTS: &'static [CaseVariant] = &[CaseVariant {
        suffix: "rigid",
        set: "contact = \"rigid\"",
        why: "the same rolling oscillation with rigid contact (no static penetration), for the rigid-contact solvers",
    }];
    fn scenario(&self, p: &SpringCylinderParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: p.contact_model().needs() })
    }
    fn grade(&self, p: &SpringCylinderParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&SpringCylinder, overrides)
    }

    /// A trace with axis position `x(t)`, velocity `x'(t)`, and rotation `wy = roll * x'(t) / R`.
    fn trace(p: &SpringCylinderParams, sc: &Scenario, x: &[f64], vx: &[f64], roll: f64) -> Trace {
        let mut tr = Trace { dt: sc.dt, completed: true, ..Default::default() };
        let q0 = sc.world.positions();
        for k in 0..=sc.steps {
            let mut q = q0.clone();
            q[0] = x[k];
            tr.q.push(q);
            tr.v.push(vec![vx[k], 0.0, roll * vx[k] / p.radius]);
            if k > 0 {
                tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, ..Default::default() });
            }
        }
        tr
    }

    fn exact_trace(p: &SpringCylinderParams, sc: &Scenario, omega: f64, roll: f64) -> Trace {
        let t = |k: usize| k as f64 * sc.dt;
        let x: Vec<f64> = (0..=sc.steps).map(|k| p.x0 * (omega * t(k)).cos()).collect();
        let v: Vec<f64> = (0..=sc.steps).map(|k| -p.x0 * omega * (omega * t(k)).sin()).collect();
        trace(p, sc, &x, &v, roll)
    }

    use crate::test_util::check as get;

    #[test]
    fn defaults_parse_and_build_the_papers_scene() {
        let p: SpringCylinderParams = SpringCylinder.defaults().decode("spring_cylinder").unwrap();
        assert_eq!(p, SpringCylinderParams::default());
        let sc = crate::test_util::build(&SpringCylinder, &SpringCylinder.defaults()).unwrap();
        sc.world.validate().unwrap();
        assert_eq!(sc.steps, 250);
        assert!(sc.needs.compliant_contact && !sc.needs.rigid_contact);
        let b = &sc.world.bodies[0];
        assert_eq!(b.dofs, DofMask::PLANAR_XZ);
        assert!((b.inertia.y - 0.5 * 0.5 * 0.05 * 0.05).abs() < 1e-18, "I = 1/2 m R^2 about the axis (y)");
        assert_eq!(b.position.x, 0.1);
        assert!((b.position.z - (0.05 - 0.5 * 9.81 / 1e4)).abs() < 1e-15, "z0 = R - m g / k");
        assert_eq!(p.regime(), Regime::Rolling);
        assert!((p.mu_roll() - 0.6796).abs() < 1e-4);
        assert!((p.omega_rolling() - 11.547).abs() < 1e-3);
        assert!((p.omega_frictionless() - 14.142).abs() < 1e-3);
        // the spring pulls back along x only, with no torque, and holds 1/2 k_s x0^2
        let f = sc.world.forces();
        assert!((f[0] + 100.0 * 0.1).abs() < 1e-12 && f[2] == 0.0);
        assert!((sc.world.spring_energy() - 0.5).abs() < 1e-15);
    }

    #[test]
    fn rigid_contact_rests_at_the_radius() {
        let sc = crate::test_util::build(&SpringCylinder, &params(&[("contact", "rigid")])).unwrap();
        assert_eq!(sc.world.bodies[0].position.z, 0.05);
        assert!(sc.needs.rigid_contact && !sc.needs.compliant_contact);
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&SpringCylinder);
    }

    #[rstest]
    #[case::compliant("compliant")]
    #[case::rigid("rigid")]
    fn narrow_phase_sees_the_assumed_contact_points(#[case] contact: &str) {
        let prm = params(&[("contact", contact)]);
        let p: SpringCylinderParams = prm.decode("spring_cylinder").unwrap();
        let sc = crate::test_util::build(&SpringCylinder, &prm).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), SpringCylinderParams::CONTACT_POINTS);
        let mut force = 0.0;
        for c in &cs.contacts {
            assert!((c.normal() - Vector3::z()).norm() < 1e-12);
            assert!((c.gap + p.rest_penetration()).abs() < 1e-12, "gap {}", c.gap);
            if let harness::model::ContactCompliance::Compliant { stiffness, .. } = c.compliance {
                force += stiffness * -c.gap;
            }
        }
        if contact == "compliant" {
            assert!((force - p.mass * p.gravity).abs() < 1e-9, "{force}");
        }
    }

    #[rstest]
    #[case::negative_mass("mass", "-0.5", "mass:")]
    #[case::negative_mu("mu", "-1", "mu: must be >= 0")]
    #[case::zero_x0("x0", "0", "x0:")]
    #[case::zero_spring("k_s", "0", "k_s:")]
    #[case::zero_radius("radius", "0", "radius:")]
    #[case::unstable_dt("dt", "0.2", "dt: symplectic Euler is unstable")]
    #[case::bad_contact("contact", "soft", "contact:")]
    #[case::too_soft("k", "10", "k: too soft")]
    #[case::negative_tau("tau_d", "-1", "tau_d:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&SpringCylinder, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[test]
    fn non_finite_values_are_rejected_by_name() {
        let p = SpringCylinderParams { x0: f64::NAN, ..Default::default() };
        assert!(p.validate().unwrap_err().to_string().starts_with("x0:"));
        let p = SpringCylinderParams { mu: f64::INFINITY, ..Default::default() };
        assert!(p.validate().unwrap_err().to_string().starts_with("mu:"));
    }

    #[rstest]
    #[case::frictionless("0", Regime::Frictionless)]
    #[case::stick_slip("0.5", Regime::StickSlip)]
    #[case::rolling("0.68", Regime::Rolling)]
    fn regimes(#[case] mu: &str, #[case] regime: Regime) {
        let p: SpringCylinderParams = params(&[("mu", mu)]).decode("spring_cylinder").unwrap();
        assert_eq!(p.regime(), regime);
    }

    #[test]
    fn reference_reproduces_the_published_numbers() {
        // independent SAP run (sap README §9): symplectic Euler, dt = 0.02, 5 s: e_q 1.300e-2
        // (rolling), band 23.5 % (rolling, SAP) and 28.9 % (frictionless); band ~ omega dt.
        let p = SpringCylinderParams::default();
        let r = Reference::symplectic_euler(p.omega_rolling(), p.x0, p.dt, p.steps());
        let e_q = l2_error(&r.x, p.dt, |t| p.x0 * (p.omega_rolling() * t).cos());
        assert!((e_q - 1.300e-2).abs() < 1e-5, "{e_q}");
        assert!((r.band - 0.234).abs() < 1e-3, "{}", r.band);
        let f = Reference::symplectic_euler(p.omega_frictionless(), p.x0, p.dt, p.steps());
        assert!((f.band - 0.289).abs() < 1e-3, "{}", f.band);
        assert!((f.band / (p.omega_frictionless() * p.dt) - 1.0).abs() < 0.05);
        // the iterates are samples of a sinusoid of the discrete frequency
        let wd = symplectic_euler_frequency(p.omega_rolling(), p.dt);
        let z = zero_crossings(&r.x, p.dt);
        let measured = std::f64::consts::PI * (z.len() - 1) as f64 / (z[z.len() - 1] - z[0]);
        assert!((measured - wd).abs() < 1e-3 * wd, "{measured} vs {wd}");
    }

    #[test]
    fn exact_solution_has_zero_error_and_the_right_frequency() {
        let prm = SpringCylinder.defaults();
        let p: SpringCylinderParams = prm.decode("spring_cylinder").unwrap();
        let sc = crate::test_util::build(&SpringCylinder, &prm).unwrap();
        let w = p.omega_rolling();
        let checks = crate::test_util::oracle(&SpringCylinder, &prm, &sc, &exact_trace(&p, &sc, w, 1.0));
        assert_eq!(checks.len(), 3);
        let e_q = get(&checks, "e_q");
        assert!(e_q.measured < 1e-15 && e_q.pass, "{e_q:?}");
        assert!((e_q.tolerance - 2.0 * 1.300e-2).abs() < 1e-4);
        let f = get(&checks, "frequency");
        assert!(f.pass && (f.measured - w).abs() < 1e-3 * w, "{f:?}");
        // rolling at omega_r: E = 1/2 (m + I/R^2) v^2 + 1/2 k_s x^2 is constant
        let band = get(&checks, "energy_band");
        assert!(band.measured < 1e-12 && band.pass, "{band:?}");
    }

    #[test]
    fn symplectic_euler_reference_passes() {
        let prm = params(&[("mu", "0")]);
        let p: SpringCylinderParams = prm.decode("spring_cylinder").unwrap();
        let sc = crate::test_util::build(&SpringCylinder, &prm).unwrap();
        let r = Reference::symplectic_euler(p.omega_frictionless(), p.x0, p.dt, p.steps());
        let checks = crate::test_util::oracle(&SpringCylinder, &prm, &sc, &trace(&p, &sc, &r.x, &r.v, 0.0));
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        let band = get(&checks, "energy_band");
        assert!((band.measured - r.band).abs() < 1e-12 && band.error < 1e-12, "{band:?}");
        assert!((get(&checks, "e_q").measured - 0.5 * get(&checks, "e_q").tolerance).abs() < 1e-15);
        // the band within half its reference value; the frequency, π (n_c − 1) / span over the
        // zero crossings, within twice the scheme's own frequency error plus one step's
        // resolution over the measured span, ω h / span
        assert_eq!(band.tolerance, 0.5 * r.band);
        let f = get(&checks, "frequency");
        let omega = p.omega_frictionless();
        let crossings = zero_crossings(&r.x, p.dt);
        let span = crossings[crossings.len() - 1] - crossings[0];
        let measured = std::f64::consts::PI * (crossings.len() - 1) as f64 / span;
        assert!(f.expected == omega && (f.measured - measured).abs() < 1e-12, "{f:?}");
        let want = 2.0 * (symplectic_euler_frequency(omega, p.dt) - omega).abs() + omega * p.dt / span;
        assert!((f.tolerance - want).abs() < 1e-12 * want, "{f:?} vs {want}");
        // a run that never crosses zero has no frequency: unmeasured, with the run's length as
        // the span, ω h / (n h)
        let still = vec![p.x0; sc.steps + 1];
        let c = crate::test_util::oracle(
            &SpringCylinder,
            &prm,
            &sc,
            &trace(&p, &sc, &still, &vec![0.0; sc.steps + 1], 0.0),
        );
        let f = get(&c, "frequency");
        let want = 2.0 * (symplectic_euler_frequency(omega, p.dt) - omega).abs() + omega / p.steps() as f64;
        assert!(f.measured.is_nan() && (f.tolerance - want).abs() < 1e-12 * want, "{f:?} vs {want}");
    }

    #[test]
    fn sliding_under_rolling_parameters_fails() {
        let prm = SpringCylinder.defaults();
        let p: SpringCylinderParams = prm.decode("spring_cylinder").unwrap();
        let sc = crate::test_util::build(&SpringCylinder, &prm).unwrap();
        let checks =
            crate::test_util::oracle(&SpringCylinder, &prm, &sc, &exact_trace(&p, &sc, p.omega_frictionless(), 0.0));
        assert!(!get(&checks, "e_q").pass && !get(&checks, "frequency").pass, "{checks:?}");
    }

    #[test]
    fn dissipating_trace_fails_the_energy_band() {
        let prm = SpringCylinder.defaults();
        let p: SpringCylinderParams = prm.decode("spring_cylinder").unwrap();
        let sc = crate::test_util::build(&SpringCylinder, &prm).unwrap();
        let (w, dt) = (p.omega_rolling(), sc.dt);
        // exponentially damped: loses most of the energy over 5 s, like implicit Euler
        let x: Vec<f64> =
            (0..=sc.steps).map(|k| p.x0 * (-0.5 * k as f64 * dt).exp() * (w * k as f64 * dt).cos()).collect();
        let v: Vec<f64> = (0..=sc.steps)
            .map(|k| {
                let t = k as f64 * dt;
                -p.x0 * (-0.5 * t).exp() * (0.5 * (w * t).cos() + w * (w * t).sin())
            })
            .collect();
        let checks = crate::test_util::oracle(&SpringCylinder, &prm, &sc, &trace(&p, &sc, &x, &v, 1.0));
        assert!(!get(&checks, "energy_band").pass, "{checks:?}");
    }

    #[test]
    fn stick_slip_checks_only_energy_gain() {
        let prm = params(&[("mu", "0.5")]);
        let p: SpringCylinderParams = prm.decode("spring_cylinder").unwrap();
        let sc = crate::test_util::build(&SpringCylinder, &prm).unwrap();
        let checks =
            crate::test_util::oracle(&SpringCylinder, &prm, &sc, &exact_trace(&p, &sc, p.omega_rolling(), 1.0));
        assert_eq!(checks.len(), 1);
        assert!(checks[0].name == "energy_gain" && checks[0].pass, "{checks:?}");
        // a trace whose energy rises (here by a kinetic energy of 1 J = 2 E_0 at the end) fails
        let mut tr = exact_trace(&p, &sc, p.omega_rolling(), 1.0);
        let last = tr.v.len() - 1;
        tr.v[last] = vec![2.0, 0.0, 0.0];
        let check = &crate::test_util::oracle(&SpringCylinder, &prm, &sc, &tr)[0];
        assert!(check.measured >= 1.0 && !check.pass, "{check:?}");
    }

    #[test]
    fn incomplete_trace_fails_every_check() {
        let prm = SpringCylinder.defaults();
        let p: SpringCylinderParams = prm.decode("spring_cylinder").unwrap();
        let sc = crate::test_util::build(&SpringCylinder, &prm).unwrap();
        let mut tr = exact_trace(&p, &sc, p.omega_rolling(), 1.0);
        tr.q.pop();
        let checks = crate::test_util::oracle(&SpringCylinder, &prm, &sc, &tr);
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| !c.pass));
    }

    #[test]
    fn l2_error_and_crossings_on_known_signals() {
        // constant offset c: e_q = c
        let x = vec![0.3; 11];
        assert!((l2_error(&x, 0.1, |_| 0.0) - 0.3).abs() < 1e-15);
        // cos(t) sampled finely crosses at pi/2 + k pi
        let dt = 1e-3;
        let x: Vec<f64> = (0..=10_000).map(|k| (k as f64 * dt).cos()).collect();
        let z = zero_crossings(&x, dt);
        assert_eq!(z.len(), 3);
        for (i, t) in z.iter().enumerate() {
            assert!((t - (0.5 + i as f64) * std::f64::consts::PI).abs() < 1e-7);
        }
    }
}
