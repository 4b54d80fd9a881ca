//! weft-core: topology of woven patches and explicit yarns, masses, free
//! masks, selectors, and bad-input errors that name their place.

use nalgebra::Vector3;
use weft_core::*;

fn cotton() -> Material {
    Material::example_cotton()
}

fn patch(size: [f64; 2], counts: [usize; 2]) -> Fabric {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", size, counts, [0.0, 0.1, 0.0]);
    spec.normal = [0.0, 0.0, 2.0];
    spec.warp_direction = [1.0, 1.0, 0.5]; // projected into the plane
    b.add_woven_patch(&spec).unwrap();
    b.build().unwrap()
}

#[test]
fn woven_patch_counts() {
    let (nw, nf) = (7, 5);
    let f = patch([0.01, 0.008], [nw, nf]);
    assert_eq!(f.node_count(), nw * nf);
    assert_eq!(f.dof_count(), 5 * nw * nf);
    assert_eq!(f.yarns.len(), nw + nf);
    assert_eq!(f.elements.segments.len(), nw * (nf - 1) + nf * (nw - 1));
    assert_eq!(f.elements.bending.len(), nw * (nf - 2) + nf * (nw - 2));
    // (warp neighbours) x (weft neighbours) summed over the grid.
    assert_eq!(f.elements.shear.len(), 4 * (nw - 1) * (nf - 1));
    // Free arc-length coordinates: u free off the warp_start/warp_end edges,
    // v free off the weft_start/weft_end edges.
    let free_u = nw * (nf - 2);
    let free_v = nf * (nw - 2);
    assert_eq!(f.elements.anchors.len(), free_u + free_v);
    assert_eq!(f.free_dof_count(), 3 * nw * nf + free_u + free_v);
}

#[test]
fn woven_patch_geometry_and_rest_coordinates() {
    let (sx, sy) = (0.012, 0.008);
    let f = patch([sx, sy], [5, 7]);
    let s = &f.initial;
    let n = Vector3::new(0.0, 0.0, 1.0);
    let d1 = Vector3::new(1.0, 1.0, 0.0).normalize();
    let d2 = n.cross(&d1);
    let c = Vector3::new(0.0, 0.1, 0.0);
    let corner = |k: u8| f.select(0, &NodeSelector::Corner(k)).unwrap()[0];
    let expect = [(-0.5, -0.5), (0.5, -0.5), (0.5, 0.5), (-0.5, 0.5)];
    for (k, (a, b)) in expect.iter().enumerate() {
        let x = s.x[corner(k as u8)];
        let e = c + d1 * (a * sx) + d2 * (b * sy);
        assert!((x - e).norm() < 1e-15, "corner {k}: {x} vs {e}");
    }
    // Counter-clockwise about the normal.
    let (x0, x1, x3) = (s.x[corner(0)], s.x[corner(1)], s.x[corner(3)]);
    assert!((x1 - x0).cross(&(x3 - x0)).dot(&n) > 0.0);
    // Rest arc-length coordinates equal distances along the yarns.
    for seg in &f.elements.segments {
        let du = s.arc(seg.b, seg.family) - s.arc(seg.a, seg.family);
        assert!(((s.x[seg.b] - s.x[seg.a]).norm() - du).abs() < 1e-15);
        assert!((du - seg.rest_spacing).abs() < 1e-18);
    }
    // Row-major: node k*n_weft + l is on warp yarn k and weft yarn l.
    let (k, l) = (3, 2);
    let node = k * 7 + l;
    assert_eq!(f.node_yarns[node], [Some(k), Some(5 + l)]);
    assert_eq!(f.yarns[k].nodes[l], node);
    assert_eq!(f.yarns[5 + l].nodes[k], node);
    assert!((s.u[node] - l as f64 * sx / 6.0).abs() < 1e-15);
    assert!((s.v[node] - k as f64 * sy / 4.0).abs() < 1e-15);
    f.check_state(s).unwrap();
}

