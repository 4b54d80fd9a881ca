//! Tangent planes of mesh colliders (DESIGN §6, the per-step linearisation
//! of `φ`): one plane per surface sheet near a point, a contact force that is
//! continuous across a concave crease where the closest-point force jumps,
//! derivatives against finite differences, and planes that move with the
//! collider.

use nalgebra::Vector3;
use weft_solver::collide::*;

/// An L-shaped prism: the polygon (0,0) (2,0) (2,1) (1,1) (1,2) (0,2)
/// (counter-clockwise) extruded over z in [0, 1] (m). Its notch x > 1,
/// y > 1 is outside the body, with a concave edge along (1, 1, z) between
/// the face y = 1 (normal +y) and the face x = 1 (normal +x).
fn l_prism() -> TriangleMesh {
    let poly = [
        [0.0, 0.0],
        [2.0, 0.0],
        [2.0, 1.0],
        [1.0, 1.0],
        [1.0, 2.0],
        [0.0, 2.0],
    ];
    let mut v = Vec::new();
    for z in [0.0, 1.0] {
        for p in poly {
            v.push(Vector3::new(p[0], p[1], z));
        }
    }
    let n = poly.len() as u32;
    let mut t = Vec::new();
    // Caps: a fan from vertex 0 (the L is star-shaped from it).
    for i in 1..n - 1 {
        t.push([0, i + 1, i]); // bottom, normal -z
        t.push([n, n + i, n + i + 1]); // top, normal +z
    }
    // Sides: outward for a counter-clockwise polygon.
    for i in 0..n {
        let j = (i + 1) % n;
        t.push([i, j, n + j]);
        t.push([i, n + j, n + i]);
    }
    TriangleMesh::from_triangles("L prism", &v, &t).unwrap()
}

const K: f64 = 1e3;
const OFFSET: f64 = 0.05;

#[test]
fn one_plane_on_a_face_two_in_a_crease() {
    let mesh = l_prism();
    // Above the middle of the bottom-right face x in [1, 2], y = 0 (normal -y):
    // several coplanar triangles are near, one plane is kept.
    let mut out = Vec::new();
    mesh.tangent_planes(&Vector3::new(1.5, -0.02, 0.5), 0.1, &mut out);
    assert_eq!(out.len(), 1);
    assert!((out[0].normal - Vector3::new(0.0, -1.0, 0.0)).norm() < 1e-12);
    assert!((out[0].distance(&Vector3::new(1.5, -0.02, 0.5)) - 0.02).abs() < 1e-12);
    // Too far: nothing.
    out.clear();
    mesh.tangent_planes(&Vector3::new(1.5, -0.5, 0.5), 0.1, &mut out);
    assert!(out.is_empty());
    // In the notch, 3 cm from both faces of the concave edge: two planes,
    // +x and +y, each at 3 cm.
    let x = Vector3::new(1.03, 1.03, 0.5);
    mesh.tangent_planes(&x, 0.1, &mut out);
    assert_eq!(out.len(), 2);
    let has = |n: Vector3<f64>| out.iter().any(|p| (p.normal - n).norm() < 1e-12);
    assert!(has(Vector3::x()) && has(Vector3::y()));
    for p in &out {
        assert!((p.distance(&x) - 0.03).abs() < 1e-12);
    }
}

