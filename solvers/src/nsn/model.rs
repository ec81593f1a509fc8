//! The Newton system at one iterate `(u, λ, q)`: the raw contact rows at `q`, the NCP rows
//! `η`, `C` and the scalings `α` (Eqs. 93–98, 103–106), the joint rows (Eqs. 47, 55, 58), the
//! NCP Jacobians `J_n`, `J_z`, and the momentum residual `g = M (u − ũ) + h ∇U(q) − h Jᵀ λ`
//! (Eq. 57 with implicit elasticity).
//!
//! Row order: three rows `(n, t1, t2)` per contact, then one row per bilateral (joint) row.

use super::ncp::{fb_row_smoothed, friction_rows, friction_w, normal_row, FrictionRows, Ncp};
use super::problem::NsnProblem;
use api::BilateralSet;
use api::ContactSet;
use kernels::sparse::Csr;

/// The raw contact Jacobian (rows `(n, t1, t2)` per contact, `3 nc × nv`), prescribed columns dropped.
pub(super) fn raw_jacobian(cs: &ContactSet, nv: usize, fixed: &[bool]) -> Csr {
    let t: Vec<_> = cs.jacobian_triplets().into_iter().filter(|&(_, c, _)| !fixed[c]).collect();
    Csr::from_triplets(3 * cs.len(), nv, &t)
}

