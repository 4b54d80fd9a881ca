//! Yarn self-collision: closest points, repulsion derivatives, neighbour
//! exclusion and the spatial-hash broad phase against brute force.

mod collide_common;

use collide_common::*;
use nalgebra::{SVector, Vector3};
use weft_core::{FabricBuilder, Material, WovenPatchSpec};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};
use weft_solver::collide::*;

fn q12(p: [Vector3<f64>; 4]) -> SVector<f64, 12> {
    let mut q = SVector::<f64, 12>::zeros();
    for (i, v) in p.iter().enumerate() {
        q.fixed_rows_mut::<3>(3 * i).copy_from(v);
    }
    q
}

#[test]
fn closest_points_are_global_minima() {
    let mut rng = Rng::new(21);
    for _ in 0..300 {
        let [p0, p1, q0, q1] = std::array::from_fn(|_| rng.vec3(-1.0, 1.0));
        let cp = closest_points(&p0, &p1, &q0, &q1);
        assert!((0.0..=1.0).contains(&cp.s) && (0.0..=1.0).contains(&cp.t));
        assert!((cp.on_p - (p0 + cp.s * (p1 - p0))).norm() < 1e-15);
        for i in 0..=50 {
            for j in 0..=50 {
                let (s, t) = (i as f64 / 50.0, j as f64 / 50.0);
                let d = ((p0 + s * (p1 - p0)) - (q0 + t * (q1 - q0))).norm();
                assert!(d >= cp.distance - 1e-12, "sample {d} < {}", cp.distance);
            }
        }
    }
}

#[test]
fn closest_points_of_parallel_and_degenerate_segments() {
    // Parallel, overlapping on s in [0.5, 1]: distance 0.3, middle s = 0.75.
    let cp = closest_points(
        &Vector3::new(0.0, 0.0, 0.0),
        &Vector3::new(1.0, 0.0, 0.0),
        &Vector3::new(0.5, 0.3, 0.0),
        &Vector3::new(2.0, 0.3, 0.0),
    );
    assert!((cp.distance - 0.3).abs() < 1e-15);
    assert!((cp.s - 0.75).abs() < 1e-15);
    assert!((cp.t - 0.25 / 1.5).abs() < 1e-15);
    // Anti-parallel, disjoint along the axis: ends closest.
    let cp = closest_points(
        &Vector3::new(0.0, 0.0, 0.0),
        &Vector3::new(1.0, 0.0, 0.0),
        &Vector3::new(3.0, 0.4, 0.0),
        &Vector3::new(2.0, 0.4, 0.0),
    );
    assert!((cp.distance - (1.0f64 + 0.16).sqrt()).abs() < 1e-15);
    assert_eq!((cp.s, cp.t), (1.0, 1.0));
    // Zero-length segments.
    let a = Vector3::new(0.1, 0.2, 0.3);
    let cp = closest_points(&a, &a, &Vector3::zeros(), &Vector3::new(0.0, 0.0, 1.0));
    assert!((cp.distance - (0.05f64).sqrt()).abs() < 1e-15);
    assert!((cp.t - 0.3).abs() < 1e-15);
    let cp = closest_points(&a, &a, &Vector3::zeros(), &Vector3::zeros());
    assert!((cp.distance - a.norm()).abs() < 1e-15);
}

/// Random pairs in contact with interior closest points.
fn interior_pairs(rng: &mut Rng, d0: f64, n: usize) -> Vec<SVector<f64, 12>> {
    let mut out = Vec::new();
    while out.len() < n {
        let c = rng.vec3(-1.0, 1.0);
        let (u, w) = (rng.unit(), rng.unit());
        if u.cross(&w).norm() < 0.2 {
            continue;
        }
        let gap = rng.uniform(0.05, 0.95) * d0;
        let nrm = u.cross(&w).normalize();
        let (s, t) = (rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9));
        let (lp, lq) = (rng.uniform(0.5, 2.0), rng.uniform(0.5, 2.0));
        let p0 = c - s * lp * u;
        let q0 = c - gap * nrm - t * lq * w;
        let q = q12([p0, p0 + lp * u, q0, q0 + lq * w]);
        let [a, b, e, f] = std::array::from_fn(|i| q.fixed_rows::<3>(3 * i).into_owned());
        let cp = closest_points(&a, &b, &e, &f);
        if cp.s > 0.05 && cp.s < 0.95 && cp.t > 0.05 && cp.t < 0.95 {
            out.push(q);
        }
    }
    out
}

