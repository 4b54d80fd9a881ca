//! Writes demo plots of synthetic damped oscillators: `cargo run -p
//! weft-analysis --example plot_demo -- OUT_DIR`.

use weft_analysis::{
    EnergyColumns, PlotOptions, fit_damping_columns, plot_energy, plot_kinetic_comparison,
};

fn oscillator(zeta: f64, dt: f64, n: usize) -> EnergyColumns {
    let (m, a, omega) = (2.0, 0.1, 2.0 * std::f64::consts::PI * 1.5);
    let (sigma, wd) = (zeta * omega, omega * (1.0 - zeta * zeta).sqrt());
    let k = m * omega * omega;
    let mut c = EnergyColumns::default();
    let mut e0 = None;
    for i in 0..n {
        let t = i as f64 * dt;
        let th = wd * t + 0.3;
        let env = a * (-sigma * t).exp();
        let (x, v) = (env * th.sin(), env * (wd * th.cos() - sigma * th.sin()));
        let (ke, pe) = (0.5 * m * v * v, 0.5 * k * x * x);
        let e0 = *e0.get_or_insert(ke + pe);
        c.t.push(t);
        c.kinetic.push(ke);
        c.elastic.push(pe);
        c.gravity.push(-0.3);
        c.dissipated.push(e0 - ke - pe);
        c.h.push(dt);
        c.newton_iters.push(3.0);
        c.cg_iters.push(20.0);
    }
    c
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let out = std::path::Path::new(&out);
    let runs: Vec<(f64, EnergyColumns)> = [0.0, 0.01, 0.05, 0.2]
        .iter()
        .map(|&z| (z, oscillator(z, 1.0 / 64.0, 400)))
        .collect();
    for (z, c) in &runs {
        let fit = fit_damping_columns(c, &Default::default())?;
        println!(
            "zeta {z}: fitted {:.6}, omega {:.4} rad/s, {} peaks",
            fit.zeta, fit.omega, fit.peaks_used
        );
    }
    let opts = PlotOptions {
        log_kinetic: true,
        ..PlotOptions::default()
    };
    plot_energy(&runs[2].1, out.join("energy.svg"), &opts)?;
    let labels: Vec<String> = runs.iter().map(|(z, _)| format!("zeta = {z}")).collect();
    let cmp: Vec<(&str, &EnergyColumns)> = labels
        .iter()
        .map(String::as_str)
        .zip(runs.iter().map(|r| &r.1))
        .collect();
    plot_kinetic_comparison(&cmp, out.join("compare.svg"), &PlotOptions::default())?;
    plot_kinetic_comparison(&cmp, out.join("compare_log.svg"), &opts)?;
    Ok(())
}
