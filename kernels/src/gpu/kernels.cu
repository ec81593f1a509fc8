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

// Normal NCP row (kernels::ncp::normal_row) of gap c, multiplier li, scale ri: fb != 0
// Fischer-Burmeister, else min map.
__device__ void normal_row(int fb, real ci, real li, real ri, real* phi, real* alpha, real* s) {
    if (fb) {
        real d = hypot(ci, ri * li);
        if (d == 0) {
            *phi = 0;
            *alpha = 0;
            *s = ri;
        } else {
            *phi = ci + ri * li - d;
            *alpha = 1 - ci / d;
            *s = ri * (1 - ri * li / d);
        }
    } else {
        if (ci <= ri * li) {
            *phi = ci;
            *alpha = 1;
            *s = 0;
        } else {
            *phi = ri * li;
            *alpha = 0;
            *s = ri;
        }
    }
}

// Friction compliance W >= 0 (kernels::ncp::friction_w) of slip speed vi, mu lambda_n ml,
// |lambda_f| lf, scale ri.
__device__ real friction_compliance(int fb, real vi, real ml, real lf, real ri) {
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
    return (out > 0) ? out : (real)0;
}

// Per-contact normal NCP row (kernels::ncp::normal_row).
extern "C" __global__ void ncp_normal(int m, int fb, const real* c, const real* lam, const real* r, real* phi,
                                      real* alpha, real* s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        normal_row(fb, c[i], lam[i], r[i], &phi[i], &alpha[i], &s[i]);
    }
}

// Per-contact friction compliance W >= 0 (kernels::ncp::friction_w).
extern "C" __global__ void friction_w(int m, int fb, const real* v, const real* mu_ln, const real* lam_f,
                                      const real* r, real* w) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        w[i] = friction_compliance(fb, v[i], mu_ln[i], lam_f[i], r[i]);
    }
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

// max(a, b), NaN if either is NaN (fmax would drop it): kernels::backend::nan_max.
__device__ double nan_max(double a, double b) {
    return (a != a || b != b) ? a + b : (a > b ? a : b);
}

// partial[b] = max |x_i| over a grid-stride slice (NaN-propagating); the host launches DOT_THREADS
// threads per block.
extern "C" __global__ void absmax_partial(int n, const real* x, double* partial) {
    __shared__ double s[DOT_THREADS];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        acc = nan_max(acc, fabs((double)x[i]));
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            s[threadIdx.x] = nan_max(s[threadIdx.x], s[threadIdx.x + w]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
    }
}

// out[0] = max of partial[0..n) (one block of DOT_THREADS threads, NaN-propagating).
extern "C" __global__ void max_partials(int n, const double* partial, double* out) {
    __shared__ double s[DOT_THREADS];
    double acc = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        acc = nan_max(acc, partial[i]);
    }
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            s[threadIdx.x] = nan_max(s[threadIdx.x], s[threadIdx.x + w]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = s[0];
    }
}

// The NCP rows of one contact in Zeng's local-global step (kernels::ncp::contact_rows), one
// thread per contact: from dq = H (q - q_t), the multipliers lam (3 per contact) and the
// per-contact gap0, mu, r_n, r_f; writes omega, ediag, phi (3 per contact) and |phi_n|,
// max(|phi_t1|, |phi_t2|), stick and slip flags (1 per contact).
extern "C" __global__ void lg_contact_rows(int nc, int fb, real h, const real* dq, const real* lam,
                                           const real* gap0, const real* mu, const real* r_n, const real* r_f,
                                           real* omega, real* ediag, real* phi, real* phi_n, real* phi_f,
                                           real* stick, real* slip) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nc) {
        return;
    }
    real h2 = h * h;
    real ln = lam[3 * i], lt0 = lam[3 * i + 1], lt1 = lam[3 * i + 2];
    real pn, an, sn;
    normal_row(fb, gap0[i] + dq[3 * i], ln, r_n[i], &pn, &an, &sn);
    omega[3 * i] = an;
    ediag[3 * i] = sn / h2;
    phi[3 * i] = pn;
    real vt0 = dq[3 * i + 1] / h, vt1 = dq[3 * i + 2] / h;
    real st = 0, sl = 0;
    if (ln > 0 && mu[i] > 0) {
        real ef = friction_compliance(fb, hypot(vt0, vt1), mu[i] * ln, hypot(lt0, lt1), r_f[i]);
        if (ef == 0) {
            st = 1;
        } else {
            sl = 1;
        }
        omega[3 * i + 1] = 1;
        omega[3 * i + 2] = 1;
        ediag[3 * i + 1] = ef / h;
        ediag[3 * i + 2] = ef / h;
        phi[3 * i + 1] = vt0 + ef * lt0;
        phi[3 * i + 2] = vt1 + ef * lt1;
    } else {
        omega[3 * i + 1] = 0;
        omega[3 * i + 2] = 0;
        ediag[3 * i + 1] = 1 / h;
        ediag[3 * i + 2] = 1 / h;
        phi[3 * i + 1] = lt0;
        phi[3 * i + 2] = lt1;
    }
    phi_n[i] = fabs(pn);
    phi_f[i] = (real)nan_max(fabs((double)phi[3 * i + 1]), fabs((double)phi[3 * i + 2]));
    stick[i] = st;
    slip[i] = sl;
}

