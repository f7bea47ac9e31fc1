//! The explanation of a record (SPEC §8.5): a walk over its events that
//! keeps the cursor, the batch of results and the activated skills, and
//! turns each `move` into a link of the causal chain.

use std::fmt::Write as _;

use serde::Serialize;
use skill_core::{Skill, SkillMap, TargetClass};
use skill_guard::{evidence_caption, preconditions_pass};
use skill_session::{
    CallEvent, CallPolicy, CallRefusal, ConditionRecord, ConflictBy, ConflictRecord, DeclaredMap,
    Event, GuardRecord, MoveBy, MoveEvent, OnSkip, OwnedOfferView, OwnedRow, Posture, ProposalMove,
    ReadEvent, Record, Refusal, ResultEvent, RoutedRecord, StartEvent, StepAction, StepEvent,
    StepRef, TurnEvent,
};

use crate::draw::{PathStep, mermaid_with_path};

/// A record that cannot be explained as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExplainError {
    /// The events do not open with `start`.
    #[error(
        "the record's first event is \"{found}\", and an explanation begins at the \"start\" event; pass the whole record"
    )]
    MissingStart {
        /// The first event's kind (`none` for no events).
        found: String,
    },
    /// A second `start`: two sessions' records were joined.
    #[error("event {index} starts another session; explain one session's record at a time")]
    SecondStart {
        /// The event's position, from 0.
        index: usize,
    },
    /// `--iteration N` names an iteration the record does not end.
    #[error(
        "iteration {asked} did not end in this record; it ends iterations 1 to {last}{}",
        if *.last == 0 { " (none: no move was recorded)" } else { "" }
    )]
    NoSuchIteration {
        /// The iteration asked for.
        asked: u64,
        /// The last iteration the record ends (0 when none).
        last: u64,
    },
}

impl ExplainError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ExplainError::MissingStart { .. } => "record-missing-start",
            ExplainError::SecondStart { .. } => "record-second-start",
            ExplainError::NoSuchIteration { .. } => "no-such-iteration",
        }
    }
}

/// What a record says about where the cursor ended and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// The session's posture.
    pub posture: Posture,
    /// The session's call policy.
    pub tools: CallPolicy,
    /// Where the cursor started.
    pub start: Option<String>,
    /// The iteration explained up to: the one asked for, else the record's
    /// last ended iteration (0 when none ended).
    pub iteration: u64,
    /// Where the cursor ended (or stood at the end of `iteration`).
    pub cursor: Option<String>,
    /// Every move up to that point, in order, each with its cause.
    pub chain: Vec<Link>,
    /// The reads the gate refused up to that point.
    pub refused_reads: Vec<RefusedRead>,
    /// The calls of host tools the call gate refused up to that point.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused_calls: Vec<RefusedCall>,
    /// Each step of a procedure done, skipped or left unfinished (SPEC
    /// §15.9), in record order.
    pub steps: Vec<StepEvent>,
    /// Where the procedure of the cursor's skill stood at the iteration
    /// explained, while the cursor stood on a skill with steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub procedure: Option<ProcedureAt>,
    /// The calls accepted up to that point with no result in the record:
    /// still running when the record ends, or left open by a writer that
    /// stopped mid-call (SPEC §8.4).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub open_calls: Vec<OpenCall>,
    /// The skills active at that point, with their tools.
    pub active: Vec<ActiveSkill>,
    /// When the record was cut off mid-line: the warning naming the line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The declared map, from the record's `start` event.
    #[serde(skip)]
    pub map: DeclaredMap,
}

/// One move of the chain: an iteration's end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    /// The iteration that ended.
    pub iteration: u64,
    /// The cursor before.
    pub from: Option<String>,
    /// The cursor after (`from` on a stay).
    pub to: Option<String>,
    /// What moved it: `route`, `model` or `stay`.
    pub by: MoveBy,
    /// With `by: route`: the route and the evidence that fired it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteCause>,
    /// With `by: model`: the pick and the offer it was made from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pick: Option<PickCause>,
    /// With `by: rule`: the start rule that decided the turn's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleCause>,
    /// The routes that closed during the iteration, each with the
    /// conditions that closed it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub closed: Vec<ClosedRoute>,
    /// The pending pick the route overrode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
    /// Later results that reached another target than the winner.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflict: Vec<ConflictRecord>,
    /// Whether the declared map has this move: a route from `from` to `to`,
    /// or `to` an entry (always true of a stay).
    pub declared: bool,
    /// With `by: tool`: the proposal that moved the cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Box<ProposalMove>>,
    /// The accepted proposal a route overrode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_proposal: Option<Box<ProposalMove>>,
}

