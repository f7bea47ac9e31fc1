//! The call policies (SPEC §9.3): `strict` refuses a tool no active skill
//! carries, `scoped` forwards it recorded as not offered, and `all` offers
//! every upstream tool. The support desk served in this process, spoken to
//! by rmcp's own client, in front of the desk's upstream.

mod common;

use serde_json::json;
use skillgraph::skill_session::CallPolicy;
use skillgraph_mcp::ServeConfig;

use common::{Watcher, call, connect, desk, one_upstream, texts, tool_names};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_tools_refuses_a_tool_not_offered_and_names_the_skills_that_carry_it() {
    let dir = desk("strict", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let mut config = ServeConfig::new(&dir);
    config.record = Some(record.clone());
    config.tools = CallPolicy::Strict;
    let client = connect(config.clone(), Watcher::default()).await;
    let refused = call(&client, "issue_refund", json!({"order_id": 4412}))
        .await
        .expect("answered");
    assert_eq!(refused.is_error, Some(true));
    assert!(texts(&refused)[0].contains("refunds"), "{refused:?}");
    client.close().await;

    config.tools = CallPolicy::Scoped;
    let client = connect(config, Watcher::default()).await;
    let forwarded = call(&client, "issue_refund", json!({"order_id": 4412}))
        .await
        .expect("answered");
    assert_ne!(
        forwarded.is_error,
        Some(true),
        "without strict tools the call is forwarded"
    );
    client.close().await;
    let written = std::fs::read_to_string(&record).expect("the record");
    assert!(
        written.contains(r#""tool_name":"issue_refund""#) && written.contains(r#""offered":false"#),
        "{written}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_tools_offers_every_upstream_tool_and_records_them_as_offered() {
    let dir = desk("all-tools", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let mut config = ServeConfig::new(&dir);
    config.record = Some(record.clone());
    config.tools = CallPolicy::All;
    let client = connect(config, Watcher::default()).await;
    assert_eq!(
        tool_names(&client).await,
        [
            "charge_history",
            "export_rows",
            "issue_refund",
            "list_skills",
            "lookup_invoice",
            "lookup_order",
            "read_skill",
            "render_chart",
            "track_parcel"
        ]
    );
    call(&client, "issue_refund", json!({"order_id": 4412}))
        .await
        .expect("answered");
    client.close().await;
    let written = std::fs::read_to_string(&record).expect("the record");
    assert!(
        written.contains(r#""tool_name":"issue_refund""#),
        "{written}"
    );
    assert!(
        !written.contains(r#""offered":false"#),
        "every tool was offered: {written}"
    );
}
