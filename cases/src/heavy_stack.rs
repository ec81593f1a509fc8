//! `heavy_stack`: Macklin et al.'s stack of geometrically heavier bodies (total mass ratio
//! 4096:1, §10.1.5 "heavy stack", Figs. 14 and 17) — spheres or boxes, heavy on top or light on top. The
//! mass ratio makes the contact problem ill-conditioned; it is the test case of the
//! complementarity preconditioner (`r = 1 | h^2 | effective mass`, Fig. 17).
//!
//! # Scene
//!
//! * `n` bodies on the z axis on the ground half-space `z <= 0`; body `i` (0 = bottom) is a sphere
//!   of radius `size` or a cube of half edge `size` (axis aligned), centre `z_i = size (2 i + 1)`,
//!   touching its neighbours with gap 0, at rest, all six DOFs free.
//! * Masses `mass * f^j`, `f = ratio^(1/(n-1))`, `j = 0 .. n-1` (8, 64, ..., 32768 kg at the
//!   defaults: 5 bodies, neighbour ratio 8): `j = i` with `heavy_on_top`, `j = n-1-i` without.
//! * One rigid material (`mu = 0.5`), `dt = 0.0083 s` (the paper's h), 60 steps.
//!
//! # Oracle checks
//!
//! As `sphere_stack` (cases/src/sphere_stack.rs): contact level `j` (the ground, or bodies
//! `j-1`/`j`) carries `W_j = g sum_{i >= j} m_i` (for boxes, summed over its 4 corners); load
//! factor `L_j = (W_j / g)(1/m_{j-1} + 1/m_j)`, allowance `p_j = PENETRATION_REL_TOL g dt^2 L_j`.
//! With heavy bodies on light ones `L` is huge (4681 for the ground contact at the defaults,
//! `p_0 = 0.32 m`, larger than the bodies), so the allowances are capped at
//! `PENETRATION_REL_TOL x 0.1 size = 0.01 size` (1 mm): beyond it the stack's geometry (contact normals,
//! lever arms of the corner contacts) visibly changes, which is the paper's "significant or
//! catastrophic interpenetration" of relaxation solvers, and no grading at that depth is
//! meaningful.
//!
//! * `max_penetration` — `max_k StepMetrics.penetration_max` (m); expected 0; tolerance
//!   `min(max_j p_j, 0.01 size)`.
//! * `top_drift` — `max_k |x_top(t_k) − x_top(0)|` of the top body's centre (m); expected 0;
//!   tolerance `min(sum_j p_j, 0.01 size)`.
//! * `weight_ratio` — mean `StepMetrics.normal_impulse_total` over steps `N/2+1 .. N` divided by
//!   `dt sum_j W_j`; expected 1; tolerance `IMPULSE_REL_TOL`.
//!
//! Defaults (`dt = 0.0083 s`): light on top, tolerances `8.7e-5 m` / `4.1e-4 m`; heavy on top
//! both capped at 1 mm.

use crate::{check, default_struct, trace_is_whole, unmeasured, BodyShape, ContactModel};
use crate::{IMPULSE_REL_TOL, PENETRATION_REL_TOL};
use harness::model::{RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("heavy_stack.toml");
const SOURCE: &str = "cases/src/heavy_stack.toml";

/// Largest stack accepted.
pub const MAX_BODIES: i64 = 1000;

/// Parameters of the `heavy_stack` case (defaults in `cases/src/heavy_stack.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeavyStackParams {
    /// Number of bodies (1 ..= `MAX_BODIES`).
    pub n: i64,
    /// `"sphere"` or `"box"`.
    pub shape: BodyShape,
    /// Sphere radius or cube half edge (m, > 0).
    pub size: f64,
    /// Lightest mass (kg, > 0).
    pub mass: f64,
    /// Heaviest / lightest mass (>= 1).
    pub ratio: f64,
    /// Whether the heaviest body is on top.
    pub heavy_on_top: bool,
    /// Coulomb friction coefficient (>= 0).
    pub mu: f64,
    /// Gravity magnitude (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
    /// Contact detection margin (m, > 0).
    pub margin: f64,
}

