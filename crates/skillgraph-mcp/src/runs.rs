//! The runs a server holds (SPEC §9.1, §9.4). A run is one session and its
//! record, behind a lock of its own so that runs never wait for each other.
//! A connection (stdio, or one of rmcp's HTTP sessions on the handshake
//! generation) holds its one run; on the sessionless generation over HTTP a
//! run is found by the handle its first answer gave, among the runs this
//! table holds: bound to the principal that started it, dropped when idle
//! for longer than the time to live (counted from its last answer: a run
//! whose call is running is never dropped), the least recently used idle
//! run going first when the table is full or its principal at its quota
//! ([`shares`](crate::shares)).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use skillgraph::RecordWriter;
use skillgraph::skill_session::{Event, Graph, Run, SessionConfig};

use crate::record::RecordSink;
use crate::shares::{NoRoom, Seat, place};
use crate::spans::run_name;
use crate::store::{Loaded, Store};
use crate::translate::spell_handle;
use crate::warn;

/// The argument that carries a run handle over HTTP (SPEC §9.2).
pub(crate) const RUN_ARGUMENT: &str = "skillgraph_run";

/// Where a handle rides in a result's `_meta` (SPEC §9.4).
pub(crate) const RUN_META: &str = "skillgraph/run";

/// Which generation of MCP a request comes in (SPEC §9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generation {
    /// `initialize` first, then a session (2024-11-05 through 2025-11-25).
    Handshake,
    /// No handshake: `server/discover` and per-request `_meta` (2026-07-28).
    Sessionless,
}

/// One run and its record, changed together under one lock. The run starts
/// at its first request, when its client's generation is known: on the
/// sessionless generation the list no longer scopes the calls, so the
/// `scoped` policy becomes `strict` there (SPEC §9.3), in the record's
/// `start` as every decision is.
pub(crate) struct State {
    run: Option<Run>,
    graph: Arc<Graph>,
    config: SessionConfig,
    /// The record, in memory and in its file.
    pub(crate) record: RecordSink,
    /// The name the run goes by on spans, once it is on one.
    traced_as: Option<String>,
    /// Where the run is kept beside this cache, with a shared store.
    pub(crate) kept: Option<Kept>,
}

/// A run kept in a shared [`Store`] (SPEC §14): what its steps are appended
/// under, and how far this replica's copy of it goes.
pub(crate) struct Kept {
    /// The store.
    pub(crate) store: Arc<Store>,
    /// The run's handle.
    pub(crate) handle: String,
    /// Its principal (`""`: the anonymous one).
    pub(crate) principal: String,
    /// How many of its steps this copy holds.
    pub(crate) seq: u64,
    /// Whether this copy may be ahead of the store (a step computed and not
    /// landed): it is rebuilt from the store before its next step.
    pub(crate) stale: bool,
    /// Whether this copy was brought up to date for the request now served:
    /// a request's first step first reads the steps other replicas
    /// appended since, so that a step is rarely computed on a copy behind.
    pub(crate) fresh: bool,
    /// Taken across a step and its append, so that this replica's steps of
    /// the run go to the store one at a time.
    pub(crate) gate: Arc<tokio::sync::Mutex<()>>,
    /// The handshake session whose run this is, kept in the store beside
    /// it, and when its time to live was last renewed here.
    pub(crate) session: Option<(String, Instant)>,
}

impl Kept {
    /// A run of `principal` kept in `store` under `handle`, none of whose
    /// steps has landed yet.
    pub(crate) fn new(store: Arc<Store>, handle: String, principal: String) -> Self {
        Kept {
            store,
            handle,
            principal,
            seq: 0,
            stale: false,
            fresh: true,
            gate: Arc::default(),
            session: None,
        }
    }
}

impl State {
    /// A run not started yet, on `graph` set up by `config`.
    pub(crate) fn new(graph: Arc<Graph>, config: SessionConfig, record: RecordSink) -> Self {
        State {
            run: None,
            graph,
            config,
            record,
            traced_as: None,
            kept: None,
        }
    }

    /// The events of the run's last step, not yet in the record.
    pub(crate) fn take_step(&mut self) -> Vec<Event> {
        self.run.as_mut().map(Run::take_events).unwrap_or_default()
    }

    /// This copy caught up with `text`, the record lines of the steps after
    /// its own, up to the store's step `seq`.
    ///
    /// # Errors
    ///
    /// When the lines are no record, or the run decides otherwise than they
    /// say: the copy is then to be rebuilt whole.
    pub(crate) fn catch_up(&mut self, text: &str, seq: u64) -> Result<(), String> {
        let events = skillgraph::skill_session::read_events(text).map_err(|err| err.to_string())?;
        let Some(run) = self.run.as_mut() else {
            return Err("the copy has no run to catch up".to_owned());
        };
        run.catch_up(&events).map_err(|err| err.to_string())?;
        self.record.append(events);
        if let Some(kept) = self.kept.as_mut() {
            kept.seq = seq;
            kept.fresh = true;
        }
        Ok(())
    }

