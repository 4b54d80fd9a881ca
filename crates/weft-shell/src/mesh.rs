//! A triangle cloth mesh: a flat rest shape in 2D material coordinates (the
//! texture coordinates of a sewing-pattern panel, m), world positions (m)
//! and triangles, with the graph queries the bending springs need (edges,
//! vertex adjacency, rings).

use crate::ShellError;
use nalgebra::Vector3;
use weft_potentials::stvk::TriangleRest;

/// A triangle mesh of cloth.
///
/// `rest[i]` (m) is vertex `i` in the flat rest frame, `positions[i]` (m)
/// its world position; `triangles` index both. Built by [`ClothMesh::new`]
/// (validated) or [`ClothMesh::rectangle`].
#[derive(Clone, Debug, PartialEq)]
pub struct ClothMesh {
    rest: Vec<[f64; 2]>,
    positions: Vec<Vector3<f64>>,
    triangles: Vec<[u32; 3]>,
}

impl ClothMesh {
    /// A mesh from rest coordinates `rest` (m, 2D), world positions
    /// `positions` (m) and `triangles` (vertex indices).
    ///
    /// # Errors
    /// [`ShellError::InvalidMesh`] when the lengths differ, there are no
    /// triangles, or a coordinate is not finite;
    /// [`ShellError::VertexOutOfRange`] and
    /// [`ShellError::DegenerateTriangle`] naming the first bad triangle.
    pub fn new(
        rest: Vec<[f64; 2]>,
        positions: Vec<Vector3<f64>>,
        triangles: Vec<[u32; 3]>,
    ) -> Result<Self, ShellError> {
        let n = rest.len();
        if positions.len() != n {
            return Err(ShellError::InvalidMesh(format!(
                "{} rest coordinates but {} positions",
                n,
                positions.len()
            )));
        }
        if triangles.is_empty() {
            return Err(ShellError::InvalidMesh("the mesh has no triangles".into()));
        }
        if let Some(i) = (0..n).find(|&i| {
            !(rest[i].iter().all(|c| c.is_finite()) && positions[i].iter().all(|c| c.is_finite()))
        }) {
            return Err(ShellError::InvalidMesh(format!(
                "vertex {i} has a non-finite coordinate"
            )));
        }
        let mesh = ClothMesh {
            rest,
            positions,
            triangles,
        };
        for (t, tri) in mesh.triangles.iter().enumerate() {
            if let Some(&v) = tri.iter().find(|&&v| v as usize >= n) {
                return Err(ShellError::VertexOutOfRange {
                    triangle: t,
                    vertex: v as usize,
                    vertices: n,
                });
            }
            mesh.triangle_rest(t)
                .ok_or(ShellError::DegenerateTriangle {
                    triangle: t,
                    vertices: *tri,
                })?;
        }
        Ok(mesh)
    }

    /// A `size[0]` x `size[1]` rectangle (m) of `vertices[0]` x
    /// `vertices[1]` vertices (at least 2 x 2), with its corner at `origin`
    /// (m) and its sides along the unit vectors `axis_u`, `axis_v`. The rest
    /// frame is the rectangle itself (`rest[i] = (s, t)` with the world
    /// position `origin + s axis_u + t axis_v`). Each grid cell is split into
    /// two triangles along alternating diagonals, so the mesh has no
    /// preferred shear direction. Vertex `(i, j)` (i along `axis_u`) has
    /// index `j vertices[0] + i`.
    ///
    /// # Errors
    /// [`ShellError::InvalidMesh`] for fewer than 2 x 2 vertices or a
    /// non-positive size.
    pub fn rectangle(
        size: [f64; 2],
        vertices: [usize; 2],
        origin: Vector3<f64>,
        axis_u: Vector3<f64>,
        axis_v: Vector3<f64>,
    ) -> Result<Self, ShellError> {
        let [nu, nv] = vertices;
        if nu < 2 || nv < 2 {
            return Err(ShellError::InvalidMesh(format!(
                "a rectangle needs at least 2 x 2 vertices, got {nu} x {nv}"
            )));
        }
        if !(size[0] > 0.0 && size[1] > 0.0) {
            return Err(ShellError::InvalidMesh(format!(
                "a rectangle needs a positive size, got {size:?} m"
            )));
        }
        let mut rest = Vec::with_capacity(nu * nv);
        for j in 0..nv {
            for i in 0..nu {
                rest.push([
                    size[0] * i as f64 / (nu - 1) as f64,
                    size[1] * j as f64 / (nv - 1) as f64,
                ]);
            }
        }
        let positions = rest
            .iter()
            .map(|r| origin + axis_u * r[0] + axis_v * r[1])
            .collect();
        let id = |i: usize, j: usize| (j * nu + i) as u32;
        let mut triangles = Vec::with_capacity(2 * (nu - 1) * (nv - 1));
        for j in 0..nv - 1 {
            for i in 0..nu - 1 {
                let (a, b, c, d) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
                if (i + j) % 2 == 0 {
                    triangles.extend([[a, b, c], [a, c, d]]);
                } else {
                    triangles.extend([[a, b, d], [b, c, d]]);
                }
            }
        }
        Self::new(rest, positions, triangles)
    }

    /// The two meshes as one, two pieces of cloth: `self`'s vertices
    /// first, then `other`'s (their indices shifted by
    /// `self.vertex_count()`); rest frames kept as they are, as each
    /// triangle's rest shape is its own.
    pub fn join(&self, other: &ClothMesh) -> ClothMesh {
        let n = self.rest.len() as u32;
        ClothMesh {
            rest: self.rest.iter().chain(&other.rest).copied().collect(),
            positions: self
                .positions
                .iter()
                .chain(&other.positions)
                .copied()
                .collect(),
            triangles: self
                .triangles
                .iter()
                .copied()
                .chain(other.triangles.iter().map(|t| t.map(|v| v + n)))
                .collect(),
        }
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.rest.len()
    }

