//! A skill's procedure at run time (SPEC §15.1, §15.2): the pointer, which
//! lives while the cursor stands on a skill with steps and starts again at
//! 1 each time the cursor arrives there; its advance on a successful result
//! of the current step's tool; the hold-out of the procedure's other tools;
//! and `skip_step`.

use skill_core::{ResultStatus, Step};

use super::Session;
use crate::record::{
    CallEvent, CallRefusal, Event, GateKind, OnSkip, StepAction, StepEvent, StepRef,
    UnfinishedCause,
};

/// Where the procedure of the cursor's skill stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pointer {
    /// The skill whose procedure it is: the cursor's.
    skill: String,
    /// The current step, from 1; `of + 1` once complete.
    step: usize,
    /// How many steps the procedure has.
    of: usize,
}

impl Pointer {
    fn in_progress(&self) -> bool {
        self.step <= self.of
    }

    /// The current step, `None` once complete: as `next` records it.
    fn current(&self) -> Option<usize> {
        self.in_progress().then_some(self.step)
    }
}

/// Where a skill's procedure stands, for a driver's answers: the current
/// step with its tool and note, or none of the three once complete.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Procedure {
    /// The skill, the cursor's.
    pub skill: String,
    /// The current step, from 1; `None` once complete.
    pub step: Option<usize>,
    /// How many steps the procedure has.
    pub of: usize,
    /// The current step's tool.
    pub tool: Option<String>,
    /// The current step's note.
    pub note: Option<String>,
}

/// What a `skip_step` call answered.
#[derive(Debug, Clone, PartialEq)]
pub enum SkipAnswer {
    /// The step was skipped (and, under `on_skip: advance`, the pointer
    /// moved on): `text` for the model, the `step` event recorded.
    Skipped {
        /// What the model reads back.
        text: String,
        /// The event recorded.
        step: StepEvent,
    },
    /// Refused (`skip-needs-reason`, `no-procedure`, `budget-exhausted`),
    /// recorded as a `call`.
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

impl Session {
    /// The steps of `id`, when it declares any.
    fn steps_of(&self, id: &str) -> Option<&[Step]> {
        self.graph
            .skill(id)
            .and_then(|skill| skill.steps.as_deref())
            .filter(|steps| !steps.is_empty())
    }

    /// The pointer for a cursor arriving on `cursor`: at step 1 of its
    /// procedure, when it has one.
    pub(super) fn pointer_at(&self, cursor: Option<&str>) -> Option<Pointer> {
        let skill = cursor?;
        let of = self.steps_of(skill)?.len();
        Some(Pointer {
            skill: skill.to_owned(),
            step: 1,
            of,
        })
    }

    /// The cursor stands where it stood, or moved: on a move to another
    /// skill the procedure in progress is left (recorded `unfinished`) and
    /// the new skill's starts at step 1.
    pub(super) fn cursor_moved(&mut self, from: Option<&str>) {
        if from == self.cursor.as_deref() {
            return;
        }
        self.procedure_unfinished(UnfinishedCause::Left);
        self.pointer = self.pointer_at(self.cursor.clone().as_deref());
    }

    /// The current step of the procedure in progress.
    pub(super) fn current_step(&self) -> Option<StepRef> {
        let pointer = self.pointer.as_ref().filter(|p| p.in_progress())?;
        Some(self.step_ref(pointer, pointer.step))
    }

    /// Step `number` of `pointer`'s procedure.
    fn step_ref(&self, pointer: &Pointer, number: usize) -> StepRef {
        let tool = self
            .steps_of(&pointer.skill)
            .and_then(|steps| steps.get(number.saturating_sub(1)))
            .map(|step| step.tool.clone())
            .unwrap_or_default();
        StepRef {
            skill: pointer.skill.clone(),
            step: number,
            of: pointer.of,
            tool,
        }
    }

    fn push_step(&mut self, step: StepRef, action: StepAction) {
        self.events.push(Event::Step(StepEvent {
            iteration: self.iteration,
            step,
            action,
        }));
    }

