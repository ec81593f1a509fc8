// CUDA C kernels of the signorini GPU backend (kernels/src/gpu/mod.rs), compiled at run time by
// NVRTC. `REAL` is `double` (default) or `float` (precision = f32), set with -DREAL=... by the
// host. Compiled with --fmad=false so that products and sums round exactly like the sequential
// CPU reference (kernels::backend::Cpu): SpMV rows, axpy and the NCP functions then agree bit for
// bit in f64; only the reductions (dot) sum in a different order.
//
// Conventions: CSR with int row pointers / column indices (host asserts nnz < 2^31); vectors of
// REAL; reductions accumulate in double whatever REAL is; one thread per row / entry / contact.

#ifndef REAL
#define REAL double
#endif
typedef REAL real;

#define DOT_THREADS 256

// y = A x (one thread per row, entries in stored order: same rounding as Csr::mul_into).
extern "C" __global__ void spmv_csr(int nrows, const int* indptr, const int* indices, const real* data,
                                    const real* x, real* y) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nrows) {
        real s = 0;
        for (int k = indptr[r]; k < indptr[r + 1]; ++k) {
            s += data[k] * x[indices[k]];
        }
        y[r] = s;
    }
}

// y = A x for a dense row-major m x n matrix (the dense Delassus layout).
extern "C" __global__ void gemv_dense(int m, int n, const real* a, const real* x, real* y) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m) {
        real s = 0;
        const real* row = a + (long long)r * n;
        for (int c = 0; c < n; ++c) {
            s += row[c] * x[c];
        }
        y[r] = s;
    }
}

// partial[b] = sum over a grid-stride slice of x_i y_i (double accumulation, tree reduction in
// shared memory); the host launches DOT_THREADS threads per block.
extern "C" __global__ void dot_partial(int n, const real* x, const real* y, double* partial) {
    __shared__ double s[DOT_THREADS];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        acc += (double)x[i] * (double)y[i];
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            s[threadIdx.x] += s[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
    }
}

// out[0] = sum of partial[0..n) (one block of DOT_THREADS threads).
extern "C" __global__ void sum_partials(int n, const double* partial, double* out) {
    __shared__ double s[DOT_THREADS];
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        acc += partial[i];
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            s[threadIdx.x] += s[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = s[0];
    }
}

// y += alpha x
extern "C" __global__ void axpy(int n, real alpha, const real* x, real* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] += alpha * x[i];
    }
}

// y = x + beta y
extern "C" __global__ void xpby(int n, const real* x, real beta, real* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i] + beta * y[i];
    }
}

// z = d .* x
extern "C" __global__ void mul_elem(int n, const real* d, const real* x, real* z) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        z[i] = d[i] * x[i];
    }
}

// y = omega .* wz + e .* x: the tail of the scaled Delassus operator (Omega W Omega + E) x with
// wz = W (omega .* x); same rounding as y = omega .* wz; t = e .* x; y += t.
extern "C" __global__ void scale_add(int n, const real* omega, const real* wz, const real* e, const real* x,
                                     real* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        real a = omega[i] * wz[i];
        real b = e[i] * x[i];
        y[i] = a + b;
    }
}

// Per-contact normal NCP row (kernels::ncp::normal_row): fb != 0 Fischer-Burmeister, else min map.
extern "C" __global__ void ncp_normal(int m, int fb, const real* c, const real* lam, const real* r, real* phi,
                                      real* alpha, real* s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) {
        return;
    }
    real ci = c[i], li = lam[i], ri = r[i];
    if (fb) {
        real d = hypot(ci, ri * li);
        if (d == 0) {
            phi[i] = 0;
            alpha[i] = 0;
            s[i] = ri;
        } else {
            phi[i] = ci + ri * li - d;
            alpha[i] = 1 - ci / d;
            s[i] = ri * (1 - ri * li / d);
        }
    } else {
        if (ci <= ri * li) {
            phi[i] = ci;
            alpha[i] = 1;
            s[i] = 0;
        } else {
            phi[i] = ri * li;
            alpha[i] = 0;
            s[i] = ri;
        }
    }
}

// Per-contact friction compliance W >= 0 (kernels::ncp::friction_w).
extern "C" __global__ void friction_w(int m, int fb, const real* v, const real* mu_ln, const real* lam_f,
                                      const real* r, real* w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) {
        return;
    }
    real vi = v[i], ml = mu_ln[i], lf = lam_f[i], ri = r[i];
    real s = ml - lf;
    real out;
    if (fb && s >= 0) {
        real rr = hypot(vi, ri * s);
        real num = (rr + ri * s > 0) ? vi * vi / (rr + ri * s) : (real)0;
        real den = ri * lf + ((vi + ri * s + rr > 0) ? 2 * vi * ri * s / (vi + ri * s + rr) : (real)0);
        out = (num == 0) ? (real)0 : ri * num / den;
    } else {
        out = (vi <= ri * s) ? (real)0 : (vi - ri * s) / ml;
    }
    // f64::max(0.0): NaN gives 0
    w[i] = (out > 0) ? out : (real)0;
}

// Numeric phase of C = A B^T on a given pattern: c_val[k] = dot(row c_row[k] of A, row c_col[k]
// of B), both rows sorted by column (a merge). With A = H, B = S this is Y^T = H S^T = (S H^T)^T;
// with A = B = Y^T it is W = Y^T Y (Zeng Eq. 27). One thread per stored entry of C.
extern "C" __global__ void csr_rowdot(int nnz, const int* c_row, const int* c_col, const int* a_ptr,
                                      const int* a_idx, const real* a_val, const int* b_ptr, const int* b_idx,
                                      const real* b_val, real* c_val) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nnz) {
        return;
    }
    int i = c_row[k], j = c_col[k];
    int p = a_ptr[i], pe = a_ptr[i + 1], q = b_ptr[j], qe = b_ptr[j + 1];
    real s = 0;
    while (p < pe && q < qe) {
        int ca = a_idx[p], cb = b_idx[q];
        if (ca == cb) {
            s += a_val[p] * b_val[q];
            ++p;
            ++q;
        } else if (ca < cb) {
            ++p;
        } else {
            ++q;
        }
    }
    c_val[k] = s;
}
