//! A span's facts made on the export thread, off the answering path: a
//! driver hands over the events its step added to the run's record
//! (shared, not copied), and the exporter turns them into the span's
//! attributes and events before it sends the span.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use opentelemetry::trace::{SpanId, SpanRef};
use opentelemetry_sdk::trace::SpanData;
use skillgraph::skill_explain::trace;
use skillgraph::skill_session::{DeclaredMap, Event};

use crate::attributes::{key_value, put_facts};

/// The most spans whose facts wait for their export at once; past it, the
/// oldest waiting is forgotten (a span the batch queue had no room for is
/// never exported, so its facts would wait for ever).
const MAX_DEFERRED: usize = 4096;

/// The run's facts of a span, waiting for the span's export: the events a
/// step added to the run's record and the run's declared map.
struct Pending {
    events: Vec<Arc<Event>>,
    map: Arc<DeclaredMap>,
}

/// Where the run's facts of an [`Exporter`](crate::Exporter)'s spans wait
/// for the spans' export, at most 4,096 spans' at once (the oldest
/// forgotten first); [`Exporter::deferred`](crate::Exporter::deferred)
/// gives it.
pub struct Deferred {
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
    /// Nothing waiting.
    pub(crate) fn new() -> Self {
        Deferred {
            pending: Mutex::new(Waiting::default()),
        }
    }

    /// Give `span`, one of the exporter's spans, the run's facts that
    /// `events` (what a step added to the run's record) say on `map`, by
    /// [`trace::facts`]: made on the export thread when the span is sent,
    /// and here, at once, only when they cannot be kept until then.
    pub fn put(&self, span: &SpanRef<'_>, events: &[Arc<Event>], map: &Arc<DeclaredMap>) {
        if !self.defer(span.span_context().span_id(), events, map) {
            put_facts(span, trace::facts(events.iter().map(|e| &**e), map));
        }
    }

    /// Keep `events` for the span `span`, to be made into its facts when it
    /// is exported; `false` when they cannot be kept (the caller makes the
    /// facts itself).
    fn defer(&self, span: SpanId, events: &[Arc<Event>], map: &Arc<DeclaredMap>) -> bool {
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
    pub(crate) fn expand(&self, batch: &mut [SpanData]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_wait_for_at_most_max_deferred_spans_the_oldest_forgotten_first() {
        let deferred = Deferred::new();
        let map = Arc::new(DeclaredMap {
            skills: Vec::new(),
            entries: Vec::new(),
            routes: Vec::new(),
            start: None,
            roles: Default::default(),
            budget: None,
            escalation: None,
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
