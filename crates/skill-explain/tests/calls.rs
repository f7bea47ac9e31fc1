//! SPEC §8.4 and §8.5: calls in the record. A refused call keeps its
//! number; an accepted call with no result (a writer stopped mid-call) is
//! open, in the text, the JSON and the page; an answered one is not.

use std::sync::Arc;

use skill_core::{SkillMap, ToolResult};
use skill_explain::{explain, page};
use skill_session::{
    CallAnswer, CallPolicy, Graph, Posture, Record, Session, SessionConfig, read_record,
};

fn session() -> Session {
    let map: SkillMap = serde_json::from_value(serde_json::json!({
        "skills": [{ "id": "triage", "tools": [{ "name": "lookup_order" }] },
                   { "id": "refunds", "tools": [{ "name": "issue_refund" }] }],
        "entries": ["triage"]
    }))
    .unwrap_or_default();
    let graph = match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    Session::with_config(
        graph,
        SessionConfig {
            posture: Posture::Assist,
            hidden: vec![],
            tools: CallPolicy::Strict,
            roles: vec![],
            max_iterations: None,
            after_refusals: None,
        },
    )
}

fn record_of(session: &mut Session) -> Record {
    let text: String = session
        .take_events()
        .iter()
        .map(|event| event.to_line() + "\n")
        .collect();
    match read_record(&text) {
        Ok(record) => record,
        Err(error) => panic!("the record reads: {error}"),
    }
}

#[test]
fn a_call_with_no_result_is_open_and_an_answered_one_is_not() {
    let mut session = session();
    session.begin_turn("refund 4412", None);
    assert!(matches!(
        session.call_tool("issue_refund"),
        CallAnswer::Refused { .. }
    ));
    session.end_iteration();
    let CallAnswer::Admitted { call: answered } = session.call_tool("lookup_order") else {
        panic!("triage carries lookup_order");
    };
    let observed = session.observe_call(
        answered,
        ToolResult {
            tool_name: "lookup_order".into(),
            result: "{}".into(),
            status: None,
        },
    );
    assert_eq!(observed, Ok(()), "call {answered} is open");
    session.end_iteration();
    let CallAnswer::Admitted { call: open } = session.call_tool("lookup_order") else {
        panic!("triage carries lookup_order");
    };
    let record = record_of(&mut session);
    let explained = match explain(&record, None) {
        Ok(explained) => explained,
        Err(error) => panic!("it explains: {error}"),
    };
    assert_eq!(
        explained
            .open_calls
            .iter()
            .map(|call| call.call)
            .collect::<Vec<_>>(),
        [open]
    );
    assert_eq!(explained.refused_calls[0].call, Some(1));
    let text = explained.to_text();
    assert!(
        text.contains("iteration 1: call 1 of issue_refund refused (not-offered)"),
        "{text}"
    );
    assert!(
        text.contains(
            "iteration 3: call 3 of lookup_order was accepted and forwarded; no result follows"
        ),
        "{text}"
    );
    let json = serde_json::to_value(&explained).unwrap_or_default();
    assert_eq!(json["open_calls"][0]["call"], 3, "{json}");
    let drawn = match page(&record, None) {
        Ok(drawn) => drawn,
        Err(error) => panic!("it draws: {error}"),
    };
    assert!(
        drawn.contains("Call 3 of <code>lookup_order</code> was accepted and forwarded"),
        "the page shows the open call"
    );
    assert!(!drawn.contains("Call 2 of"), "an answered call is not open");
}
