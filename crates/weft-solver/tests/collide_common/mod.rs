//! Shared helpers of the collide tests: a seeded RNG, closed test meshes and
//! temporary OBJ files.
#![allow(dead_code)]

use nalgebra::{Matrix3, SMatrix, Vector3};
use std::path::PathBuf;

/// SplitMix64: small, seeded, reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    pub fn vec3(&mut self, lo: f64, hi: f64) -> Vector3<f64> {
        Vector3::new(
            self.uniform(lo, hi),
            self.uniform(lo, hi),
            self.uniform(lo, hi),
        )
    }
    pub fn unit(&mut self) -> Vector3<f64> {
        loop {
            let v = self.vec3(-1.0, 1.0);
            let n = v.norm();
            if n > 0.1 && n < 1.0 {
                return v / n;
            }
        }
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Cube `[-a, a]^3`: 8 vertices, 12 outward (counter-clockwise) triangles.
pub fn cube(a: f64) -> (Vec<Vector3<f64>>, Vec<[u32; 3]>) {
    let v = (0..8)
        .map(|i| {
            Vector3::new(
                if i & 1 == 1 { a } else { -a },
                if i & 2 == 2 { a } else { -a },
                if i & 4 == 4 { a } else { -a },
            )
        })
        .collect();
    let t = vec![
        [0, 2, 1],
        [1, 2, 3], // z = -a
        [4, 5, 6],
        [5, 7, 6], // z = +a
        [0, 1, 4],
        [1, 5, 4], // y = -a
        [2, 6, 3],
        [3, 6, 7], // y = +a
        [0, 4, 2],
        [2, 4, 6], // x = -a
        [1, 3, 5],
        [3, 7, 5], // x = +a
    ];
    (v, t)
}

/// Signed distance of the box `[-a, a]^3` and its gradient (away from ties).
pub fn box_sdf(x: &Vector3<f64>, a: f64) -> (f64, Vector3<f64>) {
    let q = x.abs() - Vector3::repeat(a);
    let outside = q.map(|c| c.max(0.0));
    if outside.norm() > 0.0 {
        let n = outside.component_mul(&x.map(f64::signum)) / outside.norm();
        (outside.norm(), n)
    } else {
        let k = q.imax();
        let mut n = Vector3::zeros();
        n[k] = x[k].signum();
        (q[k], n)
    }
}

/// Icosphere of radius `r` (vertices on the sphere), `levels` subdivisions,
/// outward triangles.
pub fn icosphere(r: f64, levels: usize) -> (Vec<Vector3<f64>>, Vec<[u32; 3]>) {
    let p = (1.0 + 5f64.sqrt()) / 2.0;
    let mut v: Vec<Vector3<f64>> = [
        [-1.0, p, 0.0],
        [1.0, p, 0.0],
        [-1.0, -p, 0.0],
        [1.0, -p, 0.0],
        [0.0, -1.0, p],
        [0.0, 1.0, p],
        [0.0, -1.0, -p],
        [0.0, 1.0, -p],
        [p, 0.0, -1.0],
        [p, 0.0, 1.0],
        [-p, 0.0, -1.0],
        [-p, 0.0, 1.0],
    ]
    .iter()
    .map(|c| Vector3::from(*c).normalize())
    .collect();
    let mut t: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut mid = std::collections::HashMap::new();
        let mut get = |a: u32, b: u32, v: &mut Vec<Vector3<f64>>| -> u32 {
            *mid.entry((a.min(b), a.max(b))).or_insert_with(|| {
                v.push(((v[a as usize] + v[b as usize]) / 2.0).normalize());
                (v.len() - 1) as u32
            })
        };
        let mut next = Vec::new();
        for [a, b, c] in t {
            let ab = get(a, b, &mut v);
            let bc = get(b, c, &mut v);
            let ca = get(c, a, &mut v);
            next.extend([[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]);
        }
        t = next;
    }
    (v.into_iter().map(|x| x * r).collect(), t)
}

/// Writes an OBJ file with the given text to a fresh temporary path.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-collide-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// OBJ text of a mesh (1-based faces).
pub fn obj_text(v: &[Vector3<f64>], t: &[[u32; 3]]) -> String {
    let mut s = String::from("# test mesh\n");
    for p in v {
        s += &format!("v {:.17e} {:.17e} {:.17e}\n", p.x, p.y, p.z);
    }
    for f in t {
        s += &format!("f {} {} {}\n", f[0] + 1, f[1] + 1, f[2] + 1);
    }
    s
}

/// Central-difference gradient of a scalar function of a point.
pub fn fd_grad3(f: impl Fn(&Vector3<f64>) -> f64, x: &Vector3<f64>, h: f64) -> Vector3<f64> {
    Vector3::from_fn(|i, _| {
        let mut p = *x;
        let mut m = *x;
        p[i] += h;
        m[i] -= h;
        (f(&p) - f(&m)) / (2.0 * h)
    })
}

/// Central-difference Jacobian of a vector function of a point.
pub fn fd_jac3(
    f: impl Fn(&Vector3<f64>) -> Vector3<f64>,
    x: &Vector3<f64>,
    h: f64,
) -> Matrix3<f64> {
    let mut j = Matrix3::zeros();
    for c in 0..3 {
        let mut p = *x;
        let mut m = *x;
        p[c] += h;
        m[c] -= h;
        j.set_column(c, &((f(&p) - f(&m)) / (2.0 * h)));
    }
    j
}

/// Asserts a square matrix is symmetric and positive semi-definite (relative
/// tolerance `tol` of its norm).
pub fn assert_sym_psd<const N: usize>(m: &SMatrix<f64, N, N>, tol: f64) {
    let scale = m.norm().max(f64::MIN_POSITIVE);
    assert!(
        (m - m.transpose()).norm() <= tol * scale,
        "not symmetric: {m}"
    );
    let eig = nalgebra::DMatrix::from_column_slice(N, N, m.as_slice()).symmetric_eigen();
    let min = eig.eigenvalues.min();
    assert!(
        min >= -tol * scale,
        "not PSD: smallest eigenvalue {min:e}, norm {scale:e}"
    );
}