#[test]
fn woven_patch_free_mask_and_crimp() {
    let f = patch([0.01, 0.01], [4, 6]);
    let node = |k: usize, l: usize| k * 6 + l;
    // Interior crossing: 5 DOF.
    assert_eq!(f.free[node(1, 2)], [true; 5]);
    // warp_start edge: end of the warp yarn (u fixed), weft yarn 0 runs through (v free).
    assert_eq!(f.free[node(1, 0)], [true, true, true, false, true]);
    // weft_end edge: v fixed, u free.
    assert_eq!(f.free[node(3, 2)], [true, true, true, true, false]);
    // Corner: both fixed.
    assert_eq!(f.free[node(0, 0)], [true, true, true, false, false]);
    // Plain weave alternates.
    assert_eq!(f.crimp[node(0, 0)], 1);
    assert_eq!(f.crimp[node(0, 1)], -1);
    assert_eq!(f.crimp[node(1, 0)], -1);
    assert_eq!(f.crimp[node(1, 1)], 1);
}

#[test]
fn pinned_selectors_fix_positions() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", [0.01, 0.01], [4, 5], [0.0; 3]);
    spec.pinned = vec![
        "corner:0".parse().unwrap(),
        "edge:weft_end".parse().unwrap(),
        "6".parse().unwrap(),
    ];
    b.add_woven_patch(&spec).unwrap();
    let f = b.build().unwrap();
    let pinned: Vec<usize> = (0..f.node_count()).filter(|&n| !f.free[n][0]).collect();
    // corner 0 = node 0, edge weft_end = last warp yarn = nodes 15..20, index 6.
    assert_eq!(pinned, vec![0, 6, 15, 16, 17, 18, 19]);
    assert_eq!(
        f.select(0, &"edge:warp_end".parse().unwrap()).unwrap(),
        vec![4, 9, 14, 19]
    );
    assert_eq!(f.select(0, &"corner:2".parse().unwrap()).unwrap(), vec![19]);
}

#[test]
fn total_mass_is_linear_density_times_yarn_length() {
    let (sx, sy, nw, nf) = (0.0115, 0.009, 12, 9);
    let f = patch([sx, sy], [nw, nf]);
    let m = cotton();
    let rho_l = m.density * std::f64::consts::PI * m.radius * m.radius;
    let length = nw as f64 * sx + nf as f64 * sy;
    let total = f.total_mass(&f.initial);
    assert!(
        (total - rho_l * length).abs() < 1e-12 * total,
        "{total} vs {}",
        rho_l * length
    );
}

#[test]
fn explicit_yarn_arc_length_sliding_and_masses() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let mut spec = YarnSpec::new(
        "cotton",
        vec![[0.0, 0.0, 0.0], [0.003, 0.004, 0.0], [0.003, 0.004, 0.002]],
    );
    spec.sliding = true;
    spec.pinned = vec![0];
    spec.point_masses = vec![(2, 0.001)];
    spec.initial_velocities = vec![(2, [0.0, 1.0, 0.0])];
    b.add_yarn(&spec).unwrap();
    let f = b.build().unwrap();
    let s = &f.initial;
    assert_eq!(s.u, vec![0.0, 0.005, 0.007]);
    assert_eq!(f.free[0], [false, false, false, false, false]);
    assert_eq!(f.free[1], [true, true, true, true, false]);
    assert_eq!(f.free[2], [true, true, true, false, false]);
    assert_eq!(f.elements.anchors.len(), 1);
    assert_eq!(s.x_dot[2], Vector3::new(0.0, 1.0, 0.0));
    let rho_l = cotton().linear_density();
    let m = f.lumped_masses(s);
    assert!((m[2] - (0.001 + 0.5 * rho_l * 0.002)).abs() < 1e-15);
    assert!((f.total_mass(s) - (0.001 + rho_l * 0.007)).abs() < 1e-15);
    // Gather layout [x_a, s_a, x_b, s_b].
    let q = f.segment_q(s, &f.elements.segments[0]);
    assert_eq!(
        q.as_slice(),
        &[0.0, 0.0, 0.0, 0.0, 0.003, 0.004, 0.0, 0.005]
    );
    assert_eq!(
        f.segment_dofs(&f.elements.segments[1]),
        [5, 6, 7, 8, 10, 11, 12, 13]
    );
    let e = f.elements.bending[0];
    assert_eq!((e.center, e.next, e.prev), (1, 2, 0));
    assert_eq!(f.bending_dofs(&e)[..4], [5, 6, 7, 8]);
}

#[test]
fn rest_lengths_override_chords() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let mut spec = YarnSpec::new(
        "cotton",
        vec![[0.0; 3], [0.001, 0.0, 0.0], [0.002, 0.0, 0.0]],
    );
    spec.rest_lengths = Some(vec![0.0009, 0.0012]);
    b.add_yarn(&spec).unwrap();
    let f = b.build().unwrap();
    assert!((f.initial.u[2] - 0.0021).abs() < 1e-15);
}

