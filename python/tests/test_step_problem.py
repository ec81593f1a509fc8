"""A step's problem from Python (`signorini.step_problem`, `signorini.fclib.read`) and the
harness's own yardsticks on it: a script grading an iterate reads what the records say of it."""

import numpy as np
import pytest

import signorini

# the default slope: a block on 10 degrees with mu = 0.3, sticking; the run logs iterates at steps
# 0, 14, 28, ... (RunOptions' eight logged steps over 100)
CASE, SOLVER, STEP = "slope", "pgs", 14


@pytest.fixture(scope="module")
def record():
    r = signorini.run(case=CASE, solver=SOLVER)
    assert r.status == "ok", r.reason
    return r


@pytest.fixture(scope="module")
def problem():
    return signorini.step_problem(CASE, step=STEP, solver=SOLVER)


def test_the_step_metrics_of_the_solvers_answer_are_the_records(record, problem):
    s = problem.solution
    row = next(r for r in record.raw["steps"] if r["step"] == STEP)["metrics"]
    assert row["n_contacts"] == problem.nc > 0
    nat = problem.natural_map(s.v, s.impulses)
    # the same function on the same numbers: equal to the last bit
    for k in ("natmap_abs_l2", "natmap_rel_l2", "natmap_rel1_l2"):
        assert nat[k] == row[k], (k, nat[k], row[k])
    assert problem.momentum(s.v, s.impulses) == row["momentum_rel"]


def test_the_yardsticks_of_the_last_iterate_are_the_iteration_logs(record, problem):
    (log,) = [it["log"] for it in record.raw["iterations"] if it["step"] == STEP]
    cols = dict(zip(log["names"], log["columns"]))
    s = problem.solution
    got = problem.yardsticks(s.v, s.impulses)
    assert set(got) == {"yardstick_natmap_rel", "yardstick_model_natmap_rel", "yardstick_momentum_rel"}
    # the rigid natural-map yardstick is the step metric natmap_rel_l2 on an iterate, and the
    # momentum yardstick momentum_rel: on the returned answer, the record's step row exactly
    row = next(r for r in record.raw["steps"] if r["step"] == STEP)["metrics"]
    assert got["yardstick_natmap_rel"] == row["natmap_rel_l2"]
    assert got["yardstick_momentum_rel"] == row["momentum_rel"]
    # PGS's last handed-over iterate is its answer up to the velocity's recomputation from the
    # impulses (round-off on a residual of 1e-9: the columns agree to 1e-6 relative)
    for name, value in got.items():
        assert np.isclose(value, cols[name][-1], rtol=1e-6, atol=1e-15), (name, value, cols[name][-1])
    # the equal-accuracy stop of a rigid-Coulomb solver: the larger of its model's natural map
    # and the momentum error (harness::metrics::yardstick::StopMeasure::ContactModel)
    stop = problem.stop_measure(s.v, s.impulses)
    assert stop == max(got["yardstick_model_natmap_rel"], got["yardstick_momentum_rel"])
    assert problem.stop_measure(s.v, s.impulses, "regularised") == got["yardstick_momentum_rel"]
    with pytest.raises(ValueError, match="expected rigid_coulomb"):
        problem.stop_measure(s.v, s.impulses, "nope")
    with pytest.raises(ValueError, match="facets >= 3"):
        problem.stop_measure(s.v, s.impulses, "pyramid")
    # the pyramid's natural map of an answer to the exact cone: finite, and with more facets
    # the polygon approaches the disc
    four, sixteen = (problem.stop_measure(s.v, s.impulses, "pyramid", facets=d) for d in (4, 16))
    assert np.isfinite(four) and np.isfinite(sixteen)


def test_the_problem_arrays_are_consistent(problem):
    p = problem
    assert p.J.shape == (3 * p.nc, p.nv) and p.M.shape == (p.nv, p.nv)
    w = p.W()
    assert np.allclose(w, w.T, atol=1e-12 * np.abs(w).max())
    assert np.all(np.linalg.eigvalsh(w) > -1e-12 * np.abs(w).max())
    assert np.allclose(p.M @ p.solve_M(p.v_free), p.v_free, rtol=1e-13, atol=1e-15)
    # frames: orthonormal, right-handed, the normal row of J is the frame's normal (a block on a
    # fixed plane: J_n v = n . (linear velocity + angular x arm))
    for f in p.frames:
        assert np.allclose(f.T @ f, np.eye(3), atol=1e-12) and np.isclose(np.linalg.det(f), 1.0)
    assert np.allclose(p.frames[:, :, 0], p.frames[0, :, 0])
    assert p.points.shape == (p.nc, 3) and p.gap.shape == (p.nc,)
    # the answer balances momentum: M (v - v*) = J^T lambda, to the solver's round-off
    s = p.solution
    lhs = p.M @ (s.v - p.v_free)
    rhs = p.J.T @ s.impulses.reshape(-1)
    assert np.allclose(lhs, rhs, atol=1e-12 * max(1.0, np.abs(rhs).max()))
    assert s.status in ("solved", "almost_solved", "max_iterations")


