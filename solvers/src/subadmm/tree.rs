//! Reduced (joint-space) coordinates of a SubADMM unit: the paper's subsystem velocity `v̂_j` is
//! the joint velocity of a kinematic tree (Lee et al. §VI-A), its matrix `A_j + βΣJ_ijᵀJ_ij` the
//! tree's joint-space inertia with augmented body inertias (Eq. 40), built by the CRBA and
//! factored by the branch-sparse `LᵀDL` (§VI-C, `kernels::tree_ldl`).
//!
//! The harness works in maximal coordinates, so the tree is recovered from the joint rows. Every
//! body is a link; a rigid joint between a link and its parent has rows `G_c v_c + G_p v_p = v̂`
//! (`m` rows, `G_c` of full row rank). Its solutions are
//!
//! ```text
//! v_c = X v_p + S q̇ + c,   X = −G_c⁺ G_p,   c = G_c⁺ v̂,   S = orthonormal basis of null(G_c)
//! ```
//!
//! with `G_c⁺ = G_cᵀ (G_c G_cᵀ)⁻¹` (a free root: `S = I`, no `X`, `c = 0`; a root on a world
//! joint: no `X`). So `v = N q̇ + v⁰` with `v⁰` the particular velocity (all `q̇ = 0`), and the
//! unit's v-step `min ½ vᵀKv − xᵀv` over the joint-consistent `v` is `(NᵀKN) q̇ = Nᵀ(x − K v⁰)`.
//! [`Forest::project`] applies `Nᵀ` (leaves to roots), [`Forest::expand`] applies `N` (roots to
//! leaves), [`Forest::crba`] builds `NᵀHN` for a block-diagonal `H` (composite inertias
//! `I_p += Xᵀ I_c X`). Joint rows that the tree does not absorb — a second path between two bodies
//! (a loop), a compliant joint, rows of deficient rank — stay ADMM constraints, as the paper's soft
//! and loop constraints (Eqs. 36–37). After the solve, the tree joints' impulses are recovered from
//! the unbalanced momentum, leaves first ([`Forest::joint_impulses`]).
//!
//! Prescribed DOFs of an FEM body (an extension, README §11) are absorbed the same way, as rows
//! `e_kᵀ v = v̄_k` to the world: a node with held coordinates is a root with `S` the identity
//! columns of its free coordinates and `c = v̄` on the held ones, so `N` has no column for them
//! and every `v = N q̇ + v⁰` holds them at `v̄` (written exactly, [`Forest::expand`]).

use super::units::Body;
use kernels::tree_ldl::NO_PARENT;
use nalgebra::{DMatrix, SymmetricEigen};
use toolkit::constraints::{ConstraintRows, RowLaw};

/// Smallest eigenvalue of `G_c G_cᵀ`, relative to the largest, for a joint to be eliminated.
const RANK_TOL: f64 = 1e-10;

/// One body of the forest.
#[derive(Debug, Clone)]
struct Link {
    /// The unit body.
    body: usize,
    /// Parent link, or `NO_PARENT` for a root.
    parent: usize,
    /// The body's local offset and size in the unit, and the parent body's size (0 for a root).
    off: usize,
    n: usize,
    np: usize,
    /// Reduced offset and number of reduced DOFs (`S` is `n × d`).
    q: usize,
    d: usize,
    /// `S` is the identity (a free root).
    free: bool,
    /// Offsets in `Forest::mats` of `S` (`n × d`), `X` (`n × np`), `c` (`n`), `G_c⁺` (`n × m`),
    /// `G_p` (`m × np`).
    s: usize,
    x: usize,
    c: usize,
    pinv: usize,
    gp: usize,
    /// Global bilateral rows of the joint to the parent (or the world), `m` of them.
    rows: Vec<usize>,
    /// Held (prescribed) coordinates of the body (a held root): `v = c` there exactly.
    held: Vec<usize>,
}

/// The rows of one joint: `(index into the unit's row list, row)`, the unit bodies they touch
/// (sorted) and whether every row is rigid (`r = 0`).
struct JointRows<'a> {
    rows: Vec<(usize, &'a ConstraintRows)>,
    bodies: Vec<usize>,
    rigid: bool,
}

