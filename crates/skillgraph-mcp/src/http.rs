//! `serve --http` (SPEC §9.8): rmcp's streamable-HTTP service on `/mcp`,
//! served by hyper, behind the checks rmcp leaves to its host. rmcp checks
//! the `Host` header (403), a browser's `Origin` (403), the body's type
//! (415) and the 2026-07-28 header rules (400 with `-32020`); this layer is
//! the front door before it:
//!
//! - the connections held ([`door`]): a cap, the stalled ones making room,
//!   accepts backed off, a head within 10 s;
//! - other paths (404), and with `--auth-tokens` every request without a
//!   known bearer token (401 with `WWW-Authenticate`, and the connection
//!   closed);
//! - strict HTTP ([`strict`]), the body read here within `--body-timeout`
//!   (408) and `--max-body` (413), and parsed at most [`PARSING`] at once;
//! - the new-run rate (429 with `Retry-After`) and the quotas of handshake
//!   sessions per principal ([`shares`](crate::shares));
//! - a handshake session put to [`sleep`] once it has shaken hands, until
//!   its next request.
//!
//! The principal a token names rides in the request's extensions to the
//! gateway, which binds each run to it; a handshake session is bound here,
//! so that another principal's request for it is answered as an unknown
//! session is.

use std::borrow::Cow;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::model::InitializeRequestParams;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use crate::echo::{cut, shown};
use crate::gateway::Gateway;
use crate::hub::Hub;
use crate::limits::Limits;
use crate::replicas::{self, Heartbeat};
use crate::shares::Rates;
use crate::store::HEARTBEAT;
use crate::warn;

mod bodies;
mod door;
mod jwt;
mod sessions;
mod sleep;
mod strict;
mod tokens;

pub(crate) use bodies::HeldArguments;
use bodies::{Answer, Guarded, Parsing, Turn, Unread};
use door::{Admitted, Conn, Door};
use sessions::Sessions;
use sleep::Manager;
pub(crate) use sleep::{Handshake, Waking};

pub use jwt::JwtConfig;
pub use tokens::TokensError;
use tokens::bearer_token;
pub(crate) use tokens::{Auth, Principal};

/// The path the server answers on.
const PATH: &str = "/mcp";

/// How many request bodies are parsed at once (by rmcp, after [`strict`]
/// has walked them); the others wait their turn.
pub(crate) const PARSING: usize = 8;

/// The size of a `tools/call` body past which its arguments are held back
/// from rmcp ([`Parsing::turn_holding`]).
const HOLD_OVER: usize = 64 * 1024;

/// The header of a handshake session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The notification that ends a handshake, after which a session may
/// [`sleep`].
const INITIALIZED: &str = "notifications/initialized";

/// How `serve --http` listens (SPEC §9.8, §9.4).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpConfig {
    /// Where to listen (`--http ADDR`).
    pub addr: SocketAddr,
    /// The `Host` names (or `host:port` authorities) accepted
    /// (`--allowed-host`); the loopback names by default.
    pub allowed_hosts: Vec<String>,
    /// The browser origins accepted (`--allowed-origin`): by default the
    /// pages of this machine (`http://localhost:*`, `http://127.0.0.1:*`,
    /// `http://[::1]:*`), so a page from anywhere else is refused.
    pub allowed_origins: Vec<String>,
    /// The largest request body accepted, in bytes (`--max-body`).
    pub max_body: usize,
    /// The principals and their tokens' SHA-256 digests (`--auth-tokens`).
    pub auth_tokens: Option<PathBuf>,
    /// Bearer JWTs checked against a key set (`--auth-jwks`,
    /// `--auth-issuer`, `--auth-audience`, `--auth-roles-claim`).
    pub auth_jwt: Option<JwtConfig>,
    /// How long a run may stay idle before it is dropped (`--run-ttl`).
    pub run_ttl: Duration,
    /// The most runs held at once (`--max-runs`).
    pub max_runs: usize,
    /// The most runs one principal holds at once
    /// (`--max-runs-per-principal`); `None`: a tenth of `max_runs`, at
    /// least 10. Without `--auth-tokens` every client is the one anonymous
    /// principal, and only `max_runs` applies.
    pub max_runs_per_principal: Option<usize>,
    /// The runs a principal may start a minute (`--new-runs-per-minute`),
    /// in bursts of a tenth of it (at least 10).
    pub new_runs_per_minute: u32,
    /// The most connections held at once (`--max-connections`), lowered to
    /// what the process's file descriptors leave room for.
    pub max_connections: usize,
    /// How long a client may take to send a request's head.
    pub head_timeout: Duration,
    /// How long a client may take to send a body, from the end of its head
    /// (`--body-timeout`).
    pub body_timeout: Duration,
    /// How long requests are still served after the process is asked to
    /// stop, `/readyz` answering 503 meanwhile so that a load balancer
    /// sends them elsewhere (`--drain-grace`, default 2 s).
    pub drain_grace: Duration,
    /// How long requests under way may take to finish after that
    /// (`--drain-timeout`, default 30 s).
    pub drain_timeout: Duration,
    /// Where the sessionless runs are kept (`--store`, SPEC §14): `None`,
    /// in this process; a shared store lets several replicas serve every
    /// run.
    pub store: Option<crate::StoreConfig>,
}

