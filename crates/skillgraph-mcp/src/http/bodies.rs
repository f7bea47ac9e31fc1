//! Request and answer bodies at the front door (SPEC §9.8): a request's
//! body read whole within `--body-timeout` of its head and `--max-body`,
//! then handed to rmcp as a [`Turn`] that holds its share of the parsing
//! bound until rmcp has parsed it; and an answer's body that keeps a guard
//! while it streams.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Limited, combinators::BoxBody};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use rmcp::model::JsonObject;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// An answer's body.
pub(super) type Answer = BoxBody<Bytes, Infallible>;

/// Why a body was not read.
#[derive(Debug)]
pub(super) enum Unread {
    /// Longer than `--max-body` (413).
    TooLarge,
    /// Not sent whole in time (408).
    TooSlow,
    /// The connection failed while it was sent.
    Broken(String),
}

/// Read `body` whole: at most `max` bytes, within `time`.
pub(super) async fn read(
    headers: &HeaderMap,
    body: Incoming,
    max: usize,
    time: Duration,
) -> Result<Bytes, Unread> {
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if declared.is_some_and(|length| length > u64::try_from(max).unwrap_or(u64::MAX)) {
        return Err(Unread::TooLarge);
    }
    match tokio::time::timeout(time, Limited::new(body, max).collect()).await {
        Err(_) => Err(Unread::TooSlow),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => Err(Unread::TooLarge),
        Ok(Err(err)) => Err(Unread::Broken(err.to_string())),
    }
}

/// The bound on parsing: at most [`PARSING`](super::PARSING) bodies at
/// once, and at most `--max-body` bytes of them, a body weighing its share
/// of the bound by its size.
#[derive(Debug)]
pub(super) struct Parsing {
    permits: Arc<Semaphore>,
    max_body: usize,
}

impl Parsing {
    /// The bound for bodies of at most `max_body` bytes.
    pub(super) fn new(max_body: usize) -> Self {
        Parsing {
            permits: Arc::new(Semaphore::new(super::PARSING)),
            max_body: max_body.max(1),
        }
    }

    /// `bytes` as a body rmcp parses in its turn: waits while the bound is
    /// taken. `waited` is called when it had to wait.
    pub(super) async fn turn(&self, bytes: Bytes, waited: impl FnOnce()) -> Turn {
        let permit = self.permit(bytes.len(), waited).await;
        Turn {
            bytes: Some(bytes),
            _permit: permit,
        }
    }

    /// `body` with the arguments at `arguments` held back from rmcp: rmcp
    /// parses the rest, with `{}` in their place, and the gateway parses
    /// them once, straight into the map a call carries
    /// ([`HeldArguments::take`]), in the body's turn. rmcp's own parse of
    /// a message buffers each value of it before it builds it: about 50
    /// bytes of memory per byte of a body of small keys.
    pub(super) async fn turn_holding(
        &self,
        body: Bytes,
        arguments: std::ops::Range<usize>,
        waited: impl FnOnce(),
    ) -> (Turn, HeldArguments) {
        let permit = self.permit(body.len(), waited).await;
        let held = body.slice(arguments.clone());
        let mut rest = Vec::with_capacity(body.len() - held.len() + 2);
        rest.extend_from_slice(&body[..arguments.start]);
        rest.extend_from_slice(b"{}");
        rest.extend_from_slice(&body[arguments.end..]);
        let turn = Turn {
            bytes: Some(Bytes::from(rest)),
            _permit: None,
        };
        let held = HeldArguments(Arc::new(Mutex::new(Some(Held {
            text: held,
            _permit: permit,
        }))));
        (turn, held)
    }

    /// This body's share of the bound, once it is free.
    async fn permit(&self, length: usize, waited: impl FnOnce()) -> Option<OwnedSemaphorePermit> {
        let weight = self.weight(length);
        match Arc::clone(&self.permits).try_acquire_many_owned(weight) {
            Ok(permit) => Some(permit),
            Err(_) => {
                waited();
                Arc::clone(&self.permits)
                    .acquire_many_owned(weight)
                    .await
                    .ok()
            }
        }
    }

    /// A body's share of the bound: an eighth of it per eighth of
    /// `--max-body`, at least one.
    fn weight(&self, length: usize) -> u32 {
        let slots = super::PARSING;
        let eighths = length.saturating_mul(slots).div_ceil(self.max_body);
        u32::try_from(eighths.clamp(1, slots)).unwrap_or(1)
    }
}

/// A `tools/call`'s arguments held back from rmcp (see
/// [`Parsing::turn_holding`]), riding in the request's extensions to the
/// gateway.
#[derive(Clone)]
pub(crate) struct HeldArguments(Arc<Mutex<Option<Held>>>);

