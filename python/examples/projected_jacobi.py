"""Projected Jacobi in NumPy: the method of tests/example_solver/jacobi.rs, written against
``signorini.Problem`` and registered from Python.

Per sweep every contact's local problem is solved against the *same* iterate
``v = v* + M^-1 J^T lambda`` and all impulses move by the relaxation ``omega``:
``lambda <- P_K(lambda + omega (lambda_local - lambda))``. The local solve is the workbench's
``split`` solve (kernels/src/contact_local.rs): the exact normal update, then the exact
minimiser of the tangential energy on the friction disk (a 2x2 trust-region problem, Newton on
the secular equation).

The arithmetic follows the Rust example operation by operation, vectorised over contacts (sums
in the same order, the same libm functions), so that its records equal the Rust solver's to the
last bit: python/tests/test_parity.py checks that with ``signorini.diff_records``.

    import signorini
    from projected_jacobi import ProjectedJacobi, register
    register()
    print(signorini.run(case="slope", solver="jacobi_py").oracle)
"""

from __future__ import annotations

import math
import sys

import numpy as np

import signorini

EPS = sys.float_info.epsilon
TINY = sys.float_info.min


def _seq_sum(terms):
    """``t0 + t1 + ...`` left to right (a Rust ``iter().sum()``), elementwise over arrays."""
    acc = terms[0]
    for t in terms[1:]:
        acc = acc + t
    return acc


def project(x, mu):
    """Projection of the rows of ``x`` (n x 3) onto the cones ``||x_t|| <= mu x_n`` (kernels::cone::project)."""
    xn, t1, t2 = x[:, 0], x[:, 1], x[:, 2]
    nt = np.sqrt(t1 * t1 + t2 * t2)
    out = x.copy()
    axis = nt == 0.0
    inside = ~axis & (nt <= mu * xn)
    polar = ~axis & ~inside & (mu * nt <= -xn)
    slip = ~(axis | inside | polar)
    out[axis] = 0.0
    out[axis, 0] = np.fmax(xn[axis], 0.0)
    out[polar] = 0.0
    m, nt_s, xn_s = mu[slip], nt[slip], xn[slip]
    rn = (m * nt_s + xn_s) / (m * m + 1.0)
    s = m * rn / nt_s
    out[slip, 0] = rn
    out[slip, 1] = s * t1[slip]
    out[slip, 2] = s * t2[slip]
    return out


def natmap(lam, u, mu):
    """``lambda - P_K(lambda - (u + mu ||u_t|| e_n))`` per row (kernels::contact_local::natmap)."""
    s = u.copy()
    s[:, 0] = u[:, 0] + mu * np.sqrt(u[:, 1] * u[:, 1] + u[:, 2] * u[:, 2])
    return lam - project(lam - s, mu)


def disk_qp(a00, a01, a10, a11, b0, b1, r, floor):
    """Minimiser of ``1/2 x^T A x - b^T x`` on ``||x|| <= r`` per contact (kernels::contact_local::disk_qp)."""
    n_c = len(r)
    out0, out1 = np.zeros(n_c), np.zeros(n_c)
    live = ~(np.isnan(r) | (r <= 0.0))
    rot = live & (a01 != 0.0)
    s, c = np.zeros(n_c), np.ones(n_c)
    for i in np.flatnonzero(rot):
        # libm's atan2, sin and cos, as Rust's f64::atan2 and sin_cos call them
        angle = 0.5 * math.atan2(a01[i], 0.5 * (a00[i] - a11[i]))
        s[i], c[i] = math.sin(angle), math.cos(angle)
    mean = 0.5 * (a00 + a11)
    rad = np.hypot(0.5 * (a00 - a11), a01)
    d0 = np.where(rot, mean + rad, a00)
    d1 = np.where(rot, mean - rad, a11)
    d0, d1 = np.fmax(d0, floor), np.fmax(d1, floor)
    beta0 = c * b0 + s * b1
    beta1 = -s * b0 + c * b1
    shift = np.zeros(n_c)
    with np.errstate(divide="ignore", invalid="ignore"):
        y0, y1 = beta0 / (d0 + shift), beta1 / (d1 + shift)
        n = np.hypot(y0, y1)
        outside = live & (n > r)
        going = outside.copy()
        for _ in range(60):
            if not going.any():
                break
            p0, p1 = d0 + shift, d1 + shift
            g = beta0 * beta0 / (p0 * (p0 * p0)) + beta1 * beta1 / (p1 * (p1 * p1))
            step = (1.0 / r - 1.0 / n) * n * n * n / g
            shift = np.where(going, shift + step, shift)
            ny0, ny1 = beta0 / (d0 + shift), beta1 / (d1 + shift)
            y0, y1 = np.where(going, ny0, y0), np.where(going, ny1, y1)
            n = np.where(going, np.hypot(y0, y1), n)
            going &= ~(np.abs(n - r) <= 4.0 * EPS * r)
        y0 = np.where(outside, y0 * r / n, y0)
        y1 = np.where(outside, y1 * r / n, y1)
    out0 = np.where(live, c * y0 - s * y1, 0.0)
    out1 = np.where(live, s * y0 + c * y1, 0.0)
    return out0, out1


