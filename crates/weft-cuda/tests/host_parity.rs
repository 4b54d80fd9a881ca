//! Host parity: the element math of `kernels/*.cuh`, compiled for the host
//! by build.rs, against `weft-potentials` (and the collider code of
//! `weft-solver`) on random configurations, element by element: the yarn
//! elements and the triangle-mesh cloth's StVK triangles and hinges.
//!
//! Error measure: for every output quantity separately (energy, gradient,
//! Hessian, strain value, Jacobian, component Hessians, strain rate,
//! dissipation potential, force, velocity Jacobian, clamped position
//! Jacobian), `‖a - b‖_F / ‖b‖_F` with the Frobenius (Euclidean) norm over
//! all entries, `b` the weft-potentials reference; where `‖b‖_F = 0` the
//! absolute `‖a‖_F` is used (it must then be 0 too). Tolerance 1e-12 (f64).
//! The worst error per element and quantity is printed.
//!
//! Without a C++ compiler at build time the shim does not exist and every
//! test here skips with a visible message.

mod common;

use common::rel;
use nalgebra::{SMatrix, SVector, Vector3};
use std::cell::RefCell;
use std::collections::BTreeMap;
use weft_cuda::host::{self, GpuCollider, HostDissipation, HostEval, HostStrain};
use weft_potentials::testing::xorshift;
use weft_potentials::{
    Dissipation, ElementEval, Hessian, Strain, bending, contact, element, friction, gravity, hinge,
    inertia, shear, stretch, stvk,
};
use weft_solver::collide::{Capsule, Collider, Plane, Sphere};

const TOL: f64 = 1e-12;
const SAMPLES: usize = 300;

thread_local! {
    static WORST: RefCell<BTreeMap<String, f64>> = const { RefCell::new(BTreeMap::new()) };
}

fn skip() -> bool {
    if !host::AVAILABLE {
        eprintln!(
            "SKIPPED: weft-cuda host parity: the host shim over kernels/*.cuh was not compiled \
             (no C++ compiler at build time)"
        );
        return true;
    }
    false
}

/// Row-major copy of a nalgebra matrix.
fn rm<const R: usize, const C: usize>(m: &SMatrix<f64, R, C>) -> Vec<f64> {
    let mut v = Vec::with_capacity(R * C);
    for r in 0..R {
        for c in 0..C {
            v.push(m[(r, c)]);
        }
    }
    v
}

/// Records and asserts one comparison.
fn check(what: &str, a: &[f64], b: &[f64]) {
    let e = rel(a, b);
    assert!(
        e <= TOL,
        "{what}: relative error {e:.3e} > {TOL:e}\n kernel header: {a:?}\n weft-potentials: {b:?}"
    );
    WORST.with(|w| {
        let mut w = w.borrow_mut();
        let slot = w.entry(what.to_string()).or_insert(0.0);
        if e > *slot {
            *slot = e;
        }
    });
}

fn report(test: &str) {
    WORST.with(|w| {
        for (k, v) in w.borrow().iter() {
            eprintln!("[{test}] worst relative error {k}: {v:.3e}");
        }
        w.borrow_mut().clear();
    });
}

fn check_eval<const N: usize>(what: &str, a: &HostEval, b: &ElementEval<N>) {
    check(&format!("{what} energy"), &[a.energy], &[b.energy]);
    check(
        &format!("{what} gradient"),
        &a.gradient,
        b.gradient.as_slice(),
    );
    check(&format!("{what} hessian"), &a.hessian, &rm(&b.hessian));
}

fn check_strain<const M: usize, const N: usize>(what: &str, a: &HostStrain, b: &Strain<M, N>) {
    check(&format!("{what} strain"), &a.value, b.value.as_slice());
    check(&format!("{what} jacobian"), &a.jacobian, &rm(&b.jacobian));
    let h: Vec<f64> = b.hessians.iter().flat_map(rm).collect();
    check(&format!("{what} strain hessians"), &a.hessians, &h);
}

fn check_diss<const M: usize, const N: usize>(
    what: &str,
    a: &HostDissipation,
    b: &Dissipation<M, N>,
) {
    check(&format!("{what} rate"), &a.rate, b.strain_rate.as_slice());
    check(&format!("{what} potential"), &[a.potential], &[b.potential]);
    check(&format!("{what} force"), &a.force, b.force.as_slice());
    check(
        &format!("{what} velocity jacobian"),
        &a.velocity_jacobian,
        &rm(&b.velocity_jacobian),
    );
    check(
        &format!("{what} position jacobian"),
        &a.position_jacobian,
        &rm(&b.position_jacobian),
    );
}

fn unit(r: &mut impl FnMut() -> f64) -> Vector3<f64> {
    loop {
        let v = Vector3::new(r(), r(), r());
        if v.norm() > 0.1 {
            return v.normalize();
        }
    }
}

/// A unit vector perpendicular to `d`.
fn perp(r: &mut impl FnMut() -> f64, d: &Vector3<f64>) -> Vector3<f64> {
    loop {
        let v = unit(r);
        let p = v - d * d.dot(&v);
        if p.norm() > 0.1 {
            return p.normalize();
        }
    }
}

/// Log-uniform in `[lo, hi]`.
fn logu(r: &mut impl FnMut() -> f64, lo: f64, hi: f64) -> f64 {
    let u = 0.5 * (r() + 1.0);
    lo * (hi / lo).powf(u)
}

fn segment(r: &mut impl FnMut() -> f64) -> SVector<f64, 8> {
    let xa = Vector3::new(r(), r(), r()) * 0.01;
    let d = unit(r);
    let len = 0.002 * (1.0 + 0.5 * r());
    let du = len / (1.0 + 0.1 * r());
    let sa = 0.05 * r();
    let xb = xa + d * len;
    SVector::from([xa.x, xa.y, xa.z, sa, xb.x, xb.y, xb.z, sa + du])
}

