//! The run's facts as OpenTelemetry sees them: each of
//! [`skill_explain::trace`](skillgraph::skill_explain::trace)'s attributes
//! as a `KeyValue`, and facts put on a live span.

use opentelemetry::trace::SpanRef;
use opentelemetry::{KeyValue, StringValue};
use skillgraph::skill_explain::trace::{self, Attribute, Value};

/// Put `facts` on `span`: its attributes, and an event for each of its
/// events.
pub(crate) fn put_facts(span: &SpanRef<'_>, facts: trace::Facts) {
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
///
/// [`skill_explain::trace`]: skillgraph::skill_explain::trace
pub(crate) fn key_value((key, value): Attribute) -> KeyValue {
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
