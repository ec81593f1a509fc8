#!/usr/bin/env python3
"""Converts a Siconos frictional-contact text dump (`frictionContact_printInFile`, the `*.dat` and
`*.hdf5.dat` files of Siconos' FrictionContact test data) into an FCLIB file of the local form,
as `signorini fclib export --local-only` writes one.

    python3 peers/dat_to_fclib.py IN.dat OUT.hdf5 [--title T] [--description D]
    python3 peers/dat_to_fclib.py --check IN.dat OUT.hdf5

Needs numpy and h5py (any python3; Siconos is not needed). The dump is, whitespace-separated
(Siconos numerics: FrictionContactProblem.c `frictionContact_printInFile`, NumericsMatrix.c
`NM_write_in_file`, SparseBlockMatrix.c `SBM_write_in_file`):

    d  nc  storage  size0  size1  <matrix>  q[size0]  mu[nc]

with `d` the space dimension (3 here), `nc` the number of contacts and `<matrix>` the W of
`u = W r + q` in one of two storages:

- 0 dense: `size0 size1` again, then the `size0 x size1` entries column by column;
- 1 sparse block (SBM): `nbblocks`, then (when nbblocks > 0) `blocknumber0 blocknumber1`, the
  cumulative block row sizes (blocknumber0 integers) and column sizes (blocknumber1), `filled1
  filled2`, `index1_data` (filled1 integers: the first block of each block row, one past the last
  block at the end) and `index2_data` (filled2: each block's block column), then per block its
  number followed by its entries column by column.

Storage 2 (NumericsSparseMatrix) prints its values with `%g` (6 digits) and is refused: it does
not hold the problem exactly. Every value of the dumps is printed `%32.24e`; Python's float()
rounds it as the C library's `fscanf("%lf")` does (correctly rounded), so the file holds the
very doubles Siconos reads back.

Written (HDF5, integers int32 of shape (1,) as the FCLIB C library writes them):
`/fclib_local/{spacedim = 3, W (CSparse group nzmax, m, n, nz = -1, p, i, x: compressed-column,
every entry of every stored block, zeros included), vectors/{q, mu}, info/{title, description,
math_info}}`. The title defaults to the file name's first `-`-separated field with a trailing
number removed (`BoxesStack1-i100000-32.hdf5.dat` -> `BoxesStack`), the family that `signorini
fclib bench` groups problems by. The output is written to a temporary name and renamed.

`--check IN.dat OUT.hdf5` reads both back (OUT with h5py, IN with this parser and, when
`siconos.numerics` imports, with Siconos' own `frictionContact_new_from_filename`) and prints the
largest relative difference of W, q and mu (exit 1 above 1e-15).
"""
import argparse
import os
import re
import sys

import numpy as np


class DumpError(ValueError):
    pass


class Tokens:
    def __init__(self, path):
        with open(path, "r") as fh:
            self.t = fh.read().split()
        self.k = 0
        self.path = path

    def take(self, what):
        if self.k >= len(self.t):
            raise DumpError(f"{self.path}: ends before {what} (token {self.k})")
        s = self.t[self.k]
        self.k += 1
        return s

    def int(self, what):
        s = self.take(what)
        try:
            return int(s)
        except ValueError:
            raise DumpError(f"{self.path}: {what}: '{s}' is not an integer (token {self.k - 1})") from None

    def floats(self, n, what):
        if self.k + n > len(self.t):
            raise DumpError(f"{self.path}: ends inside {what} ({n} numbers from token {self.k})")
        try:
            x = np.array([float(s) for s in self.t[self.k : self.k + n]], dtype=np.float64)
        except ValueError as e:
            raise DumpError(f"{self.path}: {what}: {e}") from None
        self.k += n
        if not np.all(np.isfinite(x)):
            raise DumpError(f"{self.path}: {what}: entry {int(np.argmin(np.isfinite(x)))} is not finite")
        return x


def sizes(cumulative, what, path):
    """Block sizes from Siconos' cumulative sizes (blocksize0[i] = end of block i)."""
    c = np.asarray(cumulative, dtype=np.int64)
    s = np.diff(np.concatenate([[0], c]))
    if np.any(s <= 0):
        raise DumpError(f"{path}: {what}: cumulative block sizes not increasing")
    return c - s, s


