//! A run (SPEC §9.1): a session driven by a host that carries no user
//! messages and no model loop, as an MCP server is. A run is one session and
//! one turn, and every read and every call of a host tool is an iteration of
//! its own, ended when it is answered. The run decides what each answer
//! says; the driver only puts it into its protocol's shapes.

use std::sync::Arc;

use skill_core::ToolResult;
use skill_tools::{ToolDescriptor, read_skill_id};

use crate::graph::Graph;
use crate::record::{Event, Refusal};
use crate::replay::ReplayError;
use crate::session::{
    CallAnswer, ObserveError, Proposed, ReadError, Session, SessionConfig, SkipAnswer,
};

/// What a run's tool list follows: its active skills, and the current
/// step of the procedure in progress.
type Shown = (Vec<String>, Option<Option<usize>>);

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
/// let RunCall::Forward { call } = run.call("lookup_order") else { panic!("triage carries lookup_order") };
/// assert_eq!(call, 2, "the refused call was the first");
/// let answer = run.answered(call, ToolResult { tool_name: "lookup_order".into(), result: r#"{"riskLevel":"high"}"#.into(), status: None })?;
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
    /// Forward the call (it is recorded already), then report its
    /// [answer](Run::answered) or its [failure](Run::failed) under `call`.
    Forward {
        /// The run's number for the call.
        call: u64,
    },
    /// Answer with `text` as a tool error; the iteration has ended.
    Refused {
        /// The teaching refusal.
        text: String,
    },
}

/// What a forwarded call's answer brings, beyond the upstream's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAnswer {
    /// When the answer did a step of the procedure in progress: which,
    /// and the step now current (SPEC §15.9), to follow the upstream's
    /// answer before any body.
    pub step: Option<String>,
    /// When a route moved the run: the new skill's body in its
    /// `<skill_content>` block, to follow the upstream's answer.
    pub body: Option<String>,
    /// Whether the active skills or the procedure's step changed (the
    /// tool list with them).
    pub changed: bool,
}

/// What a `skip_step` call of a run answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSkip {
    /// Whether the step was skipped (else refused, and recorded as a
    /// `call`).
    pub skipped: bool,
    /// The answer for the model.
    pub text: String,
    /// Whether the tool list changed.
    pub changed: bool,
}

impl Run {
    /// A run on `graph` set up by `config`; its one turn has begun.
    pub fn new(graph: Arc<Graph>, config: SessionConfig) -> Self {
        let mut session = Session::with_config(graph, config);
        session.begin_turn("", None);
        Run { session }
    }

    /// The run that `events`, a run's whole record, leave behind: the
    /// record replayed on `graph` ([`resume`](crate::resume)), and checked
    /// to be the record given, event for event, so that the run goes on
    /// exactly where its record stops. Its record so far is not taken
    /// again: [`take_events`](Run::take_events) gives only what comes next.
    ///
    /// # Errors
    ///
    /// [`ReplayError`] when the events cannot be replayed, or
    /// [`ReplayError::Diverged`] when `graph` decides otherwise than the
    /// record says (another map, or a guard that read past the 4 KiB a
    /// result keeps in the record).
    pub fn resume(graph: &Arc<Graph>, events: &[Event]) -> Result<Self, ReplayError> {
        let mut session = crate::resume(graph, events)?;
        let replayed = session.take_events();
        if let Some(index) = crate::first_difference(events, &replayed) {
            return Err(ReplayError::Diverged { index });
        }
        Ok(Run { session })
    }

    /// Catch the run up with `events`, the continuation of its record
    /// that another copy of the run wrote (a replica's steps, SPEC §14.3):
    /// their inputs fed in as a replay feeds them, and the record they
    /// write checked to be `events`, event for event. Nothing pending is
    /// taken first: call it on a run whose events were all taken.
    ///
    /// # Errors
    ///
    /// As [`Run::resume`]; the run is then not to be used again: rebuild
    /// it from its whole record.
    pub fn catch_up(&mut self, events: &[Event]) -> Result<(), ReplayError> {
        crate::replay::feed(&mut self.session, events, 0)?;
        let written = self.session.take_events();
        match crate::first_difference(events, &written) {
            Some(index) => Err(ReplayError::Diverged { index }),
            None => Ok(()),
        }
    }

