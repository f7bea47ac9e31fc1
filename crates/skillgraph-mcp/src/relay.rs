//! What passes between the clients and the upstream servers without the
//! run (SPEC §9.5): an upstream's progress reaches the client under the
//! client's own progress token; its log messages reach the client whose
//! call they came during; its resource updates reach the clients that
//! subscribed to the resource; its sampling, elicitation and roots requests
//! go to the client when the client declared the capability, and the
//! client's answer comes back. `serve` never answers in the user's place:
//! an upstream whose request no client can take gets an error saying so,
//! never a decline.
//!
//! Which client: progress goes to the client whose call carries the token
//! (tokens are told apart per upstream connection, a link). An upstream's
//! other messages name no call (over stdio nothing ties a sampling request
//! or a log line to the call it came from), so they go to the one client
//! whose calls are running on that link, tied to its latest call (over
//! HTTP, they ride that call's response stream). With no call running
//! there, a call answered less than [`LATE`] ago still counts: an upstream
//! over HTTP may send a call's log lines on a stream of their own, read
//! after the answer. Over stdio there is one client, so with no call
//! running they go to it. Over HTTP, with no call running there or with
//! calls of several clients there, a
//! request is refused and a log line goes to serve's standard error: one
//! user's upstream never asks another user, and never tells another user
//! what it logged. What a call sent before its answer reaches the client
//! before the answer does (see `arrival`).

// Sampling, roots and logging are deprecated by a revision after 2026-07-28
// (SEP-2577) and are still what the handshake generation's clients and
// servers use; SPEC §9.5 relays them.
#![allow(deprecated)]

mod arrival;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientResult, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ErrorCode, GetExtensions, Implementation, InputRequest, InputRequests,
    InputResponses, ListRootsRequest, ListRootsResult, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, RequestId, ResourceUpdatedNotificationParam,
    ServerRequest,
};
use rmcp::service::{NotificationContext, OriginatingRequestId, Peer, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer};

pub(crate) use self::arrival::{Arrivals, InOrder, SETTLE_WAIT};
use crate::echo::shown;
use crate::warn_raw;

/// How long after its answer a call still counts as the one an upstream's
/// log line or request is for.
pub(crate) const LATE: Duration = Duration::from_millis(500);

/// The clients as the upstream servers reach them, shared by every
/// upstream.
#[derive(Clone, Default)]
pub(crate) struct Relay {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Whether the server has one client only (over stdio).
    solo: bool,
    /// Over stdio, the client and its latest request.
    latest: Mutex<Option<Caller>>,
    /// Upstream link → the client calls running on it, or answered less
    /// than [`LATE`] ago.
    calls: Mutex<HashMap<u64, Vec<Call>>>,
    /// The number of the next call.
    next_call: AtomicU64,
    /// The number of the next upstream link.
    next_link: AtomicU64,
    /// Resource URI → the clients subscribed to it.
    subscribers: Mutex<HashMap<String, Vec<Caller>>>,
    /// An upstream call's link and progress token → the client's token for
    /// the same call and that client, while the call runs.
    progress: Mutex<HashMap<(u64, ProgressToken), ClientProgress>>,
}

/// A client's progress token for a call, and the client.
type ClientProgress = (ProgressToken, Peer<RoleServer>);

/// A client's call on an upstream link.
struct Call {
    /// Its number, which tells it apart.
    number: u64,
    caller: Caller,
    /// When it was answered; `None` while it runs.
    ended: Option<Instant>,
}

/// The clients of `calls`.
fn callers(calls: &[&Call]) -> Vec<Caller> {
    calls.iter().map(|call| call.caller.clone()).collect()
}

/// Forget the calls of `calls` answered [`LATE`] or longer ago.
fn forget_ended(calls: &mut HashMap<u64, Vec<Call>>, now: Instant) {
    calls.retain(|_, on_link| {
        on_link.retain(|call| call.ended.is_none_or(|ended| now - ended < LATE));
        !on_link.is_empty()
    });
}

