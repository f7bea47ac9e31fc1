//! `serve --http` (SPEC §9.8): rmcp's streamable-HTTP service on `/mcp`,
//! served by hyper, behind the checks rmcp leaves to its host. rmcp checks
//! the `Host` header (403), a browser's `Origin` (403), the body's size
//! (413) and type (415) and the 2026-07-28 header rules (400 with
//! `-32020`); this layer answers other paths (404) and, with
//! `--auth-tokens`, every request without a known bearer token (401 with
//! `WWW-Authenticate`). The principal a token names rides in the request's
//! extensions to the gateway, which binds each run to it; a handshake
//! session is bound here, so that another principal's request for it is
//! answered as an unknown session is.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;

use crate::echo::cut;
use crate::gateway::{Gateway, Principal};
use crate::hub::Hub;
use crate::warn;

/// The path the server answers on.
const PATH: &str = "/mcp";

/// How long a client may take to send a request's head.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The header of a handshake session.
const SESSION_HEADER: &str = "mcp-session-id";

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
    /// How long a run may stay idle before it is dropped (`--run-ttl`).
    pub run_ttl: Duration,
    /// The most runs held at once (`--max-runs`).
    pub max_runs: usize,
}

impl HttpConfig {
    /// Listen at `addr` with the defaults: the loopback host names, the
    /// loopback origins, 4 MiB bodies, no tokens, a 24 h time to live,
    /// 10,000 runs.
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
            run_ttl: Duration::from_secs(24 * 3600),
            max_runs: 10_000,
        }
    }
}

/// A line of an `--auth-tokens` file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path}:{line}: {reason}; each line is `PRINCIPAL TOKEN_SHA256`: a name and the 64 hexadecimal digits of the token's SHA-256 (`printf %s TOKEN | sha256sum`)"
)]
pub struct TokensError {
    /// The file.
    pub path: String,
    /// The line, from 1 (0: the file itself).
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The principals and the digests of their tokens.
#[derive(Debug)]
pub(crate) struct Tokens(Vec<(String, [u8; 32])>);

impl Tokens {
    /// Read an `--auth-tokens` file: lines `PRINCIPAL TOKEN_SHA256`, blank
    /// lines and `#` comments skipped.
    pub(crate) fn read(path: &Path) -> Result<Self, TokensError> {
        let fault = |line: usize, reason: String| TokensError {
            path: path.display().to_string(),
            line,
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|err| fault(0, err.to_string()))?;
        Self::parse(&text).map_err(|(line, reason)| fault(line, reason))
    }

    fn parse(text: &str) -> Result<Self, (usize, String)> {
        let mut tokens = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(principal), Some(digest), None) = (words.next(), words.next(), words.next())
            else {
                return Err((number, "the line is not two words".to_owned()));
            };
            let digest = decode_digest(digest).ok_or_else(|| {
                (
                    number,
                    format!("the digest of \"{principal}\" is not 64 hexadecimal digits"),
                )
            })?;
            tokens.push((principal.to_owned(), digest));
        }
        if tokens.is_empty() {
            return Err((0, "the file names no principal".to_owned()));
        }
        Ok(Tokens(tokens))
    }

    /// The principal whose token is `token`. Every digest is compared, in
    /// constant time, whichever matches.
    fn principal(&self, token: &str) -> Option<&str> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        for (principal, expected) in &self.0 {
            if bool::from(digest.ct_eq(expected)) {
                found = Some(principal.as_str());
            }
        }
        found
    }
}

fn decode_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.as_bytes().chunks(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(digest)
}

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

/// The session header's value put in place of a session this layer does
/// not hold for the request's principal: no session has it, so rmcp
/// answers it as an unknown session, after every check of its own.
const NO_SESSION: &str = "not-a-session";

/// A handshake session as this layer knows it.
struct Held {
    /// The principal it is bound to (with `--auth-tokens`).
    principal: Option<String>,
    /// When a request naming it last ended.
    last: Instant,
    /// Requests naming it whose answers are not sent whole yet.
    busy: usize,
}

