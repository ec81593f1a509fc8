//! Problems shared by the solvers' unit tests.

use api::DelassusProblem;

/// Three contacts in Delassus form with a dense, coupled, symmetric positive-definite `W = A Aᵀ +
/// 0.1 I` (`A` 9 × 9, fixed entries in `[−0.5, 0.5)`), a fixed free velocity `q` and the friction
/// coefficients `mu`: for a positive-definite `W` the exact-cone answer and the CCP's are unique,
/// so solvers of the same model must agree on it.
pub(crate) fn coupled_delassus(mu: [f64; 3]) -> DelassusProblem {
    let n = 9;
    let a: Vec<f64> = (0..n * n).map(|k| ((k * 7919 % 113) as f64 / 113.0) - 0.5).collect();
    let mut t = vec![];
    for r in 0..n {
        for c in 0..n {
            let x = (0..n).map(|k| a[r * n + k] * a[c * n + k]).sum::<f64>() + if r == c { 0.1 } else { 0.0 };
            t.push((r, c, x));
        }
    }
    let q = vec![-1.0, 0.8, -0.2, -0.5, -0.3, 0.6, 0.2, 0.1, 0.0];
    DelassusProblem::from_triplets(&t, q, mu.to_vec()).expect("a valid problem")
}
