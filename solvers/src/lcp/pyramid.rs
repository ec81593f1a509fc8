//! [`PyramidLcp`]: the Stewart–Trinkle / Anitescu–Potra LCP of one step (or one FCLIB problem)
//! with a `d`-facet friction pyramid, built from a Delassus operator in block rows.
//!
//! Per contact `c` the unknowns are `z_c = (λ_n, β_1 … β_d, σ)` (`k = d + 2` of them): the normal
//! impulse, the impulses along the tangent directions `d_m = cos θ_m t1 + sin θ_m t2`,
//! `θ_m = 2π m / d` (the first along `t1`), and `σ`, which at a solution is the sliding speed
//! `max_m (−d_mᵀ u_t)`. With `u = Σ_j W_cj λ_j + q_c` and `λ_c = E z_c`
//! (`E = [e_n | (0, d_1) … (0, d_d) | 0]`), the complementarity rows are (Anitescu & Potra 1997,
//! Eq. 9; Stewart & Trinkle 1996, Eq. 20 at the velocity level)
//!
//! ```text
//!   u_n − v̂ + r_n λ_n         ≥ 0  ⊥  λ_n ≥ 0      (normal law; rigid: r_n = 0)
//!   d_mᵀ u_t + σ              ≥ 0  ⊥  β_m ≥ 0      (m = 1 … d: friction opposes sliding)
//!   μ λ_n − Σ_m β_m           ≥ 0  ⊥  σ   ≥ 0      (the pyramid: Σ β ≤ μ λ_n)
//! ```
//!
//! so `M_cj = Eᵀ W_cj E` on the first `d + 1` rows, plus on the diagonal block `r_n` at `(0, 0)`,
//! the `+1` column of `σ` in the friction rows and the row `(μ, −1 … −1, 0)`; `q_c = Eᵀ q_c`
//! (with `−v̂` on the normal row) and `0` on the last row. The friction set
//! `{Σ β_m d_m : β ≥ 0, Σ β ≤ μ λ_n}` is the regular `d`-gon inscribed in the Coulomb disk of
//! radius `μ λ_n`: its support in a direction at angle `ψ` from the nearest `d_m` is
//! `μ λ_n cos ψ` (`ψ ≤ π / d`), so a contact sliding mid-way between two facet directions feels
//! the friction `μ cos(π / d)` instead of `μ` (README, "Anisotropy").

use api::delassus::Block3;
use kernels::lcp::Lemke;

/// The pyramid LCP in block-sparse form (module doc).
#[derive(Debug, Default, Clone)]
pub struct PyramidLcp {
    /// Facets `d`.
    d: usize,
    /// `(cos θ_m, sin θ_m)` of the facet directions.
    dirs: Vec<[f64; 2]>,
    /// Per contact: `(j, offset into blocks)` of its nonzero blocks `M_cj`, diagonal included.
    rows: Vec<Vec<(usize, usize)>>,
    /// `k × k` blocks, row-major, one after another.
    blocks: Vec<f64>,
    /// `q`, `k` per contact.
    q: Vec<f64>,
    /// Friction coefficient per contact.
    mu: Vec<f64>,
}

/// One contact's data for [`PyramidLcp::build`].
#[derive(Debug, Clone, Copy)]
pub struct ContactData {
    /// Friction coefficient.
    pub mu: f64,
    /// Normal velocity target `v̂` (m/s).
    pub v_hat: f64,
    /// Normal regularisation `r_n` (m/s per N s).
    pub r_n: f64,
    /// `q_c`: the contact velocity with every impulse zero (m/s).
    pub q: [f64; 3],
}

