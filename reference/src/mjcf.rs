//! Export of a case's initial world as an MJCF model (MuJoCo's XML format, also read by Drake's
//! MJCF parser) plus a JSON sidecar ([`Sidecar`]) with the run length and the map between the
//! engine's coordinates and signorini's generalised coordinates.
//!
//! # What is exported
//!
//! * Every rigid body becomes a `<body>` whose frame is the signorini body frame (origin at the
//!   centre of mass, axes along the principal axes), with an explicit `<inertial>` (mass,
//!   principal moments), so the engine's mass properties are exactly signorini's.
//! * Degrees of freedom: a free body gets a `<freejoint>`; a body restricted by a
//!   [`DofMask`](harness::model::DofMask) gets one `slide` joint per free world translation (axis
//!   expressed in the body frame) and, for the rotations, one `hinge` (one free rotation) or a
//!   `ball` joint (all three); two free rotations have no exact MJCF form and are refused. A body
//!   tied to the world by a [`Joint`](harness::model::Joint) (hinge or ball) gets that joint
//!   instead, at the joint's body anchor; a ball joint between two bodies becomes an equality
//!   `connect` constraint. Joints are exported as exact (rigid) joints even when signorini models
//!   them as stiff spring–dampers (noted in the sidecar).
//! * Kinematic trees: hinges between two bodies are written as MJCF writes hinge chains, by
//!   nesting. Each group of bodies connected by hinges is a tree rooted at its body jointed to the
//!   world (if any) or else at its lowest-numbered body, which takes the DOFs above; every other
//!   body is nested in its parent (position and orientation relative to the parent's frame) with
//!   one `hinge` at its anchor, about its axis in the child's frame. A child's own DOF mask must
//!   be implied by the tree (all six free, or the parent's planar mask with the hinge along the
//!   free rotation); hinge loops (two bodies jointed to the world, or a closing hinge) are refused.
//!   MuJoCo numbers `qpos`/`qvel` in the XML's depth-first order; the sidecar maps every body to
//!   signorini's maximal coordinates (nested bodies are read from the engine's kinematics).
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
//! `-m_row (S r + D v)`, with `m_row` the row's effective mass. MuJoCo approximates it by the
//! body's translational inverse weight at its reference pose, the mean over the three world
//! directions of the inverse translational mass at the body origin: `m` for a free body, `3 m / t`
//! for a body with `t` free world translations (a planar body: `1.5 m`). So `S = k / m_row`,
//! `D = k tau_d / m_row` maps a body–static contact exactly. MuJoCo combines two geoms' direct
//! `solref`s by the element-wise minimum (standard ones are mixed by `solmix`): static geoms get
//! the rigid setting and `solmix = 0`, so the body's values win either way, and a body–body
//! contact gets the stiffer body's `(S, D)` rather than the pair's series value: a documented
//! deviation. The impedance at its minimum also makes the friction rows soft (viscous, force
//! `m_row D` per unit slip speed), not Coulomb sticking: a second documented deviation. The reference acceleration is evaluated at the start of the step, i.e.
//! explicitly: with `n` contact rows on the body (signorini's `points`, see [`GeomContact`]), its
//! normal motion is stable for `n k dt^2 / m <= 1` and `n k tau_d dt / m <= 1`; otherwise the
//! export falls back to the rigid setting above for that geom (the sidecar lists which). A jointed
//! body's rows do not see its mass: such geoms take the rigid setting too.
//!
//! Refused (one line, nothing written): deformable bodies, point loads, constant applied
//! forces/torques, point colliders (static spheres of radius 0), two free rotations, axial ties,
//! hinge loops, tree children with DOF restrictions of their own, axial springs not along a slide
//! joint.

