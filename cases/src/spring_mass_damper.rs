//! `spring_mass_damper`: Drumwright's stability demo (§3, Figs. 1–3), one
//! mass on a spring–damper, `m ẍ + b ẋ + k x = 0`.
//!
//! # Scene
//!
//! A sphere of mass `m` restricted to vertical translation ([`DofMask::VERTICAL`]), no gravity,
//! tied to the world origin by a compliant [`JointKind::Axial`] joint along z with stiffness `k`
//! and damping `b`, so `x = z`. That is the paper's representation (every constraint a virtual
//! spring–damper, `λ = −k x − b ẋ`), and it needs no non-contact damping in the model: the
//! harness's `Spring` has none, the joint compliance has both `k` and `b`. Start `(x0, v0)`.
//!
//! # Scheme and oracles
//!
//! The harness's compliant-joint law (`BilateralRow::law`: `γ = −h(k(C + h G v⁺) + b G v⁺)`)
//! makes every solver that enforces it exactly an implicit-Euler step (Eqs. 13–14; drumwright README §10.4):
//! `y₁ = A y₀` with `Δ = 1 + hb/m + h²k/m`, `A = [[1 − h²k/(mΔ), h/Δ], [−hk/(mΔ), 1/Δ]]`.
//!
//! * `spectral_radius` — ρ of the iteration matrix identified from the first three states,
//!   `A = [y₁ y₂][y₀ y₁]⁻¹`, vs the closed form ρ(A); tolerance `IMPULSE_REL_TOL (1 − ρ)` (the
//!   per-step decay must be right to 0.1 %, so stable and unstable are told apart even at
//!   ρ = 0.99995).
//! * `amplitude_ratio` — per-step amplitude ratio over the run, `(|z_N|/|z_0|)^{1/N}` in the
//!   energy norm `|z|² = (k/m) x² + v²`, vs the same on the closed-form discrete trajectory
//!   `Aⁿ y₀` (for `b = 0` both equal `ρ = 1/√(1 + h²k/m)` exactly: implicit Euler rotates and
//!   shrinks `z` by that factor); `N` stops where the amplitude falls below 1e-200 of the
//!   start (no underflow); tolerance `IMPULSE_REL_TOL (1 − ρ)`.
//! * `stable` — 1 if the identified ρ < 1, vs the closed-form verdict (implicit Euler: always 1).

use crate::{check, default_struct, trace_is_whole, unmeasured, IMPULSE_REL_TOL};
use harness::model::{DofMask, Joint, Material, RigidBody, Shape, World};
use harness::{Capabilities, CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{Matrix2, Vector2, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("spring_mass_damper.toml");
const SOURCE: &str = "cases/src/spring_mass_damper.toml";

/// Parameters of `spring_mass_damper` (defaults in `cases/src/spring_mass_damper.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpringMassDamperParams {
    /// Mass (kg, > 0).
    pub mass: f64,
    /// Stiffness (N/m, > 0).
    pub k: f64,
    /// Damping (N s/m, >= 0).
    pub b: f64,
    /// Initial displacement (m).
    pub x0: f64,
    /// Initial velocity (m/s).
    pub v0: f64,
    /// Time step (s).
    pub dt: f64,
    /// Duration (s); at least 2 steps.
    pub duration: f64,
    /// Detection margin (m, > 0; there are no contacts).
    pub margin: f64,
}

impl Default for SpringMassDamperParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for SpringMassDamperParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        check::positive("mass", self.mass)?;
        check::positive("k", self.k)?;
        check::non_negative("b", self.b)?;
        check::finite("x0", self.x0)?;
        check::finite("v0", self.v0)?;
        if self.x0 == 0.0 && self.v0 == 0.0 {
            return Err(harness::FieldError::new("x0", "the start (x0, v0) must not be the rest state"));
        }
        check::time_grid(self.dt, self.duration)?;
        if self.steps() < 2 {
            return Err(harness::FieldError::new(
                "duration",
                format!("must be at least 2 steps (dt = {}), got {}", self.dt, self.duration),
            ));
        }
        check::positive("margin", self.margin)
    }
}

impl SpringMassDamperParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// The implicit-Euler iteration matrix (the paper's §3.1).
    pub fn iteration_matrix(&self) -> Matrix2<f64> {
        let (m, k, b, h) = (self.mass, self.k, self.b, self.dt);
        let d = 1.0 + h * b / m + h * h * k / m;
        Matrix2::new(1.0 - h * h * k / (m * d), h / d, -h * k / (m * d), 1.0 / d)
    }
    /// Energy-norm amplitude `√((k/m) x² + v²)`.
    pub fn amplitude(&self, y: &Vector2<f64>) -> f64 {
        (self.k / self.mass * y[0] * y[0] + y[1] * y[1]).sqrt()
    }
    /// The scene.
    pub fn world(&self) -> World {
        let mut w = World::new();
        w.gravity = Vector3::zeros();
        let mut body = RigidBody::new(
            "mass",
            Shape::Sphere { radius: 0.1 },
            self.mass,
            Vector3::new(0.0, 0.0, self.x0),
            Material::rigid(0.0),
        )
        .with_dofs(DofMask::VERTICAL);
        body.linear_velocity.z = self.v0;
        w.bodies.push(body);
        let j = Joint::axial_at(&w, 0, None, Vector3::new(0.0, 0.0, self.x0), Vector3::z());
        // the world anchor at the origin, so that C = z = x
        w.joints.push(Joint { anchor_b: Vector3::zeros(), ..j }.with_compliance(self.k, self.b).named("spring"));
        w
    }
}

