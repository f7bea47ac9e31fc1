//! The record (SPEC §8.4): one typed event per step that changed the session
//! or showed the model something, written as JSON Lines, each line
//! `{ "v": 1, "event": KIND, "iteration": N, … }`. `docs/record.md`
//! describes every field.

//!
//! The record is the bottom of this crate: it names the decisions (the
//! posture, the call policy, the refusals, what moved the cursor) that the
//! gates and the session make, and depends on none of them.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
pub use skill_core::MoveBy;
use skill_core::{
    Budget, Escalation, Flavor, Menu, Roles, Route, Skill, SkillMap, Start, Step, TargetClass,
    ToolDecl, Trigger,
};
use skill_guard::{ConditionValue, Conflict, GuardEvaluation, Operator};
use skill_tools::OwnedOfferView;

/// How a session judges reads of hops (never of open skills), fixed per
/// session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Posture {
    /// A read of any hop is accepted (the default).
    #[default]
    Assist,
    /// A read of a hop is accepted only while the turn's menu is outstanding
    /// and names it.
    Guard,
    /// Every read of a hop is refused: only routes move the cursor.
    Rails,
}

impl Posture {
    /// Every posture, in the order the record documents them.
    pub const ALL: [Posture; 3] = [Posture::Assist, Posture::Guard, Posture::Rails];

    /// `assist`, `guard` or `rails`.
    pub fn as_str(self) -> &'static str {
        match self {
            Posture::Assist => "assist",
            Posture::Guard => "guard",
            Posture::Rails => "rails",
        }
    }
}

/// Which calls of host tools a session accepts (SPEC §9.3), fixed per
/// session and written in the record's `start` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CallPolicy {
    /// Every call is accepted; a call of a tool no active skill carries is
    /// recorded `offered: false` (the default: a host's own dispatch, and
    /// MCP's handshake generation).
    #[default]
    Scoped,
    /// A call of a tool no active skill carries is refused with a teaching
    /// answer and recorded as a `call` event.
    Strict,
    /// Every call is accepted and counts as offered: the host offers every
    /// tool.
    All,
}

impl CallPolicy {
    /// Every policy, in the order the record documents them.
    pub const ALL: [CallPolicy; 3] = [CallPolicy::Scoped, CallPolicy::Strict, CallPolicy::All];

    /// `scoped`, `strict` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallPolicy::Scoped => "scoped",
            CallPolicy::Strict => "strict",
            CallPolicy::All => "all",
        }
    }
}

/// Why the read gate refused a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Refusal {
    /// The id is the cursor: a notice, nothing moves.
    SelfCall,
    /// The id is neither a hop nor open from here, or hidden from the session.
    Unreachable,
    /// A hop under `rails`: only routes move the cursor.
    PostureRails,
    /// A hop under `guard`, off the outstanding menu.
    PostureGuardOffMenu,
    /// A hop under `guard`, with no menu outstanding.
    PostureGuardNoMenu,
    /// The call's arguments name no skill id (no `id`, an `id` that is not
    /// a string, another argument): judged before the gate. The read's `id`
    /// is what was given for `id` as JSON, empty when nothing was.
    Malformed,
    /// The id is not a skill of the map: judged before the gate.
    Unknown,
    /// The turn's budget is spent (SPEC §15.3): judged before anything.
    BudgetExhausted,
}

impl Refusal {
    /// Every refusal, in the order the record documents them.
    pub const ALL: [Refusal; 8] = [
        Refusal::SelfCall,
        Refusal::Unreachable,
        Refusal::PostureRails,
        Refusal::PostureGuardOffMenu,
        Refusal::PostureGuardNoMenu,
        Refusal::Malformed,
        Refusal::Unknown,
        Refusal::BudgetExhausted,
    ];

