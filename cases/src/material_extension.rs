//! `material_extension`: an elastic tetrahedral bar with its end face `x = 0` fixed and its end
//! face `x = length` pulled along the bar axis at constant speed by prescribed motion, to a small
//! strain; no gravity, no contacts (Macklin et al. §10.1.6 "material extension", Fig. 13).
//!
//! # Scene
//!
//! `DeformableBody::box_mesh` of `[0, L] x [-w/2, w/2]^2`, `nx x ny x nz` cells (6 tets each),
//! density `rho`, `material = corotational | arap` with `E`, `nu`. `boundary[0]`: the nodes at
//! `x = 0`, fixed; `boundary[1]`: the nodes at `x = L`, `linear_velocity = (speed, 0, 0)`. Gravity 0.
//!
//! # Oracle checks
//!
//! After `N` steps the pulled face has moved `d = speed N dt`, the strain is `ε = d / L`.
//!
//! * `axial_force` — measured: the elastic reaction on the fixed face at the last state,
//!   `F = −Σ_{a ∈ face x=0} ∂E_el/∂x_a` (x-components, from `DeformableBody::elastic_gradient`
//!   at the trace's last `q`); expected `E_u A ε` with `A = w²` and the uniaxial modulus
//!   `E_u = E` (co-rotational: linear elasticity for a pure stretch) or `E_u = 2 μ = E/(1 + ν)`
//!   (ARAP, `μ ||F − R||²`: no volume term, so no Poisson contraction). Tolerance (relative):
//!   `0.05 + s`. The 5 % covers the time discretisation (backward-Euler inertia of the start-up
//!   transient, the bar's lowest mode `π c / (2L)` with `c = sqrt(E/ρ)` being damped by each
//!   implicit step) and the first-order strain error of the linear tets. `s` is the stiffening of
//!   the clamped faces, which stop the Poisson contraction: within about one width `w` of each
//!   clamped face the material is at most in uniaxial strain, modulus `M = λ + 2μ =
//!   E (1 − ν)/((1 + ν)(1 − 2ν))`; in series with the free middle, `s = L / ((L − 2w) + 2w E/M) − 1`
//!   (0.115 at the defaults, ν = 0.3, `L/w = 5`; 0 for ARAP, which has no Poisson effect).
//! * `no_inversion` — the smallest `det F` over all tetrahedra and states; expected `> 0`
//!   (reported against 1); error 0 when positive, else `1 − min det F`; tolerance 0.

use crate::fem;
use crate::{check, default_struct, trace_is_whole, unmeasured};
use harness::model::{DeformableBody, ElasticMaterial, Material, PrescribedMotion, World};
use harness::{CaseDef, CaseError, OracleCheck, Scenario, Settings, Trace};
use nalgebra::Vector3;
use serde::{Deserialize, Serialize};

const DEFAULTS: &str = include_str!("material_extension.toml");
const SOURCE: &str = "cases/src/material_extension.toml";

/// Most cells per direction accepted.
pub const MAX_CELLS: i64 = 1000;
/// Relative tolerance of `axial_force` for time discretisation and mesh (module doc).
pub const FORCE_REL_TOL: f64 = 0.05;
/// Largest accepted final strain (small-strain oracle).
pub const MAX_STRAIN: f64 = 0.05;

/// The `material` option of `material_extension`: `"corotational" | "arap"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtensionMaterial {
    /// Co-rotational linear elasticity.
    Corotational,
    /// As-rigid-as-possible.
    Arap,
}

impl ExtensionMaterial {
    /// The constitutive model.
    pub fn model(self) -> harness::model::ElasticModel {
        match self {
            ExtensionMaterial::Corotational => harness::model::ElasticModel::CoRotational,
            ExtensionMaterial::Arap => harness::model::ElasticModel::Arap,
        }
    }
}

