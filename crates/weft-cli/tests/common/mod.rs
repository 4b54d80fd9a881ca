//! Helpers shared by the `weft drape` tests.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `weft drape --quiet ARGS --out OUT`, asserts that it succeeds
/// (showing `what` and its stderr otherwise) and returns `OUT/summary.json`.
pub fn drape_ok<S: AsRef<OsStr>>(
    what: &str,
    args: impl IntoIterator<Item = S>,
    out: &Path,
) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["drape", "--quiet"])
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}
