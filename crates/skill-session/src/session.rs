//! The session (SPEC §8.1–8.3): one conversation on one graph. It judges
//! reads, collects results, moves the cursor once per iteration, answers
//! what the model may be shown, and appends every step to its record.

mod budget;
mod escalation;
mod procedure;
mod propose;

pub use procedure::{Procedure, SkipAnswer};
pub use propose::Proposed;

use std::sync::Arc;

use skill_core::{
    Menu, ReadSkillOffer, ResultStatus, Skill, SurfaceMode, TargetClass, ToolResult, nearest,
    suggestion,
};
use skill_guard::Iteration;
use skill_tools::{OwnedOfferView, ToolDescriptor, offer_view, read_skill_within};

use crate::call_gate::{CallVerdict, judge_call};
use crate::gate::Gate;
use crate::graph::Graph;
use crate::record::{
    CallEvent, CallPolicy, CallRefusal, ConflictBy, ConflictRecord, Event, GateKind, GuardRecord,
    Limits, MoveBy, MoveEvent, OfferEvent, Posture, ProposalMove, ReadEvent, Refusal, ResultEvent,
    RoutedRecord, StartEvent, TurnEvent, head, head_within,
};

/// A skill's body as the model is shown it outside a tool answer: inside
/// `<skill_content name="ID">…</skill_content>` (the system prompt's
/// blocks, a read's answer, and a host that brings a body some other way,
/// as an MCP server does after a move). A skill whose files can be reached
/// opens its block with a line saying where: the resources a server serves
/// them as (`skill://ID/`), the folder it was read from, or both, so that
/// the body's relative paths (`scripts/…`, `references/…`) can be followed
/// (SPEC §9.6).
///
/// ```
/// use skill_core::Skill;
///
/// let mut faq = Skill::new("faq");
/// faq.body = "Be brief.".into();
/// assert_eq!(skill_session::skill_content(&faq), r#"<skill_content name="faq">Be brief.</skill_content>"#);
/// faq.folder = Some("/srv/skills/faq".into());
/// assert_eq!(
///     skill_session::skill_content(&faq),
///     "<skill_content name=\"faq\">Skill folder: /srv/skills/faq (relative paths in this skill start there)\n\nBe brief.</skill_content>"
/// );
/// faq.files_uri = Some("skill://faq/".into());
/// assert!(skill_session::skill_content(&faq).contains(
///     "Skill files: the resources skill://faq/PATH, or the folder /srv/skills/faq"
/// ));
/// ```
pub fn skill_content(skill: &Skill) -> String {
    let id = &skill.id;
    let body = &skill.body;
    const RELATIVE: &str = "(relative paths in this skill start there)";
    let place = match (&skill.files_uri, &skill.folder) {
        (Some(uri), Some(folder)) => Some(format!(
            "Skill files: the resources {uri}PATH, or the folder {folder} {RELATIVE}"
        )),
        (Some(uri), None) => Some(format!("Skill files: the resources {uri}PATH {RELATIVE}")),
        (None, Some(folder)) => Some(format!("Skill folder: {folder} {RELATIVE}")),
        (None, None) => None,
    };
    match place {
        Some(place) => {
            format!("<skill_content name=\"{id}\">{place}\n\n{body}</skill_content>")
        }
        None => format!("<skill_content name=\"{id}\">{body}</skill_content>"),
    }
}

/// The `error` of a `result` event for a call the client cancelled.
pub const CANCELLED: &str = "cancelled";

/// The `error` of a `result` event for a call whose upstream asked the
/// client for input first (MCP's `input_required`, SPEC §9.5): the client's
/// retry is a call of its own.
pub const INPUT_REQUIRED: &str = "input-required";

/// How a session is set up: fixed for its whole life, and written in its
/// record's `start` event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionConfig {
    /// How reads of hops are judged.
    pub posture: Posture,
    /// The ids hidden from the model (the host's role filter).
    pub hidden: Vec<String>,
    /// Which calls of host tools are accepted (SPEC §9.3).
    pub tools: CallPolicy,
    /// The most iterations a turn takes, over the map's `budget` (SPEC
    /// §15.3: `play` and `serve`'s `--max-iterations`): `Some(0)` sets
    /// none; `None` takes the map's.
    pub max_iterations: Option<u64>,
    /// After how many refusals a turn escalates, over the map's
    /// `escalation` (SPEC §15.5; a replay gives the record's): `Some(0)`
    /// never; `None` takes the map's, else 3.
    pub after_refusals: Option<u64>,
    /// The roles the run took (SPEC §14.8, as `skill_core::roles_taken`
    /// gives them): the skills all of them hide are withheld, for this
    /// session ids the map lacks ([`Graph::for_roles`]). Empty on a map
    /// without roles.
    pub roles: Vec<String>,
}

impl SessionConfig {
    /// Whether the skill `id` is hidden from the model: no answer, list or
    /// served file may name it (SPEC §6.3).
    pub fn hides(&self, id: &str) -> bool {
        self.hidden.iter().any(|hidden| hidden == id)
    }

    /// This config for a client whose tool list may not vary with the run
    /// (MCP's sessionless generation, SPEC §9.3): the list no longer
    /// scopes, so the gate must, and `scoped` becomes `strict`; `strict`
    /// and `all` stay as they are.
    ///
    /// ```
    /// use skill_session::{CallPolicy, SessionConfig};
    ///
    /// let scoped = SessionConfig::default();
    /// assert_eq!(scoped.for_stable_list().tools, CallPolicy::Strict);
    /// let all = SessionConfig { tools: CallPolicy::All, ..SessionConfig::default() };
    /// assert_eq!(all.for_stable_list().tools, CallPolicy::All);
    /// ```
    #[must_use]
    pub fn for_stable_list(mut self) -> Self {
        if self.tools == CallPolicy::Scoped {
            self.tools = CallPolicy::Strict;
        }
        self
    }
}

/// A read the session cannot judge: the host passed an id outside the
/// catalog (the `read_skill` schema's `enum` would have refused it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The id is not a skill of the map.
    #[error("read_skill was called with {}, which is not a skill of this map{}; pass one of the ids in read_skill's schema", shown_id(.id), suggestion(.nearest.as_deref()))]
    UnknownSkill {
        /// The id as given.
        id: String,
        /// The nearest id the session may name, when one is close.
        nearest: Option<String>,
    },
}

/// The longest unknown id an answer repeats back; a longer one is only
/// measured, so that a huge id is never echoed.
pub const MAX_ID_ECHO: usize = 256;

/// `id "x"`, or `an id of N bytes` past [`MAX_ID_ECHO`].
fn shown_id(id: &str) -> String {
    if id.len() > MAX_ID_ECHO {
        format!("an id of {} bytes", id.len())
    } else {
        format!("id \"{id}\"")
    }
}

impl ReadError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ReadError::UnknownSkill { .. } => "read-unknown-skill",
        }
    }
}

/// A result the session cannot take: the host named a call the result
/// cannot answer. Nothing is recorded and nothing is routed, so that every
/// `result` the record holds answers the call it names (SPEC §8.4) and the
/// record replays to itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ObserveError {
    /// `call` is no open call of `tool`: a number the call gate never gave,
    /// one it gave a call of another tool, or one already answered.
    #[error("a result of {} gives call {call}, which is not an open call of that tool (open calls of {}: {}); pass the number call_tool gave the call, once, or observe the result with no number", shown_tool(.tool), shown_tool(.tool), shown_calls(.open))]
    CallNotOpen {
        /// The tool whose result it is (as given).
        tool: String,
        /// The number the result gave.
        call: u64,
        /// The open calls of `tool`, oldest first.
        open: Vec<u64>,
    },
}

impl ObserveError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            ObserveError::CallNotOpen { .. } => "result-call-not-open",
        }
    }
}

/// `"x"`, or `a tool name of N bytes` past [`MAX_ID_ECHO`].
fn shown_tool(tool: &str) -> String {
    if tool.len() > MAX_ID_ECHO {
        format!("a tool name of {} bytes", tool.len())
    } else {
        format!("\"{tool}\"")
    }
}

