//! The sessionless generation (2026-07-28) as over standard input and
//! output (SPEC §9.2, §9.3): the support desk served in this process,
//! spoken to by rmcp's own client discovering the newest revision, in
//! front of the desk's upstream.

mod common;

use rmcp::model::{CallToolRequestParams, ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use serde_json::json;
use skillgraph_mcp::ServeConfig;

use common::{Connected, desk, one_upstream, replays_to_itself};

/// SPEC §9.2 and §9.3 on the sessionless generation (2026-07-28): one list
/// for every request, whatever the run does; the call gate refuses what no
/// active skill carries; every read answer and refusal ends with the run's
/// position; forwarded answers carry `resultType` (rmcp's client refuses a
/// result without it on this revision).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_on_the_newest_protocol_gets_one_list_and_the_position_in_answers() {
    let dir = desk("modern", one_upstream(), |_| {});
    let record = dir.join("run.jsonl");
    let mut config = ServeConfig::new(&dir);
    config.record = Some(record.clone());
    let client = Connected::with(config, async |pipe| {
        ().serve_with_lifecycle(
            pipe,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::LATEST],
            },
        )
        .await
        .expect("discovery succeeds")
    })
    .await;
    let listed = |tools: Vec<Tool>| -> Vec<String> {
        tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    };
    let before = listed(client.list_all_tools().await.expect("tools/list"));
    for tool in [
        "read_skill",
        "list_skills",
        "lookup_order",
        "issue_refund",
        "render_chart",
    ] {
        assert!(before.contains(&tool.to_owned()), "{tool}: {before:?}");
    }

    let mut refund = CallToolRequestParams::new("issue_refund");
    refund.arguments = json!({"order_id": 4412}).as_object().cloned();
    let refused = client.call_tool(refund.clone()).await.expect("answered");
    assert_eq!(
        refused.is_error,
        Some(true),
        "triage does not carry issue_refund: {refused:?}"
    );
    let text = serde_json::to_string(&refused.content).expect("JSON");
    assert!(
        text.contains("This run is in 'triage'; from here read_skill may take: "),
        "{text}"
    );

    let mut lookup = CallToolRequestParams::new("lookup_order");
    lookup.arguments = json!({"order_id": 4412}).as_object().cloned();
    let answer = client.call_tool(lookup).await.expect("answered");
    assert_eq!(
        answer.content.len(),
        2,
        "the upstream's answer, then refunds' body"
    );
    assert_eq!(
        listed(client.list_all_tools().await.expect("tools/list")),
        before
    );

    let mut read = CallToolRequestParams::new("read_skill");
    read.arguments = json!({"id": "faq"}).as_object().cloned();
    let read = client.call_tool(read).await.expect("answered");
    let text = serde_json::to_string(&read.content).expect("JSON");
    assert!(
        text.contains("This run is in 'refunds', with 'faq' active too; "),
        "{text}"
    );
    let allowed = client.call_tool(refund).await.expect("answered");
    assert_ne!(
        allowed.is_error,
        Some(true),
        "refunds carries issue_refund: {allowed:?}"
    );
    client.close().await;

    let written = std::fs::read_to_string(&record).expect("the record");
    assert!(written.contains(r#""tools":"strict""#), "{written}");
    assert_eq!(replays_to_itself(&written), Ok(()));
}
