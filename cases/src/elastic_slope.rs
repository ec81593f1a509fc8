//! `elastic_slope`: a stiff elastic (tetrahedral FEM) cube released from rest on an inclined
//! plane — the Coulomb stick/slip threshold `mu* = tan a` for a deformable body whose bottom nodes
//! are redundant point contacts (Zeng et al. §7.5, Fig. 7: E = 1e8, rho = 1000, a = 10°).
//!
//! # Scene
//!
//! As `slope` (cases/src/slope.rs): the static half-space `n . x <= 0`, `n = (-sin a, 0, cos a)`,
//! down-slope `s = (-cos a, 0, -sin a)`. The body is `DeformableBody::box_mesh` of a cube of edge
//! `edge` with `cells` cells per edge (6 tets each, lumped mass, density `rho`, `material` with
//! `E`, `nu`), turned by `-a` about y so that its bottom face lies on the plane (rest shape =
//! initial shape, so it starts stress free), centred on the normal through the origin, at rest.
//! Every node of the bottom face is a point contact (`(cells + 1)^2` of them); box and plane share
//! the material `mu`, rigid contact. Gravity then compresses the box by about
//! `rho g edge^2 / (2E) = 5e-7 m` — the elastic transient below.
//!
//! # Analytic solution
//!
//! Internal forces sum to zero, so the centre of mass moves like the rigid box: it sticks iff
//! `mu >= tan a`, else it slides with `a_s = g (sin a - mu cos a)` (a cube tips only beyond 45°).
//!
//! # Elastic noise (derivation of the extra tolerance terms)
//!
//! Released from its unloaded shape, the box rings in its fundamental compression mode. Take the
//! quarter-wave mode of a bar of length `edge` on a support, `w1 = (pi/2) c / edge` with the bar
//! wave speed `c = sqrt(E / rho)`: period `T1 = 2 pi / w1`; from rest at the unloaded shape the
//! static deflection under gravity is `g / w1^2`, so the velocity amplitude is at most
//! `v_el = g / w1` (undamped; backward Euler at `h w1 >> 1` only damps it). At the defaults
//! `c = 316 m/s`, `w1 = 4967 rad/s`, `T1 = 1.26 ms`, `v_el = 2.0e-3 m/s`. A sinusoid of amplitude
//! `v_el` changes a windowed mean over a window `T_w` by at most `v_el T1 / (pi T_w)` (its
//! integral over any window is at most `2 v_el / w1`) and a displacement by at most
//! `v_el T1 / pi`. Every oracle below therefore averages over windows `T_w >> T1`, and adds that
//! bound to the rigid `slope` tolerance; at the defaults it is 1e-4 to 1e-5 of the other terms'
//! size, i.e. the stiff box is graded as strictly as the rigid one, and a soft box
//! (`E = 1e5`: `T1 = 40 ms`, `v_el = 0.06 m/s`) gets a proportionate allowance.
//!
//! # Oracle checks
//!
//! `c_k = s . v_com(k)` is the centre of mass's down-slope velocity after step `k` (node masses
//! times node velocities), `N` steps, `T = N dt`, `k0 = N / 2`, `T2 = (N - k0) dt`,
//! `v_tol = CREEP_REL_TOL g dt` (crate doc).
//!
//! * `slides` — 1 if `|D| > D_thr` with `D = dt sum_{k=1..N} c_k`, else 0; expected 1 iff
//!   `mu < tan a`; tolerance 0, or 1 when `a_s T^2 / 2 <= 2 D_thr` (undecidable just below the
//!   threshold, as in `slope`). `D_thr = v_tol T + v_el T1 / pi`.
//! * `acceleration` — `(cbar_2 - cbar_1) / ((kbar_2 - kbar_1) dt)` with `cbar_i` the mean of `c_k`
//!   over window `i` and `kbar_i` its mean step index: window 1 = steps `k0+1 ..= k0+m`, window 2
//!   = the last `m` steps, `m = max(1, (N - k0) / 2)` (exact for a constant acceleration); expected
//!   `a_s` (0 when sticking); tolerance `IMPULSE_REL_TOL g + 2 v_tol / T_c + 2 v_el T1 / (pi m dt T_c)`
//!   with `T_c = (kbar_2 - kbar_1) dt` (creep within `±v_tol` and the ringing bound of each window
//!   mean, divided by the lever `T_c`). At the defaults (50 steps, `m = 12`, `T_c = 0.13 s`):
//!   `9.8e-3 + 1.5e-2 + 5e-5 m/s^2`.
//! * `creep_speed` — only when sticking: `|mean_{k0 < k <= N} c_k|`, the mean down-slope creep
//!   speed over the second half (m/s); expected 0; tolerance `v_tol + v_el T1 / (pi T2)`
//!   (`9.81e-4 + 3e-6 m/s` at the defaults). A signed mean: creep always points down-slope, while
//!   the ringing averages out.

