//! A turn's budget (SPEC §15.3): iterations remaining, the wrap-up answer
//! to every read and call once the turn's last iteration has ended, the
//! `budget` event once per turn, a procedure left `unfinished` for it, a
//! new turn starting the count again, the driver's override, and exact
//! replay of all of it.

mod common;

use std::sync::Arc;

use common::replays;

use serde_json::json;
use skill_core::{SkillMap, ToolResult};
use skill_session::{
    CallAnswer, CallRefusal, Event, Graph, Refusal, Session, SessionConfig, SkipAnswer,
};

fn graph(budget: serde_json::Value) -> Arc<Graph> {
    let map: SkillMap = match serde_json::from_value(json!({
        "skills": [{ "id": "refunds", "tools": [{ "name": "lookup_order" }, { "name": "issue_refund" }],
                     "steps": [{ "tool": "lookup_order", "note": "look it up" },
                               { "tool": "issue_refund", "note": "refund it" }] },
                   { "id": "faq" }],
        "entries": ["refunds"],
        "budget": budget
    })) {
        Ok(map) => map,
        Err(error) => panic!("the map reads: {error}"),
    };
    match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    }
}

fn session(budget: serde_json::Value, max_iterations: Option<u64>) -> Session {
    let config = SessionConfig {
        max_iterations,
        ..SessionConfig::default()
    };
    Session::with_config(graph(budget), config)
}

fn lookup(session: &mut Session) -> CallAnswer {
    let answer = session.call_tool("lookup_order");
    if let CallAnswer::Admitted { call } = answer {
        let result = ToolResult {
            tool_name: "lookup_order".into(),
            result: "{}".into(),
            status: None,
        };
        assert_eq!(session.observe_call(call, result), Ok(()));
    }
    answer
}

#[test]
fn once_the_last_iteration_ends_every_read_and_call_gets_the_wrap_up_and_the_next_turn_starts_again()
 {
    let mut run = session(json!({"max_iterations": 2}), None);
    run.begin_turn("refund 4412", None);
    assert_eq!(run.iterations_remaining(), Some(1));
    assert!(matches!(lookup(&mut run), CallAnswer::Admitted { .. }));
    run.end_iteration();
    assert_eq!(run.iterations_remaining(), Some(0));
    assert!(
        run.budget_said()
            .is_some_and(|said| said.contains("last iteration"))
    );
    run.read_skill("faq").ok();
    run.end_iteration();
    assert!(run.budget_spent());
    assert!(run.tools().is_empty() && run.visible_tools().is_empty());
    let CallAnswer::Refused { text, call, .. } = run.call_tool("issue_refund") else {
        panic!("the budget is spent");
    };
    assert_eq!(call.refusal, Some(CallRefusal::BudgetExhausted));
    assert!(
        text.contains("budget of 2 iteration(s) is spent")
            && text.contains("what got done and what did not"),
        "{text}"
    );
    let read = match run.read_skill("faq") {
        Ok(read) => read,
        Err(error) => panic!("a spent budget answers every read: {error}"),
    };
    assert_eq!(read.read.refusal, Some(Refusal::BudgetExhausted));
    assert!(matches!(
        run.skip_step(Some("no time")),
        SkipAnswer::Refused { .. }
    ));
    let budgets = run
        .events()
        .iter()
        .filter(|e| matches!(e, Event::Budget(_)))
        .count();
    assert_eq!(budgets, 1, "once per turn");
    let left = run.events().iter().find_map(|event| match event {
        Event::Step(step) => serde_json::to_value(step)
            .ok()
            .filter(|s| s["cause"] == "budget"),
        _ => None,
    });
    assert_eq!(
        left.map(|s| s["remaining"].clone()),
        Some(json!([2])),
        "the procedure was in progress"
    );
    // Results still route; a new turn has the whole budget again.
    run.begin_turn("and now?", None);
    assert!(!run.budget_spent());
    assert_eq!(run.iterations_remaining(), Some(1));
    assert!(matches!(
        run.call_tool("issue_refund"),
        CallAnswer::Admitted { .. }
    ));
    replays(&mut run);
}

