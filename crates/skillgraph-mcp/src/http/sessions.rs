//! The handshake generation's sessions as the front holds them (SPEC §9.4,
//! §9.8): each bound to the principal that opened it, busy while a request
//! naming it is answered (a held GET stream included), and placed as
//! [`shares`](crate::shares) says: at a principal's quota its own least
//! recently used idle session goes, never another's. A session that has
//! only shaken hands may [sleep](super::sleep): its handshake is kept here,
//! and a request naming it waits while it falls asleep or wakes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};

use super::sleep::Handshake;
use crate::shares::{NoRoom, Seat, place};

/// A handshake session as the front knows it.
struct Held {
    /// The principal it is bound to (with `--auth-tokens`).
    principal: Option<String>,
    /// When a request naming it last ended.
    last: Instant,
    /// Requests naming it whose answers are not sent whole yet.
    busy: usize,
    /// Whether no request but its `notifications/initialized` has named
    /// it: only such a session may sleep.
    only_shook: bool,
    /// Its run and its client's `initialize`.
    handshake: Handshake,
    /// Whether it sleeps: rmcp holds no session for it.
    asleep: bool,
    /// Taken shared by each request naming it while it is answered, and
    /// alone to put it to sleep or wake it.
    gate: Arc<RwLock<()>>,
}

impl Held {
    /// Whether it may be forgotten: idle for the time to live `ttl`.
    fn expired(&self, ttl: Duration) -> bool {
        self.busy == 0 && self.last.elapsed() >= ttl
    }
}

/// The sessions held, by id.
#[derive(Clone)]
pub(super) struct Sessions {
    table: Arc<Mutex<HashMap<String, Held>>>,
    ttl: Duration,
    max: usize,
    quota: usize,
}

/// A request naming a held session: the session counts as busy until this
/// is dropped, with the answer's last byte sent or the request abandoned.
pub(super) struct InFlight {
    sessions: Sessions,
    session: String,
    /// The session's gate.
    gate: Arc<RwLock<()>>,
    /// This request's share of the gate, once taken.
    shared: Option<OwnedRwLockReadGuard<()>>,
}

/// A session alone after its handshake, about to sleep: no request enters
/// it until this is dropped.
pub(super) struct Alone {
    sessions: Sessions,
    session: String,
    _gate: OwnedRwLockWriteGuard<()>,
}

impl Alone {
    /// It sleeps now: its next request wakes it.
    pub(super) fn slept(self) {
        self.sessions.set_asleep(&self.session, true);
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut table) = self.sessions.table.lock()
            && let Some(held) = table.get_mut(&self.session)
        {
            held.busy = held.busy.saturating_sub(1);
            held.last = Instant::now();
        }
    }
}

impl Sessions {
    /// No session yet: each dropped when idle for `ttl` (as rmcp drops
    /// it), at most `max` in all and `quota` per principal.
    pub(super) fn new(ttl: Duration, max: usize, quota: usize) -> Self {
        Sessions {
            table: Arc::default(),
            ttl,
            max: max.max(1),
            quota: quota.max(1),
        }
    }

    /// A request naming `session`, when it is held for `principal` and has
    /// not been idle for the time to live: busy until the returned guard
    /// is dropped (its share of the gate taken by [`InFlight::awake`] or
    /// [`InFlight::share`]), and the session's handshake. `shaking`: the
    /// request is the session's `notifications/initialized`.
    pub(super) fn enter(
        &self,
        session: &str,
        principal: Option<&str>,
        shaking: bool,
    ) -> Option<(InFlight, Handshake)> {
        let mut table = self.table.lock().ok()?;
        let held = table.get_mut(session)?;
        if held.principal.as_deref() != principal {
            return None;
        }
        if held.expired(self.ttl) {
            table.remove(session);
            return None;
        }
        held.busy += 1;
        held.only_shook &= shaking;
        let in_flight = InFlight {
            sessions: self.clone(),
            session: session.to_owned(),
            gate: Arc::clone(&held.gate),
            shared: None,
        };
        Some((in_flight, held.handshake.clone()))
    }

    /// Whether `session` is held and sleeps.
    fn asleep(&self, session: &str) -> bool {
        self.table
            .lock()
            .ok()
            .and_then(|table| table.get(session).map(|held| held.asleep))
            .unwrap_or(false)
    }

    /// Say whether `session` sleeps.
    fn set_asleep(&self, session: &str, asleep: bool) {
        if let Ok(mut table) = self.table.lock()
            && let Some(held) = table.get_mut(session)
        {
            held.asleep = asleep;
        }
    }