/// Parameters of `material_extension` (defaults in `cases/src/material_extension.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialExtensionParams {
    /// `"corotational"` or `"arap"`.
    pub material: ExtensionMaterial,
    /// Young's modulus (Pa, > 0).
    #[serde(rename = "E")]
    pub youngs_modulus: f64,
    /// Poisson ratio (in [0, 0.5)).
    pub nu: f64,
    /// Density (kg/m^3, > 0).
    pub rho: f64,
    /// Bar length along x (m, > 2 width).
    pub length: f64,
    /// Edge of the square cross-section (m, > 0).
    pub width: f64,
    /// Cells along x (1 ..= `MAX_CELLS`).
    pub nx: i64,
    /// Cells along y (1 ..= `MAX_CELLS`).
    pub ny: i64,
    /// Cells along z (1 ..= `MAX_CELLS`).
    pub nz: i64,
    /// Pull speed of the `x = length` face along +x (m/s, > 0).
    pub speed: f64,
    /// Time step (s, > 0).
    pub dt: f64,
    /// Simulated time (s); `steps = round(duration / dt)`.
    pub duration: f64,
}

impl Default for MaterialExtensionParams {
    fn default() -> Self {
        default_struct(DEFAULTS, SOURCE)
    }
}

impl Settings for MaterialExtensionParams {
    fn validate(&self) -> Result<(), harness::FieldError> {
        check::positive("E", self.youngs_modulus)?;
        if !(self.nu >= 0.0 && self.nu < 0.5) {
            return Err(harness::FieldError::new("nu", format!("must be in [0, 0.5), got {}", self.nu)));
        }
        check::positive("rho", self.rho)?;
        check::positive("width", self.width)?;
        check::positive("length", self.length)?;
        if self.length <= 2.0 * self.width {
            return Err(harness::FieldError::new(
                "length",
                format!("must be > 2 width ({}), got {}", 2.0 * self.width, self.length),
            ));
        }
        for (name, n) in [("nx", self.nx), ("ny", self.ny), ("nz", self.nz)] {
            if !(1..=MAX_CELLS).contains(&n) {
                return Err(harness::FieldError::new(name, format!("must be in [1, {MAX_CELLS}], got {n}")));
            }
        }
        check::positive("speed", self.speed)?;
        check::time_grid(self.dt, self.duration)?;
        let strain = self.strain(self.steps());
        if strain > MAX_STRAIN {
            return Err(harness::FieldError::new(
                "speed",
                format!(
                    "the final strain speed * duration / length = {strain} exceeds {MAX_STRAIN}, got {}",
                    self.speed
                ),
            ));
        }
        Ok(())
    }
}

impl MaterialExtensionParams {
    /// Number of steps.
    pub fn steps(&self) -> usize {
        (self.duration / self.dt).round() as usize
    }
    /// Strain after `steps` steps.
    pub fn strain(&self, steps: usize) -> f64 {
        self.speed * steps as f64 * self.dt / self.length
    }
    /// The bulk material.
    pub fn elastic(&self) -> ElasticMaterial {
        ElasticMaterial { model: self.material.model(), youngs_modulus: self.youngs_modulus, poisson_ratio: self.nu }
    }
    /// Uniaxial modulus `E_u` (Pa): `E` (co-rotational) or `E / (1 + ν)` (ARAP).
    pub fn uniaxial_modulus(&self) -> f64 {
        if self.material == ExtensionMaterial::Arap {
            self.youngs_modulus / (1.0 + self.nu)
        } else {
            self.youngs_modulus
        }
    }
    /// Clamped-face stiffening `s` (module doc; 0 for ARAP).
    pub fn stiffening(&self) -> f64 {
        if self.material == ExtensionMaterial::Arap {
            return 0.0;
        }
        let nu = self.nu;
        let e_over_m = (1.0 + nu) * (1.0 - 2.0 * nu) / (1.0 - nu);
        let (l, w) = (self.length, self.width);
        l / ((l - 2.0 * w) + 2.0 * w * e_over_m) - 1.0
    }
    /// Expected axial force `E_u A ε` after `steps` steps (N).
    pub fn expected_force(&self, steps: usize) -> f64 {
        self.uniaxial_modulus() * self.width * self.width * self.strain(steps)
    }
    /// The meshed bar (`boundary[0]` fixed at `x = 0`, `boundary[1]` pulled at `x = length`).
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
        let face = |x: f64| (0..b.num_nodes()).filter(|&a| (b.rest[a].x - x).abs() < tol).collect::<Vec<_>>();
        let (fixed, pulled) = (face(0.0), face(self.length));
        b.boundary.push(PrescribedMotion::fixed(fixed));
        b.boundary.push(PrescribedMotion {
            nodes: pulled,
            center: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
            linear_velocity: Vector3::new(self.speed, 0.0, 0.0),
        });
        b
    }
    /// The initial world (no gravity).
    pub fn world(&self) -> World {
        let mut w = World::new();
        w.gravity = Vector3::zeros();
        w.deformables.push(self.bar());
        w
    }
    /// Elastic reaction on the fixed face at configuration `q` (N, +x when stretched).
    pub fn reaction(world: &World, q: &[f64]) -> f64 {
        let mut body = world.deformables[0].clone();
        for a in 0..body.num_nodes() {
            body.positions[a] = fem::node(world, q, 0, a);
        }
        let g = body.elastic_gradient();
        -body.boundary[0].nodes.iter().map(|&a| g[3 * a]).sum::<f64>()
    }
    /// Grades a trace (see the module doc).
    pub fn grade(&self, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        let expected = self.expected_force(scenario.steps);
        let tol = (FORCE_REL_TOL + self.stiffening()) * expected;
        if !trace_is_whole(scenario, trace) {
            return vec![unmeasured("axial_force", expected, tol), unmeasured("no_inversion", 1.0, 0.0)];
        }
        let world = &scenario.world;
        let force = Self::reaction(world, &trace.q[trace.q.len() - 1]);
        let min_ratio = trace.q.iter().map(|q| fem::min_volume_ratio(world, q, 0)).fold(f64::INFINITY, f64::min);
        let inv_err = if min_ratio > 0.0 { 0.0 } else { 1.0 - min_ratio };
        vec![
            OracleCheck::abs("axial_force", force, expected, tol),
            OracleCheck::with_error("no_inversion", min_ratio, 1.0, inv_err, 0.0),
        ]
    }
}

