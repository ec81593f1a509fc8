//! `sphere_stack`: a vertical stack of spheres resting on the ground — non-penetration, drift and
//! load transfer through a chain of contacts, with an optional mass ratio (heavy on top) that makes
//! the contact problem ill-conditioned.
//!
//! # Scene
//!
//! ```text
//!        ( n-1 )   m r^(n-1)      contact n-1 carries W_{n-1} = g m_{n-1}
//!          ...
//!        (  1  )   m r            contact 1 carries W_1 = g (m_1 + ... + m_{n-1})
//!        (  0  )   m              contact 0 carries W_0 = g (m_0 + ... + m_{n-1})
//!   ===================  ground: half-space z <= 0, normal +z
//! ```
//!
//! * `n` spheres of radius `radius`; sphere `i` (0 = bottom) has mass `m_i = mass * mass_ratio^i`,
//!   all six DOFs free, at rest on the z axis. Contact `j` is the ground contact (`j = 0`) or the
//!   contact between spheres `j-1` and `j`; it carries the weight of everything above it,
//!   `W_j = g sum_{i >= j} m_i`.
//! * Rigid contact: the spheres touch with gap 0, `z_i = R (2 i + 1)`. Compliant contact: each
//!   contact starts at its static penetration `W_j / k`, so `z_0 = R - W_0/k` and
//!   `z_i = z_{i-1} + 2R - W_i/k`; the stack starts in equilibrium either way.
//! * One material everywhere (`mu`, rigid or compliant with `k`, `tau_d`). Defaults: 5 unit-mass
//!   spheres of radius 5 cm, `mu = 0.5`, rigid, `dt = 0.01 s`, 1 s. With compliant contact the
//!   default `k = 1e5 N/m` keeps the contact period `2 pi sqrt(m/k) = 0.02 s` above `dt` (the
//!   compliant, not the near-rigid, regime of Castro et al. §V-B).
//! * The stack is an unstable equilibrium (spheres on spheres); with the exact symmetric initial
//!   state nothing breaks the symmetry, so any lateral motion is a solver artefact and grows.
//!
//! # Oracle checks
//!
//! With the load factor of contact `j`, `L_j = (W_j / g) (1/m_{j-1} + 1/m_j)` (`1/m_0` alone for
//! the ground): the contact's normal impulse per step over the impulse that stops the pair's
//! relative motion under its own weight (the normal Delassus entry of two spheres is
//! `1/m_{j-1} + 1/m_j`). A velocity-level scheme leaves a position error of order `g dt^2 L_j` at
//! contact `j`; the accepted part is `p_j = PENETRATION_REL_TOL g dt^2 L_j` (crate doc). At the
//! defaults `L = (5, 8, 6, 4, 2)`, so `max p_j = 7.8e-4 m` and `sum p_j = 2.5e-3 m`.
//!
//! * `max_penetration` — `max_k StepMetrics.penetration_max` over the run (m); expected 0 (rigid)
//!   or the bottom contact's static penetration `W_0 / k` (compliant); tolerance `max_j p_j`.
//! * `top_drift` — `max_k |x_top(t_k) - x_top(0)|` (m), the top sphere's centre displacement;
//!   expected 0; tolerance `sum_j p_j`: the top's height is the sum of the contacts' penetration
//!   changes, and lateral drift should not exist at all.
//! * `weight_ratio` — the mean over the second half of the run (steps `N/2+1 .. N`) of
//!   `StepMetrics.normal_impulse_total`, divided by the exact total normal impulse per step of the
//!   resting stack, `dt sum_j W_j` (for one sphere this is `dt` times the total weight; for a stack
//!   every contact carries everything above it, so the sum is `g sum_i (i + 1) m_i`); expected 1;
//!   error `|measured - 1|`; tolerance `IMPULSE_REL_TOL`. At rest the impulses are exactly the
//!   loads for both contact models (symplectic Euler, equilibrium start), so only the solve accuracy
//!   enters.

