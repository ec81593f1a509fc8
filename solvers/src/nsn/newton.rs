//! The Newton direction of one iterate (Macklin et al. Eqs. 59–60): the system matrix
//! `H = M` or `M + h² ∇²U + diag(c_GS)` and its block-diagonal inverse (preconditioner), the
//! Schur right-hand side `b = J H⁻¹ g' − η`, the Schur solve for `x = h Δλ`, and
//! `Δu = H⁻¹ (Jᵀ x − g')`.

use super::model::NcpRows;
use super::ncp::FrictionRows;
use super::problem::NsnProblem;
use super::schur::{factor_sparse, schur_diagonal, solve, HFactor, LinearInfo, LinearWorkspace, SchurOperator};
use super::settings::{LinearSolver, NsnSettings};
use api::SolveError;
use kernels::backend::{AnyBackend, Blas};
use kernels::cholesky::SparseCholesky;
use kernels::sparse::Csr;
use kernels::BlockDiagonal;
use nalgebra::DMatrix;

/// The linearised system of one iterate.
pub(super) struct NewtonSystem<'a> {
    /// The NCP Jacobian `J_n`, its transpose, and `J_zᵀ` (see [`super::model::ncp_jacobians`]).
    pub jn: &'a Csr,
    pub jnt: &'a Csr,
    pub jzt: &'a Csr,
    /// The NCP rows (`η`, `C`, friction modes).
    pub rows: &'a NcpRows,
    /// The momentum residual `g`.
    pub g: &'a [f64],
    /// The elastic Hessian at the iterate (deformable bodies) and the geometric stiffness
    /// diagonal `c_GS`.
    pub hess: Option<&'a Csr>,
    pub gs: &'a [f64],
}

/// The solver state the direction uses: backend, the cached factor of `H`, work vectors.
pub(super) struct NewtonWork<'a> {
    pub linear: LinearSolver,
    pub backend: &'a AnyBackend,
    pub hfac: &'a mut Option<SparseCholesky>,
    pub op_tmp: &'a mut Vec<f64>,
    pub ws: &'a mut LinearWorkspace,
}

/// The Newton direction: `x = h Δλ` in the rows' coordinates (magnitude rows of projected
/// contacts set to their decoupled values) and `Δu` (zero on prescribed DOFs), with the linear
/// solver's report.
pub(super) struct Direction {
    pub x: Vec<f64>,
    pub du: Vec<f64>,
    pub info: LinearInfo,
}

/// `H` (sparse with deformable bodies, factored into `work.hfac`; else the mass matrix) and the
/// inverse of its diagonal blocks (the Schur preconditioner's `H⁻¹` blocks).
fn system_matrix<'w>(
    pb: &'w NsnProblem,
    mass: &'w BlockDiagonal,
    hess: Option<&Csr>,
    gs: &[f64],
    hfac: &'w mut Option<SparseCholesky>,
) -> Result<(HFactor<'w>, Vec<DMatrix<f64>>), SolveError> {
    let (h, nv, fixed) = (pb.h, pb.nv, &pb.fixed);
    let Some(k_el) = hess else {
        return Ok((HFactor::Mass(mass), pb.minv.clone()));
    };
    let mut t = mass.triplets();
    for (r, gr) in gs.iter().enumerate() {
        for pp in k_el.indptr[r]..k_el.indptr[r + 1] {
            t.push((r, k_el.indices[pp], h * h * k_el.data[pp]));
        }
        t.push((r, r, *gr));
    }
    t.retain(|&(r, c, _)| !fixed[r] && !fixed[c]);
    t.extend((0..nv).filter(|&r| fixed[r]).map(|r| (r, r, 1.0)));
    let hm = Csr::from_triplets(nv, nv, &t);
    factor_sparse(&hm, hfac)?;
    let hinv = (0..pb.nblocks())
        .map(|b| {
            let (o, n) = (mass.offset(b), mass.blocks()[b].nrows());
            let blk = DMatrix::from_fn(n, n, |i, j| hm.get(o + i, o + j));
            blk.try_inverse().unwrap_or_else(|| pb.minv[b].clone())
        })
        .collect();
    Ok((HFactor::Sparse(hfac.as_mut().expect("factored"), fixed), hinv))
}

/// The Newton direction of `sys` (see the module doc).
pub(super) fn direction(
    pb: &NsnProblem,
    mass: &BlockDiagonal,
    s: &NsnSettings,
    sys: &NewtonSystem<'_>,
    work: NewtonWork<'_>,
) -> Result<Direction, SolveError> {
    let (h, nv, nc) = (pb.h, pb.nv, pb.nc);
    let (rows, eta, cdiag) = (&sys.rows.rows, &sys.rows.eta, &sys.rows.cdiag);
    // 3 rows per contact, then the joint rows
    let m = eta.len();
    let backend = work.backend;
    // 4. H and its block-diagonal inverse (preconditioner)
    let (mut hf, hinv) = system_matrix(pb, mass, sys.hess, sys.gs, work.hfac)?;
    // 5. b = J H⁻¹ g' − η  (Eq. 59 times h: unknown x = h Δλ). The magnitude rows of
    //    projected contacts are decoupled (no Δu term): x_z = −h (λ_z − μλ_n) is known,
    //    and its force enters as g' = g − J_zᵀ x_z (block elimination).
    let mut xz = vec![0.0; m];
    for i in 0..nc {
        if matches!(rows[i], FrictionRows::Projected { .. }) {
            xz[3 * i + 1] = -h * eta[3 * i + 1] / pb.r_f[i];
        }
    }
    let mut gp = sys.g.to_vec();
    let mut tmp = vec![0.0; nv];
    backend.spmv(sys.jzt, &xz, &mut tmp);
    for ((gk, tk), &f) in gp.iter_mut().zip(&tmp).zip(&pb.fixed) {
        if !f {
            *gk -= tk;
        }
    }
    tmp.copy_from_slice(&gp);
    hf.solve(&mut tmp);
    let mut rhs = vec![0.0; m];
    backend.spmv(sys.jn, &tmp, &mut rhs);
    for (bi, e) in rhs.iter_mut().zip(eta) {
        *bi -= e;
    }
    let diag: Vec<f64> =
        schur_diagonal(sys.jn, &hinv, &pb.block_of).iter().zip(cdiag).map(|(d, c)| d + c + s.epsilon).collect();
    let cshift: Vec<f64> = cdiag.iter().map(|c| c + s.epsilon).collect();
    work.op_tmp.resize(nv, 0.0);
    let mut op = SchurOperator { j: sys.jn, jt: sys.jnt, h: &mut hf, c: &cshift, backend, tmp: work.op_tmp };
    let (its, tol) = (s.linear_iterations, s.linear_tolerance);
    let mut x = vec![0.0; m];
    let info = solve(work.linear, &mut op, &diag, &rhs, &mut x, its, tol, work.ws)?;
    // 6. Δu = H⁻¹ (Jᵀ x − g)  (Eq. 60)
    for i in 0..nc {
        if matches!(rows[i], FrictionRows::Projected { .. }) {
            x[3 * i + 1] = xz[3 * i + 1];
        }
    }
    let mut du = vec![0.0; nv];
    backend.spmv(sys.jnt, &x, &mut du);
    for (d, gk) in du.iter_mut().zip(&gp) {
        *d -= gk;
    }
    hf.solve(&mut du);
    for (d, &f) in du.iter_mut().zip(&pb.fixed) {
        if f {
            *d = 0.0;
        }
    }
    Ok(Direction { x, du, info })
}
