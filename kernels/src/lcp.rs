//! Linear complementarity problems `w = M z + q ≥ 0 ⊥ z ≥ 0` (dense `M`, any sign pattern):
//! Lemke's complementary pivoting method with the lexicographic ratio test, and the min-map
//! residual that certifies a solution.
//!
//! # Lemke's method
//!
//! The augmented problem `w = q + M z + e z0` (covering vector `e = 1`) is written as the tableau
//! `[I | −M | −e | q]` with the `w` variables basic. If `q ≥ 0`, `z = 0` solves the LCP. Otherwise
//! `z0` enters, replacing the `w_r` of the most negative `q_r`, which makes every basic variable
//! nonnegative; then each pivot brings in the complement of the variable that just left, with the
//! minimum ratio test choosing the leaving row, until `z0` leaves (a solution: `z0 = 0`) or the
//! entering column has no positive entry (a secondary ray: Lemke's method stops without a
//! solution; for copositive-plus `M` this certifies that none exists).
//!
//! **Degeneracy.** Ties in the ratio test (several basic variables reaching zero together, common
//! in contact problems with symmetric contacts: the four corners of a box) can make the method
//! cycle. Ties are broken by the lexicographic rule: among the tied rows `i`, the one whose row
//! of `B⁻¹` (the tableau's `w` columns) divided by the entering column's entry `a_i` is
//! lexicographically smallest; the first pivot takes the largest index among the most negative
//! `q_r`. Every row of `[q̄ | B⁻¹]` then stays lexicographically positive, no basis repeats, and
//! the method terminates in finitely many pivots (Cottle, Pang & Stone, *The Linear
//! Complementarity Problem*, 1992, §4.9). A row of `z0` among the tied rows is always preferred
//! (it ends the method). In floating point a degenerate basic variable is a rounding residue
//! (`±1e-17`) rather than 0; basic values below [`ZERO_REL`] `max |q|` count as 0 in the ratio
//! test so that the rule sees the tie, and pivot-column entries below [`PIVOT_EPS`] of the
//! column's largest count as 0 so that no pivot is taken on rounding noise.

/// How one call of [`Lemke::pivot`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pivot {
    /// A pivot was taken; the method goes on.
    Continue,
    /// `z0` left the basis: the basic solution solves the LCP.
    Solved,
    /// The entering column has no positive entry: no solution found (secondary ray).
    Ray,
}

/// Lemke's method on a dense `n × n` LCP, with its tableau kept between calls so that repeated
/// solves of the same size allocate nothing (module doc).
#[derive(Debug, Default, Clone)]
pub struct Lemke {
    n: usize,
    /// Tableau rows, each `2n + 2` wide: `w` columns `0..n`, `z` columns `n..2n`, `z0` at `2n`,
    /// right-hand side at `2n + 1`.
    t: Vec<f64>,
    /// Basic variable of each row (column index in the tableau).
    basis: Vec<usize>,
    /// The variable to enter at the next pivot.
    entering: usize,
    /// Whether the method has stopped (solved or ray).
    done: Option<Pivot>,
    /// Scratch: the entering column.
    col: Vec<f64>,
    /// `max |q|`: basic values below `ZERO_REL` of it are degenerate zeros in the ratio test.
    q_scale: f64,
}

/// Basic values `|q̄_i| ≤ ZERO_REL max |q|` count as 0 in the ratio test (rounding leaves
/// `±1e-17` where a degenerate basic variable is 0; treated as nonzero, the lexicographic rule
/// would not see the tie and the method can cycle).
const ZERO_REL: f64 = 1e-13;

/// Entries of the entering column at most this (relative to the column's largest) are treated
/// as zero in the ratio test.
const PIVOT_EPS: f64 = 1e-11;

