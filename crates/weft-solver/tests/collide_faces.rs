//! Triangle-mesh self-collision: the closest point of a triangle, the
//! vertex–face repulsion's derivatives, and the vertex–face broad phase
//! against brute force.

mod collide_common;

use collide_common::*;
use nalgebra::{SVector, Vector3};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_solver::collide::*;

fn q12(p: [Vector3<f64>; 4]) -> SVector<f64, 12> {
    let mut q = SVector::<f64, 12>::zeros();
    for (i, v) in p.iter().enumerate() {
        q.fixed_rows_mut::<3>(3 * i).copy_from(v);
    }
    q
}

/// The closest point is the minimum over a dense barycentric sampling of
/// the triangle, its weights are convex and reproduce it.
#[test]
fn closest_point_on_triangle_is_the_global_minimum() {
    let mut rng = Rng::new(31);
    for _ in 0..300 {
        let [p, a, b, c] = std::array::from_fn(|_| rng.vec3(-1.0, 1.0));
        let cl = closest_on_triangle(&p, &a, &b, &c);
        let [al, be, ga] = cl.weights;
        assert!(cl.weights.iter().all(|w| (0.0..=1.0).contains(w)));
        assert!((al + be + ga - 1.0).abs() < 1e-14);
        assert!((al * a + be * b + ga * c - cl.point).norm() < 1e-14);
        assert!(((p - cl.point).norm() - cl.distance).abs() < 1e-15);
        let n = 60;
        for i in 0..=n {
            for j in 0..=n - i {
                let (s, t) = (i as f64 / n as f64, j as f64 / n as f64);
                let y = a + s * (b - a) + t * (c - a);
                assert!((p - y).norm() >= cl.distance - 1e-12);
            }
        }
    }
}