impl HttpConfig {
    /// The runs one principal may hold: `max_runs_per_principal`, or a
    /// tenth of `max_runs` (at least 10).
    pub(crate) fn quota(&self) -> usize {
        self.max_runs_per_principal
            .unwrap_or_else(|| crate::shares::default_quota(self.max_runs))
    }

    /// Listen at `addr` with the defaults: the loopback host names, the
    /// loopback origins, 4 MiB bodies, no tokens, a 24 h time to live,
    /// 10,000 runs (a tenth of them per principal), 600 new runs a minute
    /// per principal, 1,024 connections, a head within 10 s and a body
    /// within 30 s.
    pub fn new(addr: SocketAddr) -> Self {
        HttpConfig {
            addr,
            allowed_hosts: vec!["localhost".into(), "127.0.0.1".into(), "::1".into()],
            allowed_origins: ["localhost", "127.0.0.1", "[::1]"]
                .iter()
                .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
                .collect(),
            max_body: 4 * 1024 * 1024,
            auth_tokens: None,
            auth_jwt: None,
            run_ttl: Duration::from_secs(24 * 3600),
            max_runs: 10_000,
            max_runs_per_principal: None,
            new_runs_per_minute: 600,
            max_connections: 1024,
            head_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            drain_grace: Duration::from_secs(2),
            drain_timeout: Duration::from_secs(30),
            store: None,
        }
    }
}

fn plain(status: StatusCode, text: impl Into<Bytes>) -> Response<Answer> {
    let mut response = Response::new(Full::new(text.into()).boxed());
    *response.status_mut() = status;
    response
}

