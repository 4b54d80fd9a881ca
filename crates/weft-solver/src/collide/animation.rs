//! Animated triangle-mesh colliders (DESIGN §6; issue 23 item 6): a closed
//! body of fixed topology whose vertices move, given as a sequence of poses
//! (frames) sampled at a fixed rate, e.g. one OBJ file per frame exported
//! from an animation package or written by
//! `weft_io::mannequin::animate`.
//!
//! Between frames `k` and `k + 1` (times `k / fps` and `(k + 1) / fps`)
//! every vertex moves on a straight line at constant velocity
//! `(p_{k+1} - p_k) · fps`, so the surface at time `t` is the linear
//! interpolation of the two frames and its velocity (what friction acts
//! against) is that difference quotient. Before the first frame the body
//! rests in frame 0, after the last in the last frame, both with zero
//! velocity.
//!
//! The solver poses the body once per time step, at the step's end time
//! (`Assembler::begin_step` calls [`super::Collider::advance_to`]); the
//! tangent planes of that step carry the surface velocity of the point they
//! were taken at ([`super::TangentPlane::velocity`]).

use super::error::CollideError;
use super::mesh::{TriangleMesh, read_obj};
use nalgebra::Vector3;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A closed triangle mesh whose vertices follow a sequence of frames.
#[derive(Clone, Debug)]
pub struct MeshAnimation {
    /// Frame 0, checked closed and oriented outward; every pose shares its
    /// topology.
    rest: TriangleMesh,
    /// Per frame, the positions (m, local frame) in `rest`'s vertex order.
    frames: Vec<Vec<Vector3<f64>>>,
    /// Frames per second.
    fps: f64,
    /// Simulated time (s) at which frame 0 is shown.
    start: f64,
}

impl MeshAnimation {
    /// An animation from `frames` (each a list of vertex positions, m, the
    /// same count and order in every frame) of the mesh `triangles`
    /// (indices into a frame), `fps` frames per second. Frame 0 is checked
    /// as [`TriangleMesh::from_triangles`] checks a still mesh (closed,
    /// oriented, duplicate positions merged); the other frames follow its
    /// merged vertex order.
    ///
    /// # Errors
    /// [`CollideError::InvalidShape`]: no frames, `fps` not finite and > 0, a
    /// frame whose vertex count differs from frame 0's (named by index) or
    /// with a non-finite position; frame 0's errors of
    /// [`TriangleMesh::from_triangles`].
    pub fn from_frames(
        name: &str,
        frames: &[Vec<Vector3<f64>>],
        triangles: &[[u32; 3]],
        fps: f64,
    ) -> Result<Self, CollideError> {
        let bad = |reason: String| CollideError::InvalidShape {
            shape: "mesh animation",
            reason: format!("{name}: {reason}"),
        };
        if !(fps > 0.0 && fps.is_finite()) {
            return Err(bad(format!(
                "expected finite frames per second > 0, got {fps}"
            )));
        }
        let Some(first) = frames.first() else {
            return Err(bad("has no frames (expected at least one pose)".into()));
        };
        for (f, frame) in frames.iter().enumerate() {
            if frame.len() != first.len() {
                return Err(bad(format!(
                    "frame {f} has {} vertices, frame 0 has {} (every frame must be the same \
                     mesh)",
                    frame.len(),
                    first.len()
                )));
            }
            if let Some(i) = frame.iter().position(|v| !v.iter().all(|c| c.is_finite())) {
                return Err(bad(format!("frame {f}: vertex {i} is not finite")));
            }
        }
        let rest = TriangleMesh::from_triangles(name, first, triangles)?;
        // Frame 0's vertex i becomes rest vertex `map[i]` (merging moves
        // indices); found by exact position.
        let key = |v: &Vector3<f64>| [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()];
        let rest_index: HashMap<[u64; 3], usize> = rest
            .vertices()
            .iter()
            .enumerate()
            .map(|(i, v)| (key(v), i))
            .collect();
        let n = rest.vertex_count();
        let mut source = vec![usize::MAX; n];
        for (i, v) in first.iter().enumerate() {
            if let Some(&r) = rest_index.get(&key(v))
                && source[r] == usize::MAX
            {
                source[r] = i;
            }
        }
        if let Some(r) = source.iter().position(|&i| i == usize::MAX) {
            return Err(bad(format!(
                "rest vertex {r} has no source vertex in frame 0 (internal: merge map)"
            )));
        }
        let frames = frames
            .iter()
            .map(|frame| source.iter().map(|&i| frame[i]).collect())
            .collect();
        Ok(MeshAnimation {
            rest,
            frames,
            fps,
            start: 0.0,
        })
    }

