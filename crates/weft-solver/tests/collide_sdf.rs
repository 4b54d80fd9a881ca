//! Signed distances of the collider shapes, triangle meshes from OBJ (with
//! their errors) and keyframed motion.

mod collide_common;

use collide_common::*;
use nalgebra::{Rotation3, Vector3};
use weft_solver::collide::*;

#[test]
fn plane_sdf_matches_analytic() {
    let mut rng = Rng::new(1);
    for _ in 0..200 {
        let p = rng.vec3(-1.0, 1.0);
        let n_raw = rng.unit() * rng.uniform(0.5, 3.0);
        let plane = Plane::new(p, n_raw).unwrap();
        let n = n_raw / n_raw.norm();
        let x = rng.vec3(-2.0, 2.0);
        let (phi, grad) = plane.distance(&x);
        assert!((phi - (x - p).dot(&n)).abs() < 1e-12);
        assert!((grad - n).norm() < 1e-12);
    }
}

#[test]
fn sphere_sdf_matches_analytic() {
    let mut rng = Rng::new(2);
    for _ in 0..200 {
        let c = rng.vec3(-1.0, 1.0);
        let r = rng.uniform(0.1, 1.0);
        let s = Sphere::new(c, r).unwrap();
        let x = c + rng.unit() * rng.uniform(0.01, 2.0);
        let (phi, n) = s.distance(&x);
        let d = (x - c).norm();
        assert!((phi - (d - r)).abs() < 1e-12);
        assert!((n - (x - c) / d).norm() < 1e-12);
        assert_eq!(phi < 0.0, d < r, "sign inside/outside");
    }
}

/// Capsule distance in a frame where the axis is `[0, L] e_z`, rotated and
/// translated into place.
#[test]
fn capsule_sdf_matches_analytic() {
    let mut rng = Rng::new(3);
    for _ in 0..300 {
        let len = rng.uniform(0.1, 2.0);
        let r = rng.uniform(0.05, 0.5);
        let rot = Rotation3::new(rng.unit() * rng.uniform(0.0, 3.0));
        let origin = rng.vec3(-1.0, 1.0);
        let a = origin;
        let b = origin + rot * Vector3::new(0.0, 0.0, len);
        let cap = Capsule::new(a, b, r).unwrap();
        let y = Vector3::new(
            rng.uniform(-1.0, 1.0),
            rng.uniform(-1.0, 1.0),
            rng.uniform(-1.0, len + 1.0),
        );
        if y.xy().norm() < 1e-3 {
            continue;
        }
        let (phi_ref, n_local) = if y.z < 0.0 {
            (y.norm() - r, y / y.norm())
        } else if y.z > len {
            let d = y - Vector3::new(0.0, 0.0, len);
            (d.norm() - r, d / d.norm())
        } else {
            let d = Vector3::new(y.x, y.y, 0.0);
            (d.norm() - r, d / d.norm())
        };
        let x = origin + rot * y;
        let (phi, n) = cap.distance(&x);
        assert!((phi - phi_ref).abs() < 1e-12, "{phi} vs {phi_ref}");
        assert!((n - rot * n_local).norm() < 1e-12);
    }
}

#[test]
fn analytic_normals_are_gradients() {
    let mut rng = Rng::new(4);
    let shapes: Vec<Shape> = vec![
        Plane::new(Vector3::new(0.1, 0.2, 0.3), Vector3::new(1.0, 2.0, -0.5))
            .unwrap()
            .into(),
        Sphere::new(Vector3::new(0.1, -0.2, 0.0), 0.4)
            .unwrap()
            .into(),
        Capsule::new(
            Vector3::new(-0.3, 0.0, 0.1),
            Vector3::new(0.4, 0.2, -0.1),
            0.2,
        )
        .unwrap()
        .into(),
    ];
    for s in &shapes {
        for _ in 0..100 {
            let x = rng.vec3(-1.0, 1.0);
            let (_, n) = s.distance(&x);
            let fd = fd_grad3(|p| s.distance(p).0, &x, 1e-6);
            assert!((n - fd).norm() < 1e-6, "{s:?}: {n} vs {fd}");
            assert!((n.norm() - 1.0).abs() < 1e-12);
        }
    }
}

