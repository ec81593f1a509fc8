//! The CPU primitives, the default coarse operations, selection and the stage clock.

use super::*;
use crate::iterative::LinearOperator;

#[test]
fn cpu_primitives() {
    let b = Cpu;
    let a = Csr::from_triplets(2, 2, &[(0, 0, 2.0), (1, 0, 1.0), (1, 1, 3.0)]);
    let mut y = vec![0.0; 2];
    b.spmv(&a, &[1.0, 1.0], &mut y);
    assert_eq!(y, vec![2.0, 4.0]);
    assert_eq!(b.dot(&y, &[1.0, 1.0]), 6.0);
    b.axpy(2.0, &[1.0, 1.0], &mut y);
    assert_eq!(y, vec![4.0, 6.0]);
    b.xpby(&[1.0, 1.0], 0.5, &mut y);
    assert_eq!(y, vec![3.0, 4.0]);
    let mut z = vec![0.0; 2];
    b.mul_elem(&[2.0, 0.5], &y, &mut z);
    assert_eq!(z, vec![6.0, 2.0]);
}

/// Asking for a GPU where none can start gives the CPU, the reason and one message line:
/// without the feature the reason names the feature; with it (on a machine without a
/// driver or device) it is the probe's reason. Never a panic.
#[test]
fn gpu_request_falls_back_to_cpu_with_reason() {
    for kind in [BackendKind::Gpu, BackendKind::Auto] {
        let s = select(kind, Precision::F64).unwrap();
        let Some(reason) = s.fallback_reason.clone() else {
            #[cfg(feature = "gpu")]
            {
                assert_eq!(s.backend.name(), "gpu");
                continue;
            }
            #[cfg(not(feature = "gpu"))]
            unreachable!("a GPU started without the `gpu` feature");
        };
        #[cfg(not(feature = "gpu"))]
        {
            assert_eq!(reason, BackendError::NoGpuFeature);
            assert!(reason.to_string().contains("without the `gpu` cargo feature"), "{reason}");
        }
        #[cfg(feature = "gpu")]
        assert_eq!(Err(reason.clone()), crate::gpu::probe().map(|_| ()), "reason is the probe's");
        assert_eq!(s.backend.name(), "cpu");
        assert_eq!(s.backend.precision(), Precision::F64);
        let msg = s.fallback_message().unwrap();
        assert!(
            msg.contains(&reason.to_string()) && msg.ends_with("falling back to CPU") && !msg.contains('\n'),
            "{msg}"
        );
        assert_eq!(s.record_label(), format!("cpu (gpu unavailable: {reason})"));
    }
}

/// The CPU is the default everywhere: `AnyBackend::default()` and `select(Cpu)`; f32 on the CPU
/// is refused rather than silently ignored.
#[test]
fn cpu_is_the_default_backend() {
    assert_eq!(AnyBackend::default().name(), "cpu");
    let s = select(BackendKind::Cpu, Precision::F64).unwrap();
    assert!(s.fallback_reason.is_none() && s.fallback_message().is_none());
    assert_eq!(s.record_label(), "cpu");
    assert_eq!(select(BackendKind::Cpu, Precision::F32).unwrap_err(), BackendError::F32OnCpu);
    assert_eq!(BackendKind::from_name("auto"), Some(BackendKind::Auto));
    assert_eq!(BackendKind::from_name("cuda"), None);
    assert_eq!(Precision::from_name("f32").map(Precision::name), Some("f32"));
    assert!(Cpu.device_memory().is_none());
}

/// The trait's default coarse operations equal the primitives they are made of, and
/// `AnyBackend::Cpu` dispatches to them.
#[test]
fn default_coarse_operations_and_stage_clock() {
    let w = Csr::from_triplets(3, 3, &[(0, 0, 4.0), (0, 1, 1.0), (1, 0, 1.0), (1, 1, 3.0), (2, 2, 2.0)]);
    let (omega, e) = (vec![1.0, 0.5, 1.0], vec![0.0, 0.1, 0.0]);
    let pinv = vec![1.0; 3];
    let b = vec![1.0, 2.0, 3.0];
    let params = PcrParams { max_iterations: 50, rel_tolerance: 1e-14, abs_tolerance: 0.0 };
    let (mut x, mut ws) = (vec![0.0; 3], KrylovWorkspace::default());
    let info = AnyBackend::Cpu.pcr_scaled_delassus(&w, &omega, &e, &pinv, &b, &mut x, &params, &mut ws).unwrap();
    assert!(info.converged);
    // a second solve from the same guess reuses the workspace and returns the same answer
    let mut x2 = vec![0.0; 3];
    AnyBackend::Cpu.pcr_scaled_delassus(&w, &omega, &e, &pinv, &b, &mut x2, &params, &mut ws).unwrap();
    assert_eq!(x, x2);
    let mut op = ScaledDelassus { w: &w, omega: &omega, e: &e, backend: &Cpu, tmp: vec![0.0; 3], tmp2: vec![0.0; 3] };
    let mut ax = vec![0.0; 3];
    op.apply(&x, &mut ax);
    assert!(ax.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12), "{ax:?}");
    let rows = Cpu.ncp_normal_rows(Ncp::FischerBurmeister, &[0.0, 1.0], &[0.0, 2.0], &[0.3, 1.0]);
    assert_eq!(rows[0], ncp::normal_row(Ncp::FischerBurmeister, 0.0, 0.0, 0.3));
    assert_eq!(rows[1], ncp::normal_row(Ncp::FischerBurmeister, 1.0, 2.0, 1.0));
    let mut clock = StageClock::start(&Cpu);
    std::thread::sleep(std::time::Duration::from_millis(2));
    clock.lap(Stage::Constraint);
    clock.skip();
    clock.lap(Stage::Local);
    assert!(clock.times.constraint_s >= 0.002 && clock.times.total() >= clock.times.constraint_s);
    assert_eq!(clock.times.entries()[3].0, "t_constraint_s");
}
