//! What passes between the client and the upstream servers without the run
//! (SPEC §9.5): an upstream's progress reaches the client under the client's
//! own progress token; its log messages and resource updates reach the
//! client; its sampling, elicitation and roots requests go to the client
//! when the client declared the capability, and the client's answer comes
//! back. `serve` never answers in the user's place: an upstream whose
//! request the client cannot take gets an error saying so, never a decline.
//!
//! Which client: progress goes to the client whose call carries the token.
//! An upstream's other messages name no call (over stdio nothing ties a
//! sampling request or a log line to the call it came from), so they go to
//! the client of the latest request; a request is sent on the stream of
//! that client's request (over HTTP, the call's own response stream).

// Sampling, roots and logging are deprecated by a revision after 2026-07-28
// (SEP-2577) and are still what the handshake generation's clients and
// servers use; SPEC §9.5 relays them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientResult, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ErrorCode, GetExtensions, Implementation, ListRootsRequest, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, RequestId,
    ResourceUpdatedNotificationParam, ServerRequest,
};
use rmcp::service::{NotificationContext, OriginatingRequestId, Peer, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer};

/// The client as the upstream servers reach it, shared by every upstream.
#[derive(Clone, Default)]
pub(crate) struct Relay {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The client of the latest request, and that request.
    client: Mutex<Option<Caller>>,
    /// An upstream call's progress token → the client's token for the same
    /// call and that client, while the call runs.
    progress: Mutex<HashMap<ProgressToken, (ProgressToken, Peer<RoleServer>)>>,
}

/// A client and the request it made.
#[derive(Clone)]
struct Caller {
    peer: Peer<RoleServer>,
    request: RequestId,
}

/// The token map entry of one forwarded call, removed when it is dropped.
pub(crate) struct ProgressRoute {
    relay: Relay,
    upstream: ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        if let Ok(mut map) = self.relay.inner.progress.lock() {
            map.remove(&self.upstream);
        }
    }
}

impl Relay {
    /// Remember the client of a request, and the request: what the
    /// upstreams send unasked goes there until the next request.
    pub(crate) fn set_client(&self, peer: &Peer<RoleServer>, request: &RequestId) {
        if let Ok(mut client) = self.inner.client.lock() {
            *client = Some(Caller {
                peer: peer.clone(),
                request: request.clone(),
            });
        }
    }

    fn caller(&self) -> Option<Caller> {
        self.inner
            .client
            .lock()
            .ok()
            .and_then(|client| client.clone())
    }

    fn client(&self) -> Option<Peer<RoleServer>> {
        self.caller().map(|caller| caller.peer)
    }

    /// While the returned route lives, the upstream's progress under
    /// `upstream` reaches `peer` under `client`.
    pub(crate) fn route_progress(
        &self,
        upstream: ProgressToken,
        client: ProgressToken,
        peer: Peer<RoleServer>,
    ) -> ProgressRoute {
        if let Ok(mut map) = self.inner.progress.lock() {
            map.insert(upstream.clone(), (client, peer));
        }
        ProgressRoute {
            relay: self.clone(),
            upstream,
        }
    }

    /// The client's capabilities, as its handshake declared them (a client
    /// of the sessionless generation takes no request from a server).
    fn capabilities(&self, peer: &Peer<RoleServer>) -> Option<ClientCapabilities> {
        peer.peer_info().map(|info| info.capabilities.clone())
    }

    /// The client, when it declared what `wanted` says it must have.
    fn client_for(
        &self,
        server: &str,
        what: &str,
        wanted: impl Fn(&ClientCapabilities) -> bool,
    ) -> Result<Caller, ErrorData> {
        let refused = |why: String| {
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("skillgraph serve cannot pass {server}'s {what} request on: {why}"),
                None,
            ))
        };
        let Some(caller) = self.caller() else {
            return refused("no client is connected yet".to_owned());
        };
        match self.capabilities(&caller.peer) {
            Some(capabilities) if wanted(&capabilities) => Ok(caller),
            Some(_) => refused(format!("the client did not declare the {what} capability")),
            None => refused(
                "the client speaks the sessionless protocol, which takes no request from a server"
                    .to_owned(),
            ),
        }
    }
}

/// One upstream server's client side: what it sends unasked, or asks, goes
/// to the client through the [`Relay`].
#[derive(Clone)]
pub(crate) struct UpstreamHandler {
    pub(crate) server: String,
    pub(crate) relay: Relay,
}

/// Send `request` to `caller`'s client on the stream of its request, and
/// its answer back.
async fn ask(caller: Caller, mut request: ServerRequest) -> Result<ClientResult, ErrorData> {
    request
        .extensions_mut()
        .insert(OriginatingRequestId(caller.request));
    relayed(caller.peer.send_request(request).await)
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
        // The upstreams start before any client connects, so every
        // capability a client may pass on is declared; a request the
        // client cannot take is refused when it comes.
        let capabilities = ClientCapabilities::builder()
            .enable_roots()
            .enable_sampling()
            .enable_elicitation()
            .build();
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
            .client_for(&self.server, "sampling", |c| c.sampling.is_some())?;
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
            .client_for(&self.server, "roots", |c| c.roots.is_some())?;
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
            .client_for(&self.server, "elicitation", |c| c.elicitation.is_some())?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(request));
        match ask(caller, request).await? {
            ClientResult::ElicitResult(result) => Ok(result),
            _ => Err(unexpected("elicitation")),
        }
    }

    async fn on_progress(
        &self,
        mut params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let route = self
            .relay
            .inner
            .progress
            .lock()
            .ok()
            .and_then(|map| map.get(&params.progress_token).cloned());
        if let Some((token, peer)) = route {
            params.progress_token = token;
            let _ = peer.notify_progress(params).await;
        }
    }

    async fn on_logging_message(
        &self,
        mut params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(peer) = self.relay.client() {
            params.logger.get_or_insert_with(|| self.server.clone());
            let _ = peer.notify_logging_message(params).await;
        }
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(peer) = self.relay.client() {
            let _ = peer.notify_resource_updated(params).await;
        }
    }
}