    /// This copy made the store's `loaded` (or, with `None`, a run with no
    /// step landed yet), rebuilt by replaying its record.
    ///
    /// # Errors
    ///
    /// When the record cannot be rebuilt into a run on this graph.
    pub(crate) fn rebuild(&mut self, loaded: Option<Loaded>) -> Result<(), ErrorData> {
        let (run, events, seq) = match loaded {
            None => (None, Vec::new(), 0),
            Some(loaded) => {
                let run = Run::resume(&self.graph, &loaded.events).map_err(|err| {
                    ErrorData::internal_error(
                        format!(
                            "error[{}]: the stored record of this run cannot be rebuilt here: {err}",
                            err.code()
                        ),
                        None,
                    )
                })?;
                (Some(run), loaded.events, loaded.seq)
            }
        };
        self.run = run;
        self.record = RecordSink::new(None);
        self.record.append(events);
        if let Some(kept) = self.kept.as_mut() {
            kept.seq = seq;
            kept.stale = false;
            kept.fresh = true;
        }
        Ok(())
    }

    /// The run, when it has started.
    pub(crate) fn run_started(&self) -> Option<&Run> {
        self.run.as_ref()
    }

    /// The run, started for `generation` if it has not started yet.
    pub(crate) fn run(&mut self, generation: Generation) -> &mut Run {
        let State {
            run, graph, config, ..
        } = self;
        // Its `start` goes to the record with the events of its first step.
        run.get_or_insert_with(|| {
            let config = match generation {
                Generation::Sessionless => config.clone().for_stable_list(),
                Generation::Handshake => config.clone(),
            };
            Run::new(Arc::clone(graph), config)
        })
    }

    /// The name the run goes by on spans (SPEC §11): by `handle`, when it
    /// has one, never the handle itself (see [`run_name`]).
    pub(crate) fn traced_as(&mut self, handle: Option<&str>) -> String {
        self.traced_as
            .get_or_insert_with(|| {
                run_name(handle, || match mint_handle() {
                    Ok(random) => format!("run#{}", random.get(4..20).unwrap_or_default()),
                    Err(_) => "run#unnamed".to_owned(),
                })
            })
            .clone()
    }

    /// Append the run's new events to the record: the
    /// [doorway](crate::doorway)'s alone to call.
    pub(crate) fn flush(&mut self) {
        if let Some(run) = self.run.as_mut() {
            let events = run.take_events();
            self.record.append(events);
        }
    }
}

/// A run as the requests that share it hold it.
pub(crate) type Slot = Arc<Mutex<State>>;

/// Lock a run. A lock poisoned by a panic elsewhere is said, not unwrapped.
pub(crate) fn lock(slot: &Slot) -> Result<MutexGuard<'_, State>, ErrorData> {
    slot.lock().map_err(|_| {
        ErrorData::internal_error(
            "this run was lost after an earlier failure; start a new run",
            None,
        )
    })
}

/// A new run handle: 128 bits from the operating system's secure random
/// source, spelled by the core ([`spell_handle`]).
pub(crate) fn mint_handle() -> Result<String, ErrorData> {
    let mut bits = [0u8; 16];
    getrandom::fill(&mut bits).map_err(|err| {
        ErrorData::internal_error(
            format!("no run handle could be drawn from the system's random source: {err}"),
            None,
        )
    })?;
    Ok(spell_handle(bits))
}

/// How the runs of a sessionless HTTP server are kept (`--run-ttl`,
/// `--max-runs`, `--record DIR`).
#[derive(Debug, Clone)]
pub(crate) struct Keeping {
    /// How long a run may stay idle before it is dropped.
    pub(crate) ttl: Duration,
    /// The most runs held at once.
    pub(crate) max: usize,
    /// The most runs one principal holds at once.
    pub(crate) quota: usize,
    /// The folder of the records, one file per run.
    pub(crate) folder: Option<PathBuf>,
}

/// A held run.
struct Held {
    slot: Slot,
    principal: Option<String>,
    /// When it was last looked up, or a call of it last answered.
    last_used: Instant,
}

impl Held {
    /// Whether a request holds the run now (beside the table).
    fn busy(&self) -> bool {
        Arc::strong_count(&self.slot) > 1
    }

