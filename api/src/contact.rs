//! Contacts of one time step: frames, gaps, Jacobians, friction and compliance.
//!
//! Conventions (common to all solvers): per-contact vectors are ordered `(n, t1, t2)`; the normal points from
//! body B to body A; the gap `phi > 0` means separated; the contact velocity
//! `u = R^T (v_A(p) - v_B(p))` with `R = [n t1 t2]`, so `u_n > 0` is separating; contact-space
//! quantities are impulses (N s).

use nalgebra::{Matrix3, Vector3};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// Contact model of a material or a contact.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ContactCompliance {
    /// Rigid (non-penetration) contact.
    Rigid,
    /// Compliant contact: normal force `k max(-phi, 0) (1 + tau_d d(-phi)/dt)_+` in the continuous model
    /// (Castro et al. §II-B): `stiffness` k in N/m, `dissipation_time` tau_d in s.
    Compliant {
        /// Stiffness `k` (N/m).
        stiffness: f64,
        /// Dissipation time `tau_d` (s).
        dissipation_time: f64,
    },
}

impl ContactCompliance {
    /// Combination rule for a contact between two materials. If one side is rigid, the other
    /// side's model is used (a rigid body in series with a compliant one). Two compliant sides
    /// combine by harmonic mean of stiffness and arithmetic mean of dissipation time; both rules
    /// return the common value when the two sides agree, so a case that gives every collider the
    /// same material gets exactly that material.
    pub fn combine(a: ContactCompliance, b: ContactCompliance) -> ContactCompliance {
        use ContactCompliance::*;
        match (a, b) {
            (Rigid, x) | (x, Rigid) => x,
            (a, b) if a == b => a,
            (Compliant { stiffness: ka, dissipation_time: ta }, Compliant { stiffness: kb, dissipation_time: tb }) => {
                Compliant { stiffness: 2.0 * ka * kb / (ka + kb), dissipation_time: 0.5 * (ta + tb) }
            }
        }
    }
}

/// Identifies a collider: a dynamic body or a static collider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ColliderId {
    /// Index into the world's rigid bodies.
    Body(usize),
    /// Index into the world's deformable bodies; the contact's `feature` is the node index. Declared
    /// between `Body` and `Static`, so a node against a static collider has the node as A.
    Deformable(usize),
    /// Index into the world's static colliders.
    Static(usize),
}

/// Stable identity of a contact point across time steps (for warm starts) and across
/// configurations (for re-evaluation): the collider pair plus a feature id chosen by the narrow
/// phase (e.g. the box corner index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ContactKey {
    /// Collider A (the normal points towards A).
    pub a: ColliderId,
    /// Collider B.
    pub b: ColliderId,
    /// Feature id within the pair: for rigid colliders, the narrow phase's 32-bit local id with
    /// the part indices of compound bodies packed above it (bits 32..40 part of A, 40..48 part of
    /// B; table in the geometry module of the harness); for a node contact, the node index.
    pub feature: u64,
}

/// The rows of one contact's Jacobian that act on one block of velocity DOFs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JBlock {
    /// First velocity index of the block.
    pub v_offset: usize,
    /// Number of columns used (<= 6).
    pub ncols: usize,
    /// Rows `(n, t1, t2)`; only the first `ncols` columns are meaningful.
    pub rows: [[f64; 6]; 3],
}

/// One contact point.
#[derive(Debug, Clone, PartialEq)]
pub struct Contact {
    /// Stable identity.
    pub key: ContactKey,
    /// Body of collider A (None if static).
    pub body_a: Option<usize>,
    /// Body of collider B (None if static).
    pub body_b: Option<usize>,
    /// Contact point in the world frame, midway between the two surfaces (m).
    pub point: Vector3<f64>,
    /// Contact frame: columns `(n, t1, t2)`, orthonormal and right-handed.
    pub frame: Matrix3<f64>,
    /// Signed gap (m), > 0 separated.
    pub gap: f64,
    /// Combined friction coefficient.
    pub mu: f64,
    /// Combined contact model.
    pub compliance: ContactCompliance,
    /// Jacobian blocks (one per dynamic body or deformable node involved; two inline, so that
    /// detection allocates nothing per contact).
    pub jacobian: SmallVec<[JBlock; 2]>,
}

