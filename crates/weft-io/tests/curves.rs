//! Yarn curves: crimp offset along the fabric normal, alternating per the
//! plain weave, and Catmull-Rom smoothing.

use nalgebra::Vector3;
use weft_core::{Fabric, Family};
use weft_io::{CurveError, Scene, YarnCurves, catmull_rom, fabric_normals};

const R: f64 = 0.0005;

/// A flat plain-weave patch of `nw` warp and `nf` weft yarns, 1 cm spacing,
/// centred at the origin with the given normal and warp direction.
pub fn patch(nw: usize, nf: usize, normal: [f64; 3], warp: [f64; 3]) -> Fabric {
    let json = format!(
        r#"{{"duration": 1, "time_step": {{"dt": 1e-3}},
        "output": {{"interval": 0.1, "formats": []}},
        "materials": {{"m": {{"radius": {R}, "density": 130, "stretch_stiffness": 500,
            "bending_stiffness": 1e-5, "shear_stiffness": 0, "contact_stiffness": 0,
            "friction": {{"mu": 0.3, "anchor_stiffness": 0}}, "damping": {{"model": "none"}}}}}},
        "objects": [{{"type": "woven_patch", "material": "m",
            "size": [{}, {}], "yarn_counts": [{nw}, {nf}],
            "center": [0, 0, 0], "normal": {normal:?}, "warp_direction": {warp:?},
            "weave": "plain"}}]}}"#,
        0.01 * (nf - 1) as f64,
        0.01 * (nw - 1) as f64,
    );
    Scene::from_str(&json, "patch.json")
        .unwrap()
        .build()
        .unwrap()
        .fabric
}

#[test]
fn flat_patch_offsets_are_plus_minus_r_along_the_normal_alternating() {
    let f = patch(4, 5, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]);
    let x = &f.initial.x;
    let c = YarnCurves::from_positions(&f, x, 1).unwrap();
    assert_eq!(c.curves.len(), 4 + 5);
    assert_eq!(c.point_count(), 2 * 4 * 5);
    for curve in &c.curves {
        let yarn = &f.yarns[curve.yarn];
        assert_eq!(curve.family, yarn.family);
        assert_eq!(curve.radius, R);
        assert_eq!(curve.points.len(), yarn.nodes.len());
        let sign = if yarn.family == Family::Warp {
            1.0
        } else {
            -1.0
        };
        let mut prev_side = 0.0;
        for (p, &n) in curve.points.iter().zip(&yarn.nodes) {
            // In plane: unchanged; along the normal (+z): ±R per the crimp.
            assert_eq!([p[0], p[1]], [x[n].x, x[n].y]);
            let want = sign * f64::from(f.crimp[n]) * R;
            assert!((p[2] - want).abs() < 1e-15, "z {} want {want}", p[2]);
            assert!((p[2].abs() - R).abs() < 1e-15);
            // Over, under, over...: consecutive crossings on opposite sides.
            assert!(p[2] * prev_side <= 0.0);
            prev_side = p[2];
        }
    }
    // Warp and weft at the same crossing are 2R apart, on opposite sides.
    let n = f.yarns[0].nodes[0];
    let warp = c
        .curves
        .iter()
        .find(|k| k.yarn == f.node_yarns[n][0].unwrap())
        .unwrap();
    let weft = c
        .curves
        .iter()
        .find(|k| k.yarn == f.node_yarns[n][1].unwrap())
        .unwrap();
    assert!((warp.points[0][2] - weft.points[0][2]).abs() - 2.0 * R < 1e-15);
    assert_eq!(warp.points[0][2], R, "crimp +1 at node (0,0): warp over");
}

