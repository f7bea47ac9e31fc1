//! The upstream MCP servers of `skillgraph serve` (SPEC §9): each one a
//! child process spoken to over its standard input and output, or a
//! streamable-HTTP server reached by `url`; its tools listed once at
//! start-up, its calls forwarded with a timeout. A server that does not
//! start stops start-up, naming it (and the tail of a child's standard
//! error); one that dies later only fails the requests to it.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, JsonObject, ProgressToken, RequestId, ServerResult,
    Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use skillgraph::{McpServer, McpTransport};

use crate::relay::{Caller, Relay, UpstreamHandler};

mod passthrough;
use crate::warn_raw;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStderr, Command};

/// How much of an upstream server's standard error is kept for messages.
const STDERR_TAIL: usize = 2048;

/// A server that could not be started, or whose tools could not be listed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The program could not be run at all.
    #[error(
        "upstream server \"{server}\": `{command}` could not be started: {source}; check `mcpServers.{server}.command` in skillmap.json (it runs in the map's folder)"
    )]
    Spawn {
        /// The server's name.
        server: String,
        /// The program.
        command: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The server's entry under `mcpServers` cannot be used as written.
    #[error("upstream server \"{server}\": {reason}; fix `mcpServers.{server}` in skillmap.json")]
    Declaration {
        /// The server's name.
        server: String,
        /// What is wrong with its entry.
        reason: String,
    },
    /// The server at a `url` could not be reached or did not complete the
    /// MCP handshake or list its tools.
    #[error(
        "upstream server \"{server}\" at {url} did not start: {reason}; check that it is running and that `mcpServers.{server}.url` names its MCP endpoint"
    )]
    Unreachable {
        /// The server's name.
        server: String,
        /// Its address.
        url: String,
        /// What happened.
        reason: String,
    },
    /// The program ran but did not complete the MCP handshake or list its
    /// tools.
    #[error("upstream server \"{server}\" did not start: {reason}{}", stderr_tail(.stderr))]
    Handshake {
        /// The server's name.
        server: String,
        /// What happened.
        reason: String,
        /// The tail of its standard error.
        stderr: String,
    },
}

impl StartError {
    /// The stable code of the error: `upstream-declaration` for an entry
    /// that cannot be used as written, `upstream-failed` for a server that
    /// did not start.
    pub fn code(&self) -> &'static str {
        match self {
            StartError::Declaration { .. } => "upstream-declaration",
            _ => "upstream-failed",
        }
    }
}

fn stderr_tail(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        "; it wrote nothing to standard error".to_owned()
    } else {
        format!("; the end of its standard error:\n{}", stderr.trim_end())
    }
}

/// The last bytes a server wrote to its standard error.
#[derive(Debug, Clone, Default)]
struct Tail(Arc<Mutex<VecDeque<u8>>>);

impl Tail {
    fn push_line(&self, line: &str) {
        if let Ok(mut tail) = self.0.lock() {
            tail.extend(line.as_bytes());
            tail.push_back(b'\n');
            let excess = tail.len().saturating_sub(STDERR_TAIL);
            tail.drain(..excess);
        }
    }

    fn text(&self) -> String {
        self.0
            .lock()
            .map(|tail| {
                String::from_utf8_lossy(&tail.iter().copied().collect::<Vec<u8>>()).into_owned()
            })
            .unwrap_or_default()
    }
}

/// Copy a server's standard error to ours, each line prefixed with its
/// name, keeping the tail for messages.
fn drain_stderr(server: String, stderr: ChildStderr, tail: Tail) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            warn_raw(&format!("[{server}] {line}"));
            tail.push_line(&line);
        }
    });
}

/// One running upstream server.
struct Upstream {
    name: String,
    client: RunningService<RoleClient, UpstreamHandler>,
    stderr: Tail,
}

