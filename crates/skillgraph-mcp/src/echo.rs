//! The echo bound (SPEC §9.7, §9.10): no answer repeats more than
//! [`MAX_ECHO`] characters of what a client sent, on any path — a method
//! name, a tool or prompt name, a URI, an id, and an upstream's error
//! message that quotes them. Every answer that names a client's string goes
//! through [`shown`]; every message that may quote one (an upstream's, a
//! parser's) through [`cut`] or [`bounded`].

use std::borrow::Cow;

use rmcp::ErrorData;

/// The most characters of a client's input an answer repeats.
pub(crate) const MAX_ECHO: usize = 256;

/// The first [`MAX_ECHO`] characters of `text` (all of it when shorter).
pub(crate) fn prefix(text: &str) -> &str {
    match text.char_indices().nth(MAX_ECHO) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// `"text"`, quoted and escaped, or its length when it is too long to
/// repeat (`one of N bytes`).
pub(crate) fn shown(text: &str) -> String {
    if text.chars().count() > MAX_ECHO {
        format!("one of {} bytes", text.len())
    } else {
        format!("\"{}\"", text.escape_debug())
    }
}

/// `text` as it is when it is at most [`MAX_ECHO`] characters long; else
/// its first [`MAX_ECHO`] characters, saying how long it was.
pub(crate) fn cut(text: &str) -> Cow<'_, str> {
    let kept = prefix(text);
    if kept.len() == text.len() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{kept}… (cut: {} bytes in all)", text.len()))
    }
}

/// The most bytes of an upstream error's `data` relayed as it is: room for
/// the structured data errors carry (the capabilities a request needed, the
/// elicitations a URL error asks for), not for a quoted request.
pub(crate) const MAX_ERROR_DATA: usize = 4_096;

/// `error` with its message [`cut`], and its `data` left out when it is
/// longer than [`MAX_ERROR_DATA`] as JSON (the message then says so): how
/// an upstream's MCP error, which may quote the request in either, is
/// relayed to the client.
pub(crate) fn bounded(mut error: ErrorData) -> ErrorData {
    if let Cow::Owned(shorter) = cut(&error.message) {
        error.message = Cow::Owned(shorter);
    }
    let data_bytes = error.data.as_ref().map_or(0, |data| data.to_string().len());
    if data_bytes > MAX_ERROR_DATA {
        error.data = None;
        error.message = Cow::Owned(format!(
            "{} (its data, {data_bytes} bytes, was left out)",
            error.message
        ));
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_repeated_and_a_long_one_is_not() {
        assert_eq!(shown("lookup_order"), "\"lookup_order\"");
        assert_eq!(shown(&"x".repeat(MAX_ECHO)).len(), MAX_ECHO + 2);
        assert_eq!(shown(&"x".repeat(5_000)), "one of 5000 bytes");
    }

    #[test]
    fn a_long_message_keeps_its_beginning_and_says_how_long_it_was() {
        assert!(matches!(cut("short"), Cow::Borrowed("short")));
        let long = "é".repeat(MAX_ECHO + 5);
        let shorter = cut(&long);
        assert!(shorter.starts_with(&"é".repeat(MAX_ECHO)), "{shorter}");
        assert!(!shorter.starts_with(&"é".repeat(MAX_ECHO + 1)), "{shorter}");
        assert!(shorter.ends_with("(cut: 522 bytes in all)"), "{shorter}");
        assert_eq!(prefix(&long).chars().count(), MAX_ECHO);
    }

    #[test]
    fn an_upstream_errors_long_data_is_left_out_and_short_data_kept() {
        let quoting = ErrorData::invalid_params(
            "Unknown resource",
            Some(serde_json::json!({ "uri": "u".repeat(5_000_000) })),
        );
        let relayed = bounded(quoting);
        assert_eq!(relayed.data, None);
        assert!(
            relayed.message.ends_with("bytes, was left out)"),
            "{}",
            relayed.message
        );
        let needs = serde_json::json!({ "requiredCapabilities": { "sampling": {} } });
        let kept = bounded(ErrorData::invalid_params(
            "needs sampling",
            Some(needs.clone()),
        ));
        assert_eq!(kept.data, Some(needs));
    }

    #[test]
    fn an_upstream_error_is_relayed_with_its_message_cut() {
        let quoted = ErrorData::resource_not_found(format!("no {}", "u".repeat(5_000_000)), None);
        let relayed = bounded(quoted);
        assert!(relayed.message.len() < 2 * MAX_ECHO, "{}", relayed.message);
        assert_eq!(relayed.code, ErrorData::resource_not_found("", None).code);
    }
}
