//! The MCP server side (SPEC §9): one [`Run`] per connection. Each handler
//! is a translation: an MCP request becomes a run step, and the run's
//! answer becomes MCP's shapes. `tools/list` is `read_skill`, `list_skills`
//! and the upstream tools the run offers; a call the run admits is forwarded
//! unchanged and its answer handed back to the run; a change of the active
//! skills is announced with `notifications/tools/list_changed`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

// Log levels and resource subscriptions are deprecated by a revision after
// 2026-07-28 (SEP-2577) and are what the handshake generation relays.
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
    GetSkillRequestParams, GetSkillResult, Implementation, InitializeRequestParams,
    InitializeResult, JsonObject, ListResourcesResult, ListSkillsResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Resource, ResourceContents, ResourceTemplate, ResultType, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool,
};
#[allow(deprecated)]
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use skillgraph::RecordWriter;
use skillgraph::skill_session::{
    DeclaredMap, Graph, Run, RunCall, RunRead, Session, SessionConfig,
};
use skillgraph::skill_tools::{HostFormat, ToolDescriptor};

use crate::ServeError;
use crate::observe::observe;
use crate::otlp::{RequestSpan, Target, Tracing};
use crate::record::RecordSink;
use crate::relay::Caller;
use crate::runs::{Generation, RUN_ARGUMENT, RUN_META, Runs, Slot, State, lock, mint_handle};
use crate::sealed::Purpose;
use crate::skill_files::SkillFiles;
use crate::stdio::MAX_ECHO;
use crate::upstream::{Answer, Upstreams, shown};
use crate::warn;

/// The record's resource.
pub(crate) const RECORD_URI: &str = "skillgraph://record";

/// The record of one run over HTTP, by its handle.
const RECORD_TEMPLATE: &str = "skillgraph://record/{run}";

impl Generation {
    /// The generation of the request `context` serves: a client that never
    /// sent `initialize`, or whose request carries the 2026-07-28 revision
    /// in its `_meta`, is on the sessionless one.
    fn of(context: &RequestContext<RoleServer>) -> Self {
        let per_request = context
            .meta
            .protocol_version()
            .is_some_and(|version| !version.has_initialize());
        if context.peer.peer_info().is_none() || per_request {
            Generation::Sessionless
        } else {
            Generation::Handshake
        }
    }
}

/// The principal an HTTP request was authenticated as (`--auth-tokens`),
/// put in the request's extensions by the HTTP layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Principal(pub(crate) String);

/// The principal of the request `context` serves, if any.
fn principal_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .map(|principal| principal.0.clone())
}

/// What every run of one server shares: the graph, the upstream servers,
/// and what is the same for every request.
pub(crate) struct Hub {
    graph: Arc<Graph>,
    config: SessionConfig,
    upstreams: Arc<Upstreams>,
    instructions: String,
    /// The skills extension's entries and files (`skills/list`).
    files: SkillFiles,
    /// The one tool list of the sessionless generation (SPEC §9.2).
    stable: Vec<Tool>,
    /// The number of the next connection.
    connections: AtomicU64,
    /// The record file of the one run over stdio, until that run starts.
    file: Mutex<Option<RecordWriter>>,
    /// Over HTTP, the runs held by handle; `None` over stdio.
    runs: Option<Runs>,
    /// Where each request's span goes (SPEC §11); `None`: export is off.
    tracing: Option<Tracing>,
}

impl Hub {
    /// What the runs on `graph` set up by `config` share, proxying
    /// `upstreams`: over stdio with `runs` `None` and the record in `file`,
    /// over HTTP with the table of runs; each request a span for `tracing`
    /// when export is on.
    pub(crate) fn new(
        graph: Arc<Graph>,
        files: SkillFiles,
        config: SessionConfig,
        upstreams: Arc<Upstreams>,
        file: Option<RecordWriter>,
        runs: Option<Runs>,
        tracing: Option<Tracing>,
    ) -> Result<Self, ServeError> {
        // The entry skill's prompt, as a run's start would give it.
        let instructions = Session::with_config(Arc::clone(&graph), config.clone()).system_prompt();
        let stable = stable_list(&graph, &config, &upstreams, runs.is_some())?;
        Ok(Hub {
            graph,
            config,
            upstreams,
            instructions,
            files,
            stable,
            connections: AtomicU64::new(0),
            file: Mutex::new(file),
            runs,
            tracing,
        })
    }

