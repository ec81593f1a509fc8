//! FCLIB interoperability: export any step problem as an FCLIB global problem (HDF5), import FCLIB
//! files as [`harness::linear::LinearProblem`]s that every velocity-level solver can run, and the
//! FCLIB/Siconos natural-map error to compare our answer with a stored solution.
//!
//! # Mapping (FCLIB `fclib.h`; docs/metrics.md)
//! FCLIB's global problem is `M v = H r + f`, `u = H^T v + w`, `K_mu ∋ r ⊥ u + (mu ||u_T||, 0, 0)
//! ∈ K_mu*`, per-contact vectors **normal first** `(n, t1, t2)`, the order of signorini's contact
//! space, so no permutation is needed (ContactBench stores the normal last: `(t1, t2, n)`; convert
//! with [`to_normal_last`] / [`from_normal_last`]). A step problem (`M (v+ - v*) = J^T lambda`,
//! `u = J v+ + w`) maps to:
//!
//! | FCLIB | signorini |
//! |---|---|
//! | `M` | the mass matrix at `q0` |
//! | `H` (`nv x 3 nc`) | `J^T`, columns `3 i + (0, 1, 2)` = `(n, t1, t2)` of contact `i` |
//! | `f` | the free momentum `M v* = M v0 + dt f(q0, v0)` (N s) |
//! | `w` | the bias `(phi0_i / dt, 0, 0)` (m/s) |
//! | `mu` | the combined friction coefficient |
//! | `r`, `v`, `u` | impulses `lambda` (N s), `v+`, `J v+ + w` |
//! | `W`, `q` (local) | `H^T M^-1 H`, `H^T M^-1 f + w` |
//!
//! The exported law is the harness's rigid reference law: a compliant contact's stiffness and
//! dissipation are not part of it (`math_info` says so).
//!
//! # File layout
//! `/fclib_global/{spacedim, M, H, vectors/{f, w, mu}, info/{title, description, math_info}}`,
//! `/fclib_local/{spacedim, W, vectors/{q, mu}}` when `3 nc` is at most the local limit,
//! `/solution/{v, u, r}`, `/guesses/{number_of_guesses, 1, 2, ...}`. Matrices are CSparse groups
//! `nzmax, m, n, nz, p, i, x` (written compressed-column, `nz = -1`; read in triplet `nz >= 0`,
//! CSC `-1` and CSR `-2` forms), integers as 32-bit. One extension: `/fclib_global/M/block_sizes`
//! (sizes of the diagonal blocks of `M`, ignored by other readers); without it the importer uses
//! 6-DOF blocks when `M`'s sparsity allows, else the finest block-diagonal split.
//!
//! HDF5 I/O is pure Rust (`hdf5-pure`): no system library.

/// The HDF5 crate used (pure Rust), for callers that build or inspect files themselves.
pub use hdf5_pure;

use harness::linear::LinearProblem;
use harness::problem::StepProblem;
use hdf5_pure::{File, FileBuilder};
use kernels::BlockDiagonal;
use nalgebra::DMatrix;
use std::path::Path;

/// Default limit on `3 nc` for writing the local form (`W` is dense-ish: `(3 nc)^2` entries).
pub const LOCAL_LIMIT: usize = 3000;

/// A bad or unreadable FCLIB file: which file, which field, what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}: {field}: {why}")]
pub struct FclibError {
    /// The file.
    pub file: String,
    /// The HDF5 path of the field (e.g. `/fclib_global/vectors/mu`).
    pub field: String,
    /// What is wrong.
    pub why: String,
}

/// A sparse matrix in compressed-column form (rows sorted within a column, no duplicates).
#[derive(Debug, Clone, PartialEq)]
pub struct Csc {
    /// Rows.
    pub m: usize,
    /// Columns.
    pub n: usize,
    /// Column pointers (`n + 1`).
    pub p: Vec<usize>,
    /// Row indices.
    pub i: Vec<usize>,
    /// Values.
    pub x: Vec<f64>,
}

