//! Strict HTTP (SPEC §9.8): what the front refuses before rmcp sees a
//! request. Two `Host` headers are 400; an absolute-form target whose host
//! is not allowed is 400; a body under `application/json` that is not JSON
//! is 400 with a JSON-RPC `-32700`; an id longer than 256 characters is
//! `-32600` with a null id, never echoed.
//!
//! A body is read here once, cheaply: [`peek`] walks it without building
//! it (no map, no copy of a key or a value but the method and the tool
//! name), to check it and to tell whether it would start a run.

use std::borrow::Cow;
use std::fmt;

use http::{HeaderMap, Uri, header};
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::echo::{MAX_ECHO, shown};

/// Why a request is refused before rmcp sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Two or more `Host` headers.
    TwoHosts,
    /// An absolute-form target whose host is not among the allowed ones.
    TargetHost,
    /// A body under `application/json` that is not JSON: the reader's
    /// reason.
    NotJson(String),
    /// A JSON-RPC id of this many characters, more than [`MAX_ECHO`].
    LongId(usize),
    /// An `Mcp-Param-Skillgraph-Run` header that is not the call's
    /// `skillgraph_run` argument (SPEC §14.6): a balancer routed on one
    /// run while the body names another, or none.
    RunHeader,
}

impl Refused {
    /// The JSON-RPC error code of a refused body; `None` for a refused head.
    pub(crate) fn code(&self) -> Option<i64> {
        match self {
            Refused::TwoHosts | Refused::TargetHost => None,
            Refused::NotJson(_) => Some(-32700),
            Refused::LongId(_) => Some(-32600),
            Refused::RunHeader => Some(-32020),
        }
    }

    /// What the client is told.
    pub(crate) fn message(&self) -> String {
        match self {
            Refused::TwoHosts => {
                "Bad Request: the request has two Host headers; send one".to_owned()
            }
            Refused::TargetHost => {
                "Bad Request: the request target names a host this server does not answer for (--allowed-host); send the path alone, /mcp".to_owned()
            }
            Refused::NotJson(reason) => format!(
                "Parse error: the body is not JSON ({}); send one JSON-RPC message as JSON",
                shown(reason)
            ),
            Refused::LongId(length) => format!(
                "Invalid Request: the id is {length} characters long, and an id may have at most {MAX_ECHO}; send a shorter id"
            ),
            Refused::RunHeader => format!(
                "Header mismatch: the {RUN_HEADER} header is not the call's skillgraph_run argument; send the same handle in both, or neither"
            ),
        }
    }
}

/// The header a conforming client mirrors a call's `skillgraph_run` into
/// (its `x-mcp-header`, SPEC §14.6).
pub(crate) const RUN_HEADER: &str = "Mcp-Param-Skillgraph-Run";

/// Whether the body `peek` saw and the `Mcp-Param-Skillgraph-Run` header
/// of `headers` disagree: a `tools/call` with the header whose
/// `skillgraph_run` is not the header's value (a header value in SEP-2243's
/// `=?base64?…?=` form is decoded first). A request without the header
/// agrees: the header is the balancer's, never needed.
pub(crate) fn run_header(peek: &Peek<'_>, headers: &HeaderMap) -> Result<(), Refused> {
    let mut values = headers.get_all(RUN_HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(());
    };
    if values.next().is_some() || peek.method.as_deref() != Some("tools/call") {
        return Err(Refused::RunHeader);
    }
    let raw = value.to_str().map_err(|_| Refused::RunHeader)?;
    let decoded = match raw
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| Refused::RunHeader)?;
            String::from_utf8(bytes).map_err(|_| Refused::RunHeader)?
        }
        None => raw.to_owned(),
    };
    if peek.run.as_deref() == Some(decoded.as_str()) {
        Ok(())
    } else {
        Err(Refused::RunHeader)
    }
}

/// Check a request's head: one `Host`, and an absolute-form target's host
/// among `allowed` (the `--allowed-host` names or `host:port`
/// authorities; an empty list allows every host).
pub(crate) fn head(uri: &Uri, headers: &HeaderMap, allowed: &[String]) -> Result<(), Refused> {
    if headers.get_all(header::HOST).iter().nth(1).is_some() {
        return Err(Refused::TwoHosts);
    }
    if let Some(authority) = uri.authority()
        && !allowed.is_empty()
        && !allowed
            .iter()
            .any(|allowed| authority_allowed(authority, allowed))
    {
        return Err(Refused::TargetHost);
    }
    Ok(())
}

/// Whether `authority` is the `allowed` host (any port) or authority.
fn authority_allowed(authority: &http::uri::Authority, allowed: &str) -> bool {
    let Ok(allowed) = http::uri::Authority::try_from(allowed.trim()) else {
        return false;
    };
    let host = |authority: &http::uri::Authority| {
        authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase()
    };
    host(authority) == host(&allowed)
        && allowed
            .port_u16()
            .is_none_or(|port| authority.port_u16() == Some(port))
}