/// Every upstream server, and which one offers each tool.
pub(crate) struct Upstreams {
    servers: Vec<Upstream>,
    /// Tool name → (server index, the tool as the server declared it).
    tools: BTreeMap<String, (usize, Tool)>,
    timeout: Duration,
    /// The client, as the servers reach it.
    relay: Relay,
    /// Resource URI → the server a list or a tool result named it for.
    uri_owners: Mutex<std::collections::HashMap<String, usize>>,
    /// Prompt name → the server that lists it.
    prompt_owners: Mutex<std::collections::HashMap<String, usize>>,
}

/// `"text"`, or its length when it is too long to repeat.
pub(crate) fn shown(text: &str) -> String {
    if text.chars().count() > crate::stdio::MAX_ECHO {
        format!("one of {} bytes", text.len())
    } else {
        format!("\"{}\"", text.escape_debug())
    }
}

/// Two servers offering one tool name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Clash {
    /// The tool.
    pub(crate) tool: String,
    /// The two servers, in name order.
    pub(crate) servers: [String; 2],
}

impl Upstreams {
    /// Start every server of `servers` in `dir`, waiting at most `timeout`
    /// for each to answer its handshake and list its tools; `solo` when
    /// `serve` has one client only (over stdio).
    pub(crate) async fn start(
        dir: &Path,
        servers: &BTreeMap<String, McpServer>,
        timeout: Duration,
        solo: bool,
    ) -> Result<(Self, Vec<Clash>), StartError> {
        let mut started = Upstreams {
            servers: Vec::with_capacity(servers.len()),
            tools: BTreeMap::new(),
            timeout,
            relay: Relay::new(solo),
            uri_owners: Mutex::default(),
            prompt_owners: Mutex::default(),
        };
        let mut clashes = Vec::new();
        for (name, decl) in servers {
            let handler = UpstreamHandler {
                server: name.clone(),
                relay: started.relay.clone(),
            };
            let (upstream, tools) = start_one(dir, name, decl, timeout, handler).await?;
            let index = started.servers.len();
            started.servers.push(upstream);
            for tool in tools {
                let tool_name = tool.name.to_string();
                match started.tools.get(&tool_name) {
                    Some((other, _)) => clashes.push(Clash {
                        tool: tool_name,
                        servers: [started.servers[*other].name.clone(), name.clone()],
                    }),
                    None => {
                        started.tools.insert(tool_name, (index, tool));
                    }
                }
            }
        }
        Ok((started, clashes))
    }

    /// The tool `name` as its server declared it.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name).map(|(_, tool)| tool)
    }

    /// Every upstream tool, in name order.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.values().map(|(_, tool)| tool)
    }

    /// The client, as the servers reach it.
    pub(crate) fn relay(&self) -> &Relay {
        &self.relay
    }

    /// The name of the server that offers `tool`.
    pub(crate) fn server_of(&self, tool: &str) -> Option<&str> {
        self.tools
            .get(tool)
            .map(|(index, _)| self.servers[*index].name.as_str())
    }

    /// Close every connection; each server sees the end of its input.
    pub(crate) async fn shut_down(self) {
        for server in self.servers {
            let _ = server.client.cancel().await;
        }
    }

    /// Forward one call of `caller`, unchanged, to the server that offers
    /// it; the upstream's progress reaches the caller under its `progress`
    /// token, and what the server sends while the call runs goes to the
    /// caller.
    ///
    /// # Errors
    ///
    /// Why the call failed, naming the server: it is gone, it did not
    /// answer in time (the call is then cancelled upstream), or it answered
    /// with a protocol error.
    pub(crate) async fn call(
        &self,
        name: &str,
        arguments: Option<JsonObject>,
        progress: Option<ProgressToken>,
        caller: Caller,
    ) -> Result<CallToolResult, String> {
        let Some((index, _)) = self.tools.get(name) else {
            return Err(format!("no upstream server offers a tool named \"{name}\""));
        };
        let upstream = &self.servers[*index];
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = upstream.client.peer();
        let client = caller.peer().clone();
        let _running = self.relay.running(&upstream.name, caller);
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(error) => return Err(failure(upstream, name, error)),
        };
        // The upstream's progress reaches the client under its own token.
        let _progress = progress.map(|token| {
            self.relay
                .route_progress(handle.progress_token.clone(), token, client)
        });
        // Dropped before the answer (at the timeout, or when the client
        // cancels the request it serves), the guard cancels the call upstream.
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let answer = tokio::time::timeout(self.timeout, handle.await_response()).await;
        match answer {
            Ok(answer) => {
                guard.id = None;
                match answer {
                    Ok(ServerResult::CallToolResult(result)) => Ok(result),
                    Ok(_) => Err(format!(
                        "upstream server \"{}\" answered {name} with a result that is not a tool result (an input request or a task), which skillgraph serve does not relay",
                        upstream.name
                    )),
                    Err(error) => Err(failure(upstream, name, error)),
                }
            }
            Err(_) => Err(format!(
                "upstream server \"{}\" did not answer {name} within {} s, so the call was cancelled; raise `--upstream-timeout` if it needs longer",
                upstream.name,
                self.timeout.as_secs()
            )),
        }
    }
}

