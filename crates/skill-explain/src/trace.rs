//! The record as trace data (SPEC §11), with no exporter and no network: a
//! run is a span, each turn a span under it, each iteration a span under
//! its turn, and an iteration's span carries the run's facts as attributes
//! (where the cursor was and went, how, by which route) and one event per
//! evaluated guard (every condition with its actual value and whether it
//! passed) and per refused read or call. Only what the record holds, so
//! nothing hidden from the session (SPEC §6.3) is on a span either.
//!
//! The attribute names are the constants of this module: the GenAI and
//! MCP semantic conventions name none of these facts, so they are ours,
//! under `skillgraph.*`. A driver that has spans of its own (the MCP
//! server's span per request) puts the same facts on them with [`facts`].

use skill_session::{
    CallEvent, CallRefusal, DeclaredMap, Event, GuardRecord, MoveEvent, ReadEvent, Record,
    StepAction, StepEvent, TurnEvent,
};

/// The run's handle, or the session's name a host gives it.
pub const RUN: &str = "skillgraph.run";
/// The session's posture (`assist`, `guard`, `rails`).
pub const POSTURE: &str = "skillgraph.posture";
/// The session's call policy (`scoped`, `strict`, `all`).
pub const CALL_POLICY: &str = "skillgraph.call_policy";
/// The iteration, from 1.
pub const ITERATION: &str = "skillgraph.iteration";
/// The run's number for the call the events judged (SPEC §8.4), which the
/// record's `call` and `result` events carry.
pub const CALL: &str = "skillgraph.call";
/// The skill the cursor was on when the iteration began.
pub const CURSOR_BEFORE: &str = "skillgraph.cursor.before";
/// The skill the cursor is on when the iteration ended.
pub const CURSOR_AFTER: &str = "skillgraph.cursor.after";
/// What moved the cursor: `route`, `model` or `stay` (SPEC §8.1).
pub const MOVE_BY: &str = "skillgraph.move.by";
/// Whether the declared map has the move.
pub const MOVE_DECLARED: &str = "skillgraph.move.declared";
/// The winning route's index among the map's routes.
pub const ROUTE_INDEX: &str = "skillgraph.route.index";
/// The winning route's label.
pub const ROUTE_LABEL: &str = "skillgraph.route.label";
/// The turn's number, from 1, on a turn's span.
pub const TURN: &str = "skillgraph.turn";
/// The length of the user's message in bytes, on a turn's span (the words
/// themselves stay in the record).
pub const TURN_MESSAGE_BYTES: &str = "skillgraph.turn.message_bytes";

/// On a turn's span whose start a rule decided: the rule's index in
/// `start.rules`, from 0 (the matched text, the user's words, stays in the
/// record).
pub const TURN_RULE: &str = "skillgraph.turn.rule";
/// On a turn's span whose start a rule decided: the rule's label.
pub const TURN_RULE_LABEL: &str = "skillgraph.turn.rule.label";
/// On a turn's span whose start a rule decided: the skill it started on.
pub const TURN_START: &str = "skillgraph.turn.start";

/// The attributes of the span of turn `number` (from 1): its number, the
/// length of its message, and the start rule that decided it, if any.
pub fn turn_attributes(number: i64, turn: &TurnEvent) -> Vec<Attribute> {
    let mut attributes = vec![
        (TURN, Value::Int(number)),
        (TURN_MESSAGE_BYTES, Value::Int(int(turn.user_message.len()))),
    ];
    if let Some(routed) = &turn.routed {
        attributes.push((TURN_RULE, Value::Int(int(routed.rule))));
        if let Some(label) = &routed.label {
            attributes.push((TURN_RULE_LABEL, Value::String(label.clone())));
        }
        attributes.push((TURN_START, Value::String(routed.use_skill.clone())));
    }
    attributes
}

