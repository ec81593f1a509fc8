//! The canonical cases of signorini: parameterised scene builders with analytic oracles.
//!
//! Each case is one module with its default parameters in a TOML file beside the code (every
//! parameter is a top-level key there, so every one can be overridden with `--set key=value`).
//! All 21, in registry order ([`all`]); each module doc defines its checks:
//!
//! | name                 | scene                                                                                 | oracle checks                                                                     |
//! |----------------------|---------------------------------------------------------------------------------------|-----------------------------------------------------------------------------------|
//! | `slope`              | box or sphere on an inclined plane                                                    | `slides`, `acceleration`, `creep_speed`, `glide_gap`                              |
//! | `spring_cylinder`    | cylinder on the ground pulled by a spring (SAP §VI-B)                                 | `e_q`, `frequency`, `energy_band` / `energy_gain`                                 |
//! | `sphere_stack`       | a vertical stack of spheres resting on the ground                                     | `max_penetration`, `top_drift`, `weight_ratio`                                    |
//! | `clutter`            | seeded spheres and boxes dropped into a container (SAP §VI-C)                         | `max_penetration`, `contained`, `settled_ke`                                      |
//! | `pizza_saver`        | flat box on 4 corners twisted by a torque (Drake)                                     | `regime`, `friction_per_contact`, `slip`, `angular_acceleration`, `push_velocity` |
//! | `pendulum`           | pendulum on a stiff joint, optional range-of-motion stop (Drumwright Figs. 4, 6)      | `drift`, `theta_end` (no stop)                                                    |
//! | `ramp_feet`          | box on four corner feet on a 15° ramp (Drumwright Fig. 9)                             | `distance`, `normal_force_peak`                                                   |
//! | `winkler_cube`       | rigid cube on a Winkler foundation, circling top load (Drumwright §5.5)               | `heave`, `tilt_error`, `contact_fraction`                                         |
//! | `spring_mass_damper` | one mass on a stiff spring-damper joint (Drumwright §3)                               | `spectral_radius`, `amplitude_ratio`, `stable`                                    |
//! | `twisting_bar`       | elastic FEM bar twisted by its end faces (Zeng Fig. 9)                                | `end_rotation`, `no_inversion`, `energy_balance`                                  |
//! | `elastic_slope`      | stiff elastic FEM cube on an inclined plane (Zeng Fig. 7)                             | `slides`, `acceleration`, `creep_speed`                                           |
//! | `heavy_stack`        | stack with mass ratio 4096:1, heavy or light on top (Macklin Fig. 17)                 | `max_penetration`, `top_drift`, `weight_ratio`                                    |
//! | `box_in_hole`        | box peg in a square hole of static boxes (Lee et al. §VII-A)                          | `max_penetration`, `weight_ratio`, `rest_speed`, `contained`                      |
//! | `dish_stack`         | light plates under a heavy pot, 50:1 (Lee et al. §VII-B)                              | `max_penetration`, `top_drift`, `weight_ratio`                                    |
//! | `sphere_pour`        | small dense spheres poured into a container (Lee et al. §VII-C)                       | `max_penetration`, `contained`                                                    |
//! | `arch`               | corbelled arch of 20 boxes (Macklin Fig. 14)                                          | `max_displacement`, `weight_ratio`                                                |
//! | `robots`             | quadruped-like robots of boxes and hinges dropped on the floor (Lee et al. Table III) | `max_penetration`, `weight_ratio`, `rest_speed`, `joint_drift`                    |
//! | `jointed_beam`       | chain of rigid links on hinges released horizontal (Macklin)                          | `joint_violation`, `energy`                                                       |
//! | `material_extension` | elastic FEM bar clamped and pulled to 1 % strain (Macklin Fig. 13)                    | `axial_force`, `no_inversion`                                                     |
//! | `table_pile`         | non-convex tables (5-box compounds) dropped into a pile (Macklin Table 2)             | `max_penetration`, `tunnelling_depth`, `settled_speed`                            |
//! | `slope_yaw`          | box sliding on a slope turned about its normal (friction isotropy)                    | `acceleration`, `lateral_acceleration`                                            |
//!
//! # Shared acceptance levels
//!
//! The oracles compare a run against closed-form physics. Their tolerances are built from the
//! discretisation (time step `dt`, gravity `g`, loads, the known behaviour of symplectic Euler)
//! and from three accuracy levels that the workbench asks of any converged solver. They are stated
//! once here so that every case uses the same ones and none is tuned per case or per solver:
//!
//! * [`IMPULSE_REL_TOL`] = 1e-3: contact impulses must be right to 0.1 % of the impulse the physics
//!   needs (e.g. the weight `m g dt` a resting contact carries per step). An error of that size in
//!   an impulse changes an acceleration by `1e-3 g`.
//! * [`CREEP_REL_TOL`] = 1e-2: a sticking contact may creep (regularised friction, an unconverged
//!   iterate) at most at 1 % of the velocity gravity would add in one step, `g dt`. Creep is a
//!   steady per-step residual (each step starts from the previous velocity and friction must cancel
//!   the new `g dt` again), so it does not accumulate; 1 % of `g dt` is `9.8e-4 m/s` at
//!   `dt = 0.01 s`. SAP's regularised stiction, `v_s <= mu sigma w m g dt` with `sigma = 1e-3`
//!   (Castro et al. Eq. 31), is well inside for `w m` up to about 10.
//! * [`PENETRATION_REL_TOL`] = 0.1: a velocity-level rigid-contact scheme moves bodies by `g dt^2`
//!   per step under gravity; it may leave a penetration of at most 10 % of that per unit of load
//!   carried (the load factor being the contact's normal impulse over the impulse that would stop
//!   the lighter side's own weight). For reference, SAP's near-rigid regularisation rests at about
//!   `beta^2 w m (1 + tau_d/dt) / (4 pi^2) = 0.04 .. 0.09` of that (solvers/src/sap/README.md §9), so it is
//!   inside, but not by much.
//!
//! # Traces the oracles accept
//!
//! An oracle reads `q`/`v` after every step and the per-step [`harness::StepMetrics`]. If the run
//! did not complete, or the trace does not have `steps + 1` states, every check is reported with a
//! NaN measurement (and therefore fails); a partial run is never graded as if it were whole.

