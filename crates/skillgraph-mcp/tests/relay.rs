//! What an upstream asks of a client reaches only the client it is for, and
//! comes back (SPEC §9.5): `serve` over HTTP in this process, in front of
//! an upstream served by this test over HTTP, with rmcp clients able to
//! answer sampling requests and counting the log messages they get. The
//! upstream's `ask` tool logs a line, waits, then asks its client to
//! sample; a request or a line must never reach another client. Its
//! `confirm` tool answers `input_required` (the sessionless generation's
//! way to ask), which serve either fulfils for a handshake client or hands
//! to a sessionless one, whose retry comes back through serve. Its
//! `chatter` tool sends progress and log lines and answers at once: they
//! reach the client before the answer does. A log line that no one client
//! is for is kept on standard error, which the tests that look for it
//! capture ([`Stderr`]).

#![cfg(unix)] // standard error is captured by its file descriptor
#![allow(deprecated)] // sampling and logging are the handshake generation's

mod common;

use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, DiscoverResult,
    InitializeRequestParams, InitializeResult, InputRequiredResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use skillgraph_mcp::ServeConfig;

use common::{HttpServed, desk, one_upstream, scratch, upstream};

/// How long `ask` waits between its log line and its sampling request.
const PAUSE: Duration = Duration::from_millis(600);

/// How many progress notifications and log lines `chatter` sends.
const CHATTER: usize = 10;

/// The upstream: `ask` logs, waits, and asks its client for a sample,
/// answering with the sample's text or the refusal; `confirm` asks by
/// `input_required`. A `legacy` one knows only the handshake generation,
/// where a server sends requests of its own; the other only the newest,
/// where it asks by `input_required`.
#[derive(Clone)]
struct Asker {
    legacy: bool,
}

impl ServerHandler for Asker {
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if !self.legacy {
            return Err(ErrorData::invalid_request(
                "this server speaks the 2026-07-28 revision only",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        if self.legacy {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "server/discover is not known here",
                None,
            ));
        }
        Ok(DiscoverResult::from_server_info(
            ProtocolVersion::KNOWN_VERSIONS.to_vec(),
            self.get_info(),
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {}});
        let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
        let ask = Tool::new("ask", "Asks the client for a sample", Arc::clone(&schema));
        let confirm = Tool::new(
            "confirm",
            "Asks for a sample by input_required",
            Arc::clone(&schema),
        );
        let declared = Tool::new(
            "declared",
            "Says what the client declared",
            Arc::clone(&schema),
        );
        let chatter = Tool::new("chatter", "Reports progress and logs, then answers", schema);
        Ok(ListToolsResult::with_all_items(vec![
            ask, confirm, declared, chatter,
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "confirm" {
            return Ok(confirm(&request));
        }
        if request.name == "chatter" {
            let token = context.meta.get_progress_token();
            for step in 0..CHATTER {
                let line = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(step));
                let _ = context.peer.notify_logging_message(line).await;
                if let Some(token) = &token {
                    let progress = ProgressNotificationParam::new(token.clone(), step as f64);
                    let _ = context.peer.notify_progress(progress).await;
                }
            }
            return Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text("done"),
            ])));
        }
        if request.name == "declared" {
            let declared = serde_json::to_string(&context.meta.client_capabilities())
                .expect("capabilities serialize");
            return Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text(declared),
            ])));
        }
        let line = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!("asking"));
        let _ = context.peer.notify_logging_message(line).await;
        tokio::time::sleep(PAUSE).await;
        let params: CreateMessageRequestParams = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "who are you?"}}],
            "maxTokens": 10
        }))
        .expect("a sampling request");
        let result = match context.peer.create_message(params).await {
            Ok(sample) => {
                let sample = serde_json::to_value(sample).expect("a sample serializes");
                CallToolResult::success(vec![ContentBlock::text(
                    sample["content"]["text"].to_string(),
                )])
            }
            Err(err) => CallToolResult::error(vec![ContentBlock::text(err.to_string())]),
        };
        // Still running a while: a call beside it sees it running.
        tokio::time::sleep(PAUSE).await;
        Ok(CallToolResponse::Complete(result))
    }
}

