//! Rigid bodies, their shapes, materials and velocity restrictions.

use nalgebra::{Matrix3, UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// Most parts a [`Shape::Compound`] may have: a part index fits in the 8 bits the narrow phase
/// packs into a contact's feature id (`crate::geometry`).
pub const MAX_PARTS: usize = 255;

/// Collision and inertia shape of a rigid body, in the body frame (centred at the centre of mass,
/// with the principal axes of inertia along the body axes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Sphere of the given radius (m).
    Sphere { radius: f64 },
    /// Box with the given half extents along the body x, y, z axes (m).
    Box { half_extents: [f64; 3] },
    /// Solid cylinder whose axis is the body **y** axis; `half_height` is half its length (m).
    Cylinder { radius: f64, half_height: f64 },
    /// The union of primitive parts (1 ..= [`MAX_PARTS`]) of one uniform density, each at a
    /// body-frame pose. Overlapping parts count their common volume twice in the mass properties.
    /// Build it with [`Shape::centred_compound`], which puts the body origin at the centroid.
    Compound { parts: Vec<ShapePart> },
}

/// One primitive part of a [`Shape::Compound`]: a sphere, box or cylinder placed in the body frame
/// at `translation` (m) with orientation `rotation` (part to body).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShapePart {
    /// The part's shape in its own frame (a primitive; nested compounds are rejected by
    /// [`Shape::validate`]).
    pub shape: Shape,
    /// Position of the part's centre in the body frame (m).
    pub translation: Vector3<f64>,
    /// Orientation of the part in the body frame.
    pub rotation: UnitQuaternion<f64>,
}

impl ShapePart {
    /// A part of shape `shape` centred at `translation`, aligned with the body axes.
    pub fn new(shape: Shape, translation: Vector3<f64>) -> Self {
        Self { shape, translation, rotation: UnitQuaternion::identity() }
    }
}

impl Shape {
    /// A compound of `parts` translated so that their common (volume) centroid is the body origin,
    /// and that centroid in the parts' original frame (m): a body built from the parts as given at
    /// pose `(x, R)` is the returned shape at `(x + R shift, R)`. The principal axes are not
    /// rotated: they must already lie along the body axes (checked by [`Shape::validate`]).
    pub fn centred_compound(parts: Vec<ShapePart>) -> (Shape, Vector3<f64>) {
        let shift = Shape::Compound { parts: parts.clone() }.centroid();
        let parts = parts.into_iter().map(|p| ShapePart { translation: p.translation - shift, ..p }).collect();
        (Shape::Compound { parts }, shift)
    }

    /// The primitive parts in the body frame: the shape itself at the origin for a primitive.
    pub fn parts(&self) -> Vec<ShapePart> {
        match self {
            Shape::Compound { parts } => parts.clone(),
            _ => vec![ShapePart::new(self.clone(), Vector3::zeros())],
        }
    }

    /// Inertia tensor (kg m^2) of a uniform solid of mass `m` about the body origin, in body axes.
    /// Compound parts take mass in proportion to their volume and are moved to the origin with
    /// the parallel-axis theorem `I + m_i (|t|^2 1 - t t^T)`.
    pub fn inertia_tensor(&self, m: f64) -> Matrix3<f64> {
        match self {
            Shape::Compound { parts } => {
                let v = self.volume();
                parts
                    .iter()
                    .map(|p| {
                        let mi = m * p.shape.volume() / v;
                        let r = p.rotation.to_rotation_matrix();
                        let t = p.translation;
                        r.matrix() * p.shape.inertia_tensor(mi) * r.matrix().transpose()
                            + mi * (Matrix3::identity() * t.norm_squared() - t * t.transpose())
                    })
                    .sum()
            }
            _ => Matrix3::from_diagonal(&self.primitive_inertia(m)),
        }
    }

