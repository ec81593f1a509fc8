"""FCLIB problem files (HDF5) from Python: :func:`read` gives a file's problem as NumPy and
scipy.sparse arrays, graded by the harness's own FCLIB grader (the one behind ``signorini fclib
solve`` and ``fclib bench``; docs/fclib.md)."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Union

import numpy as np

from . import _native

__all__ = ["Problem", "read"]


def _sparse(d: Dict[str, Any], name: str):
    import scipy.sparse as sp

    return sp.csr_matrix(
        (d[f"{name}_vals"], (d[f"{name}_rows"], d[f"{name}_cols"])), shape=tuple(d[f"{name}_shape"])
    )


class Problem:
    """An FCLIB problem: ``form`` (``global`` or ``local``, the form the solvers are given),
    ``nc``, ``mu``, ``q`` (the constant term of the local problem ``u = W r + q``, condensed from
    the global form where that is the form), ``title``, ``description``.

    Global form ``M v = H r + f``, ``u = H^T v + w``: ``nv``, ``M`` and ``H`` (scipy.sparse, as
    written), ``J = H^T`` (3 nc x nv, rows ``(n, t1, t2)`` per contact, the workbench's
    convention), ``block_sizes``, ``f``, ``w`` (``w_n`` is ``gap/dt`` in a file signorini
    exported), :meth:`solve_M` and ``v_free = M^-1 f``. :meth:`W` is the file's local ``W`` or
    ``H^T M^-1 H``. ``solution`` is the stored ``{v, u, r}``, if any. A file has no contact
    frames or gaps: its rows are already in each contact's frame.

    :meth:`grade` is the harness's grade of impulses ``r`` (``3 nc``, normal first).
    """

    def __init__(self, d: Dict[str, Any], file: Any):
        self._file = file
        self.form: str = d["form"]
        self.title: str = d["title"]
        self.description: str = d["description"]
        self.nc: int = d["nc"]
        self.mu: np.ndarray = d["mu"]
        self.q: np.ndarray = d["q"]
        self.nv: Optional[int] = d.get("nv")
        self.block_sizes = d.get("block_sizes")
        self.f = d.get("f")
        self.w = d.get("w")
        self._d = d
        self.solution = (
            {k: d[f"solution_{k}"] for k in ("v", "u", "r")} if "solution_r" in d else None
        )

    @property
    def M(self):
        """The mass matrix as written (scipy.sparse; global form)."""
        return _sparse(self._d, "M")

    @property
    def H(self):
        """``H`` (nv x 3 nc, scipy.sparse; global form)."""
        return _sparse(self._d, "H")

    @property
    def J(self):
        """``H^T``: the contact Jacobian, rows ``(n, t1, t2)`` per contact."""
        return self.H.T.tocsr()

    def solve_M(self, x: np.ndarray) -> np.ndarray:
        """``M^-1 x`` (x of length nv) with the grader's factor of ``M`` (an LU of each diagonal
        block of ``M`` as written)."""
        return self._file.solve_m(np.ascontiguousarray(x, dtype=np.float64))

    @property
    def v_free(self) -> np.ndarray:
        """The free velocity ``M^-1 f`` (global form)."""
        return self.solve_M(self.f)

    def W(self):
        """The Delassus matrix (scipy.sparse, 3 nc x 3 nc): the file's local ``W``, or ``H^T
        M^-1 H`` condensed with ``M`` as written."""
        import scipy.sparse as sp

        shape, rows, cols, vals = self._file.delassus()
        return sp.csr_matrix((vals, (rows, cols)), shape=shape)

    def grade(self, r: np.ndarray) -> Dict[str, Any]:
        """The harness's grade of impulses ``r``: ``error`` (Siconos's ``||F|| / max(||q||, ||r||,
        ||u||)``, the bench's verdict measure), ``residual`` (``||F||``), ``error_1q`` (``||F|| /
        (1 + ||q||)``), ``error_rel_q`` (``||F|| / ||q||``) and ``u``. ``u`` is computed from
        ``r`` alone (global form: ``v = M^-1 (H r + f)``)."""
        return self._file.grade(np.ascontiguousarray(r, dtype=np.float64).reshape(-1))

    def consistency(self, v: np.ndarray, r: np.ndarray) -> Optional[float]:
        """How far a solver's own ``v`` is from balancing ``r``: ``||M v - H r - f|| /
        max(||f||, ||H r||)`` (global form; ``None`` for the local form)."""
        return self._file.consistency(
            np.ascontiguousarray(v, dtype=np.float64).reshape(-1),
            np.ascontiguousarray(r, dtype=np.float64).reshape(-1),
        )

    def __repr__(self) -> str:
        return f"fclib.Problem({self.form}, nc={self.nc}, nv={self.nv}, {self.title!r})"


def read(path: Union[str, "os.PathLike[str]"], form: Optional[str] = None) -> Problem:
    """Reads an FCLIB file as ``signorini fclib solve`` reads it (``form``: ``"global"``,
    ``"local"``, or ``None`` for the file's own). An unreadable file raises ``ValueError``."""
    d, file = _native.fclib_read(os.fspath(path), form)
    return Problem(d, file)
