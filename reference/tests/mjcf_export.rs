//! The MJCF export's kinematic trees (hinge chains as nested bodies), its contact-point counts
//! and MuJoCo row masses, and its refusals of what a tree cannot express.

use harness::model::{DofMask, Joint, Material, RigidBody, Shape, World};
use harness::{Capabilities, Params, Scenario};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use reference::mjcf::{BodyJoint, Unexportable};
use reference::MjcfError;

fn exported(case: &str, set: &[(&str, &str)]) -> reference::Export {
    let all = cases::all();
    let c = all.iter().find(|c| c.name() == case).unwrap();
    let mut p = c.defaults();
    for (k, v) in set {
        p.set(k, v, case).unwrap();
    }
    let sc = c.prepare(&p).unwrap().scenario().clone();
    reference::export(case, &p, &sc).unwrap()
}

/// The export of a hand-built world (no case), or its refusal.
fn export_world(world: World) -> Result<reference::Export, MjcfError> {
    let sc = Scenario { world, dt: 0.01, steps: 10, margin: 0.01, needs: Capabilities::default() };
    reference::export("test", &Params::default(), &sc)
}

fn numbers(s: &str) -> Vec<f64> {
    s.split(' ').map(|x| x.parse().unwrap()).collect()
}

/// Pose of MJCF body `name` in the world, composed from the nested `pos`/`quat` of its ancestors.
fn world_pose(doc: &roxmltree::Document, name: &str) -> (Vector3<f64>, UnitQuaternion<f64>) {
    let node = doc.descendants().find(|n| n.has_tag_name("body") && n.attribute("name") == Some(name)).unwrap();
    let chain: Vec<_> = node.ancestors().filter(|n| n.has_tag_name("body")).collect();
    let (mut x, mut r) = (Vector3::zeros(), UnitQuaternion::identity());
    for b in chain.iter().rev() {
        let p = numbers(b.attribute("pos").unwrap());
        let q = numbers(b.attribute("quat").unwrap());
        x += r * Vector3::new(p[0], p[1], p[2]);
        r *= UnitQuaternion::from_quaternion(Quaternion::new(q[0], q[1], q[2], q[3]));
    }
    (x, r)
}

#[test]
fn jointed_beam_is_a_chain_of_nested_bodies_at_their_signorini_poses() {
    let e = exported("jointed_beam", &[]);
    let doc = roxmltree::Document::parse(&e.mjcf).unwrap();
    let s = &e.sidecar;
    // link i is nested in link i-1; link 0 carries the pivot to the world
    for (i, b) in s.bodies.iter().enumerate() {
        let node = doc.descendants().find(|n| n.attribute("name") == Some(b.mjcf_body.as_str())).unwrap();
        let parent = node.parent().unwrap();
        if i == 0 {
            assert!(parent.has_tag_name("worldbody"));
            assert_eq!((b.joint.clone(), b.parent.clone()), (BodyJoint::WorldJoint, None));
        } else {
            assert_eq!(parent.attribute("name"), Some(s.bodies[i - 1].mjcf_body.as_str()));
            assert_eq!(
                (b.joint.clone(), b.parent.as_deref()),
                (BodyJoint::TreeHinge, Some(s.bodies[i - 1].mjcf_body.as_str()))
            );
        }
        // the composed pose is signorini's body pose: link i's centre at ((i + 1/2) L, 0, 0)
        let (x, r) = world_pose(&doc, &b.mjcf_body);
        assert!((x - Vector3::new((i as f64 + 0.5) * 0.2, 0.0, 0.0)).norm() < 1e-12, "{i}: {x}");
        assert!(r.angle() < 1e-12);
        // one hinge each, about y, at the link's left end, in MuJoCo's depth-first numbering
        assert_eq!(b.joints.len(), 1);
        let j = &b.joints[0];
        assert_eq!((j.kind.as_str(), j.qpos_adr, j.dof_adr), ("hinge", i, i));
        assert_eq!(j.axis, Some([0.0, 1.0, 0.0]));
        let jn = node.children().find(|n| n.has_tag_name("joint")).unwrap();
        assert!((numbers(jn.attribute("pos").unwrap())[0] + 0.1).abs() < 1e-12);
    }
    assert_eq!((s.nq, s.nv, s.mj_nq, s.mj_nv), (35, 15, 5, 5));
}

