//! NVRTC compilation of [`SOURCE`](super::SOURCE): the one place that holds the compile options,
//! used by [`Device::new`](super::Device::new) at start-up and by the CI check
//! (`kernels/examples/nvrtc_check.rs`, run by `ci/gpu/nvrtc-check.sh`), so that CI compiles the
//! kernels exactly as the runtime does.
//!
//! Compiling needs only `libnvrtc` (loaded at run time by cudarc), never `libcuda` or a device.
//! A failed compilation names the `__global__` function(s) the NVRTC log points into
//! ([`CompileError::kernels`]), and `ptxas -v` output is read per kernel by [`parse_ptxas`].

use super::SOURCE;
use crate::backend::Precision;
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};
use std::fmt;

/// The name under which NVRTC compiles [`SOURCE`] (it prefixes every line of its log).
pub const SOURCE_NAME: &str = "signorini_kernels.cu";

/// Every `__global__` function of [`SOURCE`] that the host launches, in launch-table order.
pub const KERNELS: [&str; 17] = [
    "spmv_csr",
    "gemv_dense",
    "dot_partial",
    "sum_partials",
    "axpy",
    "xpby",
    "mul_elem",
    "scale_add",
    "ncp_normal",
    "friction_w",
    "csr_rowdot",
    "absmax_partial",
    "max_partials",
    "lg_contact_rows",
    "lg_newton_rhs",
    "cr_jacobi_pinv",
    "pd_local",
];

/// Why NVRTC produced no PTX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// `libnvrtc` could not be loaded (it is looked up as `libnvrtc.so`, `libnvrtc.so.13`, … on
    /// the library path).
    NvrtcMissing,
    /// NVRTC ran and rejected the source.
    Rejected {
        /// The `__global__` functions that the log's error lines point into, in source order
        /// (empty when the errors are outside every kernel, e.g. at file scope).
        kernels: Vec<String>,
        /// NVRTC's log.
        log: String,
    },
    /// Any other NVRTC failure (program creation, reading the PTX back).
    Nvrtc(String),
}

impl CompileError {
    /// The kernels a [`CompileError::Rejected`] points into (empty otherwise).
    pub fn kernels(&self) -> &[String] {
        match self {
            Self::Rejected { kernels, .. } => kernels,
            _ => &[],
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NvrtcMissing => write!(f, "libnvrtc not found (CUDA runtime compiler missing)"),
            Self::Rejected { kernels, log } => {
                if kernels.is_empty() {
                    write!(f, "NVRTC rejected the source outside any kernel:\n{log}")
                } else {
                    write!(f, "NVRTC rejected kernel {}:\n{log}", kernels.join(", "))
                }
            }
            Self::Nvrtc(e) => write!(f, "NVRTC: {e}"),
        }
    }
}

impl std::error::Error for CompileError {}

/// Whether `libnvrtc` can be loaded (nothing else is needed to compile).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library; it calls nothing in it.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// Compiles [`SOURCE`] to PTX in precision `real` (`-DREAL=double|float`), for the virtual
/// architecture of `arch` (`"sm_80"` compiles for `compute_80`; `None`: NVRTC's default, which
/// the driver JIT-compiles for whatever device loads it: what [`Device::new`](super::Device::new)
/// does).
pub fn compile_ptx(real: Precision, arch: Option<&str>) -> Result<Ptx, CompileError> {
    compile_source(SOURCE, real, arch)
}

/// [`compile_ptx`] on another source (the same options; tests use it on broken kernels).
pub fn compile_source(src: &str, real: Precision, arch: Option<&str>) -> Result<Ptx, CompileError> {
    if !nvrtc_available() {
        return Err(CompileError::NvrtcMissing);
    }
    let real_c = match real {
        Precision::F64 => "double",
        Precision::F32 => "float",
    };
    let mut options = vec![format!("-DREAL={real_c}")];
    if let Some(a) = arch {
        let virt = a.strip_prefix("sm_").map_or_else(|| a.to_string(), |n| format!("compute_{n}"));
        options.push(format!("--gpu-architecture={virt}"));
    }
    let opts = CompileOptions {
        // no fused multiply-add: products and sums round like the sequential CPU reference
        fmad: Some(false),
        options,
        name: Some(SOURCE_NAME.into()),
        ..Default::default()
    };
    compile_ptx_with_opts(src, opts).map_err(|e| match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => {
            let log = log.to_string_lossy().into_owned();
            CompileError::Rejected { kernels: kernels_in_log(src, &log), log }
        }
        other => CompileError::Nvrtc(format!("{other:?}")),
    })
}

