//! SPEC §15.9: `explain` shows each step of a procedure done, skipped or
//! left, and each `step-held` refusal with the step it protected, in the
//! text and the JSON.

use std::sync::Arc;

use skill_core::{SkillMap, ToolResult};
use skill_explain::{explain, trace};
use skill_session::{CallAnswer, Graph, Posture, Proposed, Session, read_record};

#[test]
fn explain_names_the_step_that_held_a_call_and_each_step_done_or_skipped() {
    let map: SkillMap = match serde_json::from_value(serde_json::json!({
        "skills": [{ "id": "refunds",
                     "tools": [{ "name": "lookup_order" }, { "name": "check_eligibility" }, { "name": "issue_refund" }],
                     "steps": [{ "tool": "lookup_order", "note": "look it up" },
                               { "tool": "check_eligibility", "note": "check it" },
                               { "tool": "issue_refund", "note": "refund it" }] }],
        "entries": ["refunds"]
    })) {
        Ok(map) => map,
        Err(error) => panic!("the map reads: {error}"),
    };
    let graph = match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    let mut session = Session::new(graph, Posture::Assist, Vec::new());
    session.begin_turn("refund 4412", None);
    assert!(matches!(
        session.call_tool("issue_refund"),
        CallAnswer::Refused { .. }
    ));
    if let CallAnswer::Admitted { call } = session.call_tool("lookup_order") {
        let result = ToolResult {
            tool_name: "lookup_order".into(),
            result: "{}".into(),
            status: None,
        };
        assert_eq!(session.observe_call(call, result), Ok(()));
    }
    session.end_iteration();
    session.skip_step(Some("checked by phone"));
    session.end_iteration();
    let text: String = session
        .take_events()
        .iter()
        .map(|event| event.to_line() + "\n")
        .collect();
    let record = match read_record(&text) {
        Ok(record) => record,
        Err(error) => panic!("the record reads: {error}"),
    };
    let explained = match explain(&record, None) {
        Ok(explained) => explained,
        Err(error) => panic!("it explains: {error}"),
    };
    // Spans carry the same facts (SPEC §15.9).
    let facts = trace::facts(&record.events, &explained.map);
    let step = facts
        .events
        .iter()
        .find(|event| event.name == trace::STEP_EVENT);
    let step = step
        .map(|event| event.attributes.clone())
        .unwrap_or_default();
    assert!(
        step.contains(&(trace::STEP_ACTION, trace::Value::String("advanced".into()))),
        "{step:?}"
    );
    assert!(
        step.contains(&(trace::STEP_NEXT, trace::Value::Int(2))),
        "{step:?}"
    );
    let held = facts
        .events
        .iter()
        .find(|event| event.name == trace::CALL_REFUSED_EVENT);
    let held = held
        .map(|event| event.attributes.clone())
        .unwrap_or_default();
    assert!(
        held.contains(&(
            trace::STEP_TOOL,
            trace::Value::String("lookup_order".into())
        )),
        "{held:?}"
    );
    let said = explained.to_text();
    assert!(
        said.contains("Procedure of refunds: at step 3 of 3 (issue_refund)"),
        "{said}"
    );
    // `--iteration 1`: the pointer as it stood then.
    let then = match explain(&record, Some(1)) {
        Ok(explained) => explained.to_text(),
        Err(error) => panic!("it explains: {error}"),
    };
    assert!(
        then.contains("Procedure of refunds: at step 2 of 3 (check_eligibility)"),
        "{then}"
    );
    assert!(said.contains("issue_refund refused (step-held)"), "{said}");
    assert!(
        said.contains("held out by step 1 of 3 of refunds's procedure (lookup_order)"),
        "{said}"
    );
    assert!(
        said.contains("refunds step 1 of 3 (lookup_order) done; step 2 is current"),
        "{said}"
    );
    assert!(said.contains("refunds step 2 of 3 (check_eligibility) skipped (\"checked by phone\", on_skip advance); step 3 is current"), "{said}");
    let json = serde_json::to_value(&explained).unwrap_or_default();
    assert_eq!(json["steps"][1]["action"], "skipped", "{json}");
    let drawn = match skill_explain::page(&record, None) {
        Ok(drawn) => drawn,
        Err(error) => panic!("it draws: {error}"),
    };
    assert!(
        drawn.contains("<h2>Procedures</h2>"),
        "a checklist per stepped skill"
    );
    assert!(
        drawn.contains("<code>lookup_order</code>: look it up. <i>✓ done in iteration 1</i>"),
        "{drawn}"
    );
    assert!(drawn.contains("↷ skipped in iteration"), "the skip");
    assert!(drawn.contains("<code>issue_refund</code>: refund it. <i>☐ not reached</i>"));
    assert!(
        drawn.contains(
            "<code>issue_refund</code> was held out by step 1 (<code>lookup_order</code>)"
        )
    );
    assert_eq!(
        json["refused_calls"][0]["held"]["tool"], "lookup_order",
        "{json}"
    );
}

#[test]
fn explain_shows_a_tool_move_as_a_link_with_its_reason() {
    let map: SkillMap = match serde_json::from_value(serde_json::json!({
        "skills": [{ "id": "triage", "tools": [{ "name": "fetch_claim" }] }, { "id": "inspect" }],
        "entries": ["triage"],
        "routes": [{ "from": "triage", "to": "inspect" }]
    })) {
        Ok(map) => map,
        Err(error) => panic!("the map reads: {error}"),
    };
    let graph = match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    let mut session = Session::new(graph, Posture::Assist, Vec::new());
    session.begin_turn("claim 7", None);
    let result = ToolResult {
        tool_name: "fetch_claim".into(),
        result: "{}".into(),
        status: None,
    };
    let proposed = Proposed {
        value: serde_json::json!({"to": "inspect", "reason": "roof needs a look"}),
        trusted: true,
    };
    assert_eq!(session.observe_proposed(None, result, proposed), Ok(()));
    session.end_iteration();
    let text: String = session
        .take_events()
        .iter()
        .map(|event| event.to_line() + "\n")
        .collect();
    let record = match read_record(&text) {
        Ok(record) => record,
        Err(error) => panic!("the record reads: {error}"),
    };
    let said = match explain(&record, None) {
        Ok(explained) => explained.to_text(),
        Err(error) => panic!("it explains: {error}"),
    };
    assert!(
        said.contains("triage → inspect by fetch_claim's proposal: 'roof needs a look'"),
        "{said}"
    );
}
