//! Upstream MCP servers in this process, each on a loopback port of its
//! own, for a map to declare by `url`: any rmcp handler ([`serve`]), and
//! the support desk's ([`desk`]), which answers the desk's tools from the
//! canned data `desk-upstream` answers them from.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Serve the handlers `make` makes over streamable HTTP on a loopback
/// port, configured by `config`, on a thread of its own for as long as the
/// tests run; its URL.
pub fn serve<H, F>(make: F, config: StreamableHttpServerConfig) -> String
where
    H: ServerHandler,
    F: Fn() -> H + Send + Sync + 'static,
{
    let (tell, told) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a loopback port");
            let addr = listener.local_addr().expect("an address");
            tell.send(format!("http://{addr}/mcp"))
                .expect("the test waits");
            let service = StreamableHttpService::new(
                move || Ok(make()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
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
    });
    told.recv().expect("the upstream listens")
}

/// The desk's canned data as shipped (`examples/support-desk/upstream/data.json`):
/// per tool, its one argument, the answer for each value of it, the
/// answer for any other value (`null`: an error), its description and,
/// optionally, how long it takes to answer (`delay_ms`).
pub fn desk_data() -> Value {
    let file = super::example().join("upstream/data.json");
    let text = std::fs::read_to_string(file).expect("the desk's data");
    serde_json::from_str(&text).expect("the desk's data is JSON")
}

/// A desk upstream in this process.
pub struct Desk {
    /// Its endpoint.
    pub url: String,
    /// Notified as each call comes, before it is answered.
    pub called: Arc<Notify>,
    /// How many calls it received.
    pub calls: Arc<AtomicUsize>,
}

/// Serve the desk's tools from `data` (in the shape of [`desk_data`]), as
/// `desk-upstream` does.
pub fn desk(data: Value) -> Desk {
    let called = Arc::new(Notify::new());
    let calls = Arc::new(AtomicUsize::new(0));
    let handler = Canned {
        data: Arc::new(data),
        called: Arc::clone(&called),
        calls: Arc::clone(&calls),
    };
    let url = serve(
        move || handler.clone(),
        StreamableHttpServerConfig::default(),
    );
    Desk { url, called, calls }
}

/// The desk's tools, answered from canned data.
#[derive(Clone)]
struct Canned {
    data: Arc<Value>,
    called: Arc<Notify>,
    calls: Arc<AtomicUsize>,
}

impl Canned {
    /// The tool `name` as `tools/list` offers it: its one argument,
    /// required, an integer when every value answered is one.
    fn tool(name: &str, canned: &Value) -> Tool {
        let argument = canned["argument"].as_str().unwrap_or_default();
        let answers = canned["answers"].as_object();
        let integral = answers.is_some_and(|answers| {
            !answers.is_empty() && answers.keys().all(|key| key.parse::<i64>().is_ok())
        });
        let kind = if integral { "integer" } else { "string" };
        let schema: JsonObject = serde_json::from_value(json!({
            "type": "object",
            "properties": {argument: {"type": kind}},
            "required": [argument]
        }))
        .expect("a schema is an object");
        let description = canned["description"].as_str().unwrap_or_default();
        Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
    }
}

impl ServerHandler for Canned {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.data.as_object().map(|tools| {
            tools
                .iter()
                .map(|(name, canned)| Canned::tool(name, canned))
                .collect()
        });
        Ok(ListToolsResult::with_all_items(tools.unwrap_or_default()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.called.notify_one();
        self.calls.fetch_add(1, Ordering::Relaxed);
        let canned = &self.data[request.name.as_ref()];
        if canned.is_null() {
            return Err(ErrorData::invalid_params(
                format!("there is no tool `{}` here", request.name),
                None,
            ));
        }
        if let Some(delay) = canned["delay_ms"].as_u64() {
            tokio::time::sleep(Duration::from_millis(delay)).await;
        }
        let argument = canned["argument"].as_str().unwrap_or_default();
        let given = request
            .arguments
            .as_ref()
            .and_then(|given| given.get(argument));
        let key = match given {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Number(number)) => number.to_string(),
            _ => {
                return Err(ErrorData::invalid_params(
                    format!("`{}` takes one argument, `{argument}`", request.name),
                    None,
                ));
            }
        };
        let answer = Some(&canned["answers"][&key])
            .filter(|answer| answer.is_object())
            .or(Some(&canned["default"]).filter(|answer| answer.is_object()));
        // A canned `_meta` goes on the result, not in its content.
        let meta = canned["meta"].as_object().cloned();
        Ok(CallToolResponse::Complete(match answer {
            Some(answer) => {
                let mut result = CallToolResult::structured(answer.clone());
                result.meta = meta.map(rmcp::model::MetaObject);
                result
            }
            None => CallToolResult::error(vec![ContentBlock::text(format!(
                "Nothing matches {argument} {key}."
            ))]),
        }))
    }
}
