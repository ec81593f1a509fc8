"""The NumPy projected Jacobi (python/examples/projected_jacobi.py) gives the records of the Rust
example solver (tests/example_solver/jacobi.rs) to the last bit, as `signorini diff-records`
compares them (timings and provenance aside; `solver.paper` names the Python source file and its
hash).

On every case of the quick suite (ci/quick.toml) that both solvers run. By default each case is
cut to its first STEPS steps (`duration = STEPS * dt`: the same scenes, contacts and warm starts,
a fraction of the time; the NumPy port takes about 100 times the Rust solver's time), which keeps
this test near a minute in CI; `SIGNORINI_PARITY=full` runs the cases at their own durations
(docs/python.md gives the time).
"""

import os
import pathlib
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

import pytest

import signorini
from signorini import _native

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import projected_jacobi  # noqa: E402

# steps per case in the default mode
STEPS = 12


def _toml(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    return repr(v)


def _suite(tmp_path):
    """The quick suite, each case cut to STEPS steps (unless SIGNORINI_PARITY=full)."""
    quick = pathlib.Path("ci/quick.toml")
    if os.environ.get("SIGNORINI_PARITY") == "full":
        return quick
    if tomllib is None:
        pytest.skip("the quick suite is read with tomllib (Python >= 3.11)")
    defaults = {c["name"]: c["defaults"] for c in signorini.cases()}
    lines = ['name = "parity"']
    for c in tomllib.loads(quick.read_text())["case"]:
        s = dict(c.get("set", {}))
        d = defaults[c["name"]]
        dt = s.get("dt", d["dt"])
        s["duration"] = min(s.get("duration", d["duration"]), STEPS * dt)
        lines += ["[[case]]", f'name = "{c["name"]}"', f'label = "{c.get("label", c["name"])}"']
        lines += [f"set.{k} = {_toml(v)}" for k, v in s.items()]
    path = tmp_path / "parity.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_numpy_jacobi_records_equal_the_rust_example_records(tmp_path):
    suite = _suite(tmp_path)
    _native.set_rust_example(True)
    try:
        rust = signorini.run_suite(suite, out=tmp_path / "rust", solvers=["jacobi"], trajectory="off")
    finally:
        _native.set_rust_example(False)
    projected_jacobi.register("jacobi")
    py = signorini.run_suite(suite, out=tmp_path / "py", solvers=["jacobi"], trajectory="off")
    ran = [r.case for r in rust if r.status != "skipped"]
    # the quick suite's cases without joints or deformable bodies (compliant contact included):
    # 30 of its 40; at full durations the suite is ci/quick.toml as written, whose default
    # table_pile and sphere_pour entries run one named solver (nsn, canal), so 28
    full = os.environ.get("SIGNORINI_PARITY") == "full"
    assert len(ran) >= (28 if full else 30), ran
    assert [r.status for r in py] == [r.status for r in rust]
    assert all(r.status == "ok" for r in rust if r.status != "skipped"), [(r.case, r.reason) for r in rust]
    d = signorini.diff_records(tmp_path / "rust", tmp_path / "py", ignore=["solver.paper"])
    assert d.compared == len(rust)
    assert d.identical, d.differing
