//! The run store (SPEC §14): where the runs of `serve --http --store
//! redis://…` live, so that any of several replicas continues any run. A
//! replica's table of runs is then a cache; the store is a run's only
//! truth. A run is a hash of facts (`P:{RUN}:m`) and a stream of steps
//! (`P:{RUN}:l`), one entry per step holding the step's record lines byte
//! for byte as `--record` writes them, so that a run's entries in order are
//! its record.
//!
//! A step lands whole or not at all, through one Lua script that appends at
//! `seq + 1` only when the stored `seq` is the one the step was computed
//! from and the stored principal is the request's: the sequence number is
//! the only lock. A step id makes a resent append land once. Every store
//! call is bounded by `--store-timeout`, and a [`Breaker`] fails requests
//! fast while the store is away. This module never decides what a run
//! does: the [doorway](crate::doorway) computes a step on its cached run
//! and lands it here.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Client, ConnectionAddr, IntoConnectionInfo, Script};
use sha2::{Digest, Sha256};
use skillgraph::skill_session::{Event, read_record};

use crate::warn;

/// The script that appends a step (SPEC §14.3). Keys: the run's hash and
/// stream, and this replica's set of open calls. Arguments: the `seq` the
/// step was computed from, its id, the replica, its lines, the principal,
/// the map digest, the run's era, the time (ms), the time to live (ms), the
/// number of calls the step opens, then those calls and the calls it
/// closes (`RUN CALL` each). Answers `OK seq`, `DONE seq` (this step id
/// landed already), `CONFLICT seq` or `GONE`. The open calls change with
/// the step, atomically, so that a call a replica forwarded is in its set
/// exactly while it is open in the stream (SPEC §14.4). (The set's key is
/// the replica's, not the run's: this is one Redis, not a Cluster.)
const APPEND: &str = r"
local seq = redis.call('HGET', KEYS[1], 'seq')
local from = tonumber(ARGV[1])
if not seq then
  if from ~= 0 then return 'GONE' end
  redis.call('HSET', KEYS[1], 'v', '1', 'seq', '0', 'principal', ARGV[5], 'roles', '',
    'map', ARGV[6], 'era', ARGV[7], 'created', ARGV[8], 'touched', ARGV[8])
  seq = 0
else
  if redis.call('HGET', KEYS[1], 'principal') ~= ARGV[5] then return 'GONE' end
  seq = tonumber(seq)
end
if seq ~= from then
  if seq > from then
    local id = tostring(from + 1) .. '-0'
    local entry = redis.call('XRANGE', KEYS[2], id, id)
    if entry[1] then
      local fields = entry[1][2]
      for i = 1, #fields, 2 do
        if fields[i] == 's' and fields[i + 1] == ARGV[2] then
          return 'DONE ' .. tostring(from + 1)
        end
      end
    end
  end
  return 'CONFLICT ' .. tostring(seq)
end
redis.call('XADD', KEYS[2], tostring(from + 1) .. '-0', 's', ARGV[2], 'r', ARGV[3], 'e', ARGV[4])
redis.call('HSET', KEYS[1], 'seq', tostring(from + 1), 'touched', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
local opens = tonumber(ARGV[10])
for i = 11, #ARGV do
  if i <= 10 + opens then
    redis.call('SADD', KEYS[3], ARGV[i])
  else
    redis.call('SREM', KEYS[3], ARGV[i])
  end
end
return 'OK ' .. tostring(from + 1)
";

/// How many store calls in a row fail before the breaker opens.
pub(crate) const BREAKER_FAILURES: u32 = 3;

/// How long an open breaker waits before it lets one call through.
pub(crate) const BREAKER_HALF_OPEN: Duration = Duration::from_secs(1);

/// How long a replica's liveness key lives unless renewed (SPEC §14.2).
const LIVENESS: Duration = Duration::from_secs(10);

/// How often a replica renews its liveness key and closes the calls of
/// replicas whose key is gone.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(3);

/// Where `serve --http` keeps its runs (`--store`, SPEC §14.1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreConfig {
    /// `redis://[USER:PASS@]HOST:PORT[/DB]`.
    pub url: String,
    /// What every key begins with (`--store-prefix`, default `sg`).
    pub prefix: String,
    /// The longest a store call may take (`--store-timeout`, default
    /// 500 ms).
    pub timeout: Duration,
    /// This replica's id in the steps it appends (`--replica-id`); `None`:
    /// the host name, the process id and 4 random hex digits.
    pub replica: Option<String>,
    /// When a step counts (`--store-durability`).
    pub durability: Durability,
}

/// When a step counts as stored (`--store-durability`, SPEC §14.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// Once the store answered the append (with `appendfsync everysec`, a
    /// crash of the store's host loses up to about a second of steps).
    #[default]
    Ack,
    /// Once the store wrote the append to its append-only file on disk
    /// (`WAITAOF`, Redis 7.2 or later): about 4 ms more a step.
    Fsync,
}

impl StoreConfig {
    /// The store at `url`, with the default prefix (`sg`), timeout
    /// (500 ms) and durability (`ack`).
    pub fn new(url: impl Into<String>) -> Self {
        StoreConfig {
            url: url.into(),
            prefix: "sg".to_owned(),
            timeout: Duration::from_millis(500),
            replica: None,
            durability: Durability::Ack,
        }
    }
}

