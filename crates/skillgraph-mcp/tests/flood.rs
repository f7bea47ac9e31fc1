//! A flood from an upstream (SPEC §9.7): 200,000 notifications sent during
//! one call leave the server under 256 MB, each one relayed to the client,
//! and the server answering afterwards.
//!
//! The peak is the process's own (`VmHWM`), so this test runs alone in a
//! binary of its own, without the test harness (`harness = false`), and the
//! flooding upstream is this same binary started with [`UPSTREAM`]: a
//! process of its own, whose memory is not counted.

mod common;

use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;
use std::time::Duration;

use common::{Served, map_folder, one_skill_map};
use serde_json::{Value, json};
use skillgraph_mcp::ServeConfig;

/// The argument that makes this binary the flooding upstream.
const UPSTREAM: &str = "--flooding-upstream";

/// The test's name, as the harness would give it.
const NAME: &str = "a_flood_of_notifications_leaves_serve_under_256_mb_and_answering";

/// How many notifications the upstream sends during the call.
const COUNT: u64 = 200_000;

/// The most memory `serve` may hold at its peak, in kB.
#[cfg(target_os = "linux")]
const PEAK_KB: u64 = 256 * 1024;

/// The flooding upstream: an MCP server over standard input and output,
/// written by hand so that it floods as fast as a pipe takes it. Its one
/// tool, `flood`, sends `count` notifications in one write before it
/// answers: progress under the call's token and log messages, in turn.
fn flooding_upstream() -> ExitCode {
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else {
            break;
        };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (request.get("id"), request["method"].as_str()) else {
            continue;
        };
        let params = &request["params"];
        let answer = match method {
            "initialize" => json!({"result": {
                "protocolVersion": params["protocolVersion"],
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "flood", "version": "0"}
            }}),
            "tools/list" => json!({"result": {"tools": [{
                "name": "flood",
                "description": "Sends `count` notifications, then answers",
                "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}
            }]}}),
            "tools/call" => {
                let token = &params["_meta"]["progressToken"];
                let count = params["arguments"]["count"].as_u64().unwrap_or(0);
                for sent in 0..count {
                    let notification = if sent % 2 == 0 && !token.is_null() {
                        json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": sent}})
                    } else {
                        json!({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "info", "data": format!("line {sent} of the flood")}})
                    };
                    if writeln!(out, "{notification}").is_err() {
                        return ExitCode::FAILURE;
                    }
                }
                json!({"result": {"content": [{"type": "text", "text": "flooded"}]}})
            }
            _ => json!({"error": {"code": -32601, "message": "not here"}}),
        };
        let mut answer = answer;
        answer["jsonrpc"] = json!("2.0");
        answer["id"] = id.clone();
        if writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .is_err()
        {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The peak resident memory of this process so far, in kB.
#[cfg(target_os = "linux")]
fn peak_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux says the peak");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("the peak is in kB")
}

/// The test: `serve` in this process in front of the flooding upstream.
async fn a_flood_of_notifications_leaves_serve_under_256_mb_and_answering() {
    let upstream = std::env::current_exe().expect("this binary's path");
    let map = one_skill_map(
        json!({"flood": {"command": upstream, "args": [UPSTREAM]}}),
        &["flood"],
    );
    let mut config = ServeConfig::new(map_folder("flood", &map));
    // The flood takes as long as it takes; no timing is tested.
    config.upstream_timeout = Duration::from_secs(24 * 3600);
    let mut served = Served::start(config);
    served.initialize().await;
    served
        .send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "flood", "arguments": {"count": COUNT}, "_meta": {"progressToken": "mine"}
            }}),
        )
        .await;
    let (answer, before) = served.answer(&json!(1)).await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "flooded",
        "{answer}"
    );
    served
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .await;
    let (pong, after) = served.answer(&json!(2)).await;
    // Linux says a process's peak; elsewhere the rest is still checked.
    #[cfg(target_os = "linux")]
    {
        let peak = peak_kb();
        assert!(
            peak < PEAK_KB,
            "serve's peak is {} MB after {COUNT} notifications",
            peak / 1024
        );
        println!("serve's peak: {} MB", peak / 1024);
    }
    assert!(pong["result"].is_object(), "serve still answers: {pong}");
    assert_eq!(
        (before + after) as u64,
        COUNT,
        "every notification reaches the client: relayed, not dropped"
    );
    served.close().await;
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|arg| arg == UPSTREAM) {
        return flooding_upstream();
    }
    if args.iter().any(|arg| arg == "--list") {
        println!("{NAME}: test");
        return ExitCode::SUCCESS;
    }
    // A filter that names no part of the test's name leaves it out, as the
    // harness would.
    let filters: Vec<&String> = args.iter().filter(|arg| !arg.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|filter| NAME.contains(filter.as_str())) {
        println!("test result: ok. 0 passed; 0 failed; 1 filtered out");
        return ExitCode::SUCCESS;
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(a_flood_of_notifications_leaves_serve_under_256_mb_and_answering());
    println!("test {NAME} ... ok");
    ExitCode::SUCCESS
}