#[test]
fn closest_point_of_interior_edge_corner_and_degenerate_cases() {
    let (a, b, c) = (Vector3::zeros(), Vector3::x(), Vector3::y());
    // Above the interior: the projection, at the height.
    let cl = closest_on_triangle(&Vector3::new(0.2, 0.3, 0.5), &a, &b, &c);
    assert!((cl.distance - 0.5).abs() < 1e-15);
    assert!((cl.weights[1] - 0.2).abs() < 1e-15 && (cl.weights[2] - 0.3).abs() < 1e-15);
    // Beyond the hypotenuse: its midpoint.
    let cl = closest_on_triangle(&Vector3::new(1.0, 1.0, 0.0), &a, &b, &c);
    assert!((cl.distance - 0.5f64.sqrt()).abs() < 1e-15);
    assert!((cl.weights[1] - 0.5).abs() < 1e-15 && (cl.weights[2] - 0.5).abs() < 1e-15);
    // Beyond a corner: the corner.
    let cl = closest_on_triangle(&Vector3::new(-1.0, -2.0, 2.0), &a, &b, &c);
    assert_eq!(cl.weights, [1.0, 0.0, 0.0]);
    assert!((cl.distance - 3.0).abs() < 1e-15);
    // A degenerate (collinear) triangle is its edges.
    let cl = closest_on_triangle(&Vector3::new(0.5, 1.0, 0.0), &a, &b, &(2.0 * b));
    assert!((cl.distance - 1.0).abs() < 1e-15);
    assert!((cl.point - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-15);
}

/// Random vertex–face pairs in contact (gap at least 5 % of `d0`, so the
/// cubic law's gradient is not vanishingly small) whose closest point is inside the
/// face or on an edge, away from the region boundaries (where the weights
/// are not differentiable).
fn pairs_in_contact(rng: &mut Rng, d0: f64, n: usize) -> Vec<SVector<f64, 12>> {
    let mut out = Vec::new();
    while out.len() < n {
        let [a, b, c] = std::array::from_fn(|_| rng.vec3(-1.0, 1.0));
        let normal = (b - a).cross(&(c - a));
        if normal.norm() < 0.3 {
            continue;
        }
        // A point of the triangle or just outside an edge, lifted off it.
        let (s, t) = (rng.uniform(-0.2, 1.0), rng.uniform(-0.2, 1.0));
        let y = a + s * (b - a) + t * (c - a);
        let p = y + rng.uniform(0.05, 0.95) * d0 * rng.unit();
        let cl = closest_on_triangle(&p, &a, &b, &c);
        let margin = cl.weights.iter().all(|&w| w == 0.0 || w > 0.05);
        let on_face = cl.weights.iter().all(|&w| w > 0.05);
        let off_face_edge = cl.weights.iter().filter(|&&w| w == 0.0).count() == 1;
        // Not near the interior/edge boundary: the vertex is well off the
        // plane or well outside the edge.
        let plane = ((p - cl.point).dot(&normal.normalize())).abs();
        let clear = on_face || (off_face_edge && plane < 0.8 * cl.distance);
        if cl.distance < 0.95 * d0 && cl.distance > 0.02 * d0 && margin && clear {
            // Oriented as detection orients it: the vertex on the side of
            // the right-hand normal.
            if on_normal_side(&p, &a, &b, &c) {
                out.push(q12([p, a, b, c]));
            } else {
                out.push(q12([p, a, c, b]));
            }
        }
    }
    out
}

/// Both laws, vertex–face pairs in the face's interior and off its edges.
#[test]
fn face_repulsion_gradient_matches_fd() {
    let (d0, k) = (0.4, 1e3);
    let mut rng = Rng::new(32);
    let pairs = pairs_in_contact(&mut rng, d0, 300);
    let edge_pairs = pairs
        .iter()
        .filter(|q| {
            let [p, a, b, c] = std::array::from_fn(|i| q.fixed_rows::<3>(3 * i).into_owned());
            closest_on_triangle(&p, &a, &b, &c).weights.contains(&0.0)
        })
        .count();
    assert!(
        edge_pairs > 30 && edge_pairs < 270,
        "{edge_pairs} of 300 on edges"
    );
    for (q, law) in pairs
        .into_iter()
        .flat_map(|q| [(q, RepulsionLaw::Quadratic), (q, RepulsionLaw::Cubic)])
    {
        let ev = face_repulsion(&q, d0, k, law).expect("in contact");
        assert!((ev.energy - face_repulsion_energy(&q, d0, k, law)).abs() < 1e-14 * ev.energy);
        let fd = fd_gradient(|x| face_repulsion_energy(x, d0, k, law), &q, 1e-7);
        let err = rel_error(&ev.gradient, &fd, 1e-12);
        assert!(err < 1e-6, "rel error {err:e}");
        assert_sym_psd(&ev.hessian, 1e-12);
        // Momentum: the four forces sum to zero; the vertex is pushed away
        // from the face (along p - c_T).
        let total: Vector3<f64> = (0..4)
            .map(|i| ev.gradient.fixed_rows::<3>(3 * i).into_owned())
            .sum();
        assert!(total.norm() < 1e-12 * ev.gradient.norm());
        let p = q.fixed_rows::<3>(0).into_owned();
        let push = -ev.gradient.fixed_rows::<3>(0).into_owned();
        assert!(push.dot(&(p - ev.closest.point)) > 0.0);
    }
}

/// The dropped Hessian part is `-(k (d0 - d)² / d0) ∇²d`: the FD Hessian
/// of the energy approaches the Gauss-Newton one as `d → d0`.
#[test]
fn face_repulsion_hessian_is_gauss_newton() {
    let k = 1e3;
    let mut rng = Rng::new(33);
    for q in pairs_in_contact(&mut rng, 0.4, 50) {
        let [p, a, b, c] = std::array::from_fn(|i| q.fixed_rows::<3>(3 * i).into_owned());
        let d = closest_on_triangle(&p, &a, &b, &c).distance;
        let mut prev = f64::INFINITY;
        for frac in [1e-1, 1e-2, 1e-3] {
            let d0 = d * (1.0 + frac);
            let grad = |x: &SVector<f64, 12>| {
                face_repulsion(x, d0, k, RepulsionLaw::Cubic)
                    .map_or(SVector::zeros(), |r| r.gradient)
            };
            let h = face_repulsion(&q, d0, k, RepulsionLaw::Cubic)
                .unwrap()
                .hessian;
            let fd = fd_jacobian(grad, &q, 1e-8 * d);
            let err = rel_error(&h, &fd, 1e-12);
            assert!(
                err < prev,
                "error must shrink with d0 - d: {err:e} after {prev:e}"
            );
            prev = err;
        }
        assert!(prev < 1e-2, "{prev:e}");
    }
}

/// The law is C² across `d0`: energy, force and stiffness all vanish as
/// `d → d0` (the force as `(d0 - d)²`, the stiffness as `d0 - d`), and at
/// contact the force is `k d0` as the segment pairs' law.
#[test]
fn face_repulsion_vanishes_smoothly_at_d0() {
    let (d0, k) = (0.1, 1e3);
    let at = |h: f64| {
        let q = q12([
            Vector3::new(0.2, 0.2, h),
            Vector3::zeros(),
            Vector3::x(),
            Vector3::y(),
        ]);
        face_repulsion(&q, d0, k, RepulsionLaw::Cubic).map(|e| {
            let force = -e.gradient[2];
            let stiffness = e.hessian[(2, 2)];
            (e.energy, force, stiffness)
        })
    };
    let (e, f, s) = at(d0 * (1.0 - 1e-3)).unwrap();
    assert!((f - k * d0 * 1e-6).abs() < 1e-12 * k * d0, "force {f}");
    assert!((s - 2.0 * k * 1e-3).abs() < 1e-9 * k, "stiffness {s}");
    assert!((e - k * d0 * d0 * 1e-9 / 3.0).abs() < 1e-12 * k * d0 * d0);
    assert!(at(d0).is_none());
    let (_, f0, s0) = at(1e-12).unwrap();
    assert!((f0 - k * d0).abs() < 1e-6 * k * d0, "contact force {f0}");
    assert!((s0 - 2.0 * k).abs() < 1e-6 * k);
}

#[test]
fn face_repulsion_on_the_face_is_bounded_along_its_normal() {
    let (d0, k) = (0.1, 1e3);
    let q = q12([
        Vector3::new(0.2, 0.2, 0.0),
        Vector3::zeros(),
        Vector3::x(),
        Vector3::y(),
    ]);
    let ev = face_repulsion(&q, d0, k, RepulsionLaw::Cubic).unwrap();
    assert_eq!(ev.closest.distance, 0.0);
    assert!((ev.energy - k * d0 * d0 / 3.0).abs() < 1e-15);
    let push = -ev.gradient.fixed_rows::<3>(0).into_owned();
    assert!(
        (push - Vector3::new(0.0, 0.0, k * d0)).norm() < 1e-12,
        "{push}"
    );
    // Outside d0: no contact.
    let far = q12([
        Vector3::new(0.2, 0.2, 0.1),
        Vector3::zeros(),
        Vector3::x(),
        Vector3::y(),
    ]);
    assert!(face_repulsion(&far, d0, k, RepulsionLaw::Cubic).is_none());
}

/// A vertex pressed onto a face and on through it, along the face's
/// normal: the pair keeps the side it was oriented with, so the push stays
/// along `+n̂` and grows on smoothly through the face (energy, force and
/// stiffness continuous at `d = 0`: the cubic law's `k d0` and `2 k` there),
/// where the unsigned distance's push would flip to `-n̂`. The gradient of
/// a passed-through pair matches finite differences. Off the interior
/// (beside an edge, below the plane) the distance is unsigned.
#[test]
fn face_repulsion_keeps_the_vertex_on_its_side() {
    let (d0, k) = (0.1, 1e3);
    let (a, b, c) = (Vector3::zeros(), Vector3::x(), Vector3::y());
    let at = |z: f64| {
        let q = q12([Vector3::new(0.2, 0.3, z), a, b, c]);
        let ev = face_repulsion(&q, d0, k, RepulsionLaw::Cubic).expect("in contact");
        let push = -ev.gradient.fixed_rows::<3>(0).into_owned();
        (q, ev.energy, push, ev.hessian[(2, 2)])
    };
    let mut prev = 0.0;
    for i in 0..=40 {
        let z = d0 * (0.9 - 1.4 * i as f64 / 40.0); // 0.9 d0 down to -0.5 d0
        let (q, energy, push, stiffness) = at(z);
        let gap = d0 - z;
        assert!((push - Vector3::new(0.0, 0.0, k * gap * gap / d0)).norm() < 1e-9 * k * d0);
        assert!((energy - k * gap.powi(3) / (3.0 * d0)).abs() < 1e-12 * k * d0 * d0);
        assert!((stiffness - 2.0 * k * gap / d0).abs() < 1e-9 * k);
        assert!(push.z > prev, "the push grows as the vertex goes in");
        prev = push.z;
        if z < -0.05 * d0 {
            let fd = fd_gradient(
                |x| face_repulsion_energy(x, d0, k, RepulsionLaw::Cubic),
                &q,
                1e-7,
            );
            let ev = face_repulsion(&q, d0, k, RepulsionLaw::Cubic).unwrap();
            let err = rel_error(&ev.gradient, &fd, 1e-12);
            assert!(err < 1e-6, "passed through at z = {z}: rel error {err:e}");
        }
    }
    let (_, e0, f0, s0) = at(0.0);
    let (_, e1, f1, s1) = at(-1e-12);
    assert!((e1 - e0).abs() < 1e-9 * e0 && (f1 - f0).norm() < 1e-9 * f0.norm());
    assert!((f0.z - k * d0).abs() < 1e-9 * k * d0 && (s0 - 2.0 * k).abs() < 1e-9 * k);
    assert!((s1 - s0).abs() < 1e-6 * k);
    // The pair oriented the other way (detected below the face): pushed
    // down, and hard once through to above it (gap 2.5 d0 at 1.5 d0 above).
    let flipped = q12([Vector3::new(0.2, 0.3, -0.5 * d0), a, c, b]);
    let ev = face_repulsion(&flipped, d0, k, RepulsionLaw::Cubic).unwrap();
    assert!((ev.gradient[2] - k * 0.25 * d0).abs() < 1e-9 * k * d0);
    let above = q12([Vector3::new(0.2, 0.3, 1.5 * d0), a, c, b]);
    let ev = face_repulsion(&above, d0, k, RepulsionLaw::Cubic).unwrap();
    assert!((ev.gradient[2] - k * 6.25 * d0).abs() < 1e-9 * k * d0);
    // Beside the edge a b (y < 0) and below the plane: unsigned, pushed
    // away from the edge, down and out.
    let beside = q12([Vector3::new(0.5, -0.03, -0.04), a, b, c]);
    let ev = face_repulsion(&beside, d0, k, RepulsionLaw::Cubic).unwrap();
    assert!(!ev.closest.interior && (ev.closest.distance - 0.05).abs() < 1e-15);
    let push = -ev.gradient.fixed_rows::<3>(0).into_owned();
    let expected = k * 0.05 * 0.05 / d0 * Vector3::new(0.0, -0.6, -0.8);
    assert!((push - expected).norm() < 1e-9 * k * d0, "{push}");
}

/// Two sheets of a triangulated grid, the second above the first and
/// crumpled: the vertex–face contacts equal the brute force over all
/// vertex–face pairs not joined by the exclusion, in the same order, for
/// several cell sizes and one thread; so do the layer crossings
/// (`SelfCollision::crossings`) over all edge–face pairs.
#[test]
fn face_broad_phase_equals_brute_force() {
    let m = 12;
    let h = 1e-2;
    let mut rng = Rng::new(34);
    let mut x = Vec::new();
    let mut faces = Vec::new();
    let mut edges = Vec::new();
    for sheet in 0..2 {
        let first = x.len();
        for i in 0..m {
            for j in 0..m {
                let z = if sheet == 0 {
                    0.0
                } else {
                    0.3 * h + rng.uniform(-0.3, 0.3) * h
                };
                x.push(Vector3::new(i as f64 * h, j as f64 * h, z));
            }
        }
        let id = |i: usize, j: usize| first + i * m + j;
        for i in 0..m - 1 {
            for j in 0..m - 1 {
                faces.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
                faces.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
                for e in [
                    [id(i, j), id(i + 1, j)],
                    [id(i, j), id(i, j + 1)],
                    [id(i, j), id(i + 1, j + 1)],
                ] {
                    edges.push(e);
                }
            }
        }
    }
    let d0 = 0.25 * h;
    let graph = NodeGraph::from_edges(x.len(), &edges).unwrap();
    let exclusion = Exclusion::new(&graph, 1);
    let sc = SelfCollision::new(edges.clone(), exclusion.clone(), d0)
        .unwrap()
        .with_faces(faces.clone())
        .unwrap();
    let mut expected = Vec::new();
    for v in 0..x.len() {
        for (f, &[a, b, c]) in faces.iter().enumerate() {
            if [a, b, c].iter().any(|&n| exclusion.near(v, n)) {
                continue;
            }
            if closest_on_triangle(&x[v], &x[a], &x[b], &x[c]).distance < d0 {
                expected.push([v, f]);
            }
        }
    }
    assert!(expected.len() > 20, "{} contacts", expected.len());
    // Every contact is between the sheets: none within one.
    assert!(
        expected
            .iter()
            .all(|&[v, f]| (v < m * m) != (faces[f][0] < m * m))
    );
    let got: Vec<[usize; 2]> = sc
        .face_contacts(&x)
        .iter()
        .map(|c| [c.nodes[0], c.face])
        .collect();
    assert_eq!(got, expected);
    // Each pair is oriented: the vertex on the side of its triangle's
    // right-hand normal, the corners those of the face.
    for c in sc.face_contacts(&x) {
        let [v, a, b, cc] = c.nodes;
        assert!(on_normal_side(&x[v], &x[a], &x[b], &x[cc]));
        let [wa, wb, wc] = c.closest.weights;
        assert!((wa * x[a] + wb * x[b] + wc * x[cc] - c.closest.point).norm() < 1e-12);
        let (mut got, mut face) = ([a, b, cc], faces[c.face]);
        got.sort_unstable();
        face.sort_unstable();
        assert_eq!(got, face);
    }
    for cell in [d0, 3.0 * d0, 0.1] {
        let sc2 = sc.clone().with_cell_size(cell);
        let got2: Vec<[usize; 2]> = sc2
            .face_contacts(&x)
            .iter()
            .map(|c| [c.nodes[0], c.face])
            .collect();
        assert_eq!(got2, expected, "cell size {cell}");
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    assert_eq!(pool.install(|| sc.face_contacts(&x)), sc.face_contacts(&x));
    // Layer crossings (`SelfCollision::crossings`): the brute force over
    // all edge–face pairs not joined by the exclusion, with the crumpled
    // sheet as it is (touching the flat one at most) and pushed through it
    // (heights doubled about 0.3 h).
    let through: Vec<Vector3<f64>> = x
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i < m * m {
                *p
            } else {
                Vector3::new(p.x, p.y, 2.0 * (p.z - 0.3 * h))
            }
        })
        .collect();
    for (name, x) in [("as is", &x), ("through", &through)] {
        let mut expected = Vec::new();
        for (e, &[p, q]) in edges.iter().enumerate() {
            for (f, &[a, b, c]) in faces.iter().enumerate() {
                if [p, q]
                    .iter()
                    .any(|&v| [a, b, c].iter().any(|&n| exclusion.near(v, n)))
                {
                    continue;
                }
                if segment_triangle_intersection(&x[p], &x[q], [&x[a], &x[b], &x[c]]).is_some() {
                    expected.push([e, f]);
                }
            }
        }
        if name == "through" {
            assert!(expected.len() > 20, "{} crossings", expected.len());
        }
        assert!(
            expected
                .iter()
                .all(|&[e, f]| (edges[e][0] < m * m) != (faces[f][0] < m * m)),
            "{name}: a crossing within a sheet"
        );
        for cell in [None, Some(d0), Some(0.1)] {
            let sc2 = match cell {
                Some(c) => sc.clone().with_cell_size(c),
                None => sc.clone(),
            };
            assert_eq!(sc2.crossings(x), expected, "{name}, cell size {cell:?}");
        }
    }
    // A face naming a node beyond the graph is refused.
    assert!(
        SelfCollision::new(edges, exclusion, d0)
            .unwrap()
            .with_faces(vec![[0, 1, x.len()]])
            .is_err()
    );
}

