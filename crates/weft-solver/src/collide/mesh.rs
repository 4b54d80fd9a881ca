//! Closed triangle-mesh colliders with a signed distance (DESIGN §6).
//!
//! Choice: the distance query uses the `parry3d-f64` `TriMesh` (a BVH over
//! the triangles, exact closest point on the closest triangle) and the sign
//! is parry's angle-weighted pseudo-normal test (Bærentzen & Aanæs 2005,
//! `TriMeshFlags::ORIENTED`): a point is inside when `(x - p) · n_ψ ≤ 0` with
//! `p` its closest surface point and `n_ψ` the pseudo-normal of the face,
//! edge or vertex that `p` lies on. This is exact for closed, consistently
//! oriented (watertight) meshes, which is why the loader rejects any other.
//!
//! - `φ(x) = ±|x - p|` (m), `-` inside;
//! - `∇φ = (x - p)/φ`, the unit outward normal (for `x` exactly on the
//!   surface, the normalised pseudo-normal of the feature);
//! - `φ` is the exact distance to the tessellated surface; it is `C¹` away
//!   from the medial axis (inside the body and in the cones over concave
//!   edges).
//!
//! Loading: OBJ via `tobj` (faces triangulated as fans, points and lines
//! ignored, all objects/groups of the file concatenated, texture coordinates,
//! normals and materials ignored), positions mapped by `x = scale · v +
//! translation` (both SI, the scale turning file units into metres),
//! duplicate positions merged, degenerate triangles dropped. A closed mesh
//! whose signed volume is negative (faces wound clockwise seen from outside)
//! is flipped so that normals point outward; that is the only repair made.

use super::error::CollideError;
use super::shapes::Sdf;
use nalgebra::Vector3;
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::query::PointQueryWithLocation;
use parry3d_f64::shape::{TriMesh, TriMeshFlags, TrianglePointLocation};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

fn to_p(v: &Vector3<f64>) -> PVec {
    PVec::new(v.x, v.y, v.z)
}

fn from_p(v: PVec) -> Vector3<f64> {
    Vector3::new(v.x, v.y, v.z)
}

/// A closed, outward-oriented triangle mesh with a BVH for signed-distance
/// queries (in its local frame; see [`super::Collider`] for motion).
#[derive(Clone)]
pub struct TriangleMesh {
    name: String,
    mesh: TriMesh,
    volume: f64,
    /// Per vertex, the velocity of the surface (m/s, local frame) for a
    /// mesh posed from an animation ([`super::MeshAnimation`]); empty for a
    /// still mesh.
    velocities: Vec<Vector3<f64>>,
}

impl std::fmt::Debug for TriangleMesh {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriangleMesh")
            .field("name", &self.name)
            .field("vertices", &self.vertex_count())
            .field("triangles", &self.triangle_count())
            .field("volume", &self.volume)
            .finish()
    }
}

impl TriangleMesh {
    /// Loads a closed mesh from the OBJ file `path`, mapping each position
    /// `v` of the file to `scale · v + translation` (m).
    ///
    /// # Errors
    /// - [`CollideError::InvalidShape`]: `scale` not finite and > 0, or a
    ///   non-finite translation;
    /// - [`CollideError::ObjRead`]: the file cannot be opened or read;
    /// - [`CollideError::ObjParse`]: a malformed line (the file, the line
    ///   number and the parser's complaint, e.g. a position that is not three
    ///   numbers or a face naming a vertex the file does not have);
    /// - [`CollideError::EmptyMesh`]: no faces, or no enclosed volume;
    /// - [`CollideError::MeshNotClosed`]: boundary or non-manifold edges, or
    ///   inconsistently oriented neighbouring faces.
    pub fn from_obj(
        path: impl AsRef<Path>,
        scale: f64,
        translation: Vector3<f64>,
    ) -> Result<Self, CollideError> {
        let path = path.as_ref();
        let (vertices, triangles) = read_obj(path, scale, translation)?;
        Self::from_triangles(&path.display().to_string(), &vertices, &triangles)
    }