    /// Principal moments of inertia (kg m^2) of a uniform solid of mass `m`, about the body axes:
    /// the diagonal of [`Shape::inertia_tensor`] (a valid shape has no off-diagonal terms).
    pub fn principal_inertia(&self, m: f64) -> Vector3<f64> {
        self.inertia_tensor(m).diagonal()
    }

    /// Principal moments of a primitive about its centre (zero for a compound).
    fn primitive_inertia(&self, m: f64) -> Vector3<f64> {
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
            Shape::Compound { .. } => Vector3::zeros(),
        }
    }

    /// Volume (m^3); a compound's is the sum of its parts'.
    pub fn volume(&self) -> f64 {
        match self {
            Shape::Sphere { radius: r } => 4.0 / 3.0 * std::f64::consts::PI * r.powi(3),
            Shape::Box { half_extents: h } => 8.0 * h[0] * h[1] * h[2],
            Shape::Cylinder { radius: r, half_height: h } => std::f64::consts::PI * r * r * 2.0 * h,
            Shape::Compound { parts } => parts.iter().map(|p| p.shape.volume()).sum(),
        }
    }

    /// Volume centroid in the body frame (m): the origin for a primitive, the volume-weighted mean
    /// of the part centres for a compound.
    pub fn centroid(&self) -> Vector3<f64> {
        match self {
            Shape::Compound { parts } => {
                parts.iter().map(|p| p.shape.volume() * p.translation).sum::<Vector3<f64>>() / self.volume()
            }
            _ => Vector3::zeros(),
        }
    }

    /// Radius of the smallest sphere about the body origin that contains the shape (m); for a
    /// compound, the largest `|t| + r` over its parts (an upper bound).
    pub fn bounding_radius(&self) -> f64 {
        match self {
            Shape::Sphere { radius } => *radius,
            Shape::Box { half_extents: h } => (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt(),
            Shape::Cylinder { radius, half_height } => radius.hypot(*half_height),
            Shape::Compound { parts } => {
                parts.iter().map(|p| p.translation.norm() + p.shape.bounding_radius()).fold(0.0, f64::max)
            }
        }
    }

    /// Checks the sizes: finite and positive for a primitive; for a compound, 1 ..= [`MAX_PARTS`]
    /// primitive parts with finite poses and valid sizes. The error names the offending part
    /// and quantity (e.g. "part 3 half extent must be > 0, got -1"). Mass properties (centroid
    /// at the origin, principal axes) are checked by [`Shape::validate_mass_frame`].
    pub fn validate(&self) -> Result<(), ShapeError> {
        fn positive(what: &'static str, v: f64) -> Result<(), ShapeError> {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(ShapeError::NotPositive { what, value: v })
            }
        }
        match self {
            Shape::Sphere { radius } => positive("radius", *radius),
            Shape::Box { half_extents } => half_extents.iter().try_for_each(|&h| positive("half extent", h)),
            Shape::Cylinder { radius, half_height } => {
                positive("radius", *radius)?;
                positive("half height", *half_height)
            }
            Shape::Compound { parts } => {
                if parts.is_empty() || parts.len() > MAX_PARTS {
                    return Err(ShapeError::PartCount { count: parts.len() });
                }
                for (k, p) in parts.iter().enumerate() {
                    if matches!(p.shape, Shape::Compound { .. }) {
                        return Err(ShapeError::NestedCompound { part: k });
                    }
                    let pose = p.translation.iter().chain(p.rotation.coords.iter());
                    if !pose.into_iter().all(|x| x.is_finite()) {
                        return Err(ShapeError::PartPose { part: k });
                    }
                    p.shape.validate().map_err(|e| ShapeError::Part { part: k, error: Box::new(e) })?;
                }
                Ok(())
            }
        }
    }

    /// Checks that the body frame is the mass frame the dynamics assume: the centroid at the
    /// origin and the inertia tensor diagonal, both to `1e-9` relative to the shape's size
    /// (bounding radius, trace of the unit-mass tensor). Primitives satisfy this by construction.
    pub fn validate_mass_frame(&self) -> Result<(), ShapeError> {
        let c = self.centroid();
        let scale = self.bounding_radius();
        if c.norm() > 1e-9 * scale {
            return Err(ShapeError::CentroidOffOrigin { centroid: c });
        }
        let i = self.inertia_tensor(1.0);
        let off = [(0, 1), (0, 2), (1, 2)].iter().map(|&(r, s)| i[(r, s)].abs()).fold(0.0, f64::max);
        if off > 1e-9 * i.trace() {
            return Err(ShapeError::OffDiagonalInertia { largest: off });
        }
        Ok(())
    }
}

