//! The MCP server side (SPEC §9): one [`Run`] per connection. Each handler
//! is a translation: an MCP request becomes a run step, and the run's
//! answer becomes MCP's shapes. `tools/list` is `read_skill`, `list_skills`
//! and the upstream tools the run offers; a call the run admits is forwarded
//! unchanged and its answer handed back to the run; a change of the active
//! skills is announced with `notifications/tools/list_changed`.

use std::sync::{Arc, Mutex, MutexGuard};

// Log levels and resource subscriptions are deprecated by a revision after
// 2026-07-28 (SEP-2577) and are what the handshake generation relays.
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetSkillRequestParams,
    GetSkillResult, Implementation, JsonObject, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResultType, ServerCapabilities, ServerConfig,
    Skill as McpSkill, SkillFrontmatter, SkillResources, SubscriptionFilter, Tool,
};
#[allow(deprecated)]
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, SetLevelRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use skillgraph::skill_session::{CallPolicy, Graph, Run, RunCall, RunRead, Session, SessionConfig};
use skillgraph::skill_tools::HostFormat;

use crate::observe::observe;
use crate::record::RecordSink;
use crate::stdio::MAX_ECHO;
use crate::upstream::Upstreams;
use crate::warn;

/// The record's resource.
pub(crate) const RECORD_URI: &str = "skillgraph://record";

/// Which generation of MCP a request comes in (SPEC §9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generation {
    /// `initialize` first, then a session (2024-11-05 through 2025-11-25).
    Handshake,
    /// No handshake: `server/discover` and per-request `_meta` (2026-07-28).
    Sessionless,
}

impl Generation {
    /// The generation of the request `context` serves: a client that never
    /// sent `initialize` is on the sessionless one.
    fn of(context: &RequestContext<RoleServer>) -> Self {
        if context.peer.peer_info().is_some() {
            Generation::Handshake
        } else {
            Generation::Sessionless
        }
    }
}

/// The run and its record, changed together under one lock. The run starts
/// at the first request, when its client's generation is known: on the
/// sessionless generation the list no longer scopes the calls, so the
/// `scoped` policy becomes `strict` there (SPEC §9.3), in the record's
/// `start` as every decision is.
struct State {
    run: Option<Run>,
    graph: Arc<Graph>,
    config: SessionConfig,
    record: RecordSink,
}

impl State {
    /// The run, started for `generation` if it has not started yet.
    fn run(&mut self, generation: Generation) -> &mut Run {
        let State {
            run,
            graph,
            config,
            record,
        } = self;
        run.get_or_insert_with(|| {
            let mut config = config.clone();
            if generation == Generation::Sessionless && config.tools == CallPolicy::Scoped {
                config.tools = CallPolicy::Strict;
            }
            let mut run = Run::new(Arc::clone(graph), config);
            record.append(run.take_events());
            run
        })
    }

    /// Append the run's new events to the record.
    fn flush(&mut self) {
        if let Some(run) = self.run.as_mut() {
            let events = run.take_events();
            self.record.append(events);
        }
    }
}

/// The server for one connection.
pub(crate) struct Gateway {
    state: Mutex<State>,
    upstreams: Arc<Upstreams>,
    instructions: String,
    /// The catalog as MCP's skills extension lists it (`skills/list`).
    skills: Vec<McpSkill>,
    /// `subscriptions/listen` streams of clients on the newer protocol.
    listeners: Mutex<Vec<SubscriptionSink>>,
}

impl Gateway {
    /// A gateway for a run on `graph` set up by `config` (started at the
    /// first request), proxying `upstreams`.
    pub(crate) fn new(
        graph: Arc<Graph>,
        config: SessionConfig,
        record: RecordSink,
        upstreams: Arc<Upstreams>,
    ) -> Self {
        // The entry skill's prompt, as a run's start would give it.
        let instructions = Session::with_config(Arc::clone(&graph), config.clone()).system_prompt();
        let skills = skill_entries(&graph, &config.hidden);
        let state = State {
            run: None,
            graph,
            config,
            record,
        };
        Gateway {
            state: Mutex::new(state),
            upstreams,
            instructions,
            skills,
            listeners: Mutex::new(Vec::new()),
        }
    }