impl Csc {
    /// From `(row, col, value)` triplets; duplicates are summed, explicit zeros kept.
    pub fn from_triplets(m: usize, n: usize, t: &[(usize, usize, f64)]) -> Csc {
        let mut t = t.to_vec();
        t.sort_by_key(|a| (a.1, a.0));
        let mut p = vec![0usize; n + 1];
        let (mut i, mut x): (Vec<usize>, Vec<f64>) = (vec![], vec![]);
        let mut last: Option<(usize, usize)> = None;
        for (r, c, v) in t {
            if last == Some((r, c)) {
                *x.last_mut().expect("a previous entry") += v;
                continue;
            }
            last = Some((r, c));
            i.push(r);
            x.push(v);
            p[c + 1] += 1;
        }
        for c in 0..n {
            p[c + 1] += p[c];
        }
        Csc { m, n, p, i, x }
    }

    /// `(row, col, value)` triplets in column order.
    pub fn triplets(&self) -> Vec<(usize, usize, f64)> {
        (0..self.n).flat_map(|c| (self.p[c]..self.p[c + 1]).map(move |k| (self.i[k], c, self.x[k]))).collect()
    }

    /// `y = A x`.
    pub fn mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.m];
        for (r, c, v) in self.triplets() {
            y[r] += v * x[c];
        }
        y
    }

    /// `y = A^T x`.
    pub fn tr_mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.n];
        for (r, c, v) in self.triplets() {
            y[c] += v * x[r];
        }
        y
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
    /// Descriptions.
    pub info: Info,
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
    /// The global problem.
    pub global: GlobalProblem,
    /// The local problem, when written.
    pub local: Option<LocalProblem>,
    /// The stored solution.
    pub solution: Option<Solution>,
    /// Stored initial guesses.
    pub guesses: Vec<Solution>,
}

/// The FCLIB problem of one step (rigid reference law), with the local form when `3 nc <=
/// local_limit`. Fails on a step without contacts or with bilateral rows (FCLIB's `G` is not
/// exported yet).
pub fn from_step(p: &StepProblem<'_>, local_limit: usize, info: Info) -> Result<FclibProblem, String> {
    let (nv, nc) = (p.nv(), p.nc());
    if nc == 0 {
        return Err("the step has no contacts: nothing to export".into());
    }
    if p.nb() > 0 {
        return Err(format!("the step has {} bilateral rows; exporting FCLIB's G is not supported", p.nb()));
    }
    let m = Csc::from_triplets(nv, nv, &p.mass.triplets());
    let h_t: Vec<(usize, usize, f64)> = p.contacts.jacobian_triplets().into_iter().map(|(r, c, x)| (c, r, x)).collect();
    let h = Csc::from_triplets(nv, 3 * nc, &h_t);
    let f = p.mass.mul(&p.free_velocity());
    let w: Vec<f64> = (0..nc).flat_map(|i| p.bias(i)).collect();
    let mu: Vec<f64> = p.contacts.contacts.iter().map(|c| c.mu).collect();
    let block_sizes = p.mass.blocks().iter().map(|b| b.nrows()).collect();
    let global = GlobalProblem { m, block_sizes, h, f, w, mu, info };
    let local = (3 * nc <= local_limit).then(|| local_form(&global, &p.mass));
    Ok(FclibProblem { global, local, solution: None, guesses: vec![] })
}

