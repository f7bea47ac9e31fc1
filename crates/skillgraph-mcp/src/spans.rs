//! A span per MCP request `serve` answers, and a client span per call it
//! forwards upstream (SPEC §11), named and attributed by the MCP semantic
//! conventions of OpenTelemetry's GenAI conventions v0.1.0
//! (`open-telemetry/semantic-conventions-genai`, `docs/gen-ai/mcp.md`;
//! `docs/tracing.md` lists every name used). A request whose
//! `params._meta` carries W3C trace context (`traceparent`, `tracestate`)
//! continues the client's trace; a forwarded call carries serve's own
//! context in its `_meta`, so an upstream that traces joins the trace.
//! With export off every span here is nothing, and costs nothing. The
//! spans are made with the tracer of `skillgraph-otlp`'s exporter, which
//! sends them, and a call's run facts wait there to be made on the export
//! thread.

use std::sync::Arc;

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracer;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ErrorData, MetaObject, RequestId};
use rmcp::service::RequestContext;
use sha2::{Digest, Sha256};
use skillgraph::skill_explain::trace;
use skillgraph::skill_session::{DeclaredMap, Event, Graph};
use skillgraph_otlp::{Deferred, Exporter};

use crate::echo::prefix;
use crate::runs::Slot;

/// The request's method (`tools/call`, `resources/read`, …).
pub(crate) const MCP_METHOD_NAME: &str = "mcp.method.name";
/// The protocol revision the request was made in.
pub(crate) const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// The HTTP session the request came in (`Mcp-Session-Id`), as a digest:
/// the id itself lets whoever holds it use the session.
pub(crate) const MCP_SESSION_ID: &str = "mcp.session.id";
/// The URI of a resource read or subscribed to.
pub(crate) const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
/// The JSON-RPC id of the request, as a string.
pub(crate) const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
/// The tool called.
pub(crate) const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// `execute_tool` on a `tools/call`.
pub(crate) const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// The prompt got.
pub(crate) const GEN_AI_PROMPT_NAME: &str = "gen_ai.prompt.name";
/// What failed: the JSON-RPC error code, or `tool_error` for a tool's
/// result with `isError`.
pub(crate) const ERROR_TYPE: &str = "error.type";
/// `pipe` over stdio, `tcp` over HTTP.
pub(crate) const NETWORK_TRANSPORT: &str = "network.transport";
/// On a forwarded call's span: the upstream server's name in the map
/// (ours: the conventions name no such fact).
pub(crate) const UPSTREAM: &str = "skillgraph.upstream";

/// Where serve's spans go, and how its clients reach it.
/// Cloned into every request's span, so shared: a tracer's clone copies
/// its instrumentation scope.
#[derive(Clone)]
pub(crate) struct Tracing {
    inner: Arc<Shared>,
}

struct Shared {
    tracer: SdkTracer,
    /// Where a span's facts wait for its export.
    deferred: Arc<Deferred>,
    /// [`NETWORK_TRANSPORT`]'s value.
    transport: &'static str,
}

impl Tracing {
    /// Spans sent by `exporter`, for a server reached over stdio (`pipe`)
    /// or HTTP (`tcp`).
    pub(crate) fn new(exporter: &Exporter, over_stdio: bool) -> Self {
        Tracing {
            inner: Arc::new(Shared {
                tracer: exporter.tracer().clone(),
                deferred: exporter.deferred(),
                transport: if over_stdio { "pipe" } else { "tcp" },
            }),
        }
    }
}

