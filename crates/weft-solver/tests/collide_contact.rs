//! Penalty contact and smoothed Coulomb friction against colliders:
//! finite-difference checks, PSD matrices and the friction law.

mod collide_common;

use collide_common::*;
use nalgebra::{Matrix3, Vector3};
use weft_solver::collide::*;

fn colliders() -> Vec<Collider> {
    let (v, t) = cube(0.25);
    let moving = RigidMotion::from_rest(
        1.0,
        Vector3::new(0.1, 0.05, 0.0),
        Some(Vector3::new(0.2, 0.5, -0.3)),
    )
    .unwrap();
    vec![
        Collider::new(
            Plane::new(Vector3::new(0.0, -0.1, 0.0), Vector3::new(0.1, 1.0, 0.2)).unwrap(),
            1e3,
            0.3,
        )
        .unwrap(),
        Collider::new(
            Sphere::new(Vector3::new(0.0, 0.0, 0.0), 0.3).unwrap(),
            2e3,
            0.5,
        )
        .unwrap(),
        Collider::new(
            Capsule::new(
                Vector3::new(-0.2, 0.0, 0.0),
                Vector3::new(0.2, 0.1, 0.0),
                0.15,
            )
            .unwrap(),
            5e2,
            0.2,
        )
        .unwrap(),
        Collider::new(
            TriangleMesh::from_triangles("cube", &v, &t).unwrap(),
            1e3,
            0.4,
        )
        .unwrap(),
        Collider::new(
            Capsule::new(Vector3::zeros(), Vector3::new(0.0, 0.3, 0.0), 0.1).unwrap(),
            1e3,
            0.3,
        )
        .unwrap()
        .with_motion(moving),
    ]
}

/// Points near the surface (within the contact offset) of each collider.
fn contact_points(c: &Collider, t: f64, offset: f64, rng: &mut Rng, n: usize) -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    while out.len() < n {
        let x = rng.vec3(-0.6, 0.6);
        let (phi, nrm) = c.distance(&x, t);
        // Move onto the band phi in (-offset, offset) along the normal.
        let target = rng.uniform(-0.8 * offset, 0.9 * offset);
        let y = x + (target - phi) * nrm;
        let (phi_y, _) = c.distance(&y, t);
        if (phi_y - target).abs() < 1e-9 {
            out.push(y);
        }
    }
    out
}

#[test]
fn penalty_gradient_matches_fd() {
    let mut rng = Rng::new(11);
    let offset = 0.02;
    let t = 0.4;
    for c in &colliders() {
        let mut checked = 0;
        for x in contact_points(c, t, offset, &mut rng, 60) {
            let e = |p: &Vector3<f64>| penalty_energy(c.distance(p, t).0, offset, c.stiffness);
            let nc = c
                .node_contact(&x, &Vector3::zeros(), t, offset)
                .expect("in contact");
            assert!((nc.penalty.energy - e(&x)).abs() <= 1e-14 * e(&x).max(1e-300));
            let fd = fd_grad3(e, &x, 1e-7);
            let g = nc.penalty.gradient;
            // The cube's SDF has kinks on its medial planes; skip those points.
            let (phi_p, n_p) = c.distance(&(x + 1e-6 * Vector3::new(1.0, 1.0, 1.0)), t);
            if (n_p - nc.normal).norm() > 1e-3 || (phi_p - nc.phi).abs() > 1e-5 {
                continue;
            }
            assert!(
                (g - fd).norm() <= 1e-6 * g.norm(),
                "{c:?} at {x}: {g} vs {fd}"
            );
            assert!((nc.penalty.normal_force - c.stiffness * (offset - nc.phi)).abs() < 1e-12);
            assert!((g + nc.penalty.normal_force * nc.normal).norm() < 1e-12 * g.norm());
            assert_sym_psd(&nc.penalty.hessian, 1e-12);
            checked += 1;
        }
        assert!(checked > 40, "{checked}");
    }
}

#[test]
fn no_contact_outside_the_offset() {
    let c = &colliders()[1];
    let x = Vector3::new(0.0, 0.3 + 0.0201, 0.0);
    assert!(c.node_contact(&x, &Vector3::zeros(), 0.0, 0.02).is_none());
    assert!(penalty(0.0201, &Vector3::y(), 0.02, 1e3).is_none());
    assert_eq!(penalty_energy(0.0201, 0.02, 1e3), 0.0);
    let x = Vector3::new(0.0, 0.3 + 0.0199, 0.0);
    let nc = c.node_contact(&x, &Vector3::zeros(), 0.0, 0.02).unwrap();
    assert!((nc.penalty.gap - 1e-4).abs() < 1e-12);
    // Force pushes the node out along +y with magnitude k g.
    assert!((-nc.penalty.gradient - Vector3::new(0.0, 2e3 * 1e-4, 0.0)).norm() < 1e-9);
}

