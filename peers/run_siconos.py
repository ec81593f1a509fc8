#!/usr/bin/env python3
"""Siconos as the reference row of `signorini fclib bench`: runs Siconos' FC3D solvers on every
FCLIB file (*.hdf5) under DIR and writes one signorini run record (schema signorini.run/1, the
format of `signorini fclib bench`) per (problem, solver) into OUT, so `signorini report OUT` shows
them beside signorini's solvers.

    /usr/bin/python3 peers/run_siconos.py DIR [--out runs/fclib] [--solvers nsgs,nsn_ac,admm,prox]
        [--tolerance 1e-8] [--max-iterations 1000] [--time-limit 10] [--form global|local]
        [--matrix sbm|csr]

Needs Debian's python3-siconos, python3-h5py and python3-scipy (peers/setup-siconos.sh installs
them for /usr/bin/python3). The files are read with h5py (Siconos' own FCLIB reader is optional
in its build): a global problem `M v = H r + f, u = H^T v + w` is condensed to the local problem
Siconos' FC3D solvers take, `W = H^T M^-1 H`, `q = H^T M^-1 f + w` (sparse, scipy); a local one is
taken as it is (`W`, `q`, `mu`). W is handed to Siconos as its 3x3 sparse-block matrix (SBM),
built by Siconos' `SBM_from_csparse(3, W)` as its FCLIB reader (`from_fclib_local`) builds it,
so the solvers run the code path of a Siconos user who reads the file (`--matrix csr` hands a
CSR NumericsMatrix instead, the earlier form, for comparison). Every answer `r` is graded by
signorini's own grader, the function that grades signorini's solvers: the answer is written as an
FCLIB solution (`OUT/solutions/PROBLEM__siconos-SOLVER.hdf5`, `/solution/{r, u}`) and graded by
`signorini fclib grade FILE --answer ANSWER` (`--signorini BIN`, default `target/release/signorini`,
else `signorini` on PATH): `fclib_error = ||F|| / max(||q||, ||r||, ||u||)` against the tolerance
(Siconos' scaling, computed from `r` alone), with `natmap_1q = ||F|| / (1 + ||q||)` and
`natmap_rel_q = ||F|| / ||q||` beside it.
Each solve runs in a forked child, stopped at the time limit (Siconos' drivers have an iteration
budget, no clock). The solver's own tolerance (`dparam[SICONOS_DPARAM_TOL]`) is the protocol's,
on Siconos' own error measure. Each record also holds Siconos' own grade of the answer,
`siconos_error` = `fc3d_compute_error(problem, r, u, tol, options, ||q||)` (Siconos' natural map
over `max(||q||, ||r||, ||u||)`, computed by Siconos on the same SBM problem), so the harness's
grader can be cross-checked, and `siconos_reported`, the error the solver reported
(`dparam[SICONOS_DPARAM_RESIDU]`). The solver settings of each record name the Siconos version
(`siconos_version`) and the matrix form (`matrix_form`).
"""
import argparse
import json
import multiprocessing as mp
import os
import platform
import subprocess
import sys
import time

import h5py
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

SOLVERS = {
    "nsgs": "SICONOS_FRICTION_3D_NSGS",
    "nsn_ac": "SICONOS_FRICTION_3D_NSN_AC",
    "admm": "SICONOS_FRICTION_3D_ADMM",
    "prox": "SICONOS_FRICTION_3D_PROX",
}
MATRIX_FORMS = {"sbm": "SBM 3x3", "csr": "CSR"}


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def matrix(g):
    """A CSparse group (nz >= 0 triplets, -1 CSC, -2 CSR) as a scipy CSC matrix."""
    m, n, nz = int(g["m"][()][0]), int(g["n"][()][0]), int(g["nz"][()][0])
    p, i, x = np.asarray(g["p"][()], dtype=np.int64), np.asarray(g["i"][()], dtype=np.int64), np.asarray(g["x"][()])
    if nz >= 0:
        return sp.coo_matrix((x[:nz], (i[:nz], p[:nz])), shape=(m, n)).tocsc()
    if nz == -1:
        return sp.csc_matrix((x[: p[n]], i[: p[n]], p), shape=(m, n))
    if nz == -2:
        return sp.csr_matrix((x[: p[m]], i[: p[m]], p), shape=(m, n)).tocsc()
    raise ValueError(f"{g.name}/nz: unknown storage {nz}")


