"""The run-and-read API: listings, one pair, a suite, loading, the report, and the CLI's errors."""

import json
import pathlib

import numpy as np
import pytest

import signorini


def test_solvers_and_cases_list_the_registry():
    names = [s["name"] for s in signorini.solvers()]
    assert "pgs" in names and "sap" in names
    pgs = next(s for s in signorini.solvers() if s["name"] == "pgs")
    assert pgs["capabilities"]["rigid_contact"] is True
    assert pgs["budget"] in pgs["defaults"] and pgs["tolerance"] in pgs["defaults"]
    slope = next(c for c in signorini.cases() if c["name"] == "slope")
    assert "mu" in slope["defaults"] and "angle_deg" in slope["defaults"]
    assert all(v["label"].startswith("slope-") for v in slope["variants"])


def test_run_one_pair_returns_its_record_with_oracle_and_step_arrays():
    r = signorini.run(case="slope", solver="pgs", set={"mu": 0.3, "solver.tolerance": 1e-9})
    assert r.status == "ok", r.reason
    assert r.case == "slope" and r.solver == "pgs" and r.path is None
    assert r.raw["case"]["params"]["mu"] == 0.3
    assert r.oracle and all("pass" in c for c in r.oracle.values())
    steps = r.steps
    assert steps["step"].dtype.kind in "iu" and len(steps["step"]) > 0
    assert steps["natmap_abs_l2"].dtype == np.float64
    assert np.all(steps["natmap_abs_l2"][np.isfinite(steps["natmap_abs_l2"])] >= 0.0)
    assert len({len(v) for v in steps.values()}) == 1
    assert "oracle" in repr(r)


def test_bad_values_raise_value_error_with_the_cli_message():
    with pytest.raises(ValueError, match="unknown solver 'nope'"):
        signorini.run(case="slope", solver="nope")
    with pytest.raises(ValueError, match="unknown case 'nope'"):
        signorini.run(case="nope", solver="pgs")
    with pytest.raises(ValueError, match="mu"):
        signorini.run(case="slope", solver="pgs", set={"mu": -1.0})
    with pytest.raises(ValueError, match="expected KEY=VALUE|twice"):
        signorini.run(case="slope", solver="pgs", set={"mu": 0.2, "case.mu": 0.3})


def test_a_pair_the_runner_would_skip_is_refused():
    # local_global has no rigid bodies; the slope's block is one
    with pytest.raises(signorini.RefusedError, match="slope / local_global would be skipped"):
        signorini.run(case="slope", solver="local_global")


def test_run_suite_writes_records_that_load_and_report_read(tmp_path, root):
    suite = tmp_path / "two.toml"
    suite.write_text(
        'name = "two"\nsolvers = ["pgs"]\n'
        '[[case]]\nname = "slope"\nlabel = "slope-a"\nset = { mu = 0.3 }\n'
        '[[case]]\nname = "slope"\nlabel = "slope-b"\nset = { mu = 0.1 }\n'
    )
    out = tmp_path / "run"
    recs = signorini.run_suite(suite, out=out)
    assert [r.case for r in recs] == ["slope-a", "slope-b"]
    assert all(r.path and r.path.startswith(str(out)) for r in recs)
    loaded = {r.case: r for r in signorini.load(out)}
    assert set(loaded) == {"slope-a", "slope-b"}
    assert loaded["slope-a"].summary == recs[0].summary
    # the same records again: identical to the last bit, timings aside
    assert signorini.diff_records(out, out).identical
    index = signorini.report(out, out=tmp_path / "report")
    assert index.endswith("index.html") and (tmp_path / "report" / "index.html").is_file()
    # a second run into the same directory with other parameters is refused, as by the CLI
    with pytest.raises(signorini.RefusedError):
        signorini.run_suite(suite, out=out, set={"mu": 0.5})


def test_unreadable_inputs_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="suite"):
        signorini.run_suite(tmp_path / "missing.toml", out=tmp_path / "o")
    with pytest.raises(ValueError):
        signorini.load(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.json").write_text(json.dumps({"schema": "other"}))
    with pytest.raises(ValueError):
        signorini.load(tmp_path / "bad")


def test_cases_list_each_parameter_with_its_default_doc_and_range():
    slope = next(c for c in signorini.cases() if c["name"] == "slope")
    p = slope["parameters"]
    assert set(p) == set(slope["defaults"])
    assert p["mu"]["default"] == slope["defaults"]["mu"] and p["mu"]["kind"] == "real"
    assert "Coulomb friction" in p["mu"]["doc"]
    assert p["mu"]["range"] == {"min": 0.0, "min_inclusive": True, "max": None, "max_inclusive": None}
    assert p["mass"]["range"]["min"] == 0.0 and p["mass"]["range"]["min_inclusive"] is False
    # a box's slope is below 45 degrees (the default shape is a box)
    assert p["angle_deg"]["range"] == {"min": 0.0, "min_inclusive": True, "max": 45.0, "max_inclusive": False}
    assert p["shape"]["kind"] == "choice" and sorted(p["shape"]["choices"]) == ["box", "sphere"]


def _outside(rng, end, kind):
    bound, inclusive = rng[end], rng[f"{end}_inclusive"]
    if kind == "integer":
        return bound - 1 if end == "min" else bound + 1
    if not inclusive:
        return bound
    return np.nextafter(bound, -np.inf if end == "min" else np.inf)


def test_every_listed_bound_is_the_validations():
    """Just past each listed bound of every case, the CLI's validation refuses the value."""
    checked = 0
    for case in signorini.cases():
        for name, p in case["parameters"].items():
            rng = p.get("range")
            if not rng:
                continue
            for end in ("min", "max"):
                if rng[end] is None:
                    continue
                value = _outside(rng, end, p["kind"])
                with pytest.raises(ValueError):
                    signorini.run(case=case["name"], solver="pgs", set={name: repr(float(value)) if p["kind"] == "real" else value})
                checked += 1
    assert checked > 50


def test_written_records_get_the_cli_trajectory_sidecars(tmp_path):
    r = signorini.run(case="slope", solver="pgs", set={"duration": 0.1}, out=tmp_path / "a")
    assert pathlib.Path(r.path[: -len(".json")] + ".traj.json.gz").is_file()
    r = signorini.run(case="slope", solver="pgs", set={"duration": 0.1}, out=tmp_path / "b", trajectory="off")
    assert not list((tmp_path / "b").glob("*.traj.json.gz"))
    with pytest.raises(ValueError, match="--trajectory 'sometimes'"):
        signorini.run(case="slope", solver="pgs", out=tmp_path / "c", trajectory="sometimes")
