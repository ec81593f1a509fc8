//! The Coulomb friction cone `K_mu = { r = (r_n, r_t) : ||r_t|| <= mu r_n }` in FCLIB order
//! `(n, t1, t2)`, its dual `K_mu* = K_{1/mu}`, and the De Saxcé shift used by the natural map.
//!
//! The closed form (identical in FCLIB/Siconos and ContactBench; docs/metrics.md):
//! if `mu ||x_t|| <= -x_n` the projection is 0; if `||x_t|| <= mu x_n` it is `x`; otherwise
//! `x_n' = (mu ||x_t|| + x_n) / (mu^2 + 1)`, `x_t' = mu x_n' x_t / ||x_t||`.

/// Euclidean projection of `x = (n, t1, t2)` onto the Coulomb cone of friction coefficient `mu >= 0`.
///
/// `mu = 0` gives the half-line `{(r_n, 0, 0): r_n >= 0}`.
#[inline]
pub fn project(x: [f64; 3], mu: f64) -> [f64; 3] {
    debug_assert!(mu >= 0.0, "friction coefficient must be non-negative");
    let (xn, t1, t2) = (x[0], x[1], x[2]);
    let nt = (t1 * t1 + t2 * t2).sqrt();
    if nt == 0.0 {
        return [xn.max(0.0), 0.0, 0.0]; // on the axis: clamp the normal part (also covers mu = 0)
    }
    if nt <= mu * xn {
        return x; // inside the cone (includes the apex case x = 0)
    }
    if mu * nt <= -xn {
        return [0.0, 0.0, 0.0]; // inside the polar cone
    }
    let rn = (mu * nt + xn) / (mu * mu + 1.0);
    let s = mu * rn / nt;
    [rn, s * t1, s * t2]
}

/// Euclidean projection onto the dual cone `K_mu* = { (u_n, u_t) : mu ||u_t|| <= u_n }`.
///
/// For `mu = 0` the dual cone is the half-space `u_n >= 0`.
#[inline]
pub fn project_dual(x: [f64; 3], mu: f64) -> [f64; 3] {
    if mu == 0.0 {
        return [x[0].max(0.0), x[1], x[2]];
    }
    project(x, 1.0 / mu)
}

/// The De Saxcé shifted velocity `u_hat = u + (mu ||u_t||, 0, 0)` (FCLIB convention, normal first).
#[inline]
pub fn de_saxce(u: [f64; 3], mu: f64) -> [f64; 3] {
    [u[0] + mu * (u[1] * u[1] + u[2] * u[2]).sqrt(), u[1], u[2]]
}

/// How far `r` lies outside the cone: `max(||r_t|| - mu r_n, -r_n, 0)` (same units as `r`).
///
/// NaN when `r` or `mu` holds a NaN, or when the tangential excess is undefined (`∞ - ∞`, or
/// `0 · ∞` with `mu = 0` and an infinite `r_n`): a grader must not read an undefined impulse as
/// one inside the cone, which `f64::max` would do (it drops a NaN operand).
#[inline]
pub fn violation(r: [f64; 3], mu: f64) -> f64 {
    let nt = (r[1] * r[1] + r[2] * r[2]).sqrt();
    let tangential = nt - mu * r[0]; // NaN whenever any input is
    if tangential.is_nan() {
        return f64::NAN;
    }
    tangential.max(-r[0]).max(0.0)
}

