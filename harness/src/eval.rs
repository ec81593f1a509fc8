//! [`WorldEval`]: the [`ModelEval`] of a world at the start of a step (the trait and its data
//! types are the solver API's, [`api::eval`], re-exported here).
//!
//! [`WorldEval`] re-evaluates at another configuration `q` on one scratch copy of the world,
//! made at the first such call of a step and then only re-positioned (`World::set_state`), so a
//! Newton iteration costs a position update, not a copy of the world.

use crate::contact::ContactSet;
use crate::geometry;
use crate::model::{BilateralSet, World};
pub use api::eval::*;
use kernels::sparse::Csr;
use nalgebra::Matrix3;
use std::sync::Mutex;

/// [`ModelEval`] of a world at the start of a step (see the module doc).
pub struct WorldEval<'a> {
    world: &'a World,
    /// The scratch copy and the start-of-step velocities it is re-positioned with, made on first
    /// use (most steps of velocity-level solvers never re-evaluate: they pay nothing here).
    scratch: Mutex<Option<(World, Vec<f64>)>>,
}

impl<'a> WorldEval<'a> {
    /// The evaluator of `world` at its current state.
    pub fn new(world: &'a World) -> Self {
        Self { world, scratch: Mutex::new(None) }
    }

    /// Runs `f` on the scratch world placed at configuration `q` (velocities of the start).
    fn at<T>(&self, q: &[f64], f: impl FnOnce(&World) -> T) -> T {
        let mut guard = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let (w, v0) = guard.get_or_insert_with(|| (self.world.clone(), self.world.velocities()));
        w.set_state(q, v0);
        f(w)
    }
}

