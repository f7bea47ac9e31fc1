//! The server core's request handling from arbitrary bytes: `serve` in this
//! process (`skillgraph_mcp::serve_streams` over an in-memory pipe, as over
//! standard input and output) on a small map with no upstream server
//! (`fuzz/maps/serve_line`). Each input comes after the handshake
//! (`initialize`, `notifications/initialized`) as request lines, newlines
//! and all, followed by a `ping`. Nothing may panic, every line serve
//! writes is JSON, the `ping` is answered within 10 s (no hang), and serve
//! ends well once its input closes.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skillgraph_mcp::{ServeConfig, serve_streams};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::runtime::Runtime;

/// The handshake, as a client of the handshake generation opens.
const HANDSHAKE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// The id of the last request, whose answer ends an input.
const PING_ID: &str = "serve_line-final-ping";

/// How long serve may take to answer the final ping, and to end after its
/// input closes.
const PATIENCE: Duration = Duration::from_secs(10);

/// One runtime for every input.
static RUNTIME: LazyLock<Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|err| panic!("the fuzz target needs a tokio runtime: {err}"))
});

/// The map served: three skills, a start rule and a guarded route, no
/// upstream server.
static CONFIG: LazyLock<ServeConfig> = LazyLock::new(|| {
    ServeConfig::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("maps/serve_line"))
});

fuzz_target!(|data: &[u8]| {
    RUNTIME.block_on(exchange(data));
});

/// Serve one client that sends the handshake, `data`, then the final ping;
/// read every answer up to the ping's, then close and wait for serve to end.
async fn exchange(data: &[u8]) {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (input, output) = tokio::io::split(server);
    let served = tokio::spawn(async { serve_streams(&CONFIG, input, output).await });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = Vec::with_capacity(HANDSHAKE.len() + data.len() + 80);
    lines.extend_from_slice(HANDSHAKE);
    lines.extend_from_slice(data);
    lines.extend_from_slice(
        format!("\n{{\"jsonrpc\":\"2.0\",\"id\":\"{PING_ID}\",\"method\":\"ping\"}}\n").as_bytes(),
    );
    // Written beside the reading, so that neither side waits on a full pipe;
    // a serve that stopped reading fails the write, which the ping's wait
    // below then reports.
    let writer = tokio::spawn(async move {
        let _ = write.write_all(&lines).await;
        write
    });
    let mut read = BufReader::new(read);
    let answered = tokio::time::timeout(PATIENCE, until_ping_answer(&mut read)).await;
    match answered {
        Err(_) => panic!("serve did not answer the final ping within {PATIENCE:?}: a hang"),
        Ok(false) => {
            let ended = tokio::time::timeout(PATIENCE, served).await;
            panic!("serve ended its output before answering the final ping: {ended:?}")
        }
        Ok(true) => {}
    }
    // Close serve's input, read what it still writes, and see it end well.
    if let Ok(mut write) = writer.await {
        let _ = write.shutdown().await;
    }
    let drained = tokio::time::timeout(PATIENCE, async {
        while next_line(&mut read).await.is_some() {}
    })
    .await;
    assert!(
        drained.is_ok(),
        "serve did not end its output within {PATIENCE:?} of its input closing"
    );
    match tokio::time::timeout(PATIENCE, served).await {
        Ok(Ok(Ok(()))) => {}
        ended => panic!("serve did not end well once its input closed: {ended:?}"),
    }
}

/// Read serve's lines until the answer to the final ping (`true`), or the
/// end of its output (`false`).
async fn until_ping_answer<R: tokio::io::AsyncBufRead + Unpin>(read: &mut R) -> bool {
    while let Some(message) = next_line(read).await {
        if message.get("method").is_none() && message.get("id") == Some(&Value::from(PING_ID)) {
            return true;
        }
    }
    false
}

/// The next line serve writes, which must be JSON; `None` at the end of its
/// output.
async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(read: &mut R) -> Option<Value> {
    let mut line = Vec::new();
    let count = read
        .read_until(b'\n', &mut line)
        .await
        .unwrap_or_else(|err| panic!("serve's output cannot be read: {err}"));
    if count == 0 {
        return None;
    }
    match serde_json::from_slice(&line) {
        Ok(message) => Some(message),
        Err(err) => panic!(
            "serve wrote a line that is not JSON ({err}): {:.300}",
            String::from_utf8_lossy(&line)
        ),
    }
}