/// The generalized Jacobian `dP/dx` of [`project`] at `x` (symmetric positive semi-definite,
/// rows and columns `(n, t1, t2)`), taken in the region [`project`] selects (one-sided at kinks).
///
/// Inside the cone it is `I`, inside the polar cone `0`; on the slip branch, with `s = ||x_t||`,
/// `t = x_t / s` and `P = I - t t^T` (Lee et al. 2025, Eq. 23 with the off-diagonal blocks the
/// right way round):
/// `1/(1+mu^2) [[1, mu t^T], [mu t, mu^2 t t^T + (mu^2 + mu x_n / s) P]]`.
pub fn project_jacobian(x: [f64; 3], mu: f64) -> [[f64; 3]; 3] {
    let (xn, t1, t2) = (x[0], x[1], x[2]);
    let nt = (t1 * t1 + t2 * t2).sqrt();
    let zero = [[0.0; 3]; 3];
    let eye = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    if nt == 0.0 {
        return match (xn > 0.0, mu > 0.0) {
            (true, true) => eye,
            (true, false) => [[1.0, 0.0, 0.0], [0.0; 3], [0.0; 3]],
            (false, _) => zero,
        };
    }
    if nt <= mu * xn {
        return eye;
    }
    if mu * nt <= -xn {
        return zero;
    }
    let k = 1.0 / (1.0 + mu * mu);
    let t = [t1 / nt, t2 / nt];
    let c = mu * mu + mu * xn / nt; // coefficient of P
    let mut j = [[0.0; 3]; 3];
    j[0][0] = k;
    for a in 0..2 {
        j[0][a + 1] = k * mu * t[a];
        j[a + 1][0] = k * mu * t[a];
        for b in 0..2 {
            let p = if a == b { 1.0 } else { 0.0 } - t[a] * t[b];
            j[a + 1][b + 1] = k * (mu * mu * t[a] * t[b] + c * p);
        }
    }
    j
}

/// The "strict" (nested) operator of Lee et al. 2025, Eq. 17: clamp the normal part,
/// `r_n = max(x_n, 0)`, then project the tangential part onto the disk of radius `mu r_n`. It is
/// not the Euclidean projection onto the cone; with unit weight it solves the per-contact
/// Signorini–Coulomb relation exactly (their Proposition 2).
#[inline]
pub fn project_strict(x: [f64; 3], mu: f64) -> [f64; 3] {
    let rn = x[0].max(0.0);
    let nt = (x[1] * x[1] + x[2] * x[2]).sqrt();
    let radius = mu * rn;
    if nt <= radius {
        [rn, x[1], x[2]]
    } else {
        let s = radius / nt;
        [rn, s * x[1], s * x[2]]
    }
}