use crate::fem::{self, FemMaterial};
use crate::{check, default_struct, trace_is_whole, unmeasured};
use crate::{CREEP_REL_TOL, IMPULSE_REL_TOL};
use harness::model::{DeformableBody, ElasticMaterial, Material, StaticCollider, StaticShape, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("elastic_slope.toml");
const SOURCE: &str = "cases/src/elastic_slope.toml";

/// Most cells per edge accepted.
pub const MAX_CELLS: i64 = 100;

/// Parameters of the `elastic_slope` case (defaults in `cases/src/elastic_slope.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ElasticSlopeParams {
    /// `"corotational"`, `"arap"` or `"neohookean"`.
    pub material: FemMaterial,
    /// Young's modulus (Pa, > 0).
    #[serde(rename = "E")]
    pub youngs_modulus: f64,
    /// Poisson ratio (in (-1, 0.5)).
    pub nu: f64,
    /// Density (kg/m^3, > 0).
    pub rho: f64,
    /// Cube edge (m, > 0).
    pub edge: f64,
    /// Cells per edge (1 ..= `MAX_CELLS`).
    pub cells: i64,
    /// Inclination (degrees, [0, 45)).
    pub angle_deg: f64,
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

impl Default for ElasticSlopeParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for ElasticSlopeParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        check::positive("E", self.youngs_modulus)?;
        if !(self.nu > -1.0 && self.nu < 0.5) {
            return Err(harness::FieldError::new("nu", format!("must be in (-1, 0.5), got {}", self.nu)));
        }
        check::positive("rho", self.rho)?;
        check::positive("edge", self.edge)?;
        if !(1..=MAX_CELLS).contains(&self.cells) {
            return Err(harness::FieldError::new("cells", format!("must be in [1, {MAX_CELLS}], got {}", self.cells)));
        }
        if !(self.angle_deg.is_finite() && (0.0..45.0).contains(&self.angle_deg)) {
            return Err(harness::FieldError::new(
                "angle_deg",
                format!("must be in [0, 45) (finite), got {}", self.angle_deg),
            ));
        }
        check::non_negative("mu", self.mu)?;
        check::positive("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)?;
        check::positive("margin", self.margin)
    }
}

/// Derived tolerance inputs of the elastic ringing (module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ringing {
    /// Fundamental angular frequency `w1 = (pi/2) sqrt(E/rho) / edge` (rad/s).
    pub omega: f64,
    /// Its period `T1` (s).
    pub period: f64,
    /// Velocity amplitude bound `v_el = g / w1` (m/s).
    pub speed: f64,
}

impl ElasticSlopeParams {
    /// Inclination (rad).
    pub fn angle(&self) -> f64 {
        self.angle_deg.to_radians()
    }
    /// Unit plane normal `(-sin a, 0, cos a)`.
    pub fn normal(&self) -> Vector3<f64> {
        Vector3::new(-self.angle().sin(), 0.0, self.angle().cos())
    }
    /// Unit down-slope direction `(-cos a, 0, -sin a)`.
    pub fn downslope(&self) -> Vector3<f64> {
        Vector3::new(-self.angle().cos(), 0.0, -self.angle().sin())
    }
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Whether the box should stick (`mu >= tan a`).
    pub fn sticks(&self) -> bool {
        self.mu >= self.angle().tan()
    }
    /// Expected centre-of-mass down-slope acceleration (m/s^2): 0 or `g (sin a - mu cos a)`.
    pub fn expected_acceleration(&self) -> f64 {
        if self.sticks() {
            0.0
        } else {
            self.gravity * (self.angle().sin() - self.mu * self.angle().cos())
        }
    }
    /// The elastic ringing bounds (module doc).
    pub fn ringing(&self) -> Ringing {
        let omega = 0.5 * std::f64::consts::PI * (self.youngs_modulus / self.rho).sqrt() / self.edge;
        Ringing { omega, period: std::f64::consts::TAU / omega, speed: self.gravity / omega }
    }

