//! `winkler_cube`: Drumwright's rigid cube on an elastic (Winkler) foundation (§5.5, Tables 1–2,
//! Fig. 7), frictionless, with 100 or 900 foundation elements and a load
//! circling the top face.
//!
//! # Scene (model choices)
//!
//! * Cube: side `s`, density `ρ` (the paper's 1 m, 8 kg/m³: 8 kg, inertia `m s²/6`), resting with
//!   its bottom face on `z = 0`, foundation at full extension (zero deformation, zero velocity).
//! * Foundation: `n = elements` (a perfect square) **unilateral point springs**, one at the centre
//!   of each cell of an `√n × √n` grid under the face (the paper does not state the layout; a
//!   regular grid is the natural reading). Each element is a static point collider
//!   ([`StaticShape::Sphere`] of radius 0 at `(x_i, y_i, 0)`) whose contact with the cube's bottom
//!   face is a frictionless compliant contact of stiffness `k_e = E (s²/n) / depth` and damping
//!   `B = element_damping` (`τ_d = B / k_e`, the paper's `B = I`). Drumwright treats every such
//!   contact as one row of its unilateral QP (Eqs. 83–85, `λ ≥ −K φ₁ − B φ̇₁`, `λ ≥ 0`), which is
//!   what the paper does with the elements; a spring pulls nothing when the face lifts off, and
//!   the normal is the face normal (`G_i` = normal Jacobian of the face point above the element).
//!   A bilateral `JointKind::Axial` spring would pull the lifted side down, which is wrong for
//!   the 50 N load (the far side separates, see Oracles).
//! * Load: the constant world force `(0, 0, −F)` at the cube-frame point
//!   `(s/2)(cos ω t, sin ω t, 1)`, ω = 10 rad/s ([`PointLoad`], explicit in each step like
//!   gravity: step `k` sees the load at `t_k = k h`).
//!
//! # Oracles (quasi-static Winkler statics)
//!
//! The heave and rocking frequencies (`√(E s²/(depth m))` ≈ 1118 rad/s at E = 1e7) are ≫ ω, so
//! the cube follows the quasi-static solution of a rigid plate on tensionless springs: find the
//! sinkage field `w_i = w₀ + α x_i + β y_i` with `Σ k_e (w_i)_+ (1, x_i, y_i) = (W + F, F e_x, F e_y)`,
//! `(e_x, e_y)` the load's horizontal offset (an active-set solve, exact for the discrete grid;
//! with every element in contact `w₀ = (W + F)/(n k_e)`, `α = F e_x/(k_e Σ x_i²)`). Full contact
//! holds iff `W + F − 3√2 F > 0` (continuous face), i.e. at 5 N; at 50 N the far side lifts.
//! The state after step `k + 1` is compared with the statics of the load at `t_k`, over the
//! second half of the run (the initial transient from zero deformation decays by
//! `1/(1 + h²ω²)` per step under implicit Euler).
//!
//! * `heave` — mean sinkage `w₀` of the bottom-face centre (m) vs the statics' mean; tolerance
//!   `ω h` times the statics' range over the window plus `1e-3` of the mean (one step of load
//!   rotation moves the statics by up to `ω h` of its variation; 1e-3 = the impulse accuracy
//!   level of the crate doc).
//! * `tilt_error` — RMS over the window of `|(α, β) − (α, β)_static|` (rad); expected 0;
//!   tolerance `ω h` × the RMS static tilt + 1e-3 of it (the same one-step argument).
//! * `contact_fraction` — mean fraction of elements compressed (`w_i > 0`) vs the statics';
//!   tolerance `2/√n` (one row of elements on each side of the lift-off line).

