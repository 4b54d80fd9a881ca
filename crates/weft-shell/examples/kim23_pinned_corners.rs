//! Kim23 Fig. 5 at increasing resolution: a 1 m square hanging in its plane
//! from its two top corners under gravity, 2 s in steps of 5 ms (5
//! substeps, 1 iteration, velocity damping 1/s), with crossover springs,
//! LOD bending springs (every ring at fixed vertices, the default) and the
//! LOD connection (only the target ring). Prints, per run, the spring count,
//! the largest principal stretch at the end and over the run, the lowest
//! point (m; the rest bottom is at -1) and the wall time per step.
//!
//! Then the spring counts of the two LOD structures on a strip with one
//! pinned edge, where fixed vertices are many.
//!
//! `cargo run --release -p weft-shell --example kim23_pinned_corners [N...]`
//! (default N: 17 33 65 129).

use nalgebra::Vector3;
use std::time::Instant;
use weft_shell::sbd::hanging_square;
use weft_shell::{BendingSprings, ClothMesh, LodConnection, SbdOptions};

fn main() -> Result<(), weft_shell::ShellError> {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|s| s.parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![17, 33, 65, 129];
    }
    let structures = [
        ("crossover", BendingSprings::Crossover),
        ("lod (all rings)", BendingSprings::default()),
        (
            "lod connection",
            BendingSprings::Lod {
                connection: LodConnection::Lod,
                target_level: None,
            },
        ),
    ];
    println!(
        "{:>7} {:>16} {:>8} {:>7} {:>11} {:>11} {:>9} {:>8}",
        "n", "springs", "count", "levels", "stretch end", "stretch max", "lowest m", "ms/step"
    );
    for &n in &sizes {
        for (name, bending) in structures {
            let options = SbdOptions {
                bending,
                velocity_damping: 1.0,
                ..Default::default()
            };
            let mut sim = hanging_square(n, options)?;
            let (mut peak, mut wall) = (0.0f64, 0.0);
            for _ in 0..400 {
                let start = Instant::now();
                sim.step(0.005);
                wall += start.elapsed().as_secs_f64();
                peak = peak.max(sim.max_principal_stretch());
            }
            let lowest = sim
                .positions()
                .iter()
                .map(|p| p.y)
                .fold(f64::INFINITY, f64::min);
            println!(
                "{:>7} {:>16} {:>8} {:>7} {:>11.3e} {:>11.3e} {:>9} {:>8.2}",
                format!("{n}x{n}"),
                name,
                sim.springs().len(),
                sim.lod_levels()
                    .map_or("-".into(), |l| format!("{}/{}", l.loose, l.tight)),
                sim.max_principal_stretch(),
                peak,
                if lowest.is_finite() && lowest > -1e3 {
                    format!("{lowest:.4}")
                } else {
                    "diverged".into()
                },
                wall / 400.0 * 1e3
            );
        }
    }
    println!("\nspring counts on a 0.2 m x 0.1 m strip with one short edge pinned:");
    for n in [11usize, 21, 41, 81] {
        let m = (n - 1) / 2 + 1;
        let mesh = ClothMesh::rectangle(
            [0.2, 0.1],
            [n, m],
            Vector3::zeros(),
            Vector3::x(),
            Vector3::z(),
        )?;
        let mut pinned = vec![false; n * m];
        for j in 0..m {
            pinned[j * n] = true;
        }
        let count = |connection| {
            BendingSprings::Lod {
                connection,
                target_level: None,
            }
            .build(&mesh, &pinned)
            .0
            .len()
        };
        let (all, lod) = (count(LodConnection::Full), count(LodConnection::Lod));
        println!(
            "{n:>3} x {m:>3}: all rings {all:>6}, LOD connection {lod:>6} ({:.0} % fewer)",
            100.0 * (1.0 - lod as f64 / all as f64)
        );
    }
    Ok(())
}