// ---- bad input: each error names its place -------------------------------

fn err_of(r: Result<impl std::fmt::Debug, ModelError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn negative_radius_names_material_and_field() {
    let mut m = cotton();
    m.radius = -0.001;
    let msg = err_of(FabricBuilder::new(vec![m]));
    assert!(
        msg.contains("material 'cotton'") && msg.contains("radius") && msg.contains("positive"),
        "{msg}"
    );
    let mut m = cotton();
    m.stretch_stiffness = f64::NAN;
    let msg = err_of(FabricBuilder::new(vec![m]));
    assert!(
        msg.contains("stretch_stiffness") && msg.contains("finite"),
        "{msg}"
    );
    let mut m = cotton();
    m.damping = Damping::Rayleigh {
        alpha: -1.0,
        beta: 0.0,
    };
    assert!(err_of(FabricBuilder::new(vec![m])).contains("damping.alpha"));
}

#[test]
fn zero_density_without_point_mass_names_yarn_and_node() {
    let mut m = cotton();
    m.density = 0.0;
    let mut b = FabricBuilder::new(vec![m.clone()]).unwrap();
    let mut spec = YarnSpec::new("cotton", vec![[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]);
    spec.pinned = vec![0];
    spec.point_masses = vec![(2, 1.0)];
    b.add_yarn(&spec).unwrap();
    let msg = err_of(b.build());
    assert!(
        msg.contains("object 0, warp yarn 0, node 1") && msg.contains("zero mass"),
        "{msg}"
    );
    // A spring-mass system: zero density, one segment, a point mass, pinned end: fine.
    let mut b = FabricBuilder::new(vec![m]).unwrap();
    let mut spec = YarnSpec::new("cotton", vec![[0.0; 3], [2.0, 0.0, 0.0]]);
    spec.pinned = vec![0];
    spec.point_masses = vec![(1, 1.0)];
    b.add_yarn(&spec).unwrap();
    let f = b.build().unwrap();
    assert!((f.total_mass(&f.initial) - 1.0).abs() < 1e-15);
}

#[test]
fn non_finite_position_names_node() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let spec = YarnSpec::new("cotton", vec![[0.0; 3], [f64::NAN, 0.0, 0.0]]);
    let msg = err_of(b.add_yarn(&spec));
    assert!(
        msg.contains("object 0, warp yarn 0, node 1") && msg.contains("position is not finite"),
        "{msg}"
    );
    let mut spec = YarnSpec::new("cotton", vec![[0.0; 3], [1.0, 0.0, 0.0]]);
    spec.initial_velocities = vec![(1, [0.0, f64::INFINITY, 0.0])];
    let msg = err_of(b.add_yarn(&spec));
    assert!(
        msg.contains("node 1") && msg.contains("initial velocity"),
        "{msg}"
    );
}

#[test]
fn too_few_nodes_names_yarn() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let msg = err_of(b.add_yarn(&YarnSpec::new("cotton", vec![[0.0; 3]])));
    assert!(
        msg.contains("object 0, warp yarn 0")
            && msg.contains("has 1 node")
            && msg.contains("at least two"),
        "{msg}"
    );
}

#[test]
fn non_increasing_arc_length_names_nodes() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let mut spec = YarnSpec::new("cotton", vec![[0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]);
    spec.rest_lengths = Some(vec![1.0, -0.5]);
    let msg = err_of(b.add_yarn(&spec));
    assert!(
        msg.contains("node 2") && msg.contains("node 1") && msg.contains("must be greater"),
        "{msg}"
    );
    let msg = err_of(b.add_yarn(&YarnSpec::new("cotton", vec![[0.0; 3], [0.0; 3]])));
    assert!(msg.contains("nodes 0 and 1 coincide"), "{msg}");
    // In a running state: two crossings passing through each other.
    let f = patch([0.01, 0.01], [4, 4]);
    let mut s = f.initial.clone();
    s.u[2] = s.u[1] - 1e-6;
    let msg = err_of(f.check_state(&s));
    assert!(
        msg.contains("object 0, warp yarn 0") && msg.contains("node 2") && msg.contains("node 1"),
        "{msg}"
    );
    let mut s = f.initial.clone();
    s.x_dot[5].y = f64::NAN;
    let msg = err_of(f.check_state(&s));
    assert!(
        msg.contains("node 1") && msg.contains("velocity is not finite"),
        "{msg}"
    );
}

