//! The replicas of one run store and the calls they leave open (SPEC
//! §14.4, §14.5). Every replica keeps a liveness key it renews every 3 s
//! (gone 10 s after its last renewal) and a set of the calls it forwarded
//! and did not close, which the [store](crate::store)'s append changes
//! with each step. Every 3 s a replica closes, as `replica-lost`, the open
//! calls of each replica whose key is gone, then forgets that replica: a
//! dead replica's call is closed within 15 s of its death. A replica that
//! stops closes its own calls still open after the drain, as `drain`.
//!
//! Closing is a step like any other, through the [doorway](crate::doorway)
//! on the run as the store holds it: of two replicas that close one call,
//! the fence lets one land, and the other finds the call closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::ErrorData;

use crate::doorway;
use crate::hub::Hub;
use crate::runs::Generation;
use crate::store::Store;
use crate::warn;

/// Why a survivor closed a dead replica's call.
pub(crate) const REPLICA_LOST: &str = "replica-lost";

/// Why a replica closed its own call whose close it could not store.
pub(crate) const STORE_UNREACHABLE: &str = "store-unreachable";

/// Why a stopping replica closed its own call.
pub(crate) const DRAIN: &str = "drain";

/// One round of the heartbeat at a time.
#[derive(Debug, Default)]
pub(crate) struct Heartbeat {
    beating: AtomicBool,
    /// Whether this replica registered once already.
    registered: Arc<AtomicBool>,
}

impl Heartbeat {
    /// Renew this replica's liveness and close the calls of the dead, unless
    /// the last round is still under way.
    pub(crate) fn beat(self: &Arc<Self>, hub: &Arc<Hub>) {
        if hub.store.is_none() || self.beating.swap(true, Ordering::AcqRel) {
            return;
        }
        let (beating, hub) = (Arc::clone(self), Arc::clone(hub));
        tokio::spawn(async move {
            if let Some(store) = hub.store.as_ref() {
                round(&hub, store, &beating.registered).await;
            }
            beating.beating.store(false, Ordering::Release);
        });
    }
}

/// Renew, then close what the dead left open.
async fn round(hub: &Hub, store: &Arc<Store>, registered: &AtomicBool) {
    match store.heartbeat().await {
        Ok(true) => {}
        Ok(false) => {
            if registered.swap(true, Ordering::AcqRel) {
                warn(&format!(
                    "replica {} was taken for dead (its liveness key in the run store at {} lapsed: it did not answer for 10 s), so other replicas may have closed its calls; it is registered anew, and a result of a call closed meanwhile is not appended",
                    store.replica(),
                    store.name()
                ));
            }
        }
        Err(_) => return,
    }
    if store.started_again().await {
        forget_lost_runs(hub, store).await;
    }
    // The store answers again: what could not be closed is closed now.
    for (run, call) in store.take_held_closes() {
        if close(hub, &run, call, STORE_UNREACHABLE).await.is_err() {
            store.hold_closes(&run, &[call]);
        }
    }
    let Ok(dead) = store.dead_replicas().await else {
        return;
    };
    for id in dead {
        if close_all(hub, store, &id, REPLICA_LOST).await {
            let _ = store.forget(&id).await;
        }
    }
}

/// The store started again: the runs held here that it no longer holds
/// (it ran without its append-only file) are said once, counted, and
/// answered as unknown from now on. Nothing is appended again from memory
/// (SPEC §14.11).
async fn forget_lost_runs(hub: &Hub, store: &Store) {
    let Some(runs) = hub.runs.as_ref() else {
        return;
    };
    let held = runs.stored();
    if held.is_empty() {
        return;
    }
    let Ok(lost) = store.missing(&held).await else {
        return;
    };
    if lost.is_empty() {
        return;
    }
    runs.forget(&lost);
    warn(&format!(
        "the run store at {} started again without {} of the {} runs this replica holds (it ran without its append-only file?); they are answered as unknown runs from now on, and nothing is appended again from memory",
        store.name(),
        lost.len(),
        held.len()
    ));
}

/// Close every call replica `id` left open, for `reason`; whether every one
/// was closed (or found closed already).
pub(crate) async fn close_all(
    hub: &Hub,
    store: &Arc<Store>,
    id: &str,
    reason: &'static str,
) -> bool {
    let Ok(open) = store.open_calls(id).await else {
        return false;
    };
    let mut all = true;
    for (run, call) in open {
        if let Err(err) = close(hub, &run, call, reason).await {
            all = false;
            warn(&format!(
                "call {call} of run {run}, left open by replica {id}, could not be closed yet: {}",
                err.message
            ));
        }
    }
    all
}

/// Close call `call` of `run` for `reason`, on the run as the store holds
/// it: nothing when the run or the call is gone.
async fn close(hub: &Hub, run: &str, call: u64, reason: &'static str) -> Result<(), ErrorData> {
    let Some(slot) = hub.stored_run(run, None).await? else {
        return Ok(());
    };
    doorway::step(&slot, Generation::Sessionless, (), |run, ()| {
        run.lost(call, reason)
    })
    .await?;
    Ok(())
}

/// A replica that stops: its calls still open after the drain are closed
/// as `drain`, and it leaves the store's replicas.
pub(crate) async fn leave(hub: &Hub) {
    let Some(store) = hub.store.as_ref() else {
        return;
    };
    let id = store.replica().to_owned();
    if close_all(hub, store, &id, DRAIN).await {
        let _ = store.forget(&id).await;
    }
    let landed = store.landed.load(Ordering::Relaxed);
    let conflicts = store.conflicts.load(Ordering::Relaxed);
    warn(&format!(
        "replica {id} landed {landed} step(s) in the run store at {}; {conflicts} append(s) met another replica's step first and were computed again",
        store.name()
    ));
}