    /// The box, resting on the plane.
    pub fn body(&self) -> DeformableBody {
        let e = self.edge;
        let elastic = ElasticMaterial {
            model: self.material.model(),
            youngs_modulus: self.youngs_modulus,
            poisson_ratio: self.nu,
        };
        let n = self.cells as usize;
        let mut b = DeformableBody::box_mesh(
            "box",
            Vector3::new(-0.5 * e, -0.5 * e, 0.0),
            Vector3::new(e, e, e),
            [n; 3],
            self.rho,
            elastic,
            Material::rigid(self.mu),
        );
        let rot = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), -self.angle());
        for x in b.rest.iter_mut() {
            *x = rot * *x;
        }
        b.positions = b.rest.clone();
        b
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        w.deformables.push(self.body());
        w.statics.push(StaticCollider {
            name: "slope".into(),
            shape: StaticShape::HalfSpace { normal: self.normal(), offset: 0.0 },
            material: Material::rigid(self.mu),
        });
        w
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let k0 = n / 2;
        let (t_all, t_half) = (n as f64 * dt, (n - k0) as f64 * dt);
        let ring = self.ringing();
        let v_tol = CREEP_REL_TOL * self.gravity * dt;
        let d_thr = v_tol * t_all + ring.speed * ring.period / std::f64::consts::PI;
        let a_exp = self.expected_acceleration();
        let slides_exp = if self.sticks() { 0.0 } else { 1.0 };
        let slides_tol = if !self.sticks() && 0.5 * a_exp * t_all * t_all <= 2.0 * d_thr { 1.0 } else { 0.0 };
        let m = ((n - k0) / 2).max(1);
        let (w1, w2) = ((k0 + 1)..=(k0 + m), (n + 1 - m)..=n);
        let mean_k = |r: &std::ops::RangeInclusive<usize>| r.clone().sum::<usize>() as f64 / m as f64;
        let t_c = (mean_k(&w2) - mean_k(&w1)) * dt;
        let acc_tol = IMPULSE_REL_TOL * self.gravity
            + 2.0 * v_tol / t_c
            + 2.0 * ring.speed * ring.period / (std::f64::consts::PI * m as f64 * dt * t_c);
        let creep_tol = v_tol + ring.speed * ring.period / (std::f64::consts::PI * t_half);
        if !trace_is_whole(scenario, trace) || t_c <= 0.0 {
            let mut out =
                vec![unmeasured("slides", slides_exp, slides_tol), unmeasured("acceleration", a_exp, acc_tol)];
            if self.sticks() {
                out.push(unmeasured("creep_speed", 0.0, creep_tol));
            }
            return out;
        }
        let masses = scenario.world.deformables[0].node_masses();
        let v_off = scenario.world.deformable_v_offsets()[0];
        let s = self.downslope();
        let c: Vec<f64> = trace.v.iter().map(|v| s.dot(&fem::com_velocity(&masses, v, v_off))).collect();
        let d = dt * c[1..].iter().sum::<f64>();
        let slides = if d.abs() > d_thr { 1.0 } else { 0.0 };
        let mean_c = |r: std::ops::RangeInclusive<usize>| r.map(|k| c[k]).sum::<f64>() / m as f64;
        let acc = (mean_c(w2) - mean_c(w1)) / t_c;
        let mut out = vec![
            OracleCheck::abs("slides", slides, slides_exp, slides_tol),
            OracleCheck::abs("acceleration", acc, a_exp, acc_tol),
        ];
        if self.sticks() {
            let creep = (c[k0 + 1..].iter().sum::<f64>() / (n - k0) as f64).abs();
            out.push(OracleCheck::abs("creep_speed", creep, 0.0, creep_tol));
        }
        out
    }
}

/// The `elastic_slope` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct ElasticSlope;

