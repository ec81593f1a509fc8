//! Reference engines (MuJoCo, Drake) in signorini's comparison.
//!
//! [`mjcf`] writes a case's initial world as an MJCF model plus a JSON sidecar (run length, the
//! map between the engine's coordinates and signorini's); the Python runners in `peers/` step it
//! and write a trajectory; [`grade`] grades that trajectory with the case's oracle into a
//! `signorini.run/1` record marked as a reference engine's (`solver.params.reference = true`),
//! so that reports, gates and timing comparisons treat it like any other row.
//! `docs/reference-engines.md` describes the workflow and the parameter maps.

pub mod grade;
pub mod mjcf;

pub use grade::{
    from_trace, grade, replay_of, replay_stride, trace_of, ContactFrame, Engine, Trajectory, TrajectoryError,
};
pub use mjcf::{export, Export, MjcfError, Sidecar};
