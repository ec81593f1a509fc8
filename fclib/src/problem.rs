//! The FCLIB problem types and the mapping of a signorini step problem onto them (see the crate
//! doc's table): [`from_step`], the local form `W = H^T M^-1 H`, `q = H^T M^-1 f + w`, the view
//! as a [`LinearProblem`] and the Siconos natural-map error.

/// Why a step or a file's data cannot be an FCLIB problem, or the problem cannot be given to the
/// solvers: the offending field (`M`, `H`, `w`, `W`, `f`, `mu`) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProblemError {
    /// A field of the problem is invalid.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The step has no contact.
    #[error("the step has no contacts: nothing to export")]
    NoContacts,
    /// The step has bilateral rows (FCLIB's `G` is not exported).
    #[error("the step has {rows} bilateral rows; exporting FCLIB's G is not supported")]
    Bilateral {
        /// How many.
        rows: usize,
    },
    /// The file lacks the form asked for.
    #[error("the file has no {form} form")]
    MissingForm {
        /// The form.
        form: Form,
    },
    /// A matrix that the method needs symmetric is not, beyond the tolerance.
    #[error(
        "{matrix} is not symmetric: relative asymmetry max|A - A^T| / max|A| = {asymmetry:.2e} > {tolerance:.0e}; \
         {needs}"
    )]
    NotSymmetric {
        /// `W` or `M`.
        matrix: &'static str,
        /// The measured relative asymmetry.
        asymmetry: f64,
        /// [`W_SYMMETRY_TOLERANCE`] or [`M_SYMMETRY_TOLERANCE`].
        tolerance: f64,
        /// What needs it symmetric.
        needs: &'static str,
    },
    /// The local problem is too large for the dense Cholesky view.
    #[error("{rows} rows: the dense Cholesky view of W is limited to {limit}")]
    LocalViewTooLarge {
        /// Rows of `W`.
        rows: usize,
        /// [`LOCAL_VIEW_LIMIT`].
        limit: usize,
    },
}

impl From<ProblemError> for String {
    fn from(e: ProblemError) -> String {
        e.to_string()
    }
}

use crate::matrix::{Csc, CscOps};
use api::FieldError;
use harness::problem::StepProblem;
use kernels::BlockDiagonal;
use nalgebra::DMatrix;

/// Default limit on `3 nc` for writing the local form (`W` is dense-ish: `(3 nc)^2` entries).
pub const LOCAL_LIMIT: usize = 3000;

/// Limit on `3 nc` for solving the local form through its Cholesky view
/// ([`LocalProblem::global_view`]): the factor is computed dense, `(3 nc)^2` entries (288 MB at
/// the limit) and `(3 nc)^3 / 6` multiply-adds.
pub const LOCAL_VIEW_LIMIT: usize = 6000;

/// Which form of an FCLIB file the solvers are given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `M v = H r + f`, `u = H^T v + w` (`/fclib_global`).
    Global,
    /// `u = W r + q` (`/fclib_local`), solved through [`LocalProblem::global_view`].
    Local,
}

/// A spelling of [`Form`] that is neither `global` nor `local`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("form '{spelling}': expected 'global' or 'local'")]
pub struct FormError {
    /// The spelling given.
    pub spelling: String,
}

impl std::str::FromStr for Form {
    type Err = FormError;
    fn from_str(s: &str) -> Result<Self, FormError> {
        match s {
            "global" => Ok(Form::Global),
            "local" => Ok(Form::Local),
            _ => Err(FormError { spelling: s.to_string() }),
        }
    }
}

impl std::fmt::Display for Form {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Form::Global => "global",
            Form::Local => "local",
        })
    }
}

/// Problem description strings (`/fclib_global/info`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Info {
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
    /// Mathematical notes.
    pub math_info: String,
}

/// The global form `M v = H r + f`, `u = H^T v + w` (no bilateral part `G`, `b`).
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalProblem {
    /// Mass matrix `nv x nv`.
    pub m: Csc,
    /// Sizes of the diagonal blocks of `M` (sum `nv`).
    pub block_sizes: Vec<usize>,
    /// `H`, `nv x 3 nc`.
    pub h: Csc,
    /// Free momentum (`nv`).
    pub f: Vec<f64>,
    /// Contact-velocity bias (`3 nc`), normal first.
    pub w: Vec<f64>,
    /// Friction coefficients (`nc`).
    pub mu: Vec<f64>,
}

