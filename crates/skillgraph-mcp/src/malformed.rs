//! The answer to a client's request that rmcp could not type (SPEC §9.7).
//! rmcp reads a request whose params do not fit its method (a `tools/call`
//! whose `name` is not a string) as a custom request of that method, which
//! a handler would answer "method not found", naming the method in full. A
//! known method with malformed params is `-32602` instead, saying what does
//! not fit; a method name too long to repeat is `-32601` without it.

// Log levels and resource subscriptions are deprecated by a revision after
// 2026-07-28 (SEP-2577) and are still requests a client may send.
#![allow(deprecated)]

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CancelTaskRequest, CompleteRequest, ConstString, CustomRequest,
    DiscoverRequest, ErrorCode, GetPromptRequest, GetSkillRequest, GetTaskRequest,
    InitializeRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListSkillsRequest, ListToolsRequest, PingRequest, ReadResourceDirectoryRequest,
    ReadResourceRequest, Request, RequestNoParam, RequestOptionalParam, SetLevelRequest,
    SubscribeRequest, SubscriptionsListenRequest, UnsubscribeRequest, UpdateTaskRequest,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::echo::{MAX_ECHO, cut, shown};

/// A request type of rmcp's, by the method it is read for.
trait Method {
    /// The method.
    const NAME: &'static str;
}

impl<M: ConstString, P> Method for Request<M, P> {
    const NAME: &'static str = M::VALUE;
}

impl<M: ConstString, P> Method for RequestOptionalParam<M, P> {
    const NAME: &'static str = M::VALUE;
}

impl<M: ConstString> Method for RequestNoParam<M> {
    const NAME: &'static str = M::VALUE;
}

/// Why a request (`{"method": …, "params": …}`) is not one of a known
/// method's; `None` when it is one.
type Misfit = fn(&Value) -> Option<serde_json::Error>;

/// Why `request` is not a `T`; `None` when it is one.
fn misfit<T: DeserializeOwned>(request: &Value) -> Option<serde_json::Error> {
    T::deserialize(request).err()
}

/// The method of `T`, and why a request is not a `T`.
const fn known<T: Method + DeserializeOwned>() -> (&'static str, Misfit) {
    (T::NAME, misfit::<T>)
}

/// Every request method a client sends that rmcp reads into a type of its
/// own: the typed requests of rmcp's `ClientRequest`.
const KNOWN: [(&str, Misfit); 21] = [
    known::<PingRequest>(),
    known::<InitializeRequest>(),
    known::<DiscoverRequest>(),
    known::<CompleteRequest>(),
    known::<SetLevelRequest>(),
    known::<GetPromptRequest>(),
    known::<ListPromptsRequest>(),
    known::<ListResourcesRequest>(),
    known::<ListResourceTemplatesRequest>(),
    known::<ReadResourceRequest>(),
    known::<SubscriptionsListenRequest>(),
    known::<SubscribeRequest>(),
    known::<UnsubscribeRequest>(),
    known::<CallToolRequest>(),
    known::<ListToolsRequest>(),
    known::<GetTaskRequest>(),
    known::<UpdateTaskRequest>(),
    known::<CancelTaskRequest>(),
    known::<ListSkillsRequest>(),
    known::<GetSkillRequest>(),
    known::<ReadResourceDirectoryRequest>(),
];

/// The error that answers `request`, which rmcp read as a custom request:
/// `-32602` for a known method whose params do not fit it, saying why;
/// `-32601` for a method name too long to repeat. `None` for any other
/// method, which the server's handler answers, naming it (it is short
/// enough to).
pub(crate) fn refusal(request: &CustomRequest) -> Option<ErrorData> {
    let method = request.method.as_str();
    if let Some((_, misfit)) = KNOWN.iter().find(|(name, _)| *name == method) {
        let mut body = Map::new();
        body.insert("method".to_owned(), Value::String(method.to_owned()));
        if let Some(params) = &request.params {
            body.insert("params".to_owned(), params.clone());
        }
        // Params that fit a known method rmcp still read as custom: a
        // method this generation does not serve (the 2026-07-28 revision
        // removed `initialize`, `ping`, `logging/setLevel`, subscriptions),
        // which the handler answers as not found (`-32601`, HTTP 404).
        let error = misfit(&Value::Object(body))?;
        return Some(ErrorData::invalid_params(
            format!(
                "the params of this {method} request do not fit {method}: {}; send them as the MCP schema gives them",
                cut(&error.to_string())
            ),
            None,
        ));
    }
    (method.chars().count() > MAX_ECHO).then(|| {
        ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "this server has no method {}; the methods are MCP's",
                shown(method)
            ),
            None,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn custom(method: &str, params: Value) -> CustomRequest {
        CustomRequest::new(method, Some(params))
    }

    #[test]
    fn a_known_method_with_malformed_params_is_invalid_params() {
        let refused = refusal(&custom("tools/call", serde_json::json!({"name": 42})))
            .expect("tools/call is known");
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
        assert!(
            refused.message.contains("tools/call") && refused.message.contains("42"),
            "{}",
            refused.message
        );
        let refused = refusal(&custom("resources/read", serde_json::json!({"uri": 7})))
            .expect("resources/read is known");
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn an_unknown_method_is_left_to_the_handler_unless_too_long_to_repeat() {
        assert!(refusal(&custom("vendor/thing", Value::Null)).is_none());
        let long = "m".repeat(5_000_000);
        let refused = refusal(&custom(&long, Value::Null)).expect("too long to repeat");
        assert_eq!(refused.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(refused.message.len() < 100, "{}", refused.message);
    }

    #[test]
    fn what_does_not_fit_is_never_repeated_at_length() {
        let huge = "u".repeat(5_000_000);
        let refused = refusal(&custom(
            "logging/setLevel",
            serde_json::json!({"level": huge}),
        ))
        .expect("logging/setLevel is known");
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
        assert!(refused.message.len() < 2 * MAX_ECHO, "{}", refused.message);
    }

    #[test]
    fn a_known_method_whose_params_fit_is_left_to_the_handler() {
        // The 2026-07-28 revision removed these: a sessionless `ping` or
        // `initialize` is a method not found (`-32601`, HTTP 404), not a
        // malformed one.
        assert!(refusal(&custom("ping", serde_json::json!({}))).is_none());
        let hello = serde_json::json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "c", "version": "1"}
        });
        assert!(refusal(&custom("initialize", hello)).is_none());
    }

    #[test]
    fn every_known_method_is_named_once() {
        let mut names: Vec<&str> = KNOWN.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), KNOWN.len());
        assert!(names.contains(&"tools/call") && names.contains(&"initialize"));
    }
}