/// `W = H^T M^-1 H`, `q = H^T M^-1 f + w` with a factored `M`.
fn local_form(g: &GlobalProblem, mass: &BlockDiagonal) -> LocalProblem {
    let n = g.h.n;
    let mut t = vec![];
    for c in 0..n {
        let mut col = vec![0.0; g.h.m];
        for k in g.h.p[c]..g.h.p[c + 1] {
            col[g.h.i[k]] = g.h.x[k];
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
        self.m.n
    }
    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.mu.len()
    }

    /// The block-diagonal mass matrix (unfactored); errors name `M`.
    pub fn mass(&self) -> Result<BlockDiagonal, String> {
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
                return Err(format!("M: entry ({r}, {c}) couples diagonal blocks {kr} and {kc}"));
            }
            blocks[kr][(jr, jc)] = x;
        }
        for (k, b) in blocks.iter().enumerate() {
            let scale = b.amax().max(f64::MIN_POSITIVE);
            if (b - b.transpose()).amax() > 1e-12 * scale {
                return Err(format!("M: diagonal block {k} is not symmetric"));
            }
        }
        Ok(BlockDiagonal::new(blocks))
    }

    /// The problem as a [`LinearProblem`] (see `harness::linear` for the mapping and limits).
    /// Errors name the field.
    pub fn to_linear(&self) -> Result<LinearProblem, String> {
        let nc = self.nc();
        let mut w_n = Vec::with_capacity(nc);
        for i in 0..nc {
            let wi = &self.w[3 * i..3 * i + 3];
            if wi[1] != 0.0 || wi[2] != 0.0 {
                return Err(format!(
                    "w: contact {i} has a tangential bias ({}, {}); signorini's step problem has a normal bias only",
                    wi[1], wi[2]
                ));
            }
            w_n.push(wi[0]);
        }
        let j: Vec<(usize, usize, f64)> = self.h.triplets().into_iter().map(|(r, c, x)| (c, r, x)).collect();
        LinearProblem::new(self.mass()?, &j, self.f.clone(), &w_n, &self.mu)
    }

    /// `q = H^T M^-1 f + w`, the constant term of the local problem.
    pub fn q(&self) -> Result<Vec<f64>, String> {
        let mut mass = self.mass()?;
        mass.factor().map_err(|e| format!("M: {e}"))?;
        let mut vstar = self.f.clone();
        mass.solve_in_place(&mut vstar);
        Ok(self.h.tr_mul(&vstar).iter().zip(&self.w).map(|(a, b)| a + b).collect())
    }

    /// `v = M^-1 (f + H r)`, the velocity that balances impulses `r`.
    pub fn velocity_of(&self, r: &[f64]) -> Result<Vec<f64>, String> {
        let mut mass = self.mass()?;
        mass.factor().map_err(|e| format!("M: {e}"))?;
        let mut v: Vec<f64> = self.h.mul(r).iter().zip(&self.f).map(|(a, b)| a + b).collect();
        mass.solve_in_place(&mut v);
        Ok(v)
    }

    /// The Siconos natural-map error of `(v, r)`: `||F||_2 / ||q||_2` (absolute when `||q||_2 <=
    /// f64::EPSILON`), `F_i = r_i - P_K(r_i - u_i - mu_i ||u_T,i|| e_n)`, `u = H^T v + w`.
    pub fn natmap_error(&self, v: &[f64], r: &[f64]) -> Result<f64, String> {
        let u: Vec<f64> = self.h.tr_mul(v).iter().zip(&self.w).map(|(a, b)| a + b).collect();
        let mut s = 0.0;
        for i in 0..self.nc() {
            let (ui, ri) = (&u[3 * i..3 * i + 3], &r[3 * i..3 * i + 3]);
            let mu = self.mu[i];
            let ut = (ui[1] * ui[1] + ui[2] * ui[2]).sqrt();
            let x = [ri[0] - ui[0] - mu * ut, ri[1] - ui[1], ri[2] - ui[2]];
            let pk = kernels::cone::project(x, mu);
            s += (0..3).map(|k| (ri[k] - pk[k]).powi(2)).sum::<f64>();
        }
        let qn = self.q()?.iter().map(|x| x * x).sum::<f64>().sqrt();
        Ok(if qn <= f64::EPSILON { s.sqrt() } else { s.sqrt() / qn })
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

// ------------------------------------------------------------------------------------------------
// Writing

fn hdf5_err(path: &Path, field: &str, e: impl std::fmt::Display) -> FclibError {
    FclibError { file: path.display().to_string(), field: field.into(), why: e.to_string() }
}

fn i32s(path: &Path, field: &str, x: &[usize]) -> Result<Vec<i32>, FclibError> {
    x.iter()
        .map(|&v| {
            i32::try_from(v).map_err(|_| hdf5_err(path, field, format!("{v} does not fit FCLIB's 32-bit integers")))
        })
        .collect()
}

fn put_matrix(
    path: &Path,
    parent: &mut hdf5_pure::GroupBuilder,
    name: &str,
    a: &Csc,
    blocks: Option<&[usize]>,
) -> Result<(), FclibError> {
    let field = |s: &str| format!("{name}/{s}");
    let mut g = parent.create_group(name);
    let nnz = a.x.len();
    g.create_dataset("nzmax").with_i32_data(&i32s(path, &field("nzmax"), &[nnz])?);
    g.create_dataset("m").with_i32_data(&i32s(path, &field("m"), &[a.m])?);
    g.create_dataset("n").with_i32_data(&i32s(path, &field("n"), &[a.n])?);
    g.create_dataset("nz").with_i32_data(&[-1]);
    g.create_dataset("p").with_i32_data(&i32s(path, &field("p"), &a.p)?);
    g.create_dataset("i").with_i32_data(&i32s(path, &field("i"), &a.i)?);
    g.create_dataset("x").with_f64_data(&a.x);
    if let Some(b) = blocks {
        g.create_dataset("block_sizes").with_i32_data(&i32s(path, &field("block_sizes"), b)?);
    }
    parent.add_group(g.finish());
    Ok(())
}

fn put_solution(g: &mut hdf5_pure::GroupBuilder, s: &Solution) {
    for (name, x) in [("v", &s.v), ("u", &s.u), ("r", &s.r)] {
        if !x.is_empty() {
            g.create_dataset(name).with_f64_data(x);
        }
    }
}

/// Writes `prob` to `path` (atomically: temporary file + rename).
pub fn write(path: &Path, prob: &FclibProblem) -> Result<(), FclibError> {
    let g = &prob.global;
    let mut fb = FileBuilder::new();
    let mut gg = fb.create_group("fclib_global");
    gg.create_dataset("spacedim").with_i32_data(&[3]);
    put_matrix(path, &mut gg, "M", &g.m, Some(&g.block_sizes))?;
    put_matrix(path, &mut gg, "H", &g.h, None)?;
    let mut vec = gg.create_group("vectors");
    vec.create_dataset("f").with_f64_data(&g.f);
    vec.create_dataset("w").with_f64_data(&g.w);
    vec.create_dataset("mu").with_f64_data(&g.mu);
    gg.add_group(vec.finish());
    let mut info = gg.create_group("info");
    for (name, s) in [("title", &g.info.title), ("description", &g.info.description), ("math_info", &g.info.math_info)]
    {
        if !s.is_empty() {
            info.create_dataset(name).with_ascii_strings(&[s.as_str()]).map_err(|e| hdf5_err(path, name, e))?;
        }
    }
    gg.add_group(info.finish());
    fb.add_group(gg.finish());
    if let Some(l) = &prob.local {
        let mut lg = fb.create_group("fclib_local");
        lg.create_dataset("spacedim").with_i32_data(&[3]);
        put_matrix(path, &mut lg, "W", &l.w, None)?;
        let mut vec = lg.create_group("vectors");
        vec.create_dataset("q").with_f64_data(&l.q);
        vec.create_dataset("mu").with_f64_data(&l.mu);
        lg.add_group(vec.finish());
        fb.add_group(lg.finish());
    }
    if let Some(s) = &prob.solution {
        let mut sg = fb.create_group("solution");
        put_solution(&mut sg, s);
        fb.add_group(sg.finish());
    }
    if !prob.guesses.is_empty() {
        let mut gs = fb.create_group("guesses");
        gs.create_dataset("number_of_guesses").with_i32_data(&i32s(path, "number_of_guesses", &[prob.guesses.len()])?);
        for (k, s) in prob.guesses.iter().enumerate() {
            let mut one = gs.create_group(&(k + 1).to_string());
            put_solution(&mut one, s);
            gs.add_group(one.finish());
        }
        fb.add_group(gs.finish());
    }
    let bytes = fb.finish().map_err(|e| hdf5_err(path, "/", e))?;
    harness::record::write_atomic(path, &bytes).map_err(|e| hdf5_err(path, "/", e))
}

// ------------------------------------------------------------------------------------------------
// Reading

struct Reader<'a> {
    path: &'a Path,
    file: File,
}

