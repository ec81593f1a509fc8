//! Trajectory sidecars: the motion of one run for the replay page, in a gzip-compressed JSON file
//! next to the run record (`<record stem>.traj.json.gz`, schema [`TRAJECTORY_SCHEMA`]). The record
//! itself does not change: the sidecar is found by its name ([`sidecar_name`]).
//!
//! A sidecar holds the scene's geometry once (bodies as primitive parts in their body frames,
//! static colliders, the boundary triangles of deformable bodies) and then one [`Frame`] per
//! recorded step: every body's pose, the surface nodes of every mesh, the contacts of the step's
//! problem with the normal impulse the solver gave them, and the step's metrics. Numbers are
//! stored as `f32` (7 significant digits: sub-micrometre on a metre scene), which keeps the text
//! short; the compression does the rest.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Schema tag of a sidecar ([`Trajectory::schema`]).
pub const TRAJECTORY_SCHEMA: &str = "signorini.replay/1";

/// Suffix replacing a record's `.json` in its sidecar's name.
pub const SIDECAR_SUFFIX: &str = ".traj.json.gz";

/// Largest sidecar (decompressed) a reader accepts, bytes.
pub const MAX_SIDECAR_BYTES: u64 = 512 << 20;

/// The sidecar's file name of the record named `record_name` (`slope__pgs.json` →
/// `slope__pgs.traj.json.gz`).
pub fn sidecar_name(record_name: &str) -> String {
    format!("{}{SIDECAR_SUFFIX}", record_name.strip_suffix(".json").unwrap_or(record_name))
}

/// The sidecar path of the record at `record_path`.
pub fn sidecar_path(record_path: &Path) -> PathBuf {
    let name = record_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    record_path.with_file_name(sidecar_name(&name))
}

/// A primitive shape in its own frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PartShape {
    /// Sphere (m).
    Sphere {
        /// Radius.
        radius: f32,
    },
    /// Box with half extents along the part's x, y, z axes (m).
    Box {
        /// Half extents.
        half_extents: [f32; 3],
    },
    /// Solid cylinder along the part's y axis (m).
    Cylinder {
        /// Radius.
        radius: f32,
        /// Half its length.
        half_height: f32,
    },
    /// Capsule along the part's y axis (m): a cylinder with hemispherical ends (reference engines).
    Capsule {
        /// Radius.
        radius: f32,
        /// Half the length of the cylindrical part.
        half_height: f32,
    },
}

/// A primitive placed in a body frame (or, for a static collider, in the world).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// Its shape.
    pub shape: PartShape,
    /// Position of its centre (m).
    pub pos: [f32; 3],
    /// Orientation as a unit quaternion `[x, y, z, w]`.
    pub rot: [f32; 4],
}

/// A rigid body: its name and its parts in the body frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyGeometry {
    /// Name in the scene.
    pub name: String,
    /// Primitive parts, body frame.
    pub parts: Vec<Part>,
}

/// A static collider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StaticGeometry {
    /// The plane `normal · x = offset` (the solid below it).
    Plane {
        /// Name in the scene.
        name: String,
        /// Unit outward normal.
        normal: [f32; 3],
        /// Offset along the normal (m).
        offset: f32,
    },
    /// A fixed primitive (a box wall, a sphere, a point of radius 0).
    Solid {
        /// Name in the scene.
        name: String,
        /// The primitive, in world coordinates.
        part: Part,
    },
}

/// The boundary surface of a deformable body: triangles over its surface nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurfaceMesh {
    /// Name in the scene.
    pub name: String,
    /// Triangles, as indices into the frame's node list of this mesh ([`Frame::nodes`]), counter-
    /// clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

/// The metrics of a frame's step shown under the replay (NaN, written as `null`: not measured).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrameMetrics {
    /// Largest penetration after the step (m).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub penetration_max: f64,
    /// Natural-map residual of the step, absolute (N s).
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub natmap_abs_l2: f64,
    /// The same, Siconos-normalised.
    #[serde(deserialize_with = "crate::nullable_f64")]
    pub natmap_rel_l2: f64,
    /// Solver iterations.
    pub iterations: usize,
    /// Whether the solver stopped without converging; `None` where the solver does not report it
    /// (a reference engine's run: MuJoCo gives no convergence flag).
    #[serde(default)]
    pub unconverged: Option<bool>,
}

