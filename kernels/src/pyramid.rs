//! The polyhedral (pyramidal) friction cone of Stewart & Trinkle (1996) and Anitescu & Potra
//! (1997) with `d` facets, and the natural map of the contact law it defines, in FCLIB order
//! `(n, t1, t2)`.
//!
//! The friction set of a contact with normal impulse `λ_n` is the regular `d`-gon inscribed in the
//! Coulomb disk of radius `μ λ_n`, with vertices `μ λ_n d_m`, `d_m = (cos θ_m, sin θ_m)`,
//! `θ_m = 2π m / d` (the first along `t1`): `{Σ β_m d_m : β ≥ 0, Σ β ≤ μ λ_n}`.
//!
//! **The pyramid law** (the solutions of the velocity-level LCP, Anitescu & Potra 1997, Eq. 9;
//! Stewart & Trinkle 1996, Eq. 20, with the normal law `ũ_n = u_n − v̂ + r_n λ_n`):
//!
//! ```text
//!   0 ≤ λ_n ⊥ ũ_n ≥ 0,     λ_t ∈ argmin_{f ∈ P(μ λ_n)} fᵀ u_t
//! ```
//!
//! (the LCP's friction rows `d_mᵀ u_t + σ ≥ 0 ⊥ β_m ≥ 0`, `μ λ_n − Σ β ≥ 0 ⊥ σ ≥ 0` are the
//! optimality conditions of that linear program in `β`; every `β` writing an optimal `λ_t` is
//! optimal, so a pair `(λ, u)` satisfies the law exactly when some `(β, σ)` solves the LCP).
//! Its natural map ([`natmap`]) is the one of the normal NCP and of the variational inequality
//! of the friction polygon,
//!
//! ```text
//!   F(λ, ũ) = (λ_n − max(0, λ_n − ũ_n),  λ_t − P_{P(μ λ_n⁺)}(λ_t − u_t)),
//! ```
//!
//! zero exactly where the law holds, and computable from an answer `(v, λ)` alone: it needs
//! neither the LCP's `β` nor its `σ`. There is no De Saxcé shift: the LCP's normal row has none.

use std::f64::consts::PI;

/// The facet direction `d_m = (cos θ_m, sin θ_m)`, `θ_m = 2π m / d`, of a `d`-facet pyramid.
pub fn direction(d: usize, m: usize) -> [f64; 2] {
    let t = 2.0 * PI * m as f64 / d as f64;
    [t.cos(), t.sin()]
}

/// The `d` facet directions [`direction`]`(d, m)`, `m = 0 … d − 1`.
pub fn directions(d: usize) -> impl Iterator<Item = [f64; 2]> {
    (0..d).map(move |m| direction(d, m))
}

/// The Euclidean projection of `x` onto the regular `d`-gon with vertices `radius · d_m`
/// (`radius ≤ 0` or NaN: the point 0). `d ≥ 3`.
///
/// The edge from vertex `m` to `m + 1` has the outward normal at angle `(2m + 1) π / d` and lies
/// at distance `radius cos(π / d)` from 0. A point at angle `θ ∈ [θ_m, θ_{m+1})` lies inside iff
/// it is inside that edge's half-plane (its normal is the nearest one), and outside it projects
/// onto that edge's segment: the region of every point projecting onto edge `m − 1` or its end
/// vertex `m` beyond the edge lies at angles below `θ_m`.
pub fn project(x: [f64; 2], radius: f64, d: usize) -> [f64; 2] {
    assert!(d >= 3, "a friction polygon needs at least 3 facets");
    if radius.is_nan() || radius <= 0.0 {
        return [0.0, 0.0];
    }
    let sector = 2.0 * PI / d as f64;
    let angle = x[1].atan2(x[0]).rem_euclid(2.0 * PI);
    let m = ((angle / sector).floor() as usize).min(d - 1);
    let (a, b) = (direction(d, m), direction(d, (m + 1) % d));
    let (a, b) = ([radius * a[0], radius * a[1]], [radius * b[0], radius * b[1]]);
    let normal = direction(2 * d, 2 * m + 1);
    let apothem = radius * (PI / d as f64).cos();
    if normal[0] * x[0] + normal[1] * x[1] <= apothem {
        return x;
    }
    let e = [b[0] - a[0], b[1] - a[1]];
    let s = (((x[0] - a[0]) * e[0] + (x[1] - a[1]) * e[1]) / (e[0] * e[0] + e[1] * e[1])).clamp(0.0, 1.0);
    [a[0] + s * e[0], a[1] + s * e[1]]
}

