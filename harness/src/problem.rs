//! A world's step problem: the solver API's [`StepProblem`] (re-exported here) assembled from a
//! [`World`] at its current state, with the world's [`WorldEval`] behind it.

use crate::contact::ContactSet;
use crate::eval::WorldEval;
use crate::model::World;
pub use api::problem::*;
use api::SolveError;

impl World {
    /// Assembles the problem of one step at the world's current state. Fails if the mass matrix
    /// is not positive definite.
    pub fn step_problem<'a>(
        &'a self,
        contacts: &'a ContactSet,
        dt: f64,
        warm_start: Option<&'a WarmStart>,
    ) -> Result<StepProblem<'a>, SolveError> {
        let mut mass = self.mass_matrix();
        mass.factor().map_err(|e| SolveError::Factorization { what: format!("mass matrix: {e}") })?;
        let elastic_gradient = (!self.deformables.is_empty()).then(|| self.elastic_gradient());
        let parts = StepProblemParts {
            dt,
            contacts,
            warm_start,
            layout: self.layout(),
            q0: self.positions(),
            v0: self.velocities(),
            mass,
            forces: self.forces_with_gradient(elastic_gradient.as_deref()),
            stiffness: self.force_stiffness(),
            bilateral: self.bilateral_rows(),
            elastic_forces: elastic_gradient.map(|g| g.into_iter().map(|x| -x).collect()),
            prescribed: self.prescribed_velocities(dt),
        };
        Ok(StepProblem::from_parts(parts, Box::new(WorldEval::new(self))))
    }
}