use harness::geometry::detect;
use harness::model::{ContactCompliance, DofLayout, JointKind, Material, RigidBody, Shape, StaticShape, World};
use harness::ColliderId;
use harness::{Params, Scenario};
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
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
    /// A hinge to its parent body in the kinematic tree: the MJCF body is nested in its parent's.
    TreeHinge,
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
    /// MJCF name of the parent body (a body nested in the kinematic tree), else absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
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
    /// signorini's contact points between this geom and one partner at the initial state (the
    /// most over its partners; 1 without contact): a compliant pair's total stiffness is
    /// `points × k`. Drake's point contact makes one point per pair (run_drake.py scales by it).
    pub points: usize,
    /// The mass MuJoCo's contact rows of the geom's body see (body geoms that are free or
    /// restricted by slide joints; see `contact_of`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_mass: Option<f64>,
    /// `solref` written.
    pub solref: [f64; 2],
    /// `solimp` written.
    pub solimp: [f64; 5],
    /// `direct` (the Kelvin–Voigt map), `rigid`, `rigid_fallback` (compliant, but the direct map
    /// would be unstable at this step or the body is jointed), or `body` (a compliant static
    /// collider: the rigid setting, so that the body's values apply).
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
    /// Steps between two frames of the replay that `signorini grade` writes
    /// ([`crate::grade::replay_stride`]): an engine runner reports its own contacts at the steps
    /// `k` with `k % replay_stride == 0` and at the last (`contact_frames` of the trajectory).
    #[serde(default = "one")]
    pub replay_stride: usize,
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

fn one() -> usize {
    1
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

/// Contact attributes of a material on a geom: `body = Some((mass, row mass))` for a body geom,
/// `None` for a static one; `points` = signorini's contact points of the geom with one partner.
///
/// Static geom: always the rigid setting, so that the body's values apply: MuJoCo mixes two
/// standard `solref`s by `solmix` (0 on statics) and takes the element-wise minimum when either is
/// direct (negative), which is the body's direct pair; `solimp` is mixed by `solmix`. Mapping
/// `rigid`, or `body` for a compliant static material.
///
/// Compliant body geom: `S = k / m_row`, `D = k tau_d / m_row` (each MuJoCo contact row then
/// exerts the per-point Kelvin–Voigt force). The reference acceleration is explicit, so the body's
/// normal motion under its `points` rows, `x'' = -(points k / m) (x + tau_d x')`, must be stable
/// for MuJoCo's Euler step: `points k dt^2 / m <= 1` and `points k tau_d dt / m <= 1`; otherwise,
/// or without a row mass (jointed bodies), the rigid setting (`rigid_fallback`).
fn contact_of(
    material: &Material,
    body: Option<(f64, Option<f64>)>,
    points: usize,
    dt: f64,
) -> ([f64; 2], [f64; 5], &'static str) {
    let rigid = ([2.0 * dt, 1.0], RIGID_SOLIMP);
    match (material.compliance, body) {
        (ContactCompliance::Rigid, _) => (rigid.0, rigid.1, "rigid"),
        (ContactCompliance::Compliant { .. }, None) => (rigid.0, rigid.1, "body"),
        (ContactCompliance::Compliant { .. }, Some((_, None))) => (rigid.0, rigid.1, "rigid_fallback"),
        (ContactCompliance::Compliant { stiffness: k, dissipation_time: tau }, Some((m, Some(m_row)))) => {
            let n = points as f64;
            if n * k / m * dt * dt <= 1.0 && n * k * tau / m * dt <= 1.0 {
                ([-k / m_row, -k * tau / m_row], COMPLIANT_SOLIMP, "direct")
            } else {
                (rigid.0, rigid.1, "rigid_fallback")
            }
        }
    }
}

/// Why a case cannot be exported as MJCF ([`export`]): the case and what MJCF cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("case '{case}' cannot be exported as MJCF: {reason}")]
pub struct MjcfError {
    /// The case.
    pub case: String,
    /// What its scene has that MJCF cannot express.
    pub reason: Unexportable,
}

impl From<MjcfError> for String {
    fn from(e: MjcfError) -> String {
        e.to_string()
    }
}

/// What a scene has that the MJCF export cannot express ([`MjcfError`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unexportable {
    /// Deformable (FEM) bodies.
    #[error("it has deformable (FEM) bodies")]
    Deformables,
    /// Time-dependent point loads.
    #[error("it has time-dependent point loads")]
    PointLoads,
    /// A constant applied force or torque on a body.
    #[error("body '{body}' has a constant applied force or torque")]
    AppliedLoad {
        /// The body.
        body: String,
    },
    /// A body with more than one joint to the world.
    #[error("body {body} has more than one joint to the world")]
    WorldJoints {
        /// The body's index.
        body: usize,
    },
    /// An axial tie between bodies.
    #[error("joint '{joint}' is an axial tie")]
    AxialTie {
        /// The joint.
        joint: String,
    },
    /// A torsional spring.
    #[error("joint '{joint}' is a torsional spring")]
    TorsionalSpring {
        /// The joint.
        joint: String,
    },
    /// A static sphere of radius 0.
    #[error("static collider '{collider}' is a point (radius 0)")]
    PointCollider {
        /// The collider.
        collider: String,
    },
    /// Two bodies jointed to the world and hinged to each other.
    #[error("bodies '{first}' and '{second}' are jointed to the world and hinged to each other (a closed loop)")]
    AnchoredLoop {
        /// The first body jointed to the world.
        first: String,
        /// The second.
        second: String,
    },
    /// A hinge between bodies that closes a kinematic loop.
    #[error("hinge '{hinge}' closes a kinematic loop")]
    HingeLoop {
        /// The hinge.
        hinge: String,
    },
    /// A body whose DOF restriction is not what its parent and its hinge leave it.
    #[error("body '{body}' has DOF restrictions that its hinge to '{parent}' does not imply")]
    DofRestrictions {
        /// The body.
        body: String,
        /// Its parent in the kinematic tree.
        parent: String,
    },
    /// A body with exactly two free rotations.
    #[error("body '{body}' has exactly two free rotations")]
    TwoFreeRotations {
        /// The body.
        body: String,
    },
    /// An axial spring that is not along a slide joint at a body's centre of mass.
    #[error("spring {spring} is axial but not along a slide joint at the centre of mass")]
    OffAxisSpring {
        /// The spring's index.
        spring: usize,
    },
    /// A compound part that is itself a compound.
    #[error("nested compound shape")]
    NestedCompound,
}

