//! End-to-end tests of the check-up codes `model-edge-only`,
//! `body-foreign-tool` and `unusable-tool-name` (SPEC §7.3) through the
//! `skillgraph` binary: each in the JSON and the text form on a map that has
//! it, and absent from the same map put right.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use common::{folder, skillgraph};
use std::path::{Path, PathBuf};

use serde_json::Value;

/// `check PATH --format json` and `check PATH`: the exit code (the same
/// for both), the problems as JSON, and the text.
fn check(path: &Path) -> (i32, Vec<Value>, String) {
    let path = path.display().to_string();
    let json = skillgraph(&["check", &path, "--format", "json"]);
    let text = skillgraph(&["check", &path]);
    assert_eq!(json.status.code(), text.status.code());
    let checkup: Value = serde_json::from_slice(&json.stdout).expect("check prints JSON");
    let problems = checkup["problems"].as_array().unwrap().clone();
    (
        json.status.code().unwrap(),
        problems,
        String::from_utf8_lossy(&text.stdout).into_owned(),
    )
}

/// The problems with this code.
fn with_code<'a>(problems: &'a [Value], code: &str) -> Vec<&'a Value> {
    problems.iter().filter(|p| p["code"] == code).collect()
}

/// A `skillmap.json` holding `map` (skills inline), in its own folder.
fn map_with(name: &str, map: &str) -> PathBuf {
    folder("codes", name, &[("skillmap.json", map)]).join("skillmap.json")
}

#[test]
fn model_edge_only_names_where_the_model_can_pick_the_skill() {
    let dir = map_with(
        "model-edge",
        r#"{"skills": [{"id": "triage"}, {"id": "billing"}, {"id": "reports"}],
            "entries": ["triage"],
            "routes": [{"from": "triage", "to": "billing", "on_tool_return": "lookup_invoice"},
                       {"from": "billing", "to": "reports"}]}"#,
    );
    let (code, problems, text) = check(&dir);
    assert_eq!(code, 0, "{text}");
    let found = with_code(&problems, "model-edge-only");
    assert_eq!(found.len(), 1, "{problems:?}");
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!(found[0]["skill"], "reports");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("only a bare route from \"billing\""),
        "{message}"
    );
    assert!(
        text.contains(
            "warning[model-edge-only]: Skill \"reports\" is reached only when the model picks it"
        ) && text.contains("  --> skill reports\n")
            && text.ends_with("0 errors, 1 warning\n"),
        "{text}"
    );

    // Routed on a tool result, the skill is no longer reached by a pick alone.
    let dir = map_with(
        "model-edge-fixed",
        r#"{"skills": [{"id": "triage"}, {"id": "billing"}, {"id": "reports"}],
            "entries": ["triage"],
            "routes": [{"from": "triage", "to": "billing", "on_tool_return": "lookup_invoice"},
                       {"from": "billing", "to": "reports", "on_tool_return": "charge_history"}]}"#,
    );
    let (code, problems, text) = check(&dir);
    assert_eq!((code, problems.len()), (0, 0), "{text}");
    assert!(!text.contains("model-edge-only"), "{text}");
}

#[test]
fn body_foreign_tool_names_the_tool_and_who_carries_it() {
    let skills = |refunds_body: &str| {
        format!(
            r#"{{"skills": [
                {{"id": "triage", "tools": [{{"name": "lookup_order"}}]}},
                {{"id": "refunds", "tools": [{{"name": "issue_refund"}}], "body": "{refunds_body}"}}],
              "entries": ["triage"],
              "routes": [{{"from": "triage", "to": "refunds", "on_tool_return": "lookup_order"}}]}}"#
        )
    };
    let dir = map_with(
        "foreign",
        &skills("Check the order with `lookup_order`, then call `issue_refund`."),
    );
    let (code, problems, text) = check(&dir);
    assert_eq!(code, 0, "{text}");
    let found = with_code(&problems, "body-foreign-tool");
    assert_eq!(found.len(), 1, "{problems:?}");
    assert_eq!(found[0]["severity"], "warning");
    assert_eq!(found[0]["skill"], "refunds");
    assert_eq!(found[0]["tool"], "lookup_order");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("which skill \"triage\" carries and \"refunds\" does not"),
        "{message}"
    );
    assert!(
        text.contains(
            "warning[body-foreign-tool]: Skill \"refunds\"'s body names the tool `lookup_order`"
        ) && text.contains("  --> skill refunds\n"),
        "{text}"
    );

    // The same words outside backticks name no tool.
    let dir = map_with(
        "foreign-fixed",
        &skills("Check the order you looked up, then call `issue_refund`."),
    );
    let (code, problems, text) = check(&dir);
    assert_eq!((code, problems.len()), (0, 0), "{text}");
}

#[test]
fn unusable_tool_name_is_an_error_with_the_nearest_accepted_spelling() {
    let dir = map_with(
        "tool-name",
        r#"{"skills": [{"id": "ops", "tools": [{"name": "git status"}]}], "entries": ["ops"]}"#,
    );
    let (code, problems, text) = check(&dir);
    assert_eq!(code, 1, "{text}");
    let found = with_code(&problems, "unusable-tool-name");
    assert_eq!(found.len(), 1, "{problems:?}");
    assert_eq!(found[0]["severity"], "error");
    assert_eq!(found[0]["skill"], "ops");
    assert_eq!(found[0]["tool"], "git status");
    let message = found[0]["message"].as_str().unwrap();
    assert!(
        message.contains("for instance to \"git_status\""),
        "{message}"
    );
    assert!(
        text.contains("error[unusable-tool-name]: Skill \"ops\" carries tool \"git status\"")
            && text.ends_with("1 error, 0 warnings\n"),
        "{text}"
    );

    let dir = map_with(
        "tool-name-fixed",
        r#"{"skills": [{"id": "ops", "tools": [{"name": "git_status"}]}], "entries": ["ops"]}"#,
    );
    let (code, problems, text) = check(&dir);
    assert_eq!((code, problems.len()), (0, 0), "{text}");
}

#[test]
fn claude_code_scoped_allowed_tools_load_as_the_tools_they_scope() {
    let skill = |tools: &str| {
        format!(
            "---\nname: git-helper\ndescription: Work with git.\nallowed-tools: {tools}\n---\nUse `Bash`.\n"
        )
    };
    let dir = folder(
        "codes",
        "scoped",
        &[(
            "git-helper/SKILL.md",
            &skill("Bash(git status:*), Bash(git log:*) Read"),
        )],
    );
    let (code, problems, text) = check(&dir);
    assert_eq!((code, problems.len()), (0, 0), "{text}");

    // A name no host accepts, written as a list item, is named by the check.
    let dir = folder(
        "codes",
        "scoped-bad",
        &[(
            "git-helper/SKILL.md",
            &skill("\n  - Bash(git:*)\n  - git.log"),
        )],
    );
    let (code, problems, text) = check(&dir);
    assert_eq!(code, 1, "{text}");
    let found = with_code(&problems, "unusable-tool-name");
    assert_eq!(found.len(), 1, "{problems:?}");
    assert_eq!(found[0]["tool"], "git.log");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("\"git_log\""),
        "{problems:?}"
    );
}