/// The handshake sessions this layer holds, by id. A session it does not
/// hold for the request's principal is answered as unknown.
type Table = Arc<Mutex<HashMap<String, Held>>>;

/// A request naming a held session: the session counts as busy until this
/// is dropped, with the answer's last byte sent or the request abandoned.
struct InFlight {
    table: Table,
    session: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut table) = self.table.lock()
            && let Some(held) = table.get_mut(&self.session)
        {
            held.busy = held.busy.saturating_sub(1);
            held.last = Instant::now();
        }
    }
}

/// An answer's body that keeps its request [`InFlight`] while it streams.
struct Guarded {
    body: Body,
    _in_flight: InFlight,
}

impl hyper::body::Body for Guarded {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// What stands before rmcp's service: the path, the tokens, and the
/// handshake sessions, each with its principal, at most `max_sessions`.
struct Front {
    service: StreamableHttpService<Gateway, LocalSessionManager>,
    manager: Arc<LocalSessionManager>,
    tokens: Option<Tokens>,
    sessions: Table,
    max_sessions: usize,
    /// How long rmcp keeps an idle session (`--run-ttl`).
    ttl: Duration,
}

impl Front {
    async fn handle(&self, mut request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != PATH {
            return plain(
                StatusCode::NOT_FOUND,
                "Not Found: this MCP server answers on /mcp",
            );
        }
        let principal = match self.authenticate(&mut request) {
            Ok(principal) => principal,
            Err(refused) => return *refused,
        };
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .map(|value| value.to_str().unwrap_or(NO_SESSION).to_owned());
        let in_flight = match &session {
            Some(session) => {
                let in_flight = self.enter(session, principal.as_ref());
                if in_flight.is_none() {
                    // Answered by rmcp as an unknown session, after its
                    // Host, Origin and size checks, so that another
                    // principal's session cannot be told from none.
                    request
                        .headers_mut()
                        .insert(SESSION_HEADER, HeaderValue::from_static(NO_SESSION));
                }
                in_flight
            }
            None => None,
        };
        let deleting = request.method() == http::Method::DELETE;
        let mut response = bounded_error(self.service.handle(request).await).await;
        if deleting && response.status() == StatusCode::ACCEPTED {
            // The session is ended, and nothing follows: 204, which the
            // SDKs take as done (rmcp says 202, which the Python SDK
            // reports as a failed termination).
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        if let (Some(session), true) = (&session, in_flight.is_some()) {
            if deleting
                && response.status().is_success()
                && let Ok(mut table) = self.sessions.lock()
            {
                table.remove(session);
            }
        } else if session.is_none()
            && let Some(new) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        {
            return self.admit(new, principal, response);
        }
        match in_flight {
            Some(in_flight) => response.map(|body| {
                Guarded {
                    body,
                    _in_flight: in_flight,
                }
                .boxed()
            }),
            None => response,
        }
    }

    /// The principal `request`'s bearer token names (`None` without
    /// `--auth-tokens`), the token taken out of the request so that nothing
    /// after this layer sees it; `Err`: the 401 to answer.
    fn authenticate(
        &self,
        request: &mut Request<Incoming>,
    ) -> Result<Option<String>, Box<Response<Body>>> {
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
        let found = found.to_owned();
        request.headers_mut().remove(header::AUTHORIZATION);
        request.extensions_mut().insert(Principal(found.clone()));
        Ok(Some(found))
    }

    /// A request naming `session`, when this layer holds it for
    /// `principal`: busy until the returned guard is dropped.
    fn enter(&self, session: &str, principal: Option<&String>) -> Option<InFlight> {
        let mut table = self.sessions.lock().ok()?;
        let held = table.get_mut(session)?;
        if held.principal.as_ref() != principal {
            return None;
        }
        held.busy += 1;
        Some(InFlight {
            table: Arc::clone(&self.sessions),
            session: session.to_owned(),
        })
    }

    /// Hold the session `new` rmcp just opened for `principal`. With
    /// `max_sessions` held already, the least recently used idle one is
    /// closed (SPEC §9.4); if every one is busy, the new session is closed
    /// and its client told why.
    fn admit(
        &self,
        new: String,
        principal: Option<String>,
        response: Response<Body>,
    ) -> Response<Body> {
        let close = |id: String| {
            let manager = Arc::clone(&self.manager);
            tokio::spawn(async move {
                let _ = manager.close_session(&SessionId::from(id.as_str())).await;
            });
        };
        match self.hold(new.clone(), principal) {
            Some(evicted) => {
                if let Some(id) = evicted {
                    close(id);
                }
                response
            }
            None => {
                close(new);
                plain(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Service Unavailable: this server holds as many sessions as --max-runs allows, and every one is busy; try again later",
                )
            }
        }
    }

    /// Forget the sessions rmcp has closed (idle past the TTL), and hold
    /// `new` for `principal`: `None` when the table is full and every
    /// session in it busy, else the least recently used idle session it
    /// pushed out, if any.
    fn hold(&self, new: String, principal: Option<String>) -> Option<Option<String>> {
        let mut table = self.sessions.lock().ok()?;
        let ttl = self.ttl;
        table.retain(|_, held| held.busy > 0 || held.last.elapsed() < ttl);
        let mut evicted = None;
        if table.len() >= self.max_sessions {
            let id = table
                .iter()
                .filter(|(_, held)| held.busy == 0)
                .min_by_key(|(_, held)| held.last)
                .map(|(id, _)| id.clone())?;
            table.remove(&id);
            evicted = Some(id);
        }
        table.insert(
            new,
            Held {
                principal,
                last: Instant::now(),
                busy: 0,
            },
        );
        Some(evicted)
    }
}

/// The token of an `Authorization` value of the bearer scheme, whose name
/// is case-insensitive (RFC 7235).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
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
async fn bounded_error(response: Response<Body>) -> Response<Body> {
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
    tokens: Option<Tokens>,
    stop: impl std::future::Future<Output = ()>,
) {
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(config.run_ttl);
    let manager = Arc::new(manager);
    let mcp = StreamableHttpServerConfig::default()
        .with_allowed_hosts(config.allowed_hosts.clone())
        .with_allowed_origins(config.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(config.max_body);
    let service = StreamableHttpService::new(
        move || Ok(Gateway::new(Arc::clone(&hub))),
        Arc::clone(&manager),
        mcp,
    );
    let front = Arc::new(Front {
        service,
        manager,
        tokens,
        sessions: Table::default(),
        max_sessions: config.max_runs.max(1),
        ttl: config.run_ttl,
    });
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let (stream, _) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                warn(&format!("could not accept a connection: {err}"));
                continue;
            }
        };
        let front = Arc::clone(&front);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let front = Arc::clone(&front);
                async move { Ok::<_, Infallible>(front.handle(request).await) }
            });
            // A client that never finishes its request head is let go.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The line that says where the server listens, for people and for the
/// tests that start it on port 0.
pub(crate) fn listening_line(addr: SocketAddr) -> String {
    format!("listening on http://{addr}{PATH}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_found_by_its_digest_only() {
        // printf %s secret | sha256sum
        let tokens = Tokens::parse(
            "# who may call\nann 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b\n\n",
        )
        .unwrap();
        assert_eq!(tokens.principal("secret"), Some("ann"));
        assert_eq!(tokens.principal("secret "), None);
        assert_eq!(tokens.principal(""), None);
    }

    #[test]
    fn a_bad_tokens_line_is_placed_and_explained() {
        assert_eq!(Tokens::parse("ann").unwrap_err().0, 1);
        assert_eq!(Tokens::parse("\nann abc").unwrap_err().0, 2);
        assert_eq!(Tokens::parse("ann 00 extra").unwrap_err().0, 1);
        assert_eq!(Tokens::parse("# nothing").unwrap_err().0, 0);
        let odd = format!("ann {}", "é".repeat(32));
        assert_eq!(Tokens::parse(&odd).unwrap_err().0, 1);
    }
}