impl ModelEval for WorldEval<'_> {
    fn integrate(&self, q0: &[f64], v: &[f64], dt: f64) -> Vec<f64> {
        self.world.integrate_positions(q0, v, dt)
    }

    fn contacts_at(&self, q: &[f64], contacts: &ContactSet, how: Reevaluation) -> ContactSet {
        self.at(q, |w| match how {
            Reevaluation::Features => geometry::reevaluate(w, contacts),
            Reevaluation::Carried => geometry::carried(self.world, w, contacts),
        })
    }

    fn bilateral_at(&self, q: &[f64], rows: &BilateralSet) -> BilateralSet {
        self.at(q, |w| w.bilateral_rows_like(rows))
    }

    fn elastic_energy_at(&self, q: &[f64]) -> f64 {
        self.at(q, World::elastic_energy)
    }

    fn elastic_gradient_at(&self, q: &[f64]) -> Vec<f64> {
        self.at(q, World::elastic_gradient)
    }

    fn elastic_hessian_at(&self, q: &[f64]) -> Option<Csr> {
        self.at(q, |w| w.elastic_hessian(true))
    }

    fn elastic_hessian_at_start(&self, _q0: &[f64]) -> Option<Csr> {
        self.world.elastic_hessian(true)
    }

    fn elastic_key(&self) -> ElasticKey {
        ElasticKey::new(
            self.world
                .deformables
                .iter()
                .map(|d| {
                    let e = d.elastic;
                    let model = format!("{:?}", e.model);
                    (d.num_nodes(), d.tets.len(), d.density, model, e.youngs_modulus, e.poisson_ratio)
                })
                .collect(),
        )
    }

    fn projective_elements(&self) -> Vec<ProjectiveElement> {
        let w = self.world;
        let mut out = Vec::new();
        for (body, (d, off)) in w.deformables.iter().zip(w.deformable_v_offsets()).enumerate() {
            for (index, tet) in d.tets.iter().enumerate() {
                let g = d.gradient_operator(index);
                let weight: f64 = d.projective_terms_at(index, &Matrix3::identity()).iter().map(|p| p.0).sum();
                out.push(ProjectiveElement { body, index, dofs: tet.map(|a| off + 3 * a), g, weight });
            }
        }
        out
    }

    fn projective_terms(&self, body: usize, index: usize, f: &Matrix3<f64>) -> Vec<(f64, Matrix3<f64>)> {
        self.world.deformables[body].projective_terms_at(index, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        DeformableBody, ElasticMaterial, ElasticModel, Joint, Material, RigidBody, Shape, StaticCollider, StaticShape,
    };
    use nalgebra::Vector3;

    /// A sphere and a small FEM box resting on the ground (contacts on the sphere and the nodes),
    /// the sphere hinged to the world at its side (5 joint rows).
    fn scene() -> World {
        let mut w = World::new();
        w.statics.push(StaticCollider {
            name: "ground".into(),
            shape: StaticShape::HalfSpace { normal: Vector3::z(), offset: 0.0 },
            material: Material::rigid(0.5),
        });
        let ball = RigidBody::new(
            "ball",
            Shape::Sphere { radius: 0.1 },
            1.0,
            Vector3::new(0.0, 0.0, 0.101),
            Material::rigid(0.5),
        );
        w.bodies.push(ball);
        let hinge = Joint::hinge_at(&w, 0, None, Vector3::new(0.1, 0.0, 0.101), Vector3::new(0.0, 1.0, 0.2));
        w.joints.push(hinge);
        let mat = ElasticMaterial { model: ElasticModel::Arap, youngs_modulus: 1e5, poisson_ratio: 0.3 };
        let size = Vector3::new(0.1, 0.1, 0.1);
        let origin = Vector3::new(0.5, 0.0, 0.001);
        w.deformables.push(DeformableBody::box_mesh("box", origin, size, [1; 3], 1000.0, mat, Material::rigid(0.5)));
        w
    }

    /// `q0` moved by a small smooth displacement (scaled by `s`).
    fn moved(q0: &[f64], s: f64) -> Vec<f64> {
        q0.iter().enumerate().map(|(i, x)| x + s * 1e-3 * ((i as f64).sin())).collect()
    }

    fn bits(x: &[f64]) -> Vec<u64> {
        x.iter().map(|v| v.to_bits()).collect()
    }

    /// The test scene with its box deformed, and the same world without deformable bodies.
    fn deformed_and_rigid() -> (World, World) {
        let at_rest = scene();
        let w = at_rest.at_positions(&moved(&at_rest.positions(), 1.0));
        let mut rigid = w.clone();
        rigid.deformables.clear();
        (w, rigid)
    }

    #[test]
    fn step_problem_splits_the_elastic_forces_off_its_forces() {
        let (w, rigid) = deformed_and_rigid();
        let contacts = geometry::detect(&w, 0.01);
        let p = w.step_problem(&contacts, 0.01, None).unwrap();
        let grad = w.elastic_gradient();
        assert!(grad.iter().any(|g| g.abs() > 1.0), "the box is deformed: {grad:?}");
        // forces are the world's, elastic part included; the split-off part is −∂U/∂x exactly
        assert_eq!(bits(&p.forces), bits(&w.forces()));
        assert_eq!(bits(p.elastic_forces.as_ref().unwrap()), bits(&grad.iter().map(|g| -g).collect::<Vec<_>>()));
        // what remains on a node is gravity on its lumped mass, to the rounding of f = m g − ∂U/∂x
        let (ext, off) = (p.external_forces(), w.deformable_v_offsets()[0]);
        for (a, m) in w.deformables[0].node_masses().into_iter().enumerate() {
            for i in 0..3 {
                let (k, mg) = (off + 3 * a + i, m * w.gravity[i]);
                assert!((ext[k] - mg).abs() <= 2.0 * f64::EPSILON * (mg.abs() + grad[k].abs()), "dof {k}");
            }
        }
        // rigid DOFs carry no elastic part
        assert!(p.elastic_forces.unwrap()[..off].iter().all(|&e| e == 0.0));
        // a world without deformables has none to split off
        let contacts = geometry::detect(&rigid, 0.01);
        let p = rigid.step_problem(&contacts, 0.01, None).unwrap();
        assert!(p.elastic_forces.is_none());
        assert_eq!(bits(&p.external_forces()), bits(&p.forces));
    }

    /// The step's elastic Hessian is assembled only when a solver asks for it, and is then the
    /// world's own at `q0`, bit for bit (a method that never reads it pays nothing).
    #[test]
    fn step_problem_assembles_the_elastic_hessian_on_first_use() {
        let (w, rigid) = deformed_and_rigid();
        let contacts = geometry::detect(&w, 0.01);
        let p = w.step_problem(&contacts, 0.01, None).unwrap();
        assert!(!p.elastic_hessian_is_assembled(), "not assembled by World::step_problem");
        let (h, h_ref) = (p.elastic_hessian().unwrap(), w.elastic_hessian(true).unwrap());
        assert!(p.elastic_hessian_is_assembled());
        assert_eq!(
            (h.nrows, h.ncols, &h.indptr, &h.indices),
            (h_ref.nrows, h_ref.ncols, &h_ref.indptr, &h_ref.indices)
        );
        assert_eq!(bits(&h.data), bits(&h_ref.data));
        assert!(h_ref.data.iter().any(|x| *x != 0.0), "the box is deformable");
        // without deformables there is none
        let contacts = geometry::detect(&rigid, 0.01);
        assert!(rigid.step_problem(&contacts, 0.01, None).unwrap().elastic_hessian().is_none());
    }

    #[test]
    fn world_eval_matches_a_copy_of_the_world_placed_at_q() {
        let w = scene();
        let contacts = geometry::detect(&w, 0.01);
        assert!(contacts.contacts.iter().any(|c| c.body_a == Some(0)), "sphere contact");
        assert!(contacts.len() > 1, "node contacts");
        let eval = WorldEval::new(&w);
        let rows = w.bilateral_rows();
        assert_eq!(rows.len(), 5, "hinge rows");
        // repeated calls at different q reuse one scratch world: each must equal a fresh copy
        for s in [1.0, -2.0, 0.5, 0.0] {
            let q = moved(&w.positions(), s);
            let at = w.at_positions(&q);
            assert_eq!(eval.bilateral_at(&q, &rows), at.bilateral_rows());
            assert_eq!(eval.contacts_at(&q, &contacts, Reevaluation::Features), geometry::reevaluate(&at, &contacts));
            assert_eq!(eval.contacts_at(&q, &contacts, Reevaluation::Carried), geometry::carried(&w, &at, &contacts));
            assert_eq!(eval.elastic_energy_at(&q).to_bits(), at.elastic_energy().to_bits());
            assert_eq!(bits(&eval.elastic_gradient_at(&q)), bits(&at.elastic_gradient()));
            let (h, h_ref) = (eval.elastic_hessian_at(&q).unwrap(), at.elastic_hessian(true).unwrap());
            assert_eq!((h.indptr, h.indices, bits(&h.data)), (h_ref.indptr, h_ref.indices, bits(&h_ref.data)));
            assert_eq!(
                bits(&eval.integrate(&q, &w.velocities(), 0.01)),
                bits(&w.integrate_positions(&q, &w.velocities(), 0.01))
            );
        }
        // the start configuration gives the start contacts back
        assert_eq!(
            eval.contacts_at(&w.positions(), &contacts, Reevaluation::Features),
            geometry::reevaluate(&w, &contacts)
        );
    }

    #[test]
    fn projective_form_of_the_world() {
        let w = scene();
        let eval = WorldEval::new(&w);
        let d = &w.deformables[0];
        let elements = eval.projective_elements();
        assert_eq!(elements.len(), d.tets.len());
        let off = w.deformable_v_offsets()[0];
        for el in &elements {
            assert_eq!((el.body, el.dofs), (0, d.tets[el.index].map(|a| off + 3 * a)));
            assert_eq!(el.g, d.gradient_operator(el.index));
            let f = Matrix3::identity() * 1.1;
            assert_eq!(eval.projective_terms(0, el.index, &f), d.projective_terms_at(el.index, &f));
            // ARAP: one term of weight 2 μ V
            let (mu, _) = d.elastic.lame();
            assert!((el.weight - 2.0 * mu * d.rest_volume(el.index)).abs() <= 1e-12 * el.weight);
        }
        let mut other = w.clone();
        assert_eq!(WorldEval::new(&other).elastic_key(), eval.elastic_key());
        other.deformables[0].elastic.youngs_modulus *= 2.0;
        assert_ne!(WorldEval::new(&other).elastic_key(), eval.elastic_key());
    }
}
