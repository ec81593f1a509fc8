//! `dish_stack`: Lee et al.'s dish piling as a mass-ratio stack (§VII-B, Figs. 8–9) — light
//! plates (thin boxes, 0.1 kg) under a heavy pot (a 5 kg box), the 50:1 ratio that separates CANAL
//! (residual < 1e-8) from first-order SubADMM (floor about 1e-6) in their Fig. 9.
//!
//! # Scene
//!
//! ```text
//!          +----------+        pot: pot_width x pot_width x pot_height, pot_mass
//!          |   pot    |
//!      +--------------+--+     plates: plate_width x plate_width x plate_thickness, plate_mass
//!      +-----------------+       (plates of them, stacked, centred)
//!      +-----------------+
//!   ======================== ground: half-space z <= 0
//! ```
//!
//! * `plates` square plates on the ground, each touching the one below (gap 0), then the pot on
//!   the top plate, all centred on the z axis, at rest, six DOFs each. One rigid material (`mu`).
//! * Contacts: 4 corners with the ground, a 4-point face manifold per plate–plate interface and 4
//!   pot corners on the top plate (the pot is narrower): `4 (plates + 1)` contacts.
//!
//! # Oracle checks
//!
//! As `heavy_stack` (box faces counted as one contact carrying the whole level's load): level `j`
//! (0 the ground, `j` plate `j-1`/body `j`, the pot last) carries `W_j = g sum_{i >= j} m_i`; its
//! load factor is `L_j = (W_j/g)(1/m_{j-1} + 1/m_j)` (`1/m_0` alone for the ground): 53, 104, 104,
//! 51 at the defaults. The allowance `p_j = PENETRATION_REL_TOL g dt² L_j` exceeds a plate's
//! thickness for the light plates under the pot (0.010 m), so it is capped, like `heavy_stack`, at
//! `PENETRATION_REL_TOL plate_thickness` (1 mm at the defaults): deeper, a plate visibly sinks
//! into the next and no grading of the stack is meaningful.
//!
//! * `max_penetration` — `max_k StepMetrics.penetration_max` (m); expected 0; tolerance `max_j p_j`.
//! * `top_drift` — `max_k |x_pot(t_k) − x_pot(0)|` (m); expected 0; tolerance `sum_j p_j`.
//! * `weight_ratio` — mean `StepMetrics.normal_impulse_total` over steps `N/2+1 .. N` over
//!   `dt sum_j W_j`; expected 1; tolerance `IMPULSE_REL_TOL`.

use crate::resting::{centre, mean_normal_impulse};
use crate::{check, default_struct, trace_is_whole, unmeasured};
use crate::{IMPULSE_REL_TOL, PENETRATION_REL_TOL};
use harness::model::{Material, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{Capabilities, CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("dish_stack.toml");
const SOURCE: &str = "cases/src/dish_stack.toml";

/// Most plates accepted.
pub const MAX_PLATES: i64 = 1000;

/// Parameters of the `dish_stack` case (defaults in `cases/src/dish_stack.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DishStackParams {
    /// Number of plates under the pot (1 ..= `MAX_PLATES`).
    pub plates: i64,
    /// Plate edge (m, > 0).
    pub plate_width: f64,
    /// Plate thickness (m, > 0).
    pub plate_thickness: f64,
    /// Plate mass (kg, > 0).
    pub plate_mass: f64,
    /// Pot base edge (m, > 0).
    pub pot_width: f64,
    /// Pot height (m, > 0).
    pub pot_height: f64,
    /// Pot mass (kg, > 0).
    pub pot_mass: f64,
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

impl Default for DishStackParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for DishStackParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        if !(1..=MAX_PLATES).contains(&self.plates) {
            return Err(harness::FieldError::new(
                "plates",
                format!("must be in [1, {MAX_PLATES}], got {}", self.plates),
            ));
        }
        for (n, v) in [
            ("plate_width", self.plate_width),
            ("plate_thickness", self.plate_thickness),
            ("plate_mass", self.plate_mass),
            ("pot_width", self.pot_width),
            ("pot_height", self.pot_height),
            ("pot_mass", self.pot_mass),
        ] {
            check::positive(n, v)?;
        }
        check::non_negative("mu", self.mu)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)
    }
}