impl PyramidLcp {
    /// Variables per contact, `d + 2`.
    pub fn k(&self) -> usize {
        self.d + 2
    }

    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.rows.len()
    }

    /// Builds the LCP of `contacts` with the block rows `w_rows` of the Delassus operator
    /// (`w_rows[c]`: the nonzero `(j, W_cj)`, `W_cc` among them) and `d` facets.
    pub fn build(&mut self, d: usize, w_rows: &[Vec<(usize, Block3)>], contacts: &[ContactData]) {
        assert_eq!(w_rows.len(), contacts.len(), "one block row per contact");
        self.d = d;
        self.dirs.clear();
        self.dirs.extend(kernels::pyramid::directions(d));
        let k = d + 2;
        self.rows.clear();
        self.blocks.clear();
        self.q.clear();
        self.mu.clear();
        self.mu.extend(contacts.iter().map(|c| c.mu));
        for (c, (row, data)) in w_rows.iter().zip(contacts).enumerate() {
            let mut out = Vec::with_capacity(row.len());
            for (j, w) in row {
                let off = self.blocks.len();
                self.blocks.resize(off + k * k, 0.0);
                let b = &mut self.blocks[off..off + k * k];
                // Eᵀ W E on the first d + 1 rows and columns (E's column 0 is e_n, m ≥ 1 is (0, d_m))
                let e = |a: usize| -> [f64; 3] {
                    if a == 0 {
                        [1.0, 0.0, 0.0]
                    } else {
                        let [cs, sn] = self.dirs[a - 1];
                        [0.0, cs, sn]
                    }
                };
                for a in 0..=d {
                    let ea = e(a);
                    for bcol in 0..=d {
                        let eb = e(bcol);
                        let mut s = 0.0;
                        for (r, ear) in ea.iter().enumerate() {
                            if *ear != 0.0 {
                                s += ear * (0..3).map(|cc| w[r][cc] * eb[cc]).sum::<f64>();
                            }
                        }
                        b[a * k + bcol] = s;
                    }
                }
                if *j == c {
                    b[0] += data.r_n;
                    for a in 1..=d {
                        b[a * k + k - 1] = 1.0;
                        b[(k - 1) * k + a] = -1.0;
                    }
                    b[(k - 1) * k] = data.mu;
                }
                out.push((*j, off));
            }
            self.rows.push(out);
            self.q.push(data.q[0] - data.v_hat);
            for [cs, sn] in &self.dirs {
                self.q.push(cs * data.q[1] + sn * data.q[2]);
            }
            self.q.push(0.0);
        }
    }

    /// A covering vector of Lemke's method for this LCP: 1 on the normal and friction rows and
    /// `sigma` on the `σ` rows (their `q` is 0, so 0 is allowed there). Neither choice avoids
    /// every secondary ray on solvable problems, so the solvers try `sigma = 0`, then 1 (README
    /// "Choices").
    pub fn covering(&self, sigma: f64, out: &mut Vec<f64>) {
        let k = self.k();
        out.clear();
        out.extend((0..self.q.len()).map(|i| if i % k == k - 1 { sigma } else { 1.0 }));
    }

    /// `q` of the whole LCP.
    pub fn q(&self) -> &[f64] {
        &self.q
    }

    /// The dense `M` (row-major, `n × n` with `n = k nc`) into `m`.
    pub fn dense(&self, m: &mut Vec<f64>) {
        let (k, n) = (self.k(), self.q.len());
        m.clear();
        m.resize(n * n, 0.0);
        for (c, row) in self.rows.iter().enumerate() {
            for &(j, off) in row {
                for a in 0..k {
                    let dst = (c * k + a) * n + j * k;
                    m[dst..dst + k].copy_from_slice(&self.blocks[off + a * k..off + (a + 1) * k]);
                }
            }
        }
    }

    /// `w_c = (M z + q)_c` of contact `c`, into `w` (length `k`).
    fn w_of(&self, c: usize, z: &[f64], w: &mut [f64]) {
        let k = self.k();
        w.copy_from_slice(&self.q[c * k..(c + 1) * k]);
        for &(j, off) in &self.rows[c] {
            let zj = &z[j * k..(j + 1) * k];
            for (a, wa) in w.iter_mut().enumerate() {
                *wa += self.blocks[off + a * k..off + (a + 1) * k].iter().zip(zj).map(|(x, y)| x * y).sum::<f64>();
            }
        }
    }

    /// `max_i |min(z_i, (M z + q)_i)|` over the whole LCP: zero exactly at a solution.
    pub fn min_map_linf(&self, z: &[f64]) -> f64 {
        let k = self.k();
        let mut w = vec![0.0; k];
        let mut out = 0.0f64;
        for c in 0..self.nc() {
            self.w_of(c, z, &mut w);
            for (zi, wi) in z[c * k..(c + 1) * k].iter().zip(&w) {
                out = out.max(zi.min(*wi).abs());
            }
        }
        out
    }

    /// Contact `c`'s impulse `(λ_n, Σ β_m d_m)` in its frame `(n, t1, t2)`.
    pub fn impulse(&self, c: usize, z: &[f64]) -> [f64; 3] {
        let k = self.k();
        let zc = &z[c * k..(c + 1) * k];
        let mut l = [zc[0], 0.0, 0.0];
        for (b, [cs, sn]) in zc[1..=self.d].iter().zip(&self.dirs) {
            l[1] += b * cs;
            l[2] += b * sn;
        }
        l
    }

    /// A starting `z_c` for an impulse `lambda` of contact `c` (a warm start): `λ_n`, and `λ_t`
    /// written on the two facet directions that bracket it (nonnegative coefficients), clipped to
    /// the pyramid `Σ β ≤ μ λ_n` with the contact's `μ`; `σ = 0`.
    pub fn warm(&self, c: usize, lambda: [f64; 3], z: &mut [f64]) {
        let k = self.k();
        let zc = &mut z[c * k..(c + 1) * k];
        zc.fill(0.0);
        zc[0] = lambda[0].max(0.0);
        let (t1, t2) = (lambda[1], lambda[2]);
        if t1 == 0.0 && t2 == 0.0 {
            return;
        }
        let sector = 2.0 * std::f64::consts::PI / self.d as f64;
        let angle = t2.atan2(t1).rem_euclid(2.0 * std::f64::consts::PI);
        let m = ((angle / sector).floor() as usize).min(self.d - 1);
        let (a, b) = (self.dirs[m], self.dirs[(m + 1) % self.d]);
        // solve β_a a + β_b b = λ_t (a, b independent: adjacent directions of a d ≥ 3 polygon)
        let det = a[0] * b[1] - a[1] * b[0];
        let (ba, bb) = (((t1 * b[1] - t2 * b[0]) / det).max(0.0), ((a[0] * t2 - a[1] * t1) / det).max(0.0));
        let mu = self.mu[c];
        let s = if ba + bb > mu * zc[0] && ba + bb > 0.0 { mu * zc[0] / (ba + bb) } else { 1.0 };
        zc[1 + m] = ba * s;
        zc[1 + (m + 1) % self.d] = bb * s;
    }

    /// One block Gauss–Seidel sweep: each contact's `k`-variable LCP with the others frozen,
    /// solved exactly by Lemke's method (`lemke`, `m`, `q`, `w`, `zc`: scratch). Returns the
    /// largest change of any entry of `z` and the largest entry, or `None` when a contact's
    /// sub-LCP has no solution (a secondary ray: only when its diagonal block is degenerate).
    pub fn sweep(&self, z: &mut [f64], scratch: &mut SweepScratch) -> Option<(f64, f64)> {
        let k = self.k();
        let (mut change, mut size) = (0.0f64, 0.0f64);
        for c in 0..self.nc() {
            // q_local = q_c + Σ_{j ≠ c} M_cj z_j
            scratch.q.clear();
            scratch.q.extend_from_slice(&self.q[c * k..(c + 1) * k]);
            let mut diag = None;
            for &(j, off) in &self.rows[c] {
                if j == c {
                    diag = Some(off);
                    continue;
                }
                let zj = &z[j * k..(j + 1) * k];
                for (a, qa) in scratch.q.iter_mut().enumerate() {
                    *qa += self.blocks[off + a * k..off + (a + 1) * k].iter().zip(zj).map(|(x, y)| x * y).sum::<f64>();
                }
            }
            let off = diag?;
            // the two covering vectors of `covering`, the σ rows' 0 first (README "Choices")
            let mut state = kernels::lcp::Pivot::Ray;
            for sigma in [0.0, 1.0] {
                scratch.cover.clear();
                scratch.cover.extend((0..k).map(|i| if i == k - 1 { sigma } else { 1.0 }));
                state = scratch.lemke.start_covering(&self.blocks[off..off + k * k], &scratch.q, &scratch.cover);
                // a k-variable LCP: Lemke needs at most 2^k pivots; 50 k bounds it generously
                let mut pivots = 0;
                while state == kernels::lcp::Pivot::Continue && pivots < 50 * k {
                    state = scratch.lemke.pivot();
                    pivots += 1;
                }
                if state == kernels::lcp::Pivot::Solved {
                    break;
                }
            }
            if state != kernels::lcp::Pivot::Solved {
                return None;
            }
            scratch.lemke.z(&mut scratch.zc);
            for (old, new) in z[c * k..(c + 1) * k].iter_mut().zip(&scratch.zc) {
                change = change.max((new - *old).abs());
                size = size.max(new.abs());
                *old = *new;
            }
        }
        Some((change, size))
    }
}

/// Scratch of [`PyramidLcp::sweep`], kept by the solver between steps.
#[derive(Debug, Default, Clone)]
pub struct SweepScratch {
    lemke: Lemke,
    q: Vec<f64>,
    zc: Vec<f64>,
    cover: Vec<f64>,
}
