//! `play`'s spans (SPEC §11): a span per run, a span per turn under it,
//! and a span per iteration under its turn, made as the session's events
//! come, each iteration's ended at its move with its facts.

use std::sync::Arc;

use opentelemetry::trace::{TraceContextExt, Tracer as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::SdkTracer;
use skillgraph::skill_explain::trace;
use skillgraph::skill_session::{DeclaredMap, Event, MoveBy};

use crate::attributes::{key_value, put_facts};

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

impl<'e> PlayTrace<'e> {
    /// The run's span begun by `tracer`, before any event.
    pub(crate) fn new(tracer: &'e SdkTracer) -> Self {
        let run = tracer.start("skillgraph run");
        PlayTrace {
            tracer,
            map: Arc::new(DeclaredMap {
                skills: Vec::new(),
                entries: Vec::new(),
                routes: Vec::new(),
                start: None,
                roles: Default::default(),
                budget: None,
                escalation: None,
            }),
            run: Context::new().with_span(run),
            turn: None,
            turns: 0,
            iteration: None,
        }
    }

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
