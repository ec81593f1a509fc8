#!/usr/bin/env python3
"""Runs a `signorini export` model in Drake (MJCF parser, SAP) and writes a trajectory file.

    python peers/run_drake.py MODEL_DIR --out TRAJECTORY.json [--near-rigid-threshold 1.0]

Settings: MultibodyPlant discrete with the case's dt, discrete_contact_approximation = "sap",
point contact, SAP's near-rigid threshold beta (Drake's default 1). Drake ignores MuJoCo's
solref/solimp; the contact parameters are set here from the sidecar instead, as SAP's own linear
Kelvin-Voigt model. signorini's material gives k per contact point, and its narrow phase makes
`points` points for a pair (sidecar geoms[].points: 2 for a lying cylinder, 4 for a box face),
so the pair's total stiffness is points * k; Drake's point contact makes one point per pair.
Drake combines two geometries' stiffnesses in series and their relaxation times by sum, and places
the point between the two witness points weighted by stiffness. So every geometry of a compliant
material gets point_contact_stiffness = 2 points k and relaxation_time = tau_d / 2: two
geometries of one material (or different compliant ones, series = signorini's harmonic mean)
combine to points k and tau_d, with the point midway between the surfaces as signorini's. Rigid
materials: 1e20 N/m and 0 s, SAP's near-rigid regime. Friction: the sidecar's mu (Drake combines by
harmonic mean, like signorini).

Boxes of rigid material on bodies collide through their 8 corners (`--box-contact corners`, the
default): Drake's point contact gives a box one point, the deepest, per pair, and a box resting on
a face then balances on one corner and tips (the slope's box tumbles instead of sticking).
signorini's narrow phase makes one contact per penetrating corner for a box on a half-space, so
each corner becomes a collision sphere of radius CORNER_RADIUS with the box's properties and the
box itself keeps no proximity role. Box-box pairs then see corner-against-face contacts only (no
edge-edge). `--box-contact box` keeps Drake's box. Compliant boxes keep the box (their stiffness
is already scaled by `points`).

Slide-joint springs (stiffness, springref in the MJCF) are added as PrismaticSpring elements,
since the parser does not read them. Wall time per step: Simulator.AdvanceTo over one step.
"""

import argparse
import importlib.metadata
import time
import xml.etree.ElementTree as ET

from common import load_model_dir, signorini_state, write_trajectory

