//! The server driven in one process (SPEC §9.10): JSON-RPC lines in over an
//! in-memory pipe, answers and the record out, with no process started.
//! The map has no upstream servers, so every step here is the core's.

mod common;

use std::path::PathBuf;

use serde_json::json;
use skillgraph::skill_explain::explain;
use skillgraph::skill_session::{Event, Refusal, read_record};
use skillgraph_mcp::ServeConfig;

use common::{Served, scratch};

/// A map of two skills and no upstream servers, in a folder of its own.
fn map(name: &str) -> PathBuf {
    let dir = scratch(name);
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

#[tokio::test]
async fn a_malformed_read_is_answered_as_a_tool_error_and_recorded_as_a_refused_read() {
    let mut client = Served::start(ServeConfig::new(map("malformed")));
    client.initialize().await;
    for (id, (arguments, says)) in (1..).zip([
        (json!({"id": 5}), "needs a string argument `id`"),
        (json!({}), "needs a string argument `id`"),
        (
            json!({"id": "faq", "extra": 1}),
            "takes no argument `extra`",
        ),
        (json!({"id": "nowhere"}), "nowhere"),
    ]) {
        let answer = client.call(id, "read_skill", arguments).await;
        assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.contains(says), "{text}");
    }
    let record = read_record(&client.record(5).await).expect("the record reads");
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
    let dir = scratch("idle");
    let record = dir.join("record.jsonl");
    let mut config = ServeConfig::new(map("idle-map"));
    config.record = Some(record.clone());
    let mut client = Served::start(config);
    client.initialize().await;
    let pong = client.request(1, "ping", json!({})).await;
    assert!(pong.get("result").is_some(), "{pong}");
    let text = std::fs::read_to_string(&record).expect("the record file");
    let read = read_record(&text).expect("the record reads");
    assert_eq!(read.events[0].kind(), "start", "{text}");
    let explained = explain(&read, None).expect("it explains");
    assert_eq!(explained.cursor.as_deref(), Some("triage"));
}

#[tokio::test]
async fn an_unknown_tool_is_invalid_params_and_never_echoed_at_length() {
    let mut client = Served::start(ServeConfig::new(map("unknown")));
    client.initialize().await;
    let answer = client.call(1, &"t".repeat(1_000_000), json!({})).await;
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer:.300}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.len() < 400, "{message:.400}");
    assert!(message.contains("of 1000000 bytes"), "{message:.400}");
}

#[tokio::test]
async fn a_huge_read_argument_is_refused_without_echoing_it() {
    let mut client = Served::start(ServeConfig::new(map("huge")));
    client.initialize().await;
    let huge = "k".repeat(1_000_000);
    for (id, arguments) in [
        (1, json!({ huge.clone(): 1 })),
        (2, json!({ "id": huge.clone() })),
    ] {
        let answer = client.call(id, "read_skill", arguments).await;
        let text = answer.to_string();
        assert!(text.len() < 2_000, "{} bytes: {text:.300}", text.len());
        assert_eq!(answer["result"]["isError"], json!(true), "{text:.300}");
    }
    let record = client.record(3).await;
    assert!(record.len() < 20_000, "{} bytes", record.len());
}