use crate::IMPULSE_REL_TOL;
use crate::{check, default_struct, trace_is_whole, unmeasured};
use harness::model::{Material, PointLoad, RigidBody, Shape, StaticCollider, StaticShape, World};
use harness::{Capabilities, CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("winkler_cube.toml");
const SOURCE: &str = "cases/src/winkler_cube.toml";

/// Parameters of `winkler_cube` (defaults in `cases/src/winkler_cube.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WinklerCubeParams {
    /// Cube side (m, > 0).
    pub side: f64,
    /// Density (kg/m^3, > 0).
    pub density: f64,
    /// Number of foundation elements (a perfect square >= 4).
    pub elements: usize,
    /// Young's modulus of the foundation (N/m^2, > 0).
    pub modulus: f64,
    /// Foundation depth (m, > 0).
    pub depth: f64,
    /// Damping per element (N s/m, >= 0).
    pub element_damping: f64,
    /// Load magnitude (N, >= 0), pointing down.
    pub load: f64,
    /// Angular frequency of the circling load point (rad/s).
    pub load_frequency: f64,
    /// Gravity (m/s^2, > 0), along -z.
    pub gravity: f64,
    /// Time step (s).
    pub dt: f64,
    /// Duration (s).
    pub duration: f64,
    /// Detection margin (m, > 0).
    pub margin: f64,
}

impl Default for WinklerCubeParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for WinklerCubeParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        for (n, v) in [("side", self.side), ("density", self.density), ("modulus", self.modulus), ("depth", self.depth)]
        {
            check::positive(n, v)?;
        }
        let g = self.grid();
        if g < 2 || g * g != self.elements {
            return Err(harness::FieldError::new(
                "elements",
                format!("must be a perfect square >= 4, got {}", self.elements),
            ));
        }
        check::non_negative("element_damping", self.element_damping)?;
        check::non_negative("load", self.load)?;
        check::finite("load_frequency", self.load_frequency)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)
    }
}

/// Quasi-static Winkler solution: sinkage at the centre, slopes, number of compressed elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Statics {
    /// Sinkage of the face centre (m, > 0 down).
    pub w0: f64,
    /// `dw/dx`, `dw/dy`.
    pub slope: [f64; 2],
    /// Number of elements with `w_i > 0`.
    pub in_contact: usize,
}

impl WinklerCubeParams {
    /// Elements per side.
    pub fn grid(&self) -> usize {
        (self.elements as f64).sqrt().round() as usize
    }
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Cube mass (kg).
    pub fn mass(&self) -> f64 {
        self.density * self.side.powi(3)
    }
    /// Element stiffness `E (s²/n) / depth` (N/m).
    pub fn element_stiffness(&self) -> f64 {
        self.modulus * self.side * self.side / self.elements as f64 / self.depth
    }
    /// Element centres `(x, y)` in the face frame (m).
    pub fn element_points(&self) -> Vec<(f64, f64)> {
        let n = self.grid();
        let c = |i: usize| -0.5 * self.side + (i as f64 + 0.5) * self.side / n as f64;
        (0..n).flat_map(|i| (0..n).map(move |j| (c(i), c(j)))).collect()
    }
    /// Horizontal offset of the load point at `t` (cube frame ≈ world frame; m).
    pub fn load_offset(&self, t: f64) -> (f64, f64) {
        let a = self.load_frequency * t;
        (0.5 * self.side * a.cos(), 0.5 * self.side * a.sin())
    }
    /// Whether the continuous face stays in full contact at every load phase:
    /// `W + F − 3√2 F > 0` for the unit-face formula, scaled: corner pressure
    /// `(W + F)/s² − 3 √2 F/s² > 0`.
    pub fn full_contact(&self) -> bool {
        self.mass() * self.gravity + self.load - 3.0 * 2f64.sqrt() * self.load > 0.0
    }
    /// Quasi-static statics of the discrete foundation under the load at `t` (active-set solve).
    pub fn statics(&self, t: f64) -> Statics {
        let pts = self.element_points();
        let k = self.element_stiffness();
        let (ex, ey) = self.load_offset(t);
        let f = self.load;
        let rhs = Vector3::new(self.mass() * self.gravity + f, f * ex, f * ey);
        let mut active = vec![true; pts.len()];
        let mut x = Vector3::zeros();
        for _ in 0..200 {
            let mut a = Matrix3::zeros();
            for (p, on) in pts.iter().zip(&active) {
                if *on {
                    let r = Vector3::new(1.0, p.0, p.1);
                    a += k * r * r.transpose();
                }
            }
            x = a.lu().solve(&rhs).unwrap_or(x);
            let next: Vec<bool> = pts.iter().map(|p| x[0] + x[1] * p.0 + x[2] * p.1 > 0.0).collect();
            if next == active {
                break;
            }
            active = next;
        }
        Statics { w0: x[0], slope: [x[1], x[2]], in_contact: active.iter().filter(|a| **a).count() }
    }
    /// Sinkage field of the cube at positions `q` (one body): `(w0, [dw/dx, dw/dy])`.
    pub fn measured(&self, q: &[f64]) -> (f64, [f64; 2]) {
        let rot = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[3], q[4], q[5], q[6]));
        let centre = q[2] + (rot * Vector3::new(0.0, 0.0, -0.5 * self.side)).z;
        (-centre, [-(rot * Vector3::x()).z, -(rot * Vector3::y()).z])
    }
    /// The scene.
    pub fn world(&self) -> World {
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        let h = 0.5 * self.side;
        w.bodies.push(RigidBody::new(
            "cube",
            Shape::Box { half_extents: [h; 3] },
            self.mass(),
            Vector3::new(0.0, 0.0, h),
            Material::rigid(0.0),
        ));
        let k = self.element_stiffness();
        let mat = Material::compliant(0.0, k, self.element_damping / k);
        for (i, (x, y)) in self.element_points().into_iter().enumerate() {
            w.statics.push(StaticCollider {
                name: format!("element{i}"),
                shape: StaticShape::Sphere { center: Vector3::new(x, y, 0.0), radius: 0.0 },
                material: mat,
            });
        }
        w.loads.push(PointLoad {
            body: 0,
            force: Vector3::new(0.0, 0.0, -self.load),
            center: Vector3::new(0.0, 0.0, h),
            radius: h,
            angular_frequency: self.load_frequency,
        });
        w
    }
}

