//! Replay: feeding a record's inputs — its turns, offers, reads, judged
//! calls, results and ends of iteration — into a fresh session on the same graph. A session is
//! deterministic, so the replayed record equals the original; that is the
//! law `explain` stands on.

use std::sync::Arc;

use skill_core::{MoveBy, ToolResult};

use crate::graph::Graph;
use crate::record::{
    CallEvent, CallRefusal, Event, ReadEvent, Refusal, ResultEvent, StepAction, StepEvent,
};
use crate::session::{
    CANCELLED, INPUT_REQUIRED, ObserveError, Proposed, ReadError, Session, SessionConfig,
};

/// A record that cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The events do not open with `start` (the posture and hidden ids are
    /// there).
    #[error(
        "event {index} is \"{found}\", but a replay begins at the record's \"start\" event; pass the whole record"
    )]
    MissingStart {
        /// The event's position, from 0.
        index: usize,
        /// Its kind (`none` when there are no events).
        found: String,
    },
    /// A second `start`: two sessions' records were joined.
    #[error("event {index} starts another session; replay one session's record at a time")]
    SecondStart {
        /// The event's position, from 0.
        index: usize,
    },
    /// A recorded read names an id the graph does not hold: the record was
    /// written on another map.
    #[error("event {index}: {error}; replay the record on the map that wrote it")]
    Read {
        /// The event's position, from 0.
        index: usize,
        /// The read's error.
        error: ReadError,
    },
    /// A recorded result names a call that is not open at that point (a
    /// number never given, or one already answered): a session refuses
    /// such a result, so no session wrote this record.
    #[error(
        "event {index}: {error}; a session records no such result, so the record was changed after it was written: replay it as it was written"
    )]
    Result {
        /// The event's position, from 0.
        index: usize,
        /// The result's error.
        error: ObserveError,
    },
    /// The record, replayed, is not the record: this graph decides
    /// otherwise at `index` than the session that wrote it.
    #[error(
        "event {index} is not what this map decides there, so the run cannot be rebuilt from its record; serve the map that wrote it"
    )]
    Diverged {
        /// The first event that differs, from 0.
        index: usize,
    },
}

impl ReplayError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ReplayError::MissingStart { .. } => "record-missing-start",
            ReplayError::SecondStart { .. } => "record-second-start",
            ReplayError::Read { .. } => "replay-unknown-skill",
            ReplayError::Result { .. } => "replay-call-not-open",
            ReplayError::Diverged { .. } => "replay-diverged",
        }
    }
}

/// Feed `events`' inputs into a fresh session on `graph` (with the recorded
/// posture, hidden ids and call policy) and return the record it writes.
///
/// The result equals `events` when the record was written on this graph,
/// unless a guard read a result past the 4 KiB the record keeps of it (a
/// longer result is replayed from its kept head, with its recorded length).
/// [`first_difference`] says where two records part.
///
/// # Errors
///
/// [`ReplayError`] when the events do not begin with one `start`, a read
/// names an id outside the graph's catalog, or a result names a call that
/// is not open (a number never given, or one already answered).
pub fn replay(graph: &Arc<Graph>, events: &[Event]) -> Result<Vec<Event>, ReplayError> {
    resume(graph, events).map(|mut session| session.take_events())
}

/// The session on `graph` that `events` leave behind: their inputs fed
/// into a fresh session as [`replay`] feeds them, its record not yet taken
/// (take it with [`Session::take_events`]). A server that keeps its runs
/// as records rebuilds a run this way; [`crate::Run::resume`] also checks
/// that the rebuilt record is the one given.
///
/// # Errors
///
/// As [`replay`].
pub fn resume(graph: &Arc<Graph>, events: &[Event]) -> Result<Session, ReplayError> {
    let Some(Event::Start(start)) = events.first() else {
        return Err(ReplayError::MissingStart {
            index: 0,
            found: events.first().map_or("none", Event::kind).to_owned(),
        });
    };
    let mut session = Session::with_config(
        Arc::clone(graph),
        SessionConfig {
            posture: start.posture,
            hidden: start.hidden.clone(),
            tools: start.tools,
            roles: start.roles.clone(),
            // A record without limits ran with every limit off.
            max_iterations: Some(start.limits.and_then(|l| l.max_iterations).unwrap_or(0)),
            after_refusals: Some(start.limits.map_or(0, |l| l.after_refusals)),
        },
    );
    // A record written before calls were numbered replays as it was written
    // (one with no call yet may go on, and goes on numbered).
    // `skip_step`'s refusals are the session's own, never numbered.
    let mut calls = events.iter().filter_map(|event| match event {
        Event::Call(call) if !is_skip_refusal(call) => Some(call.call.is_some()),
        _ => None,
    });
    let unnumbered = calls.next().is_some_and(|first| !first) && !calls.any(|numbered| numbered);
    if unnumbered {
        session = session.unnumbered();
    }
    feed(&mut session, events.get(1..).unwrap_or_default(), 1)?;
    Ok(session)
}

