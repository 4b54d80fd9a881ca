//! The discrete-shell hinge (`weft_potentials::hinge`): the bending angle
//! of a hinge folded by a known angle, its gradient and Hessian and the
//! energy's against finite differences, invariance under rigid motions,
//! the PSD projection, the measure, and the energy of a mesh wrapped on a
//! cylinder against the plate's closed form.

use nalgebra::{Rotation3, SVector, Unit, Vector3};
use proptest::prelude::*;
use std::f64::consts::PI;
use weft_potentials::element::symmetric_eigen;
use weft_potentials::hinge::{self, DOFS, Hinge, HingeError};
use weft_potentials::testing::{fd_gradient, fd_jacobian, rel_error};

type Q = SVector<f64, DOFS>;

/// Bending rigidity of a shirting cotton, about 1e-5 N·m (DESIGN §2 order
/// of magnitude; the checks are relative).
const B: f64 = 1e-5;

/// A hinge on the edge from the origin along `x` (length 10 mm): triangle
/// A's apex at `(a, 6 mm, 0)`, triangle B's apex at `(b, -7 mm, 0)`
/// rotated about the edge by `fold` (rad), the whole moved by `offset`.
fn folded(a: f64, b: f64, fold: f64, offset: [f64; 3]) -> Q {
    let axis = Unit::new_normalize(Vector3::x());
    let r = Rotation3::from_axis_angle(&axis, fold);
    let p = [
        Vector3::zeros(),
        Vector3::new(0.01, 0.0, 0.0),
        Vector3::new(a, 0.006, 0.0),
        r * Vector3::new(b, -0.007, 0.0),
    ];
    let o = Vector3::from(offset);
    Q::from_iterator(
        p.iter()
            .flat_map(|v| (v + o).iter().copied().collect::<Vec<_>>()),
    )
}

fn flat_rest() -> [[f64; 3]; 4] {
    let q = folded(0.004, 0.005, 0.0, [0.0; 3]);
    std::array::from_fn(|v| [q[3 * v], q[3 * v + 1], q[3 * v + 2]])
}

/// Folding triangle B about the edge by `fold` turns the hinge by `fold`,
/// with one sign convention for both directions, up to near π.
#[test]
fn the_angle_is_the_fold() {
    let sign = hinge::angle_value(&folded(0.004, 0.005, 0.3, [0.0; 3])) / 0.3;
    assert!((sign.abs() - 1.0).abs() < 1e-12, "{sign}");
    for fold in [-2.5, -1.0, -0.1, 0.0, 1e-4, 0.3, 1.5, 2.9] {
        let q = folded(0.004, 0.005, fold, [0.1, -0.2, 0.3]);
        let th = hinge::angle(&q).value[0];
        assert!((th - sign * fold).abs() < 1e-12, "fold {fold}: θ {th}");
        assert!((hinge::angle_value(&q) - th).abs() < 1e-15);
    }
}

#[test]
fn the_measure_is_three_edge_squares_over_the_areas() {
    let h = Hinge::new(flat_rest(), B).unwrap();
    // Edge 10 mm; areas ½·10·6 and ½·10·7 mm².
    let want = 3.0 * 1e-4 / (0.5 * 0.01 * 0.006 + 0.5 * 0.01 * 0.007);
    assert!((h.measure() - want).abs() < 1e-12 * want);
    assert_eq!(h.rest_angle(), 0.0);
    // At rest: no energy, no force.
    let e = h.elastic(&folded(0.004, 0.005, 0.0, [0.0; 3]));
    assert_eq!(e.energy, 0.0);
    assert!(e.gradient.norm() < 1e-15);
    // Folded by 0.2 rad: V = ½ B Ω θ².
    let e = h.elastic(&folded(0.004, 0.005, 0.2, [0.0; 3]));
    let v = 0.5 * B * want * 0.04;
    assert!((e.energy - v).abs() < 1e-12 * v, "{} vs {v}", e.energy);
}