#[test]
fn robots_nest_thighs_in_the_free_torso_and_shins_in_the_thighs() {
    let e = exported("robots", &[("robots", "2")]);
    let doc = roxmltree::Document::parse(&e.mjcf).unwrap();
    let s = &e.sidecar;
    let (p, sc) = {
        let all = cases::all();
        let c = all.iter().find(|c| c.name() == "robots").unwrap();
        let mut p = c.defaults();
        p.set("robots", "2", "robots").unwrap();
        let sc = c.prepare(&p).unwrap().scenario().clone();
        (p, sc)
    };
    assert_eq!(p.hash(), s.params_hash);
    let w = &sc.world;
    // per robot: a freejoint (7 qpos, 6 dofs) and 8 hinges
    assert_eq!((s.mj_nq, s.mj_nv), (2 * (7 + 8), 2 * (6 + 8)));
    let roots: Vec<&str> = doc
        .descendants()
        .find(|n| n.has_tag_name("worldbody"))
        .unwrap()
        .children()
        .filter(|n| n.has_tag_name("body"))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    assert_eq!(roots, ["b0_robot0_torso", "b9_robot1_torso"]);
    for (i, b) in s.bodies.iter().enumerate() {
        let (x, r) = world_pose(&doc, &b.mjcf_body);
        assert!((x - w.bodies[i].position).norm() < 1e-12, "{}", b.name);
        assert!(r.angle_to(&w.bodies[i].orientation) < 1e-12, "{}", b.name);
        let expect = match i % 9 {
            0 => (BodyJoint::Free, None),
            k if k % 2 == 1 => (BodyJoint::TreeHinge, Some(s.bodies[9 * (i / 9)].mjcf_body.clone())),
            _ => (BodyJoint::TreeHinge, Some(s.bodies[i - 1].mjcf_body.clone())),
        };
        assert_eq!((b.joint.clone(), b.parent.clone()), expect, "{}", b.name);
    }
    // every hinge's anchor, placed by the MJCF child's pose, is the signorini joint's world point,
    // and its axis is the joint's world axis
    for j in &w.joints {
        let b = &s.bodies[j.body_a];
        let node = doc.descendants().find(|n| n.attribute("name") == Some(b.mjcf_body.as_str())).unwrap();
        let jn = node.children().find(|n| n.has_tag_name("joint")).unwrap();
        let (x, r) = world_pose(&doc, &b.mjcf_body);
        let a = numbers(jn.attribute("pos").unwrap());
        let ax = numbers(jn.attribute("axis").unwrap());
        let body = &w.bodies[j.body_a];
        let anchor = body.position + body.orientation * j.anchor_a;
        assert!((x + r * Vector3::new(a[0], a[1], a[2]) - anchor).norm() < 1e-12, "{}", j.name);
        let want = match j.kind {
            harness::model::JointKind::Hinge { axis_a, .. } => body.orientation * axis_a,
            _ => unreachable!(),
        };
        assert!((r * Vector3::new(ax[0], ax[1], ax[2]) - want).norm() < 1e-12, "{}", j.name);
    }
}

fn link(name: &str, x: f64) -> RigidBody {
    RigidBody::new(
        name,
        Shape::Box { half_extents: [0.5, 0.1, 0.1] },
        1.0,
        Vector3::new(x, 0.0, 1.0),
        Material::rigid(0.5),
    )
}

