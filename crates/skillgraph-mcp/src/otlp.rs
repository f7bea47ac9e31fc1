//! OpenTelemetry export (SPEC §11): spans over OTLP/HTTP with protobuf to
//! `--otlp URL` or the standard `OTEL_EXPORTER_OTLP_ENDPOINT`, named for
//! `OTEL_SERVICE_NAME` (default `skillgraph`). The batch processor sends
//! from a thread of its own, so export never delays or fails a step: a
//! receiver that is down or slow costs spans (a failed export's, or those
//! a full queue had no room for), the first failure said on standard
//! error, and the number of spans no receiver took when the exporter shuts
//! down. [`PlayTrace`] turns a session's events, as they come, into a span
//! per run, per turn and per iteration with the facts of
//! [`skill_explain::trace`]; `request` makes `serve`'s span per MCP request
//! and per forwarded call.

mod request;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry::trace::{SpanId, TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue, StringValue};
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchSpanProcessor, SdkTracer, SdkTracerProvider, SpanData, SpanExporter, SpanProcessor,
};
use skillgraph::skill_explain::trace::{self, Attribute, Value};
use skillgraph::skill_session::{DeclaredMap, Event, MoveBy};

pub(crate) use self::request::{RequestSpan, Target, Tracing, run_name};
use crate::warn;

/// The service name when `OTEL_SERVICE_NAME` is not set.
const SERVICE: &str = "skillgraph";

/// How long one export may take before its spans count as lost.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// An exporter that cannot be set up as given.
#[derive(Debug, thiserror::Error)]
#[error(
    "the OTLP endpoint {endpoint:?} (from {from}) cannot be used: {reason}; give an http:// URL such as http://127.0.0.1:4318 with --otlp or OTEL_EXPORTER_OTLP_ENDPOINT"
)]
pub struct OtlpError {
    /// The endpoint as given.
    pub endpoint: String,
    /// Where it was given: `--otlp` or `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub from: &'static str,
    /// Why it cannot be used.
    pub reason: String,
}

impl OtlpError {
    /// The stable code of the error: `otlp-endpoint`.
    pub fn code(&self) -> &'static str {
        "otlp-endpoint"
    }
}

/// What became of the spans: how many ended, how many a receiver took,
/// and whether a loss was said.
#[derive(Debug)]
struct Lost {
    /// Spans ended, each handed to the batch processor.
    ended: AtomicUsize,
    /// Spans a receiver took.
    taken: AtomicUsize,
    said: AtomicBool,
    endpoint: String,
}

/// The batch processor, counting the spans handed to it: one its queue
/// had no room for is dropped there, unseen by the exporter, and still
/// counts as lost.
#[derive(Debug)]
struct Tally {
    inner: BatchSpanProcessor,
    lost: Arc<Lost>,
}

impl SpanProcessor for Tally {
    fn on_start(&self, span: &mut opentelemetry_sdk::trace::Span, context: &Context) {
        self.inner.on_start(span, context);
    }

    fn on_end(&self, span: SpanData) {
        self.lost.ended.fetch_add(1, Ordering::Relaxed);
        self.inner.on_end(span);
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The most spans whose facts wait for their export at once; past it, the
/// oldest waiting is forgotten (a span the batch queue had no room for is
/// never exported, so its facts would wait for ever).
const MAX_DEFERRED: usize = 4096;

/// The run's facts of a span, waiting for the span's export: the events a
/// request added to the run's record and the run's declared map.
struct Pending {
    events: Vec<Arc<Event>>,
    map: Arc<DeclaredMap>,
}

/// Spans whose facts are made on the export thread, off the answering
/// path: a request hands over its events (shared, not copied), and the
/// exporter turns them into the span's attributes and events before it
/// sends the span.
#[derive(Default)]
pub(crate) struct Deferred {
    pending: Mutex<Waiting>,
}

/// The facts waiting, by span, and the spans in the order they came.
#[derive(Default)]
struct Waiting {
    by_span: HashMap<SpanId, Pending>,
    order: VecDeque<SpanId>,
}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deferred").finish_non_exhaustive()
    }
}

impl Deferred {
    /// Keep `events` for the span `span`, to be made into its facts when it
    /// is exported; `false` when they cannot be kept (the caller makes the
    /// facts itself).
    pub(crate) fn defer(
        &self,
        span: SpanId,
        events: &[Arc<Event>],
        map: &Arc<DeclaredMap>,
    ) -> bool {
        let Ok(mut waiting) = self.pending.lock() else {
            return false;
        };
        while waiting.by_span.len() >= MAX_DEFERRED {
            let Some(oldest) = waiting.order.pop_front() else {
                break;
            };
            waiting.by_span.remove(&oldest);
        }
        waiting.by_span.insert(
            span,
            Pending {
                events: events.to_vec(),
                map: Arc::clone(map),
            },
        );
        waiting.order.push_back(span);
        true
    }

