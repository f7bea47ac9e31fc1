//! SPEC §8.5 and §13.3: a rule's move is a link that names the rule, its
//! label and the matched text, in the text, the JSON and the page.

use std::sync::Arc;

use skill_core::SkillMap;
use skill_explain::{explain, page};
use skill_session::{Graph, MoveBy, Posture, Record, Session, read_record};

fn record() -> Record {
    let map: SkillMap = serde_json::from_value(serde_json::json!({
        "skills": [{ "id": "triage" }, { "id": "refunds" }],
        "entries": ["triage"],
        "start": { "rules": [
            { "use": "refunds", "match": { "keywords": ["refund"] }, "label": "refund words" }
        ] }
    }))
    .unwrap_or_default();
    let graph = match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    let mut session = Session::new(graph, Posture::Assist, vec![]);
    session.begin_turn("hello", None);
    session.end_iteration();
    session.begin_turn("a REFUND, please", None);
    session.end_iteration();
    session.begin_turn("the refund again", None);
    session.end_iteration();
    let text: String = session
        .events()
        .iter()
        .map(|e| e.to_line() + "\n")
        .collect();
    match read_record(&text) {
        Ok(record) => record,
        Err(error) => panic!("the record reads back: {error}"),
    }
}

#[test]
fn a_rule_move_is_a_link_naming_the_rule_its_label_and_the_matched_text() {
    let record = record();
    let explanation = match explain(&record, None) {
        Ok(explanation) => explanation,
        Err(error) => panic!("{error}"),
    };
    let text = explanation.to_text();
    assert!(
        text.contains(
            "iteration 2: turn 2 started on refunds by the rule 'refund words' (rules[0]): 'REFUND' in the message"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "iteration 3: turn 3 stayed on refunds by the rule 'refund words' (rules[0]): 'refund' in the message"
        ),
        "a stay by rule is a link too: {text}"
    );
    let rule = explanation
        .chain
        .iter()
        .find(|link| link.by == MoveBy::Rule);
    let cause = rule.and_then(|link| link.rule.as_ref());
    assert_eq!(
        cause.map(|c| (c.turn, c.rule, c.witness.as_str())),
        Some((2, 0, "REFUND"))
    );
    assert!(
        rule.is_some_and(|link| link.declared),
        "a start rule declares its move"
    );
    assert_eq!(explanation.cursor.as_deref(), Some("refunds"));
}

#[test]
fn explaining_up_to_an_iteration_counts_the_move_that_ends_it() {
    let explanation = match explain(&record(), Some(2)) {
        Ok(explanation) => explanation,
        Err(error) => panic!("{error}"),
    };
    let last = explanation.chain.last().map(|link| link.by);
    assert_eq!(
        last,
        Some(MoveBy::Stay),
        "the rule's move does not end iteration 2"
    );
}

#[test]
fn the_page_tells_the_turn_the_rule_started() {
    let html = match page(&record(), None) {
        Ok(html) => html,
        Err(error) => panic!("{error}"),
    };
    assert!(
        html.contains("The rule “refund words” (rules[0]) started it on <code>refunds</code>: <q>REFUND</q> in the message."),
        "{html}"
    );
}
