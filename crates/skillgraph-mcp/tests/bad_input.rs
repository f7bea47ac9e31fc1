//! Bad input from a client (SPEC §9.7), sent as raw JSON-RPC lines to the
//! server run in this process: every request is answered, a known method
//! with malformed params is `-32602`, and no answer repeats more than 256
//! characters of what the client sent, on any path — its method name, its
//! id, and an upstream's error message that quotes a URI or an argument.

mod common;

use common::{Served, desk, map_folder, one_skill_map, one_upstream, upstream};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, JsonObject, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use skillgraph_mcp::ServeConfig;

/// Five million characters: far beyond anything an answer may repeat.
const HUGE: usize = 5_000_000;

/// The longest answer line a refusal of huge input may take: the refusal
/// itself, and at most 256 characters of the input.
const SHORT: usize = 1_000;

/// An upstream whose errors quote what it was sent, as many servers'
/// do: a tool `shout` that refuses every argument, naming it, and
/// resources it never has, naming the URI asked for.
#[derive(Clone)]
struct Quoter;

impl ServerHandler for Quoter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema: JsonObject = serde_json::from_value(
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        )
        .expect("a schema is an object");
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "shout",
            "Refuses whatever it is given, quoting it",
            schema,
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        Err(ErrorData::invalid_params(
            format!("cannot shout {arguments}"),
            None,
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(Vec::new()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        Err(ErrorData::resource_not_found(
            format!("there is no resource {}", request.uri),
            None,
        ))
    }
}

/// Serve [`Quoter`] over streamable HTTP on a loopback port; its URL.
fn quoter() -> String {
    // Bodies as large as the client's, which it passes on.
    let config = StreamableHttpServerConfig::default().with_max_request_body_bytes(4 * HUGE);
    upstream::serve(|| Quoter, config)
}

/// `serve` in front of a fresh [`Quoter`], its client past the handshake.
async fn served_with_quoter(name: &str) -> Served {
    let map = one_skill_map(json!({"quoter": {"url": quoter()}}), &["shout"]);
    let mut served = Served::start(ServeConfig::new(map_folder(name, &map)));
    served.initialize().await;
    served
}

/// `serve` in front of no upstream, its client past the handshake.
async fn served_alone(name: &str) -> Served {
    let map = one_skill_map(json!({}), &[]);
    let mut served = Served::start(ServeConfig::new(map_folder(name, &map)));
    served.initialize().await;
    served
}

#[tokio::test]
async fn a_known_method_with_malformed_params_is_invalid_params() {
    let mut served = served_alone("malformed").await;
    let answer = served
        .request(1, "tools/call", json!({"name": 42, "arguments": {}}))
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("tools/call") && message.len() < 300,
        "a short message naming the method: {message}"
    );
    let answer = served.request(2, "resources/read", json!({"uri": 7})).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let answer = served.request(3, "no/such/method", json!({})).await;
    assert_eq!(
        answer["error"]["code"], -32601,
        "a method serve does not know is still -32601: {answer}"
    );
    let listed = served.request(4, "tools/list", json!({})).await;
    assert!(
        listed["result"]["tools"].is_array(),
        "serve goes on: {listed}"
    );
    served.close().await;
}

#[tokio::test]
async fn a_method_name_too_long_to_repeat_is_not_repeated() {
    let mut served = served_alone("long-method").await;
    let answer = served.request(1, &"m".repeat(HUGE), json!({})).await;
    assert_eq!(
        answer["error"]["code"],
        -32601,
        "{:.300}",
        answer.to_string()
    );
    assert!(
        answer.to_string().len() < SHORT,
        "{:.300}",
        answer.to_string()
    );
    served.close().await;
}

#[tokio::test]
async fn an_id_too_long_to_repeat_is_refused_with_a_null_id() {
    let mut served = served_alone("long-id").await;
    served
        .send(&json!({"jsonrpc": "2.0", "id": "i".repeat(5_000), "method": "ping"}))
        .await;
    let answer = served.answer(&Value::Null).await.0;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer.to_string().len() < SHORT, "{answer}");
    let pong = served.request(2, "ping", json!({})).await;
    assert!(pong["result"].is_object(), "{pong}");
    served.close().await;
}

#[tokio::test]
async fn an_upstream_error_quoting_a_huge_uri_is_cut() {
    let mut served = served_with_quoter("huge-uri").await;
    let uri = format!("quote://{}", "u".repeat(HUGE));
    let answer = served
        .request(1, "resources/read", json!({"uri": uri}))
        .await;
    assert_eq!(
        answer["error"]["code"],
        -32002,
        "{:.300}",
        answer.to_string()
    );
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("there is no resource quote://uuu"),
        "the upstream's own words, cut: {message:.300}"
    );
    assert!(
        answer.to_string().len() < SHORT,
        "{:.300}",
        answer.to_string()
    );
    served.close().await;
}

#[tokio::test]
async fn an_upstream_tool_error_quoting_a_huge_argument_is_cut() {
    let mut served = served_with_quoter("huge-argument").await;
    let answer = served
        .request(
            1,
            "tools/call",
            json!({"name": "shout", "arguments": {"text": "a".repeat(HUGE)}}),
        )
        .await;
    assert_eq!(
        answer["result"]["isError"],
        true,
        "{:.300}",
        answer.to_string()
    );
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("upstream server \"quoter\" answered shout with an error"),
        "the failure names the upstream: {text:.300}"
    );
    assert!(
        answer.to_string().len() < SHORT,
        "{:.300}",
        answer.to_string()
    );
    served.close().await;
}

/// SPEC §9.7: every line a client sends is answered — a line that is not
/// JSON with -32700, an invalid request with -32600 and its id, two
/// messages on one line each — and no answer repeats more than 256
/// characters of the input (a 5 MB tool name is only measured).
#[tokio::test]
async fn bad_input_is_answered_and_never_echoed_at_length() {
    let dir = desk("bad-input", one_upstream(), |_| {});
    let mut served = Served::start(ServeConfig::new(&dir));
    let huge = "x".repeat(HUGE);
    let lines = [
        "this is not JSON".to_owned(),
        r#"{"jsonrpc": "2.0", "id": 7, "method": 12}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_owned(),
        format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"{huge}"}}}}"#),
    ];
    for line in &lines {
        served.send_line(line).await;
    }
    let answers = served.finish().await;
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).cloned();
    assert_eq!(answers[0]["error"]["code"], -32700, "{answers:?}");
    assert_eq!(
        by_id(json!(7)).expect("-32600 with its id")["error"]["code"],
        -32600
    );
    assert!(
        by_id(json!(2)).is_some() && by_id(json!(3)).is_some(),
        "{answers:?}"
    );
    let unknown = by_id(json!(4)).expect("the huge call is answered");
    let text = unknown.to_string();
    assert!(
        text.contains("unknown tool one of 5000000 bytes"),
        "{}",
        &text[..text.len().min(300)]
    );
    assert!(
        answers.iter().all(|a| a.to_string().len() < 2_000),
        "nothing long is echoed"
    );
}
