//! Memory estimates before work: `signorini run` refuses a pair whose estimate exceeds the limit
//! (the machine's available memory, or `--max-memory`) with one line naming the parameters that
//! drive it, instead of aborting out of memory hours into a suite.
//!
//! Two estimates are made, both from sizes alone:
//! 1. before the scene is built, from the case's parameters ([`crate::CaseDef::size_hint`];
//!    the meshed cases implement it, since building a `1000³` mesh is itself the allocation);
//! 2. after it is built, from the scene ([`crate::Scenario::problem_size`]): the run keeps the positions and
//!    velocities of every step for the oracle (the trace), the stepper holds three copies of the
//!    world, and the solver its working memory ([`crate::SolverDef::working_memory`]).
//!
//! The constants are upper-side rules of thumb (bytes per degree of freedom, per element, per
//! contact, per stored step), not measurements of one build; they are meant to separate "fits"
//! from "cannot fit" by orders of magnitude, which is what the check needs.

pub use api::def::{dense_working_memory, sparse_working_memory, ProblemSize, BYTES_PER_CONTACT};

/// Bytes per degree of freedom of a scene and its assembled, sparse step matrices (mass, stiffness
/// with ~80 entries per row on a tetrahedral mesh, Jacobians).
const BYTES_PER_DOF: f64 = 4096.0;
/// Bytes per tetrahedron (connectivity, rest shape, per-element factors).
const BYTES_PER_ELEMENT: f64 = 512.0;
/// Bytes per stored step besides the state vectors (metrics, timings, iteration counts, the
/// allocator's overhead): `run --case slope --solver pgs --set duration=2500` (250,000 steps) peaks
/// at 171 MB, about 0.7 KB per step with the state vectors.
const BYTES_PER_STEP: f64 = 1024.0;

/// A memory estimate with its parts (bytes).
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// `(what, bytes)`, e.g. `("trace", 1.2e9)`.
    pub parts: Vec<(&'static str, f64)>,
    /// The parameters that set the size.
    pub driver: String,
}

impl Estimate {
    /// Total bytes.
    pub fn bytes(&self) -> f64 {
        self.parts.iter().map(|(_, b)| b).sum()
    }

    /// `Err` ([`ResourceError::OverMemory`], one line naming the pair, the parts and the
    /// driving parameters) when the estimate exceeds `limit` bytes.
    pub fn check(&self, limit: f64, what: &str) -> Result<(), ResourceError> {
        if self.bytes() <= limit {
            return Ok(());
        }
        Err(ResourceError::OverMemory { what: what.to_string(), estimate: self.clone(), limit })
    }

    /// The parts as text: `scene 1.0 GiB, trace 2.0 MiB`.
    fn parts_text(&self) -> String {
        self.parts.iter().map(|(n, b)| format!("{n} {}", fmt_bytes(*b))).collect::<Vec<_>>().join(", ")
    }

    /// What to reduce besides the driving parameters, after the largest part.
    fn hint(&self) -> &'static str {
        match self.parts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|(n, _)| *n) {
            Some("solver") => " (the solver's working memory dominates: another solver or solver setting may fit)",
            Some("record") => " (the iteration logs dominate: fewer --logged-steps or a smaller iteration budget fit)",
            _ => "",
        }
    }
}