#[test]
fn degenerate_hinges_are_refused() {
    let mut rest = flat_rest();
    rest[2] = [0.005, 0.0, 0.0]; // apex on the edge: zero area
    assert!(matches!(
        Hinge::new(rest, B),
        Err(HingeError::Degenerate { .. })
    ));
    assert_eq!(
        Hinge::new(flat_rest(), -1.0),
        Err(HingeError::Rigidity(-1.0))
    );
    assert!(Hinge::new(flat_rest(), f64::NAN).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// θ's gradient and Hessian, and the energy's gradient and Hessian
    /// (from a curved rest shape), against central differences.
    #[test]
    fn derivatives_match_finite_differences(
        a in -0.004f64..0.012, b in -0.004f64..0.012,
        fold in -2.6f64..2.6, rest_fold in -1.0f64..1.0,
        jitter in prop::collection::vec(-1e-3f64..1e-3, 12),
    ) {
        let mut q = folded(a, b, fold, [0.02, 0.01, -0.03]);
        for (x, j) in q.iter_mut().zip(&jitter) {
            *x += j;
        }
        let th = hinge::angle(&q);
        prop_assume!(th.value[0].abs() < 2.9);
        let g = fd_gradient(hinge::angle_value, &q, 1e-7);
        prop_assert!(rel_error(&th.jacobian.transpose(), &g, 1e-3) < 1e-6);
        let hs = fd_jacobian(|p| hinge::angle(p).jacobian.transpose(), &q, 1e-7);
        prop_assert!(rel_error(&th.hessians[0], &hs, 1e-1) < 1e-5);
        prop_assert!((th.hessians[0] - th.hessians[0].transpose()).norm() <= 1e-9 * th.hessians[0].norm());

        let r = folded(0.004, 0.005, rest_fold, [0.0; 3]);
        let h = Hinge::new(std::array::from_fn(|v| [r[3 * v], r[3 * v + 1], r[3 * v + 2]]), B).unwrap();
        prop_assert!((h.rest_angle() - rest_fold).abs() < 1e-12);
        let e = h.elastic(&q);
        let ge = fd_gradient(|p| h.elastic(p).energy, &q, 1e-7);
        let scale = e.gradient.norm().max(1e-12);
        prop_assert!(rel_error(&e.gradient, &ge, 1e-3 * scale) < 1e-6);
        let he = fd_jacobian(|p| h.elastic(p).gradient, &q, 1e-7);
        prop_assert!(rel_error(&e.hessian, &he, 1e-1 * scale) < 1e-5);
        // The projected Hessian: PSD, same energy and gradient.
        let p = h.elastic_projected(&q);
        prop_assert_eq!(p.energy, e.energy);
        prop_assert_eq!(p.gradient, e.gradient);
        let (l, _) = symmetric_eigen(&p.hessian);
        prop_assert!(l.min() >= -1e-9 * p.hessian.norm());
        // Never softer than the exact Hessian (the clamp over the edge
        // coordinates only adds curvature).
        let (l, _) = symmetric_eigen(&(p.hessian - e.hessian));
        prop_assert!(l.min() >= -1e-9 * e.hessian.norm());

        // Bending dissipation W = ½ Ω k_d θ̇²: the force is -∂W/∂q̇, its
        // velocity Jacobian the derivative of the force, the clamped
        // position Jacobian negative semi-definite.
        let k_d = 0.1 * B;
        let qdot = SVector::<f64, DOFS>::from_fn(|i, _| jitter[(i + 5) % 12] * 100.0);
        let d = h.dissipation(k_d, &q, &qdot);
        let rate = th.rate(&qdot)[0];
        prop_assert!((d.potential - 0.5 * h.measure() * k_d * rate * rate).abs() <= 1e-12 * d.potential.max(1e-30));
        let fw = fd_gradient(|u| -h.dissipation(k_d, &q, u).potential, &qdot, 1e-6);
        let fs = d.force.norm().max(1e-15);
        prop_assert!(rel_error(&d.force, &fw, 1e-3 * fs) < 1e-6);
        let jv = fd_jacobian(|u| h.dissipation(k_d, &q, u).force, &qdot, 1e-6);
        prop_assert!(rel_error(&d.velocity_jacobian, &jv, 1e-3 * d.velocity_jacobian.norm().max(1e-15)) < 1e-6);
        let (l, _) = symmetric_eigen(&(-d.position_jacobian));
        prop_assert!(l.min() >= -1e-9 * d.position_jacobian.norm().max(1e-30));
        // ... and never less than the unclamped term -Ω k_d θ̇ ∇²θ.
        let raw = th.hessians[0] * (-h.measure() * k_d * rate);
        let (l, _) = symmetric_eigen(&(raw - d.position_jacobian));
        prop_assert!(l.min() >= -1e-9 * raw.norm().max(1e-30));
    }

    /// Rigid motions: the energy does not change, the forces sum to zero
    /// and have no torque about the origin.
    #[test]
    fn rigid_motions_change_nothing(
        fold in -2.0f64..2.0,
        axis in prop::array::uniform3(-1.0f64..1.0),
        turn in -PI..PI,
        shift in prop::array::uniform3(-1.0f64..1.0),
    ) {
        prop_assume!(Vector3::from(axis).norm() > 0.1);
        let h = Hinge::new(flat_rest(), B).unwrap();
        let q = folded(0.003, 0.006, fold, [0.0; 3]);
        let r = Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::from(axis)), turn);
        let mut moved = q;
        for v in 0..4 {
            let x = r * Vector3::new(q[3 * v], q[3 * v + 1], q[3 * v + 2]) + Vector3::from(shift);
            moved.fixed_rows_mut::<3>(3 * v).copy_from(&x);
        }
        let (e0, e1) = (h.elastic(&q), h.elastic(&moved));
        prop_assert!((e0.energy - e1.energy).abs() <= 1e-10 * e0.energy.max(1e-30));
        let g = e1.gradient;
        let mut sum = Vector3::zeros();
        let mut torque = Vector3::zeros();
        for v in 0..4 {
            let f = Vector3::new(g[3 * v], g[3 * v + 1], g[3 * v + 2]);
            let x = Vector3::new(moved[3 * v], moved[3 * v + 1], moved[3 * v + 2]);
            sum += f;
            torque += x.cross(&f);
        }
        let scale = g.norm().max(1e-30);
        prop_assert!(sum.norm() <= 1e-9 * scale);
        prop_assert!(torque.norm() <= 1e-9 * scale);
    }
}