    /// The session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// `read_skill` and `list_skills` for the run's position, recording the
    /// offer when what the run is shown changed (SPEC §9.2: not on every
    /// list request).
    pub fn tools(&mut self) -> Vec<ToolDescriptor> {
        self.session.tools_if_changed()
    }

    /// A `list_skills` call with `input`: the catalog as that tool lists it.
    /// It is no step of the run: nothing is recorded and no iteration ends.
    ///
    /// # Errors
    ///
    /// The words of the refusal, for the model to read as a tool error:
    /// input the tool's schema refuses, or a map with no skills.
    pub fn list_skills(&self, input: &serde_json::Value) -> Result<String, String> {
        match self.session.graph().list_skills() {
            Some(tool) => tool.execute.call(input).map_err(|err| err.to_string()),
            None => Err("list_skills lists nothing here: this map has no skills".to_owned()),
        }
    }

    /// The list for a client whose list may not vary with the run (MCP's
    /// sessionless generation): see [`Session::stable_tools`]; the upstream
    /// tools to add are those [`lists_stably`](Self::lists_stably) admits.
    pub fn stable_tools(&self) -> Vec<ToolDescriptor> {
        self.session.stable_tools()
    }

    /// Whether a host tool belongs in the stable list (SPEC §9.2).
    pub fn lists_stably(&self, tool: &str) -> bool {
        self.session.lists_stably(tool)
    }