/// What a request is about, beyond its method: it names the span.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Target<'a> {
    /// Nothing more (`tools/list`).
    None,
    /// A tool (`tools/call lookup_order`).
    Tool(&'a str),
    /// A prompt (`prompts/get greet`).
    Prompt(&'a str),
    /// A resource: an attribute, never in the span's name (URIs are many).
    Resource(&'a str),
}

/// The span of one MCP request, ended when dropped; nothing when export is
/// off.
pub(crate) struct RequestSpan {
    span: Option<(Context, Tracing)>,
}

impl RequestSpan {
    /// The span of the `method` request `context` serves, about `target`,
    /// continuing the client's trace when its `_meta` carries one.
    pub(crate) fn start(
        tracing: Option<&Tracing>,
        method: &'static str,
        target: Target<'_>,
        context: &RequestContext<RoleServer>,
    ) -> Self {
        let Some(tracing) = tracing else {
            return RequestSpan { span: None };
        };
        let parent = client_context(&context.meta);
        let mut attributes = vec![
            KeyValue::new(MCP_METHOD_NAME, method),
            KeyValue::new(JSONRPC_REQUEST_ID, request_id(&context.id)),
            KeyValue::new(NETWORK_TRANSPORT, tracing.inner.transport),
        ];
        if let Some(session) = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.headers.get("mcp-session-id"))
            .and_then(|id| id.to_str().ok())
        {
            attributes.push(KeyValue::new(
                MCP_SESSION_ID,
                digest_name("session#", session),
            ));
        }
        if let Some(version) = context.protocol_version() {
            attributes.push(KeyValue::new(
                MCP_PROTOCOL_VERSION,
                version.as_str().to_owned(),
            ));
        }
        // What the client named is kept at most MAX_ECHO characters long:
        // a client's strings go on spans, which wait in memory for their
        // export.
        let target = match target {
            Target::Tool(tool) => Target::Tool(prefix(tool)),
            Target::Prompt(prompt) => Target::Prompt(prefix(prompt)),
            Target::Resource(uri) => Target::Resource(prefix(uri)),
            Target::None => Target::None,
        };
        let name: std::borrow::Cow<'static, str> = match target {
            Target::Tool(tool) => {
                attributes.push(KeyValue::new(GEN_AI_TOOL_NAME, tool.to_owned()));
                attributes.push(KeyValue::new(GEN_AI_OPERATION_NAME, "execute_tool"));
                format!("{method} {tool}").into()
            }
            Target::Prompt(prompt) => {
                attributes.push(KeyValue::new(GEN_AI_PROMPT_NAME, prompt.to_owned()));
                format!("{method} {prompt}").into()
            }
            Target::Resource(uri) => {
                attributes.push(KeyValue::new(MCP_RESOURCE_URI, uri.to_owned()));
                method.into()
            }
            Target::None => method.into(),
        };
        let tracer = &tracing.inner.tracer;
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        RequestSpan {
            span: Some((parent.with_span(span), tracing.clone())),
        }
    }

    /// Whether the span is recorded (export is on): what only a span needs
    /// is gathered only then.
    pub(crate) fn is_on(&self) -> bool {
        self.span.is_some()
    }

    /// Put the run's facts on the span: `run`'s name, and what `events`
    /// (the events this request added to the run's record) say, by
    /// [`trace::facts`] — made on the export thread when the span is sent,
    /// off the answering path ([`Deferred::put`]).
    pub(crate) fn facts(&self, run: &str, events: &[Arc<Event>], map: &Arc<DeclaredMap>) {
        let Some((context, tracing)) = &self.span else {
            return;
        };
        let span = context.span();
        // A span the client's sampling decision left unrecorded is never
        // exported: its facts would wait for nothing.
        if !span.is_recording() {
            return;
        }
        span.set_attribute(KeyValue::new(trace::RUN, run.to_owned()));
        tracing.inner.deferred.put(&span, events, map);
    }

    /// Mark the span failed: `error.type` is `kind`, the status `message`.
    pub(crate) fn failed(&self, kind: &str, message: &str) {
        if let Some((context, _)) = &self.span {
            mark_failed(context, kind, message);
        }
    }

    /// Mark the span failed with `tool_error` when `result` is a tool's
    /// error answer.
    pub(crate) fn tool_answered(&self, result: &CallToolResult) {
        if let Some((context, _)) = &self.span {
            mark_tool_error(context, result);
        }
    }

    /// `result`, with the span marked failed when it is an error.
    pub(crate) fn answered<T>(&self, result: Result<T, ErrorData>) -> Result<T, ErrorData> {
        if let Err(error) = &result {
            self.failed(&error.code.0.to_string(), &error.message);
        }
        result
    }

    /// The client span of a call of `tool` forwarded to the upstream
    /// `server`, a child of this span.
    pub(crate) fn forward(&self, server: &str, tool: &str) -> ForwardSpan {
        let Some((parent, tracing)) = &self.span else {
            return ForwardSpan { span: None };
        };
        let tracer = &tracing.inner.tracer;
        let span = tracer
            .span_builder(format!("tools/call {tool}"))
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new(MCP_METHOD_NAME, "tools/call"),
                KeyValue::new(GEN_AI_TOOL_NAME, tool.to_owned()),
                KeyValue::new(GEN_AI_OPERATION_NAME, "execute_tool"),
                KeyValue::new(UPSTREAM, server.to_owned()),
            ])
            .start_with_context(tracer, parent);
        ForwardSpan {
            span: Some(parent.with_span(span)),
        }
    }
}

