//! A run (SPEC §9.1): a session driven by a host that carries no user
//! messages and no model loop, as an MCP server is. A run is one session and
//! one turn, and every read and every call of a host tool is an iteration of
//! its own, ended when it is answered. The run decides what each answer
//! says; the driver only puts it into its protocol's shapes.

use std::sync::Arc;

use skill_core::ToolResult;
use skill_tools::ToolDescriptor;

use crate::graph::Graph;
use crate::record::Event;
use crate::session::{CallAnswer, ReadError, Session, SessionConfig};

/// One run: a [`Session`] with one turn, every read and call an iteration.
///
/// ```
/// use std::sync::Arc;
/// use skill_core::{SkillMap, ToolResult};
/// use skill_session::{CallPolicy, Graph, Run, RunCall, SessionConfig};
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage", "tools": [{ "name": "lookup_order" }] },
///                { "id": "refunds", "body": "Refund with care.", "tools": [{ "name": "issue_refund" }] }],
///     "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "riskLevel": { "eq": "high" } } }]
/// }"#)?;
/// let config = SessionConfig { tools: CallPolicy::Strict, ..SessionConfig::default() };
/// let mut run = Run::new(Arc::new(Graph::new(map)?), config);
/// assert!(matches!(run.call("issue_refund"), RunCall::Refused { .. }), "refunds is not active");
/// assert_eq!(run.call("lookup_order"), RunCall::Forward);
/// let answer = run.answered(ToolResult { tool_name: "lookup_order".into(), result: r#"{"riskLevel":"high"}"#.into(), status: None });
/// assert_eq!(answer.body.as_deref(), Some(r#"<skill_content name="refunds">Refund with care.</skill_content>"#));
/// assert!(answer.changed, "the active skills changed: announce the tool list");
/// assert_eq!(run.session().iteration(), 3, "the refusal and the call were an iteration each");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Run {
    session: Session,
}

/// What a `read_skill` call of a run answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRead {
    /// Whether the gate accepted the read.
    pub accepted: bool,
    /// The answer: an accepted read's body in its `<skill_content>` block
    /// whatever its surface mode (a run has no system prompt to carry it;
    /// SPEC §9.6), a confirmation for a skill with no body, or the gate's
    /// teaching refusal.
    pub text: String,
    /// Whether the active skills changed (the tool list with them).
    pub changed: bool,
}

/// The call gate's word on one call of a host tool in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunCall {
    /// Forward the call, then report its [answer](Run::answered) or its
    /// [failure](Run::failed).
    Forward,
    /// Answer with `text` as a tool error; the iteration has ended.
    Refused {
        /// The teaching refusal.
        text: String,
    },
}

/// What a forwarded call's answer brings, beyond the upstream's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAnswer {
    /// When a route moved the run: the new skill's body in its
    /// `<skill_content>` block, to follow the upstream's answer.
    pub body: Option<String>,
    /// Whether the active skills changed (the tool list with them).
    pub changed: bool,
}

impl Run {
    /// A run on `graph` set up by `config`; its one turn has begun.
    pub fn new(graph: Arc<Graph>, config: SessionConfig) -> Self {
        let mut session = Session::with_config(graph, config);
        session.begin_turn("", None);
        Run { session }
    }

    /// The session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// `read_skill` and `list_skills` for the run's position, recording the
    /// offer.
    pub fn tools(&mut self) -> Vec<ToolDescriptor> {
        self.session.tools()
    }

    /// Whether a host tool is listed and counts as offered now (SPEC §9.2).
    pub fn offers(&self, tool: &str) -> bool {
        self.session.offers_call(tool)
    }

    /// A `read_skill` call of `id`: judged by the read gate, answered, and
    /// the iteration ended.
    ///
    /// # Errors
    ///
    /// [`ReadError::UnknownSkill`] when `id` is not a skill of the map;
    /// nothing is recorded and no iteration ends.
    pub fn read(&mut self, id: &str) -> Result<RunRead, ReadError> {
        let before = self.active();
        let answer = self.session.read_skill(id)?;
        let accepted = answer.accepted();
        let text = match accepted.then(|| self.session.body_block(id)).flatten() {
            Some(body) => body,
            None => answer.text,
        };
        self.session.end_iteration();
        Ok(RunRead {
            accepted,
            text,
            changed: self.active() != before,
        })
    }

    /// A call of the host tool `tool`, judged by the call gate. A refusal
    /// is recorded and ends the iteration.
    pub fn call(&mut self, tool: &str) -> RunCall {
        match self.session.call_tool(tool) {
            CallAnswer::Admitted => RunCall::Forward,
            CallAnswer::Refused { text, .. } => {
                self.session.end_iteration();
                RunCall::Refused { text }
            }
        }
    }

    /// A forwarded call's answer: observed, routed, the iteration ended.
    pub fn answered(&mut self, result: ToolResult) -> RunAnswer {
        let before = self.active();
        self.session.observe(result);
        let moved = self.session.end_iteration();
        let body = match (moved.by, moved.to.clone()) {
            (crate::MoveBy::Route, Some(to)) => self.session.body_block(&to),
            _ => None,
        };
        RunAnswer {
            body,
            changed: self.active() != before,
        }
    }

    /// A forwarded call that failed instead of answering: the iteration
    /// ends, and nothing moves.
    pub fn failed(&mut self) {
        self.session.end_iteration();
    }

    /// Take the events recorded so far.
    pub fn take_events(&mut self) -> Vec<Event> {
        self.session.take_events()
    }

    fn active(&self) -> Vec<String> {
        self.session
            .active_skills()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}
