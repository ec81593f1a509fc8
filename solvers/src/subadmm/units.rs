//! One solve unit of SubADMM's v-step (Eq. 34): a subsystem (split `body` or `subsystem`) or the
//! whole system (split `none`). It holds the unit's slack-block elements `J_ig` (on local
//! indices), factors `K = M_u + β Σ J_igᵀ J_ig` once per β and back-substitutes every iteration;
//! the unit's joint rows are solved exactly by the Schur complement in `joints.rs`.
//!
//! `K`'s structure is what Table III measures: with the body split every slack block lies on one
//! body, so `K` is block diagonal with one 6×6 augmented inertia per body (Eq. 41: `H_b = M_b +
//! β Σ J_{i,b}ᵀ J_{i,b}`; the analogue of the paper's tree-sparse factorisation); with the
//! subsystem split a block can couple the bodies of a subsystem and `K` is one dense matrix; with
//! no split `K` is the global sparse matrix, whose symbolic analysis is kept across steps while
//! its pattern does not change.

use super::joints::{dot, Joints};
use super::settings::Split;
use kernels::assembly::SymmetricPattern;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use kernels::dense_cholesky::{factor_in_place, solve_in_place};

/// A body of a unit: local offset, size, and offset of its `n × n` blocks in the unit's flat
/// mass and block-factor arrays.
#[derive(Debug, Clone, Copy)]
pub(super) struct Body {
    pub off: usize,
    pub n: usize,
    pub at: usize,
}

/// A slack block `z_ig` seen from its unit: the element `J_ig` (`dim × len`, row-major at
/// `coef`, columns `local[start..start + len]`) and where its `z` and `λ` live.
#[derive(Debug, Clone, Copy)]
pub(super) struct Element {
    /// Constraint index and block index within the constraint.
    pub con: usize,
    pub block: usize,
    dim: usize,
    start: usize,
    len: usize,
    coef: usize,
    /// The body holding the first column (all columns with the body split).
    body: usize,
}

/// How `K` is factored.
pub(super) enum KFactor {
    /// One dense factor per body, laid out like `Unit::mass` (split `body`).
    Blocks(Vec<f64>),
    /// One dense `n × n` factor (split `subsystem`).
    Dense(Vec<f64>),
    /// Global sparse factor (split `none`).
    Sparse(Box<SparseK>),
}

/// The sparse `K` of split `none`: pattern (bodies' mass blocks then slack elements), its
/// factor, and value/element buffers reused by every refactorisation.
pub(super) struct SparseK {
    pattern: SymmetricPattern,
    chol: SparseCholesky,
    values: Vec<f64>,
    local: Vec<f64>,
}

impl KFactor {
    /// The storage `split` asks for, unfactored: empty dense storage (sized at the first
    /// factorisation), or for split `none` the previous step's sparse factor `reuse` (its symbolic
    /// analysis is kept by [`Unit::prepare_sparse`] if the pattern still fits).
    pub fn for_split(split: Split, reuse: Option<KFactor>) -> Option<Self> {
        match split {
            Split::Body => Some(KFactor::Blocks(vec![])),
            Split::Subsystem => Some(KFactor::Dense(vec![])),
            Split::None => reuse,
        }
    }

    /// `x ← H_b⁻¹ x` for one body of a block-diagonal `K`.
    pub fn solve_body(&self, b: &Body, x: &mut [f64]) {
        let KFactor::Blocks(l) = self else { panic!("solve_body on a non-block factor") };
        solve_in_place(b.n, &l[b.at..b.at + b.n * b.n], x);
    }

    /// `x ← K⁻¹ x` over the whole unit.
    pub fn solve(&mut self, bodies: &[Body], x: &mut [f64]) {
        match self {
            KFactor::Blocks(l) => {
                for b in bodies {
                    solve_in_place(b.n, &l[b.at..b.at + b.n * b.n], &mut x[b.off..b.off + b.n]);
                }
            }
            KFactor::Dense(l) => solve_in_place(x.len(), l, x),
            KFactor::Sparse(s) => s.chol.solve_in_place(x),
        }
    }
}

/// One solve unit.
pub(super) struct Unit {
    /// Global velocity indices, sorted.
    pub dofs: Vec<usize>,
    pub bodies: Vec<Body>,
    /// Body mass blocks, row-major, at `Body::at`.
    mass: Vec<f64>,
    /// `b_u = M_u v*_u` and its norm.
    b: Vec<f64>,
    b_norm: f64,
    elements: Vec<Element>,
    local: Vec<usize>,
    coef: Vec<f64>,
    /// Joint rows solved inside the unit (splits `body`, `subsystem`).
    pub joints: Option<Joints>,
    k: Option<KFactor>,
    /// Velocity of the last solve (local).
    pub v: Vec<f64>,
    work: Vec<f64>,
}

