//! SPEC §13.2 and §13.3: a turn's start decided by the map's rules, as the
//! session records it.

use std::sync::Arc;

use skill_core::{Menu, MenuCandidate, MoveBy, SkillMap};
use skill_session::{Event, Graph, Posture, Session, first_difference, replay};

fn graph() -> Arc<Graph> {
    let map: SkillMap = serde_json::from_value(serde_json::json!({
        "skills": [{ "id": "triage" }, { "id": "refunds" }, { "id": "shipping" }],
        "entries": ["triage"],
        "routes": [{ "from": "triage", "to": "refunds" }, { "from": "triage", "to": "shipping" }],
        "start": {
            "rules": [
                { "use": "refunds", "match": { "keywords": ["refund", "money back"] }, "label": "refund words" },
                { "use": "shipping", "match": { "regex": "\\b(parcel|package)s?\\b", "flags": "i" } },
                { "use": "triage", "match": { "regex": "(a+)+$" } }
            ]
        }
    }))
    .unwrap_or_default();
    match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    }
}

fn menu() -> Menu {
    Menu {
        candidates: vec![MenuCandidate {
            id: "shipping".into(),
            relevance: None,
        }],
        cursor_id: Some("triage".into()),
        stay: false,
    }
}

#[test]
fn a_matching_rule_moves_the_cursor_by_rule_right_after_the_turn() {
    let mut session = Session::new(graph(), Posture::Assist, vec![]);
    session.begin_turn("I want a Refund for order 4412", Some(menu()));
    assert_eq!(session.cursor(), Some("refunds"));
    assert!(
        session.outstanding_menu().is_none(),
        "a rule's move closes the menu"
    );
    let events = session.take_events();
    let Some(Event::Turn(turn)) = events.get(1) else {
        panic!("the turn is recorded after the start: {events:?}");
    };
    let routed = turn.routed.as_ref().map(|r| {
        (
            r.rule,
            r.use_skill.as_str(),
            r.label.as_deref(),
            r.witness.as_str(),
        )
    });
    assert_eq!(routed, Some((0, "refunds", Some("refund words"), "Refund")));
    let Some(Event::Move(moved)) = events.get(2) else {
        panic!("the rule's move follows the turn: {events:?}");
    };
    assert_eq!(
        (moved.by, moved.from.as_deref(), moved.to.as_deref()),
        (MoveBy::Rule, Some("triage"), Some("refunds"))
    );
    assert_eq!(moved.iteration, turn.iteration);
    assert_eq!(
        events.len(),
        3,
        "nothing else happens before the model is called"
    );
}

#[test]
fn a_rule_naming_the_cursor_keeps_the_run_there_by_a_move_from_it_to_it() {
    let mut session = Session::new(graph(), Posture::Assist, vec![]);
    session.begin_turn("a refund please", None);
    session.take_events();
    session.begin_turn("and the money back too", Some(menu()));
    let events = session.take_events();
    let Some(Event::Turn(turn)) = events.first() else {
        panic!("a turn: {events:?}");
    };
    assert_eq!(
        turn.routed.as_ref().map(|r| r.witness.as_str()),
        Some("money back")
    );
    let Some(Event::Move(moved)) = events.get(1) else {
        panic!("the stay by rule is a move: {events:?}");
    };
    assert_eq!(
        (moved.by, moved.from.as_deref(), moved.to.as_deref()),
        (MoveBy::Rule, Some("refunds"), Some("refunds"))
    );
    assert_eq!(session.cursor(), Some("refunds"));
    assert!(session.outstanding_menu().is_none(), "the start is decided");
}

#[test]
fn a_rule_whose_skill_is_not_in_the_map_is_skipped_and_an_empty_message_starts_none() {
    let map: SkillMap = serde_json::from_value(serde_json::json!({
        "skills": [{ "id": "triage" }, { "id": "faq" }], "entries": ["triage"],
        "start": { "rules": [
            { "use": "ghost", "match": { "regex": "" } },
            { "use": "faq", "match": { "regex": "^" } }
        ] }
    }))
    .unwrap_or_default();
    let graph = Arc::new(Graph::new(map).unwrap_or_else(|e| panic!("{e}")));
    let mut session = Session::new(graph, Posture::Assist, vec![]);
    session.begin_turn("", None);
    assert_eq!(
        session.cursor(),
        Some("triage"),
        "an empty message is no message"
    );
    session.begin_turn("hello", None);
    assert_eq!(
        session.cursor(),
        Some("faq"),
        "rules[0] names no skill of the map"
    );
}

#[test]
fn a_rule_move_supersedes_a_pick_made_before_the_turn() {
    let mut session = Session::new(graph(), Posture::Assist, vec![]);
    session.begin_turn("hello", None);
    assert!(session.read_skill("shipping").is_ok());
    session.take_events();
    session.begin_turn("a refund", None);
    let events = session.take_events();
    let Some(Event::Move(moved)) = events.get(1) else {
        panic!("the rule's move: {events:?}");
    };
    assert_eq!(moved.superseded.as_deref(), Some("shipping"));
    let ended = session.end_iteration().clone();
    assert_eq!(
        (ended.by, ended.to.as_deref()),
        (MoveBy::Stay, Some("refunds")),
        "the pick is gone"
    );
}

#[test]
fn with_no_rule_matched_the_cursor_stays_and_the_menu_is_outstanding() {
    let mut session = Session::new(graph(), Posture::Guard, vec![]);
    session.begin_turn("hello there", Some(menu()));
    assert_eq!(session.cursor(), Some("triage"));
    assert!(session.outstanding_menu().is_some());
    let events = session.take_events();
    assert!(matches!(events.last(), Some(Event::Turn(turn)) if turn.routed.is_none()));
}

#[test]
fn a_rule_whose_skill_is_hidden_is_skipped_for_the_next() {
    let mut session = Session::new(graph(), Posture::Assist, vec!["refunds".into()]);
    session.begin_turn("refund for the parcel", None);
    assert_eq!(
        session.cursor(),
        Some("shipping"),
        "rules[0] names a hidden skill"
    );
}

#[test]
fn rules_bind_under_every_posture() {
    for posture in Posture::ALL {
        let mut session = Session::new(graph(), posture, vec![]);
        session.begin_turn("where is my PACKAGE", None);
        assert_eq!(session.cursor(), Some("shipping"), "{posture:?}");
    }
}

#[test]
fn a_rule_that_gives_up_is_recorded_and_does_not_decide() {
    let mut session = Session::new(graph(), Posture::Assist, vec![]);
    let message = format!("{}b", "a".repeat(5_000));
    session.begin_turn(message, None);
    assert_eq!(session.cursor(), Some("triage"));
    let events = session.take_events();
    assert!(
        matches!(events.last(), Some(Event::Turn(turn)) if turn.gave_up == [2] && turn.routed.is_none()),
        "{events:?}"
    );
}

#[test]
fn a_record_with_rule_moves_replays_to_itself() {
    let graph = graph();
    let mut session = Session::new(Arc::clone(&graph), Posture::Assist, vec![]);
    session.begin_turn("refund", None);
    session.tools();
    session.end_iteration();
    session.begin_turn("now the parcel", None);
    session.end_iteration();
    let recorded = session.take_events();
    let replayed = replay(&graph, &recorded).unwrap_or_default();
    assert_eq!(first_difference(&recorded, &replayed), None);
}
