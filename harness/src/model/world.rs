//! The world: bodies, static colliders, springs and gravity, with the maps between the world state
//! and the generalized vectors `q` (positions) and `v` (velocities) of [`DofLayout`].

use super::{BlockKind, ContactCompliance, DofBlock, DofLayout, Material, RigidBody};
use kernels::BlockDiagonal;
use nalgebra::{DMatrix, Matrix3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// Combined friction coefficient of two materials: harmonic mean `2 mu_a mu_b / (mu_a + mu_b)`
/// (Drake's rule; equal inputs give the same value; zero if either is zero).
pub fn combine_friction(a: f64, b: f64) -> f64 {
    if a == b {
        a
    } else if a + b == 0.0 {
        0.0
    } else {
        2.0 * a * b / (a + b)
    }
}

/// Geometry of a static (immovable) collider.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StaticShape {
    /// The half-space `{x : normal . x <= offset}`; its surface is `normal . x = offset` and
    /// `normal` (unit) points out of the solid.
    HalfSpace { normal: Vector3<f64>, offset: f64 },
    /// A fixed box (walls, steps).
    Box { center: Vector3<f64>, orientation: UnitQuaternion<f64>, half_extents: [f64; 3] },
    /// A fixed sphere; `radius = 0` is a point collider (e.g. one element of a Winkler foundation,
    /// `cases/src/winkler_cube.rs`). Contacts with bodies use the closed-form sphere formulas.
    Sphere { center: Vector3<f64>, radius: f64 },
}

/// A static collider: geometry and material.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticCollider {
    /// Name for reports ("ground", "slope", "wall_x+").
    pub name: String,
    /// Geometry.
    pub shape: StaticShape,
    /// Surface material.
    pub material: Material,
}

/// A linear spring between a material point of a body and a fixed world point.
///
/// With `axis = None` it is an isotropic spring of length `l = |p - anchor|`; with `axis = Some(a)`
/// (unit) it acts only along `a` with signed length `l = (p - anchor) . a`. Force on the body point:
/// `-stiffness (l - rest_length) d`, `d` the unit direction; energy `1/2 stiffness (l - rest_length)^2`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spring {
    /// Index of the body.
    pub body: usize,
    /// Attachment point in the body frame (m).
    pub local_point: Vector3<f64>,
    /// Fixed world point (m).
    pub anchor: Vector3<f64>,
    /// Stiffness (N/m).
    pub stiffness: f64,
    /// Rest length (m).
    pub rest_length: f64,
    /// Direction of a one-dimensional spring, or `None` for an isotropic one.
    pub axis: Option<Vector3<f64>>,
}

impl Spring {
    fn world_point(&self, body: &RigidBody) -> Vector3<f64> {
        body.position + body.orientation * self.local_point
    }
    /// Signed length and unit direction at the current configuration.
    fn length_and_direction(&self, p: &Vector3<f64>) -> (f64, Vector3<f64>) {
        let d = p - self.anchor;
        match self.axis {
            Some(a) => (d.dot(&a), a),
            None => {
                let l = d.norm();
                let dir = if l > 0.0 { d / l } else { Vector3::x() };
                (l, dir)
            }
        }
    }
}

/// A time-dependent point load on a rigid body: the constant world-frame force `force` applied at
/// the body-frame point `center + radius (cos w t, sin w t, 0)` (a point circling the body z axis
/// at `w = angular_frequency`; `radius = 0` or `w = 0` is a fixed point). `t` is [`World::time`].
/// Drumwright's circling load on the Winkler cube (§5.5) is `center = (0, 0, s/2)`,
/// `radius = s/2`, `w = 10 rad/s`. Explicit in the step, like every non-contact force.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PointLoad {
    /// Index of the body.
    pub body: usize,
    /// World-frame force (N).
    pub force: Vector3<f64>,
    /// Centre of the circle, body frame (m).
    pub center: Vector3<f64>,
    /// Radius of the circle in the body x–y plane (m, >= 0).
    pub radius: f64,
    /// Angular frequency of the circling (rad/s).
    pub angular_frequency: f64,
}

impl PointLoad {
    /// Body-frame application point at time `t`.
    pub fn local_point(&self, t: f64) -> Vector3<f64> {
        let a = self.angular_frequency * t;
        self.center + self.radius * Vector3::new(a.cos(), a.sin(), 0.0)
    }
}