/// The start rule behind a `rule` move (SPEC §13.3).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleCause {
    /// The turn it started, counting from 1.
    pub turn: u64,
    /// The rule's index in `start.rules`, from 0.
    pub rule: usize,
    /// The rule's label, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The matched text.
    pub witness: String,
}

/// The route that fired, and its evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RouteCause {
    /// The tool whose result fired it (none when the record cannot tell).
    pub tool_name: Option<String>,
    /// The status that result declared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `false` when that result came from a tool the active skills did not
    /// carry: the host dispatched a call the offer did not hold. Written
    /// only when `false`.
    #[serde(skip_serializing_if = "is_true")]
    pub offered: bool,
    /// The route's index among the map's routes (none in records written
    /// before moves named it, when no declared route joins the two skills).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The route's label in the map.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Each condition of its guard with the value it read (empty without a
    /// guard).
    pub conditions: Vec<ConditionRecord>,
}

/// The model's pick, and the offer it was made from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PickCause {
    /// The iteration of the offer the model was last shown (none when no
    /// offer was recorded before the pick).
    pub offer_iteration: Option<u64>,
    /// That offer's view (SPEC §6.2).
    pub offer: Option<OwnedOfferView>,
    /// Whether the pick left an outstanding menu (`assist` only).
    pub declined_offer: bool,
}

/// A route that closed during an iteration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosedRoute {
    /// The route's source.
    pub from: String,
    /// The route's target.
    pub to: String,
    /// The tool whose result its guard judged.
    pub tool_name: String,
    /// The conditions that failed, with the values they read.
    pub failed: Vec<ConditionRecord>,
}

/// A read the gate refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefusedRead {
    /// The iteration.
    pub iteration: u64,
    /// The id the model asked for.
    pub id: String,
    /// Its class from the cursor.
    pub class: TargetClass,
    /// The refusal's reason.
    pub refusal: Refusal,
    /// The ids the answer named.
    pub named: Vec<String>,
}

/// A call of a host tool the call gate refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefusedCall {
    /// The iteration.
    pub iteration: u64,
    /// The tool the model called.
    pub tool_name: String,
    /// The run's number for the call (absent in records written before
    /// calls were numbered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    /// The refusal's reason.
    pub refusal: CallRefusal,
    /// The skills the answer named.
    pub named: Vec<String>,
    /// With `step-held`: the step that held the tool out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<StepRef>,
}

/// The steps `id` declares in `map`, when it declares any.
fn steps_of<'m>(map: &'m DeclaredMap, id: Option<&str>) -> Option<&'m [skill_core::Step]> {
    let id = id?;
    map.skills
        .iter()
        .rfind(|skill| skill.id == id)
        .and_then(|skill| skill.steps.as_deref())
        .filter(|steps| !steps.is_empty())
}

/// One `step` event in words.
fn step_line(event: &StepEvent) -> String {
    let step = &event.step;
    let next = |next: &Option<usize>| match next {
        Some(number) => format!("step {number} is current"),
        None => "the procedure is complete".to_owned(),
    };
    match &event.action {
        StepAction::Advanced { next: after } => format!(
            "{} step {} of {} ({}) done; {}",
            step.skill,
            step.step,
            step.of,
            step.tool,
            next(after)
        ),
        StepAction::Skipped {
            reason,
            on_skip,
            next: after,
        } => format!(
            "{} step {} of {} ({}) skipped ({:?}, on_skip {}); {}",
            step.skill,
            step.step,
            step.of,
            step.tool,
            reason,
            match on_skip {
                OnSkip::Advance => "advance",
                OnSkip::Hold => "hold",
            },
            next(after)
        ),
        StepAction::Unfinished { remaining, .. } => format!(
            "{}'s procedure left at step {} of {}: steps {:?} not done",
            step.skill, step.step, step.of, remaining
        ),
    }
}