/// The local form `u = W r + q`.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalProblem {
    /// Delassus matrix `3 nc x 3 nc`.
    pub w: Csc,
    /// Constant term (`3 nc`).
    pub q: Vec<f64>,
    /// Friction coefficients (`nc`).
    pub mu: Vec<f64>,
}

/// A solution or a guess; empty vectors mean absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Solution {
    /// Velocities (`nv`).
    pub v: Vec<f64>,
    /// Contact velocities (`3 nc`).
    pub u: Vec<f64>,
    /// Impulses (`3 nc`).
    pub r: Vec<f64>,
}

/// Everything an FCLIB file holds that signorini uses.
#[derive(Debug, Clone, PartialEq)]
pub struct FclibProblem {
    /// Which form the solvers are given and the answers are graded on.
    pub form: Form,
    /// Descriptions (`/fclib_global/info`, or `/fclib_local/info` in a local-only file).
    pub info: Info,
    /// The global problem, when the file has it (always, for [`Form::Global`]).
    pub global: Option<GlobalProblem>,
    /// The local problem, when the file has it (always, for [`Form::Local`]).
    pub local: Option<LocalProblem>,
    /// The stored solution.
    pub solution: Option<Solution>,
    /// Stored initial guesses.
    pub guesses: Vec<Solution>,
}

impl FclibProblem {
    /// A file holding only the global problem `g` (no descriptions, solution or guesses).
    pub fn global_only(g: GlobalProblem) -> Self {
        FclibProblem {
            form: Form::Global,
            info: Info::default(),
            global: Some(g),
            local: None,
            solution: None,
            guesses: vec![],
        }
    }

    /// A file holding only the local problem `l` (no descriptions, solution or guesses).
    pub fn local_only(l: LocalProblem) -> Self {
        FclibProblem {
            form: Form::Local,
            info: Info::default(),
            global: None,
            local: Some(l),
            solution: None,
            guesses: vec![],
        }
    }

    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.mu().len()
    }

    /// Number of velocity DOFs of the global form, when the file has one.
    pub fn nv(&self) -> Option<usize> {
        self.global.as_ref().map(GlobalProblem::nv)
    }

    /// Friction coefficients.
    pub fn mu(&self) -> &[f64] {
        match (&self.global, &self.local) {
            (Some(g), _) => &g.mu,
            (None, Some(l)) => &l.mu,
            (None, None) => &[],
        }
    }

    /// The global problem, for [`Form::Global`].
    pub fn global_form(&self) -> Result<&GlobalProblem, ProblemError> {
        self.global.as_ref().ok_or(ProblemError::MissingForm { form: Form::Global })
    }

    /// The local problem, for [`Form::Local`].
    pub fn local_form(&self) -> Result<&LocalProblem, ProblemError> {
        self.local.as_ref().ok_or(ProblemError::MissingForm { form: Form::Local })
    }
}

/// Largest relative asymmetry `max |W - W^T| / max |W|` of a local problem's `W` that a solver
/// needing a symmetric `W` (through the Cholesky view) accepts. A `W = H^T M^-1 H` computed in
/// double precision is symmetric to a few units of round-off (1e-16 relative) times the
/// conditioning of `M`'s blocks; 1e-10 leaves room for that and refuses the files whose `W` is
/// not symmetric (Siconos's test data: 4.5e-5 to 1.8e-3).
pub const W_SYMMETRY_TOLERANCE: f64 = 1e-10;

/// Largest relative asymmetry `max |M_b - M_b^T| / max |M_b|` of a diagonal block of a global
/// problem's `M` that the solvers reading a mass matrix take (through the block's symmetric part),
/// the same round-off allowance as [`W_SYMMETRY_TOLERANCE`]. LMGC90's finite-element files store
/// `M` symmetric only to 1.5e-7, and that skew part is not round-off there: with `M`'s condition
/// number of 9.5e6 it changes `W = H^T M^-1 H` by 6 to 8.5 % of `max |W|`. Such a file is given
/// to the solvers that work on `W` as its condensed `W` (with `M` as written), and refused, with
/// the measured asymmetry, by the others.
pub const M_SYMMETRY_TOLERANCE: f64 = 1e-10;