class ProjectedJacobi:
    """Projected Jacobi with relaxation (NumPy port of the Rust example solver)."""

    def __init__(self, max_iterations=2000, tolerance=1e-8, relaxation=0.3):
        if not (0.0 < relaxation <= 1.0):
            raise ValueError(f"relaxation: {relaxation} is not in (0, 1]")
        self.max_iterations = int(max_iterations)
        self.tolerance = float(tolerance)
        self.omega = float(relaxation)

    def _assemble(self, p):
        """Per side: ``G = M_b^-1 J_ib^T``; per contact: ``W_ii = sum_b J_ib G``, the normal law;
        and the index arrays the sweeps use (built once per step)."""
        nc, ns = p.nc, len(p.side_contact)
        if np.any(p.side_block < 0) or np.any(p.block_sizes[np.maximum(p.side_block, 0)] != p.side_ncols):
            raise ValueError("unsupported: a contact not on one rigid body")
        # a side's rank among its contact's sides: sides are added to a contact's sums in this order
        rank = np.zeros(ns, dtype=np.int64)
        for s_i in range(1, ns):
            if p.side_contact[s_i] == p.side_contact[s_i - 1]:
                rank[s_i] = rank[s_i - 1] + 1
        self.ranks = [np.flatnonzero(rank == r) for r in range(int(rank.max()) + 1 if ns else 0)]
        self.side_contact = p.side_contact
        # sides grouped by their number of columns; in each group, sides in side order
        self.groups = []
        flat_pos = np.cumsum(np.concatenate([[0], p.side_ncols]))
        for ncols in np.unique(p.side_ncols):
            idx = np.flatnonzero(p.side_ncols == ncols)
            jrows = p.side_rows[idx, :, :ncols]  # (s, 3, n)
            minv = np.stack([p.M_inv_blocks[b] for b in p.side_block[idx]])  # (s, n, n)
            # g[col][r] = sum_k minv[col, k] * rows[r][k], k in order
            g = _seq_sum([minv[:, :, k][:, :, None] * jrows[:, :, k][:, None, :] for k in range(ncols)])
            cols = p.side_offset[idx][:, None] + np.arange(ncols)[None, :]  # (s, n) entries of v
            pos = flat_pos[idx][:, None] + np.arange(ncols)[None, :]  # their places in side order
            self.groups.append((idx, jrows, g, cols, pos))
        self.flat_cols = np.zeros(int(flat_pos[-1]), dtype=np.int64)
        for idx, _, _, cols, pos in self.groups:
            self.flat_cols[pos.reshape(-1)] = cols.reshape(-1)
        # W accumulates over a contact's sides in side order: 0.0 + side 1 + side 2
        per_side = np.zeros((ns, 3, 3))
        for idx, jrows, g, _, _ in self.groups:
            n = jrows.shape[2]
            per_side[idx] = _seq_sum([jrows[:, :, k][:, :, None] * g[:, k, :][:, None, :] for k in range(n)])
        self.w = self._by_contact(per_side, (nc, 3, 3))
        self.mu = np.asarray(p.mu, dtype=float)
        self.v_hat, self.r_n, self.bias_n = p.v_hat, p.r_n, p.bias_n
        a00 = self.w[:, 0, 0] + self.r_n
        self.floor = np.fmax(EPS * (a00 + self.w[:, 1, 1] + self.w[:, 2, 2]), TINY)

    def _by_contact(self, per_side, shape):
        """Per-side values summed per contact, ``0.0 + side 1 + side 2 ...`` in side order."""
        out = np.zeros(shape)
        for sides in self.ranks:
            c = self.side_contact[sides]
            out[c] = out[c] + per_side[sides]
        return out

    def _velocity(self, v):
        """``u_i = J_i v`` per contact: per side a sum over its columns in order, sides added to 0.0 in order."""
        per_side = np.zeros((len(self.side_contact), 3))
        for idx, jrows, _, cols, _ in self.groups:
            n = jrows.shape[2]
            vs = v[cols]  # (s, n)
            per_side[idx] = _seq_sum([jrows[:, :, k] * vs[:, k][:, None] for k in range(n)])
        return self._by_contact(per_side, (len(self.mu), 3))

    def _apply(self, d, v):
        """``v += M^-1 J_i^T d_i``, contact by contact, side by side, in order (np.add.at adds
        in index order)."""
        vals = np.empty(len(self.flat_cols))
        for idx, _, g, _, pos in self.groups:
            dd = d[self.side_contact[idx]]  # (s, 3)
            t = g[:, :, 0] * dd[:, 0:1] + g[:, :, 1] * dd[:, 1:2] + g[:, :, 2] * dd[:, 2:3]  # (s, n)
            vals[pos.reshape(-1)] = t.reshape(-1)
        np.add.at(v, self.flat_cols, vals)

    def _split(self, u, lam):
        """The ``split`` local solve of every contact against ``u`` (kernels LocalProblem::split)."""
        w = self.w
        denom = w[:, 0, 0] + self.r_n
        with np.errstate(divide="ignore", invalid="ignore"):
            ln = np.where(
                denom > 0.0,
                np.fmax(lam[:, 0] - (u[:, 0] - self.v_hat + self.r_n * lam[:, 0]) / denom, 0.0),
                0.0,
            )
        dn = ln - lam[:, 0]
        ut0 = u[:, 1] + w[:, 1, 0] * dn
        ut1 = u[:, 2] + w[:, 2, 0] * dn
        b0 = w[:, 1, 1] * lam[:, 1] + w[:, 1, 2] * lam[:, 2] - ut0
        b1 = w[:, 2, 1] * lam[:, 1] + w[:, 2, 2] * lam[:, 2] - ut1
        lt0, lt1 = disk_qp(w[:, 1, 1], w[:, 1, 2], w[:, 2, 1], w[:, 2, 2], b0, b1, self.mu * ln, self.floor)
        return np.stack([ln, lt0, lt1], axis=1)

    def _natmap(self, v, lam):
        u = self._velocity(v)
        u[:, 0] = u[:, 0] + self.bias_n
        f = natmap(lam, u, self.mu)
        per = f[:, 0] * f[:, 0] + f[:, 1] * f[:, 1] + f[:, 2] * f[:, 2]
        return math.sqrt(np.cumsum(per)[-1]) if len(per) else 0.0

    def step(self, p, log):
        self._assemble(p)
        vstar = np.array(p.v_free, dtype=float)
        v = vstar.copy()
        nc = p.nc
        lam = np.zeros((nc, 3))
        omega = self.omega
        iterations, status = 0, "solved"
        if nc > 0:
            status = "max_iterations"
            for k in range(1, self.max_iterations + 1):
                t = self._split(self._velocity(v), lam)
                new = project(lam + omega * (t - lam), self.mu)
                if not np.all(np.isfinite(new)):
                    raise FloatingPointError(f"non-finite value in impulse at sweep {k}")
                d = new - lam
                self._apply(d, v)
                lam = new
                change = float(np.max(np.abs(d)))
                size = float(np.max(np.abs(new)))
                rel_change = change / max(size, TINY)
                log.record({"rel_change_linf": rel_change, "natmap_abs_l2": self._natmap(v, lam)})
                log.iterate(v, lam)
                iterations = k
                if log.should_stop():
                    status = log.stop_status()
                    break
                if rel_change < self.tolerance:
                    status = "solved"
                    break
        v = vstar.copy()
        self._apply(lam, v)
        return signorini.StepSolution(v=v, impulses=lam, iterations=iterations, status=status)


def register(name: str = "jacobi") -> None:
    """Registers the solver with the Rust example's name, capabilities and default settings."""
    signorini.register(
        ProjectedJacobi,
        name=name,
        capabilities=("rigid_bodies", "rigid_contact", "compliant_contact", "exact_friction_cone"),
        settings={"max_iterations": 2000, "tolerance": 1e-8, "relaxation": 0.3},
        summary="projected Jacobi with relaxation (NumPy example)",
    )
