//! SPEC §14.8: a run that took roles is a session on the map without the
//! skills they all hide. A withheld id is an id the map lacks: in no enum,
//! list, prompt, answer or refusal; a read of it is refused as a read of an
//! unknown id and appends nothing; no route moves there; a tool only
//! withheld skills carry is refused under every policy, naming no skill.
//! The record declares the whole map and the roles, and replays exactly.

use std::sync::Arc;

use skill_core::{SkillMap, ToolResult};
use skill_session::{
    CallAnswer, CallPolicy, Event, Graph, MoveBy, Posture, Session, SessionConfig, replay,
};

fn graph() -> Arc<Graph> {
    let map: SkillMap = match serde_json::from_str(
        r#"{
        "skills": [
            { "id": "payroll", "description": "Pays the staff's salaries.", "body": "Payroll steps.",
              "tools": [{ "name": "pay_salary" }, { "name": "lookup_order" }] },
            { "id": "triage", "description": "Sorts a request.", "body": "Triage first.",
              "tools": [{ "name": "lookup_order" }] },
            { "id": "refunds", "description": "Refunds an order.", "tools": [{ "name": "refund" }] }
        ],
        "entries": ["payroll", "triage"],
        "routes": [
            { "from": "triage", "to": "payroll", "on_tool_return": "lookup_order" },
            { "from": "triage", "to": "refunds", "guard": { "amount": { "gte": 100 } } },
            { "from": "payroll", "to": "refunds" }
        ],
        "roles": { "support": { "hide": ["payroll"] }, "*": {} }
    }"#,
    ) {
        Ok(map) => map,
        Err(error) => panic!("the map reads: {error}"),
    };
    match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    }
}

fn session(tools: CallPolicy) -> Session {
    Session::with_config(
        graph(),
        SessionConfig {
            posture: Posture::Assist,
            tools,
            roles: vec!["support".to_owned()],
            ..SessionConfig::default()
        },
    )
}

fn lines(events: &[Event]) -> String {
    events.iter().map(|event| event.to_line() + "\n").collect()
}

#[test]
fn a_withheld_skill_is_named_nowhere_and_the_cursor_starts_past_it() {
    let mut support = session(CallPolicy::Scoped);
    assert_eq!(support.cursor(), Some("triage"));
    support.begin_turn("my order 4412", None);
    let tools = support.tools();
    let shown = serde_json::to_string(
        &tools
            .iter()
            .map(|t| (&t.name, &t.description, &t.input_schema))
            .collect::<Vec<_>>(),
    )
    .unwrap_or_default();
    assert!(
        shown.contains("refunds"),
        "the visible skills are listed: {shown}"
    );
    assert!(
        !shown.contains("payroll") && !shown.contains("salaries"),
        "{shown}"
    );
    assert!(!support.system_prompt().contains("Payroll"));
    assert!(
        !support.position().contains("payroll"),
        "{}",
        support.position()
    );
    let listed = tools
        .iter()
        .find(|tool| tool.name == "list_skills")
        .map(|tool| tool.execute.call(&serde_json::json!({})));
    let Some(Ok(listed)) = listed else {
        panic!("list_skills answers: {listed:?}");
    };
    assert!(
        !listed.contains("payroll") && listed.contains("triage"),
        "{listed}"
    );
    // The whole map's session starts on the entry the role withholds.
    let whole = Session::new(graph(), Posture::Assist, Vec::new());
    assert_eq!(whole.cursor(), Some("payroll"));
}

