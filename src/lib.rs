//! signorini: a workbench for frictional-contact solvers.
//!
//! The root crate wires the registries: every solver and case is registered here, one line each,
//! and the CLI (`src/main.rs`), the end-to-end tests and the benchmarks all use [`registry`].

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
        .case(cases::Slope)
        .case(cases::SpringCylinder)
        .case(cases::SphereStack)
        .case(cases::Clutter)
        .case(cases::PizzaSaver)
        .case(cases::Pendulum)
        .case(cases::RampFeet)
        .case(cases::WinklerCube)
        .case(cases::SpringMassDamper)
        .case(cases::TwistingBar)
        .case(cases::ElasticSlope)
        .case(cases::HeavyStack)
        .case(cases::BoxInHole)
        .case(cases::DishStack)
        .case(cases::SpherePour)
        .case(cases::Arch)
        .case(cases::Robots)
}
