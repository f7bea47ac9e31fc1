//! The upstream MCP servers of `skillgraph serve` (SPEC §9): each one a
//! child process spoken to over its standard input and output, or a
//! streamable-HTTP server reached by `url`; its tools listed once at
//! start-up, its calls forwarded with a timeout. A server that does not
//! start stops start-up, naming it (and the tail of a child's standard
//! error); one that dies later only fails the requests to it.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientRequest, DEFAULT_MRTR_MAX_ROUNDS,
    ErrorCode, InputRequiredResult, ProgressToken, RequestId, RequestMetaObject, ServerResult,
    Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use skillgraph::McpServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;

use crate::capability;
use crate::echo::cut;
use crate::relay::{Caller, Relay, SETTLE_WAIT, UpstreamHandler};
use crate::runs::Generation;
use crate::sealed::Sealer;
use crate::spans::{ForwardSpan, RequestSpan};
use crate::warn_raw;

use crate::echo::shown;

mod passthrough;
mod start;

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

/// One connection to an upstream server, in one protocol generation.
pub(crate) struct Link {
    /// Its number, which tells its progress tokens and calls apart.
    id: u64,
    client: RunningService<RoleClient, UpstreamHandler>,
}

impl Link {
    fn peer(&self) -> &Peer<RoleClient> {
        self.client.peer()
    }

    /// Wait until the progress and log lines read on this link so far have
    /// been passed on (SPEC §9.5: they come before the call's answer).
    async fn settled(&self) {
        self.client.service().arrivals.settled(SETTLE_WAIT).await;
    }

    /// Whether it speaks the sessionless generation (the server answered
    /// `server/discover`), which takes the client's capabilities with each
    /// request.
    fn sessionless(&self) -> bool {
        self.peer()
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize())
    }
}

/// One running upstream server: a link in the newest generation it offers,
/// and, once a client of the other generation comes, a link in that one
/// too, so that each client is served end to end in its own generation.
struct Upstream {
    name: String,
    /// The first link, in the newest generation the server offers.
    primary: Link,
    /// The link in the handshake generation beside a sessionless primary,
    /// opened when a client of that generation first needs it; `None` when
    /// the server does not offer it (its clients then use the primary).
    other: tokio::sync::OnceCell<Option<Link>>,
    /// How to open another link.
    opener: start::Opener,
    stderr: Tail,
}

impl Upstream {
    /// The link for a client of `generation`: one in its own generation
    /// when the server offers it, else the primary.
    async fn link(&self, generation: Generation) -> &Link {
        // A sessionless primary serves sessionless clients; a handshake
        // primary means the server offers no other generation.
        if generation == Generation::Sessionless || !self.primary.sessionless() {
            return &self.primary;
        }
        match self
            .other
            .get_or_init(|| self.opener.handshake_link(&self.name, &self.primary))
            .await
        {
            Some(link) => link,
            None => &self.primary,
        }
    }

    /// Close the links; the server sees the end of its input.
    async fn close(self) {
        let _ = self.primary.client.cancel().await;
        if let Some(Some(other)) = self.other.into_inner() {
            let _ = other.client.cancel().await;
        }
    }
}