/// A client connection, and the request of it being served.
#[derive(Clone)]
pub(crate) struct Caller {
    peer: Peer<RoleServer>,
    request: RequestId,
    /// The connection's number: one per stdio connection, HTTP session or
    /// sessionless request.
    connection: u64,
    /// Whether the client speaks the sessionless generation, which takes
    /// no request from a server.
    sessionless: bool,
    /// What a sessionless client declared with the request it is making.
    declared_now: Option<ClientCapabilities>,
    /// The capabilities an upstream asked a sessionless client for during
    /// this request that it did not declare, by name (SPEC §9.7).
    missing: Arc<Mutex<BTreeSet<&'static str>>>,
}

impl Caller {
    /// The request `request` of the client `peer` on connection number
    /// `connection`, of the sessionless generation or not.
    pub(crate) fn new(
        peer: &Peer<RoleServer>,
        request: &RequestId,
        connection: u64,
        sessionless: bool,
    ) -> Self {
        Caller {
            peer: peer.clone(),
            request: request.clone(),
            connection,
            sessionless,
            declared_now: None,
            missing: Arc::default(),
        }
    }

    /// The same request, whose client declared `capabilities` with it (the
    /// sessionless generation's way).
    pub(crate) fn declaring(mut self, capabilities: Option<ClientCapabilities>) -> Self {
        self.declared_now = capabilities;
        self
    }

    /// What a sessionless client declared with the request it is making.
    pub(crate) fn declared_now(&self) -> Option<&ClientCapabilities> {
        self.declared_now.as_ref()
    }

    /// The capabilities an upstream asked this sessionless request's client
    /// for that it did not declare, by name; empty when none.
    pub(crate) fn missing(&self) -> BTreeSet<&'static str> {
        self.missing
            .lock()
            .map(|missing| missing.clone())
            .unwrap_or_default()
    }

    /// Whether the client speaks the sessionless generation.
    pub(crate) fn sessionless(&self) -> bool {
        self.sessionless
    }

    /// What the client declared at its handshake; `None` for a client of
    /// the sessionless generation, which takes no request from a server.
    pub(crate) fn declared(&self) -> Option<ClientCapabilities> {
        if self.sessionless {
            return None;
        }
        self.peer.peer_info().map(|info| info.capabilities.clone())
    }

    /// The client.
    pub(crate) fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// Whether the client takes a `what` request from a server: it made a
    /// handshake, declaring what `wanted` asks for; else why not.
    /// A sessionless client that did not declare `what` with its request
    /// is noted, so that the request is refused naming it (SPEC §9.7).
    fn takes(
        &self,
        what: &'static str,
        wanted: impl Fn(&ClientCapabilities) -> bool,
    ) -> Result<(), String> {
        match self.declared() {
            Some(capabilities) if wanted(&capabilities) => Ok(()),
            Some(_) => Err(format!("the client did not declare the {what} capability")),
            None => {
                if self.sessionless
                    && !self.declared_now.as_ref().is_some_and(&wanted)
                    && let Ok(mut missing) = self.missing.lock()
                {
                    missing.insert(what);
                }
                Err(
                    "the client speaks the sessionless protocol, which takes no request from a server"
                        .to_owned(),
                )
            }
        }
    }

    /// Ask the client for each input `server` asked for with an
    /// `input_required` answer; the client's answers, by the same keys.
    /// Every input the client did not declare the capability for is
    /// refused, never answered in its place.
    pub(crate) async fn fulfil(
        &self,
        server: &str,
        inputs: InputRequests,
    ) -> Result<InputResponses, String> {
        let mut answers = InputResponses::new();
        for (key, input) in inputs {
            let (what, request, declared): (_, _, fn(&ClientCapabilities) -> bool) = match input {
                InputRequest::CreateMessage(request) => (
                    "sampling",
                    ServerRequest::CreateMessageRequest(request),
                    |c| c.sampling.is_some(),
                ),
                InputRequest::Elicitation(request) => {
                    ("elicitation", ServerRequest::ElicitRequest(request), |c| {
                        c.elicitation.is_some()
                    })
                }
                InputRequest::ListRoots(request) => {
                    ("roots", ServerRequest::ListRootsRequest(request), |c| {
                        c.roots.is_some()
                    })
                }
                _ => {
                    return Err(format!(
                        "upstream server \"{server}\" asked the client for an input of a kind skillgraph serve does not know, so the call cannot go on"
                    ));
                }
            };
            self.takes(what, declared).map_err(|why| {
                format!("skillgraph serve cannot pass {server}'s {what} request on: {why}")
            })?;
            let answer = ask(self.clone(), request).await.map_err(|error| {
                format!(
                    "the client did not answer {server}'s {what} request: {}",
                    shown(&error.message)
                )
            })?;
            let answer = serde_json::to_value(answer).map_err(|error| {
                format!("the client's {what} answer cannot be passed on: {error}")
            })?;
            answers.insert(key, answer);
        }
        Ok(answers)
    }
}