fn vel<const N: usize>(r: &mut impl FnMut() -> f64, scale: f64) -> SVector<f64, N> {
    SVector::from_fn(|_, _| scale * r())
}

fn arr<const N: usize>(v: &SVector<f64, N>) -> [f64; N] {
    std::array::from_fn(|i| v[i])
}

#[test]
fn stretch_matches_weft_potentials() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0001);
    for _ in 0..SAMPLES {
        let q = segment(&mut r);
        let qd = vel::<8>(&mut r, 0.1);
        let k = logu(&mut r, 5e2, 1e6);
        let kd = k * logu(&mut r, 1e-6, 1e-2);
        let ev = elastic_ref_stretch(k, &q);
        check_eval("stretch", &host::stretch_elastic(k, &arr(&q)).unwrap(), &ev);
        let d = stretch::dissipation(kd, &q, &qd);
        check_diss(
            "stretch dissipation",
            &host::stretch_dissipation(kd, &arr(&q), &arr(&qd)).unwrap(),
            &d,
        );
        // The assembler's form: the strain increment of a step of h.
        // At h = 0 it is the rate form's value at q.
        for h in [1e-3, 0.0] {
            let qs = q - qd * h;
            for (exact, mode) in [(true, Hessian::Exact), (false, Hessian::Projected)] {
                check_diss(
                    "stretch dissipation over a step",
                    &host::stretch_dissipation_over_step(
                        kd,
                        &arr(&q),
                        &arr(&qs),
                        &arr(&qd),
                        h,
                        exact,
                    )
                    .unwrap(),
                    &stretch::dissipation_over_step(kd, &q, &qs, &qd, h, mode),
                );
            }
        }
    }
    report("stretch");
}

fn elastic_ref_stretch(k: f64, q: &SVector<f64, 8>) -> ElementEval<8> {
    weft_potentials::elastic(k, &stretch::strain(q), &stretch::measure(q))
}

/// A bending element with turning angle `theta` (rad) at node 0.
fn bend_config(r: &mut impl FnMut() -> f64, theta: f64) -> SVector<f64, 12> {
    let x0 = Vector3::new(r(), r(), r()) * 0.01;
    let d = unit(r);
    let p = perp(r, &d);
    let l1 = 0.002 * (1.0 + 0.5 * r());
    let l2 = 0.002 * (1.0 + 0.5 * r());
    let e1 = d * l1;
    let e2 = (-d * theta.cos() + p * theta.sin()) * l2;
    let (x1, x2) = (x0 + e1, x0 + e2);
    let s0 = 0.05 * r();
    let s1 = s0 + l1 * (1.0 + 0.1 * r());
    let s2 = s0 - l2 * (1.0 + 0.1 * r());
    SVector::from([
        x0.x, x0.y, x0.z, s0, x1.x, x1.y, x1.z, s1, x2.x, x2.y, x2.z, s2,
    ])
}

#[test]
fn bending_matches_weft_potentials_on_both_sides_of_the_switch() {
    if skip() {
        return;
    }
    let thr = bending::DEFAULT_THRESHOLD;
    let mut r = xorshift(0x5eed_0002);
    let deg = std::f64::consts::PI / 180.0;
    let (mut n_small, mut n_large) = (0, 0);
    for i in 0..SAMPLES {
        // Angles: exactly straight, below 5°, just around 5°, and up to 150°.
        let theta = match i % 5 {
            0 => 0.0,
            1 => 0.5 * (r() + 1.0) * 4.9 * deg,
            2 => (5.0 + 0.01 * r()) * deg,
            3 => (5.1 + 0.5 * (r() + 1.0) * 40.0) * deg,
            _ => (45.0 + 0.5 * (r() + 1.0) * 105.0) * deg,
        };
        let q = bend_config(&mut r, theta);
        let qd = vel::<12>(&mut r, 0.1);
        let k = logu(&mut r, 0.5e-5, 0.5e-3);
        let kd = k * logu(&mut r, 1e-6, 1e-2);
        let he = host::bending_elastic(k, &arr(&q), thr).unwrap();
        let small = bending::uses_small_angle(&q, thr);
        assert_eq!(
            he.small_angle, small,
            "strain selection differs at theta = {theta}"
        );
        if small {
            n_small += 1;
        } else {
            n_large += 1;
        }
        // The per-step switch angle: the same bits on both sides.
        assert_eq!(
            host::bending_step_threshold(&arr(&q), thr)
                .unwrap()
                .to_bits(),
            bending::step_threshold(&q, thr).to_bits(),
            "step threshold differs at theta = {theta}"
        );
        check_eval("bending", &he, &bending::energy(k, &q, thr));
        let hd = host::bending_dissipation(kd, &arr(&q), &arr(&qd), thr).unwrap();
        match bending::damping(kd, &q, &qd, thr) {
            bending::BendingDissipation::Scalar(d) => {
                assert!(!hd.small_angle);
                check_diss("bending dissipation (scalar)", &hd, &d);
            }
            bending::BendingDissipation::Vector(d) => {
                assert!(hd.small_angle);
                check_diss("bending dissipation (small-angle)", &hd, &d);
            }
        }
        // The strains themselves (vector strain where d > 0, scalar away
        // from theta = 0 where its derivatives do not exist).
        if theta < 80.0 * deg {
            check_strain(
                "bending vector",
                &host::bending_vector_strain(&arr(&q)).unwrap(),
                &bending::vector_strain(&q),
            );
        }
        if theta > 1.0 * deg {
            check_strain(
                "bending scalar",
                &host::bending_scalar_strain(&arr(&q)).unwrap(),
                &bending::scalar_strain(&q),
            );
        }
    }
    assert!(
        n_small > SAMPLES / 4 && n_large > SAMPLES / 4,
        "{n_small} small, {n_large} large"
    );
    report("bending");
}

