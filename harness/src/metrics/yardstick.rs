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
//! every iterate of every step as the solver hands it over ([`stop_yardstick`]): [`MODEL_NATMAP`]
//! for a solver of the contact model itself, [`MOMENTUM`] for a regularised model ([`StopMeasure`]).

use super::complementarity::natural_map_norms_with;
use super::momentum::{momentum_rel_of, momentum_rel_with};
use crate::contact::ContactSet;
pub use api::log::Iterate;
use api::{AnsweredModel, StepProblem, Yardstick};
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

/// The yardstick that stops a solver in the equal-accuracy mode.
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
}

impl StopMeasure {
    /// The measure for a solver answering `model`.
    pub fn of(model: AnsweredModel) -> Self {
        match model {
            AnsweredModel::RigidCoulomb => StopMeasure::ContactModel,
            AnsweredModel::Regularised { .. } => StopMeasure::Momentum,
            AnsweredModel::Relaxed { .. } => StopMeasure::Ccp,
        }
    }

    /// Its name in the records: the [`evaluate`] columns it reads.
    pub fn name(self) -> &'static str {
        match self {
            StopMeasure::ContactModel => "max(yardstick_model_natmap_rel, yardstick_momentum_rel)",
            StopMeasure::Momentum => MOMENTUM,
            StopMeasure::Ccp => "max(ccp_natmap_rel, yardstick_momentum_rel)",
        }
    }
}

/// `measure` on `problem` as a closure a stopping rule owns ([`api::StopRule`]): the numbers
/// [`evaluate`] writes in its columns, on any iterate, NaN for an iterate of the wrong size (or
/// when either part is NaN). Built once per step (it copies what it reads of the problem). Where
/// the contact blocks cannot be assembled, the natural map is the rigid one ([`NATMAP`]).
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
    let ccp = measure == StopMeasure::Ccp;
    let natmap: Yardstick = if blocks.assemble(problem).is_ok() {
        if ccp {
            Arc::new(move |v, imp, _| blocks.ccp_residual(v, imp) / scale)
        } else {
            Arc::new(move |v, imp, _| blocks.residuals(v, imp).1 / scale)
        }
    } else {
        let (contacts, dt) = (problem.contacts.clone(), problem.dt);
        Arc::new(move |v, imp, _| rigid_natmap(&contacts, dt, &q, ccp, v, imp))
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

/// The relative natural map of `(v, imp)` on rigid contacts, `u = J v + (φ0/dt) e_n`, where the
/// contact blocks cannot be assembled: De Saxcé's ([`NATMAP`]), or the CCP's (`ccp`: no shift,
/// `||λ − P_K(λ − u)||_2 / ||q||_2`). NaN for impulses of the wrong number.
pub(super) fn rigid_natmap(
    contacts: &ContactSet,
    dt: f64,
    q: &[[f64; 3]],
    ccp: bool,
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
    if !ccp {
        return natural_map_norms_with(contacts, imp, &u, q).rel_l2;
    }
    let mut sum = 0.0;
    for ((c, l), u) in contacts.contacts.iter().zip(imp).zip(&u) {
        sum += toolkit::cone_qp::natmap(*l, *u, c.mu).iter().map(|x| x * x).sum::<f64>();
    }
    sum.sqrt() / natmap_scale(q)
}
