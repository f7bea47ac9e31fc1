//! `gateway`: what `skillgraph serve` adds to a tool call (SPEC §9.9).
//!
//! Over stdio: one rmcp client straight to `desk-upstream` and one through
//! `skillgraph serve` in front of it, calls of a trivial upstream tool
//! (`lookup_order` for an order that routes nowhere) interleaved, each
//! pair's order alternating, so that both ways see the same machine at the
//! same moment; p50 and p99 each way. Over HTTP: `desk-upstream --http`, and
//! `serve --http` in front of that very upstream (by `url`), with 1 and
//! then 64 runs (one handshake session each) calling at once, each run
//! interleaving its direct and its proxied calls. Export (SPEC §11): two
//! `serve` processes over stdio in front of the same upstream, one with
//! `--otlp` to a loopback sink that takes OTLP/HTTP, calls interleaved, in
//! two rounds with the processes started in either order, so that the
//! difference at p50 is what export costs a call on the answering path. It also times the
//! session's own work per call (observe, resolve, record) in-process, and
//! counts the bytes an idle served run holds beyond the shared graph (its
//! run and its record's first lines), with this binary's allocator.
//!
//! Build first, in release: `cargo build --release -p skillgraph-cli -p
//! desk-upstream -p skill-benches`, then `target/release/gateway [CALLS]`.
//! The binaries are looked up beside this one.

use std::alloc::System;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::json;
use skill_benches::serving::{Failure, listening, micros, percentile, served_desk, sibling};
use skill_core::ToolResult;
use skill_session::{Graph, Posture, Run, Session, SessionConfig};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Calls made before timing, each way.
const WARM_UP: usize = 200;

/// The runs calling at once in the second HTTP measurement.
const CONCURRENT: usize = 64;

type Client = RunningService<RoleClient, ()>;

