//! The doorway (SPEC §9.10, §14.3): every step of a run passes here. It
//! takes the run (starting it, under the client's generation, at its first
//! step), hands it to one step of the [core](crate::translate), appends the
//! step's events to the run's record, and only then gives the step's
//! outcome back to be answered. No other code writes a record line, so a
//! call the gate accepted is in the record before it is forwarded, and a
//! record whose writer stopped mid-call shows the call open.
//!
//! A run kept in a shared [store](crate::store) is a copy: its step lands
//! when the store's append answers, computed from the copy's last step. If
//! another replica's step came first, the copy is rebuilt from the store
//! and the step computed again; a step that did not land leaves the copy
//! to be rebuilt before its next step. Nothing is answered (and no call
//! forwarded) before its step landed.

use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use skillgraph::skill_session::{Event, Run};

use crate::StoreError;
use crate::runs::{Generation, Slot, lock};
use crate::store::{Appended, Step, Store, step_id};
use crate::translate;
use crate::warn;

/// How many times a step is computed again after another replica's step
/// came first, before the request fails (SPEC §14.3): before a forward.
const TRIES: u32 = 8;

/// The same for a step that closes a forwarded call, which ran upstream
/// already: it is tried until it lands, within reason.
const CLOSING_TRIES: u32 = 64;

/// Take `slot`'s run under `generation`, take `step` on it with `input`,
/// append the events the step recorded, then give back what the step
/// answered. With a shared store the step may be taken again (on the run
/// rebuilt, with a copy of `input`) until it lands.
///
/// # Errors
///
/// An internal error when the run was lost to an earlier failure, and
/// with a shared store when the store cannot be reached or the run is
/// busy on other replicas; an invalid-params error when the store no
/// longer holds the run.
pub(crate) async fn step<I: Clone, T>(
    slot: &Slot,
    generation: Generation,
    input: I,
    mut step: impl FnMut(&mut Run, I) -> T,
) -> Result<T, ErrorData> {
    let gate = {
        let mut state = lock(slot)?;
        match state.kept.as_ref() {
            Some(kept) => std::sync::Arc::clone(&kept.gate),
            None => {
                let answered = step(state.run(generation), input);
                state.flush();
                return Ok(answered);
            }
        }
    };
    let _turn = gate.lock().await;
    let mut closing = false;
    let mut attempt = 0;
    while attempt < TRIES || (closing && attempt < CLOSING_TRIES) {
        attempt += 1;
        if attempt > 1 {
            // Jittered, so that replicas that met do not meet again.
            let jitter = u64::from(crate::store::step_id().as_bytes()[0] % 8);
            let grown = u64::from(attempt.min(TRIES));
            tokio::time::sleep(Duration::from_millis(1 + jitter * grown)).await;
        }
        let (stale, fresh, seq, store, handle) = {
            let state = lock(slot)?;
            let Some(kept) = state.kept.as_ref() else {
                break;
            };
            (
                kept.stale,
                kept.fresh,
                kept.seq,
                std::sync::Arc::clone(&kept.store),
                kept.handle.clone(),
            )
        };
        if stale {
            reload(slot, &store, &handle).await?;
        } else if !fresh {
            catch_up(slot, &store, &handle, seq).await?;
        }
        let (answered, events, from, principal) = {
            let mut state = lock(slot)?;
            let answered = step(state.run(generation), input.clone());
            let events = state.take_step();
            let Some(kept) = state.kept.as_mut() else {
                break;
            };
            kept.stale = true;
            (answered, events, kept.seq, kept.principal.clone())
        };
        let era = match generation {
            Generation::Handshake => "handshake",
            Generation::Sessionless => "sessionless",
        };
        if events.is_empty() {
            // A step that records nothing still reads the run: it must be
            // the stored run.
            match store
                .seq(&handle)
                .await
                .map_err(|reason| unreachable(&store, &reason))?
            {
                Some(seq) if seq == from => {
                    settle(slot, Vec::new(), from)?;
                    return Ok(answered);
                }
                Some(_) => continue,
                None => return Err(gone(slot)),
            }
        }
        let lines = events
            .iter()
            .map(Event::to_line)
            .collect::<Vec<_>>()
            .join("\n");
        let (opens, closes) = calls_of(&events);
        closing = !closes.is_empty();
        let id = step_id();
        let landing = Step {
            from,
            id: &id,
            lines: &lines,
            principal: &principal,
            era,
            opens: &opens,
            closes: &closes,
        };
        let mut appended = store.append(&handle, &landing).await;
        if appended.is_err() {
            // The same step id again: it lands once whichever send did.
            appended = store.append(&handle, &landing).await;
        }
        if appended.is_err() && !closes.is_empty() {
            // The call ran upstream, and its close could not be stored: it
            // is closed as `store-unreachable` once the store is back.
            store.hold_closes(&handle, &closes);
        }
        match appended.map_err(|reason| unreachable(&store, &reason))? {
            Appended::Landed(seq) => {
                settle(slot, events, seq)?;
                return Ok(answered);
            }
            Appended::Conflict => {}
            Appended::Gone => return Err(gone(slot)),
        }
    }
    let what = if closing {
        "the call ran, and its answer could not be recorded"
    } else {
        "nothing was forwarded"
    };
    Err(ErrorData::internal_error(
        format!(
            "this run is busy on other replicas; its step was taken {attempt} times and another came first each time; {what}; retry"
        ),
        None,
    ))
}

