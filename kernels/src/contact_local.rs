//! The per-contact (local) problem of Gauss–Seidel and Jacobi-type contact solvers (PGS and any
//! solver built from the same blocks, `toolkit::contact_blocks`) and its two solvers, `split` and
//! `cone`.
//!
//! With every other contact's impulse frozen, contact `i` sees the affine velocity map
//! `u(λ') = u + W (λ' − λ)` (`u = J_i v` at the current iterate, `W = W_ii = J_i M⁻¹ J_iᵀ`) and the
//! law of the step:
//! - normal: `ũ_n = u_n − v̂ + r_n λ_n ≥ 0 ⊥ λ_n ≥ 0` (`(v̂, r_n)` from
//!   `StepProblem::normal_law` of the harness; `r_n = 0` for rigid contact);
//! - friction: `λ ∈ K_μ = {||λ_t|| ≤ μ λ_n}` with maximal dissipation, i.e. the De Saxcé
//!   complementarity `K_μ ∋ λ ⊥ ũ + μ ||u_t|| e_n ∈ K_μ*` with `ũ = (ũ_n, u_t)`.

use crate::cone;

/// Which local solver a sweep applies to each contact (`local = "split" | "cone"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Local {
    /// Exact normal update, then the exact tangential update on the disk `||λ_t|| ≤ μ λ_n`.
    #[default]
    Split,
    /// One De Saxcé fixed-point step: a projection of the 3-vector onto `K_μ`.
    Cone,
}

/// The data of one contact's local problem, fixed during a step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LocalProblem {
    /// Delassus block `W_ii = J_i M⁻¹ J_iᵀ`, rows and columns `(n, t1, t2)` (m/s per N s).
    pub w: [[f64; 3]; 3],
    /// Friction coefficient (≥ 0).
    pub mu: f64,
    /// Normal velocity target `v̂` (m/s).
    pub v_hat: f64,
    /// Normal regularisation `r_n` (m/s per N s), 0 for rigid contact.
    pub r_n: f64,
    /// Step of the `cone` solver, `1 / λ̄` with `λ̄` the Gershgorin bound on the largest
    /// eigenvalue of `W + r_n e_n e_nᵀ`; 0 when that matrix is zero (an inert contact).
    pub rho: f64,
    /// Lower bound on the eigenvalues of the tangential block in the disk solve (see [`disk_qp`]).
    pub floor: f64,
}

impl LocalProblem {
    /// The local problem of a contact with Delassus block `w`, friction `mu` and normal law `(v_hat, r_n)`.
    pub fn new(w: [[f64; 3]; 3], mu: f64, v_hat: f64, r_n: f64) -> Self {
        let mut a = w;
        a[0][0] += r_n;
        let bound = a.iter().map(|row| row.iter().map(|x| x.abs()).sum::<f64>()).fold(0.0, f64::max);
        let rho = if bound > 0.0 { 1.0 / bound } else { 0.0 };
        let floor = (f64::EPSILON * (a[0][0] + a[1][1] + a[2][2])).max(f64::MIN_POSITIVE);
        Self { w, mu, v_hat, r_n, rho, floor }
    }

    /// Whether the contact acts on nothing (`W = 0` and `r_n = 0`): its impulse stays 0.
    pub fn is_inert(&self) -> bool {
        self.rho == 0.0
    }

    /// The velocity of the law, `ũ = (u_n − v̂ + r_n λ_n, u_t1, u_t2)`.
    pub fn law_velocity(&self, u: [f64; 3], lambda: [f64; 3]) -> [f64; 3] {
        [u[0] - self.v_hat + self.r_n * lambda[0], u[1], u[2]]
    }

    /// The natural-map residual vector of the law, `λ − P_K(λ − (ũ + μ ||u_t|| e_n))` (N s).
    pub fn natmap(&self, u: [f64; 3], lambda: [f64; 3]) -> [f64; 3] {
        natmap(lambda, self.law_velocity(u, lambda), self.mu)
    }

    /// The local solve applied by one sweep.
    pub fn solve(&self, local: Local, u: [f64; 3], lambda: [f64; 3]) -> [f64; 3] {
        match local {
            Local::Split => self.split(u, lambda),
            Local::Cone => self.cone(u, lambda),
        }
    }