use crate::{check, default_struct, trace_is_whole, unmeasured, ContactModel};
use crate::{IMPULSE_REL_TOL, PENETRATION_REL_TOL};
use harness::model::{RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("sphere_stack.toml");
const SOURCE: &str = "cases/src/sphere_stack.toml";

/// Largest stack accepted.
pub const MAX_SPHERES: i64 = 10_000;

/// Parameters of the `sphere_stack` case (defaults in `cases/src/sphere_stack.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SphereStackParams {
    /// Number of spheres (1 ..= `MAX_SPHERES`).
    pub n: i64,
    /// Sphere radius (m, > 0).
    pub radius: f64,
    /// Mass of the bottom sphere (kg, > 0).
    pub mass: f64,
    /// Sphere `i` has mass `mass * mass_ratio^i` (> 0).
    pub mass_ratio: f64,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// `"rigid"` or `"compliant"`.
    pub contact: ContactModel,
    /// Compliant contact stiffness (N/m, > 0).
    pub k: f64,
    /// Compliant contact dissipation time (s, >= 0).
    pub tau_d: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for SphereStackParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for SphereStackParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(1..=MAX_SPHERES).contains(&self.n) {
            return Err(harness::FieldError::new("n", format!("must be in [1, {MAX_SPHERES}], got {}", self.n)));
        }
        check::positive("radius", self.radius)?;
        check::positive("mass", self.mass)?;
        check::positive("mass_ratio", self.mass_ratio)?;
        let masses = self.masses();
        let top = masses[masses.len() - 1];
        if !(top.is_finite() && top > 0.0 && self.loads().iter().all(|w| w.is_finite())) {
            return Err(harness::FieldError::new(
                "mass_ratio",
                format!("the top sphere's mass mass * mass_ratio^(n-1) must be finite and > 0, got {top}"),
            ));
        }
        check::non_negative("mu", self.mu)?;
        check::positive("k", self.k)?;
        check::non_negative("tau_d", self.tau_d)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)?;
        if let Some(j) = self.penetrations().iter().position(|&d| d >= self.radius) {
            return Err(harness::FieldError::new(
                "k",
                format!("too soft, contact {j} would rest at a penetration beyond the radius"),
            ));
        }
        Ok(())
    }
}

