//! `twisting_bar`: an elastic bar whose two end faces are turned about its axis in opposite
//! directions by prescribed motion — large rotations and shear in a tetrahedral FEM body
//! (Zeng et al. §7.3 / Fig. 9, Table 3; Macklin et al. §10.1.6 for the material models).
//!
//! # Scene
//!
//! ```text
//!          z
//!          ^      +twist_rate              -twist_rate
//!          |    ,---------------------------------,
//!   -w/2 .. w/2 | end x = 0     bar (nx x ny x nz | end x = length
//!          |    '---------------------------------'
//!          +------------------------------------------> x  (bar axis, y = z = 0)
//! ```
//!
//! * One deformable body: `DeformableBody::box_mesh` of `[0, length] x [-w/2, w/2]^2` with
//!   `nx x ny x nz` cells, 6 tetrahedra each, lumped mass, density `rho`, material
//!   `material = arap | corotational | neohookean` with Young's modulus `E` and Poisson ratio `nu`.
//! * Boundary conditions ([`PrescribedMotion`]): the nodes of the end face `x = length` rotate
//!   about the bar axis at `+twist_rate`, the nodes of the face `x = 0` at `-twist_rate` (rad/s,
//!   right-handed about +x), from rest. Every other node is free.
//! * No colliders, so no contacts. Gravity `gravity` along -z, **off by default** (the papers
//!   twist the bar without it; then the boundary motion is the only load).
//! * Defaults: ARAP, `E = 1e6 Pa`, `nu = 0.45`, `rho = 1000` (Zeng Table 3 apart from `E`, which the
//!   paper sweeps 1e5 .. 1e9), a 1 x 0.2 x 0.2 m bar on a 4 x 1 x 1 grid (20 nodes, 24 tets; a
//!   default nsn run takes a few seconds in a debug build — refine with `nx, ny, nz`),
//!   `twist_rate = 2 rad/s`, `dt = 0.01 s`, 0.2 s (ends at ±0.4 rad, relative twist 0.8 rad).
//!
//! # Oracle checks
//!
//! Let `N` be the number of steps, `t_k = k dt`, `c_e` the centre of end face `e` and
//! `x_a^0` a node's rest position. A prescribed node must be at
//! `x_a(t_k) = c_e + Rot(±twist_rate t_k) (x_a^0 − c_e)` after step `k`.
//!
//! * `end_rotation` — measured: the mean turning angle of the `x = length` face's nodes about the
//!   axis after the last step (rad, from `atan2` of their `(y, z)` against the rest positions,
//!   unwrapped); expected `twist_rate N dt`. Error: `max_{k, a} |x_a(t_k) − x_a^exp(t_k)| / r_a`
//!   over the prescribed nodes off the axis (`r_a` = distance from the axis) — the angle error for a
//!   pure mis-rotation, and it also catches axial or radial motion of an end. Tolerance:
//!   `100 ε N (max_a |x_a| / min_a r_a)` with `ε = 2.2e-16`. The boundary condition is exact in
//!   exact arithmetic (each step applies one rotation by `twist_rate dt` about a fixed centre, and
//!   rotations about one axis compose), so only rounding remains: a step rounds the rotated
//!   position and the update `x + dt v` at a few ulp of `|x|` (a 25x margin with 100 ε), growing at
//!   most linearly with the steps. At the defaults `3.2e-12` (`max |x| = 1.01 m`, `min r = 0.141 m`, 20 steps).
//! * `no_inversion` — measured: the smallest volume ratio `det F = det D_s / det D_m` over all
//!   tetrahedra and all states `q_0 .. q_N`; expected `> 0` (reported against 1, the rest value);
//!   error 0 when it is `> 0`, else `1 − min det F`; tolerance 0. A twist of 0.8 rad over a 1 m bar
//!   shears the elements by `0.08 rad` at the surface at the defaults: no element comes near
//!   inversion.
//! * `energy_balance` — the work–energy balance of implicit Euler, the scheme of the deformable
//!   solvers (Macklin et al.'s Newton and Zeng et al.'s projective dynamics both solve it), derived in
//!   [`crate::energy_balance`]: the energy a step adds to the bar (kinetic + elastic + gravity) must
//!   not exceed the work of the reactions that turn its ends, beyond the non-convexity of the
//!   energy along the step and the work of a 0.1 % impulse error on the free nodes. Measured: the
//!   largest energy gain over the steps in units of the step's power scale `P_k` (negative when
//!   every step dissipates); expected `<= 0` (reported against 0); error its positive part (NaN if
//!   an energy is not finite); tolerance [`crate::IMPULSE_REL_TOL`]. A solver that injects energy
//!   (a wrong sign or scale of the elastic force, an explicit step past its stability limit)
//!   fails it; a NaN energy fails it. At the defaults: nsn −1.15, local_global −1.07 (every step
//!   dissipates more than its `P_k`).