def read_dump(path):
    """(W as (rows, cols, values) triplets with its shape, q, mu, d) of a Siconos FC text dump."""
    tk = Tokens(path)
    d = tk.int("dimension")
    nc = tk.int("number of contacts")
    if d not in (2, 3) or nc <= 0:
        raise DumpError(f"{path}: dimension {d}, {nc} contacts: not a frictional-contact dump")
    storage = tk.int("matrix storage type")
    m, n = tk.int("size0"), tk.int("size1")
    if m != d * nc or n != d * nc:
        raise DumpError(f"{path}: W is {m} x {n}, expected {d * nc} x {d * nc} ({nc} contacts in {d}D)")
    rows, cols, vals = [], [], []
    if storage == 0:
        m2, n2 = tk.int("dense size0"), tk.int("dense size1")
        if (m2, n2) != (m, n):
            raise DumpError(f"{path}: dense W is {m2} x {n2}, header says {m} x {n}")
        x = tk.floats(m * n, "dense W")
        k = np.arange(m * n)
        rows, cols, vals = k % m, k // m, x  # column-major (Siconos' matrix0)
    elif storage == 1:
        nb = tk.int("nbblocks")
        if nb > 0:
            bn0, bn1 = tk.int("blocknumber0"), tk.int("blocknumber1")
            r0, rs = sizes([tk.int("blocksize0") for _ in range(bn0)], "blocksize0", path)
            c0, cs = sizes([tk.int("blocksize1") for _ in range(bn1)], "blocksize1", path)
            if (r0[-1] + rs[-1], c0[-1] + cs[-1]) != (m, n):
                raise DumpError(f"{path}: blocks cover {r0[-1] + rs[-1]} x {c0[-1] + cs[-1]}, W is {m} x {n}")
            filled1, filled2 = tk.int("filled1"), tk.int("filled2")
            if filled2 != nb or not 1 <= filled1 <= bn0 + 1:
                raise DumpError(f"{path}: filled1 = {filled1}, filled2 = {filled2} for {nb} blocks in {bn0} block rows")
            index1 = [tk.int("index1_data") for _ in range(filled1)]
            index2 = [tk.int("index2_data") for _ in range(filled2)]
            if index1[0] != 0 or index1[-1] != nb or any(b < a for a, b in zip(index1, index1[1:])):
                raise DumpError(f"{path}: index1_data {index1[:4]}... is not a row pointer over {nb} blocks")
            rl, cl, vl = [], [], []
            for br in range(filled1 - 1):
                for b in range(index1[br], index1[br + 1]):
                    bc = index2[b]
                    if not 0 <= bc < bn1:
                        raise DumpError(f"{path}: block {b} in block column {bc} (of {bn1})")
                    got = tk.int(f"number of block {b}")
                    if got != b:
                        raise DumpError(f"{path}: block {b} is numbered {got}")
                    h, w = int(rs[br]), int(cs[bc])
                    x = tk.floats(h * w, f"block {b}")
                    k = np.arange(h * w)
                    rl.append(r0[br] + k % h)  # column-major within the block
                    cl.append(c0[bc] + k // h)
                    vl.append(x)
            rows, cols, vals = np.concatenate(rl), np.concatenate(cl), np.concatenate(vl)
    elif storage == 2:
        raise DumpError(f"{path}: storage 2 (NumericsSparseMatrix) prints its values with %g (6 digits): not convertible exactly")
    else:
        raise DumpError(f"{path}: unknown matrix storage {storage}")
    q = tk.floats(m, "q")
    mu = tk.floats(nc, "mu")
    if tk.k != len(tk.t):
        raise DumpError(f"{path}: {len(tk.t) - tk.k} tokens after mu")
    if np.any(mu < 0):
        raise DumpError(f"{path}: contact {int(np.argmax(mu < 0))} has mu < 0")
    return (np.asarray(rows, np.int64), np.asarray(cols, np.int64), np.asarray(vals, np.float64), (m, n)), q, mu, d


def to_csc(trip):
    rows, cols, vals, (m, n) = trip
    if rows.size and np.unique(rows * n + cols).size != rows.size:
        raise DumpError("W: an entry is stored twice")
    order = np.lexsort((rows, cols))
    rows, cols, vals = rows[order], cols[order], vals[order]
    p = np.zeros(n + 1, dtype=np.int64)
    np.add.at(p, cols + 1, 1)
    return np.cumsum(p), rows, vals


def default_title(path):
    stem = os.path.basename(path).split("-")[0]
    stem = re.sub(r"\.(hdf5\.)?dat$", "", stem)
    return re.sub(r"\d+$", "", stem) or stem


def write_local(out, trip, q, mu, d, title, description):
    import h5py

    if d != 3:
        raise DumpError(f"dimension {d}: signorini reads 3D problems only")
    p, i, x = to_csc(trip)
    m, n = trip[3]
    if max(m, n, x.size) > np.iinfo(np.int32).max:
        raise DumpError("W does not fit FCLIB's 32-bit integers")
    tmp = out + ".tmp"
    i32 = lambda v: np.asarray([v], dtype=np.int32)  # noqa: E731
    with h5py.File(tmp, "w") as h:
        g = h.create_group("fclib_local")
        g.create_dataset("spacedim", data=i32(3))
        w = g.create_group("W")
        for k, v in (("nzmax", x.size), ("m", m), ("n", n), ("nz", -1)):
            w.create_dataset(k, data=i32(v))
        w.create_dataset("p", data=p.astype(np.int32))
        w.create_dataset("i", data=i.astype(np.int32))
        w.create_dataset("x", data=x)
        v = g.create_group("vectors")
        v.create_dataset("q", data=q)
        v.create_dataset("mu", data=mu)
        info = g.create_group("info")
        for k, s in (("title", title), ("description", description), ("math_info", "")):
            info.create_dataset(k, data=np.bytes_(s.encode("ascii", "replace") + b"\0"))
    os.replace(tmp, out)
    return x.size


def read_local(path):
    """(W dense, q, mu) of an FCLIB file's local form (any CSparse storage), with h5py."""
    import h5py

    with h5py.File(path, "r") as h:
        g = h["fclib_local"]
        W = g["W"]
        m, n, nz = (int(W[k][()][0]) for k in ("m", "n", "nz"))
        p, i, x = np.asarray(W["p"][()], np.int64), np.asarray(W["i"][()], np.int64), np.asarray(W["x"][()], float)
        D = np.zeros((m, n))
        if nz >= 0:
            np.add.at(D, (i[:nz], p[:nz]), x[:nz])
        else:
            outer = n if nz == -1 else m
            for o in range(outer):
                for k in range(p[o], p[o + 1]):
                    if nz == -1:
                        D[i[k], o] += x[k]
                    else:
                        D[o, i[k]] += x[k]
        return D, np.asarray(g["vectors/q"][()], float), np.asarray(g["vectors/mu"][()], float)


def rel(a, b):
    s = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), 1e-300)
    return float(np.max(np.abs(a - b))) / s