#[test]
fn repulsion_gradient_matches_fd() {
    let (d0, k) = (0.4, 1e3);
    let mut rng = Rng::new(22);
    for q in interior_pairs(&mut rng, d0, 200) {
        let ev = repulsion(&q, d0, k).expect("in contact");
        assert!((ev.energy - repulsion_energy(&q, d0, k)).abs() < 1e-14 * ev.energy);
        let fd = fd_gradient(|x| repulsion_energy(x, d0, k), &q, 1e-7);
        let err = rel_error(&ev.gradient, &fd, 1e-12);
        assert!(err < 1e-6, "rel error {err:e}");
        assert_sym_psd(&ev.hessian, 1e-12);
        // Momentum: the four end forces sum to zero.
        let total: Vector3<f64> = (0..4)
            .map(|i| ev.gradient.fixed_rows::<3>(3 * i).into_owned())
            .sum();
        assert!(total.norm() < 1e-12 * ev.gradient.norm());
        // The cubic law of triangle-mesh cloth: its own energy's gradient,
        // and at d = d0 (1 - 1e-3) a thousandth of the quadratic law's force
        // and 2e-3 of its stiffness.
        let law = RepulsionLaw::Cubic;
        let ec = repulsion_with(&q, d0, k, law).expect("in contact");
        let fd = fd_gradient(|x| repulsion_energy_with(x, d0, k, law), &q, 1e-7);
        let err = rel_error(&ec.gradient, &fd, 1e-12);
        assert!(err < 1e-6, "cubic law: rel error {err:e}");
        assert_sym_psd(&ec.hessian, 1e-12);
    }
    let (_, f, s) = RepulsionLaw::Cubic.eval(1e-3 * d0, d0, k);
    let (_, fq, sq) = RepulsionLaw::Quadratic.eval(1e-3 * d0, d0, k);
    assert!((f / fq - 1e-3).abs() < 1e-12 && (s / sq - 2e-3).abs() < 1e-12);
}

