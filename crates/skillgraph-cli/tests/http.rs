//! `skillgraph serve --http` end to end (SPEC §9.8): the binary on a free
//! loopback port, found by the line it says on standard error, in front of
//! `desk-upstream --http`, another process, which it reaches by `url`; a
//! sessionless call is sent to it as plain HTTP. Serve's HTTP behaviour
//! otherwise (status codes, headers, run handles, principals, expiry) is
//! tested in this process, in the `skillgraph-mcp` crate's own tests.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use common::{data_file, desk, desk_upstream, serve_http};

/// A sessionless (2026-07-28) `tools/call` of `tool` with `arguments` to
/// the server at `addr`, over a plain HTTP/1.1 connection; its result.
fn call(addr: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": tool,
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
    .to_string();
    let mut stream = TcpStream::connect(addr).expect("serve accepts");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    // The one JSON line of the body: a JSON body, an SSE event's data, or
    // the chunk that holds it.
    let (_, body) = raw.split_once("\r\n\r\n").unwrap_or_default();
    let line = body
        .lines()
        .map(|line| line.strip_prefix("data: ").unwrap_or(line))
        .find(|line| line.starts_with('{'))
        .unwrap_or_else(|| panic!("a JSON answer, not {raw:?}"));
    let answer: Value = serde_json::from_str(line).expect("the answer is JSON");
    answer["result"].clone()
}

/// The text blocks of a tool's result.
fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|block| block["text"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn an_upstream_reached_by_url_is_served_like_a_child_process() {
    // desk-upstream over HTTP, on a port of its own.
    let mut upstream = Command::new(desk_upstream())
        .args(["--data", &data_file(), "--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("desk-upstream starts");
    let mut lines = BufReader::new(upstream.stderr.take().expect("a pipe")).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("it says where it listens")
            .expect("reads");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_owned();
        }
    };
    let dir = desk(
        "http-url-upstream",
        json!({"desk": {"url": url, "headers": {"X-Team": "desk"}}}),
        |_| {},
    );
    let served = serve_http(&dir);
    let answer = call(&served.addr, "lookup_order", json!({"order_id": 4412}));
    assert!(
        texts(&answer)[0].contains("\"riskLevel\":\"high\""),
        "{answer}"
    );
    drop(served);
    let _ = upstream.kill();
    let _ = upstream.wait();
}
