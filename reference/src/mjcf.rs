//! Export of a case's initial world as an MJCF model (MuJoCo's XML format, also read by Drake's
//! MJCF parser) plus a JSON sidecar ([`Sidecar`]) with the run length and the map between the
//! engine's coordinates and signorini's generalised coordinates.
//!
//! # What is exported
//!
//! * Every rigid body becomes a top-level `<body>` whose frame is the signorini body frame (origin
//!   at the centre of mass, axes along the principal axes), with an explicit `<inertial>` (mass,
//!   principal moments), so the engine's mass properties are exactly signorini's.
//! * Degrees of freedom: a free body gets a `<freejoint>`; a body restricted by a
//!   [`DofMask`](harness::model::DofMask) gets one `slide` joint per free world translation (axis
//!   expressed in the body frame) and, for the rotations, one `hinge` (one free rotation) or a
//!   `ball` joint (all three); two free rotations have no exact MJCF form and are refused. A body
//!   tied to the world by a [`Joint`](harness::model::Joint) (hinge or ball) gets that joint
//!   instead, at the joint's body anchor; a ball joint between two bodies becomes an equality
//!   `connect` constraint. Joints are exported as exact (rigid) joints even when signorini models
//!   them as stiff spring–dampers (noted in the sidecar).
//! * Shapes: sphere, box, cylinder (signorini's cylinder axis is the body y axis, MuJoCo's is the
//!   geom z axis: the geom is turned by -90 degrees about x), compounds as several geoms in one
//!   body. Static colliders: half-spaces as `plane` geoms, boxes and spheres as world geoms.
//! * Springs: an isotropic spring is a spatial tendon between a body site and a world site with
//!   `stiffness` and `springlength`; an axial spring attached at the centre of mass of a body that
//!   slides along the spring's axis is the stiffness of that slide joint, with `springref` at the
//!   rest length.
//! * Gravity and time step in `<option>`, with the solver settings the runners use (Newton,
//!   elliptic cones, Euler).
//!
//! # Contact parameters
//!
//! Friction: each geom carries its material's `mu` (`condim = 3`, no torsional or rolling
//! friction). MuJoCo combines two geoms' friction by the maximum, signorini (and Drake) by the
//! harmonic mean; both give the common value when the materials agree, which is the case for
//! every canonical scene. Worlds whose colliders disagree on friction are exported with a note.
//!
//! Rigid contact: MuJoCo's stiffest setting that stays stable, `solref = (2 dt, 1)` (time
//! constant twice the step, critical damping) and `solimp = (0.99, 0.999, 0.001, 0.5, 2)`.
//!
//! Compliant contact (Kelvin–Voigt, per contact point: stiffness `k`, dissipation `d = k tau_d`):
//! MuJoCo's direct form `solref = (-S, -D)` sets the reference acceleration `-D v - S r` of the
//! contact row; with the impedance at its minimum (`solimp = (1e-4, 1e-4, ...)`) the row force is
//! `-m_eff (S r + D v)`, with `m_eff` the row's effective mass (MuJoCo approximates it by the
//! bodies' translational inverse weights, `1/m_eff = 1/m_a + 1/m_b`). So `S = k / m`,
//! `D = k tau_d / m` with `m` the geom's body mass maps a body–static contact exactly. MuJoCo
//! averages two geoms' `solref` (static geoms get `solmix = 0`, so the body's values win), so a
//! body–body contact gets the mean of the two bodies' values instead of their sum (half the
//! stiffness for equal masses): a documented deviation. The reference acceleration is evaluated
//! at the start of the step, i.e. explicitly: when `S dt^2 > 1` or `D dt > 1` it is unstable, and
//! the export falls back to the rigid setting above for that geom (the sidecar lists which).
//!
//! Refused (one line, nothing written): deformable bodies, point loads, constant applied
//! forces/torques, point colliders (static spheres of radius 0), two free rotations, joints other
//! than hinge/ball to the world and ball between bodies, axial springs not along a slide joint.

