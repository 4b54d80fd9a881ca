use weft_pattern::*;
#[test]
fn scratch() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/patterns");
    for f in [
        "gc_shirt_mean.json",
        "gpg_tee.json",
        "gc_dress_pencil.json",
        "gpg_skirt_2_panels.json",
        "gc_hoody_mean.json",
    ] {
        let p = Pattern::from_file(dir.join(f)).unwrap();
        let g = weave_garment(&p, &WeaveOptions::new(0.01)).unwrap();
        let outl: Vec<_> = p
            .panels
            .iter()
            .map(|q| geometry::Outline::new(q, 2e-4))
            .collect();
        println!(
            "{f}: height range {:?} offset {}",
            garment::placed_height_range(&p, &outl),
            g.vertical_offset
        );
        for pr in &g.panels {
            println!(
                "  {} area {:.4} warp {} weft {} cross {} ends {}",
                pr.name, pr.area, pr.warp_yarns, pr.weft_yarns, pr.crossings, pr.ends
            );
        }
        for (i, (st, sr)) in p.stitches.iter().zip(&g.stitches).enumerate() {
            let gaps: Vec<f64> = g.seams[sr.ties.clone()]
                .iter()
                .map(|t| t.gap(&g.fabric.initial.x))
                .collect();
            let mn = gaps.iter().cloned().fold(f64::MAX, f64::min);
            let mx = gaps.iter().cloned().fold(0.0, f64::max);
            println!(
                "  st{i} {}[{}] - {}[{}] rw={} len {:.4}/{:.4} ends {:?} gap {:.3}..{:.3}",
                p.panels[st.a.panel].name,
                st.a.edge,
                p.panels[st.b.panel].name,
                st.b.edge,
                st.right_wrong,
                sr.lengths[0],
                sr.lengths[1],
                sr.ends,
                mn,
                mx
            );
        }
    }
}