/// Invalid world data, found by [`World::validate`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorldError {
    /// A quantity is NaN or infinite.
    #[error("{what} is not finite")]
    NonFinite { what: String },
    /// A quantity is out of its physical range.
    #[error("{what} must be {bound}, got {value}")]
    OutOfRange { what: String, bound: &'static str, value: f64 },
    /// A body has a velocity in a component that its DOF mask excludes.
    #[error("body '{body}' has a nonzero velocity in a locked DOF")]
    LockedVelocity { body: String },
    /// A spring refers to a body that does not exist.
    #[error("spring {index} refers to body {body}, but there are {n} bodies")]
    BadSpring { index: usize, body: usize, n: usize },
    /// A joint is malformed (bad body index, axis, compliance).
    #[error("joint {index} ('{name}'): {why}")]
    BadJoint { index: usize, name: String, why: super::JointError },
    /// A rigid body's shape is malformed: a size out of range, a bad compound part, or a body frame
    /// that is not the mass frame (centroid off the origin, principal axes off the body axes).
    #[error("body '{body}' shape: {why}")]
    BadShape { body: String, why: super::ShapeError },
    /// A deformable body is malformed.
    #[error("deformable '{name}': {why}")]
    BadDeformable { name: String, why: super::DeformableError },
}

/// Everything that moves or collides, and the forces acting apart from contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct World {
    /// Gravity acceleration (m/s^2); design convention is `(0, 0, -g)`.
    pub gravity: Vector3<f64>,
    /// Dynamic rigid bodies.
    pub bodies: Vec<RigidBody>,
    /// Static colliders.
    pub statics: Vec<StaticCollider>,
    /// Springs from body points to world points.
    pub springs: Vec<Spring>,
    /// Bilateral joints between bodies or a body and the world ([`super::Joint`]).
    #[serde(default)]
    pub joints: Vec<super::Joint>,
    /// Deformable (tetrahedral FEM) bodies; their DOFs follow the rigid bodies' in the layout.
    #[serde(default)]
    pub deformables: Vec<super::DeformableBody>,
    /// Time-dependent point loads ([`PointLoad`]), evaluated at [`World::time`].
    #[serde(default)]
    pub loads: Vec<PointLoad>,
    /// Simulation time (s) of this state: 0 at the start, advanced by the stepper by `dt` per step.
    /// Only time-dependent loads read it.
    #[serde(default)]
    pub time: f64,
}

impl World {
    /// An empty world with standard gravity `(0, 0, -9.81)`.
    pub fn new() -> Self {
        Self {
            gravity: Vector3::new(0.0, 0.0, -9.81),
            bodies: vec![],
            statics: vec![],
            springs: vec![],
            joints: vec![],
            deformables: vec![],
            loads: vec![],
            time: 0.0,
        }
    }

