//! `slope`: a rigid box or sphere released from rest on an inclined plane — the Coulomb
//! stick/slide threshold and the sliding (or rolling) acceleration.
//!
//! # Scene
//!
//! ```text
//!   z
//!   ^                              _.-'
//!   |                          _.-'   plane  n . x = 0,  i.e.  z = x tan a
//!   |              +----+  _.-'
//!   |              |body|.-'          n = (-sin a, 0, cos a)   out of the plane
//!   |         s <--+_.-'              s = (-cos a, 0, -sin a)  down-slope (positive)
//!   |          _.-'
//!   |      _.-'  a
//!   +--_.-'------------------> x
//! ```
//!
//! * The plane is a static half-space `StaticShape::HalfSpace { normal: n, offset: 0 }`, i.e. the
//!   plane through the origin inclined by `a = angle_deg` about the y axis.
//! * The body is a cube of edge `edge` (`shape = "box"`) or a sphere of radius `radius`
//!   (`shape = "sphere"`), mass `mass`, free in all six DOFs, at rest with its centre on the normal
//!   through the origin at height `h - delta` above the plane: `h` is the half edge or the radius,
//!   `delta = 0` for rigid contact, and for compliant contact the static penetration
//!   `delta = m g cos a / k`. The box is rotated by `-a` about y so that its bottom face lies on
//!   the plane.
//! * Body and plane have the same material (friction `mu`, rigid or compliant), so the combined
//!   contact has exactly these values. `k` is the stiffness of the body–plane contact as a whole
//!   (force per unit penetration); the narrow phase represents it by `n_c` points (box: the 4
//!   bottom corners; sphere: 1), so each point gets `k / n_c` and `tau_d`.
//! * Defaults: 10 degrees, `mu = 0.3 > tan 10° = 0.176` (the box sticks), `dt = 0.01 s`, 1 s. The
//!   oracles below are exact for constant accelerations under symplectic Euler at any `dt`, so the
//!   step only sets how many steps the creep bound integrates over; 10 ms is the usual robotics
//!   step (Castro et al. use it in their clutter tests) and 100 steps give a 50-step averaging
//!   window. The detection margin 0.01 m is a tenth of the body size: contacts at rest (gap 0) are
//!   always detected, and the body never moves towards the plane.
//!
//! # Analytic solution
//!
//! Along `s`, gravity gives `g sin a`; the normal force is `m g cos a`.
//!
//! * Box (no tipping: a cube on a slope tips only beyond 45°, which is why `angle_deg < 45` for the
//!   box): sticks iff `mu >= tan a`; otherwise it slides with `a_s = g (sin a - mu cos a)`.
//! * Sphere (`I = 2/5 m r^2`): it rolls without slipping iff `mu >= (2/7) tan a` (rolling needs a
//!   friction force `(2/7) m g sin a`), with `a_s = (5/7) g sin a`; otherwise its contact point
//!   slips and the centre accelerates at `a_s = g (sin a - mu cos a)`.
//!
//! "Slides" means the contact point slips: for the box, the body slides; for the sphere, it slips
//! instead of rolling. A rolling sphere "sticks" at the contact.
//!
//! # Oracle checks
//!
//! With `N` steps, `T = N dt`, `k0 = N / 2` (integer division), `T2 = (N - k0) dt`, the
//! post-step velocities `v_k` (linear `v`, angular `w`) and the contact point's down-slope slip
//! velocity `c_k = s . (v_k + w_k x (-h n))` (for a box that does not rotate this is its
//! velocity, and `dt sum c_k` its down-slope displacement under symplectic Euler):
//!
//! * `slides` — measured 1 if the slip displacement `D = dt sum_{k=1..N} c_k` satisfies
//!   `|D| > D_thr`, else 0; expected 1 iff `mu < tan a` (box) or `mu < (2/7) tan a` (sphere);
//!   tolerance 0. Threshold: a sticking contact may creep at most at `v_tol` (below), so it moves
//!   at most `D_thr = v_tol T`. A sliding contact moves `T^2 a_slip / 2` with
//!   `a_slip = a_s` (box) or `3.5 g cos a ((2/7) tan a - mu)` (slipping sphere). When that is within
//!   a factor 2 of `D_thr` (just above the threshold angle) the check cannot tell the two apart and
//!   its tolerance is 1 (any answer passes).
//! * `acceleration` — mean down-slope acceleration of the centre over the second half,
//!   `(s . v_N - s . v_k0) / T2` (m/s^2); expected `a_s` (0 for a sticking box). Symplectic Euler
//!   integrates constant accelerations exactly, so the error comes only from the contact impulses
//!   and the creep: tolerance `IMPULSE_REL_TOL g + 2 v_tol / T2` (an impulse error of 0.1 % of the
//!   weight changes the acceleration by `1e-3 g`; a creep speed that wanders within `±v_tol` changes
//!   the velocity difference by at most `2 v_tol`). At the defaults: `9.8e-3 + 3.9e-3 m/s^2`.
//! * `creep_speed` — only when the contact is expected to stick (box sticking, sphere rolling):
//!   the mean slip speed `mean_{k0 < k <= N} |c_k|` (m/s); expected 0; tolerance
//!   `v_tol = CREEP_REL_TOL g dt` (`9.8e-4 m/s` at `dt = 0.01`): friction must cancel
//!   `g sin a dt <= g dt` of velocity every step, and 1 % of that is accepted (crate doc).
//! * `glide_gap` — only when the contact is expected to slip ([`SlopeParams::glide_check`]): the
//!   largest height of the body above its touching position, `max_k (n . x_k - h)` (m); expected
//!   0 (a sliding contact keeps `u_n = 0`); tolerance `IMPULSE_REL_TOL g dt^2`. It tells the exact
//!   Coulomb law from Anitescu's cone complementarity relaxation (CCP), whose sliding velocity
//!   lies on the dual cone's boundary, `u_n = mu |u_t|`: with the gap bias `phi/dt` of the step,
//!   the CCP's law reads `u_n + phi_k/dt = mu |u_t|`, so `phi_{k+1} = phi_k + dt u_n = dt mu |u_t|`:
//!   the body glides one step's `dt mu |c_k|` above the plane (`3e-4 m` at 10 deg, `mu = 0.156`,
//!   after 1 s). An exact-cone solver separates only by its normal-impulse error: an error of
//!   `IMPULSE_REL_TOL` of the weight's impulse moves the body by at most `IMPULSE_REL_TOL g dt^2`
//!   in a step before the gap bias takes it back (`1e-6 m` at `dt = 0.01`).

