//! One solve unit of SubADMM's v-step (Eq. 34): a subsystem (split `body` or `subsystem`) or the
//! whole system (split `none`), in reduced (joint-space) coordinates `q̇` of its kinematic trees
//! (`tree.rs`): `v = N q̇ + v⁰`. It holds the unit's slack-block elements `J_ig` (on local maximal
//! indices), factors `K_q = Nᵀ(M_u + β Σ J_igᵀ J_ig)N` once per β and back-substitutes every
//! iteration.
//!
//! How `K_q` is formed and factored is what Table III measures:
//! - `body` (SubADMM): every slack block lies on one body, so `M_u + βΣJᵀJ` is block diagonal with
//!   one augmented inertia `H_b` per body (Eq. 41); `K_q` comes from the CRBA with the `H_b` as
//!   body inertias and is factored by the tree `LᵀDL` (`kernels::tree_ldl`, §VI-C);
//! - `subsystem` ("No Body", ref. [34]): a slack block can couple bodies of the subsystem, so the
//!   maximal `K` is one dense matrix and `K_q = NᵀKN` is formed and factored densely;
//! - `none` ("No Sub", Eq. 28): one global sparse `K_q` over every tree's `q̇`, assembled from
//!   per-body and per-element reduced blocks and factored by the sparse Cholesky, whose symbolic
//!   analysis is kept across steps while the pattern does not change.
//!
//! A unit holding an FEM body (an extension, README §11) has the dynamics matrix `A'_u = M_u +
//! δt² K'_u` of the linearised implicit step (`toolkit::implicit`) for `M_u`: its `δt² K'`
//! entries couple the body's nodes, so it is always factored by the sparse path, with the
//! reduced stiffness entries in the pattern (with any split).

use super::settings::Split;
use super::tree::Forest;
use kernels::assembly::SymmetricPattern;
use kernels::cholesky::{CholeskyError, CholeskyParams, SparseCholesky};
use kernels::dense_cholesky::{self, NonPositivePivot};
use kernels::tree_ldl;

/// Why a unit's `K_q` could not be factored ([`Unit::factor`]) or its sparse pattern analysed
/// ([`Unit::prepare_sparse`]); the solver reports it as a [`api::SolveError::Factorization`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactorError {
    /// The tree `LᵀDL` of split `body` (Eq. 40) met a non-positive pivot.
    #[error("tree K_q (Eq. 40): {0}")]
    Tree(NonPositivePivot),
    /// The dense Cholesky of split `subsystem` met a non-positive pivot.
    #[error("subsystem K_q: {0}")]
    Dense(NonPositivePivot),
    /// The sparse Cholesky (split `none`, units with FEM bodies) failed.
    #[error("sparse K_q (Eqs. 28, 40): {0}")]
    Sparse(CholeskyError),
    /// The symbolic analysis of the sparse `K_q` failed.
    #[error(transparent)]
    Analysis(CholeskyError),
}

impl From<FactorError> for api::SolveError {
    fn from(e: FactorError) -> Self {
        api::SolveError::Factorization { what: e.to_string() }
    }
}

/// A body of a unit: local offset, size, and offset of its `n × n` blocks in the unit's flat
/// mass array (and the per-body factor storage of split `body`).
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

/// How `K_q` is formed and factored.
pub(super) enum KFactor {
    /// Split `body`: composite inertias (per body, laid out like `Unit::mass`), `K_q` with its
    /// tree `LᵀDL` in place (`nq × nq`), CRBA work.
    Tree { h: Vec<f64>, kq: Vec<f64>, work: Vec<f64> },
    /// Split `subsystem`: the dense maximal `K`, `K_q` with its dense Cholesky in place, work.
    Dense { k: Vec<f64>, kq: Vec<f64>, e: Vec<f64>, col: Vec<f64> },
    /// Split `none`, or a unit with FEM bodies: the unit's sparse `K_q`.
    Sparse(Box<SparseK>),
}

/// The sparse `K_q` of split `none` or of a unit with FEM bodies: pattern (per-body reduced mass blocks, then per-element
/// reduced blocks, and the reduced `δt² K'` entries of FEM bodies), its factor, the β-independent
/// values of `NᵀA'N` (`A' = M` without FEM bodies), the elements' reduced rows.
pub(super) struct SparseK {
    pattern: SymmetricPattern,
    chol: SparseCholesky,
    values: Vec<f64>,
    a_values: Vec<f64>,
    /// Per element: `J_ig N` (`dim × len`, row-major) on the pattern element's reduced DOFs.
    rows: Vec<Vec<f64>>,
    local: Vec<f64>,
}

