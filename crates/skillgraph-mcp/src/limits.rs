//! The front door's limits as standard error hears of them (SPEC §9.8):
//! each time a limit is reached it is counted, and each limit is said at
//! most once a second, with how many times it was reached since it was
//! last said, so that a client that hits one in a loop cannot fill the
//! disk with the same line (an accept loop out of file descriptors once
//! wrote 619 MB in 35 s).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::warn;

/// How often one limit may be said.
const QUIET: Duration = Duration::from_secs(1);

/// One limit: what it is, what to do about it, how often it was reached.
#[derive(Debug)]
pub(crate) struct Tally {
    /// What was reached, as a sentence's subject ("the connection cap").
    what: &'static str,
    /// What an operator can do, as a sentence.
    fix: &'static str,
    /// Times reached and not said yet.
    unsaid: AtomicU64,
    /// Times reached in all.
    total: AtomicU64,
    /// When it was last said.
    said: Mutex<Option<Instant>>,
}

impl Tally {
    /// A limit never reached yet.
    pub(crate) const fn new(what: &'static str, fix: &'static str) -> Self {
        Tally {
            what,
            fix,
            unsaid: AtomicU64::new(0),
            total: AtomicU64::new(0),
            said: Mutex::new(None),
        }
    }

    /// The limit was reached once more: counted, and said now unless it
    /// was said less than a second ago.
    pub(crate) fn reached(&self) {
        self.unsaid.fetch_add(1, Ordering::Relaxed);
        self.total.fetch_add(1, Ordering::Relaxed);
        self.say(Instant::now());
    }

    /// Say the count not said yet, unless it is zero or the limit was said
    /// less than a second before `now`.
    pub(crate) fn say(&self, now: Instant) {
        if let Some(line) = self.line(now) {
            warn(&line);
        }
    }

    /// The line [`Tally::say`] says at `now`, if any; what it says is then
    /// counted as said.
    fn line(&self, now: Instant) -> Option<String> {
        let Ok(mut said) = self.said.lock() else {
            return None;
        };
        if said.is_some_and(|at| now.saturating_duration_since(at) < QUIET) {
            return None;
        }
        let count = self.unsaid.swap(0, Ordering::Relaxed);
        if count == 0 {
            return None;
        }
        *said = Some(now);
        let times = if count == 1 {
            "once".to_owned()
        } else {
            format!("{count} times")
        };
        Some(format!(
            "{} was reached {times} since it was last said ({} in all); {}",
            self.what,
            self.total.load(Ordering::Relaxed),
            self.fix
        ))
    }
}

/// Every limit of the front door.
#[derive(Debug)]
pub(crate) struct Limits {
    /// `--max-connections`: a connection beyond it closed, or the one
    /// stalled longest closed to make room.
    pub(crate) connections: Tally,
    /// An accept that failed (no file descriptors left): backed off.
    pub(crate) accept: Tally,
    /// A body not sent whole within `--body-timeout`.
    pub(crate) body_time: Tally,
    /// A body waiting for its turn to be parsed.
    pub(crate) parsing: Tally,
    /// `--max-runs-per-principal` and `--max-runs`: no idle run to let go.
    pub(crate) runs: Tally,
    /// `--new-runs-per-minute`: a new run refused with 429.
    pub(crate) new_runs: Tally,
    /// A request refused as strict HTTP requires.
    pub(crate) strict: Tally,
}

impl Limits {
    /// Every limit, none reached.
    pub(crate) const fn new() -> Self {
        Limits {
            connections: Tally::new(
                "the connection cap (--max-connections)",
                "the connections stalled longest were closed to make room, or the new ones when none was stalled; a cap per source address belongs to the load balancer in front",
            ),
            accept: Tally::new(
                "the end of the file descriptors (accept failed)",
                "accepting backs off up to 1 s; raise `ulimit -n` or lower --max-connections",
            ),
            body_time: Tally::new(
                "the body time limit (--body-timeout)",
                "those connections were answered 408 and closed",
            ),
            parsing: Tally::new(
                "the bound on bodies parsed at once",
                "those bodies waited their turn",
            ),
            runs: Tally::new(
                "the run quota (--max-runs-per-principal, --max-runs)",
                "every run in it was busy, so the new one was refused; raise the quota or wait for a call to end",
            ),
            new_runs: Tally::new(
                "the new-run rate (--new-runs-per-minute)",
                "those requests were answered 429 with Retry-After and nothing was written",
            ),
            strict: Tally::new(
                "strict HTTP",
                "those requests were answered 400 (two Host headers, a target's host not allowed, a body that is not JSON, or an id over 256 characters)",
            ),
        }
    }

    /// Say every count not said yet (a second after the last time each
    /// limit was said): called once a second, so the end of a burst is
    /// said too.
    pub(crate) fn say_all(&self) {
        let now = Instant::now();
        for tally in [
            &self.connections,
            &self.accept,
            &self.body_time,
            &self.parsing,
            &self.runs,
            &self.new_runs,
            &self.strict,
        ] {
            tally.say(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_said_at_most_once_a_second_with_its_count() {
        let tally = Tally::new("the cap", "nothing to do");
        let start = Instant::now();
        tally.unsaid.store(1, Ordering::Relaxed);
        tally.total.store(1, Ordering::Relaxed);
        let first = tally.line(start).unwrap();
        assert!(first.starts_with("the cap was reached once"), "{first}");
        for _ in 0..1000 {
            tally.unsaid.fetch_add(1, Ordering::Relaxed);
            tally.total.fetch_add(1, Ordering::Relaxed);
            assert_eq!(tally.line(start + Duration::from_millis(999)), None);
        }
        let second = tally.line(start + QUIET).unwrap();
        assert!(
            second.contains("1000 times since it was last said (1001 in all)"),
            "{second}"
        );
        assert_eq!(tally.line(start + QUIET * 3), None, "nothing new to say");
    }
}