use crate::{check, default_struct, trace_is_whole, unmeasured, BodyShape, ContactModel};
use crate::{CREEP_REL_TOL, IMPULSE_REL_TOL};
use harness::model::{RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("slope.toml");
const SOURCE: &str = "cases/src/slope.toml";

/// Parameters of the `slope` case (defaults in `cases/src/slope.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlopeParams {
    /// `"box"` or `"sphere"`.
    pub shape: BodyShape,
    /// Inclination (degrees): box `[0, 45)`, sphere `[0, 90)`.
    pub angle_deg: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// `"rigid"` or `"compliant"`.
    pub contact: ContactModel,
    /// Compliant stiffness of the whole body–plane contact (N/m, > 0), split over its points.
    pub k: f64,
    /// Compliant contact dissipation time (s, >= 0).
    pub tau_d: f64,
    /// Body mass (kg, > 0).
    pub mass: f64,
    /// Box edge (m, > 0).
    pub edge: f64,
    /// Sphere radius (m, > 0).
    pub radius: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for SlopeParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for SlopeParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        let max_angle = if self.is_box() { 45.0 } else { 90.0 };
        if !(self.angle_deg.is_finite() && (0.0..max_angle).contains(&self.angle_deg)) {
            return Err(harness::FieldError::new(
                "angle_deg",
                format!("must be in [0, {max_angle}) for a {} (finite), got {}", self.shape.name(), self.angle_deg),
            ));
        }
        check::non_negative("mu", self.mu)?;
        check::positive("k", self.k)?;
        check::non_negative("tau_d", self.tau_d)?;
        check::positive("mass", self.mass)?;
        check::positive("edge", self.edge)?;
        check::positive("radius", self.radius)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        if self.rest_penetration() >= self.contact_height() {
            return Err(harness::FieldError::new(
                "k",
                format!(
                    "too soft, the static penetration {} m exceeds the body's half size {} m",
                    self.rest_penetration(),
                    self.contact_height()
                ),
            ));
        }
        Ok(())
    }
}

/// What the analytic solution predicts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlopeExpectation {
    /// Whether the contact point slips (box slides, sphere slips instead of rolling).
    pub slides: bool,
    /// Down-slope acceleration of the centre of mass (m/s^2).
    pub acceleration: f64,
    /// Down-slope acceleration of the contact point's slip (m/s^2; 0 when sticking).
    pub slip_acceleration: f64,
}