/// Whether a request's `Content-Type` is JSON's, which its body must then
/// be.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| {
            let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case("application/json")
        })
}

/// What the front needs of a JSON-RPC message: its method, and for a
/// `tools/call` the tool's name and whether a run handle is given.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Peek<'a> {
    /// The method, when it is a string.
    pub(crate) method: Option<Cow<'a, str>>,
    /// `params.name`, when it is a string.
    pub(crate) name: Option<Cow<'a, str>>,
    /// Whether `params.arguments` has `skillgraph_run`.
    pub(crate) run_given: bool,
    /// `params.arguments.skillgraph_run`, when it is a string.
    pub(crate) run: Option<Cow<'a, str>>,
    /// Where `params.arguments` lies in the body, when it is an object.
    pub(crate) arguments: Option<std::ops::Range<usize>>,
    /// `params.arguments`'s text, until [`peek`] places it.
    arguments_text: Option<&'a str>,
    /// The id's length in characters (a string's; a number's digits).
    id_length: usize,
}

/// Read `body` as strict HTTP asks: `Err` when it is not JSON, or its id
/// is too long to answer with.
pub(crate) fn peek(body: &[u8]) -> Result<Peek<'_>, Refused> {
    let mut peek: Peek<'_> =
        serde_json::from_slice(body).map_err(|err| Refused::NotJson(err.to_string()))?;
    if peek.id_length > MAX_ECHO {
        return Err(Refused::LongId(peek.id_length));
    }
    peek.arguments = peek.arguments_text.take().and_then(|text| {
        // The text is a slice of `body`: its place is its distance from
        // the body's start.
        let start = (text.as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
        let end = start.checked_add(text.len())?;
        (end <= body.len() && text.starts_with('{')).then_some(start..end)
    });
    Ok(peek)
}

/// The answer to a refused body: a JSON-RPC error with a null id.
pub(crate) fn answer(refused: &Refused) -> Option<String> {
    let code = refused.code()?;
    serde_json::to_string(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": refused.message()},
    }))
    .ok()
}

/// A visitor that takes any JSON value and keeps what `T` keeps of a map
/// (`T::default()` for anything else).
struct Any<T>(std::marker::PhantomData<T>);

/// What [`Any`] builds from a map.
trait FromMap<'de>: Default {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
}

macro_rules! ignore_scalars {
    ($($visit:ident: $ty:ty),*) => {
        $(fn $visit<E: de::Error>(self, _: $ty) -> Result<T, E> {
            Ok(T::default())
        })*
    };
}

impl<'de, T: FromMap<'de>> Visitor<'de> for Any<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any JSON value")
    }

    ignore_scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(T::default())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

fn any<'de, D: Deserializer<'de>, T: FromMap<'de>>(deserializer: D) -> Result<T, D::Error> {
    deserializer.deserialize_any(Any(std::marker::PhantomData))
}

impl<'de: 'a, 'a> Deserialize<'de> for Peek<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        any(deserializer)
    }
}

impl<'de: 'a, 'a> FromMap<'de> for Peek<'a> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut peek = Peek::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "id" => peek.id_length = map.next_value::<IdLength>()?.0,
                "method" => peek.method = map.next_value::<Text<'de>>()?.0,
                "params" => {
                    let params = map.next_value::<Params<'de>>()?;
                    peek.name = params.name;
                    peek.run_given = params.run_given;
                    peek.run = params.run;
                    peek.arguments_text = params.arguments;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(peek)
    }
}

/// `params` as far as [`Peek`] needs it.
#[derive(Default)]
struct Params<'a> {
    name: Option<Cow<'a, str>>,
    run_given: bool,
    run: Option<Cow<'a, str>>,
    arguments: Option<&'a str>,
}

impl<'de: 'a, 'a> Deserialize<'de> for Params<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        any(deserializer)
    }
}

impl<'de: 'a, 'a> FromMap<'de> for Params<'a> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut params = Params::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "name" => params.name = map.next_value::<Text<'de>>()?.0,
                "arguments" => {
                    let raw = map.next_value::<&'de serde_json::value::RawValue>()?;
                    let given = serde_json::from_str::<RunGiven<'de>>(raw.get())
                        .map_err(de::Error::custom)?;
                    params.run_given = given.given;
                    params.run = given.run;
                    params.arguments = Some(raw.get());
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(params)
    }
}

/// Whether `arguments` has `skillgraph_run`, and its value when it is a
/// string.
#[derive(Default)]
struct RunGiven<'a> {
    given: bool,
    run: Option<Cow<'a, str>>,
}

impl<'de: 'a, 'a> Deserialize<'de> for RunGiven<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        any(deserializer)
    }
}