impl Lemke {
    /// Starts the method on `w = M z + q` (`m` row-major `n × n`, `q` of length `n`) with the
    /// covering vector `e = 1` and takes its first pivot (`z0` in). Returns [`Pivot::Solved`] at
    /// once when `q ≥ 0` (`z = 0`).
    pub fn start(&mut self, m: &[f64], q: &[f64]) -> Pivot {
        let ones = vec![1.0; q.len()];
        self.start_covering(m, q, &ones)
    }

    /// [`Self::start`] with the covering vector `cover` (`≥ 0`, positive wherever `q < 0`; a row
    /// with `q_i ≥ 0` may have `cover_i = 0`): `w = q + M z + cover z0`. The first pivot takes the
    /// row of the smallest `q_i / cover_i` among `q_i < 0` (the largest index on ties). The
    /// covering vector changes the path, not the solutions: a path that ends on a secondary ray
    /// with one covering vector can reach a solution with another (README of solvers/src/lcp).
    pub fn start_covering(&mut self, m: &[f64], q: &[f64], cover: &[f64]) -> Pivot {
        let n = q.len();
        assert_eq!(m.len(), n * n, "lemke: M must be n x n");
        assert_eq!(cover.len(), n, "lemke: one covering entry per row");
        self.n = n;
        let w = 2 * n + 2;
        self.t.clear();
        self.t.resize(n * w, 0.0);
        for i in 0..n {
            let row = &mut self.t[i * w..(i + 1) * w];
            row[i] = 1.0;
            for j in 0..n {
                row[n + j] = -m[i * n + j];
            }
            row[2 * n] = -cover[i];
            row[2 * n + 1] = q[i];
        }
        self.basis.clear();
        self.basis.extend(0..n);
        self.done = None;
        self.q_scale = q.iter().fold(f64::MIN_POSITIVE, |m, x| m.max(x.abs()));
        // first pivot: the largest index among the smallest q_i / cover_i < 0 (module doc)
        let mut r: Option<(usize, f64)> = None;
        for (i, (&qi, &ci)) in q.iter().zip(cover).enumerate() {
            if qi < 0.0 {
                let ratio = if ci > 0.0 { qi / ci } else { f64::NEG_INFINITY };
                if r.is_none_or(|(_, best)| ratio <= best) {
                    r = Some((i, ratio));
                }
            }
        }
        let Some((r, _)) = r else {
            self.done = Some(Pivot::Solved);
            return Pivot::Solved;
        };
        self.pivot_on(r, 2 * n);
        // w_r left: its complement z_r enters next
        self.entering = n + r;
        Pivot::Continue
    }

    /// One complementary pivot (module doc). After [`Pivot::Solved`] or [`Pivot::Ray`] further
    /// calls return the same.
    pub fn pivot(&mut self) -> Pivot {
        if let Some(d) = self.done {
            return d;
        }
        let (n, w, c) = (self.n, 2 * self.n + 2, self.entering);
        self.col.clear();
        self.col.extend((0..n).map(|i| self.t[i * w + c]));
        let scale = self.col.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let eps = PIVOT_EPS * scale.max(f64::MIN_POSITIVE);
        let mut best: Option<usize> = None;
        for i in 0..n {
            let a = self.col[i];
            if a <= eps {
                continue;
            }
            best = Some(match best {
                None => i,
                Some(b) => {
                    if self.lex_less(i, b) {
                        i
                    } else {
                        b
                    }
                }
            });
        }
        let Some(r) = best else {
            self.done = Some(Pivot::Ray);
            return Pivot::Ray;
        };
        let leaving = self.basis[r];
        self.pivot_on(r, c);
        if leaving == 2 * n {
            self.done = Some(Pivot::Solved);
            return Pivot::Solved;
        }
        self.entering = if leaving < n { leaving + n } else { leaving - n };
        Pivot::Continue
    }