/// The generalized Jacobian of [`project_strict`] (not symmetric on the slip branch), rows and
/// columns `(n, t1, t2)`, one-sided at kinks like [`project_strict`]'s branches.
pub fn project_strict_jacobian(x: [f64; 3], mu: f64) -> [[f64; 3]; 3] {
    let mut j = [[0.0; 3]; 3];
    let dn = if x[0] > 0.0 { 1.0 } else { 0.0 };
    j[0][0] = dn;
    let rn = x[0].max(0.0);
    let nt = (x[1] * x[1] + x[2] * x[2]).sqrt();
    if nt <= mu * rn {
        j[1][1] = 1.0;
        j[2][2] = 1.0;
        return j;
    }
    let t = [x[1] / nt, x[2] / nt];
    let s = mu * rn / nt;
    for a in 0..2 {
        j[a + 1][0] = mu * dn * t[a];
        for b in 0..2 {
            let p = if a == b { 1.0 } else { 0.0 } - t[a] * t[b];
            j[a + 1][b + 1] = s * p;
        }
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    }
    fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
        [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
    }
    /// Deterministic pseudo-random points (no rand dependency needed for a property sweep).
    fn samples() -> Vec<[f64; 3]> {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0
        };
        (0..2000).map(|_| [next(), next(), next()]).collect()
    }

    #[test]
    fn clarabel_reference_point() {
        // clarabel 0.11 on min ½|x|² − (1, 2, 0)·x over the cone, mu = 0.5 -> x = (1.6, 0.8, 0).
        // (there the cone is ||x_t|| <= mu x_n with x = (n, t1, t2) = proj of (1, 2, 0))
        let p = project([1.0, 2.0, 0.0], 0.5);
        assert!((p[0] - 1.6).abs() < 1e-15 && (p[1] - 0.8).abs() < 1e-15 && p[2] == 0.0);
    }

    #[rstest]
    fn projection_properties(#[values(0.0, 0.3, 1.0, 2.5)] mu: f64) {
        for x in samples() {
            let p = project(x, mu);
            // in the cone
            assert!(violation(p, mu) <= 1e-14 * (1.0 + p[0].abs()), "{x:?} -> {p:?}");
            // idempotent
            let pp = project(p, mu);
            assert!(sub(pp, p).iter().all(|d| d.abs() <= 1e-14));
            // Moreau: x - p lies in the polar cone (= -dual) and is orthogonal to p
            let r = sub(x, p);
            assert!(dot(r, p).abs() <= 1e-13, "orthogonality {x:?}");
            let minus_r = [-r[0], -r[1], -r[2]];
            let d = project_dual(minus_r, mu);
            assert!(sub(d, minus_r).iter().all(|e| e.abs() <= 1e-12), "polar {x:?} mu {mu}");
        }
    }

    #[rstest]
    fn dual_projection_lands_in_dual_cone(#[values(0.0, 0.5, 2.0)] mu: f64) {
        for x in samples() {
            let d = project_dual(x, mu);
            let nt = (d[1] * d[1] + d[2] * d[2]).sqrt();
            assert!(mu * nt <= d[0] + 1e-13);
        }
    }

    #[rstest]
    #[case([-1.0, 0.0, 0.0], [0.0, 0.0, 0.0])]
    #[case([2.0, 0.0, 0.0], [2.0, 0.0, 0.0])]
    #[case([2.0, 3.0, -4.0], [2.0, 0.0, 0.0])]
    #[case([-2.0, 3.0, -4.0], [0.0, 0.0, 0.0])]
    fn frictionless_cone_is_the_normal_half_line(#[case] x: [f64; 3], #[case] p: [f64; 3]) {
        assert_eq!(project(x, 0.0), p);
    }

    #[test]
    fn de_saxce_shift() {
        assert_eq!(de_saxce([0.5, 3.0, 4.0], 0.2), [1.5, 3.0, 4.0]);
    }

    /// The branch each operator takes at `x`, decided from the geometry alone (strict
    /// inequalities, so a point on a kink is in no branch): for the projection `1` inside the
    /// cone, `2` inside the polar cone, `3` the slip branch (`0` on a kink); for the strict
    /// operator the sign of `x_n` and whether `x_t` lies strictly inside the disk of radius
    /// `mu max(x_n, 0)`.
    fn branches(x: [f64; 3], mu: f64) -> (u8, (bool, bool)) {
        let nt = (x[1] * x[1] + x[2] * x[2]).sqrt();
        let prox = if nt < mu * x[0] {
            1
        } else if mu * nt < -x[0] {
            2
        } else if nt > mu * x[0] && mu * nt > -x[0] {
            3
        } else {
            0
        };
        (prox, (x[0] > 0.0, nt < mu * x[0].max(0.0)))
    }

    /// Central differences of the projections match their Jacobians wherever the stencil stays in
    /// one branch of each operator (step `h = 1e-7`: truncation `O(h^2 / ||x_t||^2)` and
    /// round-off `O(eps / h)`, both below `1e-8` on these points, far inside the `1e-6`
    /// tolerance). Every branch is reached: the test counts the points checked on the slip
    /// branches, whose Jacobians vary with `x`.
    #[rstest]
    fn jacobians_match_finite_differences(#[values(0.0, 0.3, 1.0, 2.5)] mu: f64) {
        let h = 1e-7;
        let (mut prox_seen, mut strict_slip_seen) = ([0usize; 4], 0usize);
        for x in samples().into_iter().take(500) {
            let (jp, js) = (project_jacobian(x, mu), project_strict_jacobian(x, mu));
            let b = branches(x, mu);
            for k in 0..3 {
                let (mut xp, mut xm) = (x, x);
                xp[k] += h;
                xm[k] -= h;
                if b.0 == 0 || branches(xp, mu) != b || branches(xm, mu) != b {
                    continue; // the stencil crosses a kink of either operator
                }
                prox_seen[usize::from(b.0)] += 1;
                strict_slip_seen += usize::from(!b.1 .1);
                let (pp, pm) = (project(xp, mu), project(xm, mu));
                let (sp, sm) = (project_strict(xp, mu), project_strict(xm, mu));
                for r in 0..3 {
                    let fd = (pp[r] - pm[r]) / (2.0 * h);
                    assert!((fd - jp[r][k]).abs() < 1e-6, "prox {x:?} mu {mu} ({r},{k}): {fd} vs {}", jp[r][k]);
                    let fd = (sp[r] - sm[r]) / (2.0 * h);
                    assert!((fd - js[r][k]).abs() < 1e-6, "strict {x:?} mu {mu} ({r},{k}): {fd} vs {}", js[r][k]);
                }
            }
            // the proximal Jacobian is symmetric (PSD: eigenvalues of the slip block in [0, 1])
            for (r, row) in jp.iter().enumerate() {
                for (c, x) in row.iter().enumerate() {
                    assert!((x - jp[c][r]).abs() < 1e-14);
                }
            }
        }
        // points in [-2, 2]^3: the slip branches hold most of them, the cone's interior (empty for
        // mu = 0) and the polar cone's (small for a large mu) a few
        assert!(prox_seen[3] > 300 && strict_slip_seen > 300, "{prox_seen:?} {strict_slip_seen}");
        assert!(prox_seen[2] > 0 && (mu == 0.0 || prox_seen[1] > 0), "{prox_seen:?}");
    }

    /// Both operators are positively homogeneous of degree 1 (`P(t x) = t P(x)` for `t > 0`), so
    /// away from the kinks Euler's identity `J(x) x = P(x)` holds: a check of each Jacobian's
    /// entries against the operator itself, exact up to round-off.
    #[rstest]
    fn jacobians_satisfy_euler_identity(#[values(0.0, 0.3, 1.0, 2.5)] mu: f64) {
        for x in samples() {
            let prox = branches(x, mu).0;
            for (j, p, on_kink) in [
                (project_jacobian(x, mu), project(x, mu), prox == 0),
                (project_strict_jacobian(x, mu), project_strict(x, mu), x[0] == 0.0),
            ] {
                if on_kink {
                    continue;
                }
                for r in 0..3 {
                    let jx = j[r][0] * x[0] + j[r][1] * x[1] + j[r][2] * x[2];
                    assert!((jx - p[r]).abs() <= 1e-13, "{x:?} mu {mu} row {r}: {jx} vs {}", p[r]);
                }
            }
        }
    }

    /// Each branch of the projection at a point where its value is known in closed form: the
    /// apex, a point inside, a point on the cone's boundary (kept), a point on the polar cone's
    /// boundary and one inside it (sent to the apex), and the slip formula with both tangent
    /// components (`x = (1, 3, 4)`, `mu = 1/2`: `r_n = (mu 5 + 1)/(mu^2 + 1) = 2.8`, `r_t = mu r_n
    /// x_t / 5`).
    #[test]
    fn projection_is_its_closed_form_on_every_branch() {
        assert_eq!(project([0.0; 3], 0.5), [0.0; 3]);
        assert_eq!(project([2.0, 0.3, -0.4], 0.5), [2.0, 0.3, -0.4]);
        assert_eq!(project([10.0, 3.0, 4.0], 0.5), [10.0, 3.0, 4.0]);
        assert_eq!(project([-2.5, 3.0, 4.0], 0.5), [0.0; 3]);
        assert_eq!(project([-3.0, 3.0, 4.0], 0.5), [0.0; 3]);
        let p = project([1.0, 3.0, 4.0], 0.5);
        let want = [2.8, 0.28 * 3.0, 0.28 * 4.0];
        assert!(sub(p, want).iter().all(|e| e.abs() < 1e-15), "{p:?}");
        // the dual cone of mu is the cone of 1/mu; for mu = 0 the half-space u_n >= 0
        assert_eq!(project_dual([1.0, 3.0, 4.0], 0.0), [1.0, 3.0, 4.0]);
        assert_eq!(project_dual([-1.0, 3.0, 4.0], 0.0), [0.0, 3.0, 4.0]);
        assert_eq!(project_dual([1.0, 3.0, 4.0], 4.0), project([1.0, 3.0, 4.0], 0.25));
    }

    /// `violation` is `max(||r_t|| - mu r_n, -r_n, 0)`: zero inside the cone, the tangential
    /// excess beside it, the normal deficit below it.
    #[test]
    fn violation_is_the_largest_excess_over_the_cone() {
        assert_eq!(violation([2.0, 0.3, 0.4], 0.5), 0.0);
        assert_eq!(violation([10.0, 3.0, 4.0], 0.5), 0.0);
        assert_eq!(violation([2.0, 3.0, 4.0], 0.5), 4.0);
        assert_eq!(violation([2.0, 3.0, 4.0], 0.0), 5.0);
        assert_eq!(violation([-2.0, 0.0, 0.0], 0.3), 2.0);
        assert_eq!(violation([-1.0, 3.0, 4.0], 0.5), 5.5);
    }

    /// A NaN anywhere (each component, `mu`, at `mu = 0` and on the apex where every other term
    /// is 0) and the undefined excesses `∞ - ∞` and `0 · ∞` give NaN, never the 0 of "inside";
    /// an infinite but well-defined excess stays infinite.
    #[test]
    fn violation_of_an_undefined_impulse_is_nan() {
        let nan = f64::NAN;
        for (r, mu) in [
            ([nan, 0.0, 0.0], 0.5),
            ([nan, 0.0, 0.0], 0.0),
            ([1.0, nan, 0.0], 0.5),
            ([1.0, 0.0, nan], 0.5),
            ([0.0, 0.0, 0.0], nan),
            ([f64::INFINITY, f64::INFINITY, 0.0], 1.0),
            ([f64::INFINITY, 0.0, 0.0], 0.0),
        ] {
            assert!(violation(r, mu).is_nan(), "{r:?} mu {mu}: {}", violation(r, mu));
        }
        assert_eq!(violation([f64::NEG_INFINITY, 0.0, 0.0], 0.5), f64::INFINITY);
        assert_eq!(violation([1.0, f64::INFINITY, 0.0], 0.5), f64::INFINITY);
        assert_eq!(violation([f64::INFINITY, 1.0, 0.0], 0.5), 0.0);
    }

    /// On the axis (`x_t = 0`) the Jacobians take the one-sided value of the region `project`
    /// selects: `I` for `x_n > 0` (`diag(1, 0, 0)` for `mu = 0`, the half-line), `0` for `x_n <= 0`;
    /// the strict operator's normal derivative is 1 for `x_n > 0` only.
    #[test]
    fn jacobians_on_the_axis_are_one_sided() {
        let eye = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let e0 = [[1.0, 0.0, 0.0], [0.0; 3], [0.0; 3]];
        assert_eq!(project_jacobian([2.0, 0.0, 0.0], 0.5), eye);
        assert_eq!(project_jacobian([2.0, 0.0, 0.0], 0.0), e0);
        assert_eq!(project_jacobian([0.0, 0.0, 0.0], 0.5), [[0.0; 3]; 3]);
        assert_eq!(project_jacobian([-1.0, 0.0, 0.0], 0.5), [[0.0; 3]; 3]);
        assert_eq!(project_strict_jacobian([2.0, 0.0, 0.0], 0.5), eye);
        let tangential = [[0.0; 3], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert_eq!(project_strict_jacobian([0.0, 0.0, 0.0], 0.5), tangential);
        assert_eq!(project_strict_jacobian([-1.0, 0.0, 0.0], 0.5), tangential);
    }

    /// The strict operator solves the unit-weight Signorini–Coulomb relation (Lee et al. Prop. 2):
    /// with `r = T(x)` and `z = r - x`, `r_n >= 0`, `z_n >= 0`, `r_n z_n = 0`, `r` in the cone, and
    /// `z_t = 0` when strictly inside or `z_t = -s r_t`, `s >= 0`, on the boundary.
    #[rstest]
    fn strict_operator_solves_the_local_law(#[values(0.0, 0.3, 1.0)] mu: f64) {
        for x in samples() {
            let r = project_strict(x, mu);
            let z = sub(r, x);
            assert!(r[0] >= 0.0 && z[0] >= -1e-15 && (r[0] * z[0]).abs() < 1e-14);
            assert!(violation(r, mu) <= 1e-14);
            let rt = (r[1] * r[1] + r[2] * r[2]).sqrt();
            if rt < mu * r[0] * (1.0 - 1e-12) {
                assert!(z[1].abs() < 1e-14 && z[2].abs() < 1e-14);
            } else if rt > 0.0 {
                // z_t antiparallel to r_t
                let cross = z[1] * r[2] - z[2] * r[1];
                assert!(cross.abs() < 1e-12 && z[1] * r[1] + z[2] * r[2] <= 1e-14);
            }
        }
    }
}