impl CaseDef for ElasticSlope {
    type Params = ElasticSlopeParams;
    const NAME: &'static str = "elastic_slope";
    const SUMMARY: &'static str =
        "stiff elastic FEM cube (E = 1e8) on an inclined plane (Zeng Fig. 7): stick/slip threshold and acceleration";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn size_hint(&self, p: &ElasticSlopeParams) -> Option<harness::resources::ProblemSize> {
        let driver = format!("cells ({} per edge)", p.cells);
        Some(fem::box_mesh_size(p.cells, p.cells, p.cells, p.steps(), &driver))
    }
    fn scenario(&self, p: &ElasticSlopeParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: p.margin, needs: fem::needs(true) })
    }
    fn grade(&self, p: &ElasticSlopeParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
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
        crate::test_util::params(&ElasticSlope, overrides)
    }

    /// Every node moving down-slope with `v = acc t` plus a normal ringing `amp sin(w t)`.
    fn trace(p: &ElasticSlopeParams, sc: &Scenario, acc: f64, amp: f64) -> Trace {
        let (s, nrm) = (p.downslope(), p.normal());
        let nn = sc.world.deformables[0].num_nodes();
        let mut q = sc.world.positions();
        let mut tr = Trace { dt: sc.dt, completed: true, ..Default::default() };
        tr.q.push(q.clone());
        tr.v.push(vec![0.0; 3 * nn]);
        for k in 1..=sc.steps {
            let t = k as f64 * sc.dt;
            let u = s * acc * t + nrm * amp * (p.ringing().omega * t).sin();
            for a in 0..nn {
                for i in 0..3 {
                    q[3 * a + i] += sc.dt * u[i];
                }
            }
            tr.q.push(q.clone());
            tr.v.push((0..nn).flat_map(|_| [u.x, u.y, u.z]).collect());
            tr.metrics.push(StepMetrics { t, ..Default::default() });
        }
        tr
    }

    use crate::test_util::check as get;

    #[test]
    fn defaults_parse_and_build_a_box_resting_on_the_plane() {
        let p: ElasticSlopeParams = ElasticSlope.defaults().decode("elastic_slope").unwrap();
        assert_eq!(p, ElasticSlopeParams::default());
        let sc = crate::test_util::build(&ElasticSlope, &ElasticSlope.defaults()).unwrap();
        sc.world.validate().unwrap();
        assert!(sc.needs.deformable_bodies && sc.needs.rigid_contact && !sc.needs.rigid_bodies);
        let b = &sc.world.deformables[0];
        assert!((b.total_mass() - 1.0).abs() < 1e-12);
        assert!(b.elastic_energy().abs() < 1e-20, "{}", b.elastic_energy());
        // the bottom face's 4 nodes touch the plane with gap 0, the normal is the plane's
        let cs = harness::geometry::detect(&sc.world, sc.margin);
        assert_eq!(cs.len(), 4);
        for c in &cs.contacts {
            assert!(c.gap.abs() < 1e-15, "gap {}", c.gap);
            assert!((c.normal() - p.normal()).norm() < 1e-12);
        }
        let sc = crate::test_util::build(&ElasticSlope, &params(&[("cells", "2")])).unwrap();
        assert_eq!(harness::geometry::detect(&sc.world, sc.margin).len(), 9);
        assert!(p.sticks());
        let r = p.ringing();
        assert!((r.omega - 4967.294).abs() < 1e-2 && (r.speed - 1.975e-3).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&ElasticSlope);
    }

    #[rstest]
    #[case::material("material", "steel", "material:")]
    #[case::zero_e("E", "0", "E:")]
    #[case::nu("nu", "0.5", "nu:")]
    #[case::cells("cells", "0", "cells:")]
    #[case::angle("angle_deg", "45", "angle_deg:")]
    #[case::mu("mu", "-0.1", "mu:")]
    #[case::dt("dt", "0", "dt:")]
    #[case::margin("margin", "0", "margin:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&ElasticSlope, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[test]
    fn sliding_trace_with_ringing_passes_and_wrong_acceleration_fails() {
        let prm = params(&[("mu", "0.15")]);
        let p: ElasticSlopeParams = prm.decode("elastic_slope").unwrap();
        let sc = crate::test_util::build(&ElasticSlope, &prm).unwrap();
        let a = p.expected_acceleration();
        // normal ringing at v_el does not leak into the down-slope measurements
        let checks = crate::test_util::oracle(&ElasticSlope, &prm, &sc, &trace(&p, &sc, a, p.ringing().speed));
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        assert!((get(&checks, "acceleration").measured - a).abs() < 1e-12);
        assert_eq!(get(&checks, "slides").measured, 1.0);
        let checks = crate::test_util::oracle(&ElasticSlope, &prm, &sc, &trace(&p, &sc, a + 0.05, 0.0));
        assert!(!get(&checks, "acceleration").pass);
    }

    #[test]
    fn sticking_trace_passes_and_creep_fails() {
        let prm = ElasticSlope.defaults();
        let p: ElasticSlopeParams = prm.decode("elastic_slope").unwrap();
        let sc = crate::test_util::build(&ElasticSlope, &prm).unwrap();
        let checks = crate::test_util::oracle(&ElasticSlope, &prm, &sc, &trace(&p, &sc, 0.0, 0.0));
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        // a steady creep of 2 v_tol down-slope fails creep_speed and slides
        let mut tr = trace(&p, &sc, 0.0, 0.0);
        let u = p.downslope() * 2.0 * CREEP_REL_TOL * 9.81 * sc.dt;
        for v in tr.v.iter_mut().skip(1) {
            for c in v.chunks_mut(3) {
                c.copy_from_slice(u.as_slice());
            }
        }
        let checks = crate::test_util::oracle(&ElasticSlope, &prm, &sc, &tr);
        assert!(!get(&checks, "creep_speed").pass && !get(&checks, "slides").pass, "{checks:?}");
    }

    /// Every node moving down-slope at `c(k)` after step `k` (positions unchanged: the checks read
    /// velocities only).
    fn profile(p: &ElasticSlopeParams, sc: &Scenario, c: impl Fn(usize) -> f64) -> Trace {
        let nn = sc.world.deformables[0].num_nodes();
        let q = sc.world.positions();
        let mut tr = Trace { dt: sc.dt, completed: true, ..Default::default() };
        for k in 0..=sc.steps {
            let u = p.downslope() * if k == 0 { 0.0 } else { c(k) };
            tr.q.push(q.clone());
            tr.v.push((0..nn).flat_map(|_| [u.x, u.y, u.z]).collect());
            if k > 0 {
                tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, ..Default::default() });
            }
        }
        tr
    }

    /// The checks and their tolerances are the module doc's derivation, on a down-slope speed
    /// profile `c_k` that is not linear (so every window shows): with `k0 = n/2`, `m = (n − k0)/2`,
    /// the windows `w1 = k0+1 ..= k0+m` and `w2 = n+1−m ..= n` whose centres lie `t_c = (n − k0 −
    /// m) h` apart, `acceleration = (mean_{w2} c − mean_{w1} c) / t_c`, `creep_speed = |mean_{k >
    /// k0} c|`, `slides = [h Σ_{k ≥ 1} c > d_thr]` with `d_thr = v_tol n h + v_el T1/π`; the
    /// tolerances `IMPULSE_REL_TOL g + 2 v_tol/t_c + 2 v_el T1/(π m h t_c)` and `v_tol + v_el
    /// T1/(π (n − k0) h)`, `v_tol = CREEP_REL_TOL g h`; `slides` is not graded (tolerance 1) on
    /// a slip too short to exceed twice `d_thr`.
    #[test]
    fn checks_and_tolerances_are_the_derivation() {
        for set in [&[][..], &[("mu", "0.15")][..], &[("mu", "0.15"), ("dt", "0.001"), ("duration", "0.004")][..]] {
            let prm = params(set);
            let p: ElasticSlopeParams = prm.decode("elastic_slope").unwrap();
            let sc = crate::test_util::build(&ElasticSlope, &prm).unwrap();
            let (n, h, g) = (sc.steps, sc.dt, p.gravity);
            let (k0, ring) = (n / 2, p.ringing());
            let m = ((n - k0) / 2).max(1);
            let t_c = (n - k0 - m) as f64 * h;
            let v_tol = CREEP_REL_TOL * g * h;
            let ringing = ring.speed * ring.period / std::f64::consts::PI;
            let d_thr = v_tol * n as f64 * h + ringing;
            let acc_tol = IMPULSE_REL_TOL * g + 2.0 * v_tol / t_c + 2.0 * ringing / (m as f64 * h * t_c);
            let creep_tol = v_tol + ringing / ((n - k0) as f64 * h);
            let c = |k: usize| 3e-4 * (0.37 * k as f64).sin() + 2e-6 * (k * k) as f64 / n as f64;
            let checks = crate::test_util::oracle(&ElasticSlope, &prm, &sc, &profile(&p, &sc, c));
            let want_names: &[&str] =
                if p.sticks() { &["slides", "acceleration", "creep_speed"] } else { &["slides", "acceleration"] };
            assert_eq!(crate::test_util::names(&checks), want_names, "{set:?}");
            let mean = |r: std::ops::RangeInclusive<usize>| r.map(c).sum::<f64>() / m as f64;
            let acc = get(&checks, "acceleration");
            let want = (mean(n + 1 - m..=n) - mean(k0 + 1..=k0 + m)) / t_c;
            assert!((acc.measured - want).abs() < 1e-12 * want.abs(), "{set:?}: {acc:?} vs {want}");
            assert!((acc.tolerance - acc_tol).abs() < 1e-12 * acc_tol, "{set:?}: {acc:?} vs {acc_tol}");
            let d = h * (1..=n).map(c).sum::<f64>();
            let slides = get(&checks, "slides");
            assert_eq!(slides.measured, if d.abs() > d_thr { 1.0 } else { 0.0 }, "{set:?}: {d} vs {d_thr}");
            let short = 0.5 * p.expected_acceleration() * (n as f64 * h).powi(2) <= 2.0 * d_thr;
            assert_eq!(slides.tolerance, if !p.sticks() && short { 1.0 } else { 0.0 }, "{set:?}");
            assert_eq!(!p.sticks() && short, set.len() == 3, "{set:?}: the 4-step slip is the short one");
            if p.sticks() {
                let creep = get(&checks, "creep_speed");
                let want = ((k0 + 1..=n).map(c).sum::<f64>() / (n - k0) as f64).abs();
                assert!((creep.measured - want).abs() < 1e-12 * want, "{creep:?} vs {want}");
                assert!((creep.tolerance - creep_tol).abs() < 1e-12 * creep_tol, "{creep:?} vs {creep_tol}");
                // a steady creep just below and just above the tolerance
                for (f, pass) in [(0.9, true), (1.1, false)] {
                    let c = oracle_speed(&prm, &sc, &p, f * creep_tol);
                    assert_eq!(get(&c, "creep_speed").pass, pass, "{f}");
                }
                // a threshold just below and above the sliding distance of a steady speed
                let speed = |f: f64| f * d_thr / (n as f64 * h);
                assert_eq!(get(&oracle_speed(&prm, &sc, &p, speed(0.999)), "slides").measured, 0.0);
                assert_eq!(get(&oracle_speed(&prm, &sc, &p, speed(1.001)), "slides").measured, 1.0);
            } else {
                for (f, pass) in [(0.9, true), (-0.9, true), (1.1, false), (-1.1, false)] {
                    let a = p.expected_acceleration() + f * acc_tol;
                    let c = crate::test_util::oracle(&ElasticSlope, &prm, &sc, &trace(&p, &sc, a, 0.0));
                    assert_eq!(get(&c, "acceleration").pass, pass, "{set:?} {f}");
                }
            }
        }
    }

    /// The checks of a run at the steady down-slope speed `speed`.
    fn oracle_speed(prm: &Params, sc: &Scenario, p: &ElasticSlopeParams, speed: f64) -> Vec<OracleCheck> {
        crate::test_util::oracle(&ElasticSlope, prm, sc, &profile(p, sc, |_| speed))
    }

    #[test]
    fn incomplete_trace_fails_every_check() {
        let prm = ElasticSlope.defaults();
        let p: ElasticSlopeParams = prm.decode("elastic_slope").unwrap();
        let sc = crate::test_util::build(&ElasticSlope, &prm).unwrap();
        let mut tr = trace(&p, &sc, 0.0, 0.0);
        tr.completed = false;
        let checks = crate::test_util::oracle(&ElasticSlope, &prm, &sc, &tr);
        assert!(checks.iter().all(|c| !c.pass && c.measured.is_nan()));
    }
}