    /// Whether the run may be dropped at `now`: idle longer than `ttl`.
    fn expired(&self, now: Instant, ttl: Duration) -> bool {
        !self.busy() && now.duration_since(self.last_used) > ttl
    }
}

/// The runs a server holds by handle.
pub(crate) struct Runs {
    table: Mutex<HashMap<String, Held>>,
    keeping: Keeping,
}

impl Runs {
    /// An empty table kept as `keeping` says.
    pub(crate) fn new(keeping: Keeping) -> Self {
        Runs {
            table: Mutex::new(HashMap::new()),
            keeping,
        }
    }

    fn table(&self) -> Result<MutexGuard<'_, HashMap<String, Held>>, ErrorData> {
        self.table.lock().map_err(|_| {
            ErrorData::internal_error(
                "the table of runs was lost after an earlier failure; restart skillgraph serve",
                None,
            )
        })
    }

    /// The record of a run whose handle is `handle`: in memory, and in the
    /// records' folder when there is one.
    pub(crate) fn record_for(&self, handle: &str) -> RecordSink {
        RecordSink::new(self.keeping.folder.as_ref().and_then(|folder| {
            let path = folder.join(format!("{handle}.jsonl"));
            RecordWriter::create(&path)
                .map_err(|err| {
                    warn(&format!(
                        "error[{}]: {err}; run {handle} is recorded in memory only",
                        err.code()
                    ));
                })
                .ok()
        }))
    }

    /// Remove the record file [`Runs::record_for`] made for `handle`, for a
    /// run the table had no room for.
    pub(crate) fn discard_record(&self, handle: &str) {
        if let Some(folder) = &self.keeping.folder {
            let _ = std::fs::remove_file(folder.join(format!("{handle}.jsonl")));
        }
    }

    /// The run `handle` names, when this table holds it, it has not
    /// expired, and `principal` started it. Unknown, expired and someone
    /// else's are one answer: `None` (no oracle, SPEC §9.4).
    pub(crate) fn find(
        &self,
        handle: &str,
        principal: Option<&str>,
    ) -> Result<Option<Slot>, ErrorData> {
        let mut table = self.table()?;
        let now = Instant::now();
        let Some(held) = table.get_mut(handle) else {
            return Ok(None);
        };
        if held.expired(now, self.keeping.ttl) {
            table.remove(handle);
            return Ok(None);
        }
        if held.principal.as_deref() != principal {
            return Ok(None);
        }
        held.last_used = now;
        Ok(Some(Arc::clone(&held.slot)))
    }

    /// The run `handle` names answered now: its time to live counts from
    /// here. Called when a call of it ends, however it ends.
    pub(crate) fn answered(&self, handle: &str) {
        if let Ok(mut table) = self.table.lock()
            && let Some(held) = table.get_mut(handle)
        {
            held.last_used = Instant::now();
        }
    }

    /// Hold `slot` under `handle` for `principal`, first dropping the runs
    /// idle for too long and, when the principal is at its quota or the
    /// table full, the least recently used idle one ([`place`]). `Err`
    /// when every run that could go is busy.
    pub(crate) fn insert(
        &self,
        handle: String,
        slot: Slot,
        principal: Option<String>,
    ) -> Result<Result<(), NoRoom>, ErrorData> {
        let mut table = self.table()?;
        let now = Instant::now();
        let ttl = self.keeping.ttl;
        table.retain(|_, held| !held.expired(now, ttl));
        let seats = table.iter().map(|(key, held)| Seat {
            key,
            principal: held.principal.as_deref(),
            last: held.last_used,
            busy: held.busy(),
        });
        match place(
            seats,
            principal.as_deref(),
            Some(self.keeping.quota),
            self.keeping.max,
        ) {
            Ok(None) => {}
            Ok(Some(evicted)) => {
                let evicted = evicted.clone();
                table.remove(&evicted);
            }
            Err(no_room) => return Ok(Err(no_room)),
        }
        table.insert(
            handle,
            Held {
                slot,
                principal,
                last_used: now,
            },
        );
        Ok(Ok(()))
    }

    /// The handles of the runs held here that a shared store took steps
    /// of.
    pub(crate) fn stored(&self) -> Vec<String> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        table
            .iter()
            .filter(|(_, held)| {
                lock(&held.slot)
                    .is_ok_and(|state| state.kept.as_ref().is_some_and(|kept| kept.seq > 0))
            })
            .map(|(handle, _)| handle.clone())
            .collect()
    }

    /// Drop the runs `handles` name: they are unknown from now on.
    pub(crate) fn forget(&self, handles: &[String]) {
        if let Ok(mut table) = self.table.lock() {
            for handle in handles {
                table.remove(handle);
            }
        }
    }

    /// How many runs are held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.table.lock().map(|table| table.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgraph::skill_core::SkillMap;

    fn slot() -> Slot {
        let map: SkillMap = serde_json::from_value(serde_json::json!({
            "skills": [{"id": "a", "body": "A."}],
            "entries": ["a"]
        }))
        .unwrap();
        let graph = Arc::new(Graph::new(map).unwrap());
        Arc::new(Mutex::new(State::new(
            graph,
            SessionConfig::default(),
            RecordSink::new(None),
        )))
    }

    fn runs(ttl: Duration, max: usize) -> Runs {
        Runs::new(Keeping {
            ttl,
            max,
            quota: max,
            folder: None,
        })
    }

    #[test]
    fn handles_are_128_random_bits_spelled_run() {
        let (a, b) = (mint_handle().unwrap(), mint_handle().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert!(a.starts_with("run_"));
        assert!(a[4..].chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn unknown_expired_and_someone_elses_runs_are_one_answer() {
        let table = runs(Duration::from_secs(3600), 10);
        table
            .insert("run_a".into(), slot(), Some("ann".into()))
            .unwrap()
            .unwrap();
        assert!(table.find("run_a", Some("ann")).unwrap().is_some());
        assert!(table.find("run_a", Some("bob")).unwrap().is_none());
        assert!(table.find("run_a", None).unwrap().is_none());
        assert!(table.find("run_b", Some("ann")).unwrap().is_none());
        let expiring = runs(Duration::ZERO, 10);
        expiring
            .insert("run_a".into(), slot(), None)
            .unwrap()
            .unwrap();
        std::thread::sleep(Duration::from_millis(2));
        assert!(expiring.find("run_a", None).unwrap().is_none());
        assert_eq!(expiring.len(), 0);
    }

    #[test]
    fn a_busy_run_is_never_expired_and_its_time_counts_from_its_answer() {
        let table = runs(Duration::from_millis(50), 10);
        table.insert("run_a".into(), slot(), None).unwrap().unwrap();
        let calling = table.find("run_a", None).unwrap().unwrap();
        std::thread::sleep(Duration::from_millis(80));
        table.insert("run_b".into(), slot(), None).unwrap().unwrap();
        assert_eq!(table.len(), 2, "the busy run outlived its time to live");
        drop(calling);
        table.answered("run_a");
        assert!(
            table.find("run_a", None).unwrap().is_some(),
            "the time to live counts from the answer"
        );
    }

    #[test]
    fn a_principal_at_its_quota_loses_its_own_run_not_another_s() {
        let table = Runs::new(Keeping {
            ttl: Duration::from_secs(3600),
            max: 100,
            quota: 2,
            folder: None,
        });
        let ann = || Some("ann".to_owned());
        table
            .insert("run_b".into(), slot(), Some("bob".into()))
            .unwrap()
            .unwrap();
        table
            .insert("run_1".into(), slot(), ann())
            .unwrap()
            .unwrap();
        table
            .insert("run_2".into(), slot(), ann())
            .unwrap()
            .unwrap();
        table
            .insert("run_3".into(), slot(), ann())
            .unwrap()
            .unwrap();
        assert!(table.find("run_1", ann().as_deref()).unwrap().is_none());
        assert!(table.find("run_b", Some("bob")).unwrap().is_some());
        let held = (
            table.find("run_2", ann().as_deref()).unwrap().unwrap(),
            table.find("run_3", ann().as_deref()).unwrap().unwrap(),
        );
        assert_eq!(
            table.insert("run_4".into(), slot(), ann()).unwrap(),
            Err(NoRoom::Quota)
        );
        drop(held);
    }

    #[test]
    fn a_full_table_drops_the_least_recently_used_idle_run() {
        let table = runs(Duration::from_secs(3600), 2);
        table.insert("run_1".into(), slot(), None).unwrap().unwrap();
        table.insert("run_2".into(), slot(), None).unwrap().unwrap();
        // run_1 is used again, so run_2 is the least recently used.
        let busy = table.find("run_1", None).unwrap().unwrap();
        table.insert("run_3".into(), slot(), None).unwrap().unwrap();
        assert!(table.find("run_2", None).unwrap().is_none());
        assert!(table.find("run_3", None).unwrap().is_some());
        // With run_1 busy and run_3 held by this test, nothing is idle.
        let held = table.find("run_3", None).unwrap().unwrap();
        assert_eq!(
            table.insert("run_4".into(), slot(), None).unwrap(),
            Err(NoRoom::Full)
        );
        drop((busy, held));
        assert_eq!(table.len(), 2);
    }
}
