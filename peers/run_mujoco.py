#!/usr/bin/env python3
"""Runs a `signorini export` model in MuJoCo and writes a signorini.trajectory/1 file.

    python peers/run_mujoco.py MODEL_DIR --out TRAJECTORY.json [--impratio 1] [--iterations 100]

Settings: Newton solver, elliptic friction cones, Euler integrator, the case's dt (all set here
whatever the MJCF says). Per step: wall time of mj_step only; contact count (d.ncon of that
step); solver iterations (largest over islands); sum of the normal contact impulses
(mj_contactForce normal component times dt); at the replay's steps (the export's `replay_stride`,
and the last step) every contact as `signorini grade` draws it (contact_frames: point, normal
from geom1 to geom2, normal impulse, penetration max(0, -dist)), as the step's solve saw it, at
the state the step started from. States are converted to signorini's coordinates:
a freejoint's qvel holds the angular velocity in the body frame, turned into the world frame here;
bodies with slide/hinge/ball joints are read from the body kinematics (xpos, xquat,
mj_objectVelocity in the world frame at the centre of mass, which is the body origin).
"""

import argparse
import time

import mujoco
import numpy as np

from common import load_model_dir, mat_vec, quat_to_mat, signorini_state, write_trajectory


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("model_dir")
    ap.add_argument("--out", required=True)
    ap.add_argument("--impratio", type=float, default=1.0, help="friction-to-normal impedance ratio (MuJoCo default 1)")
    ap.add_argument("--iterations", type=int, default=100, help="solver iteration limit (MuJoCo default 100)")
    ap.add_argument("--tolerance", type=float, default=1e-8, help="solver tolerance (MuJoCo default 1e-8)")
    a = ap.parse_args()

    xml, sc = load_model_dir(a.model_dir)
    m = mujoco.MjModel.from_xml_path(xml)
    m.opt.timestep = sc["dt"]
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON
    m.opt.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    m.opt.impratio = a.impratio
    m.opt.iterations = a.iterations
    m.opt.tolerance = a.tolerance
    if m.nq != sc["mj_nq"] or m.nv != sc["mj_nv"]:
        raise SystemExit(f"error: model has nq={m.nq}, nv={m.nv}; sidecar says {sc['mj_nq']}, {sc['mj_nv']}")
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    ids = {b["mjcf_body"]: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b["mjcf_body"]) for b in sc["bodies"]}
    # the direct Kelvin-Voigt map assumes MuJoCo's contact-row mass (1 / the body's translational
    # inverse weight); say so if this MuJoCo computes another one
    for g in sc["geoms"]:
        if g["mapping"] == "direct" and g.get("row_mass") is not None:
            bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g["geom"])
            got = 1.0 / m.body_invweight0[m.geom_bodyid[bid], 0]
            if abs(got - g["row_mass"]) > 1e-9 * g["row_mass"]:
                print(f"warning: geom {g['geom']}: MuJoCo's contact-row mass is {got}, the export assumed {g['row_mass']}")
    all_free = all(b["joint"] == "free" for b in sc["bodies"])
    res = np.zeros(6)

    def body_state(b):
        if b["joint"] == "free":
            j = b["joints"][0]
            qa, va = j["qpos_adr"], j["dof_adr"]
            pos, quat = d.qpos[qa:qa + 3], d.qpos[qa + 3:qa + 7]
            w_world = mat_vec(quat_to_mat(*quat), d.qvel[va + 3:va + 6])
            return pos, quat, d.qvel[va:va + 3], w_world
        bid = ids[b["mjcf_body"]]
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, bid, res, 0)
        return d.xpos[bid], d.xquat[bid], res[3:6].copy(), res[0:3].copy()

    q0, v0 = signorini_state(sc, body_state)
    qs, vs, wall, ncon, iters, impulse, frames = [q0], [v0], [], [], [], [], []
    f6 = np.zeros(6)
    stride = max(1, int(sc.get("replay_stride", 1)))
    for k in range(sc["steps"]):
        t0 = time.perf_counter()
        mujoco.mj_step(m, d)
        wall.append(time.perf_counter() - t0)
        ncon.append(int(d.ncon))
        iters.append(int(np.max(d.solver_niter)) if np.size(d.solver_niter) else 0)
        total, rows = 0.0, []
        framed = k % stride == 0 or k + 1 == sc["steps"]
        for i in range(d.ncon):
            mujoco.mj_contactForce(m, d, i, f6)
            total += f6[0]
            if framed:
                c = d.contact[i]
                rows.append([float(x) for x in c.pos] + [float(x) for x in c.frame[0:3]]
                            + [float(f6[0] * sc["dt"]), float(max(0.0, -c.dist))])
        impulse.append(total * sc["dt"])
        if framed:
            frames.append({"step": k, "contacts": rows})
        if not all_free:
            mujoco.mj_forward(m, d)  # kinematics of the new state (not timed)
        q, v = signorini_state(sc, body_state)
        qs.append(q)
        vs.append(v)
    engine = {
        "name": "mujoco",
        "version": mujoco.__version__,
        "settings": {
            "solver": "Newton",
            "cone": "elliptic",
            "integrator": "Euler",
            "timestep": sc["dt"],
            "impratio": a.impratio,
            "iterations": a.iterations,
            "tolerance": a.tolerance,
            "contact": "solref/solimp from the export (docs/reference-engines.md)",
        },
    }
    write_trajectory(a.out, engine, sc, qs, vs, wall, ncon, iters, impulse, contact_frames=frames)
    med = sorted(wall)[len(wall) // 2] if wall else float("nan")
    print(f"mujoco {mujoco.__version__}: {sc['case']} {sc['steps']} steps, median {med:.3e} s/step -> {a.out}")


if __name__ == "__main__":
    main()