/// The natural map of the pyramid law (module doc) at the impulse `lambda` and the law velocity
/// `u = (ũ_n, u_t1, u_t2)` (normal law applied: `ũ_n = u_n − v̂ + r_n λ_n`), friction `mu`,
/// `d` facets (N s, or the mixed units of every natural map).
pub fn natmap(lambda: [f64; 3], u: [f64; 3], mu: f64, d: usize) -> [f64; 3] {
    let n = lambda[0] - (lambda[0] - u[0]).max(0.0);
    let p = project([lambda[1] - u[1], lambda[2] - u[2]], mu * lambda[0].max(0.0), d);
    [n, lambda[1] - p[0], lambda[2] - p[1]]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The projection onto the `d`-gon computed independently of [`project`]: inside when every
    /// edge's half-plane holds the point (normals from the vertices), else the nearest of the `d`
    /// clamped segment projections.
    fn project_by_brute_force(x: [f64; 2], radius: f64, d: usize) -> [f64; 2] {
        let v: Vec<[f64; 2]> = (0..d)
            .map(|m| {
                let t = 2.0 * PI * m as f64 / d as f64;
                [radius * t.cos(), radius * t.sin()]
            })
            .collect();
        let inside = (0..d).all(|m| {
            let (a, b) = (v[m], v[(m + 1) % d]);
            // a counter-clockwise polygon: inside is left of every edge
            (b[0] - a[0]) * (x[1] - a[1]) - (b[1] - a[1]) * (x[0] - a[0]) >= -1e-15 * radius
        });
        if inside {
            return x;
        }
        let mut best = ([0.0, 0.0], f64::INFINITY);
        for m in 0..d {
            let (a, b) = (v[m], v[(m + 1) % d]);
            let e = [b[0] - a[0], b[1] - a[1]];
            let s = (((x[0] - a[0]) * e[0] + (x[1] - a[1]) * e[1]) / (e[0] * e[0] + e[1] * e[1])).clamp(0.0, 1.0);
            let p = [a[0] + s * e[0], a[1] + s * e[1]];
            let dist = (x[0] - p[0]).hypot(x[1] - p[1]);
            if dist < best.1 {
                best = (p, dist);
            }
        }
        best.0
    }

    fn close(a: [f64; 2], b: [f64; 2], tol: f64) -> bool {
        (a[0] - b[0]).abs() <= tol && (a[1] - b[1]).abs() <= tol
    }

    /// Points inside, on a facet, on a vertex and outside (beyond an edge and beyond a vertex),
    /// for 4 and 8 facets, and a sweep of 400 points on rings inside and outside: the projection
    /// matches the brute-force one to 1e-14 of the radius.
    #[test]
    fn projection_onto_the_polygon_matches_brute_force() {
        for d in [4, 8] {
            let r = 2.0;
            let apothem = r * (PI / d as f64).cos();
            let mid = direction(2 * d, 1); // the first edge's normal
            let cases = [
                ([0.1, -0.2], [0.1, -0.2]),                                                   // inside
                ([apothem * mid[0], apothem * mid[1]], [apothem * mid[0], apothem * mid[1]]), // on the facet
                ([r, 0.0], [r, 0.0]),                                                         // a vertex
                ([3.0 * mid[0], 3.0 * mid[1]], [apothem * mid[0], apothem * mid[1]]),         // beyond the edge
                ([5.0, -0.01], [r, 0.0]),                                                     // beyond the vertex
            ];
            for (x, want) in cases {
                let p = project(x, r, d);
                assert!(close(p, want, 1e-14 * r), "d = {d}, x = {x:?}: {p:?} vs {want:?}");
                assert!(close(p, project_by_brute_force(x, r, d), 1e-14 * r), "d = {d}, x = {x:?}");
            }
            for k in 0..400 {
                let t = 2.0 * PI * k as f64 / 400.0 + 0.001;
                let rho = [0.5, 0.95, 1.05, 3.0][k % 4] * r;
                let x = [rho * t.cos(), rho * t.sin()];
                let (p, q) = (project(x, r, d), project_by_brute_force(x, r, d));
                assert!(close(p, q, 1e-14 * r), "d = {d}, x = {x:?}: {p:?} vs {q:?}");
            }
            assert_eq!(project([1.0, 1.0], 0.0, d), [0.0, 0.0]);
            assert_eq!(project([1.0, 1.0], -1.0, d), [0.0, 0.0]);
        }
    }

    /// The natural map vanishes where the pyramid law holds and measures the distance where it
    /// does not, with `μ = 0.5`, `λ_n = 2` (radius 1):
    /// - sticking inside the polygon (`u_t = 0`): zero;
    /// - sliding along `t1` with friction at the vertex `−μ λ_n t1` (the optimum of the LP): zero;
    /// - at 4 facets, sliding along the diagonal (45°) with the friction on the facet opposite it,
    ///   `−(μ λ_n / 2)(1, 1)`: zero; the exact cone's `−μ λ_n (1, 1)/√2` lies outside the square by
    ///   `μ λ_n (1 − cos(π/4))`, which the map reads;
    /// - separating (`ũ_n > 0`) with `λ_n > 0`: the normal component is `min(λ_n, ũ_n)`.
    #[test]
    fn the_natural_map_vanishes_exactly_on_the_pyramid_law() {
        let (mu, ln) = (0.5, 2.0);
        let norm = |f: [f64; 3]| f.iter().map(|x| x * x).sum::<f64>().sqrt();
        for d in [4, 8] {
            assert!(norm(natmap([ln, 0.3, -0.2], [0.0, 0.0, 0.0], mu, d)) < 1e-15, "stick, d = {d}");
            assert!(norm(natmap([ln, -mu * ln, 0.0], [0.0, 2.0, 0.0], mu, d)) < 1e-15, "slide at a vertex, d = {d}");
            let sep = natmap([ln, 0.0, 0.0], [0.5, 0.0, 0.0], mu, d);
            assert!((sep[0] - 0.5).abs() < 1e-15 && sep[1] == 0.0 && sep[2] == 0.0, "{sep:?}");
        }
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let facet = [ln, -mu * ln / 2.0, -mu * ln / 2.0];
        assert!(norm(natmap(facet, [0.0, 1.0, 1.0], mu, 4)) < 1e-15, "the facet's friction, d = 4");
        let coulomb = [ln, -mu * ln * s, -mu * ln * s];
        let f = natmap(coulomb, [0.0, 1.0, 1.0], mu, 4);
        let want = mu * ln * (1.0 - (PI / 4.0).cos());
        assert!((norm(f) - want).abs() < 1e-14, "{} vs {want}", norm(f));
        // at 8 facets the diagonal is a vertex direction: the exact cone's friction is the optimum
        assert!(norm(natmap(coulomb, [0.0, 1.0, 1.0], mu, 8)) < 1e-15);
    }
}