/// Every upstream server, and which one offers each tool.
pub(crate) struct Upstreams {
    servers: Vec<Upstream>,
    /// The servers whose results may propose moves (SPEC §15.6), by index.
    proposing: Vec<usize>,
    /// Tool name → (server index, the tool as the server declared it).
    tools: BTreeMap<String, (usize, Tool)>,
    timeout: Duration,
    /// The clients, as the servers reach them.
    relay: Relay,
    /// Resource URI → the server a list or a tool result named it for.
    uri_owners: Mutex<std::collections::HashMap<String, usize>>,
    /// Prompt name → the server that lists it.
    prompt_owners: Mutex<std::collections::HashMap<String, usize>>,
    /// What seals the request state handed to clients (SPEC §9.7).
    sealer: Sealer,
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
    /// `serve` has one client only (over stdio). The state handed to
    /// clients is sealed by `sealer`.
    pub(crate) async fn start(
        dir: &Path,
        servers: &BTreeMap<String, McpServer>,
        timeout: Duration,
        solo: bool,
        sealer: Sealer,
    ) -> Result<(Self, Vec<Clash>), StartError> {
        let mut started = Upstreams {
            servers: Vec::with_capacity(servers.len()),
            proposing: Vec::new(),
            tools: BTreeMap::new(),
            timeout,
            relay: Relay::new(solo),
            uri_owners: Mutex::default(),
            prompt_owners: Mutex::default(),
            sealer,
        };
        let mut clashes = Vec::new();
        for (name, decl) in servers {
            let (upstream, tools) =
                start::start_one(dir, name, decl, timeout, &started.relay).await?;
            let index = started.servers.len();
            started.servers.push(upstream);
            if decl.proposals {
                started.proposing.push(index);
            }
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

    /// Whether the server of the tool `name` may propose moves: its
    /// `mcpServers` entry says `"proposals": true`.
    pub(crate) fn trusts_proposals_of(&self, name: &str) -> bool {
        self.tools
            .get(name)
            .is_some_and(|(index, _)| self.proposing.contains(index))
    }

    /// The tool `name` as its server declared it.
    pub(crate) fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name).map(|(_, tool)| tool)
    }

    /// Every upstream tool, in name order.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.values().map(|(_, tool)| tool)
    }

    /// The clients, as the servers reach them.
    pub(crate) fn relay(&self) -> &Relay {
        &self.relay
    }

    /// What seals the request state handed to clients (SPEC §9.7).
    pub(crate) fn sealer(&self) -> &Sealer {
        &self.sealer
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
            server.close().await;
        }
    }

    /// Forward one call of `caller`, unchanged, to the server that offers
    /// it; the upstream's progress reaches the caller under its `progress`
    /// token, and what the server sends while the call runs goes to the
    /// caller. An upstream of the sessionless generation is told the
    /// caller's `capabilities`; when it asks for input first
    /// (`input_required`), a client of the handshake generation is asked
    /// for each input and the call retried with its answers, and a
    /// sessionless client gets the request to fulfil and retry itself. A
    /// sessionless client is refused (`Answer::Refused`, `-32021`) when the
    /// upstream needs a capability it did not declare: it said so itself,
    /// it asked for that input, or it sent that request during the call
    /// (SPEC §9.7).
    ///
    /// # Errors
    ///
    /// Why the call failed, naming the server: it is gone, it did not
    /// answer in time (the call is then cancelled upstream), it answered
    /// with a protocol error, or it asked for input the client could not
    /// give.
    pub(crate) async fn call(
        &self,
        mut params: CallToolRequestParams,
        progress: Option<ProgressToken>,
        caller: Caller,
        capabilities: Option<ClientCapabilities>,
        span: &RequestSpan,
    ) -> Result<Answer, String> {
        let name = params.name.to_string();
        let caller = caller.declaring(capabilities.clone());
        let Some((index, _)) = self.tools.get(&name) else {
            return Err(format!(
                "no upstream server offers a tool named {}",
                shown(&name)
            ));
        };
        let upstream = &self.servers[*index];
        let generation = if caller.sessionless() {
            Generation::Sessionless
        } else {
            Generation::Handshake
        };
        let link = upstream.link(generation).await;
        let mut meta = forwarded_meta(params.meta.take(), capabilities, link.sessionless());
        // The call's own span; its trace context goes upstream in `_meta`.
        let forward = span.forward(&upstream.name, &name);
        if span.is_on() {
            forward.inject(&mut meta.get_or_insert_with(Default::default).0);
        }
        let call = Forwarding {
            upstream,
            link,
            name: &name,
            caller: &caller,
            progress: progress.as_ref(),
            meta: &meta,
            forward: &forward,
        };
        let answer = self.rounds(&call, params).await;
        // An upstream that asked this sessionless client, during the call,
        // for what it did not declare needed it (SPEC §9.7).
        let missing = caller.missing();
        let answer = if missing.is_empty() {
            answer
        } else {
            Ok(Answer::Refused(capability::refusal_of(
                &upstream.name,
                &missing,
            )))
        };
        match &answer {
            Ok(Answer::Result(result)) => forward.tool_answered(result),
            Ok(Answer::InputRequired(_)) => {}
            Ok(Answer::Refused(error)) => forward.failed(&error.code.0.to_string(), &error.message),
            Err(failure) => forward.failed(&failure.kind, &failure.text),
        }
        answer.map_err(|failure| failure.text)
    }
}

