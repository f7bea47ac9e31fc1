//! The server's core (SPEC §9.10): synchronous, no I/O, never awaits. It
//! turns an MCP request into a run step and the step's outcome into the MCP
//! answer: a `read_skill` call, a `list_skills` call, a call judged by the
//! gate, an upstream's answer or failure handed to the run, the tools a run
//! lists; the run handle as an answer carries it; the order of blocks in an
//! answer (the upstream's own, then a routed skill's body, then on the
//! sessionless generation the run's position, then a new run's handle).
//! Each step here takes the [`Run`] the [doorway](crate::doorway) hands it;
//! none of them writes the record, which the doorway appends once the step
//! is taken. The async shell (`gateway.rs`, the transports, the upstreams)
//! carries requests and answers and never decides what a run does.

use std::fmt::Write as _;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, ResultType, Tool};
use serde_json::Value;
use skillgraph::skill_session::{
    EscalatedEvent, Graph, ObserveError, Proposed, Run, RunCall, SessionConfig,
};
use skillgraph::skill_tools::{HostFormat, ToolDescriptor};

use crate::ServeError;
use crate::echo::shown;
use crate::fit::{Misfit, Misfits};
use crate::observe::observe;
use crate::runs::{Generation, RUN_ARGUMENT, RUN_META, Slot, lock};

/// What the call gate made of a call of an upstream tool.
#[derive(Debug)]
pub(crate) enum Admission {
    /// Forward it; the call's number, which its result will carry.
    Forward(u64),
    /// The refusal to answer with; the iteration has ended.
    Refused(CallToolResult),
}

