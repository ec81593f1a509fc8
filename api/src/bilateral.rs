//! Bilateral (joint) constraint rows of one step: the Jacobian blocks `G`, violations `C(q)`,
//! `dG/dt v` and compliance that a solver reads, and each row's velocity-level law
//! ([`BilateralRow::law`]). The harness evaluates them from the world's joints.

use serde::{Deserialize, Serialize};

/// Spring–damper model of a soft joint, per row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JointCompliance {
    /// Stiffness (N/m for position rows, N m/rad for angular rows; >= 0).
    pub stiffness: f64,
    /// Damping (N s/m, N m s/rad; >= 0). `stiffness + damping > 0`.
    pub damping: f64,
}

/// One scalar constraint row's Jacobian on one block of velocity DOFs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GBlock {
    /// First velocity index of the block.
    pub v_offset: usize,
    /// Number of columns used (<= 6).
    pub ncols: usize,
    /// Coefficients; only the first `ncols` are meaningful.
    pub row: [f64; 6],
}

/// One scalar bilateral constraint row at the configuration it was evaluated at.
#[derive(Debug, Clone, PartialEq)]
pub struct BilateralRow {
    /// Index of the joint in the world's joints.
    pub joint: usize,
    /// Row within the joint (see the module table), a stable identity across steps.
    pub index: usize,
    /// Constraint value `C(q)` (m or rad).
    pub violation: f64,
    /// `dG/dt v` at the state it was evaluated at (m/s^2 or rad/s^2): the velocity-product term of
    /// `d^2C/dt^2 = G dv/dt + dG/dt v` (Drumwright Eq. 29).
    pub gdot_v: f64,
    /// Jacobian blocks (one per dynamic body involved).
    pub jacobian: Vec<GBlock>,
    /// The joint's compliance (`None`: rigid).
    pub compliance: Option<JointCompliance>,
}

impl BilateralRow {
    /// `G v` for this row.
    pub fn velocity(&self, v: &[f64]) -> f64 {
        self.jacobian.iter().map(|b| (0..b.ncols).map(|c| b.row[c] * v[b.v_offset + c]).sum::<f64>()).sum()
    }

    /// `out += G^T gamma` for this row.
    pub fn add_transpose(&self, gamma: f64, out: &mut [f64]) {
        for b in &self.jacobian {
            for c in 0..b.ncols {
                out[b.v_offset + c] += b.row[c] * gamma;
            }
        }
    }

    /// The row's velocity-level law as `(v_hat, r)`: the impulse `gamma` (N s) and the end-of-step
    /// constraint velocity `G v+` satisfy `G v+ - v_hat + r gamma = 0`.
    ///
    /// Rigid: `v_hat = -C/dt`, `r = 0` (the linearised constraint `C + dt G v+ = 0`). Compliant
    /// (implicit spring–damper, Drumwright Eqs. 51–53 with `dG/dt v` neglected):
    /// `gamma = -dt (k (C + dt G v+) + b G v+)`, i.e. `v_hat = -k C / (dt k + b)`,
    /// `r = 1 / (dt (dt k + b))`.
    pub fn law(&self, dt: f64) -> (f64, f64) {
        match self.compliance {
            None => (-self.violation / dt, 0.0),
            Some(JointCompliance { stiffness: k, damping: b }) => {
                let w = dt * k + b;
                (-k * self.violation / w, 1.0 / (dt * w))
            }
        }
    }
}

/// All bilateral rows of one step, in joint order then row order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BilateralSet {
    /// The rows.
    pub rows: Vec<BilateralRow>,
}

impl BilateralSet {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    /// Whether there is no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// `G v`, one value per row.
    pub fn velocities(&self, v: &[f64]) -> Vec<f64> {
        self.rows.iter().map(|r| r.velocity(v)).collect()
    }
    /// `G^T gamma` as a generalized impulse of length `nv`.
    pub fn transpose_mul(&self, gamma: &[f64], nv: usize) -> Vec<f64> {
        assert_eq!(gamma.len(), self.rows.len());
        let mut out = vec![0.0; nv];
        for (r, g) in self.rows.iter().zip(gamma) {
            r.add_transpose(*g, &mut out);
        }
        out
    }
    /// Triplets `(row, col, value)` of the `nb x nv` Jacobian `G`.
    pub fn jacobian_triplets(&self) -> Vec<(usize, usize, f64)> {
        let mut t = Vec::new();
        for (i, r) in self.rows.iter().enumerate() {
            for b in &r.jacobian {
                for c in 0..b.ncols {
                    if b.row[c] != 0.0 {
                        t.push((i, b.v_offset + c, b.row[c]));
                    }
                }
            }
        }
        t
    }
    /// Largest `|C|` over the rows (m or rad; 0 without rows).
    pub fn violation_max(&self) -> f64 {
        self.rows.iter().fold(0.0, |m, r| if r.violation.is_nan() { f64::NAN } else { m.max(r.violation.abs()) })
    }
}