/// A deterministic orthonormal tangent basis `(t1, t2)` with `t2 = n x t1`, so `(n, t1, t2)` is
/// right-handed. `t1` is the normalized projection of the world
/// axis least aligned with `n` (x before y before z on ties).
pub fn tangent_basis(n: &Vector3<f64>) -> (Vector3<f64>, Vector3<f64>) {
    let a = n.abs();
    let e = if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    };
    let t1 = (e - n * n.dot(&e)).normalize();
    let t2 = n.cross(&t1);
    (t1, t2)
}

impl Contact {
    /// The unit normal (from B to A).
    pub fn normal(&self) -> Vector3<f64> {
        self.frame.column(0).into_owned()
    }

    /// `J v` for this contact: relative velocity `(u_n, u_t1, u_t2)` (m/s).
    pub fn velocity(&self, v: &[f64]) -> [f64; 3] {
        let mut u = [0.0; 3];
        for blk in &self.jacobian {
            for (r, ur) in u.iter_mut().enumerate() {
                for c in 0..blk.ncols {
                    *ur += blk.rows[r][c] * v[blk.v_offset + c];
                }
            }
        }
        u
    }

    /// `out += J^T lambda` for this contact.
    pub fn add_transpose(&self, lambda: [f64; 3], out: &mut [f64]) {
        for blk in &self.jacobian {
            for c in 0..blk.ncols {
                out[blk.v_offset + c] += (0..3).map(|r| blk.rows[r][c] * lambda[r]).sum::<f64>();
            }
        }
    }
}

/// All contacts of one step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContactSet {
    /// The contacts, in a deterministic order (by key).
    pub contacts: Vec<Contact>,
}

impl ContactSet {
    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.contacts.len()
    }
    /// Whether there is no contact.
    pub fn is_empty(&self) -> bool {
        self.contacts.is_empty()
    }
    /// `J v`, one `(n, t1, t2)` triple per contact.
    pub fn velocities(&self, v: &[f64]) -> Vec<[f64; 3]> {
        self.contacts.iter().map(|c| c.velocity(v)).collect()
    }
    /// `J^T lambda` as a generalized impulse of length `nv`.
    pub fn transpose_mul(&self, lambda: &[[f64; 3]], nv: usize) -> Vec<f64> {
        assert_eq!(lambda.len(), self.contacts.len());
        let mut out = vec![0.0; nv];
        for (c, l) in self.contacts.iter().zip(lambda) {
            c.add_transpose(*l, &mut out);
        }
        out
    }
    /// Triplets `(row, col, value)` of the `3 nc x nv` Jacobian, rows ordered `(n, t1, t2)` per contact.
    pub fn jacobian_triplets(&self) -> Vec<(usize, usize, f64)> {
        let mut t = Vec::new();
        for (i, c) in self.contacts.iter().enumerate() {
            for blk in &c.jacobian {
                for r in 0..3 {
                    for k in 0..blk.ncols {
                        if blk.rows[r][k] != 0.0 {
                            t.push((3 * i + r, blk.v_offset + k, blk.rows[r][k]));
                        }
                    }
                }
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tangent_basis_is_right_handed_orthonormal() {
        for n in [Vector3::z(), -Vector3::z(), Vector3::new(0.3, -0.4, 0.866).normalize(), Vector3::x()] {
            let (t1, t2) = tangent_basis(&n);
            let r = Matrix3::from_columns(&[n, t1, t2]);
            assert!((r.transpose() * r - Matrix3::identity()).norm() < 1e-14);
            assert!((r.determinant() - 1.0).abs() < 1e-14);
        }
    }
}