    /// The refusal's stable code, as the record spells it.
    pub fn code(self) -> &'static str {
        match self {
            Refusal::SelfCall => "self-call",
            Refusal::Unreachable => "unreachable",
            Refusal::PostureRails => "posture-rails",
            Refusal::PostureGuardOffMenu => "posture-guard-off-menu",
            Refusal::PostureGuardNoMenu => "posture-guard-no-menu",
            Refusal::Malformed => "malformed",
            Refusal::Unknown => "unknown",
            Refusal::BudgetExhausted => "budget-exhausted",
        }
    }
}

/// Why the call gate refused a call of a host tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CallRefusal {
    /// No active skill carries the tool, and the policy is `strict`.
    NotOffered,
    /// The tool is a later (or earlier) step of the procedure in progress,
    /// held out until the current step is done or skipped (SPEC §15.2).
    StepHeld,
    /// `skip_step` without a reason.
    SkipNeedsReason,
    /// `skip_step` with no procedure in progress.
    NoProcedure,
    /// The turn's budget is spent (SPEC §15.3).
    BudgetExhausted,
}

impl CallRefusal {
    /// Every call refusal.
    pub const ALL: [CallRefusal; 5] = [
        CallRefusal::NotOffered,
        CallRefusal::StepHeld,
        CallRefusal::SkipNeedsReason,
        CallRefusal::NoProcedure,
        CallRefusal::BudgetExhausted,
    ];

    /// The refusal's stable code, as the record spells it.
    pub fn code(self) -> &'static str {
        match self {
            CallRefusal::NotOffered => "not-offered",
            CallRefusal::StepHeld => "step-held",
            CallRefusal::SkipNeedsReason => "skip-needs-reason",
            CallRefusal::NoProcedure => "no-procedure",
            CallRefusal::BudgetExhausted => "budget-exhausted",
        }
    }
}

/// A step of a skill's procedure (SPEC §15.1): `{ skill, step, of, tool }`,
/// the step numbered from 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRef {
    /// The skill whose procedure it is.
    pub skill: String,
    /// Its number, from 1.
    pub step: usize,
    /// How many steps the procedure has.
    pub of: usize,
    /// The tool it runs.
    pub tool: String,
}

/// What a skill's `on_skip` says a skipped step does (SPEC §15.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnSkip {
    /// The pointer moves on to the next step (the default).
    #[default]
    Advance,
    /// The pointer stays on the skipped step.
    Hold,
}

impl OnSkip {
    /// A skill's `on_skip` as declared: `hold`, else `advance` (any other
    /// text is the check-up's `on-skip-unknown`).
    pub fn of(declared: Option<&str>) -> Self {
        match declared {
            Some("hold") => OnSkip::Hold,
            _ => OnSkip::Advance,
        }
    }
}

/// Why a procedure was left unfinished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnfinishedCause {
    /// The cursor left the skill.
    Left,
    /// The turn's budget was spent with the procedure in progress.
    Budget,
}

/// The limits a session ran under (SPEC §15.8), as its `start` records
/// them; a record without them ran with every limit off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Limits {
    /// The most iterations a turn takes; `null`: no budget.
    pub max_iterations: Option<u64>,
    /// After how many refusals a turn escalates; 0: never (absent in
    /// records written before escalation, which read as 0).
    #[serde(default)]
    pub after_refusals: u64,
}

/// Which gate refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateKind {
    /// The read gate.
    Read,
    /// The call gate.
    Call,
}

/// One refusal an escalation counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountedRefusal {
    /// The iteration it came in.
    pub iteration: u64,
    /// Which gate refused.
    pub gate: GateKind,
    /// The id read, for a read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool called, for a call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The refusal's code.
    pub refusal: String,
}

/// `escalated`: the turn's refusals reached `after_refusals` (SPEC §15.5),
/// once per turn, in the iteration of the refusal that reached it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EscalatedEvent {
    /// The iteration.
    pub iteration: u64,
    /// The count reached.
    pub after_refusals: u64,
    /// The refusals counted, in order.
    pub refusals: Vec<CountedRefusal>,
}

/// What happened to a turn's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetAction {
    /// It was spent, and a read or call was refused for it.
    Exhausted,
}