/// Why a pair does not fit the memory limit ([`Estimate::check`]) or its record the readers'
/// limit ([`RecordShape::fit`]), or why a byte count does not parse ([`parse_bytes`]). Every
/// message is one line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResourceError {
    /// The estimate is above the memory limit.
    #[error(
        "{what}: needs about {} ({}), more than the memory limit {} (--max-memory); reduce {}{}",
        fmt_bytes(estimate.bytes()),
        estimate.parts_text(),
        fmt_bytes(*limit),
        estimate.driver,
        estimate.hint()
    )]
    OverMemory {
        /// The pair (`case 'C' (LABEL) with SOLVER`) or the case.
        what: String,
        /// The estimate.
        estimate: Estimate,
        /// The limit (bytes).
        limit: f64,
    },
    /// The step records alone make a record larger than its readers accept.
    #[error(
        "its record would hold {recorded_steps} step records, about {}, more than the {limit}-byte limit of the \
         record readers ({}); shorten the run or raise the limit",
        fmt_bytes(*bytes),
        records::input::LIMIT_VAR
    )]
    RecordTooLarge {
        /// Step records the record would hold.
        recorded_steps: f64,
        /// Its size without iteration logs (bytes).
        bytes: f64,
        /// The readers' limit (bytes).
        limit: f64,
    },
    /// A byte count whose number does not parse.
    #[error("'{text}': expected a size such as 8G, 512M or 1000000")]
    NotASize {
        /// The text given.
        text: String,
    },
    /// A byte count with an unknown unit.
    #[error("'{text}': unknown unit '{unit}' (use K, M, G or T)")]
    UnknownUnit {
        /// The text given.
        text: String,
        /// The unit, lower case.
        unit: String,
    },
    /// A byte count that is not finite and positive.
    #[error("'{text}': must be a positive size")]
    NotPositive {
        /// The text given.
        text: String,
    },
}

/// The memory of building a scene of `size` (before it is built).
pub fn scene_estimate(size: &ProblemSize) -> Estimate {
    Estimate {
        parts: vec![(
            "scene",
            size.dofs * BYTES_PER_DOF + size.elements * BYTES_PER_ELEMENT + size.contacts * BYTES_PER_CONTACT,
        )],
        driver: size.driver.clone(),
    }
}

/// The memory of running `size` with a solver that needs `solver_bytes` of working memory and
/// keeping `record` (its iteration logs and the record's text, [`RecordShape::memory`]).
pub fn run_estimate(size: &ProblemSize, solver_bytes: f64, record: &RecordShape) -> Estimate {
    let scene =
        3.0 * (size.dofs * BYTES_PER_DOF + size.elements * BYTES_PER_ELEMENT) + size.contacts * BYTES_PER_CONTACT;
    // positions (<= 7 per 6 DOFs of a rigid body, 1 per DOF of a node) and velocities, per step
    let trace = (size.steps + 1.0) * (2.2 * 8.0 * size.dofs + BYTES_PER_STEP);
    Estimate {
        parts: vec![("scene", scene), ("trace", trace), ("solver", solver_bytes), ("record", record.memory())],
        driver: size.driver.clone(),
    }
}

/// Columns assumed per iteration-log row when sizing a record before the run: the time, a
/// solver's own columns (4 for pgs, 7 for nsn) and the three yardstick columns of the logged
/// steps, with room to spare.
pub const LOG_COLUMNS: f64 = 16.0;
/// Bytes of one logged number in a record's JSON (pretty-printed: 12 spaces of indentation, up to
/// 22 characters of shortest round-trip digits, a comma and a newline).
pub const BYTES_PER_LOGGED_NUMBER: f64 = 40.0;
/// Bytes of one step record in JSON (about 30 metrics, each a named number on its own line):
/// measured at 1.7 KB on `run --case slope --solver pgs`.
pub const BYTES_PER_STEP_RECORD: f64 = 2560.0;
/// Bytes of a record besides its steps and logs (provenance, parameters, summary).
const RECORD_OVERHEAD: f64 = 64.0 * 1024.0;

/// What a run keeps for its record, sized before the run: the step records, and the iteration
/// logs of the logged steps at their largest (every logged step running its whole iteration
/// budget, at most [`api::log::MAX_LOG_ROWS`] rows, [`LOG_COLUMNS`] columns).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordShape {
    /// Step records kept (every `stride`-th step of the run, the last one included).
    pub recorded_steps: f64,
    /// Steps whose iteration logs are kept.
    pub logged_steps: usize,
    /// Rows of one iteration log at most.
    pub rows_per_log: f64,
}

