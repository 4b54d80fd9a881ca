//! Checkpoints and resume of `weft run` and `weft drape` (issue 21, item
//! 3): a run killed with SIGKILL after a checkpoint and resumed ends bit
//! for bit where an uninterrupted run ends (final state, every energy row,
//! every frame), and so does a two-level drape killed while sewing or at
//! its second level; a corrupt checkpoint, a checkpoint of another scene
//! or other options and a resume without a checkpoint are refused with
//! the file named, and the previous checkpoint is kept.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const SCENE: &str = "data/scenes/drape_sphere_small.json";

fn weft(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .current_dir(repo())
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `dir/checkpoint.json`, if one is there and complete.
fn checkpoint(dir: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("checkpoint.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// `weft run SCENE -q FLAG DIR` (`FLAG` is `--out` or `--resume`).
fn run_scene(scene: &str, flag: &str, dir: &Path) -> Output {
    weft(&[
        "run".as_ref(),
        scene.as_ref(),
        "-q".as_ref(),
        flag.as_ref(),
        dir.as_os_str(),
    ])
}

/// Asserts that `out` failed and returns its stderr.
fn refused(out: &Output) -> String {
    assert!(!out.status.success(), "it succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Waits until `dir/checkpoint.json` satisfies `ready`, then kills the
/// process (SIGKILL).
fn kill_when(
    mut child: std::process::Child,
    dir: &Path,
    ready: impl Fn(&serde_json::Value) -> bool,
) {
    let start = Instant::now();
    loop {
        if checkpoint(dir).as_ref().is_some_and(&ready) {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "it ended before the checkpoint looked for"
        );
        assert!(start.elapsed() < Duration::from_secs(300), "no checkpoint");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn a_killed_run_resumes_bit_for_bit() {
    let tmp = tempfile::tempdir().unwrap();
    let (whole, cut) = (tmp.path().join("whole"), tmp.path().join("cut"));
    ok(&run_scene(SCENE, "--out", &whole), "uninterrupted run");
    // The same run with a checkpoint at every frame, killed (SIGKILL) as
    // soon as the checkpoint of frame 3 of 8 is there.
    let child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .current_dir(repo())
        .args(["run", SCENE, "-q", "--checkpoint-every", "0", "--out"])
        .arg(&cut)
        .spawn()
        .unwrap();
    kill_when(child, &cut, |c| c["frame"].as_u64().is_some_and(|f| f >= 3));
    let frame = checkpoint(&cut).unwrap()["frame"].as_u64().unwrap();
    assert!(frame < 8, "killed after the last frame ({frame})");
    assert!(
        !cut.join("final_state.json").exists(),
        "the run had finished"
    );
    assert!(cut.join("checkpoint.prev.json").is_file());
    ok(&run_scene(SCENE, "--resume", &cut), "resumed run");
    for f in ["final_state.json", "energy.csv"] {
        assert!(
            read(&whole.join(f)) == read(&cut.join(f)),
            "{f} differs between the uninterrupted and the resumed run"
        );
    }
    for k in 0..=8 {
        let f = format!("frames/frame_{k:06}.obj");
        assert!(read(&whole.join(&f)) == read(&cut.join(&f)), "{f} differs");
    }
    let summary = |d: &Path| -> serde_json::Value {
        serde_json::from_slice(&read(&d.join("run_summary.json"))).unwrap()
    };
    let (a, b) = (summary(&whole), summary(&cut));
    for k in [
        "steps",
        "rejected",
        "newton_iterations",
        "cg_iterations",
        "frames",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert_eq!(b["completed"], true);

    // A truncated checkpoint: a clear error naming it and the one kept.
    let cp = cut.join("checkpoint.json");
    let text = read(&cp);
    std::fs::write(&cp, &text[..text.len() / 2]).unwrap();
    let out = run_scene(SCENE, "--resume", &cut);
    let err = refused(&out);
    assert!(
        err.contains("checkpoint.json") && err.contains("truncated or corrupt"),
        "{err}"
    );
    assert!(err.contains("checkpoint.prev.json"), "{err}");
    assert!(cut.join("checkpoint.prev.json").is_file());

    // The previous checkpoint resumes too, to the same end.
    std::fs::rename(cut.join("checkpoint.prev.json"), &cp).unwrap();
    ok(
        &run_scene(SCENE, "--resume", &cut),
        "resumed from the previous checkpoint",
    );
    assert!(read(&whole.join("final_state.json")) == read(&cut.join("final_state.json")));

    // A checkpoint of another scene is refused, naming both.
    let other = "data/scenes/free_fall_patch.json";
    let out = run_scene(other, "--resume", &cut);
    let err = refused(&out);
    assert!(
        err.contains("drape_sphere_small.json") && err.contains("free_fall_patch.json"),
        "{err}"
    );

    // No checkpoint at all.
    let out = run_scene(SCENE, "--resume", &whole);
    let err = refused(&out);
    assert!(err.contains("checkpoint.json"), "{err}");
}

/// A two-level drape of the shipped skirt (80 then 40 mm) killed while
/// sewing, and another killed at the second level, both resumed: each
/// ends bit for bit as the uninterrupted drape (final state and the
/// levels' step counts). A resume with other options is refused.
#[test]
fn a_killed_drape_resumes_bit_for_bit() {
    let tmp = tempfile::tempdir().unwrap();
    let args = [
        "drape",
        "data/patterns/a_line_skirt.json",
        "-q",
        "--spacing",
        "40",
        "--coarse-spacing",
        "60",
        "--sew-duration",
        "0.2",
        "--min-duration",
        "0.05",
        "--duration",
        "0.2",
        "--formats",
        "obj",
    ];
    let run = |extra: &[&std::ffi::OsStr]| {
        let mut a: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_ref()).collect();
        a.extend_from_slice(extra);
        weft(&a)
    };
    let whole = tmp.path().join("whole");
    ok(
        &run(&["--out".as_ref(), whole.as_os_str()]),
        "uninterrupted drape",
    );
    let summary = |d: &Path| -> serde_json::Value {
        serde_json::from_slice(&read(&d.join("summary.json"))).unwrap()
    };
    let a = summary(&whole);
    type Ready = fn(&serde_json::Value) -> bool;
    let cases: [(&str, Ready); 2] = [
        ("sewing", |c| {
            c["sewing"] == true && c["sim"]["t"].as_f64().unwrap() >= 0.1
        }),
        ("level 1", |c| c["level"] == 1),
    ];
    for (what, ready) in cases {
        let dir = tmp.path().join(what.replace(' ', "_"));
        let child = Command::new(env!("CARGO_BIN_EXE_weft"))
            .current_dir(repo())
            .args(args)
            .args(["--checkpoint-every", "0", "--out"])
            .arg(&dir)
            .spawn()
            .unwrap();
        kill_when(child, &dir, ready);
        assert!(
            !dir.join("final_state.json").exists(),
            "{what}: it had finished"
        );
        ok(&run(&["--resume".as_ref(), dir.as_os_str()]), what);
        assert!(
            read(&whole.join("final_state.json")) == read(&dir.join("final_state.json")),
            "{what}: the resumed drape ends elsewhere"
        );
        let b = summary(&dir);
        for (la, lb) in a["levels"]
            .as_array()
            .unwrap()
            .iter()
            .zip(b["levels"].as_array().unwrap())
        {
            for k in [
                "steps",
                "newton_iterations",
                "cg_iterations",
                "is_static",
                "residual",
            ] {
                assert_eq!(la[k], lb[k], "{what}: level {} {k}", la["level"]);
            }
        }
        assert_eq!(
            a["max_seam_gap_after_sewing_m"],
            b["max_seam_gap_after_sewing_m"]
        );
    }
    // Other options: refused, naming them.
    let mut other: Vec<&std::ffi::OsStr> = args.iter().map(|s| s.as_ref()).collect();
    other[12] = "0.3".as_ref(); // --duration
    let dir = tmp.path().join("level_1");
    other.extend_from_slice(&["--resume".as_ref(), dir.as_os_str()]);
    let out = weft(&other);
    let err = refused(&out);
    assert!(
        err.contains("options") && err.contains("checkpoint.json"),
        "{err}"
    );
}