#[test]
fn the_drivers_override_sets_or_lifts_the_budget_and_the_record_says_which() {
    let mut lifted = session(json!({"max_iterations": 1}), Some(0));
    lifted.begin_turn("hi", None);
    assert_eq!(lifted.max_iterations(), None);
    let Some(Event::Start(start)) = lifted.events().first() else {
        panic!("start");
    };
    assert_eq!(start.limits.and_then(|l| l.max_iterations), None);
    for _ in 0..3 {
        lifted.read_skill("faq").ok();
        lifted.end_iteration();
    }
    assert!(!lifted.budget_spent());
    replays(&mut lifted);

    let mut set = session(serde_json::Value::Null, Some(1));
    set.begin_turn("hi", None);
    let Some(Event::Start(start)) = set.events().first() else {
        panic!("start");
    };
    assert_eq!(start.limits.and_then(|l| l.max_iterations), Some(1));
    set.read_skill("faq").ok();
    set.end_iteration();
    assert!(set.budget_spent());
    replays(&mut set);
}

#[test]
fn the_refusal_that_reaches_the_count_escalates_once_per_turn_and_self_calls_do_not_count() {
    let map: SkillMap = match serde_json::from_value(json!({
        "skills": [{ "id": "triage", "tools": [{ "name": "lookup_order" }] },
                   { "id": "refunds", "tools": [{ "name": "issue_refund" }] },
                   { "id": "ledger" }],
        "entries": ["triage"],
        "routes": [{ "from": "triage", "to": "refunds", "on_tool_return": "lookup_order" },
                   { "from": "refunds", "to": "ledger" }]
    })) {
        Ok(map) => map,
        Err(error) => panic!("the map reads: {error}"),
    };
    let graph = match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    let config = SessionConfig {
        tools: skill_session::CallPolicy::Strict,
        ..SessionConfig::default()
    };
    let mut run = Session::with_config(graph, config);
    let Some(Event::Start(start)) = run.events().first() else {
        panic!("start");
    };
    assert_eq!(
        start.limits.map(|l| l.after_refusals),
        Some(3),
        "on by default"
    );
    run.begin_turn("refund", None);
    run.read_skill("triage").ok(); // self-call: not counted
    run.read_skill("ledger").ok(); // unreachable: 1
    run.call_tool("issue_refund"); // not offered: 2
    assert!(run.escalated().is_none());
    run.read_skill("ledger").ok(); // 3: escalates
    let escalated = run.escalated().cloned();
    let Some(escalated) = escalated else {
        panic!("the third refusal escalates");
    };
    assert_eq!(escalated.after_refusals, 3);
    let gates: Vec<_> = escalated
        .refusals
        .iter()
        .map(|r| (r.gate, r.refusal.as_str()))
        .collect();
    assert_eq!(
        gates,
        [
            (skill_session::GateKind::Read, "unreachable"),
            (skill_session::GateKind::Call, "not-offered"),
            (skill_session::GateKind::Read, "unreachable"),
        ]
    );
    run.read_skill("ledger").ok();
    let count = run
        .events()
        .iter()
        .filter(|e| matches!(e, Event::Escalated(_)))
        .count();
    assert_eq!(count, 1, "once per turn");
    run.begin_turn("again", None);
    assert!(run.escalated().is_none(), "a new turn counts again");
    replays(&mut run);
}

#[test]
fn a_spent_budget_refuses_a_malformed_read_and_a_host_tool_named_skip_step_and_replays() {
    let map: SkillMap = match serde_json::from_value(json!({
        "skills": [{ "id": "triage", "tools": [{ "name": "skip_step" }] }],
        "entries": ["triage"],
        "budget": { "max_iterations": 1 }
    })) {
        Ok(map) => map,
        Err(error) => panic!("the map reads: {error}"),
    };
    let graph = match Graph::new(map) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    let mut run = skill_session::Run::new(graph, SessionConfig::default());
    run.read_input(&json!({"id": "triage"}));
    let malformed = run.read_input(&json!({"id": 5}));
    assert!(
        malformed.text.contains("budget of 1 iteration(s) is spent"),
        "{}",
        malformed.text
    );
    // On a map without steps skip_step is a host tool like any other.
    assert!(matches!(
        run.call("skip_step"),
        skill_session::RunCall::Refused { .. }
    ));
    let events = run.take_events();
    let refused_host = events.iter().any(|event| {
        matches!(event, Event::Call(call) if call.tool_name == "skip_step" && call.call.is_some()
            && call.refusal == Some(CallRefusal::BudgetExhausted))
    });
    assert!(refused_host, "{events:?}");
    let Some(Event::Start(start)) = events.first() else {
        panic!("start");
    };
    let declared = match Graph::new(start.map.to_map()) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the declared map compiles: {error}"),
    };
    match skill_session::replay(&declared, &events) {
        Ok(replayed) => assert_eq!(replayed, events),
        Err(error) => panic!("the record replays: {error}"),
    }
}
