//! World-less linearised step problems: an external problem given only by its matrices (e.g. an
//! FCLIB file) presented to solvers as a [`StepProblem`].
//!
//! A solver working at the velocity level reads only matrices: the mass matrix and DOF layout,
//! the free velocity `v* = v0 + dt M^-1 f`, and per contact its Jacobian rows, bias `w = (phi0/dt,
//! 0, 0)`, `mu` and contact model. [`LinearProblem`] owns exactly that data and lends a
//! [`StepProblem`] view of it ([`LinearProblem::step_problem`]) whose model evaluator is
//! [`LinearEval`]: no world behind it.
//!
//! The mapping from the global FCLIB form `M v = H r + f`, `u = H^T v + w` (`fclib.h`, normal
//! component first): a unit time step `dt = 1` (the FCLIB form has no time step; with it the
//! impulses are `r` and the bias is exactly `w`), `v0 = 0`, `forces = f` (so `v* = M^-1 f`), the
//! Jacobian `J = H^T`, contact `i`'s gap `phi0_i = w_{3i}`, every contact rigid. The DOF layout
//! has one block per diagonal block of `M`, tagged [`BlockKind::RigidBody`] with the block's index.
//!
//! Limits (the view is not a physical scene): there are no positions (`q0` is empty) and no
//! elasticity, the contacts are fixed ([`LinearEval`]), so the harness's energy and penetration
//! metrics are meaningless for it and position-level methods cannot run it. `M` must be block
//! diagonal with blocks of at most 6 DOFs (the width of a [`JBlock`]), tangential biases must be
//! zero (the step problem's bias is normal only), and there are no bilateral constraints.

use crate::bilateral::BilateralSet;
use crate::contact::ContactCompliance;
use crate::contact::{ColliderId, Contact, ContactKey, ContactSet, JBlock};
use crate::eval::{ElasticKey, ModelEval, ProjectiveElement, Reevaluation};
use crate::layout::{BlockKind, DofBlock, DofLayout};
use crate::params::FieldError;
use crate::problem::{StepProblem, StepProblemParts};
use kernels::sparse::Csr;
use kernels::BlockDiagonal;
use nalgebra::{Matrix3, Vector3};

/// [`crate::ModelEval`] of a linear problem: the contacts are fixed (the same at every
/// configuration), there are no positions (`integrate` returns `q0 + dt v` on the empty position
/// vector, i.e. nothing) and no elasticity (energy 0, zero gradient, no Hessian, no elements).
#[derive(Debug, Clone, Copy)]
pub struct LinearEval {
    /// Number of velocity DOFs (the length of an elastic gradient).
    pub nv: usize,
}

impl ModelEval for LinearEval {
    fn integrate(&self, q0: &[f64], v: &[f64], dt: f64) -> Vec<f64> {
        debug_assert!(q0.is_empty(), "a linear problem has no positions");
        q0.iter().zip(v).map(|(q, v)| q + dt * v).collect()
    }

    fn contacts_at(&self, _q: &[f64], contacts: &ContactSet, _how: Reevaluation) -> ContactSet {
        contacts.clone()
    }

    fn bilateral_at(&self, _q: &[f64], rows: &BilateralSet) -> BilateralSet {
        rows.clone()
    }

    fn elastic_energy_at(&self, _q: &[f64]) -> f64 {
        0.0
    }

    fn elastic_gradient_at(&self, _q: &[f64]) -> Vec<f64> {
        vec![0.0; self.nv]
    }

    fn elastic_hessian_at(&self, _q: &[f64]) -> Option<Csr> {
        None
    }

    fn elastic_key(&self) -> ElasticKey {
        ElasticKey::default()
    }

    fn projective_elements(&self) -> Vec<ProjectiveElement> {
        vec![]
    }

    fn projective_terms(&self, body: usize, index: usize, _f: &Matrix3<f64>) -> Vec<(f64, Matrix3<f64>)> {
        panic!("a linear problem has no deformable body (asked for element {index} of body {body})")
    }
}

/// A linearised frictional-contact problem with no world behind it (see the module doc).
#[derive(Debug, Clone)]
pub struct LinearProblem {
    contacts: ContactSet,
    layout: DofLayout,
    /// Factored mass matrix.
    mass: BlockDiagonal,
    /// `f`: the free momentum `M v*` (N s).
    forces: Vec<f64>,
}