/// Möller–Trumbore on a unit right triangle: a segment through the face
/// meets it where expected; one outside it, one short of its plane and
/// one in its plane do not.
#[test]
fn segment_triangle_intersection_hits_and_misses() {
    let t = [
        &Vector3::new(0.0, 0.0, 0.0),
        &Vector3::new(1.0, 0.0, 0.0),
        &Vector3::new(0.0, 1.0, 0.0),
    ];
    let hit = segment_triangle_intersection(
        &Vector3::new(0.2, 0.3, -1.0),
        &Vector3::new(0.2, 0.3, 3.0),
        t,
    )
    .expect("crosses the face");
    assert!((hit - Vector3::new(0.2, 0.3, 0.0)).norm() < 1e-12);
    // Outside the triangle, short of its plane, and in its plane.
    assert!(
        segment_triangle_intersection(
            &Vector3::new(0.8, 0.8, -1.0),
            &Vector3::new(0.8, 0.8, 1.0),
            t
        )
        .is_none()
    );
    assert!(
        segment_triangle_intersection(
            &Vector3::new(0.2, 0.2, 0.5),
            &Vector3::new(0.2, 0.2, 1.0),
            t
        )
        .is_none()
    );
    assert!(
        segment_triangle_intersection(
            &Vector3::new(-1.0, 0.2, 0.0),
            &Vector3::new(2.0, 0.2, 0.0),
            t
        )
        .is_none()
    );
}