impl SlopeParams {
    /// Whether the body is a box.
    pub fn is_box(&self) -> bool {
        self.shape == BodyShape::Box
    }
    /// Inclination (rad).
    pub fn angle(&self) -> f64 {
        self.angle_deg.to_radians()
    }
    /// Unit normal of the plane, out of the solid: `(-sin a, 0, cos a)`.
    pub fn normal(&self) -> Vector3<f64> {
        let a = self.angle();
        Vector3::new(-a.sin(), 0.0, a.cos())
    }
    /// Unit down-slope direction `(-cos a, 0, -sin a)` (positive down the slope).
    pub fn downslope(&self) -> Vector3<f64> {
        let a = self.angle();
        Vector3::new(-a.cos(), 0.0, -a.sin())
    }
    /// Distance from the centre to the plane when just touching (half edge or radius, m).
    pub fn contact_height(&self) -> f64 {
        if self.is_box() {
            0.5 * self.edge
        } else {
            self.radius
        }
    }
    /// Contact model.
    pub fn contact_model(&self) -> ContactModel {
        self.contact
    }
    /// Number of points by which the narrow phase represents the body–plane contact (box: 4
    /// bottom corners; sphere: 1).
    pub fn contact_points(&self) -> usize {
        if self.is_box() {
            4
        } else {
            1
        }
    }
    /// Static penetration at rest: 0 (rigid) or `m g cos a / k` (m).
    pub fn rest_penetration(&self) -> f64 {
        match self.contact_model() {
            ContactModel::Rigid => 0.0,
            ContactModel::Compliant => self.mass * self.gravity * self.angle().cos() / self.k,
        }
    }
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = self.contact_model().material(self.mu, self.k / self.contact_points() as f64, self.tau_d);
        let shape = if self.is_box() {
            Shape::Box { half_extents: [0.5 * self.edge; 3] }
        } else {
            Shape::Sphere { radius: self.radius }
        };
        let centre = (self.contact_height() - self.rest_penetration()) * self.normal();
        let body = RigidBody::new(self.shape.name(), shape, self.mass, centre, material)
            .with_orientation(UnitQuaternion::from_axis_angle(&Vector3::y_axis(), -self.angle()));
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        w.bodies.push(body);
        w.statics.push(StaticCollider {
            name: "slope".into(),
            shape: StaticShape::HalfSpace { normal: self.normal(), offset: 0.0 },
            material,
        });
        w
    }

    /// The analytic prediction.
    pub fn expectation(&self) -> SlopeExpectation {
        let (a, g, mu) = (self.angle(), self.gravity, self.mu);
        let sliding = g * (a.sin() - mu * a.cos());
        if self.is_box() {
            let slides = mu < a.tan();
            SlopeExpectation {
                slides,
                acceleration: if slides { sliding } else { 0.0 },
                slip_acceleration: if slides { sliding } else { 0.0 },
            }
        } else {
            let slides = mu < 2.0 / 7.0 * a.tan();
            SlopeExpectation {
                slides,
                acceleration: if slides { sliding } else { 5.0 / 7.0 * g * a.sin() },
                slip_acceleration: if slides { 3.5 * g * a.cos() * (2.0 / 7.0 * a.tan() - mu) } else { 0.0 },
            }
        }
    }

    /// Creep-speed tolerance `v_tol = CREEP_REL_TOL g dt` (m/s).
    pub fn creep_tolerance(&self, dt: f64) -> f64 {
        CREEP_REL_TOL * self.gravity * dt
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let exp = self.expectation();
        let (dt, n) = (scenario.dt, scenario.steps);
        let k0 = n / 2;
        let (t_all, t_half) = (n as f64 * dt, (n - k0) as f64 * dt);
        let v_tol = self.creep_tolerance(dt);
        let d_thr = v_tol * t_all;
        let slides_tol =
            if exp.slides && 0.5 * exp.slip_acceleration * t_all * t_all <= 2.0 * d_thr { 1.0 } else { 0.0 };
        let acc_tol = IMPULSE_REL_TOL * self.gravity + 2.0 * v_tol / t_half;
        let slides_exp = if exp.slides { 1.0 } else { 0.0 };
        if !trace_is_whole(scenario, trace) {
            let mut out = vec![
                unmeasured("slides", slides_exp, slides_tol),
                unmeasured("acceleration", exp.acceleration, acc_tol),
            ];
            if !exp.slides {
                out.push(unmeasured("creep_speed", 0.0, v_tol));
            } else {
                out.push(unmeasured("glide_gap", 0.0, self.glide_tolerance(dt)));
            }
            return out;
        }
        let (s, nrm, h) = (self.downslope(), self.normal(), self.contact_height());
        let lin = |v: &[f64]| Vector3::new(v[0], v[1], v[2]);
        let slip = |v: &[f64]| s.dot(&(lin(v) + Vector3::new(v[3], v[4], v[5]).cross(&(-h * nrm))));
        let d: f64 = dt * trace.v[1..].iter().map(|v| slip(v)).sum::<f64>();
        let slides = if d.abs() > d_thr { 1.0 } else { 0.0 };
        let acc = (s.dot(&lin(&trace.v[n])) - s.dot(&lin(&trace.v[k0]))) / t_half;
        let mut out = vec![
            OracleCheck::abs("slides", slides, slides_exp, slides_tol),
            OracleCheck::abs("acceleration", acc, exp.acceleration, acc_tol),
        ];
        if !exp.slides {
            let creep = trace.v[k0 + 1..].iter().map(|v| slip(v).abs()).sum::<f64>() / (n - k0) as f64;
            out.push(OracleCheck::abs("creep_speed", creep, 0.0, v_tol));
        }
        out.extend(self.glide_check(scenario, trace));
        out
    }

    /// Tolerance of `glide_gap`, `IMPULSE_REL_TOL g dt^2` (m; module doc).
    pub fn glide_tolerance(&self, dt: f64) -> f64 {
        IMPULSE_REL_TOL * self.gravity * dt * dt
    }

    /// The CCP gliding oracle `glide_gap` of a whole trace (module doc), when the contact is
    /// expected to slip; `None` otherwise.
    pub fn glide_check(&self, scenario: &Scenario, trace: &Trace) -> Option<OracleCheck> {
        if !self.expectation().slides {
            return None;
        }
        let (nrm, h) = (self.normal(), self.contact_height());
        let gap =
            trace.q[1..].iter().map(|q| nrm.dot(&Vector3::new(q[0], q[1], q[2])) - h).fold(f64::NEG_INFINITY, f64::max);
        Some(OracleCheck::abs("glide_gap", gap, 0.0, self.glide_tolerance(scenario.dt)))
    }
}