    /// Builds a mesh from vertex positions (m) and triangles (vertex indices,
    /// counter-clockwise seen from outside; a mesh wound the other way is
    /// flipped). `name` is used in error messages and [`Self::name`].
    ///
    /// # Errors
    /// [`CollideError::EmptyMesh`] (no triangles, no volume),
    /// [`CollideError::InvalidShape`] (index out of range, non-finite
    /// vertex), [`CollideError::MeshNotClosed`].
    pub fn from_triangles(
        name: &str,
        vertices: &[Vector3<f64>],
        triangles: &[[u32; 3]],
    ) -> Result<Self, CollideError> {
        let empty = |reason: &str| CollideError::EmptyMesh {
            name: name.to_owned(),
            reason: reason.to_owned(),
        };
        if triangles.is_empty() {
            return Err(empty("has no triangles (expected a closed surface)"));
        }
        if let Some((i, v)) = vertices
            .iter()
            .enumerate()
            .find(|(_, v)| !v.iter().all(|c| c.is_finite()))
        {
            return Err(CollideError::InvalidShape {
                shape: "triangle mesh",
                reason: format!("{name}: vertex {i} is not finite: {:?}", v.as_slice()),
            });
        }
        if let Some((i, t)) = triangles
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&k| k as usize >= vertices.len()))
        {
            return Err(CollideError::InvalidShape {
                shape: "triangle mesh",
                reason: format!(
                    "{name}: triangle {i} {t:?} names a vertex beyond the {} vertices",
                    vertices.len()
                ),
            });
        }
        // Merge duplicate positions and drop index-degenerate triangles.
        let cleaned = TriMesh::with_flags(
            vertices.iter().map(to_p).collect(),
            triangles.to_vec(),
            TriMeshFlags::MERGE_DUPLICATE_VERTICES | TriMeshFlags::DELETE_DEGENERATE_TRIANGLES,
        )
        .map_err(|e| empty(&format!("has no usable triangles ({e})")))?;
        let verts: Vec<Vector3<f64>> = cleaned.vertices().iter().map(|v| from_p(*v)).collect();
        let mut tris: Vec<[u32; 3]> = cleaned.indices().to_vec();
        if tris.is_empty() {
            return Err(empty("has only degenerate triangles"));
        }
        check_closed(name, &verts, &tris)?;
        let volume: f64 = tris
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|k| verts[k as usize]);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum();
        let (lo, hi) = verts.iter().fold(
            (
                Vector3::repeat(f64::INFINITY),
                Vector3::repeat(f64::NEG_INFINITY),
            ),
            |(lo, hi), v| (lo.inf(v), hi.sup(v)),
        );
        let diag = (hi - lo).norm();
        if volume.abs() <= 1e-12 * diag.powi(3) {
            return Err(empty(&format!(
                "encloses no volume (signed volume {volume:e} m^3): expected a closed solid"
            )));
        }
        if volume < 0.0 {
            for t in &mut tris {
                t.swap(1, 2);
            }
        }
        let mesh = TriMesh::with_flags(
            verts.iter().map(to_p).collect(),
            tris,
            TriMeshFlags::ORIENTED,
        )
        .map_err(|e| empty(&format!("could not be built ({e})")))?;
        Ok(TriangleMesh {
            name: name.to_owned(),
            mesh,
            volume: volume.abs(),
            velocities: Vec::new(),
        })
    }

    /// Moves the vertices to `vertices` (m, local frame, in the order of
    /// [`Self::vertices`]) moving at `velocities` (m/s, same order; empty
    /// for a still pose): a pose of an animated body of fixed topology
    /// ([`super::MeshAnimation`]). The topology and orientation stay this
    /// mesh's (checked closed when it was built); the BVH is refitted in
    /// place (its tree kept, `O(n)`) and the pseudo-normals recomputed.
    ///
    /// # Errors
    /// [`CollideError::InvalidShape`] if the vertex or velocity count
    /// differs from this mesh's vertex count, or a position is not finite
    /// (the mesh is then unchanged).
    pub fn set_pose(
        &mut self,
        vertices: &[Vector3<f64>],
        velocities: Vec<Vector3<f64>>,
    ) -> Result<(), CollideError> {
        let n = self.vertex_count();
        let bad = |reason: String| CollideError::InvalidShape {
            shape: "triangle mesh",
            reason: format!("{}: {reason}", self.name),
        };
        if vertices.len() != n || !(velocities.is_empty() || velocities.len() == n) {
            return Err(bad(format!(
                "a pose needs {n} vertices and {n} velocities (or none), got {} and {}",
                vertices.len(),
                velocities.len()
            )));
        }
        if let Some(i) = vertices
            .iter()
            .position(|v| !v.iter().all(|c| c.is_finite()))
        {
            return Err(bad(format!("posed vertex {i} is not finite")));
        }
        self.mesh.update_vertices(|vs| {
            for (dst, src) in vs.iter_mut().zip(vertices) {
                *dst = to_p(src);
            }
        });
        self.volume = self
            .triangles()
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|k| vertices[k as usize]);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum::<f64>()
            .abs();
        self.velocities = velocities;
        Ok(())
    }

    /// Velocity (m/s, local frame) of the surface point `p` on triangle
    /// `tri` (barycentric interpolation of the vertex velocities); zero for
    /// a still mesh.
    fn surface_velocity(&self, tri: u32, p: &Vector3<f64>) -> Vector3<f64> {
        if self.velocities.is_empty() {
            return Vector3::zeros();
        }
        let idx = self.mesh.indices()[tri as usize];
        let [a, b, c] = idx.map(|k| from_p(self.mesh.vertices()[k as usize]));
        let w = barycentric(&a, &b, &c, p);
        idx.iter()
            .zip(w)
            .map(|(&k, wk)| wk * self.velocities[k as usize])
            .sum()
    }

    /// Velocity (m/s, local frame) of the surface point closest to `x`:
    /// zero for a still mesh, the interpolated vertex velocity of a pose
    /// ([`Self::set_pose`]).
    pub fn velocity_near(&self, x: &Vector3<f64>) -> Vector3<f64> {
        if self.velocities.is_empty() {
            return Vector3::zeros();
        }
        let (proj, (tri, _)) = self
            .mesh
            .project_local_point_and_get_location(to_p(x), false);
        self.surface_velocity(tri, &from_p(proj.point))
    }

    /// The file name or the name given at construction.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of (merged) vertices.
    pub fn vertex_count(&self) -> usize {
        self.mesh.vertices().len()
    }

    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.mesh.indices().len()
    }

    /// Enclosed volume (m³).
    pub fn volume(&self) -> f64 {
        self.volume
    }

    /// Vertex positions (m), after merging duplicates.
    pub fn vertices(&self) -> Vec<Vector3<f64>> {
        self.mesh.vertices().iter().map(|v| from_p(*v)).collect()
    }

    /// Triangles, wound counter-clockwise seen from outside.
    pub fn triangles(&self) -> &[[u32; 3]] {
        self.mesh.indices()
    }

    /// Signed distance (m, negative inside) and unit outward normal at `x`
    /// (local frame). Cost `O(log n)` per query (BVH).
    pub fn distance(&self, x: &Vector3<f64>) -> Sdf {
        let (proj, (tri, loc)) = self
            .mesh
            .project_local_point_and_get_location(to_p(x), false);
        let diff = x - from_p(proj.point);
        let len = diff.norm();
        let sign = if proj.is_inside { -1.0 } else { 1.0 };
        if len > 0.0 {
            return (sign * len, sign * diff / len);
        }
        // On the surface: the feature's pseudo-normal.
        let face = from_p(self.mesh.triangle(tri).scaled_normal());
        let pn = self.mesh.pseudo_normals_if_oriented();
        let n = match (loc, pn) {
            (TrianglePointLocation::OnEdge(i, _), Some(pn)) => {
                from_p(pn.edges_pseudo_normal[tri as usize][i as usize])
            }
            (TrianglePointLocation::OnVertex(i), Some(pn)) => {
                let v = self.mesh.indices()[tri as usize][i as usize];
                from_p(pn.vertices_pseudo_normal[v as usize])
            }
            _ => face,
        };
        let n = if n.norm() > 0.0 { n } else { face };
        (0.0, n.normalize())
    }
}