    /// A run not started yet, with its record: over stdio in the record
    /// file, over HTTP in a file of its own in the records' folder.
    fn new_run(&self) -> Result<(Slot, Option<String>), ErrorData> {
        let (record, handle) = match &self.runs {
            Some(runs) => {
                let handle = mint_handle()?;
                (runs.record_for(&handle), Some(handle))
            }
            None => {
                let file = self.file.lock().ok().and_then(|mut file| file.take());
                (RecordSink::new(file), None)
            }
        };
        let state = State::new(Arc::clone(&self.graph), self.config.clone(), record);
        Ok((Arc::new(Mutex::new(state)), handle))
    }
}

/// The tools listed on the sessionless generation: one list for every
/// request, in a deterministic order (SPEC §9.2). Over HTTP each tool's
/// input schema gains the optional `skillgraph_run` property; an upstream
/// tool that has one already is refused.
fn stable_list(
    graph: &Arc<Graph>,
    config: &SessionConfig,
    upstreams: &Upstreams,
    handles: bool,
) -> Result<Vec<Tool>, ServeError> {
    let config = config.clone().for_stable_list();
    // The list is the same for every run: any run, unrecorded, gives it.
    let run = Run::new(Arc::clone(graph), config);
    let mut tools = Vec::new();
    for descriptor in run.stable_tools() {
        tools.push(
            to_mcp_tool(&descriptor)
                .map_err(|err| ServeError::Mismatch(err.message.to_string()))?,
        );
    }
    tools.extend(
        upstreams
            .tools()
            .filter(|tool| run.lists_stably(&tool.name))
            .cloned(),
    );
    if handles {
        let mut clashes = String::new();
        for tool in &mut tools {
            let mut schema = (*tool.input_schema).clone();
            let properties = schema
                .entry("properties")
                .or_insert_with(|| Value::Object(JsonObject::new()));
            if let Value::Object(properties) = properties {
                if properties.contains_key(RUN_ARGUMENT) {
                    let _ = writeln!(
                        clashes,
                        "upstream tool \"{}\" has an argument named \"{RUN_ARGUMENT}\", which skillgraph serve --http uses for run handles, so it could never reach that tool; rename it in its server",
                        tool.name
                    );
                    continue;
                }
                properties.insert(
                    RUN_ARGUMENT.to_owned(),
                    serde_json::json!({
                        "type": "string",
                        "description": "the run handle an earlier answer gave; leave it out to start a new run"
                    }),
                );
            }
            tool.input_schema = Arc::new(schema);
        }
        if !clashes.is_empty() {
            return Err(ServeError::Mismatch(clashes.trim_end().to_owned()));
        }
    }
    Ok(tools)
}

/// A session's tool descriptor in MCP's shape.
fn to_mcp_tool(descriptor: &ToolDescriptor) -> Result<Tool, ErrorData> {
    let json = descriptor
        .to_host(HostFormat::Mcp)
        .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
    serde_json::from_value(json).map_err(|err| ErrorData::internal_error(err.to_string(), None))
}

/// The server for one connection: over stdio the process's one run; over
/// HTTP one of rmcp's sessions (the handshake generation) or one request
/// (the sessionless generation, whose run is found by handle).
pub(crate) struct Gateway {
    hub: Arc<Hub>,
    /// The connection's own run, made at its first request.
    own: Mutex<Option<Slot>>,
    /// The connection's number, which tells the upstreams' messages whose
    /// they are.
    connection: u64,
}

/// The answer to a request naming a run this server does not hold (SPEC
/// §9.4): unknown, expired or someone else's, said the same way.
fn no_such_run() -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "this server holds no run with that {RUN_ARGUMENT} (it may have expired); leave {RUN_ARGUMENT} out to start a new run"
    ))])
}