    /// Checks every number for finiteness and physical range: masses and inertias > 0, friction
    /// and stiffness >= 0 (stiffness > 0), dissipation time >= 0, shape sizes > 0, unit normals.
    pub fn validate(&self) -> Result<(), WorldError> {
        fn finite(what: impl FnOnce() -> String, v: &[f64]) -> Result<(), WorldError> {
            if v.iter().all(|x| x.is_finite()) {
                Ok(())
            } else {
                Err(WorldError::NonFinite { what: what() })
            }
        }
        fn positive(what: impl FnOnce() -> String, v: f64) -> Result<(), WorldError> {
            if v > 0.0 {
                Ok(())
            } else {
                Err(WorldError::OutOfRange { what: what(), bound: "> 0", value: v })
            }
        }
        fn material(what: &str, m: &Material) -> Result<(), WorldError> {
            finite(|| format!("{what} friction"), &[m.mu])?;
            if m.mu < 0.0 {
                return Err(WorldError::OutOfRange { what: format!("{what} friction mu"), bound: ">= 0", value: m.mu });
            }
            if let ContactCompliance::Compliant { stiffness, dissipation_time } = m.compliance {
                finite(|| format!("{what} contact stiffness/dissipation"), &[stiffness, dissipation_time])?;
                positive(|| format!("{what} contact stiffness"), stiffness)?;
                if dissipation_time < 0.0 {
                    return Err(WorldError::OutOfRange {
                        what: format!("{what} dissipation time"),
                        bound: ">= 0",
                        value: dissipation_time,
                    });
                }
            }
            Ok(())
        }
        finite(|| "gravity".into(), self.gravity.as_slice())?;
        for b in &self.bodies {
            let n = &b.name;
            finite(|| format!("body '{n}' mass"), &[b.mass])?;
            positive(|| format!("body '{n}' mass"), b.mass)?;
            finite(|| format!("body '{n}' inertia"), b.inertia.as_slice())?;
            for i in 0..3 {
                positive(|| format!("body '{n}' inertia"), b.inertia[i])?;
            }
            finite(|| format!("body '{n}' state"), &b.twist())?;
            finite(
                || format!("body '{n}' applied load"),
                &[b.applied_force.as_slice(), b.applied_torque.as_slice()].concat(),
            )?;
            finite(|| format!("body '{n}' position"), b.position.as_slice())?;
            finite(|| format!("body '{n}' orientation"), b.orientation.coords.as_slice())?;
            b.shape
                .validate()
                .and_then(|()| b.shape.validate_mass_frame())
                .map_err(|why| WorldError::BadShape { body: n.clone(), why })?;
            material(&format!("body '{n}'"), &b.material)?;
            let t = b.twist();
            if (0..6).any(|i| !b.dofs.0[i] && t[i] != 0.0) {
                return Err(WorldError::LockedVelocity { body: n.clone() });
            }
        }
        for s in &self.statics {
            material(&format!("collider '{}'", s.name), &s.material)?;
            if let StaticShape::HalfSpace { normal, offset } = s.shape {
                finite(|| format!("collider '{}' plane", s.name), &[normal.x, normal.y, normal.z, offset])?;
                if (normal.norm() - 1.0).abs() > 1e-9 {
                    return Err(WorldError::OutOfRange {
                        what: format!("collider '{}' normal length", s.name),
                        bound: "1",
                        value: normal.norm(),
                    });
                }
            }
            if let StaticShape::Sphere { center, radius } = s.shape {
                finite(|| format!("collider '{}' sphere", s.name), &[center.x, center.y, center.z, radius])?;
                if radius < 0.0 {
                    return Err(WorldError::OutOfRange {
                        what: format!("collider '{}' radius", s.name),
                        bound: ">= 0",
                        value: radius,
                    });
                }
            }
        }
        for (i, l) in self.loads.iter().enumerate() {
            if l.body >= self.bodies.len() {
                return Err(WorldError::OutOfRange {
                    what: format!("load {i} body index"),
                    bound: "< number of bodies",
                    value: l.body as f64,
                });
            }
            finite(
                || format!("load {i}"),
                &[l.force.as_slice(), l.center.as_slice(), &[l.radius, l.angular_frequency]].concat(),
            )?;
        }
        finite(|| "time".into(), &[self.time])?;
        for (i, s) in self.springs.iter().enumerate() {
            if s.body >= self.bodies.len() {
                return Err(WorldError::BadSpring { index: i, body: s.body, n: self.bodies.len() });
            }
            finite(|| format!("spring {i}"), &[s.stiffness, s.rest_length])?;
            if s.stiffness < 0.0 {
                return Err(WorldError::OutOfRange {
                    what: format!("spring {i} stiffness"),
                    bound: ">= 0",
                    value: s.stiffness,
                });
            }
        }
        for (i, j) in self.joints.iter().enumerate() {
            j.validate(self.bodies.len()).map_err(|why| WorldError::BadJoint {
                index: i,
                name: j.name.clone(),
                why,
            })?;
        }
        for d in &self.deformables {
            d.validate().map_err(|why| WorldError::BadDeformable { name: d.name.clone(), why })?;
            material(&format!("deformable '{}'", d.name), &d.material)?;
        }
        Ok(())
    }