/// A flat strip meshed by rectangles along `z` (each cut by one diagonal),
/// columns of width `R Δ`, wrapped on a cylinder of radius `R` about `z`
/// (columns become chords): the rectangles stay planar, so the diagonals
/// and the circumferential edges stay flat and each axis-parallel edge
/// turns by exactly `Δ`. With rest areas `½ R Δ h` a hinge has
/// `V = ½ B (3h/(RΔ)) Δ²`, and the interior hinges sum to exactly
/// `3 × ½ B A / R²` over the area they cover, three times the plate's
/// `½ B ∫ κ² dA` at every resolution (the mesh dependence of the
/// edge-based measure, module docs).
#[test]
fn a_strip_on_a_cylinder_has_three_times_the_plate_energy_on_this_mesh() {
    let (radius, height) = (0.05, 0.02);
    let mut ratios = Vec::new();
    for cells in [8usize, 16, 32, 64] {
        // The strip spans a quarter turn; `cells` columns, 4 rows.
        let (rows, span) = (4usize, 0.5 * PI);
        let d = span / cells as f64;
        let h = height / rows as f64;
        let flat = |j: usize, k: usize| [radius * d * j as f64, 0.0, h * k as f64];
        let bent = |j: usize, k: usize| {
            let a = d * j as f64;
            [radius * a.sin(), radius * (1.0 - a.cos()), h * k as f64]
        };
        let mut energy = 0.0;
        // The interior axis-parallel edges (j, k)-(j, k+1), 0 < j < cells.
        // Every rectangle's diagonal runs from (j, k) to (j+1, k+1), so the
        // edge's triangle on the left is ((j,k), (j,k+1), (j-1,k)) and on
        // the right ((j,k+1), (j,k), (j+1,k+1)).
        for j in 1..cells {
            for k in 0..rows {
                let idx = [(j, k), (j, k + 1), (j - 1, k), (j + 1, k + 1)];
                let rest = idx.map(|(a, b)| flat(a, b));
                let q = Q::from_iterator(idx.iter().flat_map(|&(a, b)| bent(a, b)));
                let hinge = Hinge::new(rest, B).unwrap();
                assert!((hinge::angle_value(&q).abs() - d).abs() < 1e-12);
                energy += hinge.elastic(&q).energy;
            }
        }
        // A diagonal's hinge stays flat: (j,k)-(j+1,k+1) between the
        // rectangle's two triangles.
        let idx = [(1, 0), (2, 1), (2, 0), (1, 1)];
        let q = Q::from_iterator(idx.iter().flat_map(|&(a, b)| bent(a, b)));
        assert!(hinge::angle_value(&q).abs() < 1e-12);
        let area = radius * span * height;
        let plate = 0.5 * B * area / (radius * radius);
        // The edges at j = 0 and j = cells are the strip's boundary: the
        // interior ones cover (cells - 1)/cells of the area.
        ratios.push(energy / (plate * (cells - 1) as f64 / cells as f64));
    }
    eprintln!("discrete over plate energy on the cylinder: {ratios:?}");
    for r in &ratios {
        assert!((r - 3.0).abs() < 1e-9, "{ratios:?}");
    }
}