    /// Put on each span of `batch` the facts waiting for it.
    fn expand(&self, batch: &mut [SpanData]) {
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        if pending.by_span.is_empty() {
            return;
        }
        for span in batch.iter_mut() {
            let Some(waiting) = pending.by_span.remove(&span.span_context.span_id()) else {
                continue;
            };
            let facts = trace::facts(waiting.events.iter().map(|e| &**e), &waiting.map);
            span.attributes
                .extend(facts.attributes.into_iter().map(key_value));
            span.events
                .events
                .extend(facts.events.into_iter().map(|event| {
                    opentelemetry::trace::Event::new(
                        event.name,
                        span.end_time,
                        event.attributes.into_iter().map(key_value).collect(),
                        0,
                    )
                }));
        }
        let Waiting { by_span, order } = &mut *pending;
        order.retain(|span| by_span.contains_key(span));
    }
}

/// The OTLP exporter, counting what it fails to send, and putting each
/// span's deferred facts on it first.
#[derive(Debug)]
struct Counting {
    inner: opentelemetry_otlp::SpanExporter,
    lost: Arc<Lost>,
    deferred: Arc<Deferred>,
}

impl SpanExporter for Counting {
    async fn export(&self, mut batch: Vec<SpanData>) -> OTelSdkResult {
        self.deferred.expand(&mut batch);
        let count = batch.len();
        let sent = self.inner.export(batch).await;
        match &sent {
            Ok(()) => {
                self.lost.taken.fetch_add(count, Ordering::Relaxed);
            }
            Err(error) if !self.lost.said.swap(true, Ordering::Relaxed) => warn(&format!(
                "the OTLP receiver at {} did not take {count} spans ({error}); the run goes on, and later losses are counted",
                self.lost.endpoint
            )),
            Err(_) => {}
        }
        sent
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// Spans sent to an OTLP receiver.
pub struct Exporter {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    lost: Arc<Lost>,
    deferred: Arc<Deferred>,
}

impl Exporter {
    /// The exporter `--otlp ENDPOINT` asks for, else the one
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` names, else none. The endpoint is the
    /// receiver's base URL; spans go to its `/v1/traces` (a URL ending so
    /// is taken as it is).
    ///
    /// # Errors
    ///
    /// [`OtlpError`] when the endpoint is not an `http://` URL the exporter
    /// can use.
    pub fn new(endpoint: Option<&str>) -> Result<Option<Self>, OtlpError> {
        let from_env = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").ok();
        let Some((endpoint, from)) = endpoint
            .map(|given| (given.to_owned(), "--otlp"))
            .or(from_env.map(|given| (given, "OTEL_EXPORTER_OTLP_ENDPOINT")))
            .filter(|(endpoint, _)| !endpoint.trim().is_empty())
        else {
            return Ok(None);
        };
        let refused = |reason: String| OtlpError {
            endpoint: endpoint.clone(),
            from,
            reason,
        };
        if !endpoint.starts_with("http://") {
            return Err(refused(
                "only http:// is sent (OTLP over HTTP with protobuf, no TLS in this build)"
                    .to_owned(),
            ));
        }
        let traces = if endpoint.trim_end_matches('/').ends_with("/v1/traces") {
            endpoint.clone()
        } else {
            format!("{}/v1/traces", endpoint.trim_end_matches('/'))
        };
        let inner = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(traces.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|error| refused(error.to_string()))?;
        let lost = Arc::new(Lost {
            ended: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            said: AtomicBool::new(false),
            endpoint: traces,
        });
        let service = std::env::var("OTEL_SERVICE_NAME")
            .ok()
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| SERVICE.to_owned());
        let deferred = Arc::new(Deferred::default());
        let batch = BatchSpanProcessor::builder(Counting {
            inner,
            lost: Arc::clone(&lost),
            deferred: Arc::clone(&deferred),
        })
        .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(Tally {
                inner: batch,
                lost: Arc::clone(&lost),
            })
            .with_resource(Resource::builder().with_service_name(service).build())
            .build();
        let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "skillgraph");
        Ok(Some(Exporter {
            provider,
            tracer,
            lost,
            deferred,
        }))
    }

    /// What `serve` makes its spans with, for clients over stdio or HTTP.
    pub(crate) fn serving(&self, over_stdio: bool) -> Tracing {
        Tracing::new(self.tracer.clone(), Arc::clone(&self.deferred), over_stdio)
    }

    /// A trace of one `play` session, fed its events as they come.
    pub fn play(&self) -> PlayTrace<'_> {
        let run = self.tracer.start("skillgraph run");
        PlayTrace {
            tracer: &self.tracer,
            map: Arc::new(DeclaredMap {
                skills: Vec::new(),
                entries: Vec::new(),
                routes: Vec::new(),
                start: None,
            }),
            run: Context::new().with_span(run),
            turn: None,
            turns: 0,
            iteration: None,
        }
    }

    /// Send what is left and stop; the spans lost on the way, if any, are
    /// said on standard error.
    pub fn shut_down(self) {
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
        let ended = self.lost.ended.load(Ordering::Relaxed);
        let lost = ended.saturating_sub(self.lost.taken.load(Ordering::Relaxed));
        if lost > 0 {
            warn(&format!(
                "{lost} spans were not taken by the OTLP receiver at {}",
                self.lost.endpoint
            ));
        }
    }
}

