//! Projected Gauss–Seidel on a problem in Delassus form `u = W r + q` ([`api::DelassusProblem`],
//! `W` as given): the per-contact local problem and the update of one contact, as Siconos's NSGS
//! does it. pgs sweeps with it; nsn takes one sweep when its line search fails.
//!
//! Visiting contact `i`, `u_i = q_i + Σ_j W_ij r_j` from the current impulses (one block row of
//! `W`), then the local solve ([`Local`]) on the diagonal block, the relaxation `ω` and the
//! projection onto the cone. `v̂ = 0` and `r_n = 0`: the law is
//! `K_μ ∋ r_i ⊥ u_i + μ ‖u_T,i‖ e_n ∈ K_μ*` on `u` itself. For a non-symmetric `W` the `split`
//! local solve minimises over the friction disk with the symmetric part of the tangential block
//! `W_tt` (the disk problem is a quadratic program); its fixed points are still exactly the
//! solutions of the given problem, because `u_i` comes from the given `W` and at a fixed point the
//! local step's optimality condition is maximal dissipation for that `u_i` whatever matrix the
//! step used (pgs README, "Delassus form").

use api::DelassusProblem;
use kernels::cone;
use kernels::contact_local::{Local, LocalProblem};

/// The local problem of contact `i`: its diagonal block `W_ii`, the tangential 2×2 part
/// symmetrised, friction `μ_i`, no normal law (`v̂ = 0`, `r_n = 0`).
pub fn local_problem(p: &DelassusProblem, i: usize) -> LocalProblem {
    let mut w = *p.diagonal(i);
    let s = 0.5 * (w[1][2] + w[2][1]);
    (w[1][2], w[2][1]) = (s, s);
    LocalProblem::new(w, p.mu()[i], 0.0, 0.0)
}

/// Contact `i`'s new impulse after one Gauss–Seidel visit with the others frozen at `r`:
/// `P_K(r_i + ω (x − r_i))` with `x` the `local` solve of `l` (from [`local_problem`]) at
/// `u_i = (W r + q)_i`. Non-finite data give a non-finite impulse (the caller's check).
pub fn gauss_seidel_update(
    p: &DelassusProblem,
    l: &LocalProblem,
    local: Local,
    omega: f64,
    i: usize,
    r: &[[f64; 3]],
) -> [f64; 3] {
    let lam = r[i];
    let target = l.solve(local, p.velocity_of(i, r), lam);
    let relaxed = [0, 1, 2].map(|a| lam[a] + omega * (target[a] - lam[a]));
    cone::project(relaxed, l.mu)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One contact, `W = I`, `q = (−1, 0.5, 0)`, `μ = 0.2`: the exact solution slides,
    /// `r = (1, −0.2, 0)`, `u = (0, 0.3, 0)`; a `split` visit from zero reaches it in one step
    /// (the normal solve is exact, then the disk solve with `W_tt = I`).
    #[test]
    fn one_visit_solves_a_single_contact_with_identity_w() {
        let t: Vec<_> = (0..3).map(|k| (k, k, 1.0)).collect();
        let p = DelassusProblem::from_triplets(&t, vec![-1.0, 0.5, 0.0], vec![0.2]).unwrap();
        let l = local_problem(&p, 0);
        let r = gauss_seidel_update(&p, &l, Local::Split, 1.0, 0, &[[0.0; 3]]);
        let want = [1.0, -0.2, 0.0];
        assert!(r.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-15), "{r:?}");
    }

    #[test]
    fn the_local_problem_symmetrises_the_tangential_block_only() {
        let t = vec![(0, 0, 2.0), (0, 1, 0.3), (1, 0, 0.1), (1, 1, 1.0), (1, 2, 0.4), (2, 1, 0.2), (2, 2, 1.0)];
        let p = DelassusProblem::from_triplets(&t, vec![0.0; 3], vec![0.5]).unwrap();
        let l = local_problem(&p, 0);
        assert_eq!((l.w[0][1], l.w[1][0]), (0.3, 0.1));
        assert!((l.w[1][2] - 0.3).abs() < 1e-15 && (l.w[2][1] - 0.3).abs() < 1e-15);
        assert_eq!(l.mu, 0.5);
    }
}