    /// The generalized-coordinate layout: one block per body, in body order.
    pub fn layout(&self) -> DofLayout {
        let mut layout = DofLayout::default();
        // bodies connected by joints form one subsystem (union-find; the world does not connect)
        let subsystems = super::joint_subsystems(self.bodies.len(), &self.joints);
        for (i, b) in self.bodies.iter().enumerate() {
            let nv = b.dofs.count();
            layout.blocks.push(DofBlock {
                kind: BlockKind::RigidBody { index: i },
                v_offset: layout.nv,
                nv,
                q_offset: layout.nq,
                nq: 7,
                subsystem: subsystems[i],
            });
            layout.nv += nv;
            layout.nq += 7;
        }
        let first = self.bodies.len();
        for (i, d) in self.deformables.iter().enumerate() {
            let n = 3 * d.num_nodes();
            layout.blocks.push(DofBlock {
                kind: BlockKind::Deformable { index: i },
                v_offset: layout.nv,
                nv: n,
                q_offset: layout.nq,
                nq: n,
                subsystem: first + i,
            });
            layout.nv += n;
            layout.nq += n;
        }
        layout
    }

    /// Generalized positions `q`: per body `(x, y, z, qw, qx, qy, qz)`.
    pub fn positions(&self) -> Vec<f64> {
        let mut q = Vec::with_capacity(7 * self.bodies.len());
        for b in &self.bodies {
            let c = b.orientation.quaternion().coords; // (i, j, k, w)
            q.extend_from_slice(&[b.position.x, b.position.y, b.position.z, c.w, c.x, c.y, c.z]);
        }
        for d in &self.deformables {
            q.extend(d.positions.iter().flat_map(|x| [x.x, x.y, x.z]));
        }
        q
    }

    /// At least the number of velocity DOFs (6 per body, 3 per deformable node): a capacity
    /// for vectors built by filtering each body's free components, so they never regrow.
    fn nv_capacity(&self) -> usize {
        6 * self.bodies.len() + self.deformables.iter().map(|d| 3 * d.num_nodes()).sum::<usize>()
    }

