//! The front door (SPEC §9.8), attacked as a client that means harm would,
//! on loopback: one test per way a probe of `serve --http` once broke it
//! (issue 29). Where a figure of the process is measured (its descriptors,
//! its peak memory, its CPU time, what it says on standard error), `serve`
//! runs as a child process of this test binary ([`Child`]), started under
//! a lowered `ulimit -n` where the test says; elsewhere it runs in this
//! process ([`HttpServed`]). While an attack runs, a legitimate client
//! with a valid token must still be answered within a second.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skillgraph_mcp::{HttpConfig, ServeConfig};

use common::{
    HttpServed, desk, one_upstream, scratch, serve_until_stdin_closes, serving_at, upstream,
};

/// The tests that measure a process, or time a client, run one at a time:
/// two cores are not shared with another attack.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `printf %s secret | sha256sum`: ann's token.
const ANN: &str = "ann 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b";

/// bob's token, `other`.
fn bob() -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(b"other");
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("bob {hex}")
}

/// A tokens file naming ann (`secret`) and bob (`other`).
fn tokens(name: &str) -> PathBuf {
    let path = scratch(name).join("tokens");
    std::fs::write(&path, format!("{ANN}\n{}\n", bob())).expect("tokens are written");
    path
}

/// What the child serves: the desk, in front of an upstream of its own,
/// set up by the settings its parent passes in `FRONT_DOOR`.
#[test]
#[ignore = "the serve process the other tests start and attack"]
fn front_door_child() {
    let Ok(settings) = std::env::var("FRONT_DOOR") else {
        return;
    };
    let settings: Value = serde_json::from_str(&settings).expect("settings are JSON");
    let name = settings["name"].as_str().unwrap_or("child");
    let config = ServeConfig::new(desk(name, one_upstream(), |_| {}));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let mut http = HttpConfig::new(listener.local_addr().expect("an address"));
    if let Some(tokens) = settings["tokens"].as_str() {
        http.auth_tokens = Some(PathBuf::from(tokens));
    }
    if let Some(seconds) = settings["body_timeout"].as_f64() {
        http.body_timeout = Duration::from_secs_f64(seconds);
    }
    if let Some(rate) = settings["new_runs_per_minute"].as_u64() {
        http.new_runs_per_minute = u32::try_from(rate).unwrap_or(u32::MAX);
    }
    if let Some(quota) = settings["max_runs_per_principal"].as_u64() {
        http.max_runs_per_principal = Some(usize::try_from(quota).unwrap_or(usize::MAX));
    }
    serve_until_stdin_closes(&config, &http, listener);
}

/// `serve --http` as a child process of this test binary.
struct Child {
    process: std::process::Child,
    addr: String,
    stderr: PathBuf,
}

impl Child {
    /// Start the child with `settings`, under `ulimit -n fds` when given.
    fn start(name: &str, fds: Option<u32>, mut settings: Value) -> Child {
        settings["name"] = json!(name);
        let stderr = scratch(name).join("stderr");
        let exe = std::env::current_exe().expect("this test binary");
        let limit = fds.map_or(String::new(), |fds| format!("ulimit -n {fds} && "));
        let mut process = Command::new("sh")
            .arg("-c")
            .arg(format!("{limit}exec \"$0\" \"$@\""))
            .arg(exe)
            .args([
                "--exact",
                "front_door_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("FRONT_DOOR", settings.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("a stderr file"))
            .spawn()
            .expect("the child starts");
        let addr = serving_at(&mut process);
        // The upstream servers are fitted before connections are taken.
        let child = Child {
            process,
            addr,
            stderr,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while status_of(&list(&child.addr, Some("secret"))) != 200 {
            assert!(Instant::now() < deadline, "the child answers");
            std::thread::sleep(Duration::from_millis(50));
        }
        child
    }

    /// A line of `/proc/PID/status`, in KiB.
    fn status_kib(&self, key: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.process.id()))
            .expect("the child's status");
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{key} in the child's status"))
    }

    /// Its resident memory now, in KiB.
    fn resident_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// Its peak resident memory, in MiB.
    fn peak_mib(&self) -> u64 {
        self.status_kib("VmHWM:") / 1024
    }

    /// Its CPU time so far, in clock ticks (user and system).
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.process.id()))
            .expect("the child's stat");
        let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after_name.split_whitespace().collect();
        // Fields 14 and 15 of the line: the state is field 3.
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
        field(14).unwrap_or(0) + field(15).unwrap_or(0)
    }

    /// The files it holds open.
    fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.process.id()))
            .map(|entries| entries.count())
            .unwrap_or(0)
    }

    /// What it has said on standard error.
    fn said(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// A sessionless `tools/list` request, with `token` when given: it starts
/// no run, so it measures the door alone.
fn list(addr: &str, token: Option<&str>) -> Result<(u16, String), String> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    })
    .to_string();
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28".to_owned()),
        ("Mcp-Method", "tools/list".to_owned()),
    ];
    if let Some(token) = token {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    exchange(
        addr,
        "POST",
        &headers,
        body.as_bytes(),
        Duration::from_secs(5),
    )
}

