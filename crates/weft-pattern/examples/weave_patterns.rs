//! Weaves every pattern in `../shared/data/patterns` at 10 mm and 20 mm and
//! prints the counts and timings (`cargo run --release -p weft-pattern --example weave_patterns`).

use std::time::Instant;
use weft_pattern::{Pattern, WeaveOptions, weave_garment};

fn main() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/patterns");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!("{} not found", dir.display());
        return;
    };
    let mut files: Vec<_> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    println!(
        "pattern,spacing_mm,panels,yarns,crossings,ends,nodes,seam_ties,stubs,min_seg_mm,offset_m,max_gap_m,weave_ms"
    );
    for f in files {
        let p = Pattern::from_file(&f).unwrap();
        for mm in [10.0, 20.0] {
            let t = Instant::now();
            let g = weave_garment(&p, &WeaveOptions::new(mm * 1e-3)).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let (y, c, e) = g.totals();
            let stubs: usize = g.panels.iter().map(|p| p.dropped_stubs).sum();
            let minseg = g
                .panels
                .iter()
                .map(|p| p.shortest_segment)
                .fold(f64::INFINITY, f64::min);
            let gap = g
                .seams
                .iter()
                .map(|s| s.gap(&g.fabric.initial.x))
                .fold(0.0, f64::max);
            println!(
                "{},{mm},{},{y},{c},{e},{},{},{stubs},{:.4},{:.3},{:.3},{ms:.1}",
                f.file_name().unwrap().to_string_lossy(),
                g.panels.len(),
                g.fabric.node_count(),
                g.seams.len(),
                minseg * 1e3,
                g.vertical_offset,
                gap
            );
        }
    }
}
