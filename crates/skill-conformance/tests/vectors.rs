//! Runs the vendored public vectors: every case of every suite must pass.

use std::path::PathBuf;

#[test]
fn every_vendored_vector_passes() {
    let vectors = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let report = skill_conformance::run_paths(&[vectors]);
    assert!(report.passed > 0, "no vector was run");
    assert!(report.is_success(), "\n{report}");
}
