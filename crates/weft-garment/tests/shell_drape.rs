//! The `shell` drape model (`DrapeModel::Shell`, `weft drape --model
//! shell`): the woven garment's nodes as orthotropic StVK membrane
//! triangles and discrete-shell hinges, through the yarn model's pipeline.

use std::path::Path;
use weft_garment::{DrapeModel, DrapeOptions, drape_to_dir};

/// The A-line skirt at 80 mm (100 nodes; 10 s on 2 cores in the test
/// profile) sews and drapes with its default self-collision
/// (`DrapeOptions::shell_self_collision`): seams closed to a few
/// millimetres (measured 4.3 mm), no node inside the body, no layer
/// through another, the waist within 3 cm of where it was sewn (measured
/// 18.7 mm higher: the layers repel within 0.3 spacings, 24 mm at this
/// spacing) and the hem near the yarn model's height (measured 0.683 m,
/// 0.632 m without self-collision; the yarn model's is about 0.60 m). The
/// hem bound catches the roll-up that a full-strength waist attachment
/// causes (hem at 0.93 m, `shell::SHELL_ATTACHMENT_FRACTION`).
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
        !s.slid_off && s.top_drop_m.abs() < 0.03,
        "top moved {} m",
        s.top_drop_m
    );
    assert!((0.55..0.75).contains(&hem), "hem at {hem} m");
    // The level's rejections by reason add up to its count.
    let l = s.levels.last().unwrap();
    println!("rejected {}: {:?}", l.rejected, l.rejections);
    assert_eq!(l.rejections.values().sum::<usize>(), l.rejected);
    let json = std::fs::read_to_string(out.path().join("summary.json")).unwrap();
    assert!(json.contains("\"model\": \"shell\""));
    assert!(json.contains("\"rejections\": {"));
}

/// The `shell` model's self-collision on the A-line skirt's mesh at 20 mm
/// (`shell::mesh_self_collision`, `d0` a tenth of the spacing): with each
/// panel flat in its own rest frame there is no contact within a panel
/// (the exclusion covers every vertex's one-ring), and with the two panels
/// laid on one another at half `d0` apart there are vertex–face and
/// edge–edge contacts between them, and only between them.
#[test]
fn shell_self_collision_sees_layers_and_not_neighbours() {
    use weft_garment::shell::{
        SHELL_EXCLUSION_SPACINGS, SHELL_LAYER_THICKNESS, garment_mesh, mesh_self_collision,
        shell_material, stray_ties,
    };
    use weft_pattern::{Pattern, WeaveOptions, weave_garment};
    let pattern = Pattern::from_file(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/patterns/a_line_skirt.json"),
    )
    .unwrap();
    let s = 0.02;
    let mut w = WeaveOptions::new(s);
    w.material = weft_core::FabricPreset::Cotton.material(s, false);
    let garment = weave_garment(&pattern, &w).unwrap();
    let mesh = garment_mesh(&pattern, &garment).unwrap();
    let fabric =
        weft_shell::implicit::shell_fabric(&mesh, &shell_material(&DrapeOptions::default()), &[])
            .unwrap();
    let d0 = SHELL_LAYER_THICKNESS * s;
    // The ties holding the nodes no triangle holds, as the pipeline's.
    let ties: Vec<weft_solver::Tie> = stray_ties(&garment, &mesh)
        .into_iter()
        .map(|t| weft_solver::Tie {
            node: t.node as usize,
            other: t.other.map(|o| o as usize),
            t: t.t,
        })
        .collect();
    let sc =
        mesh_self_collision(&garment, &fabric, &ties, d0, SHELL_EXCLUSION_SPACINGS * s).unwrap();
    assert_eq!(sc.faces().len(), fabric.elements.triangles.len());
    let panel_of = |i: usize| {
        garment
            .panels
            .iter()
            .position(|p| (p.first_node..p.first_node + p.nodes).contains(&i))
            .unwrap()
    };
    // The rest frames, each panel centred on the origin: the panels overlap.
    let centre: Vec<[f64; 2]> = garment
        .panels
        .iter()
        .map(|p| {
            let r = p.first_node..p.first_node + p.nodes;
            let n = p.nodes as f64;
            [
                r.clone().map(|i| garment.local[i][0]).sum::<f64>() / n,
                r.map(|i| garment.local[i][1]).sum::<f64>() / n,
            ]
        })
        .collect();
    let laid = |gap: f64| -> Vec<nalgebra::Vector3<f64>> {
        (0..garment.local.len())
            .map(|i| {
                let (k, l) = (panel_of(i), garment.local[i]);
                nalgebra::Vector3::new(l[0] - centre[k][0], l[1] - centre[k][1], k as f64 * gap)
            })
            .collect()
    };
    let apart = laid(1.0);
    assert!(
        sc.face_contacts(&apart).is_empty(),
        "no contact within a panel"
    );
    assert!(
        sc.contacts(&apart).is_empty(),
        "no edge contact within a panel"
    );
    let stacked = laid(0.25 * d0);
    let faces = sc.face_contacts(&stacked);
    let edges = sc.contacts(&stacked);
    println!(
        "{} nodes, {} faces: {} vertex-face and {} edge-edge contacts",
        fabric.node_count(),
        sc.faces().len(),
        faces.len(),
        edges.len()
    );
    assert!(faces.len() > fabric.node_count() / 2, "{}", faces.len());
    assert!(!edges.is_empty());
    assert!(
        faces
            .iter()
            .all(|c| panel_of(c.nodes[0]) != panel_of(c.nodes[1]))
    );
    assert!(
        edges
            .iter()
            .all(|c| panel_of(c.nodes[0]) != panel_of(c.nodes[2]))
    );
    // The layer pass-through measure on the same mesh: none between flat
    // panels 1 m apart or 0.25 d0 apart; a node of panel 1 pulled through
    // panel 0's plane makes its edges cut panel 0's triangles, and only
    // those.
    let triangles = weft_garment::shell::mesh_triangles(&fabric);
    let radius = weft_garment::LAYER_EXCLUSION_SPACINGS * s;
    let through = |x: &[nalgebra::Vector3<f64>]| {
        weft_garment::shell::mesh_layer_crossings(&garment, &triangles, &ties, x, radius).unwrap()
    };
    assert!(through(&apart).is_empty());
    assert!(through(&stacked).is_empty());
    let p1 = &garment.panels[1];
    let node = (p1.first_node..p1.first_node + p1.nodes)
        .filter(|&i| triangles.iter().any(|t| t.contains(&i)))
        .min_by(|&a, &b| apart[a].xy().norm().total_cmp(&apart[b].xy().norm()))
        .unwrap();
    let mut pulled = apart.clone();
    pulled[node].z = -1.0;
    let hits = through(&pulled);
    println!(
        "node {node} pulled through panel 0: {} crossings",
        hits.len()
    );
    assert!(!hits.is_empty());
    // Either an edge at the node through panel 0's triangles or an edge
    // of panel 0 through the triangles at the node, all on panel 0's plane.
    let in_panel0 = |v: &[usize]| v.iter().all(|&v| panel_of(v) == 0);
    assert!(hits.iter().all(|c| {
        let edge_down = c.segment.contains(&node) && in_panel0(&c.triangle);
        let face_down = c.triangle.contains(&node) && in_panel0(&c.segment);
        (edge_down || face_down) && c.point[2].abs() < 1e-12
    }));
    assert!(hits.iter().any(|c| c.segment.contains(&node)));
}
