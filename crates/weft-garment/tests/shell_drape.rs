//! The `shell` drape model (`DrapeModel::Shell`, `weft drape --model
//! shell`): the woven garment's nodes as orthotropic StVK membrane
//! triangles and discrete-shell hinges, through the yarn model's pipeline.

use std::path::Path;
use weft_garment::{DrapeModel, DrapeOptions, drape_to_dir};

/// The A-line skirt at 80 mm (100 nodes; 25 s on 2 cores in the test
/// profile) sews and drapes: seams closed to a few millimetres (measured
/// 1.3 mm), no node inside the body, no layer through another, the waist
/// where it was sewn and the hem hanging at the yarn model's height
/// (measured 0.632 m; the yarn model's is about 0.60 m). The hem bound
/// catches the roll-up that a full-strength waist attachment causes (hem
/// at 0.93 m, `shell::SHELL_ATTACHMENT_FRACTION`).
#[test]
fn shell_drapes_the_skirt_on_the_mannequin() {
    let skirt = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/patterns/a_line_skirt.json");
    let out = tempfile::tempdir().unwrap();
    let opts = DrapeOptions {
        model: DrapeModel::Shell,
        spacing_mm: 80.0,
        ..Default::default()
    };
    let d = drape_to_dir(&skirt, &opts, out.path(), &mut ()).unwrap();
    let s = &d.summary;
    let hem = s.levels.last().unwrap().hem_height_m;
    println!(
        "steps {}, seams {:.4} m, nodes in {:.5} m, top drop {:.4} m, hem {hem:.3} m, layer crossings {}, static {}",
        s.steps,
        s.max_seam_gap_m,
        s.max_penetration_m,
        s.top_drop_m,
        s.layer_crossings,
        s.is_static
    );
    assert_eq!(s.model, DrapeModel::Shell);
    assert!(s.finite);
    assert!(s.max_seam_gap_m < 0.01, "seam gap {} m", s.max_seam_gap_m);
    assert!(
        s.max_penetration_m < 1e-4,
        "node inside by {} m",
        s.max_penetration_m
    );
    assert_eq!(s.layer_crossings, 0);
    assert!(
        !s.slid_off && s.top_drop_m.abs() < 0.02,
        "top moved {} m",
        s.top_drop_m
    );
    assert!((0.55..0.70).contains(&hem), "hem at {hem} m");
    let json = std::fs::read_to_string(out.path().join("summary.json")).unwrap();
    assert!(json.contains("\"model\": \"shell\""));
}
