//! Reads and calls on the handshake generation (SPEC §9.2, §9.3): the
//! support desk served in this process as over standard input and output,
//! spoken to by rmcp's own client (or in raw lines where what is not sent
//! matters), in front of the desk's upstream, in this process too.

mod common;

use std::time::Duration;

use serde_json::{Value, json};
use skillgraph_mcp::ServeConfig;

use common::{
    Served, Watcher, call, connect, desk, moves, one_upstream, resource_text, texts, tool_names,
};

/// How long a test waits for a notification before it fails.
const PATIENCE: Duration = Duration::from_secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_risky_order_moves_the_cursor_to_refunds_and_brings_its_tools_and_body() {
    let dir = desk("scenario", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let mut config = ServeConfig::new(&dir);
    config.record = Some(record.clone());
    let watcher = Watcher::default();
    let client = connect(config, watcher.clone()).await;

    let info = client.peer_info().expect("the server introduced itself");
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(
        instructions.starts_with("<skill_content name=\"triage\">"),
        "{instructions}"
    );
    assert!(
        instructions.contains("Find out what the customer needs"),
        "{instructions}"
    );

    assert_eq!(
        tool_names(&client).await,
        [
            "list_skills",
            "lookup_invoice",
            "lookup_order",
            "read_skill",
            "track_parcel"
        ]
    );

    let answer = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("the call is answered");
    let blocks = texts(&answer);
    assert_eq!(blocks.len(), 2, "{blocks:#?}");
    let canned: Value =
        serde_json::from_str(&blocks[0]).expect("the upstream's answer, as it came");
    assert_eq!(
        (canned["riskLevel"].as_str(), canned["amount"].as_i64()),
        (Some("high"), Some(240))
    );
    assert!(
        blocks[1].starts_with("<skill_content name=\"refunds\">"),
        "{}",
        blocks[1]
    );
    tokio::time::timeout(PATIENCE, watcher.changed.notified())
        .await
        .expect("tools/list_changed arrives after the move");

    let tools = tool_names(&client).await;
    assert!(tools.contains(&"issue_refund".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"lookup_order".to_owned()), "{tools:?}");

    let text = resource_text(&client, "skillgraph://record")
        .await
        .expect("the record resource reads");
    let written = std::fs::read_to_string(&record).expect("the record file is written");
    assert_eq!(text, written, "the resource and the file hold one record");
    let moves = moves(&text);
    assert_eq!(moves.len(), 1, "{moves:#?}");
    assert_eq!(
        (&moves[0]["from"], &moves[0]["to"], &moves[0]["by"]),
        (&json!("triage"), &json!("refunds"), &json!("route"))
    );
    let conditions = &moves[0]["guard"]["conditions"];
    assert_eq!(conditions[0]["key"], "riskLevel");
    assert_eq!(conditions[0]["actual_summary"], "high");
    assert_eq!(conditions[1]["key"], "amount");
    assert_eq!(conditions[1]["passed"], true);
    client.close().await;
}

/// The answer to request `id` in raw lines, with the methods of the
/// notifications written before it.
async fn answer_after(served: &mut Served, id: i64) -> (Value, Vec<String>) {
    let mut notified = Vec::new();
    loop {
        let message = served.next().await;
        if message["id"] == json!(id) {
            return (message, notified);
        }
        let method = message["method"].as_str().unwrap_or_default();
        assert!(message.get("id").is_none(), "an unasked answer: {message}");
        notified.push(method.to_owned());
    }
}

/// serve sends `tools/list_changed` before the answer of the step that
/// changed the list (the ordered pipe keeps it there): so a stay is seen to
/// say nothing more without waiting on a clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_low_risk_order_stays_in_triage_and_says_nothing_more() {
    let dir = desk("low-risk", one_upstream(), |_| {});
    let mut served = Served::start(ServeConfig::new(&dir));
    served.initialize().await;
    served
        .send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "lookup_order", "arguments": {"order_id": 4413}}}))
        .await;
    let (answer, before) = answer_after(&mut served, 1).await;
    let blocks = answer["result"]["content"].as_array().map(Vec::len);
    assert_eq!(blocks, Some(1), "no body is added on a stay: {answer}");
    served
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let (listed, after) = answer_after(&mut served, 2).await;
    let notified = [before, after].concat();
    assert!(
        !notified
            .iter()
            .any(|method| method.contains("list_changed")),
        "no tools/list_changed when nothing changed: {notified:?}"
    );
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(names.contains(&"lookup_order"), "{names:?}");
    served.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accepted_read_answers_with_the_body_and_changes_the_tools() {
    let dir = desk("read", one_upstream(), |_| {});
    let watcher = Watcher::default();
    let client = connect(ServeConfig::new(&dir), watcher.clone()).await;
    let answer = call(&client, "read_skill", json!({"id": "shipping"}))
        .await
        .expect("answered");
    assert_ne!(answer.is_error, Some(true));
    let text = texts(&answer).join("");
    // shipping's mode is system-prompt; over MCP the read still brings the body.
    assert!(
        text.starts_with("<skill_content name=\"shipping\">"),
        "{text}"
    );
    tokio::time::timeout(PATIENCE, watcher.changed.notified())
        .await
        .expect("tools/list_changed");
    let refused = call(&client, "read_skill", json!({"id": "no-such-skill"}))
        .await
        .expect("answered");
    assert_eq!(refused.is_error, Some(true));
    let bad = call(&client, "read_skill", json!({"id": 7, "extra": true}))
        .await
        .expect("answered");
    assert_eq!(bad.is_error, Some(true), "{bad:?}");
    assert!(
        texts(&bad)[0].contains("read_skill takes no argument `extra`"),
        "{bad:?}"
    );
    client.close().await;
}

/// A skill whose `SKILL.md` allows `mcp__desk__lookup_*` carries, under
/// `serve`, the desk's tools the pattern matches (in Claude Code's
/// `mcp__SERVER__TOOL` spelling), and a host tool no upstream has (`Read`)
/// is said on standard error instead of stopping start-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_tools_patterns_carry_the_upstream_tools_they_match() {
    let dir = desk("patterns", one_upstream(), |map| {
        map["skills"]["triage"]
            .as_object_mut()
            .expect("triage's settings")
            .remove("tools");
    });
    let skill = dir.join("skills/triage/SKILL.md");
    let text = std::fs::read_to_string(&skill).expect("triage's file");
    let text = text.replacen(
        "\n---\n",
        "\nallowed-tools: mcp__desk__lookup_* Read\n---\n",
        1,
    );
    std::fs::write(&skill, text).expect("triage's file is written");
    // What `skillgraph check --format json` prints.
    let checkup = skillgraph::load(&dir).expect("the map loads").checkup();
    let checkup = serde_json::to_string(&checkup).expect("the check-up is JSON");
    assert!(
        !checkup.contains("unusable-tool-name"),
        "a pattern is not a tool name: {checkup}"
    );
    let client = connect(ServeConfig::new(&dir), Watcher::default()).await;
    let names = tool_names(&client).await;
    assert_eq!(
        names,
        [
            "list_skills",
            "lookup_invoice",
            "lookup_order",
            "read_skill"
        ],
        "the pattern's tools, and no Read"
    );
    let answer = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("the call answers");
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    client.close().await;
}
