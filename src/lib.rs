//! signorini: a workbench for frictional-contact solvers.
//!
//! The root crate wires the registries: every solver is registered here, one line each, and the
//! cases come from `cases::all()` (one line per case there). The CLI (`src/main.rs`), the
//! end-to-end tests and the benchmarks all use [`registry`].

pub use harness::Registry;

pub mod selection;

/// Every registered solver and case.
pub fn registry() -> Registry {
    Registry::default()
        .register::<solvers::pgs::Pgs>()
        .register::<solvers::canal::Canal>()
        .register::<solvers::subadmm::SubAdmm>()
        .register::<solvers::sap::Sap>()
        .register::<solvers::drumwright::Drumwright>()
        .register::<solvers::nsn::Nsn>()
        .register::<solvers::local_global::LocalGlobal>()
        .register::<solvers::ccp::CcpPgs>()
        .register::<solvers::ccp::CcpAdmm>()
        .register::<solvers::apgd::Apgd>()
        .register::<solvers::raisim::Raisim>()
        .register::<solvers::lcp::LcpLemke>()
        .register::<solvers::lcp::LcpPgs>()
        .register::<solvers::staggered::Staggered>()
        .cases(cases::all())
}

/// The registered default parameters of every case and solver of `reg` (the report's settings
/// column shows what differs from them).
pub fn defaults(reg: &Registry) -> reports::table::Defaults {
    reports::table::Defaults {
        cases: reg.cases.iter().map(|c| (c.name().to_string(), c.defaults())).collect(),
        solvers: reg.solvers.iter().map(|s| (s.name.to_string(), (s.defaults)())).collect(),
    }
}

/// Why the suite a gates file names could not be resolved ([`suite_pins`]).
#[derive(Debug, thiserror::Error)]
pub enum SuitePinsError {
    /// The suite file could not be read.
    #[error(transparent)]
    Input(#[from] records::input::InputError),
    /// It is not a valid suite file.
    #[error(transparent)]
    File(#[from] harness::runner::SuiteFileError),
    /// Its pairs could not be resolved, or a case's scene (built to name its oracle checks) is
    /// invalid or over the memory limit ([`harness::runner::oracle_checks`]).
    #[error(transparent)]
    Resolve(#[from] harness::runner::SuiteError),
}

/// What every pair of the suite file `suite` gets now, `(solver, case label)` -> the hashes of its
/// case and solver parameters and the names of the oracle checks its case grades, from its one
/// resolution: what a gates file naming the suite is pinned to ([`reports::gate::load`]). The
/// checks come from [`harness::runner::oracle_checks`] (each case variant's scene built once,
/// under the machine's memory limit).
pub fn suite_pins(reg: &Registry, suite: &std::path::Path) -> Result<reports::gate::Pins, SuitePinsError> {
    let name = suite.display().to_string();
    let text = records::input::read_text(suite)?;
    let pairs = harness::runner::Suite::from_toml(&text, &name, reg)?.resolve(reg)?;
    let checks = harness::runner::oracle_checks(&pairs, harness::resources::default_limit())?;
    Ok(pairs
        .into_iter()
        .zip(checks)
        .map(|(p, checks)| {
            let pin =
                reports::gate::Pin { case_hash: p.case_params.hash(), solver_hash: p.solver_params.hash(), checks };
            ((p.spec.solver, p.spec.label), pin)
        })
        .collect())
}

/// Reads a gates file, pinning it to the suite it names (resolved with `reg`).
pub fn load_gates(path: &std::path::Path, reg: &Registry) -> Result<reports::gate::Gates, reports::gate::GateError> {
    reports::gate::load(path, |suite| suite_pins(reg, suite))
}