    /// Where the run stands, for answers to a client whose list cannot
    /// show it (SPEC §9.3): see [`Session::position`].
    pub fn position(&self) -> String {
        self.session.position()
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
        let before = self.shown();
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
            changed: self.shown() != before,
        })
    }

    /// A `read_skill` call with its JSON `input` (the tool's arguments), as
    /// a driver that answers the tool itself receives it: the input checked
    /// as the tool's schema says, the id judged by the read gate, and the
    /// iteration ended. Every read is recorded, also one whose input names
    /// no id ([`Refusal::Malformed`]) or names no skill of the map
    /// ([`Refusal::Unknown`]); those are refused with the reason and the
    /// fix, repeating at most 256 bytes of the input.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skill_core::SkillMap;
    /// use skill_session::{Event, Graph, Refusal, Run, SessionConfig};
    ///
    /// let map: SkillMap = serde_json::from_str(r#"{"skills": [{ "id": "faq" }]}"#)?;
    /// let mut run = Run::new(Arc::new(Graph::new(map)?), SessionConfig::default());
    /// let read = run.read_input(&serde_json::json!({ "id": 5 }));
    /// assert!(!read.accepted && read.text.contains("needs a string argument `id`"));
    /// let Some(Event::Read(recorded)) = run.session().events().iter().rev().nth(1) else { panic!() };
    /// assert_eq!((recorded.refusal, recorded.id.as_str()), (Some(Refusal::Malformed), "5"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_input(&mut self, input: &serde_json::Value) -> RunRead {
        // A spent budget refuses every read first (SPEC §15.3).
        if self.session.budget_spent() {
            let given = match (read_skill_id(input), input.get("id")) {
                (Ok(id), _) => id.to_owned(),
                (Err(_), Some(id)) => id.to_string(),
                (Err(_), None) => String::new(),
            };
            let text = match self.session.read_skill(&given) {
                Ok(answer) => answer.text,
                Err(refused) => refused.to_string(),
            };
            self.session.end_iteration();
            return RunRead {
                accepted: false,
                text,
                changed: false,
            };
        }
        let refused = match read_skill_id(input) {
            Ok(id) => match self.read(id) {
                Ok(read) => return read,
                Err(unknown) => {
                    self.session.refuse_read(id, Refusal::Unknown);
                    unknown.to_string()
                }
            },
            Err(malformed) => {
                let given = match input.get("id") {
                    Some(id) => id.to_string(),
                    None => String::new(),
                };
                self.session.refuse_read(&given, Refusal::Malformed);
                malformed.to_string()
            }
        };
        self.session.end_iteration();
        RunRead {
            accepted: false,
            text: refused,
            changed: false,
        }
    }

    /// A `skip_step` call with its JSON `input` (SPEC §15.2): judged and
    /// answered by the session, the iteration ended. An input whose reason
    /// is missing, blank or not a string is refused `skip-needs-reason`.
    pub fn skip_step(&mut self, input: &serde_json::Value) -> RunSkip {
        let before = self.shown();
        let reason = skill_tools::SkipStepCall.call(input).ok();
        let (skipped, text) = match self.session.skip_step(reason.as_deref()) {
            SkipAnswer::Skipped { text, .. } => (true, text),
            SkipAnswer::Refused { text, .. } => (false, text),
        };
        self.session.end_iteration();
        RunSkip {
            skipped,
            text,
            changed: self.shown() != before,
        }
    }

    /// A call of the host tool `tool`, judged by the call gate and
    /// recorded, an accepted call before it is made. A refusal ends the
    /// iteration.
    pub fn call(&mut self, tool: &str) -> RunCall {
        match self.session.call_tool(tool) {
            CallAnswer::Admitted { call } => RunCall::Forward { call },
            CallAnswer::Refused { text, .. } => {
                self.session.end_iteration();
                RunCall::Refused { text }
            }
        }
    }

    /// The answer of the forwarded call numbered `call`: observed, routed,
    /// the iteration ended.
    ///
    /// # Errors
    ///
    /// [`ObserveError::CallNotOpen`] when `call` is no open call of the
    /// result's tool (a number [`call`](Self::call) never gave, or one
    /// already answered); nothing is recorded and no iteration ends.
    pub fn answered(&mut self, call: u64, result: ToolResult) -> Result<RunAnswer, ObserveError> {
        let before = self.shown();
        let mark = self.session.events().len();
        self.session.observe_call(call, result)?;
        Ok(self.end_answered(before, mark))
    }

    /// [`answered`](Self::answered), the answer proposing a move (SPEC
    /// §15.6): judged, recorded, and, accepted, the iteration's move unless
    /// a route fires.
    ///
    /// # Errors
    ///
    /// As [`answered`](Self::answered).
    pub fn answered_proposing(
        &mut self,
        call: u64,
        result: ToolResult,
        proposed: Proposed,
    ) -> Result<RunAnswer, ObserveError> {
        let before = self.shown();
        let mark = self.session.events().len();
        self.session
            .observe_proposed(Some(call), result, proposed)?;
        Ok(self.end_answered(before, mark))
    }

    /// A forwarded call of `tool` the client cancelled: recorded as
    /// cancelled, the iteration ended, and nothing moves (SPEC §9.5).
    ///
    /// # Errors
    ///
    /// As [`answered`](Self::answered).
    pub fn cancelled(&mut self, call: u64, tool: &str) -> Result<(), ObserveError> {
        self.session.observe_cancelled(tool, Some(call))?;
        self.session.end_iteration();
        Ok(())
    }

    /// The forwarded call numbered `call`, closed by the server for its
    /// client, for `reason` (SPEC §14.4: `replica-lost`, `drain`,
    /// `store-unreachable`): recorded as cancelled with the reason, the
    /// iteration ended, and nothing moves. `false` when no call of that
    /// number is open (it was answered meanwhile): nothing is recorded.
    pub fn lost(&mut self, call: u64, reason: &str) -> bool {
        let Some(tool) = self.session.open_call_tool(call).map(str::to_owned) else {
            return false;
        };
        if self.session.observe_lost(&tool, call, reason).is_err() {
            return false;
        }
        self.session.end_iteration();
        true
    }

    /// A forwarded call of `tool` whose upstream asked the client for
    /// input instead of answering (MCP's `input_required`): recorded, the
    /// iteration ended, and nothing moves; the client's retry, with its
    /// answers, is a call of its own (SPEC §9.5).
    ///
    /// # Errors
    ///
    /// As [`answered`](Self::answered).
    pub fn input_required(&mut self, call: u64, tool: &str) -> Result<(), ObserveError> {
        self.session.observe_input_required(tool, Some(call))?;
        self.session.end_iteration();
        Ok(())
    }

    /// End an answered call's iteration: a move by a route brings the new
    /// skill's body; `before` is what was active when the call came.
    fn end_answered(&mut self, before: Shown, mark: usize) -> RunAnswer {
        let step = self
            .session
            .events()
            .get(mark..)
            .unwrap_or_default()
            .iter()
            .find_map(|event| match event {
                Event::Step(step) => Some(self.session.step_said(step)),
                _ => None,
            });
        let moved = self.session.end_iteration();
        // A move by a route or an accepted proposal brings the new skill's
        // body (SPEC §9.6, §15.6).
        let body = match (moved.by, moved.to.clone()) {
            (crate::MoveBy::Route | crate::MoveBy::Tool, Some(to)) => self.session.body_block(&to),
            _ => None,
        };
        RunAnswer {
            step,
            body,
            changed: self.shown() != before,
        }
    }

    /// A forwarded call of `tool` that failed instead of answering, for
    /// `error`: recorded as a `failure` result with the error (SPEC §9.7),
    /// routed as one (routes on `failure` fire), and the iteration ended.
    ///
    /// # Errors
    ///
    /// As [`answered`](Self::answered).
    pub fn failed(
        &mut self,
        call: u64,
        tool: &str,
        error: &str,
    ) -> Result<RunAnswer, ObserveError> {
        let before = self.shown();
        let mark = self.session.events().len();
        self.session.observe_failure(tool, Some(call), error)?;
        Ok(self.end_answered(before, mark))
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

    /// What the tool list follows: the active skills and the procedure's
    /// current step.
    fn shown(&self) -> Shown {
        (self.active(), self.session.procedure().map(|p| p.step))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skill_core::SkillMap;

    use super::*;
    use crate::record::{CallPolicy, CallRefusal};
    use crate::replay;
    use crate::session::INPUT_REQUIRED;

    fn graph() -> Arc<Graph> {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [
                {"id": "triage", "tools": [{"name": "lookup_order"}]},
                {"id": "refunds", "body": "first body", "tools": [{"name": "issue_refund"}]},
                {"id": "refunds", "body": "last body", "surface_mode": "system-prompt"},
                {"id": "audit", "trigger": "rule", "tools": [{"name": "issue_refund"}]},
                {"id": "vault", "tools": [{"name": "open_vault"}]}
            ],
            "entries": ["triage"],
            "routes": [{"from": "triage", "to": "refunds", "guard": {"risk": {"eq": "high"}}}]
        }))
        .unwrap();
        Arc::new(Graph::new(map).unwrap())
    }

    fn run(tools: CallPolicy, hidden: &[&str]) -> Run {
        Run::new(
            graph(),
            SessionConfig {
                tools,
                hidden: hidden.iter().map(|id| (*id).to_owned()).collect(),
                ..SessionConfig::default()
            },
        )
    }

    #[test]
    fn a_resumed_run_goes_on_exactly_as_the_run_it_was_rebuilt_from() {
        let mut original = run(CallPolicy::Scoped, &[]);
        assert_eq!(original.call("lookup_order"), RunCall::Forward { call: 1 });
        let high = || ToolResult {
            tool_name: "lookup_order".into(),
            result: r#"{"risk":"high"}"#.into(),
            status: None,
        };
        original.answered(1, high()).unwrap();
        assert_eq!(original.call("lookup_order"), RunCall::Forward { call: 2 });
        let so_far = original.take_events();

        let mut resumed = Run::resume(original.session().graph(), &so_far).unwrap();
        assert!(
            resumed.take_events().is_empty(),
            "the record is not given twice"
        );
        assert_eq!(resumed.session().cursor(), original.session().cursor());
        // Call 2 is open in both; both close it and go on alike.
        for run in [&mut original, &mut resumed] {
            run.answered(2, high()).unwrap();
            run.call("issue_refund");
        }
        assert_eq!(original.take_events(), resumed.take_events());
    }

    #[test]
    fn a_call_the_server_closes_for_its_client_is_cancelled_with_its_reason_and_replays() {
        let mut run = run(CallPolicy::Scoped, &[]);
        assert_eq!(run.call("lookup_order"), RunCall::Forward { call: 1 });
        assert!(run.lost(1, "replica-lost"));
        assert!(!run.lost(1, "replica-lost"), "closed once");
        assert!(!run.lost(7, "drain"), "never opened");
        let events = run.take_events();
        let closed: Vec<_> = events
            .iter()
            .filter_map(|event| match event {
                Event::Result(result) => Some(result),
                _ => None,
            })
            .collect();
        assert_eq!(closed.len(), 1);
        assert_eq!(closed[0].error.as_deref(), Some(crate::session::CANCELLED));
        assert_eq!(closed[0].reason.as_deref(), Some("replica-lost"));
        assert_eq!(closed[0].status, None);
        assert_eq!(run.session().cursor(), Some("triage"), "nothing moved");
        assert_eq!(replay(run.session().graph(), &events).unwrap(), events);
    }

    #[test]
    fn a_run_caught_up_with_another_copy_s_steps_is_that_copy() {
        let mut ahead = run(CallPolicy::Scoped, &[]);
        let started = ahead.take_events();
        let mut behind = Run::resume(ahead.session().graph(), &started).unwrap();
        let high = ToolResult {
            tool_name: "lookup_order".into(),
            result: r#"{"risk":"high"}"#.into(),
            status: None,
        };
        assert_eq!(ahead.call("lookup_order"), RunCall::Forward { call: 1 });
        ahead.answered(1, high).unwrap();
        let continuation = ahead.take_events();
        behind.catch_up(&continuation).unwrap();
        assert_eq!(behind.session().cursor(), Some("refunds"));
        for run in [&mut ahead, &mut behind] {
            assert_eq!(run.call("issue_refund"), RunCall::Forward { call: 2 });
        }
        assert_eq!(ahead.take_events(), behind.take_events());
    }

    #[test]
    fn a_record_this_map_decides_otherwise_is_not_resumed() {
        let mut original = run(CallPolicy::Scoped, &[]);
        assert_eq!(original.call("lookup_order"), RunCall::Forward { call: 1 });
        let result = ToolResult {
            tool_name: "lookup_order".into(),
            result: r#"{"risk":"high"}"#.into(),
            status: None,
        };
        original.answered(1, result).unwrap();
        let events = original.take_events();
        // The same skills without the route: the answer moves nothing.
        let unrouted: SkillMap = serde_json::from_value(json!({
            "skills": [
                {"id": "triage", "tools": [{"name": "lookup_order"}]},
                {"id": "refunds", "body": "first body", "tools": [{"name": "issue_refund"}]}
            ],
            "entries": ["triage"]
        }))
        .unwrap();
        let other = Arc::new(Graph::new(unrouted).unwrap());
        let rebuilt = Run::resume(&other, &events);
        assert!(
            matches!(rebuilt, Err(ReplayError::Diverged { .. })),
            "{rebuilt:?}"
        );
    }

    #[test]
    fn a_call_that_needs_input_moves_nothing_and_replays() {
        let mut run = run(CallPolicy::Scoped, &[]);
        assert_eq!(run.call("lookup_order"), RunCall::Forward { call: 1 });
        run.input_required(1, "lookup_order").unwrap();
        assert_eq!(run.session().cursor(), Some("triage"), "nothing moved");
        assert_eq!(run.session().iteration(), 2, "the attempt was an iteration");
        let events = run.take_events();
        assert!(events.iter().any(|event| matches!(
            event,
            Event::Result(result) if result.error.as_deref() == Some(INPUT_REQUIRED) && result.status.is_none()
        )));
        assert_eq!(replay(run.session().graph(), &events).unwrap(), events);
    }

    #[test]
    fn a_failed_call_is_a_failure_result_that_routes_and_replays() {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [
                {"id": "triage", "tools": [{"name": "lookup_order"}]},
                {"id": "fallback", "body": "Say the desk is down."}
            ],
            "entries": ["triage"],
            "routes": [{"from": "triage", "to": "fallback", "on_tool_status": ["failure"]}]
        }))
        .unwrap();
        let mut run = Run::new(Arc::new(Graph::new(map).unwrap()), SessionConfig::default());
        assert_eq!(run.call("lookup_order"), RunCall::Forward { call: 1 });
        let answer = run
            .failed(1, "lookup_order", "upstream \"desk\" timed out after 60 s")
            .unwrap();
        assert!(answer.changed);
        assert_eq!(
            answer.body.as_deref(),
            Some(r#"<skill_content name="fallback">Say the desk is down.</skill_content>"#)
        );
        let events = run.take_events();
        let result = events
            .iter()
            .find_map(|event| match event {
                Event::Result(result) => Some(result.clone()),
                _ => None,
            })
            .expect("a result event");
        assert_eq!(result.status.as_deref(), Some("failure"));
        assert_eq!(
            result.error.as_deref(),
            Some("upstream \"desk\" timed out after 60 s")
        );
        assert!(
            Event::Result(result.clone())
                .to_line()
                .contains(r#""error":"upstream"#)
        );
        assert_eq!(replay(run.session().graph(), &events).unwrap(), events);
    }

    fn replays_to_itself(run: &mut Run) {
        let events = run.take_events();
        assert_eq!(replay(run.session().graph(), &events).unwrap(), events);
    }

    #[test]
    fn a_read_answers_with_the_last_skill_of_its_id_whatever_its_mode() {
        let mut run = run(CallPolicy::Scoped, &[]);
        let read = run.read("refunds").unwrap();
        assert!(read.accepted && read.changed);
        assert_eq!(
            read.text,
            r#"<skill_content name="refunds">last body</skill_content>"#
        );
        assert_eq!(run.session().iteration(), 2, "a read is an iteration");
        replays_to_itself(&mut run);
    }

    #[test]
    fn strict_refuses_a_tool_no_active_skill_carries_records_it_and_ends_the_iteration() {
        let mut run = run(CallPolicy::Strict, &["vault"]);
        let RunCall::Refused { text } = run.call("issue_refund") else {
            panic!("refused under strict");
        };
        assert!(
            text.contains("skill 'refunds'; read_skill can take it from here"),
            "{text}"
        );
        assert!(
            text.contains("Skill 'audit' carries it too, but read_skill cannot take it from here"),
            "{text}"
        );
        let RunCall::Refused { text } = run.call("open_vault") else {
            panic!("refused under strict");
        };
        assert!(
            !text.contains("vault'"),
            "a hidden skill is never named: {text}"
        );
        assert_eq!(run.session().iteration(), 3);
        let events = run.session().events();
        let Some(Event::Call(call)) = events.iter().find(|e| e.kind() == "call") else {
            panic!("a call event: {events:?}");
        };
        assert_eq!(
            (
                call.call,
                call.accepted,
                call.refusal,
                call.allowed.as_deref()
            ),
            (
                Some(1),
                false,
                Some(CallRefusal::NotOffered),
                Some(&["refunds".to_owned(), "audit".to_owned()][..])
            )
        );
        replays_to_itself(&mut run);
    }

    #[test]
    fn all_counts_every_call_as_offered_and_scoped_marks_the_rest() {
        for (policy, offered) in [(CallPolicy::All, true), (CallPolicy::Scoped, false)] {
            let mut run = run(policy, &[]);
            assert_eq!(run.call("issue_refund"), RunCall::Forward { call: 1 });
            assert_eq!(run.offers("issue_refund"), offered);
            let answer = run.answered(
                1,
                ToolResult {
                    tool_name: "issue_refund".into(),
                    result: "{}".into(),
                    status: None,
                },
            );
            assert_eq!(
                answer.unwrap(),
                RunAnswer {
                    step: None,
                    body: None,
                    changed: false
                }
            );
            let recorded = run.session().events().iter().find_map(|e| match e {
                Event::Result(result) => Some(result.offered),
                _ => None,
            });
            assert_eq!(recorded, Some(offered), "{policy:?}");
            replays_to_itself(&mut run);
        }
    }

    #[test]
    fn a_cancelled_call_moves_nothing_even_with_a_failure_route() {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [{"id": "triage", "tools": [{"name": "lookup_order"}]}, {"id": "fallback"}],
            "entries": ["triage"],
            "routes": [{"from": "triage", "to": "fallback", "on_tool_status": ["failure"]}]
        }))
        .unwrap();
        let mut run = Run::new(Arc::new(Graph::new(map).unwrap()), SessionConfig::default());
        assert_eq!(run.call("lookup_order"), RunCall::Forward { call: 1 });
        run.cancelled(1, "lookup_order").unwrap();
        assert_eq!(run.session().cursor(), Some("triage"));
        let events = run.take_events();
        assert!(events.iter().any(|event| matches!(event, Event::Result(result) if result.error.as_deref() == Some("cancelled"))));
        assert_eq!(replay(run.session().graph(), &events).unwrap(), events);
    }

    #[test]
    fn a_failed_call_ends_its_iteration_and_moves_nothing_without_a_failure_route() {
        let mut run = run(CallPolicy::Scoped, &[]);
        assert_eq!(run.call("lookup_order"), RunCall::Forward { call: 1 });
        let answer = run
            .failed(1, "lookup_order", "the upstream has stopped")
            .unwrap();
        assert_eq!((answer.body, answer.changed), (None, false));
        assert_eq!(
            (run.session().iteration(), run.session().cursor()),
            (2, Some("triage"))
        );
        replays_to_itself(&mut run);
    }

    fn result(tool: &str, text: &str) -> ToolResult {
        ToolResult {
            tool_name: tool.into(),
            result: text.into(),
            status: None,
        }
    }

    #[test]
    fn an_accepted_call_is_recorded_before_its_result_and_the_result_carries_its_number() {
        let mut run = run(CallPolicy::Scoped, &[]);
        let RunCall::Forward { call } = run.call("lookup_order") else {
            panic!("triage carries lookup_order");
        };
        // Before any answer, the record already shows the call, open.
        let events = run.session().events();
        let Some(Event::Call(open)) = events.last() else {
            panic!("the call is the last event: {events:?}");
        };
        assert_eq!(
            (
                open.call,
                open.accepted,
                open.refusal,
                open.allowed.as_ref()
            ),
            (Some(call), true, None, None)
        );
        assert_eq!(run.session().open_calls().collect::<Vec<_>>(), [call]);
        assert!(
            Event::Call(open.clone())
                .to_line()
                .contains(r#""tool_name":"lookup_order","call":1,"accepted":true"#)
        );
        run.answered(call, result("lookup_order", "{}")).unwrap();
        assert_eq!(run.session().open_calls().count(), 0);
        let answered = run.session().events().iter().find_map(|event| match event {
            Event::Result(result) => Some(result.call),
            _ => None,
        });
        assert_eq!(answered, Some(Some(call)));
        replays_to_itself(&mut run);
    }

    #[test]
    fn an_answer_for_a_call_that_is_not_open_is_refused_and_ends_no_iteration() {
        let mut run = run(CallPolicy::Scoped, &[]);
        let RunCall::Forward { call } = run.call("lookup_order") else {
            panic!("triage carries lookup_order");
        };
        run.answered(call, result("lookup_order", "{}")).unwrap();
        let iteration = run.session().iteration();
        let recorded = run.session().events().len();
        for refused in [
            run.answered(call, result("lookup_order", "again"))
                .map(|_| ()),
            run.failed(call, "lookup_order", "down").map(|_| ()),
            run.cancelled(call, "lookup_order"),
            run.input_required(call + 1, "lookup_order"),
        ] {
            assert_eq!(
                refused.map_err(|error| error.code()),
                Err("result-call-not-open")
            );
        }
        assert_eq!(run.session().iteration(), iteration, "no iteration ended");
        assert_eq!(run.session().events().len(), recorded, "nothing recorded");
        replays_to_itself(&mut run);
    }

    #[test]
    fn calls_answered_out_of_order_keep_their_numbers() {
        let mut run = run(CallPolicy::Scoped, &[]);
        assert_eq!(run.call("lookup_order"), RunCall::Forward { call: 1 });
        assert_eq!(run.call("lookup_order"), RunCall::Forward { call: 2 });
        run.answered(2, result("lookup_order", "second")).unwrap();
        run.answered(1, result("lookup_order", "first")).unwrap();
        let answered: Vec<_> = run
            .session()
            .events()
            .iter()
            .filter_map(|event| match event {
                Event::Result(result) => Some((result.call, result.result.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            answered,
            [
                (Some(2), "second".to_owned()),
                (Some(1), "first".to_owned())
            ]
        );
        replays_to_itself(&mut run);
    }

    #[test]
    fn a_record_written_before_calls_were_numbered_replays_to_itself() {
        // Such a record has refused calls without `call` or `accepted`, and
        // results without `call`: replay writes none of them.
        let mut run = run(CallPolicy::Strict, &[]);
        let _ = run.call("issue_refund");
        let RunCall::Forward { call } = run.call("lookup_order") else {
            panic!("triage carries lookup_order");
        };
        run.answered(call, result("lookup_order", "{}")).unwrap();
        let old: Vec<Event> = run
            .take_events()
            .into_iter()
            .filter_map(|event| match event {
                Event::Call(call) if call.accepted => None,
                Event::Call(mut call) => {
                    call.call = None;
                    let line = Event::Call(call)
                        .to_line()
                        .replace(r#","accepted":false"#, "");
                    serde_json::from_str::<Event>(&line).ok()
                }
                Event::Result(mut result) => {
                    result.call = None;
                    Some(Event::Result(result))
                }
                other => Some(other),
            })
            .collect();
        assert!(old.iter().any(|event| event.kind() == "call"));
        assert_eq!(replay(run.session().graph(), &old).unwrap(), old);
    }

    #[test]
    fn malformed_and_unknown_reads_are_recorded_refused_and_replay() {
        let mut run = run(CallPolicy::Scoped, &[]);
        let huge = "x".repeat(5_000);
        for input in [
            json!({}),
            json!({"id": 5}),
            json!({"id": huge}),
            json!("id"),
        ] {
            let read = run.read_input(&input);
            assert!(!read.accepted && !read.changed);
            assert!(read.text.len() < 600, "{} bytes", read.text.len());
        }
        let refusals: Vec<_> = run
            .session()
            .events()
            .iter()
            .filter_map(|event| match event {
                Event::Read(read) => Some((read.refusal, read.id.len())),
                _ => None,
            })
            .collect();
        assert_eq!(
            refusals,
            [
                (Some(Refusal::Malformed), 0),
                (Some(Refusal::Malformed), 1),
                (Some(Refusal::Unknown), 256),
                (Some(Refusal::Malformed), 0)
            ]
        );
        assert_eq!(run.session().iteration(), 5, "each read was an iteration");
        replays_to_itself(&mut run);
    }
}
