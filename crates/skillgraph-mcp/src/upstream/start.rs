//! Starting one upstream server (SPEC §9.5, §9.7): a child process over
//! stdio or a streamable-HTTP server by `url`, spoken to in the newest
//! protocol generation it offers. `server/discover` comes first; a server
//! that does not know it is started again (a child process) or reached
//! again (a URL) for the `initialize` handshake. A server that answered
//! `server/discover` may offer the handshake generation too: a second link
//! in that generation is opened when a client of it first comes, so that
//! what the server does for those clients (requests of its own, log
//! levels, subscriptions) reaches them; a server that refuses it serves
//! them on its sessionless link.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use skillgraph::{McpServer, McpTransport};
use tokio::process::Command;

use super::{Link, StartError, Tail, Upstream, drain_stderr};
use crate::relay::{Arrivals, InOrder, Relay, UpstreamHandler};
use crate::warn;

/// The longest wait for an answer to `server/discover`: a server of the
/// handshake generation alone may never answer it.
const DISCOVER_WAIT: Duration = Duration::from_secs(10);

/// Why a link could not be opened.
enum Failure {
    /// The lifecycle failed (the process may be dying, or the server does
    /// not know the generation).
    Handshake(String),
    /// No answer in time, or no tool list.
    Other(String),
}

impl Failure {
    fn reason(&self) -> &str {
        match self {
            Failure::Handshake(reason) | Failure::Other(reason) => reason,
        }
    }
}

/// How to open a link to one upstream server.
pub(super) struct Opener {
    server: String,
    timeout: Duration,
    relay: Relay,
    way: Way,
    /// Standard error of every process started for the server.
    tail: Tail,
}

/// A program to start, or a URL to reach.
enum Way {
    Child { dir: PathBuf, decl: McpServer },
    Http(Box<StreamableHttpClientTransportConfig>),
}

impl Opener {
    /// A link in the generation of `lifecycle`: a new process, or a new
    /// connection to the URL.
    async fn open(
        &self,
        lifecycle: ClientLifecycleMode,
        wait: Duration,
    ) -> Result<Result<(Link, Vec<Tool>), Failure>, StartError> {
        let sessionless = !matches!(lifecycle, ClientLifecycleMode::Initialize);
        let id = self.relay.new_link();
        let arrivals = Arc::new(Arrivals::default());
        let handler = UpstreamHandler {
            server: self.server.clone(),
            relay: self.relay.clone(),
            link: id,
            sessionless,
            arrivals: arrivals.clone(),
        };
        let connected = match &self.way {
            Way::Child { dir, decl } => {
                let transport = spawn(dir, &self.server, decl, &self.tail)?;
                let transport = InOrder::new(transport, arrivals);
                connect(handler, transport, wait, self.timeout, lifecycle).await
            }
            Way::Http(config) => {
                let transport = StreamableHttpClientTransport::from_config((**config).clone());
                let transport = InOrder::new(transport, arrivals);
                connect(handler, transport, wait, self.timeout, lifecycle).await
            }
        };
        Ok(connected.map(|(client, tools)| (Link { id, client }, tools)))
    }

    /// The first link: `server/discover`, else the `initialize` handshake.
    async fn first(&self) -> Result<(Link, Vec<Tool>), StartError> {
        let discovered = match self
            .open(discover(), DISCOVER_WAIT.min(self.timeout))
            .await?
        {
            Ok(first) => return Ok(first),
            Err(failure) => failure,
        };
        match self
            .open(ClientLifecycleMode::Initialize, self.timeout)
            .await?
        {
            Ok(first) => Ok(first),
            Err(failure) => Err(self.refused(&failure, &discovered).await),
        }
    }

    /// Why neither lifecycle started the server.
    async fn refused(&self, initialized: &Failure, discovered: &Failure) -> StartError {
        let mut reason = format!(
            "{}; server/discover failed too: {}",
            initialized.reason(),
            discovered.reason()
        );
        match &self.way {
            Way::Http(config) => StartError::Unreachable {
                server: self.server.clone(),
                url: config.uri.to_string(),
                reason,
            },
            Way::Child { .. } => {
                if matches!(initialized, Failure::Handshake(_)) {
                    // The dying process may still be writing its last words.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    reason = format!("the MCP handshake failed ({reason})");
                }
                StartError::Handshake {
                    server: self.server.clone(),
                    reason,
                    stderr: self.tail.text(),
                }
            }
        }
    }

    /// A link in the handshake generation beside the sessionless
    /// `primary`, or `None` (said on standard error) when the server does
    /// not take one: its handshake clients are then served on `primary`.
    pub(super) async fn handshake_link(&self, server: &str, primary: &Link) -> Option<Link> {
        let opened = match self
            .open(ClientLifecycleMode::Initialize, self.timeout)
            .await
        {
            Ok(Ok((link, tools))) => {
                let listed = |tools: &[Tool]| {
                    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
                    names.sort();
                    names
                };
                let first = primary.peer().list_all_tools().await.unwrap_or_default();
                if listed(&first) != listed(&tools) {
                    warn(&format!(
                        "upstream server \"{server}\" lists other tools on the handshake generation than on the sessionless one; serve offers the sessionless list"
                    ));
                }
                return Some(link);
            }
            Ok(Err(failure)) => failure.reason().to_owned(),
            Err(error) => error.to_string(),
        };
        warn(&format!(
            "upstream server \"{server}\" took no link in the handshake generation ({opened}); its handshake clients are served in the sessionless generation"
        ));
        None
    }
}