/// A run store that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// `--store` is not a store address this build takes.
    #[error(
        "--store {given}: {reason}; give memory, or redis://[USER:PASS@]HOST:PORT[/DB] (Redis 6.2 or later, or Valkey)"
    )]
    Url {
        /// The address as given, credentials removed.
        given: String,
        /// Why it is refused.
        reason: String,
    },
    /// The store does not answer.
    #[error("the run store at {store} cannot be reached ({reason}); start it, or check --store")]
    Unreachable {
        /// `HOST:PORT[/DB]`.
        store: String,
        /// The client's reason.
        reason: String,
    },
    /// The store may drop keys when full.
    #[error(
        "the run store at {store} evicts keys (maxmemory-policy {policy}): runs would vanish silently; set maxmemory-policy noeviction"
    )]
    Evicts {
        /// `HOST:PORT[/DB]`.
        store: String,
        /// The policy found.
        policy: String,
    },
    /// `--store-durability fsync` with a store that has no `WAITAOF`.
    #[error(
        "the run store at {store} is version {version}, which has no WAITAOF: --store-durability fsync needs Redis 7.2 or later (or Valkey 8); upgrade the store, or use --store-durability ack"
    )]
    NoFsync {
        /// `HOST:PORT[/DB]`.
        store: String,
        /// The version it says it is.
        version: String,
    },
    /// The store holds no run of that handle.
    #[error(
        "the run store at {store} holds no run {run} (it may have expired: a run lives until --run-ttl after its last step); `skillgraph record export --all --out DIR` writes every run it holds"
    )]
    UnknownRun {
        /// `HOST:PORT[/DB]`.
        store: String,
        /// The handle.
        run: String,
    },
    /// What the store holds of a run is not a record.
    #[error(
        "the run store at {store} holds run {run}, but not as a record ({reason}); its keys were written by something else than skillgraph serve"
    )]
    NotARecord {
        /// `HOST:PORT[/DB]`.
        store: String,
        /// The handle.
        run: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl StoreError {
    /// The stable code of the error.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Url { .. } => "store-url",
            StoreError::Unreachable { .. } => "store-unreachable",
            StoreError::Evicts { .. } => "store-evicts",
            StoreError::NoFsync { .. } => "store-no-fsync",
            StoreError::UnknownRun { .. } => "store-unknown-run",
            StoreError::NotARecord { .. } => "store-not-a-record",
        }
    }
}

/// One step of a run, to append: computed from the run's `from`th step,
/// its id, its record lines, its principal (`""`: anonymous), and the
/// calls it opens (forwarded by this replica) and closes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Step<'s> {
    pub(crate) from: u64,
    pub(crate) id: &'s str,
    pub(crate) lines: &'s str,
    pub(crate) principal: &'s str,
    /// `handshake` or `sessionless`: the generation the run started in.
    pub(crate) era: &'s str,
    pub(crate) opens: &'s [u64],
    pub(crate) closes: &'s [u64],
}

/// What an append of a step came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Appended {
    /// The step is the run's step `seq` (now, or by an earlier send of the
    /// same step id).
    Landed(u64),
    /// The run moved on from the `seq` the step was computed from: at
    /// least one step of another request came first.
    Conflict,
    /// The store holds no such run for this principal.
    Gone,
}

/// A run as the store holds it.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// Its principal (`""`: the anonymous one).
    pub(crate) principal: String,
    /// The digest of the map it was started on.
    pub(crate) map: String,
    /// How many steps it holds.
    pub(crate) seq: u64,
    /// Its record.
    pub(crate) events: Vec<Event>,
}

/// Fails store calls fast once several in a row failed, letting one
/// through a second after (SPEC §14.5).
#[derive(Debug, Default)]
pub(crate) struct Breaker {
    failures: AtomicU32,
    /// When it opened, or last let a call through while open.
    opened: Mutex<Option<Instant>>,
}

impl Breaker {
    /// Whether a call may go to the store now.
    fn admits(&self) -> bool {
        if self.failures.load(Ordering::Relaxed) < BREAKER_FAILURES {
            return true;
        }
        let Ok(mut opened) = self.opened.lock() else {
            return true;
        };
        let now = Instant::now();
        match *opened {
            Some(at) if now.duration_since(at) < BREAKER_HALF_OPEN => false,
            _ => {
                *opened = Some(now);
                true
            }
        }
    }

    fn succeeded(&self) {
        if self.failures.swap(0, Ordering::Relaxed) >= BREAKER_FAILURES
            && let Ok(mut opened) = self.opened.lock()
        {
            *opened = None;
        }
    }

    fn failed(&self) {
        let failures = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if failures == BREAKER_FAILURES
            && let Ok(mut opened) = self.opened.lock()
        {
            *opened = Some(Instant::now());
        }
    }

    /// Whether it is open: the store failed the last calls.
    pub(crate) fn open(&self) -> bool {
        self.failures.load(Ordering::Relaxed) >= BREAKER_FAILURES
    }
}

