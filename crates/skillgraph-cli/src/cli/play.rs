//! `skillgraph play DIR`: one session driven by JSON lines on standard
//! input, one step a line, one JSON answer a line on standard output; the
//! record written to `--record FILE` one event a line, flushed per event. A
//! bad line gets an error answer naming the line and what was expected, and
//! the session goes on.

use std::io::BufRead;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use clap::ValueEnum;
use serde::Deserialize;
use serde_json::{Value, json};
use skillgraph::skill_core::{Menu, ResultStatus, ToolResult, did_you_mean, roles_taken};
use skillgraph::skill_session::{
    CallAnswer, CallPolicy, Event, Posture, Proposed, Session, SessionConfig, SkipAnswer,
};
use skillgraph::skill_tools::{HostFormat, SKIP_STEP, SkipStepCall};
use skillgraph::{RecordWriter, prepare};

use super::{Failure, output, prepare_failure};

/// The session's posture, as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum PostureArg {
    /// A read of any hop is accepted.
    Assist,
    /// A read of a hop is accepted only from the turn's outstanding menu.
    Guard,
    /// No read moves the cursor; only routes do.
    Rails,
}

impl From<PostureArg> for Posture {
    fn from(arg: PostureArg) -> Self {
        match arg {
            PostureArg::Assist => Posture::Assist,
            PostureArg::Guard => Posture::Guard,
            PostureArg::Rails => Posture::Rails,
        }
    }
}

/// The step names a line may hold, for "did you mean".
const STEPS: [&str; 8] = [
    "turn",
    "read",
    "call",
    "result",
    "end",
    "tools",
    "visible_tools",
    "prompt",
];

const EXPECTED: &str = "each line is one step: {\"turn\": \"MESSAGE\"} or {\"turn\": {\"message\": \"…\", \"menu\": {\"candidates\": [{\"id\": \"…\"}]}}}, {\"read\": \"ID\"}, {\"call\": \"TOOL\"} or {\"call\": {\"tool_name\": \"skip_step\", \"arguments\": {\"reason\": \"…\"}}}, {\"result\": {\"tool_name\": \"…\", \"result\": \"…\", \"status\": \"success\"}}, {\"end\": true}, {\"tools\": \"anthropic\"|\"openai\"|\"mcp\"}, {\"visible_tools\": true} or {\"prompt\": true}";

/// One step of the script.
enum Step {
    Turn(String, Option<Menu>),
    Read(String),
    Call(String, Value),
    Result(ToolResult, Option<Value>),
    End,
    Tools(HostFormat),
    VisibleTools,
    Prompt,
}

/// `{"turn": {…}}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnStep {
    message: String,
    #[serde(default)]
    menu: Option<Menu>,
}

/// `{"result": {…}}`: `result` is the text the tool returned; any other
/// JSON value is taken as its JSON text.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultStep {
    #[serde(alias = "toolName")]
    tool_name: String,
    result: Value,
    #[serde(default)]
    status: Option<String>,
    /// A move the result proposes, `{ "to": ID, "reason": TEXT }` (SPEC
    /// §15.6).
    #[serde(default)]
    propose: Option<Value>,
}

/// An error answer: a stable code and what was wrong, with the fix.
struct Refused {
    code: &'static str,
    message: String,
}

fn refused(code: &'static str, message: impl Into<String>) -> Refused {
    Refused {
        code,
        message: message.into(),
    }
}

/// How `play` sets its session up.
pub(super) struct Setup {
    /// How reads of hops are judged.
    pub(super) posture: PostureArg,
    /// Which host tool calls are admitted.
    pub(super) tools: CallPolicy,
    /// The most characters read_skill's description holds.
    pub(super) catalog_budget: usize,
    /// `--anonymous-role`: the role the session takes on a map with roles
    /// (`None`: `*`).
    pub(super) role: Option<String>,
    /// `--max-iterations`: a turn's budget over the map's (`Some(0)`:
    /// none).
    pub(super) max_iterations: Option<u64>,
}

