//! The generalized-coordinate layout: which entries of the velocity vector `v` and position vector
//! `q` belong to which body or subsystem.
//!
//! A block is one rigid body today; deformable node sets (3 DOF per node) and articulated
//! subsystems are further [`BlockKind`]s with the same offsets scheme, so adding them extends the
//! enum without reshaping solvers that iterate over blocks.

use serde::{Deserialize, Serialize};

/// What a block of generalized coordinates represents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BlockKind {
    /// Rigid body `index` of the world's rigid bodies; positions are 7 numbers
    /// `(x, y, z, qw, qx, qy, qz)`, velocities the free components of `(v, w)`.
    RigidBody {
        /// Index of the body among the world's rigid bodies.
        index: usize,
    },
    /// Deformable body `index` of the world's deformable bodies: 3 velocity DOFs (node
    /// velocity) and 3 positions per node, in node order; after all rigid-body blocks.
    Deformable {
        /// Index of the body among the world's deformable bodies.
        index: usize,
    },
}

/// One block of the layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DofBlock {
    /// What the block represents.
    pub kind: BlockKind,
    /// First index in the velocity vector.
    pub v_offset: usize,
    /// Number of velocity DOFs.
    pub nv: usize,
    /// First index in the position vector.
    pub q_offset: usize,
    /// Number of position coordinates.
    pub nq: usize,
    /// Subsystem id: blocks that share it are coupled by internal (bilateral) constraints. Free
    /// rigid bodies each form their own subsystem.
    pub subsystem: usize,
}

/// The layout of all generalized coordinates of a world.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DofLayout {
    /// Blocks in order of increasing offsets.
    pub blocks: Vec<DofBlock>,
    /// Total number of velocity DOFs.
    pub nv: usize,
    /// Total number of position coordinates.
    pub nq: usize,
}

impl DofLayout {
    /// The block of rigid body `index`.
    pub fn rigid_block(&self, index: usize) -> &DofBlock {
        &self.blocks[index]
    }

    /// Whether any block is a rigid body.
    pub fn has_rigid_bodies(&self) -> bool {
        self.blocks.iter().any(|b| matches!(b.kind, BlockKind::RigidBody { .. }))
    }

    /// Whether any block is a deformable body.
    pub fn has_deformables(&self) -> bool {
        self.blocks.iter().any(|b| matches!(b.kind, BlockKind::Deformable { .. }))
    }

    /// First velocity index of the first deformable body (deformables follow the rigid bodies),
    /// `None` without deformable bodies.
    pub fn first_deformable_v_offset(&self) -> Option<usize> {
        self.blocks.iter().find(|b| matches!(b.kind, BlockKind::Deformable { .. })).map(|b| b.v_offset)
    }
}
