//! Regenerates `data/bodies/mannequin.obj` (the project's own mannequin,
//! `weft_io::mannequin`): `cargo run --release -p weft-io --example make_mannequin`.
//! Prints its vertex/triangle counts, bounding box and girths.

use std::path::PathBuf;
use weft_io::mannequin::{self, Measurements};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = root.join("data/bodies/mannequin.obj");
    std::fs::create_dir_all(out.parent().expect("has a parent"))?;
    let mesh = mannequin::generate();
    mesh.write_obj(&out, mannequin::OBJ_HEADER, mannequin::OBJ_DECIMALS)?;
    let (lo, hi) = mesh.bounding_box();
    println!(
        "{}: {} vertices, {} triangles, closed: {}, volume {:.4} m^3",
        out.display(),
        mesh.vertices.len(),
        mesh.triangles.len(),
        mesh.is_closed(),
        mesh.signed_volume()
    );
    println!("bounding box min {lo:?} max {hi:?}");
    let m = Measurements::MEAN_ADULT;
    for (name, y, want) in [
        ("bust", m.bust_y(), m.bust),
        ("underbust", m.underbust_y(), m.underbust),
        ("waist", m.waist_y(), m.waist),
        ("hips", m.hips_y(), m.hips),
    ] {
        let g = mesh.girth_at(y, [0.0, 0.0]).unwrap_or(f64::NAN);
        println!(
            "{name:9} y = {y:.4} m: girth {g:.4} m, target {want:.4} m ({:+.2} %)",
            100.0 * (g / want - 1.0)
        );
    }
    Ok(())
}