/// The `winkler_cube` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct WinklerCube;

impl CaseDef for WinklerCube {
    type Params = WinklerCubeParams;
    const NAME: &'static str = "winkler_cube";
    const SUMMARY: &'static str =
        "rigid cube on a frictionless Winkler foundation of point springs, circling top load (Drumwright §5.5)";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn size_hint(&self, p: &WinklerCubeParams) -> Option<harness::resources::ProblemSize> {
        Some(harness::resources::ProblemSize {
            dofs: 6.0,
            elements: 0.0,
            contacts: p.elements as f64,
            steps: p.steps() as f64,
            driver: format!("elements ({})", p.elements),
        })
    }
    fn scenario(&self, p: &WinklerCubeParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        let needs = Capabilities { rigid_bodies: true, compliant_contact: true, ..Default::default() };
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs })
    }
    fn grade(&self, p: &WinklerCubeParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let n = p.steps();
        let window: Vec<usize> = (n / 2..n).collect();
        let statics: Vec<Statics> = window.iter().map(|&k| p.statics(k as f64 * p.dt)).collect();
        let mean = |v: &mut dyn Iterator<Item = f64>| {
            let (s, c) = v.fold((0.0, 0.0), |(s, c), x| (s + x, c + 1.0));
            s / c
        };
        let w0_exp = mean(&mut statics.iter().map(|s| s.w0));
        let (lo, hi) = statics.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), s| (l.min(s.w0), h.max(s.w0)));
        let lag = p.load_frequency.abs() * p.dt;
        let heave_tol = lag * (hi - lo) + IMPULSE_REL_TOL * w0_exp;
        let tilt_rms = mean(&mut statics.iter().map(|s| s.slope[0].powi(2) + s.slope[1].powi(2))).sqrt();
        let tilt_tol = (lag + IMPULSE_REL_TOL) * tilt_rms;
        let frac_exp = mean(&mut statics.iter().map(|s| s.in_contact as f64 / p.elements as f64));
        let frac_tol = 2.0 / p.grid() as f64;
        if !trace_is_whole(scenario, trace) {
            return vec![
                unmeasured("heave", w0_exp, heave_tol),
                unmeasured("tilt_error", 0.0, tilt_tol),
                unmeasured("contact_fraction", frac_exp, frac_tol),
            ];
        }
        let pts = p.element_points();
        let mut heave = Vec::new();
        let mut tilt_err2 = Vec::new();
        let mut frac = Vec::new();
        for (&k, s) in window.iter().zip(&statics) {
            let (w0, slope) = p.measured(&trace.q[k + 1]);
            heave.push(w0);
            tilt_err2.push((slope[0] - s.slope[0]).powi(2) + (slope[1] - s.slope[1]).powi(2));
            let c = pts.iter().filter(|(x, y)| w0 + slope[0] * x + slope[1] * y > 0.0).count();
            frac.push(c as f64 / p.elements as f64);
        }
        vec![
            OracleCheck::abs("heave", mean(&mut heave.into_iter()), w0_exp, heave_tol),
            OracleCheck::abs("tilt_error", mean(&mut tilt_err2.into_iter()).sqrt(), 0.0, tilt_tol),
            OracleCheck::abs("contact_fraction", mean(&mut frac.into_iter()), frac_exp, frac_tol),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::Case;

    /// Drumwright README §10.4: uniform sinkage 7.84e-6 m under the 78.4 N weight at E = 1e7 (any element
    /// count); full contact at 5 N, lift-off at 50 N; 0.784 N per element at rest (100 elements).
    #[test]
    fn statics_match_the_winkler_closed_form() {
        let mut p = WinklerCubeParams { load: 0.0, ..Default::default() };
        for e in [100, 900] {
            p.elements = e;
            let s = p.statics(0.3);
            assert!((s.w0 - 7.84e-6).abs() < 1e-15, "{s:?}");
            assert_eq!(s.in_contact, e);
        }
        p.elements = 100;
        assert!((p.element_stiffness() * 7.84e-6 - 0.784).abs() < 1e-12);
        p.load = 5.0;
        assert!(p.full_contact());
        let s = p.statics(0.0);
        assert_eq!(s.in_contact, 100);
        assert!((s.w0 - 83.4 / 1e7).abs() < 1e-15);
        // discrete slope F e_x / (k_e sum x_i^2); sum x_i^2 over the 10x10 grid = 8.25 m^2
        assert!((s.slope[0] - 5.0 * 0.5 / (1e5 * 8.25)).abs() < 1e-15, "{s:?}");
        p.load = 50.0;
        assert!(!p.full_contact());
        for t in [0.0, 0.1, 0.47] {
            let s = p.statics(t);
            assert!(s.in_contact < 100 && s.in_contact > 50, "{s:?}");
        }
        let sc = crate::test_util::build(&WinklerCube, &WinklerCube.defaults()).unwrap();
        assert_eq!(sc.world.statics.len(), 100);
        assert!((sc.world.bodies[0].mass - 8.0).abs() < 1e-12);
    }

    /// The cube's pose whose sinkage field is `w0 + α x + β y` ([`WinklerCubeParams::measured`]):
    /// pitch `asin α` about y, then roll about x with `cos(pitch) sin(roll) = −β`.
    fn pose(p: &WinklerCubeParams, w0: f64, [alpha, beta]: [f64; 2]) -> Vec<f64> {
        let pitch = alpha.asin();
        let rot = UnitQuaternion::from_euler_angles((-beta / pitch.cos()).asin(), pitch, 0.0);
        let z = -w0 + 0.5 * p.side * (rot * Vector3::z()).z;
        let q = rot.quaternion();
        vec![0.0, 0.0, z, q.w, q.i, q.j, q.k]
    }

    /// A run whose state after step `k + 1` is the statics of the load at `t_k`, its sinkage
    /// raised by `dw` and its slopes by `dslope`; `before` replaces the states before the window.
    fn following(p: &WinklerCubeParams, sc: &Scenario, dw: f64, dslope: [f64; 2], before: Option<&[f64]>) -> Trace {
        let n = sc.steps;
        let mut tr = Trace { dt: p.dt, completed: true, ..Default::default() };
        for j in 0..=n {
            let s = p.statics(j.saturating_sub(1) as f64 * p.dt);
            let q = match before {
                Some(q) if j <= n / 2 => q.to_vec(),
                _ => pose(p, s.w0 + dw, [s.slope[0] + dslope[0], s.slope[1] + dslope[1]]),
            };
            tr.q.push(q);
            tr.v.push(vec![0.0; 6]);
        }
        tr.metrics = vec![harness::StepMetrics::default(); n];
        tr
    }

    /// The checks compare the states after steps `n/2 + 1 ..= n` with the statics of the load at
    /// the start of each step: a run on the statics passes with heave and contact fraction at
    /// their window means and no tilt error, whatever it does before the window; a sinkage or
    /// tilt offset of twice the tolerance fails its check by exactly that much. Tolerances:
    /// heave `ω h (max − min) + IMPULSE_REL_TOL mean` of the window's statics, tilt `(ω h +
    /// IMPULSE_REL_TOL)` × RMS static tilt, contact fraction `2/√n`.
    #[test]
    fn checks_follow_the_statics_over_the_second_half() {
        use crate::test_util::{check, names, oracle};
        let prm = crate::test_util::params(&WinklerCube, &[("load", "50")]);
        let p: WinklerCubeParams = prm.decode("winkler_cube").unwrap();
        let sc = crate::test_util::build(&WinklerCube, &prm).unwrap();
        let n = sc.steps;
        let window: Vec<Statics> = (n / 2..n).map(|k| p.statics(k as f64 * p.dt)).collect();
        let len = window.len() as f64;
        let w_mean = window.iter().map(|s| s.w0).sum::<f64>() / len;
        let (lo, hi) = window.iter().fold((f64::INFINITY, 0.0f64), |(l, h), s| (l.min(s.w0), h.max(s.w0)));
        let lag = p.load_frequency * p.dt;
        let heave_tol = lag * (hi - lo) + IMPULSE_REL_TOL * w_mean;
        let tilt_rms = (window.iter().map(|s| s.slope[0].powi(2) + s.slope[1].powi(2)).sum::<f64>() / len).sqrt();
        let tilt_tol = (lag + IMPULSE_REL_TOL) * tilt_rms;
        let frac = window.iter().map(|s| s.in_contact as f64).sum::<f64>() / len / 100.0;
        assert!(frac > 0.5 && frac < 1.0, "lift-off at 50 N: {frac}");
        let far = pose(&p, 1e-3, [1e-3, -2e-3]);
        let c = oracle(&WinklerCube, &prm, &sc, &following(&p, &sc, 0.0, [0.0; 2], Some(&far)));
        assert_eq!(names(&c), ["heave", "tilt_error", "contact_fraction"]);
        assert!(c.iter().all(|c| c.pass), "{c:?}");
        let h = check(&c, "heave");
        assert!((h.measured - w_mean).abs() < 1e-9 * heave_tol && h.expected == w_mean, "{h:?}");
        assert!((h.tolerance - heave_tol).abs() < 1e-12 * heave_tol, "{h:?} vs {heave_tol}");
        let t = check(&c, "tilt_error");
        assert!(t.measured < 1e-6 * tilt_tol && (t.tolerance - tilt_tol).abs() < 1e-12 * tilt_tol, "{t:?}");
        let f = check(&c, "contact_fraction");
        assert!((f.measured - frac).abs() < 1e-12 && f.tolerance == 0.2, "{f:?}");
        assert!((f.expected - frac).abs() < 1e-15);
        let sunk = oracle(&WinklerCube, &prm, &sc, &following(&p, &sc, 2.0 * heave_tol, [0.0; 2], None));
        let h = check(&sunk, "heave");
        assert!(!h.pass && (h.measured - w_mean - 2.0 * heave_tol).abs() < 1e-6 * heave_tol, "{h:?}");
        let tilted = oracle(&WinklerCube, &prm, &sc, &following(&p, &sc, 0.0, [0.0, 2.0 * tilt_tol], None));
        let t = check(&tilted, "tilt_error");
        assert!(!t.pass && (t.measured - 2.0 * tilt_tol).abs() < 1e-6 * tilt_tol, "{t:?}");
        // lifted by 0.8 of the mean sinkage: fewer elements press
        let lifted = oracle(&WinklerCube, &prm, &sc, &following(&p, &sc, -0.8 * w_mean, [0.0; 2], None));
        assert!(check(&lifted, "contact_fraction").measured < frac - 0.2, "{lifted:?}");
        let mut cut = following(&p, &sc, 0.0, [0.0; 2], None);
        cut.completed = false;
        let c = oracle(&WinklerCube, &prm, &sc, &cut);
        assert_eq!(names(&c), ["heave", "tilt_error", "contact_fraction"]);
        assert!(c.iter().all(|c| c.measured.is_nan() && !c.pass), "{c:?}");
        assert_eq!(check(&c, "contact_fraction").tolerance, 0.2);
    }
}