/// A `read_skill` call with `arguments`: checked, judged by the gate, the
/// iteration ended. On the sessionless generation the answer ends with the
/// run's position (SPEC §9.3). `true` with it: the active skills changed.
pub(crate) fn read(
    run: &mut Run,
    arguments: Option<JsonObject>,
    generation: Generation,
) -> (CallToolResult, bool) {
    let input = arguments.map_or(Value::Null, Value::Object);
    let read = run.read_input(&input);
    let mut content = vec![ContentBlock::text(read.text)];
    if generation == Generation::Sessionless {
        content.push(ContentBlock::text(run.position()));
    }
    let result = if read.accepted {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    (result, read.changed)
}

/// A `list_skills` call with `arguments`: no step of the run.
pub(crate) fn list_skills(run: &Run, arguments: Option<JsonObject>) -> CallToolResult {
    let input = Value::Object(arguments.unwrap_or_default());
    match run.list_skills(&input) {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(refusal) => CallToolResult::error(vec![ContentBlock::text(refusal)]),
    }
}

/// With a budget (SPEC §15.3), what remains of it in this answer's
/// iteration (`ended`: the answer ended it, as every read and call does):
/// in `_meta["skillgraph/iterations_remaining"]`, and in words when 2 or
/// fewer remain.
///
/// # Errors
///
/// When the run's lock was lost.
pub(crate) fn give_budget(
    answer: &mut CallToolResult,
    slot: &Slot,
    ended: bool,
) -> Result<(), ErrorData> {
    let state = lock(slot)?;
    let Some(session) = state.run_started().map(Run::session) else {
        return Ok(());
    };
    // After an ended iteration what is left is what remained in it.
    let left = if ended {
        session.iterations_left()
    } else {
        session.iterations_remaining()
    };
    let Some(left) = left else {
        return Ok(());
    };
    answer
        .meta
        .get_or_insert_with(Default::default)
        .0
        .insert(ITERATIONS_REMAINING.to_owned(), Value::from(left));
    let said = match left {
        0 => Some(
            "This run's budget is spent with this call: answer the user now from what is known."
                .to_owned(),
        ),
        1 | 2 => Some(format!("{left} more call(s) fit in this run's budget.")),
        _ => None,
    };
    answer.content.extend(said.map(ContentBlock::text));
    Ok(())
}

/// The run's escalation, once its refusals reached the count (SPEC
/// §15.5).
///
/// # Errors
///
/// When the run's lock was lost.
pub(crate) fn escalated(slot: &Slot) -> Result<Option<EscalatedEvent>, ErrorData> {
    let state = lock(slot)?;
    Ok(state
        .run_started()
        .and_then(|run| run.session().escalated().cloned()))
}

/// The `_meta` key of a run's escalation on the answer that crossed it.
pub(crate) const ESCALATED: &str = "skillgraph/escalated";

/// The `_meta` key of a move an upstream's result proposes (SPEC §15.6).
pub(crate) const PROPOSE: &str = "skillgraph/propose";

/// The `_meta` key of what remains of a run's budget.
pub(crate) const ITERATIONS_REMAINING: &str = "skillgraph/iterations_remaining";

/// A `skip_step` call with `arguments` (SPEC §15.2): the run judges and
/// answers it; a refusal is a tool error. On the sessionless generation
/// the answer ends with the run's position.
pub(crate) fn skip_step(
    run: &mut Run,
    arguments: Option<JsonObject>,
    generation: Generation,
) -> (CallToolResult, bool) {
    let skipped = run.skip_step(&Value::Object(arguments.unwrap_or_default()));
    let mut content = vec![ContentBlock::text(skipped.text)];
    if generation == Generation::Sessionless {
        content.push(ContentBlock::text(run.position()));
    }
    let answer = if skipped.skipped {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    (answer, skipped.changed)
}

/// A call of the upstream tool `name`, judged by the run's call gate and
/// recorded, an accepted call before it is forwarded (SPEC §8.4).
pub(crate) fn admit(run: &mut Run, name: &str, generation: Generation) -> Admission {
    match run.call(name) {
        RunCall::Forward { call } => Admission::Forward(call),
        RunCall::Refused { text } => {
            let mut content = vec![ContentBlock::text(text)];
            if generation == Generation::Sessionless {
                content.push(ContentBlock::text(run.position()));
            }
            Admission::Refused(CallToolResult::error(content))
        }
    }
}

/// The upstream's `answer` to the call numbered `call` of `name`: the run
/// observes and routes it, and a move by a route appends the new skill's
/// body after the upstream's own blocks.
///
/// # Errors
///
/// [`not_open`] when the run has no open call `call` of `name`.
pub(crate) fn route(
    run: &mut Run,
    call: u64,
    name: &str,
    mut answer: CallToolResult,
    trusted: bool,
) -> Result<(CallToolResult, bool), ErrorData> {
    // A proposed move is the run's, never the client's (SPEC §15.6): taken
    // out of the answer, and judged only from a server trusted to propose.
    let proposed = answer
        .meta
        .as_mut()
        .and_then(|meta| meta.0.remove(PROPOSE))
        .map(|value| Proposed { value, trusted });
    if answer.meta.as_ref().is_some_and(|meta| meta.0.is_empty()) {
        answer.meta = None;
    }
    let observed = observe(name, &answer);
    let routed = match proposed {
        Some(proposed) => run.answered_proposing(call, observed, proposed),
        None => run.answered(call, observed),
    }
    .map_err(not_open)?;
    if let Some(step) = routed.step {
        answer.content.push(ContentBlock::text(step));
    }
    if let Some(body) = routed.body {
        answer.content.push(ContentBlock::text(body));
    }
    // The 2026-07-28 revision requires it on every result; rmcp clears it
    // again for a client of an older revision.
    answer.result_type.get_or_insert(ResultType::COMPLETE);
    Ok((answer, routed.changed))
}

/// A call the upstream failed to answer (SPEC §9.7): a tool error naming
/// the upstream and the failure, so that the model sees it; the run
/// records a `failure` result with the error and routes it, and a move
/// brings the new skill's body.
///
/// # Errors
///
/// As [`route`].
pub(crate) fn fail(
    run: &mut Run,
    call: u64,
    name: &str,
    failure: &str,
) -> Result<(CallToolResult, bool), ErrorData> {
    let routed = run.failed(call, name, failure).map_err(not_open)?;
    let mut content = vec![ContentBlock::text(failure.to_owned())];
    content.extend(routed.body.map(ContentBlock::text));
    Ok((CallToolResult::error(content), routed.changed))
}

/// The answer when the run refuses a forwarded call's outcome because the
/// call is not open (the server numbers and answers each call once, so
/// this is the server's own fault): an internal error naming the call,
/// with nothing recorded.
pub(crate) fn not_open(error: ObserveError) -> ErrorData {
    ErrorData::internal_error(format!("{} ({})", error, error.code()), None)
}

/// The tools a handshake run lists now, recording the offer the model is
/// shown when it changed: `read_skill`, `list_skills`, and the upstream
/// tools of `upstream` the run offers.
pub(crate) fn offered_tools<'t>(
    run: &mut Run,
    upstream: impl Iterator<Item = &'t Tool>,
) -> Result<Vec<Tool>, ErrorData> {
    let mut tools = Vec::new();
    for descriptor in run.tools() {
        tools.push(to_mcp_tool(&descriptor)?);
    }
    tools.extend(upstream.filter(|tool| run.offers(&tool.name)).cloned());
    Ok(tools)
}

/// The tools listed on the sessionless generation: one list for every
/// request, in a deterministic order (SPEC §9.2), from `upstream`'s tools.
/// With `handles` (over HTTP) each tool's input schema gains the optional
/// `skillgraph_run` property; an upstream tool that has one already is
/// refused.
pub(crate) fn stable_list<'t>(
    graph: &Arc<Graph>,
    config: &SessionConfig,
    upstream: impl Iterator<Item = &'t Tool>,
    handles: bool,
) -> Result<Vec<Tool>, ServeError> {
    let config = config.clone().for_stable_list();
    // The list is the same for every run: any run, unrecorded, gives it.
    let run = Run::new(Arc::clone(graph), config);
    let mut tools = Vec::new();
    for descriptor in run.stable_tools() {
        let tool = to_mcp_tool(&descriptor).map_err(|err| {
            let unlistable = Misfit::Unlistable {
                tool: descriptor.name.clone(),
                reason: err.message.to_string(),
            };
            ServeError::Mismatch(Misfits {
                misfits: vec![unlistable],
                offered: None,
            })
        })?;
        tools.push(tool);
    }
    tools.extend(
        upstream
            .filter(|tool| run.lists_stably(&tool.name))
            .cloned(),
    );
    if handles {
        with_run_argument(&mut tools)?;
    }
    Ok(tools)
}