/// The dropped Hessian part is `-k (d0 - d) ∇²d`: the FD Hessian approaches
/// the Gauss-Newton one as `d → d0`, with an error proportional to `d0 - d`.
#[test]
fn repulsion_hessian_is_gauss_newton() {
    let k = 1e3;
    let mut rng = Rng::new(23);
    for q in interior_pairs(&mut rng, 0.4, 50) {
        let [a, b, e, f] = std::array::from_fn(|i| q.fixed_rows::<3>(3 * i).into_owned());
        let d = closest_points(&a, &b, &e, &f).distance;
        let mut prev = f64::INFINITY;
        for frac in [1e-1, 1e-2, 1e-3] {
            let d0 = d * (1.0 + frac);
            let grad =
                |x: &SVector<f64, 12>| repulsion(x, d0, k).map_or(SVector::zeros(), |r| r.gradient);
            let h = repulsion(&q, d0, k).unwrap().hessian;
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

#[test]
fn repulsion_of_touching_segments_is_bounded() {
    let (d0, k) = (0.4, 1e3);
    let q = q12([
        Vector3::new(-1.0, 0.0, 0.0),
        Vector3::new(1.0, 0.0, 0.0),
        Vector3::new(0.0, -1.0, 0.0),
        Vector3::new(0.0, 1.0, 0.0),
    ]);
    let ev = repulsion(&q, d0, k).unwrap();
    assert_eq!(ev.closest.distance, 0.0);
    assert!((ev.energy - 0.5 * k * d0 * d0).abs() < 1e-12);
    // Normal along z (the normal of both directions), equal split.
    let g0 = ev.gradient.fixed_rows::<3>(0).into_owned();
    assert!(
        (g0 - Vector3::new(0.0, 0.0, -k * d0 * 0.5)).norm() < 1e-12,
        "{g0}"
    );
    assert!(
        repulsion(
            &q12([
                Vector3::zeros(),
                Vector3::x(),
                Vector3::new(0.0, 0.5, 0.0),
                Vector3::new(1.0, 0.5, 0.0)
            ]),
            d0,
            k
        )
        .is_none()
    );
}

fn hop_distances(n: usize, edges: &[[usize; 2]]) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &[a, b] in edges {
        adj[a].push(b);
        adj[b].push(a);
    }
    (0..n)
        .map(|s| {
            let mut dist = vec![usize::MAX; n];
            dist[s] = 0;
            let mut queue = std::collections::VecDeque::from([s]);
            while let Some(v) = queue.pop_front() {
                for &w in &adj[v] {
                    if dist[w] == usize::MAX {
                        dist[w] = dist[v] + 1;
                        queue.push_back(w);
                    }
                }
            }
            dist
        })
        .collect()
}

fn brute_force(
    x: &[Vector3<f64>],
    segs: &[[usize; 2]],
    d0: f64,
    hops: &[Vec<usize>],
    k: usize,
) -> Vec<[usize; 2]> {
    let mut out = Vec::new();
    for i in 0..segs.len() {
        for j in i + 1..segs.len() {
            let near = segs[i]
                .iter()
                .any(|&a| segs[j].iter().any(|&b| hops[a][b] <= k));
            let [a, b] = segs[i];
            let [c, d] = segs[j];
            if !near && closest_points(&x[a], &x[b], &x[c], &x[d]).distance < d0 {
                out.push([i, j]);
            }
        }
    }
    out
}

/// Random polylines (so the exclusion matters) in a box.
fn segment_soup(rng: &mut Rng, chains: usize, len: usize) -> (Vec<Vector3<f64>>, Vec<[usize; 2]>) {
    let mut x = Vec::new();
    let mut segs = Vec::new();
    for _ in 0..chains {
        let mut p = rng.vec3(0.0, 0.01);
        for i in 0..len {
            x.push(p);
            if i > 0 {
                segs.push([x.len() - 2, x.len() - 1]);
            }
            p += rng.unit() * rng.uniform(0.0, 1e-3);
        }
    }
    (x, segs)
}

#[test]
fn exclusion_matches_bfs_hop_distances() {
    let mut rng = Rng::new(24);
    let (x, segs) = segment_soup(&mut rng, 6, 10);
    let mut edges = segs.clone();
    for _ in 0..10 {
        edges.push([rng.below(x.len()), rng.below(x.len())]);
    }
    let hops = hop_distances(x.len(), &edges);
    let graph = NodeGraph::from_edges(x.len(), &edges).unwrap();
    for k in 0..4 {
        let ex = Exclusion::new(&graph, k);
        for a in 0..x.len() {
            for b in 0..x.len() {
                assert_eq!(ex.near(a, b), hops[a][b] <= k, "k {k} nodes {a} {b}");
            }
        }
    }
    assert!(NodeGraph::from_edges(3, &[[0, 3]]).is_err());
}

/// The rest-distance exclusion equals Floyd–Warshall shortest paths
/// thresholded at the radius, on a soup with random lengths and zero-length
/// (tie) edges; bad input is refused.
#[test]
fn exclusion_within_distance_matches_shortest_paths() {
    let mut rng = Rng::new(25);
    let (x, segs) = segment_soup(&mut rng, 6, 10);
    let n = x.len();
    let mut edges: Vec<([usize; 2], f64)> =
        segs.iter().map(|&s| (s, rng.uniform(0.5, 1.5))).collect();
    for _ in 0..10 {
        edges.push(([rng.below(n), rng.below(n)], 0.0));
    }
    let mut dist = vec![vec![f64::INFINITY; n]; n];
    for (i, row) in dist.iter_mut().enumerate() {
        row[i] = 0.0;
    }
    for &([a, b], w) in &edges {
        dist[a][b] = dist[a][b].min(w);
        dist[b][a] = dist[b][a].min(w);
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                let via = dist[i][k] + dist[k][j];
                if via < dist[i][j] {
                    dist[i][j] = via;
                }
            }
        }
    }
    for radius in [0.0, 0.7, 1.6, 3.1] {
        let ex = Exclusion::within_distance(n, &edges, radius).unwrap();
        for a in 0..n {
            for b in 0..n {
                assert_eq!(
                    ex.near(a, b),
                    dist[a][b] <= radius,
                    "radius {radius} nodes {a} {b}"
                );
            }
        }
    }
    assert!(Exclusion::within_distance(3, &[([0, 3], 1.0)], 1.0).is_err());
    assert!(Exclusion::within_distance(3, &[([0, 1], f64::NAN)], 1.0).is_err());
    assert!(Exclusion::within_distance(3, &[([0, 1], 1.0)], -1.0).is_err());
}