fn refuse(case: &str, reason: Unexportable) -> MjcfError {
    MjcfError { case: case.to_string(), reason }
}

/// The world axis `e_k` (k = 0, 1, 2).
fn axis(k: usize) -> Vector3<f64> {
    let mut a = Vector3::zeros();
    a[k] = 1.0;
    a
}

/// Exports `scenario` (built from case `case` with `params`) as MJCF + sidecar, or says in one
/// line why MJCF cannot express it.
pub fn export(case: &str, params: &Params, scenario: &Scenario) -> Result<Export, MjcfError> {
    let w: &World = &scenario.world;
    let dt = scenario.dt;
    if !w.deformables.is_empty() {
        return Err(refuse(case, Unexportable::Deformables));
    }
    if !w.loads.is_empty() {
        return Err(refuse(case, Unexportable::PointLoads));
    }
    if let Some(b) = w.bodies.iter().find(|b| b.applied_force.norm() > 0.0 || b.applied_torque.norm() > 0.0) {
        return Err(refuse(case, Unexportable::AppliedLoad { body: b.name.clone() }));
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
                    return Err(refuse(case, Unexportable::WorldJoints { body: joint.body_a }));
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
            // hinges between two bodies are the edges of the kinematic tree (`Tree`)
            (JointKind::Hinge { .. }, Some(_)) => {}
            (JointKind::Axial { .. }, _) => {
                return Err(refuse(case, Unexportable::AxialTie { joint: joint.name.clone() }))
            }
            (JointKind::Angular { .. }, _) => {
                return Err(refuse(case, Unexportable::TorsionalSpring { joint: joint.name.clone() }))
            }
        }
    }
    let tree = Tree::of(case, w, &world_joint)?;
    let mus: Vec<f64> = w.bodies.iter().map(|b| b.material.mu).chain(w.statics.iter().map(|s| s.material.mu)).collect();
    if mus.iter().any(|&m| m != mus[0]) {
        notes.push("materials disagree on friction: MuJoCo combines by max, signorini by harmonic mean".into());
    }
    let rigid = |m: &Material| m.compliance == ContactCompliance::Rigid;
    let materials = w.bodies.iter().map(|b| &b.material).chain(w.statics.iter().map(|s| &s.material));
    if materials.clone().any(rigid) && materials.clone().any(|m| !rigid(m)) {
        notes.push(
            "rigid and compliant materials are mixed: a rigid-compliant pair gets Drake's stiffness 2 n k \
             (run_drake.py's per-geometry map), twice signorini's n k"
                .into(),
        );
    }
    let points = contact_points(w, scenario.margin, &mut notes);

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
    for (i, s) in w.statics.iter().enumerate() {
        let name = format!("static{i}_{}", xml_name(&s.name));
        let n = points.get(&(ColliderId::Static(i), 0)).copied().unwrap_or(1);
        let (solref, solimp, mapping) = contact_of(&s.material, None, n, dt);
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
                    return Err(refuse(case, Unexportable::PointCollider { collider: s.name.clone() }));
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
            points: n,
            row_mass: None,
            solref,
            solimp,
            mapping: mapping.into(),
        });
    }

    let layout = w.layout();
    let mut em = Emitter {
        case,
        w,
        dt,
        layout: &layout,
        tree: &tree,
        world_joint: &world_joint,
        points: &points,
        xml,
        sites: String::new(),
        tendons: String::new(),
        qadr: 0,
        dadr: 0,
        geoms,
        bodies: vec![None; w.bodies.len()],
    };
    for &root in &tree.roots {
        em.body(root, 2)?;
    }
    let Emitter { mut xml, sites, tendons, qadr, dadr, geoms, bodies, .. } = em;
    let bodies: Vec<BodyMap> = bodies.into_iter().map(|b| b.expect("the tree reaches every body")).collect();
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
            "compliant contact that MuJoCo's direct map cannot take at dt = {dt} (the explicit reference \
             acceleration of the body's contact rows would be unstable, or the body is jointed, so its \
             contact rows do not see the body's mass): those geoms use the rigid setting (geoms[].mapping)"
        ));
    }
    let sidecar = Sidecar {
        schema: SIDECAR_SCHEMA.into(),
        case: case.into(),
        params: params.clone(),
        params_hash: params.hash(),
        dt,
        steps: scenario.steps,
        replay_stride: crate::grade::replay_stride(scenario),
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
                      w_world = R(quat) w_body. Every other body (slide/hinge/ball joints, bodies nested in \
                      the kinematic tree) is read from the kinematics: xpos, xquat and the body's velocity \
                      at its origin in world axes."
            .into(),
        notes,
    };
    Ok(Export { mjcf: xml, sidecar })
}