/// Feed `events`' inputs into `session`, the first being the record's
/// event `offset` (for the errors' positions): what [`resume`] does after
/// the `start`, and what catches a rebuilt session up with a record's
/// continuation ([`crate::Run::catch_up`]).
pub(crate) fn feed(
    session: &mut Session,
    events: &[Event],
    offset: usize,
) -> Result<(), ReplayError> {
    for (index, event) in events.iter().enumerate() {
        let index = index + offset;
        match event {
            Event::Start(_) => return Err(ReplayError::SecondStart { index }),
            Event::Turn(turn) => {
                session.begin_turn(turn.user_message.clone(), turn.menu.clone());
            }
            Event::Offer(_) => {
                session.tools();
            }
            Event::Read(ReadEvent {
                id,
                refusal: Some(refusal @ (Refusal::Malformed | Refusal::Unknown)),
                ..
            }) => session.refuse_read(id, *refusal),
            Event::Read(read) => {
                session
                    .read_skill(&read.id)
                    .map_err(|error| ReplayError::Read { index, error })?;
            }
            // `skip_step` is the session's own tool (SPEC §15.8): a refused
            // one is fed again without its reason (none, or one with no
            // procedure to skip), an accepted one from its `step`.
            Event::Call(call) if is_skip_refusal(call) => {
                let reason = (call.refusal != Some(CallRefusal::SkipNeedsReason)).then_some("-");
                session.skip_step(reason);
            }
            Event::Call(call) => {
                session.call_tool(&call.tool_name);
            }
            Event::Step(StepEvent {
                action: StepAction::Skipped { reason, .. },
                ..
            }) => {
                session.skip_step(Some(reason));
            }
            // Advances, unfinished procedures and a spent budget are
            // decided again.
            Event::Step(_) | Event::Budget(_) | Event::Escalated(_) => {}
            Event::Result(ResultEvent {
                tool_name,
                call: Some(call),
                error: Some(error),
                status: None,
                reason: Some(reason),
                ..
            }) if error == CANCELLED => session
                .observe_lost(tool_name, *call, reason)
                .map_err(|error| ReplayError::Result { index, error })?,
            Event::Result(ResultEvent {
                tool_name,
                call,
                error: Some(error),
                status,
                ..
            }) => {
                let observed = if error == CANCELLED && status.is_none() {
                    session.observe_cancelled(tool_name, *call)
                } else if error == INPUT_REQUIRED && status.is_none() {
                    session.observe_input_required(tool_name, *call)
                } else {
                    session.observe_failure(tool_name, *call, error)
                };
                observed.map_err(|error| ReplayError::Result { index, error })?;
            }
            Event::Result(result) => session
                .observe_measured_proposing(
                    result.call,
                    ToolResult {
                        tool_name: result.tool_name.clone(),
                        result: result.result.clone(),
                        status: result.status.clone(),
                    },
                    result.bytes,
                    result.propose.as_ref().map(Proposed::of_record),
                )
                .map_err(|error| ReplayError::Result { index, error })?,
            // A rule's move is made by the turn's start, replayed above.
            Event::Move(moved) if moved.by == MoveBy::Rule => {}
            Event::Move(_) => {
                session.end_iteration();
            }
        }
    }
    Ok(())
}

/// Whether `call` is a refused `skip_step` of the session's own (SPEC
/// §15.2): unnumbered, as a host tool of that name never is.
fn is_skip_refusal(call: &CallEvent) -> bool {
    call.tool_name == skill_tools::SKIP_STEP
        && call.call.is_none()
        && matches!(
            call.refusal,
            Some(
                CallRefusal::SkipNeedsReason
                    | CallRefusal::NoProcedure
                    | CallRefusal::BudgetExhausted
            )
        )
}

/// Where `replayed` first parts from `recorded`: the position of the first
/// event that differs, or of the first event one of them lacks; `None`
/// when they are equal.
///
/// ```
/// use skill_session::{Event, TurnEvent, first_difference};
///
/// let turn = |message: &str| Event::Turn(TurnEvent { iteration: 1, user_message: message.into(), menu: None, routed: None, gave_up: vec![] });
/// assert_eq!(first_difference(&[turn("a")], &[turn("a")]), None);
/// assert_eq!(first_difference(&[turn("a"), turn("b")], &[turn("a"), turn("c")]), Some(1));
/// assert_eq!(first_difference(&[turn("a")], &[turn("a"), turn("b")]), Some(1));
/// ```
pub fn first_difference(recorded: &[Event], replayed: &[Event]) -> Option<usize> {
    let common = recorded.len().min(replayed.len());
    (0..common)
        .find(|&at| recorded[at] != replayed[at])
        .or_else(|| (recorded.len() != replayed.len()).then_some(common))
}