use crate::energy_balance::implicit_euler_energy_gain;
use crate::fem::{self, FemMaterial};
use crate::{check, default_struct, trace_is_whole, unmeasured, IMPULSE_REL_TOL};
use harness::model::{DeformableBody, ElasticMaterial, Material, PrescribedMotion, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("twisting_bar.toml");
const SOURCE: &str = "cases/src/twisting_bar.toml";

/// Most cells per direction accepted.
pub const MAX_CELLS: i64 = 1000;

/// Parameters of the `twisting_bar` case (defaults in `cases/src/twisting_bar.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwistingBarParams {
    /// `"arap"`, `"corotational"` or `"neohookean"`.
    pub material: FemMaterial,
    /// Young's modulus (Pa, > 0).
    #[serde(rename = "E")]
    pub youngs_modulus: f64,
    /// Poisson ratio (in (-1, 0.5)).
    pub nu: f64,
    /// Density (kg/m^3, > 0).
    pub rho: f64,
    /// Bar length along x (m, > 0).
    pub length: f64,
    /// Edge of the square cross-section (m, > 0).
    pub width: f64,
    /// Rotation rate of each end face, opposite directions (rad/s, finite).
    pub twist_rate: f64,
    /// Cells along x (1 ..= `MAX_CELLS`).
    pub nx: i64,
    /// Cells along y (1 ..= `MAX_CELLS`).
    pub ny: i64,
    /// Cells along z (1 ..= `MAX_CELLS`).
    pub nz: i64,
    /// Gravity magnitude along -z (m/s^2, >= 0; default 0).
    pub gravity: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
}

impl Default for TwistingBarParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for TwistingBarParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        check::positive("E", self.youngs_modulus)?;
        if !(self.nu > -1.0 && self.nu < 0.5) {
            return Err(harness::FieldError::new("nu", format!("must be in (-1, 0.5), got {}", self.nu)));
        }
        check::positive("rho", self.rho)?;
        check::positive("length", self.length)?;
        check::positive("width", self.width)?;
        check::finite("twist_rate", self.twist_rate)?;
        for (name, n) in [("nx", self.nx), ("ny", self.ny), ("nz", self.nz)] {
            if !(1..=MAX_CELLS).contains(&n) {
                return Err(harness::FieldError::new(name, format!("must be in [1, {MAX_CELLS}], got {n}")));
            }
        }
        check::non_negative("gravity", self.gravity)?;
        check::time_grid(self.dt, self.duration)
    }
}

impl TwistingBarParams {
    /// Number of steps, `round(duration / dt)`.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }

    /// The bulk material.
    pub fn elastic(&self) -> ElasticMaterial {
        ElasticMaterial { model: self.material.model(), youngs_modulus: self.youngs_modulus, poisson_ratio: self.nu }
    }

