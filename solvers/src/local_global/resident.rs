//! The device-resident step (Zeng et al.'s GPU design, §5): the constant model — `S`, `Sᵀ`, the
//! element data, the lumped mass, the assembly and injection matrices — is uploaded once per
//! factorisation ([`DeviceModel`]); per step the predictor, `H`, `W` and the per-contact
//! constants are uploaded before the iteration loop; the loop (local step, global step
//! `Sᵀ(S b)`, NCP rows, constraint solve, correction) runs on device handles only
//! ([`Resident`]), reading back only scalars (energy, norms, counts); after the loop the final
//! iterate `q`, `λ` and `Ω` are downloaded once. One code for every backend: the CPU runs it
//! on [`kernels::backend::HostMirror`] (host memory counted as a device), the CUDA backend on its
//! device. [`StepTransfers`] splits the counted transfers by phase.
//!
//! Exceptions, counted like every other copy: `global_solve = cholesky` solves its triangular
//! systems on the host (each application downloads the right-hand side and uploads the solution);
//! when the harness records iterates (`IterationLog::wants_iterates`) `q`, `λ`, `Ω` are
//! downloaded after every iteration.

use super::model::{GlobalInverse, Model};
use super::problem::{ContactSystem, Predictor};
use super::settings::LocalGlobalSettings;
use api::eval::ProjectiveElement;
use api::{IterationLog, ModelEval, SolveError, SolveStatus, StepProblem};
use kernels::backend::{ContactConsts, NcpRows, Resident, Transfers, VectorOps};
use kernels::iterative::KrylovParams;
use kernels::ncp::Ncp;
use kernels::pd_local::{assembly_matrix, HostProjection};
use kernels::sparse::Csr;
use std::time::Instant;

/// Host↔device transfers of the last step, by phase (each a difference of two snapshots of the
/// memory layer's counter).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepTransfers {
    /// Uploads of the constant model (zero while it stays resident across steps).
    pub model: Transfers,
    /// Uploads of the step's data before the iteration loop.
    pub setup: Transfers,
    /// Everything inside the iteration loop: scalars only (unless the Cholesky global solve or
    /// iterate recording is on).
    pub iterations: Transfers,
    /// The downloads of the result after the loop.
    pub finish: Transfers,
}

/// The inverse of `A` on the device.
enum DeviceInverse<R: Resident> {
    /// `S`, `Sᵀ` resident.
    SparseInverse { s: R::Mat, st: R::Mat },
    /// `A_ff` and `D⁻¹` resident.
    Jacobi { a: R::Mat, dinv: R::Vec },
    /// Host triangular solves with the model's factor (two counted copies per application).
    Cholesky,
}

/// The constant model on the device, uploaded once per factorisation.
pub(super) struct DeviceModel<R: Resident> {
    elements: R::Elements,
    /// Lumped mass per DOF (`nv`).
    mass: R::Vec,
    /// `P` (`nf × 12 ne`): `b = M q̃ − A_fp q_p + h² P r` (Eq. 6).
    assemble: R::Mat,
    /// `E` (`nv × nf`): `q = E x + q_p` (free DOFs from `x`, prescribed from `q_p`).
    inject: R::Mat,
    inverse: DeviceInverse<R>,
    /// Free DOFs.
    nf: usize,
}

impl<R: Resident> DeviceModel<R> {
    /// Uploads the constant model.
    pub(super) fn upload(r: &R, model: &Model) -> Self {
        let (nv, nf) = (model.mass.len(), model.free.len());
        let inject =
            Csr::from_triplets(nv, nf, &model.free.iter().enumerate().map(|(i, &k)| (k, i, 1.0)).collect::<Vec<_>>());
        let inverse = match &model.inverse {
            GlobalInverse::SparseInverse(si) => {
                DeviceInverse::SparseInverse { s: r.upload_matrix(si.s()), st: r.upload_matrix(si.st()) }
            }
            GlobalInverse::Jacobi(dinv) => DeviceInverse::Jacobi { a: r.upload_matrix(&model.a), dinv: r.upload(dinv) },
            GlobalInverse::Cholesky(_) => DeviceInverse::Cholesky,
        };
        Self {
            elements: r.upload_elements(&model.pd),
            mass: r.upload(&model.mass),
            assemble: r.upload_matrix(&assembly_matrix(&model.pd, &model.free_of, nf)),
            inject: r.upload_matrix(&inject),
            inverse,
            nf,
        }
    }