// The constraint system's right-hand side (kernels::ncp::newton_rhs), one thread per row:
// normal -(phi + omega y)/h^2, friction -(phi + omega y / h)/h.
extern "C" __global__ void lg_newton_rhs(int m, real h, const real* phi, const real* omega, const real* y,
                                         real* rhs) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m) {
        return;
    }
    if (r % 3 == 0) {
        rhs[r] = -(phi[r] + omega[r] * y[r]) / (h * h);
    } else {
        rhs[r] = -(phi[r] + omega[r] * y[r] / h) / h;
    }
}

// Jacobi preconditioner 1 / (omega^2 wdiag + ediag), 1 where not positive (kernels::ncp::cr_jacobi_pinv).
extern "C" __global__ void cr_jacobi_pinv(int m, const real* omega, const real* wdiag, const real* ediag,
                                          real* pinv) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < m) {
        real d = omega[r] * omega[r] * wdiag[r] + ediag[r];
        pinv[r] = (d > 0) ? 1 / d : (real)1;
    }
}

// One Jacobi rotation in the (p, q) plane of the symmetric 3x3 a (row-major), accumulated into
// the columns of v (Golub-Van Loan sym.schur2): zeroes a[p][q].
template <int p, int q>
__device__ void jacobi_rotate(real a[3][3], real v[3][3]) {
    if (a[p][q] == 0) {
        return;
    }
    real tau = (a[q][q] - a[p][p]) / (2 * a[p][q]);
    real t = ((tau >= 0) ? (real)1 : (real)-1) / (fabs(tau) + hypot((real)1, tau));
    real c = 1 / sqrt(1 + t * t), s = t * c;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        real akp = a[k][p], akq = a[k][q];
        a[k][p] = c * akp - s * akq;
        a[k][q] = s * akp + c * akq;
    }
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        real apk = a[p][k], aqk = a[q][k];
        a[p][k] = c * apk - s * aqk;
        a[q][k] = s * apk + c * aqk;
    }
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        real vkp = v[k][p], vkq = v[k][q];
        v[k][p] = c * vkp - s * vkq;
        v[k][q] = s * vkp + c * vkq;
    }
}

// Swaps eigenpairs i and j (eigenvalues on the diagonal of a, vectors in the columns of v).
template <int i, int j>
__device__ void swap_pair(real a[3][3], real v[3][3]) {
    real t = a[i][i];
    a[i][i] = a[j][j];
    a[j][j] = t;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
        real x = v[k][i];
        v[k][i] = v[k][j];
        v[k][j] = x;
    }
}

// Signed SVD F = U diag(s) V^T with U, V proper rotations and the reflection, if any, on the
// smallest singular value (harness's Polar::of): V from the Jacobi eigen-decomposition of F^T F
// (sorted descending), U from Gram-Schmidt on the columns of F V, u2 = u0 x u1, s_i = u_i . (F v_i).
// f, u, v row-major 3x3.
__device__ void signed_svd3(const real f[3][3], real u[3][3], real s[3], real v[3][3]) {
    real a[3][3];
#pragma unroll
    for (int i = 0; i < 3; ++i) {
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            a[i][j] = f[0][i] * f[0][j] + f[1][i] * f[1][j] + f[2][i] * f[2][j];
            v[i][j] = (i == j) ? (real)1 : (real)0;
        }
    }
    for (int sweep = 0; sweep < 8; ++sweep) {
        jacobi_rotate<0, 1>(a, v);
        jacobi_rotate<0, 2>(a, v);
        jacobi_rotate<1, 2>(a, v);
    }
    if (a[0][0] < a[1][1]) swap_pair<0, 1>(a, v);
    if (a[0][0] < a[2][2]) swap_pair<0, 2>(a, v);
    if (a[1][1] < a[2][2]) swap_pair<1, 2>(a, v);
    real detv = v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1]) - v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0]) +
                v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0]);
    if (detv < 0) {
        v[0][2] = -v[0][2];
        v[1][2] = -v[1][2];
        v[2][2] = -v[2][2];
    }
    real b[3][3];  // b = F V (column j = F v_j)
