//! One solve unit of SubADMM's v-step (Eq. 34): a subsystem (split `body` or `subsystem`) or the
//! whole system (split `none`). It factors `K = M_u + β Σ J_igᵀ J_ig` and solves
//! `K v = rhs + G_uᵀ γ`, `G_u v − v̂ + R γ = 0` for the unit's joint rows exactly, by the Schur
//! complement `S = G K⁻¹ Gᵀ + R` (maximal coordinates: the joints of an articulated subsystem are
//! constraints inside the unit, where the paper's reduced coordinates have none).
//!
//! `K`'s structure is what Table III measures: with the body split every slack block lies on one
//! body, so `K` is block diagonal with 6×6 blocks (the analogue of the paper's tree-sparse
//! factorisation); with the subsystem split a block can couple the bodies of a subsystem and `K` is
//! factored as one dense matrix; with no split `K` is the global sparse matrix.

use kernels::assembly::SymmetricPattern;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

/// How `K` is stored and factored.
pub(super) enum KFactor {
    /// One dense factor per body: `(local offset, size, factor)`.
    Blocks(Vec<(usize, usize, Cholesky<f64, Dyn>)>),
    /// One dense factor for the unit.
    Dense(Cholesky<f64, Dyn>),
    /// Sparse factor of the whole system.
    Sparse(Box<SparseCholesky>),
    /// Not factored yet.
    Empty,
}

/// Joint rows of a unit and their Schur complement.
pub(super) struct JointPart {
    /// Per row: local column indices and coefficients.
    pub rows: Vec<(Vec<usize>, Vec<f64>)>,
    pub v_hat: Vec<f64>,
    pub r: Vec<f64>,
    /// `K⁻¹ Gᵀ` (`nu × nr`).
    y: DMatrix<f64>,
    s: Option<Cholesky<f64, Dyn>>,
}

/// A unit's element matrix: `β J_igᵀ J_ig` on local indices.
pub(super) struct Element {
    pub local: Vec<usize>,
    /// `dim × local.len()` row-major.
    pub rows: Vec<f64>,
    pub dim: usize,
}

/// One solve unit.
pub(super) struct Unit {
    /// Global velocity indices, sorted.
    pub dofs: Vec<usize>,
    /// Bodies: `(local offset, size, mass block index)`.
    pub bodies: Vec<(usize, usize, usize)>,
    /// Global indices of the problem's bilateral rows solved here.
    pub joint_rows: Vec<usize>,
    pub joints: Option<JointPart>,
    pub kfac: KFactor,
    pattern: Option<SymmetricPattern>,
    pub v: DVector<f64>,
    pub rhs: DVector<f64>,
    tmp: DVector<f64>,
    /// Joint impulses of the last solve.
    pub gamma: DVector<f64>,
}

impl Unit {
    pub fn new(dofs: Vec<usize>, bodies: Vec<(usize, usize, usize)>) -> Self {
        let n = dofs.len();
        Self {
            dofs,
            bodies,
            joint_rows: vec![],
            joints: None,
            kfac: KFactor::Empty,
            pattern: None,
            v: DVector::zeros(n),
            rhs: DVector::zeros(n),
            tmp: DVector::zeros(n),
            gamma: DVector::zeros(0),
        }
    }

    /// Local index of global DOF `g`.
    pub fn local(&self, g: usize) -> usize {
        self.dofs.binary_search(&g).expect("dof of this unit")
    }

    pub fn set_joints(&mut self, jp: JointPart, rows: Vec<usize>) {
        self.gamma = DVector::zeros(jp.rows.len());
        self.joints = Some(jp);
        self.joint_rows = rows;
    }

