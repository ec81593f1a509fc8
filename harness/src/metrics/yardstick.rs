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

use super::complementarity::natural_map_norms_with;
use super::momentum::momentum_rel_with;
pub use api::log::Iterate;
use api::StepProblem;
use toolkit::contact_blocks::ContactBlocks;

pub use records::yardstick::{MODEL_NATMAP, MOMENTUM, NATMAP};

/// The yardstick columns (`(name, values)`, one value per iterate) of `iterates` of `problem`.
/// An iterate of the wrong size gives NaN rather than a wrong number.
pub fn evaluate(problem: &StepProblem<'_>, iterates: &[Iterate]) -> Vec<(&'static str, Vec<f64>)> {
    let v_star = problem.free_velocity();
    let q = problem.contact_velocities(&v_star);
    let nq = q.iter().flatten().map(|x| x * x).sum::<f64>().sqrt();
    let scale = if nq <= f64::EPSILON { 1.0 } else { nq };
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