impl Unit {
    /// A unit over `dofs` (sorted global indices) with bodies `(local offset, mass block)`, `b_u`
    /// and `K` storage `k`.
    pub fn new(dofs: Vec<usize>, bodies: &[(usize, &nalgebra::DMatrix<f64>)], b: Vec<f64>, k: Option<KFactor>) -> Self {
        let (mut mass, mut list) = (vec![], Vec::with_capacity(bodies.len()));
        for &(off, m) in bodies {
            list.push(Body { off, n: m.nrows(), at: mass.len() });
            mass.extend(m.iter()); // symmetric: column-major = row-major
        }
        let n = dofs.len();
        let b_norm = norm(&b);
        Self {
            dofs,
            bodies: list,
            mass,
            b,
            b_norm,
            elements: vec![],
            local: vec![],
            coef: vec![],
            joints: None,
            k,
            v: vec![0.0; n],
            work: vec![0.0; n],
        }
    }

    /// Local index of global DOF `g`.
    pub fn local(&self, g: usize) -> usize {
        self.dofs.binary_search(&g).expect("dof of this unit")
    }

    /// Adds the element of block `block` of constraint `con`: columns `(global dof, coefficients
    /// of rows 0..dim)`. Returns its index.
    pub fn push_element(&mut self, con: usize, block: usize, dim: usize, cols: &[(usize, [f64; 3])]) -> usize {
        let (start, coef) = (self.local.len(), self.coef.len());
        for &(g, _) in cols {
            self.local.push(self.local(g));
        }
        for r in 0..dim {
            self.coef.extend(cols.iter().map(|c| c.1[r]));
        }
        let first = self.local[start];
        let body = self.bodies.partition_point(|b| b.off + b.n <= first);
        self.elements.push(Element { con, block, dim, start, len: cols.len(), coef, body });
        self.elements.len() - 1
    }

    /// `out = J_ig v` for element `e` with the unit's current `v`.
    pub fn element_velocity(&self, e: usize, out: &mut [f64; 3]) {
        let el = &self.elements[e];
        let cols = &self.local[el.start..el.start + el.len];
        for (r, o) in out.iter_mut().enumerate().take(el.dim) {
            let c = &self.coef[el.coef + r * el.len..el.coef + (r + 1) * el.len];
            *o = c.iter().zip(cols).map(|(a, &l)| a * self.v[l]).sum();
        }
    }

    /// `x += Σ_e J_eᵀ w(e)` over the unit's elements.
    fn add_elements_transpose(&self, x: &mut [f64], w: impl Fn(&Element) -> [f64; 3]) {
        for el in &self.elements {
            let s = w(el);
            let cols = &self.local[el.start..el.start + el.len];
            for (r, &sr) in s.iter().enumerate().take(el.dim) {
                let c = &self.coef[el.coef + r * el.len..el.coef + (r + 1) * el.len];
                for (a, &l) in c.iter().zip(cols) {
                    x[l] += a * sr;
                }
            }
        }
    }

    /// Sets the velocity (local) from a global vector.
    pub fn set_velocity(&mut self, v: &[f64]) {
        for (x, &g) in self.v.iter_mut().zip(&self.dofs) {
            *x = v[g];
        }
    }

    /// Factors `K = M_u + β Σ J_eᵀ J_e` (Eqs. 40–41 in maximal coordinates), then the joint
    /// Schur complement.
    pub fn factor(&mut self, beta: f64) -> Result<(), String> {
        let n = self.dofs.len();
        let mut k = self.k.take().expect("K storage");
        match &mut k {
            KFactor::Blocks(l) => {
                l.clone_from(&self.mass);
                for el in &self.elements {
                    let b = self.bodies[el.body];
                    self.add_gram(el, beta, &mut l[b.at..b.at + b.n * b.n], b.n, b.off);
                }
                for b in &self.bodies {
                    factor_in_place(b.n, &mut l[b.at..b.at + b.n * b.n])
                        .map_err(|e| format!("body block of K: {e}"))?;
                }
            }
            KFactor::Dense(l) => {
                l.clear();
                l.resize(n * n, 0.0);
                for b in &self.bodies {
                    for r in 0..b.n {
                        let row = (b.off + r) * n + b.off;
                        l[row..row + b.n].copy_from_slice(&self.mass[b.at + r * b.n..b.at + (r + 1) * b.n]);
                    }
                }
                for el in &self.elements {
                    self.add_gram(el, beta, l, n, 0);
                }
                factor_in_place(n, l).map_err(|e| format!("subsystem K: {e}"))?;
            }
            KFactor::Sparse(s) => self.factor_sparse(s, beta)?,
        }
        if let Some(j) = self.joints.as_mut() {
            j.factor(&mut k, &self.bodies, n)?;
        }
        self.k = Some(k);
        Ok(())
    }