RIGID_K = 1e20
CORNER_RADIUS = 1e-6  # m: the corner spheres of rigid boxes (--box-contact corners)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("model_dir")
    ap.add_argument("--out", required=True)
    ap.add_argument(
        "--near-rigid-threshold", type=float, default=1.0,
        help="SAP's near-rigid parameter beta (Drake's default 1; 0 turns the near-rigid regime off)",
    )
    ap.add_argument(
        "--box-contact", choices=["corners", "box"], default="corners",
        help="rigid body boxes collide through their 8 corners (default) or as Drake's box (one point per pair)",
    )
    a = ap.parse_args()
    xml, sc = load_model_dir(a.model_dir)


    from pydrake.geometry import Box, ProximityProperties, Role, RoleAssign, Sphere
    from pydrake.math import RigidTransform
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import AddMultibodyPlant, CoulombFriction, MultibodyPlantConfig
    from pydrake.multibody.tree import PrismaticSpring
    from pydrake.systems.analysis import Simulator
    from pydrake.systems.framework import DiagramBuilder

    builder = DiagramBuilder()
    config = MultibodyPlantConfig(
        time_step=sc["dt"],
        discrete_contact_approximation="sap",
        contact_model="point",
        sap_near_rigid_threshold=a.near_rigid_threshold,
    )
    plant, sg = AddMultibodyPlant(config, builder)
    Parser(plant).AddModels(xml)
    # joint springs from the MJCF (stiffness + springref on slide joints)
    for j in ET.parse(xml).getroot().iter("joint"):
        if j.get("type") == "slide" and j.get("stiffness"):
            joint = plant.GetJointByName(j.get("name"))
            plant.AddForceElement(PrismaticSpring(joint, float(j.get("springref", "0")), float(j.get("stiffness"))))
    inspector = sg.model_inspector()
    bodies = [plant.world_body()] + [plant.GetBodyByName(b["mjcf_body"]) for b in sc["bodies"]]

    def geometry_ids():
        # looked up afresh each time: registering geometries invalidates the ids pybind returned
        return {
            inspector.GetName(gid).split("::")[-1]: gid
            for body in bodies
            for gid in plant.GetCollisionGeometriesForBody(body)
        }

    corner_boxes = []
    for g in sc["geoms"]:
        gid = geometry_ids().get(g["geom"])
        if gid is None:
            raise SystemExit(f"error: Drake's parser produced no collision geometry '{g['geom']}'")
        props = ProximityProperties(inspector.GetProximityProperties(gid))
        comp = g["compliance"]
        if comp["kind"] == "rigid":
            k, tau = RIGID_K, 0.0
        else:
            k, tau = 2.0 * g["points"] * comp["stiffness"], 0.5 * comp["dissipation_time"]
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
        shape = inspector.GetShape(gid)
        if a.box_contact == "corners" and g["body"] is not None and comp["kind"] == "rigid" and isinstance(shape, Box):
            h = [shape.width() / 2, shape.depth() / 2, shape.height() / 2]
            corner_boxes.append((g, inspector.GetPoseInFrame(gid), h, props))
    for g, X_BG, h, props in corner_boxes:
        body = plant.GetBodyByName(sc["bodies"][g["body"]]["mjcf_body"])
        for c in range(8):
            p_G = [(-h[i] if c >> i & 1 else h[i]) for i in range(3)]
            plant.RegisterCollisionGeometry(
                body, X_BG.multiply(RigidTransform(p_G)), Sphere(CORNER_RADIUS), f"{g['geom']}_corner{c}", props
            )
        sg.RemoveRole(plant.get_source_id(), geometry_ids()[g["geom"]], Role.kProximity)
    plant.Finalize()

    diagram = builder.Build()
    sim = Simulator(diagram)
    ctx = sim.get_mutable_context()
    pctx = plant.GetMyMutableContextFromRoot(ctx)
    by_body = {b["mjcf_body"]: plant.GetBodyByName(b["mjcf_body"]) for b in sc["bodies"]}

    def body_state(b):
        body = by_body[b["mjcf_body"]]
        x = plant.EvalBodyPoseInWorld(pctx, body)
        vel = plant.EvalBodySpatialVelocityInWorld(pctx, body)
        qw = x.rotation().ToQuaternion()
        return x.translation(), [qw.w(), qw.x(), qw.y(), qw.z()], vel.translational(), vel.rotational()

    sim.Initialize()
    q0, v0 = signorini_state(sc, body_state)
    qs, vs, wall, ncon, impulse = [q0], [v0], [], [], []
    contact_port = plant.get_contact_results_output_port()
    for k in range(sc["steps"]):
        t0 = time.perf_counter()
        sim.AdvanceTo((k + 1) * sc["dt"])
        wall.append(time.perf_counter() - t0)
        results = contact_port.Eval(pctx)
        ncon.append(results.num_point_pair_contacts())
        # normal impulse: the force on B pushes it away from A, along -nhat_BA_W
        impulse.append(sum(
            -float(results.point_pair_contact_info(i).contact_force().dot(results.point_pair_contact_info(i).point_pair().nhat_BA_W))
            for i in range(results.num_point_pair_contacts())
        ) * sc["dt"])
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
            "sap_near_rigid_threshold": a.near_rigid_threshold,
            "box_contact": a.box_contact,
            "contact": "per geometry: compliant point_contact_stiffness = 2 points k, relaxation_time = tau_d/2; "
            "rigid 1e20 N/m, 0 s",
        },
    }
    write_trajectory(a.out, engine, sc, qs, vs, wall, ncon, [], impulse)
    med = sorted(wall)[len(wall) // 2] if wall else float("nan")
    print(f"drake {engine['version']}: {sc['case']} {sc['steps']} steps, median {med:.3e} s/step -> {a.out}")


if __name__ == "__main__":
    main()
