//! Runs across replicas (SPEC §14): three `serve --http` replicas in this
//! process, sharing a real `redis-server` that the test starts on a
//! loopback port in a folder of its own, in front of one desk upstream
//! that counts the calls it receives. Each test speaks the sessionless
//! generation in plain HTTP, moving a run from replica to replica as a
//! load balancer without affinity would.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillgraph_mcp::{HttpConfig, ServeConfig, StoreConfig, export_records, serve_http_on};

use common::plain::{call, handle_of, in_session, open_session, post, post_to, sessionless, texts};
use common::redis::Redis;
use common::upstream::{self, Desk};
use common::{
    HttpServed, desk, replays_to_itself, scratch, serve_until_stdin_closes, serving_at, tokens_file,
};

/// What most tests stand on, for the test `name`: a store of its own, a
/// desk upstream answering from `data`, and the desk's map in front of it.
fn setup(name: &str, data: Value) -> (Redis, Desk, PathBuf) {
    let redis = Redis::start(name, &[]);
    let upstream = upstream::desk(data);
    let map = desk_map(&format!("replicas-{name}"), &upstream);
    (redis, upstream, map)
}

/// Ann's credentials, and bob's.
const ANN: [(&str, &str); 1] = [("Authorization", "Bearer ann-token")];
const BOB: [(&str, &str); 1] = [("Authorization", "Bearer bob-token")];

/// Two replicas of `map` in `redis` that know two principals, ann
/// (`ann-token`) and bob (`bob-token`), from a tokens file in a folder
/// named `name`.
fn two_replicas_for_ann_and_bob(name: &str, map: &PathBuf, redis: &Redis) -> Vec<HttpServed> {
    let tokens = tokens_file(name, &[("ann", "ann-token", ""), ("bob", "bob-token", "")]);
    replicas(2, map, redis, |http| {
        http.auth_tokens = Some(tokens.clone())
    })
}

/// The support desk in front of `upstream`, to serve.
fn desk_map(name: &str, upstream: &Desk) -> PathBuf {
    desk(name, json!({"desk": {"url": upstream.url}}), |_| {})
}

/// `count` replicas of `map`, their runs in `redis`, each as `change`
/// changes it.
fn replicas(
    count: usize,
    map: &PathBuf,
    redis: &Redis,
    change: impl Fn(&mut HttpConfig),
) -> Vec<HttpServed> {
    (0..count)
        .map(|at| {
            HttpServed::start(ServeConfig::new(map), |http| {
                let mut store = StoreConfig::new(redis.url());
                store.replica = Some(format!("replica-{at}"));
                http.store = Some(store);
                change(http);
            })
        })
        .collect()
}

/// The record the store holds of `run`.
fn exported(redis: &Redis, run: &str) -> String {
    let records = export_records(&StoreConfig::new(redis.url()), &[run.to_owned()], false)
        .unwrap_or_else(|err| panic!("{err}"));
    assert_eq!(records.len(), 1);
    records[0].1.clone()
}

/// The kinds of a record's events, in order.
fn kinds(record: &str) -> Vec<String> {
    record
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).expect("a JSON line");
            event["event"].as_str().unwrap_or_default().to_owned()
        })
        .collect()
}

/// A GET of `path` on `addr`: its status and body.
fn get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("the replica accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a timeout");
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: anything.example\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("sent");
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = raw.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, body.to_owned())
}