/// The kinematic trees of one unit.
pub(super) struct Forest {
    links: Vec<Link>,
    mats: Vec<f64>,
    /// The particular velocity `v⁰` (unit-local, maximal coordinates).
    pub v0: Vec<f64>,
    /// Parent of every reduced DOF (for `kernels::tree_ldl`).
    pub parent_dof: Vec<usize>,
    /// Per link: its reduced DOFs and all its ancestors' (ascending), and `∂v_link/∂q̇` on them
    /// (`n × len`, row-major) at `chain_at`: the rows of `N`, for assembling a sparse `NᵀKN`.
    chain_dofs: Vec<Vec<usize>>,
    chain: Vec<f64>,
    chain_at: Vec<usize>,
    /// Link of every unit body.
    link_of: Vec<usize>,
    /// Work vector (length of the unit).
    work: Vec<f64>,
}

impl Forest {
    /// The forest of a unit with `bodies` from its joint rows `(global row, joint id, row)`
    /// (`local` maps a global DOF to the unit's local index) and its prescribed DOFs `held`
    /// (`(local DOF, v̄)`, sorted; on bodies without joints, the nodes of FEM bodies). Returns the
    /// forest and the global rows of the joints it does not absorb.
    pub fn new(
        bodies: &[Body],
        local: impl Fn(usize) -> usize,
        rows: &[(usize, usize, &ConstraintRows)],
        held: &[(usize, f64)],
    ) -> (Self, Vec<usize>) {
        let body_of = |g: usize| {
            let l = local(g);
            bodies.partition_point(|b| b.off + b.n <= l)
        };
        // group rows into joints (a joint's rows are consecutive)
        let mut joints: Vec<(usize, Vec<usize>)> = vec![]; // (joint id, indices into rows)
        for (k, &(_, id, _)) in rows.iter().enumerate() {
            match joints.last_mut() {
                Some(j) if j.0 == id => j.1.push(k),
                _ => joints.push((id, vec![k])),
            }
        }
        let joints: Vec<JointRows> = joints
            .iter()
            .map(|(_, ks)| {
                let mut on: Vec<usize> = ks.iter().flat_map(|&k| rows[k].2.dofs.iter().map(|&g| body_of(g))).collect();
                on.sort_unstable();
                on.dedup();
                let rigid = ks.iter().all(|&k| matches!(rows[k].2.law, RowLaw::Bilateral { r, .. } if r == 0.0));
                JointRows { rows: ks.iter().map(|&k| (k, rows[k].2)).collect(), bodies: on, rigid }
            })
            .collect();
        let mut f = Self {
            links: vec![],
            mats: vec![],
            v0: vec![],
            parent_dof: vec![],
            chain_dofs: vec![],
            chain: vec![],
            chain_at: vec![],
            link_of: vec![NO_PARENT; bodies.len()],
            work: vec![0.0; bodies.last().map_or(0, |b| b.off + b.n)],
        };
        let mut used = vec![false; joints.len()];
        let mut by_body = vec![vec![]; bodies.len()];
        for (j, jr) in joints.iter().enumerate() {
            for &b in &jr.bodies {
                by_body[b].push(j);
            }
        }
        let global_rows = |j: &JointRows| j.rows.iter().map(|&(k, _)| rows[k].0).collect::<Vec<_>>();
        // roots: bodies on a rigid world joint first, then free bodies; each tree breadth first
        let world_roots: Vec<usize> =
            (0..joints.len()).filter(|&j| joints[j].rigid && joints[j].bodies.len() == 1).collect();
        let candidates =
            world_roots.iter().map(|&j| (joints[j].bodies[0], Some(j))).chain((0..bodies.len()).map(|b| (b, None)));
        for (b, j) in candidates {
            if f.link_of[b] != NO_PARENT {
                continue;
            }
            let link = match j {
                Some(j) => match f.joint_link(bodies, b, None, &joints[j], &local) {
                    Some(l) => {
                        used[j] = true;
                        Link { rows: global_rows(&joints[j]), ..l }
                    }
                    None => continue,
                },
                None => {
                    let bb = bodies[b];
                    let (lo, hi) =
                        (held.partition_point(|h| h.0 < bb.off), held.partition_point(|h| h.0 < bb.off + bb.n));
                    if lo < hi {
                        f.held_link(b, bb, &held[lo..hi])
                    } else {
                        f.free_link(b, bb)
                    }
                }
            };
            f.push(b, link);
            let mut head = f.links.len() - 1;
            while head < f.links.len() {
                let parent_body = f.links[head].body;
                for &j in &by_body[parent_body] {
                    let jr = &joints[j];
                    if used[j] || !jr.rigid || jr.bodies.len() != 2 {
                        continue;
                    }
                    let child = jr.bodies[usize::from(jr.bodies[0] == parent_body)];
                    if f.link_of[child] != NO_PARENT {
                        continue; // a loop: stays an ADMM constraint
                    }
                    if let Some(l) = f.joint_link(bodies, child, Some((head, parent_body)), jr, &local) {
                        used[j] = true;
                        f.push(child, Link { rows: global_rows(jr), ..l });
                    }
                }
                head += 1;
            }
        }
        f.finish();
        let admm = joints.iter().zip(&used).filter(|(_, &u)| !u).flat_map(|(j, _)| global_rows(j)).collect();
        (f, admm)
    }