/// The token map entry of one forwarded call, removed when it is dropped.
pub(crate) struct ProgressRoute {
    relay: Relay,
    upstream: (u64, ProgressToken),
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        if let Ok(mut map) = self.relay.inner.progress.lock() {
            map.remove(&self.upstream);
        }
    }
}

/// A client call running on an upstream link, forgotten when dropped.
pub(crate) struct Running {
    relay: Relay,
    link: u64,
    number: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        let now = Instant::now();
        if let Ok(mut calls) = self.relay.inner.calls.lock() {
            if let Some(call) = calls
                .get_mut(&self.link)
                .and_then(|on_link| on_link.iter_mut().find(|call| call.number == self.number))
            {
                call.ended = Some(now);
            }
            forget_ended(&mut calls, now);
        }
    }
}

/// Forget the subscribers whose connections closed, and the URIs no one
/// is subscribed to any more.
fn forget_closed(subscribers: &mut HashMap<String, Vec<Caller>>) {
    subscribers.retain(|_, clients| {
        clients.retain(|client| !client.peer.is_transport_closed());
        !clients.is_empty()
    });
}

/// Why no single client can take what an upstream sent.
enum NoClient {
    /// No client call is running at the upstream (over HTTP).
    Idle,
    /// Calls of this many clients are running there (or, with none
    /// running, just ended).
    Several(usize),
}

impl NoClient {
    fn reason(&self) -> String {
        match self {
            NoClient::Idle => {
                "no client's call is running at it, and over HTTP nothing else says whose it is"
                    .to_owned()
            }
            NoClient::Several(count) => format!(
                "calls of {count} clients are running at it, and nothing says which one it is for"
            ),
        }
    }
}

impl Relay {
    /// A relay for a server with one client only (`solo`, over stdio) or
    /// with many (over HTTP).
    pub(crate) fn new(solo: bool) -> Self {
        Relay {
            inner: Arc::new(Inner {
                solo,
                ..Inner::default()
            }),
        }
    }

    /// Remember the request a client made: over stdio, what an upstream
    /// sends with no call running goes there.
    pub(crate) fn set_client(&self, caller: &Caller) {
        if self.inner.solo
            && let Ok(mut latest) = self.inner.latest.lock()
        {
            *latest = Some(caller.clone());
        }
    }

    /// The number of a new upstream link (one connection to an upstream).
    pub(crate) fn new_link(&self) -> u64 {
        self.inner.next_link.fetch_add(1, Ordering::Relaxed)
    }