/// The FCLIB problem of one step (rigid reference law), with the local form when `3 nc <=
/// local_limit`. Fails on a step without contacts or with bilateral rows (FCLIB's `G` is not
/// exported yet).
pub fn from_step(p: &StepProblem<'_>, local_limit: usize, info: Info) -> Result<FclibProblem, ProblemError> {
    let (nv, nc) = (p.nv(), p.nc());
    if nc == 0 {
        return Err(ProblemError::NoContacts);
    }
    if p.nb() > 0 {
        return Err(ProblemError::Bilateral { rows: p.nb() });
    }
    let m = Csc::from_triplets(nv, nv, &p.mass.triplets());
    let h_t: Vec<(usize, usize, f64)> = p.contacts.jacobian_triplets().into_iter().map(|(r, c, x)| (c, r, x)).collect();
    let h = Csc::from_triplets(nv, 3 * nc, &h_t);
    let f = p.mass.mul(&p.free_velocity());
    let w: Vec<f64> = (0..nc).flat_map(|i| p.bias(i)).collect();
    let mu: Vec<f64> = p.contacts.contacts.iter().map(|c| c.mu).collect();
    let block_sizes = p.mass.blocks().iter().map(|b| b.nrows()).collect();
    let global = GlobalProblem { m, block_sizes, h, f, w, mu };
    let local = (3 * nc <= local_limit).then(|| local_form(&global, &p.mass));
    Ok(FclibProblem { form: Form::Global, info, global: Some(global), local, solution: None, guesses: vec![] })
}

/// `W = H^T M^-1 H`, `q = H^T M^-1 f + w` with a factored `M`.
fn local_form(g: &GlobalProblem, mass: &BlockDiagonal) -> LocalProblem {
    let n = g.h.cols();
    let (p, i, x) = (g.h.indptr().into_raw_storage(), g.h.indices(), g.h.data());
    let mut t = vec![];
    for c in 0..n {
        let mut col = vec![0.0; g.h.rows()];
        for k in p[c]..p[c + 1] {
            col[i[k]] = x[k];
        }
        mass.solve_in_place(&mut col);
        for (r, x) in g.h.tr_mul(&col).into_iter().enumerate() {
            if x != 0.0 {
                t.push((r, c, x));
            }
        }
    }
    let mut vstar = g.f.clone();
    mass.solve_in_place(&mut vstar);
    let q = g.h.tr_mul(&vstar).iter().zip(&g.w).map(|(a, b)| a + b).collect();
    LocalProblem { w: Csc::from_triplets(n, n, &t), q, mu: g.mu.clone() }
}

