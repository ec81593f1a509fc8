//! Adding a solver, measured: a projected Jacobi solver written the way `docs/adding-a-solver.md`
//! says, outside the solvers crate, from the shared per-contact building blocks
//! (`toolkit::contact_blocks`, `kernels::contact_local`, `kernels::cone`), registered with one
//! line and run on every case of the quick suite that CI gates. It needs no gate of its own: every
//! oracle check of every pair it runs must pass unless `tests/data/example-solver-gates.toml`
//! lists it as an expected failure (with its measured value and reason), exactly as a real solver
//! is gated by `ci/gates.toml`.
//!
//! Method: per sweep every contact's local problem is solved against the *same* iterate
//! `v = v* + M⁻¹ Jᵀ λ` (Jacobi, unlike Gauss–Seidel's freshest velocity), and all impulses move by
//! the relaxation `ω`: `λ ← P_K(λ + ω (λ_local − λ))`. Simultaneous updates of coupled contacts
//! overshoot, so `ω` must be small where many contacts share a body (default 0.3).

use api::{
    AnsweredModel, Capabilities, FieldError, IterationLog, Settings, SolveError, SolveStatus, Solver, SolverDef,
    StepProblem, StepSolution,
};
use harness::runner::{self, NoProgress, Suite};
use harness::stepper::RunOptions;
use kernels::cone;
use kernels::contact_local::Local;
use serde::{Deserialize, Serialize};
use toolkit::contact_blocks::ContactBlocks;

/// Options of the projected Jacobi solver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct JacobiSettings {
    /// Most sweeps per step (default 2000).
    max_iterations: usize,
    /// Stop when the largest impulse change over the largest impulse is below it (default 1e-8).
    tolerance: f64,
    /// Relaxation `ω` in (0, 1] of the simultaneous update (default 0.3).
    relaxation: f64,
}

impl Default for JacobiSettings {
    fn default() -> Self {
        Self { max_iterations: 2000, tolerance: 1e-8, relaxation: 0.3 }
    }
}

impl Settings for JacobiSettings {
    fn validate(&self) -> Result<(), FieldError> {
        api::check_budget("max_iterations", self.max_iterations)?;
        api::check_positive("tolerance", self.tolerance)?;
        api::check_in("relaxation", self.relaxation, api::Bound::Open(0.0), api::Bound::Closed(1.0))?;
        Ok(())
    }
}

/// Projected Jacobi on the velocity-level Coulomb NCP with the exact cone.
struct ProjectedJacobi {
    settings: JacobiSettings,
    contacts: ContactBlocks,
    lambda: Vec<[f64; 3]>,
    target: Vec<[f64; 3]>,
    v: Vec<f64>,
}

impl SolverDef for ProjectedJacobi {
    type Settings = JacobiSettings;
    const NAME: &'static str = "jacobi";
    const SUMMARY: &'static str = "projected Jacobi with relaxation (test-only example)";
    const PAPER: &'static str = "Projected Jacobi: Acary & Brogliato, Numerical Methods for Nonsmooth Dynamical \
                                 Systems (2008), ch. 12";
    const BUDGET: &'static str = "max_iterations";
    const TOLERANCE: &'static str = "tolerance";
    const MODEL: AnsweredModel = AnsweredModel::RigidCoulomb;
    fn capabilities() -> Capabilities {
        Capabilities {
            rigid_bodies: true,
            rigid_contact: true,
            compliant_contact: true,
            exact_friction_cone: true,
            ..Capabilities::default()
        }
    }
    fn from_settings(settings: JacobiSettings, _: &harness::SolverContext) -> Self {
        Self { settings, contacts: ContactBlocks::default(), lambda: vec![], target: vec![], v: vec![] }
    }
}

