//! `skillgraph play --otlp` against a real OTLP receiver (SPEC §11):
//! `interop/otlp_receiver.py`, on the official `opentelemetry-proto`
//! classes, is started on a free loopback port; the refund conversation is
//! played with its spans exported there; and what the receiver decoded is
//! checked: a span per run, turn and iteration with their parentage, the
//! route move's facts, its guard's conditions and the refused read.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::interop::text;

/// The receiver, killed when dropped.
struct Receiver(Child);

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Play the refund conversation with its spans sent to the receiver, and
/// check what the receiver decoded; `folder` holds the spans' file.
pub fn play_exports(root: &Path, python: &str, skillgraph: &str, folder: &Path) -> Result<()> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let spans = folder.join("spans.jsonl");
    let _ = std::fs::remove_file(&spans);
    let mut child = Command::new(python)
        .arg(root.join("interop").join("otlp_receiver.py"))
        .args(["--out", &text(&spans)?])
        .stderr(Stdio::piped())
        .spawn()
        .context("the OTLP receiver could not start")?;
    let stderr = child
        .stderr
        .take()
        .context("the receiver's standard error")?;
    let receiver = Receiver(child);
    let mut lines = BufReader::new(stderr).lines();
    let endpoint = loop {
        let Some(line) = lines.next() else {
            bail!("the OTLP receiver ended before it listened");
        };
        let line = line?;
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_owned();
        }
    };
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            println!("{line}");
        }
    });
    let example = root.join("examples").join("support-desk");
    let script = std::fs::File::open(example.join("conversations").join("refund.jsonl"))
        .context("the refund conversation cannot be read")?;
    let played = Command::new(skillgraph)
        .args(["play", &text(&example)?, "--otlp", &endpoint])
        .stdin(script)
        .stdout(Stdio::null())
        .status()
        .context("skillgraph play could not start")?;
    if !played.success() {
        bail!("skillgraph play --otlp failed ({played})");
    }
    // The exporter flushed before play ended; the receiver writes as it
    // answers, so the spans are there or on their way.
    let started = Instant::now();
    let decoded = loop {
        let found: Vec<Value> = std::fs::read_to_string(&spans)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if found.len() >= 5 || started.elapsed() > Duration::from_secs(10) {
            break found;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(receiver);
    check(&decoded)?;
    println!(
        "ok  play --otlp: the receiver decoded {} spans: the run, its turn and 3 iterations, with the route's guard and the refused read",
        decoded.len()
    );
    Ok(())
}

/// The spans the receiver decoded, held to the refund conversation.
fn check(spans: &[Value]) -> Result<()> {
    let named =
        |name: &str| -> Vec<&Value> { spans.iter().filter(|s| s["name"] == name).collect() };
    let (runs, turns, iterations) = (
        named("skillgraph run"),
        named("skillgraph turn"),
        named("skillgraph iteration"),
    );
    if runs.len() != 1 || turns.len() != 1 || iterations.len() != 3 {
        bail!(
            "expected 1 run, 1 turn and 3 iteration spans, got {} spans: {spans:?}",
            spans.len()
        );
    }
    let (run, turn) = (runs[0], turns[0]);
    if turn["parent_span_id"] != run["span_id"]
        || iterations
            .iter()
            .any(|it| it["parent_span_id"] != turn["span_id"] || it["trace_id"] != run["trace_id"])
    {
        bail!("the spans' parentage is not run > turn > iterations: {spans:?}");
    }
    let at = |n: i64| {
        iterations
            .iter()
            .find(|it| it["attributes"]["skillgraph.iteration"] == n)
            .copied()
    };
    let moved = at(2).context("no span for iteration 2")?;
    let attributes = &moved["attributes"];
    if attributes["skillgraph.move.by"] != "route"
        || attributes["skillgraph.cursor.before"] != "triage"
        || attributes["skillgraph.cursor.after"] != "refunds"
        || attributes["skillgraph.route.label"] != "risky refund"
    {
        bail!("iteration 2 lacks the route move's facts: {moved}");
    }
    let guard = &moved["events"][0];
    if guard["name"] != "skillgraph.guard"
        || guard["attributes"]["skillgraph.guard.condition.actuals"]
            != serde_json::json!(["high", "240"])
        || guard["attributes"]["skillgraph.guard.condition.passed"]
            != serde_json::json!([true, true])
    {
        bail!("iteration 2 lacks its guard's evidence: {moved}");
    }
    let last = at(3).context("no span for iteration 3")?;
    let refused = last["events"].as_array().and_then(|events| {
        events
            .iter()
            .find(|e| e["name"] == "skillgraph.read.refused")
    });
    if refused.is_none_or(|e| e["attributes"]["skillgraph.refused.target"] != "shipping") {
        bail!("iteration 3 lacks the refused read of shipping: {last}");
    }
    if run["service"] != "skillgraph" {
        bail!("the spans' service is not skillgraph: {run}");
    }
    Ok(())
}
