//! What the tests of `serve` share: the server run in this process on a
//! pair of in-memory pipes, spoken to in raw JSON-RPC lines, as a client
//! speaks to `skillgraph serve` over standard input and output; and
//! scratch maps.

// Each test file uses only some of these helpers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::thread::JoinHandle;

use serde_json::{Value, json};
use skillgraph_mcp::{ServeConfig, ServeError, serve_streams};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf, split,
};

/// A folder holding `map` as its `skillmap.json`, unique to this process:
/// `name` names the test.
pub fn map_folder(name: &str, map: &Value) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skillgraph-mcp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder can be made");
    std::fs::write(dir.join("skillmap.json"), map.to_string()).expect("the map is written");
    dir
}

/// A map of one skill, `desk`, carrying `tools`, in front of `servers`.
pub fn one_skill_map(servers: Value, tools: &[&str]) -> Value {
    let tools: Vec<Value> = tools.iter().map(|name| json!({"name": name})).collect();
    json!({
        "mcpServers": servers,
        "entries": ["desk"],
        "skills": {"desk": {"tools": tools}}
    })
}

/// `serve` in this process, and the client's ends of its pipes.
pub struct Served {
    write: WriteHalf<DuplexStream>,
    read: BufReader<ReadHalf<DuplexStream>>,
    /// The thread serve runs on, until it is waited for.
    server: Option<JoinHandle<Result<(), ServeError>>>,
}

impl Served {
    /// Serve `config` on a thread of its own.
    pub fn start(config: ServeConfig) -> Self {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (input, output) = split(server);
        let server = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(ServeError::Runtime)?;
            runtime.block_on(serve_streams(&config, input, output))
        });
        let (read, write) = split(client);
        Served {
            write,
            read: BufReader::new(read),
            server: Some(server),
        }
    }

    /// Send one line.
    pub async fn send_line(&mut self, line: &str) {
        self.write
            .write_all(line.as_bytes())
            .await
            .expect("serve reads");
        self.write.write_all(b"\n").await.expect("serve reads");
    }

    /// Send `message`.
    pub async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// The next line serve writes, as JSON.
    pub async fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = self.read.read_line(&mut line).await.expect("serve writes");
        if read == 0 {
            let ended = self.server.take().map(JoinHandle::join);
            panic!("serve ended its output: {ended:?}");
        }
        serde_json::from_str(&line).expect("every line serve writes is JSON")
    }

    /// The answer to the request with `id`, and how many notifications
    /// came before it.
    pub async fn answer(&mut self, id: &Value) -> (Value, usize) {
        let mut notifications = 0;
        loop {
            let message = self.next().await;
            if message.get("method").is_some() && message.get("id").is_none() {
                notifications += 1;
                continue;
            }
            if message.get("id") == Some(id) {
                return (message, notifications);
            }
            panic!("an answer to another request: {message}");
        }
    }

    /// Send the request `method` with `params` as `id`; its answer.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.answer(&json!(id)).await.0
    }

    /// The handshake generation's `initialize` and `initialized`.
    pub async fn initialize(&mut self) {
        let answer = self
            .request(
                0,
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}
                }),
            )
            .await;
        assert_eq!(
            answer["result"]["protocolVersion"], "2025-06-18",
            "{answer}"
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Close serve's input and wait for it to end.
    pub async fn close(mut self) {
        self.write.shutdown().await.expect("the pipe closes");
        drop(self.write);
        drop(self.read);
        let served = self.server.take().map(JoinHandle::join);
        assert!(
            matches!(served, Some(Ok(Ok(())))),
            "serve ends well: {served:?}"
        );
    }
}
