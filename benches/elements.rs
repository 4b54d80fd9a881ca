//! Element evaluation throughput: elements per second for energy + gradient +
//! Hessian (and strain-rate dissipation) of each element type, on batches of
//! random well-conditioned configurations with [SBO17 Table 1] sizes.
//!
//! Run: `cargo bench --bench elements`. Criterion reports time per batch and
//! throughput in elements/s.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nalgebra::SVector;
use std::hint::black_box;
use weft_potentials::{elastic, stretch};

const BATCH: usize = 4096;

/// Deterministic pseudo-random numbers in [-1, 1) (xorshift), so runs compare.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

fn stretch_batch(rng: &mut Rng) -> Vec<(SVector<f64, 8>, SVector<f64, 8>)> {
    (0..BATCH)
        .map(|_| {
            let l = 1e-3;
            let q = SVector::from([
                0.0,
                0.0,
                0.0,
                0.0,
                l * (1.0 + 0.1 * rng.next()),
                l * 0.2 * rng.next(),
                l * 0.2 * rng.next(),
                l,
            ]);
            let v = SVector::from_fn(|_, _| rng.next());
            (q, v)
        })
        .collect()
}

fn bench_elements(c: &mut Criterion) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut g = c.benchmark_group("element");
    g.throughput(Throughput::Elements(BATCH as u64));
    let batch = stretch_batch(&mut rng);
    g.bench_with_input(
        BenchmarkId::new("stretch", "energy+grad+hess"),
        &batch,
        |b, batch| {
            b.iter(|| {
                let mut acc = 0.0;
                for (q, _) in batch {
                    let e = elastic(500.0, &stretch::strain(q), &stretch::measure(q));
                    acc += e.energy + e.gradient[0] + e.hessian[(0, 0)];
                }
                black_box(acc)
            })
        },
    );
    g.bench_with_input(
        BenchmarkId::new("stretch", "dissipation"),
        &batch,
        |b, batch| {
            b.iter(|| {
                let mut acc = 0.0;
                for (q, v) in batch {
                    let d = stretch::dissipation(3e-7, q, v);
                    acc += d.force[0] + d.position_jacobian[(0, 0)];
                }
                black_box(acc)
            })
        },
    );
    g.finish();
}

criterion_group!(benches, bench_elements);
criterion_main!(benches);