impl Default for HeavyStackParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for HeavyStackParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(1..=MAX_BODIES).contains(&self.n) {
            return Err(harness::FieldError::new("n", format!("must be in [1, {MAX_BODIES}], got {}", self.n)));
        }
        check::positive("size", self.size)?;
        check::positive("mass", self.mass)?;
        if !(self.ratio.is_finite() && self.ratio >= 1.0) {
            return Err(harness::FieldError::new("ratio", format!("must be >= 1 and finite, got {}", self.ratio)));
        }
        // the heaviest body weighs `mass x ratio` (and its weight `x gravity`): blame the ratio that
        // overflows them, not the body whose mass then reads as infinite
        if !(self.mass * self.ratio * self.gravity).is_finite() {
            return Err(harness::FieldError::new(
                "ratio",
                format!(
                    "the heaviest body's weight mass x ratio x gravity overflows ({} x {} x {}); reduce ratio",
                    harness::params::short(self.mass),
                    harness::params::short(self.ratio),
                    harness::params::short(self.gravity)
                ),
            ));
        }
        check::non_negative("mu", self.mu)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)
    }
}

impl HeavyStackParams {
    /// Masses from the bottom (kg).
    pub fn masses(&self) -> Vec<f64> {
        let n = self.n.max(1) as usize;
        let f = if n > 1 { self.ratio.powf(1.0 / (n - 1) as f64) } else { 1.0 };
        let mut m: Vec<f64> = (0..n).map(|j| self.mass * f.powi(j as i32)).collect();
        if !self.heavy_on_top {
            m.reverse();
        }
        m
    }
    /// Loads `W_j = g sum_{i >= j} m_i` (N).
    pub fn loads(&self) -> Vec<f64> {
        let m = self.masses();
        (0..m.len()).map(|j| self.gravity * m[j..].iter().sum::<f64>()).collect()
    }
    /// Load factors `L_j`.
    pub fn load_factors(&self) -> Vec<f64> {
        let m = self.masses();
        self.loads()
            .iter()
            .enumerate()
            .map(|(j, w)| w / self.gravity * (1.0 / m[j] + if j > 0 { 1.0 / m[j - 1] } else { 0.0 }))
            .collect()
    }
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// `(max_penetration, top_drift)` tolerances for time step `dt` (m).
    pub fn tolerances(&self, dt: f64) -> (f64, f64) {
        let p: Vec<f64> =
            self.load_factors().iter().map(|l| PENETRATION_REL_TOL * self.gravity * dt * dt * l).collect();
        let cap = PENETRATION_REL_TOL * 0.1 * self.size;
        (p.iter().copied().fold(0.0, f64::max).min(cap), p.iter().sum::<f64>().min(cap))
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let material = ContactModel::Rigid.material(self.mu, 1.0, 0.0);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let shape = if self.shape == BodyShape::Box {
            Shape::Box { half_extents: [self.size; 3] }
        } else {
            Shape::Sphere { radius: self.size }
        };
        for (i, m) in self.masses().into_iter().enumerate() {
            let z = self.size * (2 * i + 1) as f64;
            w.bodies.push(RigidBody::new(
                format!("{}{i}", self.shape.name()),
                shape.clone(),
                m,
                Vector3::new(0.0, 0.0, z),
                material,
            ));
        }
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material,
        });
        w
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let (pen_tol, drift_tol) = self.tolerances(dt);
        if !trace_is_whole(scenario, trace) {
            return vec![
                unmeasured("max_penetration", 0.0, pen_tol),
                unmeasured("top_drift", 0.0, drift_tol),
                unmeasured("weight_ratio", 1.0, IMPULSE_REL_TOL),
            ];
        }
        let penetration = trace.metrics.iter().map(|m| m.penetration_max).fold(0.0, f64::max);
        let o = 7 * (self.n as usize - 1);
        let top = |q: &Vec<f64>| Vector3::new(q[o], q[o + 1], q[o + 2]);
        let top0 = top(&trace.q[0]);
        let drift = trace.q.iter().map(|q| (top(q) - top0).norm()).fold(0.0, f64::max);
        let k0 = n / 2;
        let impulse = trace.metrics[k0..].iter().map(|m| m.normal_impulse_total).sum::<f64>() / (n - k0) as f64;
        let ratio = impulse / (dt * self.loads().iter().sum::<f64>());
        vec![
            OracleCheck::abs("max_penetration", penetration, 0.0, pen_tol),
            OracleCheck::abs("top_drift", drift, 0.0, drift_tol),
            OracleCheck::abs("weight_ratio", ratio, 1.0, IMPULSE_REL_TOL),
        ]
    }
}