    fn push(&mut self, body: usize, link: Link) {
        self.link_of[body] = self.links.len();
        self.links.push(link);
    }

    /// A free root: `S = I`.
    fn free_link(&mut self, body: usize, b: Body) -> Link {
        let s = self.mats.len();
        self.mats.extend((0..b.n * b.n).map(|k| if k / b.n == k % b.n { 1.0 } else { 0.0 }));
        let c = self.mats.len();
        self.mats.extend(std::iter::repeat_n(0.0, b.n));
        Link {
            body,
            parent: NO_PARENT,
            off: b.off,
            n: b.n,
            np: 0,
            q: 0,
            d: b.n,
            free: true,
            s,
            x: 0,
            c,
            pinv: 0,
            gp: 0,
            rows: vec![],
            held: vec![],
        }
    }

    /// A root with prescribed coordinates `held` (`(local DOF, v̄)`, sorted, within `b`): `S` the
    /// identity columns of the other coordinates, `c = v̄` on the held ones.
    fn held_link(&mut self, body: usize, b: Body, held: &[(usize, f64)]) -> Link {
        let coords: Vec<usize> = held.iter().map(|h| h.0 - b.off).collect();
        let axes: Vec<usize> = (0..b.n).filter(|r| !coords.contains(r)).collect();
        let (n, d) = (b.n, axes.len());
        let s = self.mats.len();
        self.mats.extend((0..n * d).map(|k| if axes[k % d] == k / d { 1.0 } else { 0.0 }));
        let c = self.mats.len();
        self.mats.extend(std::iter::repeat_n(0.0, n));
        for (&r, h) in coords.iter().zip(held) {
            self.mats[c + r] = h.1;
        }
        Link {
            body,
            parent: NO_PARENT,
            off: b.off,
            n,
            np: 0,
            q: 0,
            d,
            free: false,
            s,
            x: 0,
            c,
            pinv: 0,
            gp: 0,
            rows: vec![],
            held: coords,
        }
    }