    /// Hold `id`, a session another replica shook hands for, restored from
    /// the run store (SPEC §14.6): asleep, so that its first request here
    /// wakes it with `handshake` replayed. As [`Sessions::hold`].
    pub(super) fn hold_asleep(
        &self,
        id: String,
        principal: Option<String>,
        handshake: Handshake,
    ) -> Result<Option<String>, NoRoom> {
        let evicted = self.hold(id.clone(), principal, handshake)?;
        self.set_asleep(&id, true);
        if let Ok(mut table) = self.table.lock()
            && let Some(held) = table.get_mut(&id)
        {
            held.only_shook = false;
        }
        Ok(evicted)
    }

    /// Whether `session` is held here.
    pub(super) fn knows(&self, session: &str) -> bool {
        self.table
            .lock()
            .map(|table| table.contains_key(session))
            .unwrap_or(false)
    }

    /// Forget the sessions idle past the time to live (rmcp has closed the
    /// awake ones), and hold `new` for `principal`, started by
    /// `handshake`: `Ok(Some(id))` when the session `id`
    /// must be closed to make room, `Err` when nothing idle may go.
    pub(super) fn hold(
        &self,
        new: String,
        principal: Option<String>,
        handshake: Handshake,
    ) -> Result<Option<String>, NoRoom> {
        let Ok(mut table) = self.table.lock() else {
            return Err(NoRoom::Full);
        };
        self.retain_live(&mut table);
        let seats = table.iter().map(|(key, held)| Seat {
            key,
            principal: held.principal.as_deref(),
            last: held.last,
            busy: held.busy > 0,
        });
        let evicted = place(seats, principal.as_deref(), Some(self.quota), self.max)?.cloned();
        if let Some(evicted) = &evicted {
            table.remove(evicted);
        }
        table.insert(
            new,
            Held {
                principal,
                last: Instant::now(),
                busy: 0,
                only_shook: true,
                handshake,
                asleep: false,
                gate: Arc::default(),
            },
        );
        Ok(evicted)
    }

    /// Forget the sessions idle past the time to live: rmcp closes the
    /// awake ones itself, and a sleeping one's run goes with it (its record
    /// file closed).
    pub(super) fn forget_idle(&self) {
        if let Ok(mut table) = self.table.lock() {
            self.retain_live(&mut table);
        }
    }

    /// Keep in `table` the sessions busy or idle for less than the time
    /// to live.
    fn retain_live(&self, table: &mut HashMap<String, Held>) {
        table.retain(|_, held| !held.expired(self.ttl));
    }

    /// Forget `session`, ended by its client or by rmcp.
    pub(super) fn end(&self, session: &str) {
        if let Ok(mut table) = self.table.lock() {
            table.remove(session);
        }
    }
}

impl InFlight {
    /// Take this request's share of the session's gate, waking the session
    /// first, alone, with `wake` if it sleeps: in a task of its own, which
    /// goes on if this request is dropped. `false`: it could not be woken,
    /// and is forgotten.
    pub(super) async fn awake<W>(&mut self, wake: impl Fn() -> W) -> bool
    where
        W: Future<Output = bool> + Send + 'static,
    {
        loop {
            let shared = Arc::clone(&self.gate).read_owned().await;
            if !self.sessions.asleep(&self.session) {
                self.shared = Some(shared);
                return true;
            }
            drop(shared);
            let alone = Arc::clone(&self.gate).write_owned().await;
            if !self.sessions.asleep(&self.session) {
                continue;
            }
            let (sessions, session, waking) = (self.sessions.clone(), self.session.clone(), wake());
            let woken = tokio::spawn(async move {
                let woken = waking.await;
                if woken {
                    sessions.set_asleep(&session, false);
                } else {
                    sessions.end(&session);
                }
                drop(alone);
                woken
            });
            if !woken.await.unwrap_or(false) {
                return false;
            }
        }
    }

    /// Take this request's share of the session's gate, asleep or awake.
    pub(super) async fn share(&mut self) {
        self.shared = Some(Arc::clone(&self.gate).read_owned().await);
    }