/// The `__global__` functions of `src` with the (1-based, inclusive) lines their definitions span,
/// in source order. Braces are counted outside comments; the kernels are plain C.
pub fn kernel_spans(src: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = src.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let code = strip_comment(lines[i]);
        let Some(g) = code.find("__global__") else {
            i += 1;
            continue;
        };
        let name = code[g..]
            .split('(')
            .next()
            .and_then(|head| head.split_whitespace().last())
            .unwrap_or("?")
            .trim_start_matches('*')
            .to_string();
        let (start, mut depth, mut opened) = (i, 0i64, false);
        let mut end = lines.len() - 1;
        'scan: for (j, line) in lines.iter().enumerate().skip(i) {
            for ch in strip_comment(line).chars() {
                match ch {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
                if opened && depth == 0 {
                    end = j;
                    break 'scan;
                }
            }
        }
        out.push((name, start + 1, end + 1));
        i = end + 1;
    }
    out
}

fn strip_comment(line: &str) -> &str {
    line.find("//").map_or(line, |p| &line[..p])
}

/// The kernels that the error lines of an NVRTC `log` point into: lines like
/// `signorini_kernels.cu(123): error: ...` are mapped to the `__global__` function of `src`
/// whose definition spans line 123. Each kernel once, in source order.
pub fn kernels_in_log(src: &str, log: &str) -> Vec<String> {
    let spans = kernel_spans(src);
    let mut hit = vec![false; spans.len()];
    for line in log.lines() {
        let Some(rest) = line.split_once('(').map(|(_, r)| r) else { continue };
        let Some((num, tail)) = rest.split_once(')') else { continue };
        if !tail.trim_start_matches(':').trim_start().starts_with("error") {
            continue;
        }
        let Ok(n) = num.trim().parse::<usize>() else { continue };
        if let Some(k) = spans.iter().position(|(_, a, b)| (*a..=*b).contains(&n)) {
            hit[k] = true;
        }
    }
    spans.into_iter().zip(hit).filter(|(_, h)| *h).map(|((name, _, _), _)| name).collect()
}

/// Resources of one kernel as reported by `ptxas -v`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxasKernel {
    /// The entry function.
    pub name: String,
    /// The target (`sm_80`, …).
    pub arch: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of spill stores.
    pub spill_stores: u32,
    /// Bytes of spill loads.
    pub spill_loads: u32,
    /// Bytes of stack frame.
    pub stack: u32,
}