/// Where a procedure stood: its skill and its current step (`None` once
/// complete), out of how many, with that step's tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcedureAt {
    /// The stepped skill, the cursor's.
    pub skill: String,
    /// The current step, from 1; `None` once complete.
    pub step: Option<usize>,
    /// How many steps the procedure has.
    pub of: usize,
    /// The current step's tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// A call the call gate accepted whose result the record does not hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpenCall {
    /// The iteration it was accepted in.
    pub iteration: u64,
    /// The tool called.
    pub tool_name: String,
    /// The run's number for the call.
    pub call: u64,
}

/// A skill active at the end, with the host tools it carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ActiveSkill {
    /// The skill's id.
    pub id: String,
    /// Its tools.
    pub tools: Vec<String>,
}

/// Explain `record` to its end, or to the end of `iteration`.
///
/// # Errors
///
/// [`ExplainError`] when the events do not open with one `start`, or
/// `iteration` did not end in the record.
pub fn explain(record: &Record, iteration: Option<u64>) -> Result<Explanation, ExplainError> {
    let Some(Event::Start(start)) = record.events.first() else {
        return Err(ExplainError::MissingStart {
            found: record.events.first().map_or("none", Event::kind).to_owned(),
        });
    };
    let last = last_ended(&record.events);
    if let Some(asked) = iteration.filter(|&n| n == 0 || n > last) {
        return Err(ExplainError::NoSuchIteration { asked, last });
    }
    let mut walk = Walk::new(start);
    for (index, event) in record.events.iter().enumerate().skip(1) {
        match event {
            Event::Start(_) => return Err(ExplainError::SecondStart { index }),
            Event::Turn(turn) => walk.turn(turn),
            Event::Offer(offer) => walk.offer = Some((offer.iteration, &offer.view)),
            Event::Read(read) => walk.read(read),
            Event::Call(call) => walk.call(call),
            Event::Result(result) => walk.result(result),
            Event::Step(step) => walk.step(step),
            Event::Move(moved) => {
                walk.moved(moved);
                if moved.by != MoveBy::Rule && iteration == Some(moved.iteration) {
                    break;
                }
            }
            // A kind a later format adds says nothing about the cursor.
            _ => {}
        }
    }
    Ok(walk.finish(start, iteration.unwrap_or(last), record.warning()))
}

/// The number of the last iteration the events end (0 when none).
fn last_ended(events: &[Event]) -> u64 {
    events
        .iter()
        .rev()
        .find_map(|event| match event {
            Event::Move(moved) if moved.by != MoveBy::Rule => Some(moved.iteration),
            _ => None,
        })
        .unwrap_or(0)
}

/// The state of a walk over the record.
struct Walk<'r> {
    map: &'r DeclaredMap,
    cursor: Option<String>,
    offer: Option<(u64, &'r OwnedOfferView)>,
    /// Accepted reads this turn, in order.
    activated: Vec<&'r str>,
    /// This iteration's results.
    batch: Vec<&'r ResultEvent>,
    chain: Vec<Link>,
    refused: Vec<RefusedRead>,
    refused_calls: Vec<RefusedCall>,
    open_calls: Vec<OpenCall>,
    steps: Vec<StepEvent>,
    /// The pointer of the cursor's skill, as the walk has it: its current
    /// step (`None` once complete).
    pointer: Option<Option<usize>>,
    /// Turns begun so far, and the rule that decided the last one's start.
    turns: u64,
    routed: Option<&'r RoutedRecord>,
}

impl<'r> Walk<'r> {
    fn new(start: &'r StartEvent) -> Self {
        Walk {
            map: &start.map,
            cursor: start.cursor.clone(),
            offer: None,
            activated: Vec::new(),
            batch: Vec::new(),
            chain: Vec::new(),
            refused: Vec::new(),
            refused_calls: Vec::new(),
            open_calls: Vec::new(),
            steps: Vec::new(),
            pointer: steps_of(&start.map, start.cursor.as_deref()).map(|_| Some(1)),
            turns: 0,
            routed: None,
        }
    }