/// Give each tool's input schema the optional `skillgraph_run` property;
/// refuse a tool that has one of its own.
fn with_run_argument(tools: &mut [Tool]) -> Result<(), ServeError> {
    let mut taken = Vec::new();
    for tool in tools {
        let mut schema = (*tool.input_schema).clone();
        let properties = schema
            .entry("properties")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(properties) = properties {
            if properties.contains_key(RUN_ARGUMENT) {
                taken.push(Misfit::RunArgumentTaken {
                    tool: tool.name.to_string(),
                });
                continue;
            }
            properties.insert(
                RUN_ARGUMENT.to_owned(),
                serde_json::json!({
                    "type": "string",
                    "description": "the run handle an earlier answer gave; leave it out to start a new run",
                    // Mirrored into Mcp-Param-Skillgraph-Run by conforming
                    // clients, for balancers that route on it (SPEC §14.6).
                    "x-mcp-header": "Skillgraph-Run"
                }),
            );
        }
        tool.input_schema = Arc::new(schema);
    }
    if taken.is_empty() {
        Ok(())
    } else {
        Err(ServeError::Mismatch(Misfits {
            misfits: taken,
            offered: None,
        }))
    }
}

/// A session's tool descriptor in MCP's shape.
fn to_mcp_tool(descriptor: &ToolDescriptor) -> Result<Tool, ErrorData> {
    let json = descriptor
        .to_host(HostFormat::Mcp)
        .map_err(|err| ErrorData::internal_error(err.to_string(), None))?;
    serde_json::from_value(json).map_err(|err| ErrorData::internal_error(err.to_string(), None))
}

/// The answer to a request naming a run this server does not hold (SPEC
/// §9.4): unknown, expired or someone else's, said the same way.
pub(crate) fn no_such_run() -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(NO_SUCH_RUN)])
}

/// What a handle that names no run of the caller's is answered with.
pub(crate) const NO_SUCH_RUN: &str = "this server holds no run with that skillgraph_run (it may have expired); leave skillgraph_run out to start a new run";

/// A tool error saying `text`: a call this server answers without a step.
pub(crate) fn refusal(text: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The answer to a `skillgraph_run` argument that is not a string.
pub(crate) fn not_a_handle(given: &Value) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "{RUN_ARGUMENT} is the string an earlier answer gave, not {}; leave it out to start a new run",
        shown(&given.to_string())
    ))])
}

/// The last block of a run's first answer over HTTP, and its `_meta`
/// (SPEC §9.4).
pub(crate) fn give_handle(answer: &mut CallToolResult, handle: &str) {
    answer.content.push(ContentBlock::text(format!(
        "This run's handle is {handle}: pass it as {RUN_ARGUMENT} in every later call to go on in this run."
    )));
    answer
        .meta
        .get_or_insert_with(Default::default)
        .0
        .insert(RUN_META.to_owned(), Value::String(handle.to_owned()));
}

/// A run handle spelled from 128 random bits: `run_` and 32 hexadecimal
/// digits (SPEC §9.4). The shell draws the bits.
pub(crate) fn spell_handle(bits: [u8; 16]) -> String {
    let mut handle = String::with_capacity(36);
    handle.push_str("run_");
    for byte in bits {
        let _ = write!(handle, "{byte:02x}");
    }
    handle
}

/// A `tools/call` of a tool this server neither answers nor forwards.
pub(crate) fn unknown_tool(name: &str, upstream: &[&str]) -> ErrorData {
    let mut known = vec!["read_skill", "list_skills"];
    known.extend_from_slice(upstream);
    ErrorData::invalid_params(
        format!(
            "unknown tool {}; the tools here are: {}",
            shown(name),
            known.join(", ")
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_run_and_32_hexadecimal_digits() {
        let handle = spell_handle([0xab; 16]);
        assert_eq!(handle.len(), 36);
        assert_eq!(&handle[..6], "run_ab");
    }

    #[test]
    fn an_unknown_tool_is_never_echoed_at_length() {
        let error = unknown_tool(&"t".repeat(5_000), &["lookup_order"]);
        assert!(error.message.len() < 300, "{}", error.message);
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    }
}