impl RecordShape {
    /// The record of a run of `steps` steps keeping about `max_recorded_steps` step records and
    /// the logs of `logged_steps` steps (at most one per step), with an outer iteration budget
    /// of `budget` (`None`: unknown, [`api::log::MAX_LOG_ROWS`] rows assumed).
    pub fn new(steps: usize, max_recorded_steps: usize, logged_steps: usize, budget: Option<usize>) -> Self {
        let stride = steps.div_ceil(max_recorded_steps.max(1)).max(1);
        let max_rows = api::log::MAX_LOG_ROWS;
        // a solver may record one row more than its budget (the state before the first iteration)
        let rows = budget.map_or(max_rows, |b| b.saturating_add(1).min(max_rows));
        RecordShape {
            recorded_steps: (steps.div_ceil(stride) + 1) as f64,
            logged_steps: logged_steps.min(steps),
            rows_per_log: rows as f64,
        }
    }

    /// Bytes of one kept iteration log in the record's JSON.
    fn log_bytes(&self) -> f64 {
        1024.0 + self.rows_per_log * LOG_COLUMNS * BYTES_PER_LOGGED_NUMBER
    }

    /// Bytes of the record's JSON at most.
    pub fn record_bytes(&self) -> f64 {
        RECORD_OVERHEAD + self.recorded_steps * BYTES_PER_STEP_RECORD + self.logged_steps as f64 * self.log_bytes()
    }

    /// Memory of the kept logs and of the record: the logs' numbers twice (in the run's outcome
    /// and in the copy of the record the summary reads; 8 bytes each) and the record's JSON text
    /// while it is written.
    pub fn memory(&self) -> f64 {
        let numbers = self.logged_steps as f64 * self.rows_per_log * LOG_COLUMNS;
        2.0 * 8.0 * numbers + self.record_bytes()
    }

    /// This shape with as many logged steps as fit a record of at most `limit` bytes (the
    /// readers' input limit; a larger record could be written but never read back).
    /// [`ResourceError::RecordTooLarge`] when even the step records alone do not fit.
    pub fn fit(self, limit: f64) -> Result<Self, ResourceError> {
        let bare = RecordShape { logged_steps: 0, ..self };
        if bare.record_bytes() > limit {
            return Err(ResourceError::RecordTooLarge {
                recorded_steps: bare.recorded_steps,
                bytes: bare.record_bytes(),
                limit,
            });
        }
        let room = ((limit - bare.record_bytes()) / self.log_bytes()).floor();
        let fits = if room >= self.logged_steps as f64 { self.logged_steps } else { room as usize };
        Ok(RecordShape { logged_steps: fits, ..self })
    }
}

/// The memory the machine can give now (`MemAvailable` of `/proc/meminfo`), if known.
pub fn available_memory() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

/// The default memory limit: the available memory, or 16 GiB where it cannot be read.
pub fn default_limit() -> f64 {
    available_memory().unwrap_or(16.0 * (1u64 << 30) as f64)
}

/// Parses a byte count such as `8G`, `512M`, `2.5GiB`, `1000000` (suffixes are powers of 1024).
pub fn parse_bytes(text: &str) -> Result<f64, ResourceError> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.trim().parse().map_err(|_| ResourceError::NotASize { text: text.to_string() })?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        u => return Err(ResourceError::UnknownUnit { text: text.to_string(), unit: u.to_string() }),
    };
    if !(x.is_finite() && x > 0.0) {
        return Err(ResourceError::NotPositive { text: text.to_string() });
    }
    Ok(x * scale)
}