    fn step(&mut self, event: &StepEvent) {
        match &event.action {
            StepAction::Advanced { next } | StepAction::Skipped { next, .. } => {
                self.pointer = Some(*next);
            }
            StepAction::Unfinished { .. } => {}
        }
        self.steps.push(event.clone());
    }

    fn turn(&mut self, turn: &'r TurnEvent) {
        self.activated.clear();
        self.turns += 1;
        self.routed = turn.routed.as_ref();
    }

    fn call(&mut self, call: &CallEvent) {
        match (call.accepted, call.refusal, call.call) {
            (true, _, Some(number)) => self.open_calls.push(OpenCall {
                iteration: call.iteration,
                tool_name: call.tool_name.clone(),
                call: number,
            }),
            // A call event without `accepted` is a refusal (SPEC §8.4).
            (false, refusal, number) => self.refused_calls.push(RefusedCall {
                iteration: call.iteration,
                tool_name: call.tool_name.clone(),
                call: number,
                refusal: refusal.unwrap_or(CallRefusal::NotOffered),
                named: call.allowed.clone().unwrap_or_default(),
                held: call.held.clone(),
            }),
            (true, _, None) => {}
        }
    }

    fn result(&mut self, result: &'r ResultEvent) {
        if let Some(number) = result.call {
            self.open_calls.retain(|open| open.call != number);
        }
        self.batch.push(result);
    }

    fn read(&mut self, read: &'r ReadEvent) {
        match read.refusal {
            Some(refusal) => self.refused.push(RefusedRead {
                iteration: read.iteration,
                id: read.id.clone(),
                class: read.class,
                refusal,
                named: read.allowed.clone().unwrap_or_default(),
            }),
            None if read.accepted && !self.activated.contains(&read.id.as_str()) => {
                self.activated.push(&read.id);
            }
            None => {}
        }
    }

    fn moved(&mut self, moved: &MoveEvent) {
        let route = (moved.by == MoveBy::Route).then(|| self.route_cause(moved));
        let pick = (moved.by == MoveBy::Model).then(|| PickCause {
            offer_iteration: self.offer.map(|(at, _)| at),
            offer: self.offer.map(|(_, view)| view.clone()),
            declined_offer: moved.declined_offer,
        });
        let rule = (moved.by == MoveBy::Rule)
            .then_some(self.routed)
            .flatten()
            .map(|routed| RuleCause {
                turn: self.turns,
                rule: routed.rule,
                label: routed.label.clone(),
                witness: routed.witness.clone(),
            });
        self.chain.push(Link {
            iteration: moved.iteration,
            from: moved.from.clone(),
            to: moved.to.clone(),
            by: moved.by,
            route,
            pick,
            rule,
            closed: moved.guards_closed.iter().map(closed_route).collect(),
            superseded: moved.superseded.clone(),
            conflict: moved.conflict.clone(),
            declared: move_declared(self.map, moved),
            proposal: moved.proposal.clone(),
            superseded_proposal: moved.superseded_proposal.clone(),
        });
        if moved.from != moved.to {
            // Arriving on a skill with steps starts its procedure at 1.
            self.pointer = steps_of(self.map, moved.to.as_deref()).map(|_| Some(1));
        }
        self.cursor.clone_from(&moved.to);
        self.batch.clear();
    }

