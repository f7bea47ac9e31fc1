//! Replay: feeding a record's inputs — its turns, offers, reads, refused
//! calls, results and ends of iteration — into a fresh session on the same graph. A session is
//! deterministic, so the replayed record equals the original; that is the
//! law `explain` stands on.

use std::sync::Arc;

use skill_core::ToolResult;

use crate::graph::Graph;
use crate::record::Event;
use crate::session::{ReadError, Session, SessionConfig};

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
}

impl ReplayError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ReplayError::MissingStart { .. } => "replay-missing-start",
            ReplayError::SecondStart { .. } => "replay-second-start",
            ReplayError::Read { .. } => "replay-unknown-skill",
        }
    }
}

/// Feed `events`' inputs into a fresh session on `graph` (with the recorded
/// posture, hidden ids and call policy) and return the record it writes.
///
/// The result equals `events` when the record was written on this graph and
/// no result was longer than the 4 KiB the record keeps of it (a longer one
/// is replayed from its kept head, which a guard may read differently).
///
/// # Errors
///
/// [`ReplayError`] when the events do not begin with one `start`, or a read
/// names an id outside the graph's catalog.
pub fn replay(graph: &Arc<Graph>, events: &[Event]) -> Result<Vec<Event>, ReplayError> {
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
        },
    );
    for (index, event) in events.iter().enumerate().skip(1) {
        match event {
            Event::Start(_) => return Err(ReplayError::SecondStart { index }),
            Event::Turn(turn) => session.begin_turn(turn.user_message.clone(), turn.menu.clone()),
            Event::Offer(_) => {
                session.tools();
            }
            Event::Read(read) => {
                session
                    .read_skill(&read.id)
                    .map_err(|error| ReplayError::Read { index, error })?;
            }
            Event::Call(call) => {
                session.call_tool(&call.tool_name);
            }
            Event::Result(result) => session.observe(ToolResult {
                tool_name: result.tool_name.clone(),
                result: result.result.clone(),
                status: result.status.clone(),
            }),
            Event::Move(_) => {
                session.end_iteration();
            }
        }
    }
    Ok(session.take_events())
}
