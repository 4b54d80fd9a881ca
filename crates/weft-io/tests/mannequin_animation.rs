//! The mannequin's procedural animations (`weft_io::mannequin::animate`,
//! linear-blend skinning of a six-bone skeleton, put back on the posed
//! body; issue 23 item 6): frame 0
//! is the rest mannequin, every frame has its triangles, and each motion
//! moves the parts it names by the amounts its angles give while the rest
//! of the body stays put.

use weft_io::TriMesh;
use weft_io::mannequin::{Motion, animate, generate};

/// The vertex of `m` with the largest `key`.
fn extreme(m: &TriMesh, key: impl Fn(&[f64; 3]) -> f64) -> usize {
    (0..m.vertices.len())
        .max_by(|&a, &b| key(&m.vertices[a]).total_cmp(&key(&m.vertices[b])))
        .unwrap()
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt()
}

#[test]
fn every_motion_starts_at_rest_and_keeps_the_mesh() {
    let rest = generate();
    for m in Motion::ALL {
        let frames = animate(m, 10.0, 0.5);
        assert_eq!(frames.len(), 6, "{m:?}");
        assert_eq!(frames[0], rest, "{m:?}: frame 0 is not the rest mesh");
        for f in &frames {
            assert_eq!(f.triangles, rest.triangles);
            assert!(f.vertices.iter().flatten().all(|c| c.is_finite()));
        }
        // Skinning put back on the posed body bends the joints and keeps
        // the volume (within 0.1 %; plain skinning lost 0.3 % turning the
        // torso).
        let v = frames[5].signed_volume() / rest.signed_volume();
        assert!((v - 1.0).abs() < 1e-3, "{m:?}: volume ratio {v}");
        assert_eq!(m.name().parse::<Motion>(), Ok(m));
    }
    assert!(
        "dance"
            .parse::<Motion>()
            .unwrap_err()
            .contains("raise-arms")
    );
}

#[test]
fn each_motion_moves_its_bones_and_leaves_the_rest() {
    let rest = generate();
    // A point on the hips' front, between the legs' and arms' reach.
    let hips = extreme(&rest, |v| {
        if (0.9..1.0).contains(&v[1]) && v[0].abs() < 0.05 {
            v[2]
        } else {
            f64::MIN
        }
    });
    let hand = extreme(&rest, |v| v[0]);
    let toe = extreme(&rest, |v| if v[0] > 0.0 { v[2] } else { f64::MIN });
    let chest = extreme(&rest, |v| {
        if (1.2..1.3).contains(&v[1]) && v[0].abs() < 0.03 {
            v[2]
        } else {
            f64::MIN
        }
    });
    let moved = |f: &TriMesh, i: usize| dist(f.vertices[i], rest.vertices[i]);

    // Raise the arms 40° about the shoulder: the fingertip, about 0.75 m
    // from the shoulder, rises by about 0.75 (sin 45° - sin 5°) = 0.46 m.
    let up = animate(Motion::RaiseArms, 10.0, 0.5);
    let rise = up[5].vertices[hand][1] - rest.vertices[hand][1];
    assert!((0.35..0.55).contains(&rise), "fingertip rose {rise} m");
    assert!(moved(&up[5], hips) < 1e-6 && moved(&up[5], toe) < 1e-6);

    // Turn the chest 25° about the waist's vertical axis: the front of the
    // chest (about 0.12 m in front of the axis) moves about 0.12 · 2 sin 12.5°.
    let turn = animate(Motion::TurnTorso, 10.0, 0.5);
    let c = moved(&turn[5], chest);
    assert!((0.035..0.07).contains(&c), "chest front moved {c} m");
    assert!(moved(&turn[5], toe) < 1e-6);

    // Walk: at a quarter cycle the legs are 20° from vertical, the left toe
    // (about 0.85 m below the hip) about 0.85 · 2 sin 10° = 0.3 m away; the
    // hips' front stays (the pelvis is the root).
    let walk = animate(Motion::Walk, 4.0, 0.5);
    let t = moved(&walk[1], toe);
    assert!((0.2..0.4).contains(&t), "toe moved {t} m");
    assert!(
        moved(&walk[1], hips) < 0.01,
        "hips moved {} m",
        moved(&walk[1], hips)
    );
}