fn status_of(answer: &Result<(u16, String), String>) -> u16 {
    answer.as_ref().map_or(0, |(status, _)| *status)
}

/// One request on a connection of its own: the status and the whole
/// answer, or why there is none within `time`.
fn exchange(
    addr: &str,
    method: &str,
    headers: &[(&str, String)],
    body: &[u8],
    time: Duration,
) -> Result<(u16, String), String> {
    let socket: std::net::SocketAddr = addr.parse().map_err(|_| "an address".to_owned())?;
    let mut stream =
        TcpStream::connect_timeout(&socket, time).map_err(|err| format!("connect: {err}"))?;
    stream
        .set_read_timeout(Some(time))
        .map_err(|err| err.to_string())?;
    let mut request = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|err| format!("send: {err}"))?;
    let _ = stream.write_all(body);
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .map_err(|err| format!("read: {err}"))?;
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("no status in {raw:?}"))?;
    Ok((status, raw))
}

/// ann, with her valid token, is answered within a second.
fn answered_within_a_second(addr: &str) {
    let asked = Instant::now();
    let answer = list(addr, Some("secret"));
    let took = asked.elapsed();
    assert_eq!(status_of(&answer), 200, "{answer:?} after {took:?}");
    assert!(took < Duration::from_secs(1), "answered after {took:?}");
}

/// Open `count` connections to `addr` that each send `first` and then
/// nothing more.
fn stalled(addr: &str, count: usize, first: &[u8]) -> Vec<TcpStream> {
    (0..count)
        .filter_map(|_| {
            let mut stream = TcpStream::connect(addr).ok()?;
            stream.write_all(first).ok()?;
            Some(stream)
        })
        .collect()
}

const PART_OF_A_HEAD: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n";