#[test]
fn invalid_shapes_are_rejected() {
    let e = Plane::new(Vector3::zeros(), Vector3::zeros()).unwrap_err();
    assert!(e.to_string().contains("non-zero normal"), "{e}");
    let e = Sphere::new(Vector3::zeros(), -1.0).unwrap_err();
    assert!(e.to_string().contains("radius > 0"), "{e}");
    let e = Capsule::new(Vector3::zeros(), Vector3::x(), 0.0).unwrap_err();
    assert!(e.to_string().contains("capsule"), "{e}");
}

/// A cube is exactly representable: its mesh SDF equals the box SDF to
/// round-off, inside (negative) and outside, including edge and corner
/// regions.
#[test]
fn cube_mesh_sdf_is_exact() {
    let a = 0.3;
    let (v, t) = cube(a);
    let mesh = TriangleMesh::from_triangles("cube", &v, &t).unwrap();
    assert!((mesh.volume() - 8.0 * a * a * a).abs() < 1e-14);
    let mut rng = Rng::new(5);
    let mut inside = 0;
    for _ in 0..2000 {
        let x = rng.vec3(-0.6, 0.6);
        let (phi_ref, n_ref) = box_sdf(&x, a);
        let (phi, n) = mesh.distance(&x);
        assert!((phi - phi_ref).abs() < 1e-12, "at {x}: {phi} vs {phi_ref}");
        // Normals away from the inner medial planes (ties of |x_i|).
        let q = x.abs();
        let mut s = [q.x, q.y, q.z];
        s.sort_by(f64::total_cmp);
        if phi_ref > 0.0 || s[2] - s[1] > 1e-6 {
            assert!((n - n_ref).norm() < 1e-9, "normal at {x}: {n} vs {n_ref}");
        }
        if phi_ref < 0.0 {
            inside += 1;
        }
    }
    assert!(
        inside > 200,
        "the test must sample inside points ({inside})"
    );
}

/// An icosphere with its vertices on the sphere of radius R lies between
/// the balls of radius R - sagitta and R, so `φ_sphere ≤ φ_mesh ≤ φ_sphere +
/// sagitta` at every point (inside or out); its normals are the gradient of
/// its SDF. The mesh goes through an OBJ file with scale and translation.
#[test]
fn icosphere_obj_sdf_within_tessellation_error() {
    let (v, t) = icosphere(1.0, 3);
    let path = temp_file("icosphere.obj", &obj_text(&v, &t));
    let (scale, c) = (0.05, Vector3::new(0.01, -0.02, 0.3));
    let mesh = TriangleMesh::from_obj(&path, scale, c).unwrap();
    assert_eq!(mesh.triangle_count(), 20 * 4usize.pow(3));
    let r = scale;
    let verts = mesh.vertices();
    let sagitta = mesh
        .triangles()
        .iter()
        .map(|tri| {
            let [p, q, s] = tri.map(|k| verts[k as usize] - c);
            let n = (q - p).cross(&(s - p)).normalize();
            r - n.dot(&p).abs()
        })
        .fold(0.0, f64::max);
    assert!(sagitta > 0.0 && sagitta < 0.01 * r);
    let mut rng = Rng::new(6);
    let (mut inside, mut outside) = (0, 0);
    for _ in 0..2000 {
        let x = c + rng.unit() * rng.uniform(0.0, 2.0 * r);
        let phi_s = (x - c).norm() - r;
        let (phi, n) = mesh.distance(&x);
        assert!(phi >= phi_s - 1e-12, "{phi} < sphere {phi_s}");
        assert!(
            phi <= phi_s + sagitta + 1e-12,
            "{phi} > sphere {phi_s} + {sagitta}"
        );
        if phi_s + sagitta < 0.0 {
            assert!(phi < 0.0);
            inside += 1;
        }
        if phi_s > 0.0 {
            outside += 1;
            // Outside a convex mesh the SDF is C¹: normal = gradient.
            let fd = fd_grad3(|p| mesh.distance(p).0, &x, 1e-8);
            assert!((n - fd).norm() < 1e-6, "normal {n} vs FD {fd}");
        }
        assert!((n.norm() - 1.0).abs() < 1e-12);
    }
    assert!(inside > 100 && outside > 100);
}

