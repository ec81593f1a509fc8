//! The constant part of the local-global method (computed once per scene, §4): elements with their
//! gradient operators and PD weights, the lumped mass, the global matrix
//! `A = M + h² Σ w_i G_iᵀ G_i` (Eq. 6) on the free DOFs, and its inverse in the chosen form.
//! Built once and reused while the time step, the deformable meshes and the prescribed DOF set
//! stay the same ([`ModelKey`]).

use super::settings::GlobalSolve;
use api::eval::{ElasticKey, ModelEval, ProjectiveElement};
use api::BlockKind;
use api::{SolveError, StepProblem};
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use kernels::pd_local::PdElements;
use kernels::sparse::Csr;
use kernels::sparse_inverse::SparseInverse;
use nalgebra::Matrix3;

/// What the constant data depends on: `h`, the prescribed DOFs, and every deformable body's mesh,
/// density and material ([`ElasticKey`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ModelKey {
    dt: f64,
    fixed: Vec<bool>,
    bodies: ElasticKey,
}

impl ModelKey {
    pub(super) fn of(model: &dyn ModelEval, dt: f64, fixed: &[bool]) -> Self {
        Self { dt, fixed: fixed.to_vec(), bodies: model.elastic_key() }
    }
}

/// The inverse of `A` on the free DOFs, in the form the settings ask for.
pub(super) enum GlobalInverse {
    SparseInverse(SparseInverse),
    Cholesky(SparseCholesky),
    /// `D⁻¹` (inverse diagonal of `A_ff`).
    Jacobi(Vec<f64>),
}

/// The constant model.
pub(super) struct Model {
    pub key: ModelKey,
    /// The tetrahedra in projective form: body, index, DOFs of the 4 nodes, `G_e` (`vec F = G
    /// x_e`) and `Σ_k w_k` (J), body by body.
    pub elements: Vec<ProjectiveElement>,
    /// The same elements as the local step's device data (DOFs, `G_e`, the weights of the
    /// rotation and volume terms).
    pub pd: PdElements,
    /// Lumped mass per DOF (kg), length `nv`.
    pub mass: Vec<f64>,
    /// Free DOFs (global indices) and the inverse map.
    pub free: Vec<usize>,
    pub free_of: Vec<Option<usize>>,
    /// `A` on all DOFs (`nv × nv`) — its prescribed columns couple the free rows to `q_p`.
    pub a_full: Csr,
    /// `A_ff` (free × free).
    pub a: Csr,
    pub inverse: GlobalInverse,
}

impl Model {
    /// Builds the elements, `A` and its inverse from the problem's lumped mass matrix and the
    /// projective form of its elasticity ([`ModelEval::projective_elements`]).
    pub(super) fn build(
        p: &StepProblem<'_>,
        key: ModelKey,
        fixed: &[bool],
        method: GlobalSolve,
    ) -> Result<Self, SolveError> {
        let (nv, dt) = (p.nv(), p.dt);
        let elements = p.model().projective_elements();
        let pd = pd_elements(p.model(), &elements)?;
        let diag = p.mass.diagonal();
        let mut mass = vec![0.0; nv];
        let mut t = Vec::new();
        let mut next = 0;
        for blk in &p.layout.blocks {
            let BlockKind::Deformable { index: b } = blk.kind else { continue };
            for k in blk.v_offset..blk.v_offset + blk.nv {
                mass[k] = diag[k];
                t.push((k, k, diag[k]));
            }
            while let Some(el) = elements.get(next).filter(|el| el.body == b) {
                // Σ_k w_k is constant: the weights depend on the rest volume and material only
                let ke = dt * dt * el.weight * el.g.transpose() * el.g;
                for (p, &dp) in el.dofs.iter().enumerate() {
                    for (q, &dq) in el.dofs.iter().enumerate() {
                        // structural zeros are left out: G = B ⊗ I₃ acts per coordinate, so the
                        // x–y–z couplings of GᵀG are exact zeros, and storing them would make the
                        // symbolic factor couple the coordinates (3× the etree depth, 3× nnz(S))
                        for i in 0..3 {
                            for j in 0..3 {
                                let v = ke[(3 * p + i, 3 * q + j)];
                                if v != 0.0 {
                                    t.push((dp + i, dq + j, v));
                                }
                            }
                        }
                    }
                }
                next += 1;
            }
        }
        let a_full = Csr::from_triplets(nv, nv, &t);
        let free: Vec<usize> = (0..nv).filter(|&k| !fixed[k]).collect();
        let mut free_of = vec![None; nv];
        for (i, &k) in free.iter().enumerate() {
            free_of[k] = Some(i);
        }
        let tf: Vec<_> = t.iter().filter_map(|&(r, c, v)| Some((free_of[r]?, free_of[c]?, v))).collect();
        let a = Csr::from_triplets(free.len(), free.len(), &tf);
        let fact = |e: kernels::cholesky::CholeskyError| SolveError::Factorization {
            what: format!("A = M + h² Σ w GᵀG: {e}"),
        };
        let inverse = match method {
            GlobalSolve::SparseInverse => GlobalInverse::SparseInverse(SparseInverse::new(&a).map_err(fact)?),
            GlobalSolve::Cholesky => {
                let (cp, ri, vals) = a.lower_csc();
                let mut c = SparseCholesky::analyze(a.nrows, cp, ri, CholeskyParams::default()).map_err(fact)?;
                c.factorize(&vals).map_err(fact)?;
                GlobalInverse::Cholesky(c)
            }
            GlobalSolve::Jacobi => GlobalInverse::Jacobi(a.diagonal().iter().map(|d| 1.0 / d).collect()),
        };
        Ok(Self { key, elements, pd, mass, free, free_of, a_full, a, inverse })
    }

