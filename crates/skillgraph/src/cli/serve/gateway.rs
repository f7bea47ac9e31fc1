//! The MCP server side of `skillgraph serve` (SPEC §9): one session per
//! connection, one turn, every call an iteration of its own. `tools/list`
//! offers `read_skill`, `list_skills` and the upstream tools the active
//! skills carry; a proxied call is forwarded unchanged, its answer observed
//! and routed; a change of the active skills is announced with
//! `notifications/tools/list_changed`.

use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetSkillRequestParams,
    GetSkillResult, Implementation, JsonObject, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
    Skill as McpSkill, SkillFrontmatter, SkillResources, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use skill_session::{MoveBy, Session, skill_content};
use skill_tools::HostFormat;

use super::observe::observe;
use super::record::RecordSink;
use super::upstream::Upstreams;
use super::warn;

/// The longest unknown id an answer repeats back; a longer one is only
/// measured.
const MAX_ID_ECHO: usize = 256;

/// The record's resource.
pub(crate) const RECORD_URI: &str = "skillgraph://record";

/// What the command line chose.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// Offer every upstream tool, not only the active skills' tools.
    pub(crate) all_tools: bool,
    /// Refuse a call to an upstream tool not offered now.
    pub(crate) strict_tools: bool,
}

/// The session and its record, changed together under one lock.
struct State {
    session: Session,
    record: RecordSink,
}

impl State {
    /// Append the session's new events to the record.
    fn flush(&mut self) {
        let events = self.session.take_events();
        self.record.append(events);
    }