use harness::model::{ContactCompliance, JointKind, Material, Shape, StaticShape, World};
use harness::{Params, Scenario};
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Schema tag of the sidecar.
pub const SIDECAR_SCHEMA: &str = "signorini.mjcf/1";

/// Rigid-contact `solimp`.
pub const RIGID_SOLIMP: [f64; 5] = [0.99, 0.999, 0.001, 0.5, 2.0];
/// Compliant-contact `solimp` (impedance at MuJoCo's minimum: the force is the spring–damper's).
pub const COMPLIANT_SOLIMP: [f64; 5] = [1e-4, 1e-4, 0.001, 0.5, 2.0];

/// How a body's motion is expressed in MJCF.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BodyJoint {
    /// `<freejoint>`: qpos = (x, y, z, qw, qx, qy, qz) world; qvel = (v world, w **body** frame).
    Free,
    /// Slide / hinge / ball joints for the free components of a restricted body.
    Restricted,
    /// A signorini joint to the world (hinge or ball) at the joint's anchor.
    WorldJoint,
}

/// One MJCF joint of a body and its addresses in MuJoCo's `qpos` / `qvel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JointMap {
    /// MJCF joint name.
    pub name: String,
    /// `free`, `slide`, `hinge` or `ball`.
    pub kind: String,
    /// First index in `qpos`.
    pub qpos_adr: usize,
    /// First index in `qvel`.
    pub dof_adr: usize,
    /// Axis in the body frame (slide, hinge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 3]>,
}

/// The map of one signorini body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyMap {
    /// signorini body name.
    pub name: String,
    /// MJCF body name.
    pub mjcf_body: String,
    /// Offset of the body's 7 positions `(x, y, z, qw, qx, qy, qz)` in signorini's `q`.
    pub q_offset: usize,
    /// Offset of the body's free velocity components in signorini's `v`.
    pub v_offset: usize,
    /// Which of `(vx, vy, vz, wx, wy, wz)` (world frame) are in signorini's `v`, in order.
    pub dofs: [bool; 6],
    /// How the motion is expressed.
    pub joint: BodyJoint,
    /// The MJCF joints, in order.
    pub joints: Vec<JointMap>,
}

/// Contact parameters of one geom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeomContact {
    /// MJCF geom name.
    pub geom: String,
    /// Index of the signorini body, or `None` for a static collider.
    pub body: Option<usize>,
    /// Coulomb friction.
    pub mu: f64,
    /// signorini's contact model of the geom's material.
    pub compliance: ContactCompliance,
    /// `solref` written.
    pub solref: [f64; 2],
    /// `solimp` written.
    pub solimp: [f64; 5],
    /// `direct` (the Kelvin–Voigt map), `rigid`, or `rigid_fallback` (compliant, but the direct map
    /// would be unstable at this step).
    pub mapping: String,
}

/// The JSON sidecar of an exported model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// Always [`SIDECAR_SCHEMA`].
    pub schema: String,
    /// Case name.
    pub case: String,
    /// Full case parameters.
    pub params: Params,
    /// [`Params::hash`] of `params`.
    pub params_hash: String,
    /// Time step (s).
    pub dt: f64,
    /// Number of steps (a trajectory holds `steps + 1` states).
    pub steps: usize,
    /// Gravity (m/s^2).
    pub gravity: [f64; 3],
    /// Length of signorini's `q` (7 per body).
    pub nq: usize,
    /// Length of signorini's `v` (free components).
    pub nv: usize,
    /// Length of MuJoCo's `qpos`.
    pub mj_nq: usize,
    /// Length of MuJoCo's `qvel`.
    pub mj_nv: usize,
    /// Per body, in signorini's order.
    pub bodies: Vec<BodyMap>,
    /// Per geom contact parameters.
    pub geoms: Vec<GeomContact>,
    /// How to turn the engine's state into signorini's `q`, `v`.
    pub coordinates: String,
    /// Approximations made by the export.
    pub notes: Vec<String>,
}

