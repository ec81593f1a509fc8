"""The NumPy projected Jacobi (python/examples/projected_jacobi.py) gives the records of the Rust
example solver (tests/example_solver/jacobi.rs) on the quick suite's cases both run, to the last
bit, as `signorini diff-records` compares them (timings and provenance aside; `solver.paper`
names the Python source file and its hash)."""

import pathlib
import sys

import signorini
from signorini import _native

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))
import projected_jacobi  # noqa: E402


def test_numpy_jacobi_records_equal_the_rust_example_records(tmp_path):
    _native.set_rust_example(True)
    try:
        rust = signorini.run_suite("ci/quick.toml", out=tmp_path / "rust", solvers=["jacobi"])
    finally:
        _native.set_rust_example(False)
    projected_jacobi.register("jacobi")
    py = signorini.run_suite("ci/quick.toml", out=tmp_path / "py", solvers=["jacobi"])
    ran = [r.case for r in rust if r.status != "skipped"]
    assert len(ran) >= 10, ran
    assert [r.status for r in py] == [r.status for r in rust]
    d = signorini.diff_records(tmp_path / "rust", tmp_path / "py", ignore=["solver.paper"])
    assert d.compared == len(rust)
    assert d.identical, d.differing
