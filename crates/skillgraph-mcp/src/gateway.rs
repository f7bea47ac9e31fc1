//! The async shell's MCP handler (SPEC §9, §9.10): one [`Gateway`] per
//! connection, over the [`Hub`] every run shares. Each handler carries a
//! request: it finds the run the request belongs to, takes the run's step
//! through the [doorway](crate::doorway) with the [core](crate::translate)'s
//! translation, forwards an accepted call upstream (relay, progress,
//! cancellation) and hands its outcome back the same way, and announces a
//! change of the active skills with `notifications/tools/list_changed`. It
//! never decides what a run does.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

// Log levels and resource subscriptions are deprecated by a revision after
// 2026-07-28 (SEP-2577) and are what the handshake generation relays.
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    DiscoverResult, ErrorCode, GetSkillRequestParams, GetSkillResult, Implementation,
    InitializeRequestParams, InitializeResult, InputRequiredResult, JsonObject,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
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
use skillgraph::skill_tools::SKIP_STEP;

use crate::doorway;
use crate::echo::shown;
use crate::http::{Handshake, HeldArguments, Principal, Waking};
use crate::hub::{Hub, Lens};
use crate::relay::Caller;
use crate::runs::{Generation, Kept, RUN_ARGUMENT, RUN_META, Runs, Slot, lock};
use crate::sealed::{Purpose, Sealer};
use crate::spans::{RequestSpan, RunFacts, Target};
use crate::translate::{self, Admission};
use crate::upstream::Answer;
use crate::warn;

/// The record's resource.
pub(crate) const RECORD_URI: &str = "skillgraph://record";

/// The methods of the handshake generation that the 2026-07-28 revision
/// removed.
const REMOVED_METHODS: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

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

/// What the run of the request `context` serves is bound to: its
/// principal and roles ([`Principal::binding`]), put in the request's
/// extensions by the HTTP layer; `None` without authentication.
fn principal_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .map(Principal::binding)
}

/// The roles of the request's principal (SPEC §14.7); `None` without
/// authentication.
fn roles_of(context: &RequestContext<RoleServer>) -> Option<Vec<String>> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .map(|principal| principal.roles.clone())
}

/// Tell the client of the request `context` that its run escalated: a
/// `notifications/message` at level `warning` from the logger
/// `skillgraph`, with the `escalated` event's fields (SPEC §15.5). Nothing
/// else changes: the model is the client's.
#[allow(deprecated)] // MCP logging, the channel SPEC §15.5 names
async fn say_escalated(context: &RequestContext<RoleServer>, data: Value) {
    let message =
        rmcp::model::LoggingMessageNotificationParam::new(rmcp::model::LoggingLevel::Warning, data)
            .with_logger("skillgraph");
    if let Err(err) = context.peer.notify_logging_message(message).await {
        warn(&format!(
            "could not send the escalation's notifications/message: {err}"
        ));
    }
}

/// The handshake session the request `context` serves belongs to, over
/// HTTP: its `Mcp-Session-Id`.
fn session_of(context: &RequestContext<RoleServer>) -> Option<String> {
    context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

/// The arguments of a call whose body was large, held back from rmcp by
/// the HTTP front and parsed here, once, when the call needs them
/// (`Ok(None)`: none were held).
///
/// # Errors
///
/// `-32602` when they are not an object.
fn held_arguments(context: &RequestContext<RoleServer>) -> Result<Option<JsonObject>, ErrorData> {
    let Some(held) = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<HeldArguments>())
    else {
        return Ok(None);
    };
    held.take().transpose().map_err(|reason| {
        ErrorData::invalid_params(
            format!(
                "the call's arguments are not an object ({}); send them as a JSON object",
                shown(&reason)
            ),
            None,
        )
    })
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

/// An accepted call on its way upstream: its run, its number, and the
/// handles an `input_required` answer must carry back.
struct Forwarded<'s> {
    slot: &'s Slot,
    call: u64,
    generation: Generation,
    /// The run's handle, for the retry's request state.
    run_handle: Option<String>,
    /// The handle of a run this call started, for the answer's `_meta`.
    handle: Option<String>,
}