/// `response`, after which the connection is closed.
fn closing(mut response: Response<Answer>) -> Response<Answer> {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// The session header's value put in place of a session this layer does
/// not hold for the request's principal: no session has it, so rmcp
/// answers it as an unknown session, after every check of its own.
const NO_SESSION: &str = "not-a-session";

/// What stands before rmcp's service: the path, the tokens, strict HTTP,
/// the bodies and their parsing, the new-run rate and the handshake
/// sessions, each with its principal.
struct Front {
    service: StreamableHttpService<Gateway, Manager>,
    manager: Arc<Manager>,
    hub: Arc<Hub>,
    tokens: Option<Auth>,
    sessions: Sessions,
    allowed_hosts: Vec<String>,
    max_body: usize,
    body_timeout: Duration,
    parsing: Parsing,
    rates: Rates,
    limits: Arc<Limits>,
    /// Whether the process was asked to stop.
    draining: AtomicBool,
    /// The posted requests being answered, until their answers' last byte.
    in_flight: Arc<AtomicUsize>,
    /// Taken while a session is restored from the run store: one restore
    /// at a time.
    restoring: tokio::sync::Mutex<()>,
}

impl Front {
    /// `/livez` and `/readyz` (SPEC §14.5): for any `Host`, with no token,
    /// giving no data; `None` for any other request.
    fn health(&self, request: &Request<Incoming>) -> Option<Response<Answer>> {
        if request.method() != http::Method::GET {
            return None;
        }
        match request.uri().path() {
            "/livez" => Some(plain(StatusCode::OK, "live\n")),
            "/readyz" => Some(match self.unready() {
                None => plain(StatusCode::OK, "ready\n"),
                Some(reason) => plain(StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")),
            }),
            _ => None,
        }
    }

    /// Why this replica should not be sent requests now, if it should not.
    fn unready(&self) -> Option<String> {
        if self.draining.load(Ordering::Relaxed) {
            return Some("draining: this replica is stopping".to_owned());
        }
        let store = self.hub.store.as_ref()?;
        store
            .breaker
            .open()
            .then(|| format!("the run store at {} is unreachable", store.name()))
    }

    async fn handle(
        &self,
        mut request: Request<Incoming>,
        answering: &Answering,
    ) -> Response<Answer> {
        if let Some(health) = self.health(&request) {
            return health;
        }
        if let Err(refused) = strict::head(request.uri(), request.headers(), &self.allowed_hosts) {
            self.limits.strict.reached();
            return closing(plain(StatusCode::BAD_REQUEST, refused.message()));
        }
        if request.uri().path() != PATH {
            return plain(
                StatusCode::NOT_FOUND,
                "Not Found: this MCP server answers on /mcp",
            );
        }
        let principal = match self.authenticate(&mut request) {
            Ok(principal) => principal,
            // Held no longer: the connection closes with the answer.
            Err(refused) => return closing(*refused),
        };
        let (mut parts, body) = request.into_parts();
        let bytes = match bodies::read(&parts.headers, body, self.max_body, self.body_timeout).await
        {
            Ok(bytes) => bytes,
            Err(unread) => return closing(self.unread(unread)),
        };
        answering.busy(parts.method == http::Method::POST);
        let mut method = None;
        let session = parts
            .headers
            .get(SESSION_HEADER)
            .map(|value| value.to_str().unwrap_or(NO_SESSION).to_owned());
        let body = if parts.method == http::Method::POST && strict::is_json(&parts.headers) {
            let peek = match strict::peek(&bytes) {
                Ok(peek) => peek,
                Err(refused) => {
                    self.limits.strict.reached();
                    return json_refusal(&refused);
                }
            };
            method = peek.method.as_deref().map(str::to_owned);
            if let Err(refused) = strict::run_header(&peek, &parts.headers) {
                self.limits.strict.reached();
                return json_refusal(&refused);
            }
            if session.is_none()
                && self.starts_run(&peek)
                && let Err(wait) = self.rates.take(principal.as_deref(), Instant::now())
            {
                self.limits.new_runs.reached();
                return too_many(wait);
            }
            let waited = || self.limits.parsing.reached();
            match holding(&peek, bytes.len(), &parts.headers) {
                Some(arguments) => {
                    let (turn, held) = self.parsing.turn_holding(bytes, arguments, waited).await;
                    parts.extensions.insert(held);
                    turn
                }
                None => self.parsing.turn(bytes, waited).await,
            }
        } else {
            Turn::empty()
        };
        let shaking = method.as_deref() == Some(INITIALIZED);
        // A session's run and its client's `initialize`, handed over by the
        // gateway at the handshake, and back to it when the session wakes.
        let mut handshake = None;
        let deleting = parts.method == http::Method::DELETE;
        let mut in_flight = match &session {
            Some(session) => {
                let in_flight = match self
                    .enter(session, principal.as_deref(), shaking, deleting)
                    .await
                {
                    Ok(in_flight) => in_flight,
                    Err(reason) => return plain(StatusCode::SERVICE_UNAVAILABLE, reason),
                };
                if in_flight.is_none() {
                    // Answered by rmcp as an unknown session, after its
                    // Host, Origin and type checks, so that another
                    // principal's session cannot be told from none.
                    parts
                        .headers
                        .insert(SESSION_HEADER, HeaderValue::from_static(NO_SESSION));
                }
                in_flight
            }
            None => {
                if method.as_deref() == Some("initialize") {
                    let new = Handshake::default();
                    parts.extensions.insert(new.clone());
                    handshake = Some(new);
                }
                None
            }
        };
        let request = Request::from_parts(parts, body);
        let mut response = bounded_error(self.service.handle(request).await).await;
        if deleting && response.status() == StatusCode::ACCEPTED {
            // The session is ended, and nothing follows: 204, which the
            // SDKs take as done (rmcp says 202, which the Python SDK
            // reports as a failed termination).
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        if let (Some(session), Some(in_flight)) = (&session, in_flight.as_mut()) {
            if deleting && response.status().is_success() {
                self.sessions.end(session);
                if let Some(store) = self.hub.store.as_ref() {
                    // Ended here, it is ended on every replica.
                    let _ = store.forget_session(session).await;
                }
            } else if shaking
                && response.status() == StatusCode::ACCEPTED
                && let Some(alone) = in_flight.alone_after_handshake()
            {
                // In a task of its own, which goes on if this request is
                // dropped: no request enters the session until it sleeps.
                let (manager, session) = (Arc::clone(&self.manager), session.clone());
                let _ = tokio::spawn(async move {
                    manager.sleep(&session).await;
                    alone.slept();
                })
                .await;
            }
        } else if session.is_none()
            && let Some(new) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        {
            let handshake = handshake.unwrap_or_default();
            self.keep_in_store(&new, principal.as_deref(), &handshake)
                .await;
            return self.admit(new, principal, handshake, response);
        }
        match in_flight {
            Some(in_flight) => response.map(|body| Guarded::boxed(body, in_flight)),
            None => response,
        }
    }

    /// A request naming `session`, when it is held for `principal` (see
    /// [`Sessions::enter`]), the session awake: woken if it sleeps, but not
    /// to be ended (`deleting`), which rmcp does as well for a session it
    /// does not hold.
    async fn enter(
        &self,
        session: &str,
        principal: Option<&str>,
        shaking: bool,
        deleting: bool,
    ) -> Result<Option<sessions::InFlight>, String> {
        let entered = match self.sessions.enter(session, principal, shaking) {
            Some(entered) => Some(entered),
            None => match self.restore(session, principal).await? {
                Some(()) => self.sessions.enter(session, principal, shaking),
                None => None,
            },
        };
        let Some((mut in_flight, handshake)) = entered else {
            return Ok(None);
        };
        if deleting {
            in_flight.share().await;
        } else if !in_flight
            .awake(|| Arc::clone(&self.manager).wake(SessionId::from(session), handshake.clone()))
            .await
        {
            return Ok(None);
        }
        Ok(Some(in_flight))
    }

    /// Hold `session`, unknown here, as the run store keeps it (SPEC
    /// §14.6): another replica shook hands for it. Only for the principal
    /// it was bound to, whose run is loaded from the store; `Ok(None)`
    /// without a store, or when it holds no such session or another's.
    ///
    /// # Errors
    ///
    /// The answer's text (503) when the store cannot be asked: the session
    /// may well be there, so it is not answered as unknown.
    async fn restore(&self, session: &str, principal: Option<&str>) -> Result<Option<()>, String> {
        let Some(store) = self.hub.store.as_ref() else {
            return Ok(None);
        };
        let _one = self.restoring.lock().await;
        if self.sessions.knows(session) {
            return Ok(Some(()));
        }
        let away = |reason: String| {
            format!(
                "Service Unavailable: the run store at {} is unreachable ({reason}), and it holds the sessions of every replica; retry",
                store.name()
            )
        };
        let Some((hello, owner, run)) = store.session(session).await.map_err(away)? else {
            return Ok(None);
        };
        if owner != principal.unwrap_or_default() {
            return Ok(None);
        }
        let Ok(hello) = serde_json::from_str::<InitializeRequestParams>(&hello) else {
            return Ok(None);
        };
        let Some(slot) = self
            .hub
            .stored_run(&run, Some(&owner))
            .await
            .map_err(|err| format!("Service Unavailable: {}", err.message))?
        else {
            return Ok(None);
        };
        if let Ok(mut state) = crate::runs::lock(&slot)
            && let Some(kept) = state.kept.as_mut()
        {
            kept.session = Some((session.to_owned(), std::time::Instant::now()));
        }
        let handshake = Handshake::default();
        handshake.keep(slot, hello);
        let evicted = self
            .sessions
            .hold_asleep(session.to_owned(), principal.map(str::to_owned), handshake)
            .map_err(|no_room| format!("Service Unavailable: {}", no_room.say()))?;
        if let Some(id) = evicted {
            let manager = Arc::clone(&self.manager);
            tokio::spawn(async move {
                let _ = manager.close_session(&SessionId::from(id.as_str())).await;
            });
        }
        Ok(Some(()))
    }

    /// Keep the handshake session `id` in the run store, when there is
    /// one, so that any replica can restore it (SPEC §14.6).
    async fn keep_in_store(&self, id: &str, principal: Option<&str>, handshake: &Handshake) {
        let Some(store) = self.hub.store.as_ref() else {
            return;
        };
        let (Some(hello), Some(run)) = (handshake.hello(), handshake.run()) else {
            return;
        };
        let Some(handle) = crate::runs::lock(&run)
            .ok()
            .and_then(|state| state.kept.as_ref().map(|kept| kept.handle.clone()))
        else {
            return;
        };
        let Ok(hello) = serde_json::to_string(&hello) else {
            return;
        };
        if let Ok(mut state) = crate::runs::lock(&run)
            && let Some(kept) = state.kept.as_mut()
        {
            kept.session = Some((id.to_owned(), std::time::Instant::now()));
        }
        if let Err(reason) = store
            .keep_session(id, &hello, principal.unwrap_or_default(), &handle)
            .await
        {
            warn(&format!(
                "handshake session {id} could not be kept in the run store at {} ({reason}): only this replica serves it",
                store.name()
            ));
        }
    }

    /// Whether a request without a session that says `peek` would start a
    /// run: an `initialize`, or a call of a tool this server serves that
    /// names no run.
    fn starts_run(&self, peek: &strict::Peek<'_>) -> bool {
        match peek.method.as_deref() {
            Some("initialize") => true,
            Some("tools/call") => {
                !peek.run_given
                    && peek.name.as_deref().is_some_and(|name| {
                        matches!(name, "read_skill" | "list_skills")
                            || self.hub.upstreams.tool(name).is_some()
                    })
            }
            _ => false,
        }
    }

    /// The answer to a body that was not read.
    fn unread(&self, unread: Unread) -> Response<Answer> {
        match unread {
            Unread::TooLarge => plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "Payload Too Large: the body is longer than --max-body ({} bytes)",
                    self.max_body
                ),
            ),
            Unread::TooSlow => {
                self.limits.body_time.reached();
                plain(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "Request Timeout: the body was not sent whole within --body-timeout ({} s) of its head",
                        self.body_timeout.as_secs_f64()
                    ),
                )
            }
            Unread::Broken(reason) => plain(
                StatusCode::BAD_REQUEST,
                format!(
                    "Bad Request: the body could not be read: {}",
                    shown(&reason)
                ),
            ),
        }
    }

    /// The principal `request`'s bearer token names (`None` without
    /// `--auth-tokens`), the token taken out of the request so that nothing
    /// after this layer sees it; `Err`: the 401 to answer.
    fn authenticate(
        &self,
        request: &mut Request<Incoming>,
    ) -> Result<Option<String>, Box<Response<Answer>>> {
        let Some(tokens) = &self.tokens else {
            return Ok(None);
        };
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(bearer_token);
        let Some(found) = presented.and_then(|token| tokens.principal(token)) else {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "Unauthorized: send `Authorization: Bearer TOKEN` with a token this server knows",
            );
            let challenge = if presented.is_some() {
                "Bearer realm=\"skillgraph\", error=\"invalid_token\""
            } else {
                "Bearer realm=\"skillgraph\""
            };
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(challenge),
            );
            return Err(Box::new(response));
        };
        request.headers_mut().remove(header::AUTHORIZATION);
        // A principal that takes none of the map's roles may run nothing
        // (SPEC §14.8): told its roles, never a skill.
        match self.hub.lens(Some(&found.roles)) {
            Ok(_) => {}
            Err(crate::ServeError::NoRole(refused)) => {
                return Err(Box::new(plain(
                    StatusCode::FORBIDDEN,
                    format!("Forbidden: {refused}"),
                )));
            }
            Err(failed) => {
                return Err(Box::new(plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("Internal Server Error: {failed}"),
                )));
            }
        }
        let binding = found.binding();
        request.extensions_mut().insert(found);
        Ok(Some(binding))
    }

    /// Hold the session `new` rmcp just opened for `principal`. At the
    /// principal's quota or with `--max-runs` held, the least recently used
    /// idle one is closed (SPEC §9.4, §9.8); if none may go, the new
    /// session is closed and its client told why.
    fn admit(
        &self,
        new: String,
        principal: Option<String>,
        handshake: Handshake,
        response: Response<Answer>,
    ) -> Response<Answer> {
        let close = |id: String| {
            let manager = Arc::clone(&self.manager);
            tokio::spawn(async move {
                let _ = manager.close_session(&SessionId::from(id.as_str())).await;
            });
        };
        match self.sessions.hold(new.clone(), principal, handshake) {
            Ok(evicted) => {
                if let Some(id) = evicted {
                    close(id);
                }
                response
            }
            Err(no_room) => {
                self.limits.runs.reached();
                close(new);
                plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("Service Unavailable: {}", no_room.say()),
                )
            }
        }
    }
}

