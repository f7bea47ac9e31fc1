//! `skillgraph play --otlp` and `skillgraph serve --otlp` against a real
//! OTLP receiver (SPEC §11): `interop/otlp_receiver.py`, on the official
//! `opentelemetry-proto` classes, is started on a free loopback port, and
//! what it decoded is checked.
//!
//! - `play`: the refund conversation is played; a span per run, turn and
//!   iteration with their parentage, the route move's facts, its guard's
//!   conditions and the refused read.
//! - `serve`: the Python SDK calls `lookup_order` through `serve` in front of
//!   `interop/upstream.py`, its `_meta` carrying a W3C `traceparent`, in
//!   both protocol generations (legacy over stdio, the newest over HTTP).
//!   The server span continues the client's trace and holds the MCP names
//!   and the route's facts and guard; the forwarded call is a client span
//!   under it; and the upstream, which writes down each call's `_meta`, got
//!   that client span's context.

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

/// Start the receiver, writing what it decodes to `spans`; it and the
/// endpoint it listens on.
fn start_receiver(root: &Path, python: &str, spans: &Path) -> Result<(Receiver, String)> {
    let _ = std::fs::remove_file(spans);
    let mut child = Command::new(python)
        .arg(root.join("interop").join("otlp_receiver.py"))
        .args(["--out", &text(spans)?])
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
    Ok((receiver, endpoint))
}

/// The JSON lines of `file` once there are at least `least` of them, or
/// what there is after 10 s.
fn lines_of(file: &Path, least: usize) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let found: Vec<Value> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        if found.len() >= least || started.elapsed() > Duration::from_secs(10) {
            return found;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Play the refund conversation with its spans sent to the receiver, and
/// check what the receiver decoded; `folder` holds the spans' file.
pub fn play_exports(root: &Path, python: &str, skillgraph: &str, folder: &Path) -> Result<()> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let spans = folder.join("spans.jsonl");
    let (receiver, endpoint) = start_receiver(root, python, &spans)?;
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
    let decoded = lines_of(&spans, 5);
    drop(receiver);
    check_play(&decoded)?;
    println!(
        "ok  play --otlp: the receiver decoded {} spans: the run, its turn and 3 iterations, with the route's guard and the refused read",
        decoded.len()
    );
    Ok(())
}