    /// Generalized velocities `v`: per body the free components of `(v, w)`.
    pub fn velocities(&self) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.nv_capacity());
        for b in &self.bodies {
            let t = b.twist();
            v.extend(b.dofs.free_indices().map(|i| t[i]));
        }
        for d in &self.deformables {
            v.extend(d.velocities.iter().flat_map(|x| [x.x, x.y, x.z]));
        }
        v
    }

    /// Writes `q` and `v` back into the bodies (quaternions renormalized).
    pub fn set_state(&mut self, q: &[f64], v: &[f64]) {
        let mut k = 0;
        for (i, b) in self.bodies.iter_mut().enumerate() {
            let o = 7 * i;
            b.position = Vector3::new(q[o], q[o + 1], q[o + 2]);
            b.orientation =
                UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[o + 3], q[o + 4], q[o + 5], q[o + 6]));
            let mut t = [0.0; 6];
            for j in b.dofs.free_indices() {
                t[j] = v[k];
                k += 1;
            }
            b.linear_velocity = Vector3::new(t[0], t[1], t[2]);
            b.angular_velocity = Vector3::new(t[3], t[4], t[5]);
        }
        let mut o = 7 * self.bodies.len();
        for d in &mut self.deformables {
            for (x, u) in d.positions.iter_mut().zip(d.velocities.iter_mut()) {
                *x = Vector3::new(q[o], q[o + 1], q[o + 2]);
                *u = Vector3::new(v[k], v[k + 1], v[k + 2]);
                o += 3;
                k += 3;
            }
        }
    }

    /// A copy of the world placed at configuration `q` (velocities unchanged). Used to
    /// re-evaluate geometry at another configuration.
    pub fn at_positions(&self, q: &[f64]) -> World {
        let mut w = self.clone();
        let v = self.velocities();
        w.set_state(q, &v);
        w
    }

    /// Integrates positions over `dt` with velocity `v`: `x+ = x + dt v`, `R+ = exp(dt [w]x) R`
    /// (world-frame angular velocity; the quaternion stays unit by construction).
    pub fn integrate_positions(&self, q: &[f64], v: &[f64], dt: f64) -> Vec<f64> {
        let mut out = q.to_vec();
        let mut k = 0;
        for (i, b) in self.bodies.iter().enumerate() {
            let mut t = [0.0; 6];
            for j in b.dofs.free_indices() {
                t[j] = v[k];
                k += 1;
            }
            let o = 7 * i;
            for a in 0..3 {
                out[o + a] = q[o + a] + dt * t[a];
            }
            let rot = UnitQuaternion::from_scaled_axis(Vector3::new(t[3], t[4], t[5]) * dt);
            let q0 = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(q[o + 3], q[o + 4], q[o + 5], q[o + 6]));
            let q1 = rot * q0;
            let c = q1.quaternion().coords;
            out[o + 3..o + 7].copy_from_slice(&[c.w, c.x, c.y, c.z]);
        }
        // deformable nodes: x+ = x + dt v
        let o = 7 * self.bodies.len();
        let n: usize = self.deformables.iter().map(|d| 3 * d.num_nodes()).sum();
        for i in 0..n {
            out[o + i] = q[o + i] + dt * v[k + i];
        }
        out
    }

    /// Reduced mass matrix: per body the free rows/columns of `diag(m I3, R I R^T)`.
    pub fn mass_matrix(&self) -> BlockDiagonal {
        let mut blocks: Vec<DMatrix<f64>> = self.bodies.iter().map(|b| reduce(b, &b.spatial_mass())).collect();
        for d in &self.deformables {
            blocks.extend(d.node_masses().into_iter().map(|m| DMatrix::from_diagonal_element(3, 3, m)));
        }
        BlockDiagonal::new(blocks)
    }

    /// Generalized non-contact force at the current state: gravity, applied force and torque,
    /// springs, and the gyroscopic term `-w x (R I R^T) w`, reduced to the free components, and on
    /// deformable nodes gravity minus the elastic gradient (N, N m).
    pub fn forces(&self) -> Vec<f64> {
        let grad = (!self.deformables.is_empty()).then(|| self.elastic_gradient());
        self.forces_with_gradient(grad.as_deref())
    }

    /// [`Self::forces`] with the elastic gradient `∂U/∂x` already evaluated ([`Self::elastic_gradient`],
    /// length `nv`); `None` only for a world without deformable bodies.
    pub fn forces_with_gradient(&self, elastic_gradient: Option<&[f64]>) -> Vec<f64> {
        let mut full = vec![[0.0f64; 6]; self.bodies.len()];
        for (b, f) in self.bodies.iter().zip(full.iter_mut()) {
            let fg = b.mass * self.gravity + b.applied_force;
            let w = b.angular_velocity;
            let tau = b.applied_torque - w.cross(&(b.world_inertia() * w));
            *f = [fg.x, fg.y, fg.z, tau.x, tau.y, tau.z];
        }
        for l in &self.loads {
            let b = &self.bodies[l.body];
            let torque = (b.orientation * l.local_point(self.time)).cross(&l.force);
            let f = &mut full[l.body];
            for a in 0..3 {
                f[a] += l.force[a];
                f[3 + a] += torque[a];
            }
        }
        for s in &self.springs {
            let b = &self.bodies[s.body];
            let p = s.world_point(b);
            let (l, d) = s.length_and_direction(&p);
            let force = -s.stiffness * (l - s.rest_length) * d;
            let torque = (p - b.position).cross(&force);
            let f = &mut full[s.body];
            for a in 0..3 {
                f[a] += force[a];
                f[3 + a] += torque[a];
            }
        }
        let mut out = Vec::with_capacity(self.nv_capacity());
        for (b, f) in self.bodies.iter().zip(&full) {
            out.extend(b.dofs.free_indices().map(|i| f[i]));
        }
        // deformables: gravity on the lumped node masses minus the elastic gradient
        if !self.deformables.is_empty() {
            let grad = elastic_gradient.expect("a world with deformable bodies needs its elastic gradient");
            let offsets = self.deformable_v_offsets();
            let nv = offsets.last().copied().unwrap_or(0) + 3 * self.deformables.last().map_or(0, |d| d.num_nodes());
            assert_eq!(grad.len(), nv, "elastic gradient of the wrong length");
            for (d, o) in self.deformables.iter().zip(offsets) {
                for (a, m) in d.node_masses().into_iter().enumerate() {
                    out.extend((0..3).map(|i| m * self.gravity[i] - grad[o + 3 * a + i]));
                }
            }
        }
        out
    }

    /// Stiffness of the non-contact forces in velocity coordinates, `K = -d f / d(dq)` with
    /// `dq = v dt`: for each spring `J_p^T K_p J_p` with the translational spring stiffness
    /// `K_p = k (d d^T + (1 - L0/l)(I - d d^T))` (isotropic) or `k a a^T` (axial). The lever-arm
    /// (rotational geometric) term is omitted; it vanishes for springs attached at the centre of mass.
    pub fn force_stiffness(&self) -> BlockDiagonal {
        if self.springs.is_empty() {
            // the same zero blocks, without assembling and reducing zero 6x6 matrices
            let rigid = self.bodies.iter().map(|b| b.dofs.count());
            let nodes = self.deformables.iter().flat_map(|d| (0..d.num_nodes()).map(|_| 3));
            return BlockDiagonal::new(rigid.chain(nodes).map(|n| DMatrix::zeros(n, n)).collect());
        }
        let mut full: Vec<nalgebra::Matrix6<f64>> = vec![nalgebra::Matrix6::zeros(); self.bodies.len()];
        for s in &self.springs {
            let b = &self.bodies[s.body];
            let p = s.world_point(b);
            let (l, d) = s.length_and_direction(&p);
            let kp: Matrix3<f64> = match s.axis {
                Some(a) => s.stiffness * a * a.transpose(),
                None => {
                    let dd = d * d.transpose();
                    let transverse = if l > 0.0 { 1.0 - s.rest_length / l } else { 1.0 };
                    s.stiffness * (dd + transverse * (Matrix3::identity() - dd))
                }
            };
            let jp = b.point_jacobian(&p);
            full[s.body] += jp.transpose() * kp * jp;
        }
        let mut blocks: Vec<DMatrix<f64>> = self.bodies.iter().zip(&full).map(|(b, k)| reduce(b, k)).collect();
        // deformable node blocks are zero here: their (coupled) elastic stiffness is
        // [`World::elastic_hessian`] / `StepProblem::elastic_hessian`
        for d in &self.deformables {
            blocks.extend((0..d.num_nodes()).map(|_| DMatrix::zeros(3, 3)));
        }
        BlockDiagonal::new(blocks)
    }

    /// Kinetic energy (J).
    pub fn kinetic_energy(&self) -> f64 {
        self.bodies.iter().map(|b| b.kinetic_energy()).sum::<f64>()
            + self.deformables.iter().map(|d| d.kinetic_energy()).sum::<f64>()
    }

    /// Gravitational potential energy `-sum m g . x` (J), zero at the origin.
    pub fn gravity_energy(&self) -> f64 {
        self.bodies.iter().map(|b| -b.mass * self.gravity.dot(&b.position)).sum::<f64>()
            + self.deformables.iter().map(|d| d.gravity_energy(&self.gravity)).sum::<f64>()
    }

    /// Elastic energy of the springs (J).
    pub fn spring_energy(&self) -> f64 {
        self.springs
            .iter()
            .map(|s| {
                let p = s.world_point(&self.bodies[s.body]);
                let (l, _) = s.length_and_direction(&p);
                0.5 * s.stiffness * (l - s.rest_length).powi(2)
            })
            .sum()
    }

    /// Whether the system is closed (no gravity, no springs, no static colliders, no locked DOFs,
    /// no applied loads),
    /// so that linear and angular momentum are conserved by exact dynamics.
    pub fn is_closed(&self) -> bool {
        self.gravity == Vector3::zeros()
            && self.springs.is_empty()
            && self.loads.is_empty()
            && self.statics.is_empty()
            && self.deformables.iter().all(|d| d.boundary.is_empty())
            && self.joints.iter().all(|j| j.body_b.is_some())
            && self.bodies.iter().all(|b| {
                b.dofs == super::DofMask::FREE
                    && b.applied_force == Vector3::zeros()
                    && b.applied_torque == Vector3::zeros()
            })
    }

    /// Total linear momentum `sum m v` (kg m/s).
    pub fn linear_momentum(&self) -> Vector3<f64> {
        self.bodies.iter().map(|b| b.mass * b.linear_velocity).sum::<Vector3<f64>>()
            + self.deformables.iter().map(|d| d.linear_momentum()).sum::<Vector3<f64>>()
    }

    /// Total angular momentum about the world origin `sum (x x m v + R I R^T w)` (kg m^2/s).
    pub fn angular_momentum(&self) -> Vector3<f64> {
        self.bodies
            .iter()
            .map(|b| b.position.cross(&(b.mass * b.linear_velocity)) + b.world_inertia() * b.angular_velocity)
            .sum::<Vector3<f64>>()
            + self.deformables.iter().map(|d| d.angular_momentum()).sum::<Vector3<f64>>()
    }
}