    /// The link of body `c` on joint `jr` to `parent` (`(link, body)`, `None` for the world), or
    /// `None` if `G_c` is rank deficient.
    fn joint_link(
        &mut self,
        bodies: &[Body],
        c: usize,
        parent: Option<(usize, usize)>,
        jr: &JointRows,
        local: &impl Fn(usize) -> usize,
    ) -> Option<Link> {
        let (bc, m) = (bodies[c], jr.rows.len());
        let np = parent.map_or(0, |(_, pb)| bodies[pb].n);
        let (mut gc, mut gp) = (DMatrix::zeros(m, bc.n), DMatrix::zeros(m, np));
        let mut v_hat = nalgebra::DVector::zeros(m);
        for (r, &(_, row)) in jr.rows.iter().enumerate() {
            let RowLaw::Bilateral { v_hat: vh, .. } = row.law else { unreachable!("joint rows are bilateral") };
            v_hat[r] = vh;
            for (&g, &a) in row.dofs.iter().zip(&row.rows) {
                let l = local(g);
                if (bc.off..bc.off + bc.n).contains(&l) {
                    gc[(r, l - bc.off)] += a;
                } else if let Some((_, pb)) = parent {
                    gp[(r, l - bodies[pb].off)] += a;
                }
            }
        }
        if m > bc.n {
            return None;
        }
        let gram: DMatrix<f64> = &gc * gc.transpose();
        let a = SymmetricEigen::new(gram);
        let (lo, hi) = a.eigenvalues.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &e| (lo.min(e), hi.max(e)));
        if lo.is_nan() || lo <= RANK_TOL * hi {
            return None;
        }
        let ainv: DMatrix<f64> =
            &a.eigenvectors * DMatrix::from_diagonal(&a.eigenvalues.map(|e| 1.0 / e)) * a.eigenvectors.transpose();
        let pinv: DMatrix<f64> = gc.transpose() * ainv; // n × m
        let proj: DMatrix<f64> = DMatrix::identity(bc.n, bc.n) - &pinv * &gc;
        let q = SymmetricEigen::new(proj);
        let null: Vec<usize> = (0..bc.n).filter(|&k| q.eigenvalues[k] > 0.5).collect();
        let x: DMatrix<f64> = -(&pinv * &gp);
        let c0: nalgebra::DVector<f64> = &pinv * v_hat;
        let at = |mats: &mut Vec<f64>, m: &DMatrix<f64>| {
            let o = mats.len();
            for r in 0..m.nrows() {
                mats.extend((0..m.ncols()).map(|k| m[(r, k)]));
            }
            o
        };
        let mut s_mat = DMatrix::zeros(bc.n, null.len());
        for (k, &e) in null.iter().enumerate() {
            s_mat.set_column(k, &q.eigenvectors.column(e));
        }
        let s = at(&mut self.mats, &s_mat);
        let xo = at(&mut self.mats, &x);
        let co = at(&mut self.mats, &DMatrix::from_column_slice(bc.n, 1, c0.as_slice()));
        let po = at(&mut self.mats, &pinv);
        let go = at(&mut self.mats, &gp);
        Some(Link {
            body: c,
            parent: parent.map_or(NO_PARENT, |p| p.0),
            off: bc.off,
            n: bc.n,
            np,
            q: 0,
            d: null.len(),
            free: false,
            s,
            x: xo,
            c: co,
            pinv: po,
            gp: go,
            rows: vec![],
            held: vec![],
        })
    }

    /// Reduced offsets, DOF parents, `v⁰` and the chains of `N`.
    fn finish(&mut self) {
        debug_assert!(self.link_of.iter().all(|&l| l != NO_PARENT), "every body is a link");
        let mut nq = 0;
        for l in &mut self.links {
            l.q = nq;
            nq += l.d;
        }
        self.parent_dof = vec![NO_PARENT; nq];
        for (k, l) in self.links.iter().enumerate() {
            let mut up = l.parent;
            while up != NO_PARENT && self.links[up].d == 0 {
                up = self.links[up].parent;
            }
            let mut prev = if up == NO_PARENT { NO_PARENT } else { self.links[up].q + self.links[up].d - 1 };
            for i in l.q..l.q + l.d {
                self.parent_dof[i] = prev;
                prev = i;
            }
            debug_assert!(self.links[..k].iter().all(|o| o.q <= l.q));
        }
        let mut v0 = vec![0.0; self.work.len()];
        self.expand(&vec![0.0; nq], true, &mut v0);
        self.v0 = v0;
        // chains: ∂v_link/∂q̇ over the ancestors' DOFs then the link's own
        for k in 0..self.links.len() {
            let l = &self.links[k];
            let (n, d) = (l.n, l.d);
            let mut dofs = vec![];
            let mut mat: Vec<f64>;
            if l.parent == NO_PARENT {
                mat = vec![0.0; n * d];
            } else {
                let p = &self.links[l.parent];
                let (pd, pa) = (&self.chain_dofs[l.parent], self.chain_at[l.parent]);
                let w = pd.len();
                dofs.extend_from_slice(pd);
                mat = vec![0.0; n * (w + d)];
                for r in 0..n {
                    for c in 0..w {
                        mat[r * (w + d) + c] =
                            (0..p.n).map(|t| self.mats[l.x + r * p.n + t] * self.chain[pa + t * w + c]).sum();
                    }
                }
            }
            let w = dofs.len();
            dofs.extend(l.q..l.q + d);
            for r in 0..n {
                for c in 0..d {
                    mat[r * (w + d) + w + c] = self.mats[l.s + r * d + c];
                }
            }
            self.chain_at.push(self.chain.len());
            self.chain.extend(mat);
            self.chain_dofs.push(dofs);
        }
    }

    /// Number of reduced DOFs.
    pub fn nq(&self) -> usize {
        self.parent_dof.len()
    }

    /// `v = N q̇` (`affine`: `+ v⁰`), roots to leaves. Held coordinates are set to `v̄` (`affine`)
    /// or 0, not computed, so they come back bit for bit.
    pub fn expand(&self, qd: &[f64], affine: bool, v: &mut [f64]) {
        for l in &self.links {
            let (o, n) = (l.off, l.n);
            let (head, tail) = v.split_at_mut(o);
            let vl = &mut tail[..n];
            if affine {
                vl.copy_from_slice(&self.mats[l.c..l.c + n]);
            } else {
                vl.iter_mut().for_each(|x| *x = 0.0);
            }
            if l.parent != NO_PARENT {
                let p = &self.links[l.parent];
                mul_add(&self.mats[l.x..l.x + n * p.n], n, p.n, &head[p.off..p.off + p.n], vl);
            }
            let q = &qd[l.q..l.q + l.d];
            if l.free {
                vl.iter_mut().zip(q).for_each(|(a, b)| *a += b);
            } else {
                mul_add(&self.mats[l.s..l.s + n * l.d], n, l.d, q, vl);
            }
            for &r in &l.held {
                vl[r] = if affine { self.mats[l.c + r] } else { 0.0 };
            }
        }
    }

    /// `out = Nᵀ y`, leaves to roots (`y` is overwritten).
    pub fn project(&self, y: &mut [f64], out: &mut [f64]) {
        for l in self.links.iter().rev() {
            let (o, n) = (l.off, l.n);
            let (head, tail) = y.split_at_mut(o);
            let yl = &tail[..n];
            let ol = &mut out[l.q..l.q + l.d];
            if l.free {
                ol.copy_from_slice(yl);
            } else {
                mul_t(&self.mats[l.s..l.s + n * l.d], n, l.d, yl, ol);
            }
            if l.parent != NO_PARENT {
                let p = &self.links[l.parent];
                mul_t_add(&self.mats[l.x..l.x + n * p.n], n, p.n, yl, &mut head[p.off..p.off + p.n]);
            }
        }
    }

    /// `kq = NᵀHN` (lower triangle's ancestor entries, `nq × nq` row-major) for a block-diagonal
    /// `H` stored per body at `Body::at` in `h`, which is overwritten by the composite inertias
    /// (CRBA). `f` is a work buffer of at least 72 entries.
    pub fn crba(&self, bodies: &[Body], h: &mut [f64], kq: &mut [f64], f: &mut [f64]) {
        let nq = self.nq();
        kq.iter_mut().for_each(|x| *x = 0.0);
        let at = |k: usize| bodies[self.links[k].body].at;
        // composite inertias, leaves to roots: I_p += Xᵀ I_c X
        for (k, l) in self.links.iter().enumerate().rev() {
            if l.parent == NO_PARENT {
                continue;
            }
            let (n, np) = (l.n, l.np);
            let (ac, ap) = (at(k), at(l.parent));
            let x = &self.mats[l.x..l.x + n * np];
            // t = I_c X (n × np) in f, then I_p += Xᵀ t
            for r in 0..n {
                for c in 0..np {
                    f[r * np + c] = (0..n).map(|t| h[ac + r * n + t] * x[t * np + c]).sum();
                }
            }
            for r in 0..np {
                for c in 0..np {
                    h[ap + r * np + c] += (0..n).map(|t| x[t * np + r] * f[t * np + c]).sum::<f64>();
                }
            }
        }
        // K_q: diagonal blocks Sᵀ I S, then F = I S carried up by Xᵀ
        let (fa, fb) = f.split_at_mut(36);
        for (k, l) in self.links.iter().enumerate() {
            let (n, d) = (l.n, l.d);
            if d == 0 {
                continue;
            }
            let ic = &h[at(k)..at(k) + n * n];
            for r in 0..n {
                for c in 0..d {
                    fa[r * d + c] = if l.free {
                        ic[r * n + c]
                    } else {
                        (0..n).map(|t| ic[r * n + t] * self.mats[l.s + t * d + c]).sum()
                    };
                }
            }
            self.store_block(l, l, &fa[..n * d], kq, nq);
            let (mut cur, mut rows) = (k, n);
            let (mut src, mut dst) = (&mut *fa, &mut *fb);
            while self.links[cur].parent != NO_PARENT {
                let lc = &self.links[cur];
                let np = lc.np;
                let x = &self.mats[lc.x..lc.x + rows * np];
                for r in 0..np {
                    for c in 0..d {
                        dst[r * d + c] = (0..rows).map(|t| x[t * np + r] * src[t * d + c]).sum();
                    }
                }
                cur = lc.parent;
                rows = np;
                std::mem::swap(&mut src, &mut dst);
                self.store_block(&self.links[cur], l, &src[..rows * d], kq, nq);
            }
        }
    }

    /// `kq[l rows, a cols] = (S_aᵀ F)ᵀ` for ancestor-or-self `a` of `l` (`F` is `n_a × d_l`).
    fn store_block(&self, a: &Link, l: &Link, fm: &[f64], kq: &mut [f64], nq: usize) {
        let (na, da, dl) = (a.n, a.d, l.d);
        for i in 0..dl {
            for j in 0..da {
                let v = if a.free {
                    fm[j * dl + i]
                } else {
                    (0..na).map(|t| self.mats[a.s + t * da + j] * fm[t * dl + i]).sum()
                };
                kq[(l.q + i) * nq + a.q + j] = v;
            }
        }
    }

    /// `kq = NᵀKN` (full, `nq × nq`) for a dense `K` (`n × n`, row-major) of the unit.
    pub fn reduce_dense(&mut self, k: &[f64], kq: &mut [f64], e: &mut [f64], col: &mut [f64]) {
        let (n, nq) = (col.len(), self.nq());
        let mut kcol = std::mem::take(&mut self.work);
        for i in 0..nq {
            e.iter_mut().for_each(|x| *x = 0.0);
            e[i] = 1.0;
            self.expand(e, false, col);
            for (r, kr) in kcol.iter_mut().enumerate() {
                *kr = k[r * n..(r + 1) * n].iter().zip(col.iter()).map(|(a, b)| a * b).sum();
            }
            self.project(&mut kcol, &mut kq[i * nq..(i + 1) * nq]);
        }
        self.work = kcol;
    }

    /// The rows of `N` for the local columns `cols` of an element: for each column its link's
    /// chain. Returns `(reduced DOFs, dim × len reduced coefficients)` of the element
    /// `J N` with `J`'s rows `coef` (`dim × cols.len()`, row-major).
    pub fn reduce_rows(&self, bodies: &[Body], cols: &[usize], coef: &[f64], dim: usize) -> (Vec<usize>, Vec<f64>) {
        let links: Vec<usize> =
            cols.iter().map(|&c| self.link_of[bodies.partition_point(|b| b.off + b.n <= c)]).collect();
        let mut dofs: Vec<usize> = links.iter().flat_map(|&l| self.chain_dofs[l].iter().copied()).collect();
        dofs.sort_unstable();
        dofs.dedup();
        let w = dofs.len();
        let mut out = vec![0.0; dim * w];
        let m = cols.len();
        for (ci, (&c, &lk)) in cols.iter().zip(&links).enumerate() {
            let l = &self.links[lk];
            let (cd, ca) = (&self.chain_dofs[lk], self.chain_at[lk]);
            let t = c - l.off;
            for (k, &q) in cd.iter().enumerate() {
                let pos = dofs.binary_search(&q).expect("chain dof");
                let nk = self.chain[ca + t * cd.len() + k];
                for r in 0..dim {
                    out[r * w + pos] += coef[r * m + ci] * nk;
                }
            }
        }
        (dofs, out)
    }

    /// `NᵀKN` for a sparse `K` given by its entries `(row, column, value)` (unit-local maximal
    /// indices, both triangles): the lower entries `(i, j, value)`, `i ≥ j`, of every product
    /// `N_ri K_rc N_cj` with nonzero `N` coefficients (one per `K` entry for the nodes of an FEM
    /// body, whose `N` selects coordinates; none on held coordinates).
    pub fn reduce_entries(&self, bodies: &[Body], entries: &[(usize, usize, f64)]) -> Vec<(usize, usize, f64)> {
        let row_of = |l: usize| {
            let k = self.link_of[bodies.partition_point(|b| b.off + b.n <= l)];
            let (cd, ca, w) = (&self.chain_dofs[k], self.chain_at[k], self.chain_dofs[k].len());
            let t = l - self.links[k].off;
            cd.iter().zip(&self.chain[ca + t * w..ca + (t + 1) * w])
        };
        let mut out = vec![];
        for &(r, c, x) in entries {
            for (&i, &nr) in row_of(r).filter(|e| *e.1 != 0.0) {
                for (&j, &nc) in row_of(c).filter(|e| *e.1 != 0.0 && *e.0 <= i) {
                    out.push((i, j, nr * x * nc));
                }
            }
        }
        out
    }

    /// Per link: its chain's reduced DOFs and `N_lᵀ M_l N_l` (`len × len`) for the body mass block
    /// `m` (`n × n` row-major at `Body::at` of `mass`).
    pub fn reduce_mass(&self, bodies: &[Body], mass: &[f64]) -> Vec<(Vec<usize>, Vec<f64>)> {
        self.links
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let b = bodies[l.body];
                let (cd, ca) = (&self.chain_dofs[k], self.chain_at[k]);
                let (n, w) = (l.n, cd.len());
                let nl = &self.chain[ca..ca + n * w];
                let mut out = vec![0.0; w * w];
                for i in 0..w {
                    for j in 0..w {
                        let mut s = 0.0;
                        for r in 0..n {
                            for c in 0..n {
                                s += nl[r * w + i] * mass[b.at + r * n + c] * nl[c * w + j];
                            }
                        }
                        out[i * w + j] = s;
                    }
                }
                (cd.clone(), out)
            })
            .collect()
    }

    /// The tree joints' impulses from the unbalanced momentum `w = M v − b − Σ Jᵀλ` (unit-local,
    /// overwritten), leaves first: `γ = G_c⁺ᵀ w_c`, then `w_p −= G_pᵀ γ`. Written into `gamma`
    /// at the joints' global rows.
    pub fn joint_impulses(&self, w: &mut [f64], gamma: &mut [f64]) {
        for l in self.links.iter().rev().filter(|l| !l.rows.is_empty()) {
            let (o, n, m) = (l.off, l.n, l.rows.len());
            let (head, tail) = w.split_at_mut(o);
            let wc = &tail[..n];
            for (r, &row) in l.rows.iter().enumerate() {
                gamma[row] = (0..n).map(|t| self.mats[l.pinv + t * m + r] * wc[t]).sum();
            }
            if l.parent != NO_PARENT {
                let p = &self.links[l.parent];
                for (r, &row) in l.rows.iter().enumerate() {
                    let g = gamma[row];
                    for (c, wp) in head[p.off..p.off + p.n].iter_mut().enumerate() {
                        *wp -= self.mats[l.gp + r * p.n + c] * g;
                    }
                }
            }
        }
    }
}

/// `y += A x` for `A` (`r × c`, row-major).
fn mul_add(a: &[f64], r: usize, c: usize, x: &[f64], y: &mut [f64]) {
    for (i, yi) in y.iter_mut().enumerate().take(r) {
        *yi += a[i * c..(i + 1) * c].iter().zip(x).map(|(p, q)| p * q).sum::<f64>();
    }
}

/// `y = Aᵀ x` for `A` (`r × c`, row-major).
fn mul_t(a: &[f64], r: usize, c: usize, x: &[f64], y: &mut [f64]) {
    y.iter_mut().for_each(|v| *v = 0.0);
    mul_t_add(a, r, c, x, y);
}

/// `y += Aᵀ x` for `A` (`r × c`, row-major).
fn mul_t_add(a: &[f64], r: usize, c: usize, x: &[f64], y: &mut [f64]) {
    for (i, &xi) in x.iter().enumerate().take(r) {
        for (yj, aij) in y.iter_mut().zip(&a[i * c..(i + 1) * c]) {
            *yj += aij * xi;
        }
    }
}