    /// The winning route of a `route` move: its label, the result that
    /// fired it and its guard's evidence.
    fn route_cause(&self, moved: &MoveEvent) -> RouteCause {
        let (from, to) = (
            moved.from.as_deref().unwrap_or_default(),
            moved.to.as_deref().unwrap_or_default(),
        );
        // The route the move names; a record written before moves named
        // their route is read by the first declared route joining the two.
        let index = moved.route.or_else(|| {
            self.map
                .routes
                .iter()
                .position(|r| r.from == from && r.to == to && r.is_deterministic())
        });
        let declared = index.and_then(|at| self.map.routes.get(at));
        let fired = self.batch.iter().find(|result| {
            moved
                .guard
                .as_ref()
                .is_none_or(|guard| guard.tool_name == result.tool_name)
                && declared.is_none_or(|route| {
                    preconditions_pass(route, &result.tool_name, result.status.as_deref())
                })
        });
        RouteCause {
            tool_name: moved
                .guard
                .as_ref()
                .map(|guard| guard.tool_name.clone())
                .or_else(|| fired.map(|result| result.tool_name.clone())),
            status: fired.and_then(|result| result.status.clone()),
            offered: fired.is_none_or(|result| result.offered),
            index,
            label: declared.and_then(|route| route.label.clone()),
            conditions: moved
                .guard
                .as_ref()
                .map(|guard| guard.conditions.clone())
                .unwrap_or_default(),
        }
    }

    fn finish(self, start: &StartEvent, iteration: u64, warning: Option<String>) -> Explanation {
        let active = self
            .cursor
            .iter()
            .map(String::as_str)
            .chain(self.activated.iter().copied())
            .fold(Vec::<&str>::new(), |mut ids, id| {
                if !ids.contains(&id) {
                    ids.push(id);
                }
                ids
            })
            .into_iter()
            .map(|id| ActiveSkill {
                id: id.to_owned(),
                tools: self
                    .map
                    .skills
                    .iter()
                    .rfind(|skill| skill.id == id)
                    .map(|skill| skill.tools.clone())
                    .unwrap_or_default(),
            })
            .collect();
        let procedure = self.pointer.and_then(|step| {
            let steps = steps_of(self.map, self.cursor.as_deref())?;
            Some(ProcedureAt {
                skill: self.cursor.clone()?,
                step,
                of: steps.len(),
                tool: step
                    .and_then(|at| steps.get(at.checked_sub(1)?))
                    .map(|s| s.tool.clone()),
            })
        });
        Explanation {
            procedure,
            posture: start.posture,
            tools: start.tools,
            start: start.cursor.clone(),
            iteration,
            cursor: self.cursor,
            chain: self.chain,
            refused_reads: self.refused,
            refused_calls: self.refused_calls,
            open_calls: self.open_calls,
            steps: self.steps,
            active,
            warning,
            map: self.map.clone(),
        }
    }
}

fn closed_route(guard: &GuardRecord) -> ClosedRoute {
    ClosedRoute {
        from: guard.from.clone(),
        to: guard.to.clone(),
        tool_name: guard.tool_name.clone(),
        failed: guard
            .conditions
            .iter()
            .filter(|condition| !condition.passed)
            .cloned()
            .collect(),
    }
}

/// Whether `map` has a move from `from` to `to`: a route, or an entry.
/// Whether `map` declares `moved`: a stay always, else a route or an entry.
pub(crate) fn move_declared(map: &DeclaredMap, moved: &MoveEvent) -> bool {
    match moved.by {
        MoveBy::Stay => true,
        // A rule's move is declared by a start rule naming its target.
        MoveBy::Rule => map.start.as_ref().is_some_and(|start| {
            start
                .rules
                .iter()
                .any(|rule| Some(rule.use_skill.as_str()) == moved.to.as_deref())
        }),
        _ => declares(map, moved.from.as_deref(), moved.to.as_deref()),
    }
}

fn declares(map: &DeclaredMap, from: Option<&str>, to: Option<&str>) -> bool {
    let Some(to) = to else { return false };
    map.entries.iter().any(|entry| entry == to)
        || map
            .routes
            .iter()
            .any(|route| Some(route.from.as_str()) == from && route.to == to)
}

