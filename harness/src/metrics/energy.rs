//! Energies, momenta and penetration of a world state (harness metrics, see `metrics/mod.rs`).

use super::nan_max;
use crate::contact::ContactSet;
use crate::model::World;

/// Mechanical energy of a world state (J).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyTerms {
    /// `sum 1/2 m |v|^2 + 1/2 w . (R I R^T) w` (J).
    pub kinetic: f64,
    /// `-sum m g . x`, zero at the origin (J).
    pub gravity: f64,
    /// `sum 1/2 k (l - l0)^2` (J).
    pub spring: f64,
    /// Elastic energy of the deformable bodies (J).
    pub elastic: f64,
    /// `kinetic + gravity + spring + elastic` (J).
    pub total: f64,
}

impl EnergyTerms {
    /// The energy terms of `world` ([`World::kinetic_energy`], [`World::gravity_energy`],
    /// [`World::spring_energy`]).
    pub fn of(world: &World) -> Self {
        let (kinetic, gravity, spring) = (world.kinetic_energy(), world.gravity_energy(), world.spring_energy());
        let elastic = world.elastic_energy();
        Self { kinetic, gravity, spring, elastic, total: kinetic + gravity + spring + elastic }
    }
}

/// Deepest penetration `max(0, max_i -phi_i)` over a contact set (m); 0 when empty; NaN if a gap is NaN.
pub fn penetration_max(contacts: &ContactSet) -> f64 {
    contacts.contacts.iter().map(|c| -c.gap).fold(0.0, nan_max)
}
