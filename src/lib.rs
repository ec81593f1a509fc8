//! signorini: a workbench for frictional-contact solvers.
//!
//! The root crate wires the registries: every solver is registered here, one line each, and the
//! cases come from `cases::all()` (one line per case there). The CLI (`src/main.rs`), the
//! end-to-end tests and the benchmarks all use [`registry`].

pub use harness::Registry;

/// Every registered solver and case.
pub fn registry() -> Registry {
    Registry::default()
        .solver(solvers::pgs::entry())
        .solver(solvers::canal::entry())
        .solver(solvers::subadmm::entry())
        .solver(solvers::sap::entry())
        .solver(solvers::drumwright::entry())
        .solver(solvers::nsn::entry())
        .solver(solvers::local_global::entry())
        .cases(cases::all())
}
