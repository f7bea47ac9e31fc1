//! The client capabilities a request needs (SPEC §9.7): on the sessionless
//! generation a client declares its capabilities with each request, and a
//! request that needs one it did not declare (an upstream's sampling,
//! elicitation or roots request during the call) is refused with `-32021`,
//! naming the capability, as the 2026-07-28 revision requires.

use std::collections::BTreeSet;

use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, ErrorCode, InputRequest, InputRequests, JsonObject};
use serde_json::Value;

use crate::echo::shown;

/// The most capabilities an upstream's `-32021` is relayed with, and the
/// longest name of one.
const MAX_NAMED: usize = 16;
const MAX_NAME: usize = 64;

/// The capability a client needs to fulfil `input`, by its name in
/// `ClientCapabilities`; `None` for a kind serve does not know.
fn needed_by(input: &InputRequest) -> Option<&'static str> {
    match input {
        InputRequest::CreateMessage(_) => Some("sampling"),
        InputRequest::Elicitation(_) => Some("elicitation"),
        InputRequest::ListRoots(_) => Some("roots"),
        _ => None,
    }
}

/// Whether `declared` holds the capability `name`.
pub(crate) fn declares(declared: &ClientCapabilities, name: &str) -> bool {
    match name {
        "sampling" => declared.sampling.is_some(),
        "elicitation" => declared.elicitation.is_some(),
        "roots" => declared.roots.is_some(),
        _ => false,
    }
}

/// The capabilities `inputs` need that `declared` (what the request's
/// `_meta` declared; `None`: nothing) does not hold, by name.
pub(crate) fn undeclared(
    inputs: Option<&InputRequests>,
    declared: Option<&ClientCapabilities>,
) -> BTreeSet<&'static str> {
    inputs
        .into_iter()
        .flat_map(|inputs| inputs.values())
        .filter_map(needed_by)
        .filter(|name| !declared.is_some_and(|declared| declares(declared, name)))
        .collect()
}

/// The `-32021` refusal of a request whose upstream `server` needs the
/// capabilities `required` (each an entry of `ClientCapabilities`) that the
/// client did not declare.
pub(crate) fn refusal(server: &str, required: JsonObject) -> ErrorData {
    let names: Vec<&str> = required.keys().map(String::as_str).collect();
    ErrorData::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "upstream server {} needs the client's {} capability, which this request did not declare in its _meta (io.modelcontextprotocol/clientCapabilities); declare it to make this request",
            shown(server),
            names.join(" and ")
        ),
        Some(serde_json::json!({ "requiredCapabilities": required })),
    )
}

/// The `-32021` refusal for the capabilities named in `names`.
pub(crate) fn refusal_of(server: &str, names: &BTreeSet<&'static str>) -> ErrorData {
    let required = names
        .iter()
        .map(|name| ((*name).to_owned(), Value::Object(JsonObject::new())))
        .collect();
    refusal(server, required)
}

/// An upstream's own `-32021` (`error`), relayed with the capabilities it
/// names, at most [`MAX_NAMED`] of them, each name bounded.
pub(crate) fn relayed(server: &str, error: &ErrorData) -> ErrorData {
    let required = error
        .data
        .as_ref()
        .and_then(|data| data.get("requiredCapabilities"))
        .and_then(Value::as_object)
        .map(|named| {
            named
                .iter()
                .filter(|(name, _)| name.len() <= MAX_NAME)
                .take(MAX_NAMED)
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default();
    refusal(server, required)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(value: Value) -> InputRequests {
        serde_json::from_value(value).expect("input requests")
    }

    #[test]
    fn an_input_the_client_did_not_declare_is_named() {
        let asked = inputs(serde_json::json!({
            "who": {"method": "sampling/createMessage", "params": {
                "messages": [], "maxTokens": 10}},
            "where": {"method": "roots/list", "params": {}}
        }));
        let declared: ClientCapabilities =
            serde_json::from_value(serde_json::json!({"roots": {}})).expect("capabilities");
        let missing = undeclared(Some(&asked), Some(&declared));
        assert_eq!(missing.into_iter().collect::<Vec<_>>(), ["sampling"]);
        assert_eq!(undeclared(Some(&asked), None).len(), 2);
        assert!(undeclared(None, None).is_empty());
    }

    #[test]
    fn a_refusal_names_the_capability_as_an_object() {
        let refused = refusal_of("up", &BTreeSet::from(["sampling"]));
        assert_eq!(refused.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert!(refused.message.contains("sampling"), "{}", refused.message);
        let data = refused.data.expect("data");
        assert_eq!(
            data["requiredCapabilities"],
            serde_json::json!({"sampling": {}})
        );
    }

    #[test]
    fn an_upstreams_refusal_is_relayed_bounded() {
        let long = "x".repeat(1_000);
        let upstream = ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            long.clone(),
            Some(serde_json::json!({"requiredCapabilities": {"sampling": {}, long.clone(): {}}})),
        );
        let relayed = relayed("up", &upstream);
        assert!(relayed.message.len() < 400, "{}", relayed.message);
        assert_eq!(
            relayed.data.expect("data")["requiredCapabilities"],
            serde_json::json!({"sampling": {}})
        );
    }
}
