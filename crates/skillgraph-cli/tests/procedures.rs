//! Procedures through `skillgraph play` (SPEC §15.9): a held-out call
//! refused naming the current step, `skip_step` in the call object form,
//! a result that advances saying the next step, and `procedure` on the
//! answers while the cursor's skill has steps.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use common::{folder, skillgraph_with_input};
use serde_json::{Value, json};

#[test]
fn play_holds_later_steps_out_skips_with_a_reason_and_advances_on_a_result() {
    let map = json!({
        "skills": [{
            "id": "refunds", "description": "Refunds an order.",
            "tools": [{ "name": "lookup_order" }, { "name": "check_eligibility" }, { "name": "issue_refund" }],
            "steps": [
                { "tool": "lookup_order", "note": "look the order up" },
                { "tool": "check_eligibility", "note": "check the order may be refunded" },
                { "tool": "issue_refund", "note": "issue the refund" }
            ]
        }],
        "entries": ["refunds"]
    });
    let dir = folder("procedures", "play", &[("skillmap.json", &map.to_string())]);
    let path = dir.join("skillmap.json").display().to_string();
    let steps = [
        json!({"turn": "refund order 4412"}),
        json!({"call": "issue_refund"}),
        json!({"call": "lookup_order"}),
        json!({"result": {"tool_name": "lookup_order", "result": "{}"}}),
        json!({"call": {"tool_name": "skip_step", "arguments": {}}}),
        json!({"call": {"tool_name": "skip_step", "arguments": {"reason": "eligibility was checked by phone"}}}),
        json!({"call": "issue_refund"}),
    ];
    let input: String = steps.iter().map(|step| step.to_string() + "\n").collect();
    let played = skillgraph_with_input(&["play", &path], &input);
    assert_eq!(played.status.code(), Some(0));
    let answers: Vec<Value> = String::from_utf8_lossy(&played.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(
        answers[0]["procedure"],
        json!({"skill": "refunds", "step": 1, "of": 3, "tool": "lookup_order", "note": "look the order up"})
    );
    assert_eq!(answers[1]["refusal"], "step-held", "{}", answers[1]);
    assert_eq!(answers[1]["held"]["tool"], "lookup_order");
    assert!(answers[1]["text"].as_str().unwrap().contains("skip_step"));
    assert_eq!(answers[2]["admitted"], true);
    let advanced = answers[3]["text"].as_str().unwrap_or_default();
    assert!(
        advanced.contains("Next: step 2 of 3, check the order may be refunded (check_eligibility)"),
        "{advanced}"
    );
    assert_eq!(answers[4]["refusal"], "skip-needs-reason", "{}", answers[4]);
    assert_eq!(answers[5]["admitted"], true, "{}", answers[5]);
    assert_eq!(answers[5]["procedure"]["step"], 3);
    assert_eq!(answers[6]["admitted"], true, "{}", answers[6]);
}

#[test]
fn play_takes_max_iterations_says_what_remains_and_wraps_up_once_it_is_spent() {
    let map = json!({
        "skills": [{ "id": "triage", "tools": [{ "name": "lookup_order" }] }, { "id": "faq" }],
        "entries": ["triage"]
    });
    let dir = folder(
        "procedures",
        "budget",
        &[("skillmap.json", &map.to_string())],
    );
    let path = dir.join("skillmap.json").display().to_string();
    let steps = [
        json!({"turn": "order 4412?"}),
        json!({"call": "lookup_order"}),
        json!({"end": true}),
        json!({"call": "lookup_order"}),
        json!({"read": "faq"}),
    ];
    let input: String = steps.iter().map(|step| step.to_string() + "\n").collect();
    let played = skillgraph_with_input(&["play", &path, "--max-iterations", "1"], &input);
    assert_eq!(played.status.code(), Some(0));
    let answers: Vec<Value> = String::from_utf8_lossy(&played.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(answers[0]["iterations_remaining"], 0, "{}", answers[0]);
    assert!(
        answers[0]["budget"]
            .as_str()
            .unwrap_or_default()
            .contains("last iteration")
    );
    assert_eq!(answers[3]["refusal"], "budget-exhausted", "{}", answers[3]);
    assert!(
        answers[3]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Reply to the user now")
    );
    assert_eq!(answers[4]["refusal"], "budget-exhausted", "{}", answers[4]);
}

#[test]
fn play_takes_a_proposal_on_a_result_and_moves_by_tool() {
    let map = json!({
        "skills": [{ "id": "triage", "tools": [{ "name": "fetch_claim" }] },
                   { "id": "inspect", "body": "Inspect the roof." }],
        "entries": ["triage"],
        "routes": [{ "from": "triage", "to": "inspect" }]
    });
    let dir = folder(
        "procedures",
        "propose",
        &[("skillmap.json", &map.to_string())],
    );
    let path = dir.join("skillmap.json").display().to_string();
    let steps = [
        json!({"turn": "claim 7"}),
        json!({"result": {"tool_name": "fetch_claim", "result": "{}", "propose": {"to": "inspect", "reason": "roof needs a look"}}}),
        json!({"result": {"tool_name": "fetch_claim", "result": "{}", "propose": {"to": "triage", "reason": "stay"}}}),
        json!({"end": true}),
    ];
    let input: String = steps.iter().map(|step| step.to_string() + "\n").collect();
    let played = skillgraph_with_input(&["play", &path], &input);
    assert_eq!(played.status.code(), Some(0));
    let answers: Vec<Value> = String::from_utf8_lossy(&played.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(answers[1]["propose"]["accepted"], true, "{}", answers[1]);
    assert_eq!(answers[2]["propose"]["refusal"], "self", "{}", answers[2]);
    assert_eq!(answers[3]["move"]["by"], "tool", "{}", answers[3]);
    assert_eq!(
        answers[3]["move"]["proposal"]["reason"],
        "roof needs a look"
    );
    assert_eq!(answers[3]["cursor"], "inspect");
}

#[test]
fn play_marks_the_answer_whose_refusal_escalates() {
    let map = json!({
        "skills": [{ "id": "triage" }, { "id": "ledger" }],
        "entries": ["triage"],
        "escalation": { "after_refusals": 2 }
    });
    let dir = folder(
        "procedures",
        "escalated",
        &[("skillmap.json", &map.to_string())],
    );
    let path = dir.join("skillmap.json").display().to_string();
    let input =
        "{\"turn\": \"hi\"}\n{\"call\": \"pay\"}\n{\"call\": \"pay\"}\n{\"call\": \"pay\"}\n";
    let played = skillgraph_with_input(&["play", &path, "--strict-tools"], input);
    let answers: Vec<Value> = String::from_utf8_lossy(&played.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let marked: Vec<bool> = answers.iter().map(|a| a["escalated"] == true).collect();
    assert_eq!(marked, [false, false, true, false], "{answers:?}");
}
