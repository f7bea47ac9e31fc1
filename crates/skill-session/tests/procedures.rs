//! Procedures at run time (SPEC §15.1, §15.2): the pointer, its advance on
//! a successful result of the current step's tool, the hold-out of the
//! procedure's other tools at the call gate under every policy, `skip_step`
//! under `advance` and `hold`, a procedure left unfinished when the cursor
//! leaves, and exact replay of all of it.

mod common;

use std::sync::Arc;

use common::replays;

use serde_json::{Value, json};
use skill_core::{SkillMap, ToolResult};
use skill_session::{
    CallAnswer, CallPolicy, CallRefusal, Event, Graph, Posture, Proposed, Session, SessionConfig,
    SkipAnswer, StepAction,
};

fn map(on_skip: &str) -> SkillMap {
    let map = json!({
        "skills": [
            { "id": "settle", "description": "Settles a claim.",
              "tools": [{ "name": "check_policy" }, { "name": "price_damage" },
                        { "name": "issue_payment" }, { "name": "fetch_claim" }],
              "steps": [
                  { "tool": "check_policy", "note": "confirm the policy covers this loss" },
                  { "tool": "price_damage", "note": "work out the cost" },
                  { "tool": "issue_payment", "note": "pay the claimant" }
              ],
              "on_skip": on_skip },
            { "id": "inspect", "description": "Inspects a roof.", "tools": [{ "name": "book_visit" }] }
        ],
        "entries": ["settle"],
        "routes": [
            { "from": "settle", "to": "inspect", "on_tool_return": "fetch_claim",
              "guard": { "roof": { "eq": true } } },
            { "from": "inspect", "to": "settle", "on_tool_return": "book_visit" }
        ]
    });
    match serde_json::from_value(map) {
        Ok(map) => map,
        Err(error) => panic!("the map reads: {error}"),
    }
}

fn session(on_skip: &str, tools: CallPolicy) -> Session {
    let graph = match Graph::new(map(on_skip)) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    let config = SessionConfig {
        posture: Posture::Assist,
        tools,
        ..SessionConfig::default()
    };
    let mut session = Session::with_config(graph, config);
    session.begin_turn("settle claim 7", None);
    session
}

fn result(tool: &str, text: &str, status: Option<&str>) -> ToolResult {
    ToolResult {
        tool_name: tool.into(),
        result: text.into(),
        status: status.map(str::to_owned),
    }
}

/// Call `tool` and observe its result, if admitted.
fn run(session: &mut Session, tool: &str, text: &str, status: Option<&str>) -> Option<String> {
    match session.call_tool(tool) {
        CallAnswer::Admitted { call } => {
            session.observe_call(call, result(tool, text, status)).ok();
            None
        }
        CallAnswer::Refused { text, .. } => Some(text),
    }
}

fn steps(session: &Session) -> Vec<Value> {
    session
        .events()
        .iter()
        .filter(|event| matches!(event, Event::Step(_)))
        .filter_map(|event| serde_json::to_value(event).ok())
        .collect()
}

#[test]
fn later_steps_are_held_out_under_every_policy_until_their_turn() {
    for policy in [CallPolicy::Scoped, CallPolicy::Strict, CallPolicy::All] {
        let mut settle = session("advance", policy);
        assert_eq!(settle.visible_tools(), ["check_policy", "fetch_claim"]);
        assert!(!settle.offers_call("issue_payment"));
        let refused = match settle.call_tool("issue_payment") {
            CallAnswer::Refused { text, call, .. } => {
                assert_eq!(call.refusal, Some(CallRefusal::StepHeld));
                let held = call
                    .held
                    .as_ref()
                    .map(|h| (h.skill.as_str(), h.step, h.of, h.tool.as_str()));
                assert_eq!(held, Some(("settle", 1, 3, "check_policy")));
                text
            }
            CallAnswer::Admitted { call } => panic!("{policy:?} admitted call {call}"),
        };
        assert!(
            refused.contains("step 1 of 3, confirm the policy covers this loss (check_policy)"),
            "{refused}"
        );
        assert!(refused.contains("skip_step"), "{refused}");
        // An unsequenced tool is never held.
        assert_eq!(run(&mut settle, "fetch_claim", "{}", None), None);
        assert_eq!(run(&mut settle, "check_policy", "{}", None), None);
        assert_eq!(settle.visible_tools(), ["price_damage", "fetch_claim"]);
        assert_eq!(settle.procedure().and_then(|p| p.step), Some(2));
        replays(&mut settle);
    }
}

