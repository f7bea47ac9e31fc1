//! The order an upstream's messages came in, kept across rmcp's tasks, and
//! how many of them are handled at once.
//!
//! rmcp hands each notification to its handler on a task of its own and a
//! response straight to the request that waits for it, so a log line or a
//! progress notification an upstream sent *before* its answer can be
//! handled *after* the answer has reached the client, when the call is no
//! longer running: the log line would go to no client (over HTTP) and the
//! progress would be lost. SPEC §9.5 passes them on, so the order is kept
//! here: [`InOrder`] numbers each such notification as it is read from the
//! transport, its handler marks the number done ([`Handling`]), and a call
//! that has its answer waits ([`Arrivals::settled`]) until every one read
//! before the answer is done.
//!
//! A task per message is memory that nothing bounds: an upstream that
//! writes faster than its messages reach the client would have rmcp hold
//! every one it read, each in a task of its own (SPEC §9.7: 200,000
//! notifications must leave serve under 256 MB). So [`InOrder`] hands rmcp
//! a message that gets a task (a request, or a notification for a handler)
//! only while fewer than [`MAX_HANDLING`] of the link's are being handled;
//! the next one waits until a handler ends, and the upstream, no longer
//! read, waits too: everything is relayed, with backpressure.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{GetExtensions, GetMeta, JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

/// How long a call that has its answer waits for the notifications read
/// before it. Handling one is passing it to the client's transport (a
/// write over stdio, a channel over HTTP); a handler that takes longer
/// costs its own notification's place in the order, and at most this wait
/// a call.
pub(crate) const SETTLE_WAIT: Duration = Duration::from_secs(2);

/// The most messages of one link that rmcp handles at once, each on a task
/// of its own; the next waits, unread by rmcp, until one of them ends.
pub(crate) const MAX_HANDLING: usize = 64;

/// The numbered notifications of one link, and how far they are handled.
#[derive(Debug)]
pub(crate) struct Arrivals {
    /// The number of the last notification read.
    arrived: AtomicU64,
    /// Numbers handled out of order, above `through`.
    ahead: Mutex<BTreeSet<u64>>,
    /// Every notification up to this number is handled.
    through: watch::Sender<u64>,
}

impl Default for Arrivals {
    fn default() -> Self {
        Arrivals {
            arrived: AtomicU64::new(0),
            ahead: Mutex::new(BTreeSet::new()),
            through: watch::Sender::new(0),
        }
    }
}

/// The number a notification was given when it was read.
#[derive(Debug, Clone, Copy)]
struct Arrival(u64);

impl Arrivals {
    fn arrive(&self) -> Arrival {
        Arrival(self.arrived.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// Mark `number` handled.
    fn done(&self, number: u64) {
        let Ok(mut ahead) = self.ahead.lock() else {
            return;
        };
        let mut through = *self.through.borrow();
        if number <= through {
            // Given up on already by a call that stopped waiting.
            return;
        }
        ahead.insert(number);
        while ahead.remove(&(through + 1)) {
            through += 1;
        }
        self.through.send_if_modified(|now| {
            let moved = through > *now;
            *now = (*now).max(through);
            moved
        });
    }

    /// Wait until every notification read so far is handled, for at most
    /// `within` ([`SETTLE_WAIT`] for a call). When that passes, the ones
    /// still not handled are given up, so one stuck handler delays one call,
    /// not every later one.
    pub(crate) async fn settled(&self, within: Duration) {
        let target = self.arrived.load(Ordering::SeqCst);
        let mut through = self.through.subscribe();
        let waited = tokio::time::timeout(within, through.wait_for(|now| *now >= target));
        if !matches!(waited.await, Ok(Ok(_)))
            && let Ok(mut ahead) = self.ahead.lock()
        {
            ahead.retain(|number| *number > target);
            self.through.send_if_modified(|now| {
                let moved = target > *now;
                *now = (*now).max(target);
                moved
            });
        }
    }

    /// The handling of a notification, marked done when dropped: `None`
    /// for one that was not numbered.
    pub(crate) fn handling<'a>(&'a self, extensions: &rmcp::model::Extensions) -> Handling<'a> {
        Handling {
            arrivals: self,
            number: extensions.get::<Arrival>().map(|arrival| arrival.0),
        }
    }
}

