//! SBO18 Fig. 3 (left) at the paper's resolution: the 1,089-vertex (33 x 33)
//! StVK patch, hanging and swinging, with no membrane damping, Rayleigh
//! `β = 0.15 s`, and strain-rate damping tuned to it by [SBO18 eq. 12]
//! (`weft_shell::implicit::fig3_patch`). Prints the figures the CI test
//! asserts on its 13 x 13 version: the hanging run's integrated kinetic
//! energy, the swinging run's first-half kinetic-energy peak and the share
//! of its integrated kinetic energy in the second half, and
//! writes both curves to `sbo18_fig3.csv` (time s, then kinetic energy J
//! per run).
//!
//! `cargo run --release -p weft-shell --example sbo18_fig3 [vertices per side]`

use weft_shell::{Fig3Motion, MembraneDamping, implicit};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(a) => a.parse()?,
        None => 33,
    };
    let damping = [
        ("none", MembraneDamping::None),
        ("rayleigh", MembraneDamping::Rayleigh { beta: 0.15 }),
        ("strain_rate", MembraneDamping::StrainRate { beta: 0.15 }),
    ];
    let runs = [
        (Fig3Motion::Hanging, 1e-3, 0.15),
        (Fig3Motion::Swinging, 4e-3, 1.0),
    ];
    let mut columns = Vec::new();
    println!("{n} x {n} vertices");
    for (motion, dt, t_end) in runs {
        for (name, d) in damping {
            let start = std::time::Instant::now();
            let ke =
                implicit::kinetic_energy_history(implicit::fig3_patch(motion, n, d)?, dt, t_end)?;
            let half = ke.len() / 2;
            let max = |k: &[f64]| k.iter().cloned().fold(0.0, f64::max);
            println!(
                "{motion:?} {name:>11}: ∫KE dt {:.3e} J·s, first-half KE peak {:.3e} J, second/first half ∫KE {:.3}, {:.1} s",
                ke.iter().sum::<f64>() * dt,
                max(&ke[..half]),
                ke[half..].iter().sum::<f64>() / ke[..half].iter().sum::<f64>(),
                start.elapsed().as_secs_f64()
            );
            columns.push((format!("{motion:?}_{name}").to_lowercase(), dt, ke));
        }
    }
    let rows = columns.iter().map(|c| c.2.len()).max().unwrap_or(0);
    let mut csv = String::from("column,time_s,kinetic_energy_j\n");
    for (name, dt, ke) in &columns {
        for (k, e) in ke.iter().enumerate().take(rows) {
            csv += &format!("{name},{},{e:e}\n", (k + 1) as f64 * dt);
        }
    }
    std::fs::write("sbo18_fig3.csv", csv)?;
    println!("wrote sbo18_fig3.csv");
    Ok(())
}