#[test]
fn only_a_successful_result_of_the_current_step_advances_and_the_last_completes() {
    let mut settle = session("advance", CallPolicy::Scoped);
    run(&mut settle, "check_policy", "{}", Some("error"));
    assert_eq!(settle.procedure().and_then(|p| p.step), Some(1));
    run(&mut settle, "check_policy", "{}", Some("success"));
    run(&mut settle, "price_damage", r#"{"cost": 900}"#, None);
    run(&mut settle, "issue_payment", "{}", None);
    let done = settle.procedure();
    assert_eq!(done.as_ref().map(|p| (p.step, p.of)), Some((None, 3)));
    let recorded = steps(&settle);
    assert_eq!(recorded.len(), 3);
    assert_eq!(recorded[0]["action"], "advanced");
    assert_eq!(recorded[0]["next"], 2);
    assert_eq!(recorded[2]["next"], Value::Null);
    // Complete: nothing is held, and skip_step is no longer offered.
    assert!(!settle.offers_skip_step());
    assert!(settle.tools().iter().all(|tool| tool.name != "skip_step"));
    replays(&mut settle);
}

#[test]
fn skip_step_needs_a_reason_and_then_advances_or_holds_as_the_skill_says() {
    let mut advance = session("advance", CallPolicy::Scoped);
    assert!(advance.tools().iter().any(|tool| tool.name == "skip_step"));
    match advance.skip_step(Some("  ")) {
        SkipAnswer::Refused { call, .. } => {
            assert_eq!(call.refusal, Some(CallRefusal::SkipNeedsReason))
        }
        SkipAnswer::Skipped { text, .. } => panic!("skipped without a reason: {text}"),
    }
    match advance.skip_step(Some("checked by phone")) {
        SkipAnswer::Skipped { text, step } => {
            assert!(
                text.contains("Next: step 2 of 3, work out the cost (price_damage)"),
                "{text}"
            );
            assert!(matches!(
                step.action,
                StepAction::Skipped { next: Some(2), .. }
            ));
        }
        SkipAnswer::Refused { text, .. } => panic!("{text}"),
    }
    replays(&mut advance);

    let mut hold = session("hold", CallPolicy::Scoped);
    match hold.skip_step(Some("no policy number")) {
        SkipAnswer::Skipped { text, .. } => assert!(text.contains("keeps step 1 of 3"), "{text}"),
        SkipAnswer::Refused { text, .. } => panic!("{text}"),
    }
    assert_eq!(hold.procedure().and_then(|p| p.step), Some(1));
    replays(&mut hold);
}

#[test]
fn leaving_records_the_procedure_unfinished_and_coming_back_starts_at_step_one() {
    let mut settle = session("advance", CallPolicy::Scoped);
    run(&mut settle, "check_policy", "{}", None);
    run(&mut settle, "fetch_claim", r#"{"roof": true}"#, None);
    settle.end_iteration();
    assert_eq!(settle.cursor(), Some("inspect"));
    assert_eq!(settle.procedure(), None);
    let left = steps(&settle);
    assert_eq!(
        left.last().map(|s| (
            s["action"].clone(),
            s["remaining"].clone(),
            s["cause"].clone()
        )),
        Some((json!("unfinished"), json!([2, 3]), json!("left")))
    );
    match settle.skip_step(Some("nothing here")) {
        SkipAnswer::Refused { call, .. } => {
            assert_eq!(call.refusal, Some(CallRefusal::NoProcedure))
        }
        SkipAnswer::Skipped { text, .. } => panic!("{text}"),
    }
    run(&mut settle, "book_visit", "{}", None);
    settle.end_iteration();
    assert_eq!(settle.procedure().and_then(|p| p.step), Some(1));
    replays(&mut settle);
}

/// One thing a model or host does to a session with a procedure.
#[derive(Debug, Clone)]
enum Op {
    Call(usize, bool),
    Propose(usize, usize, bool),
    Skip(bool),
    End,
    Turn,
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (0..5usize, any::<bool>()).prop_map(|(tool, ok)| Op::Call(tool, ok)),
        2 => (0..5usize, 0..4usize, any::<bool>()).prop_map(|(tool, to, trusted)| Op::Propose(tool, to, trusted)),
        1 => any::<bool>().prop_map(Op::Skip),
        2 => Just(Op::End),
        1 => Just(Op::Turn),
    ]
}

proptest::proptest! {
    /// Replay is exact over any sequence of calls, results, proposals,
    /// skips, moves and turns on a stepped skill, under either `on_skip`.
    #[test]
    fn replay_is_exact_over_steps_skips_proposals_and_results(
        ops in proptest::collection::vec(op(), 0..40),
        hold in proptest::prelude::any::<bool>(),
    ) {
        let tools = ["check_policy", "price_damage", "issue_payment", "fetch_claim", "book_visit"];
        let mut settle = session(if hold { "hold" } else { "advance" }, CallPolicy::Scoped);
        for op in ops {
            match op {
                Op::Call(tool, ok) => {
                    let text = if ok { r#"{"roof": true}"# } else { "{}" };
                    run(&mut settle, tools[tool], text, (!ok).then_some("error"));
                }
                Op::Propose(tool, to, trusted) => {
                    let targets = ["inspect", "settle", "nowhere", ""];
                    if let CallAnswer::Admitted { call } = settle.call_tool(tools[tool]) {
                        let result = result(tools[tool], "{}", None);
                        let proposed = Proposed { value: json!({"to": targets[to], "reason": "a reason"}), trusted };
                        settle.observe_proposed(Some(call), result, proposed).ok();
                    }
                }
                Op::Skip(reason) => {
                    settle.skip_step(reason.then_some("a reason"));
                }
                Op::End => {
                    settle.end_iteration();
                }
                Op::Turn => {
                    settle.begin_turn("and then", None);
                }
            }
        }
        replays(&mut settle);
    }
}

#[test]
fn a_run_whose_only_calls_are_refused_skips_resumes_numbered() {
    let graph = match Graph::new(map("advance")) {
        Ok(graph) => Arc::new(graph),
        Err(error) => panic!("the map compiles: {error}"),
    };
    let mut run = skill_session::Run::new(Arc::clone(&graph), SessionConfig::default());
    let skipped = run.skip_step(&json!({}));
    assert!(!skipped.skipped, "no reason: refused");
    let events = run.take_events();
    let mut resumed = match skill_session::Run::resume(&graph, &events) {
        Ok(run) => run,
        Err(error) => panic!("the run resumes: {error}"),
    };
    assert!(matches!(
        resumed.call("check_policy"),
        skill_session::RunCall::Forward { call: 1 }
    ));
    let numbered = resumed.take_events().iter().any(|event| {
        matches!(event, Event::Call(call) if call.tool_name == "check_policy" && call.call == Some(1))
    });
    assert!(numbered, "the resumed run numbers its calls");
}
