//! Moves a tool proposes (SPEC §15.6): judged when observed (accepted for
//! a visible hop with a reason; else `malformed`, `unknown-skill`, `self`,
//! `open`, `unreachable`, or `not-trusted` from an untrusted source);
//! ranked route, then the first accepted proposal, then the pick; later
//! accepted proposals elsewhere recorded as conflicts; replay exact.

mod common;

use std::sync::Arc;

use common::replays;

use serde_json::{Value, json};
use skill_core::{MoveBy, SkillMap, ToolResult};
use skill_session::{
    CallAnswer, ConflictBy, Event, Graph, MoveEvent, Posture, ProposalRefusal, Proposed, Session,
};

fn session() -> Session {
    let map: SkillMap = match serde_json::from_value(json!({
        "skills": [
            { "id": "triage", "tools": [{ "name": "fetch_claim" }, { "name": "price" }] },
            { "id": "inspect", "body": "Inspect the roof." },
            { "id": "billing" },
            { "id": "ledger" },
            { "id": "faq" }
        ],
        "entries": ["triage"],
        "routes": [
            { "from": "triage", "to": "inspect" },
            { "from": "triage", "to": "billing" },
            { "from": "triage", "to": "billing", "on_tool_return": "fetch_claim",
              "guard": { "billing": { "eq": true } } },
            { "from": "billing", "to": "ledger" }
        ]
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
    session
}

/// Call `tool`, and observe its result `text` proposing `proposal`.
fn proposing(session: &mut Session, tool: &str, text: &str, proposal: Value, trusted: bool) {
    let CallAnswer::Admitted { call } = session.call_tool(tool) else {
        panic!("triage carries {tool}");
    };
    let result = ToolResult {
        tool_name: tool.into(),
        result: text.into(),
        status: None,
    };
    let proposed = Proposed {
        value: proposal,
        trusted,
    };
    assert_eq!(
        session.observe_proposed(Some(call), result, proposed),
        Ok(())
    );
}

fn moved(session: &mut Session) -> MoveEvent {
    session.end_iteration().clone()
}

fn refusals(session: &Session) -> Vec<Option<ProposalRefusal>> {
    session
        .events()
        .iter()
        .filter_map(|event| match event {
            Event::Result(result) => result.propose.as_ref().map(|p| p.refusal),
            _ => None,
        })
        .collect()
}

#[test]
fn an_accepted_proposal_moves_by_tool_over_the_pick_and_later_ones_are_conflicts() {
    let mut run = session();
    assert!(run.read_skill("billing").is_ok(), "the pick");
    proposing(
        &mut run,
        "fetch_claim",
        "{}",
        json!({"to": "inspect", "reason": "roof needs a look"}),
        true,
    );
    proposing(
        &mut run,
        "price",
        "{}",
        json!({"to": "billing", "reason": "price first"}),
        true,
    );
    let moved = moved(&mut run);
    assert_eq!(
        (moved.by, moved.to.as_deref()),
        (MoveBy::Tool, Some("inspect"))
    );
    assert_eq!(
        moved
            .proposal
            .as_ref()
            .map(|p| (p.tool_name.as_str(), p.reason.as_str())),
        Some(("fetch_claim", "roof needs a look"))
    );
    assert_eq!(moved.superseded.as_deref(), Some("billing"));
    assert_eq!(moved.conflict.len(), 1);
    assert_eq!(
        (moved.conflict[0].to.as_str(), moved.conflict[0].by),
        ("billing", ConflictBy::Tool)
    );
    replays(&mut run);
}

#[test]
fn a_route_wins_over_a_proposal_and_names_it_superseded() {
    let mut run = session();
    proposing(
        &mut run,
        "fetch_claim",
        r#"{"billing": true}"#,
        json!({"to": "inspect", "reason": "roof"}),
        true,
    );
    let moved = moved(&mut run);
    assert_eq!(
        (moved.by, moved.to.as_deref()),
        (MoveBy::Route, Some("billing"))
    );
    assert_eq!(
        moved.superseded_proposal.map(|p| p.to),
        Some("inspect".to_owned())
    );
    let line = run
        .events()
        .iter()
        .rev()
        .find(|e| matches!(e, Event::Move(_)))
        .map(Event::to_line)
        .unwrap_or_default();
    assert!(
        line.contains(
            r#""superseded_proposal":{"tool_name":"fetch_claim","to":"inspect","reason":"roof"}"#
        ),
        "{line}"
    );
    replays(&mut run);
}

#[test]
fn proposals_outside_the_hops_or_without_a_reason_or_trust_are_refused_and_move_nothing() {
    let mut run = session();
    for (proposal, trusted) in [
        (json!({"to": "inspect", "reason": " "}), true),
        (json!({"to": 5, "reason": "x"}), true),
        (json!("inspect"), true),
        (json!({"to": "nowhere", "reason": "x"}), true),
        (json!({"to": "triage", "reason": "x"}), true),
        (json!({"to": "faq", "reason": "x"}), true),
        (json!({"to": "ledger", "reason": "x"}), true),
        (json!({"to": "inspect", "reason": "x"}), false),
    ] {
        proposing(&mut run, "fetch_claim", "{}", proposal, trusted);
    }
    assert_eq!(
        refusals(&run),
        [
            Some(ProposalRefusal::Malformed),
            Some(ProposalRefusal::Malformed),
            Some(ProposalRefusal::Malformed),
            Some(ProposalRefusal::UnknownSkill),
            Some(ProposalRefusal::SelfMove),
            Some(ProposalRefusal::Open),
            Some(ProposalRefusal::Unreachable),
            Some(ProposalRefusal::NotTrusted),
        ]
    );
    let moved = moved(&mut run);
    assert_eq!(moved.by, MoveBy::Stay);
    replays(&mut run);
}