/// Two surface sheets whose unit normals have a dot product below this
/// (about 30° apart) give separate tangent planes in
/// [`TriangleMesh::tangent_planes`].
pub const SHEET_COS: f64 = 0.866;

/// A tangent plane of a collider surface: the points `y` with
/// `normal · (y - point) = 0` (m); `normal` is unit and points out of the
/// body. Its signed distance is the linearisation of the body's `φ` about the
/// point it was taken for [DESIGN §6].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TangentPlane {
    /// A point of the plane (m).
    pub point: Vector3<f64>,
    /// Unit outward normal.
    pub normal: Vector3<f64>,
    /// Velocity (m/s, the collider's local frame) of the surface point the
    /// plane was taken at, relative to the collider's rigid motion: zero for
    /// a still mesh, the animated surface's velocity for a pose of a
    /// [`super::MeshAnimation`] (friction acts against it).
    pub velocity: Vector3<f64>,
}

impl TangentPlane {
    /// Signed distance (m) of `y` from the plane, positive outside.
    pub fn distance(&self, y: &Vector3<f64>) -> f64 {
        self.normal.dot(&(y - self.point))
    }
}

impl TriangleMesh {
    /// The tangent planes of the surface sheets within `reach` (m) of `x`
    /// (local frame), appended to `out`; nothing when `φ(x) > reach`.
    ///
    /// The first plane is the exact linearisation of `φ` at `x`: through the
    /// closest surface point `p = x - φ n` with normal `n = ∇φ`. Then every
    /// triangle whose closest point lies within `reach` of `x` and that faces
    /// `x` (faces away from it, for `x` inside the body) is visited in order
    /// of distance. It contributes the linearisation of its own
    /// distance at `x`, through its closest point with the face normal when
    /// `x` projects inside the triangle and the unit direction from that
    /// point to `x` when it projects beside it, when that normal is more
    /// than about 30° ([`SHEET_COS`]) from every plane kept so far: a
    /// second sheet of the body, as in a crease (armpit, crotch) where the
    /// closest point jumps from one sheet to the other and the force of the
    /// single-closest-point `φ` is discontinuous.
    ///
    /// Every plane's distance from `x` is the distance of its triangle, so
    /// none is nearer than `φ(x)`. A face plane extended past its triangle
    /// would be: beside a convex ridge of more than 30° it reaches into the
    /// free space over the next face, and a node resting there got its push
    /// only in steps whose `reach` (which grows with the node's speed) took
    /// that triangle in; the push then threw the node off again, and it
    /// never came to rest (the GarmentCode hoody's yarn ends under the arm,
    /// BENCHMARKS.md 2026-12-07).
    pub fn tangent_planes(&self, x: &Vector3<f64>, reach: f64, out: &mut Vec<TangentPlane>) {
        let (phi, n) = self.distance(x);
        if phi > reach {
            return;
        }
        let first = out.len();
        let point = x - phi * n;
        out.push(TangentPlane {
            point,
            normal: n,
            velocity: self.velocity_near(&point),
        });
        let r = Vector3::repeat(reach);
        let aabb = Aabb::new(to_p(&(x - r)), to_p(&(x + r)));
        let mut near: Vec<(f64, Vector3<f64>, Vector3<f64>, u32)> = self
            .mesh
            .bvh()
            .intersect_aabb(&aabb)
            .filter_map(|i| {
                let tri = self.mesh.triangle(i);
                let (proj, loc) = tri.project_local_point_and_get_location(to_p(x), false);
                let p = from_p(proj.point);
                let diff = x - p;
                let d = diff.norm();
                let face = from_p(tri.normal()?);
                let side = diff.dot(&face);
                // A triangle `x` is behind (outside the body) or in front
                // of (inside it) has another sheet between: skipped.
                if d > reach || (phi >= 0.0) != (side >= 0.0) {
                    return None;
                }
                // The triangle's own distance linearised at `x`: its face
                // normal where `x` projects inside it, else the direction
                // from its closest edge or corner point to `x`, so that the
                // plane is never nearer to `x` than the triangle is.
                let normal = match loc {
                    TrianglePointLocation::OnEdge(..) | TrianglePointLocation::OnVertex(_)
                        if d > 0.0 =>
                    {
                        diff * (side.signum() / d)
                    }
                    _ => face,
                };
                Some((d, p, normal, i))
            })
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (_, point, normal, tri) in near {
            if out[first..]
                .iter()
                .all(|pl| pl.normal.dot(&normal) < SHEET_COS)
            {
                out.push(TangentPlane {
                    point,
                    normal,
                    velocity: self.surface_velocity(tri, &point),
                });
            }
        }
    }
}