/// An exported case: the MJCF text and its sidecar.
#[derive(Debug, Clone)]
pub struct Export {
    /// MJCF model.
    pub mjcf: String,
    /// Sidecar.
    pub sidecar: Sidecar,
}

fn f(x: f64) -> String {
    // shortest round-trip representation
    let s = format!("{x:?}");
    if s == "-0.0" {
        "0".into()
    } else {
        s
    }
}

fn v3(v: &Vector3<f64>) -> String {
    format!("{} {} {}", f(v.x), f(v.y), f(v.z))
}

fn quat(q: &UnitQuaternion<f64>) -> String {
    let c = q.quaternion().coords;
    format!("{} {} {} {}", f(c.w), f(c.x), f(c.y), f(c.z))
}

fn list(x: &[f64]) -> String {
    x.iter().map(|&v| f(v)).collect::<Vec<_>>().join(" ")
}

fn xml_name(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// Contact attributes of a material on a geom of mass `mass` (`None`: static).
fn contact_of(material: &Material, mass: Option<f64>, dt: f64) -> ([f64; 2], [f64; 5], &'static str) {
    let rigid = ([2.0 * dt, 1.0], RIGID_SOLIMP);
    match material.compliance {
        ContactCompliance::Rigid => (rigid.0, rigid.1, "rigid"),
        ContactCompliance::Compliant { stiffness: k, dissipation_time: tau } => {
            // a static geom's values are not used (solmix = 0); give it the body-free form
            let m = mass.unwrap_or(1.0);
            let (s, d) = (k / m, k * tau / m);
            if s * dt * dt <= 1.0 && d * dt <= 1.0 {
                ([-s, -d], COMPLIANT_SOLIMP, "direct")
            } else {
                (rigid.0, rigid.1, "rigid_fallback")
            }
        }
    }
}

fn refuse(case: &str, why: impl std::fmt::Display) -> String {
    format!("case '{case}' cannot be exported as MJCF: {why}")
}

/// The world axis `e_k` (k = 0, 1, 2).
fn axis(k: usize) -> Vector3<f64> {
    let mut a = Vector3::zeros();
    a[k] = 1.0;
    a
}

/// Exports `scenario` (built from case `case` with `params`) as MJCF + sidecar, or says in one
/// line why MJCF cannot express it.
pub fn export(case: &str, params: &Params, scenario: &Scenario) -> Result<Export, String> {
    let w: &World = &scenario.world;
    let dt = scenario.dt;
    if !w.deformables.is_empty() {
        return Err(refuse(case, "it has deformable (FEM) bodies"));
    }
    if !w.loads.is_empty() {
        return Err(refuse(case, "it has time-dependent point loads"));
    }
    if let Some(b) = w.bodies.iter().find(|b| b.applied_force.norm() > 0.0 || b.applied_torque.norm() > 0.0) {
        return Err(refuse(case, format!("body '{}' has a constant applied force or torque", b.name)));
    }
    let mut notes = vec![];
    let mut world_joint: Vec<Option<usize>> = vec![None; w.bodies.len()];
    let mut equality = String::new();
    for (j, joint) in w.joints.iter().enumerate() {
        if joint.compliance.is_some() {
            notes.push(format!("joint '{}' is a stiff spring-damper in signorini, an exact joint here", joint.name));
        }
        match (joint.kind, joint.body_b) {
            (JointKind::Hinge { .. } | JointKind::Ball, None) => {
                if world_joint[joint.body_a].replace(j).is_some() {
                    return Err(refuse(case, format!("body {} has more than one joint to the world", joint.body_a)));
                }
            }
            (JointKind::Ball, Some(b)) => {
                let _ = writeln!(
                    equality,
                    "    <connect name=\"{}\" body1=\"{}\" body2=\"{}\" anchor=\"{}\"/>",
                    xml_name(&joint.name),
                    body_name(w, joint.body_a),
                    body_name(w, b),
                    v3(&joint.anchor_a)
                );
            }
            (kind, _) => {
                let what = match kind {
                    JointKind::Axial { .. } => "an axial tie",
                    _ => "a hinge between two bodies",
                };
                return Err(refuse(case, format!("joint '{}' is {what}", joint.name)));
            }
        }
    }
    let mus: Vec<f64> = w.bodies.iter().map(|b| b.material.mu).chain(w.statics.iter().map(|s| s.material.mu)).collect();
    if mus.iter().any(|&m| m != mus[0]) {
        notes.push("materials disagree on friction: MuJoCo combines by max, signorini by harmonic mean".into());
    }

    let mut xml = String::new();
    let g = w.gravity;
    let _ = writeln!(xml, "<mujoco model=\"signorini_{}\">", xml_name(case));
    let _ = writeln!(xml, "  <!-- written by signorini export: case {case}, params hash {} -->", params.hash());
    xml += "  <compiler angle=\"radian\" autolimits=\"true\"/>\n";
    let _ = writeln!(
        xml,
        "  <option timestep=\"{}\" gravity=\"{}\" integrator=\"Euler\" solver=\"Newton\" cone=\"elliptic\"/>",
        f(dt),
        v3(&g)
    );
    xml += "  <worldbody>\n";
    let mut geoms = vec![];
    let mut sites = String::new();
    let mut tendons = String::new();
    for (i, s) in w.statics.iter().enumerate() {
        let name = format!("static{i}_{}", xml_name(&s.name));
        let (solref, solimp, mapping) = contact_of(&s.material, None, dt);
        let common = format!(
            "condim=\"3\" friction=\"{} 0 0\" solref=\"{}\" solimp=\"{}\" solmix=\"0\"",
            f(s.material.mu),
            list(&solref),
            list(&solimp)
        );
        match s.shape {
            StaticShape::HalfSpace { normal, offset } => {
                let n = normal.normalize();
                let rot = UnitQuaternion::rotation_between(&Vector3::z(), &n)
                    .unwrap_or_else(|| UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI));
                let _ = writeln!(
                    xml,
                    "    <geom name=\"{name}\" type=\"plane\" size=\"0 0 1\" pos=\"{}\" quat=\"{}\" {common}/>",
                    v3(&(offset * n)),
                    quat(&rot)
                );
            }
            StaticShape::Box { center, orientation, half_extents } => {
                let _ = writeln!(
                    xml,
                    "    <geom name=\"{name}\" type=\"box\" size=\"{}\" pos=\"{}\" quat=\"{}\" {common}/>",
                    list(&half_extents),
                    v3(&center),
                    quat(&orientation)
                );
            }
            StaticShape::Sphere { center, radius } => {
                if radius <= 0.0 {
                    return Err(refuse(case, format!("static collider '{}' is a point (radius 0)", s.name)));
                }
                let _ = writeln!(
                    xml,
                    "    <geom name=\"{name}\" type=\"sphere\" size=\"{}\" pos=\"{}\" {common}/>",
                    f(radius),
                    v3(&center)
                );
            }
        }
        geoms.push(GeomContact {
            geom: name,
            body: None,
            mu: s.material.mu,
            compliance: s.material.compliance,
            solref,
            solimp,
            mapping: mapping.into(),
        });
    }

    let layout = w.layout();
    let (mut qadr, mut dadr) = (0usize, 0usize);
    let mut bodies = vec![];
    for (i, b) in w.bodies.iter().enumerate() {
        let bname = body_name(w, i);
        let r0 = b.orientation;
        let _ = writeln!(xml, "    <body name=\"{bname}\" pos=\"{}\" quat=\"{}\">", v3(&b.position), quat(&r0));
        let _ =
            writeln!(xml, "      <inertial pos=\"0 0 0\" mass=\"{}\" diaginertia=\"{}\"/>", f(b.mass), v3(&b.inertia));
        let mut joints = vec![];
        let mut push = |xml: &mut String, kind: &str, extra: String, ax: Option<Vector3<f64>>| {
            let name = format!("{bname}_j{}", joints.len());
            if kind == "free" {
                let _ = writeln!(xml, "      <freejoint name=\"{name}\"/>");
            } else {
                let _ = writeln!(xml, "      <joint name=\"{name}\" type=\"{kind}\"{extra}/>");
            }
            let (nq, nv) = match kind {
                "free" => (7, 6),
                "ball" => (4, 3),
                _ => (1, 1),
            };
            joints.push(JointMap {
                name,
                kind: kind.into(),
                qpos_adr: qadr,
                dof_adr: dadr,
                axis: ax.map(|a| [a.x, a.y, a.z]),
            });
            qadr += nq;
            dadr += nv;
        };
        let kind = if let Some(j) = world_joint[i] {
            let joint = &w.joints[j];
            match joint.kind {
                JointKind::Hinge { axis_a, .. } => push(
                    &mut xml,
                    "hinge",
                    format!(" pos=\"{}\" axis=\"{}\"", v3(&joint.anchor_a), v3(&axis_a)),
                    Some(axis_a),
                ),
                _ => push(&mut xml, "ball", format!(" pos=\"{}\"", v3(&joint.anchor_a)), None),
            }
            BodyJoint::WorldJoint
        } else if b.dofs.count() == 6 {
            push(&mut xml, "free", String::new(), None);
            BodyJoint::Free
        } else {
            let rots = (3..6).filter(|&k| b.dofs.0[k]).count();
            if rots == 2 {
                return Err(refuse(case, format!("body '{}' has exactly two free rotations", b.name)));
            }
            for k in (0..3).filter(|&k| b.dofs.0[k]) {
                let a = r0.inverse() * axis(k);
                // an axial spring at the centre of mass along this axis is the joint's stiffness
                let mut extra = format!(" pos=\"0 0 0\" axis=\"{}\"", v3(&a));
                for s in w.springs.iter().filter(|s| s.body == i) {
                    if let Some(sa) = s.axis {
                        let sigma = sa.dot(&axis(k));
                        if (sigma.abs() - 1.0).abs() < 1e-12 && s.local_point.norm() == 0.0 {
                            let sref = sigma * (s.rest_length - (b.position - s.anchor).dot(&sa));
                            let _ = write!(extra, " stiffness=\"{}\" springref=\"{}\"", f(s.stiffness), f(sref));
                        }
                    }
                }
                push(&mut xml, "slide", extra, Some(a));
            }
            if rots == 3 {
                push(&mut xml, "ball", " pos=\"0 0 0\"".into(), None);
            } else if let Some(k) = (3..6).find(|&k| b.dofs.0[k]) {
                let a = r0.inverse() * axis(k - 3);
                push(&mut xml, "hinge", format!(" pos=\"0 0 0\" axis=\"{}\"", v3(&a)), Some(a));
            }
            BodyJoint::Restricted
        };
        // springs: axial ones must have been absorbed by a slide joint; isotropic ones are tendons
        for (si, s) in w.springs.iter().enumerate().filter(|(_, s)| s.body == i) {
            match s.axis {
                Some(sa) => {
                    let ok = kind == BodyJoint::Restricted
                        && s.local_point.norm() == 0.0
                        && (0..3).any(|k| b.dofs.0[k] && (sa.dot(&axis(k)).abs() - 1.0).abs() < 1e-12);
                    if !ok {
                        return Err(refuse(
                            case,
                            format!("spring {si} is axial but not along a slide joint at the centre of mass"),
                        ));
                    }
                }
                None => {
                    let _ = writeln!(xml, "      <site name=\"spring{si}_body\" pos=\"{}\"/>", v3(&s.local_point));
                    let _ = writeln!(sites, "    <site name=\"spring{si}_anchor\" pos=\"{}\"/>", v3(&s.anchor));
                    let _ = writeln!(
                        tendons,
                        "    <spatial name=\"spring{si}\" stiffness=\"{}\" springlength=\"{}\">\n      <site site=\"spring{si}_body\"/>\n      <site site=\"spring{si}_anchor\"/>\n    </spatial>",
                        f(s.stiffness),
                        f(s.rest_length)
                    );
                }
            }
        }
        let (solref, solimp, mapping) = contact_of(&b.material, Some(b.mass), dt);
        let common = format!(
            "condim=\"3\" friction=\"{} 0 0\" solref=\"{}\" solimp=\"{}\" solmix=\"1\"",
            f(b.material.mu),
            list(&solref),
            list(&solimp)
        );
        for (p, part) in b.shape.parts().iter().enumerate() {
            let gname = format!("{bname}_g{p}");
            let (ty, size, rot) = match part.shape {
                Shape::Sphere { radius } => ("sphere", f(radius), part.rotation),
                Shape::Box { half_extents } => ("box", list(&half_extents), part.rotation),
                Shape::Cylinder { radius, half_height } => (
                    "cylinder",
                    format!("{} {}", f(radius), f(half_height)),
                    // MuJoCo's cylinder axis is z; signorini's is y
                    part.rotation * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -std::f64::consts::FRAC_PI_2),
                ),
                Shape::Compound { .. } => return Err(refuse(case, "nested compound shape")),
            };
            let _ = writeln!(
                xml,
                "      <geom name=\"{gname}\" type=\"{ty}\" size=\"{size}\" pos=\"{}\" quat=\"{}\" {common}/>",
                v3(&part.translation),
                quat(&rot)
            );
            geoms.push(GeomContact {
                geom: gname,
                body: Some(i),
                mu: b.material.mu,
                compliance: b.material.compliance,
                solref,
                solimp,
                mapping: mapping.into(),
            });
        }
        xml += "    </body>\n";
        let block = &layout.blocks[i];
        bodies.push(BodyMap {
            name: b.name.clone(),
            mjcf_body: bname,
            q_offset: block.q_offset,
            v_offset: block.v_offset,
            dofs: b.dofs.0,
            joint: kind,
            joints,
        });
    }
    xml += &sites;
    xml += "  </worldbody>\n";
    if !tendons.is_empty() {
        let _ = write!(xml, "  <tendon>\n{tendons}  </tendon>\n");
    }
    if !equality.is_empty() {
        let _ = write!(xml, "  <equality>\n{equality}  </equality>\n");
    }
    xml += "</mujoco>\n";
    if geoms.iter().any(|g| g.mapping == "rigid_fallback") {
        notes.push(format!(
            "compliant contact too stiff for MuJoCo's explicit reference acceleration at dt = {dt}: \
             those geoms use the rigid setting (see geoms[].mapping)"
        ));
    }
    let sidecar = Sidecar {
        schema: SIDECAR_SCHEMA.into(),
        case: case.into(),
        params: params.clone(),
        params_hash: params.hash(),
        dt,
        steps: scenario.steps,
        gravity: [g.x, g.y, g.z],
        nq: layout.nq,
        nv: layout.nv,
        mj_nq: qadr,
        mj_nv: dadr,
        bodies,
        geoms,
        coordinates: "per body: q = (COM x y z in world, orientation qw qx qy qz body-to-world) = MuJoCo's \
                      xpos/xquat of the body (the MJCF body frame is signorini's); v = the free components \
                      (dofs) of (COM linear velocity, angular velocity), both in the world frame. For a \
                      freejoint, qpos[adr..adr+7] is q directly and qvel[adr..adr+6] = (v world, w body): \
                      w_world = R(quat) w_body."
            .into(),
        notes,
    };
    Ok(Export { mjcf: xml, sidecar })
}

fn body_name(w: &World, i: usize) -> String {
    format!("b{i}_{}", xml_name(&w.bodies[i].name))
}

/// Writes `model.xml` and `model.json` (the sidecar) into `dir`; returns their paths.
pub fn write(export: &Export, dir: &std::path::Path) -> std::io::Result<(std::path::PathBuf, std::path::PathBuf)> {
    let (xml, json) = (dir.join("model.xml"), dir.join("model.json"));
    harness::record::write_atomic(&xml, export.mjcf.as_bytes())?;
    let text = serde_json::to_string_pretty(&export.sidecar).map_err(std::io::Error::other)?;
    harness::record::write_atomic(&json, text.as_bytes())?;
    Ok((xml, json))
}
