//! Counting the spans no receiver took: each span handed to the batch
//! processor is counted where it ends, each one a receiver took where it is
//! exported, and the first failed export is said on standard error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanData, SpanExporter, SpanProcessor};

use crate::deferred::Deferred;
use crate::warn;

/// What became of the spans: how many ended, how many a receiver took,
/// and whether a loss was said.
#[derive(Debug)]
pub(crate) struct Lost {
    /// Spans ended, each handed to the batch processor.
    ended: AtomicUsize,
    /// Spans a receiver took.
    taken: AtomicUsize,
    said: AtomicBool,
    /// Where the spans go: the receiver's `/v1/traces`.
    pub(crate) endpoint: String,
}

impl Lost {
    /// Nothing lost yet on the way to `endpoint`.
    pub(crate) fn new(endpoint: String) -> Self {
        Lost {
            ended: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            said: AtomicBool::new(false),
            endpoint,
        }
    }

    /// The spans ended that no receiver took.
    pub(crate) fn count(&self) -> usize {
        let ended = self.ended.load(Ordering::Relaxed);
        ended.saturating_sub(self.taken.load(Ordering::Relaxed))
    }
}

/// The batch processor, counting the spans handed to it: one its queue
/// had no room for is dropped there, unseen by the exporter, and still
/// counts as lost.
#[derive(Debug)]
pub(crate) struct Tally {
    pub(crate) inner: BatchSpanProcessor,
    pub(crate) lost: Arc<Lost>,
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

/// The OTLP exporter, counting what it fails to send, and putting each
/// span's deferred facts on it first.
#[derive(Debug)]
pub(crate) struct Counting {
    pub(crate) inner: opentelemetry_otlp::SpanExporter,
    pub(crate) lost: Arc<Lost>,
    pub(crate) deferred: Arc<Deferred>,
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