/// A shear element with shear angle `eps = φ - π/2` (rad).
fn shear_config(r: &mut impl FnMut() -> f64, eps: f64) -> SVector<f64, 9> {
    let x0 = Vector3::new(r(), r(), r()) * 0.01;
    let a = unit(r);
    let p = perp(r, &a);
    let phi = std::f64::consts::FRAC_PI_2 + eps;
    let la = 0.002 * (1.0 + 0.5 * r());
    let lb = 0.002 * (1.0 + 0.5 * r());
    let xa = x0 + a * la;
    let xb = x0 + (a * phi.cos() + p * phi.sin()) * lb;
    SVector::from([x0.x, x0.y, x0.z, xa.x, xa.y, xa.z, xb.x, xb.y, xb.z])
}

#[test]
fn shear_matches_weft_potentials_small_angle_scalar_and_jammed() {
    if skip() {
        return;
    }
    let thr = shear::SMALL_ANGLE_THRESHOLD;
    let (radius, spacing) = (0.0005, 0.002);
    let jam = shear::Jamming::from_geometry(radius, spacing).unwrap();
    let hj = host::shear_jamming(radius, spacing, thr).unwrap();
    assert!(hj.enabled);
    check(
        "jamming parameters",
        &[hj.onset, hj.lock, hj.gain],
        &[jam.onset, jam.lock, jam.gain],
    );
    // Geometry whose onset is below the threshold: the CPU assembly drops
    // jamming there; so must the kernels.
    let tight = shear::Jamming::from_geometry(0.0014, 0.002).unwrap();
    assert!(shear::Shear::new(1.0, 0.0, 0.002, thr, Some(tight)).is_err());
    assert!(!host::shear_jamming(0.0014, 0.002, thr).unwrap().enabled);
    let deg = std::f64::consts::PI / 180.0;
    let lock_deg = jam.lock / deg;
    let onset_deg = jam.onset / deg;
    let mut r = xorshift(0x5eed_0003);
    let mut counts = [0usize; 4];
    for i in 0..SAMPLES {
        let sign = if r() > 0.0 { 1.0 } else { -1.0 };
        let u = 0.5 * (r() + 1.0);
        let (eps_deg, kind) = match i % 5 {
            0 => (u * 4.9, 0),
            1 => (0.0, 0),
            2 => (5.1 + u * (onset_deg - 5.2), 1),
            3 => (onset_deg + 0.1 + u * (lock_deg - onset_deg - 0.2), 2),
            _ => (lock_deg + 0.1 + u * 15.0, 3),
        };
        counts[kind] += 1;
        let eps = sign * eps_deg * deg;
        let q = shear_config(&mut r, eps);
        let qd = vel::<9>(&mut r, 0.1);
        let k = logu(&mut r, 1e-3, 10.0);
        let kd = k * logu(&mut r, 1e-6, 1e-2);
        let sh = shear::Shear::new(k, kd, spacing, thr, Some(jam)).unwrap();
        let he = host::shear_elastic(k, spacing, thr, Some(hj), &arr(&q)).unwrap();
        assert_eq!(he.small_angle, shear::use_small_angle(&q, thr));
        // The per-step switch angle, with and without jamming: the same bits.
        for (hjam, jamming) in [(Some(hj), Some(&jam)), (None, None)] {
            assert_eq!(
                host::shear_step_threshold(&arr(&q), thr, hjam)
                    .unwrap()
                    .to_bits(),
                shear::step_threshold(&q, thr, jamming).to_bits(),
                "shear step threshold differs at eps = {eps}"
            );
        }
        check_eval("shear (jamming)", &he, &sh.elastic(&q));
        let plain = shear::Shear::new(k, kd, spacing, thr, None).unwrap();
        let hp = host::shear_elastic(k, spacing, thr, None, &arr(&q)).unwrap();
        check_eval("shear (no jamming)", &hp, &plain.elastic(&q));
        let hd = host::shear_dissipation(kd, spacing, thr, &arr(&q), &arr(&qd)).unwrap();
        match sh.dissipation(&q, &qd) {
            shear::ShearDissipation::Scalar(d) => check_diss("shear dissipation (scalar)", &hd, &d),
            shear::ShearDissipation::SmallAngle(d) => {
                check_diss("shear dissipation (small-angle)", &hd, &d)
            }
        }
        check_strain(
            "shear scalar",
            &host::shear_scalar_strain(&arr(&q)).unwrap(),
            &shear::scalar_strain(&q),
        );
        check_strain(
            "shear small-angle",
            &host::shear_small_angle_strain(&arr(&q)).unwrap(),
            &shear::small_angle_strain(&q),
        );
    }
    assert!(counts.iter().all(|&c| c > SAMPLES / 8), "{counts:?}");
    report("shear");
}

#[test]
fn contact_and_anchor_match_weft_potentials() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0004);
    let (mut active, mut inactive) = (0, 0);
    for _ in 0..SAMPLES {
        let radius = logu(&mut r, 2.5e-4, 1.15e-3);
        let d = 2.0 * radius;
        let spacing = logu(&mut r, 1e-3, 4e-3);
        let sa = 0.05 * r();
        let du = d * (1.0 + 0.5 * r());
        let q = SVector::<f64, 2>::from([sa, sa + du]);
        let qd = vel::<2>(&mut r, 0.1);
        let k = logu(&mut r, 1.0, 1e3);
        let kd = k * logu(&mut r, 1e-6, 1e-2);
        let cs = contact::strain(&q, d, spacing);
        let cm = contact::measure(spacing);
        if contact::in_contact(&q, d) {
            active += 1;
        } else {
            inactive += 1;
        }
        check_eval(
            "contact",
            &host::contact_elastic(k, d, spacing, &arr(&q)).unwrap(),
            &weft_potentials::elastic(k, &cs, &cm),
        );
        check_diss(
            "contact dissipation",
            &host::contact_dissipation(kd, d, spacing, &arr(&q), &arr(&qd)).unwrap(),
            &weft_potentials::dissipation(kd, &cs, &cm, &qd),
        );
        // Sliding anchor.
        let s = 0.05 * r();
        let anchor = s + 1e-3 * r();
        let kf = logu(&mut r, 1.0, 1e3);
        let qs = SVector::<f64, 1>::from([s]);
        check_eval(
            "anchor",
            &host::anchor_elastic(kf, s, anchor).unwrap(),
            &weft_potentials::elastic(kf, &friction::strain(&qs, anchor), &friction::measure()),
        );
        let (mu, fnn) = (0.5 * (r() + 1.0), logu(&mut r, 1e-6, 1.0));
        check(
            "anchor update",
            &[host::anchor_update(s, anchor, kf, mu, fnn).unwrap()],
            &[friction::update_anchor(s, anchor, kf, mu, fnn)],
        );
    }
    assert!(
        active > SAMPLES / 4 && inactive > SAMPLES / 4,
        "{active} active, {inactive} inactive"
    );
    report("contact/anchor");
}

