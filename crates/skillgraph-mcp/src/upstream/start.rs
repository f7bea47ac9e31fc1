//! Starting one upstream server (SPEC §9.5, §9.7): a child process over
//! stdio or a streamable-HTTP server by `url`, spoken to in each protocol
//! generation it offers. A server that answers `server/discover` gets a
//! connection of the sessionless generation, for the clients of that
//! generation; one that answers `initialize` gets a connection of the
//! handshake generation, for the clients of that one. So every client is
//! served end to end in the generation it speaks, and the newest generation
//! is used wherever the client speaks it.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use skillgraph::{McpServer, McpTransport};
use tokio::process::Command;

use super::{Connections, StartError, Tail, Upstream, drain_stderr};
use crate::relay::UpstreamHandler;

/// A connection to an upstream, in one generation, and its tools.
type Connected = (RunningService<RoleClient, UpstreamHandler>, Vec<Tool>);

/// Why a started server is not usable.
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

/// The two lifecycles: `server/discover` (the sessionless generation,
/// no fallback) and `initialize` (the handshake generation).
fn discover() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::LATEST],
    }
}

/// The server's connections from the two attempts, or why neither worked.
fn connections(
    sessionless: Result<Connected, Failure>,
    handshake: Result<Connected, Failure>,
) -> Result<(Connections, Vec<Tool>), Failure> {
    match (sessionless, handshake) {
        (Ok((sessionless, _)), Ok((handshake, tools))) => Ok((
            Connections::Both {
                handshake,
                sessionless,
            },
            tools,
        )),
        (Ok((one, tools)), Err(_)) | (Err(_), Ok((one, tools))) => {
            Ok((Connections::One(one), tools))
        }
        (Err(discovered), Err(initialized)) => {
            let reason = format!(
                "{}; server/discover failed too: {}",
                initialized.reason(),
                discovered.reason()
            );
            Err(match initialized {
                Failure::Handshake(_) => Failure::Handshake(reason),
                Failure::Other(_) => Failure::Other(reason),
            })
        }
    }
}

/// Start one server and list its tools.
pub(super) async fn start_one(
    dir: &Path,
    name: &str,
    decl: &McpServer,
    timeout: Duration,
    handler: UpstreamHandler,
) -> Result<(Upstream, Vec<Tool>), StartError> {
    let declared = |reason: &str| StartError::Declaration {
        server: name.to_owned(),
        reason: reason.to_owned(),
    };
    match (&decl.url, decl.command.is_empty(), decl.transport) {
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
        (Some(url), true, _) => {
            return start_http(name, url, &decl.headers, timeout, handler).await;
        }
        (None, false, _) => {}
    }
    // One process per generation, both started at once; the one whose
    // lifecycle fails is dropped, and so killed.
    let tail = Tail::default();
    let sessionless = spawn(dir, name, decl, &tail)?;
    let handshake_transport = spawn(dir, name, decl, &tail)?;
    let (sessionless, handshake) = tokio::join!(
        connect(handler.clone(), sessionless, timeout, discover()),
        connect(
            handler,
            handshake_transport,
            timeout,
            ClientLifecycleMode::Initialize
        ),
    );
    match connections(sessionless, handshake) {
        Ok((connections, tools)) => Ok((
            Upstream {
                name: name.to_owned(),
                connections,
                stderr: tail,
            },
            tools,
        )),
        Err(failure) => {
            let reason = match failure {
                Failure::Handshake(reason) => after_exit(reason).await,
                Failure::Other(reason) => reason,
            };
            Err(StartError::Handshake {
                server: name.to_owned(),
                reason,
                stderr: tail.text(),
            })
        }
    }
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

/// The MCP lifecycle of `lifecycle` over `transport`, then the server's
/// tools, each within `timeout`.
async fn connect<T, E, A>(
    handler: UpstreamHandler,
    transport: T,
    timeout: Duration,
    lifecycle: ClientLifecycleMode,
) -> Result<Connected, Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let what = match lifecycle {
        ClientLifecycleMode::Initialize => "the MCP handshake",
        _ => "server/discover",
    };
    let client =
        match tokio::time::timeout(timeout, handler.serve_with_lifecycle(transport, lifecycle))
            .await
        {
            Ok(Ok(client)) => client,
            Ok(Err(error)) => return Err(Failure::Handshake(error.to_string())),
            Err(_) => {
                return Err(Failure::Other(format!(
                    "no answer to {what} within {} s",
                    timeout.as_secs()
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

/// Connect to a streamable-HTTP server at `url`, sending `headers` with
/// every request (an `Authorization: Bearer` header as rmcp's token).
async fn start_http(
    name: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    timeout: Duration,
    handler: UpstreamHandler,
) -> Result<(Upstream, Vec<Tool>), StartError> {
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
    let config = config.custom_headers(custom);
    let transport = || StreamableHttpClientTransport::from_config(config.clone());
    let (sessionless, handshake) = tokio::join!(
        connect(handler.clone(), transport(), timeout, discover()),
        connect(
            handler,
            transport(),
            timeout,
            ClientLifecycleMode::Initialize
        ),
    );
    let (connections, tools) =
        connections(sessionless, handshake).map_err(|failure| StartError::Unreachable {
            server: name.to_owned(),
            url: url.to_owned(),
            reason: failure.reason().to_owned(),
        })?;
    Ok((
        Upstream {
            name: name.to_owned(),
            connections,
            stderr: Tail::default(),
        },
        tools,
    ))
}

/// A failed handshake's reason, once the dying process has had a moment to
/// write its last words to standard error.
async fn after_exit(reason: String) -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    format!("the MCP handshake failed ({reason})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_neither_lifecycle_starts_is_refused_with_both_reasons() {
        let refused = connections(
            Err(Failure::Handshake("method not found".to_owned())),
            Err(Failure::Other("no answer within 5 s".to_owned())),
        );
        let Err(Failure::Other(reason)) = refused else {
            panic!("refused as the handshake's failure");
        };
        assert!(reason.contains("no answer within 5 s"), "{reason}");
        assert!(
            reason.contains("server/discover failed too: method not found"),
            "{reason}"
        );
    }
}