#[test]
fn normal_follows_the_patch_normal() {
    // Patch normal +Y, warp along +Z: n = warp × weft = +Y at every node.
    let f = patch(3, 3, [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
    for n in fabric_normals(&f, &f.initial.x) {
        let n = n.unwrap();
        assert!((n - Vector3::y()).norm() < 1e-12, "{n:?}");
    }
    let c = YarnCurves::from_positions(&f, &f.initial.x, 1).unwrap();
    for curve in &c.curves {
        for p in &curve.points {
            assert!((p[1].abs() - R).abs() < 1e-15, "offset along y: {}", p[1]);
        }
    }
    // Flipping the normal flips the side of the warp at node 0.
    let g = patch(3, 3, [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]);
    let cg = YarnCurves::from_positions(&g, &g.initial.x, 1).unwrap();
    assert_eq!(c.curves[0].points[0][1], R);
    assert_eq!(cg.curves[0].points[0][1], -R);
}

/// A 5 x 9 patch wrapped on a cylinder of radius `rc` (m, axis y), the
/// warp running around it: the fabric and the wrapped positions.
fn patch_on_cylinder(rc: f64) -> (weft_core::Fabric, Vec<Vector3<f64>>) {
    let f = patch(5, 9, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]);
    let x = f
        .initial
        .x
        .iter()
        .map(|p| {
            let a = p.x / rc;
            Vector3::new(rc * a.sin(), p.y, rc * a.cos())
        })
        .collect();
    (f, x)
}

#[test]
fn curved_fabric_offsets_along_the_local_normal() {
    // Wrap a 5 x 9 patch around a cylinder of radius 5 cm (axis y): the warp
    // runs around it. Offsets must be radial, of size R.
    let rc = 0.05;
    let (f, x) = patch_on_cylinder(rc);
    let c = YarnCurves::from_positions(&f, &x, 1).unwrap();
    let mut worst_end = 0.0f64;
    for curve in &c.curves {
        let nodes = &f.yarns[curve.yarn].nodes;
        for (p, &n) in curve.points.iter().zip(nodes) {
            let radial = (p[0] * p[0] + p[2] * p[2]).sqrt() - rc;
            let sign = if curve.family == Family::Warp {
                1.0
            } else {
                -1.0
            };
            let want = sign * f64::from(f.crimp[n]) * R;
            // Ends of the warp (which runs around the cylinder).
            let warp = &f.yarns[f.node_yarns[n][0].unwrap()].nodes;
            let on_end = n == warp[0] || n == warp[warp.len() - 1];
            if on_end {
                // One-sided tangent: normal tilted by O(h²/ρ²) (h/ρ = 0.2).
                worst_end = worst_end.max((radial / want - 1.0).abs());
                assert!(
                    (radial - want).abs() < 1e-5 * R,
                    "end: radial offset {radial}, want {want}"
                );
            } else {
                // Central differences on a circle: exactly radial.
                assert!(
                    (radial - want).abs() < 1e-12,
                    "radial offset {radial}, want {want}"
                );
            }
            assert!((p[1] - x[n].y).abs() < 1e-12);
        }
    }
    eprintln!("worst relative offset error at a yarn end: {worst_end:.2e}");
}

#[test]
fn catmull_rom_interpolates_and_reproduces_straight_lines() {
    let pts: Vec<Vector3<f64>> = (0..4)
        .map(|i| Vector3::new(i as f64, 2.0 * i as f64, 0.0))
        .collect();
    let s = catmull_rom(&pts, 4);
    assert_eq!(s.len(), 3 * 4 + 1);
    for (i, p) in s.iter().enumerate() {
        // Uniform Catmull-Rom is exact on equally spaced collinear points.
        let t = i as f64 / 4.0;
        assert!(
            (p - Vector3::new(t, 2.0 * t, 0.0)).norm() < 1e-14,
            "{i}: {p:?}"
        );
    }
    // Through the control points of a bent polyline, with a known midpoint:
    // segment P1P2 at t = 1/2 is (-P0 + 9 P1 + 9 P2 - P3) / 16.
    let q = [
        Vector3::new(0.0, 0.0, 0.0),
        Vector3::new(1.0, 0.0, 0.0),
        Vector3::new(1.0, 1.0, 0.0),
        Vector3::new(0.0, 1.0, 0.0),
    ];
    let s = catmull_rom(&q, 2);
    for i in 0..4 {
        assert_eq!(s[2 * i], q[i]);
    }
    let mid = (-q[0] + 9.0 * q[1] + 9.0 * q[2] - q[3]) / 16.0;
    assert!((s[3] - mid).norm() < 1e-15, "{:?} vs {mid:?}", s[3]);
    // Samples on a patch: (n - 1) * s + 1 per yarn.
    let f = patch(3, 4, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]);
    let c = YarnCurves::from_state(&f, &f.initial, 8).unwrap();
    assert_eq!(c.curves[0].points.len(), 3 * 8 + 1);
    assert_eq!(c.point_count(), 3 * (3 * 8 + 1) + 4 * (2 * 8 + 1));
}

