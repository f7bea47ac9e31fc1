//! `gateway`: what `skillgraph serve` adds to a tool call. One rmcp client
//! makes 2,000 calls of a trivial upstream tool (`lookup_order` for an order
//! that routes nowhere) straight to `desk-upstream`, then 2,000 through
//! `skillgraph serve` in front of it, in one run, and prints p50 and p99 each
//! way. It also times the session's own work per call (observe, resolve,
//! record) in-process, as a share of what `serve` adds.
//!
//! Build first, in release: `cargo build --release -p skillgraph-cli -p
//! desk-upstream -p skill-benches`, then `target/release/gateway [CALLS]`.
//! The binaries are looked up beside this one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use skill_core::ToolResult;
use skill_session::{Graph, Posture, Session};

/// Calls made before timing, each way.
const WARM_UP: usize = 200;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let calls: usize = match std::env::args().nth(1) {
        Some(text) => text
            .parse()
            .map_err(|_| format!("CALLS is a number of calls, not {text:?}"))?,
        None => 2_000,
    };
    let here = std::env::current_exe()?;
    let serve_bin = sibling(&here, "skillgraph")?;
    let upstream_bin = sibling(&here, "desk-upstream")?;
    let desk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-desk");
    let data = desk.join("upstream/data.json");
    let map_dir = served_desk(&desk, &upstream_bin, &data)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (direct, through) = runtime.block_on(async {
        let mut upstream = tokio::process::Command::new(&upstream_bin);
        upstream.arg("--data").arg(&data);
        let direct = time_calls(upstream, calls).await?;
        let mut serve = tokio::process::Command::new(&serve_bin);
        serve.arg("serve").arg(&map_dir);
        let through = time_calls(serve, calls).await?;
        Ok::<_, Box<dyn std::error::Error>>((direct, through))
    })?;
    let session = session_work(&map_dir, calls)?;

    let (d50, d99) = (percentile(&direct, 50), percentile(&direct, 99));
    let (t50, t99) = (percentile(&through, 50), percentile(&through, 99));
    let added = t50.saturating_sub(d50);
    println!("gateway: {calls} calls of lookup_order each way (µs)");
    println!(
        "direct   p50 {:>8.1}  p99 {:>8.1}",
        micros(d50),
        micros(d99)
    );
    println!(
        "through  p50 {:>8.1}  p99 {:>8.1}",
        micros(t50),
        micros(t99)
    );
    println!(
        "p50 through / direct = {:.2} (goal ≤ 2.2); p99 ratio {:.2}",
        t50.as_secs_f64() / d50.as_secs_f64(),
        t99.as_secs_f64() / d99.as_secs_f64()
    );
    println!(
        "session work per call (observe, resolve, record): p50 {:.2} µs = {:.2}% of the {:.1} µs serve adds at p50 (goal < 5%)",
        micros(percentile(&session, 50)),
        100.0 * percentile(&session, 50).as_secs_f64() / added.as_secs_f64().max(f64::MIN_POSITIVE),
        micros(added)
    );
    Ok(())
}

fn sibling(here: &Path, name: &str) -> Result<PathBuf, String> {
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

/// The support desk in a scratch folder, its `mcpServers` running the
/// release `desk-upstream` directly (not through cargo).
fn served_desk(
    desk: &Path,
    upstream: &Path,
    data: &Path,
) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("skillgraph-gateway-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut map: Value =
        serde_json::from_str(&std::fs::read_to_string(desk.join("skillmap.json"))?)?;
    map["mcpServers"] = json!({"desk": {"command": upstream, "args": ["--data", data]}});
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

fn lookup() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("lookup_order");
    params.arguments = json!({"order_id": 4413}).as_object().cloned();
    params
}

/// Each call's latency over one connection to `command`, after a warm-up.
async fn time_calls(
    command: tokio::process::Command,
    calls: usize,
) -> Result<Vec<Duration>, Box<dyn std::error::Error>> {
    let client: RunningService<RoleClient, ()> = ().serve(TokioChildProcess::new(command)?).await?;
    for _ in 0..WARM_UP {
        client.call_tool(lookup()).await?;
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let start = Instant::now();
        let answer = client.call_tool(lookup()).await?;
        times.push(start.elapsed());
        std::hint::black_box(answer);
    }
    client.cancel().await?;
    Ok(times)
}

/// What `serve` does per call beyond MCP: observe the answer, end the
/// iteration (route resolution) and write the record's lines.
fn session_work(map_dir: &Path, calls: usize) -> Result<Vec<Duration>, Box<dyn std::error::Error>> {
    let loaded = skillgraph::load(map_dir)?;
    let graph = Arc::new(Graph::new(loaded.map)?);
    let mut session = Session::new(graph, Posture::Assist, Vec::new());
    session.begin_turn("", None);
    let answer = r#"{"status":"success","orderId":4413,"riskLevel":"low","amount":30}"#;
    let mut record = String::new();
    let mut times = Vec::with_capacity(calls);
    for _ in 0..WARM_UP + calls {
        let start = Instant::now();
        session.observe(ToolResult {
            tool_name: "lookup_order".into(),
            result: answer.into(),
            status: Some("success".into()),
        });
        session.end_iteration();
        for event in session.take_events() {
            record.push_str(&event.to_line());
            record.push('\n');
        }
        times.push(start.elapsed());
    }
    std::hint::black_box(&record);
    Ok(times.split_off(WARM_UP))
}

fn percentile(times: &[Duration], p: usize) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort_unstable();
    sorted
        .get((sorted.len() * p / 100).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