impl Reader<'_> {
    /// An error at `field` (an HDF5 path, shown absolute).
    fn err(&self, field: &str, why: impl std::fmt::Display) -> FclibError {
        if field.starts_with('/') {
            hdf5_err(self.path, field, why)
        } else {
            hdf5_err(self.path, &format!("/{field}"), why)
        }
    }
    fn exists(&self, field: &str) -> bool {
        self.file.dataset(field).is_ok() || self.file.group(field).is_ok()
    }
    fn f64s(&self, field: &str) -> Result<Vec<f64>, FclibError> {
        let ds = self.file.dataset(field).map_err(|e| self.err(field, format!("missing or unreadable ({e})")))?;
        let x = ds.read_f64().map_err(|e| self.err(field, format!("not readable as f64 ({e})")))?;
        if let Some((k, v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(self.err(field, format!("entry {k} is not finite ({v})")));
        }
        Ok(x)
    }
    fn ints(&self, field: &str) -> Result<Vec<i64>, FclibError> {
        let ds = self.file.dataset(field).map_err(|e| self.err(field, format!("missing or unreadable ({e})")))?;
        ds.read_i64().map_err(|e| self.err(field, format!("not readable as integers ({e})")))
    }
    fn int(&self, field: &str) -> Result<i64, FclibError> {
        let v = self.ints(field)?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(self.err(field, format!("expected one integer, found {}", v.len()))),
        }
    }
    fn string(&self, field: &str) -> String {
        self.file
            .dataset(field)
            .and_then(|d| d.read_string())
            .ok()
            .and_then(|v| v.into_iter().next())
            .unwrap_or_default()
    }
    fn index(&self, field: &str, x: i64, bound: usize) -> Result<usize, FclibError> {
        usize::try_from(x)
            .ok()
            .filter(|&v| v < bound)
            .ok_or_else(|| self.err(field, format!("index {x} outside 0..{bound}")))
    }

    /// A CSparse matrix group, as CSC.
    fn matrix(&self, g: &str) -> Result<Csc, FclibError> {
        let f = |s: &str| format!("{g}/{s}");
        let dim = |s: &str| -> Result<usize, FclibError> {
            let v = self.int(&f(s))?;
            usize::try_from(v).map_err(|_| self.err(&f(s), format!("negative dimension {v}")))
        };
        let (m, n, nzmax) = (dim("m")?, dim("n")?, dim("nzmax")?);
        let nz = self.int(&f("nz"))?;
        let (p, i, x) = (self.ints(&f("p"))?, self.ints(&f("i"))?, self.f64s(&f("x"))?);
        let mut t = vec![];
        match nz {
            nz if nz >= 0 => {
                let nz = nz as usize;
                for (name, len) in [("p", p.len()), ("i", i.len()), ("x", x.len())] {
                    if len < nz {
                        return Err(self.err(&f(name), format!("{len} entries for nz = {nz} triplets")));
                    }
                }
                for k in 0..nz {
                    t.push((self.index(&f("i"), i[k], m)?, self.index(&f("p"), p[k], n)?, x[k]));
                }
            }
            -1 | -2 => {
                let (outer, inner) = if nz == -1 { (n, m) } else { (m, n) };
                if p.len() != outer + 1 {
                    return Err(self.err(&f("p"), format!("{} pointers, expected {}", p.len(), outer + 1)));
                }
                let end = p[outer];
                if end < 0 || end as usize > nzmax.min(i.len()).min(x.len()) || p.windows(2).any(|w| w[1] < w[0]) {
                    return Err(self.err(
                        &f("p"),
                        format!("pointers not non-decreasing within nzmax = {nzmax} (i: {}, x: {})", i.len(), x.len()),
                    ));
                }
                for o in 0..outer {
                    for k in p[o] as usize..p[o + 1] as usize {
                        let j = self.index(&f("i"), i[k], inner)?;
                        t.push(if nz == -1 { (j, o, x[k]) } else { (o, j, x[k]) });
                    }
                }
            }
            other => return Err(self.err(&f("nz"), format!("unknown storage {other} (>= 0 triplet, -1 CSC, -2 CSR)"))),
        }
        Ok(Csc::from_triplets(m, n, &t))
    }

    fn solution(&self, g: &str) -> Result<Solution, FclibError> {
        let opt = |s: &str| -> Result<Vec<f64>, FclibError> {
            let f = format!("{g}/{s}");
            if self.file.dataset(&f).is_ok() {
                self.f64s(&f)
            } else {
                Ok(vec![])
            }
        };
        Ok(Solution { v: opt("v")?, u: opt("u")?, r: opt("r")? })
    }
}