pub mod arch;
pub mod box_in_hole;
pub mod clutter;
pub mod dish_stack;
pub mod elastic_slope;
pub mod energy_balance;
pub mod fem;
pub mod heavy_stack;
pub mod jointed_beam;
pub mod material_extension;
pub mod pendulum;
pub mod pizza_saver;
pub mod ramp_feet;
pub mod robots;
pub mod slope;
pub mod slope_yaw;
pub mod sphere_pour;
pub mod sphere_stack;
pub mod spring_cylinder;
pub mod spring_mass_damper;
pub mod table_pile;
pub mod twisting_bar;
pub mod winkler_cube;

mod resting;
#[cfg(test)]
mod test_util;

pub use arch::{Arch, ArchParams};
pub use box_in_hole::{BoxInHole, BoxInHoleParams};
pub use clutter::{Clutter, ClutterParams, SplitMix64};
pub use dish_stack::{DishStack, DishStackParams};
pub use elastic_slope::{ElasticSlope, ElasticSlopeParams};
pub use heavy_stack::{HeavyStack, HeavyStackParams};
pub use jointed_beam::{JointedBeam, JointedBeamParams};
pub use material_extension::{ExtensionMaterial, MaterialExtension, MaterialExtensionParams};
pub use pendulum::{Pendulum, PendulumJoint, PendulumLimit, PendulumParams};
pub use pizza_saver::{PizzaSaver, PizzaSaverParams};
pub use ramp_feet::{RampFeet, RampFeetParams};
pub use robots::{Robots, RobotsParams};
pub use slope::{Slope, SlopeParams};
pub use slope_yaw::{SlopeYaw, SlopeYawParams};
pub use sphere_pour::{SpherePour, SpherePourParams};
pub use sphere_stack::{SphereStack, SphereStackParams};
pub use spring_cylinder::{SpringCylinder, SpringCylinderParams};
pub use spring_mass_damper::{SpringMassDamper, SpringMassDamperParams};
pub use table_pile::{TablePile, TablePileParams};
pub use twisting_bar::{TwistingBar, TwistingBarParams};
pub use winkler_cube::{WinklerCube, WinklerCubeParams};