/// One recorded step: the state at its end and what the solver did in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Index of the step (this frame's poses are where it ended).
    pub step: usize,
    /// Simulated time at the end of the step (s).
    pub t: f32,
    /// Pose of every body, `[x, y, z, qx, qy, qz, qw]`, in [`Trajectory::bodies`] order.
    pub poses: Vec<[f32; 7]>,
    /// Node positions of every mesh of [`Trajectory::meshes`], in its order.
    pub nodes: Vec<Vec<[f32; 3]>>,
    /// The contacts detected at the end of the step: `[px, py, pz, nx, ny, nz, normal impulse
    /// (N s) the step gave the same contact (0 for a new one), penetration (m, max(0, −gap))]`.
    pub contacts: Vec<[f32; 8]>,
    /// Contacts of the step left out by [`MAX_FRAME_CONTACTS`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub contacts_left_out: usize,
    /// The step's metrics.
    pub metrics: FrameMetrics,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Most contacts kept per frame (the ones with the largest normal impulse).
pub const MAX_FRAME_CONTACTS: usize = 2000;

/// A run's trajectory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// [`TRAJECTORY_SCHEMA`].
    pub schema: String,
    /// Case label.
    pub case: String,
    /// Solver (or reference engine) name.
    pub solver: String,
    /// Time step of the run (s).
    pub dt: f64,
    /// Steps between two frames.
    pub stride: usize,
    /// Steps the run was to take.
    pub steps: usize,
    /// Rigid bodies.
    pub bodies: Vec<BodyGeometry>,
    /// Static colliders.
    pub statics: Vec<StaticGeometry>,
    /// Deformable surfaces.
    pub meshes: Vec<SurfaceMesh>,
    /// Recorded frames, by step.
    pub frames: Vec<Frame>,
    /// What the page should say about where the motion and contacts come from (a reference
    /// engine's trajectory, graded by signorini); empty for a signorini run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Why a sidecar could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrajectoryError {
    /// File system or compression error.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a sidecar of this schema.
    #[error("{}: not a {TRAJECTORY_SCHEMA} sidecar: {why}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        why: String,
    },
}