#[test]
fn a_read_of_a_withheld_id_is_refused_as_unknown_and_appends_nothing() {
    let mut support = session(CallPolicy::Scoped);
    support.begin_turn("pay me", None);
    let before = support.events().len();
    let refused = match support.read_skill("payroll") {
        Ok(answer) => panic!("a withheld skill is not read: {}", answer.text),
        Err(refused) => refused,
    };
    let said = refused.to_string();
    assert!(said.contains("is not a skill of this map"), "{said}");
    assert_eq!(support.events().len(), before);
    let mut whole = Session::new(graph(), Posture::Assist, Vec::new());
    let unknown = match whole.read_skill("no-such-skill") {
        Ok(answer) => panic!("an unknown id is not read: {}", answer.text),
        Err(refused) => refused.to_string(),
    };
    assert_eq!(
        said.replace("\"payroll\"", "ID"),
        unknown.replace("\"no-such-skill\"", "ID"),
        "a withheld id is refused as an unknown one"
    );
}

#[test]
fn no_route_moves_to_a_withheld_skill_and_routes_keep_their_numbers() {
    let mut support = session(CallPolicy::Scoped);
    support.begin_turn("refund order 4412", None);
    support.observe(ToolResult {
        tool_name: "lookup_order".into(),
        result: r#"{"amount":250}"#.into(),
        status: None,
    });
    let moved = support.end_iteration().clone();
    assert_eq!(
        (moved.by, moved.to.as_deref()),
        (MoveBy::Route, Some("refunds"))
    );
    // Route 1 of the whole map, though the view dropped route 0.
    assert_eq!(moved.route, Some(1));
    assert_eq!(moved.guard.and_then(|guard| guard.route), Some(1));
    // The whole map's session takes route 0, into the withheld skill.
    let mut whole = Session::with_config(
        graph(),
        SessionConfig {
            roles: vec!["*".to_owned()],
            ..SessionConfig::default()
        },
    );
    whole.read_skill("triage").ok();
    whole.end_iteration();
    whole.observe(ToolResult {
        tool_name: "lookup_order".into(),
        result: r#"{"amount":250}"#.into(),
        status: None,
    });
    assert_eq!(whole.end_iteration().to.as_deref(), Some("payroll"));
}

#[test]
fn a_tool_only_withheld_skills_carry_is_refused_under_every_policy_naming_no_skill() {
    for policy in [CallPolicy::Scoped, CallPolicy::Strict, CallPolicy::All] {
        let mut support = session(policy);
        support.begin_turn("pay", None);
        assert!(!support.offers_call("pay_salary") && !support.lists_stably("pay_salary"));
        match support.call_tool("pay_salary") {
            CallAnswer::Refused { text, call, .. } => {
                assert!(
                    text.contains("pay_salary is not offered from here"),
                    "{text}"
                );
                assert!(!text.contains("payroll"), "{text}");
                assert_eq!(call.allowed, Some(Vec::new()));
            }
            CallAnswer::Admitted { call } => panic!("{policy:?} admitted call {call}"),
        }
        // A tool a visible skill carries too is not withheld.
        assert!(support.lists_stably("lookup_order"));
    }
}

#[test]
fn the_record_declares_the_whole_map_and_the_roles_and_replays_exactly() {
    let mut support = session(CallPolicy::Strict);
    support.begin_turn("refund order 4412", None);
    support.read_skill("payroll").ok();
    support.call_tool("pay_salary");
    if let CallAnswer::Admitted { call } = support.call_tool("lookup_order") {
        support
            .observe_call(
                call,
                ToolResult {
                    tool_name: "lookup_order".into(),
                    result: r#"{"amount":250}"#.into(),
                    status: None,
                },
            )
            .ok();
    }
    support.end_iteration();
    let events = support.take_events();
    let Some(Event::Start(start)) = events.first() else {
        panic!("the record opens with start");
    };
    assert_eq!(start.roles, ["support"]);
    assert!(start.map.skills.iter().any(|skill| skill.id == "payroll"));
    assert!(start.map.roles.contains_key("support"));
    // `skillgraph replay` runs the record on the map it declares.
    let declared = match Graph::new(start.map.to_map()) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the declared map compiles: {error}"),
    };
    for graph in [graph(), declared] {
        match replay(&graph, &events) {
            Ok(replayed) => assert_eq!(lines(&replayed), lines(&events)),
            Err(error) => panic!("the record replays: {error}"),
        }
    }
}