#[test]
fn hinge_loops_are_refused() {
    // three links hinged in a ring
    let mut w = World::new();
    for i in 0..3 {
        w.bodies.push(link(&format!("l{i}"), i as f64));
    }
    for (a, b) in [(1, 0), (2, 1), (0, 2)] {
        let j = Joint::hinge_at(&w, a, Some(b), Vector3::new(0.5, 0.0, 1.0), Vector3::y()).named(format!("h{a}{b}"));
        w.joints.push(j);
    }
    // breadth first from l0: h10 and h02 attach l1 and l2, then h21 reaches l2 a second time
    let err = export_world(w).unwrap_err();
    assert_eq!(err.reason, Unexportable::HingeLoop { hinge: "h21".into() });
    assert_eq!(err.to_string(), "case 'test' cannot be exported as MJCF: hinge 'h21' closes a kinematic loop");
    // two links, each hinged to the world, hinged to each other
    let mut w = World::new();
    w.bodies.push(link("a", 0.0));
    w.bodies.push(link("b", 1.0));
    for i in 0..2 {
        w.joints.push(Joint::hinge_at(&w, i, None, Vector3::new(i as f64, 0.0, 1.0), Vector3::y()));
    }
    w.joints.push(Joint::hinge_at(&w, 1, Some(0), Vector3::new(0.5, 0.0, 1.0), Vector3::y()));
    let err = export_world(w).unwrap_err();
    assert_eq!(err.reason, Unexportable::AnchoredLoop { first: "a".into(), second: "b".into() });
    let err = err.to_string();
    assert!(
        err.ends_with("bodies 'a' and 'b' are jointed to the world and hinged to each other (a closed loop)"),
        "{err}"
    );
}

#[test]
fn a_child_restricted_beyond_its_hinge_is_refused_and_a_planar_chain_is_not() {
    let chain = |child: DofMask, axis: Vector3<f64>| {
        let mut w = World::new();
        w.bodies.push(link("root", 0.0).with_dofs(DofMask::PLANAR_XZ));
        w.bodies.push(link("child", 1.0).with_dofs(child));
        w.joints.push(Joint::hinge_at(&w, 1, Some(0), Vector3::new(0.5, 0.0, 1.0), axis).named("h"));
        export_world(w)
    };
    let e = chain(DofMask::PLANAR_XZ, Vector3::y()).unwrap();
    assert_eq!(e.sidecar.bodies[1].joint, BodyJoint::TreeHinge);
    assert_eq!(e.sidecar.bodies[0].joint, BodyJoint::Restricted);
    let err = chain(DofMask::PLANAR_XZ, Vector3::z()).unwrap_err();
    assert_eq!(err.reason, Unexportable::DofRestrictions { body: "child".into(), parent: "root".into() });
    let err = err.to_string();
    assert!(err.ends_with("body 'child' has DOF restrictions that its hinge to 'root' does not imply"), "{err}");
}

#[test]
fn contact_points_count_signorini_features_per_pair() {
    // a lying cylinder touches the ground at the 2 ends of its lowest generator
    let e = exported("spring_cylinder", &[]);
    assert!(e.sidecar.geoms.iter().all(|g| g.points == 2), "{:?}", e.sidecar.geoms);
    // a box face on the slope: 4 corners
    let e = exported("slope", &[]);
    assert!(e.sidecar.geoms.iter().all(|g| g.points == 4), "{:?}", e.sidecar.geoms);
    // spheres: one point per pair
    let e = exported("sphere_stack", &[]);
    assert!(e.sidecar.geoms.iter().all(|g| g.points == 1));
}

#[test]
fn kelvin_voigt_map_uses_mujocos_row_mass_and_the_bodys_total_stiffness() {
    // the planar cylinder has 2 free translations: MuJoCo's row mass is 3 m / 2
    let (m, k, tau) = (0.5, 1e4 / 2.0, 0.02);
    let e = exported("spring_cylinder", &[("dt", "0.002")]);
    let g = e.sidecar.geoms.iter().find(|g| g.body == Some(0)).unwrap();
    assert_eq!(g.row_mass, Some(1.5 * m));
    assert_eq!(g.mapping, "direct");
    assert_eq!(g.solref, [-k / (1.5 * m), -k * tau / (1.5 * m)]);
    // stable limit of the explicit damping: 2 points k tau_d dt / m <= 1, i.e. dt <= 2.5 ms
    let e = exported("spring_cylinder", &[("dt", "0.003")]);
    let g = e.sidecar.geoms.iter().find(|g| g.body == Some(0)).unwrap();
    assert_eq!(g.mapping, "rigid_fallback");
    // a free body's row mass is its mass
    let e = exported("clutter", &[]);
    assert!(e.sidecar.geoms.iter().filter(|g| g.body.is_some()).all(|g| g.row_mass.is_some()));
}
