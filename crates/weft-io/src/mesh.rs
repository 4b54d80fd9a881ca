//! A plain triangle mesh (body meshes, the mannequin, the preview's body
//! silhouette) with OBJ reading (`tobj`) and atomic OBJ writing, and the
//! measurements the mannequin tests use: bounding box, closedness, volume
//! and the tape-measure girth of a horizontal cross-section.

use crate::output::{OutputError, atomic_write};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// A body mesh that could not be read.
#[derive(Debug, Error)]
pub enum MeshError {
    /// The file could not be opened or parsed by the OBJ reader.
    #[error("{path}: cannot read as a Wavefront OBJ triangle mesh: {reason}")]
    Obj {
        /// The file.
        path: PathBuf,
        /// The reader's complaint.
        reason: String,
    },
    /// The file has no triangles.
    #[error("{path}: expected at least one face (`f` line), found none")]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// A triangle mesh: positions (m) and triangles as vertex-index triples
/// (counter-clockwise seen from outside for a closed, outward-oriented mesh).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions `[x, y, z]` (m).
    pub vertices: Vec<[f64; 3]>,
    /// Triangles, indices into `vertices`.
    pub triangles: Vec<[u32; 3]>,
}

impl TriMesh {
    /// Reads a Wavefront OBJ file with `tobj` (all objects concatenated,
    /// polygons triangulated as fans, lines, points, normals, texture
    /// coordinates and materials ignored). Positions are taken as they are
    /// (scale them yourself if the file is not in metres). The reader
    /// numbers vertices in order of first use by a face, so vertices no face
    /// uses are dropped and indices may differ from the file's; triangles
    /// keep the file's order and winding.
    ///
    /// # Errors
    /// [`MeshError::Obj`] naming the file for an unreadable or malformed
    /// file; [`MeshError::Empty`] for a file without faces.
    pub fn from_obj(path: impl AsRef<Path>) -> Result<Self, MeshError> {
        let path = path.as_ref();
        let opts = tobj::LoadOptions {
            triangulate: true,
            single_index: false,
            ignore_points: true,
            ignore_lines: true,
        };
        let (models, _) = tobj::load_obj(path, &opts).map_err(|e| MeshError::Obj {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let mut mesh = TriMesh::default();
        for m in &models {
            let base = mesh.vertices.len() as u32;
            mesh.vertices
                .extend(m.mesh.positions.chunks_exact(3).map(|p| [p[0], p[1], p[2]]));
            mesh.triangles.extend(
                m.mesh
                    .indices
                    .chunks_exact(3)
                    .map(|t| [t[0] + base, t[1] + base, t[2] + base]),
            );
        }
        if mesh.triangles.is_empty() {
            return Err(MeshError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(mesh)
    }

    /// Writes the mesh as a Wavefront OBJ atomically: the `header` lines as
    /// `#` comments, `v x y z` with `decimals` digits after the point (m;
    /// 6 gives micrometres), then `f a b c` (1-based).
    ///
    /// # Errors
    /// [`OutputError::Io`] naming the file.
    pub fn write_obj(
        &self,
        path: impl AsRef<Path>,
        header: &str,
        decimals: usize,
    ) -> Result<(), OutputError> {
        atomic_write(path.as_ref(), |w| {
            for line in header.lines() {
                writeln!(w, "# {line}")?;
            }
            for v in &self.vertices {
                writeln!(
                    w,
                    "v {:.*} {:.*} {:.*}",
                    decimals, v[0], decimals, v[1], decimals, v[2]
                )?;
            }
            for t in &self.triangles {
                writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
            }
            Ok(())
        })
    }

    /// Axis-aligned bounding box `(min, max)` (m); `([∞; 3], [-∞; 3])` when
    /// empty.
    pub fn bounding_box(&self) -> ([f64; 3], [f64; 3]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for v in &self.vertices {
            for a in 0..3 {
                lo[a] = lo[a].min(v[a]);
                hi[a] = hi[a].max(v[a]);
            }
        }
        (lo, hi)
    }

    /// Number of undirected edges that are not shared by exactly two
    /// triangles, plus the number of directed edges used twice in the same
    /// direction (inconsistent orientation). Zero for a closed,
    /// consistently oriented (watertight) mesh.
    pub fn defective_edges(&self) -> usize {
        let mut undirected: HashMap<(u32, u32), u32> = HashMap::new();
        let mut directed: HashMap<(u32, u32), u32> = HashMap::new();
        for t in &self.triangles {
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *undirected.entry((a.min(b), a.max(b))).or_default() += 1;
                *directed.entry((a, b)).or_default() += 1;
            }
        }
        undirected.values().filter(|&&c| c != 2).count()
            + directed.values().filter(|&&c| c != 1).count()
    }

    /// Whether every edge is shared by exactly two triangles with opposite
    /// directions ([`TriMesh::defective_edges`] is zero) and the mesh is not
    /// empty.
    pub fn is_closed(&self) -> bool {
        !self.triangles.is_empty() && self.defective_edges() == 0
    }

    /// Signed volume (m³) by the divergence theorem, `Σ v₀·(v₁×v₂)/6`;
    /// positive for a closed mesh with outward (counter-clockwise) faces.
    pub fn signed_volume(&self) -> f64 {
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.vertices[i as usize]);
                (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                    + a[2] * (b[0] * c[1] - b[1] * c[0]))
                    / 6.0
            })
            .sum()
    }