#[test]
fn gravity_and_inertia_match_weft_potentials() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0005);
    for _ in 0..SAMPLES {
        let q = segment(&mut r);
        let qd = vel::<8>(&mut r, 1.0);
        let rho_l = gravity::linear_density(130.0, logu(&mut r, 2.5e-4, 1.15e-3));
        let g = [r(), -9.81 + r(), r()];
        check_eval(
            "gravity",
            &host::gravity(&arr(&q), rho_l, &g).unwrap(),
            &gravity::potential(&q, rho_l, &Vector3::from(g)),
        );
        check(
            "mass matrix",
            &host::mass_matrix(rho_l, &arr(&q)).unwrap(),
            &rm(&inertia::mass_matrix(rho_l, &q)),
        );
        check(
            "inertia force",
            &host::inertia_force(rho_l, &arr(&q), &arr(&qd)).unwrap(),
            inertia::inertia_force(rho_l, &q, &qd).as_slice(),
        );
    }
    report("gravity/inertia");
}

fn psd_case<const N: usize>(r: &mut impl FnMut() -> f64) {
    let a = SMatrix::<f64, N, N>::from_fn(|_, _| r());
    let a = a + a.transpose();
    let out = host::project_psd(N, &rm(&a)).unwrap();
    check(
        &format!("project_psd {N}x{N}"),
        &out,
        &rm(&element::project_psd(&a)),
    );
}

#[test]
fn project_psd_matches_weft_potentials() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0006);
    for _ in 0..SAMPLES {
        psd_case::<2>(&mut r);
        psd_case::<5>(&mut r);
        psd_case::<6>(&mut r);
        psd_case::<7>(&mut r);
        psd_case::<8>(&mut r);
        psd_case::<9>(&mut r);
        psd_case::<12>(&mut r);
    }
    assert_eq!(
        host::project_psd(3, &[0.0; 9]),
        Err(host::HostError::UnsupportedSize(3))
    );
    report("project_psd");
}

#[test]
fn plane_sphere_capsule_colliders_match_weft_solver() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0007);
    let (mut hits, mut misses) = (0, 0);
    for i in 0..SAMPLES {
        let (k, mu) = (logu(&mut r, 10.0, 1e4), 0.5 * (r() + 1.0));
        let offset = 1e-3;
        let mut gc = GpuCollider {
            stiffness: k,
            friction: mu,
            friction_speed: weft_solver::collide::DEFAULT_FRICTION_SPEED,
            ..GpuCollider::default()
        };
        let x = Vector3::new(r(), r(), r()) * 0.01;
        let (collider, kind) = match i % 3 {
            0 => {
                let n = unit(&mut r);
                // Put the node within ±2 offsets of the plane.
                let p = x - n * (2.0 * offset * r());
                gc.kind = 0;
                gc.a = p.into();
                let plane = Plane::new(p, n).unwrap();
                gc.b = plane.normal.into_inner().into();
                (Collider::new(plane, k, mu).unwrap(), "plane")
            }
            1 => {
                let rad = 0.01;
                let c = x - unit(&mut r) * (rad + 2.0 * offset * r());
                gc.kind = 1;
                gc.a = c.into();
                gc.radius = rad;
                (
                    Collider::new(Sphere::new(c, rad).unwrap(), k, mu).unwrap(),
                    "sphere",
                )
            }
            _ => {
                let rad = 0.005;
                let axis = unit(&mut r);
                let foot = x - perp(&mut r, &axis) * (rad + 2.0 * offset * r());
                let a = foot - axis * (0.01 * (r() + 0.2));
                let b = foot + axis * (0.01 * (r() + 0.2));
                gc.kind = 2;
                gc.a = a.into();
                gc.b = b.into();
                gc.radius = rad;
                (
                    Collider::new(Capsule::new(a, b, rad).unwrap(), k, mu).unwrap(),
                    "capsule",
                )
            }
        };
        let xd = Vector3::new(r(), r(), r()) * 0.01;
        let host = host::node_contact(&gc, &x.into(), &xd.into(), offset).unwrap();
        let cpu = collider.node_contact(&x, &xd, 0.0, offset);
        match (host, cpu) {
            (None, None) => misses += 1,
            (Some(h), Some(c)) => {
                hits += 1;
                check(
                    &format!("{kind} penalty energy"),
                    &[h.energy],
                    &[c.penalty.energy],
                );
                check(
                    &format!("{kind} penalty gradient"),
                    &h.gradient,
                    c.penalty.gradient.as_slice(),
                );
                check(
                    &format!("{kind} penalty hessian"),
                    &h.hessian,
                    &rm(&c.penalty.hessian),
                );
                check(
                    &format!("{kind} friction force"),
                    &h.friction,
                    c.friction.force.as_slice(),
                );
                check(
                    &format!("{kind} friction damping"),
                    &h.damping,
                    &rm(&c.friction.damping),
                );
                check(
                    &format!("{kind} slip"),
                    &h.slip,
                    c.friction.slip_velocity.as_slice(),
                );
            }
            (h, c) => panic!("{kind}: contact detection differs: kernel {h:?}, cpu {c:?}"),
        }
    }
    assert!(
        hits > SAMPLES / 4 && misses > SAMPLES / 10,
        "{hits} hits, {misses} misses"
    );
    report("colliders");
}