/// A connection to a run store, shared by every run of one replica.
pub(crate) struct Store {
    connection: ConnectionManager,
    /// The client, for the subscription to `list_changed` hints.
    client: Client,
    /// `HOST:PORT[/DB]`, the store's name in messages.
    name: String,
    prefix: String,
    timeout: Duration,
    replica: String,
    /// The digest of the map this replica serves.
    map: String,
    /// How long a run lives after its last step.
    ttl: Duration,
    append: Script,
    pub(crate) breaker: Breaker,
    /// What this replica's liveness key holds: `ADDR PID STARTED`.
    liveness: String,
    /// When a step counts.
    durability: Durability,
    /// Calls this replica forwarded whose close it could not store, as
    /// `(RUN, CALL)`: closed as `store-unreachable` when the store is back.
    pending: Mutex<Vec<(String, u64)>>,
    /// Steps this replica landed, and appends that met another replica's
    /// step first (said when the replica stops).
    pub(crate) landed: std::sync::atomic::AtomicU64,
    pub(crate) conflicts: std::sync::atomic::AtomicU64,
    /// The store process's `run_id` when last asked: another one means the
    /// store started again (and may have come back without runs).
    server: Mutex<Option<String>>,
}

/// `url` as messages name it: `HOST:PORT[/DB]`, never with credentials.
fn store_name(url: &str) -> Result<String, StoreError> {
    let refused = |reason: &str| StoreError::Url {
        given: without_credentials(url),
        reason: reason.to_owned(),
    };
    if url.starts_with("rediss://") {
        return Err(refused(
            "TLS to the store is not built into this version; reach the store over a TLS tunnel (stunnel, a service mesh) with redis://",
        ));
    }
    if !url.starts_with("redis://") {
        return Err(refused("not a redis:// address"));
    }
    let info = url
        .into_connection_info()
        .map_err(|err| refused(&err.to_string()))?;
    let db = info.redis_settings().db();
    let place = match info.addr() {
        ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
            format!("{host}:{port}")
        }
        other => other.to_string(),
    };
    Ok(if db == 0 {
        place
    } else {
        format!("{place}/{db}")
    })
}

/// The version `INFO server` says: Valkey's own where it is Valkey.
fn server_version(info: &str) -> String {
    let field = |key: &str| {
        info.lines()
            .find_map(|line| line.strip_prefix(key))
            .map(|value| value.trim().to_owned())
    };
    match field("valkey_version:") {
        Some(valkey) => format!("valkey {valkey}"),
        None => field("redis_version:").unwrap_or_else(|| "unknown".to_owned()),
    }
}

/// The store process's `run_id` in `INFO server`'s text: new at every
/// start of the store.
fn server_run(info: &str) -> Option<String> {
    info.lines()
        .find_map(|line| line.strip_prefix("run_id:"))
        .map(|run| run.trim().to_owned())
}