    /// Centres of the two end faces, `x = 0` and `x = length` (m).
    pub fn end_centres(&self) -> [Vector3<f64>; 2] {
        [Vector3::zeros(), Vector3::new(self.length, 0.0, 0.0)]
    }

    /// The meshed bar with its two prescribed end faces (`boundary[0]`: `x = 0`, turning at
    /// `-twist_rate`; `boundary[1]`: `x = length`, turning at `+twist_rate`).
    pub fn bar(&self) -> DeformableBody {
        let w = self.width;
        let mut b = DeformableBody::box_mesh(
            "bar",
            Vector3::new(0.0, -0.5 * w, -0.5 * w),
            Vector3::new(self.length, w, w),
            [self.nx as usize, self.ny as usize, self.nz as usize],
            self.rho,
            self.elastic(),
            Material::rigid(0.0),
        );
        let tol = 1e-9 * self.length;
        for (c, sign) in self.end_centres().into_iter().zip([-1.0, 1.0]) {
            let nodes: Vec<usize> = (0..b.num_nodes()).filter(|&a| (b.rest[a].x - c.x).abs() < tol).collect();
            b.boundary.push(PrescribedMotion {
                nodes,
                center: c,
                angular_velocity: Vector3::new(sign * self.twist_rate, 0.0, 0.0),
                linear_velocity: Vector3::zeros(),
            });
        }
        b
    }

    /// The initial world.
    pub fn world(&self) -> World {
        let mut w = World::new();
        w.gravity = Vector3::new(0.0, 0.0, -self.gravity);
        w.deformables.push(self.bar());
        w
    }

    /// Tolerance of `end_rotation` for `steps` steps (see the module doc).
    pub fn rotation_tolerance(&self, world: &World, steps: usize) -> f64 {
        let b = &world.deformables[0];
        let nodes = b.boundary.iter().flat_map(|m| m.nodes.iter());
        let (mut xmax, mut rmin) = (0.0f64, f64::INFINITY);
        for &a in nodes {
            let x = b.rest[a];
            xmax = xmax.max(x.norm());
            let r = x.yz().norm();
            if r > 1e-12 * self.width {
                rmin = rmin.min(r);
            }
        }
        100.0 * f64::EPSILON * steps.max(1) as f64 * xmax / rmin
    }

    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let (dt, n) = (scenario.dt, scenario.steps);
        let world = &scenario.world;
        let rot_tol = self.rotation_tolerance(world, n);
        let expected_angle = self.twist_rate * n as f64 * dt;
        if !trace_is_whole(scenario, trace) {
            return vec![
                unmeasured("end_rotation", expected_angle, rot_tol),
                unmeasured("no_inversion", 1.0, 0.0),
                unmeasured("energy_balance", 0.0, IMPULSE_REL_TOL),
            ];
        }
        let body = &world.deformables[0];
        let mut err = 0.0f64;
        for bc in &body.boundary {
            let axis = bc.angular_velocity.normalize();
            for (k, q) in trace.q.iter().enumerate() {
                let rot = nalgebra::UnitQuaternion::from_axis_angle(
                    &nalgebra::Unit::new_unchecked(axis),
                    bc.angular_velocity.norm() * k as f64 * dt,
                );
                for &a in &bc.nodes {
                    let x0 = body.rest[a] - bc.center;
                    let r = x0.yz().norm();
                    if r <= 1e-12 * self.width {
                        continue;
                    }
                    let want = bc.center + rot * x0;
                    err = err.max((fem::node(world, q, 0, a) - want).norm() / r);
                }
            }
        }
        // measured angle of the x = length face: unwrapped mean over its off-axis nodes
        let right = &body.boundary[1];
        let angle_of = |q: &[f64], a: usize| {
            let (x0, x) = (body.rest[a] - right.center, fem::node(world, q, 0, a) - right.center);
            (x0.y * x.z - x0.z * x.y).atan2(x0.y * x.y + x0.z * x.z)
        };
        let off_axis: Vec<usize> =
            right.nodes.iter().copied().filter(|&a| (body.rest[a] - right.center).yz().norm() > 1e-12).collect();
        let mut unwrapped = vec![0.0; off_axis.len()];
        let mut prev = vec![0.0; off_axis.len()];
        for q in &trace.q[1..] {
            for (i, &a) in off_axis.iter().enumerate() {
                let now = angle_of(q, a);
                let mut d = now - prev[i];
                d -= (d / std::f64::consts::TAU).round() * std::f64::consts::TAU;
                unwrapped[i] += d;
                prev[i] = now;
            }
        }
        let angle = unwrapped.iter().sum::<f64>() / off_axis.len().max(1) as f64;
        let min_ratio = trace.q.iter().map(|q| fem::min_volume_ratio(world, q, 0)).fold(f64::INFINITY, f64::min);
        let inv_err = if min_ratio > 0.0 { 0.0 } else { 1.0 - min_ratio };
        let gain = implicit_euler_energy_gain(world, trace).worst;
        vec![
            OracleCheck::with_error("end_rotation", angle, expected_angle, err, rot_tol),
            OracleCheck::with_error("no_inversion", min_ratio, 1.0, inv_err, 0.0),
            OracleCheck::with_error(
                "energy_balance",
                gain,
                0.0,
                if gain.is_nan() { f64::NAN } else { gain.max(0.0) },
                IMPULSE_REL_TOL,
            ),
        ]
    }
}