/// A closed mesh given as a triangle soup (every face with its own vertex
/// copies) and wound inside-out is merged and flipped: same SDF as the cube.
#[test]
fn soup_and_inverted_cube_are_repaired() {
    let a = 0.2;
    let (v, t) = cube(a);
    let mut soup_v = Vec::new();
    let mut soup_t = Vec::new();
    for tri in &t {
        let base = soup_v.len() as u32;
        soup_v.extend([v[tri[0] as usize], v[tri[2] as usize], v[tri[1] as usize]]);
        soup_t.push([base, base + 1, base + 2]);
    }
    let path = temp_file("soup.obj", &obj_text(&soup_v, &soup_t));
    let mesh = TriangleMesh::from_obj(&path, 1.0, Vector3::zeros()).unwrap();
    assert_eq!(mesh.vertex_count(), 8);
    let mut rng = Rng::new(7);
    for _ in 0..300 {
        let x = rng.vec3(-0.5, 0.5);
        assert!((mesh.distance(&x).0 - box_sdf(&x, a).0).abs() < 1e-12);
    }
}

#[test]
fn obj_errors_name_file_and_problem() {
    let missing = std::env::temp_dir().join("weft-no-such-dir/none.obj");
    let e = TriangleMesh::from_obj(&missing, 1.0, Vector3::zeros()).unwrap_err();
    assert!(matches!(e, CollideError::ObjRead { .. }), "{e:?}");
    assert!(e.to_string().contains("none.obj"), "{e}");

    let bad_v = temp_file(
        "bad_v.obj",
        "# cube\nv 0 0 0\nv 1.0 abc 2.0\nv 0 1 0\nf 1 2 3\n",
    );
    let e = TriangleMesh::from_obj(&bad_v, 1.0, Vector3::zeros()).unwrap_err();
    match &e {
        CollideError::ObjParse { line, .. } => assert_eq!(*line, 3, "{e}"),
        other => panic!("expected a parse error, got {other:?}"),
    }
    assert!(
        e.to_string().contains("bad_v.obj") && e.to_string().contains("three numbers"),
        "{e}"
    );

    let bad_f = temp_file(
        "bad_f.obj",
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 99\n",
    );
    let e = TriangleMesh::from_obj(&bad_f, 1.0, Vector3::zeros()).unwrap_err();
    match &e {
        CollideError::ObjParse { line, reason, .. } => {
            assert_eq!(*line, 5, "{e}");
            assert!(reason.contains("99"), "{e}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }

    let empty = temp_file("empty.obj", "# nothing\nv 0 0 0\n");
    let e = TriangleMesh::from_obj(&empty, 1.0, Vector3::zeros()).unwrap_err();
    assert!(matches!(e, CollideError::EmptyMesh { .. }), "{e:?}");
    assert!(e.to_string().contains("empty.obj"), "{e}");

    let e = TriangleMesh::from_obj(&bad_f, 0.0, Vector3::zeros()).unwrap_err();
    assert!(e.to_string().contains("scale"), "{e}");
}

#[test]
fn open_or_inconsistent_meshes_are_reported() {
    let (v, t) = cube(0.1);
    // Missing the z = +a face: its 4 edges are boundary edges.
    let open: Vec<[u32; 3]> = t
        .iter()
        .copied()
        .filter(|f| !(f[0] >= 4 && f[1] >= 4 && f[2] >= 4))
        .collect();
    assert_eq!(open.len(), 10);
    let path = temp_file("open_cube.obj", &obj_text(&v, &open));
    let e = TriangleMesh::from_obj(&path, 1.0, Vector3::zeros()).unwrap_err();
    match &e {
        CollideError::MeshNotClosed { count, name, .. } => {
            assert_eq!(*count, 4, "{e}");
            assert!(name.contains("open_cube.obj"));
        }
        other => panic!("expected MeshNotClosed, got {other:?}"),
    }
    assert!(e.to_string().contains("boundary edge"), "{e}");
    // One flipped triangle: its 3 edges have neighbours with the same winding.
    let mut flipped = t.clone();
    flipped[0].swap(1, 2);
    let e = TriangleMesh::from_triangles("flipped", &v, &flipped).unwrap_err();
    match &e {
        CollideError::MeshNotClosed { count, .. } => assert_eq!(*count, 3, "{e}"),
        other => panic!("expected MeshNotClosed, got {other:?}"),
    }
}

#[test]
fn motion_interpolates_keyframes() {
    let m = RigidMotion::new(&[
        Keyframe {
            time: 0.0,
            translation: Vector3::new(0.0, 0.0, 0.0),
            rotation: None,
        },
        Keyframe {
            time: 2.0,
            translation: Vector3::new(2.0, 0.0, 0.0),
            rotation: Some(Vector3::new(0.0, 0.0, std::f64::consts::FRAC_PI_2)),
        },
    ])
    .unwrap();
    let iso = m.transform(1.0);
    assert!((iso.translation.vector - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-15);
    assert!((iso.rotation.angle() - std::f64::consts::FRAC_PI_4).abs() < 1e-14);
    assert!((m.linear_velocity(0.5) - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-15);
    assert!(
        (m.angular_velocity(0.5) - Vector3::new(0.0, 0.0, std::f64::consts::FRAC_PI_4)).norm()
            < 1e-14
    );
    // Held outside the keyframe range, at rest.
    assert_eq!(m.transform(-1.0), m.transform(0.0));
    assert!((m.transform(5.0).translation.vector - Vector3::new(2.0, 0.0, 0.0)).norm() < 1e-15);
    assert_eq!(
        m.velocity_at(&Vector3::new(1.0, 1.0, 1.0), 5.0),
        Vector3::zeros()
    );
}

/// The velocity of a collider point equals the time derivative of the
/// transform applied to that material point.
/// `RigidMotion::from_rest` is the two-keyframe motion from the identity:
/// constant velocities `translation/duration` and `rotation/duration`, the
/// final pose held after `duration`, and a non-positive duration rejected.
#[test]
fn motion_from_rest_moves_at_constant_velocity() {
    let (d, w) = (Vector3::new(0.2, -0.1, 0.05), Vector3::new(0.0, 0.6, 0.0));
    let m = RigidMotion::from_rest(2.0, d, Some(w)).unwrap();
    assert!((m.linear_velocity(0.7) - d / 2.0).norm() < 1e-15);
    assert!((m.angular_velocity(1.3) - w / 2.0).norm() < 1e-15);
    let end = m.transform(5.0);
    assert!((end.translation.vector - d).norm() < 1e-15);
    assert!((end.rotation.scaled_axis() - w).norm() < 1e-14);
    assert!(m.linear_velocity(5.0).norm() == 0.0);
    assert!(RigidMotion::from_rest(0.0, d, None).is_err());
}

#[test]
fn moving_collider_velocity_matches_fd_of_transform() {
    let mut rng = Rng::new(8);
    let frames: Vec<Keyframe> = (0..5)
        .map(|i| Keyframe {
            time: 0.3 * i as f64 + if i > 0 { 0.1 } else { 0.0 },
            translation: rng.vec3(-0.5, 0.5),
            rotation: Some(rng.unit() * rng.uniform(0.0, 3.0)),
        })
        .collect();
    let m = RigidMotion::new(&frames).unwrap();
    let sphere = Sphere::new(Vector3::new(0.1, 0.0, -0.05), 0.2).unwrap();
    let col = Collider::new(sphere, 1e3, 0.3)
        .unwrap()
        .with_motion(m.clone());
    let h = 1e-6;
    let mut checked = 0;
    for _ in 0..300 {
        let t = rng.uniform(-0.1, 1.4);
        if frames.iter().any(|k| (k.time - t).abs() < 10.0 * h) {
            continue;
        }
        let x = rng.vec3(-1.0, 1.0);
        let local = m.transform(t).inverse_transform_point(&x.into());
        let fd = (m.transform(t + h) * local - m.transform(t - h) * local) / (2.0 * h);
        let v = col.velocity_at(&x, t);
        assert!(
            (v - fd).norm() <= 1e-7 * fd.norm().max(1.0),
            "t = {t}: {v} vs {fd}"
        );
        // The world SDF is the sphere's, moved with the collider.
        let centre = m.transform(t) * nalgebra::Point3::from(sphere.center);
        let (phi, n) = col.distance(&x, t);
        assert!((phi - ((x - centre.coords).norm() - 0.2)).abs() < 1e-12);
        assert!((n - (x - centre.coords).normalize()).norm() < 1e-12);
        checked += 1;
    }
    assert!(checked > 250);
}

#[test]
fn bad_keyframes_are_rejected() {
    let e = RigidMotion::from_translations(&[]).unwrap_err();
    assert!(e.to_string().contains("at least one"), "{e}");
    let e = RigidMotion::from_translations(&[(0.0, [0.0; 3]), (0.5, [1.0; 3]), (0.5, [2.0; 3])])
        .unwrap_err();
    match &e {
        CollideError::Keyframes { index, .. } => assert_eq!(*index, 2),
        other => panic!("{other:?}"),
    }
    let e = RigidMotion::from_translations(&[(0.0, [f64::NAN, 0.0, 0.0])]).unwrap_err();
    assert!(e.to_string().contains("finite"), "{e}");
}
