//! OpenTelemetry export for skillgraph (SPEC §11): a run's spans over
//! OTLP/HTTP with protobuf to `--otlp URL` or the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT`, named for `OTEL_SERVICE_NAME` (default
//! `skillgraph`), for `skillgraph play` and `skillgraph serve` alike.
//!
//! `skillgraph-otlp` owns the [`Exporter`] and what it needs: the batch
//! processor, which sends from a thread of its own, so export never delays
//! or fails a step; the count of what is lost on the way (a failed
//! export's spans, or those a full queue had no room for), the first
//! failure said on standard error and the number of spans no receiver took
//! said when the exporter shuts down; [`PlayTrace`], `play`'s span per run,
//! per turn and per iteration with the facts of
//! [`skill_explain::trace`](skillgraph::skill_explain::trace); and
//! [`Deferred`], where a span's facts wait to be made on the export thread,
//! off the answering path. A driver that makes spans of its own (the MCP
//! server, a span per request) starts them with [`Exporter::tracer`] and
//! gives them the run's facts through [`Exporter::deferred`].
//!
//! It must never decide anything about a run: every fact a span carries is
//! one the record holds, as `skill_explain::trace` reads it. And it never
//! touches MCP (no rmcp, no tokio): the MCP semantic conventions and
//! `serve`'s span per request are `skillgraph-mcp`'s.
//!
//! The key design decision: export is a crate of its own, beside the
//! server rather than in it (SPEC §9.10), so that `play` exports without
//! building an MCP server, and the server's decision path holds no
//! exporter.
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//! use skillgraph::skill_session::{Graph, Posture, Session};
//! use skillgraph_otlp::Exporter;
//!
//! let map = skillgraph::load(Path::new("examples/support-desk"))?.map;
//! let mut session = Session::new(Arc::new(Graph::new(map)?), Posture::Assist, Vec::new());
//! if let Some(exporter) = Exporter::new(Some("http://127.0.0.1:4318"))? {
//!     let mut trace = exporter.play();
//!     session.begin_turn("refund order 4412", None);
//!     session.end_iteration();
//!     trace.events(&session.take_events());
//!     trace.finish();
//!     exporter.shut_down();
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod attributes;
mod deferred;
mod lost;
mod play;

use std::io::Write as _;
use std::sync::Arc;
use std::time::Duration;

use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SdkTracer, SdkTracerProvider};

pub use deferred::Deferred;
use lost::{Counting, Lost, Tally};
pub use play::PlayTrace;

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
        let lost = Arc::new(Lost::new(traces));
        let service = std::env::var("OTEL_SERVICE_NAME")
            .ok()
            .filter(|name| !name.trim().is_empty())
            .unwrap_or_else(|| SERVICE.to_owned());
        let deferred = Arc::new(Deferred::new());
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

    /// The tracer of this exporter: a span it starts is exported when it
    /// ends. For a driver's own spans, such as the MCP server's span per
    /// request; `play`'s are [`Exporter::play`]'s.
    pub fn tracer(&self) -> &SdkTracer {
        &self.tracer
    }

    /// Where the run's facts of this exporter's spans wait to be made on
    /// the export thread (see [`Deferred::put`]).
    pub fn deferred(&self) -> Arc<Deferred> {
        Arc::clone(&self.deferred)
    }

    /// A trace of one `play` session, fed its events as they come.
    pub fn play(&self) -> PlayTrace<'_> {
        PlayTrace::new(&self.tracer)
    }

    /// Send what is left and stop; the spans lost on the way, if any, are
    /// said on standard error.
    pub fn shut_down(self) {
        let _ = self.provider.force_flush();
        let _ = self.provider.shutdown();
        let lost = self.lost.count();
        if lost > 0 {
            warn(&format!(
                "{lost} spans were not taken by the OTLP receiver at {}",
                self.lost.endpoint
            ));
        }
    }
}

/// A line on standard error, prefixed with `skillgraph serve:` (`play`'s
/// exporter says its lines so too). Standard error may be a pipe whose
/// reader has gone: the line is then lost, never a panic (as `eprintln!`
/// would).
fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "skillgraph serve: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_that_is_not_http_is_refused_by_its_code() {
        let Err(refused) = Exporter::new(Some("grpc://127.0.0.1:4317")) else {
            panic!("a grpc:// endpoint is refused");
        };
        assert_eq!(refused.code(), "otlp-endpoint");
        assert_eq!(refused.from, "--otlp");
        assert!(
            refused.to_string().contains("give an http:// URL"),
            "{refused}"
        );
    }
}