/// While it lives, a numbered notification is being handled.
pub(crate) struct Handling<'a> {
    arrivals: &'a Arrivals,
    number: Option<u64>,
}

impl Drop for Handling<'_> {
    fn drop(&mut self) {
        if let Some(number) = self.number {
            self.arrivals.done(number);
        }
    }
}

/// A handler's place among the [`MAX_HANDLING`] of its link: it rides in
/// the extensions of the message it handles, which rmcp moves into the
/// handler's context, and is given back when the handler ends.
#[derive(Debug, Clone)]
struct Place {
    /// Held while the handler runs; given back when the last clone goes.
    _permit: Arc<OwnedSemaphorePermit>,
}

/// A transport that numbers, as they are read, the notifications a call
/// sends before its answer (progress and log messages) so their handlers
/// can keep their order against the answer; and that hands rmcp a message
/// it handles on a task of its own only when the link has a [`Place`] for
/// its handler.
pub(crate) struct InOrder<T> {
    inner: T,
    arrivals: Arc<Arrivals>,
    /// Whether the handshake's answer has been read: rmcp drops what comes
    /// before it, so nothing before it is numbered or waits.
    started: bool,
    /// The places of the link's handlers.
    places: Arc<Semaphore>,
    /// A message read that waits for a place; kept here when rmcp stops
    /// waiting for it (it polls `receive` in a `select!`), so that the
    /// next `receive` goes on with it.
    waiting: Option<RxJsonRpcMessage<RoleClient>>,
}

impl<T> InOrder<T> {
    /// `inner`, its notifications numbered in `arrivals`.
    pub(crate) fn new(inner: T, arrivals: Arc<Arrivals>) -> Self {
        InOrder {
            inner,
            arrivals,
            started: false,
            places: Arc::new(Semaphore::new(MAX_HANDLING)),
            waiting: None,
        }
    }
}

/// Whether rmcp hands `message` to a handler on a task of its own: a
/// request, or a notification that is not for a `subscriptions/listen`
/// stream (rmcp gives those to the stream, whose buffer is bounded).
fn gets_a_task(message: &RxJsonRpcMessage<RoleClient>) -> bool {
    match message {
        JsonRpcMessage::Request(_) => true,
        JsonRpcMessage::Notification(notification) => notification
            .notification
            .get_meta()
            .subscription_id()
            .is_none(),
        _ => false,
    }
}