    /// `split`: the normal impulse solves its 1-D law exactly,
    /// `λ_n' = max(0, λ_n − (u_n − v̂ + r_n λ_n) / (W_nn + r_n))`;
    /// then, with `u_t' = u_t + W_tn (λ_n' − λ_n)`, the tangential impulse is the exact minimiser
    /// of the local tangential energy on the friction disk,
    /// `λ_t' = argmin_{||x|| ≤ μ λ_n'} ½ xᵀ W_tt x − (W_tt λ_t − u_t')ᵀ x`,
    /// whose optimality condition is maximal dissipation for the final tangential velocity
    /// `u_t(x) = u_t' + W_tt (x − λ_t)`: stick (`u_t(x) = 0`) inside the disk, `−u_t(x)` along `x`
    /// on its boundary.
    pub fn split(&self, u: [f64; 3], lambda: [f64; 3]) -> [f64; 3] {
        let w = &self.w;
        let denom = w[0][0] + self.r_n;
        let ln =
            if denom > 0.0 { (lambda[0] - (u[0] - self.v_hat + self.r_n * lambda[0]) / denom).max(0.0) } else { 0.0 };
        let dn = ln - lambda[0];
        let ut = [u[1] + w[1][0] * dn, u[2] + w[2][0] * dn];
        let wtt = [[w[1][1], w[1][2]], [w[2][1], w[2][2]]];
        let b = [
            wtt[0][0] * lambda[1] + wtt[0][1] * lambda[2] - ut[0],
            wtt[1][0] * lambda[1] + wtt[1][1] * lambda[2] - ut[1],
        ];
        let lt = disk_qp(wtt, b, self.mu * ln, self.floor);
        [ln, lt[0], lt[1]]
    }

    /// `cone`: one step of the De Saxcé fixed point,
    /// `λ' = P_{K_μ}(λ − ρ (ũ + μ ||u_t|| e_n))`, `ũ = (u_n − v̂ + r_n λ_n, u_t)`, with the step
    /// `ρ = 1/λ̄` ([`LocalProblem::rho`]). Its fixed points are exactly the solutions of the local
    /// law (any `ρ > 0`); it is not an exact local solve, so contacts need more sweeps than `split`.
    pub fn cone(&self, u: [f64; 3], lambda: [f64; 3]) -> [f64; 3] {
        let s = cone::de_saxce(self.law_velocity(u, lambda), self.mu);
        let r = self.rho;
        cone::project([lambda[0] - r * s[0], lambda[1] - r * s[1], lambda[2] - r * s[2]], self.mu)
    }
}

/// The natural-map residual vector `λ − P_{K_μ}(λ − (u + μ ||u_t|| e_n))` (Siconos' natural map; docs/metrics.md).
pub fn natmap(lambda: [f64; 3], u: [f64; 3], mu: f64) -> [f64; 3] {
    let s = cone::de_saxce(u, mu);
    let p = cone::project([lambda[0] - s[0], lambda[1] - s[1], lambda[2] - s[2]], mu);
    [lambda[0] - p[0], lambda[1] - p[1], lambda[2] - p[2]]
}

/// The natural-map residual vector of Anitescu's convex relaxation (the CCP) at one contact,
/// `λ − P_{K_μ}(λ − u)`: [`natmap`] without the De Saxcé term.
pub fn ccp_natmap(lambda: [f64; 3], u: [f64; 3], mu: f64) -> [f64; 3] {
    let p = cone::project([lambda[0] - u[0], lambda[1] - u[1], lambda[2] - u[2]], mu);
    [lambda[0] - p[0], lambda[1] - p[1], lambda[2] - p[2]]
}

