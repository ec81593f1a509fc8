//! Helpers shared by the integration tests (each test file includes this module with
//! `mod common;` and uses what it needs).
#![allow(dead_code)]

/// Least-squares slope of `log e` against `log h`: the observed order of convergence of errors
/// `es` at step sizes `hs`.
pub fn order(hs: &[f64], es: &[f64]) -> f64 {
    let x: Vec<f64> = hs.iter().map(|d| d.ln()).collect();
    let y: Vec<f64> = es.iter().map(|e| e.ln()).collect();
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// The registered solver `name` with its defaults and the overrides `sets` (`--set` syntax
/// without the `solver.` prefix).
pub fn solver(name: &str, sets: &[(&str, &str)]) -> Box<dyn harness::Solver> {
    let reg = signorini::registry();
    let e = reg.find_solver(name).unwrap();
    let mut p = (e.defaults)();
    for (k, v) in sets {
        p.set(k, v, name).unwrap();
    }
    e.build(&p).unwrap()
}
