//! The Cusick drape test on the coarsest spacing it accepts (15 mm, a
//! quarter of the 60 mm overhang): stiffer fabric drapes less. The
//! published drape-coefficient bands need finer spacings (BENCHMARKS.md).

use weft_garment::{CusickOptions, FabricPreset, GarmentError, RelaxOptions, cusick};

fn coarse(material: FabricPreset) -> CusickOptions {
    CusickOptions {
        material,
        spacing_mm: 15.0,
        dt_max: 0.02,
        relax: RelaxOptions {
            min_time: 0.5,
            max_time: 2.0,
            ..RelaxOptions::default()
        },
        ..CusickOptions::default()
    }
}

#[test]
fn silk_drapes_more_than_denim() {
    let mut dc = Vec::new();
    // The two drapes are independent: one thread each.
    let presets = [FabricPreset::Silk, FabricPreset::Denim];
    let summaries = std::thread::scope(|sc| {
        presets
            .map(|m| sc.spawn(move || cusick(&coarse(m), &mut ()).unwrap().summary))
            .map(|h| h.join().unwrap())
    });
    for (m, s) in presets.into_iter().zip(summaries) {
        let overhang = 0.5 * (s.specimen_diameter_m - s.disc_diameter_m);
        let mass = m.properties().areal_density * std::f64::consts::PI * 0.15f64.powi(2);
        eprintln!(
            "{}: DC {:.3}, {} folds, drop {:.1} mm, KE {:.2e} J, residual {:.3}, {} steps",
            s.material,
            s.drape_coefficient,
            s.folds,
            s.drop_m * 1e3,
            s.kinetic_energy_j,
            s.residual,
            s.steps
        );
        // It hangs from the disc: the rim falls most of the overhang, and
        // it has come to rest (RMS speed below 5 cm/s).
        assert!(
            s.drop_m > 0.5 * overhang && s.drop_m < overhang * 1.05,
            "{}: drop {} m of a {} m overhang",
            s.material,
            s.drop_m,
            overhang
        );
        assert!(s.kinetic_energy_j < 0.5 * mass * 0.05f64.powi(2), "{s:?}");
        assert!(
            s.drape_coefficient > 0.2 && s.drape_coefficient < 0.9,
            "{s:?}"
        );
        // It hangs from the disc's rim, not in under the disc (where the
        // pedestal stands): the outermost clamped nodes lie up to one
        // spacing inside the disc's radius.
        let rim = 0.5 * s.disc_diameter_m - s.spacing_m;
        assert!(
            s.hanging_min_radius_m.is_some_and(|r| r > rim),
            "{}: a hanging node {:?} m from the axis, the rim at {rim} m",
            s.material,
            s.hanging_min_radius_m
        );
        dc.push(s.drape_coefficient);
    }
    // Denim's bending length is twice silk's (20.7 against 9.5 mm).
    assert!(
        dc[1] > dc[0] + 0.03,
        "silk DC {} against denim DC {}",
        dc[0],
        dc[1]
    );
}

#[test]
fn a_spacing_coarser_than_the_folds_is_refused() {
    let opts = CusickOptions {
        spacing_mm: 20.0,
        ..CusickOptions::default()
    };
    match cusick(&opts, &mut ()) {
        Err(GarmentError::Option {
            option, expected, ..
        }) => {
            assert_eq!(option, "spacing_mm");
            assert!(
                expected.contains("quarter of the overhang (15.0 mm)"),
                "{expected}"
            );
        }
        other => panic!(
            "expected an option error, got {:?}",
            other.map(|c| c.summary)
        ),
    }
}
