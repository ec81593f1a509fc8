//! The interface of a canonical case: parameters -> [`Scenario`], and an oracle that grades a
//! finished run's [`Trace`].

use crate::model::World;
use crate::params::{ParamError, Params, Settings};
use crate::solver::Capabilities;
use records::StepMetrics;

/// A built scene ready to run.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Initial world.
    pub world: World,
    /// Time step (s).
    pub dt: f64,
    /// Number of steps.
    pub steps: usize,
    /// Contact detection margin floor (m): the stepper admits a contact feature whose gap is below
    /// this plus `dt` times its predicted approach speed ([`crate::geometry::detect_for_step`]).
    pub margin: f64,
    /// What a solver must support to run it.
    pub needs: Capabilities,
}

/// The states and metrics of a run, as the oracle sees them.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Time step (s).
    pub dt: f64,
    /// `q[k]` = positions after `k` steps (`q[0]` initial).
    pub q: Vec<Vec<f64>>,
    /// `v[k]` = velocities after `k` steps.
    pub v: Vec<Vec<f64>>,
    /// `metrics[k]` = metrics of step `k + 1` (from `q[k]` to `q[k+1]`).
    pub metrics: Vec<StepMetrics>,
    /// Whether the run completed all steps.
    pub completed: bool,
}

pub use records::OracleCheck;

/// Error building a case.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CaseError {
    /// A parameter is unknown or invalid.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The built world is invalid.
    #[error("case '{case}': {why}")]
    Invalid {
        /// Case name.
        case: String,
        /// What is wrong.
        why: String,
    },
}

/// A named variant of a case that the default suite runs beside the case's defaults, e.g. the
/// rigid-contact form of a scene whose default contact is compliant: label `NAME-SUFFIX`, the
/// defaults with `set` applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaseVariant {
    /// Label suffix (`rigid` gives the label `spring_cylinder-rigid`).
    pub suffix: &'static str,
    /// Parameter overrides as TOML text, top-level keys only (e.g. `contact = "rigid"`).
    pub set: &'static str,
    /// Why the variant is in the default suite (shown by `signorini list`).
    pub why: &'static str,
}

impl CaseVariant {
    /// The variant's label for case `name`.
    pub fn label(&self, name: &str) -> String {
        format!("{name}-{}", self.suffix)
    }

    /// The overrides as parameters (panics on invalid embedded TOML: a bug in the case).
    pub fn params(&self, name: &str) -> Params {
        Params::from_toml(self.set, &format!("variant '{}' of case '{name}'", self.suffix))
            .unwrap_or_else(|e| panic!("embedded variant is invalid: {e}"))
    }
}

/// The typed parameters of a case: a serde struct with `#[serde(deny_unknown_fields)]`, every
/// choice a serde enum, `Default` = the case's TOML defaults, and [`Settings::validate`] for ranges
/// and consistency (messages start with the field name).
pub trait CaseParams: Settings + Clone + Send + Sync + 'static {}

impl<T: Settings + Clone + Send + Sync + 'static> CaseParams for T {}

/// A canonical case with typed parameters. Implementations live in the `cases` crate, one file
/// per scene, with default parameters in a TOML file beside the code. Every `CaseDef` is a
/// [`Case`] (blanket impl): the parameters are decoded and validated once, in [`Case::decode`],
/// and the typed value is kept for the oracle.
pub trait CaseDef: Clone + Send + Sync + 'static {
    /// The parameter struct.
    type Params: CaseParams;
    /// Registry name.
    const NAME: &'static str;
    /// One-line description.
    const SUMMARY: &'static str;
    /// Default parameters as TOML text, top-level keys only (every key is a parameter, so every
    /// one can be overridden with `--set key=value`). Must decode into `Self::Params`.
    const DEFAULTS_TOML: &'static str;
    /// Variants the default suite runs beside the defaults (none by default).
    const VARIANTS: &'static [CaseVariant] = &[];
    /// Builds the scene from validated parameters.
    fn scenario(&self, p: &Self::Params) -> Result<Scenario, CaseError>;
    /// The scene's size computed from the parameters alone, before building it, for the
    /// runner's memory check ([`crate::resources`]). Cases whose build is itself large (meshes
    /// of `nx x ny x nz` cells) implement it; the default (`None`) leaves the check to the
    /// built scene.
    fn size_hint(&self, _p: &Self::Params) -> Option<api::ProblemSize> {
        None
    }
    /// Grades a run of `scenario` (built from `p`) against the case's analytic expectations.
    ///
    /// A trace that is not a whole run of `scenario` (not completed, or states missing; e.g.
    /// `Trace::default()`) must grade to the same checks as a whole one, each unmeasured (NaN,
    /// failing): the checks are then known without running ([`crate::runner::oracle_checks`]),
    /// and `signorini gate` refuses a completed record that lacks one of them.
    fn grade(&self, p: &Self::Params, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck>;
}

