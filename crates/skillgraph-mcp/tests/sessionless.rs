//! The sessionless generation over HTTP, driven in-process (SPEC §9.7,
//! §9.10): [`skillgraph_mcp::serve_http`] runs on a thread of this test in
//! front of an upstream this test serves over streamable HTTP, and plain
//! HTTP requests of the 2026-07-28 revision are sent to it, as the
//! conformance suite sends them. Checked: what `resources/list` names can be
//! read; a `requestState` serve hands out is sealed (altered, or brought to
//! another tool, it is refused with `-32602`); an upstream's
//! `input_required` on `prompts/get` is relayed; a request needing a
//! capability the client did not declare is refused with `-32021`.

mod common;

use common::upstream;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InitializeRequestParams,
    InitializeResult, InputRequiredResult, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, Prompt, PromptMessage, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use skillgraph_mcp::{HttpConfig, ServeConfig, serve_http};

/// The upstream: `confirm` asks for a sample by `input_required`, with a
/// state of its own, and answers once it has both; `greet` asks the same
/// and says what it got; `needs_sampling` refuses (`-32021`) a request that
/// did not declare sampling; the prompt `ask` asks for its context by
/// elicitation; one resource, `test://note`.
#[derive(Clone)]
struct Upstream;

/// An `input_required` answer asking `key` for a sample, with `state`.
fn ask_sample(key: &str, state: &str) -> InputRequiredResult {
    let asked = serde_json::from_value(json!({key: {
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "who are you?"}}],
            "maxTokens": 10
        }
    }}))
    .expect("input requests");
    InputRequiredResult::new(Some(asked), Some(state.to_owned()))
}

impl ServerHandler for Upstream {
    async fn initialize(
        &self,
        _request: InitializeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        Err(ErrorData::invalid_request(
            "this server speaks the 2026-07-28 revision only",
            None,
        ))
    }

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(DiscoverResult::from_server_info(
            ProtocolVersion::KNOWN_VERSIONS.to_vec(),
            self.get_info(),
        ))
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = Arc::new(
            json!({"type": "object", "properties": {}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let tools = ["confirm", "greet", "needs_sampling"]
            .map(|name| Tool::new(name, "A tool of the test", Arc::clone(&schema)));
        Ok(ListToolsResult::with_all_items(tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "needs_sampling" {
            let declared = context.meta.client_capabilities();
            if declared.is_none_or(|declared| declared.sampling.is_none()) {
                return Err(ErrorData::missing_required_client_capability(
                    serde_json::from_value(json!({"sampling": {}})).expect("capabilities"),
                ));
            }
            return Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                ContentBlock::text("sampled"),
            ])));
        }
        let state = format!("{}-asked", request.name);
        let answered = request
            .input_responses
            .as_ref()
            .and_then(|answers| answers.get("who"))
            .map(|answer| answer["content"]["text"].to_string());
        Ok(match (answered, request.request_state.as_deref()) {
            (Some(text), Some(given)) if given == state => {
                CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(
                    format!("{} by {text}", request.name),
                )]))
            }
            _ => CallToolResponse::InputRequired(ask_sample("who", &state)),
        })
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "ask",
            Some("Asks for its context"),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let context = request
            .input_responses
            .as_ref()
            .and_then(|answers| answers.get("context"))
            .map(|answer| answer["content"]["context"].to_string());
        Ok(match (context, request.request_state.as_deref()) {
            (Some(context), Some("prompt-asked")) => {
                GetPromptResponse::Complete(GetPromptResult::new(vec![PromptMessage::new_text(
                    Role::User,
                    format!("with {context}"),
                )]))
            }
            _ => {
                let asked = serde_json::from_value(json!({"context": {
                    "method": "elicitation/create",
                    "params": {
                        "message": "What context?",
                        "requestedSchema": {"type": "object",
                            "properties": {"context": {"type": "string"}}}
                    }
                }}))
                .expect("input requests");
                GetPromptResponse::InputRequired(InputRequiredResult::new(
                    Some(asked),
                    Some("prompt-asked".to_owned()),
                ))
            }
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            "test://note",
            "note",
        )]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![ResourceContents::text("a note", request.uri)],
        )))
    }
}