/// The event of an evaluated guard.
pub const GUARD_EVENT: &str = "skillgraph.guard";
/// On a guard event: the route's source.
pub const GUARD_FROM: &str = "skillgraph.guard.from";
/// On a guard event: the route's target.
pub const GUARD_TO: &str = "skillgraph.guard.to";
/// On a guard event: the tool whose result was judged.
pub const GUARD_TOOL: &str = "skillgraph.guard.tool";
/// On a guard event: whether the guard passed.
pub const GUARD_VERDICT: &str = "skillgraph.guard.verdict";
/// On a guard event: whether this guard's route moved the cursor.
pub const GUARD_FIRED: &str = "skillgraph.guard.fired";
/// On a guard event: each condition's key, in order.
pub const CONDITION_KEYS: &str = "skillgraph.guard.condition.keys";
/// On a guard event: each condition's operator (`eq`, `gte`, …).
pub const CONDITION_OPERATORS: &str = "skillgraph.guard.condition.operators";
/// On a guard event: each condition's value, as JSON.
pub const CONDITION_VALUES: &str = "skillgraph.guard.condition.values";
/// On a guard event: the value each condition read.
pub const CONDITION_ACTUALS: &str = "skillgraph.guard.condition.actuals";
/// On a guard event: whether each condition passed.
pub const CONDITION_PASSED: &str = "skillgraph.guard.condition.passed";

/// The event of a read the gate refused.
pub const READ_REFUSED_EVENT: &str = "skillgraph.read.refused";
/// The event of a call the call gate refused.
pub const CALL_REFUSED_EVENT: &str = "skillgraph.call.refused";
/// On a refusal: the skill read or the tool called.
pub const REFUSED_TARGET: &str = "skillgraph.refused.target";
/// On a refusal: its reason's code.
pub const REFUSED_REASON: &str = "skillgraph.refused.reason";
/// On a refusal: what the answer named.
pub const REFUSED_NAMED: &str = "skillgraph.refused.named";

/// The event of a step of a procedure done, skipped or left (SPEC §15.9).
pub const STEP_EVENT: &str = "skillgraph.step";
/// On a step event, or a call a step held out: the stepped skill.
pub const STEP_SKILL: &str = "skillgraph.step.skill";
/// On a step event, or a held call: the step's number, from 1.
pub const STEP_NUMBER: &str = "skillgraph.step.number";
/// On a step event, or a held call: how many steps the procedure has.
pub const STEP_OF: &str = "skillgraph.step.of";
/// On a step event, or a held call: the step's tool.
pub const STEP_TOOL: &str = "skillgraph.step.tool";
/// On a step event: `advanced`, `skipped` or `unfinished`.
pub const STEP_ACTION: &str = "skillgraph.step.action";
/// On a step event: the step now current (absent once complete).
pub const STEP_NEXT: &str = "skillgraph.step.next";
/// On a skipped step: the model's reason.
pub const STEP_REASON: &str = "skillgraph.step.reason";
/// The event of a turn's budget spent (SPEC §15.3).
pub const BUDGET_EVENT: &str = "skillgraph.budget";
/// On a budget event: the most iterations a turn takes.
pub const BUDGET_MAX_ITERATIONS: &str = "skillgraph.budget.max_iterations";
/// The event of a turn's refusals reaching the escalation's count (SPEC
/// §15.5).
pub const ESCALATED_EVENT: &str = "skillgraph.escalated";
/// On an escalation: the count reached.
pub const ESCALATED_AFTER: &str = "skillgraph.escalated.after_refusals";
/// On an escalation: the refusals' codes, in order.
pub const ESCALATED_REFUSALS: &str = "skillgraph.escalated.refusals";
/// On a move by a tool's proposal: the tool (SPEC §15.6).
pub const PROPOSAL_TOOL: &str = "skillgraph.proposal.tool";
/// On a move by a tool's proposal: its reason.
pub const PROPOSAL_REASON: &str = "skillgraph.proposal.reason";
/// The event of a proposal the session refused.
pub const PROPOSAL_REFUSED_EVENT: &str = "skillgraph.proposal.refused";

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Text.
    String(String),
    /// A whole number.
    Int(i64),
    /// A truth value.
    Bool(bool),
    /// A list of texts.
    Strings(Vec<String>),
    /// A list of truth values.
    Bools(Vec<bool>),
}

/// An attribute: its name (one of this module's constants) and value.
pub type Attribute = (&'static str, Value);

/// An event on a span.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// [`GUARD_EVENT`], [`READ_REFUSED_EVENT`] or [`CALL_REFUSED_EVENT`].
    pub name: &'static str,
    /// Its attributes.
    pub attributes: Vec<Attribute>,
}

