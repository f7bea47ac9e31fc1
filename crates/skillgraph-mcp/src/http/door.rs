//! The connections `serve --http` holds (SPEC §9.8): at most
//! `--max-connections` (and never more than the file descriptors the
//! process may open leave room for), each known by whether it is stalled,
//! waiting for its client to send a head or a body, or busy, with a
//! request being answered or an answer streaming. A connection beyond the
//! cap takes the place of the one stalled longest, which is closed; when
//! none is stalled, the new connection is closed at once and the others go
//! on. So a client that opens connections and sends nothing, or a part of
//! a head or a body, cannot keep anyone else out; and an accept that fails
//! backs off instead of spinning.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The file descriptors kept for everything but client connections:
/// upstream servers' pipes, record files, the listener itself.
const KEPT_DESCRIPTORS: u64 = 64;

/// The first pause after a failed accept; it doubles up to [`LONGEST_PAUSE`].
pub(super) const FIRST_PAUSE: Duration = Duration::from_millis(10);

/// The longest pause between failed accepts.
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// A connection's `stalled` value while a request of it is being answered.
const BUSY: u64 = u64::MAX;

/// One connection as the door knows it.
#[derive(Debug)]
pub(super) struct Conn {
    id: u64,
    /// Since when (microseconds after the door opened) the connection has
    /// been waiting for its client, or [`BUSY`].
    stalled: AtomicU64,
    /// Told when the connection must close to make room.
    pub(super) closed: Notify,
}

/// The connections held, and the cap.
#[derive(Debug)]
pub(super) struct Door {
    cap: usize,
    opened: Instant,
    next: AtomicU64,
    held: Mutex<HashMap<u64, Arc<Conn>>>,
}

/// What [`Door::admit`] did.
#[derive(Debug)]
pub(super) enum Admitted {
    /// The new connection is held; `bumped` says whether a stalled one was
    /// closed to make room for it.
    Held { conn: Arc<Conn>, bumped: bool },
    /// At the cap with nothing stalled: the new connection is to be closed.
    Refused,
}

impl Door {
    /// A door holding at most `cap` connections.
    pub(super) fn new(cap: usize) -> Self {
        Door {
            cap: cap.max(1),
            opened: Instant::now(),
            next: AtomicU64::new(0),
            held: Mutex::new(HashMap::new()),
        }
    }

    /// The cap.
    pub(super) fn cap(&self) -> usize {
        self.cap
    }

    fn now(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_micros()).unwrap_or(BUSY - 1)
    }

    /// Hold a new connection, stalled from now: at the cap, the connection
    /// stalled longest is told to close and the new one takes its place;
    /// with none stalled, the new one is refused.
    pub(super) fn admit(&self) -> Admitted {
        let Ok(mut held) = self.held.lock() else {
            return Admitted::Refused;
        };
        let mut bumped = false;
        if held.len() >= self.cap {
            let stalled_longest = held
                .values()
                .filter(|conn| conn.stalled.load(Ordering::Relaxed) != BUSY)
                .min_by_key(|conn| conn.stalled.load(Ordering::Relaxed))
                .map(|conn| conn.id);
            let Some(conn) = stalled_longest.and_then(|id| held.remove(&id)) else {
                return Admitted::Refused;
            };
            conn.closed.notify_one();
            bumped = true;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            id,
            stalled: AtomicU64::new(self.now()),
            closed: Notify::new(),
        });
        held.insert(id, Arc::clone(&conn));
        Admitted::Held { conn, bumped }
    }

    /// `conn` has ended.
    pub(super) fn leave(&self, conn: &Conn) {
        if let Ok(mut held) = self.held.lock() {
            held.remove(&conn.id);
        }
    }

    /// `conn` waits for its client from now (a body, or the next head).
    pub(super) fn stalled(&self, conn: &Conn) {
        conn.stalled.store(self.now(), Ordering::Relaxed);
    }

    /// `conn` has a request being answered.
    pub(super) fn busy(conn: &Conn) {
        conn.stalled.store(BUSY, Ordering::Relaxed);
    }

    /// How many connections are held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.held.lock().map(|held| held.len()).unwrap_or(0)
    }
}

/// The pause after a failed accept that followed `pause`.
pub(super) fn longer(pause: Duration) -> Duration {
    (pause * 2).min(LONGEST_PAUSE)
}

/// The connection cap for `wanted` (`--max-connections`) in a process that
/// may open `descriptors` files: lowered to leave [`KEPT_DESCRIPTORS`]
/// for everything else, so that the cap, not the end of the descriptors,
/// is what a flood of connections meets.
pub(super) fn cap_within(wanted: usize, descriptors: Option<u64>) -> usize {
    match descriptors {
        Some(limit) => {
            let room =
                usize::try_from(limit.saturating_sub(KEPT_DESCRIPTORS)).unwrap_or(usize::MAX);
            wanted.min(room).max(1)
        }
        None => wanted.max(1),
    }
}

/// How many files this process may open (its soft limit), where the
/// system says.
pub(super) fn descriptors() -> Option<u64> {
    #[cfg(unix)]
    {
        use nix::sys::resource::{Resource, getrlimit};
        getrlimit(Resource::RLIMIT_NOFILE)
            .ok()
            .map(|(soft, _)| soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(admitted: Admitted) -> Arc<Conn> {
        match admitted {
            Admitted::Held { conn, .. } => conn,
            Admitted::Refused => panic!("refused"),
        }
    }

    #[test]
    fn at_the_cap_the_connection_stalled_longest_makes_room() {
        let door = Door::new(2);
        let first = held(door.admit());
        let second = held(door.admit());
        Door::busy(&second);
        let third = held(door.admit());
        assert_eq!(door.len(), 2);
        // The first was told to close: its notification is waiting.
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(async {
                tokio::time::timeout(Duration::from_secs(1), first.closed.notified())
                    .await
                    .expect("the stalled connection is told to close");
            });
        Door::busy(&third);
        assert!(
            matches!(door.admit(), Admitted::Refused),
            "with every connection busy the new one is refused"
        );
        door.leave(&second);
        assert!(matches!(door.admit(), Admitted::Held { bumped: false, .. }));
    }

    #[test]
    fn the_cap_leaves_room_for_other_files_and_pauses_grow_to_a_second() {
        assert_eq!(cap_within(1024, Some(256)), 192);
        assert_eq!(cap_within(1024, Some(1 << 20)), 1024);
        assert_eq!(cap_within(1024, Some(10)), 1);
        assert_eq!(cap_within(1024, None), 1024);
        let mut pause = FIRST_PAUSE;
        for _ in 0..20 {
            pause = longer(pause);
        }
        assert_eq!(pause, LONGEST_PAUSE);
        assert_eq!(longer(FIRST_PAUSE), Duration::from_millis(20));
    }
}
