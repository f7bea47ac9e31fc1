//! What the benchmark binaries that serve share: the binaries beside
//! this one, a desk map in front of given upstreams, a server's address
//! read from its standard error, and percentiles.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A failure of a benchmark binary.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// Start `command` and wait for the `listening on URL` line a server says
/// on standard error: the child, and the URL.
pub fn listening(command: &mut std::process::Command) -> Result<(Child, String), Failure> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().ok_or("no standard error")?;
    let mut lines = BufReader::new(stderr).lines();
    loop {
        let Some(line) = lines.next() else {
            return Err("the server ended before it listened".into());
        };
        if let Some(url) = line?.split("listening on ").nth(1) {
            let url = url.trim().to_owned();
            std::thread::spawn(move || for _ in lines {});
            return Ok((child, url));
        }
    }
}

/// The binary `name` beside `here`, built in the same profile.
pub fn sibling(here: &Path, name: &str) -> Result<PathBuf, String> {
    let path = here.with_file_name(name);
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: build it first with `cargo build --release -p skillgraph-cli -p desk-upstream -p skill-benches`",
            path.display()
        ))
    }
}

/// The support desk in a scratch folder named `name`, its `mcpServers`
/// replaced by `servers`.
pub fn served_desk(desk: &Path, name: &str, servers: Value) -> Result<PathBuf, Failure> {
    let dir =
        std::env::temp_dir().join(format!("skillgraph-gateway-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut map: Value =
        serde_json::from_str(&std::fs::read_to_string(desk.join("skillmap.json"))?)?;
    map["mcpServers"] = servers;
    std::fs::write(dir.join("skillmap.json"), map.to_string())?;
    let skills = dir.join("skills");
    for entry in std::fs::read_dir(desk.join("skills"))? {
        let entry = entry?;
        std::fs::create_dir_all(skills.join(entry.file_name()))?;
        std::fs::copy(
            entry.path().join("SKILL.md"),
            skills.join(entry.file_name()).join("SKILL.md"),
        )?;
    }
    Ok(dir)
}

/// The `p`th percentile of `times`.
pub fn percentile(times: &[Duration], p: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    sorted
        .get((sorted.len() * p / 100).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

/// `duration` in microseconds.
pub fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
