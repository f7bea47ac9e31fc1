//! The record of a served run (SPEC §9.10, §8.4): it replays to itself
//! under every call policy, and a record file that stops taking writes
//! leaves the resource `skillgraph://record` whole. The support desk served
//! in this process, spoken to by rmcp's own client, in front of the desk's
//! upstream.

mod common;

use serde_json::json;
use skillgraph::skill_session::CallPolicy;
use skillgraph_mcp::ServeConfig;

use common::{
    Watcher, call, connect, desk, moves, one_upstream, replays_to_itself, resource_text, tool_names,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_record_replays_to_itself_under_every_call_policy() {
    for (name, tools, policy) in [
        ("replay-scoped", CallPolicy::Scoped, "scoped"),
        ("replay-all", CallPolicy::All, "all"),
        ("replay-strict", CallPolicy::Strict, "strict"),
    ] {
        let dir = desk(name, one_upstream(), |_| {});
        let record = dir.join("run.jsonl");
        let mut config = ServeConfig::new(&dir);
        config.record = Some(record.clone());
        config.tools = tools;
        let client = connect(config, Watcher::default()).await;
        tool_names(&client).await;
        // Not carried by triage: forwarded (scoped, all) or refused (strict).
        let refund = call(&client, "issue_refund", json!({"order_id": 4412}))
            .await
            .expect("answered");
        assert_eq!(
            refund.is_error == Some(true),
            policy == "strict",
            "{name}: {refund:?}"
        );
        // A risky order moves the run to refunds by its route.
        call(&client, "lookup_order", json!({"order_id": 4412}))
            .await
            .expect("answered");
        call(&client, "read_skill", json!({"id": "faq"}))
            .await
            .expect("answered");
        call(&client, "read_skill", json!({"id": "triage"}))
            .await
            .expect("answered");
        tool_names(&client).await;
        client.close().await;
        let text = std::fs::read_to_string(&record).expect("the record");
        assert!(
            text.lines()
                .next()
                .is_some_and(|start| start.contains(&format!(r#""tools":"{policy}""#))),
            "{name}: the start event holds the policy: {text}"
        );
        assert_eq!(
            text.contains(r#""accepted":false"#),
            policy == "strict",
            "{name}: a refused call is recorded: {text}"
        );
        assert_eq!(
            moves(&text).len(),
            4,
            "{name}: every read and call is an iteration: {text}"
        );
        assert_eq!(replays_to_itself(&text), Ok(()), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_file_that_stops_taking_writes_leaves_the_resource_whole() {
    let dir = desk("full-disk", one_upstream(), |_| {});
    let mut config = ServeConfig::new(&dir);
    config.record = Some("/dev/full".into());
    let client = connect(config, Watcher::default()).await;
    call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("answered");
    let text = resource_text(&client, "skillgraph://record")
        .await
        .expect("the record resource reads");
    assert_eq!(moves(&text).len(), 1, "{text}");
    client.close().await;
}