/// For a plane the Gauss-Newton Hessian is the exact Hessian; for a sphere
/// the difference is exactly the dropped curvature term
/// `-k g (I - n nᵀ)/|x - c|`, negative semi-definite.
#[test]
fn penalty_hessian_drops_only_the_curvature_term() {
    let (k, offset) = (1e3, 0.02);
    let plane = Plane::new(Vector3::new(0.0, 0.1, 0.0), Vector3::new(0.3, 1.0, -0.2)).unwrap();
    let sphere = Sphere::new(Vector3::new(0.1, 0.0, 0.0), 0.3).unwrap();
    let grad = |s: &Shape, x: &Vector3<f64>| {
        let (phi, n) = s.distance(x);
        penalty(phi, &n, offset, k).unwrap().gradient
    };
    let mut rng = Rng::new(12);
    for _ in 0..50 {
        let s: Shape = plane.into();
        let x = plane.point + rng.vec3(-0.5, 0.5);
        let x = x - (s.distance(&x).0 - rng.uniform(-0.01, 0.015)) * plane.normal.into_inner();
        let (phi, n) = s.distance(&x);
        let h = penalty(phi, &n, offset, k).unwrap().hessian;
        let fd = fd_jac3(|p| grad(&s, p), &x, 1e-7);
        assert!((h - fd).norm() <= 1e-6 * h.norm());

        let s: Shape = sphere.into();
        let dir = rng.unit();
        let rho = 0.3 + rng.uniform(-0.01, 0.015);
        let x = sphere.center + rho * dir;
        let (phi, n) = s.distance(&x);
        let pe = penalty(phi, &n, offset, k).unwrap();
        let fd = fd_jac3(|p| grad(&s, p), &x, 1e-7);
        let dropped = -k * pe.gap * (Matrix3::identity() - n * n.transpose()) / rho;
        assert!((fd - (pe.hessian + dropped)).norm() <= 1e-6 * fd.norm());
        assert!(dropped.symmetric_eigen().eigenvalues.max() <= 1e-12);
    }
}

#[test]
fn friction_jacobian_matches_fd_and_is_psd_damping() {
    let mut rng = Rng::new(13);
    for _ in 0..200 {
        let n = rng.unit();
        let fn_ = rng.uniform(0.0, 5.0);
        let mu = rng.uniform(0.0, 1.0);
        let eps = rng.uniform(1e-4, 1e-2);
        let v = rng.vec3(-1.0, 1.0) * 10f64.powf(rng.uniform(-4.0, 0.0));
        let f = friction(fn_, &n, &v, mu, eps);
        let step = 1e-5 * f.slip_velocity.norm().max(eps);
        let fd = fd_jac3(|w| friction(fn_, &n, w, mu, eps).force, &v, step);
        assert!(
            (-f.damping - fd).norm() <= 1e-6 * fd.norm().max(1e-12),
            "{} vs {}",
            -f.damping,
            fd
        );
        assert_sym_psd(&f.damping, 1e-12);
        // Tangential and opposing the slip.
        assert!(f.force.dot(&n).abs() <= 1e-12 * f.force.norm().max(1e-300));
        assert!(f.force.dot(&f.slip_velocity) <= 0.0);
        assert!(
            f.force.cross(&f.slip_velocity).norm()
                <= 1e-12 * (f.force.norm() * f.slip_velocity.norm()).max(1e-300)
        );
        assert!(f.force.norm() <= mu * fn_ * (1.0 + 1e-15));
    }
}

#[test]
fn friction_limits_follow_coulomb() {
    let n = Vector3::new(0.0, 1.0, 0.0);
    let (fn_, mu, eps) = (2.0, 0.4, 1e-3);
    // Fast slip: magnitude μ F_n (to (ε/|v_t|)²/2 = 5e-9).
    let v = Vector3::new(10.0, -3.0, 2.0);
    let f = friction(fn_, &n, &v, mu, eps);
    assert!((f.force.norm() - mu * fn_).abs() <= 1e-8 * mu * fn_);
    let vt = Vector3::new(10.0, 0.0, 2.0);
    assert!((f.force + mu * fn_ * vt.normalize()).norm() <= 1e-8);
    // No slip (purely normal motion): no force.
    let f = friction(fn_, &n, &Vector3::new(0.0, -0.5, 0.0), mu, eps);
    assert_eq!(f.force, Vector3::zeros());
    // Slow slip: viscous, f = -μ F_n v_t / ε to first order.
    let v = Vector3::new(1e-7, 0.0, 0.0);
    let f = friction(fn_, &n, &v, mu, eps);
    assert!((f.force.x + mu * fn_ * 1e-7 / eps).abs() <= 1e-8 * mu * fn_ * 1e-7 / eps);
}