    /// Factors `K = M_u + β Σ elements` in the form `kind` asks for, then the joint Schur part.
    pub fn factor(
        &mut self,
        mass: &kernels::BlockDiagonal,
        elements: &[Element],
        beta: f64,
        kind: super::settings::Split,
    ) -> Result<(), String> {
        use super::settings::Split;
        let n = self.dofs.len();
        match kind {
            Split::Body => {
                let mut facs = Vec::with_capacity(self.bodies.len());
                let mut mats: Vec<DMatrix<f64>> =
                    self.bodies.iter().map(|&(_, _, mb)| mass.blocks()[mb].clone()).collect();
                for e in elements {
                    let k = self.bodies.iter().position(|&(o, s, _)| e.local[0] >= o && e.local[0] < o + s).unwrap();
                    let o = self.bodies[k].0;
                    add_gram(&mut mats[k], e, beta, |l| l - o);
                }
                for (&(o, s, _), m) in self.bodies.iter().zip(mats) {
                    let c = m.cholesky().ok_or("body block of K not positive definite")?;
                    facs.push((o, s, c));
                }
                self.kfac = KFactor::Blocks(facs);
            }
            Split::Subsystem => {
                let mut m = DMatrix::zeros(n, n);
                for &(o, s, mb) in &self.bodies {
                    m.view_mut((o, o), (s, s)).copy_from(&mass.blocks()[mb]);
                }
                for e in elements {
                    add_gram(&mut m, e, beta, |l| l);
                }
                self.kfac = KFactor::Dense(m.cholesky().ok_or("subsystem K not positive definite")?);
            }
            Split::None => {
                if self.pattern.is_none() {
                    let mut elems: Vec<Vec<usize>> =
                        self.bodies.iter().map(|&(o, s, _)| (o..o + s).collect()).collect();
                    elems.extend(elements.iter().map(|e| e.local.clone()));
                    let p = SymmetricPattern::new(n, &elems);
                    let c = SparseCholesky::analyze(n, p.col_ptr.clone(), p.row_idx.clone(), CholeskyParams::default())
                        .map_err(|e| e.to_string())?;
                    self.kfac = KFactor::Sparse(Box::new(c));
                    self.pattern = Some(p);
                }
                let p = self.pattern.as_ref().unwrap();
                let mut values = vec![0.0; p.nnz()];
                let nb = self.bodies.len();
                for (k, &(_, s, mb)) in self.bodies.iter().enumerate() {
                    let blk = &mass.blocks()[mb];
                    let local: Vec<f64> = (0..s * s).map(|t| blk[(t / s, t % s)]).collect();
                    p.add_element(k, &local, &mut values);
                }
                for (k, e) in elements.iter().enumerate() {
                    let m = e.local.len();
                    let mut local = vec![0.0; m * m];
                    for r in 0..e.dim {
                        for a in 0..m {
                            for b in 0..m {
                                local[a * m + b] += beta * e.rows[r * m + a] * e.rows[r * m + b];
                            }
                        }
                    }
                    p.add_element(nb + k, &local, &mut values);
                }
                if let KFactor::Sparse(c) = &mut self.kfac {
                    c.factorize(&values).map_err(|e| e.to_string())?;
                }
            }
        }
        // joint Schur complement S = G K⁻¹ Gᵀ + R
        if let Some(jp) = self.joints.take() {
            let nr = jp.rows.len();
            let mut y = DMatrix::zeros(n, nr);
            for (k, (cols, vals)) in jp.rows.iter().enumerate() {
                let mut col = DVector::zeros(n);
                for (&c, &v) in cols.iter().zip(vals) {
                    col[c] = v;
                }
                self.solve_k(&mut col);
                y.set_column(k, &col);
            }
            let mut s = DMatrix::zeros(nr, nr);
            for (k, (cols, vals)) in jp.rows.iter().enumerate() {
                for l in 0..nr {
                    s[(k, l)] = cols.iter().zip(vals).map(|(&c, &v)| v * y[(c, l)]).sum();
                }
                s[(k, k)] += jp.r[k];
            }
            let scale = (0..nr).map(|k| s[(k, k)]).fold(0.0, f64::max);
            let chol = s.clone().cholesky().or_else(|| {
                // redundant joint rows (closed loops): a tiny regularisation
                let mut s2 = s;
                for k in 0..nr {
                    s2[(k, k)] += 1e-12 * scale;
                }
                s2.cholesky()
            });
            self.joints = Some(JointPart { y, s: chol, ..jp });
            if self.joints.as_ref().unwrap().s.is_none() {
                return Err("joint Schur complement not positive definite".into());
            }
        }
        Ok(())
    }

    fn solve_k(&mut self, x: &mut DVector<f64>) {
        match &mut self.kfac {
            KFactor::Blocks(f) => {
                for (o, s, c) in f.iter() {
                    let mut v = x.rows_mut(*o, *s);
                    c.solve_mut(&mut v);
                }
            }
            KFactor::Dense(c) => c.solve_mut(x),
            KFactor::Sparse(c) => c.solve_in_place(x.as_mut_slice()),
            KFactor::Empty => panic!("unit not factored"),
        }
    }

    /// `v = K⁻¹ (rhs + Gᵀ γ)` with `γ` from the joint rows; reads `self.rhs`, writes `self.v`.
    pub fn solve(&mut self) {
        let mut x = std::mem::replace(&mut self.tmp, DVector::zeros(0));
        x.copy_from(&self.rhs);
        self.solve_k(&mut x);
        if let Some(jp) = &self.joints {
            let nr = jp.rows.len();
            for k in 0..nr {
                let (cols, vals) = &jp.rows[k];
                let gx: f64 = cols.iter().zip(vals).map(|(&c, &v)| v * x[c]).sum();
                self.gamma[k] = jp.v_hat[k] - gx;
            }
            if let Some(s) = &jp.s {
                s.solve_mut(&mut self.gamma);
            }
            x.gemv(1.0, &jp.y, &self.gamma, 1.0);
        }
        self.v.copy_from(&x);
        self.tmp = x;
    }
}

/// `m += β Jᵀ J` for element `e`, with `map` from the element's local indices to `m`'s.
fn add_gram(m: &mut DMatrix<f64>, e: &Element, beta: f64, map: impl Fn(usize) -> usize) {
    let k = e.local.len();
    for r in 0..e.dim {
        for a in 0..k {
            let ja = beta * e.rows[r * k + a];
            if ja == 0.0 {
                continue;
            }
            for b in 0..k {
                m[(map(e.local[a]), map(e.local[b]))] += ja * e.rows[r * k + b];
            }
        }
    }
}

impl JointPart {
    pub fn new(rows: Vec<(Vec<usize>, Vec<f64>)>, v_hat: Vec<f64>, r: Vec<f64>) -> Self {
        Self { rows, v_hat, r, y: DMatrix::zeros(0, 0), s: None }
    }
}
