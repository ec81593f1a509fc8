//! The per-step problem every solver receives.
//!
//! Discrete dynamics (velocity level, the same for every solver): find `v+` and contact impulses `lambda` with
//! `M (v+ - v*) = J^T lambda`, `v* = v0 + dt M^-1 f(q0, v0)`, where `f` holds gravity, springs and
//! gyroscopic forces. The reference contact law used by the harness metrics is the rigid Coulomb
//! NCP on the contact velocity `u = J v+ + w` with the gap bias `w = (phi0 / dt, 0, 0)`: the
//! linearised Signorini condition `phi0 + dt u_n >= 0 ⊥ lambda_n >= 0`, and the De Saxcé form of
//! Coulomb friction `K_mu ∋ lambda ⊥ u + (mu ||u_t||, 0, 0) ∈ K_mu*` (the FCLIB convention, normal
//! component first).
//! Solvers with other models (compliance, position level) still return `v+`, `lambda` and
//! optionally `q+`, and are measured against the same law.
//!
//! A problem is closed: it holds the data assembled at `(q0, v0)` and, for what a solver may
//! need at another configuration (contacts, elasticity, positions after the step, the projective
//! form of the elasticity), a narrow evaluator ([`ModelEval`], [`Self::model`](StepProblem::model)) —
//! never the world itself. The harness builds one per step of a run (`World::step_problem`, also
//! for benches, tests and FCLIB export at any step); [`crate::linear::LinearProblem`] builds one
//! from matrices alone.

use crate::bilateral::BilateralSet;
use crate::contact::{ContactCompliance, ContactKey, ContactSet};
use crate::eval::{ElasticEval, ModelEval, Reevaluation};
use crate::layout::DofLayout;
use kernels::BlockDiagonal;
use std::collections::HashMap;
use std::sync::OnceLock;

/// What the previous step left for warm starts, matched by [`ContactKey`].
#[derive(Debug, Clone, Default)]
pub struct WarmStart {
    /// Previous step's impulses `(n, t1, t2)` by contact key (in the previous frames).
    pub impulses: HashMap<ContactKey, [f64; 3]>,
    /// Previous step's velocity `v+` (the velocity at the start of this step).
    pub velocity: Vec<f64>,
    /// Previous step's bilateral impulses (N s) by row identity `(joint, index)`
    /// ([`crate::bilateral::BilateralRow`]).
    pub bilateral: HashMap<(usize, usize), f64>,
}

/// The data of a [`StepProblem`] besides its model evaluator ([`StepProblem::from_parts`]); each
/// field means what the problem's field of the same name means.
pub struct StepProblemParts<'a> {
    /// Time step (s).
    pub dt: f64,
    /// Contacts detected at `q0`.
    pub contacts: &'a ContactSet,
    /// Warm-start data from the previous step, if any.
    pub warm_start: Option<&'a WarmStart>,
    /// Layout of the generalized coordinates.
    pub layout: DofLayout,
    /// Generalized positions at the start of the step.
    pub q0: Vec<f64>,
    /// Generalized velocities at the start of the step.
    pub v0: Vec<f64>,
    /// Mass matrix at `q0`, factored.
    pub mass: BlockDiagonal,
    /// Non-contact generalized forces `f(q0, v0)`, elastic forces included.
    pub forces: Vec<f64>,
    /// Stiffness of the non-contact forces in velocity coordinates.
    pub stiffness: BlockDiagonal,
    /// Bilateral constraint rows at `(q0, v0)`.
    pub bilateral: BilateralSet,
    /// The elastic part of `forces`, `None` without deformable bodies.
    pub elastic_forces: Option<Vec<f64>>,
    /// Prescribed DOFs as `(v index, required v+)`, sorted by index.
    pub prescribed: Vec<(usize, f64)>,
}