/// The calls a step's `events` open (accepted, so forwarded next) and
/// close (a result under a call's number).
fn calls_of(events: &[Event]) -> (Vec<u64>, Vec<u64>) {
    let mut opens = Vec::new();
    let mut closes = Vec::new();
    for event in events {
        match event {
            Event::Call(call) if call.accepted => opens.extend(call.call),
            Event::Result(result) => closes.extend(result.call),
            _ => {}
        }
    }
    (opens, closes)
}

/// The step landed as the run's step `seq`: its `events` go to the copy's
/// record, and the copy is the store's again.
fn settle(slot: &Slot, events: Vec<Event>, seq: u64) -> Result<(), ErrorData> {
    let mut state = lock(slot)?;
    state.record.append(events);
    if let Some(kept) = state.kept.as_mut() {
        kept.seq = seq;
        kept.stale = false;
        // A session in use lives as long as its run: renewed at most once
        // a minute, off the answering path.
        if let Some((session, renewed)) = kept.session.as_mut()
            && renewed.elapsed() >= RENEW_SESSION
        {
            *renewed = std::time::Instant::now();
            let (store, session) = (std::sync::Arc::clone(&kept.store), session.clone());
            tokio::spawn(async move {
                let _ = store.renew_session(&session).await;
            });
        }
    }
    Ok(())
}

/// How often at most a handshake session's time to live in the store is
/// renewed by its run's steps.
const RENEW_SESSION: Duration = Duration::from_secs(60);

/// Bring `slot`'s copy, which holds `seq` steps, up to the run `store`
/// holds under `handle`: the steps since, applied; the whole run, when
/// they cannot be.
///
/// # Errors
///
/// As [`reload`].
async fn catch_up(slot: &Slot, store: &Store, handle: &str, seq: u64) -> Result<(), ErrorData> {
    let tail = store
        .tail(handle, seq)
        .await
        .map_err(|reason| unreachable(store, &reason))?;
    let caught = match tail {
        Some((text, _)) if text.is_empty() => {
            if let Some(kept) = lock(slot)?.kept.as_mut() {
                kept.fresh = true;
            }
            return Ok(());
        }
        Some((text, seq)) => lock(slot)?.catch_up(&text, seq).is_ok(),
        None => false,
    };
    if caught {
        Ok(())
    } else {
        reload(slot, store, handle).await
    }
}

/// Make `slot`'s copy the run `store` holds under `handle`.
///
/// # Errors
///
/// When the store cannot be reached, holds the run on another map, or
/// holds it as no record this graph rebuilds.
pub(crate) async fn reload(slot: &Slot, store: &Store, handle: &str) -> Result<(), ErrorData> {
    let loaded = store
        .load(handle)
        .await
        .map_err(|err| not_loaded(store, err))?;
    if let Some(loaded) = &loaded
        && loaded.map != store.map()
    {
        return Err(another_map(handle, &loaded.map, store.map()));
    }
    let mut state = lock(slot)?;
    let had = state.kept.as_ref().map_or(0, |kept| kept.seq);
    let holds = loaded.as_ref().map_or(0, |loaded| loaded.seq);
    if loaded.is_none() && had > 0 {
        // The store lost the whole run (SPEC §14.11): it is unknown now,
        // and nothing is appended again from memory.
        drop(state);
        return Err(gone(slot));
    }
    if holds < had {
        warn(&format!(
            "the run store at {} holds {holds} step(s) of run {handle}, where this replica had {had}: steps were lost in the store (restarted without its append-only file?); the run goes on from what the store holds",
            store.name()
        ));
    }
    state.rebuild(loaded)
}

/// The answer for a run started on a map other than the one served.
pub(crate) fn another_map(handle: &str, theirs: &str, ours: &str) -> ErrorData {
    let short = |digest: &str| digest.get(..12).unwrap_or(digest).to_owned();
    ErrorData::internal_error(
        format!(
            "run {handle} was started on another map (sha256 {}…; this replica serves {}…); nothing was appended; serve one map on every replica",
            short(theirs),
            short(ours)
        ),
        None,
    )
}

/// The answer when a run could not be loaded from `store`.
pub(crate) fn not_loaded(store: &Store, err: StoreError) -> ErrorData {
    match err {
        StoreError::Unreachable { reason, .. } => unreachable(store, &reason),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// The answer when the store cannot be reached: nothing was forwarded.
fn unreachable(store: &Store, reason: &str) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "the run store at {} is unreachable ({reason}); nothing was forwarded; retry",
            store.name()
        ),
        None,
    )
}

/// The answer when the store no longer holds the run: as an unknown run.
fn gone(slot: &Slot) -> ErrorData {
    if let Ok(mut state) = lock(slot)
        && let Some(kept) = state.kept.as_mut()
    {
        kept.stale = true;
    }
    ErrorData::invalid_params(translate::NO_SUCH_RUN, None)
}

/// Whether `err` is [`gone`]'s: the caller answers a call with it as with
/// any unknown run.
pub(crate) fn is_gone(err: &ErrorData) -> bool {
    err.code == ErrorCode::INVALID_PARAMS && err.message == translate::NO_SUCH_RUN
}

/// Start `slot`'s run under `generation` if it has not started, so that its
/// record opens with `start` (SPEC §9.7: a run that only shook hands still
/// explains).
///
/// # Errors
///
/// As [`step`].
pub(crate) async fn start(slot: &Slot, generation: Generation) -> Result<(), ErrorData> {
    step(slot, generation, (), |_, ()| ()).await
}
