//! The handshake generation's sessions as the front holds them (SPEC §9.4,
//! §9.8): each bound to the principal that opened it, busy while a request
//! naming it is answered (a held GET stream included), and placed as
//! [`shares`](crate::shares) says: at a principal's quota its own least
//! recently used idle session goes, never another's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::shares::{NoRoom, Seat, place};

/// A handshake session as the front knows it.
struct Held {
    /// The principal it is bound to (with `--auth-tokens`).
    principal: Option<String>,
    /// When a request naming it last ended.
    last: Instant,
    /// Requests naming it whose answers are not sent whole yet.
    busy: usize,
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

    /// A request naming `session`, when it is held for `principal`: busy
    /// until the returned guard is dropped.
    pub(super) fn enter(&self, session: &str, principal: Option<&str>) -> Option<InFlight> {
        let mut table = self.table.lock().ok()?;
        let held = table.get_mut(session)?;
        if held.principal.as_deref() != principal {
            return None;
        }
        held.busy += 1;
        Some(InFlight {
            sessions: self.clone(),
            session: session.to_owned(),
        })
    }

    /// Forget the sessions rmcp has closed (idle past the time to live),
    /// and hold `new` for `principal`: `Ok(Some(id))` when the session `id`
    /// must be closed to make room, `Err` when nothing idle may go.
    pub(super) fn hold(
        &self,
        new: String,
        principal: Option<String>,
    ) -> Result<Option<String>, NoRoom> {
        let Ok(mut table) = self.table.lock() else {
            return Err(NoRoom::Full);
        };
        let ttl = self.ttl;
        table.retain(|_, held| held.busy > 0 || held.last.elapsed() < ttl);
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
            },
        );
        Ok(evicted)
    }

    /// Forget `session`, ended by its client.
    pub(super) fn end(&self, session: &str) {
        if let Ok(mut table) = self.table.lock() {
            table.remove(session);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_streams_count_against_their_principal_only() {
        let sessions = Sessions::new(Duration::from_secs(60), 50, 2);
        let ann = || Some("ann".to_owned());
        assert_eq!(sessions.hold("a1".into(), ann()), Ok(None));
        assert_eq!(sessions.hold("a2".into(), ann()), Ok(None));
        let streams = (
            sessions.enter("a1", Some("ann")).unwrap(),
            sessions.enter("a2", Some("ann")).unwrap(),
        );
        assert_eq!(sessions.hold("a3".into(), ann()), Err(NoRoom::Quota));
        assert_eq!(sessions.hold("b1".into(), Some("bob".into())), Ok(None));
        assert!(sessions.enter("b1", Some("ann")).is_none(), "not ann's");
        drop(streams);
        assert_eq!(sessions.hold("a3".into(), ann()), Ok(Some("a1".into())));
    }
}
