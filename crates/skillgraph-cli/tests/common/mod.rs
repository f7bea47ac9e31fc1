//! What the end-to-end test files share: running the `skillgraph` binary,
//! the shipped example, and scratch folders laid out for one test.

// Each test file uses only some of these helpers.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Run the binary with `args`; its whole output.
pub fn skillgraph(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Run the binary with `args` and `input` on its standard input; its whole
/// output.
pub fn skillgraph_with_input(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("a pipe")
        .write_all(input.as_bytes())
        .expect("the input is written");
    child.wait_with_output().expect("the command ends")
}

/// Copy the folder `from` to `to`, with everything in it.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder can be made");
    for entry in std::fs::read_dir(from).expect("the folder reads") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("a file copies");
        }
    }
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