impl<'de: 'a, 'a> FromMap<'de> for RunGiven<'a> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        let mut given = RunGiven::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if key == crate::runs::RUN_ARGUMENT {
                given.given = true;
                given.run = map.next_value::<Text<'de>>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(given)
    }
}

/// A string, kept; anything else, walked and dropped.
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(text)))
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(text)))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        }
        Ok(Text(deserializer.deserialize_any(Visit)?))
    }
}

/// An id's length in characters: a string's, or a number's digits.
struct IdLength(usize);

impl<'de> Deserialize<'de> for IdLength {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Text::deserialize(deserializer)?;
        Ok(IdLength(text.0.map_or(0, |text| text.chars().count())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        headers
    }

    #[test]
    fn two_hosts_and_a_foreign_absolute_target_are_refused() {
        let allowed = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let one = headers(&[("host", "localhost")]);
        let two = headers(&[("host", "localhost"), ("host", "evil.example")]);
        let path: Uri = "/mcp".parse().unwrap();
        assert_eq!(head(&path, &one, &allowed), Ok(()));
        assert_eq!(head(&path, &two, &allowed), Err(Refused::TwoHosts));
        let foreign: Uri = "http://evil.example/mcp".parse().unwrap();
        assert_eq!(head(&foreign, &one, &allowed), Err(Refused::TargetHost));
        let own: Uri = "http://127.0.0.1:8080/mcp".parse().unwrap();
        assert_eq!(head(&own, &one, &allowed), Ok(()));
        let ported = vec!["localhost:9".to_owned()];
        let other_port: Uri = "http://localhost:8/mcp".parse().unwrap();
        assert_eq!(head(&other_port, &one, &ported), Err(Refused::TargetHost));
    }

    #[test]
    fn a_body_is_peeked_without_being_built() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{"a":[1,{"b":2}],"skillgraph_run":"run_x"}}}"#;
        let peek = peek(call).unwrap();
        assert_eq!(peek.method.as_deref(), Some("tools/call"));
        assert_eq!(peek.name.as_deref(), Some("lookup"));
        assert!(peek.run_given);
        assert_eq!(peek.run.as_deref(), Some("run_x"));
        let mut headers = HeaderMap::new();
        assert_eq!(run_header(&peek, &headers), Ok(()), "no header agrees");
        headers.insert(RUN_HEADER, http::HeaderValue::from_static("run_x"));
        assert_eq!(run_header(&peek, &headers), Ok(()));
        headers.insert(
            RUN_HEADER,
            http::HeaderValue::from_static("=?base64?cnVuX3g=?="),
        );
        assert_eq!(run_header(&peek, &headers), Ok(()), "base64, decoded");
        headers.insert(RUN_HEADER, http::HeaderValue::from_static("run_y"));
        assert_eq!(run_header(&peek, &headers), Err(Refused::RunHeader));
        let unnamed =
            super::peek(br#"{"method":"tools/call","params":{"name":"x","arguments":{}}}"#)
                .unwrap();
        assert_eq!(
            run_header(&unnamed, &headers),
            Err(Refused::RunHeader),
            "a header for no handle"
        );
        let arguments = peek.arguments.clone().unwrap();
        assert_eq!(
            &call[arguments],
            br#"{"a":[1,{"b":2}],"skillgraph_run":"run_x"}"#
        );
        let odd = br#"{"id":{"x":1},"method":7,"params":[1,2],"extra":null}"#;
        assert_eq!(super::peek(odd).unwrap().method, None);
        assert!(
            super::peek(b"[1, 2]").is_ok(),
            "a batch is rmcp's to answer"
        );
        assert!(super::peek(b"\"text\"").is_ok());
        let escaped = br#"{"method":"tools\/call","params":{"name":"a\u0062"}}"#;
        let peek = super::peek(escaped).unwrap();
        assert_eq!(peek.method.as_deref(), Some("tools/call"));
        assert_eq!(peek.name.as_deref(), Some("ab"));
    }

    #[test]
    fn a_body_that_is_not_json_or_has_a_long_id_is_refused_with_a_null_id() {
        let refused = peek(b"{not json").unwrap_err();
        assert_eq!(refused.code(), Some(-32700));
        let answer: serde_json::Value =
            serde_json::from_str(&super::answer(&refused).unwrap()).unwrap();
        assert_eq!(answer["id"], serde_json::Value::Null);
        assert_eq!(answer["error"]["code"], -32700);
        assert!(peek(&[0xff, 0xfe]).is_err());
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
            "x".repeat(3000)
        );
        let refused = peek(long.as_bytes()).unwrap_err();
        assert_eq!(refused, Refused::LongId(3000));
        let answer = super::answer(&refused).unwrap();
        assert!(answer.len() < 400, "the id is not echoed: {answer}");
        let fits = format!(r#"{{"id":"{}","method":"ping"}}"#, "é".repeat(256));
        assert!(peek(fits.as_bytes()).is_ok(), "256 characters fit");
    }
}
