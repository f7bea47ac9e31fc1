//! The front door's request handling from arbitrary bytes: `serve --http`
//! in this process (`skillgraph_mcp::serve_http_on` on a loopback port, on
//! a thread and a runtime of its own, started once) on the map in
//! `fuzz/maps/serve_line`, with no upstream server. Each input is POSTed as
//! the body of a sessionless request under `application/json`, on a
//! connection of its own. Nothing may panic; every answer is an HTTP
//! answer within 10 s (no hang); a 400 is a JSON-RPC error or a plain
//! sentence, never an echo of more than 256 characters of the body; and
//! serve still answers a `tools/list` afterwards.
#![no_main]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use skillgraph_mcp::{HttpConfig, ServeConfig, serve_http_on};

/// How long serve may take to answer one request.
const PATIENCE: Duration = Duration::from_secs(10);

/// Where the one server listens: started on first use, for every input.
static SERVER: LazyLock<SocketAddr> = LazyLock::new(|| {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap_or_else(|err| panic!("the fuzz target needs a loopback port: {err}"));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|err| panic!("the bound port: {err}"));
    listener
        .set_nonblocking(true)
        .unwrap_or_else(|err| panic!("a non-blocking listener: {err}"));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap_or_else(|err| panic!("the fuzz target needs a tokio runtime: {err}"));
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener)
                .unwrap_or_else(|err| panic!("the listener joins the runtime: {err}"));
            let config =
                ServeConfig::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/serve_line"));
            let mut http = HttpConfig::new(addr);
            // Every input may start a run: the rate is not what is fuzzed.
            http.new_runs_per_minute = u32::MAX;
            http.max_body = 1024 * 1024;
            serve_http_on(&config, &http, listener, std::future::pending())
                .await
                .unwrap_or_else(|err| panic!("serve --http starts: {err}"));
        });
    });
    // Ready when it answers.
    for _ in 0..200 {
        if post(addr, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, "").is_some() {
            return addr;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("serve --http did not start within 10 s")
});

fuzz_target!(|data: &[u8]| {
    let addr = *SERVER;
    let answer = post(addr, data, &headers_for(data))
        .unwrap_or_else(|| panic!("no HTTP answer within {PATIENCE:?}"));
    let status = answer
        .split(|byte| *byte == b' ')
        .nth(1)
        .and_then(|code| std::str::from_utf8(code).ok())
        .and_then(|code| code.parse::<u16>().ok())
        .unwrap_or_else(|| {
            panic!(
                "not an HTTP answer: {:.300}",
                String::from_utf8_lossy(&answer)
            )
        });
    assert!(
        status < 500,
        "serve failed on its own: {:.600}",
        String::from_utf8_lossy(&answer)
    );
    if data.len() > 1024 {
        // The answer never holds the body back at length.
        let longest_echo = data
            .windows(300)
            .step_by(97)
            .any(|window| answer.windows(300).any(|part| part == window));
        assert!(
            !longest_echo,
            "the answer repeats more than 256 bytes of the body"
        );
    }
    let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let after =
        post(addr, list, &headers_for(list)).unwrap_or_else(|| panic!("serve stopped answering"));
    assert!(
        after.starts_with(b"HTTP/1.1 200"),
        "serve answers afterwards: {:.300}",
        String::from_utf8_lossy(&after)
    );
});

/// The `Mcp-Method` and `Mcp-Name` headers a sessionless client sends with
/// `body`, when it names a method (and a tool or other name) that fits in
/// a header; so that inputs get past the header rules to what is behind.
fn headers_for(body: &[u8]) -> String {
    let Ok(message) = serde_json::from_slice::<serde_json::Value>(body) else {
        return String::new();
    };
    let header = |value: &serde_json::Value| {
        value
            .as_str()
            .filter(|text| {
                text.bytes()
                    .all(|byte| byte.is_ascii_graphic() || byte == b' ')
            })
            .map(str::to_owned)
    };
    let mut headers = String::new();
    if let Some(method) = header(&message["method"]) {
        headers.push_str(&format!("Mcp-Method: {method}\r\n"));
    }
    if let Some(name) =
        header(&message["params"]["name"]).or_else(|| header(&message["params"]["uri"]))
    {
        headers.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    headers
}

/// POST `body` to `/mcp` as a sessionless client does, with `headers`
/// besides; the whole answer, or `None` when none came within
/// [`PATIENCE`].
fn post(addr: SocketAddr, body: &[u8], headers: &str) -> Option<Vec<u8>> {
    let mut stream = TcpStream::connect_timeout(&addr, PATIENCE).ok()?;
    stream.set_read_timeout(Some(PATIENCE)).ok()?;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n{headers}Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).ok()?;
    let _ = stream.write_all(body);
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).ok()?;
    (!answer.is_empty()).then_some(answer)
}