    fn state(&self) -> Result<MutexGuard<'_, State>, ErrorData> {
        self.state.lock().map_err(|_| {
            ErrorData::internal_error(
                "the session was lost after an earlier failure; restart skillgraph serve",
                None,
            )
        })
    }

    /// The tools offered now, recording the offer the model is shown; on
    /// the sessionless generation the one list for every request (SPEC
    /// §9.2), which records nothing.
    fn offered_tools(&self, generation: Generation) -> Result<Vec<Tool>, ErrorData> {
        let mut state = self.state()?;
        let run = state.run(generation);
        let stable = generation == Generation::Sessionless;
        let descriptors = if stable {
            run.stable_tools()
        } else {
            run.tools()
        };
        let mut tools = Vec::new();
        for descriptor in descriptors {
            let json = descriptor
                .to_host(HostFormat::Mcp)
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
            let tool = serde_json::from_value(json)
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
            tools.push(tool);
        }
        let run = state.run(generation);
        tools.extend(
            self.upstreams
                .tools()
                .filter(|tool| {
                    if stable {
                        run.lists_stably(&tool.name)
                    } else {
                        run.offers(&tool.name)
                    }
                })
                .cloned(),
        );
        state.flush();
        Ok(tools)
    }

    /// A `read_skill` call: judged by the gate, then the iteration ends.
    /// On the sessionless generation the answer ends with the run's
    /// position (SPEC §9.3).
    fn read(
        &self,
        arguments: Option<&JsonObject>,
        generation: Generation,
    ) -> Result<(CallToolResult, bool), ErrorData> {
        let mut state = self.state()?;
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
        &self,
        arguments: Option<JsonObject>,
        generation: Generation,
    ) -> Result<CallToolResult, ErrorData> {
        let mut state = self.state()?;
        let input = Value::Object(arguments.unwrap_or_default());
        Ok(match state.run(generation).list_skills(&input) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(refusal) => CallToolResult::error(vec![ContentBlock::text(refusal)]),
        })
    }

    /// Before forwarding `name`: the run's call gate. `Ok(None)`: forward
    /// it; `Ok(Some(…))`: the refusal to answer with (the run has recorded
    /// it and ended the iteration).
    fn admit(
        &self,
        name: &str,
        generation: Generation,
    ) -> Result<Option<CallToolResult>, ErrorData> {
        if self.upstreams.tool(name).is_none() {
            let known: Vec<&str> = self
                .upstreams
                .tools()
                .map(|tool| tool.name.as_ref())
                .collect();
            return Err(unknown_tool(name, &known));
        }
        let mut state = self.state()?;
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
        &self,
        name: &str,
        mut answer: CallToolResult,
        generation: Generation,
    ) -> Result<(CallToolResult, bool), ErrorData> {
        self.upstreams.remember_result(name, &answer);
        let mut state = self.state()?;
        let routed = state.run(generation).answered(observe(name, &answer));
        if let Some(body) = routed.body {
            answer.content.push(ContentBlock::text(body));
        }
        // The 2026-07-28 revision requires it on every result; rmcp clears
        // it again for a client of an older revision.
        answer.result_type.get_or_insert(ResultType::COMPLETE);
        state.flush();
        Ok((answer, routed.changed))
    }

    /// A call the upstream failed to answer (SPEC §9.7): a tool error
    /// naming the upstream and the failure, so that the model sees it; the
    /// run records a `failure` result with the error and routes it, and a
    /// move brings the new skill's body.
    fn fail(
        &self,
        name: &str,
        failure: &str,
        generation: Generation,
    ) -> Result<(CallToolResult, bool), ErrorData> {
        let mut state = self.state()?;
        let routed = state.run(generation).failed(name, failure);
        let mut content = vec![ContentBlock::text(failure.to_owned())];
        content.extend(routed.body.map(ContentBlock::text));
        state.flush();
        Ok((CallToolResult::error(content), routed.changed))
    }

    /// A forwarded call the client cancelled: recorded, and nothing moves.
    fn end_cancelled_call(&self, name: &str, generation: Generation) -> Result<(), ErrorData> {
        let mut state = self.state()?;
        state.run(generation).cancelled(name);
        state.flush();
        Ok(())
    }

    /// Tell the client its tool list changed: unasked to a client of the
    /// handshake era, through its `subscriptions/listen` streams otherwise.
    async fn announce(&self, context: &RequestContext<RoleServer>) {
        if context.peer.peer_info().is_some()
            && let Err(err) = context.peer.notify_tool_list_changed().await
        {
            warn(&format!("could not send tools/list_changed: {err}"));
        }
        let listeners: Vec<SubscriptionSink> = match self.listeners.lock() {
            Ok(listeners) => listeners.clone(),
            Err(_) => return,
        };
        for sink in listeners {
            if let Err(err) = sink.notify_tool_list_changed().await {
                warn(&format!("could not send tools/list_changed: {err}"));
            }
        }
    }
}

/// The `skills/list` entry of each skill the session may name. Its
/// `SKILL.md` is read through the gate, so its content depends on the
/// position: the entry says `dynamic` instead of a digest. A skill whose id
/// is not a valid skill name for the extension is left out, with a line on
/// standard error.
fn skill_entries(graph: &Graph, hidden: &[String]) -> Vec<McpSkill> {
    let mut entries = Vec::new();
    for skill in &graph.map().skills {
        if hidden.contains(&skill.id) {
            continue;
        }
        let entry = McpSkill::new(
            skill_uri(&skill.id),
            SkillFrontmatter::new(
                skill.id.clone(),
                skill.description.clone().unwrap_or_default(),
            ),
            SkillResources::Dynamic,
        );
        match entry.validate() {
            Ok(()) => entries.push(entry),
            Err(err) => warn(&format!(
                "skill \"{}\" is not listed by skills/list ({err}); read_skill still offers it",
                skill.id.escape_debug()
            )),
        }
    }
    entries
}

