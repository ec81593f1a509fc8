//! Compiles every CUDA kernel of `kernels/src/gpu/kernels.cu` with NVRTC through
//! `kernels::gpu::compile_ptx` (the options `Device::new` uses), for each precision (f64, f32)
//! and target architecture, then assembles the PTX with `ptxas -v` and prints the registers and
//! spills of every kernel. No GPU and no `libcuda` are needed, only `libnvrtc` and `ptxas`.
//!
//! ```sh
//! cargo run -p kernels --features gpu --example nvrtc_check -- [--arch sm_80,sm_90] [--ptxas PATH] [--out DIR]
//! ```
//! Exit status: 0 all kernels compiled without spills; 1 a kernel failed to compile, spilled or is
//! missing from the ptxas report (its name and the compiler log are printed); 2 NVRTC or ptxas
//! could not be run. `ci/gpu/nvrtc-check.sh` installs both and runs this.

use kernels::backend::Precision;
use kernels::gpu::{compile_ptx, compile_source, nvrtc_available, parse_ptxas, CompileError, KERNELS};
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Instant;

/// A source with one broken kernel: the check first makes sure that such a failure names it.
const BROKEN: &str = r#"
extern "C" __global__ void intact(int n, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = 0.0; }
}
extern "C" __global__ void deliberately_broken(int n, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = not_declared; }
}
"#;

struct Args {
    archs: Vec<String>,
    ptxas: String,
    out: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        archs: vec!["sm_80".into(), "sm_90".into()],
        ptxas: std::env::var("PTXAS").unwrap_or_else(|_| "ptxas".into()),
        out: PathBuf::from("target/nvrtc-check/ptx"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--arch" => a.archs = value()?.split(',').map(str::to_string).collect(),
            "--ptxas" => a.ptxas = value()?,
            "--out" => a.out = PathBuf::from(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let t0 = Instant::now();
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("nvrtc_check: {e}");
            return ExitCode::from(2);
        }
    };
    if !nvrtc_available() {
        eprintln!("nvrtc: libnvrtc not found on the library path (LD_LIBRARY_PATH); nothing compiled");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        eprintln!("nvrtc_check: cannot create {}: {e}", a.out.display());
        return ExitCode::from(2);
    }
    let mut failures: Vec<String> = Vec::new();

    // 1. a broken kernel must fail, naming itself
    match compile_source(BROKEN, Precision::F64, Some(&a.archs[0])) {
        Err(e @ CompileError::Rejected { .. }) if e.kernels() == ["deliberately_broken"] => {
            println!("nvrtc: self-test: a broken kernel is reported by name (deliberately_broken)");
        }
        other => {
            failures.push(format!("self-test: expected NVRTC to reject kernel deliberately_broken, got {other:?}"))
        }
    }

    // 2. every kernel, each precision and architecture
    for real in [Precision::F64, Precision::F32] {
        for arch in &a.archs {
            let ptx = match compile_ptx(real, Some(arch)) {
                Ok(p) => p.to_src(),
                Err(e) => {
                    let who = if e.kernels().is_empty() { "<file scope>".to_string() } else { e.kernels().join(",") };
                    println!("nvrtc: {who} {arch} {}: COMPILE FAILED", real.name());
                    failures.push(format!("{arch} {}: {e}", real.name()));
                    continue;
                }
            };
            let file = a.out.join(format!("signorini_kernels_{arch}_{}.ptx", real.name()));
            let cubin = file.with_extension("cubin");
            if let Err(e) = std::fs::write(&file, &ptx) {
                eprintln!("nvrtc_check: cannot write {}: {e}", file.display());
                return ExitCode::from(2);
            }
            let run =
                Command::new(&a.ptxas).arg(format!("-arch={arch}")).arg("-v").arg(&file).arg("-o").arg(&cubin).output();
            let out = match run {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("nvrtc_check: cannot run ptxas ({}): {e}", a.ptxas);
                    return ExitCode::from(2);
                }
            };
            let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            if !out.status.success() {
                println!("nvrtc: ptxas {arch} {}: FAILED", real.name());
                failures.push(format!("ptxas -arch={arch} on {} failed:\n{report}", file.display()));
                continue;
            }
            let kernels = parse_ptxas(&report);
            for name in KERNELS {
                let Some(k) = kernels.iter().find(|k| k.name == name) else {
                    println!("nvrtc: {name} {arch} {}: MISSING from the ptxas report", real.name());
                    failures.push(format!("{name} {arch} {}: not in the ptxas report:\n{report}", real.name()));
                    continue;
                };
                let spills = k.spill_stores > 0 || k.spill_loads > 0;
                println!(
                    "nvrtc: {name} {arch} {}: {} registers, {} spill stores, {} spill loads{}",
                    real.name(),
                    k.registers,
                    k.spill_stores,
                    k.spill_loads,
                    if spills { "  <-- SPILLS" } else { "" }
                );
                if spills {
                    failures.push(format!("{name} {arch} {} spills registers; ptxas log:\n{report}", real.name()));
                }
            }
        }
    }

    let secs = t0.elapsed().as_secs_f64();
    if failures.is_empty() {
        println!(
            "nvrtc: OK: {} kernels x {} precisions x {} architectures compiled, no spills ({secs:.1} s)",
            KERNELS.len(),
            2,
            a.archs.len()
        );
        ExitCode::SUCCESS
    } else {
        eprintln!("nvrtc: {} failure(s):", failures.len());
        for f in &failures {
            eprintln!("---\n{f}");
        }
        ExitCode::FAILURE
    }
}
