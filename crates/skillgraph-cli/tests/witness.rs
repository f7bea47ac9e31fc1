//! End-to-end tests of `skillgraph guard --witness`: the views it prints
//! pass (or fail) when fed back through `--view`, proofs and refusals keep
//! their exit codes.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use common::skillgraph;
use std::process::Output;

use serde_json::Value;

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The witness of `guard` as JSON, after checking the command succeeded.
fn witness_json(guard: &str) -> Value {
    let output = skillgraph(&["guard", "--guard", guard, "--witness", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// The verdict `guard --view` gives `view`.
fn verdict(guard: &str, view: &Value) -> bool {
    let view = view.to_string();
    let output = skillgraph(&[
        "guard", "--guard", guard, "--view", &view, "--format", "json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let evaluation: Value = serde_json::from_str(&stdout(&output)).unwrap();
    evaluation["verdict"].as_bool().unwrap()
}

const GUARD: &str = r#"{"score":{"gte":0.8,"lt":3},"status":{"eq":"success"},"toolName":{"in":["lookup","score"]}}"#;

#[test]
fn the_witness_fed_back_through_view_passes() {
    let answer = witness_json(GUARD);
    assert_eq!(answer["unsatisfiable"], Value::Null);
    assert!(answer["witness"].is_object(), "{answer}");
    assert!(verdict(GUARD, &answer["witness"]));
}

#[test]
fn each_near_miss_fed_back_fails_its_condition_alone() {
    let answer = witness_json(GUARD);
    let misses = answer["near_misses"].as_array().unwrap();
    assert_eq!(misses.len(), 4);
    for (index, miss) in misses.iter().enumerate() {
        assert!(miss["view"].is_object(), "{miss}");
        assert!(!verdict(GUARD, &miss["view"]), "{miss}");
        let view = miss["view"].to_string();
        let output = skillgraph(&[
            "guard", "--guard", GUARD, "--view", &view, "--format", "json",
        ]);
        let evaluation: Value = serde_json::from_str(&stdout(&output)).unwrap();
        let failed: Vec<usize> = evaluation["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, c)| c["passed"] == Value::Bool(false))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(failed, vec![index], "{miss} against {evaluation}");
    }
}

#[test]
fn a_condition_that_never_decides_is_named_with_the_one_that_implies_it() {
    let guard = r#"{"score":{"gte":5,"gt":3}}"#;
    let answer = witness_json(guard);
    let misses = answer["near_misses"].as_array().unwrap();
    assert!(misses[0]["view"].is_object());
    assert_eq!(misses[1]["view"], Value::Null);
    let why = misses[1]["never_decides"].as_str().unwrap();
    assert!(why.contains("score ≥ 5"), "{why}");
    let text = stdout(&skillgraph(&["guard", "--guard", guard, "--witness"]));
    assert!(text.starts_with("passes: {"), "{text}");
    assert!(
        text.contains("score > 3: none, it never decides the verdict"),
        "{text}"
    );
}

#[test]
fn an_unsatisfiable_guard_has_no_witness_and_says_why() {
    let guard = r#"{"score":{"gte":5,"lt":3}}"#;
    let answer = witness_json(guard);
    assert_eq!(answer["witness"], Value::Null);
    assert_eq!(answer["unsatisfiable"]["code"], "crossed-bounds");
    assert!(answer["near_misses"].as_array().unwrap().is_empty());
    let text = stdout(&skillgraph(&["guard", "--guard", guard, "--witness"]));
    assert!(
        text.starts_with("no view passes [crossed-bounds]: "),
        "{text}"
    );
}

#[test]
fn the_text_form_prints_views_ready_for_view() {
    let output = skillgraph(&["guard", "--guard", GUARD, "--witness"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    let first = text.lines().next().unwrap();
    let view: Value = serde_json::from_str(first.strip_prefix("passes: ").unwrap()).unwrap();
    assert!(verdict(GUARD, &view));
    assert!(text.contains("near misses (each fails one condition alone):\n  score ≥ 0.8: {"));
}

#[test]
fn refused_or_broken_guards_and_a_view_beside_witness_are_refused() {
    let refused = skillgraph(&["guard", "--guard", r#"{"score":{"nope":1}}"#, "--witness"]);
    assert_eq!(refused.status.code(), Some(1));
    let broken = skillgraph(&["guard", "--guard", "{", "--witness"]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("bad-json"));
    let both = skillgraph(&["guard", "--guard", GUARD, "--witness", "--view", "{}"]);
    assert_eq!(both.status.code(), Some(2));
    let neither = skillgraph(&["guard", "--guard", GUARD]);
    assert_eq!(neither.status.code(), Some(2));
}