/// Finest contiguous block-diagonal split of `m` (square), or `None` if a nonzero lies below the
/// diagonal outside any contiguous block.
fn finest_blocks(m: &Csc) -> Vec<usize> {
    let n = m.n;
    let mut reach = vec![0usize; n];
    for (r, c, _) in m.triplets() {
        let (lo, hi) = (r.min(c), r.max(c));
        reach[lo] = reach[lo].max(hi);
    }
    let (mut sizes, mut start, mut end) = (vec![], 0usize, 0usize);
    for (j, &rj) in reach.iter().enumerate() {
        end = end.max(j).max(rj);
        if j == end {
            sizes.push(end + 1 - start);
            start = end + 1;
        }
    }
    sizes
}

fn check_blocks(m: &Csc, sizes: &[usize]) -> bool {
    let mut owner = Vec::with_capacity(m.n);
    for (k, &s) in sizes.iter().enumerate() {
        owner.extend(std::iter::repeat_n(k, s));
    }
    owner.len() == m.n && m.triplets().iter().all(|&(r, c, _)| owner[r] == owner[c])
}

/// Reads an FCLIB file with a global problem. Every error names the file and the field.
pub fn read(path: &Path) -> Result<FclibProblem, FclibError> {
    let bytes = std::fs::read(path).map_err(|e| hdf5_err(path, "/", e))?;
    let file = File::from_bytes(bytes).map_err(|e| hdf5_err(path, "/", format!("not a readable HDF5 file ({e})")))?;
    let r = Reader { path, file };
    if !r.exists("fclib_global") {
        let why = if r.exists("fclib_local") {
            "missing: this is a local-only FCLIB file; signorini's solvers need the global form (M, H, f, w, mu)"
        } else {
            "missing: not an FCLIB file (neither /fclib_global nor /fclib_local)"
        };
        return Err(r.err("/fclib_global", why));
    }
    let spacedim = r.int("fclib_global/spacedim")?;
    if spacedim != 3 {
        return Err(r.err("/fclib_global/spacedim", format!("{spacedim}: only 3D problems are supported")));
    }
    if r.exists("fclib_global/G") {
        return Err(r.err("/fclib_global/G", "bilateral constraints (G, b) are not imported yet"));
    }
    let m = r.matrix("fclib_global/M")?;
    let h = r.matrix("fclib_global/H")?;
    let (f, w, mu) =
        (r.f64s("fclib_global/vectors/f")?, r.f64s("fclib_global/vectors/w")?, r.f64s("fclib_global/vectors/mu")?);
    let nv = m.n;
    if m.m != nv {
        return Err(r.err("/fclib_global/M", format!("not square: {} x {nv}", m.m)));
    }
    if h.m != nv {
        return Err(r.err("/fclib_global/H/m", format!("H has {} rows, M has {nv}", h.m)));
    }
    if h.n % 3 != 0 {
        return Err(r.err("/fclib_global/H/n", format!("{} columns: not a multiple of 3", h.n)));
    }
    let nc = h.n / 3;
    if f.len() != nv {
        return Err(r.err("/fclib_global/vectors/f", format!("length {} != {nv} (size of M)", f.len())));
    }
    if w.len() != 3 * nc {
        return Err(r.err("/fclib_global/vectors/w", format!("length {} != {} (columns of H)", w.len(), 3 * nc)));
    }
    if mu.len() != nc {
        return Err(r.err("/fclib_global/vectors/mu", format!("length {} != {nc} contacts", mu.len())));
    }
    if let Some((i, x)) = mu.iter().enumerate().find(|(_, x)| **x < 0.0) {
        return Err(r.err("/fclib_global/vectors/mu", format!("contact {i} has mu = {x} < 0")));
    }
    let block_sizes = if r.file.dataset("fclib_global/M/block_sizes").is_ok() {
        let b = r.ints("fclib_global/M/block_sizes")?;
        let b: Vec<usize> = b.iter().map(|&x| usize::try_from(x).unwrap_or(0)).collect();
        if b.contains(&0) || !check_blocks(&m, &b) {
            return Err(r.err("/fclib_global/M/block_sizes", "block sizes do not match M's size or sparsity"));
        }
        b
    } else if nv % 6 == 0 && check_blocks(&m, &vec![6; nv / 6]) {
        vec![6; nv / 6]
    } else {
        finest_blocks(&m)
    };
    let info = Info {
        title: r.string("fclib_global/info/title"),
        description: r.string("fclib_global/info/description"),
        math_info: r.string("fclib_global/info/math_info"),
    };
    let global = GlobalProblem { m, block_sizes, h, f, w, mu, info };
    let local = if r.exists("fclib_local") {
        let w = r.matrix("fclib_local/W")?;
        let q = r.f64s("fclib_local/vectors/q")?;
        let mu = r.f64s("fclib_local/vectors/mu")?;
        if w.m != 3 * nc || w.n != 3 * nc || q.len() != 3 * nc || mu.len() != nc {
            return Err(r.err("/fclib_local", format!("W, q or mu do not match the global problem's {nc} contacts")));
        }
        Some(LocalProblem { w, q, mu })
    } else {
        None
    };
    let check = |s: Solution, g: &str| -> Result<Solution, FclibError> {
        for (name, x, n) in [("v", &s.v, nv), ("u", &s.u, 3 * nc), ("r", &s.r, 3 * nc)] {
            if !x.is_empty() && x.len() != n {
                return Err(r.err(&format!("/{g}/{name}"), format!("length {} != {n}", x.len())));
            }
        }
        Ok(s)
    };
    let solution = if r.exists("solution") { Some(check(r.solution("solution")?, "solution")?) } else { None };
    let mut guesses = vec![];
    if r.exists("guesses") {
        let n = r.int("guesses/number_of_guesses")?;
        for k in 1..=n.max(0) {
            let g = format!("guesses/{k}");
            guesses.push(check(r.solution(&g)?, &g)?);
        }
    }
    Ok(FclibProblem { global, local, solution, guesses })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csc_sums_duplicates_and_round_trips() {
        let a = Csc::from_triplets(3, 2, &[(2, 1, 1.0), (0, 0, 2.0), (2, 1, 0.5), (1, 0, -1.0)]);
        assert_eq!(a.p, vec![0, 2, 3]);
        assert_eq!(a.triplets(), vec![(0, 0, 2.0), (1, 0, -1.0), (2, 1, 1.5)]);
        assert_eq!(a.mul(&[1.0, 2.0]), vec![2.0, -1.0, 3.0]);
    }

    #[test]
    fn blocks_from_sparsity() {
        let m =
            Csc::from_triplets(4, 4, &[(0, 0, 1.0), (1, 1, 1.0), (2, 2, 1.0), (3, 3, 1.0), (1, 2, 0.1), (2, 1, 0.1)]);
        assert_eq!(finest_blocks(&m), vec![1, 2, 1]);
        assert!(check_blocks(&m, &[1, 3]) && !check_blocks(&m, &[2, 2]));
    }

    #[test]
    fn normal_last_permutation() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(to_normal_last(&x), vec![2.0, 3.0, 1.0, 5.0, 6.0, 4.0]);
        assert_eq!(from_normal_last(&to_normal_last(&x)), x.to_vec());
    }
}