/// Why a call failed, naming the server.
fn failure(upstream: &Upstream, name: &str, error: ServiceError) -> String {
    match error {
        ServiceError::McpError(error) => format!(
            "upstream server \"{}\" answered {name} with an error ({}): {}",
            upstream.name, error.code.0, error.message
        ),
        ServiceError::TransportClosed => format!(
            "upstream server \"{}\" has stopped, so {name} cannot be called; the other tools still work{}",
            upstream.name,
            stderr_tail(&upstream.stderr.text())
        ),
        error => format!(
            "upstream server \"{}\" could not answer {name}: {error}{}",
            upstream.name,
            stderr_tail(&upstream.stderr.text())
        ),
    }
}

/// Sends `notifications/cancelled` for a request abandoned before its
/// answer, when dropped with its id still set.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("the client cancelled the call, or it timed out".to_owned()),
        ));
        tokio::spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}

/// Start one server and list its tools.
async fn start_one(
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
    let tail = Tail::default();
    if let Some(stderr) = stderr {
        drain_stderr(name.to_owned(), stderr, tail.clone());
    }
    let failed = |reason: String| StartError::Handshake {
        server: name.to_owned(),
        reason,
        stderr: tail.text(),
    };
    let (client, tools) = match handshake(handler, transport, timeout).await {
        Ok(started) => started,
        Err(Failure::Handshake(reason)) => return Err(failed(after_exit(reason).await)),
        Err(Failure::Other(reason)) => return Err(failed(reason)),
    };
    Ok((
        Upstream {
            name: name.to_owned(),
            client,
            stderr: tail,
        },
        tools,
    ))
}

/// Why a started server is not usable.
enum Failure {
    /// The handshake failed (the process may be dying).
    Handshake(String),
    /// No answer in time, or no tool list.
    Other(String),
}

/// The MCP handshake over `transport`, then the server's tools, each
/// within `timeout`.
async fn handshake<T, E, A>(
    handler: UpstreamHandler,
    transport: T,
    timeout: Duration,
) -> Result<(RunningService<RoleClient, UpstreamHandler>, Vec<Tool>), Failure>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let client = match tokio::time::timeout(timeout, handler.serve(transport)).await {
        Ok(Ok(client)) => client,
        Ok(Err(error)) => return Err(Failure::Handshake(error.to_string())),
        Err(_) => {
            return Err(Failure::Other(format!(
                "no answer to the MCP handshake within {} s",
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
    let transport = StreamableHttpClientTransport::from_config(config.custom_headers(custom));
    let unreachable = |reason: String| StartError::Unreachable {
        server: name.to_owned(),
        url: url.to_owned(),
        reason,
    };
    let (client, tools) = handshake(handler, transport, timeout)
        .await
        .map_err(|failure| match failure {
            Failure::Handshake(reason) | Failure::Other(reason) => unreachable(reason),
        })?;
    Ok((
        Upstream {
            name: name.to_owned(),
            client,
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