/// The `twisting_bar` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct TwistingBar;

impl CaseDef for TwistingBar {
    type Params = TwistingBarParams;
    const NAME: &'static str = "twisting_bar";
    const SUMMARY: &'static str =
        "elastic FEM bar twisted by prescribed rotation of both end faces (Zeng Fig. 9): exact ends, no inversion";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn scenario(&self, p: &TwistingBarParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: 0.01 * p.width, needs: fem::needs(false) })
    }
    fn size_hint(&self, p: &TwistingBarParams) -> Option<harness::resources::ProblemSize> {
        let driver = format!("nx, ny, nz ({} x {} x {} cells)", p.nx, p.ny, p.nz);
        Some(fem::box_mesh_size(p.nx, p.ny, p.nz, p.steps(), &driver))
    }
    fn grade(&self, p: &TwistingBarParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::StepMetrics;
    use harness::{Case, Params};
    use nalgebra::UnitQuaternion;
    use rstest::rstest;

    fn params(overrides: &[(&str, &str)]) -> Params {
        crate::test_util::params(&TwistingBar, overrides)
    }

    /// The exact kinematic trace: prescribed nodes rotated, free nodes interpolating the twist
    /// linearly along x (a uniform twist), zero-velocity placeholders (not a dynamic trajectory).
    fn exact(p: &TwistingBarParams, sc: &Scenario, rate_factor: f64) -> Trace {
        let b = &sc.world.deformables[0];
        let mut tr = Trace { dt: sc.dt, completed: true, ..Default::default() };
        for k in 0..=sc.steps {
            let t = k as f64 * sc.dt;
            let mut q = vec![];
            for x0 in &b.rest {
                let s = 2.0 * x0.x / p.length - 1.0; // -1 at x = 0, +1 at x = length
                let rot = UnitQuaternion::from_scaled_axis(Vector3::new(s * p.twist_rate * rate_factor * t, 0.0, 0.0));
                let x = rot * x0;
                q.extend_from_slice(&[x.x, x.y, x.z]);
            }
            tr.v.push(vec![0.0; q.len()]);
            tr.q.push(q);
            if k > 0 {
                tr.metrics.push(StepMetrics { t, ..Default::default() });
            }
        }
        tr
    }

    use crate::test_util::check as get;

    #[test]
    fn defaults_parse_and_build_a_valid_world() {
        let p: TwistingBarParams = TwistingBar.defaults().decode("twisting_bar").unwrap();
        assert_eq!(p, TwistingBarParams::default());
        let sc = crate::test_util::build(&TwistingBar, &TwistingBar.defaults()).unwrap();
        sc.world.validate().unwrap();
        let b = &sc.world.deformables[0];
        assert_eq!(b.num_nodes(), 5 * 2 * 2);
        assert_eq!(b.tets.len(), 6 * 4);
        assert_eq!(b.boundary.len(), 2);
        assert_eq!(b.boundary[0].nodes.len(), 4);
        assert_eq!(b.boundary[1].nodes.len(), 4);
        assert_eq!(sc.world.gravity, Vector3::zeros());
        assert!(sc.needs.deformable_bodies && !sc.needs.rigid_bodies && !sc.needs.rigid_contact);
        assert_eq!(sc.steps, 20);
        assert!((b.total_mass() - 1000.0 * 0.04).abs() < 1e-9);
        assert!(harness::geometry::detect(&sc.world, sc.margin).is_empty());
    }

    #[test]
    fn every_parameter_is_in_the_toml_and_overridable() {
        crate::test_util::assert_every_parameter_is_in_the_toml_and_overridable(&TwistingBar);
    }

    #[rstest]
    #[case::material("material", "rubber", "material:")]
    #[case::zero_e("E", "0", "E:")]
    #[case::nu_half("nu", "0.5", "nu:")]
    #[case::zero_rho("rho", "0", "rho:")]
    #[case::zero_length("length", "0", "length:")]
    #[case::zero_width("width", "-1", "width:")]
    #[case::zero_cells("ny", "0", "ny:")]
    #[case::negative_gravity("gravity", "-9.81", "gravity:")]
    #[case::zero_dt("dt", "0", "dt:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let e = crate::test_util::build(&TwistingBar, &params(&[(key, raw)])).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&format!("parameter '{key}'")), "{e}");
    }

    #[rstest]
    #[case::arap("arap", FemMaterial::Arap)]
    #[case::corotational("corotational", FemMaterial::Corotational)]
    #[case::neohookean("neohookean", FemMaterial::Neohookean)]
    fn materials_build(#[case] m: &str, #[case] material: FemMaterial) {
        let sc = crate::test_util::build(&TwistingBar, &params(&[("material", m), ("E", "1e9")])).unwrap();
        assert_eq!(sc.world.deformables[0].elastic.model, material.model());
        assert_eq!(sc.world.deformables[0].elastic.youngs_modulus, 1e9);
    }

    #[test]
    fn prescribed_velocities_turn_the_ends_in_opposite_directions() {
        let sc = crate::test_util::build(&TwistingBar, &TwistingBar.defaults()).unwrap();
        let b = &sc.world.deformables[0];
        let pv = sc.world.prescribed_velocities(sc.dt);
        assert_eq!(pv.len(), 3 * 8);
        // a node at (L, w/2, -w/2) moves towards +z, one at (0, w/2, -w/2) towards -z
        let find = |x: Vector3<f64>| (0..b.num_nodes()).find(|&a| (b.rest[a] - x).norm() < 1e-12).unwrap();
        let vz = |a: usize| pv.iter().find(|(i, _)| *i == 3 * a + 2).unwrap().1;
        assert!(vz(find(Vector3::new(1.0, 0.1, -0.1))) > 0.0);
        assert!(vz(find(Vector3::new(0.0, 0.1, -0.1))) < 0.0);
    }

    #[test]
    fn exact_kinematics_pass_and_wrong_rate_fails() {
        let prm = TwistingBar.defaults();
        let p: TwistingBarParams = prm.decode("twisting_bar").unwrap();
        let sc = crate::test_util::build(&TwistingBar, &prm).unwrap();
        let checks = crate::test_util::oracle(&TwistingBar, &prm, &sc, &exact(&p, &sc, 1.0));
        // kinematics only: the exact trace has placeholder velocities, so energy_balance is not graded here
        assert!(get(&checks, "end_rotation").pass && get(&checks, "no_inversion").pass, "{checks:?}");
        let rot = get(&checks, "end_rotation");
        assert!((rot.measured - 0.4).abs() < 1e-12, "{rot:?}");
        assert!(rot.tolerance > 1e-12 && rot.tolerance < 1e-10, "{rot:?}");
        // piecewise-linear interpolation of a uniform twist loses a little volume, never inverts
        let j = get(&checks, "no_inversion").measured;
        assert!(j > 0.9 && j <= 1.0 + 1e-12, "{j}");
        assert_eq!(rot.expected, p.twist_rate * sc.steps as f64 * sc.dt);
        let checks = crate::test_util::oracle(&TwistingBar, &prm, &sc, &exact(&p, &sc, 1.0 + 1e-6));
        let rot = get(&checks, "end_rotation");
        assert!(!rot.pass);
        // the error is the largest node displacement from the prescribed motion relative to the
        // node's distance from the axis: the 1e-6 rate error times the end angle
        assert!((rot.error / (1e-6 * 0.4) - 1.0).abs() < 1e-3, "{rot:?}");
    }

    #[test]
    fn unwrapping_measures_several_turns() {
        let prm = params(&[("twist_rate", "20"), ("duration", "1.0")]);
        let p: TwistingBarParams = prm.decode("twisting_bar").unwrap();
        let sc = crate::test_util::build(&TwistingBar, &prm).unwrap();
        let checks = crate::test_util::oracle(&TwistingBar, &prm, &sc, &exact(&p, &sc, 1.0));
        assert!((get(&checks, "end_rotation").measured - 20.0).abs() < 1e-9);
    }

    #[test]
    fn an_inverted_state_fails_no_inversion() {
        let prm = TwistingBar.defaults();
        let p: TwistingBarParams = prm.decode("twisting_bar").unwrap();
        let sc = crate::test_util::build(&TwistingBar, &prm).unwrap();
        let mut tr = exact(&p, &sc, 1.0);
        // squash the interior node layer x = length/2 onto x = 0.1 length: elements invert
        let b = &sc.world.deformables[0];
        for a in 0..b.num_nodes() {
            if (b.rest[a].x - 0.5).abs() < 1e-9 {
                tr.q[10][3 * a] = 0.1;
            }
        }
        let checks = crate::test_util::oracle(&TwistingBar, &prm, &sc, &tr);
        let c = get(&checks, "no_inversion");
        assert!(!c.pass && c.measured < 0.0, "{c:?}");
        assert!((c.error - (1.0 - c.measured)).abs() < 1e-12, "{c:?}");
        // a state flattened onto x = 0 has zero volume: not inverted, not valid either
        tr.q[10].iter_mut().step_by(3).for_each(|x| *x = 0.0);
        let checks = crate::test_util::oracle(&TwistingBar, &prm, &sc, &tr);
        let c = get(&checks, "no_inversion");
        assert!(c.measured == 0.0 && c.error == 1.0 && !c.pass, "{c:?}");
    }

    /// At rest with the ends held (`twist_rate = 0`), the free nodes jump by 1 mm along the axis in
    /// step 10 and stop in step 11: kinetic and elastic energy appear that no reaction paid for (the
    /// ends do not move), so the balance fails; stopping them again dissipates and would pass.
    #[test]
    fn energy_created_without_boundary_work_fails() {
        let prm = params(&[("twist_rate", "0")]);
        let sc = crate::test_util::build(&TwistingBar, &prm).unwrap();
        let b = &sc.world.deformables[0];
        let held: Vec<bool> = (0..b.num_nodes()).map(|a| b.boundary.iter().any(|m| m.nodes.contains(&a))).collect();
        let rest = sc.world.positions();
        let mut tr = Trace { dt: sc.dt, completed: true, ..Default::default() };
        for k in 0..=sc.steps {
            let (mut q, mut v) = (rest.clone(), vec![0.0; rest.len()]);
            for a in (0..b.num_nodes()).filter(|&a| !held[a]) {
                if k >= 10 {
                    q[3 * a] += 1e-3;
                }
                if k == 10 {
                    v[3 * a] = 1e-3 / sc.dt;
                }
            }
            tr.q.push(q);
            tr.v.push(v);
            if k > 0 {
                tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, ..Default::default() });
            }
        }
        let c = get(&crate::test_util::oracle(&TwistingBar, &prm, &sc, &tr), "energy_balance").clone();
        // the gain is K + U over P = m |v|^2 + dt |grad U| |v|: about 1/2 for a mostly kinetic jump
        assert!(!c.pass && c.measured > 0.1, "{c:?}");
        // the same trace with the free nodes at rest throughout passes (nothing moves)
        let still = Trace { q: vec![rest.clone(); sc.steps + 1], v: vec![vec![0.0; rest.len()]; sc.steps + 1], ..tr };
        let c = get(&crate::test_util::oracle(&TwistingBar, &prm, &sc, &still), "energy_balance").clone();
        assert!(c.pass && c.measured == 0.0, "{c:?}");
    }

    #[test]
    fn non_finite_energy_and_partial_runs_fail() {
        let prm = TwistingBar.defaults();
        let p: TwistingBarParams = prm.decode("twisting_bar").unwrap();
        let sc = crate::test_util::build(&TwistingBar, &prm).unwrap();
        let mut tr = exact(&p, &sc, 1.0);
        tr.v[3][5] = f64::NAN;
        let checks = crate::test_util::oracle(&TwistingBar, &prm, &sc, &tr);
        assert!(!get(&checks, "energy_balance").pass);
        assert!(get(&checks, "energy_balance").measured.is_nan());
        tr.completed = false;
        let checks = crate::test_util::oracle(&TwistingBar, &prm, &sc, &tr);
        assert_eq!(checks.len(), 3);
        assert!(checks.iter().all(|c| !c.pass && c.measured.is_nan()));
    }

    /// The rotation tolerance is its derivation, `100 ε max(N, 1) max_a |x_a| / min_a r_a` over
    /// the prescribed nodes off the axis: on a 1 x 0.2 x 0.2 bar of one cell across, the corners
    /// (`|x| <= sqrt(1.02)`, `r = sqrt(0.02)`); on two cells across, the nodes on the axis are
    /// left out (`min r = 0.1`), also for a bar so thin that `r` is far below any absolute
    /// threshold.
    #[test]
    fn rotation_tolerance_is_its_derivation() {
        let tol = |p: &TwistingBarParams, steps| p.rotation_tolerance(&p.world(), steps);
        let eps = f64::EPSILON;
        let one = TwistingBarParams::default();
        assert_eq!((one.length, one.width, one.ny, one.nz), (1.0, 0.2, 1, 1));
        let want = 100.0 * eps * 20.0 * 1.02f64.sqrt() / 0.02f64.sqrt();
        assert!((tol(&one, 20) - want).abs() < 1e-12 * want, "{} vs {want}", tol(&one, 20));
        assert!((tol(&one, 0) - want / 20.0).abs() < 1e-12 * want, "N = 0 counts as one step");
        let two = TwistingBarParams { ny: 2, nz: 2, ..one.clone() };
        let want = 100.0 * eps * 7.0 * 1.02f64.sqrt() / 0.1;
        assert!((tol(&two, 7) - want).abs() < 1e-12 * want, "{} vs {want}", tol(&two, 7));
        let thin = TwistingBarParams { width: 2e-7, ..two };
        let want = 100.0 * eps * 7.0 * (1.0f64 + 2e-14).sqrt() / 1e-7;
        assert!((tol(&thin, 7) - want).abs() < 1e-9 * want, "{} vs {want}", tol(&thin, 7));
    }
}