impl GlobalProblem {
    /// Number of DOFs.
    pub fn nv(&self) -> usize {
        self.m.cols()
    }
    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.mu.len()
    }

    /// The diagonal blocks of `M` as given (sizes [`Self::block_sizes`]); an entry coupling two
    /// blocks is refused, naming it.
    pub fn blocks(&self) -> Result<Vec<DMatrix<f64>>, ProblemError> {
        let mut blocks: Vec<DMatrix<f64>> = self.block_sizes.iter().map(|&s| DMatrix::zeros(s, s)).collect();
        let mut owner = vec![(0usize, 0usize); self.nv()];
        let mut off = 0;
        for (k, &s) in self.block_sizes.iter().enumerate() {
            for (j, o) in owner[off..off + s].iter_mut().enumerate() {
                *o = (k, j);
            }
            off += s;
        }
        for (r, c, x) in self.m.triplets() {
            let ((kr, jr), (kc, jc)) = (owner[r], owner[c]);
            if kr != kc {
                return Err(
                    FieldError::new("M", format!("entry ({r}, {c}) couples diagonal blocks {kr} and {kc}")).into()
                );
            }
            blocks[kr][(jr, jc)] = x;
        }
        Ok(blocks)
    }

    /// The relative asymmetry of `M`, `max |M - M^T| / max |M|` (over its diagonal blocks).
    pub fn m_asymmetry(&self) -> Result<f64, ProblemError> {
        Ok(block_asymmetry(&self.blocks()?))
    }

    /// The block-diagonal mass matrix the solvers are given (unfactored): `M`'s blocks, each
    /// replaced by its symmetric part `(M_b + M_b^T) / 2` when its relative asymmetry is at most
    /// [`M_SYMMETRY_TOLERANCE`]; refused beyond, with the measured asymmetry.
    pub fn mass(&self) -> Result<BlockDiagonal, ProblemError> {
        let mut blocks = self.blocks()?;
        let a = block_asymmetry(&blocks);
        if a > M_SYMMETRY_TOLERANCE || a.is_nan() {
            return Err(ProblemError::NotSymmetric {
                matrix: "M",
                asymmetry: a,
                tolerance: M_SYMMETRY_TOLERANCE,
                needs: "a solver reading a mass matrix needs it symmetric (solvers working on W are given the \
                        condensed W = H^T M^-1 H)",
            });
        }
        for b in &mut blocks {
            *b = (&*b + b.transpose()) * 0.5;
        }
        Ok(BlockDiagonal::new(blocks))
    }

    /// The local problem Siconos condenses a global one to, `W = H^T M^-1 H`, `q = H^T M^-1 f + w`,
    /// with `M` as written (an LU factor of each diagonal block: a non-symmetric `M` gives a
    /// non-symmetric `W`). Refused above [`LOCAL_VIEW_LIMIT`] rows or for a singular block.
    pub fn condense(&self) -> Result<LocalProblem, ProblemError> {
        let n = 3 * self.nc();
        if n > LOCAL_VIEW_LIMIT {
            return Err(ProblemError::LocalViewTooLarge { rows: n, limit: LOCAL_VIEW_LIMIT });
        }
        let mut lus = vec![];
        let mut owner = vec![0usize; self.nv()];
        let mut offsets = vec![];
        let mut off = 0;
        for (k, b) in self.blocks()?.into_iter().enumerate() {
            let lu = b.lu();
            if !lu.is_invertible() {
                return Err(FieldError::new("M", format!("diagonal block {k} is singular")).into());
            }
            owner[off..off + lu.l().nrows()].fill(k);
            offsets.push(off);
            off += lu.l().nrows();
            lus.push(lu);
        }
        // x = M^-1 y, solving only the blocks `y` touches
        let solve = |y: &mut [f64], touched: &[usize]| {
            for &k in touched {
                let (o, m) = (offsets[k], lus[k].l().nrows());
                let mut b = nalgebra::DVector::from_column_slice(&y[o..o + m]);
                lus[k].solve_mut(&mut b);
                y[o..o + m].copy_from_slice(b.as_slice());
            }
        };
        let (p, i, x) = (self.h.indptr().into_raw_storage(), self.h.indices(), self.h.data());
        let mut t = vec![];
        let mut col = vec![0.0; self.nv()];
        for c in 0..n {
            col.fill(0.0);
            let mut touched: Vec<usize> = (p[c]..p[c + 1]).map(|k| owner[i[k]]).collect();
            touched.sort_unstable();
            touched.dedup();
            for k in p[c]..p[c + 1] {
                col[i[k]] = x[k];
            }
            solve(&mut col, &touched);
            for (r, v) in self.h.tr_mul(&col).into_iter().enumerate() {
                if v != 0.0 {
                    t.push((r, c, v));
                }
            }
        }
        let mut vstar = self.f.clone();
        solve(&mut vstar, &(0..lus.len()).collect::<Vec<_>>());
        let q = self.h.tr_mul(&vstar).iter().zip(&self.w).map(|(a, b)| a + b).collect();
        Ok(LocalProblem { w: Csc::from_triplets(n, n, &t), q, mu: self.mu.clone() })
    }

    /// `u = H^T v + w`, the contact velocities of `v`.
    pub fn contact_velocity(&self, v: &[f64]) -> Vec<f64> {
        self.h.tr_mul(v).iter().zip(&self.w).map(|(a, b)| a + b).collect()
    }
}

