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

/// Asserts that each `(key, value)` of `bad`, set alone on the defaults of solver `S`, is refused
/// as a bad value of that key when the settings are decoded, and that `S`'s registry entry builds
/// with its defaults; returns the entry for further checks.
pub(crate) fn assert_settings_refused<S: api::SolverDef>(bad: &[(&str, &str)]) -> harness::SolverEntry {
    for &(key, value) in bad {
        let mut p = harness::Params::from_settings(&S::Settings::default());
        p.set(key, value, S::NAME).unwrap();
        assert!(
            matches!(p.decode::<S::Settings>(S::NAME), Err(harness::ParamError::BadValue { key: k, .. }) if k == key),
            "{}: {key} = {value} accepted",
            S::NAME
        );
    }
    let e = harness::SolverEntry::of::<S>();
    e.build(&(e.defaults)()).unwrap();
    e
}
