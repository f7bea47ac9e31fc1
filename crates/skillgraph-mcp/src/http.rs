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

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio::net::TcpListener;

use crate::gateway::{Gateway, Hub, Principal};
use crate::warn;

/// The path the server answers on.
const PATH: &str = "/mcp";

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

/// What stands before rmcp's service: the path, the tokens, and which
/// principal holds each handshake session.
struct Front {
    service: StreamableHttpService<Gateway, LocalSessionManager>,
    tokens: Option<Tokens>,
    sessions: Mutex<HashMap<String, String>>,
}

impl Front {
    async fn handle(&self, mut request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != PATH {
            return plain(
                StatusCode::NOT_FOUND,
                "Not Found: this MCP server answers on /mcp",
            );
        }
        let mut principal = None;
        if let Some(tokens) = &self.tokens {
            let presented = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "))
                .map(str::trim);
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
                return response;
            };
            let found = found.to_owned();
            // The token stays here: nothing after this layer sees it.
            request.headers_mut().remove(header::AUTHORIZATION);
            request.extensions_mut().insert(Principal(found.clone()));
            principal = Some(found);
        }
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        if let (Some(session), Some(principal)) = (&session, &principal) {
            let holder = self
                .sessions
                .lock()
                .ok()
                .and_then(|sessions| sessions.get(session).cloned());
            if holder.is_some_and(|holder| holder != *principal) {
                // As rmcp answers a session it does not hold.
                return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
            }
        }
        let deleting = request.method() == http::Method::DELETE;
        let response = self.service.handle(request).await;
        if let Some(principal) = principal
            && let Ok(mut sessions) = self.sessions.lock()
        {
            match (&session, response.headers().get(SESSION_HEADER)) {
                (None, Some(new)) => {
                    if let Ok(new) = new.to_str() {
                        sessions.insert(new.to_owned(), principal);
                    }
                }
                (Some(ended), _) if deleting => {
                    sessions.remove(ended);
                }
                _ => {}
            }
        }
        response
    }
}

/// Serve `hub` over HTTP on `listener` until `stop` completes.
pub(crate) async fn serve(
    listener: TcpListener,
    hub: Arc<Hub>,
    config: &HttpConfig,
    tokens: Option<Tokens>,
    stop: impl std::future::Future<Output = ()>,
) {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(config.run_ttl);
    let mcp = StreamableHttpServerConfig::default()
        .with_allowed_hosts(config.allowed_hosts.clone())
        .with_allowed_origins(config.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(config.max_body);
    let service = StreamableHttpService::new(
        move || Ok(Gateway::new(Arc::clone(&hub))),
        Arc::new(sessions),
        mcp,
    );
    let front = Arc::new(Front {
        service,
        tokens,
        sessions: Mutex::new(HashMap::new()),
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
            let _ = hyper::server::conn::http1::Builder::new()
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