/// Where the arguments of a call whose body is `length` bytes lie, when
/// they are to be held back from rmcp and parsed by the gateway: a
/// `tools/call` body over [`HOLD_OVER`] whose arguments are an object, and
/// no `Mcp-Param-` header, which rmcp checks against the arguments it
/// parses.
fn holding(
    peek: &strict::Peek<'_>,
    length: usize,
    headers: &http::HeaderMap,
) -> Option<std::ops::Range<usize>> {
    let params_in_headers = headers
        .keys()
        .any(|name| name.as_str().starts_with("mcp-param-"));
    (length > HOLD_OVER && peek.method.as_deref() == Some("tools/call") && !params_in_headers)
        .then(|| peek.arguments.clone())
        .flatten()
}

/// A refused body's answer: 400 with a JSON-RPC error and a null id.
fn json_refusal(refused: &strict::Refused) -> Response<Answer> {
    let body = strict::answer(refused).unwrap_or_else(|| refused.message());
    let mut response = plain(StatusCode::BAD_REQUEST, body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// 429 for a principal past its new-run rate, with the seconds to wait.
fn too_many(wait: Duration) -> Response<Answer> {
    let seconds = wait.as_secs_f64().ceil().max(1.0);
    let mut response = plain(
        StatusCode::TOO_MANY_REQUESTS,
        format!(
            "Too Many Requests: you started runs faster than --new-runs-per-minute allows; retry after {seconds} s, or go on with a run you hold by its skillgraph_run handle"
        ),
    );
    if let Ok(value) = HeaderValue::from_str(&format!("{seconds}")) {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

/// A request being answered on a connection: the connection is busy from
/// [`Answering::busy`] until this is dropped (the answer's last byte sent,
/// or the request abandoned), then stalled again, waiting for its next
/// head.
struct Answering {
    door: Arc<Door>,
    conn: Arc<Conn>,
    /// The posted requests being answered, this one among them once
    /// [`Answering::busy`] counted it.
    in_flight: Arc<AtomicUsize>,
    counted: AtomicBool,
}

impl Answering {
    /// A request whose head was just read: its connection waits for the
    /// body from now.
    fn new(door: &Arc<Door>, conn: &Arc<Conn>, in_flight: &Arc<AtomicUsize>) -> Self {
        door.stalled(conn);
        Answering {
            door: Arc::clone(door),
            conn: Arc::clone(conn),
            in_flight: Arc::clone(in_flight),
            counted: AtomicBool::new(false),
        }
    }

    /// The body is read: the request is being answered; a posted one is
    /// counted until its answer's last byte, so that a drain waits for it.
    fn busy(&self, posted: bool) {
        Door::busy(&self.conn);
        if posted && !self.counted.swap(true, Ordering::Relaxed) {
            self.in_flight.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.door.stalled(&self.conn);
        if self.counted.load(Ordering::Relaxed) {
            self.in_flight.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// `text` [`cut`] to [`MAX_ECHO`](crate::echo::MAX_ECHO) characters,
/// saying so; `None` when it is short enough.
fn shortened(text: &str) -> Option<String> {
    match cut(text) {
        Cow::Owned(shorter) => Some(shorter),
        Cow::Borrowed(_) => None,
    }
}

/// A 400 answer whose message (a JSON-RPC error's, or the plain text) is
/// cut to [`MAX_ECHO`](crate::echo::MAX_ECHO) characters (SPEC §9.7); any
/// other answer as it is.
async fn bounded_error(response: Response<Answer>) -> Response<Answer> {
    if response.status() != StatusCode::BAD_REQUEST {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(collected) = body.collect().await;
    let bytes = collected.to_bytes();
    let shortened = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(mut answer) => answer
            .pointer_mut("/error/message")
            .and_then(|message| {
                let shorter = shortened(message.as_str()?)?;
                *message = serde_json::Value::String(shorter);
                Some(())
            })
            .and_then(|()| serde_json::to_vec(&answer).ok()),
        Err(_) => shortened(&String::from_utf8_lossy(&bytes)).map(String::into_bytes),
    };
    let body = match shortened {
        Some(shorter) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Bytes::from(shorter)
        }
        None => bytes,
    };
    Response::from_parts(parts, Full::new(body).boxed())
}

/// Serve `hub` over HTTP on `listener` until `stop` completes.
pub(crate) async fn serve(
    listener: TcpListener,
    hub: Arc<Hub>,
    config: &HttpConfig,
    tokens: Option<Auth>,
    stop: impl std::future::Future<Output = ()>,
) {
    let sessions = Sessions::new(config.run_ttl, config.max_runs, config.quota());
    let mcp = StreamableHttpServerConfig::default()
        .with_allowed_hosts(config.allowed_hosts.clone())
        .with_allowed_origins(config.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(config.max_body);
    let manager = Arc::new(Manager::new(
        config.run_ttl,
        sessions.clone(),
        Arc::clone(&hub),
        mcp.cancellation_token.clone(),
    ));
    let gateways = Arc::clone(&hub);
    let service = StreamableHttpService::new(
        move || Ok(Gateway::new(Arc::clone(&gateways))),
        Arc::clone(&manager),
        mcp,
    );
    let limits = Arc::new(Limits::new());
    let front = Arc::new(Front {
        service,
        manager,
        hub,
        tokens,
        sessions,
        allowed_hosts: config.allowed_hosts.clone(),
        max_body: config.max_body,
        body_timeout: config.body_timeout,
        parsing: Parsing::new(config.max_body),
        rates: Rates::new(config.new_runs_per_minute),
        limits: Arc::clone(&limits),
        draining: AtomicBool::new(false),
        in_flight: Arc::new(AtomicUsize::new(0)),
        restoring: tokio::sync::Mutex::new(()),
    });
    // With a shared store: the list_changed hints of the sessions served
    // here, whichever replica's step changed their list.
    if let Some(store) = front.hub.store.clone() {
        let hub = Arc::downgrade(&front.hub);
        tokio::spawn(async move {
            store
                .listen(|session| match hub.upgrade() {
                    Some(hub) => {
                        if !session.is_empty() {
                            hub.list_changed(session);
                        }
                        true
                    }
                    None => false,
                })
                .await;
        });
    }
    // SIGHUP reads the JWT key set again.
    #[cfg(unix)]
    if front.tokens.is_some() {
        // Weak: the server's end drops what it holds (the upstreams).
        let front = Arc::downgrade(&front);
        tokio::spawn(async move {
            use tokio::signal::unix::{SignalKind, signal};
            let Ok(mut hangups) = signal(SignalKind::hangup()) else {
                return;
            };
            while hangups.recv().await.is_some() {
                let Some(front) = front.upgrade() else {
                    return;
                };
                if let Some(auth) = &front.tokens {
                    auth.reload();
                }
            }
        });
    }
    let door = Arc::new(Door::new(door::cap_within(
        config.max_connections,
        door::descriptors(),
    )));
    if door.cap() < config.max_connections {
        warn(&format!(
            "at most {} connections are held, not --max-connections {}: the process may open {} files (`ulimit -n`), and the rest are kept for upstream servers and records",
            door.cap(),
            config.max_connections,
            door::descriptors().unwrap_or_default()
        ));
    }
    let mut say = tokio::time::interval(Duration::from_secs(1));
    // With a shared store: this replica's liveness, renewed, and the calls
    // of the dead closed (the first round registers it).
    let heartbeat = Arc::new(Heartbeat::default());
    let mut beats = 0u64;
    let mut pause = door::FIRST_PAUSE;
    // Asked to stop: `/readyz` says so at once, requests are served for the
    // grace, then the listener closes.
    let stop = async {
        stop.await;
        front.draining.store(true, Ordering::Relaxed);
        tokio::time::sleep(config.drain_grace).await;
    };
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = say.tick() => {
                limits.say_all();
                // A sleeping session has no rmcp keep-alive to end it.
                front.sessions.forget_idle();
                // An open breaker is tried once a second even without
                // requests, so that /readyz says when the store is back.
                if let Some(store) = front.hub.store.as_ref().filter(|store| store.breaker.open()) {
                    tokio::spawn(Arc::clone(store).probe());
                }
                if beats.is_multiple_of(HEARTBEAT.as_secs().max(1)) {
                    heartbeat.beat(&front.hub);
                }
                beats += 1;
                continue;
            }
            () = &mut stop => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => {
                pause = door::FIRST_PAUSE;
                // An answer may go out in several writes (its head, then
                // its body once the run store took the step): without
                // TCP_NODELAY the second waits for the client's delayed
                // acknowledgement, about 40 ms.
                let _ = stream.set_nodelay(true);
                stream
            }
            Err(_) => {
                // Out of file descriptors, most likely: wait, never spin.
                limits.accept.reached();
                tokio::select! {
                    () = tokio::time::sleep(pause) => {}
                    () = &mut stop => break,
                }
                pause = door::longer(pause);
                continue;
            }
        };
        let conn = match door.admit() {
            Admitted::Held { conn, bumped } => {
                if bumped {
                    limits.connections.reached();
                }
                conn
            }
            Admitted::Refused => {
                limits.connections.reached();
                drop(stream);
                continue;
            }
        };
        tokio::spawn(connection(
            stream,
            Arc::clone(&front),
            Arc::clone(&door),
            conn,
            config.head_timeout,
        ));
    }
    // The calls under way finish, within the drain timeout.
    let until = Instant::now() + config.drain_timeout;
    while front.in_flight.load(Ordering::Relaxed) > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // What is still open is closed as `drain`, and the replica leaves.
    replicas::leave(&front.hub).await;
}

/// Serve one connection until it ends or the door closes it to make room.
async fn connection(
    stream: tokio::net::TcpStream,
    front: Arc<Front>,
    door: Arc<Door>,
    conn: Arc<Conn>,
    head_timeout: Duration,
) {
    let service = {
        let (door, conn) = (Arc::clone(&door), Arc::clone(&conn));
        hyper::service::service_fn(move |request| {
            let answering = Answering::new(&door, &conn, &front.in_flight);
            let front = Arc::clone(&front);
            async move {
                let response = front.handle(request, &answering).await;
                Ok::<_, Infallible>(response.map(|body| Guarded::boxed(body, answering)))
            }
        })
    };
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(head_timeout)
        .serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        _ = served => {}
        () = conn.closed.notified() => {}
    }
    door.leave(&conn);
}

/// The line that says where the server listens, for people and for the
/// tests that start it on port 0.
pub(crate) fn listening_line(addr: SocketAddr) -> String {
    format!("listening on http://{addr}{PATH}")
}
