//! The server driven in one process (SPEC §9.10): JSON-RPC lines in over an
//! in-memory pipe, answers and the record out, with no process started.
//! The map has no upstream servers, so every step here is the core's.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use skillgraph::skill_explain::explain;
use skillgraph::skill_session::{Event, Refusal, read_record};
use skillgraph_mcp::{ServeConfig, serve_streams};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};
use tokio::io::{WriteHalf, split};

/// A fresh folder for one test.
fn folder(name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "skillgraph-mcp-core-{}-{name}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// A map of two skills and no upstream servers, in a folder of its own.
fn map(name: &str) -> PathBuf {
    let dir = folder(name);
    for (id, description) in [
        ("triage", "Sort an incoming request. Use first."),
        ("faq", "Answer general questions. Use for opening hours."),
    ] {
        let skill = dir.join("skills").join(id);
        std::fs::create_dir_all(&skill).expect("a skill folder");
        std::fs::write(
            skill.join("SKILL.md"),
            format!("---\nname: {id}\ndescription: {description}\n---\nDo the {id} work.\n"),
        )
        .expect("the skill is written");
    }
    std::fs::write(dir.join("skillmap.json"), r#"{"entries": ["triage"]}"#)
        .expect("the map is written");
    dir
}

/// A client of a server running in this process.
struct Client {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next: u64,
}

impl Client {
    /// Serve `config` on a pipe and connect to it.
    fn start(config: ServeConfig) -> Self {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (read, write) = split(server);
        tokio::spawn(async move { serve_streams(&config, read, write).await });
        let (read, write) = split(client);
        Client {
            write,
            lines: BufReader::new(read).lines(),
            next: 0,
        }
    }

    async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write
            .write_all(line.as_bytes())
            .await
            .expect("the server reads");
    }

    /// The answer to the request `method` with `params`.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.answer(json!(id)).await
    }

    /// The next line that answers `id`, past any notification.
    async fn answer(&mut self, id: Value) -> Value {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("answered within 10 s")
                .expect("the server writes")
                .expect("the server has not closed");
            let message: Value = serde_json::from_str(&line).expect("every line is JSON");
            if message.get("id") == Some(&id) {
                return message;
            }
        }
    }

    /// `initialize` and `notifications/initialized`.
    async fn shake_hands(&mut self) {
        let answer = self
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "core-test", "version": "1"}}),
            )
            .await;
        assert!(answer.get("result").is_some(), "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    async fn record(&mut self) -> String {
        let answer = self
            .request("resources/read", json!({"uri": "skillgraph://record"}))
            .await;
        answer["result"]["contents"][0]["text"]
            .as_str()
            .expect("the record's text")
            .to_owned()
    }
}

#[tokio::test]
async fn a_malformed_read_is_answered_as_a_tool_error_and_recorded_as_a_refused_read() {
    let mut client = Client::start(ServeConfig::new(map("malformed")));
    client.shake_hands().await;
    for (arguments, says) in [
        (json!({"id": 5}), "needs a string argument `id`"),
        (json!({}), "needs a string argument `id`"),
        (
            json!({"id": "faq", "extra": 1}),
            "takes no argument `extra`",
        ),
        (json!({"id": "nowhere"}), "nowhere"),
    ] {
        let answer = client.call("read_skill", arguments).await;
        assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains(says), "{text}");
    }
    let record = read_record(&client.record().await).expect("the record reads");
    let refusals: Vec<_> = record
        .events
        .iter()
        .filter_map(|event| match event {
            Event::Read(read) => Some((read.refusal, read.id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        refusals,
        [
            (Some(Refusal::Malformed), "5".to_owned()),
            (Some(Refusal::Malformed), String::new()),
            (Some(Refusal::Malformed), "\"faq\"".to_owned()),
            (Some(Refusal::Unknown), "nowhere".to_owned()),
        ]
    );
    let replayed = skillgraph::skill_session::replay(
        &std::sync::Arc::new(
            skillgraph::skill_session::Graph::new(match &record.events[0] {
                Event::Start(start) => start.map.to_map(),
                _ => unreachable!("read_record checks the first event"),
            })
            .expect("the recorded map is valid"),
        ),
        &record.events,
    )
    .expect("it replays");
    assert_eq!(replayed, record.events);
}

#[tokio::test]
async fn a_run_that_only_shook_hands_has_a_record_that_explains() {
    let dir = folder("idle");
    let record = dir.join("record.jsonl");
    let mut config = ServeConfig::new(map("idle-map"));
    config.record = Some(record.clone());
    let mut client = Client::start(config);
    client.shake_hands().await;
    let pong = client.request("ping", json!({})).await;
    assert!(pong.get("result").is_some(), "{pong}");
    let text = std::fs::read_to_string(&record).expect("the record file");
    let read = read_record(&text).expect("the record reads");
    assert_eq!(read.events[0].kind(), "start", "{text}");
    let explained = explain(&read, None).expect("it explains");
    assert_eq!(explained.cursor.as_deref(), Some("triage"));
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params_and_never_echoed_at_length() {
    let mut client = Client::start(ServeConfig::new(map("unknown")));
    client.shake_hands().await;
    let answer = client.call(&"t".repeat(1_000_000), json!({})).await;
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer:.300}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.len() < 400, "{message:.400}");
    assert!(message.contains("of 1000000 bytes"), "{message:.400}");
}

#[tokio::test]
async fn a_huge_read_argument_is_refused_without_echoing_it() {
    let mut client = Client::start(ServeConfig::new(map("huge")));
    client.shake_hands().await;
    let huge = "k".repeat(1_000_000);
    for arguments in [json!({ huge.clone(): 1 }), json!({ "id": huge.clone() })] {
        let answer = client.call("read_skill", arguments).await;
        let text = answer.to_string();
        assert!(text.len() < 2_000, "{} bytes: {text:.300}", text.len());
        assert_eq!(answer["result"]["isError"], json!(true), "{text:.300}");
    }
    let record = client.record().await;
    assert!(record.len() < 20_000, "{} bytes", record.len());
}