/// The `slope` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct Slope;

impl CaseDef for Slope {
    type Params = SlopeParams;
    const NAME: &'static str = "slope";
    const SUMMARY: &'static str =
        "box or sphere released on an inclined plane: Coulomb stick/slide threshold, sliding or rolling acceleration";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &SlopeParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: p.contact_model().needs() })
    }
    fn grade(&self, p: &SlopeParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&Slope, overrides)
    }

    /// A symplectic-Euler trace of the centre moving down-slope with constant acceleration `acc`
    /// and angular velocity `w(t) = omega_rate t` about y.
    fn trace(p: &SlopeParams, sc: &Scenario, acc: f64, omega_rate: f64) -> Trace {
        let s = p.downslope();
        let mut q = sc.world.positions();
        let mut tr = Trace { dt: sc.dt, completed: true, ..Default::default() };
        tr.q.push(q.clone());
        tr.v.push(vec![0.0; 6]);
        for k in 1..=sc.steps {
            let t = k as f64 * sc.dt;
            let v = s * acc * t;
            for a in 0..3 {
                q[a] += sc.dt * v[a];
            }
            tr.q.push(q.clone());
            tr.v.push(vec![v.x, v.y, v.z, 0.0, omega_rate * t, 0.0]);
            tr.metrics.push(StepMetrics { t, ..Default::default() });
        }
        tr
    }

    use crate::test_util::check as get;

    /// Coulomb's threshold holds at equality: a box with `μ = tan a` and a sphere with `μ = (2/7)
    /// tan a` stick (friction can supply exactly what is asked).
    #[test]
    fn expectations_stick_on_the_threshold() {
        for shape in ["box", "sphere"] {
            let p: SlopeParams = params(&[("shape", shape)]).decode("slope").unwrap();
            let at = if shape == "box" { p.angle().tan() } else { 2.0 / 7.0 * p.angle().tan() };
            let p: SlopeParams = params(&[("shape", shape), ("mu", &at.to_string())]).decode("slope").unwrap();
            assert_eq!(p.mu, at);
            let e = p.expectation();
            assert!(!e.slides && e.slip_acceleration == 0.0, "{shape}: {e:?}");
        }
    }

    /// A run sliding down-slope at the speed `c(k)` after step `k` (positions at rest).
    fn steady(p: &SlopeParams, sc: &Scenario, c: impl Fn(usize) -> f64) -> Trace {
        let mut tr = trace(p, sc, 0.0, 0.0);
        for (k, v) in tr.v.iter_mut().enumerate().skip(1) {
            v[..3].copy_from_slice((p.downslope() * c(k)).as_slice());
        }
        tr
    }

    /// `slides` compares the slip distance `h Σ_k c_k` with `d_thr = v_tol T` (0.9 and 1.1 of
    /// it); a slide too slow to exceed twice `d_thr` is not graded on it (tolerance 1); the creep
    /// speed is read from state `n/2 + 1` on; a run that did not complete lists the checks of its
    /// expectation (creep for a sticking box, glide for a sliding one).
    #[test]
    fn slides_threshold_creep_window_and_unmeasured_lists() {
        // T = 0.8 s (at 1 s a factor T and a divisor T would look alike)
        let prm = params(&[("duration", "0.8")]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let (n, h) = (sc.steps, sc.dt);
        let d_thr = p.creep_tolerance(h) * n as f64 * h;
        for (f, slides) in [(0.9, 0.0), (1.1, 1.0)] {
            let c = crate::test_util::oracle(&Slope, &prm, &sc, &steady(&p, &sc, |_| f * d_thr / (n as f64 * h)));
            assert_eq!(get(&c, "slides").measured, slides, "{f}");
        }
        let k0 = n / 2;
        let only = |k: usize| move |j: usize| if j == k { 1e-3 } else { 0.0 };
        let c = crate::test_util::oracle(&Slope, &prm, &sc, &steady(&p, &sc, only(k0)));
        assert_eq!(get(&c, "creep_speed").measured, 0.0);
        let c = crate::test_util::oracle(&Slope, &prm, &sc, &steady(&p, &sc, only(k0 + 1)));
        assert!((get(&c, "creep_speed").measured - 1e-3 / (n - k0) as f64).abs() < 1e-18);
        // just below the threshold the slip is too slow to tell from creep within the run: a slip
        // acceleration of 4e-3 m/s² slides 0.5 a T² = 1.28e-3 m in 0.8 s, under 2 d_thr = 1.57e-3
        // m (it would exceed it over 1 s)
        let near = p.angle().tan() - 1e-5;
        let slow = p.angle().tan() - 4e-3 / (p.gravity * p.angle().cos());
        for (mu, tol) in [(near, 1.0), (slow, 1.0), (0.1, 0.0)] {
            let prm = params(&[("mu", &mu.to_string()), ("duration", "0.8")]);
            let p: SlopeParams = prm.decode("slope").unwrap();
            let sc = crate::test_util::build(&Slope, &prm).unwrap();
            let mut cut = trace(&p, &sc, 0.0, 0.0);
            cut.completed = false;
            let c = crate::test_util::oracle(&Slope, &prm, &sc, &cut);
            assert_eq!(crate::test_util::names(&c), ["slides", "acceleration", "glide_gap"]);
            assert_eq!(get(&c, "slides").tolerance, tol, "mu {mu}");
        }
        let mut cut = trace(&p, &sc, 0.0, 0.0);
        cut.completed = false;
        let c = crate::test_util::oracle(&Slope, &prm, &sc, &cut);
        assert_eq!(crate::test_util::names(&c), ["slides", "acceleration", "creep_speed"]);
    }

    #[test]
    fn defaults_parse_and_build_a_valid_world() {
        let p: SlopeParams = Slope.defaults().decode("slope").unwrap();
        assert_eq!(p, SlopeParams::default());
        let sc = crate::test_util::build(&Slope, &Slope.defaults()).unwrap();
        sc.world.validate().unwrap();
        assert_eq!(sc.steps, 100);
        assert_eq!(sc.dt, 0.01);
        assert!(sc.needs.rigid_contact && !sc.needs.compliant_contact && sc.needs.rigid_bodies);
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&Slope);
    }

    #[rstest]
    #[case::box_rigid("box", "rigid")]
    #[case::box_compliant("box", "compliant")]
    #[case::sphere_rigid("sphere", "rigid")]
    #[case::sphere_compliant("sphere", "compliant")]
    fn body_rests_on_the_plane(#[case] shape: &str, #[case] contact: &str) {
        let prm = params(&[("shape", shape), ("contact", contact), ("angle_deg", "20")]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        sc.world.validate().unwrap();
        let b = &sc.world.bodies[0];
        let n = p.normal();
        let delta = if contact == "rigid" { 0.0 } else { 9.81 * 20f64.to_radians().cos() / 1e5 };
        // distance of the lowest surface point from the plane = -delta
        let lowest = match b.shape {
            Shape::Box { half_extents: h } => (0..8)
                .map(|i| {
                    let c = Vector3::new(
                        if i & 1 == 0 { -h[0] } else { h[0] },
                        if i & 2 == 0 { -h[1] } else { h[1] },
                        if i & 4 == 0 { -h[2] } else { h[2] },
                    );
                    n.dot(&(b.position + b.orientation * c))
                })
                .fold(f64::INFINITY, f64::min),
            Shape::Sphere { radius } => n.dot(&b.position) - radius,
            Shape::Cylinder { .. } | Shape::Compound { .. } => unreachable!(),
        };
        assert!((lowest + delta).abs() < 1e-15, "lowest point {lowest}, expected {}", -delta);
        // the box's bottom face is parallel to the plane: four corners at the same height
        if shape == "box" {
            assert!((b.orientation * Vector3::z() - n).norm() < 1e-15);
        }
        assert_eq!(b.twist(), [0.0; 6]);
        assert!((p.downslope().dot(&n)).abs() < 1e-15);
        assert!(p.downslope().z <= 0.0, "down-slope must go down");
    }

    #[rstest]
    #[case::box_rigid("box", "rigid")]
    #[case::box_compliant("box", "compliant")]
    #[case::sphere_rigid("sphere", "rigid")]
    #[case::sphere_compliant("sphere", "compliant")]
    fn narrow_phase_sees_the_assumed_contact_points(#[case] shape: &str, #[case] contact: &str) {
        // The split of k over the points and the rest height rely on the narrow phase's
        // representation of the contact; this ties the two together.
        let prm = params(&[("shape", shape), ("contact", contact)]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), p.contact_points());
        let mut force = 0.0;
        for c in &cs.contacts {
            assert!((c.normal() - p.normal()).norm() < 1e-12);
            assert!((c.gap + p.rest_penetration()).abs() < 1e-12, "gap {}", c.gap);
            if let harness::model::ContactCompliance::Compliant { stiffness, .. } = c.compliance {
                force += stiffness * -c.gap;
            }
        }
        if contact == "compliant" {
            let weight_n = p.mass * p.gravity * p.angle().cos();
            assert!((force - weight_n).abs() < 1e-9 * weight_n, "{force} vs {weight_n}");
        }
    }

    #[rstest]
    #[case::negative_mass("mass", "-1", "mass:")]
    #[case::negative_mu("mu", "-1", "mu: must be >= 0")]
    #[case::angle_too_steep_for_box("angle_deg", "45", "angle_deg:")]
    #[case::negative_angle("angle_deg", "-5", "angle_deg:")]
    #[case::bad_shape("shape", "cube", "shape:")]
    #[case::bad_contact("contact", "soft", "contact:")]
    #[case::zero_dt("dt", "0", "dt:")]
    #[case::too_short("duration", "0.001", "duration:")]
    #[case::zero_edge("edge", "0", "edge:")]
    #[case::negative_tau("tau_d", "-0.1", "tau_d:")]
    #[case::zero_k("k", "0", "k:")]
    #[case::zero_margin("margin", "0", "margin:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&Slope, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[test]
    fn non_finite_values_are_rejected_by_name() {
        for (name, set) in [
            ("mu", (|p: &mut SlopeParams| p.mu = f64::NAN) as fn(&mut SlopeParams)),
            ("angle_deg", |p| p.angle_deg = f64::NAN),
            ("mass", |p| p.mass = f64::INFINITY),
            ("gravity", |p| p.gravity = f64::NAN),
        ] {
            let mut p = SlopeParams::default();
            set(&mut p);
            assert!(p.validate().unwrap_err().to_string().starts_with(&format!("{name}:")), "{name}");
        }
    }

    #[test]
    fn sphere_allows_steeper_angles() {
        assert!(crate::test_util::build(&Slope, &params(&[("shape", "sphere"), ("angle_deg", "60")])).is_ok());
        assert!(crate::test_util::build(&Slope, &params(&[("shape", "sphere"), ("angle_deg", "90")])).is_err());
    }

    #[test]
    fn expectations_follow_the_coulomb_threshold() {
        let d = SlopeParams::default();
        let e = d.expectation();
        assert!(!e.slides && e.acceleration == 0.0);
        let slide = SlopeParams { mu: 0.1, ..d.clone() };
        let a = 10f64.to_radians();
        assert!(slide.expectation().slides);
        assert!((slide.expectation().acceleration - 9.81 * (a.sin() - 0.1 * a.cos())).abs() < 1e-14);
        let roll = SlopeParams { shape: BodyShape::Sphere, mu: 0.06, ..d.clone() }; // (2/7) tan 10° = 0.0504
        assert!(!roll.expectation().slides);
        assert!((roll.expectation().acceleration - 5.0 / 7.0 * 9.81 * a.sin()).abs() < 1e-14);
        let slip = SlopeParams { shape: BodyShape::Sphere, mu: 0.04, ..d };
        assert!(slip.expectation().slides);
        assert!((slip.expectation().acceleration - 9.81 * (a.sin() - 0.04 * a.cos())).abs() < 1e-14);
        // the contact point's acceleration: a sliding box's is its own; a sliding sphere's is the
        // centre's minus R times the angular one, `g sin - mu g cos - (5/2) mu g cos`; at rest or
        // rolling it is zero
        let box_slip = slide.expectation().slip_acceleration;
        assert!((box_slip - 9.81 * (a.sin() - 0.1 * a.cos())).abs() < 1e-14, "{box_slip}");
        let sphere_slip = slip.expectation().slip_acceleration;
        assert!((sphere_slip - 9.81 * (a.sin() - 3.5 * 0.04 * a.cos())).abs() < 1e-14, "{sphere_slip}");
        assert_eq!((e.slip_acceleration, roll.expectation().slip_acceleration), (0.0, 0.0));
    }

    #[test]
    fn constant_acceleration_trace_measures_that_acceleration() {
        let prm = params(&[("mu", "0.1")]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let a = p.expectation().acceleration;
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &trace(&p, &sc, a, 0.0));
        let acc = get(&checks, "acceleration");
        assert!((acc.measured - a).abs() < 1e-12, "{acc:?}");
        assert!(acc.pass);
        assert_eq!(get(&checks, "slides").measured, 1.0);
        assert!(get(&checks, "slides").pass);
        assert!(checks.iter().all(|c| c.name != "creep_speed"), "no creep check when sliding");
        // the same motion under sticking parameters fails both checks
        let checks = crate::test_util::oracle(&Slope, &Slope.defaults(), &sc, &trace(&p, &sc, a, 0.0));
        assert!(!get(&checks, "slides").pass && !get(&checks, "acceleration").pass);
        assert!(!get(&checks, "creep_speed").pass);
    }

    /// `glide_gap` (the CCP gliding oracle): graded only when the contact slips; a trace on the
    /// plane measures 0 and passes; the CCP's predicted float `dt mu |c_k|` above the plane fails
    /// (measured as its largest value), and a float of 0.9 of the tolerance `IMPULSE_REL_TOL g
    /// dt^2` passes while 1.1 of it fails.
    #[test]
    fn glide_gap_tells_the_ccp_float_from_contact() {
        let prm = params(&[("mu", "0.1")]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let a = p.expectation().acceleration;
        let tol = p.glide_tolerance(sc.dt);
        assert!((tol - 1e-3 * 9.81 * 1e-4).abs() < 1e-18, "the module doc's tolerance: {tol}");
        let on_plane = trace(&p, &sc, a, 0.0);
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &on_plane);
        let g = get(&checks, "glide_gap");
        assert!(g.measured.abs() < 1e-12 && g.pass, "{g:?}");
        let lifted = |f: &dyn Fn(usize, &[f64]) -> f64| {
            let mut tr = on_plane.clone();
            for k in 1..tr.q.len() {
                let lift = f(k, &tr.v[k - 1]) * p.normal();
                for i in 0..3 {
                    tr.q[k][i] += lift[i];
                }
            }
            tr
        };
        // the CCP's float: dt mu |c_{k-1}| above the plane after step k
        let ccp = lifted(&|_, v| sc.dt * p.mu * p.downslope().dot(&Vector3::new(v[0], v[1], v[2])).abs());
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &ccp);
        let g = get(&checks, "glide_gap");
        let predicted = sc.dt * p.mu * a * (sc.steps - 1) as f64 * sc.dt;
        assert!((g.measured - predicted).abs() < 1e-12 && !g.pass, "{g:?} vs {predicted}");
        for (factor, pass) in [(0.9, true), (1.1, false)] {
            let tr = lifted(&|k, _| if k == 5 { factor * tol } else { 0.0 });
            assert_eq!(get(&crate::test_util::oracle(&Slope, &prm, &sc, &tr), "glide_gap").pass, pass, "{factor}");
        }
        // a sticking box has no gliding check
        let checks = crate::test_util::oracle(&Slope, &Slope.defaults(), &sc, &on_plane);
        assert!(checks.iter().all(|c| c.name != "glide_gap"));
    }

    /// The acceleration tolerance is its derivation (module doc): `IMPULSE_REL_TOL g + 2 v_tol /
    /// T2`, `9.8e-3 + 3.9e-3 m/s^2` at the defaults; a trace off by 0.9 of it passes, one off by
    /// 1.1 of it fails (a looser or tighter tolerance is caught either way).
    #[test]
    fn acceleration_tolerance_is_its_derivation_and_bounds_the_verdict() {
        let prm = params(&[("mu", "0.1")]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let a = p.expectation().acceleration;
        let t_half = (sc.steps - sc.steps / 2) as f64 * sc.dt;
        let derived = IMPULSE_REL_TOL * p.gravity + 2.0 * CREEP_REL_TOL * p.gravity * sc.dt / t_half;
        assert!((derived - (9.8e-3 + 3.92e-3)).abs() < 1e-4, "the module doc's numbers: {derived}");
        for (factor, pass) in [(0.9, true), (-0.9, true), (1.1, false), (-1.1, false)] {
            let checks = crate::test_util::oracle(&Slope, &prm, &sc, &trace(&p, &sc, a + factor * derived, 0.0));
            let acc = get(&checks, "acceleration");
            assert!((acc.tolerance - derived).abs() <= 1e-15 * derived, "{acc:?} vs {derived}");
            assert_eq!(acc.pass, pass, "off by {factor} x tolerance: {acc:?}");
        }
    }

    #[test]
    fn resting_trace_passes_when_sticking() {
        let prm = Slope.defaults();
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &trace(&p, &sc, 0.0, 0.0));
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        assert_eq!(get(&checks, "creep_speed").measured, 0.0);
        assert!((get(&checks, "creep_speed").tolerance - 0.01 * 9.81 * 0.01).abs() < 1e-15);
    }

    #[test]
    fn creep_above_the_bound_fails_and_below_passes() {
        let prm = Slope.defaults();
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let v_tol = p.creep_tolerance(sc.dt);
        for (speed, pass) in [(0.5 * v_tol, true), (2.0 * v_tol, false)] {
            let mut tr = trace(&p, &sc, 0.0, 0.0);
            for v in tr.v.iter_mut().skip(1) {
                let u = p.downslope() * speed;
                v[..3].copy_from_slice(u.as_slice());
            }
            let checks = crate::test_util::oracle(&Slope, &prm, &sc, &tr);
            assert_eq!(get(&checks, "creep_speed").pass, pass, "{speed}");
            assert_eq!(get(&checks, "slides").pass, pass, "{speed}");
        }
    }

    #[test]
    fn rolling_sphere_does_not_slide() {
        let prm = params(&[("shape", "sphere")]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let a = p.expectation().acceleration;
        // rolling: v = w x (r n), so with v = a t s, w = (a t / r) (n x s) = -(a t / r) y
        let n_x_s = p.normal().cross(&p.downslope());
        assert!((n_x_s - Vector3::new(0.0, -1.0, 0.0)).norm() < 1e-15);
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &trace(&p, &sc, a, -a / p.radius));
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        assert!(get(&checks, "creep_speed").measured < 1e-12);
        // without rotation the sphere's contact point slips
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &trace(&p, &sc, a, 0.0));
        assert!(!get(&checks, "slides").pass && !get(&checks, "creep_speed").pass);
    }

    #[test]
    fn near_threshold_slides_is_undecidable() {
        // mu just below tan 10° = 0.17633: a_s ~ 1e-4 m/s^2, displacement 5e-5 m << D_thr ~ 1e-3 m
        let prm = params(&[("mu", "0.17632")]);
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &trace(&p, &sc, 0.0, 0.0));
        assert_eq!(get(&checks, "slides").tolerance, 1.0);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
    }

    #[test]
    fn incomplete_trace_fails_every_check() {
        let prm = Slope.defaults();
        let p: SlopeParams = prm.decode("slope").unwrap();
        let sc = crate::test_util::build(&Slope, &prm).unwrap();
        let mut tr = trace(&p, &sc, 0.0, 0.0);
        tr.completed = false;
        let checks = crate::test_util::oracle(&Slope, &prm, &sc, &tr);
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| !c.pass && c.measured.is_nan()));
    }
}
