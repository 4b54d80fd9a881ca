//! Element evaluation throughput: elements per second for energy + gradient +
//! Hessian, and for strain-rate dissipation (force, velocity Jacobian and
//! clamped position Jacobian), of every element type over a perturbed 64 x 64
//! woven patch ([SBO17 Table 1] sizes: 1 mm spacing, R = 0.25 mm).
//!
//! Run: `cargo bench --bench elements`. Criterion prints time per patch sweep
//! and throughput in elements/s (single thread).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nalgebra::{SVector, Vector3};
use std::hint::black_box;
use weft_core::{Fabric, FabricBuilder, Material, State, WovenPatchSpec};
use weft_potentials::{bending, contact, elastic, gravity, inertia, shear, stretch};

/// A 64 x 64 patch, bent into a cylinder of radius 2 cm, sheared by 0.2 rad,
/// with 2 % random noise, random velocities: a mix of scalar and small-angle
/// bending and shear elements.
fn patch() -> (Fabric, State) {
    let mut b = FabricBuilder::new(vec![Material::example_cotton()]).unwrap();
    b.add_woven_patch(&WovenPatchSpec::new(
        "cotton",
        [0.063, 0.063],
        [64, 64],
        [0.0; 3],
    ))
    .unwrap();
    let f = b.build().unwrap();
    let mut s = f.initial.clone();
    let mut rng = weft_potentials::testing::xorshift(0x9E37_79B9_7F4A_7C15);
    for n in 0..f.node_count() {
        let p = s.x[n];
        let (x, z) = (p.x + 0.2 * p.z, p.z);
        let r = 0.02;
        s.x[n] = Vector3::new(r * (x / r).sin(), r * (1.0 - (x / r).cos()), z)
            + Vector3::new(rng(), rng(), rng()) * 2e-5;
        s.x_dot[n] = Vector3::new(rng(), rng(), rng()) * 0.1;
        s.u_dot[n] = rng() * 0.01;
        s.v_dot[n] = rng() * 0.01;
    }
    (f, s)
}

fn bench_elements(c: &mut Criterion) {
    let (f, s) = patch();
    let segs: Vec<(SVector<f64, 8>, SVector<f64, 8>)> = f
        .elements
        .segments
        .iter()
        .map(|e| (f.segment_q(&s, e), f.segment_qdot(&s, e)))
        .collect();
    let bends: Vec<_> = f
        .elements
        .bending
        .iter()
        .map(|e| (f.bending_q(&s, e), f.bending_qdot(&s, e)))
        .collect();
    let shears: Vec<_> = f
        .elements
        .shear
        .iter()
        .map(|e| (f.shear_q(&s, e), f.shear_qdot(&s, e)))
        .collect();
    let small = bends
        .iter()
        .filter(|(q, _)| bending::uses_small_angle(q, bending::DEFAULT_THRESHOLD))
        .count();
    eprintln!(
        "patch: {} segments, {} bending ({} small-angle), {} shear",
        segs.len(),
        bends.len(),
        small,
        shears.len()
    );
    let sh = shear::Shear::new(
        0.5,
        1e-4,
        1e-3,
        shear::SMALL_ANGLE_THRESHOLD,
        Some(shear::Jamming::from_geometry(0.25e-3, 1e-3).unwrap()),
    )
    .unwrap();
    let g = Vector3::new(0.0, -9.81, 0.0);
    let rho_l = Material::example_cotton().linear_density();

    let mut grp = c.benchmark_group("energy+gradient+hessian");
    grp.throughput(Throughput::Elements(segs.len() as u64));
    grp.bench_function("stretch", |b| {
        b.iter(|| {
            segs.iter()
                .map(|(q, _)| {
                    elastic(500.0, &stretch::strain(q), &stretch::measure(q)).hessian[(0, 0)]
                })
                .sum::<f64>()
        })
    });
    grp.bench_function("contact", |b| {
        b.iter(|| {
            segs.iter()
                .map(|(q, _)| {
                    let qs = SVector::from([q[3], q[7]]);
                    elastic(
                        10.0,
                        &contact::strain(&qs, 0.5e-3, 1e-3),
                        &contact::measure(1e-3),
                    )
                    .gradient[0]
                })
                .sum::<f64>()
        })
    });
    grp.bench_function("gravity", |b| {
        b.iter(|| {
            segs.iter()
                .map(|(q, _)| gravity::potential(q, rho_l, &g).gradient[0])
                .sum::<f64>()
        })
    });
    grp.bench_function("inertia (M, f_in, both Jacobians)", |b| {
        b.iter(|| {
            segs.iter()
                .map(|(q, v)| {
                    let m = inertia::mass_matrix(rho_l, q);
                    let fi = inertia::inertia_force(rho_l, q, v);
                    let (jq, jv) = inertia::inertia_force_jacobians(rho_l, q, v);
                    m[(0, 0)] + fi[0] + jq[(0, 0)] + jv[(0, 0)]
                })
                .sum::<f64>()
        })
    });
    grp.throughput(Throughput::Elements(bends.len() as u64));
    grp.bench_function("bending", |b| {
        b.iter(|| {
            bends
                .iter()
                .map(|(q, _)| bending::energy(1e-5, q, bending::DEFAULT_THRESHOLD).hessian[(0, 0)])
                .sum::<f64>()
        })
    });
    grp.throughput(Throughput::Elements(shears.len() as u64));
    grp.bench_function("shear (with jamming)", |b| {
        b.iter(|| {
            shears
                .iter()
                .map(|(q, _)| sh.elastic(q).hessian[(0, 0)])
                .sum::<f64>()
        })
    });
    grp.finish();

    let mut grp = c.benchmark_group("strain-rate dissipation");
    grp.throughput(Throughput::Elements(segs.len() as u64));
    grp.bench_function("stretch", |b| {
        b.iter(|| {
            segs.iter()
                .map(|(q, v)| stretch::dissipation(3e-7, q, v).position_jacobian[(0, 0)])
                .sum::<f64>()
        })
    });
    grp.throughput(Throughput::Elements(bends.len() as u64));
    grp.bench_function("bending", |b| {
        b.iter(|| {
            bends
                .iter()
                .map(|(q, v)| {
                    bending::damping(1e-9, q, v, bending::DEFAULT_THRESHOLD).position_jacobian()
                        [(0, 0)]
                })
                .sum::<f64>()
        })
    });
    grp.throughput(Throughput::Elements(shears.len() as u64));
    grp.bench_function("shear", |b| {
        b.iter(|| {
            shears
                .iter()
                .map(|(q, v)| sh.dissipation(q, v).position_jacobian()[(0, 0)])
                .sum::<f64>()
        })
    });
    grp.finish();
    black_box(());
}

criterion_group!(benches, bench_elements);
criterion_main!(benches);