impl Explanation {
    /// The explanation as text a person reads in one go.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let at = if self.chain.is_empty() {
            "; no iteration ended".to_owned()
        } else {
            format!(" at the end of iteration {}", self.iteration)
        };
        let _ = writeln!(
            out,
            "The cursor is on {}{at} (it started on {}; posture {}).",
            shown(self.cursor.as_deref()),
            shown(self.start.as_deref()),
            self.posture.as_str()
        );
        if !self.chain.is_empty() {
            let _ = writeln!(out, "\nMoves:");
        }
        for link in &self.chain {
            link_text(link, &mut out);
        }
        if !self.refused_reads.is_empty() {
            let _ = writeln!(out, "\nReads refused:");
        }
        for read in &self.refused_reads {
            let _ = writeln!(
                out,
                "  iteration {}: read of {} refused ({}; class {}); the answer named {}",
                read.iteration,
                read.id,
                read.refusal.code(),
                read.class.as_str(),
                listed(&read.named)
            );
        }
        if !self.refused_calls.is_empty() {
            let _ = writeln!(
                out,
                "\nCalls refused (call policy {}):",
                self.tools.as_str()
            );
        }
        for call in &self.refused_calls {
            let _ = writeln!(
                out,
                "  iteration {}: {} of {} refused ({}); the answer named {}",
                call.iteration,
                numbered_call(call.call),
                call.tool_name,
                call.refusal.code(),
                listed(&call.named)
            );
            if let Some(held) = &call.held {
                let _ = writeln!(
                    out,
                    "    held out by step {} of {} of {}'s procedure ({}), the current one",
                    held.step, held.of, held.skill, held.tool
                );
            }
        }
        if !self.steps.is_empty() {
            let _ = writeln!(out, "\nProcedure steps:");
        }
        for step in &self.steps {
            let _ = writeln!(out, "  iteration {}: {}", step.iteration, step_line(step));
        }
        if !self.open_calls.is_empty() {
            let _ = writeln!(out, "\nCalls with no result in the record:");
        }
        for call in &self.open_calls {
            let _ = writeln!(
                out,
                "  iteration {}: call {} of {} was accepted and forwarded; no result follows (still running, or the writer stopped mid-call)",
                call.iteration, call.call, call.tool_name
            );
        }
        if let Some(procedure) = &self.procedure {
            let _ = match (procedure.step, &procedure.tool) {
                (Some(step), Some(tool)) => writeln!(
                    out,
                    "\nProcedure of {}: at step {step} of {} ({tool})",
                    procedure.skill, procedure.of
                ),
                _ => writeln!(
                    out,
                    "\nProcedure of {}: complete ({} steps)",
                    procedure.skill, procedure.of
                ),
            };
        }
        let _ = writeln!(out, "\nActive skills:");
        if self.active.is_empty() {
            let _ = writeln!(out, "  none");
        }
        for skill in &self.active {
            let tools = if skill.tools.is_empty() {
                "no tools".to_owned()
            } else {
                format!("tools {}", skill.tools.join(", "))
            };
            let _ = writeln!(out, "  {}: {tools}", skill.id);
        }
        out
    }

    /// The declared map as a mermaid flowchart, with the path taken drawn
    /// over it (thick numbered arrows), any move the map does not declare
    /// marked, and the cursor's node outlined.
    pub fn to_mermaid(&self) -> String {
        let map = SkillMap {
            skills: self
                .map
                .skills
                .iter()
                .map(|declared| {
                    let mut skill = Skill::new(declared.id.clone());
                    skill.description.clone_from(&declared.description);
                    skill
                })
                .collect(),
            entries: self.map.entries.clone(),
            routes: self.map.routes.clone(),
            start: None,
            roles: skill_core::Roles::new(),
            budget: None,
            escalation: None,
        };
        let path: Vec<PathStep<'_>> = self
            .chain
            .iter()
            .filter(|link| link.by != MoveBy::Stay)
            .enumerate()
            .filter_map(|(at, link)| {
                Some(PathStep {
                    from: link.from.as_deref(),
                    to: link.to.as_deref()?,
                    caption: format!(
                        "{}. {} (iteration {})",
                        at + 1,
                        link.by.as_str(),
                        link.iteration
                    ),
                    declared: link.declared,
                })
            })
            .collect();
        mermaid_with_path(&map, &path, self.cursor.as_deref())
    }
}