def text(h, path):
    if path not in h:
        return ""
    v = h[path][()]
    v = v[0] if isinstance(v, np.ndarray) and v.shape else v
    return (v.decode() if isinstance(v, bytes) else str(v)).strip()


def load(path, form):
    """(W, q, mu, form used, info title, dofs) of an FCLIB file."""
    with h5py.File(path, "r") as h:
        has_g, has_l = "fclib_global" in h, "fclib_local" in h
        use = form or ("global" if has_g else "local")
        if use == "global" and not has_g:
            raise ValueError("/fclib_global: missing: this file has the local form only (use --form local)")
        if use == "local" and not has_l:
            raise ValueError("/fclib_local: missing: this file has no local form")
        title = text(h, "fclib_global/info/title") or text(h, "fclib_local/info/title")
        if use == "global":
            g = h["fclib_global"]
            if "G" in g:
                raise ValueError("/fclib_global/G: bilateral constraints are not handled")
            M, H = matrix(g["M"]), matrix(g["H"])
            f, w, mu = (np.asarray(g["vectors"][k][()], dtype=float) for k in ("f", "w", "mu"))
            solve = spla.factorized(M.tocsc())
            MinvH = np.column_stack([solve(np.asarray(H[:, j].todense()).ravel()) for j in range(H.shape[1])])
            W = sp.csr_matrix(H.T @ MinvH)
            q = H.T @ solve(f) + w
            return W, np.asarray(q).ravel(), mu, use, title, M.shape[0]
        loc = h["fclib_local"]
        W = matrix(loc["W"]).tocsr()
        q, mu = (np.asarray(loc["vectors"][k][()], dtype=float) for k in ("q", "mu"))
        return W, q, mu, use, title, W.shape[0]


def grade(bin_, path, answer, form):
    """signorini's grade of the answer stored in `answer` (its /solution/r) to the problem at `path`."""
    out = subprocess.run([bin_, "fclib", "grade", path, "--answer", answer, "--form", form], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"signorini fclib grade: {out.stderr.strip()}")
    return json.loads(out.stdout)


def write_answer(path, r, u):
    """An FCLIB solution group `/solution/{r, u}` (atomically)."""
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as h:
        g = h.create_group("solution")
        g.create_dataset("r", data=np.asarray(r, dtype=float))
        g.create_dataset("u", data=np.asarray(u, dtype=float))
    os.replace(tmp, path)


def signorini_binary(given):
    """The signorini binary that grades the answers."""
    import shutil

    for c in [given, os.environ.get("SIGNORINI"), "target/release/signorini", shutil.which("signorini")]:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    die("no signorini binary to grade the answers: build it (cargo build --release) or pass --signorini BIN")


def siconos_problem(sn, W, q, mu, matrix):
    """The FrictionContactProblem Siconos solves: W as a 3x3 sparse-block matrix (`SBM_from_csparse(3,
    W)`, what Siconos' FCLIB reader builds; from triplets with 64-bit indices, the form the Python
    binding passes on without conversion) or, with matrix = "csr", as a CSR NumericsMatrix."""
    if matrix == "sbm":
        c = W.tocoo()
        c = sp.coo_matrix((c.data.astype(float), (c.row.astype(np.int64), c.col.astype(np.int64))), shape=W.shape)
        info, sbm = sn.SBM_from_csparse(3, c)
        if info != 0:
            raise RuntimeError(f"SBM_from_csparse(3, W) failed (info {info})")
        return sn.FrictionContactProblem(3, sbm, q, mu)
    return sn.FrictionContactProblem(3, W.tocsr().astype(float), q, mu)


