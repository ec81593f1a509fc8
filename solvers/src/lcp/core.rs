//! [`Core`]: what `lcp_lemke` and `lcp_pgs` share — the pyramid LCP of a step (from the
//! per-contact blocks of `toolkit::contact_blocks`) or of a problem in Delassus form (`W` as
//! given), and the way back from `z` to impulses and velocities.

use super::pyramid::{ContactData, PyramidLcp};
use api::delassus::Block3;
use api::{DelassusProblem, SolveError, SolveStatus, StepProblem, StepSolution};
use toolkit::contact_blocks::ContactBlocks;

/// The shared state of one step or one Delassus problem (module doc).
#[derive(Debug, Default)]
pub struct Core {
    /// Per-contact blocks of the current step (step path only).
    pub blocks: ContactBlocks,
    /// The LCP over the active contacts.
    pub lcp: PyramidLcp,
    /// Problem index of each LCP contact (contacts with a zero diagonal block, which no impulse
    /// can move, are left out and keep `λ = 0`).
    pub active: Vec<usize>,
    /// The LCP unknowns.
    pub z: Vec<f64>,
    /// Impulses of all contacts, `(n, t1, t2)` (N s).
    pub lambda: Vec<[f64; 3]>,
    /// Free velocity `v*` and the velocity of the current impulses (step path only).
    pub vstar: Vec<f64>,
    /// `v = v* + M⁻¹ Jᵀ λ`.
    pub v: Vec<f64>,
    w_rows: Vec<Vec<(usize, Block3)>>,
    data: Vec<ContactData>,
}

/// Whether a 3x3 block is all zero.
fn is_zero(b: &Block3) -> bool {
    b.iter().flatten().all(|x| *x == 0.0)
}

impl Core {
    /// The step's answer: the current velocity and impulses.
    pub fn step_solution(&self, iterations: usize, status: SolveStatus) -> StepSolution {
        StepSolution {
            v: self.v.clone(),
            q: None,
            impulses: self.lambda.clone(),
            bilateral: vec![],
            iterations,
            status,
        }
    }

    /// Builds the LCP of step `p` with `facets` facets: `W_ij = J_i M⁻¹ J_jᵀ` for every pair of
    /// contacts sharing a body, `q_i = J_i v*`, the normal law `(v̂, r_n)` of each contact.
    pub fn setup_step(&mut self, p: &StepProblem<'_>, facets: usize) -> Result<(), SolveError> {
        self.blocks.assemble(p)?;
        self.vstar = p.free_velocity();
        if self.vstar.len() != p.nv() || !self.vstar.iter().all(|x| x.is_finite()) {
            return Err(SolveError::NonFinite { what: "free velocity v*".into() });
        }
        let nv = p.nv();
        let nc = self.blocks.blocks.len();
        self.active.clear();
        self.active.extend((0..nc).filter(|&i| !self.blocks.blocks[i].local.is_inert()));
        // the LCP contacts moving each DOF block, to find the nonzero W_ij
        let mut by_dof: Vec<Vec<usize>> = vec![vec![]; nv + 1];
        for (a, &i) in self.active.iter().enumerate() {
            for d in self.blocks.blocks[i].dof_blocks() {
                by_dof[d].push(a);
            }
        }
        self.w_rows.clear();
        self.w_rows.resize(self.active.len(), vec![]);
        self.data.clear();
        let mut tmp = vec![0.0; nv];
        let mut neighbours = vec![];
        for (b, &j) in self.active.iter().enumerate() {
            let bj = &self.blocks.blocks[j];
            neighbours.clear();
            for d in bj.dof_blocks() {
                neighbours.extend_from_slice(&by_dof[d]);
            }
            neighbours.sort_unstable();
            neighbours.dedup();
            // column block j of W: u_i of M⁻¹ J_jᵀ e_c for each direction c
            let mut cols: Vec<Block3> = vec![[[0.0; 3]; 3]; neighbours.len()];
            for c in 0..3 {
                tmp.fill(0.0);
                let mut e = [0.0; 3];
                e[c] = 1.0;
                bj.apply(e, &mut tmp);
                for (col, &a) in cols.iter_mut().zip(&neighbours) {
                    let u = self.blocks.blocks[self.active[a]].velocity(&tmp);
                    for r in 0..3 {
                        col[r][c] = u[r];
                    }
                }
            }
            for (col, &a) in cols.iter().zip(&neighbours) {
                self.w_rows[a].push((b, *col));
            }
            let l = &bj.local;
            self.data.push(ContactData { mu: l.mu, v_hat: l.v_hat, r_n: l.r_n, q: bj.velocity(&self.vstar) });
        }
        for row in &mut self.w_rows {
            row.sort_unstable_by_key(|(j, _)| *j);
        }
        if let Some(i) =
            self.data.iter().position(|d| !(d.q.iter().chain([&d.mu, &d.v_hat, &d.r_n]).all(|x| x.is_finite())))
        {
            return Err(SolveError::NonFinite { what: format!("velocity or friction of contact {}", self.active[i]) });
        }
        self.lcp.build(facets, &self.w_rows, &self.data);
        self.z.clear();
        self.z.resize(self.lcp.q().len(), 0.0);
        self.lambda.clear();
        self.lambda.resize(nc, [0.0; 3]);
        self.v.clear();
        self.v.extend_from_slice(&self.vstar);
        Ok(())
    }