#[test]
fn bad_patch_and_references() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let mut spec = WovenPatchSpec::new("cotton", [0.01, 0.0], [4, 4], [0.0; 3]);
    assert!(err_of(b.add_woven_patch(&spec)).contains("object 0 (woven_patch): size"));
    spec.size = [0.01, 0.01];
    spec.yarn_counts = [1, 4];
    assert!(err_of(b.add_woven_patch(&spec)).contains("yarn_counts"));
    spec.yarn_counts = [4, 4];
    spec.warp_direction = [0.0, 2.0, 0.0];
    assert!(err_of(b.add_woven_patch(&spec)).contains("not parallel to the normal"));
    spec.warp_direction = [1.0, 0.0, 0.0];
    spec.material = "silk".into();
    let msg = err_of(b.add_woven_patch(&spec));
    assert!(
        msg.contains("unknown material 'silk'") && msg.contains("cotton"),
        "{msg}"
    );
    let mut ys = YarnSpec::new("cotton", vec![[0.0; 3], [1.0, 0.0, 0.0]]);
    ys.pinned = vec![5];
    let msg = err_of(b.add_yarn(&ys));
    assert!(
        msg.contains("pinned names node 5") && msg.contains("2 nodes"),
        "{msg}"
    );
    assert!(
        "corner:4"
            .parse::<NodeSelector>()
            .unwrap_err()
            .contains("expected")
    );
    let mut ys = YarnSpec::new("cotton", vec![[0.0; 3], [1.0, 0.0, 0.0]]);
    ys.pinned = vec![0];
    b.add_yarn(&ys).unwrap();
    let f = b.build().unwrap();
    let msg = err_of(f.select(0, &NodeSelector::Corner(1)));
    assert!(
        msg.contains("object 0") && msg.contains("corner:1") && msg.contains("woven patches"),
        "{msg}"
    );
}

/// A plus-shaped panel: one warp piece of 3 nodes crossing one weft piece of
/// 3 nodes at the centre node 0, plus a second warp piece (2 nodes) that
/// ends on the weft piece's last node.
fn plus_panel() -> WovenPanelSpec {
    let h = 0.002;
    let node = |x: f64, y: f64, u: f64, v: f64, crimp: i8| PanelNode {
        x: [x, y, 0.0],
        u,
        v,
        crimp,
    };
    WovenPanelSpec {
        material: "cotton".into(),
        nodes: vec![
            node(0.0, 0.0, h, h, 1),         // 0: crossing
            node(0.0, -h, 0.0, h, 0),        // 1: warp end
            node(0.0, h, 2.0 * h, h, 0),     // 2: warp end
            node(-h, 0.0, h, 0.0, 0),        // 3: weft end
            node(h, 0.0, h, 2.0 * h, -1),    // 4: weft end, end of warp piece 1
            node(h, h, 2.0 * h, 2.0 * h, 0), // 5: warp piece 1 end
        ],
        warp: vec![vec![1, 0, 2], vec![4, 5]],
        weft: vec![vec![3, 0, 4]],
        sliding: true,
        pinned: vec![1],
    }
}

#[test]
fn woven_panel_free_mask_elements_and_pins() {
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let obj = b.add_woven_panel(&plus_panel()).unwrap();
    let f = b.build().unwrap();
    assert_eq!(obj, 0);
    assert_eq!(
        f.objects[0].kind,
        ObjectKind::WovenPanel {
            warp_yarns: 2,
            weft_yarns: 1
        }
    );
    assert_eq!(f.node_count(), 6);
    assert_eq!(f.yarns.len(), 3);
    assert_eq!(f.elements.segments.len(), 2 + 1 + 2);
    assert_eq!(f.elements.bending.len(), 2);
    // Crossing 0: 2 warp x 2 weft neighbours; node 4: 1 warp x 1 weft.
    assert_eq!(f.elements.shear.len(), 5);
    // Only node 0 is interior to pieces: u and v free there, nowhere else.
    assert_eq!(f.free[0], [true, true, true, true, true]);
    for n in 1..6 {
        assert!(!f.free[n][U_SLOT] && !f.free[n][V_SLOT], "node {n}");
    }
    assert_eq!(f.free[1][..3], [false, false, false]);
    assert_eq!(f.elements.anchors.len(), 2);
    assert_eq!(f.crimp[4], -1);
    assert_eq!(f.node_yarns[4], [Some(1), Some(2)]);
    f.check_state(&f.initial).unwrap();
    // Mass: 0.5 rho_l per metre of rest length at each segment end.
    let rho = cotton().linear_density();
    let m = f.lumped_masses(&f.initial);
    assert!((m[0] - rho * 0.002 * 2.0).abs() < 1e-18);
}