    /// The closed loops (in the XZ plane, as `[x, z]`, m) where the
    /// horizontal plane `y = height` cuts the mesh. Each loop is a polygon
    /// through the points where the plane crosses mesh edges. Vertices lying
    /// exactly on the plane are treated as above it. Open chains (a mesh
    /// that is not closed) are returned as they are.
    pub fn cross_sections(&self, height: f64) -> Vec<Vec<[f64; 2]>> {
        let above = |i: u32| self.vertices[i as usize][1] >= height;
        let point = |a: u32, b: u32| -> [f64; 2] {
            let (p, q) = (self.vertices[a as usize], self.vertices[b as usize]);
            let t = (height - p[1]) / (q[1] - p[1]);
            [p[0] + t * (q[0] - p[0]), p[2] + t * (q[2] - p[2])]
        };
        let key = |a: u32, b: u32| (a.min(b), a.max(b));
        // Each cut triangle gives a segment between two crossed edges; on a
        // closed mesh every crossed edge has two such neighbours.
        let mut adj: HashMap<(u32, u32), Vec<(u32, u32)>> = HashMap::new();
        for t in &self.triangles {
            let crossed: Vec<(u32, u32)> = (0..3)
                .map(|k| (t[k], t[(k + 1) % 3]))
                .filter(|&(a, b)| above(a) != above(b))
                .map(|(a, b)| key(a, b))
                .collect();
            if let [e0, e1] = crossed[..] {
                adj.entry(e0).or_default().push(e1);
                adj.entry(e1).or_default().push(e0);
            }
        }
        let mut loops = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut starts: Vec<(u32, u32)> = adj.keys().copied().collect();
        starts.sort_unstable();
        for start in starts {
            if seen.contains(&start) {
                continue;
            }
            let mut poly = Vec::new();
            let mut e = start;
            loop {
                seen.insert(e);
                poly.push(point(e.0, e.1));
                match adj[&e].iter().find(|n| !seen.contains(*n)) {
                    Some(&n) => e = n,
                    None => break,
                }
            }
            loops.push(poly);
        }
        loops
    }

    /// Tape-measure girth (m) at height `height`: the perimeter of the convex
    /// hull of the cross-section loop ([`TriMesh::cross_sections`]) that
    /// encloses the point `(x, z) = around`, as a tape laid around the body
    /// bridges concave parts. `None` if no loop encloses `around`.
    pub fn girth_at(&self, height: f64, around: [f64; 2]) -> Option<f64> {
        self.cross_sections(height)
            .into_iter()
            .find(|l| l.len() >= 3 && encloses(l, around))
            .map(|l| perimeter(&convex_hull(&l)))
    }
}

/// Even-odd point-in-polygon test.
fn encloses(poly: &[[f64; 2]], p: [f64; 2]) -> bool {
    let mut inside = false;
    let n = poly.len();
    for i in 0..n {
        let (a, b) = (poly[i], poly[(i + 1) % n]);
        if (a[1] > p[1]) != (b[1] > p[1]) {
            let x = a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]);
            if x > p[0] {
                inside = !inside;
            }
        }
    }
    inside
}

/// Convex hull (Andrew's monotone chain), counter-clockwise.
fn convex_hull(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut p = points.to_vec();
    p.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    p.dedup();
    if p.len() < 3 {
        return p;
    }
    let cross = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut hull: Vec<[f64; 2]> = Vec::with_capacity(2 * p.len());
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &[f64; 2]>> = if pass == 0 {
            Box::new(p.iter())
        } else {
            Box::new(p.iter().rev())
        };
        for &q in iter {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) <= 0.0
            {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    hull
}

fn perimeter(poly: &[[f64; 2]]) -> f64 {
    let n = poly.len();
    (0..n)
        .map(|i| {
            let (a, b) = (poly[i], poly[(i + 1) % n]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit cube made of 12 outward triangles.
    fn cube() -> TriMesh {
        let vertices = (0..8)
            .map(|i| [(i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64])
            .collect();
        let quads = [
            [0, 2, 3, 1], // z = 0, normal -z
            [4, 5, 7, 6], // z = 1
            [0, 1, 5, 4], // y = 0
            [2, 6, 7, 3], // y = 1
            [0, 4, 6, 2], // x = 0
            [1, 3, 7, 5], // x = 1
        ];
        let triangles = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        TriMesh {
            vertices,
            triangles,
        }
    }

    #[test]
    fn cube_is_closed_with_unit_volume_and_girth_four() {
        let c = cube();
        assert!(c.is_closed());
        assert!((c.signed_volume() - 1.0).abs() < 1e-12);
        let g = c.girth_at(0.5, [0.5, 0.5]).unwrap();
        assert!((g - 4.0).abs() < 1e-12, "girth {g}");
        assert_eq!(c.girth_at(0.5, [2.0, 0.5]), None);
        let mut open = c.clone();
        open.triangles.pop();
        assert_eq!(open.defective_edges(), 3);
        assert!(!open.is_closed());
    }

    #[test]
    fn hull_bridges_a_concave_section() {
        // An L-shaped loop: hull perimeter is that of the square minus the
        // notch corner replaced by its diagonal.
        let l = [
            [0.0, 0.0],
            [2.0, 0.0],
            [2.0, 1.0],
            [1.0, 1.0],
            [1.0, 2.0],
            [0.0, 2.0],
        ];
        let p = perimeter(&convex_hull(&l));
        assert!((p - (6.0 + 2f64.sqrt())).abs() < 1e-12, "{p}");
        assert!(encloses(&l, [0.5, 1.5]));
        assert!(!encloses(&l, [1.5, 1.5]));
    }
}