/// `budget`: the turn's budget was spent and first refused a read or a
/// call (once per turn).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetEvent {
    /// The iteration.
    pub iteration: u64,
    /// The budget.
    pub max_iterations: u64,
    /// What happened to it.
    pub action: BudgetAction,
}

/// What happened to a step, with what each action records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum StepAction {
    /// A successful result of the step's tool did it.
    Advanced {
        /// The step now current; `null` once the procedure is complete.
        next: Option<usize>,
    },
    /// The model skipped it with `skip_step`.
    Skipped {
        /// The model's reason.
        reason: String,
        /// What the skill's `on_skip` made of it.
        on_skip: OnSkip,
        /// The step now current; `null` once the procedure is complete.
        next: Option<usize>,
    },
    /// The procedure was left with this step current.
    Unfinished {
        /// The steps not done, by number.
        remaining: Vec<usize>,
        /// Why.
        cause: UnfinishedCause,
    },
}

/// `step`: the procedure's pointer moved or was left (SPEC §15.8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepEvent {
    /// The iteration.
    pub iteration: u64,
    /// The step it happened to.
    #[serde(flatten)]
    pub step: StepRef,
    /// What happened.
    #[serde(flatten)]
    pub action: StepAction,
}

/// The record format's version, written as `"v"` on every line.
pub const RECORD_VERSION: u64 = 1;

/// How many bytes of a result the record keeps (4 KiB).
pub const RESULT_HEAD_BYTES: usize = 4096;

/// One event of the record. Serialized with its kind as `"event"`; a line of
/// the record also carries `"v"` (see [`Event::to_line`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// The session began.
    Start(StartEvent),
    /// A turn began.
    Turn(TurnEvent),
    /// The model was shown the `read_skill` offer.
    Offer(OfferEvent),
    /// The model read a skill; the gate judged it.
    Read(ReadEvent),
    /// The call gate judged a call of a host tool.
    Call(CallEvent),
    /// A host tool's result was observed.
    Result(ResultEvent),
    /// An iteration ended and the cursor moved (or stayed).
    Move(MoveEvent),
    /// A step of the procedure in progress was done, skipped or left.
    Step(StepEvent),
    /// The turn's budget was spent.
    Budget(BudgetEvent),
    /// The turn's refusals reached the escalation's count.
    Escalated(EscalatedEvent),
}

impl Event {
    /// The iteration the event belongs to.
    pub fn iteration(&self) -> u64 {
        match self {
            Event::Start(e) => e.iteration,
            Event::Turn(e) => e.iteration,
            Event::Offer(e) => e.iteration,
            Event::Read(e) => e.iteration,
            Event::Call(e) => e.iteration,
            Event::Result(e) => e.iteration,
            Event::Move(e) => e.iteration,
            Event::Step(e) => e.iteration,
            Event::Budget(e) => e.iteration,
            Event::Escalated(e) => e.iteration,
        }
    }

    /// The kind, as the record spells it: `start`, `turn`, `offer`, `read`,
    /// `call`, `result` or `move`.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Start(_) => "start",
            Event::Turn(_) => "turn",
            Event::Offer(_) => "offer",
            Event::Read(_) => "read",
            Event::Call(_) => "call",
            Event::Result(_) => "result",
            Event::Move(_) => "move",
            Event::Step(_) => "step",
            Event::Budget(_) => "budget",
            Event::Escalated(_) => "escalated",
        }
    }

    /// The event as one line of the record (without the newline):
    /// `{"v":1,"event":KIND,"iteration":N,…}`.
    ///
    /// ```
    /// use skill_session::{Event, TurnEvent};
    ///
    /// let turn = Event::Turn(TurnEvent { iteration: 1, user_message: "hi".into(), menu: None, routed: None, gave_up: vec![] });
    /// assert_eq!(turn.to_line(), r#"{"v":1,"event":"turn","iteration":1,"user_message":"hi","routed":null}"#);
    /// ```
    pub fn to_line(&self) -> String {
        let line = Line {
            v: RECORD_VERSION,
            event: self,
        };
        // Every field is a string, number, boolean, list or JSON value with
        // string keys: serializing cannot fail.
        serde_json::to_string(&line).unwrap_or_default()
    }
}

