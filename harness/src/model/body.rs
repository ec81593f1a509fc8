//! Rigid bodies, their shapes, materials and velocity restrictions.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// Collision and inertia shape of a rigid body, in the body frame (centred at the centre of mass).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Sphere of the given radius (m).
    Sphere { radius: f64 },
    /// Box with the given half extents along the body x, y, z axes (m).
    Box { half_extents: [f64; 3] },
    /// Solid cylinder whose axis is the body **y** axis; `half_height` is half its length (m).
    Cylinder { radius: f64, half_height: f64 },
}

impl Shape {
    /// Principal moments of inertia (kg m^2) of a uniform solid of mass `m`, about the body axes.
    pub fn principal_inertia(&self, m: f64) -> Vector3<f64> {
        match *self {
            Shape::Sphere { radius: r } => Vector3::repeat(0.4 * m * r * r),
            Shape::Box { half_extents: h } => {
                let (x2, y2, z2) = ((2.0 * h[0]).powi(2), (2.0 * h[1]).powi(2), (2.0 * h[2]).powi(2));
                Vector3::new(m * (y2 + z2) / 12.0, m * (x2 + z2) / 12.0, m * (x2 + y2) / 12.0)
            }
            Shape::Cylinder { radius: r, half_height: h } => {
                let l2 = (2.0 * h).powi(2);
                let side = m * (3.0 * r * r + l2) / 12.0;
                Vector3::new(side, 0.5 * m * r * r, side)
            }
        }
    }

    /// Volume (m^3).
    pub fn volume(&self) -> f64 {
        match *self {
            Shape::Sphere { radius: r } => 4.0 / 3.0 * std::f64::consts::PI * r.powi(3),
            Shape::Box { half_extents: h } => 8.0 * h[0] * h[1] * h[2],
            Shape::Cylinder { radius: r, half_height: h } => std::f64::consts::PI * r * r * 2.0 * h,
        }
    }

    /// Radius of the smallest sphere about the body origin that contains the shape (m).
    pub fn bounding_radius(&self) -> f64 {
        match *self {
            Shape::Sphere { radius } => radius,
            Shape::Box { half_extents: h } => (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt(),
            Shape::Cylinder { radius, half_height } => (radius * radius + half_height * half_height).sqrt(),
        }
    }
}

/// Surface material of a collider: Coulomb friction and the contact model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Material {
    /// Coulomb friction coefficient (dimensionless, >= 0).
    pub mu: f64,
    /// Rigid or compliant (stiffness + dissipation time) contact.
    pub compliance: super::ContactCompliance,
}

impl Material {
    /// A rigid-contact material with friction `mu`.
    pub fn rigid(mu: f64) -> Self {
        Self { mu, compliance: super::ContactCompliance::Rigid }
    }
    /// A compliant-contact material: stiffness `k` (N/m) and dissipation time `tau_d` (s).
    pub fn compliant(mu: f64, k: f64, tau_d: f64) -> Self {
        Self { mu, compliance: super::ContactCompliance::Compliant { stiffness: k, dissipation_time: tau_d } }
    }
}

/// Which of the six world-frame velocity components `(vx, vy, vz, wx, wy, wz)` of a rigid body are
/// free. Excluded components are held at zero (e.g. planar x-z motion with rotation about y is
/// `DofMask::PLANAR_XZ`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DofMask(pub [bool; 6]);

impl DofMask {
    /// All six components free.
    pub const FREE: DofMask = DofMask([true; 6]);
    /// Translation in x and z, rotation about y.
    pub const PLANAR_XZ: DofMask = DofMask([true, false, true, false, true, false]);
    /// Translation along z only.
    pub const VERTICAL: DofMask = DofMask([false, false, true, false, false, false]);

    /// Number of free components.
    pub fn count(&self) -> usize {
        self.0.iter().filter(|&&b| b).count()
    }
    /// Indices (0..6) of the free components, in order.
    pub fn free_indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..6).filter(move |&i| self.0[i])
    }
}

