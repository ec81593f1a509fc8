"""The NumPy projected Jacobi (python/examples/projected_jacobi.py) gives the records of the Rust
example solver (tests/example_solver/jacobi.rs) to the last bit, as `signorini diff-records`
compares them (timings and provenance aside; `solver.paper` names the Python source file and its
hash).

By default on five of the quick suite's cases (one contact sticking and slipping, a rolling
sphere, a compliant cylinder, a stack of spheres with body-body contacts): the NumPy port takes
about 100 times the Rust solver's time, and CI keeps this test under a minute.
`SIGNORINI_PARITY=full` runs every quick-suite case both solvers run (about 15 minutes here).
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

CASES = ["slope-10-stick", "slope-30-slip", "slope-sphere-rolls", "spring_cylinder-rolling", "sphere_stack"]


def _suite(tmp_path):
    if os.environ.get("SIGNORINI_PARITY") == "full":
        return pathlib.Path("ci/quick.toml")
    if tomllib is None:
        pytest.skip("the case subset is read with tomllib (Python >= 3.11)")
    quick = tomllib.loads(pathlib.Path("ci/quick.toml").read_text())
    lines = ['name = "parity"']
    for c in quick["case"]:
        if c.get("label", c["name"]) not in CASES:
            continue
        lines += ["[[case]]", f'name = "{c["name"]}"']
        if "label" in c:
            lines.append(f'label = "{c["label"]}"')
        for k, v in c.get("set", {}).items():
            lines.append(f"set.{k} = {v!r}".replace("'", '"').replace("True", "true").replace("False", "false"))
    path = tmp_path / "parity.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_numpy_jacobi_records_equal_the_rust_example_records(tmp_path):
    suite = _suite(tmp_path)
    _native.set_rust_example(True)
    try:
        rust = signorini.run_suite(suite, out=tmp_path / "rust", solvers=["jacobi"])
    finally:
        _native.set_rust_example(False)
    projected_jacobi.register("jacobi")
    py = signorini.run_suite(suite, out=tmp_path / "py", solvers=["jacobi"])
    ran = [r.case for r in rust if r.status != "skipped"]
    assert len(ran) >= (10 if suite.name == "quick.toml" else len(CASES)), ran
    assert [r.status for r in py] == [r.status for r in rust]
    assert all(r.status == "ok" for r in rust if r.case in CASES), [(r.case, r.reason) for r in rust]
    d = signorini.diff_records(tmp_path / "rust", tmp_path / "py", ignore=["solver.paper"])
    assert d.compared == len(rust)
    assert d.identical, d.differing
