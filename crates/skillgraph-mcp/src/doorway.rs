//! The doorway (SPEC §9.10): every step of a run passes here. It takes the
//! run (starting it, under the client's generation, at its first step),
//! hands it to one step of the [core](crate::translate), appends the step's
//! events to the run's record, and only then gives the step's outcome back
//! to be answered. No other code writes a record line, so a call the gate
//! accepted is in the record before it is forwarded, and a record whose
//! writer stopped mid-call shows the call open.

use rmcp::ErrorData;
use skillgraph::skill_session::Run;

use crate::runs::{Generation, Slot, lock};

/// Take `slot`'s run under `generation`, take `step` on it, append the
/// events the step recorded, then give back what the step answered.
///
/// # Errors
///
/// An internal error when the run was lost to an earlier failure.
pub(crate) fn step<T>(
    slot: &Slot,
    generation: Generation,
    step: impl FnOnce(&mut Run) -> T,
) -> Result<T, ErrorData> {
    let mut state = lock(slot)?;
    let answered = step(state.run(generation));
    state.flush();
    Ok(answered)
}

/// Start `slot`'s run under `generation` if it has not started, so that its
/// record opens with `start` (SPEC §9.7: a run that only shook hands still
/// explains).
///
/// # Errors
///
/// As [`step`].
pub(crate) fn start(slot: &Slot, generation: Generation) -> Result<(), ErrorData> {
    step(slot, generation, |_| ())
}