/// The open calls an answer names, at most [`SHOWN_CALLS`] of them; `none`
/// when there are none.
fn shown_calls(open: &[u64]) -> String {
    let shown: Vec<String> = open.iter().take(SHOWN_CALLS).map(u64::to_string).collect();
    match open.len() {
        0 => "none".to_owned(),
        n if n > SHOWN_CALLS => format!("{}, … and {} more", shown.join(", "), n - SHOWN_CALLS),
        _ => shown.join(", "),
    }
}

/// How many open calls an [`ObserveError`] names.
const SHOWN_CALLS: usize = 10;

/// What one call of a host tool gets from the call gate.
#[derive(Debug, Clone, PartialEq)]
pub enum CallAnswer {
    /// The call may go ahead and is recorded (a `call` event, before it is
    /// made): make it, then [`Session::observe`] its result.
    Admitted {
        /// The run's number for the call, which its result carries.
        call: u64,
    },
    /// The call is refused and recorded (a `call` event): answer the model
    /// with `text`, a teaching refusal, as a tool error.
    Refused {
        /// The teaching refusal.
        text: String,
        /// The refusal as the record holds it.
        call: CallEvent,
        /// Whether this refusal brought the turn's refusals to the
        /// escalation's count (SPEC §15.5).
        escalated: bool,
    },
}

/// What one `read_skill` call answers, and the verdict as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadAnswer {
    /// What the model reads back: a body, a confirmation, a notice or a
    /// teaching refusal.
    pub text: String,
    /// The gate's verdict, as the record's `read` event holds it.
    pub read: ReadEvent,
    /// Whether this read's refusal brought the turn's refusals to the
    /// escalation's count (SPEC §15.5).
    pub escalated: bool,
}

impl ReadAnswer {
    /// Whether the gate accepted the read.
    pub fn accepted(&self) -> bool {
        self.read.accepted
    }
}

/// One conversation on one graph.
///
/// ```
/// use std::sync::Arc;
/// use skill_core::{SkillMap, ToolResult};
/// use skill_session::{Graph, MoveBy, Posture, Session};
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage", "tools": [{ "name": "lookup_order" }] }, { "id": "refunds" }],
///     "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "riskLevel": { "eq": "high" } } }]
/// }"#)?;
/// let graph = Arc::new(Graph::new(map)?);
/// let mut session = Session::new(graph, Posture::Assist, Vec::new());
/// session.begin_turn("refund order 4412", None);
/// assert_eq!(session.visible_tools(), ["lookup_order"]);
/// session.observe(ToolResult { tool_name: "lookup_order".into(), result: r#"{"riskLevel":"high"}"#.into(), status: None });
/// let moved = session.end_iteration();
/// assert_eq!((moved.by, session.cursor()), (MoveBy::Route, Some("refunds")));
/// let lines: Vec<String> = session.take_events().iter().map(|e| e.to_line()).collect();
/// assert_eq!(lines.len(), 4); // start, turn, result, move
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Session {
    graph: Arc<Graph>,
    posture: Posture,
    hidden: Vec<String>,
    policy: CallPolicy,
    cursor: Option<String>,
    iteration: u64,
    message: String,
    menu: Option<Menu>,
    menu_outstanding: bool,
    /// Skills activated by accepted reads in this turn, in order.
    activated: Vec<String>,
    /// This iteration's results, in call order.
    results: Vec<ToolResult>,
    pick: Option<String>,
    /// The offer view last recorded (boxed: an idle session stays small).
    last_offer: Option<Box<OwnedOfferView>>,
    /// How many calls the call gate has judged.
    calls: u64,
    /// Whether calls are numbered and accepted ones recorded (off only to
    /// replay a record written before they were, SPEC §8.4).
    numbered: bool,
    /// The accepted calls whose result has not come yet: number and tool.
    open: Vec<(u64, String)>,
    /// Where the procedure of the cursor's skill stands (SPEC §15.1).
    pointer: Option<procedure::Pointer>,
    /// This iteration's accepted proposals, in the order observed.
    proposals: Vec<ProposalMove>,
    /// The most iterations a turn takes, in effect (SPEC §15.3).
    max_iterations: Option<u64>,
    /// The iteration the turn began in.
    turn_start: u64,
    /// Whether this turn's spent budget was recorded already.
    budget_told: bool,
    /// After how many refusals a turn escalates (0: never).
    after_refusals: u64,
    /// This turn's refusals counted so far, until it escalates.
    refusals: Vec<crate::record::CountedRefusal>,
    /// This turn's escalation, once recorded.
    escalated: Option<crate::record::EscalatedEvent>,
    events: Vec<Event>,
}

impl Session {
    /// A session on `graph` with `posture`, hiding `hidden_ids` from the
    /// model (the host's role filter), under the `scoped` call policy. The
    /// cursor starts on the map's first entry (none without one); the record
    /// opens with `start`.
    pub fn new(graph: Arc<Graph>, posture: Posture, hidden_ids: Vec<String>) -> Self {
        Session::with_config(
            graph,
            SessionConfig {
                posture,
                hidden: hidden_ids,
                tools: CallPolicy::Scoped,
                roles: Vec::new(),
                max_iterations: None,
                after_refusals: None,
            },
        )
    }

    /// A session on `graph` set up by `config`.
    pub fn with_config(graph: Arc<Graph>, config: SessionConfig) -> Self {
        let SessionConfig {
            posture,
            hidden,
            tools,
            roles,
            max_iterations,
            after_refusals,
        } = config;
        let graph = graph.for_roles(&roles);
        let max_iterations = match max_iterations {
            Some(0) => None,
            Some(max) => Some(max),
            None => graph
                .map()
                .budget
                .as_ref()
                .and_then(skill_core::Budget::max_iterations),
        };
        let after_refusals = after_refusals.unwrap_or_else(|| {
            graph
                .map()
                .escalation
                .as_ref()
                .and_then(skill_core::Escalation::after_refusals)
                .unwrap_or(escalation::DEFAULT_AFTER_REFUSALS)
        });
        let limits = (max_iterations.is_some() || after_refusals > 0).then_some(Limits {
            max_iterations,
            after_refusals,
        });
        let cursor = graph.map().entries.first().cloned();
        let start = Event::Start(StartEvent {
            iteration: 1,
            cursor: cursor.clone(),
            posture,
            hidden: hidden.clone(),
            tools,
            limits,
            roles,
            map: Arc::clone(graph.declared()),
        });
        let mut session = Session {
            graph,
            posture,
            hidden,
            policy: tools,
            cursor,
            iteration: 1,
            message: String::new(),
            menu: None,
            menu_outstanding: false,
            activated: Vec::new(),
            results: Vec::new(),
            pick: None,
            last_offer: None,
            calls: 0,
            numbered: true,
            open: Vec::new(),
            pointer: None,
            proposals: Vec::new(),
            max_iterations,
            turn_start: 1,
            budget_told: false,
            after_refusals,
            refusals: Vec::new(),
            escalated: None,
            events: vec![start],
        };
        session.pointer = session.pointer_at(session.cursor.clone().as_deref());
        session
    }

    /// The graph.
    pub fn graph(&self) -> &Arc<Graph> {
        &self.graph
    }

    /// The posture.
    pub fn posture(&self) -> Posture {
        self.posture
    }

    /// The call policy.
    pub fn call_policy(&self) -> CallPolicy {
        self.policy
    }

    /// The ids hidden from this session.
    pub fn hidden_ids(&self) -> &[String] {
        &self.hidden
    }

    /// The skill the cursor stands on.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }

    /// The current iteration's number (from 1, counted across turns).
    pub fn iteration(&self) -> u64 {
        self.iteration
    }

    /// This iteration's pending pick: the last accepted read of a hop.
    pub fn pending_pick(&self) -> Option<&str> {
        self.pick.as_deref()
    }

    /// The turn's menu, while it is outstanding (from `begin_turn` until the
    /// cursor first moves).
    pub fn outstanding_menu(&self) -> Option<&Menu> {
        self.menu.as_ref().filter(|_| self.menu_outstanding)
    }