/// A collider part as the narrow phase numbers it: (collider, part index; 0 unless compound).
type PartKey = (ColliderId, usize);

/// Per collider part, the number of signorini contact points it has with one partner at the
/// initial state (the largest over its partners): e.g. 4 for a box face on a plane, 2 for a
/// lying cylinder, 1 for a sphere. A compliant material's `k` is per point, so a pair's total
/// stiffness is `points × k`; Drake's point contact makes one point per geometry pair and
/// `peers/run_drake.py` scales by it. Parts without contact at the start are absent (1 is used).
/// Compliant parts whose partners disagree get a note (the count is then an approximation).
fn contact_points(w: &World, margin: f64, notes: &mut Vec<String>) -> HashMap<PartKey, usize> {
    let mut pairs: BTreeMap<(PartKey, PartKey), usize> = BTreeMap::new();
    for c in &detect(w, margin).contacts {
        // feature bits 32..40: part of A, 40..48: part of B (harness::geometry's packing)
        let (pa, pb) = ((c.key.feature >> 32 & 0xff) as usize, (c.key.feature >> 40 & 0xff) as usize);
        *pairs.entry(((c.key.a, pa), (c.key.b, pb))).or_default() += 1;
    }
    let mut per: BTreeMap<PartKey, Vec<usize>> = BTreeMap::new();
    for (&(a, b), &n) in &pairs {
        per.entry(a).or_default().push(n);
        per.entry(b).or_default().push(n);
    }
    let material = |id: ColliderId| match id {
        ColliderId::Body(i) => w.bodies[i].material,
        ColliderId::Static(i) => w.statics[i].material,
        ColliderId::Deformable(_) => unreachable!("deformable worlds are refused before"),
    };
    per.into_iter()
        .map(|(key, counts)| {
            let n = counts.iter().copied().max().unwrap_or(1);
            if counts.iter().any(|&c| c != n) && material(key.0).compliance != ContactCompliance::Rigid {
                notes.push(format!(
                    "collider {:?} part {} touches partners with different signorini point counts {counts:?}: \
                     points = {n} (Drake's stiffness is exact only for its pairs with {n} points)",
                    key.0, key.1
                ));
            }
            (key, n)
        })
        .collect()
}

