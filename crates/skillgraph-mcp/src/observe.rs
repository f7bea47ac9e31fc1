//! What `skillgraph serve` observes of an upstream answer (SPEC §9): the
//! text the model reads and the status the answer itself declares. Nothing
//! is inferred: an answer that declares no status has none.

use std::fmt;

use rmcp::model::CallToolResult;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use skillgraph::skill_core::{ResultStatus, ToolResult};

/// The tool result the session routes on, for `tool_name`'s `answer`: its
/// text content blocks joined by newlines (with none, `structuredContent`
/// as JSON text); status `failure` when the answer is an error, else its own
/// top-level `status` field when that is one of the closed statuses.
pub(crate) fn observe(tool_name: &str, answer: &CallToolResult) -> ToolResult {
    let texts: Vec<&str> = answer
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .map(|text| text.text.as_str())
        .collect();
    let result = match (texts.is_empty(), &answer.structured_content) {
        (true, Some(structured)) => structured.to_string(),
        _ => texts.join("\n"),
    };
    let status = if answer.is_error == Some(true) {
        Some(ResultStatus::Failure.as_str().to_owned())
    } else {
        declared_status(&result).map(str::to_owned)
    };
    ToolResult {
        tool_name: tool_name.to_owned(),
        result,
        status,
    }
}

/// The `status` field at the top level of `text`, when `text` is a JSON
/// object and the field is one of the closed statuses.
fn declared_status(text: &str) -> Option<&'static str> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let found = reader.deserialize_map(StatusField).ok()?;
    reader.end().ok()?;
    found
}

/// Reads a JSON object, keeping only its `status` string (the last one, as
/// `JSON.parse` keeps the last of a repeated key).
struct StatusField;

impl<'de> Visitor<'de> for StatusField {
    type Value = Option<&'static str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut status = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "status" {
                let value: serde_json::Value = map.next_value()?;
                status = value
                    .as_str()
                    .and_then(ResultStatus::parse)
                    .map(ResultStatus::as_str);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(status)
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;
    use serde_json::json;

    use super::*;

    fn answer(texts: &[&str]) -> CallToolResult {
        CallToolResult::success(texts.iter().map(|t| ContentBlock::text(*t)).collect())
    }

    #[test]
    fn the_status_is_only_what_the_answer_declares() {
        let seen = observe(
            "lookup_order",
            &answer(&[r#"{"status":"success","amount":240}"#]),
        );
        assert_eq!(seen.status.as_deref(), Some("success"));
        assert_eq!(seen.result, r#"{"status":"success","amount":240}"#);
        for text in [
            r#"{"amount":240}"#,
            r#"{"status":"fine"}"#,
            r#"{"status":1}"#,
            r#"["status","success"]"#,
            r#"{"status":"success"} trailing"#,
            "not json",
            r#"{"inner":{"status":"success"}}"#,
        ] {
            assert_eq!(observe("t", &answer(&[text])).status, None, "{text}");
        }
        let repeated = observe("t", &answer(&[r#"{"status":"success","status":"denied"}"#]));
        assert_eq!(repeated.status.as_deref(), Some("denied"));
    }

    #[test]
    fn an_error_answer_is_a_failure_whatever_it_says() {
        let mut failed = answer(&[r#"{"status":"success"}"#]);
        failed.is_error = Some(true);
        assert_eq!(observe("t", &failed).status.as_deref(), Some("failure"));
    }

    #[test]
    fn text_blocks_are_joined_and_structured_content_is_the_fallback() {
        assert_eq!(observe("t", &answer(&["a", "b"])).result, "a\nb");
        let mut structured = answer(&[]);
        structured.structured_content = Some(json!({"status": "partial", "n": 1}));
        let seen = observe("t", &structured);
        assert_eq!(seen.result, r#"{"status":"partial","n":1}"#);
        assert_eq!(seen.status.as_deref(), Some("partial"));
    }
}
