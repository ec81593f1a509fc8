//! [`ModelEval`]: what a solver may ask of the model behind a [`crate::StepProblem`] beyond the
//! data assembled at `q0` — position-level re-evaluation of contacts and elasticity, the
//! position update, and the projective (local-global) form of the elasticity. A solver never
//! sees the world; it sees the problem's data and this narrow interface.
//!
//! Two implementations: the harness's `WorldEval` for a step of a simulated world, and
//! [`crate::linear::LinearEval`] for a problem given only by its matrices (an FCLIB file), whose
//! contacts are fixed and which has no configuration and no elasticity.

use crate::bilateral::BilateralSet;
use crate::contact::ContactSet;
use kernels::sparse::Csr;
use nalgebra::{Matrix3, SMatrix};

/// The operator `G` of one tetrahedron that maps its 12 node coordinates to `vec F`, the
/// column-major deformation gradient.
pub type GradientOperator = SMatrix<f64, 9, 12>;

/// How [`ModelEval::contacts_at`] re-evaluates contacts at another configuration `q`. Either
/// way the result has the same keys, order, `mu` and compliance as the given contacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reevaluation {
    /// The closest features recomputed at `q` (the harness's `geometry::reevaluate`): new points, frames,
    /// gaps and Jacobians. For two boxes the clipped manifold can jump between faces that are
    /// parallel up to round-off.
    Features,
    /// The body-fixed contact points carried rigidly to `q`, the start-of-step normals held fixed
    /// in world space (the harness's `geometry::carried`): gaps smooth in `q`. Node contacts of deformable
    /// bodies are re-evaluated as with [`Reevaluation::Features`].
    Carried,
}

/// The elastic gradient and stiffness of the deformable bodies at one configuration.
#[derive(Debug, Clone)]
pub struct ElasticEval {
    /// `∂U/∂x` in velocity coordinates (length `nv`, zero on rigid DOFs) (N).
    pub gradient: Vec<f64>,
    /// `∂²U/∂x²` (`nv × nv`, per-element PSD-projected) (N/m); `None` without deformable bodies.
    pub hessian: Option<Csr>,
}

/// One tetrahedron of a deformable body in projective form: `vec F = G x_e`, elastic energy
/// `Σ_k w_k/2 ‖F − P_k(F)‖²` with the projections of [`ModelEval::projective_terms`].
#[derive(Debug, Clone)]
pub struct ProjectiveElement {
    /// Deformable body (in the order of the layout's deformable blocks).
    pub body: usize,
    /// Index of the tetrahedron in its body.
    pub index: usize,
    /// Velocity index of the first of the 3 DOFs of each of its 4 nodes.
    pub dofs: [usize; 4],
    /// `G_e`: `vec F` (column-major) from the 12 node coordinates.
    pub g: GradientOperator,
    /// `Σ_k w_k` (J): the weights depend only on the rest volume and the material.
    pub weight: f64,
}

/// Identity of the constant part of the elasticity (meshes, densities, materials): two problems
/// with equal keys have the same [`ModelEval::projective_elements`] and lumped masses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ElasticKey(Vec<(usize, usize, f64, String, f64, f64)>);

impl ElasticKey {
    /// The key of bodies given as `(nodes, tetrahedra, density, model name, Young's modulus,
    /// Poisson ratio)`, one entry per deformable body in layout order.
    pub fn new(bodies: Vec<(usize, usize, f64, String, f64, f64)>) -> Self {
        Self(bodies)
    }
}

/// Re-evaluation of the model behind a step problem (see the module doc). Every method is a pure
/// function of its arguments and the problem's start-of-step model.
pub trait ModelEval: Send + Sync {
    /// Positions after a step of length `dt` from `q0` with end velocity `v` (symplectic:
    /// `q+ = q0 + dt N(q0) v`; rotations by the exponential map).
    fn integrate(&self, q0: &[f64], v: &[f64], dt: f64) -> Vec<f64>;

    /// The contacts `contacts` (detected at the start of the step) re-evaluated at configuration
    /// `q` as `how` says.
    fn contacts_at(&self, q: &[f64], contacts: &ContactSet, how: Reevaluation) -> ContactSet;

    /// The bilateral rows `rows` (evaluated at the start of the step) re-evaluated at
    /// configuration `q`: same joints, row indices and order ([`BilateralSet::like`]).
    fn bilateral_at(&self, q: &[f64], rows: &BilateralSet) -> BilateralSet;

    /// Elastic energy `U(q)` of the deformable bodies (J); 0 without them.
    fn elastic_energy_at(&self, q: &[f64]) -> f64;

    /// `∂U/∂x` at `q` in velocity coordinates (length `nv`, N).
    fn elastic_gradient_at(&self, q: &[f64]) -> Vec<f64>;

    /// The per-element PSD-projected `∂²U/∂x²` at `q` (N/m); `None` without deformable bodies.
    fn elastic_hessian_at(&self, q: &[f64]) -> Option<Csr>;

    /// [`Self::elastic_hessian_at`] the start of the step, `q0` (an evaluator of a world
    /// evaluates it on the world itself, without re-positioning a copy).
    fn elastic_hessian_at_start(&self, q0: &[f64]) -> Option<Csr> {
        self.elastic_hessian_at(q0)
    }

    /// The key of the constant elastic data (see [`ElasticKey`]).
    fn elastic_key(&self) -> ElasticKey;

    /// Every tetrahedron of every deformable body in projective form, body by body.
    fn projective_elements(&self) -> Vec<ProjectiveElement>;

    /// The projections `(w_k, P_k(F))` of element `index` of deformable body `body` at the
    /// deformation gradient `f` (the local step of a local-global method).
    fn projective_terms(&self, body: usize, index: usize, f: &Matrix3<f64>) -> Vec<(f64, Matrix3<f64>)>;
}