    /// Rest coordinates (m, 2D), one per vertex.
    pub fn rest(&self) -> &[[f64; 2]] {
        &self.rest
    }

    /// World positions (m), one per vertex.
    pub fn positions(&self) -> &[Vector3<f64>] {
        &self.positions
    }

    /// Triangles (vertex indices).
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The rest shape of triangle `t`, `None` if it is degenerate.
    pub fn triangle_rest(&self, t: usize) -> Option<TriangleRest> {
        TriangleRest::new(self.triangles[t].map(|v| self.rest[v as usize]))
    }

    /// Distance between vertices `a` and `b` in the rest frame (m).
    pub fn rest_distance(&self, a: usize, b: usize) -> f64 {
        let (p, q) = (self.rest[a], self.rest[b]);
        (p[0] - q[0]).hypot(p[1] - q[1])
    }

    /// The unique edges `[a, b]` with `a < b`, sorted.
    pub fn edges(&self) -> Vec<[u32; 2]> {
        let mut e: Vec<[u32; 2]> = self
            .triangles
            .iter()
            .flat_map(|t| [[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]])
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        e.sort_unstable();
        e.dedup();
        e
    }

    /// Mean rest length of the edges (m), `e_avg` of [Kim23 eq. 6].
    pub fn average_edge_length(&self) -> f64 {
        let e = self.edges();
        e.iter()
            .map(|&[a, b]| self.rest_distance(a as usize, b as usize))
            .sum::<f64>()
            / e.len() as f64
    }

    /// Length of the diagonal of the world positions' axis-aligned bounding
    /// box (m), `‖AABB_min - AABB_max‖` of [Kim23 eq. 7].
    pub fn bounding_box_diagonal(&self) -> f64 {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for p in &self.positions {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        (hi - lo).norm()
    }

    /// Vertex adjacency over the mesh edges: `neighbours[i]` lists the
    /// vertices sharing an edge with `i`, sorted.
    pub fn neighbours(&self) -> Vec<Vec<u32>> {
        let mut adj = vec![Vec::new(); self.vertex_count()];
        for [a, b] in self.edges() {
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        for l in &mut adj {
            l.sort_unstable();
        }
        adj
    }

    /// Lumped vertex masses (kg) of a cloth of areal density `rho_a`
    /// (kg/m²): each triangle gives a third of its rest area's mass to each
    /// of its vertices.
    pub fn lumped_masses(&self, rho_a: f64) -> Vec<f64> {
        let mut m = vec![0.0; self.vertex_count()];
        for (t, tri) in self.triangles.iter().enumerate() {
            let area = self.triangle_rest(t).map_or(0.0, |r| r.area);
            for &v in tri {
                m[v as usize] += rho_a * area / 3.0;
            }
        }
        m
    }
}

/// Breadth-first ring distances over a vertex adjacency, with reusable
/// buffers: [`Rings::visit`] calls `f(vertex, ring)` for every vertex within
/// `max` edges of `source` (ring 0 is the source itself).
pub struct Rings<'a> {
    adjacency: &'a [Vec<u32>],
    stamp: Vec<u32>,
    generation: u32,
    frontier: Vec<u32>,
    next: Vec<u32>,
}

impl<'a> Rings<'a> {
    /// Buffers for BFS over `adjacency` ([`ClothMesh::neighbours`]).
    pub fn new(adjacency: &'a [Vec<u32>]) -> Self {
        Rings {
            adjacency,
            stamp: vec![0; adjacency.len()],
            generation: 0,
            frontier: Vec::new(),
            next: Vec::new(),
        }
    }

    /// Calls `f(vertex, ring)` for every vertex at graph distance
    /// `ring <= max` from `source`, ring by ring.
    pub fn visit(&mut self, source: u32, max: usize, mut f: impl FnMut(u32, usize)) {
        self.generation += 1;
        let g = self.generation;
        self.frontier.clear();
        self.frontier.push(source);
        self.stamp[source as usize] = g;
        f(source, 0);
        for ring in 1..=max {
            self.next.clear();
            for &v in &self.frontier {
                for &w in &self.adjacency[v as usize] {
                    if self.stamp[w as usize] != g {
                        self.stamp[w as usize] = g;
                        self.next.push(w);
                        f(w, ring);
                    }
                }
            }
            if self.next.is_empty() {
                return;
            }
            std::mem::swap(&mut self.frontier, &mut self.next);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_meshes_keep_both_pieces() {
        let a = ClothMesh::rectangle(
            [0.1, 0.1],
            [3, 3],
            Vector3::zeros(),
            Vector3::x(),
            Vector3::z(),
        )
        .unwrap();
        let b = ClothMesh::rectangle(
            [0.05, 0.05],
            [2, 2],
            Vector3::new(0.0, 0.02, 0.0),
            Vector3::x(),
            Vector3::z(),
        )
        .unwrap();
        let j = a.join(&b);
        assert_eq!(j.vertex_count(), 9 + 4);
        assert_eq!(j.triangles().len(), 8 + 2);
        assert_eq!(j.edges().len(), a.edges().len() + b.edges().len());
        assert_eq!(j.triangles()[8], b.triangles()[0].map(|v| v + 9));
        assert_eq!(j.positions()[9], b.positions()[0]);
        assert_eq!(j.rest()[12], b.rest()[3]);
        // No edge joins the pieces.
        assert!(j.edges().iter().all(|e| (e[0] < 9) == (e[1] < 9)));
    }
}
