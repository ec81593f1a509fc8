//! Per-stage timing of a solver step ([`SolverStageTimes`], the columns of Zeng et al. Table 3)
//! with a clock that synchronises the backend before each read ([`StageClock`]).

use super::Blas;
use std::time::Instant;

/// Per-stage times of one solver step, the columns of Zeng et al. Table 3 (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SolverStageTimes {
    /// Schur complement / Delassus assembly `W = (S Hᵀ)ᵀ (S Hᵀ)`.
    pub delassus_s: f64,
    /// Local step (per-element projections).
    pub local_s: f64,
    /// Global step (`Sᵀ S b`).
    pub global_s: f64,
    /// Constraint solve (NCP evaluation + CR/PCR).
    pub constraint_s: f64,
    /// Constraint correction (`q += Sᵀ S (h² Jᵀ Δλ)`).
    pub correction_s: f64,
}

impl SolverStageTimes {
    /// Column names for an iteration log / report table, in Table 3 order.
    pub const COLUMNS: [&'static str; 5] =
        ["t_delassus_s", "t_local_s", "t_global_s", "t_constraint_s", "t_correction_s"];
    /// Sum of the stages.
    pub fn total(&self) -> f64 {
        self.delassus_s + self.local_s + self.global_s + self.constraint_s + self.correction_s
    }
    /// `(name, seconds)` pairs in [`Self::COLUMNS`] order (for `IterationLog::record`).
    pub fn entries(&self) -> [(&'static str, f64); 5] {
        let c = Self::COLUMNS;
        [
            (c[0], self.delassus_s),
            (c[1], self.local_s),
            (c[2], self.global_s),
            (c[3], self.constraint_s),
            (c[4], self.correction_s),
        ]
    }
    /// Adds `other` stage by stage.
    pub fn add(&mut self, other: &SolverStageTimes) {
        self.delassus_s += other.delassus_s;
        self.local_s += other.local_s;
        self.global_s += other.global_s;
        self.constraint_s += other.constraint_s;
        self.correction_s += other.correction_s;
    }
}

/// Which Table 3 stage a [`StageClock`] interval is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// [`SolverStageTimes::delassus_s`].
    Delassus,
    /// [`SolverStageTimes::local_s`].
    Local,
    /// [`SolverStageTimes::global_s`].
    Global,
    /// [`SolverStageTimes::constraint_s`].
    Constraint,
    /// [`SolverStageTimes::correction_s`].
    Correction,
}

/// A stage timer that synchronises the backend before every clock read, so asynchronous device
/// work is charged to the stage that queued it (timing done right on a GPU; free on the CPU).
pub struct StageClock<'a, B: Blas + ?Sized> {
    backend: &'a B,
    last: Instant,
    /// Accumulated times.
    pub times: SolverStageTimes,
}

impl<'a, B: Blas + ?Sized> StageClock<'a, B> {
    /// Starts the clock (after a synchronisation).
    pub fn start(backend: &'a B) -> Self {
        backend.sync();
        Self { backend, last: Instant::now(), times: SolverStageTimes::default() }
    }
    /// Charges the time since the previous lap (or the start) to `stage`.
    pub fn lap(&mut self, stage: Stage) {
        self.backend.sync();
        let now = Instant::now();
        let dt = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        let t = &mut self.times;
        match stage {
            Stage::Delassus => t.delassus_s += dt,
            Stage::Local => t.local_s += dt,
            Stage::Global => t.global_s += dt,
            Stage::Constraint => t.constraint_s += dt,
            Stage::Correction => t.correction_s += dt,
        }
    }
    /// Restarts the interval without charging it (time spent outside the five stages).
    pub fn skip(&mut self) {
        self.backend.sync();
        self.last = Instant::now();
    }
}