/// `turn 2 started on refunds by the rule 'refund words' (rules[0]):
/// 'refund' in the message` (SPEC §13.3); `stayed on` when the cursor stood
/// there already.
pub(crate) fn rule_text(rule: &RuleCause, stayed: bool, to: &str) -> String {
    let by = match &rule.label {
        Some(label) => format!("the rule '{label}' (rules[{}])", rule.rule),
        None => format!("rules[{}]", rule.rule),
    };
    let how = if stayed { "stayed on" } else { "started on" };
    format!(
        "turn {} {how} {to} by {by}: '{}' in the message",
        rule.turn, rule.witness
    )
}

fn link_text(link: &Link, out: &mut String) {
    let (from, to) = (shown(link.from.as_deref()), shown(link.to.as_deref()));
    let head = match link.by {
        MoveBy::Stay => format!("stayed on {from}"),
        MoveBy::Route => format!("{from} → {to} by route {from}→{to}"),
        MoveBy::Model => format!("{from} → {to} by the model's pick of {to}"),
        MoveBy::Tool => match &link.proposal {
            Some(proposal) => format!(
                "{from} → {to} by {}'s proposal: '{}'",
                proposal.tool_name, proposal.reason
            ),
            None => format!("{from} → {to} by a tool's proposal"),
        },
        MoveBy::Rule => match &link.rule {
            Some(rule) => rule_text(rule, link.from == link.to, to),
            None => format!("{from} → {to} by a start rule"),
        },
        other => format!("{from} → {to} by {}", other.as_str()),
    };
    let _ = write!(out, "  iteration {}: {head}", link.iteration);
    if let Some(route) = &link.route {
        route_text(route, out);
    }
    if let Some(pick) = &link.pick {
        pick_text(pick, out);
    }
    out.push('\n');
    if !link.declared {
        let _ = writeln!(out, "      the map declares no such move");
    }
    for condition in link.route.iter().flat_map(|route| &route.conditions) {
        let _ = writeln!(out, "      {}", condition_text(condition));
    }
    if let Some(pick) = &link.superseded {
        let _ = writeln!(out, "      it superseded the model's pick of {pick}");
    }
    if let Some(proposal) = &link.superseded_proposal {
        let _ = writeln!(
            out,
            "      it superseded {}'s proposal of {} ('{}'): a route comes first",
            proposal.tool_name, proposal.to, proposal.reason
        );
    }
    for conflict in &link.conflict {
        let what = match conflict.by {
            ConflictBy::Tool => "proposal",
            _ => "result",
        };
        let _ = writeln!(
            out,
            "      a later {} {what} led to {} (the first wins)",
            conflict.tool_name, conflict.to
        );
    }
    for closed in &link.closed {
        let failed: Vec<String> = closed.failed.iter().map(condition_text).collect();
        let _ = writeln!(
            out,
            "      route {}→{} closed on {}: {}",
            closed.from,
            closed.to,
            closed.tool_name,
            failed.join("; ")
        );
    }
}