    fn active(&self) -> Vec<String> {
        self.session
            .active_skills()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

/// The server for one connection.
pub(crate) struct Gateway {
    state: Mutex<State>,
    upstreams: Arc<Upstreams>,
    options: Options,
    instructions: String,
    /// The catalog as MCP's skills extension lists it (`skills/list`).
    skills: Vec<McpSkill>,
    /// `subscriptions/listen` streams of clients on the newer protocol.
    listeners: Mutex<Vec<SubscriptionSink>>,
}

impl Gateway {
    /// A gateway for `session` (its turn begun), proxying `upstreams`.
    pub(crate) fn new(
        session: Session,
        record: RecordSink,
        upstreams: Arc<Upstreams>,
        options: Options,
    ) -> Self {
        let instructions = session.system_prompt();
        let skills = skill_entries(&session);
        let mut state = State { session, record };
        state.flush();
        Gateway {
            state: Mutex::new(state),
            upstreams,
            options,
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

    /// The tools offered now, recording the offer the model is shown.
    fn offered_tools(&self) -> Result<Vec<Tool>, ErrorData> {
        let mut state = self.state()?;
        let mut tools = Vec::new();
        for descriptor in state.session.tools() {
            let json = descriptor
                .to_host(HostFormat::Mcp)
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
            let tool = serde_json::from_value(json)
                .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
            tools.push(tool);
        }
        if self.options.all_tools {
            tools.extend(self.upstreams.tools().cloned());
        } else {
            let visible = state.session.visible_tools();
            tools.extend(
                visible
                    .into_iter()
                    .filter_map(|name| self.upstreams.tool(name).cloned()),
            );
        }
        state.flush();
        Ok(tools)
    }

    /// A `read_skill` call: judged by the gate, then the iteration ends.
    fn read(&self, arguments: Option<&JsonObject>) -> Result<(CallToolResult, bool), ErrorData> {
        let read = match read_argument(arguments) {
            Ok(id) => self.gate(id)?,
            Err(message) => Read::refused(message),
        };
        let result = if read.accepted {
            CallToolResult::success(vec![ContentBlock::text(read.text)])
        } else {
            CallToolResult::error(vec![ContentBlock::text(read.text)])
        };
        Ok((result, read.changed))
    }

    /// Judge a read of `id` (a `read_skill` call, or a skill's `SKILL.md`
    /// read as a resource) and end the iteration.
    fn gate(&self, id: &str) -> Result<Read, ErrorData> {
        let mut state = self.state()?;
        if id.len() > MAX_ID_ECHO && !state.session.graph().has_skill(id) {
            return Ok(Read::refused(format!(
                "read_skill was called with an id of {} bytes, which is not a skill of this map; pass one of the ids in its schema",
                id.len()
            )));
        }
        let before = state.active();
        let answer = match state.session.read_skill(id) {
            Ok(answer) => answer,
            Err(err) => return Ok(Read::refused(err.to_string())),
        };
        let text = match state.session.graph().skill(id) {
            // An accepted read answers with the body whatever the mode: MCP
            // has no system prompt to carry it.
            Some(skill) if answer.accepted() && !skill.body.is_empty() => {
                skill_content(id, &skill.body)
            }
            _ => answer.text,
        };
        state.session.end_iteration();
        let changed = state.active() != before;
        state.flush();
        Ok(Read {
            accepted: answer.read.accepted,
            text,
            changed,
        })
    }

    /// A `list_skills` call.
    fn list_skills(&self, arguments: Option<JsonObject>) -> Result<CallToolResult, ErrorData> {
        let state = self.state()?;
        let Some(tool) = state.session.graph().list_skills() else {
            return Err(unknown_tool("list_skills", &[]));
        };
        let input = Value::Object(arguments.unwrap_or_default());
        Ok(match tool.execute.call(&input) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(err) => CallToolResult::error(vec![ContentBlock::text(err.to_string())]),
        })
    }

    /// Before forwarding `name`: whether it is offered now (`Ok(Ok(…))`),
    /// or the refusal `--strict-tools` answers with (`Ok(Err(…))`).
    fn admit(&self, name: &str) -> Result<Result<bool, CallToolResult>, ErrorData> {
        if self.upstreams.tool(name).is_none() {
            let known: Vec<&str> = self
                .upstreams
                .tools()
                .map(|tool| tool.name.as_ref())
                .collect();
            return Err(unknown_tool(name, &known));
        }
        let state = self.state()?;
        let offered = self.options.all_tools || state.session.offers_tool(name);
        if offered || !self.options.strict_tools {
            return Ok(Ok(offered));
        }
        let session = &state.session;
        let carriers: Vec<&str> = session
            .graph()
            .map()
            .skills
            .iter()
            .filter(|skill| skill.tool(name).is_some())
            .map(|skill| skill.id.as_str())
            .filter(|id| !session.hidden_ids().iter().any(|hidden| hidden == id))
            .collect();
        let message = if carriers.is_empty() {
            format!(
                "{name} is not offered now, and no skill this session can read carries it; call one of the tools in tools/list"
            )
        } else {
            format!(
                "{name} is not offered now: it comes with the skill(s) {}; read one of them with read_skill first",
                carriers.join(", ")
            )
        };
        Ok(Err(CallToolResult::error(vec![ContentBlock::text(
            message,
        )])))
    }

    /// After an upstream answered `name`: observe, route, record. A move by
    /// a route appends the new skill's body to the answer.
    fn route(
        &self,
        name: &str,
        offered: bool,
        mut answer: CallToolResult,
    ) -> Result<(CallToolResult, bool), ErrorData> {
        let mut state = self.state()?;
        let before = state.active();
        state
            .session
            .observe_offered(observe(name, &answer), offered);
        let by_route = state.session.end_iteration().by == MoveBy::Route;
        let session = &state.session;
        if by_route
            && let Some(skill) = session.cursor().and_then(|to| session.graph().skill(to))
            && !skill.body.is_empty()
        {
            answer
                .content
                .push(ContentBlock::text(skill_content(&skill.id, &skill.body)));
        }
        let changed = state.active() != before;
        state.flush();
        Ok((answer, changed))
    }

    /// A call the upstream could not answer still ends its iteration.
    fn end_failed_call(&self) -> Result<(), ErrorData> {
        let mut state = self.state()?;
        state.session.end_iteration();
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
fn skill_entries(session: &Session) -> Vec<McpSkill> {
    let mut entries = Vec::new();
    for skill in &session.graph().map().skills {
        if session.hidden_ids().contains(&skill.id) {
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

/// What the gate answered a read with.
struct Read {
    accepted: bool,
    /// The body (accepted) or the teaching refusal.
    text: String,
    /// Whether the active skills changed.
    changed: bool,
}

impl Read {
    fn refused(text: String) -> Self {
        Read {
            accepted: false,
            text,
            changed: false,
        }
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
    ErrorData::invalid_params(
        format!(
            "unknown tool \"{}\"; the tools here are: {}",
            name.escape_debug(),
            known.join(", ")
        ),
        None,
    )
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_skills()
            .build();
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.offered_tools()?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (answer, changed) = match request.name.as_ref() {
            "read_skill" => self.read(request.arguments.as_ref())?,
            "list_skills" => (self.list_skills(request.arguments)?, false),
            name => {
                let offered = match self.admit(name)? {
                    Ok(offered) => offered,
                    Err(refusal) => return Ok(CallToolResponse::Complete(refusal)),
                };
                // Boxed: the forwarded call's future is large, and rmcp moves
                // this handler's future into a task of its own per request.
                match Box::pin(self.upstreams.call(name, request.arguments)).await {
                    Ok(answer) => self.route(name, offered, answer)?,
                    Err(err) => {
                        self.end_failed_call()?;
                        return Err(err);
                    }
                }
            }
        };
        if changed {
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
        Ok(ListResourcesResult::with_all_items(vec![record]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if let Some(skill) = self.skills.iter().find(|skill| skill.uri == request.uri) {
            let read = self.gate(skill.name())?;
            if read.changed {
                self.announce(&context).await;
            }
            if !read.accepted {
                return Err(ErrorData::invalid_params(read.text, None));
            }
            let contents =
                ResourceContents::text(read.text, &skill.uri).with_mime_type("text/markdown");
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if request.uri != RECORD_URI {
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
