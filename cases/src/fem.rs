//! Helpers shared by the cases with deformable (tetrahedral FEM) bodies: material names, the
//! capability set they ask for, and measurements of node positions read back from a trace's `q`
//! (rigid bodies first, 7 numbers each; then every deformable body, 3 numbers per node).

use harness::model::{DeformableBody, ElasticModel, World};
use harness::resources::ProblemSize;
use harness::Capabilities;
use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};

/// The `material` option of the deformable cases: `"arap" | "corotational" | "neohookean"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FemMaterial {
    /// As-rigid-as-possible.
    Arap,
    /// Co-rotational linear elasticity.
    Corotational,
    /// Stable Neo-Hookean.
    Neohookean,
}

impl FemMaterial {
    /// The constitutive model.
    pub fn model(self) -> ElasticModel {
        match self {
            FemMaterial::Arap => ElasticModel::Arap,
            FemMaterial::Corotational => ElasticModel::CoRotational,
            FemMaterial::Neohookean => ElasticModel::StableNeoHookean,
        }
    }
}

/// The size of a box mesh of `nx x ny x nz` cells (6 tetrahedra each) run for `steps` steps,
/// from the parameters alone ([`harness::CaseDef::size_hint`]): the runner refuses a mesh that
/// would not fit in memory before building it.
pub fn box_mesh_size(nx: i64, ny: i64, nz: i64, steps: usize, driver: &str) -> ProblemSize {
    let (x, y, z) = (nx as f64, ny as f64, nz as f64);
    let nodes = (x + 1.0) * (y + 1.0) * (z + 1.0);
    ProblemSize {
        dofs: 3.0 * nodes,
        elements: 6.0 * x * y * z,
        contacts: 4.0 * nodes,
        steps: steps as f64,
        driver: driver.to_string(),
    }
}

/// What a solver must support to run a deformable case (`contact`: it has node contacts, rigid).
pub fn needs(contact: bool) -> Capabilities {
    Capabilities { deformable_bodies: true, rigid_contact: contact, ..Default::default() }
}

/// Offset in `q` of deformable body `d`'s first node coordinate.
pub fn q_offset(world: &World, d: usize) -> usize {
    7 * world.bodies.len() + world.deformables[..d].iter().map(|b| 3 * b.num_nodes()).sum::<usize>()
}

/// Node `a` of deformable body `d` read from `q`.
pub fn node(world: &World, q: &[f64], d: usize, a: usize) -> Vector3<f64> {
    let o = q_offset(world, d) + 3 * a;
    Vector3::new(q[o], q[o + 1], q[o + 2])
}

/// Smallest volume ratio `det F = det D_s / det D_m` over the tetrahedra of `body` (body `d` of
/// `world`) at the configuration `q`; `<= 0` means an element is flat or inverted.
pub fn min_volume_ratio(world: &World, q: &[f64], d: usize) -> f64 {
    let body: &DeformableBody = &world.deformables[d];
    let det = |x: &dyn Fn(usize) -> Vector3<f64>, t: &[usize; 4]| {
        Matrix3::from_columns(&[x(t[1]) - x(t[0]), x(t[2]) - x(t[0]), x(t[3]) - x(t[0])]).determinant()
    };
    let rest = |a: usize| body.rest[a];
    let now = |a: usize| node(world, q, d, a);
    body.tets.iter().map(|t| det(&now, t) / det(&rest, t)).fold(f64::INFINITY, f64::min)
}

/// Node masses times node velocities summed, over the total mass: the centre-of-mass velocity of
/// deformable body `d` from a trace's `v` (deformable velocities follow the rigid bodies' free
/// DOFs; `v_offset` is that start, [`World::deformable_v_offsets`]).
pub fn com_velocity(masses: &[f64], v: &[f64], v_offset: usize) -> Vector3<f64> {
    let total: f64 = masses.iter().sum();
    let p: Vector3<f64> = masses
        .iter()
        .enumerate()
        .map(|(a, m)| *m * Vector3::new(v[v_offset + 3 * a], v[v_offset + 3 * a + 1], v[v_offset + 3 * a + 2]))
        .sum();
    p / total
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness::model::{ElasticMaterial, Material};

    #[test]
    fn volume_ratio_of_rest_and_scaled_mesh() {
        let mut w = World::new();
        let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: 1e5, poisson_ratio: 0.3 };
        w.deformables.push(DeformableBody::box_mesh(
            "b",
            Vector3::zeros(),
            Vector3::new(1.0, 0.5, 0.5),
            [2, 1, 1],
            1000.0,
            mat,
            Material::rigid(0.5),
        ));
        let q = w.positions();
        assert!((min_volume_ratio(&w, &q, 0) - 1.0).abs() < 1e-12);
        let scaled: Vec<f64> = q.iter().map(|x| 0.5 * x).collect();
        assert!((min_volume_ratio(&w, &scaled, 0) - 0.125).abs() < 1e-12);
        let mirrored: Vec<f64> = q.chunks(3).flat_map(|c| [-c[0], c[1], c[2]]).collect();
        assert!(min_volume_ratio(&w, &mirrored, 0) < 0.0);
        assert_eq!(FemMaterial::Neohookean.model(), ElasticModel::StableNeoHookean);
        assert_eq!(FemMaterial::Corotational.model(), ElasticModel::CoRotational);
        assert_eq!(FemMaterial::Arap.model(), ElasticModel::Arap);
    }
}
