"""Shared helpers of the reference-engine runners: sidecar loading and trajectory writing.

A trajectory file (schema signorini.trajectory/1) holds, in signorini's generalised
coordinates, q and v after every step (steps + 1 states), and per step the wall time of the
engine's step, its contact count, solver iterations and (when the engine reports it) the sum of
the normal contact impulses. `signorini grade` reads it.
"""

import json
import math
import os
import tempfile


def load_model_dir(model_dir):
    """Returns (path of model.xml, sidecar dict) of a `signorini export` output directory."""
    xml = os.path.join(model_dir, "model.xml")
    with open(os.path.join(model_dir, "model.json")) as f:
        sidecar = json.load(f)
    if sidecar.get("schema") != "signorini.mjcf/1":
        raise SystemExit(f"error: {model_dir}/model.json is not a signorini.mjcf/1 sidecar")
    return xml, sidecar


def quat_to_mat(w, x, y, z):
    """Rotation matrix (rows) of the unit quaternion (w, x, y, z)."""
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]


def mat_vec(r, v):
    return [sum(r[i][j] * v[j] for j in range(3)) for i in range(3)]


def signorini_state(sidecar, body_state):
    """Assembles signorini's (q, v) from per-body states.

    body_state(body_map) -> (pos[3], quat_wxyz[4], lin_world[3], ang_world[3]).
    """
    q = [0.0] * sidecar["nq"]
    v = [0.0] * sidecar["nv"]
    for b in sidecar["bodies"]:
        pos, quat, lin, ang = body_state(b)
        o = b["q_offset"]
        q[o:o + 7] = [float(x) for x in list(pos) + list(quat)]
        twist = [float(x) for x in list(lin) + list(ang)]
        k = b["v_offset"]
        for i in range(6):
            if b["dofs"][i]:
                v[k] = twist[i]
                k += 1
    return q, v


def write_trajectory(path, engine, sidecar, q, v, wall_s, contacts, iterations, normal_impulse_total=None,
                     contact_frames=None):
    """Writes a trajectory file atomically. contact_frames: the engine's contacts at some steps,
    [{"step": k, "contacts": [[px, py, pz, nx, ny, nz, normal impulse, penetration], ...]}]."""
    if any(not math.isfinite(x) for row in q + v for x in row):
        print(f"warning: {path}: the trajectory holds non-finite values (signorini grade will refuse it)")
    out = {
        "schema": "signorini.trajectory/1",
        "engine": engine,
        "case": sidecar["case"],
        "params_hash": sidecar["params_hash"],
        "dt": sidecar["dt"],
        "q": q,
        "v": v,
        "wall_s": wall_s,
        "contacts": contacts,
        "iterations": iterations,
    }
    if normal_impulse_total is not None:
        out["normal_impulse_total"] = normal_impulse_total
    if contact_frames:
        out["contact_frames"] = contact_frames
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".traj", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(out, f, allow_nan=True)
    os.replace(tmp, path)
