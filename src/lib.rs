//! signorini: a workbench for frictional-contact solvers.
//!
//! The root crate wires the registries: every solver is registered here, one line each, and the
//! cases come from `cases::all()` (one line per case there). The CLI (`src/main.rs`), the
//! end-to-end tests and the benchmarks all use [`registry`].

pub use harness::Registry;

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
        .cases(cases::all())
}