/// Put `place` in the extensions of `message`, which rmcp moves into the
/// context of its handler.
fn give_place(message: &mut RxJsonRpcMessage<RoleClient>, place: Place) {
    match message {
        JsonRpcMessage::Request(request) => {
            request.request.extensions_mut().insert(place);
        }
        JsonRpcMessage::Notification(notification) => {
            notification.notification.extensions_mut().insert(place);
        }
        _ => {}
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = match self.waiting.take() {
            Some(message) => message,
            None => {
                let read = self.inner.receive().await?;
                let message = self.number(read);
                if !(self.started && gets_a_task(&message)) {
                    return Some(message);
                }
                message
            }
        };
        // Kept while it waits: a cancelled wait loses nothing.
        self.waiting = Some(message);
        let Ok(place) = Arc::clone(&self.places).acquire_owned().await else {
            // The places are never closed; were they, nothing would wait.
            return self.waiting.take();
        };
        let mut message = self.waiting.take()?;
        give_place(
            &mut message,
            Place {
                _permit: Arc::new(place),
            },
        );
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

impl<T> InOrder<T> {
    /// `message`, read from the link: a progress or log notification
    /// numbered once the handshake is answered.
    fn number(
        &mut self,
        mut message: RxJsonRpcMessage<RoleClient>,
    ) -> RxJsonRpcMessage<RoleClient> {
        if matches!(
            message,
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_)
        ) {
            self.started = true;
        }
        if !self.started {
            return message;
        }
        if let JsonRpcMessage::Notification(notification) = &mut message {
            let notification = &mut notification.notification;
            // rmcp gives a notification of a `subscriptions/listen` stream
            // to that stream, never to a handler: it is not numbered.
            let handled = matches!(
                notification,
                ServerNotification::ProgressNotification(_)
                    | ServerNotification::LoggingMessageNotification(_)
            ) && notification.get_meta().subscription_id().is_none();
            if handled {
                let arrival = self.arrivals.arrive();
                notification.extensions_mut().insert(arrival);
            }
        }
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn settled_waits_for_every_notification_read_before_it() {
        let arrivals = std::sync::Arc::new(Arrivals::default());
        let first = arrivals.arrive();
        let second = arrivals.arrive();
        let mut extensions = rmcp::model::Extensions::new();
        extensions.insert(second);
        // The later one is handled first: the order is not yet whole.
        drop(arrivals.handling(&extensions));
        assert_eq!(*arrivals.through.borrow(), 0);
        let waiting = {
            let arrivals = arrivals.clone();
            tokio::spawn(async move { arrivals.settled(SETTLE_WAIT).await })
        };
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        let mut extensions = rmcp::model::Extensions::new();
        extensions.insert(first);
        drop(arrivals.handling(&extensions));
        assert_eq!(*arrivals.through.borrow(), 2);
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("settled returns once both are handled")
            .expect("the task ran");
    }

    #[tokio::test]
    async fn a_notification_never_handled_is_given_up_after_the_wait() {
        let arrivals = Arrivals::default();
        let _lost = arrivals.arrive();
        arrivals.settled(Duration::from_millis(10)).await;
        assert_eq!(*arrivals.through.borrow(), 1);
        // The next call does not wait for it again.
        let next = arrivals.arrive();
        let mut extensions = rmcp::model::Extensions::new();
        extensions.insert(next);
        drop(arrivals.handling(&extensions));
        tokio::time::timeout(Duration::from_millis(1), arrivals.settled(SETTLE_WAIT))
            .await
            .expect("nothing is left to wait for");
    }

    /// A link that has `messages` to read, and then nothing more.
    struct Canned(std::collections::VecDeque<RxJsonRpcMessage<RoleClient>>);

    impl Transport<RoleClient> for Canned {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            match self.0.pop_front() {
                Some(message) => Some(message),
                None => std::future::pending().await,
            }
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn at_most_max_handling_messages_are_handled_at_once() {
        let mut messages = std::collections::VecDeque::new();
        // The handshake's answer: what follows it is handled.
        messages.push_back(JsonRpcMessage::response(
            rmcp::model::ServerResult::empty(()),
            rmcp::model::RequestId::Number(0),
        ));
        for _ in 0..=MAX_HANDLING {
            messages.push_back(JsonRpcMessage::notification(
                ServerNotification::ToolListChangedNotification(Default::default()),
            ));
        }
        let mut link = InOrder::new(Canned(messages), Arc::new(Arrivals::default()));
        assert!(link.receive().await.is_some(), "the answer");
        let mut handled = Vec::new();
        for _ in 0..MAX_HANDLING {
            handled.push(link.receive().await.expect("a notification"));
        }
        let next = tokio::spawn(async move { link.receive().await.is_some() });
        tokio::task::yield_now().await;
        assert!(!next.is_finished(), "the next one waits for a place");
        handled.pop();
        assert!(
            tokio::time::timeout(Duration::from_secs(10), next)
                .await
                .expect("a place is free")
                .expect("the task ran"),
            "the one that waited is handed on"
        );
    }

    #[test]
    fn an_unnumbered_notification_marks_nothing() {
        let arrivals = Arrivals::default();
        let _one = arrivals.arrive();
        drop(arrivals.handling(&rmcp::model::Extensions::new()));
        assert_eq!(*arrivals.through.borrow(), 0);
    }
}