/// The last block of a run's first answer over HTTP, and its `_meta`
/// (SPEC §9.4).
fn give_handle(answer: &mut CallToolResult, handle: &str) {
    answer.content.push(ContentBlock::text(format!(
        "This run's handle is {handle}: pass it as {RUN_ARGUMENT} in every later call to go on in this run."
    )));
    answer
        .meta
        .get_or_insert_with(Default::default)
        .0
        .insert(RUN_META.to_owned(), Value::String(handle.to_owned()));
}

impl Gateway {
    /// A connection to the runs of `hub`.
    pub(crate) fn new(hub: Arc<Hub>) -> Self {
        let connection = hub.connections.fetch_add(1, Ordering::Relaxed);
        Gateway {
            hub,
            own: Mutex::new(None),
            connection,
        }
    }

    /// The span of the `method` request `context` serves, about `target`.
    fn span(
        &self,
        method: &'static str,
        target: Target<'_>,
        context: &RequestContext<RoleServer>,
    ) -> RequestSpan {
        RequestSpan::start(self.hub.tracing.as_ref(), method, target, context)
    }

    /// A `tools/call`: `read_skill`, `list_skills`, or an upstream tool's
    /// call judged by the run and forwarded; its facts go on `span`.
    async fn call(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        span: &RequestSpan,
    ) -> Result<CallToolResponse, ErrorData> {
        let generation = Generation::of(&context);
        let name = request.name.clone();
        let known = matches!(name.as_ref(), "read_skill" | "list_skills")
            || self.hub.upstreams.tool(&name).is_some();
        if !known {
            let upstream: Vec<&str> = self
                .hub
                .upstreams
                .tools()
                .map(|tool| tool.name.as_ref())
                .collect();
            return Err(unknown_tool(&name, &upstream));
        }
        // A retry after `input_required` brings back the state serve
        // sealed (SPEC §9.7): over HTTP its run, and the upstream's own.
        let handles = self.hub.runs.is_some() && generation == Generation::Sessionless;
        let sealer = self.hub.upstreams.sealer();
        let resumed = sealer.reopen(Purpose::Tool(&name), &mut request.request_state)?;
        if handles && let Some(run) = resumed {
            let arguments = request.arguments.get_or_insert_with(Default::default);
            arguments
                .entry(RUN_ARGUMENT)
                .or_insert_with(|| Value::String(run));
        }
        let given = request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get(RUN_ARGUMENT))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (slot, handle) = match self.run_of_call(generation, &context, &mut request.arguments)? {
            Ok(found) => found,
            Err(answer) => return Ok(CallToolResponse::Complete(answer)),
        };
        let run_handle = handle.clone().or(given).filter(|_| handles);
        let _facts = RunFacts::gather(span, &slot, run_handle.clone(), &self.hub.graph);
        let caller = self.caller(&context);
        self.hub.upstreams.relay().set_client(&caller);
        let (mut answer, changed) = match name.as_ref() {
            "read_skill" => read(&slot, request.arguments.as_ref(), generation)?,
            "list_skills" => (list_skills(&slot, request.arguments, generation)?, false),
            name => match admit(&slot, name, generation)? {
                Some(refusal) => (refusal, false),
                None => {
                    // Boxed: the forwarded call's future is large, and rmcp
                    // moves this handler's future into a task of its own per
                    // request.
                    let progress = context.meta.get_progress_token();
                    // What the client declared: at its handshake, or with
                    // this request on the sessionless generation.
                    let capabilities = match generation {
                        Generation::Sessionless => context.meta.client_capabilities(),
                        Generation::Handshake => caller.declared(),
                    };
                    let call = Box::pin(self.hub.upstreams.call(
                        request,
                        progress,
                        caller,
                        capabilities,
                        span,
                    ));
                    let outcome = tokio::select! {
                        outcome = call => Some(outcome),
                        () = context.ct.cancelled() => None,
                    };
                    match outcome {
                        Some(Ok(Answer::Result(answer))) => {
                            self.hub.upstreams.remember_result(name, &answer);
                            route(&slot, name, answer, generation)?
                        }
                        Some(Ok(Answer::InputRequired(mut asked))) => {
                            // The client fulfils the requests and retries:
                            // this attempt moved nothing (SPEC §9.5).
                            end_input_required(&slot, name, generation)?;
                            let run = run_handle.as_deref();
                            sealer.hold(Purpose::Tool(name), run, &mut asked.request_state);
                            if let Some(handle) = handle {
                                asked
                                    .meta
                                    .get_or_insert_with(Default::default)
                                    .0
                                    .insert(RUN_META.to_owned(), Value::String(handle));
                            }
                            return Ok(CallToolResponse::InputRequired(asked));
                        }
                        Some(Ok(Answer::Refused(error))) => {
                            // A failure of the call, answered as the
                            // protocol error it is (SPEC §9.7).
                            fail(&slot, name, &error.message, generation)?;
                            return Err(error);
                        }
                        Some(Err(failure)) => fail(&slot, name, &failure, generation)?,
                        None => {
                            // The client cancelled: the upstream call was
                            // dropped (and so cancelled there too); no answer
                            // is owed.
                            end_cancelled_call(&slot, name, generation)?;
                            return Err(ErrorData::internal_error(
                                format!("the client cancelled the call of {name}"),
                                None,
                            ));
                        }
                    }
                }
            },
        };
        if let Some(handle) = handle {
            give_handle(&mut answer, &handle);
        }
        // The sessionless generation's list does not change (SPEC §9.2).
        if changed && generation == Generation::Handshake {
            Box::pin(self.announce(&context)).await;
        }
        Ok(CallToolResponse::Complete(answer))
    }

    /// A `resources/read`: a skill's file, a record, or an upstream's
    /// resource.
    async fn read_resource_at(
        &self,
        request: ReadResourceRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // Reading a skill's files is no read of the graph (SPEC §9.5): it
        // moves nothing; read_skill is the one door that activates.
        if let Some(read) = self.hub.files.read(&request.uri) {
            let contents = read.map_err(|reason| ErrorData::internal_error(reason, None))?;
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if let Some(text) = self.record_text(&request.uri, context) {
            let contents =
                ResourceContents::text(text?, request.uri).with_mime_type("application/jsonl");
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if let Some(read) = self
            .hub
            .upstreams
            .read_resource(request.clone(), Generation::of(context))
            .await
        {
            return read.map(Into::into);
        }
        Err(ErrorData::resource_not_found(
            format!(
                "no resource {}; the resources here are {RECORD_URI} and each skill's SKILL.md as skills/list names it",
                shown(&request.uri)
            ),
            None,
        ))
    }

    /// The connection's own run, made if it has none yet.
    fn own(&self) -> Result<Slot, ErrorData> {
        let mut own = self.own.lock().map_err(|_| {
            ErrorData::internal_error(
                "the session was lost after an earlier failure; reconnect",
                None,
            )
        })?;
        if let Some(slot) = own.as_ref() {
            return Ok(Arc::clone(slot));
        }
        let (slot, _) = self.hub.new_run()?;
        *own = Some(Arc::clone(&slot));
        Ok(slot)
    }

    /// The run a tool call belongs to (SPEC §9.1), and its handle when the
    /// call starts it over HTTP; the call's `skillgraph_run` argument is
    /// taken out. `Err(answer)`: the call names no run held here.
    fn run_of_call(
        &self,
        generation: Generation,
        context: &RequestContext<RoleServer>,
        arguments: &mut Option<JsonObject>,
    ) -> Result<Result<(Slot, Option<String>), CallToolResult>, ErrorData> {
        let Some(runs) = self
            .hub
            .runs
            .as_ref()
            .filter(|_| generation == Generation::Sessionless)
        else {
            return Ok(Ok((self.own()?, None)));
        };
        let principal = principal_of(context);
        let given = arguments
            .as_mut()
            .and_then(|arguments| arguments.remove(RUN_ARGUMENT));
        match given {
            Some(Value::String(handle)) => Ok(match runs.find(&handle, principal.as_deref())? {
                Some(slot) => Ok((slot, None)),
                None => Err(no_such_run()),
            }),
            Some(other) => Ok(Err(CallToolResult::error(vec![ContentBlock::text(
                format!(
                    "{RUN_ARGUMENT} is the string an earlier answer gave, not {}; leave it out to start a new run",
                    shown(&other.to_string())
                ),
            )]))),
            None => {
                let (slot, handle) = self.hub.new_run()?;
                let Some(handle) = handle else {
                    return Ok(Ok((slot, None)));
                };
                Ok(
                    match runs.insert(handle.clone(), Arc::clone(&slot), principal)? {
                        Ok(()) => Ok((slot, Some(handle))),
                        Err(full) => {
                            runs.discard_record(&handle);
                            Err(CallToolResult::error(vec![ContentBlock::text(full)]))
                        }
                    },
                )
            }
        }
    }

    /// The tools offered now, recording the offer the model is shown; on
    /// the sessionless generation the one list for every request (SPEC
    /// §9.2), which records nothing.
    fn offered_tools(&self, generation: Generation) -> Result<Vec<Tool>, ErrorData> {
        if generation == Generation::Sessionless {
            return Ok(self.hub.stable.clone());
        }
        let slot = self.own()?;
        let mut state = lock(&slot)?;
        let run = state.run(generation);
        let mut tools = Vec::new();
        for descriptor in run.tools() {
            tools.push(to_mcp_tool(&descriptor)?);
        }
        tools.extend(
            self.hub
                .upstreams
                .tools()
                .filter(|tool| run.offers(&tool.name))
                .cloned(),
        );
        state.flush();
        Ok(tools)
    }

    /// Tell the client its tool list changed (the handshake generation:
    /// the sessionless generation's list never changes, SPEC §9.2).
    async fn announce(&self, context: &RequestContext<RoleServer>) {
        if let Err(err) = context.peer.notify_tool_list_changed().await {
            warn(&format!("could not send tools/list_changed: {err}"));
        }
    }

    /// The client of the request `context` serves, as the upstreams reach
    /// it.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Caller {
        let sessionless = Generation::of(context) == Generation::Sessionless;
        Caller::new(&context.peer, &context.id, self.connection, sessionless)
    }

    /// The record a `resources/read` of `uri` names, as text; `None` when
    /// `uri` is no record's.
    fn record_text(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<String, ErrorData>> {
        let runs = self.hub.runs.as_ref();
        if uri == RECORD_URI {
            if runs.is_some() && Generation::of(context) == Generation::Sessionless {
                return Some(Err(ErrorData::invalid_params(
                    format!(
                        "over HTTP each run has its own record: read {RECORD_TEMPLATE}, with the handle an answer gave"
                    ),
                    None,
                )));
            }
            return Some(self.own().and_then(|slot| Ok(lock(&slot)?.record.text())));
        }
        let handle = uri.strip_prefix("skillgraph://record/")?;
        let runs = runs?;
        Some(match runs.find(handle, principal_of(context).as_deref()) {
            Ok(Some(slot)) => lock(&slot).map(|state| state.record.text()),
            Ok(None) => Err(ErrorData::resource_not_found(
                "this server holds no run with that handle (it may have expired); a tools/call answer gives the handle of its run",
                None,
            )),
            Err(err) => Err(err),
        })
    }
}

/// While it lives, a request's span waits for the run's facts: when it is
/// dropped, at whatever point the request is answered, what the request
/// added to the run's record is put on the span.
struct RunFacts<'s> {
    span: &'s RequestSpan,
    slot: Slot,
    /// The number of events the record held when the request began.
    before: usize,
    handle: Option<String>,
    map: Arc<DeclaredMap>,
}