/// A canonical case behind a trait object, as the registry and the runner hold it. Implemented
/// for every [`CaseDef`]; the parameters cross this interface only as a flat [`Params`].
pub trait Case: Send + Sync {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// One-line description.
    fn summary(&self) -> &'static str;
    /// Default parameters.
    fn defaults(&self) -> Params;
    /// The default parameters' TOML text with its comments ([`CaseDef::DEFAULTS_TOML`]): each
    /// parameter's documentation (units, meaning, allowed values).
    fn defaults_text(&self) -> &'static str;
    /// Variants the default suite runs beside the defaults ([`CaseDef::VARIANTS`]).
    fn variants(&self) -> &'static [CaseVariant];
    /// Decodes and validates `params` (errors name the parameter), without building the scene.
    fn decode(&self, params: &Params) -> Result<Box<dyn DecodedCase>, CaseError>;
    /// Decodes `params` and builds the scene ([`Self::decode`], then [`DecodedCase::build`]).
    fn prepare(&self, params: &Params) -> Result<Box<dyn PreparedCase>, CaseError> {
        self.decode(params)?.build()
    }
}

/// A case whose parameters are decoded and validated, its scene not built yet: what resolving a
/// suite keeps of each case variant (the scene is built once per distinct parameters, later).
pub trait DecodedCase: Send + Sync {
    /// Registry name of the case.
    fn name(&self) -> &'static str;
    /// The typed parameters as a flat JSON object (what run records store and hash).
    fn params_json(&self) -> Params;
    /// [`CaseDef::size_hint`] of the parameters.
    fn size_hint(&self) -> Option<api::ProblemSize>;
    /// Builds the scene.
    fn build(&self) -> Result<Box<dyn PreparedCase>, CaseError>;
}

struct Decoded<D: CaseDef> {
    def: D,
    params: D::Params,
}

impl<D: CaseDef> DecodedCase for Decoded<D> {
    fn name(&self) -> &'static str {
        D::NAME
    }
    fn params_json(&self) -> Params {
        Params::from_settings(&self.params)
    }
    fn size_hint(&self) -> Option<api::ProblemSize> {
        self.def.size_hint(&self.params)
    }
    fn build(&self) -> Result<Box<dyn PreparedCase>, CaseError> {
        let scenario = self.def.scenario(&self.params)?;
        Ok(Box::new(Prepared { def: self.def.clone(), params: self.params.clone(), scenario }))
    }
}

/// A case with decoded parameters and its built scene, ready to grade runs.
pub trait PreparedCase: Send + Sync {
    /// Registry name of the case.
    fn name(&self) -> &'static str;
    /// The built scene.
    fn scenario(&self) -> &Scenario;
    /// The typed parameters as a flat JSON object (what run records store and hash).
    fn params_json(&self) -> Params;
    /// Grades a run of [`PreparedCase::scenario`].
    fn grade(&self, trace: &Trace) -> Vec<OracleCheck>;
}

struct Prepared<D: CaseDef> {
    def: D,
    params: D::Params,
    scenario: Scenario,
}

impl<D: CaseDef> PreparedCase for Prepared<D> {
    fn name(&self) -> &'static str {
        D::NAME
    }
    fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    fn params_json(&self) -> Params {
        Params::from_settings(&self.params)
    }
    fn grade(&self, trace: &Trace) -> Vec<OracleCheck> {
        self.def.grade(&self.params, &self.scenario, trace)
    }
}

