//! Forwarded calls that do not end well (SPEC §9.5, §9.7): one the
//! upstream does not answer in time, and one the client cancels. The
//! support desk served in this process, spoken to by rmcp's own client, in
//! front of a slow desk upstream, in this process too.

mod common;

use std::time::Duration;

use serde_json::json;
use skillgraph_mcp::ServeConfig;

use common::{Watcher, call, connect, desk, resource_text, upstream};

/// The desk's data with `lookup_order` answering only after `delay_ms`,
/// served; and the desk's map in front of it.
fn slow_desk(name: &str, delay_ms: u64) -> (upstream::Desk, std::path::PathBuf) {
    let mut data = upstream::desk_data();
    data["lookup_order"]["delay_ms"] = json!(delay_ms);
    let slow = upstream::desk(data);
    let dir = desk(name, json!({"desk": {"url": slow.url}}), |_| {});
    (slow, dir)
}

/// SPEC §9.7: an upstream that does not answer in time is a tool error the
/// model sees, recorded as a `failure` result with the error, and a route
/// on `failure` fires on it like on any failed result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_times_out_is_a_tool_error_recorded_as_a_failure() {
    let (_slow, dir) = slow_desk("timeout", 5_000);
    let mut config = ServeConfig::new(&dir);
    config.upstream_timeout = Duration::from_secs(1);
    let client = connect(config, Watcher::default()).await;
    let answer = call(&client, "lookup_order", json!({"order_id": 4412}))
        .await
        .expect("the timed-out call is answered");
    assert_eq!(answer.is_error, Some(true), "{answer:?}");
    let text = serde_json::to_string(&answer.content).expect("JSON");
    assert!(
        text.contains(r#"upstream server \"desk\" did not answer lookup_order within 1 s"#),
        "{text}"
    );
    let record = resource_text(&client, "skillgraph://record")
        .await
        .expect("the record");
    assert!(
        record.contains(r#""status":"failure","bytes":0,"result":"","error":"upstream server \"desk\" did not answer"#),
        "{record}"
    );
    client.close().await;
}

/// SPEC §9.5: a call the client cancels is cancelled upstream, recorded as
/// a `result` with `error: "cancelled"`, and moves nothing; the run goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_recorded_as_cancelled_and_moves_nothing() {
    let (slow, dir) = slow_desk("cancelled", 5_000);
    let client = connect(ServeConfig::new(&dir), Watcher::default()).await;
    // Dropped once the upstream has it, the call is cancelled: rmcp's
    // client sends notifications/cancelled.
    tokio::select! {
        answered = call(&client, "lookup_order", json!({"order_id": 4412})) => {
            panic!("the call was still waiting, not {answered:?}")
        }
        () = slow.called.notified() => {}
    }
    let mut record = String::new();
    for _ in 0..50 {
        record = resource_text(&client, "skillgraph://record")
            .await
            .expect("the record");
        if record.contains(r#""error":"cancelled""#) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        record.contains(
            r#""tool_name":"lookup_order","call":1,"bytes":0,"result":"","error":"cancelled""#
        ),
        "{record}"
    );
    assert!(record.contains(r#""by":"stay""#), "{record}");
    let answer = call(&client, "lookup_invoice", json!({"invoice_id": "INV-2001"}))
        .await
        .expect("the run goes on");
    assert_ne!(answer.is_error, Some(true), "{answer:?}");
    client.close().await;
}
