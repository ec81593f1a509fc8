//! Criterion benchmarks of the shared numerical kernels every solver leans on: CSR SpMV, sparse
//! Cholesky refactorization with a reused symbolic analysis (plus its solve, and the sparse-inverse
//! apply `Sᵀ(S b)` of Zeng et al.'s global step on the same matrix), a fixed budget of
//! conjugate-residual iterations, and the Coulomb cone projection. The test matrix is the 3-D
//! 7-point Laplacian plus a unit shift (SPD, the sparsity of a small FEM mesh), at two sizes.
//!
//! `cargo bench --bench kernels` (add `-- --quick` for a fast pass).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use kernels::backend::Cpu;
use kernels::cholesky::{CholeskyParams, SparseCholesky};
use kernels::iterative::{cr::cr, CsrOperator, KrylovParams};
use kernels::sparse::Csr;
use kernels::sparse_inverse::SparseInverse;
use std::hint::black_box;
use std::time::Duration;

/// `m^3 x m^3` Laplacian + identity, as triplets (both triangles).
fn laplacian(m: usize) -> (usize, Vec<(usize, usize, f64)>) {
    let n = m * m * m;
    let id = |i: usize, j: usize, k: usize| (i * m + j) * m + k;
    let mut t = Vec::with_capacity(7 * n);
    for i in 0..m {
        for j in 0..m {
            for k in 0..m {
                let r = id(i, j, k);
                t.push((r, r, 7.0));
                let mut nb = |c: usize| t.push((r, c, -1.0));
                if i > 0 {
                    nb(id(i - 1, j, k));
                }
                if i + 1 < m {
                    nb(id(i + 1, j, k));
                }
                if j > 0 {
                    nb(id(i, j - 1, k));
                }
                if j + 1 < m {
                    nb(id(i, j + 1, k));
                }
                if k > 0 {
                    nb(id(i, j, k - 1));
                }
                if k + 1 < m {
                    nb(id(i, j, k + 1));
                }
            }
        }
    }
    (n, t)
}

fn kernels(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernels");
    g.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for m in [10usize, 20] {
        let (n, triplets) = laplacian(m);
        let a = Csr::from_triplets(n, n, &triplets);
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
        let mut y = vec![0.0; n];
        g.throughput(Throughput::Elements(a.nnz() as u64));
        g.bench_with_input(BenchmarkId::new("spmv", n), &n, |b, _| b.iter(|| a.mul_into(black_box(&x), &mut y)));

        let (col_ptr, row_idx, values) = a.lower_csc();
        let mut chol = SparseCholesky::analyze(n, col_ptr, row_idx, CholeskyParams::default()).expect("SPD pattern");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("cholesky_refactor", n), &n, |b, _| {
            b.iter(|| chol.factorize(black_box(&values)).expect("SPD"))
        });
        chol.factorize(&values).expect("SPD");
        let mut rhs = x.clone();
        g.bench_with_input(BenchmarkId::new("cholesky_solve", n), &n, |b, _| {
            b.iter(|| {
                rhs.copy_from_slice(&x);
                chol.solve_in_place(black_box(&mut rhs));
            })
        });

        // Zeng et al.'s global step: `x = Sᵀ(S b)` with the sparse inverse factor `S = L⁻¹` (two
        // SpMVs, parallel on a GPU) against the two triangular solves with `L` above, same matrix
        let inv = SparseInverse::new(&a).expect("SPD");
        let (mut tmp, mut out) = (vec![0.0; n], vec![0.0; n]);
        g.bench_with_input(BenchmarkId::new("sparse_inverse_apply", n), &n, |b, _| {
            b.iter(|| inv.solve(&Cpu, black_box(&x), &mut tmp, &mut out))
        });

        let params = KrylovParams { max_iterations: 20, rel_tolerance: 0.0, abs_tolerance: 0.0 };
        let mut sol = vec![0.0; n];
        g.bench_with_input(BenchmarkId::new("cr_20_iterations", n), &n, |b, _| {
            b.iter(|| {
                sol.iter_mut().for_each(|s| *s = 0.0);
                let mut op = CsrOperator { matrix: &a, backend: &Cpu };
                black_box(cr(&Cpu, &mut op, &x, &mut sol, &params))
            })
        });
    }
    let points: Vec<[f64; 3]> =
        (0..1000).map(|i| [(i as f64 * 0.71).sin(), (i as f64 * 1.3).cos(), (i as f64 * 0.19).sin() * 2.0]).collect();
    g.throughput(Throughput::Elements(points.len() as u64));
    g.bench_function("cone_project_1000", |b| {
        b.iter(|| points.iter().map(|p| kernels::cone::project(black_box(*p), 0.5)[0]).sum::<f64>())
    });
    g.finish();
}

criterion_group!(benches, kernels);
criterion_main!(benches);
