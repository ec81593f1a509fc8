//! One convergence yardstick for every solver. Each solver's own residual (PGS's impulse change,
//! SAP's scaled gradient, CANAL's AL residual, an interior point's gap) cannot be compared across
//! solvers; these can. A solver that opts in hands its current iterate to the iteration log every
//! iteration ([`crate::IterationLog::iterate`]); on the steps whose logs are kept, the stepper
//! evaluates on each iterate, after the step, the same solver-independent residuals that the step
//! metrics use for the returned solution (ContactBench's habit of computing its physical criteria
//! on every iterate):
//!
//! - [`NATMAP`]: the natural map of the rigid Coulomb NCP, `||F||_2 / ||q||_2` (the step metric
//!   `natmap_rel_l2`; `q = J v* + w`);
//! - [`MODEL_NATMAP`]: the natural map of each contact's own law (compliance included; equal to the
//!   first when every contact is rigid), same normalisation;
//! - [`MOMENTUM`]: Castro et al.'s momentum error, Eq. 32 (the step metric `momentum_rel`).
//!
//! Convergence figures draw [`NATMAP`] for every solver on the same step.
//!
//! The equal-accuracy mode ([`crate::accuracy`]) stops every solver on one of them, evaluated on
//! every iterate of every step as the solver hands it over ([`stop_yardstick`]), and grades its
//! answers on it: [`MODEL_NATMAP`] for a solver of the contact model itself, [`MOMENTUM`] for a
//! regularised model, the natural map of its own law for the CCP and the pyramid LCP, the
//! program's feasibility for a cone program ([`StopMeasure`]).

use super::complementarity::natural_map_norms_with;
use super::momentum::{momentum_rel_of, momentum_rel_with};
use crate::contact::ContactSet;
pub use api::log::Iterate;
use api::{AnsweredModel, Params, StepProblem, Yardstick};
use std::sync::Arc;
use toolkit::contact_blocks::ContactBlocks;

pub use records::yardstick::{MODEL_NATMAP, MOMENTUM, NATMAP};

/// The yardstick columns (`(name, values)`, one value per iterate) of `iterates` of `problem`.
/// An iterate of the wrong size gives NaN rather than a wrong number.
pub fn evaluate(problem: &StepProblem<'_>, iterates: &[Iterate]) -> Vec<(&'static str, Vec<f64>)> {
    let v_star = problem.free_velocity();
    let q = problem.contact_velocities(&v_star);
    let scale = natmap_scale(&q);
    let mut blocks = ContactBlocks::default();
    let blocks = blocks.assemble(problem).ok().map(|_| blocks);
    let (mut natmap, mut model, mut momentum) = (vec![], vec![], vec![]);
    for it in iterates {
        if it.v.len() != problem.nv() || it.impulses.len() != problem.nc() {
            natmap.push(f64::NAN);
            model.push(f64::NAN);
            momentum.push(f64::NAN);
            continue;
        }
        let u = problem.contact_velocities(&it.v);
        natmap.push(natural_map_norms_with(problem.contacts, &it.impulses, &u, &q).rel_l2);
        model.push(blocks.as_ref().map_or(f64::NAN, |b| b.residuals(&it.v, &it.impulses).1 / scale));
        momentum.push(momentum_rel_with(problem, &it.v, &it.impulses, &it.bilateral, &v_star));
    }
    vec![(NATMAP, natmap), (MODEL_NATMAP, model), (MOMENTUM, momentum)]
}

/// `||q||_2`, the normalisation of the natural maps (1 when `q` vanishes, as for `natmap_rel_l2`).
fn natmap_scale(q: &[[f64; 3]]) -> f64 {
    let nq = q.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    if nq <= f64::EPSILON {
        1.0
    } else {
        nq
    }
}

