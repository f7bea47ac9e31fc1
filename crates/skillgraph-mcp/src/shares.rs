//! Fair shares of runs between principals (SPEC §9.8): each principal
//! holds at most its quota of runs, losing its own least recently used
//! idle run at the quota, never another's; and each starts runs at most at
//! its rate, a token bucket, past which a new run is refused with the time
//! to wait. Both tables of runs use this: the sessionless runs held by
//! handle ([`Runs`](crate::runs::Runs)) and the handshake sessions the
//! HTTP front holds.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A held run as the quota sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seat<'a, K> {
    /// How the table knows it.
    pub(crate) key: &'a K,
    /// The principal it is bound to; `None` without principals.
    pub(crate) principal: Option<&'a str>,
    /// When it was last used.
    pub(crate) last: Instant,
    /// Whether a request holds it now (a call, a held stream).
    pub(crate) busy: bool,
}

/// Why a new run cannot be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// The principal holds its quota of runs, every one busy.
    Quota,
    /// The server holds `--max-runs` runs, every one busy.
    Full,
}

impl NoRoom {
    /// The answer's sentence.
    pub(crate) fn say(self) -> &'static str {
        match self {
            NoRoom::Quota => {
                "you hold as many runs as --max-runs-per-principal allows, and every one is busy; try again when one of your calls has been answered"
            }
            NoRoom::Full => {
                "this server holds as many runs as it may (--max-runs), and every one is busy; try again when a call has been answered"
            }
        }
    }
}

/// Where a new run of `principal` goes among `seats`: `Ok(None)` when
/// there is room, `Ok(Some(key))` when the run `key` must be let go first,
/// `Err` when nothing idle may be. At `quota` (with principals) the
/// principal's own least recently used idle run goes; else, with `max`
/// runs held, the least recently used idle run of any principal.
pub(crate) fn place<'a, K: 'a>(
    seats: impl Iterator<Item = Seat<'a, K>> + Clone,
    principal: Option<&str>,
    quota: Option<usize>,
    max: usize,
) -> Result<Option<&'a K>, NoRoom> {
    if let (Some(quota), Some(_)) = (quota, principal) {
        let own = seats.clone().filter(|seat| seat.principal == principal);
        if own.clone().count() >= quota {
            return oldest_idle(own).map(Some).ok_or(NoRoom::Quota);
        }
    }
    if seats.clone().count() >= max {
        return oldest_idle(seats).map(Some).ok_or(NoRoom::Full);
    }
    Ok(None)
}