/// The lifecycle of the sessionless generation: `server/discover`, with no
/// fallback on the same connection.
fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::LATEST],
    }
}

/// Start one server and list its tools.
pub(super) async fn start_one(
    dir: &Path,
    name: &str,
    decl: &McpServer,
    timeout: Duration,
    relay: &Relay,
) -> Result<(Upstream, Vec<Tool>), StartError> {
    let declared = |reason: &str| StartError::Declaration {
        server: name.to_owned(),
        reason: reason.to_owned(),
    };
    let way = match (&decl.url, decl.command.is_empty(), decl.transport) {
        (Some(_), false, _) => {
            return Err(declared(
                "it has both `command` and `url`; keep `command` for a program to start, `url` for a server already running",
            ));
        }
        (None, true, _) => {
            return Err(declared(
                "it has neither `command` (a program to start) nor `url` (a streamable-HTTP server)",
            ));
        }
        (Some(_), true, Some(McpTransport::Stdio)) | (None, false, Some(McpTransport::Http)) => {
            return Err(declared(
                "its `type` does not fit it: `stdio` goes with `command`, `http` with `url`",
            ));
        }
        (Some(url), true, _) => Way::Http(Box::new(http_config(name, url, &decl.headers)?)),
        (None, false, _) => Way::Child {
            dir: dir.to_owned(),
            decl: decl.clone(),
        },
    };
    let opener = Opener {
        server: name.to_owned(),
        timeout,
        relay: relay.clone(),
        way,
        tail: Tail::default(),
    };
    let (primary, tools) = opener.first().await?;
    let other = tokio::sync::OnceCell::new();
    if !primary.sessionless() {
        // It answered `initialize` only: it offers no other generation.
        let _ = other.set(None);
    }
    Ok((
        Upstream {
            name: name.to_owned(),
            primary,
            other,
            stderr: opener.tail.clone(),
            opener,
        },
        tools,
    ))
}

/// Start the program of `decl` in `dir`, its standard error copied to
/// ours and kept in `tail`.
fn spawn(
    dir: &Path,
    name: &str,
    decl: &McpServer,
    tail: &Tail,
) -> Result<TokioChildProcess, StartError> {
    let mut command = Command::new(&decl.command);
    // Killed when dropped, so that no path out of `serve` (a failed start,
    // a refused map, a closed connection) leaves it running.
    command
        .args(&decl.args)
        .envs(&decl.env)
        .current_dir(dir)
        .kill_on_drop(true);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| StartError::Spawn {
            server: name.to_owned(),
            command: decl.command.clone(),
            source,
        })?;
    if let Some(stderr) = stderr {
        drain_stderr(name.to_owned(), stderr, tail.clone());
    }
    Ok(transport)
}

/// The MCP lifecycle of `lifecycle` over `transport` within `wait`, then
/// the server's tools within `timeout`.
async fn connect<T, E, A>(
    handler: UpstreamHandler,
    transport: T,
    wait: Duration,
    timeout: Duration,
    lifecycle: ClientLifecycleMode,
) -> Result<(RunningService<RoleClient, UpstreamHandler>, Vec<Tool>), Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let what = match lifecycle {
        ClientLifecycleMode::Initialize => "the MCP handshake",
        _ => "server/discover",
    };
    let client = match tokio::time::timeout(
        wait,
        handler.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    {
        Ok(Ok(client)) => client,
        Ok(Err(error)) => return Err(Failure::Handshake(error.to_string())),
        Err(_) => {
            return Err(Failure::Other(format!(
                "no answer to {what} within {} s",
                wait.as_secs()
            )));
        }
    };
    match tokio::time::timeout(timeout, client.peer().list_all_tools()).await {
        Ok(Ok(tools)) => Ok((client, tools)),
        Ok(Err(error)) => Err(Failure::Other(format!("tools/list failed: {error}"))),
        Err(_) => Err(Failure::Other(format!(
            "no answer to tools/list within {} s",
            timeout.as_secs()
        ))),
    }
}

/// The transport settings for a streamable-HTTP server at `url`, sending
/// `headers` with every request (an `Authorization: Bearer` header as
/// rmcp's token).
fn http_config(
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransportConfig, StartError> {
    let declared = |reason: String| StartError::Declaration {
        server: name.to_owned(),
        reason,
    };
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    let mut custom = std::collections::HashMap::new();
    for (key, value) in headers {
        if key.eq_ignore_ascii_case("authorization") {
            match value.strip_prefix("Bearer ") {
                Some(token) => config = config.auth_header(token.trim()),
                None => {
                    return Err(declared(format!(
                        "its header `{key}` is not `Bearer TOKEN`, the one kind of authorization sent upstream"
                    )));
                }
            }
            continue;
        }
        let header = http::HeaderName::from_bytes(key.as_bytes())
            .map_err(|_| declared(format!("`{key}` is not a header name")))?;
        let value = http::HeaderValue::from_str(value)
            .map_err(|_| declared(format!("the value of header `{key}` cannot be sent")))?;
        custom.insert(header, value);
    }
    Ok(config.custom_headers(custom))
}