    /// The Delassus operator `W = H A⁻¹ Hᵀ` (Eq. 27) for `h` (`m × nf`): two SpGEMMs with `S`,
    /// `m` Cholesky solves, or `H D⁻¹ Hᵀ` for Jacobi.
    pub(super) fn delassus(&mut self, h: &Csr) -> Csr {
        match &mut self.inverse {
            GlobalInverse::SparseInverse(s) => s.delassus(h),
            GlobalInverse::Cholesky(c) => {
                let ht = h.transpose();
                let m = h.nrows;
                let mut t = Vec::new();
                let mut col = vec![0.0; h.ncols];
                for j in 0..m {
                    let mut e = vec![0.0; m];
                    e[j] = 1.0;
                    ht.mul_into(&e, &mut col);
                    c.solve_in_place(&mut col);
                    for (i, v) in h.mul(&col).into_iter().enumerate() {
                        if v != 0.0 {
                            t.push((i, j, v));
                        }
                    }
                }
                let w = Csr::from_triplets(m, m, &t);
                // symmetrise the round-off
                let wt = w.transpose();
                let mut s = w.clone();
                for (k, v) in s.data.iter_mut().enumerate() {
                    let r = w.indptr.partition_point(|&p| p <= k) - 1;
                    *v = 0.5 * (*v + wt.get(r, w.indices[k]));
                }
                s
            }
            GlobalInverse::Jacobi(dinv) => {
                let mut hd = h.clone();
                for r in 0..hd.nrows {
                    for k in hd.indptr[r]..hd.indptr[r + 1] {
                        hd.data[k] *= dinv[hd.indices[k]];
                    }
                }
                kernels::sparse_inverse::spgemm(&hd, &h.transpose())
            }
        }
    }
}

/// The elements' device data: the weights of the rotation term and of the volume term, read from
/// the model's projective terms at `F = I` (the weights depend only on the rest volume and the
/// material). A material with more than these two terms has no device local step: unsupported.
fn pd_elements(eval: &dyn ModelEval, elements: &[ProjectiveElement]) -> Result<PdElements, SolveError> {
    let mut pd = PdElements::default();
    for el in elements {
        let terms = eval.projective_terms(el.body, el.index, &Matrix3::identity());
        if terms.is_empty() || terms.len() > 2 {
            return Err(SolveError::Unsupported {
                what: format!(
                    "element {} of body {} has {} projective terms (the local step has a rotation and a volume term)",
                    el.index,
                    el.body,
                    terms.len()
                ),
            });
        }
        pd.dofs.push(el.dofs);
        pd.g.push(el.g);
        pd.w_rot.push(terms[0].0);
        pd.w_vol.push(terms.get(1).map_or(0.0, |t| t.0));
    }
    Ok(pd)
}
