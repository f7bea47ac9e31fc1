//! Moves a tool proposes (SPEC §15.6): a result may carry `{ to, reason }`,
//! judged when it is observed against the cursor (which moves only at the
//! iteration's end): accepted when `to` is a hop visible to the session and
//! the reason is not blank. At the iteration's end a route wins over the
//! first accepted proposal, which wins over the model's pick. A refused
//! proposal is recorded and explained, never told to the model.

use serde_json::Value;
use skill_core::{TargetClass, ToolResult, classify_target};

use super::{ObserveError, Session};
use crate::record::{Event, ProposalMove, ProposalRefusal, ProposeRecord};

/// A move a tool's result proposes, as it came: `{ "to": ID, "reason":
/// TEXT }`, from a source the host trusts to propose or not (`serve` trusts
/// an upstream whose `mcpServers` entry says `"proposals": true`).
#[derive(Debug, Clone, PartialEq)]
pub struct Proposed {
    /// The proposal as given.
    pub value: Value,
    /// Whether its source may propose moves.
    pub trusted: bool,
}

impl Proposed {
    /// The proposal a `result` recorded, given again (a replay's input): a
    /// malformed one is given as its recorded empty fields, which are
    /// judged malformed again.
    pub(crate) fn of_record(record: &ProposeRecord) -> Self {
        Proposed {
            value: serde_json::json!({ "to": record.to, "reason": record.reason }),
            trusted: record.refusal != Some(ProposalRefusal::NotTrusted),
        }
    }
}

impl Session {
    /// [`observe`](Self::observe) a result that proposes a move, answering
    /// `call` when given (as [`observe_call`](Self::observe_call) does):
    /// the proposal is judged and recorded on the `result`, and an accepted
    /// one takes part in the iteration's move.
    ///
    /// # Errors
    ///
    /// As [`observe_call`](Self::observe_call), when `call` is given.
    pub fn observe_proposed(
        &mut self,
        call: Option<u64>,
        result: ToolResult,
        proposed: Proposed,
    ) -> Result<(), ObserveError> {
        let bytes = result.result.len();
        self.observe_measured_proposing(call, result, bytes, Some(proposed))
    }

    /// Judge `proposed`, a result of `tool`'s, and keep it when accepted.
    pub(super) fn take_proposal(&mut self, tool: &str, proposed: &Proposed) -> ProposeRecord {
        let field = |key: &str| {
            proposed
                .value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let (to, reason) = (field("to"), field("reason"));
        let refusal = if !proposed.trusted {
            Some(ProposalRefusal::NotTrusted)
        } else if to.is_empty() || reason.trim().is_empty() {
            Some(ProposalRefusal::Malformed)
        } else if !self.graph.has_skill(&to) {
            Some(ProposalRefusal::UnknownSkill)
        } else if self.hides(&to) {
            Some(ProposalRefusal::Unreachable)
        } else {
            let hops = self.graph.reachable_ids(self.cursor());
            match classify_target(self.cursor(), &to, &hops, self.graph.open_skills()) {
                TargetClass::Hop => None,
                TargetClass::SelfTarget => Some(ProposalRefusal::SelfMove),
                TargetClass::Open => Some(ProposalRefusal::Open),
                TargetClass::Unreachable => Some(ProposalRefusal::Unreachable),
            }
        };
        if refusal.is_none() {
            self.proposals.push(ProposalMove {
                tool_name: tool.to_owned(),
                to: to.clone(),
                reason: reason.clone(),
            });
        }
        ProposeRecord {
            to,
            reason,
            accepted: refusal.is_none(),
            refusal,
        }
    }

    /// Put `record` on the `result` just recorded.
    pub(super) fn record_proposal(&mut self, record: ProposeRecord) {
        if let Some(Event::Result(result)) = self.events.last_mut() {
            result.propose = Some(record);
        }
    }
}