// ------------------------------------------------------------------------------------------------
// Running

/// What [`solve`] measured.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveReport {
    /// Our solution: `v+` and impulses, normal first.
    pub v: Vec<f64>,
    /// Impulses `r` (`3 nc`).
    pub r: Vec<f64>,
    /// Solver status.
    pub status: harness::SolveStatus,
    /// Solver iterations.
    pub iterations: usize,
    /// Wall time of `Solver::step` (s).
    pub wall_s: f64,
    /// Natural-map error of our solution ([`GlobalProblem::natmap_error`]).
    pub error: f64,
    /// Natural-map error of the stored solution, when there is one with `r`.
    pub stored_error: Option<f64>,
    /// Natural-map errors of the stored guesses that have `r`.
    pub guess_errors: Vec<f64>,
}

/// Solves `prob` with `solver` through the [`LinearProblem`] view and compares with the stored
/// solution and guesses (velocities of a stored `r` without `v` are `M^-1 (f + H r)`).
pub fn solve(prob: &FclibProblem, solver: &mut dyn harness::Solver) -> Result<SolveReport, String> {
    let g = &prob.global;
    let lin = g.to_linear()?;
    let p = lin.step_problem();
    let mut log = harness::IterationLog::new();
    let t = std::time::Instant::now();
    let sol = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.step(&p, &mut log)))
        .map_err(|e| format!("solver panicked: {}", harness::stepper::panic_message(e.as_ref())))?
        .map_err(|e| e.to_string())?;
    let wall_s = t.elapsed().as_secs_f64();
    let r: Vec<f64> = sol.impulses.iter().flatten().copied().collect();
    if sol.v.len() != g.nv() || r.len() != 3 * g.nc() {
        return Err(format!("solver returned {} velocities and {} impulses", sol.v.len(), r.len()));
    }
    let error = g.natmap_error(&sol.v, &r)?;
    let err_of = |s: &Solution| -> Result<Option<f64>, String> {
        if s.r.is_empty() {
            return Ok(None);
        }
        let v = if s.v.is_empty() { g.velocity_of(&s.r)? } else { s.v.clone() };
        g.natmap_error(&v, &s.r).map(Some)
    };
    let stored_error = match &prob.solution {
        Some(s) => err_of(s)?,
        None => None,
    };
    let mut guess_errors = vec![];
    for s in &prob.guesses {
        if let Some(e) = err_of(s)? {
            guess_errors.push(e);
        }
    }
    Ok(SolveReport {
        v: sol.v,
        r,
        status: sol.status,
        iterations: sol.iterations,
        wall_s,
        error,
        stored_error,
        guess_errors,
    })
}