/// One call of an upstream tool on its way: where it goes and for whom.
struct Forwarding<'c> {
    upstream: &'c Upstream,
    link: &'c Link,
    name: &'c str,
    caller: &'c Caller,
    progress: Option<&'c ProgressToken>,
    meta: &'c Option<RequestMetaObject>,
    forward: &'c ForwardSpan,
}

/// What one round of a call came to.
enum Round {
    /// The call is over.
    Over(Result<Answer, Failure>),
    /// A handshake client gave the input the upstream asked for: send the
    /// call again with it.
    Again(CallToolRequestParams),
}

impl Upstreams {
    /// Send `params` as `call` says, again with the client's input while
    /// the upstream asks a handshake client for it, at most
    /// [`DEFAULT_MRTR_MAX_ROUNDS`] times.
    async fn rounds(
        &self,
        call: &Forwarding<'_>,
        mut params: CallToolRequestParams,
    ) -> Result<Answer, Failure> {
        let _running = self.relay.running(call.link.id, call.caller.clone());
        for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
            match self.round(call, params).await {
                Round::Over(answer) => return answer,
                Round::Again(next) => params = next,
            }
        }
        Err(Failure::new(
            "input_rounds",
            format!(
                "upstream server \"{}\" asked for input {DEFAULT_MRTR_MAX_ROUNDS} times over for {} without answering, so serve stopped asking the client",
                call.upstream.name, call.name
            ),
        ))
    }

    /// Send `params` once and wait, at most the timeout, for the answer;
    /// the upstream's progress reaches the client under its own token.
    async fn round(&self, call: &Forwarding<'_>, params: CallToolRequestParams) -> Round {
        let (upstream, link, name) = (call.upstream, call.link, call.name);
        let peer = link.peer();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
        let mut options = PeerRequestOptions::no_options();
        options.meta = call.meta.clone();
        let handle = match peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(error) => return Round::Over(Err(failure(upstream, name, error))),
        };
        call.forward.sent_as(&handle.id);
        let _progress = call.progress.cloned().map(|token| {
            self.relay.route_progress(
                link.id,
                handle.progress_token.clone(),
                token,
                call.caller.peer().clone(),
            )
        });
        // Dropped before the answer (at the timeout, or when the client
        // cancels the request it serves), the guard cancels the call
        // upstream.
        let mut guard = CancelOnDrop {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let Ok(answer) = tokio::time::timeout(self.timeout, handle.await_response()).await else {
            return Round::Over(Err(Failure::new(
                "timeout",
                format!(
                    "upstream server \"{}\" did not answer {name} within {} s, so the call was cancelled; raise `--upstream-timeout` if it needs longer",
                    upstream.name,
                    self.timeout.as_secs()
                ),
            )));
        };
        guard.id = None;
        // What the upstream sent before its answer reaches the client
        // before the answer does.
        link.settled().await;
        answered(call, params, answer).await
    }
}