    /// `m += β J_eᵀ J_e` into a row-major matrix of stride `stride` whose first row/column is the
    /// unit's local index `shift`.
    fn add_gram(&self, el: &Element, beta: f64, m: &mut [f64], stride: usize, shift: usize) {
        let cols = &self.local[el.start..el.start + el.len];
        for r in 0..el.dim {
            let c = &self.coef[el.coef + r * el.len..el.coef + (r + 1) * el.len];
            for (&ca, &la) in c.iter().zip(cols) {
                let row = &mut m[(la - shift) * stride..(la - shift + 1) * stride];
                for (&cb, &lb) in c.iter().zip(cols) {
                    row[lb - shift] += beta * ca * cb;
                }
            }
        }
    }

    /// The global sparse `K` (split `none`): reuses the symbolic analysis while the pattern stays.
    fn factor_sparse(&self, s: &mut SparseK, beta: f64) -> Result<(), String> {
        let nb = self.bodies.len();
        s.values.iter_mut().for_each(|x| *x = 0.0);
        for (k, b) in self.bodies.iter().enumerate() {
            s.pattern.add_element(k, &self.mass[b.at..b.at + b.n * b.n], &mut s.values);
        }
        for (k, el) in self.elements.iter().enumerate() {
            let m = el.len;
            s.local.clear();
            s.local.resize(m * m, 0.0);
            for r in 0..el.dim {
                let c = &self.coef[el.coef + r * m..el.coef + (r + 1) * m];
                for (a, &ca) in c.iter().enumerate() {
                    for (b, &cb) in c.iter().enumerate() {
                        s.local[a * m + b] += beta * ca * cb;
                    }
                }
            }
            s.pattern.add_element(nb + k, &s.local, &mut s.values);
        }
        s.chol.factorize(&s.values).map_err(|e| e.to_string())
    }

    /// Prepares the sparse `K` of split `none` for this step's elements: a new value scatter
    /// map, and a new symbolic analysis only if the pattern differs from the previous step's.
    pub fn prepare_sparse(&mut self) -> Result<(), String> {
        let n = self.dofs.len();
        let mut elems: Vec<Vec<usize>> = self.bodies.iter().map(|b| (b.off..b.off + b.n).collect()).collect();
        elems.extend(self.elements.iter().map(|el| self.local[el.start..el.start + el.len].to_vec()));
        let pattern = SymmetricPattern::new(n, &elems);
        let chol = match self.k.take() {
            Some(KFactor::Sparse(s)) if s.chol.has_pattern(&pattern.col_ptr, &pattern.row_idx) => s.chol,
            _ => {
                SparseCholesky::analyze(n, pattern.col_ptr.clone(), pattern.row_idx.clone(), CholeskyParams::default())
                    .map_err(|e| e.to_string())?
            }
        };
        let values = vec![0.0; pattern.nnz()];
        self.k = Some(KFactor::Sparse(Box::new(SparseK { pattern, chol, values, local: vec![] })));
        Ok(())
    }

    /// Gives the `K` storage back (split `none` keeps its symbolic analysis for the next step).
    pub fn take_k(&mut self) -> Option<KFactor> {
        self.k.take()
    }

    /// The v-step (34): `K v = b_u + Σ_e J_eᵀ s(e) + G_uᵀ γ` with the joint rows exact; `s(e)`
    /// is `β z_e + λ_e`.
    pub fn solve(&mut self, s: impl Fn(&Element) -> [f64; 3]) {
        let mut x = std::mem::take(&mut self.v);
        x.copy_from_slice(&self.b);
        self.add_elements_transpose(&mut x, s);
        let k = self.k.as_mut().expect("unit factored");
        k.solve(&self.bodies, &mut x);
        if let Some(j) = self.joints.as_mut() {
            j.correct(&mut x);
        }
        self.v = x;
    }

    /// Dual residual (42) of the unit, `‖M_u v_u − b_u − Σ_e J_eᵀ λ_e − G_uᵀ γ‖`, and its scale
    /// `max(‖b_u‖, ‖M_u v_u‖)`.
    pub fn dual_residual(&mut self, lam: impl Fn(&Element) -> [f64; 3]) -> (f64, f64) {
        let mut r = std::mem::take(&mut self.work);
        for b in &self.bodies {
            let vb = &self.v[b.off..b.off + b.n];
            for (ri, row) in r[b.off..b.off + b.n].iter_mut().zip(self.mass[b.at..b.at + b.n * b.n].chunks_exact(b.n)) {
                *ri = dot(row, vb);
            }
        }
        let mv = norm(&r);
        for (ri, bi) in r.iter_mut().zip(&self.b) {
            *ri -= bi;
        }
        self.add_elements_transpose(&mut r, |e| lam(e).map(|x| -x));
        if let Some(j) = &self.joints {
            j.subtract_transpose(&mut r);
        }
        let nd = norm(&r);
        self.work = r;
        (nd, mv.max(self.b_norm))
    }
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}
