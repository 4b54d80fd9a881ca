//! Fixtures shared by the implicit and SBD tests.

use nalgebra::Vector3;
use weft_shell::ClothMesh;
use weft_solver::collide::{Collider, Sphere};

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