/// `1.5 GiB`-style text.
pub fn fmt_bytes(b: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = b;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u + 1 == units.len() && x >= 1024.0 {
        return format!("{b:.2e} B");
    }
    format!("{x:.1} {}", units[u])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(dofs: f64, elements: f64, steps: f64) -> ProblemSize {
        ProblemSize { dofs, elements, contacts: 0.0, steps, driver: "nx, ny, nz".into() }
    }

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_bytes("8G").unwrap(), 8.0 * 1024.0 * 1024.0 * 1024.0);
        assert_eq!(parse_bytes("512 MiB").unwrap(), 512.0 * 1024.0 * 1024.0);
        assert_eq!(parse_bytes("1000").unwrap(), 1000.0);
        for bad in ["", "G", "-1G", "8X", "nan"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_bytes("8X"), Err(ResourceError::UnknownUnit { text: "8X".into(), unit: "x".into() }));
        assert_eq!(parse_bytes("-1G"), Err(ResourceError::NotPositive { text: "-1G".into() }));
        assert_eq!(parse_bytes("G").unwrap_err().to_string(), "'G': expected a size such as 8G, 512M or 1000000");
        assert_eq!(fmt_bytes(1536.0), "1.5 KiB");
    }

    #[test]
    fn a_billion_element_mesh_is_refused_and_a_small_one_fits() {
        // 1000^3 hexahedra of 6 tetrahedra: 6e9 elements, 3e9 DOFs
        let huge = size(3.0e9, 6.0e9, 100.0);
        let e = scene_estimate(&huge).check(24.0 * (1u64 << 30) as f64, "twisting_bar").unwrap_err();
        assert!(matches!(&e, ResourceError::OverMemory { what, .. } if what == "twisting_bar"), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("reduce nx, ny, nz") && e.contains("--max-memory"), "{e}");
        let small = size(3.0 * 11.0 * 3.0 * 3.0, 6.0 * 10.0 * 2.0 * 2.0, 400.0);
        let record = RecordShape::new(400, 2000, 8, Some(500));
        assert!(run_estimate(&small, sparse_working_memory(&small), &record).bytes() < 64.0 * 1024.0 * 1024.0);
    }

    #[test]
    fn the_trace_grows_with_the_steps() {
        let long = size(6.0, 0.0, 1e7);
        let b = run_estimate(&long, 0.0, &RecordShape::new(10_000_000, 2000, 0, None)).bytes();
        // 1e7 steps of a 6-DOF body: about 1e10 bytes (the issue measured ~4 KB per step)
        assert!(b > 1e9 && b < 1e11, "{b}");
    }

    /// Issue 44.6: `run --case sphere_stack --set n=50 --set duration=25 --logged-steps 100000`
    /// (2500 steps, pgs's budget of 500 iterations) wrote a 309 MB record that no reader accepts,
    /// and its memory was estimated at 19.6 MiB (peak 411 MB): the record's shape is now sized
    /// before the run, thinned to fit the readers' limit, and counted in the memory estimate.
    #[test]
    fn a_record_is_sized_and_thinned_to_fit_its_readers() {
        let limit = 256.0 * 1024.0 * 1024.0;
        let shape = RecordShape::new(2500, 2000, 100_000, Some(500));
        assert_eq!((shape.logged_steps, shape.recorded_steps, shape.rows_per_log), (2500, 1251.0, 501.0));
        // the worst case is of the size measured (309 MB for the steps that ran their budget)
        assert!(shape.record_bytes() > 300e6, "{}", shape.record_bytes());
        let fit = shape.fit(limit).unwrap();
        assert!(fit.logged_steps > 100 && fit.logged_steps < 2500, "{fit:?}");
        assert!(fit.record_bytes() <= limit);
        assert!(RecordShape { logged_steps: fit.logged_steps + 1, ..fit }.record_bytes() > limit);
        // what fits is kept as asked
        let few = RecordShape::new(2500, 2000, 8, Some(500));
        assert_eq!(few.fit(limit).unwrap(), few);
        // the memory estimate counts the logs and the record's text
        let size = ProblemSize { dofs: 300.0, elements: 0.0, contacts: 500.0, steps: 2500.0, driver: "n".into() };
        let e = run_estimate(&size, 0.0, &fit);
        let record = e.parts.iter().find(|(n, _)| *n == "record").unwrap().1;
        assert!(record > 256e6, "{record}");
        let refusal = e.check(100.0 * 1024.0 * 1024.0, "sphere_stack with pgs").unwrap_err().to_string();
        assert!(refusal.contains("--logged-steps"), "{refusal}");
        // step records alone above the limit: refused in one line naming the limit's variable
        let e = RecordShape::new(1_000_000, 2000, 0, None).fit(1e6).unwrap_err();
        assert!(matches!(e, ResourceError::RecordTooLarge { .. }), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("SIGNORINI_MAX_INPUT_BYTES") && !e.contains('\n'), "{e}");
        // an unknown budget is sized at the log's row limit
        assert_eq!(RecordShape::new(10, 10, 1, None).rows_per_log, api::log::MAX_LOG_ROWS as f64);
    }
}