impl DishStackParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Masses from the bottom: the plates, then the pot (kg).
    pub fn masses(&self) -> Vec<f64> {
        let mut m = vec![self.plate_mass; self.plates.max(1) as usize];
        m.push(self.pot_mass);
        m
    }
    /// Loads `W_j = g sum_{i >= j} m_i` (N), level 0 the ground.
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
    /// Capped allowances `p_j = min(PENETRATION_REL_TOL g dt² L_j, PENETRATION_REL_TOL plate_thickness)` (m).
    pub fn allowances(&self) -> Vec<f64> {
        let cap = PENETRATION_REL_TOL * self.plate_thickness;
        let g = PENETRATION_REL_TOL * self.gravity * self.dt * self.dt;
        self.load_factors().iter().map(|l| (g * l).min(cap)).collect()
    }

    /// The initial world: plates 0 .. plates-1 from the bottom, then the pot.
    pub fn world(&self) -> World {
        let mat = Material::rigid(self.mu);
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let (pw, pt) = (0.5 * self.plate_width, 0.5 * self.plate_thickness);
        for i in 0..self.plates.max(1) as usize {
            let z = pt * (2 * i + 1) as f64;
            let shape = Shape::Box { half_extents: [pw, pw, pt] };
            w.bodies.push(RigidBody::new(format!("plate{i}"), shape, self.plate_mass, Vector3::new(0.0, 0.0, z), mat));
        }
        let top = self.plate_thickness * self.plates.max(1) as f64;
        let shape = Shape::Box { half_extents: [0.5 * self.pot_width, 0.5 * self.pot_width, 0.5 * self.pot_height] };
        let z = top + 0.5 * self.pot_height;
        w.bodies.push(RigidBody::new("pot", shape, self.pot_mass, Vector3::new(0.0, 0.0, z), mat));
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material: mat,
        });
        w
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let allow = self.allowances();
        let pen_tol = allow.iter().copied().fold(0.0, f64::max);
        let drift_tol: f64 = allow.iter().sum();
        if !trace_is_whole(scenario, trace) {
            return vec![
                unmeasured("max_penetration", 0.0, pen_tol),
                unmeasured("top_drift", 0.0, drift_tol),
                unmeasured("weight_ratio", 1.0, IMPULSE_REL_TOL),
            ];
        }
        let pen = crate::resting::max_penetration(trace, 0);
        let pot = self.plates.max(1) as usize;
        let c0 = centre(&trace.q[0], pot);
        let drift = trace.q.iter().map(|q| (centre(q, pot) - c0).norm()).fold(0.0, crate::resting::nan_max);
        let ratio = mean_normal_impulse(trace, n / 2) / (dt * self.loads().iter().sum::<f64>());
        vec![
            OracleCheck::abs("max_penetration", pen, 0.0, pen_tol),
            OracleCheck::abs("top_drift", drift, 0.0, drift_tol),
            OracleCheck::abs("weight_ratio", ratio, 1.0, IMPULSE_REL_TOL),
        ]
    }
}

/// The `dish_stack` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct DishStack;