/// Whether a store of `version` (as [`server_version`] says it) has
/// `WAITAOF`: Redis 7.2 and later, Valkey 8 and later.
fn waits_for_aof(version: &str) -> bool {
    let (valkey, number) = match version.strip_prefix("valkey ") {
        Some(number) => (true, number),
        None => (false, version),
    };
    let mut parts = number
        .split('.')
        .map(|part| part.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if valkey {
        major >= 8
    } else {
        (major, minor) >= (7, 2)
    }
}

/// `url` with any `USER:PASS@` taken out: how a store's address is said.
pub(crate) fn without_credentials(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// The digest the store keeps of a map: SHA-256 of a `start` event's `map`
/// as its line writes it, in hex.
pub(crate) fn map_digest(start_line: &str) -> String {
    let map = serde_json::from_str::<serde_json::Value>(start_line)
        .ok()
        .and_then(|value| value.get("map").map(ToString::to_string))
        .unwrap_or_default();
    hex(&Sha256::digest(map.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A new random id: for a step, 128 bits; for a replica, 16.
fn random_hex(bytes: usize) -> String {
    let mut bits = vec![0u8; bytes];
    // The id only needs to differ from the others; the clock makes do when
    // the random source fails.
    if getrandom::fill(&mut bits).is_err() {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |time| time.as_nanos());
        for (at, byte) in bits.iter_mut().enumerate() {
            *byte = (nanos >> ((at % 16) * 8)) as u8;
        }
    }
    hex(&bits)
}

/// Whether `run` is spelled as serve spells a run's handle: `run_` and 32
/// hex digits.
fn is_handle(run: &str) -> bool {
    run.strip_prefix("run_")
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A new step id.
pub(crate) fn step_id() -> String {
    random_hex(16)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |time| {
            u64::try_from(time.as_millis()).unwrap_or(u64::MAX)
        })
}

/// Open the store of `config` and check it is fit to keep runs: reachable,
/// never evicting; a store without an append-only file is warned of.
async fn connect(config: &StoreConfig) -> Result<(ConnectionManager, String, Client), StoreError> {
    let name = store_name(&config.url)?;
    let unreachable = |reason: String| StoreError::Unreachable {
        store: name.clone(),
        reason,
    };
    let refused = |err: redis::RedisError| StoreError::Url {
        given: without_credentials(&config.url),
        reason: err.to_string(),
    };
    let info = config
        .url
        .as_str()
        .into_connection_info()
        .map_err(refused)?;
    // redis-rs leaves TCP_NODELAY off, so that a small append waits for the
    // peer's delayed acknowledgement (about 40 ms) before it is sent.
    let tcp = info.tcp_settings().clone().set_nodelay(true);
    let client = Client::open(info.set_tcp_settings(tcp)).map_err(refused)?;
    let settings = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(config.timeout))
        .set_response_timeout(Some(config.timeout))
        .set_number_of_retries(1);
    let connecting = client.get_connection_manager_with_config(settings);
    let connection = tokio::time::timeout(config.timeout.max(Duration::from_secs(2)), connecting)
        .await
        .map_err(|_| unreachable(format!("no answer within {:?}", config.timeout)))?
        .map_err(|err| unreachable(err.to_string()))?;
    Ok((connection, name, client))
}

/// A store setting (`CONFIG GET`); `None` where `CONFIG` is refused.
async fn setting(connection: &mut ConnectionManager, key: &str) -> Option<String> {
    let pairs: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(key)
        .query_async(connection)
        .await
        .ok()?;
    pairs.get(1).cloned()
}

impl Store {
    /// Open the store of `config` for a replica serving the map whose
    /// `start` line is `start_line`, its runs living `ttl` after their last
    /// step; checked as SPEC §14.1 says.
    ///
    /// # Errors
    ///
    /// [`StoreError`] when the address is refused, the store cannot be
    /// reached, or it evicts keys.
    pub(crate) async fn open(
        config: &StoreConfig,
        start_line: &str,
        ttl: Duration,
        addr: std::net::SocketAddr,
    ) -> Result<Self, StoreError> {
        let (mut connection, name, client) = connect(config).await?;
        let unreachable = |err: redis::RedisError| StoreError::Unreachable {
            store: name.clone(),
            reason: err.to_string(),
        };
        let _: () = redis::cmd("PING")
            .query_async(&mut connection)
            .await
            .map_err(unreachable)?;
        match setting(&mut connection, "maxmemory-policy").await {
            Some(policy) if policy != "noeviction" => {
                return Err(StoreError::Evicts {
                    store: name,
                    policy,
                });
            }
            Some(_) => {
                if setting(&mut connection, "appendonly").await.as_deref() == Some("no") {
                    warn(&format!(
                        "the run store at {name} has appendonly no: a restart of the store loses every run; set appendonly yes"
                    ));
                }
            }
            None => warn(&format!(
                "the run store at {name} refuses CONFIG, so its maxmemory-policy (which must be noeviction) and appendonly (which should be yes) are not checked"
            )),
        }
        let info: Option<String> = redis::cmd("INFO")
            .arg("server")
            .query_async(&mut connection)
            .await
            .ok();
        if config.durability == Durability::Fsync {
            let version = info
                .as_deref()
                .map_or_else(|| "unknown".to_owned(), server_version);
            if !waits_for_aof(&version) {
                return Err(StoreError::NoFsync {
                    store: name,
                    version,
                });
            }
        }
        let replica = config.replica.clone().unwrap_or_else(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|name| name.trim().to_owned())
                .unwrap_or_else(|_| "replica".to_owned());
            format!("{host}-{}-{}", std::process::id(), random_hex(2))
        });
        Ok(Store {
            connection,
            client,
            name,
            prefix: config.prefix.clone(),
            timeout: config.timeout,
            replica,
            map: map_digest(start_line),
            ttl,
            append: Script::new(APPEND),
            breaker: Breaker::default(),
            liveness: format!("{addr} {} {}", std::process::id(), now_ms()),
            durability: config.durability,
            pending: Mutex::new(Vec::new()),
            landed: std::sync::atomic::AtomicU64::new(0),
            conflicts: std::sync::atomic::AtomicU64::new(0),
            server: Mutex::new(info.as_deref().and_then(server_run)),
        })
    }

    /// Whether the store started again since it was last asked (its
    /// `run_id` changed; SPEC §14.11): `false` when it cannot say (a store
    /// that refuses `INFO`).
    pub(crate) async fn started_again(&self) -> bool {
        let mut connection = self.connection.clone();
        let Ok(info) = self
            .round(
                redis::cmd("INFO")
                    .arg("server")
                    .query_async::<String>(&mut connection),
            )
            .await
        else {
            return false;
        };
        let Some(now) = server_run(&info) else {
            return false;
        };
        let Ok(mut server) = self.server.lock() else {
            return false;
        };
        let before = server.replace(now.clone());
        before.is_some_and(|before| before != now)
    }

    /// Which of `runs` the store holds no step of now.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn missing(&self, runs: &[String]) -> Result<Vec<String>, String> {
        let mut pipe = redis::pipe();
        for run in runs {
            pipe.hget(self.key(run, "m"), "seq");
        }
        let mut connection = self.connection.clone();
        let held: Vec<Option<u64>> = self.round(pipe.query_async(&mut connection)).await?;
        Ok(runs
            .iter()
            .zip(held)
            .filter(|(_, seq)| seq.is_none())
            .map(|(run, _)| run.clone())
            .collect())
    }

    /// Keep `calls` of `run`, whose close could not be stored, to close
    /// when the store is back.
    pub(crate) fn hold_closes(&self, run: &str, calls: &[u64]) {
        if let Ok(mut pending) = self.pending.lock() {
            for call in calls {
                if !pending.iter().any(|(r, c)| r == run && c == call) {
                    pending.push((run.to_owned(), *call));
                }
            }
        }
    }

    /// The calls kept by [`Store::hold_closes`], taken.
    pub(crate) fn take_held_closes(&self) -> Vec<(String, u64)> {
        self.pending
            .lock()
            .map(|mut pending| std::mem::take(&mut *pending))
            .unwrap_or_default()
    }

    /// This replica's id.
    pub(crate) fn replica(&self) -> &str {
        &self.replica
    }

    /// The key of replica `id`'s liveness, or with `part` one of its keys.
    fn replica_key(&self, id: &str, part: Option<&str>) -> String {
        match part {
            Some(part) => format!("{}:rep:{id}:{part}", self.prefix),
            None => format!("{}:rep:{id}", self.prefix),
        }
    }

    /// Say this replica is alive for the next 10 s, registering it when its
    /// key was gone (at start, or after it was unresponsive that long):
    /// `false` then, `true` when it was renewed.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn heartbeat(&self) -> Result<bool, String> {
        let mut connection = self.connection.clone();
        let key = self.replica_key(&self.replica, None);
        let life = u64::try_from(LIVENESS.as_millis()).unwrap_or(10_000);
        let renewed: Option<String> = self
            .round(
                redis::cmd("SET")
                    .arg(&key)
                    .arg(&self.liveness)
                    .arg("PX")
                    .arg(life)
                    .arg("XX")
                    .query_async(&mut connection),
            )
            .await?;
        if renewed.is_some() {
            return Ok(true);
        }
        let reps = self.reps_key();
        let _: () = self
            .round(
                redis::pipe()
                    .cmd("SET")
                    .arg(&key)
                    .arg(&self.liveness)
                    .arg("PX")
                    .arg(life)
                    .ignore()
                    .sadd(reps, &self.replica)
                    .ignore()
                    .query_async(&mut connection),
            )
            .await?;
        Ok(false)
    }

    /// Keep the handshake session `id` (SPEC §14.6): its client's
    /// `initialize` params as JSON, its principal's binding and its run's
    /// handle, for as long as a run lives.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn keep_session(
        &self,
        id: &str,
        hello: &str,
        principal: &str,
        run: &str,
    ) -> Result<(), String> {
        let mut connection = self.connection.clone();
        let key = self.session_key(id);
        let ttl = u64::try_from(self.ttl.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        self.round(
            redis::pipe()
                .atomic()
                .hset_multiple(
                    &key,
                    &[("init", hello), ("principal", principal), ("run", run)],
                )
                .ignore()
                .pexpire(&key, i64::try_from(ttl).unwrap_or(i64::MAX))
                .ignore()
                .query_async(&mut connection),
        )
        .await
    }

    /// The channel of the handshake session `id`'s `list_changed` hints.
    fn events(&self, id: &str) -> String {
        format!("{}:ev:{{{id}}}", self.prefix)
    }

    /// Say on the session `id`'s channel that its tool list changed
    /// (SPEC §14.6): the replica that holds its stream tells its client.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn publish_list_changed(&self, id: &str) -> Result<(), String> {
        let mut connection = self.connection.clone();
        let _: u64 = self
            .round(connection.publish(self.events(id), "tools"))
            .await?;
        Ok(())
    }

    /// Hear every session's `list_changed` hints and hand each session's id
    /// to `heard`, until `heard` says to stop (`false`); the subscription
    /// made again a second after it breaks.
    pub(crate) async fn listen(&self, heard: impl Fn(&str) -> bool) {
        let pattern = format!("{}:ev:*", self.prefix);
        let prefix = format!("{}:ev:{{", self.prefix);
        loop {
            if let Ok(Ok(mut pubsub)) = tokio::time::timeout(
                self.timeout.max(Duration::from_secs(2)),
                self.client.get_async_pubsub(),
            )
            .await
                && pubsub.psubscribe(&pattern).await.is_ok()
            {
                let mut messages = std::pin::pin!(pubsub.into_on_message());
                while let Some(message) = std::future::poll_fn(|cx| {
                    futures_core::Stream::poll_next(messages.as_mut(), cx)
                })
                .await
                {
                    let id = message
                        .get_channel_name()
                        .strip_prefix(&prefix)
                        .and_then(|rest| rest.strip_suffix('}'));
                    if let Some(id) = id
                        && !heard(id)
                    {
                        return;
                    }
                }
            }
            if !heard("") {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Renew the handshake session `id`'s time to live: its run took a
    /// step.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn renew_session(&self, id: &str) -> Result<(), String> {
        let mut connection = self.connection.clone();
        let key = self.session_key(id);
        let ttl = i64::try_from(self.ttl.as_millis())
            .unwrap_or(i64::MAX)
            .max(1);
        let _: bool = self.round(connection.pexpire(key, ttl)).await?;
        Ok(())
    }

    /// Forget the handshake session `id`, which its client ended.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn forget_session(&self, id: &str) -> Result<(), String> {
        let mut connection = self.connection.clone();
        let key = self.session_key(id);
        self.round(connection.del(key)).await
    }

    /// The handshake session `id` as [`Store::keep_session`] kept it:
    /// `(hello, principal, run)`; `None` when the store holds none.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn session(
        &self,
        id: &str,
    ) -> Result<Option<(String, String, String)>, String> {
        let mut connection = self.connection.clone();
        let key = self.session_key(id);
        let fields: HashMap<String, String> = self.round(connection.hgetall(key)).await?;
        Ok(
            match (
                fields.get("init"),
                fields.get("principal"),
                fields.get("run"),
            ) {
                (Some(hello), Some(principal), Some(run)) => {
                    Some((hello.clone(), principal.clone(), run.clone()))
                }
                _ => None,
            },
        )
    }

    /// The replicas registered whose liveness key is gone, this one aside.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn dead_replicas(&self) -> Result<Vec<String>, String> {
        let mut connection = self.connection.clone();
        let reps = self.reps_key();
        let ids: Vec<String> = self.round(connection.smembers(reps)).await?;
        let others: Vec<String> = ids.into_iter().filter(|id| *id != self.replica).collect();
        if others.is_empty() {
            return Ok(others);
        }
        let mut alive = redis::pipe();
        for id in &others {
            alive.exists(self.replica_key(id, None));
        }
        let alive: Vec<bool> = self.round(alive.query_async(&mut connection)).await?;
        Ok(others
            .into_iter()
            .zip(alive)
            .filter_map(|(id, alive)| (!alive).then_some(id))
            .collect())
    }

    /// The calls replica `id` forwarded and did not close, as `(RUN, CALL)`.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn open_calls(&self, id: &str) -> Result<Vec<(String, u64)>, String> {
        let mut connection = self.connection.clone();
        let members: Vec<String> = self
            .round(connection.smembers(self.replica_key(id, Some("open"))))
            .await?;
        Ok(members
            .iter()
            .filter_map(|member| {
                let (run, call) = member.split_once(' ')?;
                Some((run.to_owned(), call.parse().ok()?))
            })
            .collect())
    }

    /// Forget replica `id`: its set of open calls (closed by now) and its
    /// place among the replicas; with `id` this replica's own, its
    /// liveness key too (a replica that stops).
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn forget(&self, id: &str) -> Result<(), String> {
        let mut connection = self.connection.clone();
        let reps = self.reps_key();
        let mut forgetting = redis::pipe();
        forgetting
            .del(self.replica_key(id, Some("open")))
            .ignore()
            .srem(reps, id)
            .ignore();
        if id == self.replica {
            forgetting.del(self.replica_key(id, None)).ignore();
        }
        self.round(forgetting.query_async(&mut connection)).await
    }

    /// The store's name in messages: `HOST:PORT[/DB]`.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The digest of the map this replica serves.
    pub(crate) fn map(&self) -> &str {
        &self.map
    }

    fn key(&self, run: &str, part: &str) -> String {
        run_key(&self.prefix, run, part)
    }

    /// The key of the handshake session `id` (SPEC §14.2).
    fn session_key(&self, id: &str) -> String {
        format!("{}:sess:{{{id}}}", self.prefix)
    }

    /// The key of the set of every replica's id.
    fn reps_key(&self) -> String {
        format!("{}:reps", self.prefix)
    }

    /// Run `call` on the store within the timeout, through the breaker;
    /// `Err(reason)` when it failed or the breaker is open.
    async fn round<T>(
        &self,
        call: impl Future<Output = redis::RedisResult<T>>,
    ) -> Result<T, String> {
        if !self.breaker.admits() {
            return Err("it failed the last calls; trying again within a second".to_owned());
        }
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(value)) => {
                self.breaker.succeeded();
                Ok(value)
            }
            Ok(Err(err)) => {
                self.breaker.failed();
                Err(err.to_string())
            }
            Err(_) => {
                self.breaker.failed();
                Err(format!("no answer within {:?}", self.timeout))
            }
        }
    }

    /// Append `step` to `run`.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn append(&self, run: &str, step: &Step<'_>) -> Result<Appended, String> {
        let Step {
            from,
            id: step,
            lines,
            principal,
            era,
            opens,
            closes,
        } = *step;
        let mut connection = self.connection.clone();
        let mut invocation = self.append.prepare_invoke();
        invocation
            .key(self.key(run, "m"))
            .key(self.key(run, "l"))
            .key(self.replica_key(&self.replica, Some("open")))
            .arg(from)
            .arg(step)
            .arg(&self.replica)
            .arg(lines)
            .arg(principal)
            .arg(&self.map)
            .arg(era)
            .arg(now_ms())
            .arg(
                u64::try_from(self.ttl.as_millis())
                    .unwrap_or(u64::MAX)
                    .max(1),
            )
            .arg(opens.len());
        for call in opens.iter().chain(closes) {
            invocation.arg(format!("{run} {call}"));
        }
        let answer: String = self.round(invocation.invoke_async(&mut connection)).await?;
        let (word, seq) = answer.split_once(' ').unwrap_or((answer.as_str(), ""));
        match (word, seq.parse::<u64>()) {
            ("OK" | "DONE", Ok(seq)) => {
                if self.durability == Durability::Fsync {
                    self.on_disk(&mut connection).await?;
                }
                self.landed.fetch_add(1, Ordering::Relaxed);
                Ok(Appended::Landed(seq))
            }
            ("CONFLICT", _) => {
                self.conflicts.fetch_add(1, Ordering::Relaxed);
                Ok(Appended::Conflict)
            }
            ("GONE", _) => Ok(Appended::Gone),
            _ => Err(format!("its append script answered {answer:?}")),
        }
    }

    /// Ask the store whether it answers, through the breaker: what closes
    /// it again when no request comes.
    pub(crate) async fn probe(self: std::sync::Arc<Self>) {
        let mut connection = self.connection.clone();
        let _ = self
            .round(redis::cmd("PING").query_async::<()>(&mut connection))
            .await;
    }

    /// Wait until the store wrote what this connection appended to its
    /// append-only file on disk (`WAITAOF 1 0`), within the timeout.
    async fn on_disk(&self, connection: &mut ConnectionManager) -> Result<(), String> {
        let millis = u64::try_from(self.timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let written: Vec<u64> = self
            .round(
                redis::cmd("WAITAOF")
                    .arg(1)
                    .arg(0)
                    .arg(millis)
                    .query_async(connection),
            )
            .await?;
        if written.first().copied().unwrap_or(0) >= 1 {
            Ok(())
        } else {
            Err(format!(
                "the step was not on the store's disk within {:?} (--store-durability fsync)",
                self.timeout
            ))
        }
    }

    /// How many steps the store holds of `run`; `None` when it holds none.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn seq(&self, run: &str) -> Result<Option<u64>, String> {
        let mut connection = self.connection.clone();
        let key = self.key(run, "m");
        let seq: Option<u64> = self.round(connection.hget(key, "seq")).await?;
        Ok(seq)
    }

    /// The steps of `run` after its `after`th, as record text (one line an
    /// event), and how many steps the store holds; `None` when it holds
    /// none of them past `after` in order (a gap, or fewer steps: load
    /// the whole run instead).
    ///
    /// # Errors
    ///
    /// Why the store could not be asked.
    pub(crate) async fn tail(
        &self,
        run: &str,
        after: u64,
    ) -> Result<Option<(String, u64)>, String> {
        let mut connection = self.connection.clone();
        let entries: Vec<(String, Vec<String>)> = self
            .round(
                redis::cmd("XRANGE")
                    .arg(self.key(run, "l"))
                    .arg(format!("{}-0", after + 1))
                    .arg("+")
                    .query_async(&mut connection),
            )
            .await?;
        let mut text = String::new();
        for (at, (id, fields)) in entries.iter().enumerate() {
            if *id != format!("{}-0", after + 1 + at as u64) {
                return Ok(None);
            }
            let Some(lines) = fields.chunks(2).find_map(|pair| match pair {
                [name, value] if name == "e" => Some(value),
                _ => None,
            }) else {
                return Ok(None);
            };
            text.push_str(lines);
            text.push('\n');
        }
        Ok(Some((text, after + entries.len() as u64)))
    }

    /// The run `run` as the store holds it, in one round trip; `None` when
    /// it holds none.
    ///
    /// # Errors
    ///
    /// Why the store could not be asked, or what it holds is not a record.
    pub(crate) async fn load(&self, run: &str) -> Result<Option<Loaded>, StoreError> {
        let mut connection = self.connection.clone();
        let (facts, entries) = self
            .round(fetch(
                &mut connection,
                &self.key(run, "m"),
                &self.key(run, "l"),
            ))
            .await
            .map_err(|reason| StoreError::Unreachable {
                store: self.name.clone(),
                reason,
            })?;
        loaded(&self.name, run, facts, entries)
    }
}