/// `confirm`: with the answer to its input request and its state, the
/// sample's text; else the request, by `input_required`.
fn confirm(request: &CallToolRequestParams) -> CallToolResponse {
    let answered = request
        .input_responses
        .as_ref()
        .and_then(|answers| answers.get("who"))
        .map(|answer| answer["content"]["text"].to_string());
    match (answered, request.request_state.as_deref()) {
        (Some(text), Some("asked-once")) => CallToolResponse::Complete(CallToolResult::success(
            vec![ContentBlock::text(format!("confirmed by {text}"))],
        )),
        _ => {
            let asked = serde_json::from_value(json!({"who": {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "who are you?"}}],
                    "maxTokens": 10
                }
            }}))
            .expect("input requests");
            CallToolResponse::InputRequired(InputRequiredResult::new(
                Some(asked),
                Some("asked-once".to_owned()),
            ))
        }
    }
}

/// Serve an [`Asker`], `legacy` or not, over streamable HTTP on a free
/// loopback port; its URL.
fn start_asker(legacy: bool) -> String {
    upstream::serve(
        move || Asker { legacy },
        StreamableHttpServerConfig::default(),
    )
}

/// Standard error sent to a file while any test captures it.
struct Capture {
    /// The file.
    file: PathBuf,
    /// Standard error as it was, put back when the last capture ends.
    saved: OwnedFd,
    /// How many captures are going on.
    holders: usize,
}

/// The capture going on, if any.
static CAPTURE: Mutex<Option<Capture>> = Mutex::new(None);

/// What this process writes to its standard error from the capture on:
/// the lines serve keeps there. Tests capture it side by side, so each
/// looks for the lines of its own upstream server.
struct Stderr {
    /// The file standard error goes to meanwhile.
    file: PathBuf,
    /// How much of the file was written before this capture began.
    from: usize,
}

impl Stderr {
    /// Send standard error to a file, unless it goes to one already.
    fn capture() -> Self {
        let mut capture = CAPTURE.lock().unwrap_or_else(PoisonError::into_inner);
        let capture = capture.get_or_insert_with(|| {
            let saved = std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .expect("standard error is kept");
            let file = scratch("relay-stderr").join("stderr");
            let into = std::fs::File::create(&file).expect("a file for standard error");
            nix::unistd::dup2_stderr(&into).expect("standard error goes to the file");
            Capture {
                file,
                saved,
                holders: 0,
            }
        });
        capture.holders += 1;
        let written = std::fs::read(&capture.file).expect("the capture reads");
        Stderr {
            file: capture.file.clone(),
            from: written.len(),
        }
    }

    /// What was written since the capture began.
    fn text(&self) -> String {
        let written = std::fs::read(&self.file).expect("the capture reads");
        String::from_utf8_lossy(&written[self.from..]).into_owned()
    }
}

impl Drop for Stderr {
    fn drop(&mut self) {
        let mut capture = CAPTURE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(going) = capture.as_mut() {
            going.holders -= 1;
            if going.holders == 0 {
                let _ = nix::unistd::dup2_stderr(&going.saved);
                *capture = None;
            }
        }
    }
}

/// A client that answers sampling with its own name and counts the log
/// lines and progress notifications it gets.
#[derive(Clone)]
struct Person {
    name: &'static str,
    lines: Arc<AtomicUsize>,
    progress: Arc<AtomicUsize>,
}

impl Person {
    fn new(name: &'static str) -> Self {
        Person {
            name,
            lines: Arc::default(),
            progress: Arc::default(),
        }
    }

    /// This client's handshake with the server at `url`.
    async fn join(&self, url: &str) -> rmcp::service::RunningService<RoleClient, Person> {
        self.clone()
            .serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
            .await
            .unwrap_or_else(|err| panic!("{}'s handshake: {err}", self.name))
    }
}

/// Whether `counter` reaches `count` within 5 s (a client handles each
/// notification on a task of its own, maybe after the answer it came
/// before).
async fn reaches(counter: &AtomicUsize, count: usize) -> bool {
    let counted = async {
        while counter.load(Ordering::SeqCst) < count {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), counted)
        .await
        .is_ok()
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_sampling().build(),
            rmcp::model::Implementation::new(self.name, "1"),
        )
    }

    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Ok(serde_json::from_value(json!({
            "model": "test", "role": "assistant",
            "content": {"type": "text", "text": format!("I am {}", self.name)}
        }))
        .expect("a sample"))
    }

    async fn on_logging_message(
        &self,
        _params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.lines.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.fetch_add(1, Ordering::SeqCst);
    }
}