    /// Start a turn: the user's `message` and the host's advisory `menu`.
    /// Skills activated by reads in the previous turn stop being active;
    /// results observed but not yet routed stay in the batch.
    ///
    /// The map's start rules are tried first, by [`Graph::route_turn`]
    /// (SPEC §13.2): the first whose skill is a skill of the map, not hidden
    /// from this session, and whose matcher matches decides. It puts the
    /// cursor on its skill, or keeps it there when it stands there already:
    /// either way a `move` by `rule` is recorded right after the `turn`
    /// (`from` equal to `to` on a stay), a pending pick from before the turn
    /// is superseded, and the menu is not outstanding. With no rule matched
    /// the cursor stays, and the menu is outstanding as before. An empty
    /// message starts no rule: it is no message (a driver with no user
    /// message, such as an MCP run, begins its turn with one). Results
    /// observed before the turn stay in the batch and are routed, at the
    /// iteration's end, from where the turn starts. Returns the rule that
    /// decided, as the `turn` event records it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skill_core::SkillMap;
    /// use skill_session::{Graph, Posture, Session};
    ///
    /// let map: SkillMap = serde_json::from_str(r#"{
    ///     "skills": [{ "id": "triage" }, { "id": "refunds" }], "entries": ["triage"],
    ///     "start": { "rules": [{ "use": "refunds", "match": { "keywords": ["refund"] } }] }
    /// }"#)?;
    /// let mut session = Session::new(Arc::new(Graph::new(map)?), Posture::Assist, vec![]);
    /// session.begin_turn("Hello", None);
    /// assert_eq!(session.cursor(), Some("triage"));
    /// session.begin_turn("I want a REFUND", None);
    /// assert_eq!(session.cursor(), Some("refunds"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn begin_turn(
        &mut self,
        message: impl Into<String>,
        menu: Option<Menu>,
    ) -> Option<RoutedRecord> {
        self.message = message.into();
        self.menu_outstanding = menu.is_some();
        self.menu = menu;
        self.activated.clear();
        self.turn_start = self.iteration;
        self.budget_told = false;
        self.refusals.clear();
        self.escalated = None;
        let graph = Arc::clone(&self.graph);
        let routing = graph.route_turn(&self.message, &self.hidden);
        let routed = routing.routed.map(|routed| RoutedRecord {
            rule: routed.rule,
            use_skill: routed.use_skill,
            label: routed.label,
            witness: routed.witness,
        });
        self.events.push(Event::Turn(TurnEvent {
            iteration: self.iteration,
            user_message: self.message.clone(),
            menu: self.menu.clone(),
            routed: routed.clone(),
            gave_up: routing.gave_up,
        }));
        let routed = routed?;
        self.menu_outstanding = false;
        let from = self.cursor.replace(routed.use_skill.clone());
        self.cursor_moved(from.as_deref());
        let reachable = graph.reachable_ids(self.cursor.as_deref());
        self.events.push(Event::Move(MoveEvent {
            iteration: self.iteration,
            from,
            to: self.cursor.clone(),
            by: MoveBy::Rule,
            route: None,
            guard: None,
            guards_closed: Vec::new(),
            conflict: Vec::new(),
            reachable,
            superseded: self.pick.take(),
            declined_offer: false,
            proposal: None,
            superseded_proposal: None,
        }));
        Some(routed)
    }

    /// The `read_skill` offer for this position: `grantable` from the
    /// cursor (none on a plain catalog), the hidden ids, and the turn's menu
    /// while it is outstanding.
    pub fn offer(&self) -> ReadSkillOffer {
        let mut offer = self
            .graph
            .map()
            .offer_at(self.cursor(), &self.hidden, false);
        offer.menu = self.outstanding_menu().cloned();
        offer
    }

    /// The tools to show the model now: `read_skill` for this position and
    /// `list_skills` (neither when the map has no skills). Records the offer
    /// the model is shown.
    pub fn tools(&mut self) -> Vec<ToolDescriptor> {
        self.tools_recording(true)
    }

    /// [`tools`](Self::tools), recording the offer only when it differs
    /// from the last one recorded: for a host that lists tools on request
    /// and shows the model the same list again (SPEC §9.2), so that the
    /// record holds what the model was shown, not how often it asked.
    pub fn tools_if_changed(&mut self) -> Vec<ToolDescriptor> {
        self.tools_recording(false)
    }

    fn tools_recording(&mut self, always: bool) -> Vec<ToolDescriptor> {
        // A spent budget leaves no tool to call (SPEC §15.3).
        if self.budget_spent() {
            return Vec::new();
        }
        let graph = Arc::clone(&self.graph);
        let offer = self.offer();
        let skills = &graph.map().skills;
        let mut tools = Vec::with_capacity(2);
        if let Some(read) = read_skill_within(skills, Some(&offer), graph.catalog_budget()) {
            let view = OwnedOfferView::from(&offer_view(skills, Some(&offer)));
            if always || self.last_offer.as_deref() != Some(&view) {
                self.last_offer = Some(Box::new(view.clone()));
                self.events.push(Event::Offer(OfferEvent {
                    iteration: self.iteration,
                    view,
                }));
            }
            tools.push(read);
        }
        tools.extend(graph.list_skills().cloned());
        if self.offers_skip_step() {
            tools.push(skill_tools::skip_step());
        }
        tools
    }

    /// The tools to list when the list may not follow the run (MCP's
    /// sessionless generation, SPEC §9.2): `read_skill` offering the plain
    /// catalog of the skills visible to this session — words true wherever
    /// the run stands — and `list_skills`. Nothing is recorded: the list is
    /// no view of the run's position ([`position`](Self::position) is).
    pub fn stable_tools(&self) -> Vec<ToolDescriptor> {
        let skills = &self.graph.map().skills;
        let offer = ReadSkillOffer {
            hidden_ids: self.hidden.clone(),
            ..ReadSkillOffer::default()
        };
        let stepped = skills
            .iter()
            .any(|skill| skill.steps.as_ref().is_some_and(|steps| !steps.is_empty()));
        read_skill_within(skills, Some(&offer), self.graph.catalog_budget())
            .into_iter()
            .chain(self.graph.list_skills().cloned())
            .chain(stepped.then(skill_tools::skip_step))
            .collect()
    }

    /// Whether a host tool belongs in the [stable list](Self::stable_tools):
    /// some skill of the map carries it (under the `all` policy every tool
    /// does, but one only withheld skills carry). Whether a call of it is admitted is still the call gate's.
    pub fn lists_stably(&self, tool: &str) -> bool {
        (self.policy == CallPolicy::All && !self.graph.withholds_tool(tool))
            || self
                .graph
                .map()
                .skills
                .iter()
                .any(|skill| skill.tool(tool).is_some())
    }

    /// Where the run stands, in words for the model (SPEC §9.3): the skill
    /// it is in, the other skills active in it (an open skill a read
    /// activated leaves the cursor where it was, yet is active), and the
    /// visible skills a read may take from here (the hops, then the open
    /// skills). A server whose tool list cannot follow the run (MCP's
    /// sessionless generation) ends its answers with it. A hidden skill is
    /// never named; a set the hidden filter emptied is not mentioned; at
    /// most 40 ids are named, the rest counted.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use skill_core::SkillMap;
    /// use skill_session::{Graph, Posture, Session};
    ///
    /// let map: SkillMap = serde_json::from_str(r#"{
    ///     "skills": [{ "id": "triage" }, { "id": "refunds" }, { "id": "faq", "trigger": "always" }],
    ///     "entries": ["triage"], "routes": [{ "from": "triage", "to": "refunds" }]
    /// }"#)?;
    /// let session = Session::new(Arc::new(Graph::new(map)?), Posture::Assist, vec![]);
    /// assert_eq!(session.position(), "This run is in 'triage'; from here read_skill may take: refunds.");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn position(&self) -> String {
        const NAMED: usize = 40;
        let offer = self.offer();
        let skills = &self.graph.map().skills;
        let view = offer_view(skills, Some(&offer));
        let mut may: Vec<&str> = Vec::new();
        for row in view
            .reachable
            .iter()
            .chain(&view.tree_open)
            .chain(&view.catalog)
        {
            if !may.contains(&row.id) {
                may.push(row.id);
            }
        }
        for open in self.graph.open_skills() {
            let visible = !self.hides(open);
            if visible && view.cursor != Some(open.as_str()) && !may.contains(&open.as_str()) {
                may.push(open);
            }
        }
        let others: Vec<String> = self
            .active_skills()
            .into_iter()
            .filter(|id| view.cursor != Some(*id))
            .map(|id| format!("'{id}'"))
            .collect();
        let others = match others.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let place = match (view.cursor, others.is_empty()) {
            (Some(cursor), true) => format!("This run is in '{cursor}'"),
            (Some(cursor), false) => format!("This run is in '{cursor}', with {others} active too"),
            (None, true) => "This run is in no skill yet".to_owned(),
            (None, false) => format!("This run has {others} active"),
        };
        let mut said = if may.is_empty() {
            if view.nothing_reachable {
                format!("{place}; nothing is reachable from here.")
            } else {
                format!("{place}.")
            }
        } else {
            let mut named = may[..may.len().min(NAMED)].join(", ");
            if may.len() > NAMED {
                named.push_str(&format!(
                    " and {} more (list_skills lists every skill)",
                    may.len() - NAMED
                ));
            }
            format!("{place}; from here read_skill may take: {named}.")
        };
        // The current step of the procedure in progress (SPEC §15.9).
        if let Some(procedure) = self.procedure().filter(|p| p.step.is_some()) {
            said.push_str(&format!(
                " Its procedure is at step {} of {}: {} ({}).",
                procedure.step.unwrap_or_default(),
                procedure.of,
                procedure.note.unwrap_or_default(),
                procedure.tool.unwrap_or_default()
            ));
        }
        said
    }

    /// The active skills: the cursor's, then every skill an accepted read
    /// activated in this turn, each once.
    pub fn active_skills(&self) -> Vec<&str> {
        let mut active: Vec<&str> = Vec::with_capacity(1 + self.activated.len());
        for id in self.cursor.iter().chain(&self.activated) {
            if !active.contains(&id.as_str()) {
                active.push(id);
            }
        }
        active
    }

    /// The host tool names the active skills carry, in that order, each once.
    /// It governs the offer, not dispatch.
    pub fn visible_tools(&self) -> Vec<&str> {
        let mut tools: Vec<&str> = Vec::new();
        if self.budget_spent() {
            return tools;
        }
        for skill in self
            .active_skills()
            .into_iter()
            .filter_map(|id| self.graph.skill(id))
        {
            for tool in &skill.tools {
                if !tools.contains(&tool.name.as_str()) && self.held_by(&tool.name).is_none() {
                    tools.push(&tool.name);
                }
            }
        }
        tools
    }

    /// Whether `tool` is among the [visible tools](Self::visible_tools): an
    /// active skill carries it.
    pub fn offers_tool(&self, tool: &str) -> bool {
        self.cursor
            .iter()
            .chain(&self.activated)
            .filter_map(|id| self.graph.skill(id))
            .any(|skill| skill.tool(tool).is_some())
    }

    /// Whether a call of `tool` counts as offered: under the `all` policy
    /// every tool does (but one only withheld skills carry), else it must be among the [visible
    /// tools](Self::visible_tools). A host that lists tools lists these.
    pub fn offers_call(&self, tool: &str) -> bool {
        ((self.policy == CallPolicy::All && !self.graph.withholds_tool(tool))
            || self.offers_tool(tool))
            && self.held_by(tool).is_none()
            && !self.budget_spent()
    }

    /// `id`'s body as the model is shown it outside the system prompt: the
    /// last skill with the id (the one a read answers with, SPEC §6.1) in
    /// its `<skill_content>` block, whatever its surface mode; `None` when
    /// its body is empty or the id is not a skill.
    pub fn body_block(&self, id: &str) -> Option<String> {
        self.graph
            .skill(id)
            .filter(|skill| !skill.body.is_empty())
            .map(skill_content)
    }

    /// The bodies of the active skills whose declared surface mode is not
    /// `tool-only`, each in `<skill_content name="ID">…</skill_content>`,
    /// separated by a blank line. Skills with no body, and skills hidden from
    /// this session, add nothing.
    pub fn system_prompt(&self) -> String {
        let blocks: Vec<String> = self
            .active_skills()
            .into_iter()
            .filter(|id| !self.hides(id))
            .filter_map(|id| self.graph.skill(id))
            .filter(|skill| skill.surface_mode != SurfaceMode::ToolOnly && !skill.body.is_empty())
            .map(skill_content)
            .collect();
        blocks.join("\n\n")
    }

    /// Judge a `read_skill` call of `id` against the cursor at the
    /// iteration's start (SPEC §8.2), and record it. An accepted hop becomes
    /// the pending pick; an accepted read activates the skill for the turn.
    ///
    /// # Errors
    ///
    /// [`ReadError::UnknownSkill`] when `id` is not a skill of the map,
    /// naming the nearest id the session may name. Nothing is recorded.
    pub fn read_skill(&mut self, id: &str) -> Result<ReadAnswer, ReadError> {
        if self.budget_spent() {
            let read = ReadEvent {
                iteration: self.iteration,
                id: head_within(id, MAX_ID_ECHO).to_owned(),
                class: TargetClass::Unreachable,
                accepted: false,
                refusal: Some(Refusal::BudgetExhausted),
                allowed: Some(Vec::new()),
            };
            self.events.push(Event::Read(read.clone()));
            let text = self.wrap_up();
            return Ok(ReadAnswer {
                text,
                read,
                escalated: false,
            });
        }
        if !self.graph.has_skill(id) {
            return Err(self.unknown(id));
        }
        let verdict = self.gate().judge(id);
        let accepted = verdict.refusal.is_none();
        if accepted {
            if verdict.class == TargetClass::Hop {
                self.pick = Some(id.to_owned());
            }
            if !self.activated.iter().any(|known| known == id) {
                self.activated.push(id.to_owned());
            }
        }
        let read = ReadEvent {
            iteration: self.iteration,
            id: id.to_owned(),
            class: verdict.class,
            accepted,
            refusal: verdict.refusal,
            allowed: verdict.refusal.map(|_| verdict.allowed),
        };
        self.events.push(Event::Read(read.clone()));
        let escalated = verdict
            .refusal
            .filter(|r| *r != Refusal::SelfCall)
            .is_some_and(|refusal| self.count_refusal(GateKind::Read, id, refusal.code()));
        Ok(ReadAnswer {
            text: verdict.text,
            read,
            escalated,
        })
    }

    /// Record a read refused before the gate could judge it, as `refusal`
    /// ([`Refusal::Malformed`] or [`Refusal::Unknown`]): `id` is what the
    /// call gave, cut to [`MAX_ID_ECHO`] bytes. Nothing else changes; a
    /// driver that answers such reads itself (an MCP server) records them
    /// so that every read is in the record (SPEC §9.7).
    pub fn refuse_read(&mut self, id: &str, refusal: Refusal) {
        // A spent budget refuses every read first (SPEC §15.3).
        if self.budget_spent() {
            let _ = self.read_skill(id);
            return;
        }
        let read = ReadEvent {
            iteration: self.iteration,
            id: head_within(id, MAX_ID_ECHO).to_owned(),
            class: TargetClass::Unreachable,
            accepted: false,
            refusal: Some(refusal),
            allowed: Some(Vec::new()),
        };
        self.events.push(Event::Read(read));
        self.count_refusal(GateKind::Read, head_within(id, MAX_ID_ECHO), refusal.code());
    }

    fn unknown(&self, id: &str) -> ReadError {
        let nameable = self
            .graph
            .map()
            .skills
            .iter()
            .map(|skill| skill.id.as_str())
            .filter(|known| !self.hides(known));
        // No id that long is near a catalog id: its distance is not worked out.
        let nearest = (id.len() <= MAX_ID_ECHO)
            .then(|| nearest(id, nameable))
            .flatten()
            .map(str::to_owned);
        ReadError::UnknownSkill {
            id: id.to_owned(),
            nearest,
        }
    }

    /// Whether the skill `id` is hidden from this session (the host's role
    /// filter).
    fn hides(&self, id: &str) -> bool {
        self.hidden.iter().any(|hidden| hidden == id)
    }

    fn gate(&self) -> Gate<'_> {
        Gate {
            graph: &self.graph,
            cursor: self.cursor.as_deref(),
            hidden: &self.hidden,
            posture: self.posture,
            menu: self.outstanding_menu(),
        }
    }

    /// Judge a call of the host tool `tool` under the session's call policy
    /// (SPEC §9.3), before the host makes it. Every judged call gets the
    /// run's next number and is recorded as a `call` event: an accepted one
    /// before it is made, so that a record whose writer stops mid-call
    /// shows it open. Under `strict`, a call of a tool no active skill
    /// carries is refused: the answer teaches which visible skills carry it
    /// and whether a read can take them from here. An accepted call's
    /// result is then [observed](Self::observe), and carries its number.
    pub fn call_tool(&mut self, tool: &str) -> CallAnswer {
        self.calls += 1;
        let number = self.calls;
        let call = self.numbered.then_some(number);
        if self.budget_spent() {
            let refused = CallEvent {
                iteration: self.iteration,
                tool_name: tool.to_owned(),
                call,
                accepted: false,
                refusal: Some(CallRefusal::BudgetExhausted),
                allowed: Some(Vec::new()),
                held: None,
            };
            self.events.push(Event::Call(refused.clone()));
            let text = self.wrap_up();
            return CallAnswer::Refused {
                text,
                call: refused,
                escalated: false,
            };
        }
        if let Some(step) = self.held_by(tool) {
            let text = self.held_text(tool, &step);
            let call = CallEvent {
                iteration: self.iteration,
                tool_name: tool.to_owned(),
                call,
                accepted: false,
                refusal: Some(CallRefusal::StepHeld),
                allowed: Some(vec![step.skill.clone()]),
                held: Some(step),
            };
            self.events.push(Event::Call(call.clone()));
            let escalated = self.count_refusal(GateKind::Call, tool, CallRefusal::StepHeld.code());
            return CallAnswer::Refused {
                text,
                call,
                escalated,
            };
        }
        match judge_call(&self.gate(), self.policy, tool, self.offers_tool(tool)) {
            CallVerdict::Admitted => {
                if self.numbered {
                    self.events.push(Event::Call(CallEvent {
                        iteration: self.iteration,
                        tool_name: tool.to_owned(),
                        call,
                        accepted: true,
                        refusal: None,
                        allowed: None,
                        held: None,
                    }));
                    self.open.push((number, tool.to_owned()));
                }
                CallAnswer::Admitted { call: number }
            }
            CallVerdict::Refused {
                refusal,
                named,
                text,
            } => {
                let call = CallEvent {
                    iteration: self.iteration,
                    tool_name: tool.to_owned(),
                    call,
                    accepted: false,
                    refusal: Some(refusal),
                    allowed: Some(named),
                    held: None,
                };
                self.events.push(Event::Call(call.clone()));
                let escalated = self.count_refusal(GateKind::Call, tool, refusal.code());
                CallAnswer::Refused {
                    text,
                    call,
                    escalated,
                }
            }
        }
    }

    /// Stop numbering calls and recording accepted ones, as sessions did
    /// before SPEC §8.4 recorded them: only to replay such a record.
    pub(crate) fn unnumbered(mut self) -> Self {
        self.numbered = false;
        self
    }

    /// The tool of the open call numbered `call`; `None` when no call of
    /// that number is open.
    pub fn open_call_tool(&self, call: u64) -> Option<&str> {
        self.open
            .iter()
            .find(|(number, _)| *number == call)
            .map(|(_, tool)| tool.as_str())
    }

    /// The accepted calls that have no result yet, by number, oldest first.
    pub fn open_calls(&self) -> impl Iterator<Item = u64> + '_ {
        self.open.iter().map(|(number, _)| *number)
    }

    /// The number of the open call a result of `tool` answers, closing it:
    /// `call` when the host names it, else the oldest open call of `tool`;
    /// `None` when no call of `tool` is open (a result the host reports
    /// with no call before it).
    ///
    /// # Errors
    ///
    /// [`ObserveError::CallNotOpen`] when `call` is no open call of `tool`;
    /// nothing closes.
    fn close_call(&mut self, tool: &str, call: Option<u64>) -> Result<Option<u64>, ObserveError> {
        match call {
            Some(call) => self.close_named(tool, call).map(Some),
            None => Ok(self.close_oldest(tool)),
        }
    }

    /// Close the open call of `tool` numbered `call`.
    fn close_named(&mut self, tool: &str, call: u64) -> Result<u64, ObserveError> {
        let at = self
            .open
            .iter()
            .position(|(number, name)| *number == call && name == tool);
        match at {
            Some(at) => Ok(self.open.remove(at).0),
            None => Err(ObserveError::CallNotOpen {
                tool: tool.to_owned(),
                call,
                open: self
                    .open
                    .iter()
                    .filter(|(_, name)| name == tool)
                    .map(|(number, _)| *number)
                    .collect(),
            }),
        }
    }

    /// Close the oldest open call of `tool`, if one is open.
    fn close_oldest(&mut self, tool: &str) -> Option<u64> {
        let at = self.open.iter().position(|(_, name)| name == tool)?;
        Some(self.open.remove(at).0)
    }

    /// Observe one host tool's result, in call order. Its `status` is only
    /// what the result declares; none is inferred. A result of a tool that
    /// is not [offered](Self::offers_call) is recorded with `offered:
    /// false`. It answers the oldest open call of its tool, if any (see
    /// [`observe_call`](Self::observe_call) to name the call).
    pub fn observe(&mut self, result: ToolResult) {
        let bytes = result.result.len();
        let call = self.close_oldest(&result.tool_name);
        self.take_result(call, result, bytes, None);
    }

    /// [`observe`](Self::observe) the result of the accepted call numbered
    /// `call` (the number [`CallAnswer::Admitted`] gave): calls of one tool
    /// may be answered in another order than they were made.
    ///
    /// # Errors
    ///
    /// [`ObserveError::CallNotOpen`] when `call` is no open call of the
    /// result's tool: a number never given, given a call of another tool,
    /// or already answered. Nothing is recorded or routed, and the calls
    /// stay as they were: a record never holds a result for a call it does
    /// not answer, and replays to itself.
    pub fn observe_call(&mut self, call: u64, result: ToolResult) -> Result<(), ObserveError> {
        let bytes = result.result.len();
        let call = self.close_named(&result.tool_name, call)?;
        self.take_result(Some(call), result, bytes, None);
        Ok(())
    }

    /// [`observe`](Self::observe) a result whose whole length was `bytes`,
    /// answering `call` when given: a replay has only the recorded head of
    /// a long result, and records the length the original had.
    ///
    /// # Errors
    ///
    /// As [`observe_call`](Self::observe_call).
    pub(crate) fn observe_measured_proposing(
        &mut self,
        call: Option<u64>,
        result: ToolResult,
        bytes: usize,
        proposed: Option<Proposed>,
    ) -> Result<(), ObserveError> {
        let call = self.close_call(&result.tool_name, call)?;
        self.take_result(call, result, bytes, proposed.as_ref());
        Ok(())
    }

    /// Record `result`, answering `call` (closed already), with the move
    /// it proposes judged on it, and keep it for routing; then the step it
    /// did, if any.
    fn take_result(
        &mut self,
        call: Option<u64>,
        result: ToolResult,
        bytes: usize,
        proposed: Option<&Proposed>,
    ) {
        let kept = head(&result.result).to_owned();
        self.record_result(
            &result.tool_name,
            call,
            result.status.clone(),
            (bytes, kept),
            None,
        );
        if let Some(proposed) = proposed {
            let record = self.take_proposal(&result.tool_name, proposed);
            self.record_proposal(record);
        }
        self.advance(&result.tool_name, result.status.as_deref());
        self.results.push(result);
    }

    /// A call of `tool` that the client cancelled before it was answered:
    /// recorded as a `result` with the error [`CANCELLED`] and no status,
    /// and never routed, so it moves nothing (SPEC §9.5). `call` names the
    /// call as [`observe_call`](Self::observe_call) does.
    ///
    /// # Errors
    ///
    /// As [`observe_call`](Self::observe_call), when `call` is given.
    pub fn observe_cancelled(&mut self, tool: &str, call: Option<u64>) -> Result<(), ObserveError> {
        self.observe_unanswered(tool, call, CANCELLED)
    }

    /// The call of `tool` numbered `call`, closed by a server for its
    /// client rather than answered, for `reason` (SPEC §14.4: the replica
    /// that forwarded it died, or stopped first): recorded as cancelled,
    /// with the reason, no status, and never routed.
    ///
    /// # Errors
    ///
    /// [`ObserveError::CallNotOpen`] when no call of `tool` numbered `call`
    /// is open; nothing is recorded.
    pub fn observe_lost(
        &mut self,
        tool: &str,
        call: u64,
        reason: &str,
    ) -> Result<(), ObserveError> {
        self.observe_unanswered(tool, Some(call), CANCELLED)?;
        if let Some(Event::Result(result)) = self.events.last_mut() {
            result.reason = Some(reason.to_owned());
        }
        Ok(())
    }

    /// A call of `tool` whose upstream asked the client for input instead
    /// of answering (MCP's `input_required`): recorded as a `result` with
    /// the error [`INPUT_REQUIRED`] and no status, and never routed, so it
    /// moves nothing; the client's retry is a call of its own (SPEC §9.5).
    ///
    /// # Errors
    ///
    /// As [`observe_call`](Self::observe_call), when `call` is given.
    pub fn observe_input_required(
        &mut self,
        tool: &str,
        call: Option<u64>,
    ) -> Result<(), ObserveError> {
        self.observe_unanswered(tool, call, INPUT_REQUIRED)
    }

    /// A call of `tool` that got no answer to route on, for `why`.
    fn observe_unanswered(
        &mut self,
        tool: &str,
        call: Option<u64>,
        why: &str,
    ) -> Result<(), ObserveError> {
        let call = self.close_call(tool, call)?;
        self.record_result(tool, call, None, (0, String::new()), Some(why.to_owned()));
        Ok(())
    }

    /// Record a `result` of `tool` answering `call` (closed already by
    /// [`close_call`](Self::close_call)): its status, its length and kept
    /// head, and why it failed, if it did; offered as the call gate counts.
    fn record_result(
        &mut self,
        tool: &str,
        call: Option<u64>,
        status: Option<String>,
        (bytes, result): (usize, String),
        error: Option<String>,
    ) {
        let offered = self.offers_call(tool);
        self.events.push(Event::Result(ResultEvent {
            iteration: self.iteration,
            tool_name: tool.to_owned(),
            call,
            status,
            bytes,
            result,
            offered,
            error,
            reason: None,
            propose: None,
        }));
    }

    /// A call of `tool` that failed instead of answering, for `error` (the
    /// upstream died, timed out or answered with a protocol error): it is
    /// recorded as a `result` with status `failure` and the error (SPEC
    /// §9.7), and routes on `failure` fire on it as on any failed result.
    /// The error is recorded cut to its first 4 KiB. `call` names the call
    /// as [`observe_call`](Self::observe_call) does.
    ///
    /// # Errors
    ///
    /// As [`observe_call`](Self::observe_call), when `call` is given.
    pub fn observe_failure(
        &mut self,
        tool: &str,
        call: Option<u64>,
        error: &str,
    ) -> Result<(), ObserveError> {
        let call = self.close_call(tool, call)?;
        let failure = ToolResult {
            tool_name: tool.to_owned(),
            result: String::new(),
            status: Some(ResultStatus::Failure.as_str().to_owned()),
        };
        let why = Some(head(error).to_owned());
        self.record_result(tool, call, failure.status.clone(), (0, String::new()), why);
        self.results.push(failure);
        Ok(())
    }

    /// Close the iteration: move the cursor once, by the first that applies —
    /// a route over this iteration's results (superseding any pending pick),
    /// the pending pick, or a stay. Then the results and the pick clear and
    /// the iteration number grows by one. Returns the recorded move, as the
    /// record holds it (clone it to keep it past the next change).
    pub fn end_iteration(&mut self) -> &MoveEvent {
        let moved = self.resolve_move();
        if moved.by != MoveBy::Stay {
            self.menu_outstanding = false;
        }
        let from = self.cursor.clone();
        self.cursor.clone_from(&moved.to);
        self.cursor_moved(from.as_deref());
        self.results.clear();
        self.proposals.clear();
        self.pick = None;
        self.iteration += 1;
        self.events.push(Event::Move(moved));
        match self.events.last() {
            Some(Event::Move(moved)) => moved,
            // The move was pushed on the line above.
            _ => unreachable!("the last event is the move just recorded"),
        }
    }

    /// The move that ends this iteration, with its evidence.
    fn resolve_move(&self) -> MoveEvent {
        let graph = &self.graph;
        let from = self.cursor.as_deref();
        let iteration = Iteration {
            // Iteration numbers stay far below 2^53: the cast is exact.
            #[allow(clippy::cast_precision_loss)]
            number: (self.iteration + 1) as f64,
            user_message: &self.message,
        };
        let routed = from.map(|cursor| graph.resolve(cursor, &self.results, iteration));
        let route = routed.as_ref().filter(|m| m.by == MoveBy::Route);
        // A route, then the first accepted proposal, then the pick (SPEC
        // §15.6).
        let proposal = self.proposals.first();
        let (to, by) = match (route, proposal, &self.pick) {
            (Some(route), _, _) => (Some(route.to), MoveBy::Route),
            (None, Some(proposal), _) => (Some(proposal.to.as_str()), MoveBy::Tool),
            (None, None, Some(pick)) => (Some(pick.as_str()), MoveBy::Model),
            (None, None, None) => (from, MoveBy::Stay),
        };
        // Later accepted proposals that reached another target.
        let later = self
            .proposals
            .iter()
            .skip(1)
            .filter(|other| Some(other.to.as_str()) != to)
            .map(|other| ConflictRecord {
                tool_name: other.tool_name.clone(),
                to: other.to.clone(),
                by: ConflictBy::Tool,
            });
        let declined_offer = by == MoveBy::Model
            && self
                .outstanding_menu()
                .is_some_and(|menu| !menu.candidates.iter().any(|c| Some(c.id.as_str()) == to));
        MoveEvent {
            iteration: self.iteration,
            from: from.map(str::to_owned),
            to: to.map(str::to_owned),
            by,
            route: route.and_then(|m| m.route),
            guard: route.and_then(|m| m.guard.as_ref()).map(GuardRecord::of),
            guards_closed: routed
                .as_ref()
                .map(|m| m.guards_closed.iter().map(GuardRecord::of).collect())
                .unwrap_or_default(),
            conflict: route
                .map(|m| {
                    m.conflict
                        .iter()
                        .map(ConflictRecord::of)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
                .into_iter()
                .chain(later)
                .collect(),
            reachable: graph.reachable_ids(to),
            superseded: (route.is_some() || proposal.is_some())
                .then(|| self.pick.clone())
                .flatten(),
            declined_offer,
            proposal: (by == MoveBy::Tool)
                .then(|| proposal.cloned().map(Box::new))
                .flatten(),
            superseded_proposal: route.and(proposal.cloned().map(Box::new)),
        }
    }

    /// The events recorded since the last [`take_events`](Self::take_events).
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Take the events recorded so far, leaving the record empty: a host
    /// that flushes per event takes them after each step.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use skill_core::{MenuCandidate, SkillMap};

    use super::*;

    fn graph() -> Arc<Graph> {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [
                {"id": "triage", "body": "Sort the request.", "tools": [{"name": "lookup_order"}]},
                {"id": "refunds", "body": "Refund with care.", "surface_mode": "both", "tools": [{"name": "issue_refund"}]},
                {"id": "billing", "tools": [{"name": "charge_history"}, {"name": "lookup_order"}]},
                {"id": "faq", "body": "Answer from the FAQ.", "tools": [{"name": "faq_search"}]},
                {"id": "secret", "description": "Internal notes"},
                {"id": "audit", "trigger": "rule"}
            ],
            "entries": ["triage"],
            "routes": [
                {"from": "triage", "to": "refunds", "on_tool_return": "lookup_order", "guard": {"riskLevel": {"eq": "high"}}},
                {"from": "triage", "to": "billing"},
                {"from": "billing", "to": "refunds"}
            ]
        }))
        .unwrap();
        Arc::new(Graph::new(map).unwrap())
    }

    #[test]
    fn a_result_of_a_tool_the_active_skills_do_not_carry_is_marked_and_reads_back() {
        let mut session = Session::new(graph(), Posture::Assist, Vec::new());
        session.begin_turn("", None);
        for tool in ["charge_history", "lookup_order", "issue_refund", "nothing"] {
            assert_eq!(
                session.offers_tool(tool),
                session.visible_tools().contains(&tool),
                "{tool}"
            );
        }
        for tool in ["charge_history", "lookup_order"] {
            session.observe(ToolResult {
                tool_name: tool.into(),
                result: "{}".into(),
                status: None,
            });
        }
        let events = session.take_events();
        let offered: Vec<bool> = events
            .iter()
            .filter_map(|event| match event {
                Event::Result(result) => Some(result.offered),
                _ => None,
            })
            .collect();
        assert_eq!(offered, [false, true]);
        let text: String = events.iter().map(|e| e.to_line() + "\n").collect();
        assert!(
            text.contains(
                r#""tool_name":"charge_history","bytes":2,"result":"{}","offered":false}"#
            )
        );
        assert!(!text.contains(r#""lookup_order","bytes":2,"result":"{}","offered""#));
        let read = crate::read_record(&text).expect("the session's own record reads back");
        assert_eq!(read.events, events);
    }

    fn session(posture: Posture) -> Session {
        let mut session = Session::new(graph(), posture, vec!["secret".to_owned()]);
        session.begin_turn("help me", None);
        session
    }

    fn menu(ids: &[&str]) -> Menu {
        Menu {
            candidates: ids
                .iter()
                .map(|id| MenuCandidate {
                    id: (*id).to_owned(),
                    relevance: Some(0.5),
                })
                .collect(),
            cursor_id: Some("triage".to_owned()),
            stay: false,
        }
    }

    fn order(risk: &str) -> ToolResult {
        ToolResult {
            tool_name: "lookup_order".into(),
            result: format!(r#"{{"riskLevel":"{risk}"}}"#),
            status: None,
        }
    }

    fn refusal(answer: &ReadAnswer) -> (Option<Refusal>, Vec<&str>) {
        let allowed = answer.read.allowed.iter().flatten().map(String::as_str);
        (answer.read.refusal, allowed.collect())
    }

    #[test]
    fn a_read_of_the_cursor_is_a_notice_that_moves_nothing() {
        let mut session = session(Posture::Assist);
        let answer = session.read_skill("triage").unwrap();
        assert_eq!(answer.read.class, TargetClass::SelfTarget);
        assert_eq!(refusal(&answer), (Some(Refusal::SelfCall), vec!["triage"]));
        assert!(
            answer.text.contains("already in 'triage'"),
            "{}",
            answer.text
        );
        assert_eq!(session.end_iteration().by, MoveBy::Stay);
    }

    #[test]
    fn a_read_of_an_unreachable_skill_names_the_hops_and_open_skills() {
        let mut session = session(Posture::Assist);
        let answer = session.read_skill("audit").unwrap();
        assert_eq!(answer.read.class, TargetClass::Unreachable);
        assert_eq!(
            refusal(&answer),
            (
                Some(Refusal::Unreachable),
                vec!["refunds", "billing", "faq"]
            )
        );
        assert_eq!(
            answer.text,
            "read_skill cannot take 'audit' from here. From here it can take: refunds, billing, faq."
        );
        assert_eq!(session.pending_pick(), None);
    }

    #[test]
    fn a_read_of_a_hidden_skill_is_refused_without_naming_it() {
        let mut session = session(Posture::Assist);
        let answer = session.read_skill("secret").unwrap();
        assert_eq!(answer.read.class, TargetClass::Open);
        assert_eq!(answer.read.refusal, Some(Refusal::Unreachable));
        assert!(!answer.text.contains("secret"), "{}", answer.text);
        assert!(
            answer
                .text
                .starts_with("read_skill cannot take that skill from here.")
        );
        assert!(!session.active_skills().contains(&"secret"));
    }

    #[test]
    fn rails_refuses_every_hop_and_names_only_the_open_skills() {
        let mut session = session(Posture::Rails);
        let answer = session.read_skill("billing").unwrap();
        assert_eq!(refusal(&answer), (Some(Refusal::PostureRails), vec!["faq"]));
        assert!(
            answer.text.contains("only the map's routes move you"),
            "{}",
            answer.text
        );
        assert!(answer.text.contains("A read can still open: faq."));
        assert!(
            session.read_skill("faq").unwrap().accepted(),
            "open skills pass every posture"
        );
        assert_eq!(session.end_iteration().by, MoveBy::Stay);
    }

    #[test]
    fn guard_accepts_a_hop_only_from_the_outstanding_menu() {
        let mut session = session(Posture::Guard);
        let no_menu = session.read_skill("billing").unwrap();
        assert_eq!(
            refusal(&no_menu),
            (Some(Refusal::PostureGuardNoMenu), vec!["faq"])
        );
        assert!(
            no_menu.text.contains("none is open now"),
            "{}",
            no_menu.text
        );

        session.begin_turn("help me", Some(menu(&["refunds", "secret"])));
        let off_menu = session.read_skill("billing").unwrap();
        assert_eq!(
            refusal(&off_menu),
            (Some(Refusal::PostureGuardOffMenu), vec!["refunds", "faq"])
        );
        assert!(
            off_menu.text.contains("On the menu: refunds."),
            "{}",
            off_menu.text
        );
        assert!(!off_menu.text.contains("secret"));

        let on_menu = session.read_skill("refunds").unwrap();
        assert!(on_menu.accepted());
        assert_eq!(
            on_menu.text, "Refund with care.",
            "a `both` skill answers with its body"
        );
        let moved = session.end_iteration();
        assert_eq!((moved.by, moved.declined_offer), (MoveBy::Model, false));
        assert!(
            session.outstanding_menu().is_none(),
            "the move closed the menu"
        );
        assert_eq!(
            session.read_skill("triage").unwrap().read.refusal,
            Some(Refusal::PostureGuardNoMenu),
            "the entry is a hop from refunds, and the menu is closed"
        );
    }

    #[test]
    fn an_open_skill_is_activated_and_never_a_pick() {
        let mut session = session(Posture::Assist);
        let answer = session.read_skill("faq").unwrap();
        assert_eq!(
            (answer.read.class, answer.accepted()),
            (TargetClass::Open, true)
        );
        assert_eq!(
            answer.text,
            "This call activated skill 'faq' for the next iteration."
        );
        assert_eq!(session.pending_pick(), None);
        assert_eq!(session.active_skills(), ["triage", "faq"]);
        assert_eq!(session.visible_tools(), ["lookup_order", "faq_search"]);
        assert_eq!(
            session.system_prompt(),
            "<skill_content name=\"triage\">Sort the request.</skill_content>\n\n\
             <skill_content name=\"faq\">Answer from the FAQ.</skill_content>"
        );
        assert_eq!(session.end_iteration().by, MoveBy::Stay);
    }

    #[test]
    fn a_route_supersedes_the_pending_pick() {
        let mut session = session(Posture::Assist);
        assert!(session.read_skill("billing").unwrap().accepted());
        assert!(session.read_skill("refunds").unwrap().accepted());
        assert_eq!(
            session.pending_pick(),
            Some("refunds"),
            "the last accepted hop wins"
        );
        assert_eq!(
            session.cursor(),
            Some("triage"),
            "reads never move the cursor"
        );
        session.observe(order("low"));
        session.observe(order("high"));
        let moved = session.end_iteration();
        assert_eq!(moved.by, MoveBy::Route);
        assert_eq!(moved.to.as_deref(), Some("refunds"));
        assert_eq!(
            moved.superseded.as_deref(),
            Some("refunds"),
            "also when both name one skill"
        );
        assert_eq!(moved.guards_closed.len(), 1);
        assert_eq!(moved.guard.as_ref().map(|g| g.verdict), Some(true));
        assert_eq!(moved.reachable, ["triage"]);
        // Skills read this turn stay active after the cursor leaves them.
        assert_eq!(session.active_skills(), ["refunds", "billing"]);
        assert_eq!(session.iteration(), 2);
    }

    #[test]
    fn a_pick_off_an_outstanding_menu_declines_the_offer_under_assist() {
        let mut session = session(Posture::Assist);
        session.begin_turn("help", Some(menu(&["refunds"])));
        assert!(session.read_skill("billing").unwrap().accepted());
        let moved = session.end_iteration();
        assert_eq!((moved.by, moved.declined_offer), (MoveBy::Model, true));
        assert_eq!(moved.to.as_deref(), Some("billing"));
        assert_eq!(moved.reachable, ["refunds", "triage"]);
    }

    #[test]
    fn results_wait_in_the_batch_across_a_new_turn() {
        let mut session = session(Posture::Assist);
        session.observe(order("high"));
        session.begin_turn("and now?", None);
        assert_eq!(session.end_iteration().by, MoveBy::Route);
    }

    #[test]
    fn an_id_outside_the_catalog_is_an_input_error_naming_the_nearest() {
        let mut session = session(Posture::Assist);
        let before = session.events().len();
        let error = session.read_skill("biling").unwrap_err();
        assert_eq!(error.code(), "read-unknown-skill");
        assert_eq!(
            error.to_string(),
            "read_skill was called with id \"biling\", which is not a skill of this map (did you mean \"billing\"?); pass one of the ids in read_skill's schema"
        );
        let huge = "x".repeat(8 << 10);
        let measured = session.read_skill(&huge).unwrap_err().to_string();
        assert!(
            measured.starts_with("read_skill was called with an id of 8192 bytes,"),
            "{measured}"
        );
        assert!(measured.len() < 200, "a huge id is measured, never echoed");
        let hidden = session.read_skill("secrets").unwrap_err();
        assert!(!hidden.to_string().contains("\"secret\""), "{hidden}");
        assert_eq!(session.events().len(), before, "nothing is recorded");
    }

    #[test]
    fn tools_record_the_offer_and_scope_nothing_hidden() {
        let mut session = session(Posture::Assist);
        let tools = session.tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read_skill", "list_skills"]);
        assert!(!tools[0].description.contains("secret"));
        let Some(Event::Offer(offer)) = session.events().last() else {
            panic!("an offer event");
        };
        assert_eq!(offer.view.cursor.as_deref(), Some("triage"));
        assert_eq!(offer.view.mode, skill_tools::OfferMode::Graph);
    }

    #[test]
    fn the_position_names_the_skills_a_read_made_active() {
        let catalog: SkillMap = serde_json::from_value(json!({
            "skills": [{"id": "pdf"}, {"id": "docx"}, {"id": "xlsx"}]
        }))
        .unwrap();
        let mut session = Session::new(
            Arc::new(Graph::new(catalog).unwrap()),
            Posture::Assist,
            vec![],
        );
        session.begin_turn("", None);
        let may = "from here read_skill may take: pdf, docx, xlsx.";
        assert_eq!(
            session.position(),
            format!("This run is in no skill yet; {may}")
        );
        for id in ["pdf", "docx"] {
            assert!(session.read_skill(id).unwrap().accepted());
            session.end_iteration();
        }
        assert_eq!(
            session.cursor(),
            None,
            "an open skill never moves the cursor"
        );
        assert_eq!(
            session.position(),
            format!("This run has 'pdf' and 'docx' active; {may}")
        );

        let map: SkillMap = serde_json::from_value(json!({
            "skills": [{"id": "triage"}, {"id": "refunds"}, {"id": "faq"}],
            "entries": ["triage"], "routes": [{"from": "triage", "to": "refunds"}]
        }))
        .unwrap();
        let mut session = Session::new(Arc::new(Graph::new(map).unwrap()), Posture::Assist, vec![]);
        session.begin_turn("", None);
        assert!(session.read_skill("faq").unwrap().accepted());
        session.end_iteration();
        assert_eq!(
            session.position(),
            "This run is in 'triage', with 'faq' active too; from here read_skill may take: refunds, faq."
        );
    }

    fn admitted(session: &mut Session, tool: &str) -> u64 {
        match session.call_tool(tool) {
            CallAnswer::Admitted { call } => call,
            refused @ CallAnswer::Refused { .. } => panic!("scoped admits {tool}: {refused:?}"),
        }
    }

    fn not_open(tool: &str, call: u64, open: &[u64]) -> ObserveError {
        ObserveError::CallNotOpen {
            tool: tool.to_owned(),
            call,
            open: open.to_vec(),
        }
    }

    #[test]
    fn a_result_for_a_call_that_is_not_open_is_refused_and_changes_nothing() {
        let mut session = session(Posture::Assist);
        let first = admitted(&mut session, "lookup_order");
        let before = session.events().len();
        // A number the gate never gave.
        assert_eq!(
            session.observe_call(7, order("high")),
            Err(not_open("lookup_order", 7, &[first]))
        );
        // The number of a call of another tool.
        let other = ToolResult {
            tool_name: "charge_history".into(),
            result: "{}".into(),
            status: None,
        };
        assert_eq!(
            session.observe_call(first, other),
            Err(not_open("charge_history", first, &[]))
        );
        assert_eq!(session.events().len(), before, "nothing is recorded");
        assert_eq!(session.open_calls().collect::<Vec<_>>(), [first]);
        session.observe_call(first, order("low")).unwrap();
        // The same number twice, under every way of reporting a result.
        let twice = not_open("lookup_order", first, &[]);
        assert_eq!(
            session.observe_call(first, order("high")),
            Err(twice.clone())
        );
        assert_eq!(
            session.observe_failure("lookup_order", Some(first), "down"),
            Err(twice.clone())
        );
        assert_eq!(
            session.observe_cancelled("lookup_order", Some(first)),
            Err(twice.clone())
        );
        assert_eq!(
            session.observe_input_required("lookup_order", Some(first)),
            Err(twice)
        );
        let results = result_numbers(&session);
        assert_eq!(
            results,
            [Some(first)],
            "only the answer of call 1 is recorded"
        );
        let moved = session.end_iteration();
        assert_eq!(
            (moved.by, moved.to.as_deref()),
            (MoveBy::Stay, Some("triage")),
            "a refused result routes nothing: the high risk would have moved to refunds"
        );
        let events = session.take_events();
        let replayed = crate::replay(session.graph(), &events).unwrap();
        assert_eq!(replayed, events);
    }

    /// The call number of each result the session has recorded.
    fn result_numbers(session: &Session) -> Vec<Option<u64>> {
        session
            .events()
            .iter()
            .filter_map(|event| match event {
                Event::Result(result) => Some(result.call),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_result_with_no_number_answers_the_oldest_open_call_of_its_tool() {
        let mut session = session(Posture::Assist);
        let first = admitted(&mut session, "lookup_order");
        let second = admitted(&mut session, "lookup_order");
        session.observe(order("low"));
        assert_eq!(session.open_calls().collect::<Vec<_>>(), [second]);
        session.observe(order("low"));
        session.observe(order("low"));
        let results = result_numbers(&session);
        assert_eq!(results, [Some(first), Some(second), None]);
        session.end_iteration();
        let events = session.take_events();
        assert_eq!(crate::replay(session.graph(), &events).unwrap(), events);
    }

    #[test]
    fn a_call_that_is_not_open_is_refused_naming_the_call_the_open_ones_and_the_fix() {
        let error = not_open("lookup_order", 7, &[1, 3]);
        assert_eq!(error.code(), "result-call-not-open");
        assert_eq!(
            error.to_string(),
            "a result of \"lookup_order\" gives call 7, which is not an open call of that tool (open calls of \"lookup_order\": 1, 3); pass the number call_tool gave the call, once, or observe the result with no number"
        );
        let many: Vec<u64> = (1..=12).collect();
        let said = not_open(&"t".repeat(MAX_ID_ECHO + 1), 99, &many).to_string();
        assert!(
            said.starts_with("a result of a tool name of 257 bytes gives call 99"),
            "{said}"
        );
        assert!(
            said.contains(": 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … and 2 more)"),
            "{said}"
        );
        assert!(
            not_open("t", 1, &[])
                .to_string()
                .contains("(open calls of \"t\": none)")
        );
    }
}