/// The key `part` (`m`, `l`) of `run` under `prefix`, with the run's hash
/// tag, so that a script touches one slot (SPEC §14.2).
fn run_key(prefix: &str, run: &str, part: &str) -> String {
    format!("{prefix}:{{{run}}}:{part}")
}

/// A run's hash and stream, read at once.
type Fetched = (HashMap<String, String>, Vec<(String, Vec<String>)>);

async fn fetch(
    connection: &mut ConnectionManager,
    facts: &str,
    steps: &str,
) -> redis::RedisResult<Fetched> {
    redis::pipe()
        .atomic()
        .hgetall(facts)
        .cmd("XRANGE")
        .arg(steps)
        .arg("-")
        .arg("+")
        .query_async(connection)
        .await
}

/// The run `run` of `store` from its hash `facts` and its stream
/// `entries`; `None` when the store holds none.
fn loaded(
    store: &str,
    run: &str,
    facts: HashMap<String, String>,
    entries: Vec<(String, Vec<String>)>,
) -> Result<Option<Loaded>, StoreError> {
    if facts.is_empty() {
        return Ok(None);
    }
    let not_a_record = |reason: String| StoreError::NotARecord {
        store: store.to_owned(),
        run: run.to_owned(),
        reason,
    };
    let text = record_text(&entries).map_err(not_a_record)?;
    let record = read_record(&text).map_err(|err| not_a_record(err.to_string()))?;
    let seq = u64::try_from(entries.len()).unwrap_or(u64::MAX);
    Ok(Some(Loaded {
        principal: facts.get("principal").cloned().unwrap_or_default(),
        map: facts.get("map").cloned().unwrap_or_default(),
        seq,
        events: record.events,
    }))
}

