//! Roles in `skillmap.json` (SPEC §14.8) through the `skillgraph` binary:
//! the check-up's two role codes, a role name no principal could hold,
//! `play` taking `--anonymous-role` (else `*`, else refused), and `serve`
//! over stdio refusing a map with roles, no `*` and no such flag.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{folder, skillgraph, skillgraph_with_input};
use serde_json::{Value, json};

/// A map of inline skills with `roles`, in a folder of its own.
fn map_with_roles(name: &str, roles: &Value) -> PathBuf {
    let map = json!({
        "skills": [
            { "id": "triage", "description": "Sorts a request.", "body": "Triage first.",
              "tools": [{ "name": "lookup_order" }] },
            { "id": "payroll", "description": "Pays the staff.", "body": "Payroll steps.",
              "tools": [{ "name": "pay_salary" }] }
        ],
        "entries": ["triage"],
        "routes": [{ "from": "triage", "to": "payroll", "on_tool_return": "lookup_order" }],
        "roles": roles
    });
    folder("roles", name, &[("skillmap.json", &map.to_string())]).join("skillmap.json")
}

fn codes(path: &Path) -> Vec<String> {
    let checked = skillgraph(&["check", &path.display().to_string(), "--format", "json"]);
    let checkup: Value = serde_json::from_slice(&checked.stdout).unwrap();
    checkup["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|problem| problem["code"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_check_up_names_a_hidden_id_the_map_lacks_and_a_hidden_entry() {
    let misspelt = map_with_roles("misspelt", &json!({ "support": { "hide": ["payrol"] } }));
    assert_eq!(codes(&misspelt), ["role-unknown-skill"]);
    let entry = map_with_roles("entry", &json!({ "guest": { "hide": ["triage"] } }));
    assert_eq!(codes(&entry), ["role-hides-entry"]);
    let right = map_with_roles("right", &json!({ "support": { "hide": ["payroll"] } }));
    assert!(codes(&right).is_empty());
}

#[test]
fn a_role_named_with_a_space_or_comma_is_refused_at_load() {
    let spaced = map_with_roles("spaced", &json!({ "front desk": { "hide": ["payroll"] } }));
    let checked = skillgraph(&["check", &spaced.display().to_string()]);
    assert_eq!(checked.status.code(), Some(2));
    let said = String::from_utf8_lossy(&checked.stderr);
    assert!(
        said.contains("role-name") && said.contains("\"front desk\""),
        "{said}"
    );
}

#[test]
fn play_takes_the_anonymous_role_else_star_else_is_refused() {
    let steps = "{\"read\": \"payroll\"}\n{\"call\": \"pay_salary\"}\n";
    let roles = json!({ "support": { "hide": ["payroll"] }, "*": {} });
    let path = map_with_roles("play", &roles).display().to_string();
    let support = skillgraph_with_input(
        &["play", &path, "--anonymous-role", "support", "--all-tools"],
        steps,
    );
    assert_eq!(support.status.code(), Some(0));
    let answers = String::from_utf8_lossy(&support.stdout);
    let lines: Vec<&str> = answers.lines().collect();
    assert!(lines[0].contains("not a skill of this map"), "{answers}");
    assert!(
        lines[1].contains("pay_salary is not offered from here"),
        "{answers}"
    );
    assert!(!lines[1].contains("payroll"), "{answers}");
    // Without the flag the session takes `*`, which hides nothing here.
    let star = skillgraph_with_input(&["play", &path], steps);
    let answers = String::from_utf8_lossy(&star.stdout);
    assert!(
        !answers
            .lines()
            .next()
            .unwrap_or_default()
            .contains("not a skill"),
        "{answers}"
    );
    // With no `*`, a session with no role declared is refused.
    let strict = map_with_roles(
        "play-no-star",
        &json!({ "support": { "hide": ["payroll"] } }),
    );
    let refused = skillgraph_with_input(&["play", &strict.display().to_string()], steps);
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("role-none") && said.contains("--anonymous-role"),
        "{said}"
    );
}

#[test]
fn serve_over_stdio_refuses_a_map_with_roles_no_star_and_no_anonymous_role() {
    let map = json!({
        "mcpServers": {},
        "skills": [{ "id": "triage" }, { "id": "payroll" }],
        "entries": ["triage"],
        "roles": { "support": { "hide": ["payroll"] } }
    });
    let dir = folder("roles", "serve", &[("skillmap.json", &map.to_string())]);
    let path = dir.join("skillmap.json").display().to_string();
    let served = skillgraph_with_input(&["serve", &path], "");
    assert_eq!(served.status.code(), Some(2));
    let said = String::from_utf8_lossy(&served.stderr);
    assert!(
        said.contains("role-none") && said.contains("--anonymous-role"),
        "{said}"
    );
    assert!(!said.contains("payroll"), "{said}");
}