/// What the upstream's `answer` to `params` makes of the call.
async fn answered(
    call: &Forwarding<'_>,
    mut params: CallToolRequestParams,
    answer: Result<ServerResult, ServiceError>,
) -> Round {
    let (upstream, name) = (call.upstream, call.name);
    Round::Over(match answer {
        Ok(ServerResult::CallToolResult(result)) => Ok(Answer::Result(result)),
        Ok(ServerResult::InputRequiredResult(asked)) if !call.caller.sessionless() => {
            let inputs = asked.input_requests.unwrap_or_default();
            match call.caller.fulfil(&upstream.name, inputs).await {
                Ok(answers) => {
                    params.input_responses = Some(answers);
                    params.request_state = asked.request_state;
                    return Round::Again(params);
                }
                Err(text) => Err(Failure::new("input_not_given", text)),
            }
        }
        Ok(ServerResult::InputRequiredResult(asked)) => {
            let missing =
                capability::undeclared(asked.input_requests.as_ref(), call.caller.declared_now());
            if missing.is_empty() {
                Ok(Answer::InputRequired(asked))
            } else {
                Ok(Answer::Refused(capability::refusal_of(
                    &upstream.name,
                    &missing,
                )))
            }
        }
        Ok(_) => Err(Failure::new(
            "not_a_tool_result",
            format!(
                "upstream server \"{}\" answered {name} with a result that is not a tool result (a task), which skillgraph serve does not relay",
                upstream.name
            ),
        )),
        Err(ServiceError::McpError(error))
            if error.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
        {
            Ok(Answer::Refused(capability::relayed(&upstream.name, &error)))
        }
        Err(error) => Err(failure(upstream, name, error)),
    })
}

/// The `_meta` keys a link sets itself on each request it sends.
const LINK_META: [&str; 4] = [
    "progressToken",
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientInfo",
    "io.modelcontextprotocol/clientCapabilities",
];

/// The `_meta` of a forwarded request: the client's own keys (trace
/// context, its log level, anything of its own) kept, those the link sets
/// itself taken out, and on a sessionless link the capabilities the client
/// declared.
fn forwarded_meta(
    client: Option<RequestMetaObject>,
    capabilities: Option<ClientCapabilities>,
    sessionless_link: bool,
) -> Option<RequestMetaObject> {
    let mut meta = client.unwrap_or_default();
    for key in LINK_META {
        meta.0.0.remove(key);
    }
    if let Some(capabilities) = capabilities.filter(|_| sessionless_link) {
        meta.set_client_capabilities(capabilities);
    }
    (!meta.0.0.is_empty()).then_some(meta)
}

/// What a forwarded call gave.
#[derive(Debug)]
pub(crate) enum Answer {
    /// The tool's result.
    Result(CallToolResult),
    /// The upstream asks a sessionless client for input first: the client
    /// fulfils the requests and retries the call with its answers.
    InputRequired(InputRequiredResult),
    /// The call needs what the client did not declare: answered with this
    /// protocol error (`-32021`, SPEC §9.7) rather than a result.
    Refused(ErrorData),
}

/// Why a forwarded call failed: what kind of failure (the span's
/// `error.type`) and the text the run records, naming the server.
struct Failure {
    kind: String,
    text: String,
}

impl Failure {
    fn new(kind: &str, text: String) -> Self {
        Failure {
            kind: kind.to_owned(),
            text,
        }
    }
}

/// Why a call failed, naming the server.
fn failure(upstream: &Upstream, name: &str, error: ServiceError) -> Failure {
    match error {
        ServiceError::McpError(error) => Failure {
            kind: error.code.0.to_string(),
            text: format!(
                "upstream server \"{}\" answered {name} with an error ({}): {}",
                upstream.name,
                error.code.0,
                cut(&error.message)
            ),
        },
        ServiceError::TransportClosed => Failure::new(
            "transport_closed",
            format!(
                "upstream server \"{}\" has stopped, so {name} cannot be called; the other tools still work{}",
                upstream.name,
                stderr_tail(&upstream.stderr.text())
            ),
        ),
        error => Failure::new(
            "upstream_error",
            format!(
                "upstream server \"{}\" could not answer {name}: {}{}",
                upstream.name,
                cut(&error.to_string()),
                stderr_tail(&upstream.stderr.text())
            ),
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