#[derive(Serialize)]
struct Line<'e> {
    v: u64,
    #[serde(flatten)]
    event: &'e Event,
}

/// `start`: the session's first event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartEvent {
    /// The iteration number (1).
    pub iteration: u64,
    /// Where the cursor starts: the map's first entry; `null` without one.
    pub cursor: Option<String>,
    /// The session's posture.
    pub posture: Posture,
    /// The ids hidden from this session (needed to replay it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<String>,
    /// The session's call policy (absent in records written before it was
    /// recorded, which read as `scoped`).
    #[serde(default)]
    pub tools: CallPolicy,
    /// The limits in effect (SPEC §15.8), when any is set; absent: every
    /// limit off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Limits>,
    /// The roles the run took (SPEC §14.8), on a map that declares roles:
    /// the skills all of them hide are withheld from the session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// The declared map, so that the record alone can be explained and drawn.
    pub map: Arc<DeclaredMap>,
}

/// The map as the record declares it: skills with their descriptions and
/// tools, the entries, and the routes with their labels and guards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeclaredMap {
    /// Every skill, in catalog order.
    pub skills: Vec<DeclaredSkill>,
    /// The skills where a run starts.
    pub entries: Vec<String>,
    /// The routes, in declaration order, as the map declares them.
    pub routes: Vec<Route>,
    /// The start block, as the map declares it (SPEC §13).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Start>,
    /// The skills hidden per role, as the map declares them (SPEC §14.8):
    /// with `start.roles`, what a replay withholds.
    #[serde(default, skip_serializing_if = "Roles::is_empty")]
    pub roles: Roles,
    /// The map's budget, as declared (SPEC §15.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// The map's escalation, as declared (SPEC §15.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Escalation>,
}

impl DeclaredMap {
    /// The map this declaration describes, as far as a session reads it:
    /// the skills (id, description, trigger, flavor and tool names, with no
    /// bodies),
    /// the entries and the routes. A session on it makes the decisions a
    /// session on the original map made, so a record can be replayed from
    /// itself alone.
    ///
    /// ```
    /// use skill_core::SkillMap;
    /// use skill_session::DeclaredMap;
    ///
    /// let map: SkillMap = serde_json::from_str(r#"{
    ///     "skills": [{ "id": "triage", "tools": [{ "name": "lookup_order" }] }, { "id": "audit", "trigger": "rule" },
    ///                { "id": "policy", "flavor": "fact" }],
    ///     "entries": ["triage"]
    /// }"#)?;
    /// let declared = DeclaredMap::of(&map);
    /// assert_eq!(DeclaredMap::of(&declared.to_map()), declared);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn to_map(&self) -> SkillMap {
        SkillMap {
            skills: self
                .skills
                .iter()
                .map(|declared| {
                    let mut skill = Skill::new(declared.id.clone());
                    skill.description.clone_from(&declared.description);
                    skill.trigger = declared.trigger;
                    skill.flavor = declared.flavor.clone();
                    skill.tools = declared.tools.iter().map(ToolDecl::new).collect();
                    skill.steps.clone_from(&declared.steps);
                    skill.on_skip.clone_from(&declared.on_skip);
                    skill
                })
                .collect(),
            entries: self.entries.clone(),
            routes: self.routes.clone(),
            start: self.start.clone(),
            roles: self.roles.clone(),
            budget: self.budget.clone(),
            escalation: self.escalation.clone(),
        }
    }

    /// What the record declares of `map`.
    pub fn of(map: &SkillMap) -> Self {
        DeclaredMap {
            skills: map
                .skills
                .iter()
                .map(|skill| DeclaredSkill {
                    id: skill.id.clone(),
                    description: skill.description.clone(),
                    tools: skill.tools.iter().map(|tool| tool.name.clone()).collect(),
                    trigger: skill.trigger,
                    flavor: skill.flavor.clone(),
                    steps: skill.steps.clone(),
                    on_skip: skill.on_skip.clone(),
                })
                .collect(),
            entries: map.entries.clone(),
            routes: map.routes.clone(),
            start: map.start.clone(),
            roles: map.roles.clone(),
            budget: map.budget.clone(),
            escalation: map.escalation.clone(),
        }
    }
}

