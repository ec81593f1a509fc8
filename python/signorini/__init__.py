"""signorini from Python: run the workbench's cases and solvers, read its records, and write
solvers in NumPy that run through the same stepper, metrics, records and report as the compiled
ones.

Everything runs through the library the ``signorini`` command line uses (the native module
``signorini._native``): the same validation, the same one-line errors, raised as ``ValueError``
(a bad value) or :class:`RefusedError` (a refusal). See docs/python.md.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import RefusedError
from . import fclib  # noqa: E402,F401  (signorini.fclib.read)

__all__ = [
    "RefusedError",
    "Problem",
    "Record",
    "StepSolution",
    "cases",
    "diff_records",
    "fclib",
    "load",
    "register",
    "report",
    "run",
    "run_suite",
    "solvers",
    "step_problem",
]

PathLike = Union[str, "os.PathLike[str]"]

_CATALOGUE: Optional[tuple] = None
# bumped by register(): the cached catalogue then lists the new solver
_REGISTRATIONS = 0


def _catalogue() -> Dict[str, Any]:
    global _CATALOGUE
    # the cases' parameter ranges are probed once per process (a few thousand decodes)
    if _CATALOGUE is None or _CATALOGUE[0] != _REGISTRATIONS:
        _CATALOGUE = (_REGISTRATIONS, json.loads(_native.catalogue()))
    return _CATALOGUE[1]


def solvers() -> List[Dict[str, Any]]:
    """The registered solvers (compiled, then those registered from Python): name, summary,
    paper, capabilities, budget and tolerance settings, answered model, default settings."""
    return copy.deepcopy(_catalogue()["solvers"])


def cases() -> List[Dict[str, Any]]:
    """The cases: name, summary, default parameters, named variants (label, the parameters they
    set, why) and ``parameters``: per parameter its ``default``, ``kind`` (``real``,
    ``integer``, ``bool``, ``choice``, ``string``), ``doc`` (the comment above it in the case's
    defaults), ``choices`` (a choice's spellings) and ``range`` (a number's ``{min,
    min_inclusive, max, max_inclusive}``, ``None`` for an open end). The range is the case's own
    validation, asked with every other parameter at its default (a bound that depends on another
    parameter, such as a box's steepest slope, is the one at the defaults; ``doc`` says more)."""
    return copy.deepcopy(_catalogue()["cases"])


def _sets(set: Optional[Mapping[str, Any]]) -> List[str]:
    def text(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)

    return [f"{k}={text(v)}" for k, v in (set or {}).items()]


def run(
    case: str,
    solver: str,
    set: Optional[Mapping[str, Any]] = None,
    out: Optional[PathLike] = None,
    overwrite: bool = False,
    trajectory: str = "auto",
) -> "Record":
    """Runs one (case, solver) pair, as ``signorini run --case CASE --solver SOLVER --set K=V``.

    ``case`` is a case name (its defaults) or a variant label; ``set`` maps parameters to values
    (``"mu"`` for a case parameter, ``"solver.KEY"`` for a solver setting). The record is written
    into ``out`` when given, with its trajectory sidecar (``trajectory``: ``"auto"``, ``"off"``
    or ``"stride N"``, as ``--trajectory``; docs/replay.md). A pair the runner would skip (a
    missing capability) raises :class:`RefusedError`.
    """
    got = _native.run_selection(
        "default",
        [case],
        [solver],
        _sets(set),
        None if out is None else os.fspath(out),
        overwrite,
        trajectory=trajectory,
    )
    (path, text), = got
    return Record(json.loads(text), path)


def run_suite(
    path: PathLike,
    out: PathLike,
    solvers: Optional[Sequence[str]] = None,
    set: Optional[Mapping[str, Any]] = None,
    overwrite: bool = False,
    max_pairs: int = 10_000,
    trajectory: str = "auto",
) -> List["Record"]:
    """Runs a suite file into the directory ``out``, as ``signorini run --suite PATH --out OUT``
    (``solvers`` narrows it, ``set`` overrides parameters); returns the records in suite order.
    Each record gets its trajectory sidecar as with the CLI (``trajectory``: ``"auto"``,
    ``"off"``, ``"stride N"``). A pair that fails (a Python solver's exception included) is a
    record with status ``failed`` and its reason; the other pairs still run."""
    got = _native.run_selection(
        os.fspath(path),
        [],
        list(solvers or []),
        _sets(set),
        os.fspath(out),
        overwrite,
        max_pairs,
        trajectory=trajectory,
    )
    return [Record(json.loads(text), p) for p, text in got]


def load(dir: PathLike) -> List["Record"]:
    """The records of a run directory, read and checked as ``signorini report`` reads them."""
    return [Record(json.loads(text), p) for p, text in _native.load(os.fspath(dir))]


def report(
    dir: PathLike,
    out: Optional[PathLike] = None,
    gates: Optional[PathLike] = None,
    baseline: Optional[str] = None,
) -> str:
    """Writes the report of a run directory (``signorini report DIR``; default ``DIR/report``)
    and returns the path of its ``index.html``."""
    fs = lambda p: None if p is None else os.fspath(p)  # noqa: E731
    return _native.report(os.fspath(dir), fs(out), fs(gates), baseline)


@dataclass
class Diff:
    """What ``signorini diff-records A B`` finds: records only on one side, and per record the
    JSON paths that differ."""

    only_in_a: List[str]
    only_in_b: List[str]
    differing: Dict[str, List[str]]
    compared: int

    @property
    def identical(self) -> bool:
        return not (self.only_in_a or self.only_in_b or self.differing)


def diff_records(a: PathLike, b: PathLike, ignore: Iterable[str] = ()) -> Diff:
    """Compares the records of two run directories (``signorini diff-records A B --ignore ...``);
    timings and provenance are ignored as the command ignores them."""
    only_a, only_b, differing, compared = _native.diff_records(os.fspath(a), os.fspath(b), list(ignore))
    return Diff(only_a, only_b, dict(differing), compared)


class Record:
    """One run record (``signorini.run/1``): a (case, solver) pair's summary, oracle checks and
    per-step metrics. ``raw`` is the record as JSON data; ``path`` the file it was written to or
    read from (``None`` for a record not written)."""

    def __init__(self, raw: Dict[str, Any], path: Optional[str] = None):
        self.raw = raw
        self.path = path

    @property
    def case(self) -> str:
        """The case label."""
        return self.raw["case"]["label"]

    @property
    def solver(self) -> str:
        return self.raw["solver"]["name"]

    @property
    def status(self) -> str:
        """``ok``, ``failed`` or ``skipped``."""
        return self.raw["status"]

    @property
    def reason(self) -> Optional[str]:
        """Why the pair failed or was skipped."""
        return self.raw.get("reason")

    @property
    def summary(self) -> Dict[str, Any]:
        return self.raw["summary"]

    @property
    def oracle(self) -> Dict[str, Dict[str, Any]]:
        """The case's oracle checks, by name (each with ``pass``, ``measured``, ``expected``, ``error``, ``tolerance``)."""
        return self.summary.get("oracle", {})

    @property
    def provenance(self) -> Dict[str, Any]:
        return self.raw["provenance"]

    @property
    def steps(self) -> Dict[str, np.ndarray]:
        """Per-step columns as NumPy arrays: ``step``, ``iterations``, ``wall_s``, ``status``
        (strings) and every per-step metric (``natmap_abs_l2``, ``momentum_rel``, ...)."""
        rows = self.raw.get("steps", [])
        cols: Dict[str, list] = {"step": [], "iterations": [], "wall_s": [], "status": []}
        metric_names: List[str] = []
        for r in rows:
            for k in r.get("metrics", {}):
                if k not in metric_names:
                    metric_names.append(k)
        for name in metric_names:
            cols[name] = []
        for r in rows:
            for k in ("step", "iterations", "wall_s", "status"):
                cols[k].append(r.get(k))
            m = r.get("metrics", {})
            for name in metric_names:
                v = m.get(name)
                cols[name].append(np.nan if v is None else v)
        out: Dict[str, np.ndarray] = {}
        for k, v in cols.items():
            out[k] = np.asarray(v, dtype=object if k == "status" else None)
            if out[k].dtype == object and k != "status":
                out[k] = np.asarray([np.nan if x is None else x for x in v], dtype=float)
        return out

    def to_pandas(self):
        """The per-step columns as a pandas DataFrame (needs pandas: ``pip install ./python[pandas]``)."""
        import pandas as pd

        return pd.DataFrame(self.steps)

    def __repr__(self) -> str:
        checks = self.oracle
        passed = sum(1 for c in checks.values() if c.get("pass"))
        return (
            f"Record({self.case} / {self.solver}: {self.status}, {len(self.raw.get('steps', []))} steps logged, "
            f"oracle {passed}/{len(checks)} passed)"
        )


@dataclass
class StepSolution:
    """What a Python solver's ``step`` returns: the end-of-step velocity ``v`` (nv), the contact
    impulses (nc x 3, rows ``(n, t1, t2)``), the iterations it took and its status
    (``solved``, ``almost_solved``, ``max_iterations``, ``insufficient_progress``,
    ``time_limit``, ``stopped``)."""

    v: np.ndarray
    impulses: np.ndarray
    iterations: int = 0
    status: str = "solved"

    def __post_init__(self):
        self.v = np.ascontiguousarray(self.v, dtype=np.float64).reshape(-1)
        self.impulses = np.ascontiguousarray(self.impulses, dtype=np.float64).reshape(-1, 3)
        self.iterations = int(self.iterations)


class Problem:
    """A step's problem as a Python solver receives it.

    Arrays: ``v_free`` (the free velocity ``v* = v0 + M^-1 dt f``), ``v0``, per contact ``mu``,
    ``gap``, ``bias_n`` (``gap/dt``, the normal velocity bias of the reference NCP), ``v_hat``
    and ``r_n`` (the normal law: rigid ``r_n = 0``). ``M_blocks``/``M_inv_blocks`` are the mass
    matrix's diagonal blocks and their inverses, at ``M_offsets``; ``J`` (3 nc x nv, rows
    ``(n, t1, t2)`` per contact) and ``M`` are scipy.sparse matrices; :meth:`solve_M` applies
    ``M^-1``; :meth:`W` forms the Delassus matrix ``J M^-1 J^T``. Per contact, ``frames``
    (nc x 3 x 3, columns ``n, t1, t2`` in the world frame: the rows of ``J`` are in it) and
    ``points`` (nc x 3). :meth:`yardsticks`, :meth:`natural_map`, :meth:`momentum` and
    :meth:`stop_measure` grade an iterate as the harness does.
    """

    def __init__(self, d: Dict[str, Any]):
        self.__dict__.update(d)
        self._J = None

    @property
    def J(self):
        if self._J is None:
            import scipy.sparse as sp

            self._J = sp.csr_matrix(
                (self.J_vals, (self.J_rows, self.J_cols)), shape=(3 * self.nc, self.nv)
            )
        return self._J

    @property
    def M(self):
        import scipy.sparse as sp

        return sp.block_diag(self.M_blocks, format="csr")

    def solve_M(self, x: np.ndarray) -> np.ndarray:
        """``M^-1 x`` (x of length nv, or nv x k), block by block."""
        x = np.asarray(x, dtype=np.float64)
        y = np.empty_like(x)
        for off, inv in zip(self.M_offsets, self.M_inv_blocks):
            n = inv.shape[0]
            y[off : off + n] = inv @ x[off : off + n]
        return y

    def W(self) -> np.ndarray:
        """The Delassus matrix ``J M^-1 J^T`` (dense, 3 nc x 3 nc)."""
        jt = self.J.T.toarray()
        return np.asarray(self.J @ self.solve_M(jt))

    # The harness's own yardsticks (the Rust functions it calls, not a restatement): an iterate
    # ``(v, impulses)`` graded here reads what the records would say of it.

    def yardsticks(self, v: np.ndarray, impulses: np.ndarray) -> Dict[str, float]:
        """The iteration logs' columns of the iterate ``(v, impulses (nc x 3))``:
        ``yardstick_natmap_rel`` (the rigid natural map, ``||F|| / ||q||``),
        ``yardstick_model_natmap_rel`` (each contact's own law) and ``yardstick_momentum_rel``
        (Castro et al.'s Eq. 32)."""
        return self._grader.yardsticks(*_iterate(v, impulses))

    def natural_map(self, v: np.ndarray, impulses: np.ndarray) -> Dict[str, float]:
        """The step metrics' natural map of ``(v, impulses)``: ``natmap_abs_l2``,
        ``natmap_rel_l2`` (Siconos's ``/ ||q||``), ``natmap_rel1_l2`` (``/ (1 + ||q||)``)."""
        return self._grader.natural_map(*_iterate(v, impulses))

    def momentum(self, v: np.ndarray, impulses: np.ndarray) -> float:
        """The step metric ``momentum_rel`` of ``(v, impulses)`` (Castro et al.'s Eq. 32)."""
        return self._grader.momentum(*_iterate(v, impulses))

    def stop_measure(
        self, v: np.ndarray, impulses: np.ndarray, model: str = "rigid_coulomb", facets: "int | None" = None
    ) -> float:
        """The equal-accuracy mode's stopping measure of ``(v, impulses)`` for a solver answering
        ``model`` (``rigid_coulomb``, ``regularised``, ``relaxed``, ``cone_program``, or ``pyramid``
        with its ``facets``): ``--accuracy EPS`` stops such a solver at the first iterate where it
        is at most EPS (docs/equal-accuracy.md)."""
        return self._grader.stop_measure(*_iterate(v, impulses), model, facets)


def _iterate(v: np.ndarray, impulses: np.ndarray):
    return (
        np.ascontiguousarray(v, dtype=np.float64).reshape(-1),
        np.ascontiguousarray(impulses, dtype=np.float64).reshape(-1, 3),
    )


def step_problem(
    case: str, step: int, solver: str = "pgs", set: Optional[Mapping[str, Any]] = None
) -> Problem:
    """The problem of step ``step`` (0-based) of ``case`` (a name or variant label, with
    ``set`` overrides as for :func:`run`), reached by running ``solver`` for ``step`` steps, as
    ``signorini fclib export`` reaches it. The :class:`Problem` has ``solution``, the solver's
    answer to that step (a :class:`StepSolution`: what the run's record grades at this step),
    and the harness's yardsticks (:meth:`Problem.yardsticks`, :meth:`Problem.natural_map`,
    :meth:`Problem.momentum`, :meth:`Problem.stop_measure`)."""
    d, grader = _native.step_problem(case, solver, int(step), _sets(set))
    sol = StepSolution(
        v=d.pop("solution_v"),
        impulses=d.pop("solution_impulses"),
        iterations=d.pop("solution_iterations"),
        status=d.pop("solution_status"),
    )
    d.update(_grader=grader, case=case, step=int(step), solver=solver, solution=sol)
    return Problem(d)


class _Adapter:
    """Turns the native problem dict into a :class:`Problem` for the user's solver."""

    def __init__(self, inner: Any):
        self.inner = inner

    def step(self, problem: Dict[str, Any], log: Any) -> StepSolution:
        s = self.inner.step(Problem(problem), log)
        if not isinstance(s, StepSolution):
            raise TypeError(f"step returned {type(s).__name__}, expected signorini.StepSolution")
        return s


def _source_hash(cls: type) -> str:
    try:
        path = inspect.getsourcefile(cls)
    except (TypeError, OSError):  # a class of the interactive interpreter has no source file
        path = None
    if not path or not os.path.isfile(path):
        return "Python solver (source file unknown)"
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return f"Python solver {os.path.basename(path)} sha256:{digest}"


def register(
    cls: type,
    name: Optional[str] = None,
    capabilities: Iterable[str] = ("rigid_bodies", "rigid_contact", "exact_friction_cone"),
    settings: Optional[Mapping[str, Any]] = None,
    budget: str = "max_iterations",
    tolerance: str = "tolerance",
    summary: Optional[str] = None,
    paper: Optional[str] = None,
) -> None:
    """Registers a solver written in Python.

    ``cls(**settings)`` makes an instance per (case, solver) pair; its ``step(problem, log)``
    gets a :class:`Problem` and the step's log (``log.iterate(v, impulses)`` reports an iterate
    to the harness's yardstick, ``log.record({...})`` the solver's own numbers,
    ``log.should_stop()`` asks whether to stop) and returns a :class:`StepSolution`.
    ``capabilities`` names fields of the solver API's ``Capabilities``; ``settings`` are the
    defaults (they must hold the ``budget`` and ``tolerance`` settings), overridable with
    ``set={"solver.KEY": value}``. The record's ``solver.paper`` names the class's source file
    and its SHA-256. Registering a name again replaces the earlier class.
    """
    if not inspect.isclass(cls) or not callable(getattr(cls, "step", None)):
        raise TypeError("register expects a class with a step(problem, log) method")
    settings = dict(settings if settings is not None else {budget: 1000, tolerance: 1e-8})
    name = name or cls.__name__.lower()
    source = _source_hash(cls)
    doc = (inspect.getdoc(cls) or "").strip().splitlines()
    summary = summary or (doc[0] if doc else f"{cls.__name__} (Python)")
    paper = f"{paper}; {source}" if paper else source

    def make(**kw: Any) -> _Adapter:
        return _Adapter(cls(**kw))

    global _REGISTRATIONS
    _native.register(make, name, summary, paper, list(capabilities), json.dumps(settings), budget, tolerance)
    _REGISTRATIONS += 1