/// A malformed rigid-body shape, found by [`Shape::validate`] (sizes, compound parts) or
/// [`Shape::validate_mass_frame`] (the body frame is not the mass frame).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ShapeError {
    /// A size is not finite and positive.
    #[error("{what} must be > 0 and finite, got {value}")]
    NotPositive {
        /// The quantity ("radius", "half extent", "half height").
        what: &'static str,
        /// Its value.
        value: f64,
    },
    /// A compound has no part or more than [`MAX_PARTS`].
    #[error("compound must have 1 ..= {MAX_PARTS} parts, got {count}")]
    PartCount {
        /// Its number of parts.
        count: usize,
    },
    /// A part of a compound is itself a compound.
    #[error("part {part} is a compound (nested compounds are not supported)")]
    NestedCompound {
        /// The part's index.
        part: usize,
    },
    /// A part's translation or rotation is not finite.
    #[error("part {part} pose is not finite")]
    PartPose {
        /// The part's index.
        part: usize,
    },
    /// A part's shape is malformed.
    #[error("part {part} {error}")]
    Part {
        /// The part's index.
        part: usize,
        /// What is wrong with its shape.
        error: Box<ShapeError>,
    },
    /// The centroid is not at the body origin.
    #[error(
        "centroid is at ({}, {}, {}), not at the body origin (build it with Shape::centred_compound)",
        centroid.x,
        centroid.y,
        centroid.z
    )]
    CentroidOffOrigin {
        /// The centroid in the body frame (m).
        centroid: Vector3<f64>,
    },
    /// The inertia tensor is not diagonal in the body frame.
    #[error(
        "inertia tensor has off-diagonal terms (largest {largest:e} per kg): its principal axes are not the body axes"
    )]
    OffDiagonalInertia {
        /// The largest off-diagonal term of the unit-mass tensor (m²).
        largest: f64,
    },
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
            inertia: shape.principal_inertia(mass),
            shape,
            mass,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(half: f64, at: [f64; 3]) -> ShapePart {
        ShapePart::new(Shape::Box { half_extents: [half; 3] }, Vector3::from(at))
    }

    #[test]
    fn symmetric_compound_inertia_is_the_parallel_axis_value() {
        // two unit cubes (edge 1) at x = +-d, total mass m: each m/2 with m/2 (1 + 1)/12 about
        // its centre; about y and z each adds (m/2) d^2
        let (m, d) = (3.0, 0.8);
        let s = Shape::Compound { parts: vec![cube(0.5, [d, 0.0, 0.0]), cube(0.5, [-d, 0.0, 0.0])] };
        let i = s.principal_inertia(m);
        let expected = Vector3::new(m / 6.0, m / 6.0 + m * d * d, m / 6.0 + m * d * d);
        assert!((i - expected).norm() < 1e-14 * expected.norm(), "{i:?} vs {expected:?}");
        assert_eq!(s.volume(), 2.0);
        assert!((s.bounding_radius() - (d + 0.75f64.sqrt())).abs() < 1e-15);
        s.validate().unwrap();
        s.validate_mass_frame().unwrap();
    }

    #[test]
    fn a_rotated_part_turns_its_inertia_and_a_single_part_compound_is_the_primitive() {
        let b = Shape::Box { half_extents: [0.1, 0.2, 0.3] };
        let single = Shape::Compound { parts: vec![ShapePart::new(b.clone(), Vector3::zeros())] };
        assert!((single.principal_inertia(2.0) - b.principal_inertia(2.0)).norm() < 1e-15);
        // a quarter turn about z swaps the x and y moments
        let turned = ShapePart {
            rotation: UnitQuaternion::from_axis_angle(&Vector3::z_axis(), std::f64::consts::FRAC_PI_2),
            ..ShapePart::new(b.clone(), Vector3::zeros())
        };
        let i0 = b.principal_inertia(2.0);
        let i = Shape::Compound { parts: vec![turned] }.principal_inertia(2.0);
        assert!((i - Vector3::new(i0.y, i0.x, i0.z)).norm() < 1e-14);
    }

    #[test]
    fn centred_compound_moves_the_centroid_to_the_origin() {
        // volumes 1 at z = 1 and 8 at z = 3: centroid (1 + 24) / 9
        let (s, shift) = Shape::centred_compound(vec![cube(0.5, [0.0, 0.0, 1.0]), cube(1.0, [0.0, 0.0, 3.0])]);
        assert!((shift - Vector3::new(0.0, 0.0, 25.0 / 9.0)).norm() < 1e-15);
        assert!(s.centroid().norm() < 1e-15);
        let Shape::Compound { parts } = &s else { unreachable!() };
        assert!((parts[0].translation.z - (1.0 - 25.0 / 9.0)).abs() < 1e-15);
        s.validate_mass_frame().unwrap();
    }

    #[test]
    fn validation_names_the_part_and_the_problem() {
        let bad_size = Shape::Compound { parts: vec![cube(0.5, [0.0; 3]), cube(-0.1, [0.0; 3])] };
        let e = bad_size.validate().unwrap_err();
        assert_eq!(e.to_string(), "part 1 half extent must be > 0 and finite, got -0.1");
        assert!(matches!(e, ShapeError::Part { part: 1, .. }), "{e:?}");
        let nested = Shape::Compound {
            parts: vec![ShapePart::new(Shape::Compound { parts: vec![cube(0.5, [0.0; 3])] }, Vector3::zeros())],
        };
        let e = nested.validate().unwrap_err();
        assert_eq!(e, ShapeError::NestedCompound { part: 0 });
        assert!(e.to_string().contains("part 0 is a compound"));
        let empty = Shape::Compound { parts: vec![] };
        let e = empty.validate().unwrap_err();
        assert_eq!(e, ShapeError::PartCount { count: 0 });
        assert!(e.to_string().contains("1 ..= 255 parts, got 0"));
        let many = Shape::Compound { parts: vec![cube(0.1, [0.0; 3]); MAX_PARTS + 1] };
        assert_eq!(many.validate(), Err(ShapeError::PartCount { count: 256 }));
        assert!(many.validate().unwrap_err().to_string().contains("got 256"));
        let mut nan_pose = cube(0.1, [0.0; 3]);
        nan_pose.translation.x = f64::NAN;
        let e = Shape::Compound { parts: vec![nan_pose] }.validate().unwrap_err();
        assert_eq!(e, ShapeError::PartPose { part: 0 });
        assert!(e.to_string().contains("part 0 pose"));
        let off_centre = Shape::Compound { parts: vec![cube(0.5, [0.0, 0.0, 1.0])] };
        let e = off_centre.validate_mass_frame().unwrap_err();
        assert!(matches!(e, ShapeError::CentroidOffOrigin { .. }), "{e:?}");
        assert!(e.to_string().contains("centroid is at (0, 0, 1)"));
        // centroid at the origin, but the parts lie along the diagonal x = y: I_xy != 0
        let skew = Shape::Compound { parts: vec![cube(0.5, [1.0, 1.0, 0.0]), cube(0.5, [-1.0, -1.0, 0.0])] };
        skew.validate().unwrap();
        let e = skew.validate_mass_frame().unwrap_err();
        assert!(matches!(e, ShapeError::OffDiagonalInertia { .. }), "{e:?}");
        assert!(e.to_string().contains("off-diagonal"));
    }
}