/// Wait up to `limit` for `addr`'s `/readyz` to answer `status`; how long
/// it took.
fn ready_within(addr: &str, status: u16, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if get(addr, "/readyz").0 == status {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn a_run_goes_on_on_every_replica_in_turn_and_its_stored_record_replays() {
    let (redis, upstream, map) = setup("turns", upstream::desk_data());
    let replicas = replicas(3, &map, &redis, |_| {});
    let at = |n: usize| replicas[n % 3].addr.as_str();

    // Started on the first, the run moves to refunds there.
    let first = call(at(0), "lookup_order", json!({"order_id": 4412}), &[]);
    let run = handle_of(&first);
    // On the second, refunds is active: its refund is offered.
    let refund = call(
        at(1),
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    assert_ne!(refund["isError"], true, "{refund}");
    // On the third, back to triage by a read; and on the first again (its
    // copy is two steps behind), triage's tool is offered, refunds' not.
    let read = call(
        at(2),
        "read_skill",
        json!({"id": "triage", "skillgraph_run": run}),
        &[],
    );
    assert!(
        texts(&read)[0].contains("<skill_content name=\"triage\">"),
        "{read}"
    );
    let refused = call(
        at(0),
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    assert_eq!(
        refused["isError"], true,
        "the stale copy was brought up to date: {refused}"
    );
    let again = call(
        at(0),
        "lookup_order",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    assert_ne!(again["isError"], true, "{again}");

    let record = exported(&redis, &run);
    replays_to_itself(&record).unwrap_or_else(|diff| panic!("{diff}\n{record}"));
    let events = kinds(&record);
    assert_eq!(events[0], "start");
    assert_eq!(events.iter().filter(|kind| *kind == "call").count(), 4);
    assert_eq!(
        upstream.calls.load(Ordering::Relaxed),
        3,
        "the refused call never reached the upstream"
    );
    // Every replica serves the same record.
    let uri = format!("skillgraph://record/{run}");
    for n in 0..3 {
        let read = sessionless(
            at(n),
            "resources/read",
            Some(&uri),
            json!({"uri": uri}),
            &[],
        )
        .json();
        assert_eq!(read["result"]["contents"][0]["text"], record, "replica {n}");
    }
}

#[test]
fn steps_of_one_run_taken_on_three_replicas_at_once_all_land_in_one_order() {
    let (redis, upstream, map) = setup("at-once", upstream::desk_data());
    let replicas = Arc::new(replicas(3, &map, &redis, |_| {}));
    let run = handle_of(&call(
        &replicas[0].addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[],
    ));
    let workers: Vec<_> = (0..3)
        .map(|n| {
            let (replicas, run) = (Arc::clone(&replicas), run.clone());
            std::thread::spawn(move || {
                for _ in 0..8 {
                    let answer = call(
                        &replicas[n].addr,
                        "issue_refund",
                        json!({"order_id": 4412, "skillgraph_run": run}),
                        &[],
                    );
                    assert_ne!(answer["isError"], true, "replica {n}: {answer}");
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("every call answered");
    }
    let record = exported(&redis, &run);
    replays_to_itself(&record).unwrap_or_else(|diff| panic!("{diff}\n{record}"));
    let events = kinds(&record);
    assert_eq!(events.iter().filter(|kind| *kind == "call").count(), 25);
    assert_eq!(events.iter().filter(|kind| *kind == "result").count(), 25);
    assert_eq!(upstream.calls.load(Ordering::Relaxed), 25);
}

#[test]
fn another_principal_s_handle_is_answered_as_an_unknown_run_on_every_replica() {
    let (redis, upstream, map) = setup("principals", upstream::desk_data());
    let replicas = two_replicas_for_ann_and_bob("replicas-principals-tokens", &map, &redis);
    let run = handle_of(&call(
        &replicas[0].addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &ANN,
    ));
    let unknown = "run_00000000000000000000000000000000";
    for replica in &replicas {
        let theirs = call(
            &replica.addr,
            "lookup_order",
            json!({"order_id": 4412, "skillgraph_run": run}),
            &BOB,
        );
        let none = call(
            &replica.addr,
            "lookup_order",
            json!({"order_id": 4412, "skillgraph_run": unknown}),
            &BOB,
        );
        assert_eq!(theirs, none, "another's run is an unknown run");
        assert_eq!(theirs["isError"], true);
    }
    // Ann goes on on the other replica; nothing of Bob's was appended.
    let hers = call(
        &replicas[1].addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &ANN,
    );
    assert_ne!(hers["isError"], true, "{hers}");
    assert_eq!(upstream.calls.load(Ordering::Relaxed), 2);
    replays_to_itself(&exported(&redis, &run)).unwrap_or_else(|diff| panic!("{diff}"));
}

#[test]
fn with_the_store_down_nothing_is_forwarded_and_readyz_says_so_until_it_is_back() {
    let (mut redis, upstream, map) = setup("outage", upstream::desk_data());
    let replicas = replicas(2, &map, &redis, |_| {});
    let run = handle_of(&call(
        &replicas[0].addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[],
    ));
    assert_eq!(
        get(&replicas[0].addr, "/readyz"),
        (200, "ready\n".to_owned())
    );
    // The append-only file is written every second: let it take the run.
    std::thread::sleep(Duration::from_millis(1500));
    redis.kill();

    for replica in &replicas {
        for arguments in [
            json!({"order_id": 4412, "skillgraph_run": run}),
            json!({"order_id": 4412}),
        ] {
            let answer = sessionless(
                &replica.addr,
                "tools/call",
                Some("issue_refund"),
                json!({"name": "issue_refund", "arguments": arguments}),
                &[],
            );
            let error = &answer.json()["error"];
            assert_eq!(error["code"], -32603, "{}", answer.body);
            let message = error["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&format!(
                    "the run store at 127.0.0.1:{} is unreachable",
                    redis.port
                )) && message.contains("nothing was forwarded"),
                "{message}"
            );
        }
    }
    assert_eq!(
        upstream.calls.load(Ordering::Relaxed),
        1,
        "no call went upstream"
    );
    for replica in &replicas {
        assert!(
            ready_within(&replica.addr, 503, Duration::from_secs(1)).is_some(),
            "/readyz says the store is away"
        );
        assert_eq!(get(&replica.addr, "/livez").0, 200);
        // Requests that need no run go on.
        let listed = sessionless(&replica.addr, "tools/list", None, json!({}), &[]);
        assert_eq!(listed.status, 200);
        assert!(
            listed.json()["result"]["tools"].is_array(),
            "{}",
            listed.body
        );
    }

    redis.restart();
    // SPEC §14.5 says within 2 s: the breaker is tried every second. The
    // bound here leaves room for a loaded test machine.
    for replica in &replicas {
        assert!(
            ready_within(&replica.addr, 200, Duration::from_secs(5)).is_some(),
            "/readyz says the store is back"
        );
    }
    let refund = call(
        &replicas[1].addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    assert_ne!(
        refund["isError"], true,
        "the run outlived the store's restart: {refund}"
    );
    replays_to_itself(&exported(&redis, &run)).unwrap_or_else(|diff| panic!("{diff}"));
}

#[test]
fn a_run_started_on_another_map_is_not_continued() {
    let (redis, upstream, map) = setup("maps", upstream::desk_data());
    let other = desk(
        "replicas-map-b",
        json!({"desk": {"url": upstream.url}}),
        |map| {
            if let Some(map) = map.as_object_mut() {
                map.remove("start");
            }
        },
    );
    let a = replicas(1, &map, &redis, |_| {});
    let b = replicas(1, &other, &redis, |_| {});
    let run = handle_of(&call(
        &a[0].addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[],
    ));
    let answer = sessionless(
        &b[0].addr,
        "tools/call",
        Some("lookup_order"),
        json!({"name": "lookup_order", "arguments": {"order_id": 4412, "skillgraph_run": run}}),
        &[],
    );
    let message = answer.json()["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains(&format!("run {run} was started on another map")),
        "{message}"
    );
    assert_eq!(upstream.calls.load(Ordering::Relaxed), 1);
}

#[test]
fn a_store_that_evicts_keys_is_refused_at_start() {
    let redis = Redis::start("evicts", &["--maxmemory-policy", "allkeys-lru"]);
    let upstream = upstream::desk(upstream::desk_data());
    let map = desk_map("replicas-evicts", &upstream);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let refused = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let mut http = HttpConfig::new(listener.local_addr().expect("bound"));
        http.store = Some(StoreConfig::new(redis.url()));
        serve_http_on(&ServeConfig::new(&map), &http, listener, async {}).await
    });
    let err = refused.expect_err("an evicting store is refused");
    assert_eq!(err.code(), "store-evicts");
    assert_eq!(
        err.to_string(),
        format!(
            "the run store at 127.0.0.1:{} evicts keys (maxmemory-policy allkeys-lru): runs would vanish silently; set maxmemory-policy noeviction",
            redis.port
        )
    );
}

#[test]
fn fsync_durability_is_refused_at_start_by_a_store_without_waitaof() {
    let (redis, _upstream, map) = setup("fsync", upstream::desk_data());
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let started = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let mut http = HttpConfig::new(listener.local_addr().expect("bound"));
        let mut store = StoreConfig::new(redis.url());
        store.durability = skillgraph_mcp::Durability::Fsync;
        http.store = Some(store);
        http.drain_grace = Duration::ZERO;
        // Serve until it has started: a store with WAITAOF starts.
        let stop = tokio::time::sleep(Duration::from_secs(2));
        serve_http_on(&ServeConfig::new(&map), &http, listener, stop).await
    });
    let installed = Command::new("redis-server")
        .arg("--version")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    let waits = installed
        .split_whitespace()
        .find_map(|word| word.strip_prefix("v="))
        .and_then(|v| {
            let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
            Some((parts.next()?, parts.next()?))
        })
        .is_some_and(|version| version >= (7, 2));
    if waits {
        started.expect("a store with WAITAOF serves with fsync");
    } else {
        let err = started.expect_err("a store without WAITAOF is refused");
        assert_eq!(err.code(), "store-no-fsync");
        assert!(err.to_string().contains("is version 7."), "{err}");
    }
}

#[test]
fn health_is_answered_for_any_host_and_without_a_token() {
    let (redis, _upstream, map) = setup("health", upstream::desk_data());
    let tokens = scratch("replicas-health-tokens").join("tokens");
    std::fs::write(&tokens, format!("ann {}\n", "0".repeat(64))).expect("the tokens file");
    let replicas = replicas(1, &map, &redis, |http| {
        http.auth_tokens = Some(tokens.clone())
    });
    assert_eq!(get(&replicas[0].addr, "/livez"), (200, "live\n".to_owned()));
    assert_eq!(
        get(&replicas[0].addr, "/readyz"),
        (200, "ready\n".to_owned())
    );
    // /mcp still wants a token.
    let refused = post_to(&replicas[0].addr, "/mcp", &[], b"{}");
    assert_eq!(refused.status, 401);
}

/// A replica as a child process of this test binary, so that it can be
/// killed or paused: the map folder and the store its parent passes in
/// `REPLICA`, served until its standard input closes.
#[test]
#[ignore = "the replica process the other tests start, kill and pause"]
fn replica_child() {
    let Ok(settings) = std::env::var("REPLICA") else {
        return;
    };
    let settings: Value = serde_json::from_str(&settings).expect("settings are JSON");
    let map = PathBuf::from(settings["map"].as_str().expect("a map"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let mut http = HttpConfig::new(listener.local_addr().expect("an address"));
    let mut store = StoreConfig::new(settings["store"].as_str().expect("a store"));
    store.replica = settings["replica"].as_str().map(str::to_owned);
    http.store = Some(store);
    http.drain_grace = Duration::ZERO;
    serve_until_stdin_closes(&ServeConfig::new(&map), &http, listener);
}

/// A replica in a process of its own ([`replica_child`]).
struct Process {
    child: std::process::Child,
    addr: String,
}

impl Process {
    fn start(map: &Path, redis: &Redis, replica: &str) -> Self {
        let settings = json!({"map": map, "store": redis.url(), "replica": replica});
        let mut child = Command::new(std::env::current_exe().expect("this test binary"))
            .args([
                "--exact",
                "replica_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("REPLICA", settings.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the replica starts");
        let addr = serving_at(&mut child);
        let process = Process { child, addr };
        let deadline = Instant::now() + Duration::from_secs(30);
        while get(&process.addr, "/readyz").0 != 200 {
            assert!(Instant::now() < deadline, "the replica answers");
            std::thread::sleep(Duration::from_millis(50));
        }
        process
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The desk's data with `track_parcel` answering after `delay` ms.
fn slow_parcels(delay: u64) -> Value {
    let mut data = upstream::desk_data();
    data["track_parcel"]["delay_ms"] = json!(delay);
    data
}

/// The `result` events of `record` with a `reason`: `(call, reason)`.
fn closed_for_the_client(record: &str) -> Vec<(u64, String)> {
    record
        .lines()
        .filter_map(|line| {
            let event: Value = serde_json::from_str(line).ok()?;
            Some((
                event["call"].as_u64()?,
                event["reason"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// Call the slow `track_parcel` in `run` on `addr` from a thread of its
/// own, and wait until the upstream has it: the call's step landed.
fn call_that_hangs(
    addr: &str,
    run: &str,
    upstream: &Desk,
) -> std::thread::JoinHandle<Option<common::plain::Answer>> {
    let (addr, run) = (addr.to_owned(), run.to_owned());
    let calls = upstream.calls.load(Ordering::Relaxed);
    let hanging = std::thread::spawn(move || {
        // No answer, when the replica stops first.
        std::panic::catch_unwind(|| {
            sessionless(
                &addr,
                "tools/call",
                Some("track_parcel"),
                json!({"name": "track_parcel", "arguments": {"parcel_id": "JD0142", "skillgraph_run": run}}),
                &[],
            )
        })
        .ok()
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while upstream.calls.load(Ordering::Relaxed) == calls {
        assert!(Instant::now() < deadline, "the call reached the upstream");
        std::thread::sleep(Duration::from_millis(10));
    }
    hanging
}

#[test]
fn a_call_left_open_by_a_killed_replica_is_closed_by_a_survivor_within_15_s() {
    let (redis, upstream, map) = setup("killed", slow_parcels(60_000));
    let doomed = Process::start(&map, &redis, "doomed");
    let survivor = &replicas(1, &map, &redis, |_| {})[0];
    let run = handle_of(&call(
        &survivor.addr,
        "lookup_order",
        json!({"order_id": 4413}),
        &[],
    ));
    let _hanging = call_that_hangs(&doomed.addr, &run, &upstream);
    let open = exported(&redis, &run);
    assert!(closed_for_the_client(&open).is_empty(), "{open}");

    doomed.signal("KILL");
    let killed = Instant::now();
    let closed = loop {
        let record = exported(&redis, &run);
        let closed = closed_for_the_client(&record);
        if !closed.is_empty() {
            break closed;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "closed within 15 s:\n{record}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(closed, vec![(2, "replica-lost".to_owned())]);
    // The run goes on on the survivor, and its record replays.
    let next = call(
        &survivor.addr,
        "lookup_order",
        json!({"order_id": 4413, "skillgraph_run": run}),
        &[],
    );
    assert_ne!(next["isError"], true, "{next}");
    replays_to_itself(&exported(&redis, &run)).unwrap_or_else(|diff| panic!("{diff}"));
}

#[test]
fn a_paused_replica_that_wakes_stale_computes_its_step_again_on_the_stored_run() {
    let (redis, upstream, map) = setup("paused", upstream::desk_data());
    let sleeper = Process::start(&map, &redis, "sleeper");
    let awake = &replicas(1, &map, &redis, |_| {})[0];
    let run = handle_of(&call(
        &sleeper.addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[],
    ));
    sleeper.signal("STOP");
    // Meanwhile the run moves on: refunds, then back to triage.
    for (tool, arguments) in [
        (
            "issue_refund",
            json!({"order_id": 4412, "skillgraph_run": run}),
        ),
        ("read_skill", json!({"id": "triage", "skillgraph_run": run})),
    ] {
        let answer = call(&awake.addr, tool, arguments, &[]);
        assert_ne!(answer["isError"], true, "{answer}");
    }
    sleeper.signal("CONT");
    // Its copy still has refunds active; the stored run has triage.
    let refused = call(
        &sleeper.addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &[],
    );
    assert_eq!(refused["isError"], true, "{refused}");
    let record = exported(&redis, &run);
    replays_to_itself(&record).unwrap_or_else(|diff| panic!("{diff}\n{record}"));
    assert_eq!(
        upstream.calls.load(Ordering::Relaxed),
        2,
        "the refused call was not forwarded"
    );
}

#[test]
fn a_replica_that_stops_closes_its_calls_still_open_after_the_drain() {
    let (redis, upstream, map) = setup("drain", slow_parcels(60_000));
    let stays = replicas(1, &map, &redis, |_| {});
    let stopping = replicas(1, &map, &redis, |http| {
        http.drain_timeout = Duration::from_millis(300);
    });
    let run = handle_of(&call(
        &stays[0].addr,
        "lookup_order",
        json!({"order_id": 4413}),
        &[],
    ));
    let _hanging = call_that_hangs(&stopping[0].addr, &run, &upstream);
    drop(stopping);
    let record = exported(&redis, &run);
    assert_eq!(
        closed_for_the_client(&record),
        vec![(2, "drain".to_owned())],
        "{record}"
    );
    replays_to_itself(&record).unwrap_or_else(|diff| panic!("{diff}"));
}

#[test]
fn a_call_whose_close_could_not_be_stored_is_closed_when_the_store_is_back() {
    let (mut redis, upstream, map) = setup("unstored-close", slow_parcels(2_500));
    let replica = &replicas(1, &map, &redis, |_| {})[0];
    let run = handle_of(&call(
        &replica.addr,
        "lookup_order",
        json!({"order_id": 4413}),
        &[],
    ));
    let calling = call_that_hangs(&replica.addr, &run, &upstream);
    // The call's step is on disk (everysec) before the store goes.
    std::thread::sleep(Duration::from_millis(1200));
    redis.kill();
    let answer = calling
        .join()
        .expect("the calling thread")
        .expect("the call is answered");
    let error = &answer.json()["error"];
    assert_eq!(error["code"], -32603, "{}", answer.body);
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("unreachable"),
        "{error}"
    );
    redis.restart();
    let back = Instant::now();
    loop {
        let record = exported(&redis, &run);
        let closed = closed_for_the_client(&record);
        if !closed.is_empty() {
            assert_eq!(closed, vec![(2, "store-unreachable".to_owned())]);
            replays_to_itself(&record).unwrap_or_else(|diff| panic!("{diff}"));
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(10),
            "closed once the store is back:\n{record}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A DELETE of `/mcp` at `addr` with `headers`: its status.
fn delete(addr: &str, headers: &[(&str, &str)]) -> u16 {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(addr).expect("the replica accepts");
    let mut request = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).expect("sent");
    let mut raw = String::new();
    let _ = stream.read_to_string(&mut raw);
    raw.split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

/// A `tools/call` in the handshake session `session` at `addr`, with
/// `headers` beside the session's: the HTTP status and the result.
fn call_in_session(
    addr: &str,
    session: &str,
    headers: &[(&str, &str)],
    tool: &str,
    arguments: Value,
) -> (u16, Value) {
    let mut all = in_session(session).to_vec();
    all.extend_from_slice(headers);
    let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let answer = post(addr, &all, &request);
    let result = if answer.status == 200 {
        answer.json()["result"].clone()
    } else {
        Value::Null
    };
    (answer.status, result)
}

#[test]
fn a_handshake_session_goes_on_on_any_replica_for_its_own_principal_only() {
    let (redis, upstream, map) = setup("sessions", upstream::desk_data());
    let replicas = two_replicas_for_ann_and_bob("replicas-sessions-tokens", &map, &redis);
    let (a, b) = (replicas[0].addr.as_str(), replicas[1].addr.as_str());

    // Ann shakes hands on the first replica.
    let session = open_session(a, &ANN);
    let mut headers = in_session(&session).to_vec();
    headers.extend_from_slice(&ANN);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(post(a, &headers, &initialized).status, 202);

    // Bob cannot name it on either replica: an unknown session.
    for addr in [a, b] {
        let (status, _) = call_in_session(
            addr,
            &session,
            &BOB,
            "lookup_order",
            json!({"order_id": 4412}),
        );
        assert_eq!(status, 404, "another principal's session is unknown");
    }
    // Ann goes on on the second replica: the run moves to refunds there.
    let (status, moved) =
        call_in_session(b, &session, &ANN, "lookup_order", json!({"order_id": 4412}));
    assert_eq!(status, 200);
    assert!(
        texts(&moved)
            .iter()
            .any(|text| text.contains("<skill_content name=\"refunds\">")),
        "{moved}"
    );
    // And on the first again, whose copy is behind: refunds' tool is offered.
    let (status, refunded) =
        call_in_session(a, &session, &ANN, "issue_refund", json!({"order_id": 4412}));
    assert_eq!(status, 200);
    assert_ne!(refunded["isError"], true, "{refunded}");
    assert_eq!(upstream.calls.load(Ordering::Relaxed), 2);
    // Ended by its client, it is gone from the store: no replica that
    // does not hold it can restore it.
    let key = format!("sg:sess:{{{session}}}");
    assert_eq!(redis.command(&["EXISTS", &key]).as_deref(), Some(":1"));
    let mut ending = in_session(&session).to_vec();
    ending.extend_from_slice(&ANN);
    assert_eq!(delete(b, &ending), 204);
    assert_eq!(redis.command(&["EXISTS", &key]).as_deref(), Some(":0"));
}

#[test]
fn a_step_on_one_replica_tells_the_replica_holding_the_session_s_stream_that_its_list_changed() {
    let (redis, _upstream, map) = setup("list-changed", upstream::desk_data());
    let replicas = replicas(2, &map, &redis, |_| {});
    let (a, b) = (replicas[0].addr.as_str(), replicas[1].addr.as_str());
    let session = common::plain::shake_hands(a);

    // The session's stream, held on the first replica.
    let (heard, hearing) = std::sync::mpsc::channel();
    let stream_addr = a.to_owned();
    let stream_session = session.clone();
    std::thread::spawn(move || {
        use std::io::Write;
        let Ok(mut stream) = std::net::TcpStream::connect(&stream_addr) else {
            return;
        };
        let request = format!(
            "GET /mcp HTTP/1.1\r\nHost: {stream_addr}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {stream_session}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n"
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return;
        }
        let _ = stream.set_read_timeout(Some(Duration::from_secs(15)));
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            if line.contains("notifications/tools/list_changed") {
                let _ = heard.send(());
                return;
            }
        }
    });
    // Let the stream open before the step.
    std::thread::sleep(Duration::from_millis(300));
    let (status, moved) =
        call_in_session(b, &session, &[], "lookup_order", json!({"order_id": 4412}));
    assert_eq!(status, 200);
    assert!(
        texts(&moved).iter().any(|text| text.contains("refunds")),
        "the step changed the active skills: {moved}"
    );
    let told = Instant::now();
    hearing
        .recv_timeout(Duration::from_secs(5))
        .expect("the replica holding the stream told its client");
    assert!(
        told.elapsed() < Duration::from_secs(2),
        "within a second or so"
    );
}

#[test]
fn a_record_folder_with_a_shared_store_is_refused_naming_the_store_without_its_password() {
    let upstream = upstream::desk(upstream::desk_data());
    let map = desk_map("replicas-record-folder", &upstream);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let refused = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let mut http = HttpConfig::new(listener.local_addr().expect("bound"));
        http.store = Some(StoreConfig::new("redis://ann:secret@127.0.0.1:6379/2"));
        let mut config = ServeConfig::new(&map);
        config.record = Some(scratch("replicas-record-folder-runs"));
        serve_http_on(&config, &http, listener, async {}).await
    });
    let err = refused.expect_err("--record with --store is refused");
    assert_eq!(err.code(), "store-with-record");
    let said = err.to_string();
    assert!(said.contains("redis://127.0.0.1:6379/2"), "{said}");
    assert!(!said.contains("secret"), "{said}");
}

#[test]
fn a_session_another_replica_holds_is_503_not_unknown_while_the_store_is_away() {
    let (mut redis, _upstream, map) = setup("sessions-away", upstream::desk_data());
    let replicas = replicas(2, &map, &redis, |_| {});
    let session = common::plain::shake_hands(&replicas[0].addr);
    redis.kill();
    // The second replica cannot ask the store: the session may well be
    // there, so it is not answered as unknown (404), which would end it.
    let (status, _) = call_in_session(
        &replicas[1].addr,
        &session,
        &[],
        "lookup_order",
        json!({"order_id": 4413}),
    );
    assert_eq!(status, 503);
}

#[test]
fn a_run_that_took_roles_goes_on_with_them_on_every_replica_and_its_hidden_tool_never_runs() {
    let redis = Redis::start("roles", &[]);
    let upstream = upstream::desk(upstream::desk_data());
    let map = desk(
        "replicas-roles",
        json!({"desk": {"url": upstream.url}}),
        |map| map["roles"] = json!({"support": {"hide": ["refunds"]}, "*": {}}),
    );
    let tokens = tokens_file("replicas-roles-tokens", &[("ann", "ann-token", "support")]);
    let replicas = replicas(2, &map, &redis, |http| {
        http.auth_tokens = Some(tokens.clone());
    });
    // The risky order would move the whole map's run to refunds.
    let first = call(
        &replicas[0].addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &ANN,
    );
    let run = handle_of(&first);
    assert!(!first.to_string().contains("refunds"), "{first}");
    // The other replica rebuilds the run from the store, with its roles.
    let refused = call(
        &replicas[1].addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": run}),
        &ANN,
    );
    assert_eq!(refused["isError"], true, "{refused}");
    let said = texts(&refused).join(" ");
    assert!(
        said.contains("issue_refund is not offered from here"),
        "{said}"
    );
    assert!(!said.contains("refunds"), "{said}");
    assert_eq!(
        upstream.calls.load(Ordering::Relaxed),
        1,
        "the withheld tool never reached the upstream"
    );
    let record = exported(&redis, &run);
    assert!(record.contains(r#""roles":["support"]"#), "{record}");
    replays_to_itself(&record).unwrap_or_else(|diff| panic!("{diff}\n{record}"));
}

#[test]
fn runs_a_store_started_again_without_them_are_answered_as_unknown_and_never_appended_again() {
    // A store with no append-only file: a restart loses every run.
    let mut redis = Redis::start("lost", &["--appendonly", "no"]);
    let upstream = upstream::desk(upstream::desk_data());
    let map = desk_map("replicas-lost", &upstream);
    let replicas = replicas(2, &map, &redis, |_| {});
    let first = handle_of(&call(
        &replicas[0].addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[],
    ));
    let second = handle_of(&call(
        &replicas[1].addr,
        "lookup_order",
        json!({"order_id": 4412}),
        &[],
    ));
    redis.kill();
    redis.restart();
    for replica in &replicas {
        // The first request after the restart finds the old connection
        // gone (answered unreachable: a client re-issues); the next ones
        // go on the new one.
        let _ = sessionless(
            &replica.addr,
            "tools/call",
            Some("lookup_order"),
            json!({"name": "lookup_order", "arguments": {"order_id": 1, "skillgraph_run": "run_00000000000000000000000000000000"}}),
            &[],
        );
        assert!(ready_within(&replica.addr, 200, Duration::from_secs(5)).is_some());
    }
    let unknown = call(
        &replicas[0].addr,
        "issue_refund",
        json!({"order_id": 4412, "skillgraph_run": "run_00000000000000000000000000000000"}),
        &[],
    );
    // Each replica held one of the runs: held, lost, and answered as any
    // unknown run, whether its heartbeat noticed the restart yet or not.
    for (replica, run) in [(0, &first), (1, &second), (0, &second), (1, &first)] {
        let answer = call(
            &replicas[replica].addr,
            "issue_refund",
            json!({"order_id": 4412, "skillgraph_run": run}),
            &[],
        );
        assert_eq!(answer, unknown, "replica {replica}, run {run}");
    }
    // After the heartbeat's round (every 3 s), the same.
    std::thread::sleep(Duration::from_millis(3500));
    let answer = call(
        &replicas[0].addr,
        "lookup_order",
        json!({"order_id": 4412, "skillgraph_run": first}),
        &[],
    );
    assert_eq!(answer, unknown);
    for run in [&first, &second] {
        assert_eq!(
            redis
                .command(&["EXISTS", &format!("sg:{{{run}}}:m")])
                .as_deref(),
            Some(":0"),
            "nothing of {run} was appended again"
        );
    }
    assert_eq!(upstream.calls.load(Ordering::Relaxed), 2);
}
