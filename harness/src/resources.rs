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

    /// `Err` with one line naming the pair, the parts and the driving parameters when the
    /// estimate exceeds `limit` bytes.
    pub fn check(&self, limit: f64, what: &str) -> Result<(), String> {
        if self.bytes() <= limit {
            return Ok(());
        }
        let parts: Vec<String> = self.parts.iter().map(|(n, b)| format!("{n} {}", fmt_bytes(*b))).collect();
        let largest = self.parts.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|(n, _)| *n);
        let hint = if largest == Some("solver") {
            " (the solver's working memory dominates: another solver or solver setting may fit)"
        } else {
            ""
        };
        Err(format!(
            "{what}: needs about {} ({}), more than the memory limit {} (--max-memory); reduce {}{hint}",
            fmt_bytes(self.bytes()),
            parts.join(", "),
            fmt_bytes(limit),
            self.driver
        ))
    }
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

/// The memory of running `size` with a solver that needs `solver_bytes` of working memory.
pub fn run_estimate(size: &ProblemSize, solver_bytes: f64) -> Estimate {
    let scene =
        3.0 * (size.dofs * BYTES_PER_DOF + size.elements * BYTES_PER_ELEMENT) + size.contacts * BYTES_PER_CONTACT;
    // positions (<= 7 per 6 DOFs of a rigid body, 1 per DOF of a node) and velocities, per step
    let trace = (size.steps + 1.0) * (2.2 * 8.0 * size.dofs + BYTES_PER_STEP);
    Estimate { parts: vec![("scene", scene), ("trace", trace), ("solver", solver_bytes)], driver: size.driver.clone() }
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
pub fn parse_bytes(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.trim().parse().map_err(|_| format!("'{text}': expected a size such as 8G, 512M or 1000000"))?;
    let scale = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        u => return Err(format!("'{text}': unknown unit '{u}' (use K, M, G or T)")),
    };
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("'{text}': must be a positive size"));
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
        assert_eq!(fmt_bytes(1536.0), "1.5 KiB");
    }

    #[test]
    fn a_billion_element_mesh_is_refused_and_a_small_one_fits() {
        // 1000^3 hexahedra of 6 tetrahedra: 6e9 elements, 3e9 DOFs
        let huge = size(3.0e9, 6.0e9, 100.0);
        let e = scene_estimate(&huge).check(24.0 * (1u64 << 30) as f64, "twisting_bar").unwrap_err();
        assert!(e.contains("reduce nx, ny, nz") && e.contains("--max-memory"), "{e}");
        let small = size(3.0 * 11.0 * 3.0 * 3.0, 6.0 * 10.0 * 2.0 * 2.0, 400.0);
        assert!(run_estimate(&small, sparse_working_memory(&small)).bytes() < 64.0 * 1024.0 * 1024.0);
    }

    #[test]
    fn the_trace_grows_with_the_steps() {
        let long = size(6.0, 0.0, 1e7);
        let b = run_estimate(&long, 0.0).bytes();
        // 1e7 steps of a 6-DOF body: about 1e10 bytes (the issue measured ~4 KB per step)
        assert!(b > 1e9 && b < 1e11, "{b}");
    }
}
