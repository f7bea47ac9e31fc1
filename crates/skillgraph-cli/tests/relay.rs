//! What an upstream sends unasked reaches only the client it is for (SPEC
//! §9.5): `skillgraph serve --http` in front of an upstream served by this
//! test over HTTP, with two rmcp clients, each able to answer sampling
//! requests and each counting the log messages it gets. The upstream's
//! `ask` tool logs a line, waits, then asks its client to sample; a
//! request or a line must never reach the other client.

#![allow(deprecated)] // sampling and logging are the handshake generation's

mod common;

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ListToolsResult, LoggingLevel,
    LoggingMessageNotificationParam, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

use common::{desk, one_upstream};

/// How long `ask` waits between its log line and its sampling request.
const PAUSE: Duration = Duration::from_millis(600);

/// The upstream: one tool, `ask`, that logs, waits, and asks its client
/// for a sample, answering with the sample's text or the refusal.
#[derive(Clone)]
struct Asker;

impl ServerHandler for Asker {
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
        let tool = Tool::new(
            "ask",
            "Asks the client for a sample",
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        );
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
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
        Ok(CallToolResponse::Complete(result))
    }
}

/// Serve [`Asker`] over streamable HTTP on a free loopback port; its URL.
async fn start_asker() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let url = format!("http://{}/mcp", listener.local_addr().expect("bound"));
    let service = StreamableHttpService::new(
        || Ok(Asker),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = service.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    url
}

/// A client that answers sampling with its own name and counts the log
/// lines it gets.
#[derive(Clone)]
struct Person {
    name: &'static str,
    lines: Arc<AtomicUsize>,
}

impl Person {
    fn new(name: &'static str) -> Self {
        Person {
            name,
            lines: Arc::default(),
        }
    }
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
}

/// `skillgraph serve DIR --http 127.0.0.1:0`, with what it writes to
/// standard error kept; killed when dropped.
struct Served {
    child: Child,
    url: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .arg("serve")
        .arg(dir)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    let mut lines = BufReader::new(child.stderr.take().expect("a pipe")).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("serve says where it listens before it ends")
            .expect("standard error reads");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_owned();
        }
    };
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&stderr);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            kept.lock().expect("not poisoned").push(line);
        }
    });
    Served { child, url, stderr }
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
    let asker = start_asker().await;
    let mut servers = one_upstream();
    servers["asker"] = json!({"url": asker});
    let dir = desk("relay-owner", servers, |map| {
        map["skills"]["triage"]["tools"]
            .as_array_mut()
            .expect("triage has tools")
            .push(json!({"name": "ask"}));
    });
    let served = serve(&dir);
    let ann = Person::new("ann");
    let bob = Person::new("bob");
    let connect = |person: &Person| {
        person
            .clone()
            .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
    };
    let ann_client = connect(&ann).await.expect("ann's handshake");
    let bob_client = connect(&bob).await.expect("bob's handshake");

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
    // asked, and the upstream hears why.
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
    let kept = served.stderr.lock().expect("not poisoned").join("\n");
    assert!(
        kept.contains("[asker] a log message serve passes to no client"),
        "{kept}"
    );
    assert_eq!(
        ann.lines.load(Ordering::SeqCst),
        1,
        "no line of the shared calls"
    );
    assert_eq!(
        bob.lines.load(Ordering::SeqCst),
        0,
        "no line of the shared calls"
    );
    let _ = ann_client.cancel().await;
    let _ = bob_client.cancel().await;
}