impl LocalProblem {
    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.mu.len()
    }

    /// `u = W r + q`.
    pub fn contact_velocity(&self, r: &[f64]) -> Vec<f64> {
        self.w.mul(r).iter().zip(&self.q).map(|(a, b)| a + b).collect()
    }

    /// The relative asymmetry `max |W - W^T| / max |W|`.
    pub fn asymmetry(&self) -> f64 {
        let n = self.w.rows().max(self.w.cols());
        let mut entries: std::collections::HashMap<(usize, usize), f64> = Default::default();
        for (r, c, x) in self.w.triplets() {
            *entries.entry((r, c)).or_default() += x;
        }
        let scale = entries.values().fold(0.0f64, |m, x| m.max(x.abs()));
        let diff = entries
            .iter()
            .filter(|((r, c), _)| *r < n && *c < n)
            .map(|(&(r, c), x)| (x - entries.get(&(c, r)).copied().unwrap_or(0.0)).abs())
            .fold(0.0f64, f64::max);
        if scale > 0.0 {
            diff / scale
        } else {
            0.0
        }
    }

    /// The problem in Delassus form, `W` as given (solvers with `delassus_form`).
    pub fn to_delassus(&self) -> Result<api::DelassusProblem, ProblemError> {
        Ok(api::DelassusProblem::from_triplets(&self.w.triplets(), self.q.clone(), self.mu.clone())?)
    }

    /// The local problem as a global one that every Delassus-based solver can take, and the
    /// regularisation used: with `W_s = (W + W^T) / 2` and the smallest `epsilon` in `{0} ∪
    /// {1e-14, 1e-13, ...} x max_i W_ii` for which `W_s + epsilon I = R^T R` has a Cholesky factor
    /// (`R` upper triangular), `M = I`, `H = R`, `f = R^-T q`, `w = 0`: then `H^T M^-1 H = W_s +
    /// epsilon I` and `H^T M^-1 f + w = q`. `M`'s blocks pair the contacts (6 DOFs, 3 for a last
    /// odd one); contact `i` acts on every block its column of `R` touches (about `i / 2` blocks
    /// for a dense `W`; every solver that takes FCLIB takes a contact on any number of blocks,
    /// docs/fclib.md). Refused when `W` is not symmetric beyond [`W_SYMMETRY_TOLERANCE`] (the
    /// view would answer `W_s`, another problem), above [`LOCAL_VIEW_LIMIT`] rows, or when no
    /// `epsilon <= 1e-6 max_i W_ii` works.
    pub fn global_view(&self) -> Result<(GlobalProblem, f64), ProblemError> {
        let n = 3 * self.nc();
        if self.w.rows() != n || self.w.cols() != n || self.q.len() != n {
            return Err(FieldError::new(
                "W",
                format!(
                    "{} x {}, q has {}: expected {n} for {} contacts",
                    self.w.rows(),
                    self.w.cols(),
                    self.q.len(),
                    self.nc()
                ),
            )
            .into());
        }
        let asymmetry = self.asymmetry();
        if asymmetry > W_SYMMETRY_TOLERANCE || asymmetry.is_nan() {
            return Err(ProblemError::NotSymmetric {
                matrix: "W",
                asymmetry,
                tolerance: W_SYMMETRY_TOLERANCE,
                needs: "the solver's method needs a symmetric W (it is given the Cholesky view W = R^T R)",
            });
        }
        if n > LOCAL_VIEW_LIMIT {
            return Err(ProblemError::LocalViewTooLarge { rows: n, limit: LOCAL_VIEW_LIMIT });
        }
        let mut ws = vec![0.0; n * n];
        for (r, c, x) in self.w.triplets() {
            ws[r * n + c] += 0.5 * x;
            ws[c * n + r] += 0.5 * x;
        }
        let dmax = (0..n).map(|i| ws[i * n + i]).fold(0.0f64, f64::max);
        if dmax.is_nan() || dmax <= 0.0 {
            return Err(FieldError::new("W", "has no positive diagonal entry").into());
        }
        let mut eps = 0.0;
        let l = loop {
            let mut a = ws.clone();
            for i in 0..n {
                a[i * n + i] += eps;
            }
            if kernels::dense_cholesky::factor_in_place(n, &mut a).is_ok() {
                break a;
            }
            eps = if eps == 0.0 { 1e-14 * dmax } else { eps * 10.0 };
            if eps > 1e-6 * dmax {
                return Err(FieldError::new(
                    "W + epsilon I",
                    format!("has no Cholesky factor for epsilon up to 1e-6 x max W_ii = {:.3e}", 1e-6 * dmax),
                )
                .into());
            }
        };
        // factor_in_place leaves L strictly below the diagonal and 1 / L_ii on it; H = R = L^T.
        let lij = |i: usize, j: usize| if i == j { 1.0 / l[i * n + i] } else { l[i * n + j] };
        let mut t = vec![];
        for i in 0..n {
            for j in 0..=i {
                let x = lij(i, j);
                if x != 0.0 {
                    t.push((j, i, x));
                }
            }
        }
        // f = R^-T q = L^-1 q (forward substitution)
        let mut f = self.q.clone();
        for i in 0..n {
            let s: f64 = (0..i).map(|j| lij(i, j) * f[j]).sum();
            f[i] = (f[i] - s) / lij(i, i);
        }
        let mut block_sizes = vec![6; n / 6];
        if !n.is_multiple_of(6) {
            block_sizes.push(3);
        }
        let m = Csc::from_triplets(n, n, &(0..n).map(|i| (i, i, 1.0)).collect::<Vec<_>>());
        let g =
            GlobalProblem { m, block_sizes, h: Csc::from_triplets(n, n, &t), f, w: vec![0.0; n], mu: self.mu.clone() };
        Ok((g, eps))
    }
}

