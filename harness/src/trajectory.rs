//! Recording a run's motion for the replay page ([`records::trajectory`]): the scene's geometry
//! once, then a [`Frame`] every `stride` steps (and at the last step).
//!
//! The default stride ([`TrajectoryOption::Auto`]) gives [`FRAMES_PER_SECOND`] frames per simulated
//! second, widened so that a run keeps at most [`MAX_FRAMES`] frames and at most
//! [`MAX_FRAME_VALUES`] pose and node numbers in all (a long or large scene is sampled more
//! sparsely rather than growing its sidecar without bound).

use crate::contact::ContactKey;
use crate::model::{Shape, StaticShape, World};
use crate::ContactSet;
use nalgebra::{UnitQuaternion, Vector3};
use records::trajectory::{
    BodyGeometry, Frame, FrameMetrics, Part, PartShape, StaticGeometry, SurfaceMesh, Trajectory, MAX_FRAME_CONTACTS,
    TRAJECTORY_SCHEMA,
};
use std::collections::HashMap;

/// Frames per simulated second of the default stride.
pub const FRAMES_PER_SECOND: f64 = 60.0;
/// Most frames of the default stride.
pub const MAX_FRAMES: usize = 1200;
/// Most pose and node numbers (7 per body, 3 per surface node, per frame) of the default stride.
pub const MAX_FRAME_VALUES: usize = 4_000_000;

/// Whether and how often a run records its trajectory (`signorini run --trajectory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrajectoryOption {
    /// No sidecar.
    #[default]
    Off,
    /// [`FRAMES_PER_SECOND`], capped by [`MAX_FRAMES`] and [`MAX_FRAME_VALUES`].
    Auto,
    /// Every `n`-th step (and the last).
    Stride(usize),
}

impl TrajectoryOption {
    /// Parses `off`, `auto` (or `on`), or `stride N` (also `stride=N`, `stride:N`, `N`; N ≥ 1).
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        match s {
            "off" => Ok(Self::Off),
            "auto" | "on" => Ok(Self::Auto),
            _ => {
                let n = s.strip_prefix("stride").unwrap_or(s).trim_start_matches([' ', '=', ':']);
                match n.parse::<usize>() {
                    Ok(n) if n >= 1 => Ok(Self::Stride(n)),
                    _ => Err(format!("--trajectory '{s}': expected off, auto or 'stride N' with N >= 1")),
                }
            }
        }
    }

    /// The stride of a run of `steps` steps of `dt` on `world` (`None`: off).
    pub fn stride(&self, steps: usize, dt: f64, world: &World) -> Option<usize> {
        match *self {
            Self::Off => None,
            Self::Stride(n) => Some(n.max(1)),
            Self::Auto => {
                let per_frame =
                    7 * world.bodies.len() + 3 * world.deformables.iter().map(|d| d.surface_nodes.len()).sum::<usize>();
                let by_rate = (1.0 / (FRAMES_PER_SECOND * dt)).round().max(1.0) as usize;
                let by_count = steps.div_ceil(MAX_FRAMES);
                let by_size = (steps * per_frame.max(1)).div_ceil(MAX_FRAME_VALUES);
                Some(by_rate.max(by_count).max(by_size).max(1))
            }
        }
    }
}

fn v3(v: &Vector3<f64>) -> [f32; 3] {
    [v.x as f32, v.y as f32, v.z as f32]
}

fn quat(q: &UnitQuaternion<f64>) -> [f32; 4] {
    [q.i as f32, q.j as f32, q.k as f32, q.w as f32]
}

fn part_shape(s: &Shape) -> Option<PartShape> {
    match *s {
        Shape::Sphere { radius } => Some(PartShape::Sphere { radius: radius as f32 }),
        Shape::Box { half_extents } => Some(PartShape::Box { half_extents: half_extents.map(|h| h as f32) }),
        Shape::Cylinder { radius, half_height } => {
            Some(PartShape::Cylinder { radius: radius as f32, half_height: half_height as f32 })
        }
        Shape::Compound { .. } => None,
    }
}

/// The boundary triangles of a tetrahedral mesh (faces of one tetrahedron only), outward for
/// positively oriented tetrahedra, over node indices.
pub fn boundary_triangles(tets: &[[usize; 4]]) -> Vec<[usize; 3]> {
    let mut faces: HashMap<[usize; 3], (usize, [usize; 3])> = HashMap::new();
    for &[a, b, c, d] in tets {
        for f in [[a, c, b], [a, b, d], [a, d, c], [b, c, d]] {
            let mut key = f;
            key.sort_unstable();
            faces.entry(key).and_modify(|e| e.0 += 1).or_insert((1, f));
        }
    }
    let mut out: Vec<[usize; 3]> = faces.into_values().filter(|(n, _)| *n == 1).map(|(_, f)| f).collect();
    out.sort_unstable();
    out
}