impl Trajectory {
    /// The gzip-compressed JSON of the sidecar.
    pub fn to_gzip(&self) -> std::io::Result<Vec<u8>> {
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&json)?;
        enc.finish()
    }

    /// Writes the sidecar atomically ([`crate::write_atomic`]) at `path`.
    pub fn write_atomic(&self, path: &Path) -> Result<(), TrajectoryError> {
        let io = |source| TrajectoryError::Io { path: path.to_path_buf(), source };
        crate::write_atomic(path, &self.to_gzip().map_err(io)?).map_err(io)
    }

    /// Reads a sidecar, checking its schema tag; refuses more than [`MAX_SIDECAR_BYTES`]
    /// decompressed.
    pub fn read(path: &Path) -> Result<Trajectory, TrajectoryError> {
        let io = |source| TrajectoryError::Io { path: path.to_path_buf(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(file).take(MAX_SIDECAR_BYTES + 1).read_to_end(&mut json).map_err(io)?;
        if json.len() as u64 > MAX_SIDECAR_BYTES {
            return Err(TrajectoryError::Format {
                path: path.to_path_buf(),
                why: format!("more than {MAX_SIDECAR_BYTES} bytes decompressed"),
            });
        }
        let t: Trajectory = serde_json::from_slice(&json)
            .map_err(|e| TrajectoryError::Format { path: path.to_path_buf(), why: e.to_string() })?;
        if t.schema != TRAJECTORY_SCHEMA {
            return Err(TrajectoryError::Format { path: path.to_path_buf(), why: format!("schema '{}'", t.schema) });
        }
        Ok(t)
    }
}

/// Largest deviation from 1 of a stored quaternion's norm ([`Trajectory::validate`]): `f32`
/// rounding of a unit quaternion is far below it.
pub const QUATERNION_NORM_TOLERANCE: f32 = 1e-3;

fn finite(xs: &[f32]) -> bool {
    xs.iter().all(|x| x.is_finite())
}

fn unit(q: &[f32]) -> bool {
    finite(q) && (q.iter().map(|x| x * x).sum::<f32>().sqrt() - 1.0).abs() <= QUATERNION_NORM_TOLERANCE
}

fn part_problem(p: &Part) -> Option<String> {
    let sizes: Vec<f32> = match p.shape {
        PartShape::Sphere { radius } => vec![radius],
        PartShape::Box { half_extents } => half_extents.to_vec(),
        PartShape::Cylinder { radius, half_height } | PartShape::Capsule { radius, half_height } => {
            vec![radius, half_height]
        }
    };
    if !sizes.iter().all(|x| x.is_finite() && *x >= 0.0) {
        return Some(format!("a size is negative or not finite: {sizes:?}"));
    }
    if !finite(&p.pos) || !unit(&p.rot) {
        return Some(format!("placement is not a position and a unit quaternion: {:?} {:?}", p.pos, p.rot));
    }
    None
}

impl Trajectory {
    /// Checks what the replay page's loader (`reports/assets/replay.js`) relies on, naming the first
    /// problem: the schema tag; a positive `dt` and `stride`; at least one frame; frames in
    /// increasing step order, each before `steps`; every body with at least one part, every part
    /// of non-negative finite size and placed by a unit quaternion; plane normals of unit length;
    /// every mesh's triangles over the node count its frames all have; in every frame one finite
    /// pose (unit quaternion) per body, one finite node list per mesh, and contacts of finite
    /// numbers with a unit normal, non-negative penetration and finite impulse.
    pub fn validate(&self) -> Result<(), String> {
        if self.schema != TRAJECTORY_SCHEMA {
            return Err(format!("schema '{}'", self.schema));
        }
        if !(self.dt.is_finite() && self.dt > 0.0) || self.stride == 0 {
            return Err(format!("dt {} and stride {} must be positive", self.dt, self.stride));
        }
        let first = self.frames.first().ok_or("no frame")?;
        for b in &self.bodies {
            if b.parts.is_empty() {
                return Err(format!("body '{}' has no part to draw", b.name));
            }
            if let Some(why) = b.parts.iter().find_map(part_problem) {
                return Err(format!("body '{}': {why}", b.name));
            }
        }
        for s in &self.statics {
            match s {
                StaticGeometry::Plane { name, normal, offset } => {
                    if !unit(normal) || !offset.is_finite() {
                        return Err(format!("plane '{name}': normal {normal:?} or offset {offset} is not valid"));
                    }
                }
                StaticGeometry::Solid { name, part } => {
                    if let Some(why) = part_problem(part) {
                        return Err(format!("static '{name}': {why}"));
                    }
                }
            }
        }
        if first.nodes.len() != self.meshes.len() {
            return Err(format!(
                "frame 0 lists nodes of {} meshes, the scene has {}",
                first.nodes.len(),
                self.meshes.len()
            ));
        }
        for (m, nodes) in self.meshes.iter().zip(&first.nodes) {
            if let Some(t) = m.triangles.iter().find(|t| t.iter().any(|&i| i as usize >= nodes.len())) {
                return Err(format!("mesh '{}': triangle {t:?} beyond its {} nodes", m.name, nodes.len()));
            }
        }
        let mut previous: Option<usize> = None;
        for f in &self.frames {
            let at = |why: String| format!("frame of step {}: {why}", f.step);
            if previous.is_some_and(|p| f.step <= p) || f.step >= self.steps.max(1) {
                return Err(at(format!("out of order or beyond the {} steps", self.steps)));
            }
            previous = Some(f.step);
            if !f.t.is_finite() {
                return Err(at("time is not finite".into()));
            }
            if f.poses.len() != self.bodies.len() {
                return Err(at(format!("{} poses for {} bodies", f.poses.len(), self.bodies.len())));
            }
            if let Some(p) = f.poses.iter().find(|p| !finite(&p[..3]) || !unit(&p[3..])) {
                return Err(at(format!("pose {p:?} is not a position and a unit quaternion")));
            }
            if f.nodes.len() != first.nodes.len()
                || f.nodes.iter().zip(&first.nodes).any(|(a, b)| a.len() != b.len() || !a.iter().all(|n| finite(n)))
            {
                return Err(at("mesh nodes differ in count from frame 0's or are not finite".into()));
            }
            if let Some(c) = f.contacts.iter().find(|c| !finite(&c[..]) || !unit(&c[3..6]) || c[7] < 0.0) {
                return Err(at(format!("contact {c:?} is not a point, a unit normal, an impulse and a penetration")));
            }
        }
        Ok(())
    }

    /// [`Trajectory::read`] and [`Trajectory::validate`]: a sidecar the replay page can show.
    pub fn read_valid(path: &Path) -> Result<Trajectory, TrajectoryError> {
        let t = Self::read(path)?;
        t.validate().map_err(|why| TrajectoryError::Format { path: path.to_path_buf(), why })?;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecar_names_follow_the_record() {
        assert_eq!(sidecar_name("slope__pgs.json"), "slope__pgs.traj.json.gz");
        assert_eq!(
            sidecar_path(Path::new("runs/x/a__b-1234abcd.json")),
            Path::new("runs/x/a__b-1234abcd.traj.json.gz")
        );
    }

    fn sample() -> Trajectory {
        Trajectory {
            schema: TRAJECTORY_SCHEMA.into(),
            case: "slope".into(),
            solver: "pgs".into(),
            dt: 0.01,
            stride: 2,
            steps: 10,
            bodies: vec![BodyGeometry {
                name: "box".into(),
                parts: vec![Part {
                    shape: PartShape::Box { half_extents: [0.1; 3] },
                    pos: [0.0; 3],
                    rot: [0., 0., 0., 1.],
                }],
            }],
            statics: vec![StaticGeometry::Plane { name: "ground".into(), normal: [0., 0., 1.], offset: 0.0 }],
            meshes: vec![SurfaceMesh { name: "bar".into(), triangles: vec![[0, 1, 2]] }],
            frames: [0, 2]
                .map(|step| Frame {
                    step,
                    poses: vec![[0., 0., 0.1, 0., 0., 0., 1.]],
                    nodes: vec![vec![[0.; 3], [1., 0., 0.], [0., 1., 0.]]],
                    contacts: vec![[0., 0., 0., 0., 0., 1., 0.5, 1e-4]],
                    ..Default::default()
                })
                .to_vec(),
            notes: vec![],
        }
    }

    /// What the page's loader relies on is checked, each problem named.
    #[test]
    fn validation_names_what_the_page_could_not_show() {
        assert_eq!(sample().validate(), Ok(()));
        type Breaks = fn(&mut Trajectory);
        let cases: [(&str, Breaks); 11] = [
            ("no frame", |t| t.frames.clear()),
            ("schema", |t| t.schema = "signorini.replay/0".into()),
            ("must be positive", |t| t.dt = 0.0),
            ("no part to draw", |t| t.bodies[0].parts.clear()),
            ("a size is negative", |t| t.bodies[0].parts[0].shape = PartShape::Sphere { radius: -1.0 }),
            ("plane 'ground'", |t| {
                t.statics[0] = StaticGeometry::Plane { name: "ground".into(), normal: [0., 0., 2.], offset: 0. }
            }),
            ("beyond its 3 nodes", |t| t.meshes[0].triangles[0][2] = 3),
            ("out of order", |t| t.frames[1].step = 0),
            ("1 poses for 2 bodies", |t| {
                let b = t.bodies[0].clone();
                t.bodies.push(b)
            }),
            ("not a position and a unit quaternion", |t| t.frames[1].poses[0][6] = 0.5),
            ("not a point, a unit normal", |t| t.frames[0].contacts[0][7] = -1e-3),
        ];
        for (needle, break_it) in cases {
            let mut t = sample();
            break_it(&mut t);
            let e = t.validate().unwrap_err();
            assert!(e.contains(needle), "{needle}: {e}");
        }
        let mut t = sample();
        t.frames[1].nodes[0].pop();
        assert!(t.validate().unwrap_err().contains("mesh nodes differ"));
        t = sample();
        t.frames[1].step = 10;
        assert!(t.validate().unwrap_err().contains("beyond the 10 steps"));
    }

    #[test]
    fn a_sidecar_round_trips_and_a_wrong_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let t = sample();
        let p = dir.path().join("slope__pgs.traj.json.gz");
        t.write_atomic(&p).unwrap();
        assert_eq!(Trajectory::read(&p).unwrap(), t);
        assert_eq!(Trajectory::read_valid(&p).unwrap(), t);
        Trajectory { frames: vec![], ..t.clone() }.write_atomic(&p).unwrap();
        let e = Trajectory::read_valid(&p).unwrap_err();
        assert!(matches!(&e, TrajectoryError::Format { why, .. } if why == "no frame"), "{e}");
        let bad = Trajectory { schema: "other/1".into(), ..t };
        bad.write_atomic(&p).unwrap();
        assert!(matches!(Trajectory::read(&p), Err(TrajectoryError::Format { .. })));
        std::fs::write(&p, b"not gzip").unwrap();
        assert!(matches!(Trajectory::read(&p), Err(TrajectoryError::Io { .. })));
    }
}