fn main() -> Result<(), Failure> {
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
    let stdio_map = served_desk(
        &desk,
        "stdio",
        json!({"desk": {"command": upstream_bin, "args": ["--data", data]}}),
    )?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    println!("gateway: lookup_order, direct and through serve interleaved (µs)");
    let (direct, through) = runtime.block_on(async {
        let mut upstream = tokio::process::Command::new(&upstream_bin);
        upstream.arg("--data").arg(&data);
        let direct: Client = ().serve(TokioChildProcess::new(upstream)?).await?;
        let mut serve = tokio::process::Command::new(&serve_bin);
        serve.arg("serve").arg(&stdio_map);
        let through: Client = ().serve(TokioChildProcess::new(serve)?).await?;
        let times = interleaved(&direct, &through, calls).await?;
        direct.cancel().await?;
        through.cancel().await?;
        Ok::<_, Failure>(times)
    })?;
    let added = report("stdio, 1 run", calls, &direct, &through, Some(0.4));

    // Export off and on, interleaved: the same upstream behind both. A
    // process started second runs a few µs slower here whatever it does
    // (an off/off pair shows it), so there are two rounds of half the
    // calls, the exporting process started second, then first.
    let sink = Sink::start()?;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for exporting_first in [false, true] {
        let (o, e) = runtime.block_on(async {
            let start = |exporting: bool| {
                let mut serve = tokio::process::Command::new(&serve_bin);
                serve.arg("serve").arg(&stdio_map);
                if exporting {
                    serve.args(["--otlp", &sink.url]);
                }
                async move {
                    let client: Client = ().serve(TokioChildProcess::new(serve)?).await?;
                    Ok::<_, Failure>(client)
                }
            };
            let first = start(exporting_first).await?;
            let second = start(!exporting_first).await?;
            let (a, b) = interleaved(&first, &second, calls / 2).await?;
            first.cancel().await?;
            second.cancel().await?;
            Ok::<_, Failure>(if exporting_first { (b, a) } else { (a, b) })
        })?;
        off.extend(o);
        on.extend(e);
    }
    let (off50, on50) = (percentile(&off, 50), percentile(&on, 50));
    println!("export (stdio, --otlp to a loopback sink): {calls} calls each way");
    println!(
        "  off  p50 {:>8.1}  p99 {:>8.1}",
        micros(off50),
        micros(percentile(&off, 99))
    );
    println!(
        "  on   p50 {:>8.1}  p99 {:>8.1}",
        micros(on50),
        micros(percentile(&on, 99))
    );
    println!(
        "  export costs a call {:.1} µs at p50 (goal ≤ 20); on / off = {:.3}; the sink took {} exports, {} bytes",
        micros(on50) - micros(off50),
        on50.as_secs_f64() / off50.as_secs_f64(),
        sink.exports.load(Ordering::Relaxed),
        sink.bytes.load(Ordering::Relaxed)
    );

    // HTTP: one upstream, reached directly and through serve by its url.
    let (mut upstream, upstream_url) =
        listening(std::process::Command::new(&upstream_bin).args([
            "--data".as_ref(),
            data.as_os_str(),
            "--http".as_ref(),
            "127.0.0.1:0".as_ref(),
        ]))?;
    let http_map = served_desk(&desk, "http", json!({"desk": {"url": upstream_url}}))?;
    let (mut serve, serve_url) = listening(
        std::process::Command::new(&serve_bin)
            .arg("serve")
            .arg(&http_map)
            .args(["--http", "127.0.0.1:0"])
            // 65 sessions start within a second: past the default burst of
            // new runs (60), which guards a network, not a benchmark.
            .args(["--new-runs-per-minute", "100000"]),
    )?;
    for runs in [1, CONCURRENT] {
        let per_run = (calls / runs).max(50);
        let (direct, through) =
            runtime.block_on(concurrent(&upstream_url, &serve_url, runs, per_run))?;
        report(
            &format!("HTTP, {runs} run(s) at once"),
            per_run * runs,
            &direct,
            &through,
            None,
        );
    }
    let _ = serve.kill();
    let _ = upstream.kill();

    let session = session_work(&stdio_map, calls)?;
    println!(
        "session work per call (observe, resolve, record): p50 {:.2} µs = {:.2}% of the {:.1} µs serve adds at p50 on stdio (goal < 5%)",
        micros(percentile(&session, 50)),
        100.0 * percentile(&session, 50).as_secs_f64() / added.as_secs_f64().max(f64::MIN_POSITIVE),
        micros(added)
    );
    println!(
        "an idle served run holds {} bytes beyond the shared graph (goal ≤ 4096)",
        idle_run_bytes(&stdio_map)?
    );
    Ok(())
}

/// A loopback OTLP/HTTP receiver that takes every export and answers it
/// with an empty `ExportTraceServiceResponse`, counting what it took.
struct Sink {
    url: String,
    exports: Arc<AtomicUsize>,
    bytes: Arc<AtomicUsize>,
}

impl Sink {
    fn start() -> Result<Self, Failure> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}", listener.local_addr()?);
        let (exports, bytes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (counted, sized) = (Arc::clone(&exports), Arc::clone(&bytes));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (counted, sized) = (Arc::clone(&counted), Arc::clone(&sized));
                std::thread::spawn(move || {
                    let _ = take(stream, &counted, &sized);
                });
            }
        });
        Ok(Sink {
            url,
            exports,
            bytes,
        })
    }
}

/// Take one connection's exports until it closes.
fn take(stream: TcpStream, exports: &AtomicUsize, bytes: &AtomicUsize) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    loop {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        exports.fetch_add(1, Ordering::Relaxed);
        bytes.fetch_add(length, Ordering::Relaxed);
        writer.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n",
        )?;
    }
}