/// One `play` session's spans, made as its events come: the run's span,
/// a span per turn under it, and a span per iteration under its turn,
/// ended at the iteration's move with its facts.
pub struct PlayTrace<'e> {
    tracer: &'e SdkTracer,
    map: Arc<DeclaredMap>,
    run: Context,
    turn: Option<Context>,
    /// Turns begun so far.
    turns: i64,
    /// The iteration being gathered: its number, its span, its events.
    iteration: Option<(u64, Context, Vec<Event>)>,
}

impl PlayTrace<'_> {
    /// Take the session's new `events`.
    pub fn events(&mut self, events: &[Event]) {
        for event in events {
            match event {
                Event::Start(start) => {
                    self.map = Arc::clone(&start.map);
                    let span = self.run.span();
                    span.set_attribute(KeyValue::new(trace::POSTURE, start.posture.as_str()));
                    span.set_attribute(KeyValue::new(trace::CALL_POLICY, start.tools.as_str()));
                }
                Event::Turn(turn) => {
                    self.end_iteration();
                    if let Some(earlier) = self.turn.take() {
                        earlier.span().end();
                    }
                    self.turns += 1;
                    let attributes = trace::turn_attributes(self.turns, turn);
                    let span = self
                        .tracer
                        .span_builder("skillgraph turn")
                        .with_attributes(attributes.into_iter().map(key_value))
                        .start_with_context(self.tracer, &self.run);
                    self.turn = Some(self.run.with_span(span));
                }
                other => {
                    let at = other.iteration();
                    if self.iteration.as_ref().is_some_and(|(n, _, _)| *n != at) {
                        self.end_iteration();
                    }
                    if self.iteration.is_none() {
                        let parent = self.turn.as_ref().unwrap_or(&self.run);
                        let span = self
                            .tracer
                            .span_builder("skillgraph iteration")
                            .start_with_context(self.tracer, parent);
                        self.iteration = Some((at, parent.with_span(span), Vec::new()));
                    }
                    if let Some((_, _, gathered)) = self.iteration.as_mut() {
                        gathered.push(other.clone());
                    }
                    // A rule's move opens its iteration; only another ends it.
                    if matches!(other, Event::Move(moved) if moved.by != MoveBy::Rule) {
                        self.end_iteration();
                    }
                }
            }
        }
    }

    /// End the iteration being gathered, with its facts.
    fn end_iteration(&mut self) {
        let Some((_, context, events)) = self.iteration.take() else {
            return;
        };
        let span = context.span();
        put_facts(&span, trace::facts(&events, &self.map));
        span.end();
    }

    /// End every span: the session is over.
    pub fn finish(mut self) {
        self.end_iteration();
        if let Some(turn) = self.turn.take() {
            turn.span().end();
        }
        self.run.span().end();
    }
}

/// Put `facts` on `span`: its attributes, and an event for each of its
/// events.
fn put_facts(span: &opentelemetry::trace::SpanRef<'_>, facts: trace::Facts) {
    for attribute in facts.attributes {
        span.set_attribute(key_value(attribute));
    }
    for event in facts.events {
        span.add_event(
            event.name,
            event.attributes.into_iter().map(key_value).collect(),
        );
    }
}

/// A span's attribute from one of [`skill_explain::trace`]'s.
fn key_value((key, value): Attribute) -> KeyValue {
    let value = match value {
        Value::String(text) => opentelemetry::Value::String(text.into()),
        Value::Int(n) => opentelemetry::Value::I64(n),
        Value::Bool(b) => opentelemetry::Value::Bool(b),
        Value::Strings(texts) => opentelemetry::Value::Array(opentelemetry::Array::String(
            texts.into_iter().map(StringValue::from).collect(),
        )),
        Value::Bools(values) => opentelemetry::Value::Array(opentelemetry::Array::Bool(values)),
    };
    KeyValue::new(key, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_wait_for_at_most_max_deferred_spans_the_oldest_forgotten_first() {
        let deferred = Deferred::default();
        let map = Arc::new(DeclaredMap {
            skills: Vec::new(),
            entries: Vec::new(),
            routes: Vec::new(),
            start: None,
        });
        let total = MAX_DEFERRED + 10;
        for n in 1..=total {
            let id = SpanId::from_bytes(u64::try_from(n).unwrap_or(u64::MAX).to_be_bytes());
            assert!(deferred.defer(id, &[], &map));
        }
        let waiting = deferred.pending.lock().expect("not poisoned");
        assert_eq!(waiting.by_span.len(), MAX_DEFERRED);
        assert!(
            !waiting
                .by_span
                .contains_key(&SpanId::from_bytes(1u64.to_be_bytes()))
        );
        let last = u64::try_from(total).unwrap_or(u64::MAX);
        assert!(
            waiting
                .by_span
                .contains_key(&SpanId::from_bytes(last.to_be_bytes()))
        );
    }
}