/// The text of a tool answer's first block.
fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_request_and_log_line_reach_only_the_client_whose_call_it_came_during() {
    let stderr = Stderr::capture();
    let served = desk_with_asker("relay-owner", "asker", true);
    let ann = Person::new("ann");
    let bob = Person::new("bob");
    let ann_client = ann.join(&served.url).await;
    let bob_client = bob.join(&served.url).await;

    // Ann's call runs; Bob makes the latest request while it waits.
    let peer = ann_client.peer().clone();
    let call = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("ask"))
            .await
            .expect("ann's call is answered")
    });
    tokio::time::sleep(PAUSE / 3).await;
    bob_client.list_all_tools().await.expect("bob's tools/list");
    let answer = call.await.expect("the call task");
    assert_eq!(first_text(&answer), "\"I am ann\"", "{answer:?}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        ann.lines.load(Ordering::SeqCst),
        1,
        "ann gets her call's log line"
    );
    assert_eq!(bob.lines.load(Ordering::SeqCst), 0, "bob gets none of it");

    // Both call at once: nothing says whose request it is, so neither is
    // asked, and the upstream hears why. The line the later call logs,
    // while the earlier one runs, reaches no client; the earlier call's
    // line may reach its own client, if it came first alone.
    let before = ann.lines.load(Ordering::SeqCst) + bob.lines.load(Ordering::SeqCst);
    let (first, second) = tokio::join!(
        ann_client.call_tool(CallToolRequestParams::new("ask")),
        bob_client.call_tool(CallToolRequestParams::new("ask")),
    );
    for answer in [first.expect("ann's answer"), second.expect("bob's answer")] {
        let text = first_text(&answer);
        assert_eq!(answer.is_error, Some(true), "{text}");
        assert!(
            text.contains("cannot pass asker's sampling request on") && text.contains("2 clients"),
            "{text}"
        );
    }
    let kept = stderr.text();
    assert!(
        kept.contains("[asker] a log message serve passes to no client"),
        "{kept}"
    );
    let after = ann.lines.load(Ordering::SeqCst) + bob.lines.load(Ordering::SeqCst);
    assert!(
        after <= before + 1,
        "at most the first call's own line: {after}"
    );
    let _ = ann_client.cancel().await;
    let _ = bob_client.cancel().await;
}