/// The absolute natural-map residual `||F||_2` of contact velocities `u` and impulses `r` (`3 nc`
/// each, normal first): `F_i = r_i - P_K(r_i - u_i - mu_i ||u_T,i|| e_n)` with `P_K` the
/// projection onto the Coulomb cone of `mu_i`. Zero exactly at a solution of the Coulomb NCP.
pub fn natmap_residual(u: &[f64], r: &[f64], mu: &[f64]) -> f64 {
    let mut s = 0.0;
    for (i, &mu) in mu.iter().enumerate() {
        let (ui, ri) = (&u[3 * i..3 * i + 3], &r[3 * i..3 * i + 3]);
        let ut = (ui[1] * ui[1] + ui[2] * ui[2]).sqrt();
        let x = [ri[0] - ui[0] - mu * ut, ri[1] - ui[1], ri[2] - ui[2]];
        let pk = kernels::cone::project(x, mu);
        s += (0..3).map(|k| (ri[k] - pk[k]).powi(2)).sum::<f64>();
    }
    s.sqrt()
}

/// The Euclidean norm.
pub fn norm(x: &[f64]) -> f64 {
    x.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// The relative asymmetry `max |A - A^T| / max |A|` of a block-diagonal matrix given by its
/// diagonal blocks (0 for a zero matrix).
pub fn block_asymmetry(blocks: &[DMatrix<f64>]) -> f64 {
    let scale = blocks.iter().map(|b| b.amax()).fold(0.0, f64::max);
    let diff = blocks.iter().map(|b| (b - b.transpose()).amax()).fold(0.0, f64::max);
    if scale > 0.0 {
        diff / scale
    } else {
        0.0
    }
}

/// Permutes per-contact triples from normal first `(n, t1, t2)` (FCLIB, signorini) to normal
/// last `(t1, t2, n)` (ContactBench).
pub fn to_normal_last(x: &[f64]) -> Vec<f64> {
    x.chunks_exact(3).flat_map(|c| [c[1], c[2], c[0]]).collect()
}

/// Permutes per-contact triples from normal last `(t1, t2, n)` to normal first `(n, t1, t2)`.
pub fn from_normal_last(x: &[f64]) -> Vec<f64> {
    x.chunks_exact(3).flat_map(|c| [c[2], c[0], c[1]]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_last_permutation() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(to_normal_last(&x), vec![2.0, 3.0, 1.0, 5.0, 6.0, 4.0]);
        assert_eq!(from_normal_last(&to_normal_last(&x)), x.to_vec());
    }
}
