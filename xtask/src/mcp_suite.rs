//! The official MCP conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance`, run on the Node.js it needs, both
//! under `target/interop/npm`) against `interop/conformance_upstream.py`
//! alone, then against `skillgraph serve --http` in front of it (the
//! upstream over stdio, every tool carried by the entry skill). `serve` must
//! fail no scenario the upstream passes alone (SPEC §9.5: faithful for
//! everything it does not govern).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::json;

/// Each scenario's verdict: whether it passed (no check failed).
type Verdicts = BTreeMap<String, bool>;

/// Run the suite against the upstream alone and through `serve`; fail when
/// `serve` fails a scenario the upstream passes.
pub fn against_serve(
    root: &Path,
    bin: &Path,
    python: &str,
    skillgraph: &str,
    folder: &Path,
) -> Result<()> {
    let upstream = crate::interop::text(&root.join("interop").join("conformance_upstream.py"))?;
    let (alone, url) = listening(Command::new(python).args([&upstream, "--http", "127.0.0.1:0"]))?;
    let by_itself = suite(root, bin, &url);
    stop(alone);
    let by_itself = by_itself?;

    if folder.exists() {
        std::fs::remove_dir_all(folder)
            .with_context(|| format!("cannot clear {}", folder.display()))?;
    }
    let skill = folder.join("skills").join("conformance");
    std::fs::create_dir_all(&skill)?;
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: conformance\ndescription: Every feature the conformance suite calls. Use to run the suite.\nallowed-tools: mcp__conformance__*\n---\nUse the suite's tools.\n",
    )?;
    let map = json!({
        "mcpServers": {"conformance": {"command": python, "args": [upstream]}},
        "entries": ["conformance"],
    });
    std::fs::write(
        folder.join("skillmap.json"),
        serde_json::to_string_pretty(&map)?,
    )?;
    let (serve, url) = listening(Command::new(skillgraph).args([
        "serve",
        &crate::interop::text(folder)?,
        "--http",
        "127.0.0.1:0",
    ]))?;
    let through = suite(root, bin, &url);
    stop(serve);
    let through = through?;

    let passed = |verdicts: &Verdicts| verdicts.values().filter(|passed| **passed).count();
    println!(
        "xtask: conformance scenarios: the upstream alone passes {} of {}, through serve {} of {}",
        passed(&by_itself),
        by_itself.len(),
        passed(&through),
        through.len()
    );
    let lost: Vec<&String> = by_itself
        .iter()
        .filter(|(name, passed)| **passed && through.get(*name) != Some(&true))
        .map(|(name, _)| name)
        .collect();
    if !lost.is_empty() {
        bail!(
            "serve fails conformance scenarios its upstream passes alone: {lost:?}; run `conformance server --url URL --scenario NAME --verbose` against `serve --http` to see why"
        );
    }
    Ok(())
}

/// Two upstreams offering one prompt name and one resource URI (the
/// conformance upstream twice) are refused at start-up, naming both (SPEC
/// §9.5).
pub fn clashes_refused(root: &Path, python: &str, skillgraph: &str, folder: &Path) -> Result<()> {
    let upstream = crate::interop::text(&root.join("interop").join("conformance_upstream.py"))?;
    if folder.exists() {
        std::fs::remove_dir_all(folder)
            .with_context(|| format!("cannot clear {}", folder.display()))?;
    }
    let skill = folder.join("skills").join("suite");
    std::fs::create_dir_all(&skill)?;
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: suite\ndescription: Both copies of the suite's server.\n---\nNothing to do.\n",
    )?;
    let server = json!({"command": python, "args": [upstream]});
    let map = json!({
        "entries": ["suite"],
        "mcpServers": {"first": server, "second": server},
    });
    std::fs::write(
        folder.join("skillmap.json"),
        serde_json::to_string_pretty(&map)?,
    )?;
    println!(
        "$ {skillgraph} serve {} (two upstreams offering the same prompts and resources)",
        folder.display()
    );
    let output = Command::new(skillgraph)
        .args(["serve", &crate::interop::text(folder)?])
        .stdin(Stdio::null())
        .output()
        .context("skillgraph serve could not start")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let named = |what: &str| {
        stderr.lines().any(|line| {
            line.contains(&format!("{what} \"")) && line.contains("\"first\" and \"second\"")
        })
    };
    if output.status.code() != Some(2) || !named("prompt") || !named("resource") {
        bail!(
            "serve should refuse two upstreams offering one prompt and one resource, naming both (exit 2); it exited {:?}: {}",
            output.status.code(),
            stderr.trim()
        );
    }
    println!(
        "ok  two upstreams offering one prompt name and one resource URI are refused, naming both"
    );
    Ok(())
}

/// `conformance server --url URL` on the suite's own Node.js; each
/// scenario's verdict from its summary.
fn suite(root: &Path, bin: &Path, url: &str) -> Result<Verdicts> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    println!("$ conformance server --url {url}");
    let output = Command::new(bin.join("conformance"))
        .args(["server", "--url", url])
        .env("PATH", std::env::join_paths(paths)?)
        .current_dir(root.join("target"))
        .output()
        .context("the conformance suite could not start; delete target/interop/npm and retry")?;
    let text = String::from_utf8_lossy(&output.stdout);
    let verdicts = summary(&text);
    if verdicts.is_empty() {
        bail!(
            "the conformance suite printed no summary: {}{}",
            text.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    for (name, passed) in &verdicts {
        println!("{} {name}", if *passed { "ok  " } else { "FAIL" });
    }
    Ok(verdicts)
}

/// The verdicts of the summary lines `✓ NAME: N passed, M failed` (and `✗`).
fn summary(text: &str) -> Verdicts {
    let mut verdicts = Verdicts::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ ")) else {
            continue;
        };
        let Some((name, counts)) = rest.split_once(": ") else {
            continue;
        };
        let failed = counts
            .split(", ")
            .find_map(|part| part.strip_suffix(" failed"))
            .and_then(|count| count.trim().parse::<u32>().ok());
        if let Some(failed) = failed {
            verdicts.insert(name.to_owned(), failed == 0 && line.starts_with('✓'));
        }
    }
    verdicts
}

/// Start a server that says `listening on URL` on standard error; it and
/// its URL. Its standard error goes on being copied to ours.
fn listening(command: &mut Command) -> Result<(Child, String)> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("a server for the conformance suite could not start")?;
    let stderr = child.stderr.take().context("no standard error")?;
    let mut lines = BufReader::new(stderr).lines();
    while let Some(line) = lines.next() {
        let line = line?;
        if let Some(url) = line.split("listening on ").nth(1) {
            let url = url.trim().to_owned();
            std::thread::spawn(move || {
                for line in lines.map_while(Result::ok) {
                    eprintln!("{line}");
                }
            });
            return Ok((child, url));
        }
        eprintln!("{line}");
    }
    let status = child.wait()?;
    bail!("a server for the conformance suite ended before it listened ({status})")
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_gives_each_scenarios_verdict() {
        let verdicts = summary(
            "=== SUMMARY ===\n✓ ping: 1 passed, 0 failed\n✗ tools-call-with-logging: 0 passed, 1 failed\n✗ dns-rebinding-protection: 1 passed, 1 failed\nTotal: 2 passed, 2 failed\n",
        );
        assert_eq!(verdicts.len(), 3);
        assert!(verdicts["ping"]);
        assert!(!verdicts["tools-call-with-logging"]);
        assert!(!verdicts["dns-rebinding-protection"]);
    }
}
