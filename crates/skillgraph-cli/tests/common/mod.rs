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

/// The `desk-upstream` binary, built beside `skillgraph` by `cargo test
/// --workspace` (or by `cargo build -p desk-upstream`).
pub fn desk_upstream() -> PathBuf {
    let path = Path::new(env!("CARGO_BIN_EXE_skillgraph")).with_file_name("desk-upstream");
    if !path.exists() {
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "-q", "-p", "desk-upstream"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p desk-upstream failed");
    }
    path
}

/// The desk's canned data.
pub fn data_file() -> String {
    example().join("upstream/data.json").display().to_string()
}

/// The support desk in a scratch folder, its `mcpServers` replaced by
/// `servers`, and its `skills` settings changed by `edit`.
pub fn desk(
    name: &str,
    servers: serde_json::Value,
    edit: impl FnOnce(&mut serde_json::Value),
) -> PathBuf {
    let dir = scratch("serve", name);
    let text = std::fs::read_to_string(example().join("skillmap.json")).expect("the example's map");
    let mut map: serde_json::Value =
        serde_json::from_str(&text).expect("the example's map is JSON");
    map["mcpServers"] = servers;
    edit(&mut map);
    std::fs::write(dir.join("skillmap.json"), map.to_string()).expect("the map is written");
    copy_dir(&example().join("skills"), &dir.join("skills"));
    dir
}

/// The one upstream server the shipped desk uses, run from the binary.
pub fn one_upstream() -> serde_json::Value {
    serde_json::json!({"desk": {"command": desk_upstream(), "args": ["--data", data_file()]}})
}

/// `skillgraph serve DIR --http 127.0.0.1:0`, once it listens;
/// killed when dropped.
pub struct Served {
    child: std::process::Child,
    /// Its address, `HOST:PORT`.
    pub addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serve `dir` over HTTP on a free loopback port.
pub fn serve_http(dir: &Path) -> Served {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .arg("serve")
        .arg(dir)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let mut lines = std::io::BufReader::new(child.stderr.take().expect("a pipe")).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("serve says where it listens before it ends")
            .expect("standard error reads");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_owned();
        }
    };
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    // Drained, so that the server never blocks on it.
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
    Served { child, addr }
}