/// A node moving with a moving collider feels no friction; one sliding over
/// it feels friction against the relative velocity.
#[test]
fn friction_uses_the_collider_velocity() {
    let c = &colliders()[4];
    let t = 0.3;
    let mut rng = Rng::new(14);
    for x in contact_points(c, t, 0.02, &mut rng, 20) {
        let vc = c.velocity_at(&x, t);
        assert!(vc.norm() > 1e-3);
        let nc = c.node_contact(&x, &vc, t, 0.02).unwrap();
        assert!(nc.friction.force.norm() <= 1e-12);
        let nc = c.node_contact(&x, &Vector3::zeros(), t, 0.02).unwrap();
        let p = Matrix3::identity() - nc.normal * nc.normal.transpose();
        let slip = p * (-vc);
        assert!((nc.friction.slip_velocity - slip).norm() < 1e-12);
        assert!(nc.friction.force.dot(&slip) < 0.0);
    }
}

/// Within a step, friction on a still collider takes the penalty force at
/// the node's position at the step's start (`node_contact_from`,
/// `plane_contact_from`): sliding
/// fast (|v_t| ≫ ε_v) at x, it has the magnitude μ k (offset - φ(x_start)),
/// not μ k (offset - φ(x)); the penalty itself is x's. A node that was not
/// in contact at the step's start feels no friction yet; one that was keeps
/// its friction after leaving the offset. On a moving collider friction
/// keeps the normal force at x.
#[test]
fn friction_takes_the_normal_force_at_the_step_start() {
    let offset = 0.02;
    let mut rng = Rng::new(15);
    let (mut pressed, mut free) = (0, 0);
    // The still colliders (the last one moves).
    for c in colliders().into_iter().take(4) {
        let t = 0.3;
        for x in contact_points(&c, t, offset, &mut rng, 10) {
            let (_, n) = c.distance(&x, t);
            // Start 3 mm deeper along the normal, or 3 mm beyond the offset.
            let phi = c.distance(&x, t).0;
            for shift in [-0.003, offset - phi + 0.003] {
                let xs = x + n * shift;
                let (phi_s, _) = c.distance(&xs, t);
                let fast = c.velocity_at(&x, t) + n.cross(&rng.unit()).normalize() * 10.0;
                let nc = c.node_contact_from(&xs, &x, &fast, t, offset).unwrap();
                let here = c.node_contact(&x, &fast, t, offset).unwrap();
                assert_eq!(nc.penalty, here.penalty);
                let f_n = c.stiffness * (offset - phi_s).max(0.0);
                let got = nc.friction.force.norm();
                assert!(
                    (got - c.friction * f_n).abs() <= 1e-6 * c.friction * f_n,
                    "friction {got} N, expected μ F_n = {} N",
                    c.friction * f_n
                );
                if f_n > 0.0 {
                    pressed += 1;
                } else {
                    free += 1;
                }
            }
        }
    }
    assert!(
        pressed >= 40 && free >= 30,
        "{pressed} pressed, {free} free starts"
    );
    // On a moving surface friction keeps the normal force at x itself.
    let c = &colliders()[4];
    let t = 0.3;
    for x in contact_points(c, t, offset, &mut rng, 10) {
        let n = c.distance(&x, t).1;
        let fast = c.velocity_at(&x, t) + n.cross(&rng.unit()).normalize() * 10.0;
        let lagged = c.node_contact_from(&(x - n * 0.003), &x, &fast, t, offset);
        assert_eq!(lagged, c.node_contact(&x, &fast, t, offset));
    }
    // A tangent plane of a mesh the same way.
    let plane = TangentPlane {
        point: Vector3::zeros(),
        normal: Vector3::new(0.0, 1.0, 0.0),
        velocity: Vector3::zeros(),
    };
    let c = Collider::new(
        Plane::new(Vector3::zeros(), plane.normal).unwrap(),
        500.0,
        0.4,
    )
    .unwrap();
    let (x, xs) = (Vector3::new(0.0, 0.015, 0.0), Vector3::new(0.0, 0.01, 0.0));
    let slide = Vector3::new(3.0, 0.0, 0.0);
    let nc = c
        .plane_contact_from(&plane, &xs, &x, &slide, 0.0, offset)
        .unwrap();
    assert!((nc.penalty.normal_force - 500.0 * 0.005).abs() < 1e-12);
    assert!((nc.friction.force.x + 0.4 * 500.0 * 0.01).abs() < 1e-6);
    // Left the offset during the step: no penalty, the same friction (it
    // does not jump where the node crosses the offset).
    let out = Vector3::new(0.0, 0.03, 0.0);
    let nc = c
        .plane_contact_from(&plane, &xs, &out, &slide, 0.0, offset)
        .unwrap();
    assert_eq!(nc.penalty.energy, 0.0);
    assert_eq!(nc.penalty.gradient, Vector3::zeros());
    assert!((nc.friction.force.x + 0.4 * 500.0 * 0.01).abs() < 1e-6);
    // Outside at both: no contact.
    assert!(
        c.plane_contact_from(&plane, &out, &out, &slide, 0.0, offset)
            .is_none()
    );
}