/// One span of a run's trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// `skillgraph run`, `skillgraph turn` or `skillgraph iteration`.
    pub name: &'static str,
    /// The index of its parent among the spans; `None` for the run's.
    pub parent: Option<usize>,
    /// Its attributes.
    pub attributes: Vec<Attribute>,
    /// Its events, in the record's order.
    pub events: Vec<SpanEvent>,
}

/// The facts some events of a run give a span: attributes and events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts {
    /// The iteration's facts: [`ITERATION`], the cursor before and after,
    /// how it moved, the route.
    pub attributes: Vec<Attribute>,
    /// One per evaluated guard and per refused read or call.
    pub events: Vec<SpanEvent>,
}

/// The facts of `events`, events of one run whose declared map is `map`:
/// the last move's attributes, and an event per guard and refusal, in
/// order.
///
/// ```
/// use skill_explain::trace::{self, Value};
/// use skill_session::{Event, MoveBy, MoveEvent, DeclaredMap};
///
/// let moved: MoveEvent = serde_json::from_str(
///     r#"{"iteration": 2, "from": "triage", "to": "refunds", "by": "route", "route": 0, "reachable": [], "declined_offer": false}"#,
/// )?;
/// let map: DeclaredMap = serde_json::from_str(
///     r#"{"skills": [], "entries": ["triage"], "routes": [{"from": "triage", "to": "refunds", "label": "risky refund"}]}"#,
/// )?;
/// let facts = trace::facts(&[Event::Move(moved)], &map);
/// assert!(facts.attributes.contains(&(trace::ROUTE_LABEL, Value::String("risky refund".into()))));
/// assert!(facts.attributes.contains(&(trace::MOVE_BY, Value::String("route".into()))));
/// assert!(facts.attributes.contains(&(trace::ITERATION, Value::Int(2))));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn facts<'a>(events: impl IntoIterator<Item = &'a Event>, map: &DeclaredMap) -> Facts {
    let mut facts = Facts::default();
    let mut number = None;
    for event in events {
        match event {
            Event::Read(read) => facts.events.extend(refused_read(read)),
            Event::Call(call) => {
                number = call.call.or(number);
                facts.events.extend(refused_call(call));
            }
            Event::Step(step) => facts.events.push(step_event(step)),
            Event::Budget(budget) => facts.events.push(SpanEvent {
                name: BUDGET_EVENT,
                attributes: vec![(
                    BUDGET_MAX_ITERATIONS,
                    Value::Int(int(budget.max_iterations)),
                )],
            }),
            Event::Escalated(escalated) => facts.events.push(SpanEvent {
                name: ESCALATED_EVENT,
                attributes: vec![
                    (ESCALATED_AFTER, Value::Int(int(escalated.after_refusals))),
                    (
                        ESCALATED_REFUSALS,
                        Value::Strings(
                            escalated
                                .refusals
                                .iter()
                                .map(|r| r.refusal.clone())
                                .collect(),
                        ),
                    ),
                ],
            }),
            Event::Result(result) => {
                if let Some(propose) = result.propose.as_ref().filter(|p| !p.accepted) {
                    facts.events.push(SpanEvent {
                        name: PROPOSAL_REFUSED_EVENT,
                        attributes: vec![
                            (REFUSED_TARGET, Value::String(propose.to.clone())),
                            (
                                REFUSED_REASON,
                                Value::String(
                                    propose
                                        .refusal
                                        .map(|r| r.code())
                                        .unwrap_or_default()
                                        .to_owned(),
                                ),
                            ),
                            (GUARD_TOOL, Value::String(result.tool_name.clone())),
                        ],
                    });
                }
            }
            Event::Move(moved) => {
                facts.attributes = moved_attributes(moved, map);
                if let Some(guard) = &moved.guard {
                    facts.events.push(guard_event(guard, true));
                }
                facts
                    .events
                    .extend(moved.guards_closed.iter().map(|g| guard_event(g, false)));
            }
            _ => {}
        }
    }
    if let Some(number) = number.and_then(|number| i64::try_from(number).ok()) {
        facts.attributes.push((CALL, Value::Int(number)));
    }
    facts
}

