//! Synthetic damped oscillators written as energy.csv, shared by the tests.
#![allow(dead_code)]

use weft_analysis::EnergyColumns;

/// A linear damped oscillator `x = A e^{-σt} sin(ω_d t + φ0)`.
#[derive(Debug, Clone, Copy)]
pub struct Oscillator {
    pub mass: f64,
    pub amplitude: f64,
    pub omega: f64,
    pub zeta: f64,
    pub phase: f64,
}

impl Oscillator {
    pub fn new(zeta: f64) -> Self {
        Self {
            mass: 2.0,
            amplitude: 0.1,
            omega: 2.0 * std::f64::consts::PI * 1.5,
            zeta,
            phase: 0.3,
        }
    }
    pub fn sigma(&self) -> f64 {
        self.zeta * self.omega
    }
    pub fn omega_d(&self) -> f64 {
        self.omega * (1.0 - self.zeta * self.zeta).sqrt()
    }
    /// (x, v) at time t.
    pub fn state(&self, t: f64) -> (f64, f64) {
        let (s, wd) = (self.sigma(), self.omega_d());
        let th = wd * t + self.phase;
        let e = self.amplitude * (-s * t).exp();
        (e * th.sin(), e * (wd * th.cos() - s * th.sin()))
    }
    /// Exact kinetic-energy peak times in the open interval (a, b):
    /// v ∝ cos(ω_d t + φ0 + ψ), ψ = atan2(σ, ω_d), and ln KE is stationary where
    /// tan(ω_d t + φ0 + ψ) = -σ/ω_d, i.e. ω_d t = kπ - 2ψ - φ0.
    pub fn peak_times(&self, a: f64, b: f64) -> Vec<f64> {
        let (s, wd) = (self.sigma(), self.omega_d());
        let psi = s.atan2(wd);
        (0..100_000)
            .map(|k| (k as f64 * std::f64::consts::PI - 2.0 * psi - self.phase) / wd)
            .filter(|&t| t > a)
            .take_while(|&t| t < b)
            .collect()
    }
    /// Columns sampled at `t = i·dt`, `i = 0..n`, with additive noise on the
    /// kinetic energy from `noise(i)`.
    pub fn columns(&self, dt: f64, n: usize, noise: impl Fn(usize) -> f64) -> EnergyColumns {
        let k = self.mass * self.omega * self.omega;
        let mut c = EnergyColumns::default();
        let (x0, v0) = self.state(0.0);
        let e0 = 0.5 * self.mass * v0 * v0 + 0.5 * k * x0 * x0;
        for i in 0..n {
            let t = i as f64 * dt;
            let (x, v) = self.state(t);
            let ke = 0.5 * self.mass * v * v;
            let pe = 0.5 * k * x * x;
            c.t.push(t);
            c.kinetic.push(ke + noise(i));
            c.elastic.push(pe);
            c.gravity.push(-0.3 + 0.01 * t);
            c.dissipated.push(e0 - ke - pe);
            c.h.push(dt);
            c.newton_iters.push(3.0);
            c.cg_iters.push(20.0 + (i % 5) as f64);
        }
        c
    }
}

/// Deterministic standard normal samples (splitmix64 + Box-Muller).
pub struct Normal(u64);

impl Normal {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub fn sample(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}
