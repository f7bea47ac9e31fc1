//! A turn's budget at run time (SPEC §15.3): how many iterations remain,
//! and, once the turn's last one has ended, every read and call refused
//! `budget-exhausted` with the wrap-up answer until the next turn.

use super::Session;
use crate::record::{BudgetAction, BudgetEvent, Event, StepAction, UnfinishedCause};

impl Session {
    /// The most iterations a turn takes (the map's `budget`, or the
    /// driver's override); `None`: no budget.
    pub fn max_iterations(&self) -> Option<u64> {
        self.max_iterations
    }

    /// How many iterations remain after this one in the turn's budget
    /// (`max − k` in the turn's k-th iteration, never below 0); `None`
    /// without a budget.
    pub fn iterations_remaining(&self) -> Option<u64> {
        let k = self.iteration.saturating_sub(self.turn_start) + 1;
        self.max_iterations.map(|max| max.saturating_sub(k))
    }

    /// How many more iterations the turn's budget lets begin (`max` less
    /// the iterations the turn ended); `None` without a budget. For a
    /// driver that answers after the iteration ended (a run), this is the
    /// answered iteration's [`iterations_remaining`](Self::iterations_remaining).
    pub fn iterations_left(&self) -> Option<u64> {
        let ended = self.iteration.saturating_sub(self.turn_start);
        self.max_iterations.map(|max| max.saturating_sub(ended))
    }

    /// Whether the turn's budget is spent: its last iteration has ended,
    /// and every read and call is refused until the next turn.
    pub fn budget_spent(&self) -> bool {
        self.max_iterations
            .is_some_and(|max| self.iteration.saturating_sub(self.turn_start) >= max)
    }

    /// The wrap-up answer to a read or call once the budget is spent. The
    /// first such refusal in a turn records `budget` and, with a procedure
    /// in progress, the procedure `unfinished` for the budget.
    pub(super) fn wrap_up(&mut self) -> String {
        let max = self.max_iterations.unwrap_or_default();
        if !self.budget_told {
            self.budget_told = true;
            self.events.push(Event::Budget(BudgetEvent {
                iteration: self.iteration,
                max_iterations: max,
                action: BudgetAction::Exhausted,
            }));
            self.procedure_unfinished(UnfinishedCause::Budget);
        }
        format!(
            "This turn's budget of {max} iteration(s) is spent, so no more tools run in it. Reply to the user now from what is already known: say what got done and what did not."
        )
    }

    /// What the model is told of the budget while 2 or fewer iterations
    /// remain; `None` otherwise.
    pub fn budget_said(&self) -> Option<String> {
        let remaining = self.iterations_remaining().filter(|n| *n <= 2)?;
        Some(match remaining {
            0 => "This is the last iteration of this turn's budget: answer the user after it."
                .to_owned(),
            n => format!("{n} iteration(s) remain in this turn's budget after this one."),
        })
    }

    /// A procedure still in progress, recorded `unfinished` for `cause`.
    pub(super) fn procedure_unfinished(&mut self, cause: UnfinishedCause) {
        let Some(step) = self.current_step() else {
            return;
        };
        let remaining = (step.step..=step.of).collect();
        self.events.push(Event::Step(crate::record::StepEvent {
            iteration: self.iteration,
            step,
            action: StepAction::Unfinished { remaining, cause },
        }));
    }
}