    /// Whether row `i` precedes row `b` in the ratio test: the smaller ratio `q̄ / a` (degenerate
    /// zeros as 0, [`ZERO_REL`]); on a tie (relative `1e-12`) the `z0` row, then the lexicographically smaller `B⁻¹` row over `a`.
    fn lex_less(&self, i: usize, b: usize) -> bool {
        let (n, w) = (self.n, 2 * self.n + 2);
        let (ai, ab) = (self.col[i], self.col[b]);
        let zero = ZERO_REL * self.q_scale;
        let value = |r: usize| {
            let x = self.t[r * w + 2 * n + 1];
            if x <= zero {
                0.0
            } else {
                x
            }
        };
        let (ri, rb) = (value(i) / ai, value(b) / ab);
        let tie = 1e-12 * ri.abs().max(rb.abs()).max(1e-300);
        if (ri - rb).abs() > tie {
            return ri < rb;
        }
        if self.basis[i] == 2 * n {
            return true;
        }
        if self.basis[b] == 2 * n {
            return false;
        }
        for k in 0..n {
            let (x, y) = (self.t[i * w + k] / ai, self.t[b * w + k] / ab);
            if x != y {
                return x < y;
            }
        }
        false
    }

    /// Pivots the tableau on row `r`, column `c` (`c` becomes basic in row `r`).
    fn pivot_on(&mut self, r: usize, c: usize) {
        let w = 2 * self.n + 2;
        let p = self.t[r * w + c];
        let (head, rest) = self.t.split_at_mut(r * w);
        let (prow, tail) = rest.split_at_mut(w);
        for x in prow.iter_mut() {
            *x /= p;
        }
        for row in head.chunks_exact_mut(w).chain(tail.chunks_exact_mut(w)) {
            let a = row[c];
            if a != 0.0 {
                for (x, y) in row.iter_mut().zip(prow.iter()) {
                    *x -= a * y;
                }
                row[c] = 0.0;
            }
        }
        prow[c] = 1.0;
        self.basis[r] = c;
    }

    /// The current basic solution's `z` into `z` (length `n`; nonbasic variables are 0).
    pub fn z(&self, z: &mut Vec<f64>) {
        let (n, w) = (self.n, 2 * self.n + 2);
        z.clear();
        z.resize(n, 0.0);
        for (i, &b) in self.basis.iter().enumerate() {
            if (n..2 * n).contains(&b) {
                z[b - n] = self.t[i * w + 2 * n + 1].max(0.0);
            }
        }
    }

    /// The artificial variable `z0` of the current basis (0 once solved).
    pub fn z0(&self) -> f64 {
        let (n, w) = (self.n, 2 * self.n + 2);
        self.basis.iter().position(|&b| b == 2 * n).map_or(0.0, |i| self.t[i * w + 2 * n + 1])
    }
}

/// `max_i |min(z_i, (M z + q)_i)|`: zero exactly at a solution of the LCP (`m` row-major).
pub fn min_map_linf(m: &[f64], q: &[f64], z: &[f64]) -> f64 {
    let n = q.len();
    (0..n)
        .map(|i| {
            let wi = q[i] + (0..n).map(|j| m[i * n + j] * z[j]).sum::<f64>();
            z[i].min(wi).abs()
        })
        .fold(0.0, f64::max)
}