/// The spans the receiver decoded, held to the refund conversation.
fn check_play(spans: &[Value]) -> Result<()> {
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

/// The ways `serve` is called with a trace context: the protocol
/// generation, over HTTP or not, and the client's trace id.
const SERVE_CASES: [(&str, bool, &str); 3] = [
    ("legacy", false, "4bf92f3577b34da6a3ce929d0e0e4701"),
    ("auto", true, "4bf92f3577b34da6a3ce929d0e0e4702"),
    ("legacy", true, "4bf92f3577b34da6a3ce929d0e0e4703"),
];

/// The client's span id in each case's `traceparent`.
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// Call `lookup_order` through `serve --otlp` with a trace context, both
/// ways, and check the spans and what the upstream received; `desk` is a
/// copy of the support desk whose upstream is `interop/upstream.py`.
pub fn serve_exports(
    root: &Path,
    python: &str,
    skillgraph: &str,
    desk: &Path,
    folder: &Path,
) -> Result<()> {
    std::fs::create_dir_all(folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let spans = folder.join("serve-spans.jsonl");
    let metas = folder.join("upstream-meta.jsonl");
    let _ = std::fs::remove_file(&metas);
    let map = desk.join("skillmap.json");
    let declared: Value = serde_json::from_str(
        &std::fs::read_to_string(&map).with_context(|| format!("cannot read {}", map.display()))?,
    )?;
    // The desk's upstream, told to write down each call's `_meta`.
    let mut traced = declared.clone();
    let args = traced["mcpServers"]["desk"]["args"]
        .as_array_mut()
        .context("the desk's upstream has args")?;
    args.push(Value::from("--meta-out"));
    args.push(Value::from(text(&metas)?));
    let traced_desk = folder.join("desk");
    crate::interop::copy_tree(&desk.join("skills"), &traced_desk.join("skills"))?;
    std::fs::write(
        traced_desk.join("skillmap.json"),
        serde_json::to_string_pretty(&traced)?,
    )?;
    let (receiver, endpoint) = start_receiver(root, python, &spans)?;
    let through = text(&root.join("interop").join("through.py"))?;
    for (mode, http, trace) in SERVE_CASES {
        let meta = serde_json::json!({"traceparent": format!("00-{trace}-{CLIENT_SPAN}-01")});
        let mut args = vec![
            through.clone(),
            "--tool".into(),
            "lookup_order".into(),
            "--args".into(),
            r#"{"order_id": 4412}"#.into(),
            "--contains".into(),
            r#""amount":240"#.into(),
            "--meta".into(),
            meta.to_string(),
            "--mode".into(),
            mode.into(),
        ];
        if http {
            args.push("--http".into());
        }
        args.extend([
            "--".into(),
            skillgraph.into(),
            "serve".into(),
            text(&traced_desk)?,
            "--otlp".into(),
            endpoint.clone(),
        ]);
        let status = Command::new(python)
            .args(&args)
            .status()
            .context("interop/through.py could not start")?;
        if !status.success() {
            bail!("the traced call through serve ({mode} mode) failed ({status})");
        }
    }
    // Each case makes at least its handshake's, list's and call's spans.
    let decoded = lines_of(&spans, 9);
    drop(receiver);
    let received = lines_of(&metas, SERVE_CASES.len());
    for (mode, http, trace) in SERVE_CASES {
        let session = mode == "legacy" && http;
        check_serve(&decoded, &received, trace, session)
            .with_context(|| format!("{mode} mode, HTTP {http}"))?;
    }
    println!(
        "ok  serve --otlp: {} spans decoded; in both generations, over stdio and HTTP, the call's server span continues the client's trace with the route's facts and guard (and a session's digest), and the upstream got its client span's context",
        decoded.len()
    );
    Ok(())
}

/// The spans of one traced call through `serve`, and the `_meta` its
/// upstream received, held to SPEC §11; `session`: the call came in an
/// HTTP session, which the span names by a digest.
fn check_serve(spans: &[Value], received: &[Value], trace: &str, session: bool) -> Result<()> {
    let in_trace: Vec<&Value> = spans
        .iter()
        .filter(|span| span["trace_id"] == trace)
        .collect();
    // Kinds as OTLP numbers them: 2 server, 3 client.
    let server = in_trace
        .iter()
        .find(|span| span["kind"] == 2 && span["name"] == "tools/call lookup_order")
        .with_context(|| {
            format!("no server span `tools/call lookup_order` in trace {trace}: {in_trace:?}")
        })?;
    if server["parent_span_id"] != CLIENT_SPAN {
        bail!("the server span does not continue the client's span {CLIENT_SPAN}: {server}");
    }
    let attributes = &server["attributes"];
    for (key, want) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "lookup_order"),
        ("gen_ai.operation.name", "execute_tool"),
        ("skillgraph.move.by", "route"),
        ("skillgraph.cursor.before", "triage"),
        ("skillgraph.cursor.after", "refunds"),
        ("skillgraph.route.label", "risky refund"),
    ] {
        if attributes[key] != want {
            bail!("the server span's {key} is not {want:?}: {server}");
        }
    }
    for key in [
        "mcp.protocol.version",
        "jsonrpc.request.id",
        "skillgraph.run",
    ] {
        if !attributes[key].is_string() {
            bail!("the server span has no {key}: {server}");
        }
    }
    let named = attributes["mcp.session.id"].as_str();
    if session != named.is_some_and(|id| id.starts_with("session#")) {
        bail!(
            "the server span's mcp.session.id is not a session digest as it should be (session {session}): {server}"
        );
    }
    if attributes["skillgraph.run"]
        .as_str()
        .is_some_and(|run| run.starts_with("run_"))
    {
        bail!("the server span names the run by its handle: {server}");
    }
    let guard = server["events"]
        .as_array()
        .and_then(|events| events.iter().find(|e| e["name"] == "skillgraph.guard"))
        .with_context(|| format!("the server span has no guard event: {server}"))?;
    if guard["attributes"]["skillgraph.guard.condition.actuals"]
        != serde_json::json!(["high", "240"])
    {
        bail!("the guard event lacks the conditions' actual values: {guard}");
    }
    let client = in_trace
        .iter()
        .find(|span| span["kind"] == 3 && span["parent_span_id"] == server["span_id"])
        .with_context(|| format!("no client span under the server span: {in_trace:?}"))?;
    if client["name"] != "tools/call lookup_order"
        || client["attributes"]["skillgraph.upstream"] != "desk"
    {
        bail!("the forwarded call's span is not `tools/call lookup_order` to desk: {client}");
    }
    let sent = format!(
        "00-{trace}-{}-01",
        client["span_id"].as_str().unwrap_or_default()
    );
    if !received
        .iter()
        .any(|line| line["meta"]["traceparent"] == sent.as_str())
    {
        bail!("the upstream did not get the client span's context {sent}: {received:?}");
    }
    Ok(())
}