impl World {
    /// First velocity index of each deformable body's block (they follow the rigid bodies).
    pub fn deformable_v_offsets(&self) -> Vec<usize> {
        let mut o: usize = self.bodies.iter().map(|b| b.dofs.count()).sum();
        self.deformables
            .iter()
            .map(|d| {
                let start = o;
                o += 3 * d.num_nodes();
                start
            })
            .collect()
    }

    /// Elastic energy of the deformable bodies (J).
    pub fn elastic_energy(&self) -> f64 {
        self.deformables.iter().map(|d| d.elastic_energy()).sum()
    }

    /// Gradient of the elastic energy `∂U/∂x` in velocity coordinates (length `nv`; zero on
    /// rigid DOFs) (N).
    pub fn elastic_gradient(&self) -> Vec<f64> {
        let mut g = vec![0.0; self.layout().nv];
        for (d, o) in self.deformables.iter().zip(self.deformable_v_offsets()) {
            for (i, v) in d.elastic_gradient().into_iter().enumerate() {
                g[o + i] = v;
            }
        }
        g
    }

    /// The elastic stiffness `∂²U/∂x²` as an `nv × nv` sparse matrix (N/m), or `None` without
    /// deformable bodies; `projected`: per-element PSD projection (see [`super::DeformableBody`]).
    pub fn elastic_hessian(&self, projected: bool) -> Option<kernels::sparse::Csr> {
        if self.deformables.is_empty() {
            return None;
        }
        let nv = self.layout().nv;
        let mut t = Vec::new();
        for (d, o) in self.deformables.iter().zip(self.deformable_v_offsets()) {
            d.hessian_triplets(o, projected, &mut t);
        }
        Some(kernels::sparse::Csr::from_triplets(nv, nv, &t))
    }

