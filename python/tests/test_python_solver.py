"""Solvers written in Python run through the harness: the problem they see, the records they get,
their exceptions, and registration errors."""

import hashlib

import numpy as np
import pytest

import signorini


class FreeVelocity:
    """Returns the free velocity and no impulse (ignores every contact)."""

    seen = []

    def __init__(self, max_iterations=1, tolerance=1e-8):
        pass

    def step(self, problem, log):
        FreeVelocity.seen.append(problem)
        lam = np.zeros((problem.nc, 3))
        log.iterate(problem.v_free, lam)
        return signorini.StepSolution(v=problem.v_free, impulses=lam, iterations=1, status="max_iterations")


class Boom:
    def __init__(self, max_iterations=1, tolerance=1e-8):
        pass

    def step(self, problem, log):
        if problem.nc > 0:
            raise ValueError("boom at a contact")
        return signorini.StepSolution(v=problem.v_free, impulses=np.zeros((0, 3)))


def test_a_python_solver_runs_through_the_stepper_and_is_graded():
    FreeVelocity.seen.clear()
    signorini.register(FreeVelocity, name="free_py")
    assert "free_py" in [s["name"] for s in signorini.solvers()]
    r = signorini.run(case="slope", solver="free_py", set={"mu": 0.3})
    assert r.status == "ok", r.reason
    # the harness grades it: no impulse, so the contact law is violated once the block touches
    assert np.nanmax(r.steps["natmap_abs_l2"]) > 0.0
    assert not all(c["pass"] for c in r.oracle.values())
    # provenance: the solver's source file and its hash
    with open(__file__, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() in r.raw["solver"]["paper"]
    # the problem it saw: the case's friction, J (3 nc x nv), W = J M^-1 J^T symmetric
    p = next(p for p in FreeVelocity.seen if p.nc > 0)
    assert np.all(p.mu == 0.3)
    assert p.J.shape == (3 * p.nc, p.nv)
    w = p.W()
    assert np.allclose(w, w.T, atol=1e-12 * np.abs(w).max())
    assert np.allclose(p.M @ p.solve_M(p.v0), p.v0)
    assert np.all(p.bias_n == p.gap / p.dt)


def test_an_exception_fails_its_pair_and_the_suite_goes_on(tmp_path):
    signorini.register(Boom, name="boom_py")
    suite = tmp_path / "s.toml"
    suite.write_text('name = "s"\nsolvers = ["boom_py", "pgs"]\n[[case]]\nname = "slope"\n')
    recs = {r.solver: r for r in signorini.run_suite(suite, out=tmp_path / "out")}
    assert recs["boom_py"].status == "failed"
    assert "ValueError: boom at a contact" in recs["boom_py"].reason
    assert recs["pgs"].status == "ok"


def test_settings_reach_the_class_and_are_checked():
    class Remember(FreeVelocity):
        got = {}

        def __init__(self, **kw):
            Remember.got = kw

    signorini.register(Remember, name="remember_py", settings={"max_iterations": 5, "tolerance": 1e-6})
    signorini.run(case="slope", solver="remember_py", set={"solver.max_iterations": 7})
    assert Remember.got == {"max_iterations": 7, "tolerance": 1e-6}
    with pytest.raises(ValueError, match="nope"):
        signorini.run(case="slope", solver="remember_py", set={"solver.nope": 1})


def test_registration_errors():
    with pytest.raises(ValueError, match="unknown capability 'wings'"):
        signorini.register(FreeVelocity, name="x_py", capabilities=["wings"])
    with pytest.raises(ValueError, match="taken by a compiled solver"):
        signorini.register(FreeVelocity, name="pgs")
    with pytest.raises(ValueError, match="no 'max_iterations'"):
        signorini.register(FreeVelocity, name="x_py", settings={"tolerance": 1e-8})
    with pytest.raises(TypeError):
        signorini.register(object(), name="x_py")


def test_a_missing_capability_is_a_refusal():
    signorini.register(FreeVelocity, name="free_py")
    with pytest.raises(signorini.RefusedError, match="would be skipped"):
        signorini.run(case="pendulum", solver="free_py")
