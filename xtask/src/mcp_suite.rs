//! The official MCP conformance suite's server scenarios
//! (`@modelcontextprotocol/conformance`, run on the Node.js it needs, both
//! under `target/interop/npm`) against `interop/conformance_upstream.py`
//! alone, then against `skillgraph serve --http` in front of it (the
//! upstream over stdio, every tool carried by the entry skill), twice each:
//! the suite's active scenarios, then the scenarios the 2026-07-28 revision
//! requires (`--requirements 2026-07-28`, run at that revision's wire).
//! Through `serve` every scenario of the one and every scored scenario of
//! the other must pass outright (SPEC §9.5, §9.7); the upstream alone is run
//! for comparison, and the scenarios the suite does not score (extensions,
//! pending ones) are named, not required. The suite's command takes a URL
//! only, so `serve` over stdio is not run by it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::json;

/// Each scenario's verdict: whether it passed (no check failed).
type Verdicts = BTreeMap<String, bool>;

/// The suite's runs: what each is, and its arguments beside `--url`.
const RUNS: [(&str, &[&str]); 2] = [
    ("the active scenarios", &[]),
    (
        "the 2026-07-28 requirements",
        &["--requirements", "2026-07-28"],
    ),
];

/// What one run of the suite said.
struct Outcome {
    /// Each scenario's verdict.
    verdicts: Verdicts,
    /// The scenarios run but not scored (extensions, pending ones).
    unscored: BTreeSet<String>,
}

impl Outcome {
    /// The scored scenarios that passed, and how many were scored.
    fn passed(&self) -> (usize, usize) {
        let scored = self.scored();
        (
            scored.iter().filter(|(_, passed)| *passed).count(),
            scored.len(),
        )
    }

    /// The scored scenarios' verdicts.
    fn scored(&self) -> Vec<(&String, bool)> {
        self.verdicts
            .iter()
            .filter(|(name, _)| !self.unscored.contains(*name))
            .map(|(name, passed)| (name, *passed))
            .collect()
    }
}

/// Run the suite against the upstream alone and through `serve`; fail when
/// a scored scenario fails through `serve`.
pub fn against_serve(
    root: &Path,
    bin: &Path,
    python: &str,
    skillgraph: &str,
    folder: &Path,
) -> Result<()> {
    let upstream = crate::interop::text(&root.join("interop").join("conformance_upstream.py"))?;
    let (alone, url) = listening(Command::new(python).args([&upstream, "--http", "127.0.0.1:0"]))?;
    let by_itself = runs(root, bin, &url);
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
    let through = runs(root, bin, &url);
    stop(serve);
    let through = through?;

    let mut failed = Vec::new();
    for (((what, _), alone), served) in RUNS.iter().zip(&by_itself).zip(&through) {
        let (alone_passed, alone_scored) = alone.passed();
        let (passed, scored) = served.passed();
        println!(
            "xtask: conformance, {what}: through serve {passed} of {scored} scored scenarios pass (the upstream alone: {alone_passed} of {alone_scored})"
        );
        if !served.unscored.is_empty() {
            println!(
                "xtask: conformance, {what}: not scored by the suite: {}",
                served
                    .unscored
                    .iter()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        failed.extend(
            served
                .scored()
                .into_iter()
                .filter(|(_, passed)| !passed)
                .map(|(name, _)| format!("{name} ({what})")),
        );
    }
    if !failed.is_empty() {
        bail!(
            "serve fails conformance scenarios: {failed:?}; run `conformance server --url URL --scenario NAME --verbose` against `serve --http` to see why"
        );
    }
    Ok(())
}

/// Each of [`RUNS`] against `url`, in order.
fn runs(root: &Path, bin: &Path, url: &str) -> Result<Vec<Outcome>> {
    RUNS.iter()
        .map(|(_, args)| suite(root, bin, url, args))
        .collect()
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

/// `conformance server --url URL ARGS` on the suite's own Node.js; each
/// scenario's verdict, and those not scored, from its summary.
fn suite(root: &Path, bin: &Path, url: &str, args: &[&str]) -> Result<Outcome> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(&path));
    println!("$ conformance server --url {url} {}", args.join(" "));
    let output = Command::new(bin.join("conformance"))
        .args(["server", "--url", url])
        .args(args)
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
    let unscored = unscored(&text);
    for (name, passed) in &verdicts {
        let note = if unscored.contains(name) {
            " (not scored)"
        } else {
            ""
        };
        println!("{} {name}{note}", if *passed { "ok  " } else { "FAIL" });
    }
    Ok(Outcome { verdicts, unscored })
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

/// The scenarios of the summary's `Not scored for …` block (lines
/// `✗ NAME (extension)`), which the suite runs and reports but does not
/// count.
fn unscored(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("Not scored for") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        let Some(rest) = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ ")) else {
            // The block ends at the first line that names no scenario.
            inside = false;
            continue;
        };
        if let Some((name, _kind)) = rest.split_once(" (") {
            names.insert(name.to_owned());
        }
    }
    names
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

    #[test]
    fn the_scenarios_not_scored_are_told_apart() {
        let text = "=== SUMMARY ===\n✓ caching: 8 passed, 0 failed\n✗ tasks-lifecycle: 1 passed, 8 failed\nTotal: 9 passed, 8 failed\nNot scored for 2026-07-28: 2 scenario(s) run, 1 failing. These do not affect conformance.\n  ✗ tasks-lifecycle (extension)\n  ✓ http-header-validation (pending)\n";
        let outcome = Outcome {
            verdicts: summary(text),
            unscored: unscored(text),
        };
        assert_eq!(
            outcome.unscored,
            BTreeSet::from([
                "tasks-lifecycle".to_owned(),
                "http-header-validation".to_owned()
            ])
        );
        assert_eq!(outcome.passed(), (1, 1));
    }
}
