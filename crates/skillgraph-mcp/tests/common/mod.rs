//! What the tests of `serve` share: the server run in this process, over a
//! pair of in-memory pipes as over standard input and output (spoken to in
//! raw JSON-RPC lines, [`Served`], or by rmcp's own client, [`connect`]) or
//! over streamable HTTP on a loopback port ([`HttpServed`]); upstream
//! servers run in this process too ([`upstream`]); scratch maps; and the
//! replay of a record.

// Each test file uses only some of these helpers.
#![allow(dead_code)]

pub mod plain;
pub mod redis;
pub mod upstream;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use skillgraph::skill_session::{Event, Graph, first_difference, read_record, replay};
use skillgraph_mcp::{HttpConfig, ServeConfig, ServeError, serve_http_on, serve_streams};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf, split,
};

/// A folder holding `map` as its `skillmap.json`, unique to this process:
/// `name` names the test.
pub fn map_folder(name: &str, map: &Value) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("skillmap.json"), map.to_string()).expect("the map is written");
    dir
}

/// The SHA-256 of `text`, in hexadecimal, as a tokens file holds a token.
pub fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// An `--auth-tokens` file in a folder named `name`: a line per
/// `(principal, token, roles)` (`roles` may be empty).
pub fn tokens_file(name: &str, lines: &[(&str, &str, &str)]) -> PathBuf {
    let file = scratch(name).join("tokens");
    let text: String = lines
        .iter()
        .map(|(principal, token, roles)| format!("{principal} {} {roles}\n", sha256_hex(token)))
        .collect();
    std::fs::write(&file, text).expect("the tokens file is written");
    file
}

/// Serve `config` over HTTP as `http` says on `listener` (bound, not yet
/// non-blocking), in this process, until standard input closes: what a
/// test's child process runs, after saying `serving at ADDR` on standard
/// output for its parent.
pub fn serve_until_stdin_closes(
    config: &ServeConfig,
    http: &HttpConfig,
    listener: std::net::TcpListener,
) {
    let addr = listener.local_addr().expect("an address");
    listener.set_nonblocking(true).expect("non-blocking");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener).expect("the listener");
        println!("serving at {addr}");
        let shutdown = async {
            let _ = tokio::task::spawn_blocking(|| {
                use std::io::Read;
                let mut sink = Vec::new();
                let _ = std::io::stdin().read_to_end(&mut sink);
            })
            .await;
        };
        serve_http_on(config, http, listener, shutdown)
            .await
            .expect("serve runs");
    });
}

/// The address a child process started with [`serve_until_stdin_closes`]
/// says it serves at, read from its standard output (piped).
pub fn serving_at(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("its standard output is piped");
    let mut lines = std::io::BufReader::new(stdout).lines();
    loop {
        let line = lines
            .next()
            .expect("the child says where it serves")
            .expect("a line");
        // libtest puts the test's name before it on the line.
        if let Some((_, addr)) = line.split_once("serving at ") {
            return addr.trim().to_owned();
        }
    }
}

/// An empty folder, unique to this process: `name` names the test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skillgraph-mcp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder can be made");
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

/// The shipped support-desk example.
pub fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk")
}

/// Copy the folder `from` to `to`, with everything in it.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder can be made");
    for entry in std::fs::read_dir(from).expect("the folder reads") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("a file copies");
        }
    }
}

/// The support desk in a scratch folder, its `mcpServers` replaced by
/// `servers`, and its map changed by `edit`.
pub fn desk(name: &str, servers: Value, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let text = std::fs::read_to_string(example().join("skillmap.json")).expect("the example's map");
    let mut map: Value = serde_json::from_str(&text).expect("the example's map is JSON");
    map["mcpServers"] = servers;
    edit(&mut map);
    let dir = map_folder(name, &map);
    copy_dir(&example().join("skills"), &dir.join("skills"));
    dir
}

/// The one upstream server the shipped desk uses, answering from the
/// shipped data, in this process.
pub fn one_upstream() -> Value {
    json!({"desk": {"url": upstream::desk(upstream::desk_data()).url}})
}

/// Whether the record `text` replays to itself on the map its `start`
/// event declares, as `skillgraph replay` checks it; else what parts them.
pub fn replays_to_itself(text: &str) -> Result<(), String> {
    let record = read_record(text).map_err(|err| err.to_string())?;
    let Some(Event::Start(start)) = record.events.first() else {
        return Err("the record holds no start event".to_owned());
    };
    let graph = Graph::new(start.map.to_map()).map_err(|err| err.to_string())?;
    let replayed = replay(&Arc::new(graph), &record.events).map_err(|err| err.to_string())?;
    match first_difference(&record.events, &replayed) {
        None => Ok(()),
        Some(at) => Err(format!("the replay parts from the record at event {at}")),
    }
}