/// Point 1: 260 unfinished heads under `ulimit -n 256` locked every client
/// out, valid tokens included. The cap stays within the descriptors, and
/// a new connection takes the place of the one stalled longest.
#[test]
fn unfinished_heads_cannot_lock_out_a_client_with_a_valid_token() {
    let _one = one_at_a_time();
    let child = Child::start(
        "heads",
        Some(256),
        json!({"tokens": tokens("heads-tokens")}),
    );
    let mut held = stalled(&child.addr, 300, PART_OF_A_HEAD);
    for round in 0..5 {
        // Renewed, as the probe renewed them.
        held.extend(stalled(&child.addr, 40, PART_OF_A_HEAD));
        answered_within_a_second(&child.addr);
        assert!(
            child.open_files() < 256,
            "round {round}: {} files open",
            child.open_files()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(held.len() >= 300, "the attack's connections were accepted");
    let said = child.said();
    assert!(
        said.contains("the connection cap (--max-connections) was reached"),
        "{said}"
    );
}

/// Point 2: at the descriptor limit the accept loop spun on a full core
/// and wrote 17–19 MB/s of "Too many open files". Now the cap is met
/// first, nothing spins, and each limit is said at most once a second.
#[test]
fn a_flood_of_connections_neither_spins_nor_floods_standard_error() {
    let _one = one_at_a_time();
    let child = Child::start("spin", Some(256), json!({}));
    let start_ticks = child.cpu_ticks();
    let started = Instant::now();
    let mut held = Vec::new();
    while started.elapsed() < Duration::from_secs(3) {
        held.extend(stalled(&child.addr, 50, PART_OF_A_HEAD));
        if held.len() > 2000 {
            held.drain(..1000);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let ticks = child.cpu_ticks() - start_ticks;
    let said = child.said();
    assert!(
        ticks < 150,
        "{ticks} ticks of CPU in 3 s: the accept loop spins"
    );
    let lines = said
        .lines()
        .filter(|line| line.contains("connection cap"))
        .count();
    assert!(
        (1..=5).contains(&lines),
        "the cap said {lines} times in 3 s:\n{said}"
    );
    assert!(said.len() < 8192, "{} bytes said", said.len());
}

/// Point 3: a head and part of a body held a connection for ever (100 of
/// them took serve to 467 MiB). Now the body must come within
/// `--body-timeout`, else 408 and the connection closed.
#[test]
fn a_body_not_sent_in_time_is_answered_408_and_closed() {
    let _one = one_at_a_time();
    let child = Child::start(
        "bodies",
        None,
        json!({"tokens": tokens("bodies-tokens"), "body_timeout": 1.0}),
    );
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer secret\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        4_000_000
    )
    .into_bytes();
    head.extend(std::iter::repeat_n(b' ', 100_000));
    let sent = Instant::now();
    let mut held = stalled(&child.addr, 100, &head);
    assert_eq!(held.len(), 100);
    answered_within_a_second(&child.addr);
    for stream in &mut held {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a timeout");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    }
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "closed after {:?}",
        sent.elapsed()
    );
    assert!(
        child
            .said()
            .contains("the body time limit (--body-timeout)")
    );
}

/// A body of `keys` small keys in a `read_skill` call's arguments, about
/// 9 bytes a key: a call serve reads itself (an upstream in this process
/// would count its own parse in the figure).
fn many_keys(keys: usize) -> Vec<u8> {
    let mut body = String::from(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"read_skill","arguments":{"#,
    );
    for key in 0..keys {
        if key > 0 {
            body.push(',');
        }
        body.push('"');
        body.push_str(&base36(key));
        body.push_str("\":0");
    }
    body.push_str("}}}");
    body.into_bytes()
}

/// `n` in base 36, the shortest of small keys.
fn base36(mut n: usize) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// Point 4: one 3.9 MB body of 400,000 keys peaked at 218–256 MiB, and
/// 16 at once at 799 MiB. Now bodies are parsed a bounded number and size
/// at a time, and a large call's arguments are parsed once, by serve, not
/// buffered by rmcp first: 16 at once keep serve under 256 MiB.
#[test]
fn sixteen_bodies_of_400_000_keys_keep_serve_under_256_mib() {
    let _one = one_at_a_time();
    let child = Child::start("keys", None, json!({"tokens": tokens("keys-tokens")}));
    let body = std::sync::Arc::new(many_keys(400_000));
    assert!(body.len() < 4 * 1024 * 1024, "{} bytes", body.len());
    let senders: Vec<_> = (0..16)
        .map(|_| {
            let (addr, body) = (child.addr.clone(), std::sync::Arc::clone(&body));
            std::thread::spawn(move || {
                let headers = [
                    ("Authorization", "Bearer secret".to_owned()),
                    ("MCP-Protocol-Version", "2026-07-28".to_owned()),
                    ("Mcp-Method", "tools/call".to_owned()),
                    ("Mcp-Name", "read_skill".to_owned()),
                ];
                exchange(&addr, "POST", &headers, &body, Duration::from_secs(120))
            })
        })
        .collect();
    for sender in senders {
        let answer = sender.join().expect("a sender");
        assert_eq!(
            status_of(&answer),
            200,
            "every body is answered: {answer:?}"
        );
    }
    let peak = child.peak_mib();
    assert!(peak < 256, "serve peaked at {peak} MiB");
    eprintln!("peak under 16 bodies of 400,000 keys: {peak} MiB");
}

/// A request written whole on a connection of its own: the status and the
/// whole answer.
fn raw(addr: &str, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).expect("serve accepts");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a timeout");
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("a status line, not {answer:?}"));
    (status, answer)
}

/// A POST of `body` to `/mcp` with `headers`, closing the connection after.
fn post(headers: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// The JSON-RPC message of an answer sent as JSON or as one SSE event.
fn message(answer: &str) -> Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    let text = body
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(body.trim());
    serde_json::from_str(text).unwrap_or_else(|_| panic!("a JSON-RPC message in {answer:?}"))
}

/// The headers of a sessionless `tools/call` of `tool`.
fn sessionless_call_headers(tool: &str) -> String {
    format!("MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n")
}

/// A sessionless `tools/call` body of `tool` with `arguments`.
fn sessionless_call(tool: &str, arguments: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        },
        "name": tool, "arguments": arguments
    }})
    .to_string()
    .into_bytes()
}