/// The mass a MuJoCo contact row of body `b` sees: MuJoCo approximates a contact row's inverse
/// mass by the body's translational inverse weight, the mean over the three world directions of
/// the inverse translational mass at the body origin (the COM here). Free body: `m`; a body with
/// `t` free world translations (slide joints through the COM): `3 m / t`. `None` where it is not
/// the body's own mass (jointed bodies, or no free translation).
fn row_mass(b: &RigidBody, joint: &BodyJoint) -> Option<f64> {
    match joint {
        BodyJoint::Free => Some(b.mass),
        BodyJoint::Restricted => {
            let t = (0..3).filter(|&k| b.dofs.0[k]).count();
            (t > 0).then(|| 3.0 * b.mass / t as f64)
        }
        BodyJoint::WorldJoint | BodyJoint::TreeHinge => None,
    }
}

/// The kinematic tree of the hinges between bodies: MJCF writes a hinge chain as nested bodies,
/// the child carrying a `hinge` joint relative to its parent.
struct Tree {
    /// Per body, its parent body and the joint (index into `World::joints`) that joins them.
    parent: Vec<Option<(usize, usize)>>,
    /// Per body, its children in body order.
    children: Vec<Vec<usize>>,
    /// The root of every connected group of bodies, in body order: the body jointed to the world
    /// if the group has one, else its lowest-numbered body (free or restricted).
    roots: Vec<usize>,
}

impl Tree {
    fn of(case: &str, w: &World, world_joint: &[Option<usize>]) -> Result<Tree, MjcfError> {
        let n = w.bodies.len();
        let mut adjacent: Vec<Vec<(usize, usize)>> = vec![vec![]; n];
        for (j, joint) in w.joints.iter().enumerate() {
            if let (JointKind::Hinge { .. }, Some(b)) = (joint.kind, joint.body_b) {
                adjacent[joint.body_a].push((b, j));
                adjacent[b].push((joint.body_a, j));
            }
        }
        let mut tree = Tree { parent: vec![None; n], children: vec![vec![]; n], roots: vec![] };
        let mut group = vec![usize::MAX; n];
        for start in 0..n {
            if group[start] != usize::MAX {
                continue;
            }
            // the connected group of `start`, then its root
            let mut members = vec![start];
            group[start] = start;
            let mut k = 0;
            while k < members.len() {
                for &(o, _) in &adjacent[members[k]] {
                    if group[o] == usize::MAX {
                        group[o] = start;
                        members.push(o);
                    }
                }
                k += 1;
            }
            let anchored: Vec<usize> = members.iter().copied().filter(|&i| world_joint[i].is_some()).collect();
            if anchored.len() > 1 {
                return Err(refuse(
                    case,
                    Unexportable::AnchoredLoop {
                        first: w.bodies[anchored[0]].name.clone(),
                        second: w.bodies[anchored[1]].name.clone(),
                    },
                ));
            }
            let root = anchored.first().copied().unwrap_or(start);
            tree.roots.push(root);
            // breadth first from the root; a hinge to a body already placed closes a loop
            let mut placed = vec![root];
            let mut k = 0;
            while k < placed.len() {
                let p = placed[k];
                for &(c, j) in &adjacent[p] {
                    if tree.parent[p].map(|(_, pj)| pj) == Some(j) {
                        continue;
                    }
                    if c == root || tree.parent[c].is_some() {
                        return Err(refuse(case, Unexportable::HingeLoop { hinge: w.joints[j].name.clone() }));
                    }
                    tree.parent[c] = Some((p, j));
                    placed.push(c);
                }
                k += 1;
            }
        }
        tree.roots.sort_unstable();
        for (c, p) in tree.parent.iter().enumerate() {
            if let Some((p, _)) = p {
                tree.children[*p].push(c);
            }
        }
        Ok(tree)
    }
}

/// Writes the bodies (recursively, children nested in their parents) and allocates MuJoCo's
/// `qpos` / `qvel` addresses in the order MuJoCo does: the order of the joints in the XML.
struct Emitter<'a> {
    case: &'a str,
    w: &'a World,
    dt: f64,
    layout: &'a DofLayout,
    tree: &'a Tree,
    world_joint: &'a [Option<usize>],
    points: &'a HashMap<PartKey, usize>,
    xml: String,
    sites: String,
    tendons: String,
    qadr: usize,
    dadr: usize,
    geoms: Vec<GeomContact>,
    bodies: Vec<Option<BodyMap>>,
}