    /// This request's session alone, when nothing but its handshake has
    /// named it and no other request names it now: the right to put it to
    /// sleep. `None` otherwise. This request's share of the gate is given
    /// up.
    pub(super) fn alone_after_handshake(&mut self) -> Option<Alone> {
        drop(self.shared.take());
        let table = self.sessions.table.lock().ok()?;
        let held = table
            .get(&self.session)
            .filter(|held| held.only_shook && !held.asleep)?;
        let gate = Arc::clone(&held.gate).try_write_owned().ok()?;
        Some(Alone {
            sessions: self.sessions.clone(),
            session: self.session.clone(),
            _gate: gate,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Sessions {
        /// Whether `session` is held.
        fn holds(&self, session: &str) -> bool {
            self.table.lock().unwrap().contains_key(session)
        }
    }

    fn hold(sessions: &Sessions, id: &str, principal: &str) -> Result<Option<String>, NoRoom> {
        sessions.hold(id.into(), Some(principal.into()), Handshake::default())
    }

    /// `session` entered by `principal` and awake (woken, if it slept).
    async fn entered(
        sessions: &Sessions,
        session: &str,
        principal: &str,
        shaking: bool,
    ) -> Option<InFlight> {
        let (mut in_flight, _) = sessions.enter(session, Some(principal), shaking)?;
        in_flight
            .awake(|| async { true })
            .await
            .then_some(in_flight)
    }

    #[tokio::test]
    async fn held_streams_count_against_their_principal_only() {
        let sessions = Sessions::new(Duration::from_secs(60), 50, 2);
        assert_eq!(hold(&sessions, "a1", "ann"), Ok(None));
        assert_eq!(hold(&sessions, "a2", "ann"), Ok(None));
        let streams = (
            entered(&sessions, "a1", "ann", false).await.unwrap(),
            entered(&sessions, "a2", "ann", false).await.unwrap(),
        );
        assert_eq!(hold(&sessions, "a3", "ann"), Err(NoRoom::Quota));
        assert_eq!(hold(&sessions, "b1", "bob"), Ok(None));
        assert!(
            entered(&sessions, "b1", "ann", false).await.is_none(),
            "not ann's"
        );
        drop(streams);
        assert_eq!(hold(&sessions, "a3", "ann"), Ok(Some("a1".into())));
    }

    #[tokio::test]
    async fn a_session_sleeps_alone_after_its_handshake_and_wakes_alone() {
        let sessions = Sessions::new(Duration::from_secs(60), 50, 50);
        assert_eq!(hold(&sessions, "s", "ann"), Ok(None));
        let mut shaking = entered(&sessions, "s", "ann", true).await.unwrap();
        let other = entered(&sessions, "s", "ann", true).await.unwrap();
        assert!(
            shaking.alone_after_handshake().is_none(),
            "another request names it"
        );
        drop(other);
        let alone = shaking
            .alone_after_handshake()
            .expect("alone after its handshake");
        let woken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let wake = |sessions: Sessions| {
            let woken = Arc::clone(&woken);
            tokio::spawn(async move {
                let (mut in_flight, _) = sessions.enter("s", Some("ann"), false)?;
                let waking = in_flight
                    .awake(|| {
                        woken.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        async { true }
                    })
                    .await;
                waking.then_some(in_flight)
            })
        };
        let (first, second) = (wake(sessions.clone()), wake(sessions.clone()));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !first.is_finished(),
            "a request waits while it falls asleep"
        );
        alone.slept();
        assert!(first.await.unwrap().is_some() && second.await.unwrap().is_some());
        assert_eq!(
            woken.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "woken once"
        );
        let mut after = entered(&sessions, "s", "ann", true).await.unwrap();
        assert!(
            after.alone_after_handshake().is_none(),
            "another request than the handshake named it"
        );
    }

    #[tokio::test]
    async fn a_session_that_cannot_wake_is_forgotten() {
        let sessions = Sessions::new(Duration::from_secs(60), 50, 50);
        assert_eq!(hold(&sessions, "s", "ann"), Ok(None));
        let mut shaking = entered(&sessions, "s", "ann", true).await.unwrap();
        shaking.alone_after_handshake().expect("alone").slept();
        let (mut in_flight, _) = sessions.enter("s", Some("ann"), false).unwrap();
        assert!(!in_flight.awake(|| async { false }).await);
        assert!(sessions.enter("s", Some("ann"), false).is_none());
    }

    #[tokio::test]
    async fn a_session_idle_past_its_time_to_live_is_gone() {
        let sessions = Sessions::new(Duration::from_millis(50), 50, 50);
        assert_eq!(hold(&sessions, "s", "ann"), Ok(None));
        drop(entered(&sessions, "s", "ann", false).await.unwrap());
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(sessions.enter("s", Some("ann"), false).is_none());
        assert_eq!(hold(&sessions, "t", "ann"), Ok(None));
        let held = entered(&sessions, "t", "ann", false).await.unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        sessions.forget_idle();
        assert!(sessions.holds("t"), "a busy one is kept");
        drop(held);
        tokio::time::sleep(Duration::from_millis(80)).await;
        sessions.forget_idle();
        assert!(!sessions.holds("t"), "an idle one is forgotten");
    }
}