    /// While the returned guard lives, `caller`'s call runs on `link`; it
    /// counts for [`LATE`] after.
    pub(crate) fn running(&self, link: u64, caller: Caller) -> Running {
        let number = self.inner.next_call.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut calls) = self.inner.calls.lock() {
            forget_ended(&mut calls, Instant::now());
            calls.entry(link).or_default().push(Call {
                number,
                caller,
                ended: None,
            });
        }
        Running {
            relay: self.clone(),
            link,
            number,
        }
    }

    /// The one client what the upstream sends unasked on `link` is for:
    /// the client whose calls run there; with none running, the client
    /// whose calls there were answered less than [`LATE`] ago.
    fn caller_at(&self, link: u64) -> Result<Caller, NoClient> {
        let (running, ended): (Vec<Caller>, Vec<Caller>) = self
            .inner
            .calls
            .lock()
            .ok()
            .and_then(|mut calls| {
                forget_ended(&mut calls, Instant::now());
                calls.get(&link).map(|on_link| {
                    let (running, ended): (Vec<&Call>, Vec<&Call>) =
                        on_link.iter().partition(|call| call.ended.is_none());
                    // An ended call's client may be gone (a sessionless
                    // request's connection ends with its answer).
                    let ended: Vec<&Call> = ended
                        .into_iter()
                        .filter(|call| !call.caller.peer.is_transport_closed())
                        .collect();
                    (callers(&running), callers(&ended))
                })
            })
            .unwrap_or_default();
        let calls = if running.is_empty() { ended } else { running };
        let mut connections: Vec<u64> = calls.iter().map(|caller| caller.connection).collect();
        connections.sort_unstable();
        connections.dedup();
        match (calls.last(), connections.len()) {
            (Some(latest), 1) => Ok(latest.clone()),
            (Some(_), count) => Err(NoClient::Several(count)),
            (None, _) => self
                .inner
                .latest
                .lock()
                .ok()
                .and_then(|latest| latest.clone())
                .filter(|_| self.inner.solo)
                .ok_or(NoClient::Idle),
        }
    }

    /// Remember that `caller`'s client subscribed to `uri`.
    pub(crate) fn subscribe(&self, uri: &str, caller: &Caller) {
        if let Ok(mut subscribers) = self.inner.subscribers.lock() {
            forget_closed(&mut subscribers);
            let clients = subscribers.entry(uri.to_owned()).or_default();
            clients.retain(|client| client.connection != caller.connection);
            clients.push(caller.clone());
        }
    }

    /// Forget that the client of connection `connection` subscribed to
    /// `uri`; whether no client is subscribed to it any more.
    pub(crate) fn unsubscribe(&self, uri: &str, connection: u64) -> bool {
        let Ok(mut subscribers) = self.inner.subscribers.lock() else {
            return false;
        };
        if let Some(clients) = subscribers.get_mut(uri) {
            clients.retain(|client| client.connection != connection);
        }
        forget_closed(&mut subscribers);
        !subscribers.contains_key(uri)
    }

    /// The clients subscribed to `uri` whose connections are open.
    fn subscribers(&self, uri: &str) -> Vec<Peer<RoleServer>> {
        self.inner
            .subscribers
            .lock()
            .ok()
            .and_then(|subscribers| {
                subscribers.get(uri).map(|clients| {
                    clients
                        .iter()
                        .filter(|client| !client.peer.is_transport_closed())
                        .map(|client| client.peer.clone())
                        .collect()
                })
            })
            .unwrap_or_default()
    }

    /// While the returned route lives, the upstream's progress under
    /// `upstream` on `link` reaches `peer` under `client`.
    pub(crate) fn route_progress(
        &self,
        link: u64,
        upstream: ProgressToken,
        client: ProgressToken,
        peer: Peer<RoleServer>,
    ) -> ProgressRoute {
        let upstream = (link, upstream);
        if let Ok(mut map) = self.inner.progress.lock() {
            map.insert(upstream.clone(), (client, peer));
        }
        ProgressRoute {
            relay: self.clone(),
            upstream,
        }
    }

    /// The client the `what` request `server` sent on `link` is for, when
    /// it declared what `wanted` says it must have.
    fn client_for(
        &self,
        server: &str,
        link: u64,
        what: &'static str,
        wanted: impl Fn(&ClientCapabilities) -> bool,
    ) -> Result<Caller, ErrorData> {
        let refused = |why: String| {
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("skillgraph serve cannot pass {server}'s {what} request on: {why}"),
                None,
            ))
        };
        let caller = match self.caller_at(link) {
            Ok(caller) => caller,
            Err(none) => return refused(none.reason()),
        };
        match caller.takes(what, wanted) {
            Ok(()) => Ok(caller),
            Err(why) => refused(why),
        }
    }
}