impl SphereStackParams {
    /// Contact model.
    pub fn contact_model(&self) -> ContactModel {
        self.contact
    }
    /// Sphere masses from the bottom, `mass * mass_ratio^i` (kg).
    pub fn masses(&self) -> Vec<f64> {
        (0..self.n.max(0)).map(|i| self.mass * self.mass_ratio.powi(i as i32)).collect()
    }
    /// Loads `W_j = g sum_{i >= j} m_i` carried by contact `j` (0 = ground) (N).
    pub fn loads(&self) -> Vec<f64> {
        let m = self.masses();
        let mut w = vec![0.0; m.len()];
        let mut above = 0.0;
        for j in (0..m.len()).rev() {
            above += m[j];
            w[j] = self.gravity * above;
        }
        w
    }
    /// Load factors `L_j = (W_j / g)(1/m_{j-1} + 1/m_j)` (`1/m_0` for the ground contact).
    pub fn load_factors(&self) -> Vec<f64> {
        let m = self.masses();
        self.loads()
            .iter()
            .enumerate()
            .map(|(j, w)| w / self.gravity * (1.0 / m[j] + if j > 0 { 1.0 / m[j - 1] } else { 0.0 }))
            .collect()
    }
    /// Static penetration of each contact: 0 (rigid) or `W_j / k` (m).
    pub fn penetrations(&self) -> Vec<f64> {
        match self.contact_model() {
            ContactModel::Rigid => vec![0.0; self.loads().len()],
            ContactModel::Compliant => self.loads().iter().map(|w| w / self.k).collect(),
        }
    }
    /// Resting heights of the centres (m).
    pub fn heights(&self) -> Vec<f64> {
        let mut z = Vec::new();
        let mut top = 0.0; // height of the surface below the next sphere (undeformed)
        for d in self.penetrations() {
            let c = top + self.radius - d;
            z.push(c);
            top = c + self.radius;
        }
        z
    }
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = self.contact_model().material(self.mu, self.k, self.tau_d);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        for (i, (m, z)) in self.masses().into_iter().zip(self.heights()).enumerate() {
            let shape = Shape::Sphere { radius: self.radius };
            w.bodies.push(RigidBody::new(format!("sphere{i}"), shape, m, Vector3::new(0.0, 0.0, z), material));
        }
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        w
    }

    /// Per-contact penetration allowance `p_j = PENETRATION_REL_TOL g dt^2 L_j` (m).
    pub fn penetration_allowances(&self, dt: f64) -> Vec<f64> {
        self.load_factors().iter().map(|l| PENETRATION_REL_TOL * self.gravity * dt * dt * l).collect()
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let allow = self.penetration_allowances(dt);
        let pen_tol = allow.iter().copied().fold(0.0, f64::max);
        let drift_tol: f64 = allow.iter().sum();
        let pen_exp = self.penetrations().iter().copied().fold(0.0, f64::max);
        if !trace_is_whole(scenario, trace) {
            return vec![
                unmeasured("max_penetration", pen_exp, pen_tol),
                unmeasured("top_drift", 0.0, drift_tol),
                unmeasured("weight_ratio", 1.0, IMPULSE_REL_TOL),
            ];
        }
        let penetration = trace.metrics.iter().map(|m| m.penetration_max).fold(0.0, f64::max);
        let o = 7 * (self.n as usize - 1);
        let top0 = Vector3::new(trace.q[0][o], trace.q[0][o + 1], trace.q[0][o + 2]);
        let drift = trace.q.iter().map(|q| (Vector3::new(q[o], q[o + 1], q[o + 2]) - top0).norm()).fold(0.0, f64::max);
        let k0 = n / 2;
        let impulse = trace.metrics[k0..].iter().map(|m| m.normal_impulse_total).sum::<f64>() / (n - k0) as f64;
        let ratio = impulse / (dt * self.loads().iter().sum::<f64>());
        vec![
            OracleCheck::abs("max_penetration", penetration, pen_exp, pen_tol),
            OracleCheck::abs("top_drift", drift, 0.0, drift_tol),
            OracleCheck::abs("weight_ratio", ratio, 1.0, IMPULSE_REL_TOL),
        ]
    }
}

/// The `sphere_stack` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct SphereStack;