/// Point 5: with `--record`, each call without a run handle started a run
/// and wrote a file holding the whole map, unauthenticated, up to
/// 53.6 MB/s. Now a principal starts runs at most at its rate: past it,
/// 429 with `Retry-After`, and nothing is written.
#[test]
fn a_flood_of_new_runs_is_answered_429_and_writes_nothing() {
    let records = scratch("new-runs-records");
    let mut config = ServeConfig::new(desk("new-runs", one_upstream(), |_| {}));
    config.record = Some(records.clone());
    let served = HttpServed::start(config, |http| http.new_runs_per_minute = 60);
    let (mut started, mut refused) = (0, 0);
    for _ in 0..40 {
        let (status, answer) = raw(
            &served.addr,
            &post(
                &sessionless_call_headers("list_skills"),
                &sessionless_call("list_skills", json!({})),
            ),
        );
        match status {
            200 => started += 1,
            429 => {
                refused += 1;
                assert!(
                    answer.to_ascii_lowercase().contains("\r\nretry-after: "),
                    "{answer}"
                );
            }
            other => panic!("{other}: {answer}"),
        }
    }
    let files = std::fs::read_dir(&records).expect("the records").count();
    assert!((10..=12).contains(&started), "{started} runs started");
    assert_eq!(started + refused, 40);
    assert_eq!(files, started, "a file per run started, none per refusal");
}

/// A handshake session opened at `addr` by the bearer of `token`: its id,
/// or the status that refused it.
fn open_session(addr: &str, token: &str) -> Result<String, u16> {
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}
    }});
    let (status, answer) = raw(
        addr,
        &post(
            &format!("Authorization: Bearer {token}\r\n"),
            initialize.to_string().as_bytes(),
        ),
    );
    if status != 200 {
        return Err(status);
    }
    let session = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = raw(
        addr,
        &post(
            &format!(
                "Authorization: Bearer {token}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
            ),
            initialized.to_string().as_bytes(),
        ),
    );
    assert_eq!(status, 202);
    Ok(session)
}

/// A GET stream of `session` held open.
fn hold_stream(addr: &str, token: &str, session: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).expect("serve accepts");
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\nAccept: text/event-stream\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .expect("the request is sent");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).expect("the stream's head");
    assert_eq!(&head, b"HTTP/1.1 200");
    stream
}

/// Point 6: `--max-runs` was one pool for every principal: 50 held GET
/// streams under `--max-runs 50` made every other `initialize` fail with
/// 503. Now each principal holds at most its quota (a tenth of
/// `--max-runs`, at least 10), and another principal can always start.
#[test]
fn one_principal_s_held_streams_do_not_keep_another_out() {
    let served = HttpServed::start(
        ServeConfig::new(desk("shares", one_upstream(), |_| {})),
        |http| {
            http.auth_tokens = Some(tokens("shares-tokens"));
            http.max_runs = 50;
        },
    );
    let addr = served.addr.as_str();
    let mut streams = Vec::new();
    let mut refused = Vec::new();
    for _ in 0..50 {
        match open_session(addr, "secret") {
            Ok(session) => streams.push(hold_stream(addr, "secret", &session)),
            Err(status) => refused.push(status),
        }
    }
    assert_eq!(streams.len(), 10, "ann holds her quota");
    assert!(refused.iter().all(|status| *status == 503), "{refused:?}");
    assert!(
        open_session(addr, "other").is_ok(),
        "bob starts a run while ann's streams are held"
    );
}