/// One upstream link's client side: what the server sends unasked, or
/// asks, goes to the client through the [`Relay`].
#[derive(Clone)]
pub(crate) struct UpstreamHandler {
    /// The server's name.
    pub(crate) server: String,
    /// The clients.
    pub(crate) relay: Relay,
    /// The link's number.
    pub(crate) link: u64,
    /// Whether the link speaks the sessionless generation, where each
    /// forwarded call declares its own client's capabilities.
    pub(crate) sessionless: bool,
    /// The order its progress and log notifications came in.
    pub(crate) arrivals: Arc<Arrivals>,
}

/// Send `request` to `caller`'s client, tied to its request (over HTTP, on
/// that request's response stream), and its answer back.
async fn ask(caller: Caller, mut request: ServerRequest) -> Result<ClientResult, ErrorData> {
    request
        .extensions_mut()
        .insert(OriginatingRequestId(caller.request));
    // Sent from a task of its own: rmcp ties a request sent while it
    // handles one to the request it handles (here the upstream's), and a
    // new task carries no such tie.
    let peer = caller.peer;
    match tokio::spawn(async move { peer.send_request(request).await }).await {
        Ok(answer) => relayed(answer),
        Err(error) => Err(ErrorData::internal_error(
            format!("the request to the client was lost: {error}"),
            None,
        )),
    }
}

/// The answer a client gave to a relayed request, or why there is none.
fn unexpected(what: &str) -> ErrorData {
    ErrorData::internal_error(
        format!("the client answered the {what} request with something else"),
        None,
    )
}

fn relayed<T>(result: Result<T, rmcp::ServiceError>) -> Result<T, ErrorData> {
    result.map_err(|err| match err {
        rmcp::ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the client did not answer: {other}"), None),
    })
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        // A handshake link starts before any client connects, so every
        // capability a client may pass on is declared; a request the client
        // cannot take is refused when it comes. A sessionless link declares
        // none of its own: each forwarded call declares its client's.
        let capabilities = if self.sessionless {
            ClientCapabilities::default()
        } else {
            ClientCapabilities::builder()
                .enable_roots()
                .enable_sampling()
                .enable_elicitation()
                .build()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("skillgraph", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let caller = self
            .relay
            .client_for(&self.server, self.link, "sampling", |c| {
                c.sampling.is_some()
            })?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match ask(caller, request).await? {
            ClientResult::CreateMessageResult(result) => Ok(*result),
            _ => Err(unexpected("sampling")),
        }
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let caller = self
            .relay
            .client_for(&self.server, self.link, "roots", |c| c.roots.is_some())?;
        let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
        match ask(caller, request).await? {
            ClientResult::ListRootsResult(result) => Ok(result),
            _ => Err(unexpected("roots")),
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let caller = self
            .relay
            .client_for(&self.server, self.link, "elicitation", |c| {
                c.elicitation.is_some()
            })?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(request));
        match ask(caller, request).await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(unexpected("elicitation")),
        }
    }

    async fn on_progress(
        &self,
        mut params: ProgressNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let _handling = self.arrivals.handling(&context.extensions);
        let route = self.relay.inner.progress.lock().ok().and_then(|map| {
            map.get(&(self.link, params.progress_token.clone()))
                .cloned()
        });
        if let Some((token, peer)) = route {
            params.progress_token = token;
            let _ = peer.notify_progress(params).await;
        }
    }

    async fn on_logging_message(
        &self,
        mut params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let _handling = self.arrivals.handling(&context.extensions);
        params.logger.get_or_insert_with(|| self.server.clone());
        match self.relay.caller_at(self.link) {
            Ok(caller) => {
                let _ = caller.peer.notify_logging_message(params).await;
            }
            Err(none) => warn_raw(&format!(
                "[{}] a log message serve passes to no client, since {}: {}",
                self.server,
                none.reason(),
                shown(&params.data.to_string())
            )),
        }
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        for peer in self.relay.subscribers(&params.uri) {
            let _ = peer.notify_resource_updated(params.clone()).await;
        }
    }
}
