//! Animated mesh colliders (`weft_solver::collide::MeshAnimation`, issue 23
//! item 6): poses linear between frames, the surface velocity as the frames'
//! difference quotient (checked against finite differences of the poses),
//! the tangent planes carrying it, and clear errors for frames that are not
//! the same mesh.

use nalgebra::Vector3;
use std::sync::Arc;
use weft_solver::collide::{CollideError, Collider, MeshAnimation, TangentPlane};

/// An axis-aligned box `[lo, hi]` with every face's 4 corners as separate
/// vertices (24 vertices, as an exporter writing per-face normals would),
/// triangles wound counter-clockwise seen from outside.
fn split_box(lo: Vector3<f64>, hi: Vector3<f64>) -> (Vec<Vector3<f64>>, Vec<[u32; 3]>) {
    let c = |i: usize| {
        Vector3::new(
            if i & 1 == 0 { lo.x } else { hi.x },
            if i & 2 == 0 { lo.y } else { hi.y },
            if i & 4 == 0 { lo.z } else { hi.z },
        )
    };
    // Faces as corner quads, counter-clockwise seen from outside.
    let faces = [
        [0, 4, 6, 2], // -x
        [1, 3, 7, 5], // +x
        [0, 1, 5, 4], // -y
        [2, 6, 7, 3], // +y
        [0, 2, 3, 1], // -z
        [4, 5, 7, 6], // +z
    ];
    let mut v = Vec::new();
    let mut t = Vec::new();
    for f in faces {
        let b = v.len() as u32;
        v.extend(f.iter().map(|&i| c(i)));
        t.push([b, b + 1, b + 2]);
        t.push([b, b + 2, b + 3]);
    }
    (v, t)
}

/// The box moved by `d(k) = (0.01 k, 0.02 k², 0)` m at frame `k`.
fn frames(n: usize) -> (Vec<Vec<Vector3<f64>>>, Vec<[u32; 3]>) {
    let (v, t) = split_box(Vector3::new(-0.1, -0.02, -0.1), Vector3::new(0.1, 0.0, 0.1));
    let f = (0..n)
        .map(|k| {
            let k = k as f64;
            let d = Vector3::new(0.01 * k, 0.02 * k * k, 0.0);
            v.iter().map(|p| p + d).collect()
        })
        .collect();
    (f, t)
}

#[test]
fn poses_are_linear_between_frames_and_velocities_are_their_rate() {
    let fps = 10.0;
    let (f, t) = frames(4);
    let a = MeshAnimation::from_frames("box", &f, &t, fps).unwrap();
    // 24 split vertices merge into the box's 8 corners; every frame follows.
    assert_eq!(a.rest().vertex_count(), 8);
    assert_eq!(a.frame_count(), 4);
    assert!((a.duration() - 0.3).abs() < 1e-15);
    let top = |x: &[Vector3<f64>]| x.iter().map(|p| p.y).fold(f64::MIN, f64::max);
    // Between frames 1 (y offset 0.02) and 2 (0.08), a quarter of the way.
    let (x, v) = a.state_at(0.125);
    assert!(
        (top(&x) - (0.02 + 0.25 * 0.06)).abs() < 1e-12,
        "{}",
        top(&x)
    );
    for vi in &v {
        assert!((vi - Vector3::new(0.1, 0.6, 0.0)).norm() < 1e-12, "{vi}");
    }
    // Finite differences of the poses inside a frame interval.
    for tc in [0.04, 0.13, 0.27] {
        let h = 1e-4;
        let (xp, _) = a.state_at(tc + h);
        let (xm, _) = a.state_at(tc - h);
        let (_, v) = a.state_at(tc);
        for i in 0..x.len() {
            let fd = (xp[i] - xm[i]) / (2.0 * h);
            assert!(
                (fd - v[i]).norm() < 1e-9,
                "t {tc}: fd {fd} against {}",
                v[i]
            );
        }
    }
    // At rest before the start and after the last frame.
    for tc in [-1.0, 0.0, 0.3, 5.0] {
        let (_, v) = a.state_at(tc);
        assert!(v.iter().all(|vi| vi.norm() == 0.0), "t {tc}");
    }
    assert!((top(&a.state_at(5.0).0) - 0.18).abs() < 1e-12);
}

#[test]
fn tangent_planes_of_an_animated_body_carry_its_surface_velocity() {
    let (f, t) = frames(3);
    let anim = Arc::new(MeshAnimation::from_frames("box", &f, &t, 10.0).unwrap());
    let mut c = Collider::animated(anim, 100.0, 0.5).unwrap();
    c.advance_to(0.15);
    assert_eq!(c.pose_time(), 0.15);
    // Top face at y = 0.02 + 0.5 · 0.06 = 0.05 m, moving at (0.1, 0.6, 0).
    let x = Vector3::new(0.05, 0.0505, 0.0);
    let mut planes: Vec<TangentPlane> = Vec::new();
    c.tangent_planes(&x, 0.15, 1e-3, &mut planes);
    assert_eq!(planes.len(), 1, "{planes:?}");
    let p = planes[0];
    assert!((p.distance(&x) - 5e-4).abs() < 1e-12);
    assert!((p.normal - Vector3::y()).norm() < 1e-12);
    assert!((p.velocity - Vector3::new(0.1, 0.6, 0.0)).norm() < 1e-12);
    assert!((c.velocity_at(&x, 0.15) - Vector3::new(0.1, 0.6, 0.0)).norm() < 1e-12);
    // Friction opposes the velocity relative to the surface: a node at
    // rest on the body moving at (0.1, 0.6, 0) is dragged along +x.
    let nc = c
        .plane_contact(
            &p,
            &(x - Vector3::new(0.0, 6e-4, 0.0)),
            &Vector3::zeros(),
            0.15,
            3e-4,
        )
        .unwrap();
    assert!(nc.friction.force.x > 0.0, "{:?}", nc.friction.force);
    // The same pose once more builds nothing new; another time does.
    let before = Arc::as_ptr(match &c.shape {
        weft_solver::collide::Shape::Mesh(m) => m,
        _ => unreachable!(),
    });
    c.advance_to(0.15);
    let same = match &c.shape {
        weft_solver::collide::Shape::Mesh(m) => Arc::as_ptr(m),
        _ => unreachable!(),
    };
    assert_eq!(before, same);
    c.advance_to(0.2);
    let (phi, _) = c.distance(&Vector3::new(0.0, 0.08, 0.0), 0.2);
    assert!(phi.abs() < 1e-12, "top at 0.02 + 0.06 = 0.08 m: phi {phi}");
}

#[test]
fn frames_that_are_not_the_same_mesh_are_refused() {
    let (mut f, t) = frames(3);
    f[2].pop();
    let e = MeshAnimation::from_frames("walk", &f, &t, 30.0).unwrap_err();
    let s = e.to_string();
    assert!(matches!(e, CollideError::InvalidShape { .. }), "{s}");
    assert!(
        s.contains("walk") && s.contains("frame 2 has 23 vertices, frame 0 has 24"),
        "{s}"
    );
    let (f, t) = frames(2);
    let s = MeshAnimation::from_frames("walk", &f, &t, 0.0)
        .unwrap_err()
        .to_string();
    assert!(s.contains("frames per second"), "{s}");
    let s = MeshAnimation::from_frames("walk", &[], &t, 30.0)
        .unwrap_err()
        .to_string();
    assert!(s.contains("no frames"), "{s}");
}