use harness::model::Material;
use harness::{Case, OracleCheck, Params, Scenario, Trace};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Relative accuracy asked of contact impulses (see the crate doc).
pub const IMPULSE_REL_TOL: f64 = 1e-3;
/// Largest accepted stiction creep as a fraction of `g dt` (see the crate doc).
pub const CREEP_REL_TOL: f64 = 1e-2;
/// Largest accepted rigid-contact penetration as a fraction of `g dt^2` per unit load (see the
/// crate doc).
pub const PENETRATION_REL_TOL: f64 = 0.1;

/// All canonical cases, in registry order (the order of the table in the crate doc).
pub fn all() -> Vec<Box<dyn Case>> {
    vec![
        Box::new(Slope),
        Box::new(SpringCylinder),
        Box::new(SphereStack),
        Box::new(Clutter),
        Box::new(PizzaSaver),
        Box::new(Pendulum),
        Box::new(RampFeet),
        Box::new(WinklerCube),
        Box::new(SpringMassDamper),
        Box::new(TwistingBar),
        Box::new(ElasticSlope),
        Box::new(HeavyStack),
        Box::new(BoxInHole),
        Box::new(DishStack),
        Box::new(SpherePour),
        Box::new(Arch),
        Box::new(Robots),
        Box::new(JointedBeam),
        Box::new(MaterialExtension),
        Box::new(TablePile),
        Box::new(SlopeYaw),
    ]
}

/// The world a case built, checked: the shared tail of every `CaseDef::scenario` (a world that fails
/// [`harness::model::World::validate`] is reported as `CaseError::Invalid` naming the case).
pub(crate) fn checked(case: &str, world: harness::model::World) -> Result<harness::model::World, harness::CaseError> {
    world.validate().map_err(|e| harness::CaseError::Invalid { case: case.into(), why: e.to_string() })?;
    Ok(world)
}

/// Decodes a case's embedded default TOML straight into its parameter struct (used by `Default`).
/// The text is compiled in and covered by tests, so a failure is a bug in this crate.
pub(crate) fn default_struct<T: DeserializeOwned>(text: &str, source: &str) -> T {
    let p = Params::from_toml(text, source).unwrap_or_else(|e| panic!("embedded defaults are invalid: {e}"));
    serde_json::from_value(serde_json::Value::Object(p.0))
        .unwrap_or_else(|e| panic!("embedded defaults {source} do not match the parameter struct: {e}"))
}

/// Validation helpers: each names the field it checks ([`harness::FieldError`]).
pub(crate) mod check {
    use harness::FieldError;

    /// `v` finite.
    pub fn finite(name: &str, v: f64) -> Result<(), FieldError> {
        if v.is_finite() {
            Ok(())
        } else {
            Err(FieldError::new(name, format!("must be finite, got {v}")))
        }
    }
    /// `v > 0` and finite.
    pub fn positive(name: &str, v: f64) -> Result<(), FieldError> {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(FieldError::new(name, format!("must be > 0 and finite, got {v}")))
        }
    }
    /// `v >= 0` and finite.
    pub fn non_negative(name: &str, v: f64) -> Result<(), FieldError> {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(FieldError::new(name, format!("must be >= 0 and finite, got {v}")))
        }
    }
    /// Most steps a case may ask for.
    pub const MAX_STEPS: f64 = 1e7;
    /// Fewest steps a run may have: `dt` must divide the duration into at least two steps (one
    /// step of the whole duration, `dt = 2` with `duration = 1`, is not a simulation the oracles
    /// can grade: there is no motion after the first contact to measure).
    pub const MIN_STEPS: f64 = 2.0;
    /// `dt > 0`, `duration > 0` and `MIN_STEPS <= round(duration / dt) <= MAX_STEPS`.
    pub fn time_grid(dt: f64, duration: f64) -> Result<(), FieldError> {
        positive("dt", dt)?;
        positive("duration", duration)?;
        let n = (duration / dt).round();
        if n < MIN_STEPS {
            return Err(harness::FieldError::new(
                "duration",
                format!(
                    "must be at least {MIN_STEPS} steps of dt = {dt} (round(duration / dt) = {n}), got {duration}; \
                     lower dt or raise duration"
                ),
            ));
        }
        if n > MAX_STEPS {
            return Err(harness::FieldError::new(
                "duration",
                format!("must be at most {MAX_STEPS} steps of dt = {dt}, got {duration}"),
            ));
        }
        Ok(())
    }
}