impl Drop for RequestSpan {
    fn drop(&mut self) {
        if let Some((context, _)) = &self.span {
            context.span().end();
        }
    }
}

/// The client span of one forwarded call, ended when dropped.
pub(crate) struct ForwardSpan {
    span: Option<Context>,
}

impl ForwardSpan {
    /// Put this span's trace context into the forwarded request's `_meta`
    /// in place of the client's (which the server span continues); with
    /// export off, `meta` is left as the client sent it.
    pub(crate) fn inject(&self, meta: &mut MetaObject) {
        let Some(context) = &self.span else {
            return;
        };
        // W3C Trace Context, version 00, written here rather than through a
        // propagator's map: it is on the answering path.
        let span = context.span();
        let ids = span.span_context();
        meta.set_traceparent(traceparent(
            &ids.trace_id().to_bytes(),
            &ids.span_id().to_bytes(),
            ids.trace_flags().to_u8(),
        ));
        let state = ids.trace_state().header();
        if state.is_empty() {
            meta.0.remove("tracestate");
        } else {
            meta.set_tracestate(state);
        }
    }

    /// The upstream's id for the request.
    pub(crate) fn sent_as(&self, id: &RequestId) {
        if let Some(context) = &self.span {
            context
                .span()
                .set_attribute(KeyValue::new(JSONRPC_REQUEST_ID, request_id(id)));
        }
    }

    /// Mark the call failed.
    pub(crate) fn failed(&self, kind: &str, message: &str) {
        if let Some(context) = &self.span {
            mark_failed(context, kind, message);
        }
    }

    /// Mark the call failed with `tool_error` when `result` is a tool's
    /// error answer.
    pub(crate) fn tool_answered(&self, result: &CallToolResult) {
        if let Some(context) = &self.span {
            mark_tool_error(context, result);
        }
    }
}

/// Mark the span of `context` failed: `error.type` is `kind`, the status
/// `message`.
fn mark_failed(context: &Context, kind: &str, message: &str) {
    let span = context.span();
    span.set_attribute(KeyValue::new(ERROR_TYPE, kind.to_owned()));
    span.set_status(Status::error(message.to_owned()));
}

/// Mark the span of `context` failed with `tool_error` when `result` is an
/// error answer (`isError`).
fn mark_tool_error(context: &Context, result: &CallToolResult) {
    if result.is_error == Some(true) {
        mark_failed(context, "tool_error", "the tool's answer is an error");
    }
}

impl Drop for ForwardSpan {
    fn drop(&mut self) {
        if let Some(context) = &self.span {
            context.span().end();
        }
    }
}

/// The client's trace context from a request's `_meta`; an empty context
/// (a new trace) when it carries none or one that does not parse.
fn client_context(meta: &MetaObject) -> Context {
    let Some(parent) = meta.get_traceparent() else {
        return Context::new();
    };
    let mut carrier = std::collections::HashMap::new();
    carrier.insert("traceparent".to_owned(), parent.to_owned());
    if let Some(state) = meta.get_tracestate() {
        carrier.insert("tracestate".to_owned(), state.to_owned());
    }
    TraceContextPropagator::new().extract_with_context(&Context::new(), &carrier)
}

/// A W3C `traceparent` of version 00: `00-TRACE-SPAN-FLAGS` in lowercase
/// hexadecimal.
fn traceparent(trace: &[u8; 16], span: &[u8; 8], flags: u8) -> String {
    let mut text = String::with_capacity(55);
    text.push_str("00-");
    push_hex(&mut text, trace);
    text.push('-');
    push_hex(&mut text, span);
    text.push('-');
    push_hex(&mut text, &[flags]);
    text
}

