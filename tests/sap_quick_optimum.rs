//! SAP's velocities on the quick suite are the optimum of its convex problem to within its stopping
//! tolerance (issue 19: speed work on SAP must not change its answers). Every quick-suite case SAP
//! runs is stepped through the harness exactly as a run does (warm starts included); on sampled
//! steps the same step's problem (Castro et al. Eq. 19) is solved independently by the
//! interior-point solver clarabel (`solvers::sap::reference`), and SAP's velocity must lie within
//! the distance its own stopping test (Eq. 26) guarantees. A change to the factorisation, the
//! Hessian pattern, the contact set's construction or the line search that moves SAP's answer by
//! more than that fails here, whatever it does to the run records' timings.

use harness::runner::{self, Suite};
use harness::stepper::Stepper;
use harness::{IterationLog, SolveStatus, Solver};
use solvers::sap::model::Evaluation;
use solvers::sap::reference::solve_reference;
use solvers::sap::{Sap, SapProblem, SapSettings};
use toolkit::implicit::ImplicitElastic;

/// Relative gap and feasibility tolerance of the interior-point reference.
const IPM_TOL: f64 = 1e-10;

/// Steps checked per case (evenly spaced over the run, the first and the last included).
const SAMPLES: usize = 6;

/// The bound: with `D̃ = diag(M)^{-1/2}` (Eq. 25), `κ² = max over mass blocks of
/// 1/λ_min(D̃ M_b D̃)` gives `‖g‖_{M⁻¹} ≤ κ ‖D̃ g‖`. ℓ_p is strongly convex in the `A` norm and
/// `A ⪰ M` (`A = M + δt² K'`), so `‖v − v_opt‖_M ≤ ‖v − v_opt‖_A ≤ ‖∇ℓ(v)‖_{A⁻¹} ≤ ‖∇ℓ(v)‖_{M⁻¹}
/// ≤ κ ‖D̃∇ℓ(v)‖ < κ (ε_a + ε_r max(‖D̃ p‖, ‖D̃ j_c‖))` when Eq. 26 stopped the solve. The reference's
/// own error adds `√(2 tol (1 + |ℓ*|))` (its cost is optimal to `tol`, and
/// `½‖v − v_opt‖²_A ≤ ℓ(v) − ℓ*`).
fn stopping_bound(prob: &SapProblem, s: &SapSettings, v: &[f64], ref_cost: f64) -> f64 {
    let kappa2 = prob
        .mass
        .blocks()
        .iter()
        .map(|m| {
            let d = nalgebra::DVector::from_fn(m.nrows(), |i, _| 1.0 / m[(i, i)].sqrt());
            let scaled = nalgebra::DMatrix::from_fn(m.nrows(), m.ncols(), |i, j| d[i] * m[(i, j)] * d[j]);
            1.0 / scaled.symmetric_eigenvalues().min()
        })
        .fold(1.0f64, f64::max);
    let mut e = Evaluation::default();
    e.resize(prob);
    e.calc(prob, v, false);
    let mut p = vec![0.0; prob.nv()];
    prob.mass.mul_into(v, &mut p);
    let diag = prob.mass.diagonal();
    let dnorm = |x: &[f64]| x.iter().zip(&diag).map(|(a, m)| a * a / m).sum::<f64>().sqrt();
    let scale = dnorm(&p).max(dnorm(&e.jc));
    kappa2.sqrt() * (s.abs_tolerance + s.rel_tolerance * scale) + (2.0 * IPM_TOL * (1.0 + ref_cost.abs())).sqrt()
}

#[test]
fn sap_velocities_on_the_quick_suite_are_the_optimum_within_the_stopping_tolerance() {
    let reg = signorini::registry();
    let text = std::fs::read_to_string("ci/quick.toml").unwrap();
    let suite = Suite::from_toml_with_solvers(&text, "ci/quick.toml", &reg, Some(&["sap".into()])).unwrap();
    let settings = SapSettings::default();
    let (mut cases, mut checked, mut prescribed) = (0, 0, 0);
    for pair in runner::prepare(&reg, &suite).unwrap() {
        if pair.skip.is_some() {
            continue;
        }
        cases += 1;
        let label = pair.spec.label.clone();
        let mut stepper = Stepper::new(&pair.scenario);
        let steps = pair.scenario.steps;
        let sampled: Vec<usize> = (0..SAMPLES).map(|i| i * steps.saturating_sub(1) / (SAMPLES - 1)).collect();
        let mut sap = Sap::new(settings.clone());
        let mut elastic = ImplicitElastic::default();
        for k in 0..steps {
            let p = stepper.problem().unwrap();
            let sol = sap.step(&p, &mut IterationLog::default()).unwrap();
            if sampled.contains(&k) && sol.status == SolveStatus::Solved && p.nc() + p.nb() > 0 {
                let prob = SapProblem::from_step(&p, &settings, &mut elastic).unwrap();
                if prob.fixed.iter().any(|&f| f) {
                    // the reference has no prescribed DOFs (tests/fem_velocity_solvers.rs checks them)
                    prescribed += 1;
                } else {
                    let reference = solve_reference(&prob, IPM_TOL).unwrap_or_else(|e| panic!("{label} step {k}: {e}"));
                    let diff: Vec<f64> = sol.v.iter().zip(&reference.v).map(|(a, b)| a - b).collect();
                    let dist = prob.mass.quad(&diff).sqrt();
                    let bound = stopping_bound(&prob, &settings, &sol.v, reference.cost);
                    assert!(dist <= bound, "{label} step {k}: ‖v_sap − v_opt‖_M = {dist:e} > {bound:e}");
                    checked += 1;
                }
            }
            drop(p);
            stepper.advance(&sol);
        }
    }
    assert!(cases >= 30, "SAP runs {cases} quick-suite cases");
    assert!(checked >= 3 * cases, "{checked} steps checked over {cases} cases ({prescribed} with prescribed DOFs)");
}