impl CaseDef for SphereStack {
    type Params = SphereStackParams;
    const NAME: &'static str = "sphere_stack";
    const SUMMARY: &'static str =
        "vertical stack of spheres on the ground (optional mass ratio): penetration, drift and load transfer";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &SphereStackParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: p.contact_model().needs() })
    }
    fn grade(&self, p: &SphereStackParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&SphereStack, overrides)
    }

    /// The resting stack: states unchanged, exact impulses and penetrations in the metrics.
    fn resting(p: &SphereStackParams, sc: &Scenario) -> Trace {
        let q = sc.world.positions();
        let v = sc.world.velocities();
        let total = sc.dt * p.loads().iter().sum::<f64>();
        let pen = p.penetrations().iter().copied().fold(0.0, f64::max);
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q.clone()], v: vec![v.clone()], metrics: vec![] };
        for k in 1..=sc.steps {
            tr.q.push(q.clone());
            tr.v.push(v.clone());
            tr.metrics.push(StepMetrics {
                t: k as f64 * sc.dt,
                n_contacts: p.n as usize,
                n_active: p.n as usize,
                penetration_max: pen,
                normal_impulse_total: total,
                ..Default::default()
            });
        }
        tr
    }

    use crate::test_util::check as get;

    #[test]
    fn defaults_parse_and_build_a_valid_world() {
        let p: SphereStackParams = SphereStack.defaults().decode("sphere_stack").unwrap();
        assert_eq!(p, SphereStackParams::default());
        let sc = crate::test_util::build(&SphereStack, &SphereStack.defaults()).unwrap();
        sc.world.validate().unwrap();
        assert_eq!(sc.world.bodies.len(), 5);
        assert_eq!(sc.steps, 100);
        assert!(sc.needs.rigid_contact && !sc.needs.compliant_contact);
        assert_eq!(p.load_factors(), vec![5.0, 8.0, 6.0, 4.0, 2.0]);
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&SphereStack);
    }

    #[rstest]
    #[case::one_sphere(1, 1.0)]
    #[case::five_equal(5, 1.0)]
    #[case::heavy_on_top(4, 10.0)]
    fn rigid_spheres_touch(#[case] n: i64, #[case] ratio: f64) {
        let prm = params(&[("n", &n.to_string()), ("mass_ratio", &ratio.to_string())]);
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        sc.world.validate().unwrap();
        let b = &sc.world.bodies;
        assert_eq!(b.len(), n as usize);
        for (i, s) in b.iter().enumerate() {
            assert!((s.position - Vector3::new(0.0, 0.0, 0.05 * (2 * i + 1) as f64)).norm() < 1e-15);
            assert!((s.mass - ratio.powi(i as i32)).abs() < 1e-12 * s.mass);
        }
    }

    #[test]
    fn compliant_spheres_start_at_their_static_penetrations() {
        let prm = params(&[("contact", "compliant"), ("mass_ratio", "2")]);
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        assert!(sc.needs.compliant_contact && !sc.needs.rigid_contact);
        let b = &sc.world.bodies;
        let m: Vec<f64> = (0..5).map(|i| 2f64.powi(i)).collect();
        let w = |j: usize| 9.81 * m[j..].iter().sum::<f64>();
        assert!((b[0].position.z - (0.05 - w(0) / 1e5)).abs() < 1e-15);
        for j in 1..5 {
            let gap = (b[j].position.z - b[j - 1].position.z) - 0.1;
            assert!((gap + w(j) / 1e5).abs() < 1e-15, "contact {j}");
        }
        assert_eq!(p.penetrations()[0], w(0) / 1e5);
    }

    #[rstest]
    #[case::rigid("rigid")]
    #[case::compliant("compliant")]
    fn narrow_phase_sees_one_contact_per_pair(#[case] contact: &str) {
        let prm = params(&[("contact", contact), ("mass_ratio", "3")]);
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), 5);
        let mut gaps: Vec<(usize, f64)> =
            cs.contacts.iter().map(|c| (c.body_a.max(c.body_b).unwrap(), c.gap)).collect();
        gaps.sort_by_key(|g| g.0);
        for ((j, gap), d) in gaps.into_iter().zip(p.penetrations()) {
            assert!((gap + d).abs() < 1e-12, "contact {j}: gap {gap}, expected {}", -d);
        }
    }

    #[rstest]
    #[case::no_spheres("n", "0", "n: must be in [1")]
    #[case::negative_n("n", "-3", "n: must be in [1")]
    #[case::negative_mass("mass", "-1", "mass: must be > 0")]
    #[case::zero_ratio("mass_ratio", "0", "mass_ratio:")]
    #[case::overflowing_ratio("mass_ratio", "1e300", "mass_ratio:")]
    #[case::negative_mu("mu", "-1", "mu: must be >= 0")]
    #[case::bad_contact("contact", "soft", "contact:")]
    #[case::zero_radius("radius", "0", "radius:")]
    #[case::zero_dt("dt", "0", "dt:")]
    #[case::zero_margin("margin", "0", "margin:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&SphereStack, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[test]
    fn too_soft_compliance_is_rejected() {
        let e = crate::test_util::build(&SphereStack, &params(&[("contact", "compliant"), ("k", "100")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("k: too soft"), "{e}");
    }

    #[test]
    fn non_finite_values_are_rejected_by_name() {
        let p = SphereStackParams { mu: f64::NAN, ..Default::default() };
        assert!(p.validate().unwrap_err().to_string().starts_with("mu:"));
        let p = SphereStackParams { mass_ratio: f64::NAN, ..Default::default() };
        assert!(p.validate().unwrap_err().to_string().starts_with("mass_ratio:"));
    }

    #[rstest]
    #[case::rigid("rigid", "1")]
    #[case::compliant("compliant", "1")]
    #[case::heavy_top("rigid", "10")]
    fn resting_stack_passes(#[case] contact: &str, #[case] ratio: &str) {
        let prm = params(&[("contact", contact), ("mass_ratio", ratio)]);
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        let checks = crate::test_util::oracle(&SphereStack, &prm, &sc, &resting(&p, &sc));
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        assert!((get(&checks, "weight_ratio").measured - 1.0).abs() < 1e-14);
    }

    /// The top sphere's drift is its largest distance from its start (sideways too; the other
    /// spheres' moves do not count), the weight is averaged over the steps `n/2 ..`.
    #[test]
    fn drift_and_weight_read_their_body_and_window() {
        let prm = SphereStack.defaults();
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        let n = sc.steps;
        let mut tr = resting(&p, &sc);
        let grade = |tr: &Trace| crate::test_util::oracle(&SphereStack, &prm, &sc, tr);
        crate::test_util::assert_weight_from_the_second_half(tr.clone(), grade);
        let top = 7 * (p.n as usize - 1);
        tr.q[n / 3][top + 1] += 3e-5;
        tr.q[n / 3][top + 2] -= 4e-5;
        // the whole stack 1 m sideways: drift is measured from the top's own start
        tr.q.iter_mut().flat_map(|q| q.chunks_mut(7)).for_each(|b| b[1] += 1.0);
        let c = grade(&tr);
        assert_eq!(crate::test_util::names(&c), ["max_penetration", "top_drift", "weight_ratio"]);
        assert!((get(&c, "top_drift").measured - 5e-5).abs() < 1e-15, "{c:?}");
    }

    #[test]
    fn weight_ratio_normalises_by_the_sum_of_the_loads() {
        // 5 unit spheres: contacts carry 5, 4, 3, 2, 1 weights -> 15 g dt per step, not 5 g dt
        let prm = SphereStack.defaults();
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        assert!((p.loads().iter().sum::<f64>() - 15.0 * 9.81).abs() < 1e-12);
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        let mut tr = resting(&p, &sc);
        for m in &mut tr.metrics {
            m.normal_impulse_total = 5.0 * 9.81 * sc.dt; // only the total weight
        }
        let checks = crate::test_util::oracle(&SphereStack, &prm, &sc, &tr);
        let w = get(&checks, "weight_ratio");
        assert!((w.measured - 1.0 / 3.0).abs() < 1e-12 && !w.pass, "{w:?}");
    }

    #[test]
    fn sinking_top_sphere_fails_top_drift() {
        let prm = SphereStack.defaults();
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        let mut tr = resting(&p, &sc);
        let o = 7 * 4 + 2;
        for (k, q) in tr.q.iter_mut().enumerate() {
            q[o] -= 1e-2 * k as f64 / sc.steps as f64; // sinks 1 cm over the run
        }
        let checks = crate::test_util::oracle(&SphereStack, &prm, &sc, &tr);
        let d = get(&checks, "top_drift");
        assert!((d.measured - 1e-2).abs() < 1e-12 && !d.pass, "{d:?}");
        assert!((d.tolerance - 0.1 * 9.81 * 1e-4 * 25.0).abs() < 1e-12);
        assert!(get(&checks, "max_penetration").pass && get(&checks, "weight_ratio").pass);
    }

    #[test]
    fn deep_penetration_fails() {
        let prm = SphereStack.defaults();
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        let mut tr = resting(&p, &sc);
        tr.metrics[50].penetration_max = 1e-3;
        let c = crate::test_util::oracle(&SphereStack, &prm, &sc, &tr);
        let pen = get(&c, "max_penetration");
        assert!(!pen.pass && pen.measured == 1e-3, "{pen:?}");
        assert!((pen.tolerance - 0.1 * 9.81 * 1e-4 * 8.0).abs() < 1e-15);
    }

    #[test]
    fn incomplete_trace_fails_every_check() {
        let prm = SphereStack.defaults();
        let p: SphereStackParams = prm.decode("sphere_stack").unwrap();
        let sc = crate::test_util::build(&SphereStack, &prm).unwrap();
        let mut tr = resting(&p, &sc);
        tr.completed = false;
        let checks = crate::test_util::oracle(&SphereStack, &prm, &sc, &tr);
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| !c.pass));
    }
}
