//! End-to-end tests of the `skillgraph` binary: good and broken maps, with
//! the exit code and the problem codes each must give.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use common::{scratch, skillgraph, write};
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/support-desk")
        .display()
        .to_string()
}

/// A scratch folder holding `skillmap.json` with `map`; the file's path.
fn map_file(name: &str, map: &str) -> String {
    write(&scratch("cli", name), "skillmap.json", map)
}

/// The command exited with `code` and said `needle` on standard error.
fn assert_fails(output: &Output, code: i32, needle: &str) {
    assert_eq!(output.status.code(), Some(code), "{}", stderr(output));
    assert!(stderr(output).contains(needle), "{}", stderr(output));
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `check --format json` on a map: the exit code and the problem codes.
fn check_codes(map: &str) -> (i32, Vec<String>) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let file = map_file(
        &format!("map-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        map,
    );
    let output = skillgraph(&["check", &file, "--format", "json"]);
    let checkup: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("check prints JSON");
    let codes = checkup["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["code"].as_str().unwrap().to_owned())
        .collect();
    (output.status.code().unwrap(), codes)
}

#[test]
fn the_example_checks_clean() {
    let output = skillgraph(&["check", &example()]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        stdout(&output).ends_with("0 errors, 0 warnings\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_contradictory_guard_is_an_error() {
    let (code, codes) = check_codes(
        r#"{"skills": [{"id": "a"}, {"id": "b"}], "entries": ["a"],
            "routes": [{"from": "a", "to": "b", "guard": {"score": {"gt": 5, "lt": 3}}}]}"#,
    );
    // b's only way in is that route, so b is dead too.
    assert_eq!(
        (code, codes),
        (
            1,
            vec!["guard-unsatisfiable".to_owned(), "dead-skill".to_owned()]
        )
    );
}

#[test]
fn an_unknown_skill_is_an_error() {
    let (code, codes) = check_codes(
        r#"{"skills": [{"id": "a"}], "entries": ["a"], "routes": [{"from": "a", "to": "ghost"}]}"#,
    );
    assert_eq!((code, codes), (1, vec!["unknown-skill".to_owned()]));
}

#[test]
fn settings_for_a_skill_without_a_folder_are_an_error() {
    let dir = scratch("cli", "settings-without-skill");
    write(
        &dir,
        "skillmap.json",
        r#"{"entries": ["intake"], "skills": {"ghost": {"trigger": "rule"}}}"#,
    );
    write(
        &dir,
        "skills/intake/SKILL.md",
        "---\nname: intake\ndescription: Take requests in.\n---\nBody.\n",
    );
    let output = skillgraph(&["check", &dir.display().to_string(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let checkup: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        checkup["problems"][0],
        serde_json::json!({
            "severity": "error", "code": "settings-without-skill", "skill": "ghost",
            "message": format!(
                "{}: `skills` configures \"ghost\", but no folder named `ghost` holding a SKILL.md is below {}; add the skill's folder, or remove its settings",
                dir.join("skillmap.json").display(),
                dir.display()
            ),
        })
    );
}

#[test]
fn a_routed_tool_only_skill_is_delivered_nowhere() {
    let (code, codes) = check_codes(
        r#"{"skills": [{"id": "a"}, {"id": "b", "surface_mode": "tool-only", "body": "steps"}], "entries": ["a"],
            "routes": [{"from": "a", "to": "b", "on_tool_return": "lookup"}]}"#,
    );
    assert_eq!(
        (code, codes),
        (1, vec!["tool-only-delivered-nowhere".to_owned()])
    );
}

#[test]
fn a_refused_guard_is_an_error_and_route_refuses_the_map() {
    let map = r#"{"skills": [{"id": "a"}, {"id": "b"}], "entries": ["a"],
                  "routes": [{"from": "a", "to": "b", "guard": {"score": {"gle": 1}}}]}"#;
    let (code, codes) = check_codes(map);
    assert_eq!(
        (code, codes),
        (1, vec!["guard-refused".to_owned(), "dead-skill".to_owned()])
    );
    let dir = scratch("cli", "refused-route");
    let file = write(&dir, "skillmap.json", map);
    let results = write(
        &dir,
        "results.jsonl",
        r#"{"toolName": "t", "result": "{}"}"#,
    );
    let output = skillgraph(&["route", &file, "--cursor", "a", "--results", &results]);
    assert_fails(
        &output,
        1,
        "route a→b: key \"score\" uses unknown operator \"gle\"",
    );
}

#[test]
fn a_warning_alone_exits_zero() {
    let (code, codes) = check_codes(
        r#"{"skills": [{"id": "a"}], "entries": ["a"], "routes": [{"from": "a", "to": "a"}]}"#,
    );
    assert_eq!((code, codes), (0, vec!["self-loop".to_owned()]));
}

#[test]
fn bad_json_is_named_with_its_line_and_column() {
    let file = map_file(
        "bad-json",
        "{\n  \"skills\": [\n    {\"id\": \"a\"},\n  ]\n}",
    );
    let output = skillgraph(&["check", &file]);
    assert_fails(&output, 2, "error[bad-json]");
    assert!(
        stderr(&output).contains("skillmap.json:4:3:"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_unknown_key_names_the_nearest_known_one() {
    let file = map_file(
        "unknown-key",
        r#"{"skills": [{"id": "a", "surfaceMode": "both"}], "entries": ["a"]}"#,
    );
    let output = skillgraph(&["check", &file]);
    assert_fails(
        &output,
        2,
        "unknown key `surfaceMode` (did you mean \"surface_mode\"?)",
    );
}

#[test]
fn a_missing_file_is_unusable_input() {
    let output = skillgraph(&["check", "/no/such/skillmap.json"]);
    assert_fails(&output, 2, "error[missing-path]");
}

#[test]
fn a_skill_md_that_breaks_the_agent_skills_rules_is_named() {
    let dir = scratch("cli", "skill-md");
    write(&dir, "skillmap.json", r#"{"entries": ["intake"]}"#);
    write(
        &dir,
        "skills/intake/SKILL.md",
        "---\nname: Intake\ndescription: Take requests in.\nauthor: me\n---\nBody.\n",
    );
    let output = skillgraph(&["check", &dir.display().to_string(), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let checkup: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let messages: Vec<&str> = checkup["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["code"] == "skill-file-invalid")
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert!(
        messages
            .iter()
            .all(|m| m.starts_with("skills/intake/SKILL.md: field `")),
        "{messages:#?}"
    );
    assert!(messages[0].contains("`author`"), "{messages:#?}");
}

#[test]
fn a_skill_md_that_is_not_yaml_is_an_error_on_that_skill_alone() {
    let dir = scratch("cli", "bad-yaml");
    write(&dir, "skillmap.json", r#"{"entries": ["intake"]}"#);
    write(
        &dir,
        "skills/intake/SKILL.md",
        "---\nname: intake\ndescription: \"unclosed\n---\n",
    );
    write(
        &dir,
        "skills/faq/SKILL.md",
        "---\nname: faq\ndescription: Answer questions.\n---\n",
    );
    let output = skillgraph(&["check", &dir.display().to_string()]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains(
            "error[skill-file-invalid]: skills/intake/SKILL.md:3:14: the front matter is not YAML"
        ),
        "{text}"
    );
    assert!(text.contains("1 error, "), "{text}");
    let tools = stdout(&skillgraph(&["tools", &dir.display().to_string()]));
    assert!(tools.contains(" - faq: Answer questions."), "{tools}");
}

#[test]
fn route_moves_the_cursor_with_evidence() {
    let results = format!("{}/results/risky-order.jsonl", example());
    let output = skillgraph(&[
        "route",
        &example(),
        "--cursor",
        "triage",
        "--results",
        &results,
        "--iteration",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let moved: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (moved["by"].as_str(), moved["to"].as_str()),
        (Some("route"), Some("refunds"))
    );
    assert_eq!(moved["guard"]["conditions"][1]["actual_summary"], "240");
    let low = format!("{}/results/low-risk-order.jsonl", example());
    let output = skillgraph(&["route", &example(), "--cursor", "triage", "--results", &low]);
    let stayed: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(stayed["by"], "stay");
    assert_eq!(
        stayed["guards_closed"][0]["conditions"][0]["actual_summary"],
        "low"
    );
}

#[test]
fn route_names_a_bad_results_line_and_an_unknown_cursor() {
    let dir = scratch("cli", "bad-results");
    let results = write(
        &dir,
        "results.jsonl",
        "{\"toolName\": \"t\", \"result\": \"{}\"}\n{\"tool\": 1}\n",
    );
    let output = skillgraph(&[
        "route",
        &example(),
        "--cursor",
        "triage",
        "--results",
        &results,
    ]);
    assert_fails(&output, 2, "results.jsonl:2:");
    let output = skillgraph(&[
        "route",
        &example(),
        "--cursor",
        "Triage",
        "--results",
        &results,
    ]);
    assert_fails(&output, 2, "(did you mean \"triage\"?)");
}

#[test]
fn tools_print_every_host_format() {
    for (format, key) in [
        ("anthropic", "input_schema"),
        ("openai", "function"),
        ("mcp", "inputSchema"),
    ] {
        let output = skillgraph(&[
            "tools",
            &example(),
            "--cursor",
            "triage",
            "--hide",
            "faq",
            "--format",
            format,
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let tools: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(tools.as_array().map(Vec::len), Some(2));
        assert!(tools[0].get(key).is_some(), "{format}: {tools}");
        assert!(
            !tools.to_string().contains("faq: Answer"),
            "a hidden skill is described: {tools}"
        );
    }
    let output = skillgraph(&["tools", &example()]);
    assert!(
        stdout(&output).starts_with("read_skill\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn tools_work_without_entries_and_with_a_raw_offer() {
    let file = map_file(
        "tools-offer",
        r#"{"skills": [{"id": "a", "description": "First"}, {"id": "b"}]}"#,
    );
    let output = skillgraph(&["tools", &file]);
    assert_eq!(output.status.code(), Some(0));
    assert!(
        stdout(&output).contains("Skills you can pick:"),
        "{}",
        stdout(&output)
    );
    let offer = write(
        Path::new(&file).parent().unwrap(),
        "offer.json",
        r#"{"grantable": ["b"], "cursor_id": "a"}"#,
    );
    let output = skillgraph(&["tools", &file, "--offer", &offer]);
    assert!(
        stdout(&output).contains("You are in 'a'."),
        "{}",
        stdout(&output)
    );
}

#[test]
fn draw_prints_a_flowchart() {
    let output = skillgraph(&["draw", &example()]);
    assert_eq!(output.status.code(), Some(0));
    let chart = stdout(&output);
    assert!(
        chart.starts_with("flowchart TD\n") && chart.contains("start -->"),
        "{chart}"
    );
    assert!(
        chart.contains("when riskLevel in [high, critical] AND amount ≥ 100"),
        "{chart}"
    );
}

#[test]
fn guard_prints_evidence_or_refuses() {
    let output = skillgraph(&[
        "guard",
        "--guard",
        r#"{"score":{"gte":0.8}}"#,
        "--view",
        r#"{"result":"{\"score\":0.5}"}"#,
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        "verdict: fail\nkey    op   value  actual  passed\nscore  gte  0.8    0.5     no\n"
    );
    let output = skillgraph(&["guard", "--guard", r#"{"score":{}}"#, "--view", "{}"]);
    assert_fails(&output, 1, "error[no-operator]");
    let output = skillgraph(&["guard", "--guard", "{", "--view", "{}"]);
    assert_eq!(output.status.code(), Some(2));
    let output = skillgraph(&[
        "guard",
        "--guard",
        r#"{"a":{"eq":1}}"#,
        "--view",
        r#"{"tool":"x"}"#,
        "--format",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn every_command_has_help_with_examples() {
    for command in ["check", "tools", "route", "draw", "guard"] {
        let output = skillgraph(&[command, "--help"]);
        assert_eq!(output.status.code(), Some(0));
        assert!(
            stdout(&output).contains("Examples:"),
            "{command}: {}",
            stdout(&output)
        );
    }
}