/// The yardstick that stops a solver in the equal-accuracy mode, and grades its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMeasure {
    /// For a solver of the contact model itself: the larger of [`MODEL_NATMAP`] (the natural map
    /// of each contact's own law, `||F||_2 / ||q||_2`; the rigid natural map where every contact
    /// is rigid) and [`MOMENTUM`] (Castro et al.'s Eq. 32). The natural map grades the impulses
    /// against the velocity the solver hands over, so it alone would accept an iterate whose
    /// velocity does not follow from its impulses (nsn's first iterate, `λ = 0` at the previous
    /// step's velocity, reads 0 on a resting pile); a solver that keeps `M (v - v*) = Jᵀ λ` at
    /// every iterate (PGS, CANAL) has its momentum error at round-off, and this is its natural map.
    ContactModel,
    /// [`MOMENTUM`] alone, for a regularised model whose impulses follow from its velocity by its
    /// own law (SAP's `γ(v)`): the gradient of its convex cost, its momentum balance, is its
    /// model's only residual (the rigid natural map is not zero there by design).
    Momentum,
    /// For Anitescu's convex relaxation (the CCP solvers): the larger of its natural map
    /// `||λ − P_K(λ − ũ)||_2 / ||q||_2` (no De Saxcé shift, each contact's compliance included;
    /// toolkit `ContactBlocks::ccp_residual`) and [`MOMENTUM`]. The harness computes it from the
    /// iterate as it does the rigid one; the rigid error stays in each step's `natmap_rel_l2`.
    Ccp,
    /// For the pyramid LCP with `facets` facets (lcp_pgs, lcp_lemke): the larger of the natural
    /// map of its contact law, `||F_d(λ, ũ)||_2 / ||q||_2` (`kernels::pyramid::natmap`: the
    /// normal NCP and the friction polygon's variational inequality, each contact's compliance
    /// included; toolkit `ContactBlocks::pyramid_residual`), and [`MOMENTUM`].
    Pyramid {
        /// Facets of the friction polygon (the solver's setting).
        facets: usize,
    },
    /// For the minimiser of a cone program over the contact law (drumwright): the larger of the
    /// program's infeasibility `||(max(0, −ũ_n), λ − P_K(λ), G v − v̂ + r γ)||_2 / ||q||_2`
    /// (toolkit `ContactBlocks::program_infeasibility`) and [`MOMENTUM`], the program's equality
    /// rows. Its optimality is not measured: it needs the program's multipliers, which an answer
    /// does not carry (docs/equal-accuracy.md).
    ConeProgram,
}

/// Why [`StopMeasure::of`] cannot build a solver's measure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the pyramid model reads its facets from setting '{setting}', which holds no integer of at least 3 ({found})")]
pub struct NoFacets {
    /// The setting the model names.
    pub setting: &'static str,
    /// What the settings hold there.
    pub found: String,
}

impl StopMeasure {
    /// The measure for a solver answering `model` with the settings `params` (the pyramid's
    /// facet count is one of them).
    pub fn of(model: AnsweredModel, params: &Params) -> Result<Self, NoFacets> {
        Ok(match model {
            AnsweredModel::RigidCoulomb => StopMeasure::ContactModel,
            AnsweredModel::Regularised { .. } => StopMeasure::Momentum,
            AnsweredModel::Relaxed { .. } => StopMeasure::Ccp,
            AnsweredModel::ConeProgram { .. } => StopMeasure::ConeProgram,
            AnsweredModel::Pyramid { facets, .. } => {
                let value = params.0.get(facets);
                match value.and_then(|v| v.as_u64()) {
                    Some(d) if d >= 3 => StopMeasure::Pyramid { facets: d as usize },
                    _ => {
                        return Err(NoFacets {
                            setting: facets,
                            found: value.map_or("nothing".to_string(), |v| v.to_string()),
                        })
                    }
                }
            }
        })
    }

    /// Its name in the records: the [`evaluate`] columns it reads.
    pub fn name(self) -> String {
        match self {
            StopMeasure::ContactModel => "max(yardstick_model_natmap_rel, yardstick_momentum_rel)".into(),
            StopMeasure::Momentum => MOMENTUM.into(),
            StopMeasure::Ccp => "max(ccp_natmap_rel, yardstick_momentum_rel)".into(),
            StopMeasure::Pyramid { facets } => format!("max(pyramid{facets}_natmap_rel, yardstick_momentum_rel)"),
            StopMeasure::ConeProgram => "max(program_infeasibility_rel, yardstick_momentum_rel)".into(),
        }
    }
}