/// One time step's problem: borrowed contacts, the matrices and vectors derived from the model
/// at `(q0, v0)`, and the model's evaluator ([`Self::model`]) for other configurations.
pub struct StepProblem<'a> {
    /// Time step (s).
    pub dt: f64,
    /// Re-evaluation of the model behind the problem (private: solvers go through the methods
    /// below or [`Self::model`]).
    model: Box<dyn ModelEval + 'a>,
    /// Contacts detected at `q0` (including those within the detection margin).
    pub contacts: &'a ContactSet,
    /// Warm-start data from the previous step, if any.
    pub warm_start: Option<&'a WarmStart>,
    /// Layout of the generalized coordinates.
    pub layout: DofLayout,
    /// Generalized positions at the start of the step.
    pub q0: Vec<f64>,
    /// Generalized velocities at the start of the step.
    pub v0: Vec<f64>,
    /// Mass matrix at `q0` (factored).
    pub mass: BlockDiagonal,
    /// Non-contact generalized forces `f(q0, v0)` (gravity, springs, gyroscopic).
    pub forces: Vec<f64>,
    /// Stiffness of the non-contact forces in velocity coordinates, `K = -df/d(dq)`
    /// (the world's force stiffness); there is no non-contact damping in the model yet.
    pub stiffness: BlockDiagonal,
    /// Bilateral constraint rows of the world's joints at `(q0, v0)`: Jacobian blocks `G`,
    /// violations `C(q0)`, `dG/dt v0` and compliance. A solver returns one
    /// impulse per row in [`crate::solver::StepSolution::bilateral`], with
    /// `M (v+ - v*) = J^T lambda + G^T gamma`; the reference law of each row is
    /// [`crate::bilateral::BilateralRow::law`].
    pub bilateral: BilateralSet,
    /// [`Self::elastic_hessian`], evaluated on first use (private: methods that do not read it,
    /// e.g. a local-global or position-level method, do not pay for its assembly).
    elastic_hessian: OnceLock<Option<kernels::sparse::Csr>>,
    /// Deformable bodies: the elastic part `−∂U/∂x` of [`Self::forces`] at `q0` (length `nv`,
    /// zero on rigid DOFs, N), `None` without deformables. Methods that treat elasticity
    /// implicitly take [`Self::external_forces`] instead of evaluating the gradient again.
    pub elastic_forces: Option<Vec<f64>>,
    /// Prescribed DOFs of deformable bodies as `(v index, required v+)`, sorted by index: a
    /// solver must return exactly this end-of-step velocity there (`q+ = q0 + dt v+` then
    /// reaches the prescribed motion's target). Empty without boundary conditions.
    pub prescribed: Vec<(usize, f64)>,
}

impl<'a> StepProblem<'a> {
    /// A problem from its parts and the evaluator of the model behind it (the harness builds one
    /// per step of a simulated world; [`crate::linear::LinearProblem`] one from matrices). The
    /// elastic Hessian is assembled from `model` on first use ([`Self::elastic_hessian`]).
    pub fn from_parts(parts: StepProblemParts<'a>, model: Box<dyn ModelEval + 'a>) -> Self {
        let StepProblemParts {
            dt,
            contacts,
            warm_start,
            layout,
            q0,
            v0,
            mass,
            forces,
            stiffness,
            bilateral,
            elastic_forces,
            prescribed,
        } = parts;
        Self {
            dt,
            model,
            contacts,
            warm_start,
            layout,
            q0,
            v0,
            mass,
            forces,
            stiffness,
            bilateral,
            elastic_hessian: OnceLock::new(),
            elastic_forces,
            prescribed,
        }
    }

    /// Deformable bodies: the elastic stiffness `∂²U/∂x²` at `q0` in velocity coordinates
    /// (`nv × nv`, per-element PSD-projected, N/m), `None` without deformables. The rigid-body
    /// [`Self::stiffness`] cannot hold the coupling of FEM nodes; its deformable blocks are zero.
    /// The elastic forces `−∂U/∂x` are part of [`Self::forces`]. At another configuration:
    /// [`Self::elastic_at`]. Assembled on the first call (by the solver that needs it, inside its
    /// timed solve) and kept for the step.
    pub fn elastic_hessian(&self) -> Option<&kernels::sparse::Csr> {
        self.elastic_hessian.get_or_init(|| self.model.elastic_hessian_at_start(&self.q0)).as_ref()
    }

    /// Whether [`Self::elastic_hessian`] has been assembled for this problem yet (it is, on the
    /// first call).
    pub fn elastic_hessian_is_assembled(&self) -> bool {
        self.elastic_hessian.get().is_some()
    }

