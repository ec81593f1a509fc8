"""APGD in NumPy: Mazhar, Heyn, Negrut and Tasora's accelerated projected gradient descent
(ACM Trans. Graph. 34(3), article 32, 2015; their Algorithm 2) on Anitescu's cone complementarity
problem (CCP), written as a signorini solver in Python.

The CCP of a step with rigid contacts: with ``W = J M^-1 J^T`` (Mazhar Eq. 11's ``N``) and
``q = J v* + w`` (``w_i = (gap_i/dt, 0, 0)``, Eq. 11's ``r``), find impulses ``x`` minimising
``f(x) = 1/2 x^T W x + q^T x`` over ``x in K``, the product of the contacts' friction cones
``||x_t|| <= mu x_n`` (Eq. 12: ``K ∋ x ⊥ W x + q ∈ K*``). Algorithm 2, from ``(x_k, y_k, θ_k)``
with the Lipschitz estimate ``L``:

    x_{k+1} = Π_K(y_k − ∇f(y_k) / L)                                          ∇f = W x + q
    while f(x_{k+1}) > f(y_k) + ∇f(y_k)ᵀ(x_{k+1} − y_k) + ½ L ‖x_{k+1} − y_k‖²:  L ← 2 L, redo
    θ_{k+1} = (−θ_k² + θ_k √(θ_k² + 4)) / 2,   β_{k+1} = θ_k (1 − θ_k) / (θ_k² + θ_{k+1})
    y_{k+1} = x_{k+1} + β_{k+1} (x_{k+1} − x_k)
    keep x_{k+1} if its residual is the smallest so far; stop below the tolerance
    if ∇f(y_k)ᵀ(x_{k+1} − x_k) > 0:  y_{k+1} = x_{k+1}, θ_{k+1} = 1            (restart)
    L ← 0.9 L

started at ``x_0 = 0``, ``θ_0 = 1``, ``y_0 = x_0``, ``L = ‖W (x_0 − 1)‖ / ‖x_0 − 1‖``. The
answer is the best iterate and ``v = v* + M^-1 J^T x``.

Choices the paper leaves open, as the workbench's Rust ``apgd`` makes them (solvers/src/apgd/
README.md): the residual is the CCP's natural map ``‖x − Π_K(x − (W x + q))‖`` relative to its
value at ``x = 0``; the sufficient-decrease test allows ``8 ε (|f(y)| + |f(x)|)`` of round-off.
Unlike the Rust solver this one does not warm start and forms ``W`` dense from ``problem.W()``:
an example, not a fast path. It hands every iterate to the harness's yardstick
(``log.iterate``), so the records' convergence columns and the equal-accuracy stop apply to it.

Usage::

    import sys; sys.path.insert(0, "python/examples")
    import apgd, signorini
    apgd.register()                                   # as "apgd_py"
    signorini.run(case="slope-10-slip", solver="apgd_py").oracle
"""

from __future__ import annotations

import numpy as np

import signorini
from projected_jacobi import project as project_cones  # kernels::cone::project, vectorised

# Most doublings of L in one backtracking search.
MAX_DOUBLINGS = 100


class Apgd:
    """Mazhar et al.'s APGD on the CCP (Algorithm 2), in NumPy."""

    def __init__(self, max_iterations=2000, tolerance=1e-8, acceleration=True, restart=True):
        self.max_iterations = int(max_iterations)
        self.tolerance = float(tolerance)
        self.acceleration = bool(acceleration)
        self.restart = bool(restart)

    def step(self, problem, log):
        nc = problem.nc
        if nc == 0:
            return signorini.StepSolution(v=problem.v_free, impulses=np.zeros((0, 3)), iterations=0)
        if np.any(problem.r_n != 0.0):
            raise ValueError("this example solves rigid contacts only (r_n = 0)")
        W = problem.W()
        q = problem.J @ problem.v_free
        q[0::3] += problem.bias_n
        mu = problem.mu
        n = 3 * nc

        def proj(x):
            return project_cones(x.reshape(nc, 3), mu).reshape(n)

        def residual(x, u):
            return np.linalg.norm(x - proj(x - u))

        def answer(x):
            v = problem.v_free + problem.solve_M(problem.J.T @ x)
            return v, x.reshape(nc, 3)

        r_zero = residual(np.zeros(n), q)
        if r_zero == 0.0:
            return signorini.StepSolution(v=problem.v_free, impulses=np.zeros((nc, 3)), iterations=0, status="solved")
        target = self.tolerance * r_zero
        xk = np.zeros(n)
        d = xk - 1.0
        lip = np.linalg.norm(W @ d) / np.linalg.norm(d)
        if not (np.isfinite(lip) and lip > 0.0):
            lip = np.linalg.eigvalsh(W)[-1]
        y, theta = xk.copy(), 1.0
        best, best_r = xk.copy(), np.inf
        status, k = "max_iterations", 0
        for k in range(1, self.max_iterations + 1):
            g = W @ y + q
            fy = 0.5 * y @ (g - q) + q @ y
            for _ in range(MAX_DOUBLINGS + 1):
                xn = proj(y - g / lip)
                u = W @ xn + q
                dxy = xn - y
                fx = 0.5 * xn @ (u - q) + q @ xn
                slack = 8.0 * np.finfo(float).eps * (abs(fy) + abs(fx))
                if fx <= fy + g @ dxy + 0.5 * lip * dxy @ dxy + slack:
                    break
                lip *= 2.0
            else:
                raise ArithmeticError(f"no sufficient decrease at iteration {k} (L = {lip:e})")
            r = residual(xn, u)
            restart = self.acceleration and self.restart and g @ (xn - xk) > 0.0
            if self.acceleration and not restart:
                theta_next = 0.5 * (-theta * theta + theta * np.sqrt(theta * theta + 4.0))
                beta = theta * (1.0 - theta) / (theta * theta + theta_next)
            else:
                theta_next, beta = 1.0, 0.0
            y = xn + beta * (xn - xk)
            if r < best_r:
                best_r, best = r, xn.copy()
            log.record({"ccp_natmap_abs_l2": r, "lipschitz": lip, "restart": float(restart)})
            log.iterate(*answer(xn))
            xk, theta = xn, theta_next
            if log.should_stop():
                status, best = log.stop_status(), xn
                break
            if r < target:
                status = "solved"
                break
            lip *= 0.9
        v, lam = answer(best)
        return signorini.StepSolution(v=v, impulses=lam, iterations=k, status=status)


def register(name: str = "apgd_py") -> None:
    """Registers :class:`Apgd` under ``name`` (rigid bodies, rigid contact)."""
    signorini.register(
        Apgd,
        name=name,
        capabilities=["rigid_bodies", "rigid_contact", "exact_friction_cone"],
        settings={"max_iterations": 2000, "tolerance": 1e-8, "acceleration": True, "restart": True},
        paper="Mazhar et al. 2015, Algorithm 2 (NumPy example)",
    )


if __name__ == "__main__":
    import sys

    register()
    out = sys.argv[1] if len(sys.argv) > 1 else "runs/apgd-py"
    recs = signorini.run_suite("ci/quick.toml", out=out, solvers=["apgd_py", "pgs", "sap"])
    for r in recs:
        print(r)
    print(signorini.report(out))