/// A run's record from its stream's entries: each entry's lines, in order,
/// each ended by a new line.
fn record_text(entries: &[(String, Vec<String>)]) -> Result<String, String> {
    let mut text = String::new();
    for (at, (id, fields)) in entries.iter().enumerate() {
        let expected = format!("{}-0", at + 1);
        if *id != expected {
            return Err(format!("step {id} where {expected} belongs"));
        }
        let lines = fields
            .chunks(2)
            .find_map(|pair| match pair {
                [name, value] if name == "e" => Some(value),
                _ => None,
            })
            .ok_or_else(|| format!("step {id} has no lines"))?;
        text.push_str(lines);
        text.push('\n');
    }
    Ok(text)
}

/// The records of `runs` (and of every run the store holds, with `all`) in
/// the store of `config`, each with its handle, as its file record's text,
/// byte for byte (SPEC §14.9): what `skillgraph record export` writes, and
/// what `skillgraph explain` and `skillgraph replay` read. On a runtime of
/// its own.
///
/// ```no_run
/// use skillgraph_mcp::{StoreConfig, export_records};
///
/// let store = StoreConfig::new("redis://127.0.0.1:6379");
/// for (run, record) in export_records(&store, &[], true)? {
///     std::fs::write(format!("{run}.jsonl"), record)?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`StoreError`] when the address is refused, the store cannot be
/// reached, or it holds no run of a handle in `runs`.
pub fn export_records(
    config: &StoreConfig,
    runs: &[String],
    all: bool,
) -> Result<Vec<(String, String)>, StoreError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| StoreError::Unreachable {
            store: without_credentials(&config.url),
            reason: format!("no async runtime could be started: {err}"),
        })?;
    runtime.block_on(exported(config, runs, all))
}