    /// `x = A⁻¹ b` (`tmp` scratch of length `nf`). Jacobi: `x = D⁻¹ b`.
    fn apply_inverse(&self, r: &R, host: &mut GlobalInverse, b: &R::Vec, tmp: &mut R::Vec, x: &mut R::Vec) {
        match (&self.inverse, host) {
            (DeviceInverse::SparseInverse { s, st }, _) => {
                r.spmv(s, b, tmp);
                r.spmv(st, tmp, x);
            }
            (DeviceInverse::Jacobi { dinv, .. }, _) => r.ops().mul_elem(dinv, b, x),
            (DeviceInverse::Cholesky, GlobalInverse::Cholesky(c)) => {
                let mut host = vec![0.0; self.nf];
                r.download(b, &mut host);
                c.solve_in_place(&mut host);
                *x = r.upload(&host);
            }
            (DeviceInverse::Cholesky, _) => unreachable!("the device model is rebuilt with the model"),
        }
    }

    /// The global step (Eq. 6) from the free iterate `x`: `out = A⁻¹ b`, or for Jacobi one sweep
    /// `out = x + D⁻¹ (b − A x)`.
    fn global_step(&self, r: &R, host: &mut GlobalInverse, b: &R::Vec, x: &R::Vec, tmp: &mut R::Vec, out: &mut R::Vec) {
        if let DeviceInverse::Jacobi { a, dinv } = &self.inverse {
            let o = r.ops();
            r.spmv(a, x, tmp);
            o.xpby(b, -1.0, tmp); // tmp = b − A x
            o.mul_elem(dinv, tmp, out);
            o.axpy(1.0, x, out);
        } else {
            self.apply_inverse(r, host, b, tmp, out);
        }
    }
}

/// The model's own projections (`ModelEval::projective_terms`) for the host local step.
struct ModelProjection<'a> {
    eval: &'a dyn ModelEval,
    elements: &'a [ProjectiveElement],
}

impl HostProjection for ModelProjection<'_> {
    fn terms(&self, e: usize, f: &nalgebra::Matrix3<f64>) -> Vec<(f64, nalgebra::Matrix3<f64>)> {
        let el = &self.elements[e];
        self.eval.projective_terms(el.body, el.index, f)
    }
}

/// The contact system of one step on the device, and its work vectors.
struct DeviceContacts<R: Resident> {
    q0: R::Vec,
    h_full: R::Mat,
    h_free: R::Mat,
    h_free_t: R::Mat,
    w: R::Delassus,
    wdiag: R::Vec,
    consts: ContactConsts<R::Vec>,
    lam: R::Vec,
    ones_m: R::Vec,
    ones_nc: R::Vec,
    rows: NcpRows<R::Vec>,
    /// Scratch: `q − q_t` (`nv`); `H (q − q_t)`, `y`, `Ω λ`, `W Ω λ`, rhs, `Δλ`, zeros, pinv (`m`);
    /// `Hᵀ Ω λ`, correction, new iterate (`nf`).
    disp: R::Vec,
    dq: R::Vec,
    y: R::Vec,
    ol: R::Vec,
    wol: R::Vec,
    rhs: R::Vec,
    dlam: R::Vec,
    zero_m: R::Vec,
    pinv: R::Vec,
    force: R::Vec,
    corr: R::Vec,
    xn: R::Vec,
}

impl<R: Resident> DeviceContacts<R> {
    fn upload(r: &R, p: &StepProblem<'_>, cs: &ContactSystem, lam: &[f64], nf: usize) -> Self {
        let (nv, nc) = (p.nv(), cs.gap0.len());
        let m = 3 * nc;
        let ones_m = r.upload(&vec![1.0; m]);
        let mut rows = NcpRows {
            omega: r.zeros(m),
            ediag: r.zeros(m),
            phi: r.zeros(m),
            phi_n: r.zeros(nc),
            phi_f: r.zeros(nc),
            stick: r.zeros(nc),
            slip: r.zeros(nc),
        };
        r.ops().copy(&ones_m, &mut rows.omega); // Ω⁰ = I
        Self {
            q0: r.upload(&p.q0),
            h_full: r.upload_matrix(&cs.h_full),
            h_free: r.upload_matrix(&cs.h_free),
            h_free_t: r.upload_matrix(&cs.h_free.transpose()),
            w: r.upload_delassus(&cs.w),
            wdiag: r.upload(&cs.wdiag),
            consts: ContactConsts {
                gap0: r.upload(&cs.gap0),
                mu: r.upload(&cs.mu),
                r_n: r.upload(&cs.r_n),
                r_f: r.upload(&cs.r_f),
            },
            lam: r.upload(lam),
            ones_m,
            ones_nc: r.upload(&vec![1.0; nc]),
            rows,
            disp: r.zeros(nv),
            dq: r.zeros(m),
            y: r.zeros(m),
            ol: r.zeros(m),
            wol: r.zeros(m),
            rhs: r.zeros(m),
            dlam: r.zeros(m),
            zero_m: r.zeros(m),
            pinv: r.zeros(m),
            force: r.zeros(nf),
            corr: r.zeros(nf),
            xn: r.zeros(nf),
        }
    }
}