#[test]
fn woven_panel_bad_pieces_are_named() {
    let mut spec = plus_panel();
    spec.warp[1] = vec![4, 0];
    let mut b = FabricBuilder::new(vec![cotton()]).unwrap();
    let e = err_of(b.add_woven_panel(&spec));
    assert!(e.contains("node 0 lies on two warp yarns"), "{e}");
    let mut spec = plus_panel();
    spec.warp[0] = vec![2, 0, 1];
    let e = err_of(b.add_woven_panel(&spec));
    assert!(
        e.contains("warp yarn 0") && e.contains("must be greater"),
        "{e}"
    );
    let mut spec = plus_panel();
    spec.weft[0] = vec![3];
    let e = err_of(b.add_woven_panel(&spec));
    assert!(
        e.contains("weft yarn 0") && e.contains("at least two"),
        "{e}"
    );
    let mut spec = plus_panel();
    spec.warp.pop();
    let e = err_of(b.add_woven_panel(&spec));
    assert!(e.contains("node 5 lies on no yarn"), "{e}");
}

/// `MembraneModuli::isotropic(λ, μ)` is SBO18 eq. 13's density
/// `λ/2 tr(E)² + μ tr(E²)` as `½ εᵀ C ε` with `ε = (E₀₀, E₁₁, √2 E₀₁)`, and
/// `MembraneModuli::orthotropic` inverts the plane-stress compliance
/// `[[1/E₁, -ν₁₂/E₁], [-ν₁₂/E₁, 1/E₂]]` with shear energy `½ G γ²`.
#[test]
fn membrane_moduli_match_their_densities() {
    use weft_core::MembraneModuli;
    let (lambda, mu) = (300.0, 500.0);
    let iso = MembraneModuli::isotropic(lambda, mu).matrix();
    let ortho = MembraneModuli::orthotropic(2e4, 1.5e4, 0.2, 50.0);
    for e in [[0.01, -0.02, 0.005], [0.0, 0.0, 0.3], [-0.1, 0.2, -0.05]] {
        let eps = nalgebra::Vector3::new(e[0], e[1], std::f64::consts::SQRT_2 * e[2]);
        let tr = e[0] + e[1];
        let tr2 = e[0] * e[0] + e[1] * e[1] + 2.0 * e[2] * e[2];
        let expected = 0.5 * lambda * tr * tr + mu * tr2;
        let got = 0.5 * eps.dot(&(iso * eps));
        assert!(
            (got - expected).abs() <= 1e-12 * expected,
            "{got} vs {expected}"
        );
        // Shear: ½ G γ² with γ = 2 E₀₁.
        let shear = 0.5 * eps[2] * ortho.matrix()[(2, 2)] * eps[2];
        let expected = 0.5 * 50.0 * (2.0 * e[2]) * (2.0 * e[2]);
        assert!((shear - expected).abs() <= 1e-12 * expected.max(1e-30));
    }
    let c = ortho.matrix().fixed_view::<2, 2>(0, 0).into_owned();
    let compliance = nalgebra::Matrix2::new(1.0 / 2e4, -0.2 / 2e4, -0.2 / 2e4, 1.0 / 1.5e4);
    let product = c * compliance;
    assert!(
        (product - nalgebra::Matrix2::identity()).amax() < 1e-12,
        "{product}"
    );
    assert_eq!(
        MembraneModuli::isotropic(1.0, 2.0).scaled(0.5),
        MembraneModuli::isotropic(0.5, 1.0)
    );
    let modes = ortho.scaled_per_mode(2e-3, 2e-2);
    assert_eq!(
        [modes.c11, modes.c22, modes.c12],
        [ortho.c11, ortho.c22, ortho.c12].map(|c| 2e-3 * c)
    );
    assert_eq!(modes.shear, 2e-2 * ortho.shear);
    assert!(MembraneModuli::ZERO.is_zero() && !ortho.is_zero());
    assert_eq!(ortho.max_tensile(), ortho.c11);
}