impl LinearProblem {
    /// Builds the problem from a block-diagonal mass matrix `M` (blocks of at most 6 DOFs), the
    /// Jacobian `J = H^T` as triplets `(row, column, value)` with rows `3 i + (0, 1, 2)` =
    /// `(n, t1, t2)` of contact `i` and columns the DOFs, the free momentum `f = M v*`, the normal
    /// bias `w_n` per contact and `mu` per contact. The error names the offending field (`M`, `H`,
    /// `f`, `w`, `mu`) and what is wrong with it.
    pub fn new(
        mass: BlockDiagonal,
        jacobian: &[(usize, usize, f64)],
        f: Vec<f64>,
        w_normal: &[f64],
        mu: &[f64],
    ) -> Result<Self, FieldError> {
        let nv = mass.dim();
        let nc = mu.len();
        if f.len() != nv {
            return Err(FieldError::new("f", format!("length {} != number of DOFs {nv} (size of M)", f.len())));
        }
        if w_normal.len() != nc {
            return Err(FieldError::new("w", format!("{} normal entries for {nc} contacts", w_normal.len())));
        }
        if let Some((i, x)) = f.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(FieldError::new("f", format!("entry {i} is not finite ({x})")));
        }
        if let Some((i, x)) = w_normal.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(FieldError::new("w", format!("normal entry of contact {i} is not finite ({x})")));
        }
        if let Some((i, x)) = mu.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x >= 0.0)) {
            return Err(FieldError::new(
                "mu",
                format!("contact {i} has mu = {x}; friction coefficients must be finite and >= 0"),
            ));
        }
        let mut blocks = vec![];
        let mut block_of = vec![0usize; nv];
        for (k, b) in mass.blocks().iter().enumerate() {
            let off = mass.offset(k);
            if b.nrows() > 6 {
                return Err(FieldError::new(
                    "M",
                    format!(
                        "diagonal block {k} (DOFs {off}..{}) has {} DOFs; the step problem's contact Jacobian \
                     blocks hold at most 6",
                        off + b.nrows(),
                        b.nrows()
                    ),
                ));
            }
            block_of[off..off + b.nrows()].fill(k);
            blocks.push(DofBlock {
                kind: BlockKind::RigidBody { index: k },
                v_offset: off,
                nv: b.nrows(),
                q_offset: 0,
                nq: 0,
                subsystem: k,
            });
        }
        let layout = DofLayout { blocks, nv, nq: 0 };
        let mut per_contact: Vec<Vec<JBlock>> = vec![vec![]; nc];
        for &(r, c, x) in jacobian {
            if r >= 3 * nc || c >= nv {
                return Err(FieldError::new(
                    "H",
                    format!("entry (DOF {c}, contact row {r}) outside {nv} x {}", 3 * nc),
                ));
            }
            if !x.is_finite() {
                return Err(FieldError::new("H", format!("entry (DOF {c}, contact row {r}) is not finite ({x})")));
            }
            let (i, k) = (r / 3, block_of[c]);
            let blk = &layout.blocks[k];
            let list = &mut per_contact[i];
            let pos = match list.iter().position(|b| b.v_offset == blk.v_offset) {
                Some(p) => p,
                None => {
                    list.push(JBlock { v_offset: blk.v_offset, ncols: blk.nv, rows: [[0.0; 6]; 3] });
                    list.len() - 1
                }
            };
            list[pos].rows[r % 3][c - blk.v_offset] += x;
        }
        let mut contacts = Vec::with_capacity(nc);
        for (i, mut jacobian) in per_contact.into_iter().enumerate() {
            jacobian.sort_by_key(|b| b.v_offset);
            let body = |j: Option<&JBlock>| j.map(|b| block_of[b.v_offset]);
            contacts.push(Contact {
                key: ContactKey { a: ColliderId::Static(0), b: ColliderId::Static(0), feature: i as u64 },
                body_a: body(jacobian.first()),
                body_b: body(jacobian.get(1)),
                point: Vector3::zeros(),
                frame: Matrix3::identity(),
                gap: w_normal[i],
                mu: mu[i],
                compliance: ContactCompliance::Rigid,
                jacobian: jacobian.into(),
            });
        }
        let mut mass = mass;
        mass.factor().map_err(|e| FieldError::new("M", format!("not symmetric positive definite ({e})")))?;
        Ok(Self { contacts: ContactSet { contacts }, layout, mass, forces: f })
    }

    /// Number of DOFs.
    pub fn nv(&self) -> usize {
        self.layout.nv
    }

    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.contacts.len()
    }

    /// The contacts (identity frames, zero points; only Jacobians, gaps and `mu` are meaningful).
    pub fn contacts(&self) -> &ContactSet {
        &self.contacts
    }

    /// The [`StepProblem`] view: `dt = 1`, `v0 = 0`, `forces = f`, no warm start, no bilateral
    /// rows, zero force stiffness, no positions, no elasticity; its model is [`LinearEval`].
    pub fn step_problem(&self) -> StepProblem<'_> {
        let parts = StepProblemParts {
            dt: 1.0,
            contacts: &self.contacts,
            warm_start: None,
            layout: self.layout.clone(),
            q0: vec![],
            v0: vec![0.0; self.nv()],
            mass: self.mass.clone(),
            forces: self.forces.clone(),
            stiffness: self.mass.zeros_like(),
            bilateral: BilateralSet::default(),
            elastic_forces: None,
            prescribed: vec![],
        };
        StepProblem::from_parts(parts, Box::new(LinearEval { nv: self.nv() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    #[test]
    fn view_reproduces_the_data() {
        let mass = BlockDiagonal::new(vec![DMatrix::identity(3, 3) * 2.0]);
        let j = [(0, 2, 1.0), (1, 0, 1.0), (2, 1, 1.0)];
        let p = LinearProblem::new(mass, &j, vec![0.0, 0.0, -2.0], &[0.5], &[0.3]).unwrap();
        let sp = p.step_problem();
        let vs = sp.free_velocity();
        assert!((vs[2] + 1.0).abs() < 1e-15 && vs[0] == 0.0 && vs[1] == 0.0, "{vs:?}");
        assert_eq!(sp.bias(0), [0.5, 0.0, 0.0]);
        assert_eq!(sp.contact_velocities(&[1.0, 2.0, -1.0]), vec![[-0.5, 1.0, 2.0]]);
    }

    #[test]
    fn the_model_of_a_linear_problem_is_fixed_and_has_no_world() {
        let mass = BlockDiagonal::new(vec![DMatrix::identity(3, 3) * 2.0, DMatrix::identity(3, 3)]);
        let j = [(0, 2, 1.0), (0, 5, -1.0), (1, 0, 1.0), (2, 1, 1.0)];
        let p = LinearProblem::new(mass, &j, vec![0.0, 0.0, -2.0, 0.0, 0.0, -1.0], &[0.25], &[0.3]).unwrap();
        let sp = p.step_problem();
        assert_eq!((sp.dt, sp.nv(), sp.nc(), sp.q0.len()), (1.0, 6, 1, 0));
        assert!(!sp.layout.has_deformables() && sp.layout.has_rigid_bodies());
        let m = sp.model();
        // contacts are fixed: the same set at any configuration, either way of re-evaluating
        for how in [Reevaluation::Features, Reevaluation::Carried] {
            assert_eq!(&sp.contacts_at(&[], how), p.contacts());
            assert_eq!(&m.contacts_at(&[1.0; 6], p.contacts(), how), p.contacts());
        }
        assert_eq!(p.contacts().contacts[0].jacobian.len(), 2, "one Jacobian block per mass block");
        // no positions: integrating gives the (empty) positions
        assert!(sp.integrate(&[1.0; 6]).is_empty());
        // no elasticity
        assert_eq!(m.elastic_energy_at(&[]), 0.0);
        assert_eq!(m.elastic_gradient_at(&[]), vec![0.0; 6]);
        assert!(m.elastic_hessian_at(&[]).is_none() && sp.elastic_hessian().is_none());
        assert!(m.projective_elements().is_empty());
        assert_eq!(m.elastic_key(), ElasticKey::default());
        let e = sp.elastic_at(&[]);
        assert!(e.gradient.iter().all(|g| *g == 0.0) && e.hessian.is_none());
        // the view's data: v* = M^-1 f, no bilateral rows, nothing prescribed
        let vs = sp.free_velocity();
        let want = [0.0, 0.0, -1.0, 0.0, 0.0, -1.0];
        assert!(vs.iter().zip(want).all(|(a, b)| (a - b).abs() <= 1e-15), "{vs:?}");
        assert_eq!((sp.nb(), sp.prescribed.len()), (0, 0));
        assert!(sp.warm_start.is_none());
    }

    #[test]
    fn bad_data_names_the_field() {
        let mass = || BlockDiagonal::new(vec![DMatrix::identity(3, 3)]);
        let e = LinearProblem::new(mass(), &[], vec![0.0; 3], &[0.0], &[-1.0]).unwrap_err();
        assert_eq!(e.field, "mu", "{e}");
        assert!(e.to_string().starts_with("mu: contact 0 has mu = -1"), "{e}");
        let e = LinearProblem::new(mass(), &[], vec![0.0; 2], &[0.0], &[1.0]).unwrap_err();
        assert_eq!(e.field, "f", "{e}");
        let e = LinearProblem::new(mass(), &[(3, 0, 1.0)], vec![0.0; 3], &[0.0], &[1.0]).unwrap_err();
        assert_eq!(e.field, "H", "{e}");
        let big = BlockDiagonal::new(vec![DMatrix::identity(7, 7)]);
        let e = LinearProblem::new(big, &[], vec![0.0; 7], &[], &[]).unwrap_err();
        assert!(e.field == "M" && e.reason.contains("7 DOFs"), "{e}");
    }
}