#pragma unroll
    for (int i = 0; i < 3; ++i) {
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            b[i][j] = f[i][0] * v[0][j] + f[i][1] * v[1][j] + f[i][2] * v[2][j];
        }
    }
    real n0 = sqrt(b[0][0] * b[0][0] + b[1][0] * b[1][0] + b[2][0] * b[2][0]);
    real u0[3] = {1, 0, 0};
    if (n0 > 0) {
        u0[0] = b[0][0] / n0;
        u0[1] = b[1][0] / n0;
        u0[2] = b[2][0] / n0;
    }
    real d = u0[0] * b[0][1] + u0[1] * b[1][1] + u0[2] * b[2][1];
    real u1[3] = {b[0][1] - d * u0[0], b[1][1] - d * u0[1], b[2][1] - d * u0[2]};
    real n1 = sqrt(u1[0] * u1[0] + u1[1] * u1[1] + u1[2] * u1[2]);
    if (n1 > 0) {
        u1[0] /= n1;
        u1[1] /= n1;
        u1[2] /= n1;
    } else {
        // any unit vector orthogonal to u0: u0 x e_k with e_k its least aligned axis
        int k = (fabs(u0[0]) <= fabs(u0[1]) && fabs(u0[0]) <= fabs(u0[2])) ? 0 : (fabs(u0[1]) <= fabs(u0[2]) ? 1 : 2);
        real e0 = (k == 0) ? (real)1 : (real)0, e1 = (k == 1) ? (real)1 : (real)0, e2 = (k == 2) ? (real)1 : (real)0;
        u1[0] = u0[1] * e2 - u0[2] * e1;
        u1[1] = u0[2] * e0 - u0[0] * e2;
        u1[2] = u0[0] * e1 - u0[1] * e0;
        real m = sqrt(u1[0] * u1[0] + u1[1] * u1[1] + u1[2] * u1[2]);
        u1[0] /= m;
        u1[1] /= m;
        u1[2] /= m;
    }
    real u2[3] = {u0[1] * u1[2] - u0[2] * u1[1], u0[2] * u1[0] - u0[0] * u1[2], u0[0] * u1[1] - u0[1] * u1[0]};
#pragma unroll
    for (int i = 0; i < 3; ++i) {
        u[i][0] = u0[i];
        u[i][1] = u1[i];
        u[i][2] = u2[i];
    }
#pragma unroll
    for (int j = 0; j < 3; ++j) {
        s[j] = u[0][j] * b[0][j] + u[1][j] * b[1][j] + u[2][j] * b[2][j];
    }
}

// Adds one projective term (weight w, target p, column-major vec) of an element: energy
// w/2 |fv - p|^2, rhs += w G^T p (G column-major 9 x 12).
__device__ void pd_term(real w, const real* g, const real fv[9], const real p[9], real* rhs, real* energy) {
    real d2 = 0;
#pragma unroll
    for (int k = 0; k < 9; ++k) {
        real d = fv[k] - p[k];
        d2 += d * d;
    }
    *energy += (real)0.5 * w * d2;
    for (int c = 0; c < 12; ++c) {
        real acc = 0;
#pragma unroll
        for (int k = 0; k < 9; ++k) {
            acc += g[9 * c + k] * p[k];
        }
        rhs[c] += w * acc;
    }
}

// The projective-dynamics local step of one tetrahedron (Zeng Eq. 5; kernels::pd_local), one
// thread per element: F = G x_e; term 0 the polar rotation R = U V^T (weight w_rot), term 1 the
// volume-preserving target U diag(s / det^(1/3)) V^T (weight w_vol, skipped when 0; det <= 0:
// U diag(s) V^T). r[12 e..] = sum_k w_k G^T vec p_k, energy[e] = sum_k w_k/2 |vec F - vec p_k|^2.
extern "C" __global__ void pd_local(int ne, const int* dofs, const real* g, const real* w_rot, const real* w_vol,
                                    const real* q, real* r, real* energy) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ne) {
        return;
    }
    const real* ge = g + (long long)108 * e;
    real xe[12];
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        int d = dofs[4 * e + a];
        xe[3 * a] = q[d];
        xe[3 * a + 1] = q[d + 1];
        xe[3 * a + 2] = q[d + 2];
    }
    real fv[9];
#pragma unroll
    for (int k = 0; k < 9; ++k) {
        fv[k] = 0;
    }
    for (int c = 0; c < 12; ++c) {
#pragma unroll
        for (int k = 0; k < 9; ++k) {
            fv[k] += ge[9 * c + k] * xe[c];
        }
    }
    real f[3][3], u[3][3], v[3][3], s[3];
#pragma unroll
    for (int i = 0; i < 3; ++i) {
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            f[i][j] = fv[3 * j + i];
        }
    }
    signed_svd3(f, u, s, v);
    real* re = r + (long long)12 * e;
    for (int c = 0; c < 12; ++c) {
        re[c] = 0;
    }
    real en = 0;
    real p[9];
#pragma unroll
    for (int i = 0; i < 3; ++i) {
#pragma unroll
        for (int j = 0; j < 3; ++j) {
            p[3 * j + i] = u[i][0] * v[j][0] + u[i][1] * v[j][1] + u[i][2] * v[j][2];
        }
    }
    pd_term(w_rot[e], ge, fv, p, re, &en);
    if (w_vol[e] != 0) {
        real det = s[0] * s[1] * s[2];
        real scale = (det > 0) ? 1 / cbrt(det) : (real)1;
#pragma unroll
        for (int i = 0; i < 3; ++i) {
#pragma unroll
            for (int j = 0; j < 3; ++j) {
                p[3 * j + i] = u[i][0] * s[0] * scale * v[j][0] + u[i][1] * s[1] * scale * v[j][1] +
                               u[i][2] * s[2] * scale * v[j][2];
            }
        }
        pd_term(w_vol[e], ge, fv, p, re, &en);
    }
    energy[e] = en;
}