/// Point 7: "An idle handshake session costs about 66 KiB (the goal is
/// 16 KiB), so 10,000 of them hold about 650 MB for 24 h." rmcp's session
/// (a worker task, the task that serves it, seven channels) was most of
/// it. Now a session that has only shaken hands sleeps: rmcp's session is
/// closed, and the front keeps its run and its client's `initialize`
/// until its next request wakes it (2.4 KiB a session, in a debug build
/// as in a release one).
#[test]
fn an_idle_handshake_session_costs_at_most_16_kib() {
    let _alone = one_at_a_time();
    let child = Child::start(
        "idle-sessions",
        None,
        json!({
            "tokens": tokens("idle-sessions-tokens"),
            "new_runs_per_minute": 1_000_000,
            "max_runs_per_principal": 10_000,
        }),
    );
    let addr = child.addr.as_str();
    let open = |count: usize| -> Vec<String> {
        (0..count)
            .map(|_| open_session(addr, "secret").expect("a session opens"))
            .collect()
    };
    // What the first sessions make once (the runtime's pools, the table's
    // first rooms) is not what each one costs.
    open(50);
    let before = child.resident_kib();
    let sessions = open(1_000);
    let after = child.resident_kib();
    let per_session = after.saturating_sub(before) as f64 / sessions.len() as f64;
    assert!(
        per_session <= 16.0,
        "{per_session:.1} KiB a session ({before} KiB before, {after} KiB after)"
    );
    // Each is still held, and answers with the run its handshake started.
    for session in [&sessions[0], &sessions[999]] {
        let headers = format!(
            "Authorization: Bearer secret\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
        );
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        let (status, answer) = raw(addr, &post(&headers, list.to_string().as_bytes()));
        assert_eq!(status, 200, "{answer}");
        assert!(
            message(&answer)["result"]["tools"][0]["name"] == "read_skill",
            "{answer}"
        );
    }
}

/// Point 8: a run whose call lasted longer than `--run-ttl` was dropped as
/// soon as it answered. Now a run is never expired while a call of it
/// runs, and its time to live counts from the answer.
#[test]
fn a_run_whose_call_outlasts_its_time_to_live_is_kept() {
    let mut data = upstream::desk_data();
    data["lookup_order"]["delay_ms"] = json!(1500);
    let servers = json!({"desk": {"url": upstream::desk(data).url}});
    let served = HttpServed::start(ServeConfig::new(desk("busy", servers, |_| {})), |http| {
        http.run_ttl = Duration::from_secs(1);
    });
    let call = |tool: &str, arguments: Value| {
        let (status, answer) = raw(
            &served.addr,
            &post(
                &sessionless_call_headers(tool),
                &sessionless_call(tool, arguments),
            ),
        );
        assert_eq!(status, 200, "{answer}");
        message(&answer)["result"].clone()
    };
    let started = call("read_skill", json!({"id": "triage"}));
    let handle = started["_meta"]["skillgraph/run"]
        .as_str()
        .expect("the run's handle")
        .to_owned();
    let slow = call(
        "lookup_order",
        json!({"order_id": 4412, "skillgraph_run": handle}),
    );
    assert_ne!(slow["isError"], true, "{slow}");
    let after = call("list_skills", json!({"skillgraph_run": handle}));
    assert_ne!(after["isError"], true, "the run is still held: {after}");
}

/// Point 9: two `Host` headers were accepted, an absolute-form target's
/// host ignored, a body that is not JSON answered 415 in plain text, and a
/// 3 MB id echoed whole.
#[test]
fn lenient_http_is_refused() {
    let served = HttpServed::start(
        ServeConfig::new(desk("strict", one_upstream(), |_| {})),
        |_| {},
    );
    let addr = served.addr.as_str();
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;

    let two_hosts = post("Host: evil.example\r\n", ping);
    let (status, answer) = raw(addr, &two_hosts);
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("two Host headers"), "{answer}");

    let mut absolute = post("", ping);
    absolute.splice(..9, b"POST http://evil.example/mcp".iter().copied());
    let (status, answer) = raw(addr, &absolute);
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("--allowed-host"), "{answer}");

    let (status, answer) = raw(addr, &post("", b"{\"jsonrpc\": \"2.0\", oops"));
    assert_eq!(status, 400, "{answer}");
    let refused = message(&answer);
    assert_eq!(refused["error"]["code"], -32700, "{refused}");
    assert_eq!(refused["id"], Value::Null);

    let long = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
        "7".repeat(3_000_000)
    );
    let (status, answer) = raw(addr, &post("", long.as_bytes()));
    assert_eq!(status, 400);
    assert!(answer.len() < 2048, "{} bytes answered", answer.len());
    let refused = message(&answer);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(refused["id"], Value::Null);
}