    /// Number of velocity DOFs.
    pub fn nv(&self) -> usize {
        self.layout.nv
    }

    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.contacts.len()
    }

    /// The non-contact forces without the elastic part, `forces − elastic_forces` (N): the
    /// explicit forces of a method that treats elasticity implicitly.
    pub fn external_forces(&self) -> Vec<f64> {
        match &self.elastic_forces {
            Some(e) => self.forces.iter().zip(e).map(|(f, e)| f - e).collect(),
            None => self.forces.clone(),
        }
    }

    /// The free-motion velocity `v* = v0 + dt M^-1 f(q0, v0)` (explicit in the forces).
    pub fn free_velocity(&self) -> Vec<f64> {
        let mut a = self.forces.clone();
        self.mass.solve_in_place(&mut a);
        self.v0.iter().zip(&a).map(|(v, a)| v + self.dt * a).collect()
    }

    /// The bias `w_i = (phi0_i / dt, 0, 0)` of contact `i` in `u = J v + w`.
    pub fn bias(&self, i: usize) -> [f64; 3] {
        [self.contacts.contacts[i].gap / self.dt, 0.0, 0.0]
    }

    /// The velocity-level normal law shared by solvers that take it, as `(v_hat, r_n)`: the
    /// normal impulse is `lambda_n = max(0, (v_hat - u_n) / r_n)` for compliant contact, or the
    /// complementarity `u_n >= v_hat ⊥ lambda_n >= 0` for rigid contact (`r_n = 0`).
    /// Rigid: `v_hat = -phi0/dt`. Compliant (Castro et al. §V-A, linear Kelvin-Voigt model):
    /// `v_hat = -phi0/(dt + tau_d)`, `r_n = 1/(dt k (dt + tau_d))`, i.e.
    /// `lambda_n = dt k (-phi0 - (dt + tau_d) u_n)_+`.
    pub fn normal_law(&self, i: usize) -> (f64, f64) {
        let c = &self.contacts.contacts[i];
        match c.compliance {
            ContactCompliance::Rigid => (-c.gap / self.dt, 0.0),
            ContactCompliance::Compliant { stiffness, dissipation_time } => {
                let tau = self.dt + dissipation_time;
                (-c.gap / tau, 1.0 / (self.dt * stiffness * tau))
            }
        }
    }

    /// Contact velocities `u = J v + w` of the reference NCP (see the module doc).
    pub fn contact_velocities(&self, v: &[f64]) -> Vec<[f64; 3]> {
        let mut u = self.contacts.velocities(v);
        for (i, ui) in u.iter_mut().enumerate() {
            ui[0] += self.bias(i)[0];
        }
        u
    }

    /// Number of bilateral constraint rows.
    pub fn nb(&self) -> usize {
        self.bilateral.len()
    }

    /// The generalized impulse `J^T lambda`.
    pub fn generalized_impulse(&self, lambda: &[[f64; 3]]) -> Vec<f64> {
        self.contacts.transpose_mul(lambda, self.nv())
    }

    /// The model's evaluator: contacts, elasticity and positions at other configurations, and the
    /// projective form of the elasticity (see [`ModelEval`]).
    pub fn model(&self) -> &dyn ModelEval {
        self.model.as_ref()
    }

    /// Positions after the step with end velocity `v` (symplectic: `q+ = q0 + dt N(q0) v`).
    pub fn integrate(&self, v: &[f64]) -> Vec<f64> {
        self.model.integrate(&self.q0, v, self.dt)
    }

    /// The same contact pairs and features re-evaluated at configuration `q` as `how` says: same
    /// keys and order, new points, frames, gaps and Jacobians (position-level methods need it).
    pub fn contacts_at(&self, q: &[f64], how: Reevaluation) -> ContactSet {
        self.model.contacts_at(q, self.contacts, how)
    }

    /// Elastic gradient `∂U/∂x` (length `nv`, N) and projected Hessian (N/m) at configuration `q`
    /// (position-level methods re-evaluate them at every iterate).
    pub fn elastic_at(&self, q: &[f64]) -> ElasticEval {
        ElasticEval { gradient: self.model.elastic_gradient_at(q), hessian: self.model.elastic_hessian_at(q) }
    }

    /// The bilateral rows re-evaluated at configuration `q` (same rows and order as
    /// [`Self::bilateral`]; position-level methods evaluate `C(q)` and `G(q)` at their iterates).
    pub fn bilateral_at(&self, q: &[f64]) -> BilateralSet {
        self.model.bilateral_at(q, &self.bilateral)
    }

    /// The previous step's impulse of bilateral row `k` (N s), if that row existed then.
    pub fn warm_bilateral(&self, k: usize) -> Option<f64> {
        let r = &self.bilateral.rows[k];
        self.warm_start.and_then(|w| w.bilateral.get(&(r.joint, r.index)).copied())
    }

    /// The previous step's impulse for contact `i`, if that contact existed then.
    pub fn warm_impulse(&self, i: usize) -> Option<[f64; 3]> {
        self.warm_start.and_then(|w| w.impulses.get(&self.contacts.contacts[i].key).copied())
    }
}