impl Emitter<'_> {
    /// Appends one MJCF joint of body `bname` at indentation `pad`.
    fn joint(
        &mut self,
        bname: &str,
        joints: &mut Vec<JointMap>,
        kind: &str,
        extra: String,
        ax: Option<Vector3<f64>>,
        pad: &str,
    ) {
        let name = format!("{bname}_j{}", joints.len());
        if kind == "free" {
            let _ = writeln!(self.xml, "{pad}<freejoint name=\"{name}\"/>");
        } else {
            let _ = writeln!(self.xml, "{pad}<joint name=\"{name}\" type=\"{kind}\"{extra}/>");
        }
        let (nq, nv) = match kind {
            "free" => (7, 6),
            "ball" => (4, 3),
            _ => (1, 1),
        };
        joints.push(JointMap {
            name,
            kind: kind.into(),
            qpos_adr: self.qadr,
            dof_adr: self.dadr,
            axis: ax.map(|a| [a.x, a.y, a.z]),
        });
        self.qadr += nq;
        self.dadr += nv;
    }

    /// Writes body `i` and, nested in it, its children, at indentation level `depth`.
    fn body(&mut self, i: usize, depth: usize) -> Result<(), MjcfError> {
        let (case, w) = (self.case, self.w);
        let b = &w.bodies[i];
        let bname = body_name(w, i);
        let (pad, inner) = ("  ".repeat(depth), "  ".repeat(depth + 1));
        let r0 = b.orientation;
        // a nested body's frame is given relative to its parent's
        let parent = self.tree.parent[i];
        let (pos, rot) = match parent {
            Some((p, _)) => {
                let pb = &w.bodies[p];
                (pb.orientation.inverse() * (b.position - pb.position), pb.orientation.inverse() * r0)
            }
            None => (b.position, r0),
        };
        let _ = writeln!(self.xml, "{pad}<body name=\"{bname}\" pos=\"{}\" quat=\"{}\">", v3(&pos), quat(&rot));
        let _ = writeln!(
            self.xml,
            "{inner}<inertial pos=\"0 0 0\" mass=\"{}\" diaginertia=\"{}\"/>",
            f(b.mass),
            v3(&b.inertia)
        );
        let mut joints = vec![];
        let kind = if let Some((p, j)) = parent {
            let joint = &w.joints[j];
            let (anchor, ax) = match joint.kind {
                JointKind::Hinge { axis_a, .. } if joint.body_a == i => (joint.anchor_a, axis_a),
                JointKind::Hinge { axis_b, .. } => (joint.anchor_b, axis_b),
                _ => unreachable!("tree edges are hinges"),
            };
            // the child's own DOF restriction must be what the parent and the hinge leave it
            let pd = &w.bodies[p].dofs;
            let axis_world = r0 * ax;
            let rots: Vec<usize> = (3..6).filter(|&k| b.dofs.0[k]).collect();
            let consistent = b.dofs.count() == 6
                || (b.dofs == *pd && rots.len() == 1 && axis_world.cross(&axis(rots[0] - 3)).norm() < 1e-12);
            if !consistent {
                return Err(refuse(
                    case,
                    Unexportable::DofRestrictions { body: b.name.clone(), parent: w.bodies[p].name.clone() },
                ));
            }
            self.joint(
                &bname,
                &mut joints,
                "hinge",
                format!(" pos=\"{}\" axis=\"{}\"", v3(&anchor), v3(&ax)),
                Some(ax),
                &inner,
            );
            BodyJoint::TreeHinge
        } else if let Some(j) = self.world_joint[i] {
            let joint = &w.joints[j];
            match joint.kind {
                JointKind::Hinge { axis_a, .. } => self.joint(
                    &bname,
                    &mut joints,
                    "hinge",
                    format!(" pos=\"{}\" axis=\"{}\"", v3(&joint.anchor_a), v3(&axis_a)),
                    Some(axis_a),
                    &inner,
                ),
                _ => self.joint(&bname, &mut joints, "ball", format!(" pos=\"{}\"", v3(&joint.anchor_a)), None, &inner),
            }
            BodyJoint::WorldJoint
        } else if b.dofs.count() == 6 {
            self.joint(&bname, &mut joints, "free", String::new(), None, &inner);
            BodyJoint::Free
        } else {
            let rots = (3..6).filter(|&k| b.dofs.0[k]).count();
            if rots == 2 {
                return Err(refuse(case, Unexportable::TwoFreeRotations { body: b.name.clone() }));
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
                self.joint(&bname, &mut joints, "slide", extra, Some(a), &inner);
            }
            if rots == 3 {
                self.joint(&bname, &mut joints, "ball", " pos=\"0 0 0\"".into(), None, &inner);
            } else if let Some(k) = (3..6).find(|&k| b.dofs.0[k]) {
                let a = r0.inverse() * axis(k - 3);
                self.joint(
                    &bname,
                    &mut joints,
                    "hinge",
                    format!(" pos=\"0 0 0\" axis=\"{}\"", v3(&a)),
                    Some(a),
                    &inner,
                );
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
                        return Err(refuse(case, Unexportable::OffAxisSpring { spring: si }));
                    }
                }
                None => {
                    let _ =
                        writeln!(self.xml, "{inner}<site name=\"spring{si}_body\" pos=\"{}\"/>", v3(&s.local_point));
                    let _ = writeln!(self.sites, "    <site name=\"spring{si}_anchor\" pos=\"{}\"/>", v3(&s.anchor));
                    let _ = writeln!(
                        self.tendons,
                        "    <spatial name=\"spring{si}\" stiffness=\"{}\" springlength=\"{}\">\n      <site site=\"spring{si}_body\"/>\n      <site site=\"spring{si}_anchor\"/>\n    </spatial>",
                        f(s.stiffness),
                        f(s.rest_length)
                    );
                }
            }
        }
        let rm = row_mass(b, &kind);
        for (p, part) in b.shape.parts().iter().enumerate() {
            let gname = format!("{bname}_g{p}");
            let n = self.points.get(&(ColliderId::Body(i), p)).copied().unwrap_or(1);
            let (solref, solimp, mapping) = contact_of(&b.material, Some((b.mass, rm)), n, self.dt);
            let (ty, size, rot) = match part.shape {
                Shape::Sphere { radius } => ("sphere", f(radius), part.rotation),
                Shape::Box { half_extents } => ("box", list(&half_extents), part.rotation),
                Shape::Cylinder { radius, half_height } => (
                    "cylinder",
                    format!("{} {}", f(radius), f(half_height)),
                    // MuJoCo's cylinder axis is z; signorini's is y
                    part.rotation * UnitQuaternion::from_axis_angle(&Vector3::x_axis(), -std::f64::consts::FRAC_PI_2),
                ),
                Shape::Compound { .. } => return Err(refuse(case, Unexportable::NestedCompound)),
            };
            let _ = writeln!(
                self.xml,
                "{inner}<geom name=\"{gname}\" type=\"{ty}\" size=\"{size}\" pos=\"{}\" quat=\"{}\" condim=\"3\" friction=\"{} 0 0\" solref=\"{}\" solimp=\"{}\" solmix=\"1\"/>",
                v3(&part.translation),
                quat(&rot),
                f(b.material.mu),
                list(&solref),
                list(&solimp)
            );
            self.geoms.push(GeomContact {
                geom: gname,
                body: Some(i),
                mu: b.material.mu,
                compliance: b.material.compliance,
                points: n,
                row_mass: rm,
                solref,
                solimp,
                mapping: mapping.into(),
            });
        }
        for &c in &self.tree.children[i] {
            self.body(c, depth + 1)?;
        }
        let _ = writeln!(self.xml, "{pad}</body>");
        let block = &self.layout.blocks[i];
        self.bodies[i] = Some(BodyMap {
            name: b.name.clone(),
            mjcf_body: bname,
            parent: parent.map(|(p, _)| body_name(w, p)),
            q_offset: block.q_offset,
            v_offset: block.v_offset,
            dofs: b.dofs.0,
            joint: kind,
            joints,
        });
        Ok(())
    }
}

fn body_name(w: &World, i: usize) -> String {
    format!("b{i}_{}", xml_name(&w.bodies[i].name))
}

/// Writes `model.xml` and `model.json` (the sidecar) into `dir`; returns their paths.
pub fn write(export: &Export, dir: &std::path::Path) -> std::io::Result<(std::path::PathBuf, std::path::PathBuf)> {
    let (xml, json) = (dir.join("model.xml"), dir.join("model.json"));
    records::write_atomic(&xml, export.mjcf.as_bytes())?;
    let text = serde_json::to_string_pretty(&export.sidecar).map_err(std::io::Error::other)?;
    records::write_atomic(&json, text.as_bytes())?;
    Ok((xml, json))
}
