//! Idle handshake sessions put to sleep (SPEC §9.8: an idle handshake
//! session costs at most 16 KiB). rmcp's session is a worker task, the
//! task that serves it and seven channels, about 70 KiB however idle it
//! is; a session that has only shaken hands needs none of it until its
//! next request. So once its `notifications/initialized` is answered, when
//! no other request names it, its rmcp session is closed, and the front
//! keeps what it needs to wake it: its run and its client's `initialize`
//! ([`Handshake`]). Its next request wakes it first, alone: rmcp makes a
//! new session under the same id (its restore), served by a new
//! [`Gateway`] as rmcp serves every session, and the handshake is replayed
//! into it; the gateway takes the run back ([`Waking`]) and records
//! nothing. What the client sees does not change: the session it holds
//! answers as it did, with the run it started.
//!
//! [`Manager`] is rmcp's [`LocalSessionManager`] with this added. It tells
//! the end of a session put to sleep (the last call of the task that
//! served it closes it) from every other end (a `DELETE`, rmcp's
//! keep-alive, a failed handshake), which the front must forget.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, InitializeRequest,
    InitializeRequestParams, InitializedNotification, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::serve_server_with_ct;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::sessions::Sessions;
use crate::gateway::Gateway;
use crate::hub::Hub;
use crate::runs::Slot;

/// A handshake session's run and its client's `initialize`: handed over by
/// the gateway that shook hands, kept by the front while the session is
/// held, and taken back by the gateway that serves the session when it
/// wakes.
#[derive(Clone, Default)]
pub(crate) struct Handshake(Arc<OnceLock<Shaken>>);

/// What a [`Handshake`] keeps.
struct Shaken {
    run: Slot,
    hello: InitializeRequestParams,
}

impl Handshake {
    /// Keep `run`, started by the handshake `hello`. Kept once: a second
    /// handshake of one session changes nothing.
    pub(crate) fn keep(&self, run: Slot, hello: InitializeRequestParams) {
        let _ = self.0.set(Shaken { run, hello });
    }

    /// The run the handshake started, once it is kept.
    pub(crate) fn run(&self) -> Option<Slot> {
        self.0.get().map(|shaken| Arc::clone(&shaken.run))
    }

    /// The client's `initialize`, once it is kept.
    pub(crate) fn hello(&self) -> Option<InitializeRequestParams> {
        self.0.get().map(|shaken| shaken.hello.clone())
    }
}

/// The mark of a replayed `initialize`, which wakes a session: the
/// handshake whose run goes on.
#[derive(Clone)]
pub(crate) struct Waking(pub(crate) Handshake);

/// rmcp's [`LocalSessionManager`], which also puts sessions to sleep and
/// wakes them.
pub(super) struct Manager {
    inner: LocalSessionManager,
    sessions: Sessions,
    /// Whom a woken session's gateway serves.
    hub: Arc<Hub>,
    /// The token rmcp's service cancels its sessions by.
    cancel: CancellationToken,
    /// The sessions falling asleep, each told when its rmcp session ended.
    falling: Mutex<HashMap<SessionId, oneshot::Sender<()>>>,
}

impl Manager {
    /// rmcp's sessions, each closed when idle for `keep_alive` and held by
    /// the front in `sessions`; a woken one served for `hub`, cancelled
    /// with `cancel`, as rmcp's service serves a session.
    pub(super) fn new(
        keep_alive: Duration,
        sessions: Sessions,
        hub: Arc<Hub>,
        cancel: CancellationToken,
    ) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(keep_alive);
        Manager {
            inner,
            sessions,
            hub,
            cancel,
            falling: Mutex::default(),
        }
    }

    /// The sessions falling asleep.
    fn falling(&self) -> MutexGuard<'_, HashMap<SessionId, oneshot::Sender<()>>> {
        self.falling.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Close the rmcp session `id` and wait until it has ended (the task
    /// that served it gone, the session out of rmcp's table). The caller
    /// makes sure that no request is in it, and that none enters it before
    /// this returns.
    pub(super) async fn sleep(&self, id: &str) {
        let id = SessionId::from(id);
        let Some(handle) = self.inner.sessions.read().await.get(&id).cloned() else {
            return;
        };
        let (ended, end) = oneshot::channel();
        self.falling().insert(id.clone(), ended);
        if handle.close().await.is_err() {
            // It had ended already: the task that served it closes it.
            self.falling().remove(&id);
            return;
        }
        let _ = end.await;
    }

    /// Wake the session `id`, put to sleep after `handshake`: a new rmcp
    /// session under its id, served by a new gateway, into which the
    /// handshake is replayed. `false` when it could not be woken. The
    /// caller makes sure that no other request enters it before this
    /// returns.
    pub(super) async fn wake(self: Arc<Self>, id: SessionId, handshake: Handshake) -> bool {
        let Some(hello) = handshake.hello() else {
            return false;
        };
        let transport = match self.inner.restore_session(id.clone()).await {
            Ok(RestoreOutcome::Restored(transport)) => transport,
            _ => return false,
        };
        let (served, serving) = oneshot::channel();
        let gateway = Gateway::new(Arc::clone(&self.hub));
        let cancel = self.cancel.child_token();
        let (manager, session) = (Arc::clone(&self), id.clone());
        // As rmcp's service serves a session: until it ends, then closed.
        tokio::spawn(async move {
            if let Ok(service) = serve_server_with_ct(gateway, transport, cancel).await {
                // The replayed handshake came from no HTTP request: the
                // session's peer is remembered here (SPEC §14.6).
                manager.hub.remember_peer(&session, service.peer().clone());
                let _ = served.send(());
                let _ = service.waiting().await;
            }
            let _ = manager.close_session(&session).await;
        });
        let mut initialize = ClientJsonRpcMessage::request(
            ClientRequest::InitializeRequest(InitializeRequest::new(hello)),
            RequestId::Number(0),
        );
        initialize.insert_extension(Waking(handshake));
        let initialized = ClientJsonRpcMessage::notification(
            ClientNotification::InitializedNotification(InitializedNotification::default()),
        );
        self.inner.initialize_session(&id, initialize).await.is_ok()
            && self.inner.accept_message(&id, initialized).await.is_ok()
            && serving.await.is_ok()
    }
}

impl SessionManager for Manager {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    /// Close `id`. The last call of the task that served a session is
    /// this one: for a session falling asleep it says the session has
    /// ended; every other end is the session's, which the front forgets.
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.hub.forget_peer(id);
        match self.falling().remove(id) {
            Some(ended) => {
                let _ = ended.send(());
            }
            None => self.sessions.end(id),
        }
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