impl Forwarded<'_> {
    /// The upstream's request for input to the call of `tool` as the
    /// client gets it: its request state sealed by `sealer` (over HTTP with
    /// the run in it), and a new run's handle in its `_meta`.
    fn asking(
        self,
        sealer: &Sealer,
        tool: &str,
        mut asked: InputRequiredResult,
    ) -> InputRequiredResult {
        sealer.hold(
            Purpose::Tool(tool),
            self.run_handle.as_deref(),
            &mut asked.request_state,
        );
        if let Some(handle) = self.handle {
            asked
                .meta
                .get_or_insert_with(Default::default)
                .0
                .insert(RUN_META.to_owned(), Value::String(handle));
        }
        asked
    }
}

/// A sessionless run's call under way: when it ends, however it ends, the
/// run's time to live starts again.
struct Answered<'a> {
    handle: String,
    runs: &'a Runs,
}

impl Drop for Answered<'_> {
    fn drop(&mut self) {
        self.runs.answered(&self.handle);
    }
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

    /// Take back the run of a session that wakes, which `handshake` kept.
    fn wake(&self, handshake: &Handshake) -> Result<(), ErrorData> {
        let run = handshake.run().ok_or_else(|| {
            ErrorData::internal_error(
                "this session's run was not kept while it slept; start a new session",
                None,
            )
        })?;
        let mut own = self.own.lock().map_err(|_| {
            ErrorData::internal_error(
                "the session was lost after an earlier failure; reconnect",
                None,
            )
        })?;
        *own = Some(run);
        Ok(())
    }

    /// Over HTTP with a shared store, keep the run a handshake starts in
    /// the store under a handle of its own, bound to the request's
    /// principal, so that any replica can restore the session (SPEC §14.6).
    fn keep_handshake_run(
        &self,
        slot: &Slot,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let (Some(store), Some(_)) = (&self.hub.store, &self.hub.runs) else {
            return Ok(());
        };
        let mut state = lock(slot)?;
        if state.kept.is_none() {
            state.kept = Some(Kept::new(
                Arc::clone(store),
                crate::runs::mint_handle()?,
                principal_of(context).unwrap_or_default(),
            ));
        }
        Ok(())
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
        // `skip_step` is the session's only on a map with steps (SPEC
        // §15.7); elsewhere a tool of that name is an upstream's.
        let own_skip = name == SKIP_STEP && self.hub.stepped;
        if !matches!(name.as_ref(), "read_skill" | "list_skills")
            && !own_skip
            && self.hub.upstreams.tool(&name).is_none()
        {
            // Never a tool only skills hidden from the caller carry.
            let lens = self.lens(&context)?;
            let upstream: Vec<&str> = self
                .hub
                .upstreams
                .tools()
                .map(|t| t.name.as_ref())
                .filter(|name| !lens.graph.withholds_tool(name))
                .collect();
            return Err(translate::unknown_tool(&name, &upstream));
        }
        if let Some(arguments) = held_arguments(&context)? {
            request.arguments = Some(arguments);
        }
        // Over HTTP a sessionless run goes by its handle (SPEC §9.4).
        let handles = self.hub.runs.is_some() && generation == Generation::Sessionless;
        let given = self.resume(&mut request, handles)?;
        let (slot, handle) = match self
            .run_of_call(generation, &context, &mut request.arguments)
            .await?
        {
            Ok(found) => found,
            Err(answer) => return Ok(CallToolResponse::Complete(answer)),
        };
        let run_handle = handle.clone().or(given).filter(|_| handles);
        // The run's time to live counts from this call's end (SPEC §9.8).
        let _answered = run_handle
            .clone()
            .zip(self.hub.runs.as_ref())
            .map(|(handle, runs)| Answered { handle, runs });
        let _facts = RunFacts::gather(span, &slot, run_handle.clone(), &self.hub.graph);
        let escalated_before = translate::escalated(&slot)?.is_some();
        let caller = self.caller(&context);
        self.hub.upstreams.relay().set_client(&caller);
        let (mut answer, changed) = match name.as_ref() {
            "read_skill" => {
                doorway::step(
                    &slot,
                    generation,
                    request.arguments.take(),
                    |run, arguments| translate::read(run, arguments, generation),
                )
                .await?
            }
            SKIP_STEP if own_skip => {
                doorway::step(
                    &slot,
                    generation,
                    request.arguments.take(),
                    |run, arguments| translate::skip_step(run, arguments, generation),
                )
                .await?
            }
            "list_skills" => (
                doorway::step(
                    &slot,
                    generation,
                    request.arguments.take(),
                    |run, arguments| translate::list_skills(run, arguments),
                )
                .await?,
                false,
            ),
            tool => match doorway::step(&slot, generation, (), |run, ()| {
                translate::admit(run, tool, generation)
            })
            .await?
            {
                Admission::Refused(refusal) => (refusal, false),
                Admission::Forward(call) => {
                    let forwarded = Forwarded {
                        slot: &slot,
                        call,
                        generation,
                        run_handle,
                        handle: handle.clone(),
                    };
                    // Boxed: the forwarded call's future is large, and rmcp
                    // moves this handler's future into a task of its own
                    // per request.
                    match Box::pin(self.forward(request, forwarded, &context, caller, span)).await?
                    {
                        Ok(answered) => answered,
                        Err(asked) => return Ok(CallToolResponse::InputRequired(asked)),
                    }
                }
            },
        };
        if let Some(handle) = handle {
            translate::give_handle(&mut answer, &handle);
        }
        // `list_skills` is no step: its iteration has not ended.
        translate::give_budget(&mut answer, &slot, name != "list_skills")?;
        // The call whose refusal reached the escalation's count says so, in
        // `_meta` and as a warning on the request's stream (SPEC §15.5).
        if let Some(escalated) = translate::escalated(&slot)?.filter(|_| !escalated_before) {
            let data = serde_json::to_value(&escalated).unwrap_or_default();
            answer
                .meta
                .get_or_insert_with(Default::default)
                .0
                .insert(translate::ESCALATED.to_owned(), data.clone());
            say_escalated(&context, data).await;
        }
        // The sessionless generation's list does not change (SPEC §9.2).
        if changed && generation == Generation::Handshake {
            Box::pin(self.announce(&context)).await;
        }
        Ok(CallToolResponse::Complete(answer))
    }

    /// A retry after `input_required` brings back the state serve sealed
    /// (SPEC §9.7): the upstream gets its own state back and, where runs go
    /// by `handles`, the run goes back into the arguments. The handle the
    /// call names, if any.
    ///
    /// # Errors
    ///
    /// `-32602` for a state this server did not seal for this tool.
    fn resume(
        &self,
        request: &mut CallToolRequestParams,
        handles: bool,
    ) -> Result<Option<String>, ErrorData> {
        let sealer = self.hub.upstreams.sealer();
        let resumed = sealer.reopen(Purpose::Tool(&request.name), &mut request.request_state)?;
        if handles && let Some(run) = resumed {
            let arguments = request.arguments.get_or_insert_with(Default::default);
            arguments
                .entry(RUN_ARGUMENT)
                .or_insert_with(|| Value::String(run));
        }
        Ok(request
            .arguments
            .as_ref()
            .and_then(|arguments| arguments.get(RUN_ARGUMENT))
            .and_then(Value::as_str)
            .map(str::to_owned))
    }

    /// Forward an accepted call upstream (it is in the record already) and
    /// hand its outcome to the run through the doorway: the answer and
    /// whether the active skills changed, or the upstream's request for
    /// input to relay to the client (`Err`).
    async fn forward(
        &self,
        request: CallToolRequestParams,
        forwarded: Forwarded<'_>,
        context: &RequestContext<RoleServer>,
        caller: Caller,
        span: &RequestSpan,
    ) -> Result<Result<(CallToolResult, bool), InputRequiredResult>, ErrorData> {
        let Forwarded {
            slot,
            call,
            generation,
            ..
        } = forwarded;
        let name = request.name.clone();
        let progress = context.meta.get_progress_token();
        // What the client declared: at its handshake, or with this request
        // on the sessionless generation.
        let capabilities = match generation {
            Generation::Sessionless => context.meta.client_capabilities(),
            Generation::Handshake => caller.declared(),
        };
        let upstream = self
            .hub
            .upstreams
            .call(request, progress, caller, capabilities, span);
        let outcome = tokio::select! {
            outcome = upstream => Some(outcome),
            () = context.ct.cancelled() => None,
        };
        match outcome {
            Some(Ok(Answer::Result(answer))) => {
                self.hub.upstreams.remember_result(&name, &answer);
                let trusted = self.hub.upstreams.trusts_proposals_of(&name);
                Ok(Ok(doorway::step(
                    slot,
                    generation,
                    answer,
                    |run, answer| translate::route(run, call, &name, answer, trusted),
                )
                .await??))
            }
            Some(Ok(Answer::InputRequired(asked))) => {
                // The client fulfils the requests and retries: this
                // attempt moved nothing (SPEC §9.5).
                doorway::step(slot, generation, (), |run, ()| {
                    run.input_required(call, &name)
                })
                .await?
                .map_err(translate::not_open)?;
                let sealer = self.hub.upstreams.sealer();
                Ok(Err(forwarded.asking(sealer, &name, asked)))
            }
            Some(Ok(Answer::Refused(error))) => {
                // A failure of the call, answered as the protocol error it
                // is (SPEC §9.7: -32021 for an undeclared capability).
                doorway::step(slot, generation, (), |run, ()| {
                    translate::fail(run, call, &name, &error.message)
                })
                .await??;
                Err(error)
            }
            Some(Err(failure)) => Ok(Ok(doorway::step(slot, generation, (), |run, ()| {
                translate::fail(run, call, &name, &failure)
            })
            .await??)),
            None => {
                // The client cancelled: the upstream call was dropped (and
                // so cancelled there too); no answer is owed.
                doorway::step(slot, generation, (), |run, ()| run.cancelled(call, &name))
                    .await?
                    .map_err(translate::not_open)?;
                Err(ErrorData::internal_error(
                    format!("the client cancelled the call of {name}"),
                    None,
                ))
            }
        }
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
        let lens = self.lens(context)?;
        if let Some(read) = self.hub.files.read(&request.uri, |id| lens.shows(id)) {
            let contents = read.map_err(|reason| ErrorData::internal_error(reason, None))?;
            return Ok(ReadResourceResult::new(vec![contents]).into());
        }
        if let Some(text) = self.record_text(&request.uri, context).await {
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

    /// What the request `context` is shown: its principal's lens (SPEC
    /// §14.8).
    ///
    /// # Errors
    ///
    /// When its principal takes none of the map's roles (the HTTP front
    /// answers 403 before a request gets here).
    fn lens(&self, context: &RequestContext<RoleServer>) -> Result<Arc<Lens>, ErrorData> {
        self.hub
            .lens(roles_of(context).as_deref())
            .map_err(|refused| ErrorData::invalid_request(refused.to_string(), None))
    }

    /// The instructions the request `context`'s principal is given: its
    /// lens's entry prompt; none when that is empty (an entry hidden from
    /// it has no body here, SPEC §14.11).
    fn instructions(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<String>, ErrorData> {
        let lens = self.lens(context)?;
        Ok(Some(lens.instructions.clone()).filter(|text| !text.is_empty()))
    }

    /// The connection's own run, made for the request `context` if it has
    /// none yet.
    fn own(&self, context: &RequestContext<RoleServer>) -> Result<Slot, ErrorData> {
        let mut own = self.own.lock().map_err(|_| {
            ErrorData::internal_error(
                "the session was lost after an earlier failure; reconnect",
                None,
            )
        })?;
        if let Some(slot) = own.as_ref() {
            return Ok(Arc::clone(slot));
        }
        let (slot, _) = self.hub.new_run(&self.lens(context)?.roles)?;
        *own = Some(Arc::clone(&slot));
        Ok(slot)
    }

    /// The run a tool call belongs to (SPEC §9.1), and its handle when the
    /// call starts it over HTTP; the call's `skillgraph_run` argument is
    /// taken out. `Err(answer)`: the call names no run held here.
    async fn run_of_call(
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
            return Ok(Ok((self.own(context)?, None)));
        };
        let principal = principal_of(context);
        let given = arguments
            .as_mut()
            .and_then(|arguments| arguments.remove(RUN_ARGUMENT));
        match given {
            Some(Value::String(handle)) => Ok(
                match self.find_run(runs, &handle, principal.as_deref()).await? {
                    Some(slot) => Ok((slot, None)),
                    None => Err(translate::no_such_run()),
                },
            ),
            Some(other) => Ok(Err(translate::not_a_handle(&other))),
            None => {
                let (slot, handle) = self.hub.new_run(&self.lens(context)?.roles)?;
                let Some(handle) = handle else {
                    return Ok(Ok((slot, None)));
                };
                if let Some(store) = &self.hub.store {
                    lock(&slot)?.kept = Some(Kept::new(
                        Arc::clone(store),
                        handle.clone(),
                        principal.clone().unwrap_or_default(),
                    ));
                }
                Ok(
                    match runs.insert(handle.clone(), Arc::clone(&slot), principal)? {
                        Ok(()) => Ok((slot, Some(handle))),
                        Err(no_room) => {
                            runs.discard_record(&handle);
                            Err(translate::refusal(no_room.say()))
                        }
                    },
                )
            }
        }
    }

    /// The run `handle` names for `principal`: held here, or, with a
    /// shared store, loaded from it and held here from now on (SPEC
    /// §14.3). `None`: unknown, expired, or someone else's, one answer.
    ///
    /// # Errors
    ///
    /// When the store cannot be reached, or holds the run on another map
    /// or as no record this graph rebuilds.
    async fn find_run(
        &self,
        runs: &Runs,
        handle: &str,
        principal: Option<&str>,
    ) -> Result<Option<Slot>, ErrorData> {
        if let Some(slot) = runs.find(handle, principal)? {
            // Another replica may have taken the run's last steps.
            if let Some(kept) = lock(&slot)?.kept.as_mut() {
                kept.fresh = false;
            }
            return Ok(Some(slot));
        }
        let Some(slot) = self
            .hub
            .stored_run(handle, Some(principal.unwrap_or_default()))
            .await?
        else {
            return Ok(None);
        };
        let owner = principal.map(str::to_owned);
        match runs.insert(handle.to_owned(), Arc::clone(&slot), owner)? {
            Ok(()) => Ok(Some(slot)),
            // Every run held here is busy: this request goes on with its
            // copy, which the store keeps in step.
            Err(_) => Ok(Some(slot)),
        }
    }

    /// The record of the run in `slot`, as text: with a shared store, the
    /// record the store holds now (another replica may have added to it).
    async fn kept_record(&self, slot: &Slot) -> Result<String, ErrorData> {
        if lock(slot)?.kept.is_some() {
            doorway::step(slot, Generation::Sessionless, (), |_, ()| ()).await?;
        }
        Ok(lock(slot)?.record.text())
    }

    /// The tools offered now, recording the offer the model is shown; on
    /// the sessionless generation the one list for every request (SPEC
    /// §9.2), which records nothing.
    async fn offered_tools(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Result<Vec<Tool>, ErrorData> {
        let generation = Generation::of(context);
        if generation == Generation::Sessionless {
            return Ok(self.lens(context)?.stable.clone());
        }
        doorway::step(&self.own(context)?, generation, (), |run, ()| {
            translate::offered_tools(run, self.hub.upstreams.tools())
        })
        .await?
    }

    /// Tell the client its tool list changed (the handshake generation:
    /// the sessionless generation's list never changes, SPEC §9.2). With a
    /// shared store, through the store: the replica that holds the
    /// session's stream tells it (this one, or another).
    async fn announce(&self, context: &RequestContext<RoleServer>) {
        if let (Some(store), Some(session)) = (&self.hub.store, session_of(context))
            && store.publish_list_changed(&session).await.is_ok()
        {
            return;
        }
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
    async fn record_text(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<String, ErrorData>> {
        // A record declares the whole map: to a principal whose runs hide
        // a skill it is an unknown resource (SPEC §14.8).
        match self.lens(context) {
            Ok(lens) if !lens.hides_nothing() => return None,
            Err(refused) => return Some(Err(refused)),
            Ok(_) => {}
        }
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
            return Some(
                self.own(context)
                    .and_then(|slot| Ok(lock(&slot)?.record.text())),
            );
        }
        let handle = uri.strip_prefix("skillgraph://record/")?;
        let runs = runs?;
        Some(
            match self
                .find_run(runs, handle, principal_of(context).as_deref())
                .await
            {
                Ok(Some(slot)) => self.kept_record(&slot).await,
                Ok(None) => Err(ErrorData::resource_not_found(
                    "this server holds no run with that handle (it may have expired); a tools/call answer gives the handle of its run",
                    None,
                )),
                Err(err) => Err(err),
            },
        )
    }
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
        // With roles, each principal has its own (SPEC §14.8): they are
        // given by `initialize` and `server/discover`, which know whose.
        match self.hub.lens(None) {
            Ok(lens) if self.hub.graph.map().roles.is_empty() && !lens.instructions.is_empty() => {
                config.with_instructions(lens.instructions.clone())
            }
            _ => config,
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        // With a shared store, another replica's step may change this
        // session's tool list: it is told here (SPEC §14.6).
        if let Some(session) = session_of(&context) {
            self.hub.remember_peer(&session, context.peer.clone());
        }
        if let Some(Waking(handshake)) = context.extensions.get::<Waking>() {
            // A session that slept after its handshake wakes (the HTTP
            // front's `sleep`): its handshake is replayed, and the run the
            // first one started goes on, with nothing recorded or traced.
            return self.wake(handshake).and_then(|()| {
                let mut answer = self.negotiate_initialize(&request)?;
                answer.instructions = self.instructions(&context)?;
                Ok(answer)
            });
        }
        // Over HTTP the front keeps the run while the session sleeps.
        let handshake = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Handshake>());
        let span = self.span("initialize", Target::None, &context);
        // The run starts with the handshake, so that a run that only shook
        // hands has a record that explains (SPEC §9.7).
        let started = match self.own(&context).and_then(|slot| {
            self.keep_handshake_run(&slot, &context)?;
            Ok(slot)
        }) {
            Ok(slot) => doorway::start(&slot, Generation::Handshake)
                .await
                .map(|()| slot),
            Err(err) => Err(err),
        };
        let answer = started.and_then(|slot| {
            let mut answer = self.negotiate_initialize(&request)?;
            answer.instructions = self.instructions(&context)?;
            if let Some(handshake) = handshake {
                handshake.keep(slot, request);
            }
            Ok(answer)
        });
        span.answered(answer)
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
        let mut found = DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        );
        found.instructions = self.instructions(&context)?;
        Ok(found)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = self.span("tools/list", Target::None, &context);
        span.answered(
            self.offered_tools(&context)
                .await
                .map(ListToolsResult::with_all_items),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = self.span("tools/call", Target::Tool(request.name.as_ref()), &context);
        // A run the store lost while this replica held it is answered as
        // any unknown run (SPEC §14.11).
        let called = self.call(request, context, &span).await.or_else(|err| {
            if doorway::is_gone(&err) {
                Ok(CallToolResponse::Complete(translate::no_such_run()))
            } else {
                Err(err)
            }
        });
        let answer = span.answered(called);
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
        let own_record = (self.hub.runs.is_none()
            || Generation::of(&context) == Generation::Handshake)
            && self.lens(&context)?.hides_nothing();
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
        let lens = self.lens(&context)?;
        Ok(ListSkillsResult::with_all_items(
            self.hub.files.entries(|id| lens.shows(id)),
        ))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let span = self.span("skills/get", Target::Resource(&request.uri), &context);
        let lens = self.lens(&context);
        span.answered(lens.and_then(|lens| {
            match self
                .hub
                .files
                .entries(|id| lens.shows(id))
                .into_iter()
                .find(|skill| skill.uri == request.uri)
            {
                Some(skill) => Ok(GetSkillResult::new(skill)),
                None => Err(ErrorData::invalid_params(
                    format!(
                        "no skill at {}; skills/list names each skill's SKILL.md (skill://ID/SKILL.md)",
                        shown(&request.uri)
                    ),
                    None,
                )),
            }
        }))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let _span = self.span("resources/templates/list", Target::None, &context);
        let mut templates = Vec::new();
        // A record declares the whole map: only a principal whose runs hide
        // nothing reads one (SPEC §14.8).
        if self.hub.runs.is_some() && self.lens(&context)?.hides_nothing() {
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

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // A method the 2026-07-28 revision removed is not found on the
        // sessionless generation (`-32601`, HTTP 404), whatever its params.
        // Else a known method whose params did not fit, or a method name too
        // long to repeat (SPEC §9.7): over HTTP they reach this handler,
        // over stdio the transport answers them first. Any other method is
        // not served here.
        let removed = Generation::of(&context) == Generation::Sessionless
            && REMOVED_METHODS.contains(&request.method.as_str());
        let malformed = if removed {
            None
        } else {
            crate::malformed::refusal(&request)
        };
        Err(malformed
            .unwrap_or_else(|| ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None)))
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