def child(conn, W, q, mu, solver, tol, budget, matrix):
    import siconos.numerics as sn

    prob = siconos_problem(sn, W, q, mu, matrix)
    so = sn.SolverOptions(getattr(sn, SOLVERS[solver]))
    so.iparam[sn.SICONOS_IPARAM_MAX_ITER] = budget
    so.dparam[sn.SICONOS_DPARAM_TOL] = tol
    r, u = np.zeros(q.size), np.zeros(q.size)
    t = time.perf_counter()
    info = sn.fc3d_driver(prob, r, u, so)
    wall = time.perf_counter() - t
    # Siconos' own grade of r, on a fresh copy of the problem (a driver may scale its problem),
    # with the norm its FC3D drivers pass: ||q||
    check = siconos_problem(sn, W, q, mu, matrix)
    _, sic_err = sn.fc3d_compute_error(check, r.copy(), np.zeros(q.size), tol, so, float(np.linalg.norm(q)))
    conn.send((int(info), int(so.iparam[sn.SICONOS_IPARAM_ITER_DONE]), float(so.dparam[sn.SICONOS_DPARAM_RESIDU]), wall, r, float(sic_err)))


def siconos_version():
    """The installed Siconos: the Debian package's version when dpkg knows it (the Python module's
    own version string says 4.5.0 in Debian's 4.4.0 package), else the module's."""
    import siconos

    mod = str(getattr(siconos, "version", "") or getattr(siconos, "__version__", ""))
    try:
        deb = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3-siconos"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        deb = ""
    return (deb, mod)


def fnv(params):
    """signorini's Params::hash: FNV-1a 64 of the compact, key-sorted JSON."""
    h = 0xCBF29CE484222325
    for b in json.dumps(params, sort_keys=True, separators=(",", ":")).encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def provenance():
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    deb, mod = siconos_version()
    return {
        "commit": commit,
        "version": f"siconos {deb} (Debian python3-siconos; module version {mod})" if deb else f"siconos {mod}",
        "machine": platform.node() + " " + platform.processor(),
        "threads": os.cpu_count() or 1,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "backend": "cpu",
    }


def stat(x):
    return {"max": x, "mean": x, "last": x}


def record(prov, path, label, family, title, form, nc, dofs, solver, settings, status, reason=None, result=None, tol=1e-8):
    case = {"file": path, "title": title, "family": family, "form": form, "contacts": nc, "dofs": dofs}
    summary = {
        "steps": 0, "failures": 0, "unconverged_steps": 0,
        "wall_per_step_s": {"median": 0.0, "p95": 0.0}, "iterations_per_step": {"mean": 0.0, "max": 0.0},
        "stage_times": {"detect_s": 0.0, "assemble_s": 0.0, "solve_s": 0.0, "metrics_s": 0.0},
        "metrics": {}, "oracle": {}, "momentum_drift": None,
    }
    if status == "failed":
        summary["failures"] = 1
    if result is not None:
        it, wall, g, own, sic_err = result
        err = g["error"]
        summary.update(steps=1, unconverged_steps=int(not err <= tol))
        summary["wall_per_step_s"] = {"median": wall, "p95": wall}
        summary["iterations_per_step"] = {"mean": float(it), "max": float(it)}
        summary["stage_times"]["solve_s"] = wall
        summary["metrics"] = {"fclib_error": stat(err), "natmap_1q": stat(g["natmap_1q"]), "natmap_rel_q": stat(g["natmap_rel_q"]), "siconos_error": stat(sic_err), "siconos_reported": stat(own)}
    rec = {
        "schema": "signorini.run/1", "provenance": prov,
        "case": {"name": "fclib", "label": label, "params": case, "params_hash": fnv(case)},
        "solver": {"name": "siconos-" + solver, "params": settings, "params_hash": fnv(settings), "paper": "Siconos numerics (fc3d_driver, " + SOLVERS[solver] + ")"},
        "status": status, "summary": summary, "steps": [], "step_stride": 1, "iterations": [],
    }
    if reason:
        rec["reason"] = reason
    return rec


