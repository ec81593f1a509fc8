//! The Coulomb friction cone `K_mu = { r = (r_n, r_t) : ||r_t|| <= mu r_n }` in FCLIB order
//! `(n, t1, t2)`, its dual `K_mu* = K_{1/mu}`, and the De Saxcé shift used by the natural map.
//!
//! The closed form (anchors.md §1, identical in FCLIB and ContactBench):
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

/// The De Saxcé shifted velocity `u_hat = u + (mu ||u_t||, 0, 0)` (FCLIB, anchors.md §1).
#[inline]
pub fn de_saxce(u: [f64; 3], mu: f64) -> [f64; 3] {
    [u[0] + mu * (u[1] * u[1] + u[2] * u[2]).sqrt(), u[1], u[2]]
}

/// How far `r` lies outside the cone: `max(||r_t|| - mu r_n, -r_n, 0)` (same units as `r`).
#[inline]
pub fn violation(r: [f64; 3], mu: f64) -> f64 {
    let nt = (r[1] * r[1] + r[2] * r[2]).sqrt();
    (nt - mu * r[0]).max(-r[0]).max(0.0)
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
        // rust-ecosystem.md §4: P = I, q = (-1, -2, 0), mu = 0.5 -> x = (1.6, 0.8, 0).
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
}