fn push_hex(text: &mut String, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for byte in bytes {
        text.push(char::from(HEX[usize::from(byte >> 4)]));
        text.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
}

fn request_id(id: &RequestId) -> String {
    match id {
        RequestId::Number(n) => n.to_string(),
        RequestId::String(text) => prefix(text).to_owned(),
    }
}

/// The name a run goes by on spans: never its handle, which over HTTP
/// grants the run to whoever holds it. A run with a handle is named by the
/// first 16 hexadecimal digits of the handle's SHA-256 (so its record file,
/// named by the handle, can be matched to it); `fresh` names one without.
pub(crate) fn run_name(handle: Option<&str>, fresh: impl FnOnce() -> String) -> String {
    match handle {
        Some(handle) => digest_name("run#", handle),
        None => fresh(),
    }
}

/// `prefix` and the first 16 hexadecimal digits of `secret`'s SHA-256.
fn digest_name(prefix: &str, secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    let mut name = String::with_capacity(prefix.len() + 16);
    name.push_str(prefix);
    push_hex(&mut name, &digest[..8]);
    name
}

/// While it lives, a request's span waits for the run's facts: when it is
/// dropped, at whatever point the request is answered, what the request
/// added to the run's record is put on the span.
pub(crate) struct RunFacts<'s> {
    span: &'s RequestSpan,
    slot: Slot,
    /// The number of events the record held when the request began.
    before: usize,
    handle: Option<String>,
    map: Arc<DeclaredMap>,
}

impl<'s> RunFacts<'s> {
    /// The facts of `slot`'s run for `span`, once it is answered; `None`
    /// when export is off.
    pub(crate) fn gather(
        span: &'s RequestSpan,
        slot: &Slot,
        handle: Option<String>,
        graph: &Graph,
    ) -> Option<Self> {
        if !span.is_on() {
            return None;
        }
        let before = slot.lock().map(|state| state.record.len()).unwrap_or(0);
        Some(RunFacts {
            span,
            slot: Arc::clone(slot),
            before,
            handle,
            map: Arc::clone(graph.declared()),
        })
    }
}

impl Drop for RunFacts<'_> {
    fn drop(&mut self) {
        if let Ok(mut state) = self.slot.lock() {
            let name = state.traced_as(self.handle.as_deref());
            self.span
                .facts(&name, state.record.since(self.before), &self.map);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_traceparent_is_continued_and_a_bad_one_starts_a_new_trace() {
        let mut meta = MetaObject::new();
        meta.set_traceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
        let context = client_context(&meta);
        let parent = context.span().span_context().clone();
        assert!(parent.is_valid() && parent.is_remote());
        assert_eq!(
            parent.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        let mut bad = MetaObject::new();
        bad.set_traceparent("not a traceparent");
        assert!(!client_context(&bad).span().span_context().is_valid());
        assert!(
            !client_context(&MetaObject::new())
                .span()
                .span_context()
                .is_valid()
        );
    }

    #[test]
    fn the_traceparent_written_is_the_one_the_propagator_writes() {
        let mut meta = MetaObject::new();
        meta.set_traceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
        let context = client_context(&meta);
        let mut carrier = std::collections::HashMap::new();
        TraceContextPropagator::new().inject_context(&context, &mut carrier);
        let ids = context.span().span_context().clone();
        assert_eq!(
            traceparent(
                &ids.trace_id().to_bytes(),
                &ids.span_id().to_bytes(),
                ids.trace_flags().to_u8()
            ),
            carrier["traceparent"]
        );
    }

    #[test]
    fn a_run_is_named_by_a_digest_of_its_handle_never_the_handle() {
        let handle = "run_0123456789abcdef0123456789abcdef";
        let name = run_name(Some(handle), || unreachable!("a handle names it"));
        assert_eq!(name.len(), 20);
        assert!(name.starts_with("run#") && !name.contains(&handle[4..]));
        assert_eq!(name, run_name(Some(handle), String::new));
        assert_eq!(run_name(None, || "fresh".to_owned()), "fresh");
    }

    #[test]
    fn with_export_off_nothing_is_touched() {
        let span = RequestSpan { span: None };
        assert!(!span.is_on());
        let mut meta = MetaObject::new();
        meta.set_traceparent("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
        let before = meta.clone();
        span.forward("desk", "lookup_order").inject(&mut meta);
        assert_eq!(meta, before, "the client's context goes on as it was");
    }
}