def write_atomic(path, rec):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(rec, fh, indent=1)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--out", default="runs/fclib")
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument("--tolerance", type=float, default=1e-8)
    ap.add_argument("--max-iterations", type=int, default=1000)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--form", choices=["global", "local"])
    ap.add_argument("--matrix", choices=list(MATRIX_FORMS), default="sbm", help="how W is handed to Siconos (default sbm: as its FCLIB reader builds it)")
    ap.add_argument("--signorini", help="the signorini binary that grades the answers (default target/release/signorini)")
    a = ap.parse_args()
    solvers = [s for s in a.solvers.split(",") if s]
    for s in solvers:
        if s not in SOLVERS:
            die(f"--solvers: unknown '{s}' (known: {', '.join(SOLVERS)})")
    try:
        import siconos.numerics  # noqa: F401
    except ImportError as e:
        die(f"import siconos.numerics failed ({e}); run peers/setup-siconos.sh and use /usr/bin/python3")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(a.dir) for f in fs if f.endswith(".hdf5"))
    if not files:
        die(f"{a.dir}: no *.hdf5 files")
    bin_ = signorini_binary(a.signorini)
    os.makedirs(os.path.join(a.out, "solutions"), exist_ok=True)
    prov = provenance()
    deb, mod = siconos_version()
    version = deb or mod
    ctx = mp.get_context("fork")
    solved = 0
    for path in files:
        label = os.path.splitext(os.path.basename(path))[0]
        try:
            W, q, mu, form, title, dofs = load(path, a.form)
        except Exception as e:  # noqa: BLE001 - any unreadable file is reported and skipped
            print(f"unreadable: {path}: {e}")
            continue
        family = title or label.split("-")[0]
        for s in solvers:
            settings = {
                "reference": True, "engine": "siconos", "solver": SOLVERS[s], "tolerance": a.tolerance,
                "max_iterations": a.max_iterations, "matrix_form": MATRIX_FORMS[a.matrix], "siconos_version": version,
            }
            rx, tx = ctx.Pipe(duplex=False)
            p = ctx.Process(target=child, args=(tx, W, q, mu, s, a.tolerance, a.max_iterations, a.matrix))
            p.start()
            tx.close()  # the child's end: a child that dies closes the pipe, and recv() says so
            got, why = None, f"stopped after {a.time_limit} s: past the wall-time limit"
            if rx.poll(a.time_limit):
                try:
                    got = rx.recv()
                except EOFError:
                    p.join()
                    why = f"the Siconos child process ended without an answer (exit code {p.exitcode})"
            p.join(0 if got is None else None)
            rx.close()
            if got is None:
                if p.is_alive():
                    p.kill()
                p.join()
                rec = record(prov, path, label, family, title, form, mu.size, dofs, s, settings, "failed", why)
                print(f"{label:<40} siconos-{s:<8} failed   {why}")
            else:
                info, it, own, wall, r, sic_err = got
                answer = os.path.join(a.out, "solutions", f"{label}__siconos-{s}.hdf5")
                write_answer(answer, r, W @ r + q)
                g = grade(bin_, path, answer, form)
                err = g["error"]
                rec = record(prov, path, label, family, title, form, mu.size, dofs, s, settings, "ok", None, (it, wall, g, own, sic_err), a.tolerance)
                ok = err <= a.tolerance
                solved += ok
                print(f"{label:<40} siconos-{s:<8} {'solved' if ok else 'unsolved':<8} error {err:.2e}  {it:>6} it  {wall:.3e} s  (siconos info {info}, reported {own:.2e}, fc3d_compute_error {sic_err:.2e})")
            name = f"{label}__siconos-{s}.json".replace("/", "_")
            write_atomic(os.path.join(a.out, name), rec)
    print(f"{len(files)} files x {len(solvers)} Siconos solvers: {solved} reached ||F||/max(||q||,||r||,||u||) <= {a.tolerance:g} (graded by {bin_}); records in {a.out}")


if __name__ == "__main__":
    main()