/// Beside the L prism's convex edge along (2, 1, z), between the face
/// y = 1 (normal +y, x in [1, 2]) and the face x = 2 (normal +x, y in
/// [0, 1]): a node 2 cm over the face y = 1 and 2 cm short of the edge.
/// The face x = 2's plane extended past the edge would put it 2 cm
/// *inside* (a push of k (o + 0.02) along +x, over the body's free side);
/// the node is behind that face, so it gives no plane, and the force is
/// the exact `φ`'s. Around the edge no plane is nearer to a node than `φ`.
#[test]
fn no_plane_beside_a_convex_edge_is_nearer_than_the_body() {
    let mesh = l_prism();
    let c = Collider::new(l_prism(), K, 0.0).unwrap();
    let zero = Vector3::zeros();
    let x = Vector3::new(1.98, 1.02, 0.5);
    let mut out = Vec::new();
    mesh.tangent_planes(&x, 0.1, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!((out[0].normal - Vector3::y()).norm() < 1e-12);
    assert!((out[0].distance(&x) - 0.02).abs() < 1e-12);
    let f = -c
        .plane_contact(&out[0], &x, &zero, 0.0, OFFSET)
        .unwrap()
        .penalty
        .gradient;
    let exact = -c
        .node_contact(&x, &zero, 0.0, OFFSET)
        .unwrap()
        .penalty
        .gradient;
    assert!((f - exact).norm() < 1e-9 * K * OFFSET, "{f:?} {exact:?}");
    assert!((f - Vector3::y() * K * (OFFSET - 0.02)).norm() < 1e-9 * K * OFFSET);
    // Over both faces, in the wedge beside the edge, and in the notch's
    // crease: every plane at least as far as φ, the first one at φ.
    for (px, py) in [
        (1.99, 1.005),
        (2.005, 0.99),
        (2.01, 1.01),
        (2.03, 1.001),
        (1.9, 1.04),
        (2.04, 0.9),
        (1.01, 1.03),
    ] {
        let x = Vector3::new(px, py, 0.5);
        let (phi, _) = mesh.distance(&x);
        out.clear();
        mesh.tangent_planes(&x, 0.1, &mut out);
        assert!((out[0].distance(&x) - phi).abs() < 1e-12);
        for p in &out {
            assert!(
                p.distance(&x) >= phi - 1e-12,
                "({px}, {py}): {p:?} at φ {phi}"
            );
        }
    }
}

#[test]
fn crease_force_is_continuous_with_planes_and_jumps_without() {
    let c = Collider::new(l_prism(), K, 0.0).unwrap();
    assert!(c.uses_tangent_planes());
    // Planes taken at the bisector point, then the node moves across the
    // bisector a = b by ±1 µm.
    let x0 = Vector3::new(1.02, 1.02, 0.5);
    let mut planes = Vec::new();
    c.tangent_planes(&x0, 0.0, 0.1, &mut planes);
    assert_eq!(planes.len(), 2);
    let zero = Vector3::zeros();
    let plane_force = |x: &Vector3<f64>| -> Vector3<f64> {
        planes
            .iter()
            .filter_map(|p| c.plane_contact(p, x, &zero, 0.0, OFFSET))
            .map(|nc| -nc.penalty.gradient)
            .sum()
    };
    let exact_force = |x: &Vector3<f64>| -> Vector3<f64> {
        -c.node_contact(x, &zero, 0.0, OFFSET)
            .unwrap()
            .penalty
            .gradient
    };
    let eps = 1e-6;
    let below = x0 + Vector3::new(eps, -eps, 0.0); // closer to the face y = 1
    let above = x0 + Vector3::new(-eps, eps, 0.0); // closer to the face x = 1
    let jump_exact = (exact_force(&above) - exact_force(&below)).norm();
    let jump_planes = (plane_force(&above) - plane_force(&below)).norm();
    // Exact φ: the force turns from k (o - 0.02) ŷ to k (o - 0.02) x̂.
    let f = K * (OFFSET - 0.02);
    assert!(
        (jump_exact - f * 2f64.sqrt()).abs() < 1e-2 * f,
        "{jump_exact}"
    );
    // Planes: both faces push, the force changes by k·2√2·eps only.
    assert!(jump_planes < 4.0 * K * eps, "{jump_planes}");
    let fp = plane_force(&x0);
    assert!((fp - Vector3::new(f, f, 0.0)).norm() < 1e-9 * f);
}

#[test]
fn plane_contact_derivatives_match_finite_differences() {
    let c = Collider::new(l_prism(), K, 0.4).unwrap();
    let x0 = Vector3::new(1.03, 1.01, 0.4);
    let mut planes = Vec::new();
    c.tangent_planes(&x0, 0.0, 0.1, &mut planes);
    let xd = Vector3::new(0.02, -0.01, 0.03);
    for p in &planes {
        let e = |x: &Vector3<f64>| {
            c.plane_contact(p, x, &xd, 0.0, OFFSET)
                .unwrap()
                .penalty
                .energy
        };
        let nc = c.plane_contact(p, &x0, &xd, 0.0, OFFSET).unwrap();
        let h = 1e-6;
        for k in 0..3 {
            let mut d = Vector3::zeros();
            d[k] = h;
            let fd = (e(&(x0 + d)) - e(&(x0 - d))) / (2.0 * h);
            assert!(
                (fd - nc.penalty.gradient[k]).abs() < 1e-6 * K * OFFSET,
                "gradient {k}"
            );
            let g = |x: &Vector3<f64>| {
                c.plane_contact(p, x, &xd, 0.0, OFFSET)
                    .unwrap()
                    .penalty
                    .gradient
            };
            let fd_col = (g(&(x0 + d)) - g(&(x0 - d))) / (2.0 * h);
            let col = nc.penalty.hessian.column(k).into_owned();
            assert!((fd_col - col).norm() < 1e-6 * K, "Hessian column {k}");
        }
        // Friction: tangential to the plane, opposing the slip, μ F_n at speed ≫ ε_v.
        let fr = nc.friction.force;
        assert!(fr.dot(&p.normal).abs() < 1e-12);
        assert!(fr.dot(&xd) < 0.0);
        let slip = xd - p.normal * p.normal.dot(&xd);
        let expect = 0.4 * nc.penalty.normal_force * slip.norm()
            / (slip.norm_squared() + DEFAULT_FRICTION_SPEED.powi(2)).sqrt();
        assert!((fr.norm() - expect).abs() < 1e-12 * expect.max(1.0));
    }
}

#[test]
fn planes_move_with_the_collider() {
    let d = Vector3::new(0.0, -0.01, 0.0);
    let motion = RigidMotion::from_rest(1.0, d, None).unwrap();
    let c = Collider::new(l_prism(), K, 0.0)
        .unwrap()
        .with_motion(motion);
    // Above the face y = 0 (normal -y), 2 cm out; at t = 1 the body has moved
    // 1 cm towards the node (in -y), so the node is 1 cm out.
    let x = Vector3::new(1.5, -0.02, 0.5);
    let mut planes = Vec::new();
    c.tangent_planes(&x, 0.0, 0.1, &mut planes);
    assert_eq!(planes.len(), 1);
    let zero = Vector3::zeros();
    let at = |t: f64| {
        c.plane_contact(&planes[0], &x, &zero, t, OFFSET)
            .unwrap()
            .phi
    };
    assert!((at(0.0) - 0.02).abs() < 1e-12);
    assert!((at(1.0) - 0.01).abs() < 1e-12);
    // Taken at t = 1 from the moved body: the same plane distance.
    planes.clear();
    c.tangent_planes(&x, 1.0, 0.1, &mut planes);
    assert!(
        (c.plane_contact(&planes[0], &x, &zero, 1.0, OFFSET)
            .unwrap()
            .phi
            - 0.01)
            .abs()
            < 1e-12
    );
}