/// Builds a run's [`Trajectory`] frame by frame.
#[derive(Debug, Clone)]
pub struct Recorder {
    stride: usize,
    /// Per mesh: the node indices its frame lists, in order.
    mesh_nodes: Vec<Vec<usize>>,
    trajectory: Trajectory,
    /// The first recorded step whose state was not finite in `f32` (a run that blew up): no
    /// frame is kept from there on, so the sidecar stays one the page can show.
    ended_at: Option<usize>,
}

impl Recorder {
    /// A recorder of a run of `steps` steps of `dt` from `world`, one frame every `stride` steps.
    pub fn new(world: &World, dt: f64, steps: usize, stride: usize) -> Self {
        let bodies = world
            .bodies
            .iter()
            .map(|b| BodyGeometry {
                name: b.name.clone(),
                parts: b
                    .shape
                    .parts()
                    .iter()
                    .filter_map(|p| {
                        Some(Part { shape: part_shape(&p.shape)?, pos: v3(&p.translation), rot: quat(&p.rotation) })
                    })
                    .collect(),
            })
            .collect();
        let statics = world
            .statics
            .iter()
            .map(|s| {
                let name = s.name.clone();
                match s.shape {
                    StaticShape::HalfSpace { normal, offset } => {
                        StaticGeometry::Plane { name, normal: v3(&normal), offset: offset as f32 }
                    }
                    StaticShape::Box { center, orientation, half_extents } => StaticGeometry::Solid {
                        name,
                        part: Part {
                            shape: PartShape::Box { half_extents: half_extents.map(|h| h as f32) },
                            pos: v3(&center),
                            rot: quat(&orientation),
                        },
                    },
                    StaticShape::Sphere { center, radius } => StaticGeometry::Solid {
                        name,
                        part: Part {
                            shape: PartShape::Sphere { radius: radius as f32 },
                            pos: v3(&center),
                            rot: [0., 0., 0., 1.],
                        },
                    },
                }
            })
            .collect();
        let mut meshes = vec![];
        let mut mesh_nodes = vec![];
        for d in &world.deformables {
            let tris = boundary_triangles(&d.tets);
            let mut nodes: Vec<usize> = tris.iter().flatten().copied().collect();
            nodes.sort_unstable();
            nodes.dedup();
            let index: HashMap<usize, u32> = nodes.iter().enumerate().map(|(i, &n)| (n, i as u32)).collect();
            meshes.push(SurfaceMesh {
                name: d.name.clone(),
                triangles: tris.iter().map(|t| t.map(|n| index[&n])).collect(),
            });
            mesh_nodes.push(nodes);
        }
        Recorder {
            stride: stride.max(1),
            mesh_nodes,
            trajectory: Trajectory {
                schema: TRAJECTORY_SCHEMA.into(),
                dt,
                stride: stride.max(1),
                steps,
                bodies,
                statics,
                meshes,
                ..Default::default()
            },
            ended_at: None,
        }
    }

    /// Whether step `k` of `n` is recorded.
    pub fn wants(&self, k: usize, n: usize) -> bool {
        k.is_multiple_of(self.stride) || k + 1 == n
    }

    /// Records step `k`: `world` at its end, the `contacts` detected there (their gaps are the
    /// penetration the step's metric measures), the normal impulse the step's solution gave each
    /// of them (`impulses` by contact key, local frame normal first; 0 for a contact the step's
    /// problem did not hold) and the step's metrics.
    pub fn record(
        &mut self,
        k: usize,
        world: &World,
        contacts: &ContactSet,
        impulses: Option<&HashMap<ContactKey, [f64; 3]>>,
        metrics: FrameMetrics,
    ) {
        let rows: Vec<[f32; 8]> = contacts
            .contacts
            .iter()
            .map(|c| {
                let (p, n) = (c.point, c.normal());
                let l = impulses.and_then(|i| i.get(&c.key)).map_or(0.0, |l| l[0]);
                [p.x, p.y, p.z, n.x, n.y, n.z, l, (-c.gap).max(0.0)].map(|x| x as f32)
            })
            .collect();
        self.record_rows(k, world, rows, metrics);
    }