impl CaseDef for DishStack {
    type Params = DishStackParams;
    const NAME: &'static str = "dish_stack";
    const SUMMARY: &'static str =
        "light plates under a heavy pot (Lee et al.'s 50:1 dish piling): penetration, drift and load transfer";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &DishStackParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs = Capabilities { rigid_bodies: true, rigid_contact: true, ..Default::default() };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs })
    }
    fn grade(&self, p: &DishStackParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resting::test_support::resting_trace;
    use harness::{Case, Params};
    use rstest::rstest;

    fn params(overrides: &[(&str, &str)]) -> Params {
        crate::test_util::params(&DishStack, overrides)
    }

    #[test]
    fn defaults_build_the_mass_ratio_stack() {
        let p = DishStackParams::default();
        assert_eq!(DishStack.defaults().decode::<DishStackParams>("dish_stack").unwrap(), p);
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&DishStack);
        assert_eq!(p.masses(), vec![0.1, 0.1, 0.1, 5.0]);
        let l = p.load_factors();
        assert!((l[0] - 53.0).abs() < 1e-9 && (l[1] - 104.0).abs() < 1e-9 && (l[3] - 51.0).abs() < 1e-9, "{l:?}");
        // capped at 0.1 x 1 cm for the plates, uncapped nowhere at dt = 0.01 s
        assert!(p.allowances().iter().all(|a| (a - 1e-3).abs() < 1e-15), "{:?}", p.allowances());
        let sc = crate::test_util::build(&DishStack, &DishStack.defaults()).unwrap();
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), 16);
        assert!(cs.contacts.iter().all(|c| c.gap.abs() < 1e-12));
    }

    #[rstest]
    #[case::plates("plates", "0", "plates: must be in [1")]
    #[case::thickness("plate_thickness", "0", "plate_thickness: must be > 0")]
    #[case::pot_mass("pot_mass", "-5", "pot_mass: must be > 0")]
    #[case::mu("mu", "-1", "mu: must be >= 0")]
    #[case::margin("margin", "0", "margin:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&DishStack, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    #[test]
    fn resting_stack_passes_and_a_sinking_pot_fails() {
        let prm = DishStack.defaults();
        let p = DishStackParams::default();
        let sc = crate::test_util::build(&DishStack, &prm).unwrap();
        let tr = resting_trace(&sc, sc.dt * p.loads().iter().sum::<f64>());
        assert!(crate::test_util::oracle(&DishStack, &prm, &sc, &tr).iter().all(|c| c.pass));
        let mut bad = tr.clone();
        for (k, q) in bad.q.iter_mut().enumerate() {
            q[7 * 3 + 2] -= 1e-2 * k as f64 / sc.steps as f64;
        }
        let c = crate::test_util::oracle(&DishStack, &prm, &sc, &bad);
        assert!(!c.iter().find(|c| c.name == "top_drift").unwrap().pass, "{c:?}");
        bad.completed = false;
        assert!(crate::test_util::oracle(&DishStack, &prm, &sc, &bad).iter().all(|c| !c.pass));
    }

    /// Each check's window, value and tolerance: the penetration over every step (the first
    /// included), the pot's largest distance from its start (the plates' moves do not count), the
    /// mean total normal impulse of the second half against the stack's weight; tolerances the
    /// largest allowance and the sum of the allowances.
    #[test]
    fn checks_read_their_windows_with_their_tolerances() {
        use crate::test_util::{check, names, oracle};
        let prm = DishStack.defaults();
        let p = DishStackParams::default();
        let sc = crate::test_util::build(&DishStack, &prm).unwrap();
        let n = sc.steps;
        let allow = p.allowances();
        let (pen_tol, drift_tol) = (allow.iter().copied().fold(0.0, f64::max), allow.iter().sum::<f64>());
        let mut tr = resting_trace(&sc, sc.dt * p.loads().iter().sum::<f64>());
        crate::test_util::assert_weight_from_the_second_half(tr.clone(), |tr| oracle(&DishStack, &prm, &sc, tr));
        tr.metrics[0].penetration_max = 0.5 * pen_tol;
        let pot = 7 * p.plates as usize;
        tr.q[n / 3][pot] += 0.4 * drift_tol;
        tr.q[n / 3][pot + 1] -= 0.3 * drift_tol;
        tr.q.iter_mut().for_each(|q| q[0] += 1.0);
        let c = oracle(&DishStack, &prm, &sc, &tr);
        assert_eq!(names(&c), ["max_penetration", "top_drift", "weight_ratio"]);
        assert!(c.iter().all(|c| c.pass), "{c:?}");
        let pen = check(&c, "max_penetration");
        assert_eq!((pen.measured, pen.tolerance), (0.5 * pen_tol, pen_tol));
        let drift = check(&c, "top_drift");
        assert!((drift.measured - 0.5 * drift_tol).abs() < 1e-15 && drift.tolerance == drift_tol, "{drift:?}");
    }
}