/// The solution of a step as FCLIB `(v, u, r)`.
pub fn solution_of(p: &StepProblem<'_>, sol: &harness::StepSolution) -> Solution {
    let u = p.contact_velocities(&sol.v).into_iter().flatten().collect();
    Solution { v: sol.v.clone(), u, r: sol.impulses.iter().flatten().copied().collect() }
}

/// Runs `scenario` with `solver` for `step` steps, then returns the problem of step `step`
/// (0-based) as FCLIB, with `solver`'s answer to it as the stored solution.
pub fn export_step(
    scenario: &harness::Scenario,
    solver: &mut dyn harness::Solver,
    step: usize,
    local_limit: usize,
    info: Info,
) -> Result<FclibProblem, String> {
    if step >= scenario.steps {
        return Err(format!("--step {step}: the run has {} steps (0..{})", scenario.steps, scenario.steps));
    }
    let mut before = scenario.clone();
    before.steps = step;
    let out = harness::stepper::simulate(&before, solver, harness::stepper::RunOptions::default(), &mut || {});
    if let Some(f) = out.failure {
        return Err(format!("the run failed before step {step}: {f}"));
    }
    let world = out.final_world;
    let contacts = harness::geometry::detect(&world, scenario.margin);
    let p =
        StepProblem::new(&world, &contacts, scenario.dt, out.final_warm_start.as_ref()).map_err(|e| e.to_string())?;
    let mut prob = from_step(&p, local_limit, info)?;
    let mut log = harness::IterationLog::new();
    let sol = solver.step(&p, &mut log).map_err(|e| format!("step {step}: {e}"))?;
    prob.solution = Some(solution_of(&p, &sol));
    Ok(prob)
}