def siconos_dense(sn, M):
    """A Siconos NumericsMatrix as a dense numpy array (entry by entry unless block-sparse)."""
    if M.storageType == sn.NM_SPARSE_BLOCK:
        return np.asarray(sn.SBM_to_dense(M.matrix1), dtype=float)
    return np.array([[sn.NM_get_value(M, i, j) for j in range(M.size1)] for i in range(M.size0)])


def check(dat, out):
    trip, q, mu, _ = read_dump(dat)
    rows, cols, vals, (m, n) = trip
    D = np.zeros((m, n))
    D[rows, cols] = vals
    W2, q2, mu2 = read_local(out)
    errs = {"W": rel(D, W2), "q": rel(q, q2), "mu": rel(mu, mu2)}
    line = f"{os.path.basename(out)}: vs the dump (this parser): W {errs['W']:.1e}, q {errs['q']:.1e}, mu {errs['mu']:.1e}"
    try:
        import siconos.numerics as sn
    except ImportError:
        sn = None
    if sn is not None:
        pr = sn.frictionContact_new_from_filename(dat)
        Ms = siconos_dense(sn, pr.M)
        es = {"W": rel(Ms, W2), "q": rel(np.asarray(pr.q, float), q2), "mu": rel(np.asarray(pr.mu, float), mu2)}
        line += f"; vs Siconos' reader: W {es['W']:.1e}, q {es['q']:.1e}, mu {es['mu']:.1e}"
        errs.update({"siconos " + k: v for k, v in es.items()})
    print(line)
    return max(errs.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dat")
    ap.add_argument("out")
    ap.add_argument("--title")
    ap.add_argument("--description")
    ap.add_argument("--check", action="store_true", help="compare OUT with IN instead of writing")
    a = ap.parse_args()
    try:
        if a.check:
            worst = check(a.dat, a.out)
            sys.exit(0 if worst <= 1e-15 else 1)
        trip, q, mu, d = read_dump(a.dat)
        title = a.title or default_title(a.dat)
        desc = a.description or (
            f"Siconos frictionContact_printInFile text dump {os.path.basename(a.dat)} converted to the FCLIB local form by peers/dat_to_fclib.py"
        )
        nnz = write_local(a.out, trip, q, mu, d, title, desc)
        print(f"{a.out}: {mu.size} contacts, W {q.size} x {q.size} with {nnz} stored entries, title '{title}'")
    except (DumpError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