    /// The prescribed DOFs and the end-of-step velocity each must have over a step of `dt`:
    /// `(v index, (target − x) / dt)` for every node of every [`super::PrescribedMotion`].
    pub fn prescribed_velocities(&self, dt: f64) -> Vec<(usize, f64)> {
        let mut out = Vec::new();
        for (d, o) in self.deformables.iter().zip(self.deformable_v_offsets()) {
            for bc in &d.boundary {
                for &a in &bc.nodes {
                    let x = d.positions[a];
                    let v = (bc.target(&x, dt) - x) / dt;
                    out.extend((0..3).map(|i| (o + 3 * a + i, v[i])));
                }
            }
        }
        out.sort_by_key(|p| p.0);
        out
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

/// The free rows and columns of a 6x6 matrix for body `b` (a free body's: the matrix itself, one
/// copy).
fn reduce(b: &RigidBody, m: &nalgebra::Matrix6<f64>) -> DMatrix<f64> {
    let mut idx = [0; 6];
    let mut n = 0;
    for i in b.dofs.free_indices() {
        idx[n] = i;
        n += 1;
    }
    if n == 6 {
        return DMatrix::from_column_slice(6, 6, m.as_slice());
    }
    DMatrix::from_fn(n, n, |i, j| m[(idx[i], idx[j])])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DofMask, Shape};

    fn ball(z: f64) -> RigidBody {
        RigidBody::new("ball", Shape::Sphere { radius: 0.1 }, 2.0, Vector3::new(0.0, 0.0, z), Material::rigid(0.5))
    }

    #[test]
    fn state_round_trip_and_layout() {
        let mut w = World::new();
        w.bodies.push(ball(1.0));
        w.bodies.push(ball(2.0).with_dofs(DofMask::PLANAR_XZ));
        let l = w.layout();
        assert_eq!((l.nv, l.nq), (9, 14));
        assert_eq!(l.blocks[1].v_offset, 6);
        let q = w.positions();
        let v: Vec<f64> = (0..9).map(|i| i as f64).collect();
        w.set_state(&q, &v);
        assert_eq!(w.velocities(), v);
        assert_eq!(w.bodies[1].angular_velocity, Vector3::new(0.0, 8.0, 0.0));
    }

    #[test]
    fn quaternion_integration_stays_unit_and_rotates() {
        let mut w = World::new();
        w.bodies.push(ball(0.0));
        let q0 = w.positions();
        let v = [0.0, 0.0, 0.0, 0.0, 0.0, std::f64::consts::PI]; // half turn per second about z
        let mut q = q0.clone();
        for _ in 0..1000 {
            q = w.integrate_positions(&q, &v, 1e-3);
        }
        let n: f64 = q[3..7].iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!((n - 1.0).abs() < 1e-14);
        // after 1 s: rotation by pi about z -> quaternion (0, 0, 0, ±1)
        assert!(q[6].abs() > 1.0 - 1e-12, "{:?}", &q[3..7]);
    }

    #[test]
    fn spring_force_energy_and_stiffness_consistent() {
        let mut w = World::new();
        w.gravity = Vector3::zeros();
        w.bodies.push(ball(0.0));
        w.bodies[0].position = Vector3::new(0.3, 0.1, -0.2);
        w.springs.push(Spring {
            body: 0,
            local_point: Vector3::zeros(),
            anchor: Vector3::zeros(),
            stiffness: 100.0,
            rest_length: 0.1,
            axis: None,
        });
        // force = -dE/dx by central differences
        let f = w.forces();
        let k = w.force_stiffness();
        let h = 1e-6;
        for (a, fa) in f.iter().take(3).enumerate() {
            let mut wp = w.clone();
            wp.bodies[0].position[a] += h;
            let mut wm = w.clone();
            wm.bodies[0].position[a] -= h;
            let de = (wp.spring_energy() - wm.spring_energy()) / (2.0 * h);
            assert!((fa + de).abs() < 1e-6, "force axis {a}");
            let (fp, fm) = (wp.forces(), wm.forces());
            for r in 0..3 {
                let dfdx = (fp[r] - fm[r]) / (2.0 * h);
                assert!((k.blocks()[0][(r, a)] + dfdx).abs() < 1e-5, "K[{r},{a}]");
            }
        }
    }

    #[test]
    fn validation_names_the_problem() {
        let mut w = World::new();
        w.bodies.push(ball(0.0));
        w.bodies[0].mass = -1.0;
        assert!(w.validate().unwrap_err().to_string().contains("mass must be > 0"));
        w.bodies[0].mass = 1.0;
        w.bodies[0].material.mu = f64::NAN;
        assert!(w.validate().unwrap_err().to_string().contains("not finite"));
        w.bodies[0].material.mu = -0.1;
        assert!(w.validate().unwrap_err().to_string().contains("friction mu must be >= 0"));
    }

    #[test]
    fn a_compound_off_its_mass_frame_is_rejected_naming_the_body() {
        let part =
            |z: f64| crate::model::ShapePart::new(Shape::Box { half_extents: [0.1; 3] }, Vector3::new(0.0, 0.0, z));
        let mut w = World::new();
        let (shape, _) = Shape::centred_compound(vec![part(0.0), part(0.5)]);
        w.bodies.push(RigidBody::new("table", shape, 1.0, Vector3::zeros(), Material::rigid(0.5)));
        w.validate().unwrap();
        w.bodies[0].shape = Shape::Compound { parts: vec![part(0.0), part(0.5)] };
        let e = w.validate().unwrap_err().to_string();
        assert!(e.starts_with("body 'table' shape: centroid is at (0, 0, 0.25)"), "{e}");
        w.bodies[0].shape = Shape::Box { half_extents: [0.1, -0.1, 0.1] };
        let e = w.validate().unwrap_err().to_string();
        assert_eq!(e, "body 'table' shape: half extent must be > 0 and finite, got -0.1");
    }

    #[test]
    fn friction_and_compliance_combination_idempotent() {
        assert_eq!(combine_friction(0.4, 0.4), 0.4);
        assert_eq!(combine_friction(0.0, 0.4), 0.0);
        let c = ContactCompliance::Compliant { stiffness: 1e4, dissipation_time: 0.02 };
        assert_eq!(ContactCompliance::combine(c, c), c);
        assert_eq!(ContactCompliance::combine(ContactCompliance::Rigid, c), c);
    }
}
