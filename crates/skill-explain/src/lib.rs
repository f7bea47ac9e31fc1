//! A session's record explained, and a skill map drawn (SPEC §8.5, §11,
//! §12).
//!
//! `skill-explain` owns what a person reads about a run: [`explain`] walks a
//! record read by [`skill_session::read_record`] and answers where the
//! cursor ended (or stood at the end of an iteration) and the causal chain of
//! moves that put it there, each with its cause — a route with every
//! condition's actual value, a model pick with the offer it was made from —
//! the routes that closed on the way, the refused reads, and the active
//! skills; as text ([`Explanation::to_text`]), JSON (`Explanation` is
//! `Serialize`) or a mermaid chart of the declared map with the path drawn
//! over it ([`Explanation::to_mermaid`]). [`mermaid`] draws a map alone.
//! [`page`] writes a run as one self-contained HTML page, the map placed by
//! a graph-layout library (`rust-sugiyama`); [`trace`] gives a run as span
//! data (names, parentage, attributes, events) for a host's tracer.
//!
//! It must never read a file, print, keep global state, or depend on a
//! skillgraph crate but `skill-core`, `skill-guard` and `skill-session` (or
//! an external crate but the layout library): it takes a record already read
//! and returns data and text.
//!
//! The key design decision: an explanation is built from the record alone.
//! Every fact it states is a field some event holds (the winning route is
//! named by its index, a condition by its recorded evidence); nothing is
//! recomputed from a map that may have changed since the run.
//!
//! ```
//! use std::sync::Arc;
//! use skill_core::{SkillMap, ToolResult};
//! use skill_session::{Graph, Posture, Session, read_record};
//!
//! let map: SkillMap = serde_json::from_str(r#"{
//!     "skills": [{ "id": "triage" }, { "id": "refunds", "tools": [{ "name": "issue_refund" }] }],
//!     "entries": ["triage"],
//!     "routes": [{ "from": "triage", "to": "refunds", "guard": { "amount": { "gte": 100 } } }]
//! }"#)?;
//! let mut session = Session::new(Arc::new(Graph::new(map)?), Posture::Assist, Vec::new());
//! session.begin_turn("refund order 4412", None);
//! session.observe(ToolResult { tool_name: "lookup_order".into(), result: r#"{"amount":240}"#.into(), status: None });
//! session.end_iteration();
//! let text: String = session.events().iter().map(|e| e.to_line() + "\n").collect();
//!
//! let explanation = skill_explain::explain(&read_record(&text)?, None)?;
//! assert_eq!(explanation.cursor.as_deref(), Some("refunds"));
//! assert!(explanation.to_text().contains("amount = 240 ≥ 100"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod draw;
mod explain;
mod page;
pub mod trace;

pub use draw::mermaid;
pub use explain::{
    ActiveSkill, ClosedRoute, ExplainError, Explanation, Link, PickCause, RefusedRead, RouteCause,
    RuleCause, explain,
};
pub use page::page;