    /// An animation from the OBJ files of `dir`, one frame per file in
    /// file-name order (`frame_0000.obj`, `frame_0001.obj`, ...; files not
    /// ending in `.obj` are ignored), each position `v` mapped to
    /// `scale · v + translation` (m). Frame 0's faces give the topology;
    /// every file must have the same vertices in the same order (the export
    /// of one mesh, e.g. a skinned body).
    ///
    /// # Errors
    /// [`CollideError::ObjRead`] if `dir` cannot be listed or holds no OBJ
    /// file, and each file's errors of [`TriangleMesh::from_obj`] (the
    /// file named); [`Self::from_frames`]'s errors, with the frame's file
    /// named when its vertex count differs.
    pub fn from_obj_sequence(
        dir: impl AsRef<Path>,
        fps: f64,
        scale: f64,
        translation: Vector3<f64>,
    ) -> Result<Self, CollideError> {
        let dir = dir.as_ref();
        let read_err = |reason: String| CollideError::ObjRead {
            path: dir.to_owned(),
            reason,
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| read_err(format!("cannot list the animation's frames: {e}")))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case("obj")))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(read_err(
                "holds no .obj file (expected one OBJ file per animation frame)".into(),
            ));
        }
        let (first, triangles) = read_obj(&files[0], scale, translation)?;
        let mut frames = vec![first];
        for f in &files[1..] {
            let (v, _) = read_obj(f, scale, translation)?;
            if v.len() != frames[0].len() {
                return Err(CollideError::InvalidShape {
                    shape: "mesh animation",
                    reason: format!(
                        "{}: {} vertices, but the first frame {} has {} (every frame must be \
                         the same mesh)",
                        f.display(),
                        v.len(),
                        files[0].display(),
                        frames[0].len()
                    ),
                });
            }
            frames.push(v);
        }
        // Named by its first frame, whose faces and closedness are checked.
        Self::from_frames(&files[0].display().to_string(), &frames, &triangles, fps)
    }

    /// The same animation played from simulated time `t0` (s) on: frame `k`
    /// is shown at `t0 + k / fps`, the body rests in frame 0 before `t0`.
    /// (A drape plays it after the garment has settled on the rest pose.)
    pub fn starting_at(mut self, t0: f64) -> Self {
        self.start = t0;
        self
    }

    /// Simulated time (s) at which frame 0 is shown ([`Self::starting_at`];
    /// 0 by default).
    pub fn start(&self) -> f64 {
        self.start
    }

    /// Frame 0 (the rest pose), checked closed and oriented outward.
    pub fn rest(&self) -> &TriangleMesh {
        &self.rest
    }

    /// Number of frames.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Frames per second.
    pub fn fps(&self) -> f64 {
        self.fps
    }

    /// Time from frame 0 to the last frame, `(frames - 1) / fps` (s).
    pub fn duration(&self) -> f64 {
        (self.frames.len() - 1) as f64 / self.fps
    }

    /// Vertex positions (m) and velocities (m/s) at simulated time `t` (s),
    /// in [`Self::rest`]'s vertex order: linear between frames, constant
    /// velocity within a frame interval, at rest before [`Self::start`] and
    /// after `start +` [`Self::duration`].
    pub fn state_at(&self, t: f64) -> (Vec<Vector3<f64>>, Vec<Vector3<f64>>) {
        let s = (t - self.start) * self.fps;
        let last = self.frames.len() - 1;
        if s.is_nan() || s <= 0.0 || last == 0 {
            return (
                self.frames[0].clone(),
                vec![Vector3::zeros(); self.frames[0].len()],
            );
        }
        if s >= last as f64 {
            return (
                self.frames[last].clone(),
                vec![Vector3::zeros(); self.frames[last].len()],
            );
        }
        let k = (s.floor() as usize).min(last - 1);
        let a = s - k as f64;
        let (f0, f1) = (&self.frames[k], &self.frames[k + 1]);
        let x = f0.iter().zip(f1).map(|(p, q)| p + a * (q - p)).collect();
        let v = f0.iter().zip(f1).map(|(p, q)| (q - p) * self.fps).collect();
        (x, v)
    }

    /// The body at time `t` (s): [`Self::state_at`] as a posed mesh whose
    /// tangent planes carry the surface velocity.
    pub fn pose_at(&self, t: f64) -> TriangleMesh {
        let mut mesh = self.rest.clone();
        self.pose(t, &mut mesh);
        mesh
    }

    /// Moves `mesh`, a pose of this animation (from [`Self::pose_at`]), to
    /// time `t` (s) in place ([`TriangleMesh::set_pose`]: the BVH refitted,
    /// not rebuilt).
    pub fn pose(&self, t: f64, mesh: &mut TriangleMesh) {
        let (x, v) = self.state_at(t);
        mesh.set_pose(&x, v).expect(
            "a pose of a checked animation has the rest pose's vertex count and finite positions",
        );
    }
}