fn route_text(route: &RouteCause, out: &mut String) {
    if let Some(label) = &route.label {
        let _ = write!(out, " (\"{label}\")");
    }
    if let Some(tool) = &route.tool_name {
        let _ = write!(out, ", fired by the result of {tool}");
    }
    if let Some(status) = &route.status {
        let _ = write!(out, " (status {status})");
    }
    if !route.offered {
        out.push_str(", a tool the active skills did not carry (called though not offered)");
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes fields by reference
fn is_true(value: &bool) -> bool {
    *value
}

fn pick_text(pick: &PickCause, out: &mut String) {
    match (pick.offer_iteration, &pick.offer) {
        (Some(at), Some(view)) => {
            let _ = write!(out, ", from the offer of iteration {at}");
            let menu: Vec<&str> = view
                .menu
                .iter()
                .flatten()
                .map(|row| row.id.as_str())
                .collect();
            for (name, ids) in [
                ("menu", menu),
                ("reachable", row_ids(&view.reachable)),
                ("open in the tree", row_ids(&view.tree_open)),
            ] {
                if !ids.is_empty() {
                    let _ = write!(out, "; {name}: {}", ids.join(", "));
                }
            }
        }
        _ => out.push_str(", with no offer on the record before it"),
    }
    if pick.declined_offer {
        out.push_str("; it declined the turn's menu");
    }
}

/// The ids of an offer view's rows.
fn row_ids(rows: &[OwnedRow]) -> Vec<&str> {
    rows.iter().map(|row| row.id.as_str()).collect()
}

/// One condition with the value it read, as the guard crate words evidence.
fn condition_text(condition: &ConditionRecord) -> String {
    evidence_caption(
        &condition.key,
        condition.op,
        &condition.value,
        &condition.actual_summary,
        condition.passed,
    )
}

fn shown(id: Option<&str>) -> &str {
    id.unwrap_or("no skill")
}

/// `call 3`, or `a call` for a record written before calls were numbered.
fn numbered_call(call: Option<u64>) -> String {
    match call {
        Some(number) => format!("call {number}"),
        None => "a call".to_owned(),
    }
}

fn listed(ids: &[String]) -> String {
    if ids.is_empty() {
        "none".to_owned()
    } else {
        ids.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use skill_core::{SkillMap, ToolResult};
    use skill_session::{Graph, Posture, Session, read_record};

    use super::*;

    #[test]
    fn a_route_fired_by_a_tool_not_offered_says_so() {
        let map: SkillMap = serde_json::from_str(
            r#"{"skills": [{"id": "a", "tools": [{"name": "x"}]}, {"id": "b", "tools": [{"name": "y"}]}],
                "entries": ["a"], "routes": [{"from": "a", "to": "b", "on_tool_return": "y"}]}"#,
        )
        .expect("a map");
        let mut session = Session::new(
            Arc::new(Graph::new(map).expect("a graph")),
            Posture::Assist,
            Vec::new(),
        );
        session.begin_turn("", None);
        for tool in ["y", "x"] {
            session.observe(ToolResult {
                tool_name: tool.into(),
                result: "{}".into(),
                status: None,
            });
            session.end_iteration();
        }
        let text: String = session
            .take_events()
            .iter()
            .map(|e| e.to_line() + "\n")
            .collect();
        let record = read_record(&text).expect("the record reads");
        let explained = explain(&record, None).expect("explained");
        let out = explained.to_text();
        assert!(
            out.contains("fired by the result of y, a tool the active skills did not carry"),
            "{out}"
        );
        let json = serde_json::to_string(&explained).expect("JSON");
        assert_eq!(json.matches(r#""offered":false"#).count(), 1, "{json}");
    }

    #[test]
    fn the_route_that_fired_is_named_by_its_index() {
        // Two routes join triage and refunds; the second, unguarded one fires.
        let map: SkillMap = serde_json::from_str(
            r#"{"skills": [{"id": "triage"}, {"id": "refunds"}], "entries": ["triage"],
                "routes": [
                    {"from": "triage", "to": "refunds", "guard": {"risk": {"eq": "high"}}, "label": "risky"},
                    {"from": "triage", "to": "refunds", "on_tool_status": ["failure"], "label": "git error"}
                ]}"#,
        )
        .expect("a map");
        let mut session = Session::new(
            Arc::new(Graph::new(map).expect("a graph")),
            Posture::Assist,
            Vec::new(),
        );
        session.begin_turn("", None);
        session.observe(ToolResult {
            tool_name: "git".into(),
            result: r#"{"risk":"low"}"#.into(),
            status: Some("failure".into()),
        });
        session.end_iteration();
        let text: String = session
            .events()
            .iter()
            .map(|e| e.to_line() + "\n")
            .collect();
        let explained =
            explain(&read_record(&text).expect("the record reads"), None).expect("explained");
        let route = explained.chain[0].route.as_ref().expect("a route move");
        assert_eq!(
            (route.index, route.label.as_deref()),
            (Some(1), Some("git error"))
        );
        assert!(
            route.conditions.is_empty(),
            "the route that fired has no guard"
        );
        assert_eq!(route.status.as_deref(), Some("failure"));
        let out = explained.to_text();
        assert!(
            out.contains(r#"("git error"), fired by the result of git (status failure)"#),
            "{out}"
        );
        assert!(
            out.contains("route triage→refunds closed on git: risk = low"),
            "{out}"
        );
    }
}