/// The support desk with an asker beside it as the upstream server
/// `server`, `legacy` or not, `ask`, `confirm`, `declared` and `chatter` in
/// triage; served.
fn desk_with_asker(name: &str, server: &str, legacy: bool) -> HttpServed {
    let asker = start_asker(legacy);
    let mut servers = one_upstream();
    servers[server] = json!({"url": asker});
    let dir = desk(name, servers, |map| {
        let tools = map["skills"]["triage"]["tools"]
            .as_array_mut()
            .expect("triage has tools");
        tools.push(json!({"name": "ask"}));
        tools.push(json!({"name": "confirm"}));
        tools.push(json!({"name": "declared"}));
        tools.push(json!({"name": "chatter"}));
    });
    HttpServed::start(ServeConfig::new(&dir), |_| {})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_an_upstream_sends_before_its_answer_reaches_the_client_before_the_answer() {
    // rmcp handles an upstream's notifications on tasks of their own and
    // its answer at once; serve keeps their order, in both generations.
    let stderr = Stderr::capture();
    for legacy in [true, false] {
        let served = desk_with_asker(&format!("relay-order-{legacy}"), "chatty", legacy);
        let ann = Person::new("ann");
        let client = ann.join(&served.url).await;
        for round in 1..=5 {
            let answer = client
                .call_tool(CallToolRequestParams::new("chatter"))
                .await
                .expect("the call is answered");
            assert_eq!(first_text(&answer), "done", "{answer:?}");
            // Progress rides the call's own response stream, before its
            // answer: none of it is lost when the call ends.
            assert!(
                reaches(&ann.progress, CHATTER * round).await,
                "legacy {legacy}, round {round}: {} progress notifications of {}",
                ann.progress.load(Ordering::SeqCst),
                CHATTER * round
            );
            // Log lines ride the session's common stream: each reaches the
            // client, none is kept back as if no call were running.
            assert!(
                reaches(&ann.lines, CHATTER * round).await,
                "legacy {legacy}, round {round}: {} log lines of {}",
                ann.lines.load(Ordering::SeqCst),
                CHATTER * round
            );
        }
        // A client that calls after another's answer is the one its call's
        // lines are for, whether they come while it runs or just after
        // (once Ann's answer is more than serve's 500 ms behind: a late
        // line with two clients' calls just ended is neither's).
        let bob = Person::new("bob");
        let bob_client = bob.join(&served.url).await;
        tokio::time::sleep(PAUSE).await;
        let answer = bob_client
            .call_tool(CallToolRequestParams::new("chatter"))
            .await
            .expect("bob's call is answered");
        assert_eq!(first_text(&answer), "done", "{answer:?}");
        assert!(reaches(&bob.progress, CHATTER).await, "bob's progress");
        assert!(
            reaches(&bob.lines, CHATTER).await,
            "legacy {legacy}: bob's lines reach bob"
        );
        let kept = stderr.text();
        assert!(
            !kept.contains("[chatty] a log message serve passes to no client"),
            "{kept}"
        );
        let _ = client.cancel().await;
        let _ = bob_client.cancel().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_request_is_fulfilled_for_a_handshake_client_and_handed_to_a_sessionless_one() {
    let served = desk_with_asker("relay-input", "asker", false);

    // The handshake generation takes requests: serve asks it, and retries.
    let ann = Person::new("ann");
    let client = ann.join(&served.url).await;
    let answer = client
        .call_tool(CallToolRequestParams::new("confirm"))
        .await
        .expect("the call is answered");
    assert_eq!(
        first_text(&answer),
        "confirmed by \"I am ann\"",
        "{answer:?}"
    );
    // The upstream is told what this client declared: sampling, nothing else.
    let declared = client
        .call_tool(CallToolRequestParams::new("declared"))
        .await
        .expect("the call is answered");
    let declared: serde_json::Value =
        serde_json::from_str(&first_text(&declared)).expect("capabilities as JSON");
    assert!(declared.get("sampling").is_some(), "{declared}");
    assert!(
        declared.get("elicitation").is_none() && declared.get("roots").is_none(),
        "{declared}"
    );
    let _ = client.cancel().await;

    // The sessionless generation fulfils the request itself and retries.
    let http = reqwest_free_post(&served.url);
    let first = http(json!({"name": "confirm", "arguments": {}}));
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["who"]["method"], "sampling/createMessage",
        "{first}"
    );
    let handle = result["_meta"]["skillgraph/run"]
        .as_str()
        .expect("the run's handle")
        .to_owned();
    let state = result["requestState"].as_str().unwrap_or_default();
    assert!(
        !state.is_empty() && !state.contains(&handle) && !state.contains("asked-once"),
        "the state is sealed, the run and the upstream's state inside: {state}"
    );
    // The retry, as an SDK sends it: the same arguments, the answers and
    // the state; the state alone brings it back to its run.
    let retry = http(json!({
        "name": "confirm",
        "arguments": {},
        "inputResponses": {"who": {"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "I am bob"}}},
        "requestState": state
    }));
    assert!(
        retry["result"]["_meta"]["skillgraph/run"].is_null(),
        "no new run was started: {retry}"
    );
    let text = retry["result"]["content"][0]["text"]
        .as_str()
        .map(str::to_owned);
    assert_eq!(
        text.as_deref(),
        Some("confirmed by \"I am bob\""),
        "{retry}"
    );
}

/// A sessionless `tools/call` poster for `url`: each call's JSON-RPC
/// answer, over a plain HTTP/1.1 connection.
fn reqwest_free_post(url: &str) -> impl Fn(serde_json::Value) -> serde_json::Value {
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    move |params| {
        use std::io::{Read, Write};
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}
        });
        let name = params["name"].as_str().unwrap_or_default().to_owned();
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
            .to_string();
        let mut stream = std::net::TcpStream::connect(&addr).expect("serve accepts");
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).expect("sent");
        let mut raw = String::new();
        stream.read_to_string(&mut raw).expect("read");
        let line = raw
            .lines()
            .rev()
            .find_map(|line| line.strip_prefix("data: "))
            .or_else(|| raw.split("\r\n\r\n").nth(1))
            .unwrap_or_default()
            .to_owned();
        let line = if line.starts_with('{') {
            line
        } else {
            // A chunked JSON body: the JSON inside.
            line.lines()
                .find(|l| l.starts_with('{'))
                .unwrap_or_default()
                .to_owned()
        };
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("a JSON answer, not {raw:?}"))
    }
}
