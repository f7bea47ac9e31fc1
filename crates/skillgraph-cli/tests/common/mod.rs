//! What the end-to-end test files share: running the `skillgraph` binary,
//! the shipped example, and scratch folders laid out for one test.

// Each test file uses only some of these helpers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run the binary with `args`; its whole output.
pub fn skillgraph(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The shipped support-desk example.
pub fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk")
}

/// An empty scratch folder for one test, unique to this process: `kind`
/// names the test file, `name` the test.
pub fn scratch(kind: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skillgraph-{kind}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder can be made");
    dir
}

/// A scratch folder holding `files` (path, text), as [`scratch`] makes it.
pub fn folder(kind: &str, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = scratch(kind, name);
    for (file, text) in files {
        write(&dir, file, text);
    }
    dir
}

/// Write `text` to `file` under `dir`, making its folders; the file's path.
pub fn write(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    let parent = path.parent().expect("a file has a folder");
    std::fs::create_dir_all(parent).expect("the folder can be made");
    std::fs::write(&path, text).expect("the file can be written");
    path.display().to_string()
}