/// Contact model option shared by the cases: `contact = "rigid" | "compliant"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContactModel {
    /// Rigid (non-penetration) contact.
    Rigid,
    /// Compliant contact with stiffness `k` and dissipation time `tau_d`.
    Compliant,
}

/// Body shape option of the cases with one kind of rigid body: `shape = "box" | "sphere"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyShape {
    /// A box (cube).
    Box,
    /// A sphere.
    Sphere,
}

impl BodyShape {
    /// The parameter's spelling (`"box"` or `"sphere"`).
    pub fn name(self) -> &'static str {
        match self {
            BodyShape::Box => "box",
            BodyShape::Sphere => "sphere",
        }
    }
}

impl ContactModel {
    /// The material of every collider of a case.
    pub fn material(self, mu: f64, k: f64, tau_d: f64) -> Material {
        match self {
            ContactModel::Rigid => Material::rigid(mu),
            ContactModel::Compliant => Material::compliant(mu, k, tau_d),
        }
    }

    /// What a solver must support for this contact model (rigid bodies always).
    pub fn needs(self) -> harness::Capabilities {
        harness::Capabilities {
            rigid_bodies: true,
            rigid_contact: self == ContactModel::Rigid,
            compliant_contact: self == ContactModel::Compliant,
            ..Default::default()
        }
    }
}

/// Whether `trace` is a whole run of `scenario`: completed, with `steps + 1` states of the right
/// sizes and `steps` metrics. `q` holds 7 numbers per rigid body and 3 per deformable node
/// ([`harness::model::World::positions`]).
pub(crate) fn trace_is_whole(scenario: &Scenario, trace: &Trace) -> bool {
    let (nq, nv) = (scenario.world.positions().len(), scenario.world.velocities().len());
    trace.completed
        && trace.q.len() == scenario.steps + 1
        && trace.v.len() == scenario.steps + 1
        && trace.metrics.len() == scenario.steps
        && trace.q.iter().all(|q| q.len() == nq)
        && trace.v.iter().all(|v| v.len() == nv)
}