impl<D: CaseDef> Case for D {
    fn name(&self) -> &'static str {
        D::NAME
    }
    fn summary(&self) -> &'static str {
        D::SUMMARY
    }
    fn defaults(&self) -> Params {
        Params::from_toml(D::DEFAULTS_TOML, &format!("defaults of case '{}'", D::NAME))
            .unwrap_or_else(|e| panic!("embedded defaults are invalid: {e}"))
    }
    fn defaults_text(&self) -> &'static str {
        D::DEFAULTS_TOML
    }
    fn variants(&self) -> &'static [CaseVariant] {
        D::VARIANTS
    }
    fn decode(&self, params: &Params) -> Result<Box<dyn DecodedCase>, CaseError> {
        Ok(Box::new(Decoded { def: self.clone(), params: params.decode(D::NAME)? }))
    }
}

impl Scenario {
    /// The size of this scenario: its DOFs, elements and steps; contacts are estimated as
    /// four per body or per boundary node (the speculative candidates of a settled scene).
    pub fn problem_size(&self, driver: &str) -> api::ProblemSize {
        let w = &self.world;
        let nodes: usize = w.deformables.iter().map(|d| d.positions.len()).sum();
        api::ProblemSize {
            dofs: (6 * w.bodies.len() + 3 * nodes) as f64,
            elements: w.deformables.iter().map(|d| d.tets.len()).sum::<usize>() as f64,
            contacts: 4.0 * (w.bodies.len() + nodes) as f64,
            steps: self.steps as f64,
            driver: driver.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::World;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Rigid,
        Compliant,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct P {
        kind: Kind,
        steps: i64,
        dt: f64,
    }
    impl Default for P {
        fn default() -> Self {
            P { kind: Kind::Rigid, steps: 3, dt: 0.01 }
        }
    }
    impl Settings for P {
        fn validate(&self) -> Result<(), crate::params::FieldError> {
            if self.steps < 1 {
                return Err(crate::params::FieldError::new("steps", format!("must be >= 1, got {}", self.steps)));
            }
            Ok(())
        }
    }

    #[derive(Clone)]
    struct Toy;
    impl CaseDef for Toy {
        type Params = P;
        const NAME: &'static str = "toy";
        const SUMMARY: &'static str = "nothing";
        const DEFAULTS_TOML: &'static str = "kind = \"rigid\"\nsteps = 3\ndt = 0.01";
        fn scenario(&self, p: &P) -> Result<Scenario, CaseError> {
            let needs = Capabilities { rigid_contact: p.kind == Kind::Rigid, ..Default::default() };
            Ok(Scenario { world: World::new(), dt: p.dt, steps: p.steps as usize, margin: 0.0, needs })
        }
        fn grade(&self, p: &P, scenario: &Scenario, trace: &Trace) -> Vec<OracleCheck> {
            let n = trace.metrics.len() as f64;
            vec![OracleCheck::abs("steps", n, p.steps as f64, 0.0), OracleCheck::abs("dt", scenario.dt, p.dt, 0.0)]
        }
    }

    #[test]
    fn prepare_decodes_once_and_keeps_the_typed_params() {
        let case: &dyn Case = &Toy;
        assert_eq!((case.name(), case.summary()), ("toy", "nothing"));
        let mut params = case.defaults();
        params.set("kind", "compliant", "toy").unwrap();
        let prepared = case.prepare(&params).unwrap();
        assert_eq!(prepared.name(), "toy");
        assert!(!prepared.scenario().needs.rigid_contact);
        assert_eq!(prepared.params_json(), params);
        assert_eq!(prepared.params_json().hash(), params.hash());
        let trace = Trace { metrics: vec![StepMetrics::default(); 3], ..Default::default() };
        assert!(prepared.grade(&trace).iter().all(|c| c.pass));
    }

    #[test]
    fn bad_choices_and_values_name_the_parameter() {
        let mut params = Toy.defaults();
        params.set("kind", "soft", "toy").unwrap();
        let e = Toy.prepare(&params).err().unwrap();
        let CaseError::Param(ParamError::BadValue { key, why, .. }) = &e else { panic!("{e}") };
        assert_eq!(key, "kind");
        assert!(why.starts_with("kind: unknown variant `soft`"), "{why}");
        let mut params = Toy.defaults();
        params.set("steps", "0", "toy").unwrap();
        let e = Toy.prepare(&params).err().unwrap().to_string();
        assert!(e.contains("parameter 'steps' of toy: steps: must be >= 1"), "{e}");
    }
}
