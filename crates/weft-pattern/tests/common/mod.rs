//! Helpers shared by the weft-pattern tests.

use std::path::PathBuf;

/// `../shared/data` beside the workspace, or `None` (with a visible SKIPPED
/// message) when the shared third-party data is absent.
pub fn shared_data() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    if d.join("patterns").is_dir() {
        Some(d)
    } else {
        eprintln!(
            "SKIPPED: {} not found (shared pattern data absent)",
            d.display()
        );
        None
    }
}