    /// Records step `k` with contact rows given as [`Frame::contacts`] lays them out (a reference
    /// engine's own contacts): `world` at the step's end and the step's metrics.
    pub fn record_rows(&mut self, k: usize, world: &World, mut rows: Vec<[f32; 8]>, metrics: FrameMetrics) {
        let poses: Vec<[f32; 7]> = world
            .bodies
            .iter()
            .map(|b| {
                let (p, q) = (b.position, b.orientation);
                [p.x, p.y, p.z, q.i, q.j, q.k, q.w].map(|x| x as f32)
            })
            .collect();
        let nodes: Vec<Vec<[f32; 3]>> = world
            .deformables
            .iter()
            .zip(&self.mesh_nodes)
            .map(|(d, ids)| ids.iter().map(|&i| v3(&d.positions[i])).collect())
            .collect();
        let left_out = rows.len().saturating_sub(MAX_FRAME_CONTACTS);
        if left_out > 0 {
            rows.sort_by(|a, b| b[6].total_cmp(&a[6]));
            rows.truncate(MAX_FRAME_CONTACTS);
        }
        if self.ended_at.is_some() {
            return;
        }
        let finite = |x: &[f32]| x.iter().all(|v| v.is_finite());
        let showable = poses.iter().all(|p| finite(p))
            && nodes.iter().all(|m| m.iter().all(|n| finite(n)))
            && rows.iter().all(|c| finite(c));
        if !showable {
            self.ended_at = Some(k);
            self.trajectory.notes.push(format!(
                "frames end before step {k}: the state left the range of f32 there (the run blew up); \
                 the record keeps every step's metrics"
            ));
            return;
        }
        self.trajectory.frames.push(Frame {
            step: k,
            t: world.time as f32,
            poses,
            nodes,
            contacts: rows,
            contacts_left_out: left_out,
            metrics,
        });
    }

    /// The trajectory recorded so far.
    pub fn finish(self) -> Trajectory {
        self.trajectory
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_tetrahedron_has_four_outward_faces() {
        let x = [Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()];
        let tris = boundary_triangles(&[[0, 1, 2, 3]]);
        assert_eq!(tris.len(), 4);
        let centre = x.iter().sum::<Vector3<f64>>() / 4.0;
        for t in tris {
            let n = (x[t[1]] - x[t[0]]).cross(&(x[t[2]] - x[t[0]]));
            assert!(n.dot(&(x[t[0]] - centre)) > 0.0, "face {t:?} points inwards");
        }
    }

    #[test]
    fn a_shared_face_is_not_on_the_boundary() {
        // two tetrahedra sharing face (1, 2, 3)
        let tris = boundary_triangles(&[[0, 1, 2, 3], [4, 1, 3, 2]]);
        assert_eq!(tris.len(), 6);
        assert!(tris.iter().all(|t| { t.contains(&0) || t.contains(&4) }));
    }

    /// A run that blows up (a body beyond the range of `f32`) keeps its frames up to the last
    /// finite one, says where they end, and its sidecar stays one the page can show.
    #[test]
    fn frames_end_where_the_state_leaves_f32() {
        use crate::model::{Material, RigidBody};
        let mut w = World::new();
        w.bodies.push(RigidBody::new("ball", Shape::Sphere { radius: 0.1 }, 1.0, Vector3::z(), Material::rigid(0.5)));
        let mut rec = Recorder::new(&w, 0.01, 4, 1);
        let empty = ContactSet::default();
        rec.record(0, &w, &empty, None, FrameMetrics::default());
        w.bodies[0].position = Vector3::new(0.0, 0.0, 1e40);
        rec.record(1, &w, &empty, None, FrameMetrics::default());
        w.bodies[0].position = Vector3::z();
        rec.record(2, &w, &empty, None, FrameMetrics::default());
        let t = rec.finish();
        assert_eq!(t.frames.iter().map(|f| f.step).collect::<Vec<_>>(), vec![0], "no frame from the blow-up on");
        assert!(t.notes.iter().any(|n| n.contains("before step 1")), "{:?}", t.notes);
        t.validate().expect("a sidecar the page can show");
    }

    #[test]
    fn the_default_stride_is_sixty_frames_per_second_capped() {
        let w = World::new();
        assert_eq!(TrajectoryOption::Auto.stride(600, 0.001, &w), Some(17));
        assert_eq!(TrajectoryOption::Auto.stride(100, 0.01, &w), Some(2));
        assert_eq!(TrajectoryOption::Auto.stride(1_000_000, 0.01, &w), Some(834));
        assert_eq!(TrajectoryOption::Off.stride(100, 0.01, &w), None);
        assert_eq!(TrajectoryOption::parse("stride 5"), Ok(TrajectoryOption::Stride(5)));
        assert_eq!(TrajectoryOption::parse("stride=3"), Ok(TrajectoryOption::Stride(3)));
        assert_eq!(TrajectoryOption::parse("off"), Ok(TrajectoryOption::Off));
        assert!(TrajectoryOption::parse("stride 0").is_err());
    }
}