/// [`export_records`] on the caller's runtime.
async fn exported(
    config: &StoreConfig,
    runs: &[String],
    all: bool,
) -> Result<Vec<(String, String)>, StoreError> {
    let (mut connection, name, _) = connect(config).await?;
    let unreachable = |err: redis::RedisError| StoreError::Unreachable {
        store: name.clone(),
        reason: err.to_string(),
    };
    let mut wanted = runs.to_vec();
    if all {
        let pattern = format!("{}:{{*}}:m", config.prefix);
        let mut keys: Vec<String> = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut connection)
                .await
                .map_err(unreachable)?;
            keys.extend(found);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        let prefix = format!("{}:{{", config.prefix);
        // Only what serve writes: a key that holds no handle is not a run.
        wanted.extend(keys.iter().filter_map(|key| {
            key.strip_prefix(&prefix)?
                .strip_suffix("}:m")
                .filter(|run| is_handle(run))
                .map(str::to_owned)
        }));
        wanted.sort();
        wanted.dedup();
    }
    let mut records = Vec::with_capacity(wanted.len());
    for run in wanted {
        if !is_handle(&run) {
            return Err(StoreError::UnknownRun {
                store: name.clone(),
                run: crate::echo::shown(&run),
            });
        }
        let facts = run_key(&config.prefix, &run, "m");
        let steps = run_key(&config.prefix, &run, "l");
        let (hash, entries) = fetch(&mut connection, &facts, &steps)
            .await
            .map_err(unreachable)?;
        if hash.is_empty() {
            return Err(StoreError::UnknownRun {
                store: name.clone(),
                run,
            });
        }
        let text = record_text(&entries).map_err(|reason| StoreError::NotARecord {
            store: name.clone(),
            run: run.clone(),
            reason,
        })?;
        records.push((run, text));
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_named_without_its_credentials() {
        assert_eq!(
            store_name("redis://127.0.0.1:6379").unwrap(),
            "127.0.0.1:6379"
        );
        assert_eq!(
            store_name("redis://ann:secret@store.example:7000/3").unwrap(),
            "store.example:7000/3"
        );
        let refused = store_name("http://ann:secret@store.example").unwrap_err();
        assert_eq!(refused.code(), "store-url");
        assert!(!refused.to_string().contains("secret"), "{refused}");
        let tls = store_name("rediss://ann:secret@store.example:6380").unwrap_err();
        assert!(tls.to_string().contains("TLS"), "{tls}");
        assert!(!tls.to_string().contains("secret"), "{tls}");
    }

    #[test]
    fn fsync_needs_a_store_with_waitaof() {
        assert_eq!(
            server_version("# Server\r\nredis_version:7.0.15\r\n"),
            "7.0.15"
        );
        assert_eq!(
            server_version("redis_version:7.2.4\r\nvalkey_version:8.0.1\r\n"),
            "valkey 8.0.1"
        );
        assert!(!waits_for_aof("7.0.15"));
        assert!(waits_for_aof("7.2.0"));
        assert!(waits_for_aof("8.0.0"));
        assert!(!waits_for_aof("valkey 7.2.5"));
        assert!(waits_for_aof("valkey 8.0.1"));
        assert!(!waits_for_aof("unknown"));
    }

    #[test]
    fn the_breaker_opens_after_three_failures_and_lets_one_call_through_a_second_later() {
        let breaker = Breaker::default();
        for _ in 0..BREAKER_FAILURES {
            assert!(breaker.admits());
            breaker.failed();
        }
        assert!(breaker.open());
        // It opened just now: the next call fails fast.
        assert!(!breaker.admits());
        if let Ok(mut opened) = breaker.opened.lock() {
            *opened = Instant::now().checked_sub(BREAKER_HALF_OPEN);
        }
        assert!(breaker.admits(), "half-open after a second");
        assert!(!breaker.admits(), "one call at a time while half-open");
        breaker.succeeded();
        assert!(!breaker.open());
        assert!(breaker.admits());
    }

    #[test]
    fn a_stream_is_a_record_only_with_its_steps_in_order() {
        let step = |id: &str, lines: &str| {
            (
                id.to_owned(),
                vec!["s".into(), "00".into(), "e".into(), lines.to_owned()],
            )
        };
        assert_eq!(
            record_text(&[step("1-0", "a\nb"), step("2-0", "c")]).unwrap(),
            "a\nb\nc\n"
        );
        assert!(record_text(&[step("2-0", "c")]).is_err());
        assert!(record_text(&[("1-0".into(), vec!["s".into(), "00".into()])]).is_err());
    }
}