/// The `material_extension` case.
#[derive(Debug, Clone, Copy, Default)]
pub struct MaterialExtension;

impl CaseDef for MaterialExtension {
    type Params = MaterialExtensionParams;
    const NAME: &'static str = "material_extension";
    const SUMMARY: &'static str =
        "elastic FEM bar clamped at one end, pulled along its axis to 1 % strain (Macklin's material extension): reaction = E A eps";
    const DEFAULTS_TOML: &'static str = DEFAULTS;
    fn size_hint(&self, p: &MaterialExtensionParams) -> Option<harness::resources::ProblemSize> {
        let driver = format!("nx, ny, nz ({} x {} x {} cells)", p.nx, p.ny, p.nz);
        Some(fem::box_mesh_size(p.nx, p.ny, p.nz, p.steps(), &driver))
    }
    fn scenario(&self, p: &MaterialExtensionParams) -> Result<Scenario, CaseError> {
        let world = crate::checked(Self::NAME, p.world())?;
        Ok(Scenario { world, dt: p.dt, steps: p.steps(), margin: 0.01 * p.width, needs: fem::needs(false) })
    }
    fn grade(&self, p: &MaterialExtensionParams, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
        p.grade(scenario, trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::StepMetrics;
    use harness::{Case, Params};
    use rstest::rstest;

    #[test]
    fn defaults_build_and_every_parameter_is_in_the_toml() {
        let p = MaterialExtensionParams::default();
        let sc = crate::test_util::build(&MaterialExtension, &MaterialExtension.defaults()).unwrap();
        let b = &sc.world.deformables[0];
        assert_eq!((b.boundary[0].nodes.len(), b.boundary[1].nodes.len()), (4, 4));
        assert!((p.strain(p.steps()) - 0.01).abs() < 1e-12);
        assert!((p.expected_force(p.steps()) - 400.0).abs() < 1e-9);
        assert!((p.stiffening() - 0.1148).abs() < 1e-3, "{}", p.stiffening());
        let mut a: Vec<_> = MaterialExtension.defaults().0.keys().cloned().collect();
        let mut k: Vec<_> = Params::from_settings(&p).0.keys().cloned().collect();
        a.sort();
        k.sort();
        assert_eq!(a, k);
    }

    #[rstest]
    #[case("material", "neohookean", "material:")]
    #[case("E", "0", "E:")]
    #[case("nu", "0.5", "nu:")]
    #[case("length", "0.3", "length:")]
    #[case("nx", "0", "nx:")]
    #[case("speed", "1.0", "speed:")]
    fn bad_values_name_the_parameter(#[case] key: &str, #[case] raw: &str, #[case] msg: &str) {
        let mut p = MaterialExtension.defaults();
        p.set(key, raw, "material_extension").unwrap();
        let e = crate::test_util::build(&MaterialExtension, &p).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }

    /// A homogeneous stretch (lateral faces free) is the ARAP bar's exact quasi-static state; the
    /// oracle reads `E/(1+ν) A ε` from it. Without stretch it fails; a partial run is NaN.
    #[test]
    fn homogeneous_stretch_passes_for_arap_and_rest_fails() {
        let mut prm = MaterialExtension.defaults();
        prm.set("material", "arap", "material_extension").unwrap();
        let p: MaterialExtensionParams = prm.decode("material_extension").unwrap();
        let sc = crate::test_util::build(&MaterialExtension, &prm).unwrap();
        let (q0, v) = (sc.world.positions(), sc.world.velocities());
        let mut tr = Trace { dt: sc.dt, completed: true, q: vec![q0.clone()], v: vec![v.clone()], metrics: vec![] };
        for k in 1..=sc.steps {
            let eps = p.strain(k);
            let mut q = q0.clone();
            for i in 0..q.len() / 3 {
                q[3 * i] *= 1.0 + eps;
            }
            tr.q.push(q);
            tr.v.push(v.clone());
            tr.metrics.push(StepMetrics { t: k as f64 * sc.dt, ..Default::default() });
        }
        let checks = crate::test_util::oracle(&MaterialExtension, &prm, &sc, &tr);
        assert_eq!(crate::test_util::names(&checks), ["axial_force", "no_inversion"]);
        assert!(checks.iter().all(|c| c.pass), "{checks:?}");
        assert!((checks[0].measured / checks[0].expected - 1.0).abs() < 1e-2, "{checks:?}");
        let tol = (FORCE_REL_TOL + p.stiffening()) * checks[0].expected;
        assert!((checks[0].tolerance - tol).abs() < 1e-15 * tol, "{checks:?}");
        // the stretch only grows the elements: the smallest volume ratio is the start's 1
        assert!((checks[1].measured - 1.0).abs() < 1e-12 && checks[1].error == 0.0, "{checks:?}");
        // one state flattened (every x = 0: zero volume) or mirrored (x → −x: inverted) fails
        // no_inversion with the error 1 − min ratio
        for (scale, ratio) in [(0.0, 0.0), (-1.0, -1.0)] {
            let mut bad = tr.clone();
            bad.q[sc.steps / 2] = q0.clone();
            bad.q[sc.steps / 2].iter_mut().step_by(3).for_each(|x| *x *= scale);
            let c = &crate::test_util::oracle(&MaterialExtension, &prm, &sc, &bad)[1];
            assert!((c.measured - ratio).abs() < 1e-12 && !c.pass, "{c:?}");
            assert!((c.error - (1.0 - ratio)).abs() < 1e-12, "{c:?}");
        }
        let mut rest = tr.clone();
        *rest.q.last_mut().unwrap() = q0;
        assert!(!crate::test_util::oracle(&MaterialExtension, &prm, &sc, &rest)[0].pass);
        rest.completed = false;
        assert!(crate::test_util::oracle(&MaterialExtension, &prm, &sc, &rest).iter().all(|c| c.measured.is_nan()));
        // the default corotational bar stiffens at its clamped faces: the tolerance widens by `s`
        let prm = MaterialExtension.defaults();
        let p: MaterialExtensionParams = prm.decode("material_extension").unwrap();
        let sc = crate::test_util::build(&MaterialExtension, &prm).unwrap();
        assert!(p.stiffening() > 0.0);
        let c = &crate::test_util::oracle(&MaterialExtension, &prm, &sc, &rest)[0];
        let tol = (FORCE_REL_TOL + p.stiffening()) * p.expected_force(sc.steps);
        assert!((c.tolerance - tol).abs() < 1e-15 * tol, "{c:?} vs {tol}");
    }
}