    /// A result of `tool` with `status` was observed: when it is the
    /// current step's tool and the result is a success (none declared
    /// counts as one), the pointer advances, recorded as `advanced`.
    pub(super) fn advance(&mut self, tool: &str, status: Option<&str>) {
        let succeeded = status.is_none_or(|status| status == ResultStatus::Success.as_str());
        let Some(pointer) = self.pointer.clone().filter(Pointer::in_progress) else {
            return;
        };
        let step = self.step_ref(&pointer, pointer.step);
        if !succeeded || step.tool != tool {
            return;
        }
        let next = Pointer {
            step: pointer.step + 1,
            ..pointer
        };
        let action = StepAction::Advanced {
            next: next.current(),
        };
        self.pointer = Some(next);
        self.push_step(step, action);
    }

    /// The current step, when the tool `tool` is held out by it: a tool
    /// another step of the procedure in progress names, that no other
    /// active skill carries (SPEC §15.2).
    pub(crate) fn held_by(&self, tool: &str) -> Option<StepRef> {
        let pointer = self.pointer.as_ref().filter(|p| p.in_progress())?;
        let steps = self.steps_of(&pointer.skill)?;
        let current = steps.get(pointer.step - 1)?;
        if current.tool == tool || !steps.iter().any(|step| step.tool == tool) {
            return None;
        }
        let elsewhere = self
            .active_skills()
            .into_iter()
            .filter(|id| *id != pointer.skill)
            .filter_map(|id| self.graph.skill(id))
            .any(|skill| skill.tool(tool).is_some());
        (!elsewhere).then(|| self.step_ref(pointer, pointer.step))
    }

    /// The teaching answer for a call of `tool` held out by `step`.
    pub(crate) fn held_text(&self, tool: &str, step: &StepRef) -> String {
        format!(
            "{tool} was not called: {skill}'s procedure is at step {n} of {of}, {note} ({current}), and {tool} waits for its own step. Call {current} now; if that step cannot or need not be done, call skip_step with your reason.",
            skill = step.skill,
            n = step.step,
            of = step.of,
            note = self.note_of(step),
            current = step.tool,
        )
    }

    fn note_of(&self, step: &StepRef) -> String {
        self.steps_of(&step.skill)
            .and_then(|steps| steps.get(step.step.saturating_sub(1)))
            .map(|step| step.note.trim().trim_end_matches('.').to_owned())
            .unwrap_or_default()
    }

    /// Where the procedure of the cursor's skill stands, while the cursor
    /// stands on a skill with steps.
    pub fn procedure(&self) -> Option<Procedure> {
        let pointer = self.pointer.as_ref()?;
        let current = pointer
            .current()
            .map(|number| self.step_ref(pointer, number));
        Some(Procedure {
            skill: pointer.skill.clone(),
            step: pointer.current(),
            of: pointer.of,
            note: current.as_ref().map(|step| self.note_of(step)),
            tool: current.map(|step| step.tool),
        })
    }

    /// Whether a procedure is in progress, so that `skip_step` is offered.
    pub fn offers_skip_step(&self) -> bool {
        self.pointer.as_ref().is_some_and(Pointer::in_progress)
    }