pub(super) fn dot2(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

/// The joint Jacobian `J_b = ∇c_b G` (Eq. 41) of `rows` (`nb × nv`), prescribed columns dropped.
pub(super) fn joint_jacobian(rows: &BilateralSet, nv: usize, fixed: &[bool]) -> Csr {
    let t: Vec<_> = rows.jacobian_triplets().into_iter().filter(|&(_, c, _)| !fixed[c]).collect();
    Csr::from_triplets(rows.len(), nv, &t)
}

/// The NCP Jacobian `J_n` (normal rows scaled by `α`, friction rows by their [`FrictionRows`]
/// mode: scaled, or rotated into `(z, ⊥)` with the magnitude row left empty), with the joint
/// rows `J_b` stacked below (Eq. 55, `J = [J_b; J_n; J_f]` in the paper's order), and `J_z`, the
/// raw rows `ẑᵀ J_f` of the magnitude rows of projected contacts (their force enters `g`, their
/// row is decoupled), with as many (empty) rows as `J_n`.
pub(super) fn ncp_jacobians(jraw: &Csr, alphas: &[f64], rows: &[FrictionRows], jb: &Csr) -> (Csr, Csr) {
    let (mut tn, mut tz) = (Vec::with_capacity(jraw.data.len()), Vec::new());
    let entries = |r: usize| (jraw.indptr[r]..jraw.indptr[r + 1]).map(move |k| (jraw.indices[k], jraw.data[k]));
    for (i, fr) in rows.iter().enumerate() {
        tn.extend(entries(3 * i).map(|(c, v)| (3 * i, c, alphas[i] * v)));
        match *fr {
            FrictionRows::Scaled(_) | FrictionRows::Stick => {
                let sc = if let FrictionRows::Scaled(sc) = *fr { sc } else { 1.0 };
                for r in [3 * i + 1, 3 * i + 2] {
                    tn.extend(entries(r).map(|(c, v)| (r, c, sc * v)));
                }
            }
            FrictionRows::Projected { z, p, .. } => {
                for (t, r) in [(0, 3 * i + 1), (1, 3 * i + 2)] {
                    tz.extend(entries(r).map(|(c, v)| (3 * i + 1, c, z[t] * v)));
                    tn.extend(entries(r).map(|(c, v)| (3 * i + 2, c, p[t] * v)));
                }
            }
        }
    }
    let m = jraw.nrows + jb.nrows;
    for k in 0..jb.nrows {
        tn.extend((jb.indptr[k]..jb.indptr[k + 1]).map(|p| (jraw.nrows + k, jb.indices[p], jb.data[p])));
    }
    (Csr::from_triplets(m, jraw.ncols, &tn), Csr::from_triplets(m, jraw.ncols, &tz))
}

/// The NCP rows of one iterate.
pub(super) struct NcpRows {
    /// Row residuals `η = [φ_n/h; φ_f]` (Eq. 58), 3 per contact.
    pub eta: Vec<f64>,
    /// Diagonal compliance `C` of the rows, 3 per contact.
    pub cdiag: Vec<f64>,
    /// Normal-row scalings `α` per contact.
    pub alphas: Vec<f64>,
    /// Friction-row mode per contact.
    pub rows: Vec<FrictionRows>,
    /// `max |φ_n|` (m) and `max |η_f|` over the contacts.
    pub phi_n_max: f64,
    pub phi_f_max: f64,
    /// `max |h η_b|` over the joint rows (m or rad; [`append_joint_rows`]).
    pub phi_b_max: f64,
    /// Contacts classified as sticking and sliding.
    pub n_stick: usize,
    pub n_slip: usize,
}

/// How the rows are formed this iterate.
pub(super) struct RowOptions {
    pub ncp: Ncp,
    /// Gaps of the re-evaluated contacts (`true`) or linearised `φ0 + h J_n u` (`false`).
    pub nonlinear: bool,
    /// Friction inside the cone as the fixed-point compliance.
    pub fixed_point: bool,
    /// Fischer–Burmeister smoothing radius `μ`.
    pub smoothing: f64,
}

/// The NCP rows at an iterate (Eqs. 93–98, 103–106); friction on or outside the cone:
/// projection rows. `cs`: contacts at `q`, `start`: contacts at `q⁻`, `ju = J u`. Sets the
/// friction multipliers of contacts with inactive friction to zero (README §Errata, "Inactive
/// friction").
pub(super) fn ncp_rows(
    pb: &NsnProblem,
    o: &RowOptions,
    cs: &ContactSet,
    start: &ContactSet,
    ju: &[f64],
    lam: &mut [[f64; 3]],
) -> NcpRows {
    let (h, nc) = (pb.h, pb.nc);
    let (r_n, r_f) = (&pb.r_n, &pb.r_f);
    let m = 3 * nc;
    let (mut eta, mut cdiag) = (vec![0.0; m], vec![0.0; m]);
    let (mut phi_n_max, mut phi_f_max, mut n_stick, mut n_slip) = (0.0f64, 0.0f64, 0, 0);
    let mut rows = vec![FrictionRows::Scaled(1.0); nc];
    let mut alphas = vec![0.0; nc];
    for i in 0..nc {
        let c = &cs.contacts[i];
        let gap = if o.nonlinear { c.gap } else { start.contacts[i].gap + h * ju[3 * i] };
        let bound = c.mu * lam[i][0];
        if bound <= 0.0 {
            // inactive friction: λ_f = 0 explicitly (README §Errata, "Inactive friction")
            lam[i][1] = 0.0;
            lam[i][2] = 0.0;
        }
        // the compliant normal constraint C_n + τ_d J_n u + e λ_n (Eq. 7 with Kelvin–Voigt
        // damping, README "Compliant contact"; C_n alone for a rigid contact, e = τ_d = 0)
        let (e, tau) = (pb.compliance[i], pb.tau_d[i]);
        let c_arg = gap + tau * ju[3 * i] + e * lam[i][0];
        // FB with Jacobian smoothing of radius μ (README "Redundant contacts"), or the
        // paper's rows (Eqs. 93–98)
        let row = if o.ncp == Ncp::FischerBurmeister {
            fb_row_smoothed(c_arg, lam[i][0], r_n[i], o.smoothing)
        } else {
            normal_row(o.ncp, c_arg, lam[i][0], r_n[i])
        };
        // ∂φ/∂u = α (h + τ_d) J_n, ∂φ/∂λ = α e + S: the row divided by h + τ_d keeps the Jacobian
        // α J_n of Eq. 28 and gets the compliance (α e + S)/(h (h + τ_d)) (S/h² when rigid, Eq. 59)
        eta[3 * i] = row.phi / (h + tau);
        cdiag[3 * i] = (row.alpha * e + row.s) / (h * (h + tau));
        alphas[i] = row.alpha;
        phi_n_max = phi_n_max.max(row.phi.abs());
        rows[i] = if bound > 0.0 {
            let vt = [ju[3 * i + 1], ju[3 * i + 2]];
            let lf = lam[i][1].hypot(lam[i][2]);
            let fr = friction_rows(o.fixed_point, vt, [lam[i][1], lam[i][2]], bound, r_f[i]);
            match fr {
                FrictionRows::Scaled(_) | FrictionRows::Stick => {
                    let w = if fr == FrictionRows::Stick {
                        0.0
                    } else {
                        friction_w(o.ncp, vt[0].hypot(vt[1]), bound, lf, r_f[i])
                    };
                    if w == 0.0 {
                        n_stick += 1;
                    } else {
                        n_slip += 1;
                    }
                    for t in 1..3 {
                        eta[3 * i + t] = vt[t - 1] + w * lam[i][t];
                        cdiag[3 * i + t] = w / h;
                    }
                }
                FrictionRows::Projected { z, p: pp, w_perp, kappa_rho } => {
                    n_slip += 1;
                    let (lz, lp) = (dot2(z, [lam[i][1], lam[i][2]]), dot2(pp, [lam[i][1], lam[i][2]]));
                    // magnitude row (decoupled): r_f (λ_z − μλ_n) = 0 with compliance r_f/h
                    eta[3 * i + 1] = r_f[i] * (lz - bound);
                    cdiag[3 * i + 1] = r_f[i] / h;
                    // perpendicular row: v_p + W_⊥ λ_p = λ_p/(κρ)
                    eta[3 * i + 2] = lp / kappa_rho;
                    cdiag[3 * i + 2] = w_perp / h;
                }
            }
            fr
        } else {
            for t in 1..3 {
                eta[3 * i + t] = lam[i][t];
                cdiag[3 * i + t] = 1.0 / h;
            }
            FrictionRows::Scaled(0.0)
        };
        phi_f_max = phi_f_max.max(eta[3 * i + 1].abs()).max(eta[3 * i + 2].abs());
    }
    NcpRows { eta, cdiag, alphas, rows, phi_n_max, phi_f_max, phi_b_max: 0.0, n_stick, n_slip }
}

/// Appends the joint rows to `out` (after the contacts' rows). Each row is an equality, its NCP
/// function the identity (§3.1–3.2): `c_b(q) + E λ_b = 0` (Eq. 47), entering `η` as
/// `(c_b + E λ_b)/h` (Eq. 58) with compliance block `E/h²` (Eq. 55).
///
/// `at_q`: the rows at the iterate's `q` (`C(q)`, `G(q)`); `start`: at `q⁻`; `gu = G(q) u`;
/// `lam_b`: the multipliers (forces). With `nonlinear = false` the constraint is linearised,
/// `C ≈ C(q⁻) + h G(q⁻) u`.
///
/// Rigid row: `η = C/h`, `C`-block 0. Compliant row (stiffness `k`, damping `b`): the harness's
/// spring–damper (`api::BilateralRow::law`) is `λ = −k C(q) − b G u`; the paper's
/// compliance form has no damping (Eq. 7, `E = 1/k`), so the row is that law divided by
/// `hk + b` to stay symmetric with the unscaled Jacobian `J_b`:
/// `η = (k C(q) + b G u + λ)/(hk + b)`, `∂η/∂(hλ) = 1/(h(hk + b))`, `∂η/∂u = J_b` (with
/// `∂C/∂u = h J_b`). With `b = 0` this is exactly Eqs. 58 and 55, `η = (C + E λ)/h`, block `E/h²`;
/// linearised it is the law `G u − v̂ + r h λ` itself.
pub(super) fn append_joint_rows(
    out: &mut NcpRows,
    h: f64,
    nonlinear: bool,
    at_q: &BilateralSet,
    start: &BilateralSet,
    gu: &[f64],
    lam_b: &[f64],
) {
    for (k, (row, row0)) in at_q.rows.iter().zip(&start.rows).enumerate() {
        let c = if nonlinear { row.violation } else { row0.violation + h * gu[k] };
        let (eta, cdiag) = match row0.compliance {
            None => (c / h, 0.0),
            Some(jc) => {
                let w = h * jc.stiffness + jc.damping;
                ((jc.stiffness * c + jc.damping * gu[k] + lam_b[k]) / w, 1.0 / (h * w))
            }
        };
        out.eta.push(eta);
        out.cdiag.push(cdiag);
        out.phi_b_max = out.phi_b_max.max((h * eta).abs());
    }
}

/// The multipliers in the rows' coordinates (rotated `(z, ⊥)` for projected contacts), the
/// joint multipliers `lam_b` after them.
pub(super) fn multipliers_in_rows(lam: &[[f64; 3]], rows: &[FrictionRows], lam_b: &[f64]) -> Vec<f64> {
    lam.iter()
        .zip(rows)
        .flat_map(|(&l, fr)| match *fr {
            FrictionRows::Projected { z, p: pp, .. } => [l[0], dot2(z, [l[1], l[2]]), dot2(pp, [l[1], l[2]])],
            FrictionRows::Scaled(_) | FrictionRows::Stick => l,
        })
        .chain(lam_b.iter().copied())
        .collect()
}

/// Rotates the friction components of a row-coordinate vector `(x_n, x_z, x_⊥)` of contact `i`
/// back into the contact frame `(t1, t2)`.
pub(super) fn rows_to_frame(fr: &FrictionRows, a: f64, b: f64) -> [f64; 2] {
    match *fr {
        FrictionRows::Projected { z, p: pp, .. } => [a * z[0] + b * pp[0], a * z[1] + b * pp[1]],
        FrictionRows::Scaled(_) | FrictionRows::Stick => [a, b],
    }
}