/// The resource URI of a skill's `SKILL.md`.
fn skill_uri(id: &str) -> String {
    format!("skill://{id}/SKILL.md")
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
        return Err(format!("read_skill takes no argument `{extra}`; {USAGE}"));
    }
    match arguments.get("id") {
        Some(Value::String(id)) => Ok(id),
        Some(other) => Err(format!(
            "read_skill's `id` is a string, not {other}; {USAGE}"
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
        let upstreams = &self.upstreams;
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
        if self.instructions.is_empty() {
            config
        } else {
            config.with_instructions(self.instructions.clone())
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.offered_tools(Generation::of(&context))?,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let generation = Generation::of(&context);
        self.upstreams.relay().set_client(&context.peer);
        let (answer, changed) = match request.name.as_ref() {
            "read_skill" => self.read(request.arguments.as_ref(), generation)?,
            "list_skills" => (self.list_skills(request.arguments, generation)?, false),
            name => {
                if let Some(refusal) = self.admit(name, generation)? {
                    return Ok(CallToolResponse::Complete(refusal));
                }
                // Boxed: the forwarded call's future is large, and rmcp moves
                // this handler's future into a task of its own per request.
                let progress = context.meta.get_progress_token();
                let call = Box::pin(self.upstreams.call(name, request.arguments, progress));
                let outcome = tokio::select! {
                    outcome = call => Some(outcome),
                    () = context.ct.cancelled() => None,
                };
                match outcome {
                    Some(Ok(answer)) => self.route(name, answer, generation)?,
                    Some(Err(failure)) => self.fail(name, &failure, generation)?,
                    None => {
                        // The client cancelled: the upstream call was dropped
                        // (and so cancelled there too); no answer is owed.
                        self.end_cancelled_call(name, generation)?;
                        return Err(ErrorData::internal_error(
                            format!("the client cancelled the call of {name}"),
                            None,
                        ));
                    }
                }
            }
        };
        // The sessionless generation's list does not change (SPEC §9.2).
        if changed && generation == Generation::Handshake {
            Box::pin(self.announce(&context)).await;
        }
        Ok(CallToolResponse::Complete(answer))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let record = Resource::new(RECORD_URI, "record")
            .with_description("This session's record: one JSON event a line (skillgraph record v1)")
            .with_mime_type("application/jsonl");
        let mut resources = vec![record];
        resources.extend(self.upstreams.list_resources().await?);
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // Reading a skill's files is no read of the graph (SPEC §9.5): it
        // answers with the skill's body and moves nothing; read_skill is the
        // one door that activates.
        if let Some(skill) = self.skills.iter().find(|skill| skill.uri == request.uri) {
            let body = self
                .state()?
                .graph
                .skill(skill.name())
                .map(|skill| skill.body.clone());
            let contents = ResourceContents::text(body.unwrap_or_default(), &skill.uri)
                .with_mime_type("text/markdown");
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if request.uri != RECORD_URI {
            if let Some(read) = self.upstreams.read_resource(request.clone()).await {
                return read.map(Into::into);
            }
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource \"{}\"; the resources here are {RECORD_URI} and each skill's SKILL.md as skills/list names it",
                    request.uri.escape_debug()
                ),
                None,
            ));
        }
        let text = self.state()?.record.text();
        let contents = ResourceContents::text(text, RECORD_URI).with_mime_type("application/jsonl");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(ListSkillsResult::with_all_items(self.skills.clone()))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        match self.skills.iter().find(|skill| skill.uri == request.uri) {
            Some(skill) => Ok(GetSkillResult::new(skill.clone())),
            None => Err(ErrorData::invalid_params(
                format!(
                    "no skill at \"{}\"; skills/list names each skill's SKILL.md (skill://ID/SKILL.md)",
                    request.uri.escape_debug()
                ),
                None,
            )),
        }
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            self.upstreams.list_resource_templates().await?,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.upstreams.list_prompts().await?,
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.upstreams.get_prompt(request).await.map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.upstreams.complete(request).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.upstreams.relay().set_client(&context.peer);
        self.upstreams.set_level(request).await
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.upstreams.relay().set_client(&context.peer);
        self.upstreams.subscribe(request).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.upstreams.unsubscribe(request).await
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let id = sink.id().clone();
        if let Ok(mut listeners) = self.listeners.lock() {
            listeners.push(sink);
        }
        context.cancelled().await;
        if let Ok(mut listeners) = self.listeners.lock() {
            listeners.retain(|sink| *sink.id() != id);
        }
        Ok(())
    }
}