#[test]
fn broad_phase_equals_brute_force_on_segment_soups() {
    let d0 = 0.4e-3;
    for seed in 0..8 {
        let mut rng = Rng::new(100 + seed);
        let (x, segs) = segment_soup(&mut rng, 30, 15);
        let hops = hop_distances(x.len(), &segs);
        for k in [0, DEFAULT_EXCLUSION_HOPS, 4] {
            let graph = NodeGraph::from_edges(x.len(), &segs).unwrap();
            let sc = SelfCollision::new(segs.clone(), Exclusion::new(&graph, k), d0).unwrap();
            let expected = brute_force(&x, &segs, d0, &hops, k);
            assert!(!expected.is_empty(), "the soup must have contacts");
            let got: Vec<[usize; 2]> = sc.contacts(&x).iter().map(|c| c.segments).collect();
            assert_eq!(got, expected, "seed {seed}, k {k}");
            let cand = sc.candidates(&x);
            assert!(expected.iter().all(|p| cand.binary_search(p).is_ok()));
            // Other cell sizes, repeated runs, one thread: same output.
            for h in [d0, 2.5 * d0, 1e-2] {
                let sc2 = sc.clone().with_cell_size(h);
                assert_eq!(sc2.candidates(&x), cand, "cell size {h}");
            }
            assert_eq!(sc.candidates(&x), cand);
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            assert_eq!(pool.install(|| sc.candidates(&x)), cand);
        }
    }
}

/// A woven patch folded over a cylinder of radius ρ: the two layers are
/// `2ρ < d0` apart. Self-collision finds the contacts the brute force finds
/// (many), and none on the flat patch at rest.
#[test]
fn folded_woven_patch_contacts_equal_brute_force() {
    let mut b = FabricBuilder::new(vec![Material::example_cotton()]).unwrap();
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [0.01, 0.01],
        [16, 16],
        [0.0; 3],
    ))
    .unwrap();
    let fabric = b.build().unwrap();
    let d0 = 2.0 * 0.25e-3 + 0.1e-3;
    let sc = SelfCollision::from_fabric(&fabric, d0, DEFAULT_EXCLUSION_HOPS).unwrap();
    let flat = fabric.initial.x.clone();
    assert!(sc.contacts(&flat).is_empty(), "no self-contact at rest");

    let rho = 0.45 * d0;
    let xf = 0.0004;
    let folded: Vec<Vector3<f64>> = flat
        .iter()
        .map(|p| {
            let a = p.x - xf;
            if a <= 0.0 {
                *p
            } else if a < std::f64::consts::PI * rho {
                Vector3::new(
                    xf + rho * (a / rho).sin(),
                    p.y + rho * (1.0 - (a / rho).cos()),
                    p.z,
                )
            } else {
                Vector3::new(xf - (a - std::f64::consts::PI * rho), p.y + 2.0 * rho, p.z)
            }
        })
        .collect();
    let segs: Vec<[usize; 2]> = sc.segments().to_vec();
    let edges = segs.clone();
    let hops = hop_distances(fabric.node_count(), &edges);
    let expected = brute_force(&folded, &segs, d0, &hops, DEFAULT_EXCLUSION_HOPS);
    let contacts = sc.contacts(&folded);
    let got: Vec<[usize; 2]> = contacts.iter().map(|c| c.segments).collect();
    assert_eq!(got, expected);
    assert!(got.len() > 100, "{} contacts", got.len());
    assert_eq!(sc.contacts(&folded), contacts, "deterministic");
    // Each contact's data is consistent with the repulsion element.
    for c in &contacts {
        let q = c.coords(&folded);
        let ev = repulsion(&q, d0, 1.0).unwrap();
        assert_eq!(ev.closest, c.closest);
        assert_eq!(
            c.nodes,
            [
                segs[c.segments[0]][0],
                segs[c.segments[0]][1],
                segs[c.segments[1]][0],
                segs[c.segments[1]][1]
            ]
        );
    }
}