    /// Builds the LCP of a problem in Delassus form with `facets` facets (`W` as given,
    /// `v̂ = 0`, `r_n = 0`).
    pub fn setup_delassus(&mut self, p: &DelassusProblem, facets: usize) -> Result<(), SolveError> {
        let nc = p.nc();
        self.active.clear();
        self.active.extend((0..nc).filter(|&i| !is_zero(p.diagonal(i))));
        let mut index = vec![usize::MAX; nc];
        for (a, &i) in self.active.iter().enumerate() {
            index[i] = a;
        }
        self.w_rows.clear();
        self.data.clear();
        for &i in &self.active {
            let row: Vec<(usize, Block3)> =
                p.row(i).filter(|(j, _)| index[*j] != usize::MAX).map(|(j, b)| (index[j], *b)).collect();
            if !row.iter().flat_map(|(_, b)| b.iter().flatten()).all(|x| x.is_finite()) {
                return Err(SolveError::NonFinite { what: format!("row {i} of W") });
            }
            self.w_rows.push(row);
            let q = p.q_of(i);
            if !(q.iter().all(|x| x.is_finite()) && p.mu()[i].is_finite()) {
                return Err(SolveError::NonFinite { what: format!("q or mu of contact {i}") });
            }
            self.data.push(ContactData { mu: p.mu()[i], v_hat: 0.0, r_n: 0.0, q });
        }
        self.lcp.build(facets, &self.w_rows, &self.data);
        self.z.clear();
        self.z.resize(self.lcp.q().len(), 0.0);
        self.lambda.clear();
        self.lambda.resize(nc, [0.0; 3]);
        self.v.clear();
        self.vstar.clear();
        Ok(())
    }

    /// Writes the current `z` into `lambda` and, on the step path (`with_velocity`), `v`.
    pub fn update_impulses(&mut self, with_velocity: bool) {
        for (a, &i) in self.active.iter().enumerate() {
            self.lambda[i] = self.lcp.impulse(a, &self.z);
        }
        if with_velocity {
            self.v.copy_from_slice(&self.vstar);
            for (b, lam) in self.blocks.blocks.iter().zip(&self.lambda) {
                b.apply(*lam, &mut self.v);
            }
        }
    }

    /// Whether `z` is finite; the error names the first contact that is not.
    pub fn check_finite(&self, at: &str) -> Result<(), SolveError> {
        let k = self.lcp.k();
        match self.z.iter().position(|x| !x.is_finite()) {
            None => Ok(()),
            Some(p) => {
                Err(SolveError::NonFinite { what: format!("LCP unknowns of contact {} {at}", self.active[p / k]) })
            }
        }
    }
}