/// A check that could not be measured: NaN measurement, so it fails.
pub(crate) fn unmeasured(name: &str, expected: f64, tolerance: f64) -> OracleCheck {
    OracleCheck::with_error(name, f64::NAN, expected, f64::NAN, tolerance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_are_the_canonical_ones() {
        let names: Vec<_> = all().iter().map(|c| c.name()).collect();
        assert_eq!(
            names,
            [
                "slope",
                "spring_cylinder",
                "sphere_stack",
                "clutter",
                "pizza_saver",
                "pendulum",
                "ramp_feet",
                "winkler_cube",
                "spring_mass_damper",
                "twisting_bar",
                "elastic_slope",
                "heavy_stack",
                "box_in_hole",
                "dish_stack",
                "sphere_pour",
                "arch",
                "robots",
                "jointed_beam",
                "material_extension",
                "table_pile",
                "slope_yaw"
            ]
        );
        for c in all() {
            assert!(!c.summary().is_empty());
        }
    }

    /// The default suite's variants: the three cases whose default contact is compliant have a
    /// rigid-contact variant (issue 18), each builds, changes only what it says and asks for
    /// rigid contact instead of compliant contact.
    #[test]
    fn compliant_cases_have_a_rigid_variant_that_builds() {
        let mut labels = vec![];
        for c in all() {
            for v in c.variants().iter().filter(|v| v.suffix == "rigid") {
                let mut params = c.defaults();
                let set = v.params(c.name());
                for (k, val) in &set.0 {
                    assert!(params.0.contains_key(k), "{}: variant sets unknown key {k}", v.label(c.name()));
                    params.0.insert(k.clone(), val.clone());
                }
                assert_ne!(params, c.defaults(), "{} equals the defaults", v.label(c.name()));
                let default_needs = c.prepare(&c.defaults()).unwrap().scenario().needs;
                let needs = c.prepare(&params).unwrap().scenario().needs;
                assert!(default_needs.compliant_contact && !default_needs.rigid_contact);
                assert!(needs.rigid_contact && !needs.compliant_contact, "{}", v.label(c.name()));
                labels.push(v.label(c.name()));
            }
        }
        assert_eq!(labels, ["spring_cylinder-rigid", "clutter-rigid", "pizza_saver-rigid"]);
    }

    /// What each case asks of a solver (checked against its capabilities before a run, so a
    /// field missing here lets a solver run a scene it cannot handle): rigid bodies where the
    /// scene has them, the contact model its colliders use, joints, deformable bodies.
    #[test]
    fn every_case_needs_what_its_scene_holds() {
        use harness::Capabilities as C;
        let d = C::default;
        let rigid = C { rigid_bodies: true, rigid_contact: true, ..d() };
        let compliant = C { rigid_bodies: true, compliant_contact: true, ..d() };
        let jointed = C { rigid_bodies: true, bilateral_constraints: true, ..d() };
        let fem = C { deformable_bodies: true, rigid_contact: true, ..d() };
        type Overrides = &'static [(&'static str, &'static str)];
        let want: [(&str, Overrides, C); 26] = [
            ("slope", &[], rigid),
            ("spring_cylinder", &[], compliant),
            ("spring_cylinder", &[("contact", "rigid")], rigid),
            ("sphere_stack", &[], rigid),
            ("clutter", &[], compliant),
            ("clutter", &[("contact", "rigid")], rigid),
            ("pizza_saver", &[], compliant),
            ("pendulum", &[], jointed),
            ("pendulum", &[("limit", "stop")], C { compliant_contact: true, ..jointed }),
            ("ramp_feet", &[], compliant),
            ("winkler_cube", &[], compliant),
            ("spring_mass_damper", &[], jointed),
            ("twisting_bar", &[], C { deformable_bodies: true, ..d() }),
            ("elastic_slope", &[], fem),
            ("heavy_stack", &[], rigid),
            ("box_in_hole", &[], rigid),
            ("dish_stack", &[], rigid),
            ("sphere_pour", &[], rigid),
            ("arch", &[], rigid),
            ("robots", &[], C { rigid_contact: true, ..jointed }),
            ("jointed_beam", &[], jointed),
            ("jointed_beam", &[("bending_stiffness", "250")], jointed),
            ("material_extension", &[], C { deformable_bodies: true, ..d() }),
            ("table_pile", &[], rigid),
            ("slope_yaw", &[], rigid),
            ("pizza_saver", &[("contact", "rigid")], rigid),
        ];
        for (name, set, needs) in want {
            let case = all().into_iter().find(|c| c.name() == name).unwrap();
            let params = crate::test_util::params(&*case, set);
            assert_eq!(case.prepare(&params).unwrap().scenario().needs, needs, "{name} {set:?}");
        }
    }

    #[test]
    fn the_crate_doc_table_lists_every_case_in_registry_order() {
        let doc = include_str!("lib.rs");
        let rows: Vec<&str> =
            doc.lines().filter_map(|l| l.strip_prefix("//! | `")).filter_map(|l| l.split('`').next()).collect();
        let names: Vec<_> = all().iter().map(|c| c.name()).collect();
        assert_eq!(rows, names);
    }

    #[test]
    fn validation_messages_name_the_field() {
        assert_eq!(check::positive("mass", -1.0).unwrap_err().to_string(), "mass: must be > 0 and finite, got -1");
        assert_eq!(check::non_negative("mu", -1.0).unwrap_err().to_string(), "mu: must be >= 0 and finite, got -1");
        assert!(check::non_negative("mu", f64::NAN).unwrap_err().to_string().starts_with("mu:"));
        assert!(check::finite("x0", f64::INFINITY).unwrap_err().to_string().starts_with("x0:"));
        assert!(check::time_grid(0.01, 0.001).unwrap_err().to_string().starts_with("duration:"));
        assert!(check::time_grid(0.0, 1.0).unwrap_err().to_string().starts_with("dt:"));
        assert!(check::time_grid(1e-9, 1e3).unwrap_err().to_string().starts_with("duration:"));
        assert!(check::time_grid(0.01, 1.0).is_ok());
        // one step of the whole run (dt = 2, duration = 1 ran one 2 s step) is refused; two pass
        let e = check::time_grid(2.0, 1.0).unwrap_err().to_string();
        assert!(e.starts_with("duration: must be at least 2 steps of dt = 2"), "{e}");
        assert!(check::time_grid(0.01, 0.01).is_err());
        assert!(check::time_grid(0.01, 0.02).is_ok());
    }
}