    /// What the model is told of a step `event` it caused: a step done
    /// (with the next, or the procedure complete), or skipped.
    pub fn step_said(&self, event: &StepEvent) -> String {
        let done = &event.step;
        let next = |next: Option<usize>| match next {
            Some(number) => {
                let pointer = Pointer {
                    skill: done.skill.clone(),
                    step: number,
                    of: done.of,
                };
                let step = self.step_ref(&pointer, number);
                format!(
                    "Next: step {number} of {}, {} ({}).",
                    done.of,
                    self.note_of(&step),
                    step.tool
                )
            }
            None => format!("That completes {}'s procedure.", done.skill),
        };
        match &event.action {
            StepAction::Advanced { next: after } => format!(
                "Step {} of {} of {}'s procedure is done ({}). {}",
                done.step,
                done.of,
                done.skill,
                done.tool,
                next(*after)
            ),
            StepAction::Skipped {
                on_skip: OnSkip::Advance,
                next: after,
                ..
            } => format!(
                "Step {} of {} ({}) is skipped, with your reason recorded. {}",
                done.step,
                done.of,
                done.tool,
                next(*after)
            ),
            StepAction::Skipped { .. } => format!(
                "Your reason is recorded, but {} keeps step {} of {} ({}) current. You may still call {}, use another tool, or answer the user and say why this step was not done.",
                done.skill, done.step, done.of, done.tool, done.tool
            ),
            StepAction::Unfinished { remaining, .. } => format!(
                "{}'s procedure was left with {} step(s) not done.",
                done.skill,
                remaining.len()
            ),
        }
    }

    /// A `skip_step` call with `reason` (blank or `None`: none given),
    /// judged and answered by the session (SPEC §15.2). With a procedure
    /// in progress and a reason, the current step is recorded `skipped`
    /// and, under `on_skip: advance` (the default), the pointer moves on;
    /// under `hold` it stays. Otherwise refused, as a `call` event:
    /// `no-procedure`, or `skip-needs-reason`. Nothing moves the cursor.
    pub fn skip_step(&mut self, reason: Option<&str>) -> SkipAnswer {
        if self.budget_spent() {
            // The refusal first, then what the spent budget records.
            let call = self.skip_call_refused(CallRefusal::BudgetExhausted);
            let text = self.wrap_up();
            return SkipAnswer::Refused {
                text,
                call,
                escalated: false,
            };
        }
        let reason = reason.map(str::trim).unwrap_or_default();
        let pointer = self.pointer.clone().filter(Pointer::in_progress);
        let Some(pointer) = pointer else {
            return self.refuse_skip(
                CallRefusal::NoProcedure,
                "skip_step has nothing to pass over: no procedure is in progress here. Go on with the tools listed now.".to_owned(),
            );
        };
        let step = self.step_ref(&pointer, pointer.step);
        if reason.is_empty() {
            let text = format!(
                "skip_step needs a reason: say in a sentence why step {} of {} ({}) should be passed over, and call it again.",
                step.step, step.of, step.tool
            );
            return self.refuse_skip(CallRefusal::SkipNeedsReason, text);
        }
        let on_skip = OnSkip::of(
            self.graph
                .skill(&pointer.skill)
                .and_then(|skill| skill.on_skip.as_deref()),
        );
        let after = match on_skip {
            OnSkip::Advance => Pointer {
                step: pointer.step + 1,
                ..pointer
            },
            OnSkip::Hold => pointer,
        };
        let event = StepEvent {
            iteration: self.iteration,
            step,
            action: StepAction::Skipped {
                reason: reason.to_owned(),
                on_skip,
                next: after.current(),
            },
        };
        self.pointer = Some(after);
        self.events.push(Event::Step(event.clone()));
        SkipAnswer::Skipped {
            text: self.step_said(&event),
            step: event,
        }
    }

    fn refuse_skip(&mut self, refusal: CallRefusal, text: String) -> SkipAnswer {
        let call = self.skip_call_refused(refusal);
        let escalated = self.count_refusal(GateKind::Call, skill_tools::SKIP_STEP, refusal.code());
        SkipAnswer::Refused {
            text,
            call,
            escalated,
        }
    }

    /// A `skip_step` call refused for `refusal`, recorded.
    fn skip_call_refused(&mut self, refusal: CallRefusal) -> CallEvent {
        let call = CallEvent {
            iteration: self.iteration,
            tool_name: skill_tools::SKIP_STEP.to_owned(),
            call: None,
            accepted: false,
            refusal: Some(refusal),
            allowed: None,
            held: None,
        };
        self.events.push(Event::Call(call.clone()));
        call
    }
}