/// One skill as the record declares it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeclaredSkill {
    /// The skill's id.
    pub id: String,
    /// Its description, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The names of the host tools it carries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// How it activates, when not by a read (`llm-activated`, the default,
    /// is not written): a replay from the record alone needs it, since only
    /// skills activated by a read are offered.
    #[serde(default, skip_serializing_if = "is_default_trigger")]
    pub trigger: Trigger,
    /// Its flavor, when not `skill` (not written then): only skills of
    /// flavor `skill` can be open.
    #[serde(default, skip_serializing_if = "Flavor::is_skill")]
    pub flavor: Flavor,
    /// Its procedure, when it has one (SPEC §15.1): a replay holds tools
    /// out and advances as the session did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Step>>,
    /// Its `on_skip`, when declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_skip: Option<String>,
}

fn is_default_trigger(trigger: &Trigger) -> bool {
    *trigger == Trigger::default()
}

/// `turn`: a user message began a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEvent {
    /// The iteration the turn begins in.
    pub iteration: u64,
    /// The user's message.
    pub user_message: String,
    /// The host's advisory menu for the turn, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub menu: Option<Menu>,
    /// The start rule that decided where the turn starts (SPEC §13.3), or
    /// `null` when none matched (absent in records of maps written before
    /// start rules, which read as `null`).
    #[serde(default)]
    pub routed: Option<RoutedRecord>,
    /// The rules tried before the deciding one (or all, with none) whose
    /// regex gave up at the bound on backtracking, by index: they did not
    /// decide, whatever the message holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gave_up: Vec<usize>,
}

/// The start rule that decided a turn's start: `{ rule, use, label?, witness }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutedRecord {
    /// The rule's index in `start.rules`, from 0.
    pub rule: usize,
    /// The skill the turn starts on.
    #[serde(rename = "use")]
    pub use_skill: String,
    /// The rule's label, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The matched text (SPEC §13.1).
    pub witness: String,
}

/// `offer`: the `read_skill` offer the model was shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OfferEvent {
    /// The iteration.
    pub iteration: u64,
    /// The offer view (SPEC §6.2) the description was rendered from.
    pub view: OwnedOfferView,
}

/// `read`: a `read_skill` call and the gate's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadEvent {
    /// The iteration.
    pub iteration: u64,
    /// The id the model asked for.
    pub id: String,
    /// Its class from the cursor at the iteration's start.
    pub class: TargetClass,
    /// Whether the read was accepted.
    pub accepted: bool,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Refusal>,
    /// When refused: the ids the answer named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
}

/// `call`: a call of a host tool that the call gate judged (SPEC §8.4,
/// §9.3). An accepted call's event is appended before the call is made, so
/// a record whose writer died mid-call shows the call open: a `call` with
/// no `result` of its number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallEvent {
    /// The iteration.
    pub iteration: u64,
    /// The tool the model called.
    pub tool_name: String,
    /// The run's own number for the call: 1, 2, … in the order the gate
    /// judged calls (absent in records written before calls were numbered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    /// Whether the gate accepted the call (absent, and read as a refusal,
    /// in records written before accepted calls were recorded).
    #[serde(default)]
    pub accepted: bool,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<CallRefusal>,
    /// When refused: the skills the answer named, the visible skills that
    /// carry the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
    /// When refused `step-held`: the current step, which holds it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<StepRef>,
}

