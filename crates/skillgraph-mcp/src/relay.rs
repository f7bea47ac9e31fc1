//! What passes between the client and the upstream servers without the run
//! (SPEC §9.5): an upstream's progress reaches the client under the client's
//! own progress token; its log messages and resource updates reach the
//! client; its sampling, elicitation and roots requests go to the client
//! when the client declared the capability, and the client's answer comes
//! back. `serve` never answers in the user's place: an upstream whose
//! request the client cannot take gets an error saying so, never a decline.

// Sampling, roots and logging are deprecated by a revision after 2026-07-28
// (SEP-2577) and are still what the handshake generation's clients and
// servers use; SPEC §9.5 relays them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorCode, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient, RoleServer};

/// The client as the upstream servers reach it, shared by every upstream.
#[derive(Clone, Default)]
pub(crate) struct Relay {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// The client's connection, once it has made a request.
    client: Mutex<Option<Peer<RoleServer>>>,
    /// An upstream call's progress token → the client's token for the same
    /// call, while the call runs.
    progress: Mutex<HashMap<ProgressToken, ProgressToken>>,
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
    /// Remember the client's connection (each request carries it).
    pub(crate) fn set_client(&self, peer: &Peer<RoleServer>) {
        if let Ok(mut client) = self.inner.client.lock()
            && client.is_none()
        {
            *client = Some(peer.clone());
        }
    }

    fn client(&self) -> Option<Peer<RoleServer>> {
        self.inner
            .client
            .lock()
            .ok()
            .and_then(|client| client.clone())
    }

    /// While the returned route lives, the upstream's progress under
    /// `upstream` reaches the client under `client`.
    pub(crate) fn route_progress(
        &self,
        upstream: ProgressToken,
        client: ProgressToken,
    ) -> ProgressRoute {
        if let Ok(mut map) = self.inner.progress.lock() {
            map.insert(upstream.clone(), client);
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
    ) -> Result<Peer<RoleServer>, ErrorData> {
        let refused = |why: String| {
            Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("skillgraph serve cannot pass {server}'s {what} request on: {why}"),
                None,
            ))
        };
        let Some(peer) = self.client() else {
            return refused("no client is connected yet".to_owned());
        };
        match self.capabilities(&peer) {
            Some(capabilities) if wanted(&capabilities) => Ok(peer),
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
        let peer = self
            .relay
            .client_for(&self.server, "sampling", |c| c.sampling.is_some())?;
        relayed(peer.create_message(params).await)
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let peer = self
            .relay
            .client_for(&self.server, "roots", |c| c.roots.is_some())?;
        relayed(peer.list_roots().await)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let peer = self
            .relay
            .client_for(&self.server, "elicitation", |c| c.elicitation.is_some())?;
        relayed(peer.create_elicitation(request).await)
    }

    async fn on_progress(
        &self,
        mut params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let client_token = self
            .relay
            .inner
            .progress
            .lock()
            .ok()
            .and_then(|map| map.get(&params.progress_token).cloned());
        if let (Some(token), Some(peer)) = (client_token, self.relay.client()) {
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