#[test]
fn the_measure_detects_a_relative_change_of_1e_10() {
    // Guards the harness: a stiffness off by 1e-10 relative must exceed the
    // 1e-12 tolerance on the gradient and Hessian, so agreement above is
    // not an artefact of the error measure.
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0008);
    let q = segment(&mut r);
    let k = 500.0;
    let a = host::stretch_elastic(k * (1.0 + 1e-10), &arr(&q)).unwrap();
    let b = elastic_ref_stretch(k, &q);
    let e = rel(&a.gradient, b.gradient.as_slice());
    assert!(e > 1e-11 && e < 1e-9, "{e:e}");
    let e = rel(&a.hessian, &rm(&b.hessian));
    assert!(e > 1e-11 && e < 1e-9, "{e:e}");
}

/// Smallest eigenvalue of a row-major `n x n` matrix's symmetric part,
/// relative to its Frobenius norm (0 for the zero matrix).
fn min_eig_rel(n: usize, a: &[f64]) -> f64 {
    let m = nalgebra::DMatrix::from_row_slice(n, n, a);
    let s = (&m + m.transpose()) * 0.5;
    let norm = s.norm();
    if norm == 0.0 {
        return 0.0;
    }
    s.symmetric_eigenvalues().min() / norm
}

/// `‖H⁺ - H‖_F / ‖H‖_F` of a projected against an exact Hessian: how much
/// the projection changed (0 where nothing was clamped).
fn change(projected: &[f64], exact: &[f64]) -> f64 {
    rel(projected, exact)
}

/// Checks a projected evaluation `hp` against the exact one `he` of the
/// same `n`-DOF element: energy and gradient equal (to `TOL`), projected
/// Hessian PSD (smallest eigenvalue ≥ -1e-12 relative). Returns how much
/// the projection changed the Hessian ([`change`]).
fn check_projected(name: &str, n: usize, hp: &HostEval, he: &HostEval) -> f64 {
    check(
        &format!("{name} = exact energy"),
        &[hp.energy],
        &[he.energy],
    );
    check(
        &format!("{name} = exact gradient"),
        &hp.gradient,
        &he.gradient,
    );
    let m = min_eig_rel(n, &hp.hessian);
    assert!(m >= -1e-12, "{name}: projected Hessian not PSD ({m:e})");
    change(&hp.hessian, &he.hessian)
}

/// A segment with stretch strain `eps` (`|Δx| = (1 + ε) Δu`).
fn strained_segment(r: &mut impl FnMut() -> f64, eps: f64) -> SVector<f64, 8> {
    let xa = Vector3::new(r(), r(), r()) * 0.01;
    let d = unit(r);
    let du = 0.002 * (1.0 + 0.5 * r());
    let sa = 0.05 * r();
    let xb = xa + d * (du * (1.0 + eps));
    SVector::from([xa.x, xa.y, xa.z, sa, xb.x, xb.y, xb.z, sa + du])
}

/// The PSD-projected stretch Hessian (`stretch::energy_projected`, closed
/// form clamp) and the clamp itself (`stretch::clamped_strain_hessian`,
/// with the strain and with a random strain-rate weight) against
/// weft-potentials, on compressed (ε in [-0.4, 0)), stretched (ε in
/// (0, 0.4]) and nearly straight (|ε| < 1e-6) segments. Energy and
/// gradient must equal the exact kernel's; the kernel's projected Hessian
/// must be PSD (smallest eigenvalue ≥ -1e-12 ‖H⁺‖) and differ from the
/// exact one on compressed segments (so the projection is exercised).
#[test]
fn stretch_projected_matches_weft_potentials() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0011);
    let (mut compressed, mut changed) = (0, 0);
    for i in 0..SAMPLES {
        let u = 0.5 * (r() + 1.0);
        let eps = match i % 3 {
            0 => -0.4 * u - 1e-9,
            1 => 0.4 * u + 1e-9,
            _ => 1e-6 * r(),
        };
        let q = strained_segment(&mut r, eps);
        let k = logu(&mut r, 5e2, 1e6);
        let hp = host::stretch_elastic_projected(k, &arr(&q)).unwrap();
        check_eval("stretch projected", &hp, &stretch::energy_projected(k, &q));
        let he = host::stretch_elastic(k, &arr(&q)).unwrap();
        let delta = check_projected("stretch projected", 8, &hp, &he);
        let s = stretch::strain(&q).value[0];
        if s < 0.0 {
            compressed += 1;
        }
        for w in [s, 0.3 * r()] {
            check(
                "stretch clamped strain hessian",
                &host::stretch_clamped_strain_hessian(&arr(&q), w).unwrap(),
                &rm(&stretch::clamped_strain_hessian(&q, w)),
            );
        }
        if s < -1e-3 && delta > 1e-6 {
            changed += 1;
        }
    }
    eprintln!("stretch projected: {compressed} compressed, projection changed {changed}");
    assert!(compressed >= SAMPLES / 3, "{compressed} compressed");
    assert!(changed >= SAMPLES / 4, "projection changed only {changed}");
    report("stretch projected");
}

/// A bending element with turning angle `theta` (rad) and arc-length
/// spacing `D` scaled by `1 + d` relative to the edge lengths (`d < 0`:
/// yarn compressed along its arc length).
fn bend_config_scaled(r: &mut impl FnMut() -> f64, theta: f64, d: f64) -> SVector<f64, 12> {
    let mut q = bend_config(r, theta);
    let s0 = q[3];
    q[7] = s0 + (q[7] - s0) * (1.0 + d);
    q[11] = s0 + (q[11] - s0) * (1.0 + d);
    q
}