def test_a_step_out_of_range_and_wrong_shapes_are_value_errors(problem):
    with pytest.raises(ValueError, match="the run has 100 steps"):
        signorini.step_problem(CASE, step=100, solver=SOLVER)
    with pytest.raises(ValueError, match="unknown case"):
        signorini.step_problem("nope", step=0)
    with pytest.raises(ValueError, match="expected"):
        problem.natural_map(problem.v0, np.zeros((problem.nc + 1, 3)))


def test_a_python_solver_grades_its_iterates_as_the_harness_does():
    """Inside `step`, `problem.yardsticks` of an iterate equals the column the harness writes for
    the same iterate handed to `log.iterate`."""

    seen = []  # per step (the stepper calls `step` once a step, in order), per iterate

    class Shrink:
        """Hands over three iterates, the free velocity scaled down: graded, not solved."""

        def __init__(self, max_iterations=1, tolerance=1e-8):
            pass

        def step(self, problem, log):
            lam = np.zeros((problem.nc, 3))
            lam[:, 0] = 0.01
            seen.append([])
            for k in range(3):
                v = problem.v_free * (1.0 - 0.25 * k)
                log.record({"k": k})  # the iteration's row, which the iterate is tied to
                log.iterate(v, lam)
                seen[-1].append(problem.yardsticks(v, lam))
            return signorini.StepSolution(v=v, impulses=lam, iterations=3, status="max_iterations")

    signorini.register(Shrink, name="shrink_py")
    r = signorini.run(case=CASE, solver="shrink_py")
    assert r.status == "ok", r.reason
    for it in r.raw["iterations"]:
        cols = dict(zip(it["log"]["names"], it["log"]["columns"]))
        mine = seen[it["step"]]
        for name in ("yardstick_natmap_rel", "yardstick_model_natmap_rel", "yardstick_momentum_rel"):
            assert cols[name] == [m[name] for m in mine], name


def test_a_problem_kept_after_its_step_is_inert():
    kept = []

    class Keep:
        def __init__(self, max_iterations=1, tolerance=1e-8):
            pass

        def step(self, problem, log):
            kept.append(problem)
            return signorini.StepSolution(v=problem.v_free, impulses=np.zeros((problem.nc, 3)))

    signorini.register(Keep, name="keep_py")
    signorini.run(case=CASE, solver="keep_py", set={"duration": 0.05})
    p = kept[-1]
    with pytest.raises(RuntimeError, match="finished step"):
        p.momentum(p.v_free, np.zeros((p.nc, 3)))


def test_fclib_read_gives_the_file_and_the_harness_grade(root):
    p = signorini.fclib.read(root / "tests/data/fclib/slope_libhdf5.hdf5")
    assert p.form == "global" and p.nc > 0 and p.nv > 0
    assert p.J.shape == (3 * p.nc, p.nv) and p.M.shape == (p.nv, p.nv)
    assert sum(p.block_sizes) == p.nv
    # u = H^T M^-1 (H r + f) + w, as the grader computes it from r alone
    r = np.abs(np.random.default_rng(0).normal(size=3 * p.nc))
    g = p.grade(r)
    v = p.solve_M(p.H @ r + p.f)
    assert np.allclose(g["u"], p.J @ v + p.w, rtol=1e-12, atol=1e-14)
    assert np.allclose(p.M @ v, p.H @ r + p.f, rtol=1e-12, atol=1e-14)
    assert p.consistency(v, r) < 1e-12
    # the condensed local form: u = W r + q
    assert np.allclose(p.W() @ r + p.q, g["u"], rtol=1e-10, atol=1e-12)
    assert np.allclose(p.q, p.J @ p.v_free + p.w, rtol=1e-12, atol=1e-14)
    # Siconos's error is scale-free: the natural map over max(||q||, ||r||, ||u||)
    scale = max(np.linalg.norm(p.q), np.linalg.norm(r), np.linalg.norm(g["u"]))
    assert np.isclose(g["error"], g["residual"] / scale, rtol=1e-14)
    with pytest.raises(ValueError, match="length"):
        p.grade(np.zeros(3 * p.nc + 1))
    with pytest.raises(ValueError):
        signorini.fclib.read(root / "missing.hdf5")