/// Run a session on the map at `path`, reading steps from standard input.
pub(super) fn play(
    path: &Path,
    setup: Setup,
    record: Option<&Path>,
    otlp: Option<&str>,
) -> Result<ExitCode, Failure> {
    let Setup {
        posture,
        tools,
        catalog_budget,
        role,
        max_iterations,
    } = setup;
    let exporter = skillgraph_otlp::Exporter::new(otlp)
        .map_err(|err| Failure::unusable(err.code(), err.to_string()))?;
    let mut trace = exporter.as_ref().map(skillgraph_otlp::Exporter::play);
    // The one preparation `serve` makes too: load, check-up, compile.
    let prepared = prepare(path).map_err(|err| prepare_failure(err, path))?;
    let errors = prepared.checkup_errors();
    if errors > 0 {
        output::warn(&format!(
            "warning: the map has {errors} error(s) in its check-up; the session runs as the map is (see `skillgraph check {}`)",
            path.display()
        ));
    }
    let graph = prepared.into_graph().with_catalog_budget(catalog_budget);
    // On a map with roles the session takes one (SPEC §14.8).
    let roles = roles_taken(&graph.map().roles, &Vec::from_iter(role)).map_err(|refused| {
        Failure::unusable(
            refused.code(),
            format!("{refused} (play takes --anonymous-role ROLE, else \"*\")"),
        )
    })?;
    let mut writer = record.map(RecordWriter::create).transpose()?;
    let mut session = Session::with_config(
        Arc::new(graph),
        SessionConfig {
            posture: posture.into(),
            hidden: Vec::new(),
            tools,
            roles,
            max_iterations,
            after_refusals: None,
        },
    );
    let mut taken = |session: &mut Session| -> Result<(), Failure> {
        let events = session.take_events();
        if let Some(trace) = trace.as_mut() {
            trace.events(&events);
        }
        if let Some(writer) = writer.as_mut() {
            writer.write(events)?;
        }
        Ok(())
    };
    taken(&mut session)?;
    for (at, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.map_err(|err| {
            Failure::unusable(
                "unreadable",
                format!("standard input, line {}: {err}", at + 1),
            )
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let answer = answer(at + 1, &line, &mut session);
        // The step's events reach the record before its answer is sent.
        taken(&mut session)?;
        // A reader that went away drops the answers; the session, and its
        // record, go on to the end of the input.
        output::print_line(&answer.to_string())?;
    }
    if let Some(trace) = trace {
        trace.finish();
    }
    if let Some(exporter) = exporter {
        exporter.shut_down();
    }
    Ok(ExitCode::SUCCESS)
}

/// The answer to line `number`: the step's fields and the line number, or
/// an error naming the line.
fn answer(number: usize, line: &str, session: &mut Session) -> Value {
    match parse_step(line, session).and_then(|step| run_step(step, session)) {
        Ok(Value::Object(mut fields)) => {
            fields.insert("line".into(), json!(number));
            Value::Object(fields)
        }
        Ok(other) => other,
        Err(Refused { code, message }) => json!({
            "line": number,
            "error": { "code": code, "message": format!("line {number}: {message}") }
        }),
    }
}

/// The step a line holds, or what was wrong with it.
fn parse_step(line: &str, session: &Session) -> Result<Step, Refused> {
    let value: Value = serde_json::from_str(line).map_err(|err| {
        refused(
            "bad-json",
            format!("not JSON (column {}: {err}); {EXPECTED}", err.column()),
        )
    })?;
    let Value::Object(fields) = value else {
        return Err(refused(
            "bad-step",
            format!("not a JSON object; {EXPECTED}"),
        ));
    };
    let mut fields = fields.into_iter();
    let (Some((name, value)), None) = (fields.next(), fields.next()) else {
        return Err(refused(
            "bad-step",
            format!("a step is an object with exactly one key; {EXPECTED}"),
        ));
    };
    let shape = |expected: &str| {
        refused(
            "bad-step",
            format!("\"{name}\" takes {expected}, and this line gives {value}"),
        )
    };
    match name.as_str() {
        "turn" => match &value {
            Value::String(message) => Ok(Step::Turn(message.clone(), None)),
            Value::Object(_) => turn_step(value.clone(), session),
            _ => Err(shape(
                "the user's message, or {\"message\": \"…\", \"menu\": {…}}",
            )),
        },
        "read" => match &value {
            Value::String(id) => Ok(Step::Read(id.clone())),
            _ => Err(shape("a skill id, as a string")),
        },
        "call" => match &value {
            Value::String(tool) => Ok(Step::Call(tool.clone(), json!({}))),
            Value::Object(call) => match (call.get("tool_name"), call.get("arguments")) {
                (Some(Value::String(tool)), arguments)
                    if call
                        .keys()
                        .all(|key| key == "tool_name" || key == "arguments") =>
                {
                    Ok(Step::Call(
                        tool.clone(),
                        arguments.cloned().unwrap_or(json!({})),
                    ))
                }
                _ => Err(shape(
                    "a tool's name, as a string, or {\"tool_name\": \"…\", \"arguments\": {…}}",
                )),
            },
            _ => Err(shape(
                "a tool's name, as a string, or {\"tool_name\": \"…\", \"arguments\": {…}}",
            )),
        },
        "result" => result_step(value.clone()),
        "tools" => match value.as_str() {
            Some("anthropic") => Ok(Step::Tools(HostFormat::Anthropic)),
            Some("openai") => Ok(Step::Tools(HostFormat::OpenAi)),
            Some("mcp") => Ok(Step::Tools(HostFormat::Mcp)),
            _ => Err(shape("a host format: \"anthropic\", \"openai\" or \"mcp\"")),
        },
        "end" | "visible_tools" | "prompt" if value != Value::Bool(true) => Err(shape("true")),
        "end" => Ok(Step::End),
        "visible_tools" => Ok(Step::VisibleTools),
        "prompt" => Ok(Step::Prompt),
        other => {
            let hint = did_you_mean(other, STEPS);
            Err(refused(
                "unknown-step",
                format!("\"{other}\" is not a step{hint}; {EXPECTED}"),
            ))
        }
    }
}

fn turn_step(value: Value, session: &Session) -> Result<Step, Refused> {
    let turn: TurnStep = serde_json::from_value(value).map_err(|err| {
        refused(
            "bad-step",
            format!("\"turn\": {err}; it takes {{\"message\": \"…\", \"menu\": {{\"candidates\": [{{\"id\": \"…\", \"relevance\": 0.8}}], \"stay\": false}}}}"),
        )
    })?;
    let map = session.graph().map();
    for candidate in turn.menu.iter().flat_map(|menu| &menu.candidates) {
        if map.skill(&candidate.id).is_none() {
            let hint = did_you_mean(&candidate.id, map.skills.iter().map(|s| s.id.as_str()));
            return Err(refused(
                "menu-unknown-skill",
                format!(
                    "the menu names \"{}\", which is not a skill of the map{hint}",
                    candidate.id
                ),
            ));
        }
    }
    Ok(Step::Turn(turn.message, turn.menu))
}

fn result_step(value: Value) -> Result<Step, Refused> {
    let step: ResultStep = serde_json::from_value(value).map_err(|err| {
        refused(
            "bad-step",
            format!("\"result\": {err}; it takes {{\"tool_name\": \"…\", \"result\": \"…\", \"status\": \"success\"}} (status optional)"),
        )
    })?;
    if let Some(status) = step
        .status
        .as_deref()
        .filter(|s| !ResultStatus::is_status(s))
    {
        let hint = did_you_mean(status, ResultStatus::ALL.map(ResultStatus::as_str));
        return Err(refused(
            "unknown-status",
            format!(
                "\"status\": \"{status}\" is not a result status{hint}; it is one of {}",
                ResultStatus::listed()
            ),
        ));
    }
    let result = match step.result {
        Value::String(text) => text,
        other => other.to_string(),
    };
    Ok(Step::Result(
        ToolResult {
            tool_name: step.tool_name,
            result,
            status: step.status,
        },
        step.propose,
    ))
}

/// Run one step; the answer's fields (the line number is added after),
/// with where the procedure of the cursor's skill stands, on the steps that
/// may move it (SPEC §15.9).
fn run_step(step: Step, session: &mut Session) -> Result<Value, Refused> {
    let shows_procedure = matches!(
        step,
        Step::Turn(..) | Step::Call(..) | Step::Result(..) | Step::End
    );
    let before = session.events().len();
    let mut answer = answer_step(step, session)?;
    // The answer whose refusal reached the escalation's count (SPEC §15.5).
    let escalated = session
        .events()
        .get(before..)
        .unwrap_or_default()
        .iter()
        .any(|event| matches!(event, Event::Escalated(_)));
    if let (true, Value::Object(fields)) = (escalated, &mut answer) {
        fields.insert("escalated".into(), json!(true));
    }
    if let (true, Value::Object(fields)) = (shows_procedure, &mut answer) {
        if let Some(procedure) = session.procedure() {
            fields.insert("procedure".into(), json!(procedure));
        }
        // With a budget (SPEC §15.3), and said in words near its end.
        if let Some(remaining) = session.iterations_remaining() {
            fields.insert("iterations_remaining".into(), json!(remaining));
        }
        if let Some(said) = session.budget_said() {
            fields.insert("budget".into(), json!(said));
        }
    }
    Ok(answer)
}

/// A `skip_step` call with `arguments`, which the session answers.
fn skip_step(arguments: &Value, session: &mut Session) -> Result<Value, Refused> {
    let reason = SkipStepCall
        .call(arguments)
        .map_err(|err| refused("bad-step", err.to_string()))?;
    Ok(match session.skip_step(Some(&reason)) {
        SkipAnswer::Skipped { text, step } => json!({
            "step": "call", "tool_name": SKIP_STEP, "admitted": true, "skipped": step, "text": text
        }),
        SkipAnswer::Refused { text, call, .. } => json!({
            "step": "call", "tool_name": SKIP_STEP, "admitted": false,
            "refusal": call.refusal, "text": text
        }),
    })
}

fn answer_step(step: Step, session: &mut Session) -> Result<Value, Refused> {
    Ok(match step {
        Step::Turn(message, menu) => {
            let routed = session.begin_turn(message, menu);
            json!({
                "step": "turn", "iteration": session.iteration(), "cursor": session.cursor(),
                "routed": routed,
            })
        }
        Step::Read(id) => {
            let answer = session
                .read_skill(&id)
                .map_err(|err| refused(err.code(), err.to_string()))?;
            let mut fields = json!({ "step": "read", "text": answer.text });
            if let (Value::Object(fields), Ok(Value::Object(read))) =
                (&mut fields, serde_json::to_value(&answer.read))
            {
                fields.extend(read);
            }
            fields
        }
        Step::Call(tool, arguments) if tool == SKIP_STEP => skip_step(&arguments, session)?,
        Step::Call(tool, _) => match session.call_tool(&tool) {
            CallAnswer::Admitted { call } => {
                json!({ "step": "call", "tool_name": tool, "admitted": true, "call": call })
            }
            CallAnswer::Refused { text, call, .. } => json!({
                "step": "call",
                "tool_name": tool,
                "admitted": false,
                "call": call.call,
                "refusal": call.refusal,
                "allowed": call.allowed,
                "held": call.held,
                "text": text
            }),
        },
        Step::Result(result, propose) => {
            let tool = result.tool_name.clone();
            let before = session.events().len();
            match propose {
                // play trusts its own script to propose moves.
                Some(value) => session
                    .observe_proposed(
                        None,
                        result,
                        Proposed {
                            value,
                            trusted: true,
                        },
                    )
                    .map_err(|err| refused(err.code(), err.to_string()))?,
                None => session.observe(result),
            }
            let mut fields =
                json!({ "step": "result", "tool_name": tool, "iteration": session.iteration() });
            let advanced = session
                .events()
                .get(before..)
                .unwrap_or_default()
                .iter()
                .find_map(|event| match event {
                    Event::Step(step) => Some(session.step_said(step)),
                    _ => None,
                });
            let proposed = session
                .events()
                .get(before..)
                .unwrap_or_default()
                .iter()
                .find_map(|event| match event {
                    Event::Result(result) => result.propose.clone(),
                    _ => None,
                });
            if let Value::Object(fields) = &mut fields {
                if let Some(text) = advanced {
                    fields.insert("text".into(), json!(text));
                }
                if let Some(proposed) = proposed {
                    fields.insert("propose".into(), json!(proposed));
                }
            }
            fields
        }
        Step::End => {
            let moved = session.end_iteration();
            json!({ "step": "end", "move": moved, "cursor": session.cursor() })
        }
        Step::Tools(host) => {
            let tools = session
                .tools()
                .iter()
                .map(|tool| tool.to_host(host))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|err| refused(err.code(), err.to_string()))?;
            json!({ "step": "tools", "tools": tools })
        }
        Step::VisibleTools => {
            json!({ "step": "visible_tools", "visible_tools": session.visible_tools() })
        }
        Step::Prompt => json!({ "step": "prompt", "prompt": session.system_prompt() }),
    })
}