/// The host data of one step (built by the solver before the upload).
pub(super) struct StepData<'a, 'p> {
    pub p: &'a StepProblem<'p>,
    pub s: &'a LocalGlobalSettings,
    pub ncp: Ncp,
    pub model: &'a mut Model,
    pub pred: &'a Predictor,
    pub cs: &'a ContactSystem,
    /// `λ⁰` (warm start).
    pub lam0: Vec<f64>,
    /// `e(q*)` of the Newton reference, if asked for.
    pub reference: Option<f64>,
    /// When the step's host setup started (the "setup" stage includes the uploads).
    pub setup_start: Instant,
}

/// The final iterate on the host.
pub(super) struct StepResult {
    pub q: Vec<f64>,
    pub lam: Vec<f64>,
    pub omega: Vec<f64>,
    pub iterations: usize,
    pub status: SolveStatus,
}

/// The free-DOF work vectors of the loop.
struct FreeVectors<V> {
    x: V,
    x_free: V,
    b: V,
    g: V,
    tmp: V,
}

/// One step (Algorithm 4) on the memory layer `r`, with the constant model `dm` (uploaded here
/// if `None`). Returns the final iterate and the transfers by phase.
pub(super) fn run_step<R: Resident>(
    r: &R,
    dm: &mut Option<DeviceModel<R>>,
    d: StepData<'_, '_>,
    log: &mut IterationLog,
) -> Result<(StepResult, StepTransfers), SolveError> {
    let StepData { p, s, ncp, model, pred, cs, lam0, reference, setup_start } = d;
    let (h, nc, nv, nf) = (p.dt, p.nc(), p.nv(), model.free.len());
    let (h2, m) = (h * h, 3 * nc);
    let o = r.ops();
    let before_model = r.transfers();
    let dm = &*dm.get_or_insert_with(|| DeviceModel::upload(r, model));
    let before_setup = r.transfers();
    // per-step data: q̃, the prescribed part q_p of q, M q̃ − A_fp q_p, the free iterate x⁰
    let mut q_p = pred.q_start.clone();
    for &k in &model.free {
        q_p[k] = 0.0;
    }
    let x_start: Vec<f64> = model.free.iter().map(|&k| pred.q_start[k]).collect();
    let (q_tilde, q_p, b_const) = (r.upload(&pred.q_tilde), r.upload(&q_p), r.upload(&pred.b_const));
    let mut v =
        FreeVectors { x: r.upload(&x_start), x_free: r.zeros(nf), b: r.zeros(nf), g: r.zeros(nf), tmp: r.zeros(nf) };
    let (mut q, mut t_nv1, mut t_nv2) = (r.zeros(nv), r.zeros(nv), r.zeros(nv));
    let mut res = r.zeros(12 * model.pd.len());
    let mut c = (nc > 0).then(|| DeviceContacts::upload(r, p, cs, &lam0, nf));
    // warm start of q with the previous contact forces: x⁰ += h² A⁻¹ Hᵀ λ⁰ (README "choices")
    if let Some(c) = c.as_mut().filter(|_| lam0.iter().any(|l| *l != 0.0)) {
        r.spmv(&c.h_free_t, &c.lam, &mut c.force);
        dm.apply_inverse(r, &mut model.inverse, &c.force, &mut v.tmp, &mut c.corr);
        o.axpy(h2, &c.corr, &mut v.x);
    }
    let scatter = |x: &R::Vec, q: &mut R::Vec| {
        r.spmv(&dm.inject, x, q);
        o.axpy(1.0, &q_p, q);
    };
    scatter(&v.x, &mut q);
    let proj = ModelProjection { eval: p.model(), elements: &model.elements };
    r.sync();
    log.add_stage("setup", setup_start.elapsed().as_secs_f64());
    let before_loop = r.transfers();
    let (mut status, mut iterations, mut e_first) = (SolveStatus::MaxIterations, 0, f64::NAN);
    let record_energy = |e: f64, e_first: f64| -> Vec<(&'static str, f64)> {
        let mut row = vec![("incremental_potential_j", e)];
        if let Some(es) = reference {
            row.push(("energy_rel_error", (e - es) / (e_first - es)));
        }
        row
    };
    for k in 0..=s.iterations {
        // (a) local step at q^k (Eq. 5) and the PD incremental potential e(q^k) (Eq. 1)
        let t = Instant::now();
        let inertia = r.mass_dist2(&dm.mass, &q, &q_tilde, &mut t_nv1, &mut t_nv2) / (2.0 * h2);
        let energy = inertia + r.pd_local_step(&dm.elements, &proj, &q, &mut res);
        log.add_stage("local", t.elapsed().as_secs_f64());
        if k == 0 {
            e_first = energy;
        }
        if !energy.is_finite() {
            return Err(SolveError::NonFinite { what: format!("local step at iteration {k}") });
        }
        if k == s.iterations {
            log.record(&record_energy(energy, e_first));
            break;
        }
        // (b) b^k = M q̃ − A_fp q_p + h² P r (Eq. 6); (c) q_free = A⁻¹ b (Eq. 8: Sᵀ(S b))
        let t = Instant::now();
        r.spmv(&dm.assemble, &res, &mut v.g);
        o.copy(&b_const, &mut v.b);
        o.axpy(h2, &v.g, &mut v.b);
        dm.global_step(r, &mut model.inverse, &v.b, &v.x, &mut v.tmp, &mut v.x_free);
        r.sync();
        log.add_stage("global", t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut row = record_energy(energy, e_first);
        let change = match c.as_mut() {
            None => {
                o.copy(&v.x_free, &mut v.tmp);
                o.axpy(-1.0, &v.x, &mut v.tmp);
                let change = r.absmax(&v.tmp);
                o.copy(&v.x_free, &mut v.x);
                row.push(("dq_rel_linf", change / pred.scale_q));
                change
            }
            Some(c) => {
                let stats = contact_update(r, dm, &mut model.inverse, c, &mut v, &q, s, ncp, h, k)?;
                row.push(("dq_rel_linf", stats[0] / pred.scale_q));
                let names = ["ncp_normal_linf_m", "ncp_friction_linf_mps", "n_stick", "n_slip"];
                row.extend(names.into_iter().zip(stats[1..5].iter().copied()));
                row.extend([("cr_iterations", stats[5]), ("cr_rel_residual", stats[6])]);
                stats[0]
            }
        };
        r.sync();
        log.add_stage("contact", t.elapsed().as_secs_f64());
        log.record(&row);
        scatter(&v.x, &mut q);
        iterations = k + 1;
        if log.wants_iterates() {
            let it = download(r, &q, c.as_ref(), nv, m);
            let sol = super::solver::finish(p, s, it.0, &it.1, &it.2, iterations, status);
            log.iterate(&sol.v, &sol.impulses, &sol.bilateral);
        }
        if log.should_stop() {
            status = log.stop_status();
            break;
        }
        if s.tolerance > 0.0 && change <= s.tolerance * pred.scale_q {
            status = SolveStatus::Solved;
            // without contacts one more local step is not needed: q is the returned iterate
            break;
        }
    }
    let before_finish = r.transfers();
    let (q, lam, omega) = download(r, &q, c.as_ref(), nv, m);
    let after = r.transfers();
    let transfers = StepTransfers {
        model: before_setup.since(&before_model),
        setup: before_loop.since(&before_setup),
        iterations: before_finish.since(&before_loop),
        finish: after.since(&before_finish),
    };
    Ok((StepResult { q, lam, omega, iterations, status }, transfers))
}

/// `q`, `λ`, `Ω` to the host (one download each; none for `λ`, `Ω` without contacts).
fn download<R: Resident>(
    r: &R,
    q: &R::Vec,
    c: Option<&DeviceContacts<R>>,
    nv: usize,
    m: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (mut qh, mut lam, mut omega) = (vec![0.0; nv], vec![0.0; m], vec![1.0; m]);
    r.download(q, &mut qh);
    if let Some(c) = c {
        r.download(&c.lam, &mut lam);
        r.download(&c.rows.omega, &mut omega);
    }
    (qh, lam, omega)
}

/// (d)–(j) of one iteration with contacts: NCP rows at `q^k` (Eqs. 40, 46–57), the right-hand
/// side `(1/h²)(h − J A⁻¹ g)` (Algorithms 3–4 sign, README erratum 1) with
/// `y = H(q_free − q^k) + h² W Ω λ^k`, the constraint solve by CR (fixed budget), `λ += Δλ`
/// (Eq. 23a) and `x = q_free + h² A⁻¹ Hᵀ Ω λ` (Eq. 23b), all on the device. Returns the scalars
/// of the log row: `[max |Δx|, max |φ_n|, max |φ_f|, n_stick, n_slip, CR iterations, CR residual]`.
#[allow(clippy::too_many_arguments)]
fn contact_update<R: Resident>(
    r: &R,
    dm: &DeviceModel<R>,
    host: &mut GlobalInverse,
    c: &mut DeviceContacts<R>,
    v: &mut FreeVectors<R::Vec>,
    q: &R::Vec,
    s: &LocalGlobalSettings,
    ncp: Ncp,
    h: f64,
    k: usize,
) -> Result<[f64; 7], SolveError> {
    let (o, h2) = (r.ops(), h * h);
    // (d)–(e) δ = H (q^k − q_t) and the NCP rows Ω, E, φ at λ^k
    o.copy(q, &mut c.disp);
    o.axpy(-1.0, &c.q0, &mut c.disp);
    r.spmv(&c.h_full, &c.disp, &mut c.dq);
    r.ncp_rows(ncp, h, &c.dq, &c.lam, &c.consts, &mut c.rows);
    let (phi_n_max, phi_f_max) = (r.absmax(&c.rows.phi_n), r.absmax(&c.rows.phi_f));
    if !(phi_n_max.is_finite() && phi_f_max.is_finite() && r.absmax(&c.rows.ediag).is_finite()) {
        return Err(SolveError::NonFinite { what: format!("NCP rows at iteration {k}") });
    }
    let (n_stick, n_slip) = (o.dot(&c.rows.stick, &c.ones_nc), o.dot(&c.rows.slip, &c.ones_nc));
    let rows = &c.rows;
    // (f) y = H (q_free − q^k) + h² W Ω λ^k
    o.copy(&v.x_free, &mut v.tmp);
    o.axpy(-1.0, &v.x, &mut v.tmp);
    r.spmv(&c.h_free, &v.tmp, &mut c.y);
    o.mul_elem(&rows.omega, &c.lam, &mut c.ol);
    r.apply_delassus(&c.w, &c.ol, &mut c.wol);
    o.axpy(h2, &c.wol, &mut c.y);
    // (g) rhs per row; (h) (Ω W Ω + E) Δλ = rhs by CR from Δλ = 0 (fixed budget)
    r.newton_rhs(h, &rows.phi, &rows.omega, &c.y, &mut c.rhs);
    let pinv = if s.cr_jacobi {
        r.cr_jacobi_pinv(&rows.omega, &c.wdiag, &rows.ediag, &mut c.pinv);
        &c.pinv
    } else {
        &c.ones_m
    };
    o.copy(&c.zero_m, &mut c.dlam);
    let params = KrylovParams { max_iterations: s.cr_iterations, rel_tolerance: 0.0, abs_tolerance: 0.0 };
    let info = r
        .pcr_scaled_delassus(&c.w, &rows.omega, &rows.ediag, pinv, &c.rhs, &mut c.dlam, &params)
        .map_err(|e| SolveError::Numerical { what: format!("constraint system at iteration {k}: {e}") })?;
    // (i) λ^{k+1} = λ^k + Δλ (Eq. 23a; no projection, as the paper)
    o.axpy(1.0, &c.dlam, &mut c.lam);
    // (j) x^{k+1} = q_free + h² A⁻¹ Hᵀ Ω λ^{k+1} (Eq. 23b)
    o.mul_elem(&rows.omega, &c.lam, &mut c.ol);
    r.spmv(&c.h_free_t, &c.ol, &mut c.force);
    dm.apply_inverse(r, host, &c.force, &mut v.tmp, &mut c.corr);
    o.copy(&v.x_free, &mut c.xn);
    o.axpy(h2, &c.corr, &mut c.xn);
    o.copy(&c.xn, &mut v.tmp);
    o.axpy(-1.0, &v.x, &mut v.tmp);
    let change = r.absmax(&v.tmp);
    o.copy(&c.xn, &mut v.x);
    if !(change.is_finite() && r.absmax(&c.lam).is_finite()) {
        return Err(SolveError::NonFinite { what: format!("constrained global step at iteration {k}") });
    }
    Ok([change, phi_n_max, phi_f_max, n_stick, n_slip, info.iterations as f64, info.rel_residual])
}