/// The PSD-projected bending Hessian (`bending::energy_projected`, clamp
/// in the 7 reduced variables with the strain as weight) against
/// weft-potentials on both sides of the small-angle switch (θ = 0, below
/// 5°, around 5°, up to 150°) with the arc-length spacing scaled by
/// 0.6 to 1.4. Energy and gradient equal the exact kernel's; the kernel's
/// projected Hessian is PSD (≥ -1e-12 relative) and differs from the
/// exact one in both regimes.
#[test]
fn bending_projected_matches_weft_potentials_in_both_regimes() {
    if skip() {
        return;
    }
    let thr = bending::DEFAULT_THRESHOLD;
    let mut r = xorshift(0x5eed_0012);
    let deg = std::f64::consts::PI / 180.0;
    let (mut n_small, mut n_large, mut ch_small, mut ch_large) = (0, 0, 0, 0);
    for i in 0..SAMPLES {
        let theta = match i % 5 {
            0 => 0.0,
            1 => 0.5 * (r() + 1.0) * 4.9 * deg,
            2 => (5.0 + 0.01 * r()) * deg,
            3 => (5.1 + 0.5 * (r() + 1.0) * 40.0) * deg,
            _ => (45.0 + 0.5 * (r() + 1.0) * 105.0) * deg,
        };
        let d = 0.4 * r();
        let q = bend_config_scaled(&mut r, theta, d);
        let k = logu(&mut r, 0.5e-5, 0.5e-3);
        let hp = host::bending_elastic_projected(k, &arr(&q), thr).unwrap();
        let small = bending::uses_small_angle(&q, thr);
        assert_eq!(hp.small_angle, small, "strain selection at theta {theta}");
        let name = if small {
            "bending projected (small-angle)"
        } else {
            "bending projected (scalar)"
        };
        check_eval(name, &hp, &bending::energy_projected(k, &q, thr));
        let he = host::bending_elastic(k, &arr(&q), thr).unwrap();
        let changed = check_projected("bending projected", 12, &hp, &he) > 1e-6;
        if small {
            n_small += 1;
            ch_small += usize::from(changed);
        } else {
            n_large += 1;
            ch_large += usize::from(changed);
        }
    }
    eprintln!(
        "bending projected: projection changed {ch_small}/{n_small} small-angle, \
         {ch_large}/{n_large} scalar"
    );
    assert!(
        n_small > SAMPLES / 4 && n_large > SAMPLES / 4,
        "{n_small} small, {n_large} large"
    );
    assert!(
        ch_small > n_small / 4 && ch_large > n_large / 2,
        "projection changed {ch_small}/{n_small} small-angle, {ch_large}/{n_large} scalar"
    );
    report("bending projected");
}

/// The PSD-projected shear Hessian (`Shear::elastic_projected`) against
/// weft-potentials, with and without jamming, on the small-angle branch
/// (|ε| < 5°, including ε = 0), the scalar branch below the jamming onset,
/// between onset and lock, and beyond the lock, for opening (ε > 0) and
/// closing (ε < 0, compressed) angles. Energy and gradient equal the exact
/// kernel's; the kernel's projected Hessian is PSD and differs from the
/// exact one on every branch.
#[test]
fn shear_projected_matches_weft_potentials_small_angle_scalar_and_jammed() {
    if skip() {
        return;
    }
    let thr = shear::SMALL_ANGLE_THRESHOLD;
    let (radius, spacing) = (0.0005, 0.002);
    let jam = shear::Jamming::from_geometry(radius, spacing).unwrap();
    let hj = host::shear_jamming(radius, spacing, thr).unwrap();
    assert!(hj.enabled);
    let deg = std::f64::consts::PI / 180.0;
    let (onset_deg, lock_deg) = (jam.onset / deg, jam.lock / deg);
    let mut r = xorshift(0x5eed_0013);
    let mut counts = [0usize; 4];
    let mut changed = [0usize; 4];
    let mut closing = 0;
    for i in 0..SAMPLES {
        let sign = if r() > 0.0 { 1.0 } else { -1.0 };
        let u = 0.5 * (r() + 1.0);
        let (eps_deg, kind) = match i % 5 {
            0 => (u * 4.9, 0),
            1 => (0.0, 0),
            2 => (5.1 + u * (onset_deg - 5.2), 1),
            3 => (onset_deg + 0.1 + u * (lock_deg - onset_deg - 0.2), 2),
            _ => (lock_deg + 0.1 + u * 15.0, 3),
        };
        counts[kind] += 1;
        if sign < 0.0 && eps_deg > 0.0 {
            closing += 1;
        }
        let q = shear_config(&mut r, sign * eps_deg * deg);
        let k = logu(&mut r, 1e-3, 10.0);
        let sh = shear::Shear::new(k, 0.0, spacing, thr, Some(jam)).unwrap();
        let plain = shear::Shear::new(k, 0.0, spacing, thr, None).unwrap();
        for (name, jm, s) in [
            ("shear projected (jamming)", Some(hj), &sh),
            ("shear projected (no jamming)", None, &plain),
        ] {
            let hp = host::shear_elastic_projected(k, spacing, thr, jm, &arr(&q)).unwrap();
            assert_eq!(hp.small_angle, shear::use_small_angle(&q, thr));
            check_eval(name, &hp, &s.elastic_projected(&q));
            let he = host::shear_elastic(k, spacing, thr, jm, &arr(&q)).unwrap();
            let delta = check_projected(name, 9, &hp, &he);
            if jm.is_some() && delta > 1e-6 {
                changed[kind] += 1;
            }
        }
    }
    eprintln!(
        "shear projected: projection changed {changed:?} of {counts:?} (small-angle, scalar, \
         jammed, beyond lock); {closing} closing"
    );
    assert!(counts.iter().all(|&c| c > SAMPLES / 8), "{counts:?}");
    assert!(closing > SAMPLES / 4, "{closing} closing samples");
    // ε = 0 exactly leaves nothing to clamp; every other sample has a
    // stress-weighted strain Hessian with a negative eigenvalue.
    assert!(
        changed[0] > counts[0] / 3 && (1..4).all(|b| changed[b] > counts[b] / 2),
        "projection changed {changed:?} of {counts:?}"
    );
    report("shear projected");
}

