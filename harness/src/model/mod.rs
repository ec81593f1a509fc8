//! The mechanical model: rigid bodies with shapes and materials, static colliders, springs,
//! gravity, and the generalized-coordinate layout that every solver sees.
//!
//! Conventions (common to all solvers): SI units, gravity along -z, right-handed frames. A rigid body's
//! generalized velocity is `(v, w)`: linear velocity of the centre of mass and angular velocity,
//! both in the world frame; its position is the centre of mass and a unit quaternion.
//! A body may be restricted to a subset of these six velocity components ([`DofMask`]); the
//! excluded components are held at zero.

mod body;
mod deformable;
mod joint;
mod world;

pub use api::contact::ContactCompliance;
pub use api::layout::{BlockKind, DofBlock, DofLayout};
pub use body::{DofMask, Material, RigidBody, Shape, ShapeError, ShapePart, MAX_PARTS};
pub use deformable::{
    DeformableBody, DeformableError, ElasticMaterial, ElasticModel, GradientOperator, PrescribedMotion,
};
pub use joint::{joint_subsystems, BilateralRow, BilateralSet, GBlock, Joint, JointCompliance, JointError, JointKind};
pub use world::{combine_friction, PointLoad, Spring, StaticCollider, StaticShape, World, WorldError};