/// `result`: a host tool's result, observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultEvent {
    /// The iteration.
    pub iteration: u64,
    /// The tool that returned.
    pub tool_name: String,
    /// The number of the accepted call it answers (SPEC §8.4); absent for a
    /// result reported with no call before it, and in records written
    /// before calls were numbered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u64>,
    /// The status the result declared, if any (never inferred).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The result's length in bytes.
    pub bytes: usize,
    /// The result's first 4 KiB (cut on a character boundary).
    pub result: String,
    /// Whether the tool was offered when its result came: among the visible
    /// tools (§8.3), or any tool under the `all` call policy. `false` marks
    /// a call to a tool the active skills do not carry, which a host under
    /// the `scoped` policy dispatches anyway. Written only when `false`.
    #[serde(default = "offered", skip_serializing_if = "is_offered")]
    pub offered: bool,
    /// Why the call failed instead of answering (the upstream died, timed
    /// out, was cancelled, or answered with a protocol error), when it did:
    /// the result is then empty and its status `failure` (SPEC §9.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why a server closed the call for its client, with the error
    /// `cancelled` and no status (SPEC §14.4): `replica-lost` (the replica
    /// that forwarded it died), `drain` (it stopped before the call ended),
    /// `store-unreachable` (its close could not be stored in time). Absent
    /// on every other result, a client's own cancellation included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The move the result proposed, judged (SPEC §15.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propose: Option<ProposeRecord>,
}

fn offered() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde passes fields by reference
fn is_offered(offered: &bool) -> bool {
    *offered
}

/// `move`: where the end of an iteration put the cursor, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MoveEvent {
    /// The iteration that ended.
    pub iteration: u64,
    /// The cursor before.
    pub from: Option<String>,
    /// The cursor after (`from` on a stay).
    pub to: Option<String>,
    /// What moved it.
    pub by: MoveBy,
    /// With `by: route`: the winning route's index among the map's routes
    /// (two routes may join the same two skills).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<usize>,
    /// The winning route's guard evaluation, when it has a guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardRecord>,
    /// Every guard that closed a route, once per route.
    #[serde(default)]
    pub guards_closed: Vec<GuardRecord>,
    /// Later results that reached another target than the winner.
    #[serde(default)]
    pub conflict: Vec<ConflictRecord>,
    /// The hops from the cursor after the move.
    pub reachable: Vec<String>,
    /// The pending pick a route or a proposal overrode (also when both
    /// name one skill).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
    /// Whether a model pick moved off an outstanding menu (`assist` only).
    pub declined_offer: bool,
    /// With `by: tool`: the proposal that moved the cursor (SPEC §15.6;
    /// boxed: most moves have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Box<ProposalMove>>,
    /// The first accepted proposal a route overrode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_proposal: Option<Box<ProposalMove>>,
}

/// An accepted proposal, as a move records it: the tool whose result made
/// it, where to, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposalMove {
    /// The tool whose result proposed the move.
    pub tool_name: String,
    /// The skill proposed.
    pub to: String,
    /// The tool's reason.
    pub reason: String,
}

/// Why a proposal was refused (SPEC §15.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ProposalRefusal {
    /// Not `{ to, reason }` with a skill id and a non-blank reason.
    Malformed,
    /// `to` is no skill of the session's map.
    UnknownSkill,
    /// `to` is the cursor.
    #[serde(rename = "self")]
    SelfMove,
    /// `to` is an open skill, which a read activates: no move goes there.
    Open,
    /// `to` is not a hop from the cursor, or is hidden from the session.
    Unreachable,
    /// The result came from an upstream the map does not trust to propose
    /// (its `mcpServers` entry lacks `"proposals": true`).
    NotTrusted,
}

impl ProposalRefusal {
    /// The refusal's stable code, as the record spells it.
    pub fn code(self) -> &'static str {
        match self {
            ProposalRefusal::Malformed => "malformed",
            ProposalRefusal::UnknownSkill => "unknown-skill",
            ProposalRefusal::SelfMove => "self",
            ProposalRefusal::Open => "open",
            ProposalRefusal::Unreachable => "unreachable",
            ProposalRefusal::NotTrusted => "not-trusted",
        }
    }
}