/// The minimiser of `½ xᵀ A x − bᵀ x` over the disk `||x|| ≤ r`, for a symmetric positive
/// semi-definite 2×2 `A` (the trust-region subproblem, solved exactly).
///
/// In the eigenbasis `A = Q diag(d) Qᵀ`, `x(s) = Q diag(1/(d + s)) Qᵀ b`: `s = 0` if `x(0)` lies in
/// the disk, else the root `s > 0` of `1/r − 1/||x(s)|| = 0`, found by Newton's method, which
/// converges monotonically from `s = 0` because that function is increasing and concave
/// (Moré & Sorensen 1983); it is exact in one step when `A` is a multiple of the identity.
/// Eigenvalues are raised to at least `floor > 0`, so a direction the contact cannot move in
/// (`d = 0`, and then its component of `b` is 0 too) gets `x = 0` there.
pub fn disk_qp(a: [[f64; 2]; 2], b: [f64; 2], r: f64, floor: f64) -> [f64; 2] {
    if r.is_nan() || r <= 0.0 {
        return [0.0, 0.0];
    }
    // Q = [[c, -s], [s, c]]; an exactly diagonal A keeps Q = I (no rounding from the rotation).
    let (s, c) = if a[0][1] == 0.0 { (0.0, 1.0) } else { (0.5 * a[0][1].atan2(0.5 * (a[0][0] - a[1][1]))).sin_cos() };
    let mean = 0.5 * (a[0][0] + a[1][1]);
    let rad = (0.5 * (a[0][0] - a[1][1])).hypot(a[0][1]);
    let d = if a[0][1] == 0.0 { [a[0][0], a[1][1]] } else { [mean + rad, mean - rad] };
    let d = [d[0].max(floor), d[1].max(floor)];
    let beta = [c * b[0] + s * b[1], -s * b[0] + c * b[1]];
    let x_at = |shift: f64| [beta[0] / (d[0] + shift), beta[1] / (d[1] + shift)];
    let mut shift = 0.0;
    let mut y = x_at(shift);
    let mut n = y[0].hypot(y[1]);
    if n > r {
        for _ in 0..60 {
            // d||x||/ds = −Σ β_i² / (d_i + s)³ / ||x||; Newton step on 1/r − 1/||x(s)||.
            let g = beta[0] * beta[0] / (d[0] + shift).powi(3) + beta[1] * beta[1] / (d[1] + shift).powi(3);
            shift += (1.0 / r - 1.0 / n) * n * n * n / g;
            y = x_at(shift);
            n = y[0].hypot(y[1]);
            if (n - r).abs() <= 4.0 * f64::EPSILON * r {
                break;
            }
        }
        // Remove the last rounding error so that ||x|| ≤ r holds to machine precision.
        y = [y[0] * r / n, y[1] * r / n];
    }
    [c * y[0] - s * y[1], s * y[0] + c * y[1]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Deterministic pseudo-random numbers in [-1, 1) (xorshift).
    fn rng(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        }
    }

    /// KKT conditions of the disk problem: feasibility; stationarity `A x − b = −s x` with `s ≥ 0`,
    /// and `s = 0` in the interior.
    #[rstest]
    fn disk_qp_satisfies_kkt(#[values(1, 2, 3)] seed: u64) {
        let mut next = rng(seed);
        for _ in 0..2000 {
            let l = [[next(), 0.0], [next(), next()]];
            let mut a = [[0.0; 2]; 2];
            for i in 0..2 {
                for j in 0..2 {
                    a[i][j] = (0..2).map(|k| l[i][k] * l[j][k]).sum::<f64>() + if i == j { 1e-3 } else { 0.0 };
                }
            }
            let b = [3.0 * next(), 3.0 * next()];
            let r = next().abs();
            let x = disk_qp(a, b, r, 1e-300);
            let nx = x[0].hypot(x[1]);
            assert!(nx <= r * (1.0 + 1e-14), "infeasible {nx} > {r}");
            let g = [a[0][0] * x[0] + a[0][1] * x[1] - b[0], a[1][0] * x[0] + a[1][1] * x[1] - b[1]];
            let scale = 1.0 + b[0].hypot(b[1]);
            if nx < r * (1.0 - 1e-9) {
                assert!(g[0].hypot(g[1]) <= 1e-9 * scale, "interior point is not stationary: {g:?}");
            } else {
                // g = −s x, s ≥ 0: g is anti-parallel to x.
                let cross = g[0] * x[1] - g[1] * x[0];
                let dot = g[0] * x[0] + g[1] * x[1];
                assert!(cross.abs() <= 1e-9 * scale * (1.0 + nx), "gradient not normal to the disk");
                assert!(dot <= 1e-9 * scale * (1.0 + nx), "boundary point with outward gradient");
            }
        }
    }

    #[test]
    fn disk_qp_isotropic_is_the_radial_projection() {
        // A = a I: x = P_disk(b / a).
        let x = disk_qp([[2.0, 0.0], [0.0, 2.0]], [6.0, 8.0], 1.0, 1e-300);
        assert!((x[0] - 0.6).abs() < 1e-15 && (x[1] - 0.8).abs() < 1e-15, "{x:?}");
        let x = disk_qp([[2.0, 0.0], [0.0, 2.0]], [0.6, 0.8], 1.0, 1e-300);
        assert!((x[0] - 0.3).abs() < 1e-15 && (x[1] - 0.4).abs() < 1e-15, "{x:?}");
    }

    #[test]
    fn disk_qp_locked_direction_gets_zero() {
        // A direction with no stiffness and no load (a locked DOF) stays at 0.
        let x = disk_qp([[0.0, 0.0], [0.0, 3.0]], [0.0, 30.0], 2.0, 1e-15);
        assert_eq!(x, [0.0, 2.0]);
    }

    /// Both local solvers have the same fixed points: the solution of the local law.
    #[rstest]
    fn local_solvers_reach_zero_natmap(
        #[values(Local::Split, Local::Cone)] local: Local,
        #[values(0.0, 0.3, 1.2)] mu: f64,
    ) {
        let mut next = rng(7);
        for _ in 0..200 {
            let l = [[1.0 + next().abs(), 0.0, 0.0], [next(), 1.0 + next().abs(), 0.0], [next(), next(), 1.0]];
            let mut w = [[0.0; 3]; 3];
            for i in 0..3 {
                for j in 0..3 {
                    w[i][j] = (0..3).map(|k| l[i][k] * l[j][k]).sum();
                }
            }
            let r_n = if next() > 0.0 { 0.0 } else { next().abs() };
            let p = LocalProblem::new(w, mu, next(), r_n);
            let u0 = [next(), next(), next()];
            // u(λ) = u0 + W λ for the local problem alone, iterate from λ = 0.
            let u_of = |lam: [f64; 3]| {
                let mut u = u0;
                for i in 0..3 {
                    u[i] += (0..3).map(|j| w[i][j] * lam[j]).sum::<f64>();
                }
                u
            };
            let mut lam = [0.0; 3];
            for _ in 0..5000 {
                lam = p.solve(local, u_of(lam), lam);
            }
            let r = p.natmap(u_of(lam), lam);
            let scale = 1.0 + u0.iter().map(|x| x.abs()).sum::<f64>();
            assert!(r.iter().all(|x| x.abs() <= 1e-9 * scale), "{local:?} mu {mu}: residual {r:?}");
        }
    }
}