/// Print one way's figures; what serve adds at p50.
fn report(
    label: &str,
    calls: usize,
    direct: &[Duration],
    through: &[Duration],
    goal_ms: Option<f64>,
) -> Duration {
    let (d50, d99) = (percentile(direct, 50), percentile(direct, 99));
    let (t50, t99) = (percentile(through, 50), percentile(through, 99));
    let added = t50.saturating_sub(d50);
    let goal = goal_ms.map_or(String::new(), |ms| format!(" (goal ≤ {ms} ms)"));
    println!("{label}: {calls} calls each way");
    println!(
        "  direct   p50 {:>8.1}  p99 {:>8.1}",
        micros(d50),
        micros(d99)
    );
    println!(
        "  through  p50 {:>8.1}  p99 {:>8.1}",
        micros(t50),
        micros(t99)
    );
    println!(
        "  added at p50: {:.3} ms{goal}; p50 through / direct = {:.2}",
        added.as_secs_f64() * 1e3,
        t50.as_secs_f64() / d50.as_secs_f64()
    );
    added
}

/// `calls` pairs of calls, after a warm-up of each; the pair's order
/// alternates (direct first, then through first), since the second call
/// of a pair is a few µs slower whichever way it goes.
async fn interleaved(
    direct: &Client,
    through: &Client,
    calls: usize,
) -> Result<(Vec<Duration>, Vec<Duration>), Failure> {
    for _ in 0..WARM_UP {
        direct.call_tool(lookup()).await?;
        through.call_tool(lookup()).await?;
    }
    let (mut direct_times, mut through_times) =
        (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for pair in 0..calls {
        if pair % 2 == 0 {
            direct_times.push(timed(direct).await?);
            through_times.push(timed(through).await?);
        } else {
            through_times.push(timed(through).await?);
            direct_times.push(timed(direct).await?);
        }
    }
    Ok((direct_times, through_times))
}

async fn timed(client: &Client) -> Result<Duration, Failure> {
    let start = Instant::now();
    let answer = client.call_tool(lookup()).await?;
    let elapsed = start.elapsed();
    std::hint::black_box(answer);
    Ok(elapsed)
}

/// `runs` runs at once, each a session with the upstream and one with
/// serve, each making `calls` interleaved pairs.
async fn concurrent(
    upstream: &str,
    serve: &str,
    runs: usize,
    calls: usize,
) -> Result<(Vec<Duration>, Vec<Duration>), Failure> {
    let mut tasks = Vec::with_capacity(runs);
    for _ in 0..runs {
        let (upstream, serve) = (upstream.to_owned(), serve.to_owned());
        tasks.push(tokio::spawn(async move {
            let direct: Client = ().serve(StreamableHttpClientTransport::from_uri(upstream)).await?;
            let through: Client = ().serve(StreamableHttpClientTransport::from_uri(serve)).await?;
            let times = interleaved(&direct, &through, calls).await?;
            direct.cancel().await?;
            through.cancel().await?;
            Ok::<_, Failure>(times)
        }));
    }
    let (mut direct, mut through) = (Vec::new(), Vec::new());
    for task in tasks {
        let (d, t) = task.await??;
        direct.extend(d);
        through.extend(t);
    }
    Ok((direct, through))
}

/// The bytes a fresh served run holds beyond the shared graph: its run
/// and the record's events it keeps for `skillgraph://record` (as
/// `skillgraph-mcp`'s record keeps them: the events, not their lines).
fn idle_run_bytes(map_dir: &Path) -> Result<isize, Failure> {
    let loaded = skillgraph::load(map_dir)?;
    let graph = Arc::new(Graph::new(loaded.map)?);
    let region = Region::new(ALLOCATOR);
    let mut run = Box::new(Run::new(Arc::clone(&graph), SessionConfig::default()));
    let mut record = Vec::new();
    record.extend(run.take_events());
    let change = region.change();
    drop((run, record));
    Ok(change.bytes_allocated as isize + change.bytes_reallocated
        - change.bytes_deallocated as isize)
}

fn lookup() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("lookup_order");
    params.arguments = json!({"order_id": 4413}).as_object().cloned();
    params
}

/// What `serve` does per call beyond MCP: observe the answer, end the
/// iteration (route resolution) and write the record's lines.
fn session_work(map_dir: &Path, calls: usize) -> Result<Vec<Duration>, Failure> {
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