impl Solver for ProjectedJacobi {
    fn step(&mut self, p: &StepProblem<'_>, log: &mut IterationLog) -> Result<StepSolution, SolveError> {
        self.contacts.assemble(p)?;
        let vstar = p.free_velocity();
        self.v.clone_from(&vstar);
        self.lambda.clear();
        self.lambda.resize(self.contacts.blocks.len(), [0.0; 3]);
        let omega = self.settings.relaxation;
        let (mut iterations, mut status) = (0, SolveStatus::Solved);
        if !self.contacts.blocks.is_empty() {
            status = SolveStatus::MaxIterations;
            for k in 1..=self.settings.max_iterations {
                // every local problem against the same iterate
                self.target.clear();
                for (b, lam) in self.contacts.blocks.iter().zip(&self.lambda) {
                    let t = b.local.solve(Local::Split, b.velocity(&self.v), *lam);
                    self.target.push(cone::project([0, 1, 2].map(|r| lam[r] + omega * (t[r] - lam[r])), b.local.mu));
                }
                let (mut change, mut size) = (0.0f64, 0.0f64);
                for ((b, lam), new) in self.contacts.blocks.iter().zip(self.lambda.iter_mut()).zip(&self.target) {
                    if !new.iter().all(|x| x.is_finite()) {
                        return Err(SolveError::NonFinite { what: format!("impulse at sweep {k}") });
                    }
                    let d = [0, 1, 2].map(|r| new[r] - lam[r]);
                    b.apply(d, &mut self.v);
                    *lam = *new;
                    change = d.iter().fold(change, |m, x| m.max(x.abs()));
                    size = new.iter().fold(size, |m, x| m.max(x.abs()));
                }
                let rel_change = change / size.max(f64::MIN_POSITIVE);
                let (natmap, _) = self.contacts.residuals(&self.v, &self.lambda);
                log.record(&[("rel_change_linf", rel_change), ("natmap_abs_l2", natmap)]);
                log.iterate(&self.v, &self.lambda, &[]);
                if log.past_deadline() {
                    status = SolveStatus::TimeLimit;
                    break;
                }
                iterations = k;
                if rel_change < self.settings.tolerance {
                    status = SolveStatus::Solved;
                    break;
                }
            }
        }
        self.v.clone_from(&vstar);
        for (b, lam) in self.contacts.blocks.iter().zip(&self.lambda) {
            b.apply(*lam, &mut self.v);
        }
        Ok(StepSolution {
            v: self.v.clone(),
            q: None,
            impulses: self.lambda.clone(),
            bilateral: vec![],
            iterations,
            status,
        })
    }
}

/// The example registers with one line and runs every quick-suite case it supports; its oracle
/// checks are gated like any solver's, against its own expected-failures file.
#[test]
fn projected_jacobi_runs_the_quick_suite_under_the_gate() {
    let reg = signorini::registry().register::<ProjectedJacobi>();
    let text = std::fs::read_to_string("ci/quick.toml").unwrap();
    let suite = Suite::from_toml_with_solvers(&text, "ci/quick.toml", &reg, Some(&["jacobi".into()])).unwrap();
    let pairs = runner::prepare(&reg, &suite).unwrap();
    let ran = pairs.iter().filter(|p| p.skip.is_none()).count();
    assert!(ran >= 10, "jacobi runs {ran} quick-suite cases");
    let dir = tempfile::tempdir().unwrap();
    let out = runner::run_suite(&pairs, dir.path(), RunOptions::default(), &NoProgress);
    let records: Vec<_> = out.into_iter().map(|(r, path)| (path.unwrap(), r)).collect();
    let gates_text = std::fs::read_to_string("tests/data/example-solver-gates.toml").unwrap();
    let gates = reports::gate::parse(&gates_text, "tests/data/example-solver-gates.toml").unwrap();
    let report = reports::gate::evaluate(&gates, &records, reports::gate::Scope::Directory);
    assert!(report.passed(), "{}", report.table());
    assert!(report.counts().checks_passed > 0, "{}", report.count_lines());
}

/// A bad setting is refused naming its field, before anything runs.
#[test]
fn projected_jacobi_settings_are_checked() {
    let reg = signorini::registry().register::<ProjectedJacobi>();
    let err = runner::run_one(&reg, "slope", &[], "jacobi", &[("relaxation", "1.5")]).unwrap_err();
    assert!(err.contains("relaxation") && err.contains("(0, 1]"), "{err}");
}
