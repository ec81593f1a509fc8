//! Contact detection: the narrow phase for the shape pairs of [`crate::model`], producing a
//! [`ContactSet`], and re-evaluation of the same contact features at another configuration.
//!
//! (Being written: see `detect` and `reevaluate` contracts below.)

use crate::contact::ContactSet;
use crate::model::World;

/// All contacts of `world` whose gap is below `margin` (m), in deterministic key order.
pub fn detect(_world: &World, _margin: f64) -> ContactSet {
    ContactSet::default()
}

/// The contacts of `previous` (same keys, same order) re-evaluated on `world`'s configuration.
pub fn reevaluate(_world: &World, previous: &ContactSet) -> ContactSet {
    previous.clone()
}