/// `serve_streams` for `config` on a thread of its own, with a runtime of
/// its own; the client's end of its pipe, and the thread.
fn serve_on_a_pipe(config: ServeConfig) -> (DuplexStream, JoinHandle<Result<(), ServeError>>) {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (input, output) = split(server);
    let server = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ServeError::Runtime)?;
        runtime.block_on(serve_streams(&config, input, output))
    });
    (client, server)
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
        let (client, server) = serve_on_a_pipe(config);
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

    /// Call `tool` with `arguments` as request `id`; the answer.
    pub async fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// The text of the resource `skillgraph://record`, read as request `id`.
    pub async fn record(&mut self, id: i64) -> String {
        let answer = self
            .request(id, "resources/read", json!({"uri": "skillgraph://record"}))
            .await;
        answer["result"]["contents"][0]["text"]
            .as_str()
            .expect("the record's text")
            .to_owned()
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

    /// Close serve's input; every line it wrote after, as JSON, once it
    /// has ended.
    pub async fn finish(mut self) -> Vec<Value> {
        self.write.shutdown().await.expect("the pipe closes");
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let read = self.read.read_line(&mut line).await.expect("serve writes");
            if read == 0 {
                break;
            }
            lines.push(serde_json::from_str(&line).expect("every line serve writes is JSON"));
        }
        let served = self.server.take().map(JoinHandle::join);
        assert!(
            matches!(served, Some(Ok(Ok(())))),
            "serve ends well: {served:?}"
        );
        lines
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

/// A client that is told of each `notifications/tools/list_changed`.
#[derive(Clone, Default)]
pub struct Watcher {
    /// Notified at each `notifications/tools/list_changed`.
    pub changed: Arc<tokio::sync::Notify>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.notify_one();
    }
}

/// rmcp's client `handler`, connected to `serve` in this process as over
/// standard input and output.
pub struct Connected<H: ClientHandler> {
    /// The client, past its handshake.
    pub client: RunningService<RoleClient, H>,
    /// The thread serve runs on.
    server: JoinHandle<Result<(), ServeError>>,
}

/// Serve `config` in this process and connect `handler` to it.
pub async fn connect<H: ClientHandler>(config: ServeConfig, handler: H) -> Connected<H> {
    let (pipe, server) = serve_on_a_pipe(config);
    let client = handler.serve(pipe).await.expect("the handshake succeeds");
    Connected { client, server }
}

impl<H: ClientHandler> Connected<H> {
    /// Serve `config` in this process and connect a client of another
    /// kind to it: `handshake` takes the client's end of the pipe.
    pub async fn with<F>(config: ServeConfig, handshake: F) -> Self
    where
        F: AsyncFnOnce(DuplexStream) -> RunningService<RoleClient, H>,
    {
        let (pipe, server) = serve_on_a_pipe(config);
        let client = handshake(pipe).await;
        Connected { client, server }
    }

    /// Close the client, and wait for serve to end as its input ends.
    pub async fn close(self) {
        self.client.cancel().await.expect("the client closes");
        let served = tokio::task::spawn_blocking(move || self.server.join())
            .await
            .expect("the wait ends");
        assert!(matches!(served, Ok(Ok(()))), "serve ends well: {served:?}");
    }
}

impl<H: ClientHandler> std::ops::Deref for Connected<H> {
    type Target = RunningService<RoleClient, H>;

    fn deref(&self) -> &Self::Target {
        &self.client
    }
}

/// `serve` over streamable HTTP in this process, on a free loopback port,
/// on a thread and a runtime of its own; stopped when dropped.
pub struct HttpServed {
    /// Its address, `HOST:PORT`.
    pub addr: String,
    /// Its endpoint, `http://HOST:PORT/mcp`.
    pub url: String,
    /// Stops it.
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// The thread it runs on.
    server: Option<JoinHandle<Result<(), ServeError>>>,
}

impl HttpServed {
    /// Serve `config` over HTTP as `change` changes the defaults.
    pub fn start(config: ServeConfig, change: impl FnOnce(&mut HttpConfig)) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
        let bound = listener.local_addr().expect("a bound address");
        listener
            .set_nonblocking(true)
            .expect("the listener is made non-blocking");
        let mut http = HttpConfig::new(bound);
        // A test's server stops at once: nothing balances onto it.
        http.drain_grace = std::time::Duration::ZERO;
        change(&mut http);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(ServeError::Runtime)?;
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener)
                    .expect("the listener joins the runtime");
                let shutdown = async {
                    let _ = stopped.await;
                };
                serve_http_on(&config, &http, listener, shutdown).await
            })
        });
        HttpServed {
            addr: bound.to_string(),
            url: format!("http://{bound}/mcp"),
            stop: Some(stop),
            server: Some(server),
        }
    }

    /// How the server ended, when it ends of itself within `within` (one
    /// refused at start); `None` while it still serves.
    pub fn ended_within(&mut self, within: std::time::Duration) -> Option<Result<(), ServeError>> {
        let deadline = std::time::Instant::now() + within;
        while self
            .server
            .as_ref()
            .is_some_and(|server| !server.is_finished())
        {
            if std::time::Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let server = self.server.take()?;
        Some(
            server
                .join()
                .unwrap_or_else(|_| Err(ServeError::Handshake("the server panicked".to_owned()))),
        )
    }
}

impl Drop for HttpServed {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

/// The names of the tools `client` is offered, sorted.
pub async fn tool_names(client: &Peer<RoleClient>) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list answers")
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    names.sort();
    names
}

/// Call `tool` with `arguments` through `client`.
pub async fn call(
    client: &Peer<RoleClient>,
    tool: &str,
    arguments: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = arguments.as_object().cloned();
    client.call_tool(params).await
}

/// The one text a resource read answers with.
pub async fn resource_text(
    client: &Peer<RoleClient>,
    uri: &str,
) -> Result<String, rmcp::ServiceError> {
    let read = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await?;
    match read.contents.into_iter().next() {
        Some(ResourceContents::TextResourceContents { text, .. }) => Ok(text),
        other => panic!("{uri} is one text resource, not {other:?}"),
    }
}

/// The text blocks of a tool's answer.
pub fn texts(answer: &CallToolResult) -> Vec<String> {
    answer
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

/// The record's `move` events, as JSON.
pub fn moves(record: &str) -> Vec<Value> {
    record
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a record line is JSON"))
        .filter(|event| event["event"] == "move")
        .collect()
}
