//! One conversation on one skill map: the host's side of SPEC §8.
//!
//! `skill-session` owns every decision a driver (`play`, the MCP server, a
//! host) needs, made once: judging a `read_skill` call against the cursor
//! and the session's [`Posture`] (the read gate), judging a call of a host
//! tool under its [`CallPolicy`] (the call gate), turning an accepted pick
//! into a cursor move at the end of the iteration, collecting the host's
//! tool results and routing them, what a [`Run`] (a driver with no model
//! loop, as an MCP server) counts as an iteration and answers,
//! answering what the model may be shown ([`Session::tools`],
//! [`Session::visible_tools`], [`Session::system_prompt`]), and keeping the
//! record: typed [`Event`]s, written as JSON Lines, read back by
//! [`read_record`] and reproduced by [`replay`]. A [`Graph`] compiles a
//! map's guards once and is shared (`Arc<Graph>`) by any number of
//! sessions.
//!
//! It must never do I/O, print, keep global state, or depend on anything
//! but `skill-core`, `skill-guard` and `skill-tools`: a host forwards calls
//! and flushes the events it takes; files, streams and model clients stay in
//! the host.
//!
//! The key design decision: the cursor moves only at the end of an
//! iteration, once. Reads are judged against the cursor as the iteration
//! began; an accepted read of a hop is only a pending pick, and a route
//! fired by a result beats it (the record says so). So what the model was
//! shown and what moved the cursor can always be told apart afterwards.
//!
//! ```
//! use std::sync::Arc;
//! use skill_core::SkillMap;
//! use skill_session::{Graph, MoveBy, Posture, Session, read_record, replay};
//!
//! let map: SkillMap = serde_json::from_str(r#"{
//!     "skills": [{ "id": "triage" }, { "id": "billing", "description": "Invoices" }],
//!     "entries": ["triage"],
//!     "routes": [{ "from": "triage", "to": "billing" }]
//! }"#)?;
//! let graph = Arc::new(Graph::new(map)?);
//! let mut session = Session::new(Arc::clone(&graph), Posture::Assist, Vec::new());
//! session.begin_turn("where is my invoice?", None);
//! let tools = session.tools();
//! assert_eq!(tools[0].name, "read_skill");
//! assert!(session.read_skill("billing")?.accepted());
//! assert_eq!(session.cursor(), Some("triage"), "a pick waits for the end of the iteration");
//! assert_eq!(session.end_iteration().by, MoveBy::Model);
//!
//! let text: String = session.events().iter().map(|e| e.to_line() + "\n").collect();
//! let record = read_record(&text)?;
//! assert_eq!(replay(&graph, &record.events)?, record.events);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod call_gate;
mod gate;
mod graph;
mod reader;
mod record;
mod replay;
mod run;
mod session;

pub use graph::{Graph, GraphError};
pub use reader::{Record, RecordError, read_events, read_record};
pub use record::{
    BudgetAction, BudgetEvent, CallEvent, CallPolicy, CallRefusal, ConditionRecord, ConflictBy,
    ConflictRecord, CountedRefusal, DeclaredMap, DeclaredSkill, EscalatedEvent, Event, GateKind,
    GuardRecord, Limits, MoveBy, MoveEvent, OfferEvent, OnSkip, Posture, ProposalMove,
    ProposalRefusal, ProposeRecord, RECORD_VERSION, RESULT_HEAD_BYTES, ReadEvent, Refusal,
    ResultEvent, RoutedRecord, StartEvent, StepAction, StepEvent, StepRef, TurnEvent,
    UnfinishedCause,
};
pub use replay::{ReplayError, first_difference, replay, resume};
pub use run::{Run, RunAnswer, RunCall, RunRead, RunSkip};
pub use session::{
    CANCELLED, CallAnswer, INPUT_REQUIRED, MAX_ID_ECHO, ObserveError, Procedure, Proposed,
    ReadAnswer, ReadError, Session, SessionConfig, SkipAnswer, skill_content,
};
/// The offer view as the record keeps it (an `offer` event's `view`), from
/// `skill-tools`, so that a reader of the record needs no other crate.
pub use skill_tools::{OfferMode, OwnedMenuRow, OwnedOfferView, OwnedRow};