/// The element math of the acceptance and anchor-update kernels against the
/// CPU on random configurations of the 9 x 9 patch (positions moved by up
/// to 0.3 mm, arc-length coordinates by up to 0.1 mm at 1 mm spacing, 50
/// configurations): `segment_strain` of every segment against
/// `weft_solver::integrator::stretch_strains`; `yarn_tension_at` of every
/// crossing node and family against `k_s` times the mean of the CPU strains
/// of its (one or two) segments on that yarn and the mean of their chords;
/// `yarn_normal_pull` and `plain_crossing_normal_force` against
/// `friction::yarn_normal_pull` and `friction::crossing_normal_force` of
/// `YarnAtCrossing::plain` on random tensions (negative included), sides,
/// chords and radii. Tolerance 1e-12 relative.
#[test]
fn acceptance_and_anchor_math_match_the_cpu() {
    if skip() {
        return;
    }
    use std::collections::HashMap;
    use weft_core::Family;
    let sim = common::patch();
    let f = &sim.assembler.fabric;
    let segs = &f.elements.segments;
    let by_nodes: HashMap<(usize, usize), usize> = segs
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.a, s.b), i))
        .collect();
    let mut r = xorshift(0x5eed_00a1);
    let mut crossings = 0;
    for _ in 0..50 {
        let q = common::jiggled(&sim.q, &mut r);
        let cpu = weft_solver::integrator::stretch_strains(f, &q);
        for (i, s) in segs.iter().enumerate() {
            let k = s.family.slot();
            check(
                "segment strain",
                &[host::segment_strain(&q, s.a, s.b, k).unwrap()],
                &[cpu[i]],
            );
        }
        for node in 0..f.node_count() {
            for fam in [Family::Warp, Family::Weft] {
                let Some(y) = f.node_yarns[node][fam.index()] else {
                    continue;
                };
                let nodes = &f.yarns[y].nodes;
                let i = nodes.iter().position(|&n| n == node).unwrap();
                let prev = i.checked_sub(1).map(|j| nodes[j]);
                let next = nodes.get(i + 1).copied();
                let k_s = f.materials[f.yarns[y].material].stretch_stiffness;
                let (mut t, mut l, mut c) = (0.0, 0.0, 0.0);
                for (a, b) in [(prev, Some(node)), (Some(node), next)] {
                    if let (Some(a), Some(b)) = (a, b) {
                        t += k_s * cpu[by_nodes[&(a, b)]];
                        l += (0..3)
                            .map(|c| (q[5 * b + c] - q[5 * a + c]).powi(2))
                            .sum::<f64>()
                            .sqrt();
                        c += 1.0;
                    }
                }
                let (th, lh) =
                    host::yarn_tension_at(&q, prev, node, next, fam.slot(), k_s).unwrap();
                check("yarn tension at a node", &[th], &[t / c]);
                check("mean chord at a node", &[lh], &[l / c]);
                crossings += 1;
            }
        }
    }
    assert!(crossings > 100, "{crossings} node/family pairs checked");
    let (mut pulled, mut floored) = (0, 0);
    for _ in 0..SAMPLES {
        let tension = 2.0 * r();
        let sides = [r().signum(), r().signum(), r().signum()];
        let segments = [logu(&mut r, 1e-4, 1e-2), logu(&mut r, 1e-4, 1e-2)];
        let radius = logu(&mut r, 1e-5, 1e-3);
        let yarn = friction::YarnAtCrossing {
            tension,
            sides,
            segments,
        };
        check(
            "yarn normal pull",
            &[host::yarn_normal_pull(tension, sides, segments, radius).unwrap()],
            &[friction::yarn_normal_pull(&yarn, radius)],
        );
        let (tw, tf) = (2.0 * r(), 2.0 * r());
        let (lw, lf) = (logu(&mut r, 1e-14, 1e-2), logu(&mut r, 1e-14, 1e-2));
        let side = r().signum();
        let floor = friction::MIN_NORMAL_FORCE;
        let warp = friction::YarnAtCrossing::plain(tw, side, lw.max(1e-12));
        let weft = friction::YarnAtCrossing::plain(tf, -side, lf.max(1e-12));
        let cpu = friction::crossing_normal_force(&warp, &weft, radius, floor);
        if cpu > floor {
            pulled += 1;
        } else {
            floored += 1;
        }
        check(
            "plain crossing normal force",
            &[host::plain_crossing_normal_force(tw, lw, tf, lf, side, radius, floor).unwrap()],
            &[cpu],
        );
    }
    assert!(
        pulled > SAMPLES / 4 && floored > 10,
        "{pulled} pulled, {floored} at the floor"
    );
    report("acceptance/anchor update");
}

/// A random rest triangle (2D, edges 1-4 mm) and the same triangle placed
/// in 3D, rotated, translated and strained by up to ±30 % per direction
/// (compressed ones make the clamps act).
fn triangle_config(r: &mut impl FnMut() -> f64) -> ([[f64; 2]; 3], SVector<f64, 9>) {
    let rest = loop {
        let p: [[f64; 2]; 3] = std::array::from_fn(|_| [0.002 * r(), 0.002 * r()]);
        let area = 0.5
            * ((p[1][0] - p[0][0]) * (p[2][1] - p[0][1])
                - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]))
                .abs();
        if area > 2e-7 {
            break p;
        }
    };
    let (e0, e1) = {
        let a = unit(r);
        (a, perp(r, &a))
    };
    let shift = Vector3::new(r(), r(), r()) * 0.01;
    let (s0, s1, sh) = (1.0 + 0.3 * r(), 1.0 + 0.3 * r(), 0.2 * r());
    let mut q = SVector::<f64, 9>::zeros();
    for (k, p) in rest.iter().enumerate() {
        let x = shift + e0 * (s0 * p[0] + sh * p[1]) + e1 * (s1 * p[1]) + unit(r) * 1e-4 * r();
        q.fixed_rows_mut::<3>(3 * k).copy_from(&x);
    }
    (rest, q)
}

