//! Fixtures shared by the implicit and SBD tests.

use nalgebra::Vector3;
use weft_shell::ClothMesh;
use weft_solver::collide::{Collider, Exclusion, NodeGraph, SelfCollision, Sphere};

/// A 0.1 m square of two triangles (2 x 2 vertices: 0 at (-x, -z), 1 at
/// (+x, -z), 2 at (-x, +z), 3 at (+x, +z), diagonal 0-3), flat at
/// `y = 8 mm` and centred over the origin: every vertex is 71 mm from the
/// `y` axis, beside [`thin_sphere`].
pub fn square_over_thin_sphere() -> ClothMesh {
    ClothMesh::rectangle(
        [0.1, 0.1],
        [2, 2],
        Vector3::new(-0.05, 0.008, -0.05),
        Vector3::x(),
        Vector3::z(),
    )
    .unwrap()
}

/// A sphere of radius 5 mm at the origin with penalty `stiffness` and
/// friction coefficient `friction`.
pub fn thin_sphere(stiffness: f64, friction: f64) -> Collider {
    Collider::new(
        Sphere::new(Vector3::zeros(), 0.005).unwrap(),
        stiffness,
        friction,
    )
    .unwrap()
}

/// A held 11 x 11 sheet (10 cm) in the plane y = 0 and a free 9 x 9 sheet
/// (8 cm) 2 cm above it, turned by 0.3 rad and shifted so no vertex falls
/// on a vertex, as one mesh (the held sheet's vertices first), and the
/// number of the held sheet's vertices. `tilt` raises the free sheet's far
/// edge by that slope (0: parallel to the held one).
pub fn stacked_sheets(tilt: f64) -> (ClothMesh, usize) {
    let below = ClothMesh::rectangle(
        [0.1, 0.1],
        [11, 11],
        Vector3::zeros(),
        Vector3::x(),
        Vector3::z(),
    )
    .unwrap();
    let (sn, cs) = 0.3f64.sin_cos();
    let above = ClothMesh::rectangle(
        [0.08, 0.08],
        [9, 9],
        Vector3::new(0.013, 0.02, 0.007),
        Vector3::new(cs, tilt, sn).normalize(),
        Vector3::new(-sn, 0.0, cs),
    )
    .unwrap();
    (below.join(&above), below.vertex_count())
}

/// Vertex–face and edge–edge pairs of `mesh` found within `distance` (m),
/// one-ring neighbours excluded.
pub fn sheet_self_collision(mesh: &ClothMesh, distance: f64) -> SelfCollision {
    let edges: Vec<[usize; 2]> = mesh
        .edges()
        .iter()
        .map(|e| [e[0] as usize, e[1] as usize])
        .collect();
    let graph = NodeGraph::from_edges(mesh.vertex_count(), &edges).unwrap();
    let faces = mesh
        .triangles()
        .iter()
        .map(|t| t.map(|v| v as usize))
        .collect();
    SelfCollision::new(edges, Exclusion::new(&graph, 1), distance)
        .unwrap()
        .with_faces(faces)
        .unwrap()
}
