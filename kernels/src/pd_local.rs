//! The local step of projective dynamics on tetrahedra (Zeng et al. Eq. 5), as data a device can
//! hold: [`PdElements`] (node DOFs, gradient operators `G_e`, the weights of the two projective
//! terms) and the host evaluation [`local_step_host`] through a [`HostProjection`] (the model's
//! own projections, e.g. `harness::ModelEval::projective_terms`).
//!
//! The device evaluates the same step with its own projection kernel (`pd_local` in
//! `kernels/src/gpu/kernels.cu`): term 0 is the rotation `R` of the polar decomposition
//! `F = R S` (weight [`PdElements::w_rot`], ARAP's `2 μ V`), term 1 the volume-preserving target
//! `U diag(σ / det(F)^{1/3}) Vᵀ` (weight [`PdElements::w_vol`], `λ V`; 0 for ARAP) — the
//! projections of `harness`'s deformable bodies.

use nalgebra::{Matrix3, SMatrix, SVector};
use rayon::prelude::*;

/// `G_e`: `vec F` (column-major) from the 12 node coordinates of a tetrahedron.
pub type Gradient = SMatrix<f64, 9, 12>;

/// A tetrahedron's 12 node coordinates or forces.
pub type Vec12 = SVector<f64, 12>;

/// The per-element projections `(w_k, P_k(F))` of a model's local step, on the host.
pub trait HostProjection: Sync {
    /// The projective terms of element `e` (index into [`PdElements`]) at deformation gradient `f`.
    fn terms(&self, e: usize, f: &Matrix3<f64>) -> Vec<(f64, Matrix3<f64>)>;
}

/// The constant element data of a projective-dynamics local step.
#[derive(Debug, Clone, Default)]
pub struct PdElements {
    /// Velocity index of the first of the 3 DOFs of each of the 4 nodes.
    pub dofs: Vec<[usize; 4]>,
    /// `G_e` per element.
    pub g: Vec<Gradient>,
    /// Weight of the rotation term (J).
    pub w_rot: Vec<f64>,
    /// Weight of the volume term (J; 0 where the material has none).
    pub w_vol: Vec<f64>,
}

impl PdElements {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.dofs.len()
    }
    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.dofs.is_empty()
    }
}

/// The local step at `q` (Eq. 5) on the host, in parallel over elements: per element
/// `r_e = Σ_k w_k G_eᵀ vec P_k(G_e x_e)` into `r[12 e..12 e + 12]` and the PD energy
/// `Σ_k w_k/2 ‖G_e x_e − vec P_k‖²` into `energy[e]`.
pub fn local_step_host(el: &PdElements, proj: &dyn HostProjection, q: &[f64], r: &mut [f64], energy: &mut [f64]) {
    assert!(r.len() == 12 * el.len() && energy.len() == el.len(), "local_step_host: lengths");
    r.par_chunks_mut(12).zip(energy.par_iter_mut()).enumerate().for_each(|(e, (re, en))| {
        let mut xe = Vec12::zeros();
        for (a, &d) in el.dofs[e].iter().enumerate() {
            for i in 0..3 {
                xe[3 * a + i] = q[d + i];
            }
        }
        let g = &el.g[e];
        let fv = g * xe;
        let f = Matrix3::from_column_slice(fv.as_slice());
        let mut rhs_e = Vec12::zeros();
        let mut energy_e = 0.0;
        for (wk, pk) in proj.terms(e, &f) {
            let pv = SVector::<f64, 9>::from_column_slice(pk.as_slice());
            energy_e += 0.5 * wk * (fv - pv).norm_squared();
            rhs_e += wk * g.transpose() * pv;
        }
        re.copy_from_slice(rhs_e.as_slice());
        *en = energy_e;
    });
}

/// The 0/1 assembly matrix `P` (`nrows × 12 ne`) with `(P r)_i = Σ` of the element entries of
/// DOF `row_of_dof[i]`, in element order (`b = M q̃ + h² P r`, Eq. 6): `row_of[d]` maps a velocity
/// index to its row (`None`: not assembled, e.g. a prescribed DOF).
pub fn assembly_matrix(el: &PdElements, row_of: &[Option<usize>], nrows: usize) -> crate::sparse::Csr {
    let mut t = Vec::with_capacity(12 * el.len());
    for (e, dofs) in el.dofs.iter().enumerate() {
        for (a, &d) in dofs.iter().enumerate() {
            for i in 0..3 {
                if let Some(row) = row_of[d + i] {
                    t.push((row, 12 * e + 3 * a + i, 1.0));
                }
            }
        }
    }
    crate::sparse::Csr::from_triplets(nrows, 12 * el.len(), &t)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Arap;
    impl HostProjection for Arap {
        fn terms(&self, _e: usize, f: &Matrix3<f64>) -> Vec<(f64, Matrix3<f64>)> {
            let svd = f.svd(true, true);
            vec![(2.0, svd.u.unwrap() * svd.v_t.unwrap())]
        }
    }

    /// A unit tetrahedron's `G` maps node positions to `F`; at the rest shape `F = I = R`, so the
    /// energy is 0 and `r = w Gᵀ vec I`; the assembly sums the entries of a DOF in element order.
    #[test]
    fn rest_shape_has_zero_energy_and_assembly_sums_entries() {
        // G for the rest tet (0,0,0),(1,0,0),(0,1,0),(0,0,1): F = [x1−x0, x2−x0, x3−x0]
        let mut g = Gradient::zeros();
        for c in 0..3 {
            for i in 0..3 {
                g[(3 * c + i, 3 * (c + 1) + i)] = 1.0;
                g[(3 * c + i, i)] = -1.0;
            }
        }
        let el = PdElements {
            dofs: vec![[0, 3, 6, 9], [0, 3, 6, 9]],
            g: vec![g, g],
            w_rot: vec![2.0; 2],
            w_vol: vec![0.0; 2],
        };
        let q = [0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.];
        let (mut r, mut en) = (vec![0.0; 24], vec![1.0; 2]);
        local_step_host(&el, &Arap, &q, &mut r, &mut en);
        assert!(en.iter().all(|&e| e.abs() < 1e-28), "{en:?}");
        let id = SVector::<f64, 9>::from_column_slice(Matrix3::<f64>::identity().as_slice());
        let expect = 2.0 * g.transpose() * id;
        assert!((Vec12::from_column_slice(&r[..12]) - expect).norm() < 1e-14);
        let rows: Vec<Option<usize>> = (0..12).map(|d| (d >= 3).then(|| d - 3)).collect();
        let p = assembly_matrix(&el, &rows, 9);
        let mut b = vec![0.0; 9];
        p.mul_into(&r, &mut b);
        for (i, bi) in b.iter().enumerate() {
            assert_eq!(*bi, r[3 + i] + r[15 + i]);
        }
    }
}