/// Serve [`Upstream`] over streamable HTTP on a free loopback port, on a
/// thread of its own; its URL.
fn start_upstream() -> String {
    upstream::serve(|| Upstream, StreamableHttpServerConfig::default())
}

/// A map whose one skill carries every tool of the upstream at `url`.
fn map_for(url: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("skillgraph-mcp-sessionless-{}", std::process::id()));
    let skill = dir.join("skills").join("suite");
    std::fs::create_dir_all(&skill).expect("a folder");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: suite\ndescription: Every tool of the test upstream.\nallowed-tools: mcp__up__*\n---\nUse them.\n",
    )
    .expect("the skill is written");
    let map = json!({"mcpServers": {"up": {"url": url}}, "entries": ["suite"]});
    std::fs::write(dir.join("skillmap.json"), map.to_string()).expect("the map is written");
    dir
}

/// The address `serve --http` listens on, in front of [`Upstream`],
/// started once for every test of this file.
fn served() -> SocketAddr {
    static SERVED: OnceLock<SocketAddr> = OnceLock::new();
    *SERVED.get_or_init(|| {
        let map = map_for(&start_upstream());
        // A free port, taken back for serve to bind.
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port");
        std::thread::spawn(move || {
            let served = serve_http(&ServeConfig::new(map), &HttpConfig::new(addr));
            panic!("serve stopped: {served:?}");
        });
        for _ in 0..200 {
            if TcpStream::connect(addr).is_ok() {
                return addr;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("serve never listened on {addr}");
    })
}

/// A sessionless request's HTTP status and JSON-RPC answer: `method` with
/// `params`, whose `_meta` declares `capabilities`.
fn post(method: &str, mut params: Value, capabilities: Value) -> (u16, Value) {
    let addr = served();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities
    });
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(|name| format!("Mcp-Name: {name}\r\n"))
        .unwrap_or_default();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut stream = TcpStream::connect(addr).expect("serve accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a timeout");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sent");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .expect("a status line");
    let json = raw
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("data: "))
        .or_else(|| raw.lines().rev().find(|line| line.starts_with('{')))
        .unwrap_or_else(|| panic!("a JSON answer in {raw:?}"));
    (
        status,
        serde_json::from_str(json).unwrap_or_else(|_| panic!("a JSON answer, not {raw:?}")),
    )
}

/// What a client that declared sampling and elicitation declares.
fn able() -> Value {
    json!({"sampling": {}, "elicitation": {}})
}

/// A sample, as a client answers `who`.
fn sample(text: &str) -> Value {
    json!({"who": {"role": "assistant", "model": "m", "content": {"type": "text", "text": text}}})
}

#[test]
fn every_listed_resource_can_be_read_and_the_record_is_not_listed_without_a_run() {
    let (_, listed) = post("resources/list", json!({}), able());
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|resource| resource["uri"].as_str())
        .collect();
    assert!(!uris.contains(&"skillgraph://record"), "{listed}");
    assert!(uris.contains(&"test://note"), "{listed}");
    for uri in uris {
        let (_, read) = post("resources/read", json!({"uri": uri}), able());
        assert!(read["result"]["contents"].is_array(), "{uri}: {read}");
    }
}