/// A rigid body: shape, inertia, material, state, and velocity restrictions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RigidBody {
    /// Name for reports (e.g. "box", "sphere3").
    pub name: String,
    /// Collision and inertia shape.
    pub shape: Shape,
    /// Mass (kg, > 0).
    pub mass: f64,
    /// Principal moments of inertia about the body axes (kg m^2).
    pub inertia: Vector3<f64>,
    /// Centre of mass in the world frame (m).
    pub position: Vector3<f64>,
    /// Orientation (body to world).
    pub orientation: UnitQuaternion<f64>,
    /// Linear velocity of the centre of mass, world frame (m/s).
    pub linear_velocity: Vector3<f64>,
    /// Angular velocity, world frame (rad/s).
    pub angular_velocity: Vector3<f64>,
    /// Free velocity components.
    pub dofs: DofMask,
    /// Surface material.
    pub material: Material,
    /// Constant applied force at the centre of mass, world frame (N); its work is not part of the
    /// energy terms.
    #[serde(default)]
    pub applied_force: Vector3<f64>,
    /// Constant applied torque, world frame (N m).
    #[serde(default)]
    pub applied_torque: Vector3<f64>,
}

impl RigidBody {
    /// A uniform body of mass `mass` at rest at `position` with identity orientation; inertia from the shape.
    pub fn new(name: impl Into<String>, shape: Shape, mass: f64, position: Vector3<f64>, material: Material) -> Self {
        Self {
            name: name.into(),
            shape,
            mass,
            inertia: shape.principal_inertia(mass),
            position,
            orientation: UnitQuaternion::identity(),
            linear_velocity: Vector3::zeros(),
            angular_velocity: Vector3::zeros(),
            dofs: DofMask::FREE,
            material,
            applied_force: Vector3::zeros(),
            applied_torque: Vector3::zeros(),
        }
    }

    /// Restricts the body to the given velocity components.
    pub fn with_dofs(mut self, dofs: DofMask) -> Self {
        self.dofs = dofs;
        self
    }

    /// Sets the orientation.
    pub fn with_orientation(mut self, q: UnitQuaternion<f64>) -> Self {
        self.orientation = q;
        self
    }

    /// World-frame inertia tensor `R I R^T` (kg m^2).
    pub fn world_inertia(&self) -> Matrix3<f64> {
        let r = self.orientation.to_rotation_matrix();
        r.matrix() * Matrix3::from_diagonal(&self.inertia) * r.matrix().transpose()
    }

    /// The full 6x6 spatial mass matrix `diag(m I3, R I R^T)` at the current orientation.
    pub fn spatial_mass(&self) -> nalgebra::Matrix6<f64> {
        let mut m = nalgebra::Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).fill_diagonal(self.mass);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&self.world_inertia());
        m
    }

    /// Full 6-vector `(v, w)`.
    pub fn twist(&self) -> [f64; 6] {
        let (v, w) = (self.linear_velocity, self.angular_velocity);
        [v.x, v.y, v.z, w.x, w.y, w.z]
    }

    /// Kinetic energy `1/2 m |v|^2 + 1/2 w . (R I R^T) w` (J).
    pub fn kinetic_energy(&self) -> f64 {
        let w = self.angular_velocity;
        0.5 * self.mass * self.linear_velocity.norm_squared() + 0.5 * w.dot(&(self.world_inertia() * w))
    }

    /// 3x6 Jacobian of the world velocity of the material point currently at world position `p`
    /// with respect to the full twist `(v, w)`: `v_p = v + w x (p - x) = [I, -[r]x] (v, w)`.
    pub fn point_jacobian(&self, p: &Vector3<f64>) -> nalgebra::Matrix3x6<f64> {
        let r = p - self.position;
        let mut j = nalgebra::Matrix3x6::zeros();
        j.fixed_view_mut::<3, 3>(0, 0).fill_diagonal(1.0);
        // -[r]x
        j.fixed_view_mut::<3, 3>(0, 3).copy_from(&(-r.cross_matrix()));
        j
    }
}