/// Symmetric positive-definite moduli (N/m): isotropic or orthotropic.
fn moduli(r: &mut impl FnMut() -> f64, scale: f64) -> nalgebra::Matrix3<f64> {
    let iso = stvk::isotropic(scale * logu(r, 0.1, 2.0), scale * logu(r, 0.1, 2.0));
    let a = nalgebra::Matrix3::from_fn(|_, _| r());
    iso + a * a.transpose() * (0.3 * scale * (r() + 1.0))
}

fn host_triangle(t: &stvk::Stvk, factor: &nalgebra::Matrix3<f64>) -> host::HostTriangle {
    let b = &t.rest().b;
    host::HostTriangle {
        b: [b[0][0], b[0][1], b[1][0], b[1][1], b[2][0], b[2][1]],
        area: t.area(),
        factor: std::array::from_fn(|i| factor[(i / 3, i % 3)]),
    }
}

#[test]
fn stvk_triangle_matches_weft_potentials() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0011);
    let mut clamped = 0;
    for _ in 0..SAMPLES {
        let (rest, q) = triangle_config(&mut r);
        let c = moduli(&mut r, 100.0);
        let c_d = moduli(&mut r, 0.1);
        let t = stvk::Stvk::new(rest, &c, &c_d).expect("valid triangle");
        let qd = vel::<9>(&mut r, 0.1);
        let ht = host_triangle(&t, t.stiffness_factor());
        let exact = t.elastic(&q);
        check_eval("stvk", &host::stvk_elastic(&ht, &arr(&q)).unwrap(), &exact);
        let projected = t.elastic_projected(&q);
        if (projected.hessian - exact.hessian).norm() > 1e-9 * exact.hessian.norm() {
            clamped += 1;
        }
        check_eval(
            "stvk projected",
            &host::stvk_elastic_projected(&ht, &arr(&q)).unwrap(),
            &projected,
        );
        let hd = host_triangle(&t, t.damping_factor().expect("damped"));
        check_diss(
            "stvk dissipation",
            &host::stvk_dissipation(&hd, &arr(&q), &arr(&qd)).unwrap(),
            &t.dissipation(&q, &qd).expect("damped"),
        );
    }
    // The clamp acts in a good share of the samples (compressed ones).
    assert!(clamped > SAMPLES / 5, "clamp active in {clamped} samples");
    report("stvk");
}

/// A hinge with bending angle about `theta` (rad): edge 1-3 mm, wings at
/// random heights, small random perturbations.
fn hinge_config(r: &mut impl FnMut() -> f64, theta: f64) -> ([[f64; 3]; 4], SVector<f64, 12>) {
    let e = unit(r);
    let n = perp(r, &e);
    let side = e.cross(&n);
    let len = 0.001 * (2.0 + r());
    let x0 = Vector3::new(r(), r(), r()) * 0.01;
    let x1 = x0 + e * len;
    let wing = |t: f64, w: f64, angle: f64| {
        x0 + e * (len * t) + (side * angle.cos() + n * angle.sin()) * w
    };
    let x2 = wing(0.5 + 0.3 * r(), 0.001 * (1.5 + r()), 0.0);
    let x3 = wing(0.5 + 0.3 * r(), -0.001 * (1.5 + r()), theta);
    let rest_x3 = wing(0.5 + 0.3 * r(), -0.001 * (1.5 + r()), 0.2 * r());
    let pts = [x0, x1, x2, x3];
    let rest = [x0, x1, x2, rest_x3].map(|p| [p.x, p.y, p.z]);
    let q = SVector::<f64, 12>::from_fn(|i, _| pts[i / 3][i % 3] + 1e-5 * r());
    (rest, q)
}

#[test]
fn discrete_shell_hinge_matches_weft_potentials() {
    if skip() {
        return;
    }
    let mut r = xorshift(0x5eed_0012);
    let deg = std::f64::consts::PI / 180.0;
    for i in 0..SAMPLES {
        let theta = match i % 4 {
            0 => 0.0,
            1 => 5.0 * deg * r(),
            2 => 60.0 * deg * r(),
            _ => 150.0 * deg * r(),
        };
        let (rest, q) = hinge_config(&mut r, theta);
        let k = logu(&mut r, 1e-6, 1e-4);
        let kd = k * logu(&mut r, 1e-3, 1e-1);
        let hg = hinge::Hinge::new(rest, k).expect("valid hinge");
        let qd = vel::<12>(&mut r, 0.1);
        let (om, rest_angle) = (hg.measure(), hg.rest_angle());
        check_strain(
            "hinge angle",
            &host::hinge_angle(&arr(&q)).unwrap(),
            &hinge::angle(&q),
        );
        check_eval(
            "hinge",
            &host::hinge_elastic(k, om, rest_angle, false, &arr(&q)).unwrap(),
            &hg.elastic(&q),
        );
        check_eval(
            "hinge projected",
            &host::hinge_elastic(k, om, rest_angle, true, &arr(&q)).unwrap(),
            &hg.elastic_projected(&q),
        );
        check_diss(
            "hinge dissipation",
            &host::hinge_dissipation(kd, om, &arr(&q), &arr(&qd)).unwrap(),
            &hg.dissipation(kd, &q, &qd),
        );
    }
    report("hinge");
}
