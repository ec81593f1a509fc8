//! The constant part of the local-global method (computed once per scene, §4): elements with their
//! gradient operators and PD weights, the lumped mass, the global matrix
//! `A = M + h² Σ w_i G_iᵀ G_i` (Eq. 6) on the free DOFs, and its inverse in the chosen form.
//! Built once and reused while the time step, the deformable meshes and the prescribed DOF set
//! stay the same ([`ModelKey`]).

use super::settings::GlobalSolve;
use harness::model::{GradientOperator, World};
use harness::SolveError;
use kernels::backend::Backend;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use kernels::sparse::Csr;
use kernels::sparse_inverse::SparseInverse;
use nalgebra::SVector;

/// What the constant data depends on: `h`, the prescribed DOFs, and every deformable body's mesh,
/// density and material.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ModelKey {
    dt: f64,
    fixed: Vec<bool>,
    bodies: Vec<(usize, usize, f64, String, f64, f64)>,
}

impl ModelKey {
    pub(super) fn of(world: &World, dt: f64, fixed: &[bool]) -> Self {
        let bodies = world
            .deformables
            .iter()
            .map(|d| {
                let e = d.elastic;
                (d.num_nodes(), d.tets.len(), d.density, format!("{:?}", e.model), e.youngs_modulus, e.poisson_ratio)
            })
            .collect();
        Self { dt, fixed: fixed.to_vec(), bodies }
    }
}

/// One tetrahedron: its body, index in the body, global DOF indices of its 4 nodes (first of 3
/// each), `G_e` (`vec F = G x_e`) and the sum of its PD weights `Σ_k w_k` (N/m² · m³ = J).
pub(super) struct Element {
    pub body: usize,
    pub index: usize,
    pub dofs: [usize; 4],
    pub g: GradientOperator,
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
    pub elements: Vec<Element>,
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
    /// Builds the elements, `A` and its inverse.
    pub(super) fn build(world: &World, dt: f64, fixed: &[bool], method: GlobalSolve) -> Result<Self, SolveError> {
        let nv = world.layout().nv;
        let mut elements = Vec::new();
        let mut mass = vec![0.0; nv];
        let mut t = Vec::new();
        for (b, (d, off)) in world.deformables.iter().zip(world.deformable_v_offsets()).enumerate() {
            for (a, m) in d.node_masses().into_iter().enumerate() {
                for i in 0..3 {
                    mass[off + 3 * a + i] = m;
                    t.push((off + 3 * a + i, off + 3 * a + i, m));
                }
            }
            for (e, tet) in d.tets.iter().enumerate() {
                let g = d.gradient_operator(e);
                // Σ_k w_k is constant: the weights depend on the rest volume and material only
                let w: f64 = d.projective_terms_at(e, &nalgebra::Matrix3::identity()).iter().map(|p| p.0).sum();
                let ke = dt * dt * w * g.transpose() * g;
                let dofs = tet.map(|a| off + 3 * a);
                for (p, &dp) in dofs.iter().enumerate() {
                    for (q, &dq) in dofs.iter().enumerate() {
                        for i in 0..3 {
                            for j in 0..3 {
                                t.push((dp + i, dq + j, ke[(3 * p + i, 3 * q + j)]));
                            }
                        }
                    }
                }
                elements.push(Element { body: b, index: e, dofs, g });
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
        Ok(Self { key: ModelKey::of(world, dt, fixed), elements, mass, free, free_of, a_full, a, inverse })
    }

    /// `x = A⁻¹ b` on the free DOFs (`tmp` of length `nf`). Jacobi: `x = D⁻¹ b`.
    pub(super) fn apply_inverse<B: Backend>(&mut self, backend: &B, b: &[f64], tmp: &mut [f64], x: &mut [f64]) {
        match &mut self.inverse {
            GlobalInverse::SparseInverse(s) => s.solve(backend, b, tmp, x),
            GlobalInverse::Cholesky(c) => {
                x.copy_from_slice(b);
                c.solve_in_place(x);
            }
            GlobalInverse::Jacobi(dinv) => backend.mul_elem(dinv, b, x),
        }
    }

    /// The global step (Eq. 6) from the current free iterate `x` (used by Jacobi only):
    /// `x_new = A⁻¹ b`, or for Jacobi `x_new = x + D⁻¹ (b − A x)` (one sweep).
    pub(super) fn global_step<B: Backend>(
        &mut self,
        backend: &B,
        b: &[f64],
        x: &[f64],
        tmp: &mut [f64],
        out: &mut [f64],
    ) {
        if let GlobalInverse::Jacobi(dinv) = &self.inverse {
            backend.spmv(&self.a, x, tmp);
            backend.xpby(b, -1.0, tmp); // tmp = b − A x
            backend.mul_elem(dinv, tmp, out);
            backend.axpy(1.0, x, out);
        } else {
            self.apply_inverse(backend, b, tmp, out);
        }
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

/// A 12-vector (one element's node coordinates or forces).
pub(super) type Vec12 = SVector<f64, 12>;