/// Spectral radius of a real 2×2 matrix.
pub fn spectral_radius(a: &Matrix2<f64>) -> f64 {
    let (tr, det) = (a.trace(), a.determinant());
    let disc = tr * tr / 4.0 - det;
    if disc >= 0.0 {
        (tr / 2.0).abs() + disc.sqrt()
    } else {
        det.sqrt()
    }
}

/// The `spring_mass_damper` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpringMassDamper;

impl CaseDef for SpringMassDamper {
    type Params = SpringMassDamperParams;
    const NAME: &'static str = "spring_mass_damper";
    const SUMMARY: &'static str =
        "one mass on a stiff spring-damper joint: spectral radius of the step vs implicit Euler (Drumwright §3)";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &SpringMassDamperParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs = Capabilities { rigid_bodies: true, bilateral_constraints: true, ..Default::default() };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs })
    }
    fn grade(&self, p: &SpringMassDamperParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let a = p.iteration_matrix();
        let rho = spectral_radius(&a);
        let tol = IMPULSE_REL_TOL * (1.0 - rho).abs().max(f64::EPSILON);
        // the closed-form discrete trajectory, cut where it would underflow
        let y0 = Vector2::new(p.x0, p.v0);
        let a0 = p.amplitude(&y0);
        let mut y = y0;
        let mut n = 0;
        while n < p.steps() && p.amplitude(&(a * y)) > 1e-200 * a0 {
            y = a * y;
            n += 1;
        }
        let ratio_exp = (p.amplitude(&y) / a0).powf(1.0 / n.max(1) as f64);
        if !trace_is_whole(scenario, trace) || n == 0 {
            return vec![
                unmeasured("spectral_radius", rho, tol),
                unmeasured("amplitude_ratio", ratio_exp, tol),
                unmeasured("stable", 1.0, 0.0),
            ];
        }
        let state = |k: usize| Vector2::new(trace.q[k][2], trace.v[k][0]);
        let (s0, s1, s2) = (state(0), state(1), state(2));
        let a_est = Matrix2::from_columns(&[s1, s2])
            * Matrix2::from_columns(&[s0, s1]).try_inverse().unwrap_or(Matrix2::from_element(f64::NAN));
        let rho_est = spectral_radius(&a_est);
        let ratio = (p.amplitude(&state(n)) / p.amplitude(&state(0))).powf(1.0 / n as f64);
        let stable = |r: f64| {
            if r.is_nan() {
                f64::NAN
            } else if r < 1.0 {
                1.0
            } else {
                0.0
            }
        };
        vec![
            OracleCheck::abs("spectral_radius", rho_est, rho, tol),
            OracleCheck::abs("amplitude_ratio", ratio, ratio_exp, tol),
            OracleCheck::abs("stable", stable(rho_est), stable(rho), 0.0),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::Case;

    /// Drumwright README §10.4: implicit Euler, m = 1, b = 0: rho = 0.9999500037 (h = 1e-5, k = 1e6) and
    /// 0.0995037190 (h = 1e-2); the amplitude after 0.01 s at h = 1e-5 is x0.951.
    #[test]
    fn closed_forms_match_the_spectral_radius() {
        let mut p = SpringMassDamperParams::default();
        let rho = spectral_radius(&p.iteration_matrix());
        assert!((rho - 0.9999500037).abs() < 1e-10);
        assert!((rho.powi(1000) - 0.951).abs() < 1e-3);
        p.dt = 1e-2;
        assert!((spectral_radius(&p.iteration_matrix()) - 0.0995037190).abs() < 1e-10);
        let sc = crate::test_util::build(&SpringMassDamper, &SpringMassDamper.defaults()).unwrap();
        assert_eq!(sc.world.joints.len(), 1);
        assert_eq!(sc.steps, 1000);
        // the spring pulls the mass towards the world origin: C = z
        assert_eq!(sc.world.joints[0].anchor_b, Vector3::zeros());
    }

    /// The run `y_k = B^k y_0` of a step matrix `B` (`x` in `q[2]`, `v` in `v[0]`).
    fn run_of(p: &SpringMassDamperParams, sc: &Scenario, b: &Matrix2<f64>) -> Trace {
        let (mut q, mut v) = (sc.world.positions(), sc.world.velocities());
        let mut y = Vector2::new(p.x0, p.v0);
        let mut tr = Trace { dt: p.dt, completed: true, q: vec![], v: vec![], metrics: vec![] };
        for k in 0..=sc.steps {
            (q[2], v[0]) = (y[0], y[1]);
            tr.q.push(q.clone());
            tr.v.push(v.clone());
            if k > 0 {
                tr.metrics.push(harness::StepMetrics::default());
            }
            y = b * y;
        }
        tr
    }

    /// The checks identify the run's own step matrix: the implicit-Euler run passes every check
    /// (ρ, the per-step amplitude ratio and stability to round-off of their closed forms); a
    /// run whose steps shrink 0.2 % less per step, or grow, fails them with the measured values
    /// of its matrix; the amplitude ratio stops where the closed form would underflow.
    #[test]
    fn checks_identify_the_runs_step_matrix() {
        use crate::test_util::{check, names, oracle};
        for (set, cut) in [(&[][..], false), (&[("dt", "1e-2"), ("duration", "3"), ("b", "5")][..], true)] {
            let prm = crate::test_util::params(&SpringMassDamper, set);
            let p: SpringMassDamperParams = prm.decode("spring_mass_damper").unwrap();
            let sc = crate::test_util::build(&SpringMassDamper, &prm).unwrap();
            let a = p.iteration_matrix();
            let rho = spectral_radius(&a);
            let tol = IMPULSE_REL_TOL * (1.0 - rho);
            // the closed form's amplitude ratio: ρ itself for b = 0; with damping, over the steps
            // before the amplitude falls below 1e-200 of its start (the cut run's 3 s is 300 steps)
            let n = if cut {
                (1..=sc.steps)
                    .find(|&n| {
                        p.amplitude(&(a.pow(n as u32) * Vector2::new(p.x0, p.v0)))
                            <= 1e-200 * p.x0 * (p.k / p.mass).sqrt()
                    })
                    .unwrap()
                    - 1
            } else {
                sc.steps
            };
            assert!(n < sc.steps || !cut, "{n}");
            // the states after the cut are never read
            let mut run = run_of(&p, &sc, &a);
            for k in n + 1..=sc.steps {
                (run.q[k][2], run.v[k][0]) = (f64::NAN, f64::NAN);
            }
            let c = oracle(&SpringMassDamper, &prm, &sc, &run);
            assert_eq!(names(&c), ["spectral_radius", "amplitude_ratio", "stable"]);
            assert!(c.iter().all(|c| c.pass), "{set:?}: {c:?}");
            let s = check(&c, "spectral_radius");
            assert!((s.measured - rho).abs() < 1e-6 * tol && s.expected == rho && s.tolerance == tol, "{s:?}");
            let r = check(&c, "amplitude_ratio");
            assert!((r.measured - r.expected).abs() < 1e-6 * tol && r.tolerance == tol, "{r:?}");
            let want = (p.amplitude(&(a.pow(n as u32) * Vector2::new(p.x0, p.v0))) / (p.x0 * (p.k / p.mass).sqrt()))
                .powf(1.0 / n as f64);
            assert!((r.expected - want).abs() < 1e-12 * want, "{} vs {want}", r.expected);
            assert_eq!((check(&c, "stable").measured, check(&c, "stable").expected), (1.0, 1.0));
            let slower = a * (1.0 + 2.0 * IMPULSE_REL_TOL * (1.0 - rho) / rho);
            let c = oracle(&SpringMassDamper, &prm, &sc, &run_of(&p, &sc, &slower));
            assert!(!check(&c, "spectral_radius").pass && !check(&c, "amplitude_ratio").pass, "{c:?}");
            let got = check(&c, "spectral_radius").measured;
            assert!((got - spectral_radius(&slower)).abs() < 1e-6 * tol, "{got} vs {}", spectral_radius(&slower));
            let growing = a * (1.01 / rho);
            let c = oracle(&SpringMassDamper, &prm, &sc, &run_of(&p, &sc, &growing));
            assert_eq!((check(&c, "stable").measured, check(&c, "stable").pass), (0.0, false));
        }
        let prm = SpringMassDamper.defaults();
        let p: SpringMassDamperParams = prm.decode("spring_mass_damper").unwrap();
        let sc = crate::test_util::build(&SpringMassDamper, &prm).unwrap();
        // a quarter turn per step keeps the amplitude: ρ = 1 exactly, which is not stable
        let quarter = Matrix2::new(0.0, 1.0, -1.0, 0.0);
        let c = oracle(&SpringMassDamper, &prm, &sc, &run_of(&p, &sc, &quarter));
        assert_eq!((check(&c, "spectral_radius").measured, check(&c, "stable").measured), (1.0, 0.0));
        let mut cut = run_of(&p, &sc, &p.iteration_matrix());
        cut.completed = false;
        let c = oracle(&SpringMassDamper, &prm, &sc, &cut);
        assert_eq!(names(&c), ["spectral_radius", "amplitude_ratio", "stable"]);
        assert!(c.iter().all(|c| c.measured.is_nan() && !c.pass), "{c:?}");
    }
}