/// The least recently used of the idle `seats`.
fn oldest_idle<'a, K: 'a>(seats: impl Iterator<Item = Seat<'a, K>>) -> Option<&'a K> {
    seats
        .filter(|seat| !seat.busy)
        .min_by_key(|seat| seat.last)
        .map(|seat| seat.key)
}

/// The quota of `--max-runs-per-principal` when it is not given: a tenth
/// of `--max-runs`, at least 10.
pub(crate) fn default_quota(max_runs: usize) -> usize {
    (max_runs / 10).max(10)
}

/// One principal's bucket of new runs.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The new-run rate of every principal (`--new-runs-per-minute`): a bucket
/// each, refilling at the rate and holding at most a tenth of it (at least
/// 10).
#[derive(Debug)]
pub(crate) struct Rates {
    per_second: f64,
    depth: f64,
    buckets: Mutex<HashMap<Option<String>, Bucket>>,
}

/// Buckets kept before the full ones are forgotten (a full bucket is the
/// same as none).
const BUCKETS_KEPT: usize = 1024;

impl Rates {
    /// `per_minute` new runs a minute for each principal.
    pub(crate) fn new(per_minute: u32) -> Self {
        let per_minute = f64::from(per_minute.max(1));
        Rates {
            per_second: per_minute / 60.0,
            depth: (per_minute / 10.0).floor().max(10.0),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Take a new run for `principal` at `now`: `Err` with how long to wait
    /// for the next when its bucket is empty.
    pub(crate) fn take(&self, principal: Option<&str>, now: Instant) -> Result<(), Duration> {
        let Ok(mut buckets) = self.buckets.lock() else {
            return Ok(());
        };
        if buckets.len() >= BUCKETS_KEPT {
            buckets.retain(|_, bucket| self.level(*bucket, now) < self.depth);
        }
        let bucket = buckets
            .entry(principal.map(str::to_owned))
            .or_insert(Bucket {
                tokens: self.depth,
                at: now,
            });
        let tokens = self.level(*bucket, now);
        if tokens >= 1.0 {
            *bucket = Bucket {
                tokens: tokens - 1.0,
                at: now,
            };
            Ok(())
        } else {
            *bucket = Bucket { tokens, at: now };
            Err(Duration::from_secs_f64((1.0 - tokens) / self.per_second))
        }
    }

    /// The tokens in `bucket` at `now`.
    fn level(&self, bucket: Bucket, now: Instant) -> f64 {
        let refill = now.saturating_duration_since(bucket.at).as_secs_f64() * self.per_second;
        (bucket.tokens + refill).min(self.depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seats<'a>(
        held: &'a [(u32, Option<&'a str>, u64, bool)],
        start: Instant,
    ) -> impl Iterator<Item = Seat<'a, u32>> + Clone {
        held.iter().map(move |(key, principal, age, busy)| Seat {
            key,
            principal: *principal,
            last: start + Duration::from_secs(*age),
            busy: *busy,
        })
    }

    #[test]
    fn a_principal_at_its_quota_loses_its_own_oldest_idle_run_never_another_s() {
        let start = Instant::now();
        let held = [
            (1, Some("bob"), 0, false),
            (2, Some("ann"), 1, false),
            (3, Some("ann"), 2, false),
            (4, Some("ann"), 3, true),
        ];
        let place = |principal| place(seats(&held, start), principal, Some(3), 100);
        assert_eq!(place(Some("ann")), Ok(Some(&2)));
        assert_eq!(place(Some("bob")), Ok(None));
        let busy = [(1, Some("ann"), 0, true), (2, Some("ann"), 1, true)];
        assert_eq!(
            super::place(seats(&busy, start), Some("ann"), Some(2), 100),
            Err(NoRoom::Quota)
        );
        assert_eq!(
            super::place(seats(&busy, start), Some("bob"), Some(2), 100),
            Ok(None),
            "another principal can start a run"
        );
    }

    #[test]
    fn a_full_server_lets_its_oldest_idle_run_go_or_refuses() {
        let start = Instant::now();
        let held = [(1, None, 5, false), (2, None, 1, false), (3, None, 0, true)];
        assert_eq!(place(seats(&held, start), None, Some(1), 3), Ok(Some(&2)));
        let busy = [(1, None, 0, true)];
        assert_eq!(place(seats(&busy, start), None, None, 1), Err(NoRoom::Full));
    }

    #[test]
    fn the_default_quota_is_a_tenth_and_at_least_ten() {
        assert_eq!(default_quota(10_000), 1_000);
        assert_eq!(default_quota(50), 10);
    }

    #[test]
    fn a_bucket_holds_a_tenth_of_the_rate_and_refills_at_it() {
        let rates = Rates::new(600);
        let start = Instant::now();
        for _ in 0..60 {
            assert_eq!(rates.take(Some("ann"), start), Ok(()));
        }
        let wait = rates.take(Some("ann"), start).unwrap_err();
        assert!(wait > Duration::from_millis(90) && wait <= Duration::from_millis(100));
        assert_eq!(rates.take(Some("bob"), start), Ok(()), "one bucket each");
        let later = start + Duration::from_millis(100);
        assert_eq!(rates.take(Some("ann"), later), Ok(()));
        assert!(rates.take(Some("ann"), later).is_err());
        let small = Rates::new(6);
        for _ in 0..10 {
            assert_eq!(small.take(None, start), Ok(()), "at least 10 deep");
        }
        assert!(small.take(None, start).unwrap_err() >= Duration::from_secs(9));
    }
}