/// Runs [`Lemke`] to the end (at most `max_pivots` pivots) and writes `z`; returns the final
/// [`Pivot`] ([`Pivot::Continue`]: the budget ran out) and the pivots taken.
pub fn lemke(m: &[f64], q: &[f64], max_pivots: usize, z: &mut Vec<f64>) -> (Pivot, usize) {
    let mut l = Lemke::default();
    let mut state = l.start(m, q);
    let mut pivots = usize::from(state == Pivot::Continue);
    while state == Pivot::Continue && pivots < max_pivots {
        state = l.pivot();
        pivots += 1;
    }
    l.z(z);
    (state, pivots)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64 in [−1, 1).
    fn rand(s: &mut u64) -> f64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        (*s >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// Checks the complementarity conditions one by one (independently of [`min_map_linf`]):
    /// `z ≥ 0`, `w ≥ 0`, `z_i w_i = 0`, to `tol` relative to the data's scale.
    fn assert_solves(m: &[f64], q: &[f64], z: &[f64], tol: f64) {
        let n = q.len();
        let scale = q.iter().fold(1.0f64, |a, x| a.max(x.abs()));
        for i in 0..n {
            let wi: f64 = q[i] + (0..n).map(|j| m[i * n + j] * z[j]).sum::<f64>();
            assert!(z[i] >= 0.0, "z[{i}] = {}", z[i]);
            assert!(wi >= -tol * scale, "w[{i}] = {wi}");
            assert!((z[i] * wi).abs() <= tol * scale * scale, "z w [{i}] = {} {wi}", z[i]);
        }
    }

    /// A random positive definite (non-symmetric) `M = A Aᵀ + S` with `S` skew: Lemke solves
    /// every `q` (a P-matrix LCP has a unique solution). 20 random problems of size 12, each
    /// checked entrywise to 1e-10 (pivots lose a few digits over ~n pivots).
    #[test]
    fn solves_random_positive_definite_problems() {
        let mut s = 0x1234_5678_9abc_def1u64;
        for _ in 0..20 {
            let n = 12;
            let a: Vec<f64> = (0..n * n).map(|_| rand(&mut s)).collect();
            let mut m = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    m[i * n + j] = (0..n).map(|k| a[i * n + k] * a[j * n + k]).sum::<f64>();
                }
                m[i * n + i] += 0.1;
            }
            for i in 0..n {
                for j in 0..i {
                    let k = rand(&mut s);
                    m[i * n + j] += k;
                    m[j * n + i] -= k;
                }
            }
            let q: Vec<f64> = (0..n).map(|_| rand(&mut s)).collect();
            let mut z = vec![];
            let (state, pivots) = lemke(&m, &q, 100 * n, &mut z);
            assert_eq!(state, Pivot::Solved, "after {pivots} pivots");
            assert_solves(&m, &q, &z, 1e-10);
            assert!(min_map_linf(&m, &q, &z) < 1e-10);
        }
    }

    /// `q ≥ 0`: `z = 0` with no pivot.
    #[test]
    fn nonnegative_q_is_solved_by_zero() {
        let mut z = vec![];
        let (state, pivots) = lemke(&[2.0, 1.0, 1.0, 2.0], &[1.0, 0.0], 10, &mut z);
        assert_eq!((state, pivots), (Pivot::Solved, 0));
        assert_eq!(z, vec![0.0, 0.0]);
    }

    /// A degenerate problem: `M = I` (4 × 4) and four equal entries of `q = −1`, every ratio test
    /// a four-way tie. The lexicographic rule reaches `z = 1` in `n` pivots; `z = (1, 1, 1, 1)`
    /// solves it exactly.
    #[test]
    fn degenerate_ties_terminate_at_the_solution() {
        let n = 4;
        let mut m = vec![0.0; n * n];
        for i in 0..n {
            m[i * n + i] = 1.0;
        }
        let q = vec![-1.0; n];
        let mut z = vec![];
        let (state, pivots) = lemke(&m, &q, 50, &mut z);
        assert_eq!(state, Pivot::Solved);
        assert!(pivots <= n + 1, "{pivots} pivots");
        assert!(z.iter().all(|x| (x - 1.0).abs() < 1e-15), "{z:?}");
    }

    /// No solution: `w = −z − 1` can never be nonnegative with `z ≥ 0`; Lemke ends on a ray.
    #[test]
    fn infeasible_problem_ends_on_a_ray() {
        let mut z = vec![];
        let (state, _) = lemke(&[-1.0], &[-1.0], 10, &mut z);
        assert_eq!(state, Pivot::Ray);
    }
}