/// The arguments' text, and the body's share of the parsing bound.
struct Held {
    text: Bytes,
    _permit: Option<OwnedSemaphorePermit>,
}

impl HeldArguments {
    /// The arguments, parsed (once: `None` after the first time); the
    /// body's share of the parsing bound is given back when they are.
    pub(crate) fn take(&self) -> Option<Result<JsonObject, String>> {
        let held = self.0.lock().ok()?.take()?;
        Some(serde_json::from_slice(&held.text).map_err(|err| err.to_string()))
    }
}

/// A request body as rmcp gets it: the bytes read, then the end. rmcp
/// drops the body it read when it has parsed it (its `expect_json` keeps
/// the body until its `serde_json::from_slice` returns), so the permit
/// held here is given back then, and a parse's passing peak of memory is
/// what the bound bounds.
#[derive(Debug)]
pub(super) struct Turn {
    bytes: Option<Bytes>,
    _permit: Option<OwnedSemaphorePermit>,
}

impl Turn {
    /// A body with nothing to parse.
    pub(super) fn empty() -> Self {
        Turn {
            bytes: None,
            _permit: None,
        }
    }
}

impl Body for Turn {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(
            self.get_mut()
                .bytes
                .take()
                .map(|bytes| Ok(Frame::data(bytes))),
        )
    }

    fn is_end_stream(&self) -> bool {
        self.bytes.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        let length = self.bytes.as_ref().map_or(0, Bytes::len);
        SizeHint::with_exact(u64::try_from(length).unwrap_or(u64::MAX))
    }
}

/// An answer's body that keeps `G` while it streams: dropped with the last
/// byte sent, or the answer abandoned.
pub(super) struct Guarded<G> {
    pub(super) body: Answer,
    pub(super) _guard: G,
}

impl<G: Send + Sync + Unpin + 'static> Guarded<G> {
    /// `body`, keeping `guard` while it streams.
    pub(super) fn boxed(body: Answer, guard: G) -> Answer {
        Guarded {
            body,
            _guard: guard,
        }
        .boxed()
    }
}

impl<G: Unpin> Body for Guarded<G> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_weighs_its_share_of_the_bound_by_its_size() {
        let parsing = Parsing::new(4 * 1024 * 1024);
        assert_eq!(parsing.weight(0), 1);
        assert_eq!(parsing.weight(1_000), 1);
        assert_eq!(parsing.weight(512 * 1024), 1);
        assert_eq!(parsing.weight(512 * 1024 + 1), 2);
        assert_eq!(parsing.weight(4 * 1024 * 1024), 8);
    }

    #[tokio::test]
    async fn held_arguments_leave_rmcp_a_small_body_and_are_parsed_once() {
        let parsing = Parsing::new(1024);
        let body = Bytes::from_static(br#"{"params":{"name":"t","arguments":{"a":1}}}"#);
        let start = body.len() - 9;
        let (mut turn, held) = parsing.turn_holding(body, start..start + 7, || {}).await;
        let frame = std::future::poll_fn(|cx| Pin::new(&mut turn).poll_frame(cx)).await;
        let rest = frame.unwrap().unwrap().into_data().unwrap();
        assert_eq!(rest, r#"{"params":{"name":"t","arguments":{}}}"#);
        let waiting = tokio::time::timeout(Duration::from_millis(20), parsing.permit(1024, || {}));
        assert!(
            waiting.await.is_err(),
            "the held arguments keep the body's share"
        );
        let parsed = held.take().unwrap().unwrap();
        assert_eq!(parsed["a"], 1);
        assert!(held.take().is_none(), "parsed once");
        assert!(parsing.permit(1024, || {}).await.is_some());
    }

    #[tokio::test]
    async fn the_permit_is_held_until_the_body_is_dropped() {
        let parsing = Parsing::new(8);
        let whole = parsing.turn(Bytes::from_static(b"12345678"), || {}).await;
        let mut waited = false;
        let waiting = tokio::time::timeout(
            Duration::from_millis(50),
            parsing.turn(Bytes::from_static(b"1"), || waited = true),
        )
        .await;
        assert!(waiting.is_err(), "the bound is taken by the first body");
        assert!(waited, "the wait is said");
        drop(whole);
        let mut turn = parsing.turn(Bytes::from_static(b"1"), || {}).await;
        let frame = std::future::poll_fn(|cx| Pin::new(&mut turn).poll_frame(cx)).await;
        assert_eq!(frame.unwrap().unwrap().into_data().unwrap(), "1");
        assert!(turn.is_end_stream());
    }
}