impl KFactor {
    /// The storage `split` asks for, unfactored and unsized, or for a `sparse` unit (split
    /// `none`, or a unit with FEM bodies) the previous step's sparse factor `reuse` (its symbolic
    /// analysis is kept by [`Unit::prepare_sparse`] if the pattern still fits).
    pub fn for_unit(split: Split, sparse: bool, reuse: Option<KFactor>) -> Option<Self> {
        match split {
            _ if sparse => reuse,
            Split::Body => Some(KFactor::Tree { h: vec![], kq: vec![], work: vec![0.0; 72] }),
            Split::Subsystem => Some(KFactor::Dense { k: vec![], kq: vec![], e: vec![], col: vec![] }),
            Split::None => reuse,
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
    /// `δt² K'` of the unit's FEM DOFs, `(row, column, value)` in local indices (both triangles;
    /// empty without FEM bodies): `A'_u = M_u + δt² K'`.
    stiff: Vec<(usize, usize, f64)>,
    /// The unit's key (subsystem, or 0 for split `none`): matches its sparse factor across steps.
    pub key: usize,
    /// `b_u = A'_u v*_u` and its norm.
    b: Vec<f64>,
    b_norm: f64,
    elements: Vec<Element>,
    local: Vec<usize>,
    coef: Vec<f64>,
    /// The unit's kinematic trees (set by the setup once the joint rows are known).
    pub forest: Option<Forest>,
    k: Option<KFactor>,
    /// `K v⁰` (maximal, local) for the current β.
    kv0: Vec<f64>,
    /// Velocity of the last solve (local, maximal).
    pub v: Vec<f64>,
    work: Vec<f64>,
    /// Reduced work vector.
    wq: Vec<f64>,
}

impl Unit {
    /// A unit `key` over `dofs` (sorted global indices) with bodies `(local offset, mass block)`,
    /// `δt² K'` entries `stiff` (local, both triangles), `b_u` and `K` storage `k`.
    pub fn new(
        key: usize,
        dofs: Vec<usize>,
        bodies: &[(usize, &nalgebra::DMatrix<f64>)],
        stiff: Vec<(usize, usize, f64)>,
        b: Vec<f64>,
        k: Option<KFactor>,
    ) -> Self {
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
            stiff,
            key,
            b,
            b_norm,
            elements: vec![],
            local: vec![],
            coef: vec![],
            forest: None,
            k,
            kv0: vec![0.0; n],
            v: vec![0.0; n],
            work: vec![0.0; n],
            wq: vec![],
        }
    }

    /// Local index of global DOF `g`.
    pub fn local(&self, g: usize) -> usize {
        self.dofs.binary_search(&g).expect("dof of this unit")
    }

    /// Sets the unit's kinematic trees.
    pub fn set_forest(&mut self, f: Forest) {
        self.wq = vec![0.0; f.nq()];
        self.forest = Some(f);
    }

    fn forest(&self) -> &Forest {
        self.forest.as_ref().expect("forest set by the setup")
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
        self.element_times(&self.elements[e], &self.v, out);
    }

    /// `out = J_e x` for element `el` and a unit-local `x`.
    fn element_times(&self, el: &Element, x: &[f64], out: &mut [f64; 3]) {
        let cols = &self.local[el.start..el.start + el.len];
        for (r, o) in out.iter_mut().enumerate().take(el.dim) {
            let c = &self.coef[el.coef + r * el.len..el.coef + (r + 1) * el.len];
            *o = c.iter().zip(cols).map(|(a, &l)| a * x[l]).sum();
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

    /// `out = A'_u x = (M_u + δt² K') x` (maximal, local; `M_u x` without FEM bodies).
    fn dynamics_times(&self, x: &[f64], out: &mut [f64]) {
        for b in &self.bodies {
            let xb = &x[b.off..b.off + b.n];
            for (o, row) in out[b.off..b.off + b.n].iter_mut().zip(self.mass[b.at..b.at + b.n * b.n].chunks_exact(b.n))
            {
                *o = row.iter().zip(xb).map(|(a, c)| a * c).sum();
            }
        }
        for &(r, c, a) in &self.stiff {
            out[r] += a * x[c];
        }
    }

    /// Sets the velocity (local) from a global vector.
    pub fn set_velocity(&mut self, v: &[f64]) {
        for (x, &g) in self.v.iter_mut().zip(&self.dofs) {
            *x = v[g];
        }
    }

    /// Factors `K_q = Nᵀ(A'_u + β Σ J_eᵀ J_e)N` (Eqs. 40–41; `A'_u = M_u` without FEM bodies)
    /// and sets `K v⁰`.
    pub fn factor(&mut self, beta: f64) -> Result<(), FactorError> {
        let n = self.dofs.len();
        // K v⁰ = A' v⁰ + β Σ J_eᵀ J_e v⁰
        let mut kv0 = std::mem::take(&mut self.kv0);
        let mut forest = self.forest.take().expect("forest set by the setup");
        self.dynamics_times(&forest.v0, &mut kv0);
        self.add_elements_transpose(&mut kv0, |el| {
            let mut jv = [0.0; 3];
            self.element_times(el, &forest.v0, &mut jv);
            jv.map(|x| beta * x)
        });
        self.kv0 = kv0;
        let nq = forest.nq();
        let mut k = self.k.take().expect("K storage");
        let r = match &mut k {
            KFactor::Tree { h, kq, work } => {
                h.clone_from(&self.mass);
                for el in &self.elements {
                    let b = self.bodies[el.body];
                    self.add_gram(el, beta, &mut h[b.at..b.at + b.n * b.n], b.n, b.off);
                }
                kq.resize(nq * nq, 0.0);
                forest.crba(&self.bodies, h, kq, work);
                tree_ldl::factor_in_place(&forest.parent_dof, kq).map_err(FactorError::Tree)
            }
            KFactor::Dense { k, kq, e, col } => {
                k.clear();
                k.resize(n * n, 0.0);
                for b in &self.bodies {
                    for r in 0..b.n {
                        let row = (b.off + r) * n + b.off;
                        k[row..row + b.n].copy_from_slice(&self.mass[b.at + r * b.n..b.at + (r + 1) * b.n]);
                    }
                }
                for el in &self.elements {
                    self.add_gram(el, beta, k, n, 0);
                }
                kq.resize(nq * nq, 0.0);
                e.resize(nq, 0.0);
                col.resize(n, 0.0);
                forest.reduce_dense(k, kq, e, col);
                dense_cholesky::factor_in_place(nq, kq).map_err(FactorError::Dense)
            }
            KFactor::Sparse(s) => self.factor_sparse(s, beta),
        };
        self.forest = Some(forest);
        self.k = Some(k);
        r
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

    /// The sparse `K_q` (split `none`, or a unit with FEM bodies): `NᵀA'N` values plus
    /// `β (J_e N)ᵀ (J_e N)` per element.
    fn factor_sparse(&self, s: &mut SparseK, beta: f64) -> Result<(), FactorError> {
        let nb = self.bodies.len();
        s.values.copy_from_slice(&s.a_values);
        for (k, (el, rows)) in self.elements.iter().zip(&s.rows).enumerate() {
            let m = rows.len() / el.dim;
            s.local.clear();
            s.local.resize(m * m, 0.0);
            for c in rows.chunks_exact(m) {
                for (a, &ca) in c.iter().enumerate() {
                    for (b, &cb) in c.iter().enumerate() {
                        s.local[a * m + b] += beta * ca * cb;
                    }
                }
            }
            s.pattern.add_element(nb + k, &s.local, &mut s.values);
        }
        s.chol.factorize(&s.values).map_err(FactorError::Sparse)
    }

    /// Prepares the sparse `K_q` (split `none`, or a unit with FEM bodies) for this step's
    /// elements: the reduced rows, mass blocks and `δt² K'` entries, a new value scatter map, and
    /// a new symbolic analysis only if the pattern differs from the previous step's. Returns
    /// whether it analysed.
    pub fn prepare_sparse(&mut self) -> Result<bool, FactorError> {
        let f = self.forest();
        let nq = f.nq();
        let mass = f.reduce_mass(&self.bodies, &self.mass);
        let reduced: Vec<(Vec<usize>, Vec<f64>)> = self
            .elements
            .iter()
            .map(|el| {
                let cols = &self.local[el.start..el.start + el.len];
                f.reduce_rows(&self.bodies, cols, &self.coef[el.coef..el.coef + el.dim * el.len], el.dim)
            })
            .collect();
        let elems: Vec<Vec<usize>> =
            mass.iter().map(|m| m.0.clone()).chain(reduced.iter().map(|r| r.0.clone())).collect();
        let stiff = f.reduce_entries(&self.bodies, &self.stiff);
        let entries: Vec<(usize, usize)> = stiff.iter().map(|&(r, c, _)| (r, c)).collect();
        let pattern = SymmetricPattern::with_entries(nq, &elems, &entries);
        let (chol, analysed) = match self.k.take() {
            Some(KFactor::Sparse(s)) if s.chol.has_pattern(&pattern.col_ptr, &pattern.row_idx) => (s.chol, false),
            _ => (
                SparseCholesky::analyze(
                    nq,
                    pattern.col_ptr.clone(),
                    pattern.row_idx.clone(),
                    CholeskyParams::default(),
                )
                .map_err(FactorError::Analysis)?,
                true,
            ),
        };
        let mut a_values = vec![0.0; pattern.nnz()];
        for (k, (_, m)) in mass.iter().enumerate() {
            pattern.add_element(k, m, &mut a_values);
        }
        for &(r, c, x) in &stiff {
            a_values[pattern.position(r, c).expect("entry in the pattern")] += x;
        }
        let values = a_values.clone();
        let rows = reduced.into_iter().map(|r| r.1).collect();
        self.k = Some(KFactor::Sparse(Box::new(SparseK { pattern, chol, values, a_values, rows, local: vec![] })));
        Ok(analysed)
    }

    /// Gives a sparse `K` storage back with the unit's key (split `none` and the units with FEM
    /// bodies keep their symbolic analysis for the next step); `None` for the other splits.
    pub fn take_sparse(&mut self) -> Option<(usize, KFactor)> {
        match self.k.take() {
            Some(k @ KFactor::Sparse(_)) => Some((self.key, k)),
            other => {
                self.k = other;
                None
            }
        }
    }

    /// The v-step (34) in reduced coordinates: `K_q q̇ = Nᵀ(b_u + Σ_e J_eᵀ s(e) − K v⁰)`,
    /// `v = N q̇ + v⁰`; `s(e)` is `β z_e + λ_e`.
    pub fn solve(&mut self, s: impl Fn(&Element) -> [f64; 3]) {
        let mut x = std::mem::take(&mut self.work);
        for ((xi, bi), ki) in x.iter_mut().zip(&self.b).zip(&self.kv0) {
            *xi = bi - ki;
        }
        self.add_elements_transpose(&mut x, s);
        let mut q = std::mem::take(&mut self.wq);
        let forest = self.forest.as_ref().expect("forest set by the setup");
        forest.project(&mut x, &mut q);
        match self.k.as_mut().expect("unit factored") {
            KFactor::Tree { kq, .. } => tree_ldl::solve_in_place(&forest.parent_dof, kq, &mut q),
            KFactor::Dense { kq, .. } => dense_cholesky::solve_in_place(q.len(), kq, &mut q),
            KFactor::Sparse(sk) => sk.chol.solve_in_place(&mut q),
        }
        forest.expand(&q, true, &mut self.v);
        self.wq = q;
        self.work = x;
    }

    /// `w = A'_u v_u − b_u − Σ_e J_eᵀ λ_e` into the work vector; returns `‖A'_u v_u‖`.
    fn unbalanced(&mut self, lam: impl Fn(&Element) -> [f64; 3]) -> f64 {
        let mut r = std::mem::take(&mut self.work);
        self.dynamics_times(&self.v, &mut r);
        let mv = norm(&r);
        for (ri, bi) in r.iter_mut().zip(&self.b) {
            *ri -= bi;
        }
        self.add_elements_transpose(&mut r, |e| lam(e).map(|x| -x));
        self.work = r;
        mv
    }

    /// Dual residual (42) of the unit in its reduced coordinates, `‖Nᵀ(A'_u v_u − b_u − Σ_e J_eᵀ
    /// λ_e)‖` (the tree joints' impulses and the prescribed DOFs' reactions do no work on `q̇`),
    /// and its scale `max(‖b_u‖, ‖A'_u v_u‖)`.
    pub fn dual_residual(&mut self, lam: impl Fn(&Element) -> [f64; 3]) -> (f64, f64) {
        let mv = self.unbalanced(lam);
        let forest = self.forest.as_ref().expect("forest set by the setup");
        forest.project(&mut self.work, &mut self.wq);
        (norm(&self.wq), mv.max(self.b_norm))
    }

    /// The impulses of the unit's tree joints (written at their global rows of `gamma`).
    pub fn joint_impulses(&mut self, lam: impl Fn(&Element) -> [f64; 3], gamma: &mut [f64]) {
        self.unbalanced(lam);
        let forest = self.forest.as_ref().expect("forest set by the setup");
        forest.joint_impulses(&mut self.work, gamma);
    }
}

fn norm(x: &[f64]) -> f64 {
    x.iter().map(|v| v * v).sum::<f64>().sqrt()
}