/// The spans of `record` (the shape `skillgraph play` exports): a run's
/// span first, a span per turn under it, a span per iteration under its
/// turn (under the run before any turn).
///
/// ```
/// use std::sync::Arc;
/// use skill_core::{SkillMap, ToolResult};
/// use skill_session::{Graph, Posture, Session, read_record};
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage" }, { "id": "refunds" }], "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "amount": { "gte": 100 } } }]
/// }"#)?;
/// let mut session = Session::new(Arc::new(Graph::new(map)?), Posture::Assist, Vec::new());
/// session.begin_turn("refund order 4412", None);
/// session.observe(ToolResult { tool_name: "lookup_order".into(), result: r#"{"amount":240}"#.into(), status: None });
/// session.end_iteration();
/// let text: String = session.events().iter().map(|e| e.to_line() + "\n").collect();
///
/// let spans = skill_explain::trace::spans(&read_record(&text)?);
/// let names: Vec<&str> = spans.iter().map(|span| span.name).collect();
/// assert_eq!(names, ["skillgraph run", "skillgraph turn", "skillgraph iteration"]);
/// assert_eq!(spans[2].parent, Some(1));
/// assert_eq!(spans[2].events[0].name, skill_explain::trace::GUARD_EVENT);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn spans(record: &Record) -> Vec<Span> {
    let Some(Event::Start(start)) = record.events.first() else {
        return Vec::new();
    };
    let mut spans = vec![Span {
        name: "skillgraph run",
        parent: None,
        attributes: vec![
            (POSTURE, Value::String(start.posture.as_str().to_owned())),
            (CALL_POLICY, Value::String(start.tools.as_str().to_owned())),
        ],
        events: Vec::new(),
    }];
    let mut turn: Option<usize> = None;
    let mut turns = 0;
    // The iteration being gathered: its number, its span, its events.
    let mut open: Option<(u64, usize)> = None;
    let mut pending: Vec<&Event> = Vec::new();
    let close = |spans: &mut Vec<Span>, open: Option<(u64, usize)>, pending: &mut Vec<&Event>| {
        if let Some((_, at)) = open {
            let facts = facts(pending.drain(..), &start.map);
            if let Some(span) = spans.get_mut(at) {
                span.attributes.extend(facts.attributes);
                span.events.extend(facts.events);
            }
        }
    };
    for event in record.events.iter().skip(1) {
        if let Event::Start(_) = event {
            break;
        }
        if let Event::Turn(begun) = event {
            close(&mut spans, open.take(), &mut pending);
            turns += 1;
            spans.push(Span {
                name: "skillgraph turn",
                parent: Some(0),
                attributes: turn_attributes(turns, begun),
                events: Vec::new(),
            });
            turn = Some(spans.len() - 1);
            continue;
        }
        let at = event.iteration();
        if open.is_none_or(|(number, _)| number != at) {
            close(&mut spans, open.take(), &mut pending);
            spans.push(Span {
                name: "skillgraph iteration",
                parent: Some(turn.unwrap_or(0)),
                attributes: vec![(ITERATION, Value::Int(int(at)))],
                events: Vec::new(),
            });
            open = Some((at, spans.len() - 1));
        }
        pending.push(event);
    }
    close(&mut spans, open.take(), &mut pending);
    spans
}

