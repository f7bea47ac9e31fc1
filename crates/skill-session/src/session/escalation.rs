//! Escalation (SPEC §15.5): the refusals of a turn counted, every refusal
//! but `self-call` and `budget-exhausted`; the one that reaches the map's
//! `after_refusals` (3 by default, 0: never) records `escalated` once per
//! turn. The session only signals: a driver says so (a field, `_meta`, a
//! log message); nothing changes models.

use super::Session;
use crate::record::{CountedRefusal, EscalatedEvent, Event, GateKind};

/// How many refusals in a turn escalate when the map does not say.
pub(super) const DEFAULT_AFTER_REFUSALS: u64 = 3;

impl Session {
    /// The turn's escalation, once its refusals reached the count.
    pub fn escalated(&self) -> Option<&EscalatedEvent> {
        self.escalated.as_ref()
    }

    /// Count a refusal by `gate` of `subject` (an id read or a tool
    /// called) for `refusal`, recording `escalated` when it reaches the
    /// count: then `true`, for the answer to carry.
    pub(super) fn count_refusal(&mut self, gate: GateKind, subject: &str, refusal: &str) -> bool {
        if self.after_refusals == 0 || self.escalated.is_some() {
            return false;
        }
        let (id, tool_name) = match gate {
            GateKind::Read => (Some(subject.to_owned()), None),
            GateKind::Call => (None, Some(subject.to_owned())),
        };
        self.refusals.push(CountedRefusal {
            iteration: self.iteration,
            gate,
            id,
            tool_name,
            refusal: refusal.to_owned(),
        });
        if u64::try_from(self.refusals.len()).is_ok_and(|count| count >= self.after_refusals) {
            let event = EscalatedEvent {
                iteration: self.iteration,
                after_refusals: self.after_refusals,
                refusals: std::mem::take(&mut self.refusals),
            };
            self.events.push(Event::Escalated(event.clone()));
            self.escalated = Some(event);
            return true;
        }
        false
    }
}