#[test]
fn bad_input_is_an_error() {
    let f = patch(3, 3, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]);
    let x = f.initial.x.clone();
    assert_eq!(
        YarnCurves::from_positions(&f, &x[..5], 2),
        Err(CurveError::NodeCount {
            positions: 5,
            nodes: 9
        })
    );
    assert_eq!(
        YarnCurves::from_positions(&f, &x, 0),
        Err(CurveError::NoSamples)
    );
    let mut bad = x.clone();
    bad[4].y = f64::NAN;
    let e = YarnCurves::from_positions(&f, &bad, 2).unwrap_err();
    assert!(e.to_string().contains("warp yarn 1, node 1"), "{e}");
}

#[test]
fn write_curves_writes_every_format_with_the_right_point_sets() {
    use weft_io::{CurveExportOptions, CurveFormat, write_curves};
    let f = patch(3, 4, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]);
    let dir = tempfile::tempdir().unwrap();
    let opts = CurveExportOptions {
        samples_per_segment: 5,
        tube_sides: 6,
    };
    let paths = write_curves(
        dir.path(),
        "final",
        &f,
        &f.initial.x,
        &CurveFormat::ALL,
        &opts,
    )
    .unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "final.bcc",
            "final.txt",
            "final.obj",
            "final_tubes.obj",
            "final.usda"
        ]
    );
    // BCC holds the control points: 3 warp x 4 + 4 weft x 3 = 24 points.
    let bcc = std::fs::read(&paths[0]).unwrap();
    assert_eq!(u64::from_le_bytes(bcc[16..24].try_into().unwrap()), 24);
    // Mitsuba holds the samples: 3 x (3*5+1) + 4 x (2*5+1) = 92 lines.
    let txt = std::fs::read_to_string(&paths[1]).unwrap();
    assert_eq!(
        txt.lines().filter(|l| !l.is_empty()).count(),
        3 * 16 + 4 * 11
    );
    let tubes = std::fs::read_to_string(&paths[3]).unwrap();
    assert_eq!(
        tubes.lines().filter(|l| l.starts_with("v ")).count(),
        92 * 6
    );
    assert_eq!("tubes".parse::<CurveFormat>(), Ok(CurveFormat::ObjTubes));
    assert!(
        "ply"
            .parse::<CurveFormat>()
            .unwrap_err()
            .contains("expected one of")
    );
    // A wrong state names the problem.
    let e = write_curves(
        dir.path(),
        "x",
        &f,
        &f.initial.x[..3],
        &[CurveFormat::Bcc],
        &opts,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("3 positions given for a fabric of 12 nodes"),
        "{e}"
    );
}

#[test]
fn every_point_carries_the_fabric_normal() {
    // Flat patch, normal +z: one normal per point, all exactly +z.
    let f = patch(3, 4, [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]);
    let c = YarnCurves::from_state(&f, &f.initial, 3).unwrap();
    for curve in &c.curves {
        assert_eq!(curve.normals.len(), curve.points.len());
        for n in &curve.normals {
            assert_eq!(*n, [0.0, 0.0, 1.0]);
        }
    }
    // Wrapped on a cylinder (axis y, radius 5 cm, warp around it), 4
    // samples per segment: the blended normals between nodes stay radial
    // to within the nlerp error of a 0.2 rad step (cos > 0.9999).
    let rc = 0.05;
    let (f, x) = patch_on_cylinder(rc);
    let c = YarnCurves::from_positions(&f, &x, 4).unwrap();
    let mut worst = 1.0f64;
    for curve in &c.curves {
        assert_eq!(curve.normals.len(), curve.points.len());
        for (p, n) in curve.points.iter().zip(&curve.normals) {
            let n = Vector3::from(*n);
            assert!((n.norm() - 1.0).abs() < 1e-12, "unit normal {n:?}");
            let radial = Vector3::new(p[0], 0.0, p[2]).normalize();
            worst = worst.min(n.dot(&radial));
        }
    }
    assert!(worst > 0.9999, "least cos(normal, radial) {worst}");
}