fn int(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

fn moved_attributes(moved: &MoveEvent, map: &DeclaredMap) -> Vec<Attribute> {
    let mut attributes = vec![(ITERATION, Value::Int(int(moved.iteration)))];
    if let Some(from) = &moved.from {
        attributes.push((CURSOR_BEFORE, Value::String(from.clone())));
    }
    if let Some(to) = &moved.to {
        attributes.push((CURSOR_AFTER, Value::String(to.clone())));
    }
    attributes.push((MOVE_BY, Value::String(moved.by.as_str().to_owned())));
    attributes.push((
        MOVE_DECLARED,
        Value::Bool(crate::explain::move_declared(map, moved)),
    ));
    if let Some(index) = moved.route {
        attributes.push((ROUTE_INDEX, Value::Int(int(index))));
        if let Some(label) = map.routes.get(index).and_then(|route| route.label.clone()) {
            attributes.push((ROUTE_LABEL, Value::String(label)));
        }
    }
    if let Some(proposal) = &moved.proposal {
        attributes.push((PROPOSAL_TOOL, Value::String(proposal.tool_name.clone())));
        attributes.push((PROPOSAL_REASON, Value::String(proposal.reason.clone())));
    }
    attributes
}

/// A `step` event's facts.
fn step_event(event: &StepEvent) -> SpanEvent {
    let step = &event.step;
    let mut attributes = vec![
        (STEP_SKILL, Value::String(step.skill.clone())),
        (STEP_NUMBER, Value::Int(int(step.step))),
        (STEP_OF, Value::Int(int(step.of))),
        (STEP_TOOL, Value::String(step.tool.clone())),
    ];
    let (action, next) = match &event.action {
        StepAction::Advanced { next } => ("advanced", *next),
        StepAction::Skipped { reason, next, .. } => {
            attributes.push((STEP_REASON, Value::String(reason.clone())));
            ("skipped", *next)
        }
        StepAction::Unfinished { .. } => ("unfinished", None),
    };
    attributes.push((STEP_ACTION, Value::String(action.to_owned())));
    if let Some(next) = next {
        attributes.push((STEP_NEXT, Value::Int(int(next))));
    }
    SpanEvent {
        name: STEP_EVENT,
        attributes,
    }
}

fn guard_event(guard: &GuardRecord, fired: bool) -> SpanEvent {
    let conditions = &guard.conditions;
    let mut attributes = vec![
        (GUARD_FROM, Value::String(guard.from.clone())),
        (GUARD_TO, Value::String(guard.to.clone())),
        (GUARD_TOOL, Value::String(guard.tool_name.clone())),
        (GUARD_VERDICT, Value::Bool(guard.verdict)),
        (GUARD_FIRED, Value::Bool(fired)),
        (
            CONDITION_KEYS,
            Value::Strings(conditions.iter().map(|c| c.key.clone()).collect()),
        ),
        (
            CONDITION_OPERATORS,
            Value::Strings(
                conditions
                    .iter()
                    .map(|c| c.op.as_str().to_owned())
                    .collect(),
            ),
        ),
        (
            CONDITION_VALUES,
            Value::Strings(
                conditions
                    .iter()
                    .map(|c| serde_json::to_string(&c.value).unwrap_or_default())
                    .collect(),
            ),
        ),
        (
            CONDITION_ACTUALS,
            Value::Strings(
                conditions
                    .iter()
                    .map(|c| c.actual_summary.clone())
                    .collect(),
            ),
        ),
        (
            CONDITION_PASSED,
            Value::Bools(conditions.iter().map(|c| c.passed).collect()),
        ),
    ];
    if let Some(index) = guard.route {
        attributes.push((ROUTE_INDEX, Value::Int(int(index))));
    }
    SpanEvent {
        name: GUARD_EVENT,
        attributes,
    }
}

fn refused_read(read: &ReadEvent) -> Option<SpanEvent> {
    let refusal = read.refusal?;
    Some(SpanEvent {
        name: READ_REFUSED_EVENT,
        attributes: vec![
            (REFUSED_TARGET, Value::String(read.id.clone())),
            (REFUSED_REASON, Value::String(refusal.code().to_owned())),
            (
                REFUSED_NAMED,
                Value::Strings(read.allowed.clone().unwrap_or_default()),
            ),
        ],
    })
}

fn refused_call(call: &CallEvent) -> Option<SpanEvent> {
    if call.accepted {
        return None;
    }
    let refusal = call.refusal.unwrap_or(CallRefusal::NotOffered);
    let mut attributes = vec![
        (REFUSED_TARGET, Value::String(call.tool_name.clone())),
        (REFUSED_REASON, Value::String(refusal.code().to_owned())),
        (
            REFUSED_NAMED,
            Value::Strings(call.allowed.clone().unwrap_or_default()),
        ),
    ];
    // A call a step held out names the step (SPEC §15.9).
    if let Some(held) = &call.held {
        attributes.extend([
            (STEP_SKILL, Value::String(held.skill.clone())),
            (STEP_NUMBER, Value::Int(int(held.step))),
            (STEP_OF, Value::Int(int(held.of))),
            (STEP_TOOL, Value::String(held.tool.clone())),
        ]);
    }
    Some(SpanEvent {
        name: CALL_REFUSED_EVENT,
        attributes,
    })
}