impl<'s> RunFacts<'s> {
    /// The facts of `slot`'s run for `span`, once it is answered; `None`
    /// when export is off.
    fn gather(
        span: &'s RequestSpan,
        slot: &Slot,
        handle: Option<String>,
        graph: &Graph,
    ) -> Option<Self> {
        if !span.is_on() {
            return None;
        }
        let before = slot.lock().map(|state| state.record.len()).unwrap_or(0);
        Some(RunFacts {
            span,
            slot: Arc::clone(slot),
            before,
            handle,
            map: Arc::clone(graph.declared()),
        })
    }
}

impl Drop for RunFacts<'_> {
    fn drop(&mut self) {
        if let Ok(mut state) = self.slot.lock() {
            let name = state.traced_as(self.handle.as_deref());
            self.span
                .facts(&name, state.record.since(self.before), &self.map);
        }
    }
}

/// A `read_skill` call: judged by the gate, then the iteration ends. On the
/// sessionless generation the answer ends with the run's position (SPEC
/// §9.3).
fn read(
    slot: &Slot,
    arguments: Option<&JsonObject>,
    generation: Generation,
) -> Result<(CallToolResult, bool), ErrorData> {
    let mut state = lock(slot)?;
    let run = state.run(generation);
    let read = match read_argument(arguments) {
        Ok(id) => run.read(id).unwrap_or_else(|err| refused(err.to_string())),
        Err(message) => refused(message),
    };
    let mut content = vec![ContentBlock::text(read.text)];
    if generation == Generation::Sessionless {
        content.push(ContentBlock::text(run.position()));
    }
    state.flush();
    let result = if read.accepted {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    Ok((result, read.changed))
}

/// A `list_skills` call.
fn list_skills(
    slot: &Slot,
    arguments: Option<JsonObject>,
    generation: Generation,
) -> Result<CallToolResult, ErrorData> {
    let mut state = lock(slot)?;
    let input = Value::Object(arguments.unwrap_or_default());
    Ok(match state.run(generation).list_skills(&input) {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(refusal) => CallToolResult::error(vec![ContentBlock::text(refusal)]),
    })
}

/// Before forwarding `name`: the run's call gate. `None`: forward it;
/// `Some(…)`: the refusal to answer with (the run has recorded it and ended
/// the iteration).
fn admit(
    slot: &Slot,
    name: &str,
    generation: Generation,
) -> Result<Option<CallToolResult>, ErrorData> {
    let mut state = lock(slot)?;
    let run = state.run(generation);
    let answer = match run.call(name) {
        RunCall::Forward => None,
        RunCall::Refused { text } => {
            let mut content = vec![ContentBlock::text(text)];
            if generation == Generation::Sessionless {
                content.push(ContentBlock::text(run.position()));
            }
            Some(CallToolResult::error(content))
        }
    };
    state.flush();
    Ok(answer)
}

/// After an upstream answered `name`: the run observes and routes it. A
/// move by a route appends the new skill's body to the answer.
fn route(
    slot: &Slot,
    name: &str,
    mut answer: CallToolResult,
    generation: Generation,
) -> Result<(CallToolResult, bool), ErrorData> {
    let mut state = lock(slot)?;
    let routed = state.run(generation).answered(observe(name, &answer));
    if let Some(body) = routed.body {
        answer.content.push(ContentBlock::text(body));
    }
    // The 2026-07-28 revision requires it on every result; rmcp clears it
    // again for a client of an older revision.
    answer.result_type.get_or_insert(ResultType::COMPLETE);
    state.flush();
    Ok((answer, routed.changed))
}

/// A call the upstream failed to answer (SPEC §9.7): a tool error naming
/// the upstream and the failure, so that the model sees it; the run
/// records a `failure` result with the error and routes it, and a move
/// brings the new skill's body.
fn fail(
    slot: &Slot,
    name: &str,
    failure: &str,
    generation: Generation,
) -> Result<(CallToolResult, bool), ErrorData> {
    let mut state = lock(slot)?;
    let routed = state.run(generation).failed(name, failure);
    let mut content = vec![ContentBlock::text(failure.to_owned())];
    content.extend(routed.body.map(ContentBlock::text));
    state.flush();
    Ok((CallToolResult::error(content), routed.changed))
}

/// End a call whose upstream asked the client for input (MCP's
/// `input_required`): recorded, and nothing moves.
fn end_input_required(slot: &Slot, name: &str, generation: Generation) -> Result<(), ErrorData> {
    let mut state = lock(slot)?;
    state.run(generation).input_required(name);
    state.flush();
    Ok(())
}

/// A forwarded call the client cancelled: recorded, and nothing moves.
fn end_cancelled_call(slot: &Slot, name: &str, generation: Generation) -> Result<(), ErrorData> {
    let mut state = lock(slot)?;
    state.run(generation).cancelled(name);
    state.flush();
    Ok(())
}

/// A read refused before the run could judge it (a bad argument, an id
/// outside the catalog): nothing changed.
fn refused(text: String) -> RunRead {
    RunRead {
        accepted: false,
        text,
        changed: false,
    }
}

/// The `id` of a `read_skill` call, or what is wrong with the arguments.
fn read_argument(arguments: Option<&JsonObject>) -> Result<&str, String> {
    const USAGE: &str = "call it with {\"id\": \"SKILL\"}, one of the ids in its schema";
    let Some(arguments) = arguments else {
        return Err(format!("read_skill needs a string argument `id`; {USAGE}"));
    };
    if let Some(extra) = arguments.keys().find(|key| *key != "id") {
        return Err(format!(
            "read_skill takes no argument {}; {USAGE}",
            shown(extra)
        ));
    }
    match arguments.get("id") {
        Some(Value::String(id)) => Ok(id),
        Some(other) => Err(format!(
            "read_skill's `id` is a string, not {}; {USAGE}",
            shown(&other.to_string())
        )),
        None => Err(format!("read_skill needs a string argument `id`; {USAGE}")),
    }
}

fn unknown_tool(name: &str, upstream: &[&str]) -> ErrorData {
    let mut known = vec!["read_skill", "list_skills"];
    known.extend_from_slice(upstream);
    let shown = if name.chars().count() > MAX_ECHO {
        format!("of {} bytes", name.len())
    } else {
        format!("\"{}\"", name.escape_debug())
    };
    ErrorData::invalid_params(
        format!(
            "unknown tool {shown}; the tools here are: {}",
            known.join(", ")
        ),
        None,
    )
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_skills()
            .build();
        // What the upstreams offer besides tools is passed through (SPEC
        // §9.5), so it is declared when one of them declares it.
        let upstreams = &self.hub.upstreams;
        let subscribable = upstreams.any_offers(|c| {
            c.resources
                .as_ref()
                .is_some_and(|r| r.subscribe == Some(true))
        });
        if subscribable && let Some(resources) = capabilities.resources.as_mut() {
            resources.subscribe = Some(true);
        }
        if let Some(prompts) = upstreams.first_capability(|c| c.prompts.clone()) {
            capabilities.prompts = Some(prompts);
        }
        if upstreams.any_offers(|c| c.completions.is_some()) {
            capabilities.completions = Some(JsonObject::new());
        }
        if upstreams.any_offers(|c| c.logging.is_some()) {
            capabilities.logging = Some(JsonObject::new());
        }
        let config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("skillgraph", env!("CARGO_PKG_VERSION")));
        if self.hub.instructions.is_empty() {
            config
        } else {
            config.with_instructions(self.hub.instructions.clone())
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let span = self.span("initialize", Target::None, &context);
        span.answered(self.negotiate_initialize(&request))
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let _span = self.span("ping", Target::None, &context);
        Ok(())
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        let _span = self.span("server/discover", Target::None, &context);
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = self.span("tools/list", Target::None, &context);
        span.answered(
            self.offered_tools(Generation::of(&context))
                .map(ListToolsResult::with_all_items),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = self.span("tools/call", Target::Tool(request.name.as_ref()), &context);
        let answer = span.answered(self.call(request, context, &span).await);
        if let Ok(CallToolResponse::Complete(result)) = &answer {
            span.tool_answered(result);
        }
        answer
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let _span = self.span("resources/list", Target::None, &context);
        let record = Resource::new(RECORD_URI, "record")
            .with_description("This session's record: one JSON event a line (skillgraph record v1)")
            .with_mime_type("application/jsonl");
        // Over HTTP a sessionless request has no run of its own to read the
        // record of: each run's is skillgraph://record/RUN (SPEC §9.7).
        let own_record =
            self.hub.runs.is_none() || Generation::of(&context) == Generation::Handshake;
        let mut resources: Vec<Resource> = own_record.then_some(record).into_iter().collect();
        resources.extend(
            self.hub
                .upstreams
                .list_resources(Generation::of(&context))
                .await,
        );
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let span = self.span("resources/read", Target::Resource(&request.uri), &context);
        span.answered(self.read_resource_at(request, &context).await)
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let _span = self.span("skills/list", Target::None, &context);
        Ok(ListSkillsResult::with_all_items(
            self.hub.files.entries.clone(),
        ))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let span = self.span("skills/get", Target::Resource(&request.uri), &context);
        span.answered(
            match self
                .hub
                .files
                .entries
                .iter()
                .find(|skill| skill.uri == request.uri)
            {
                Some(skill) => Ok(GetSkillResult::new(skill.clone())),
                None => Err(ErrorData::invalid_params(
                    format!(
                        "no skill at {}; skills/list names each skill's SKILL.md (skill://ID/SKILL.md)",
                        shown(&request.uri)
                    ),
                    None,
                )),
            },
        )
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let _span = self.span("resources/templates/list", Target::None, &context);
        let mut templates = Vec::new();
        if self.hub.runs.is_some() {
            templates.push(
                ResourceTemplate::new(RECORD_TEMPLATE, "record")
                    .with_description("A run's record by its handle: one JSON event a line (skillgraph record v1)")
                    .with_mime_type("application/jsonl"),
            );
        }
        templates.extend(
            self.hub
                .upstreams
                .list_resource_templates(Generation::of(&context))
                .await,
        );
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let _span = self.span("prompts/list", Target::None, &context);
        Ok(ListPromptsResult::with_all_items(
            self.hub
                .upstreams
                .list_prompts(Generation::of(&context))
                .await,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let span = self.span("prompts/get", Target::Prompt(&request.name), &context);
        let declared = context.meta.client_capabilities();
        span.answered(
            self.hub
                .upstreams
                .get_prompt(request, Generation::of(&context), declared)
                .await,
        )
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let span = self.span("completion/complete", Target::None, &context);
        span.answered(
            self.hub
                .upstreams
                .complete(request, Generation::of(&context))
                .await,
        )
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = self.span("logging/setLevel", Target::None, &context);
        self.hub
            .upstreams
            .relay()
            .set_client(&self.caller(&context));
        span.answered(
            self.hub
                .upstreams
                .set_level(request, Generation::of(&context))
                .await,
        )
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = self.span(
            "resources/subscribe",
            Target::Resource(&request.uri),
            &context,
        );
        let caller = self.caller(&context);
        if caller.sessionless() {
            // Its connection ends with this request: no update could reach it.
            return span.answered(Err(ErrorData::invalid_request(
                "a client of the sessionless protocol holds no connection to send resource updates on, so serve takes no resources/subscribe from it; read the resource again when it needs it",
                None,
            )));
        }
        self.hub.upstreams.relay().set_client(&caller);
        span.answered(
            self.hub
                .upstreams
                .subscribe(request, &caller, Generation::of(&context))
                .await,
        )
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = self.span(
            "resources/unsubscribe",
            Target::Resource(&request.uri),
            &context,
        );
        span.answered(
            self.hub
                .upstreams
                .unsubscribe(request, self.connection, Generation::of(&context))
                .await,
        )
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // The stream stays open for the client; the sessionless tool list
        // never changes (SPEC §9.2), so nothing is sent on it.
        context.cancelled().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_read_argument_is_never_echoed_at_length() {
        let huge = "k".repeat(5_000);
        for arguments in [
            serde_json::json!({ huge.clone(): 1 }),
            serde_json::json!({ "id": [huge.clone()] }),
        ] {
            let arguments = arguments.as_object().cloned();
            let refusal = read_argument(arguments.as_ref()).unwrap_err();
            assert!(refusal.len() < 400, "{} characters", refusal.len());
            assert!(refusal.contains("bytes"), "{refusal}");
        }
    }
}
