#!/usr/bin/env python3
"""Runs a `signorini export` model in Drake (MJCF parser, SAP) and writes a trajectory file.

    python peers/run_drake.py MODEL_DIR --out TRAJECTORY.json

Settings: MultibodyPlant discrete with the case's dt, discrete_contact_approximation = "sap",
point contact. Drake ignores MuJoCo's solref/solimp; the contact parameters are set here from the
sidecar's per-geom material instead, as SAP's own compliant model (Castro et al.): per body geom
point_contact_stiffness = k and relaxation_time = tau_d (compliant), or a near-rigid stiffness
(rigid: 1e20 N/m, SAP's near-rigid regime takes over); static geoms get the near-rigid stiffness
and relaxation time 0 so that the series combination leaves the body's values. Friction: the
sidecar's mu (Drake combines by harmonic mean, like signorini). Slide-joint springs (stiffness,
springref in the MJCF) are added as PrismaticSpring elements, since the parser does not read them.
Wall time per step: Simulator.AdvanceTo over one step.
"""

import argparse
import importlib.metadata
import time
import xml.etree.ElementTree as ET

from common import load_model_dir, signorini_state, write_trajectory

RIGID_K = 1e20


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("model_dir")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    xml, sc = load_model_dir(a.model_dir)


    from pydrake.geometry import ProximityProperties, RoleAssign
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import AddMultibodyPlant, CoulombFriction, MultibodyPlantConfig
    from pydrake.multibody.tree import PrismaticSpring
    from pydrake.systems.analysis import Simulator
    from pydrake.systems.framework import DiagramBuilder

    builder = DiagramBuilder()
    config = MultibodyPlantConfig(
        time_step=sc["dt"], discrete_contact_approximation="sap", contact_model="point"
    )
    plant, sg = AddMultibodyPlant(config, builder)
    Parser(plant).AddModels(xml)
    # joint springs from the MJCF (stiffness + springref on slide joints)
    for j in ET.parse(xml).getroot().iter("joint"):
        if j.get("type") == "slide" and j.get("stiffness"):
            joint = plant.GetJointByName(j.get("name"))
            plant.AddForceElement(PrismaticSpring(joint, float(j.get("springref", "0")), float(j.get("stiffness"))))
    plant.Finalize()

    inspector = sg.model_inspector()
    by_name = {}
    for body in [plant.world_body()] + [plant.GetBodyByName(b["mjcf_body"]) for b in sc["bodies"]]:
        for gid in plant.GetCollisionGeometriesForBody(body):
            by_name[inspector.GetName(gid).split("::")[-1]] = gid
    for g in sc["geoms"]:
        gid = by_name.get(g["geom"])
        if gid is None:
            raise SystemExit(f"error: Drake's parser produced no collision geometry '{g['geom']}'")
        props = ProximityProperties(inspector.GetProximityProperties(gid))
        comp = g["compliance"]
        if g["body"] is None or comp["kind"] == "rigid":
            k, tau = RIGID_K, 0.0
        else:
            k, tau = comp["stiffness"], comp["dissipation_time"]
        for key, val in [
            ("point_contact_stiffness", k),
            ("relaxation_time", tau),
            ("coulomb_friction", CoulombFriction(g["mu"], g["mu"])),
        ]:
            if props.HasProperty("material", key):
                props.UpdateProperty("material", key, val)
            else:
                props.AddProperty("material", key, val)
        sg.AssignRole(plant.get_source_id(), gid, props, RoleAssign.kReplace)

    diagram = builder.Build()
    sim = Simulator(diagram)
    ctx = sim.get_mutable_context()
    pctx = plant.GetMyMutableContextFromRoot(ctx)
    bodies = {b["mjcf_body"]: plant.GetBodyByName(b["mjcf_body"]) for b in sc["bodies"]}

    def body_state(b):
        body = bodies[b["mjcf_body"]]
        x = plant.EvalBodyPoseInWorld(pctx, body)
        vel = plant.EvalBodySpatialVelocityInWorld(pctx, body)
        qw = x.rotation().ToQuaternion()
        return x.translation(), [qw.w(), qw.x(), qw.y(), qw.z()], vel.translational(), vel.rotational()

    sim.Initialize()
    q0, v0 = signorini_state(sc, body_state)
    qs, vs, wall, ncon = [q0], [v0], [], []
    contact_port = plant.get_contact_results_output_port()
    for k in range(sc["steps"]):
        t0 = time.perf_counter()
        sim.AdvanceTo((k + 1) * sc["dt"])
        wall.append(time.perf_counter() - t0)
        ncon.append(contact_port.Eval(pctx).num_point_pair_contacts())
        q, v = signorini_state(sc, body_state)
        qs.append(q)
        vs.append(v)
    engine = {
        "name": "drake",
        "version": importlib.metadata.version("drake"),
        "settings": {
            "discrete_contact_approximation": "sap",
            "contact_model": "point",
            "time_step": sc["dt"],
            "contact": "point_contact_stiffness = k, relaxation_time = tau_d per body geom; statics near-rigid",
        },
    }
    write_trajectory(a.out, engine, sc, qs, vs, wall, ncon, [])
    med = sorted(wall)[len(wall) // 2] if wall else float("nan")
    print(f"drake {engine['version']}: {sc['case']} {sc['steps']} steps, median {med:.3e} s/step -> {a.out}")


if __name__ == "__main__":
    main()