/// Barycentric weights of `p` (projected onto the plane of the triangle
/// `a, b, c`); `(1/3, 1/3, 1/3)` for a degenerate triangle.
fn barycentric(a: &Vector3<f64>, b: &Vector3<f64>, c: &Vector3<f64>, p: &Vector3<f64>) -> [f64; 3] {
    let (e0, e1, d) = (b - a, c - a, p - a);
    let (d00, d01, d11) = (e0.dot(&e0), e0.dot(&e1), e1.dot(&e1));
    let (d20, d21) = (d.dot(&e0), d.dot(&e1));
    let den = d00 * d11 - d01 * d01;
    if den <= f64::EPSILON * d00 * d11 {
        return [1.0 / 3.0; 3];
    }
    let v = (d11 * d20 - d01 * d21) / den;
    let w = (d00 * d21 - d01 * d20) / den;
    [1.0 - v - w, v, w]
}

/// Vertex positions (m) and triangles (vertex indices) as read from a file.
pub(crate) type ObjSurface = (Vec<Vector3<f64>>, Vec<[u32; 3]>);

/// The positions (mapped by `scale · v + translation`, m) and triangles of
/// every object of the OBJ file `path`, as [`TriangleMesh::from_obj`] reads
/// them (before merging and checks).
pub(crate) fn read_obj(
    path: &Path,
    scale: f64,
    translation: Vector3<f64>,
) -> Result<ObjSurface, CollideError> {
    if !(scale > 0.0 && scale.is_finite() && translation.iter().all(|c| c.is_finite())) {
        return Err(CollideError::InvalidShape {
            shape: "triangle mesh",
            reason: format!(
                "{}: expected a finite scale > 0 and a finite translation, got scale {scale} \
                     and translation {:?}",
                path.display(),
                translation.as_slice()
            ),
        });
    }
    let file = std::fs::File::open(path).map_err(|e| CollideError::ObjRead {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    let mut reader = LineCounter {
        inner: BufReader::new(file),
        lines: 0,
        partial: false,
    };
    let opts = tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    };
    let models =
        match tobj::load_obj_buf(&mut reader, &opts, |_| Err(tobj::LoadError::GenericFailure)) {
            Ok((models, _materials)) => models,
            Err(e) => return Err(parse_error(path, e, reader.line())),
        };
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for m in &models {
        let base = vertices.len() as u32;
        vertices.extend(
            m.mesh
                .positions
                .chunks_exact(3)
                .map(|p| scale * Vector3::new(p[0], p[1], p[2]) + translation),
        );
        triangles.extend(
            m.mesh
                .indices
                .chunks_exact(3)
                .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
        );
    }
    Ok((vertices, triangles))
}

/// Every directed edge `(i, j)` of a closed, consistently oriented mesh
/// appears exactly once, and so does `(j, i)`.
fn check_closed(name: &str, verts: &[Vector3<f64>], tris: &[[u32; 3]]) -> Result<(), CollideError> {
    let mut directed: HashMap<(u32, u32), u32> = HashMap::with_capacity(3 * tris.len());
    for t in tris {
        for k in 0..3 {
            *directed.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    let mut bad: Vec<((u32, u32), &'static str)> = Vec::new();
    for (&(i, j), &n) in &directed {
        let back = directed.get(&(j, i)).copied().unwrap_or(0);
        let (lo, hi) = (i.min(j), i.max(j));
        let reason = if n != 1 || back > 1 {
            "shared by more than two triangles, or by two triangles with the same winding"
        } else if back == 0 {
            "a boundary edge with a single triangle"
        } else {
            continue;
        };
        bad.push(((lo, hi), reason));
    }
    if bad.is_empty() {
        return Ok(());
    }
    bad.sort_unstable();
    bad.dedup_by_key(|b| b.0);
    let ((i, j), reason) = bad[0];
    let p = |k: u32| {
        let v = verts[k as usize];
        [v.x, v.y, v.z]
    };
    Err(CollideError::MeshNotClosed {
        name: name.to_owned(),
        count: bad.len(),
        example_from: p(i),
        example_to: p(j),
        example_reason: reason.to_owned(),
    })
}

fn parse_error(path: &Path, e: tobj::LoadError, counted_line: usize) -> CollideError {
    if e == tobj::LoadError::ReadError || e == tobj::LoadError::OpenFileFailed {
        return CollideError::ObjRead {
            path: path.to_owned(),
            reason: e.to_string(),
        };
    }
    let expected = match e {
        tobj::LoadError::PositionParseError => {
            "expected `v x y z` with three numbers (optionally a w or an r g b)"
        }
        tobj::LoadError::FaceParseError | tobj::LoadError::InvalidPolygon => {
            "expected `f i j k ...` with at least three vertex indices"
        }
        _ => "expected a valid Wavefront OBJ line",
    };
    // Faces are resolved when an object ends, so locate a bad index here.
    if e == tobj::LoadError::FaceVertexOutOfBounds
        && let Some((line, reason)) = std::fs::read_to_string(path)
            .ok()
            .and_then(|text| find_bad_face(&text))
    {
        return CollideError::ObjParse {
            path: path.to_owned(),
            line,
            reason,
        };
    }
    CollideError::ObjParse {
        path: path.to_owned(),
        line: counted_line.max(1),
        reason: format!("{e}; {expected}"),
    }
}

/// First `f` line naming a vertex index outside `1..=N` (or a negative
/// index reaching before the first vertex).
fn find_bad_face(text: &str) -> Option<(usize, String)> {
    let total = text
        .lines()
        .filter(|l| l.split_whitespace().next() == Some("v"))
        .count();
    let mut seen = 0usize;
    for (no, l) in text.lines().enumerate() {
        let mut words = l.split_whitespace();
        match words.next() {
            Some("v") => seen += 1,
            Some("f") => {
                for w in words {
                    let Ok(idx) = w.split('/').next().unwrap_or("").parse::<i64>() else {
                        continue;
                    };
                    let ok = if idx > 0 {
                        idx as usize <= total
                    } else {
                        idx < 0 && idx.unsigned_abs() as usize <= seen
                    };
                    if !ok {
                        return Some((
                            no + 1,
                            format!(
                                "face vertex index {idx} is out of range: the file has {total} \
                                 vertices (expected 1..={total} or a valid negative index)"
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// A `BufRead` that counts the lines consumed, to place parse errors.
struct LineCounter<R> {
    inner: R,
    lines: usize,
    partial: bool,
}

impl<R> LineCounter<R> {
    /// 1-based number of the line being (or last) read.
    fn line(&self) -> usize {
        self.lines + usize::from(self.partial)
    }

    fn count(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.lines += bytes.iter().filter(|&&b| b == b'\n').count();
            self.partial = last != b'\n';
        }
    }
}

impl<R: BufRead> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count(&buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for LineCounter<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        // The buffer is already filled (the caller just looked at it), so
        // this `fill_buf` does no I/O.
        if let Ok(buf) = self.inner.fill_buf() {
            let bytes = &buf[..amt.min(buf.len())];
            if let Some(&last) = bytes.last() {
                self.lines += bytes.iter().filter(|&&b| b == b'\n').count();
                self.partial = last != b'\n';
            }
        }
        self.inner.consume(amt);
    }
}
