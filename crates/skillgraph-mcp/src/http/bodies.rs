//! Request and answer bodies at the front door (SPEC §9.8): a request's
//! body read whole within `--body-timeout` of its head and `--max-body`,
//! then handed to rmcp as a [`Turn`] that holds its share of the parsing
//! bound until rmcp has parsed it; and an answer's body that keeps a guard
//! while it streams.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Limited, combinators::BoxBody};
use hyper::body::{Body, Frame, Incoming, SizeHint};
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
        let weight = self.weight(bytes.len());
        let permit = match Arc::clone(&self.permits).try_acquire_many_owned(weight) {
            Ok(permit) => Some(permit),
            Err(_) => {
                waited();
                Arc::clone(&self.permits)
                    .acquire_many_owned(weight)
                    .await
                    .ok()
            }
        };
        Turn {
            bytes: Some(bytes),
            _permit: permit,
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