/// `measure` on `problem` as a closure a stopping rule owns ([`api::StopRule`]): the numbers
/// [`evaluate`] writes in its columns, on any iterate, NaN for an iterate of the wrong size (or
/// when either part is NaN). Built once per step (it copies what it reads of the problem). Where
/// the contact blocks cannot be assembled, the contact law is measured on rigid contacts
/// ([`rigid_natmap`]).
pub fn stop_yardstick(problem: &StepProblem<'_>, measure: StopMeasure) -> Yardstick {
    let (nv, nc) = (problem.nv(), problem.nc());
    let v_star = problem.free_velocity();
    let (mass, contacts, bilateral) = (problem.mass.clone(), problem.contacts.clone(), problem.bilateral.clone());
    let momentum = move |v: &[f64], imp: &[[f64; 3]], g: &[f64]| {
        if v.len() == nv && imp.len() == nc {
            momentum_rel_of(&mass, &contacts, &bilateral, v, imp, g, &v_star)
        } else {
            f64::NAN
        }
    };
    if measure == StopMeasure::Momentum {
        return Arc::new(momentum);
    }
    let q = problem.contact_velocities(&problem.free_velocity());
    let scale = natmap_scale(&q);
    let mut blocks = ContactBlocks::default();
    let natmap: Yardstick = if blocks.assemble(problem).is_ok() {
        match measure {
            StopMeasure::Ccp => Arc::new(move |v, imp, _| blocks.ccp_residual(v, imp) / scale),
            StopMeasure::Pyramid { facets } => {
                Arc::new(move |v, imp, _| blocks.pyramid_residual(v, imp, facets) / scale)
            }
            StopMeasure::ConeProgram => Arc::new(move |v, imp, g| blocks.program_infeasibility(v, imp, g) / scale),
            StopMeasure::ContactModel | StopMeasure::Momentum => {
                Arc::new(move |v, imp, _| blocks.residuals(v, imp).1 / scale)
            }
        }
    } else {
        let (contacts, dt) = (problem.contacts.clone(), problem.dt);
        Arc::new(move |v, imp, _| rigid_natmap(&contacts, dt, &q, measure, v, imp))
    };
    Arc::new(move |v, imp, g| {
        let m = momentum(v, imp, g);
        if m.is_nan() {
            return f64::NAN;
        }
        let n = natmap(v, imp, g);
        if n.is_nan() {
            f64::NAN
        } else {
            n.max(m)
        }
    })
}

/// The relative contact-law residual of `(v, imp)` on rigid contacts, `u = J v + (φ0/dt) e_n`,
/// where the contact blocks cannot be assembled (`||·||_2 / ||q||_2`): De Saxcé's natural map
/// ([`NATMAP`]; [`StopMeasure::ContactModel`] and [`StopMeasure::Momentum`]), the CCP's
/// `λ − P_K(λ − u)`, the pyramid's, or the cone program's infeasibility (bilateral rows left
/// out). NaN for impulses of the wrong number.
pub(super) fn rigid_natmap(
    contacts: &ContactSet,
    dt: f64,
    q: &[[f64; 3]],
    measure: StopMeasure,
    v: &[f64],
    imp: &[[f64; 3]],
) -> f64 {
    if imp.len() != contacts.len() {
        return f64::NAN;
    }
    let mut u = contacts.velocities(v);
    for (ui, c) in u.iter_mut().zip(&contacts.contacts) {
        ui[0] += c.gap / dt;
    }
    let law: fn([f64; 3], [f64; 3], f64, usize) -> [f64; 3] = match measure {
        StopMeasure::ContactModel | StopMeasure::Momentum => {
            return natural_map_norms_with(contacts, imp, &u, q).rel_l2;
        }
        StopMeasure::Ccp => |l, u, mu, _| kernels::contact_local::ccp_natmap(l, u, mu),
        StopMeasure::Pyramid { .. } => kernels::pyramid::natmap,
        StopMeasure::ConeProgram => |l, u, mu, _| {
            let p = kernels::cone::project(l, mu);
            [(-u[0]).max(0.0).hypot(l[0] - p[0]), l[1] - p[1], l[2] - p[2]]
        },
    };
    let facets = if let StopMeasure::Pyramid { facets } = measure { facets } else { 0 };
    let mut sum = 0.0;
    for ((c, l), u) in contacts.contacts.iter().zip(imp).zip(&u) {
        sum += law(*l, *u, c.mu, facets).iter().map(|x| x * x).sum::<f64>();
    }
    sum.sqrt() / natmap_scale(q)
}