/// Reads the per-kernel lines of `ptxas -v` (its stderr):
/// ```text
/// ptxas info    : Compiling entry function 'spmv_csr' for 'sm_80'
/// ptxas info    : Function properties for spmv_csr
///     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
/// ptxas info    : Used 16 registers, used 0 barriers, 392 bytes cmem[0]
/// ```
pub fn parse_ptxas(report: &str) -> Vec<PtxasKernel> {
    fn number_before(s: &str, unit: &str) -> Option<u32> {
        let p = s.find(unit)?;
        s[..p].split(|c: char| !c.is_ascii_digit()).rfind(|t| !t.is_empty())?.parse().ok()
    }
    let mut out: Vec<PtxasKernel> = Vec::new();
    for line in report.lines() {
        if let Some(rest) = line.split_once("Compiling entry function '").map(|(_, r)| r) {
            let mut parts = rest.split('\'');
            let name = parts.next().unwrap_or("?").to_string();
            let arch = parts.nth(1).unwrap_or("?").to_string();
            out.push(PtxasKernel { name, arch, registers: 0, spill_stores: 0, spill_loads: 0, stack: 0 });
            continue;
        }
        let Some(k) = out.last_mut() else { continue };
        if line.contains("spill stores") {
            k.stack = number_before(line, "bytes stack frame").unwrap_or(0);
            k.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
            k.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
        } else if line.contains("Used ") && line.contains(" registers") {
            k.registers = number_before(line, " registers").unwrap_or(0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BROKEN: &str = "// two kernels, the second broken\n\
        extern \"C\" __global__ void fine(int n, double* y) {\n\
            int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
            if (i < n) { y[i] = 1.0; }\n\
        }\n\
        \n\
        extern \"C\" __global__ void broken_kernel(int n, double* y) {\n\
            int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
            if (i < n) {\n\
                y[i] = undeclared_symbol;\n\
            }\n\
        }\n";

    #[test]
    fn every_launched_kernel_is_defined_once_in_the_source() {
        let spans = kernel_spans(SOURCE);
        let names: Vec<&str> = spans.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names, KERNELS, "kernels.cu's __global__ functions vs the launch table");
        for w in spans.windows(2) {
            assert!(w[0].2 < w[1].1, "{} and {} overlap", w[0].0, w[1].0);
        }
    }

    #[test]
    fn log_lines_map_to_the_enclosing_kernel() {
        assert_eq!(kernel_spans(BROKEN), vec![("fine".to_string(), 2, 5), ("broken_kernel".to_string(), 7, 12)]);
        let log = "signorini_kernels.cu(10): error: identifier \"undeclared_symbol\" is undefined\n\
                   signorini_kernels.cu(3): warning #177-D: variable was declared but never referenced\n\
                   1 error detected in the compilation of \"signorini_kernels.cu\".\n";
        assert_eq!(kernels_in_log(BROKEN, log), vec!["broken_kernel"]);
        assert!(kernels_in_log(BROKEN, "signorini_kernels.cu(1): error: x\n").is_empty());
    }

    /// Runs NVRTC when it can be loaded (`ci/gpu/nvrtc-check.sh` puts it on the library path);
    /// otherwise prints why it checked nothing.
    #[test]
    fn a_broken_kernel_fails_with_its_name() {
        if !nvrtc_available() {
            eprintln!("skipping NVRTC test: libnvrtc not found");
            return;
        }
        let err = compile_source(BROKEN, Precision::F64, Some("sm_80")).expect_err("the source is broken");
        assert_eq!(err.kernels(), ["broken_kernel"], "{err}");
        assert!(err.to_string().contains("NVRTC rejected kernel broken_kernel"), "{err}");
        assert!(err.to_string().contains("undeclared_symbol"), "{err}");
    }

    #[test]
    fn the_kernels_compile_when_nvrtc_is_present() {
        if !nvrtc_available() {
            eprintln!("skipping NVRTC test: libnvrtc not found");
            return;
        }
        for real in [Precision::F64, Precision::F32] {
            for arch in [None, Some("sm_80"), Some("sm_90")] {
                let ptx = compile_ptx(real, arch).unwrap_or_else(|e| panic!("{real:?} {arch:?}: {e}"));
                let text = ptx.to_src();
                for k in KERNELS {
                    assert!(text.contains(&format!(".entry {k}(")), "{k} missing from the PTX ({real:?} {arch:?})");
                }
            }
        }
    }

    #[test]
    fn ptxas_report_is_read_per_kernel() {
        let report = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'spmv_csr' for 'sm_80'\n\
            ptxas info    : Function properties for spmv_csr\n\
            \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Used 18 registers, used 0 barriers, 400 bytes cmem[0]\n\
            ptxas info    : Compiling entry function 'csr_rowdot' for 'sm_80'\n\
            ptxas info    : Function properties for csr_rowdot\n\
            \x20   8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
            ptxas info    : Used 255 registers, 432 bytes cmem[0]\n";
        let k = parse_ptxas(report);
        assert_eq!(k.len(), 2);
        assert_eq!(
            k[0],
            PtxasKernel {
                name: "spmv_csr".into(),
                arch: "sm_80".into(),
                registers: 18,
                spill_stores: 0,
                spill_loads: 0,
                stack: 0
            }
        );
        assert_eq!((k[1].registers, k[1].spill_stores, k[1].spill_loads, k[1].stack), (255, 4, 12, 8));
    }
}