/// The `heavy_stack` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct HeavyStack;

impl CaseDef for HeavyStack {
    type Params = HeavyStackParams;
    const NAME: &'static str = "heavy_stack";
    const SUMMARY: &'static str =
        "stack of spheres or boxes with mass ratio 4096:1, heavy or light on top (Macklin Fig. 17): rest, load transfer";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &HeavyStackParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: ContactModel::Rigid.needs() })
    }
    fn grade(&self, p: &HeavyStackParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&HeavyStack, overrides)
    }

    fn resting(p: &HeavyStackParams, sc: &Scenario) -> Trace {
        let (q, v) = (sc.world.positions(), sc.world.velocities());
        let total = sc.dt * p.loads().iter().sum::<f64>();
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q.clone()], v: vec![v.clone()], metrics: vec![] };
        for k in 1..=sc.steps {
            tr.q.push(q.clone());
            tr.v.push(v.clone());
            tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, normal_impulse_total: total, ..Default::default() });
        }
        tr
    }

    #[test]
    fn defaults_are_the_papers_masses() {
        let p: HeavyStackParams = HeavyStack.defaults().decode("heavy_stack").unwrap();
        assert_eq!(p, HeavyStackParams::default());
        let m = p.masses();
        for (a, b) in m.iter().zip([8.0, 64.0, 512.0, 4096.0, 32768.0]) {
            assert!((a - b).abs() < 1e-9 * b, "{m:?}");
        }
        let light = HeavyStackParams { heavy_on_top: false, ..p.clone() };
        assert!((light.masses()[0] - 32768.0).abs() < 1e-6);
        assert!((p.load_factors()[0] - 37448.0 / 8.0).abs() < 1e-6);
        let (pen, drift) = p.tolerances(0.0083);
        assert!((pen - 1e-3).abs() < 1e-15 && (drift - 1e-3).abs() < 1e-15, "{pen} {drift}");
        let (pen, drift) = light.tolerances(0.0083);
        assert!(pen < 1e-3 && drift < 1e-3 && pen > 5e-5, "{pen} {drift}");
        let sc = crate::test_util::build(&HeavyStack, &HeavyStack.defaults()).unwrap();
        assert_eq!(sc.steps, 60);
        assert!(sc.needs.rigid_bodies && sc.needs.rigid_contact && !sc.needs.deformable_bodies);
    }

    #[rstest]
    #[case::sphere("sphere", 5)]
    #[case::boxes("box", 20)]
    fn contacts_at_rest(#[case] shape: &str, #[case] count: usize) {
        let sc = crate::test_util::build(&HeavyStack, &params(&[("shape", shape)])).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), count);
        assert!(cs.contacts.iter().all(|c| c.gap.abs() < 1e-12));
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&HeavyStack);
    }

    #[rstest]
    #[case::n("n", "0", "n:")]
    #[case::shape("shape", "cone", "shape:")]
    #[case::ratio("ratio", "0.5", "ratio:")]
    #[case::size("size", "0", "size:")]
    #[case::mu("mu", "-1", "mu:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&HeavyStack, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    #[test]
    fn resting_trace_passes_sinking_and_short_weight_fail() {
        let prm = HeavyStack.defaults();
        let p: HeavyStackParams = prm.decode("heavy_stack").unwrap();
        let sc = crate::test_util::build(&HeavyStack, &prm).unwrap();
        let tr = resting(&p, &sc);
        let checks = crate::test_util::oracle(&HeavyStack, &prm, &sc, &tr);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        let mut bad = tr.clone();
        for (k, q) in bad.q.iter_mut().enumerate() {
            q[7 * 4 + 2] -= 1e-4 * k as f64;
        }
        for m in bad.metrics.iter_mut() {
            m.penetration_max = 2e-3;
            m.normal_impulse_total *= 0.99;
        }
        let checks = crate::test_util::oracle(&HeavyStack, &prm, &sc, &bad);
        assert!(checks.iter().all(|c| !c.pass), "{checks:?}");
        bad.completed = false;
        assert!(crate::test_util::oracle(&HeavyStack, &prm, &sc, &bad).iter().all(|c| c.measured.is_nan()));
    }

    /// Each check's window and value: the deepest penetration of any step (the first included),
    /// the top body's largest distance from its start (the others' moves do not count), the mean
    /// total normal impulse of the steps `n/2 ..` over the stack's weight.
    #[test]
    fn checks_read_their_windows() {
        use crate::test_util::{check, names, oracle};
        let prm = HeavyStack.defaults();
        let p: HeavyStackParams = prm.decode("heavy_stack").unwrap();
        let sc = crate::test_util::build(&HeavyStack, &prm).unwrap();
        let n = sc.steps;
        let (pen_tol, drift_tol) = p.tolerances(sc.dt);
        let mut tr = resting(&p, &sc);
        crate::test_util::assert_weight_from_the_second_half(tr.clone(), |tr| oracle(&HeavyStack, &prm, &sc, tr));
        tr.metrics[0].penetration_max = 0.5 * pen_tol;
        let top = 7 * (p.n as usize - 1);
        tr.q[n / 3][top] += 0.4 * drift_tol;
        tr.q[n / 3][top + 1] -= 0.3 * drift_tol;
        tr.q.iter_mut().for_each(|q| q[0] += 1.0);
        let c = oracle(&HeavyStack, &prm, &sc, &tr);
        assert_eq!(names(&c), ["max_penetration", "top_drift", "weight_ratio"]);
        assert!(c.iter().all(|c| c.pass), "{c:?}");
        assert_eq!(check(&c, "max_penetration").measured, 0.5 * pen_tol);
        assert!((check(&c, "top_drift").measured - 0.5 * drift_tol).abs() < 1e-15, "{c:?}");
    }

    /// Uncapped (the light stack: heaviest at the bottom), the tolerances are their derivation:
    /// `PENETRATION_REL_TOL g dt² L_j`, the largest for `max_penetration`, the sum for
    /// `top_drift`, with `L_j = (W_j/g)(1/m_{j-1} + 1/m_j)` by hand for the masses 32768, 4096,
    /// 512, 64, 8 kg from the bottom; both capped at `PENETRATION_REL_TOL 0.1 size`.
    #[test]
    fn tolerances_are_their_derivation() {
        let light = HeavyStackParams { heavy_on_top: false, ..HeavyStackParams::default() };
        let above = [37448.0, 4680.0, 584.0, 72.0, 8.0];
        let m = [32768.0, 4096.0, 512.0, 64.0, 8.0];
        let l: Vec<f64> = (0..5).map(|j| above[j] * (1.0 / m[j] + if j > 0 { 1.0 / m[j - 1] } else { 0.0 })).collect();
        let scale = PENETRATION_REL_TOL * 9.81 * 0.005 * 0.005;
        let (pen, drift) = light.tolerances(0.005);
        let (want_pen, want_drift) = (scale * l[1], scale * l.iter().sum::<f64>());
        assert!(l.iter().all(|&x| x <= l[1]), "{l:?}");
        assert!((pen - want_pen).abs() < 1e-14 * want_pen, "{pen} vs {want_pen}");
        assert!((drift - want_drift).abs() < 1e-14 * want_drift, "{drift} vs {want_drift}");
        // a block small enough for the cap to bind: both are the cap
        let small = HeavyStackParams { size: 1e-4, ..light };
        assert_eq!(small.tolerances(0.005), (PENETRATION_REL_TOL * 0.1 * 1e-4, PENETRATION_REL_TOL * 0.1 * 1e-4));
    }
}
