//! Plain HTTP requests to `serve --http`, written by hand on a connection
//! of their own, so that every status code, header and body is seen as a
//! client sees it; and sessionless (2026-07-28) requests made with them.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

/// An HTTP answer: its status, its head and its body.
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The status line and headers.
    pub head: String,
    /// The body, put back together when chunked.
    pub body: String,
}

impl Answer {
    /// The JSON-RPC message of the body, sent as JSON or as one SSE event.
    pub fn json(&self) -> Value {
        let text = self
            .body
            .lines()
            .rev()
            .find_map(|line| line.strip_prefix("data: "))
            .unwrap_or(&self.body);
        serde_json::from_str(text).unwrap_or_else(|_| panic!("a JSON body, not {:?}", self.body))
    }
}

/// POST `body` to `path` with `headers` beside the content and accept
/// types, on a connection of its own.
pub fn post_to(addr: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("the server accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a timeout");
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    let mut given: Vec<(&str, &str)> = headers.to_vec();
    for (name, value) in [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ] {
        if !given.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            given.push((name, value));
        }
    }
    for (name, value) in given {
        if name.eq_ignore_ascii_case("host") {
            request = request.replacen(&format!("Host: {addr}"), &format!("Host: {value}"), 1);
        } else {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .expect("the request is sent");
    // A refused body may be cut short by the server: what was sent is enough.
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP status line, not {head:?}"));
    Answer {
        status,
        head: head.to_owned(),
        body: dechunk(head, body),
    }
}

/// A chunked body put back together.
fn dechunk(head: &str, body: &str) -> String {
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return body.to_owned();
    }
    let mut whole = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || after.len() < size {
            break;
        }
        whole.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    whole
}

/// POST the JSON `body` to `/mcp` with `headers`.
pub fn post(addr: &str, headers: &[(&str, &str)], body: &Value) -> Answer {
    post_to(addr, "/mcp", headers, body.to_string().as_bytes())
}

/// A sessionless (2026-07-28) request: its `_meta` and its headers.
pub fn sessionless(
    addr: &str,
    method: &str,
    name: Option<&str>,
    params: Value,
    extra: &[(&str, &str)],
) -> Answer {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name", name));
    }
    headers.extend_from_slice(extra);
    post(addr, &headers, &body)
}

/// A sessionless `tools/call`; the result.
pub fn call(addr: &str, tool: &str, arguments: Value, extra: &[(&str, &str)]) -> Value {
    let answer = sessionless(
        addr,
        "tools/call",
        Some(tool),
        json!({"name": tool, "arguments": arguments}),
        extra,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    answer.json()["result"].clone()
}

/// The text blocks of a result.
pub fn texts(result: &Value) -> Vec<String> {
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

/// Open a handshake session at `addr`, sending `headers`; its id.
pub fn open_session(addr: &str, headers: &[(&str, &str)]) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}
    }});
    let opened = post(addr, headers, &initialize);
    assert_eq!(opened.status, 200, "{}", opened.body);
    opened
        .head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id")
}

/// The headers of a request in the handshake session `session`.
pub fn in_session(session: &str) -> [(&str, &str); 2] {
    [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-06-18"),
    ]
}

/// Open a handshake session at `addr` and end its handshake with
/// `notifications/initialized`, after which it sleeps; its id.
pub fn shake_hands(addr: &str) -> String {
    let session = open_session(addr, &[]);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = post(addr, &in_session(&session), &initialized);
    assert_eq!(answer.status, 202, "{}", answer.body);
    session
}

/// The handle a run's first answer gives (`_meta["skillgraph/run"]`).
pub fn handle_of(result: &Value) -> String {
    result["_meta"]["skillgraph/run"]
        .as_str()
        .unwrap_or_else(|| panic!("a handle in {result}"))
        .to_owned()
}