#[test]
fn a_sealed_request_state_resumes_its_run_and_an_altered_one_is_refused() {
    let (_, first) = post(
        "tools/call",
        json!({"name": "confirm", "arguments": {}}),
        able(),
    );
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    assert!(!state.contains("confirm-asked"), "sealed: {state}");
    let handle = result["_meta"]["skillgraph/run"]
        .as_str()
        .expect("a handle");
    assert!(!state.contains(handle), "sealed: {state}");

    for refused in [
        format!("{state}-TAMPERED"),
        "confirm-asked".to_owned(),
        state.replacen('.', ".x", 1),
    ] {
        let retry = json!({"name": "confirm", "arguments": {},
            "inputResponses": sample("me"), "requestState": refused});
        let (_, answer) = post("tools/call", retry, able());
        assert_eq!(answer["error"]["code"], -32602, "{refused}: {answer}");
        assert!(answer.get("result").is_none(), "{answer}");
    }
    // Given back for another tool, the state is foreign there.
    let elsewhere = json!({"name": "greet", "arguments": {},
        "inputResponses": sample("me"), "requestState": state});
    let (_, answer) = post("tools/call", elsewhere, able());
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    let retry = json!({"name": "confirm", "arguments": {},
        "inputResponses": sample("me"), "requestState": state});
    let (_, answer) = post("tools/call", retry, able());
    assert_eq!(
        answer["result"]["content"][0]["text"], "confirm by \"me\"",
        "{answer}"
    );
    assert!(
        answer["result"]["_meta"]["skillgraph/run"].is_null(),
        "the retry went on in its run: {answer}"
    );
}

#[test]
fn a_prompts_input_required_is_relayed_and_its_state_sealed() {
    let (_, first) = post("prompts/get", json!({"name": "ask"}), able());
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["context"]["method"], "elicitation/create",
        "{first}"
    );
    let state = result["requestState"].as_str().expect("a state").to_owned();
    assert_ne!(state, "prompt-asked", "sealed");
    let answers = json!({"context": {"action": "accept", "content": {"context": "tests"}}});
    let tampered = json!({"name": "ask", "inputResponses": answers,
        "requestState": format!("{state}-TAMPERED")});
    let (_, refused) = post("prompts/get", tampered, able());
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let retry = json!({"name": "ask", "inputResponses": answers, "requestState": state});
    let (_, answer) = post("prompts/get", retry, able());
    assert_eq!(
        answer["result"]["messages"][0]["content"]["text"], "with \"tests\"",
        "{answer}"
    );
}

#[test]
fn a_request_needing_an_undeclared_capability_is_refused_naming_it() {
    // The upstream refuses it itself: relayed, not turned into a tool error.
    let call = json!({"name": "needs_sampling", "arguments": {}});
    let (status, answer) = post("tools/call", call.clone(), json!({}));
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}}),
        "{answer}"
    );
    assert_eq!(status, 400, "{answer}");
    let (_, answer) = post("tools/call", call, able());
    assert_eq!(
        answer["result"]["content"][0]["text"], "sampled",
        "{answer}"
    );

    // The upstream asks for a sample the client cannot give: serve refuses.
    let call = json!({"name": "confirm", "arguments": {}});
    let (_, answer) = post("tools/call", call, json!({"elicitation": {}}));
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("sampling")),
        "{answer}"
    );

    // And so for a prompt asking for elicitation.
    let (_, answer) = post(
        "prompts/get",
        json!({"name": "ask"}),
        json!({"sampling": {}}),
    );
    assert_eq!(answer["error"]["code"], -32021, "{answer}");
    assert_eq!(
        answer["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}}),
        "{answer}"
    );
}

#[test]
fn a_method_the_newest_revision_removed_is_not_found_and_a_malformed_known_one_is_invalid() {
    // SEP-2575: a removed method is 404 with -32601 on the sessionless
    // generation, whatever its params; a served method whose params do not
    // fit is -32602 (SPEC §9.7).
    for (method, params) in [("initialize", json!({})), ("ping", json!({}))] {
        let (status, answer) = post(method, params, json!({}));
        assert_eq!(status, 404, "{method}: {answer}");
        assert_eq!(answer["error"]["code"], json!(-32601), "{method}: {answer}");
    }
    let (_, answer) = post("tools/call", json!({"name": 42}), json!({}));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
}