/// A result's proposal as its `result` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProposeRecord {
    /// The skill proposed (empty when none was given as a string).
    pub to: String,
    /// The reason given (empty when none was given as a string).
    pub reason: String,
    /// Whether the session accepted it.
    pub accepted: bool,
    /// Why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<ProposalRefusal>,
}

/// What made a conflict entry: a route, or an accepted proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConflictBy {
    /// A route a later result reached (absent in records written before
    /// proposals, which read as this).
    #[default]
    Route,
    /// A later accepted proposal.
    Tool,
}

/// One guard's evaluation on a route, for one result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuardRecord {
    /// The route's index among the map's routes (absent in records written
    /// before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<usize>,
    /// The route's source.
    pub from: String,
    /// The route's target.
    pub to: String,
    /// The tool whose result was judged.
    pub tool_name: String,
    /// Whether every condition passed.
    pub verdict: bool,
    /// Each condition's evidence.
    pub conditions: Vec<ConditionRecord>,
}

impl GuardRecord {
    /// The owned record of an evaluation.
    pub fn of(evaluation: &GuardEvaluation<'_>) -> Self {
        GuardRecord {
            route: Some(evaluation.route),
            from: evaluation.from.to_owned(),
            to: evaluation.to.to_owned(),
            tool_name: evaluation.tool_name.to_owned(),
            verdict: evaluation.verdict,
            conditions: evaluation
                .conditions
                .iter()
                .map(|evidence| ConditionRecord {
                    key: evidence.condition.key.to_string(),
                    op: evidence.condition.op,
                    value: evidence.condition.value.clone(),
                    actual_summary: evidence.actual_summary.to_string(),
                    passed: evidence.passed,
                })
                .collect(),
        }
    }
}

/// One condition's evidence: `key op value`, what the key read, and whether
/// it passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionRecord {
    /// The key read.
    pub key: String,
    /// The operator (`eq`, `in`, …).
    pub op: Operator,
    /// What the operator compares with.
    pub value: ConditionValue,
    /// What the key read, bounded (SPEC §4.3).
    pub actual_summary: String,
    /// Whether the condition passed.
    pub passed: bool,
}

/// A later result that reached another target than the winner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictRecord {
    /// The tool whose result reached it.
    pub tool_name: String,
    /// The target it reached.
    pub to: String,
    /// What reached it.
    #[serde(default)]
    pub by: ConflictBy,
}

impl ConflictRecord {
    /// The owned record of a route's conflict.
    pub fn of(conflict: &Conflict<'_>) -> Self {
        ConflictRecord {
            tool_name: conflict.tool_name.to_owned(),
            to: conflict.to.to_owned(),
            by: ConflictBy::Route,
        }
    }
}

/// The first [`RESULT_HEAD_BYTES`] of `text`, cut on a character boundary.
pub(crate) fn head(text: &str) -> &str {
    head_within(text, RESULT_HEAD_BYTES)
}

/// The first `bytes` of `text` at most, cut on a character boundary.
pub(crate) fn head_within(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_starts_with_the_version_and_the_kind() {
        let event = Event::Result(ResultEvent {
            iteration: 3,
            tool_name: "lookup_order".into(),
            call: Some(2),
            status: Some("success".into()),
            bytes: 2,
            result: "{}".into(),
            offered: true,
            error: None,
            reason: None,
            propose: None,
        });
        assert_eq!(
            event.to_line(),
            r#"{"v":1,"event":"result","iteration":3,"tool_name":"lookup_order","call":2,"status":"success","bytes":2,"result":"{}"}"#
        );
        assert_eq!((event.kind(), event.iteration()), ("result", 3));
    }

    #[test]
    fn the_head_is_cut_on_a_character_boundary() {
        let text = format!("{}é", "a".repeat(RESULT_HEAD_BYTES - 1));
        assert_eq!(head(&text).len(), RESULT_HEAD_BYTES - 1);
        assert_eq!(head("short"), "short");
    }
}
