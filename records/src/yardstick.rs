//! The iteration-log columns the harness's yardstick adds to a kept step's log: the same
//! solver-independent residuals on every iterate of every solver (reports draw them).

/// Column of the rigid-NCP natural map on each iterate.
pub const NATMAP: &str = "yardstick_natmap_rel";
/// Column of the contact model's own natural map on each iterate.
pub const MODEL_NATMAP: &str = "yardstick_model_natmap_rel";
/// Column of the momentum error on each iterate.
pub const MOMENTUM: &str = "yardstick_momentum_rel";
