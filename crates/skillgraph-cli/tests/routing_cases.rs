//! End-to-end tests of `skillgraph test`: cases that pass, a case that fails
//! with its evidence, a bad case line, and `--generate` writing the same
//! bytes on every run.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use common::skillgraph;
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/support-desk")
}

/// An empty scratch folder for one test, with an empty `tests` folder.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skillgraph-cases-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    dir
}

/// A scratch map folder for one test: the support-desk map and its skill
/// folders (not its cases), and `cases` as `tests/cases.jsonl` when given.
fn desk_copy(name: &str, cases: Option<&str>) -> PathBuf {
    let dir = scratch(name);
    std::fs::copy(example().join("skillmap.json"), dir.join("skillmap.json")).unwrap();
    for skill in std::fs::read_dir(example().join("skills")).unwrap() {
        let skill = skill.unwrap().path();
        let to = dir.join("skills").join(skill.file_name().unwrap());
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(skill.join("SKILL.md"), to.join("SKILL.md")).unwrap();
    }
    if let Some(cases) = cases {
        std::fs::write(dir.join("tests/cases.jsonl"), cases).unwrap();
    }
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const LOW_RISK: &str = r#"{"name": "a low-risk order goes to refunds", "cursor": "triage", "results": [{"toolName": "lookup_order", "result": "{\"riskLevel\":\"high\",\"amount\":30}", "status": "success"}], "expect": {"to": "refunds"}}"#;

#[test]
fn the_shipped_cases_of_support_desk_pass() {
    let out = skillgraph(&["test", example().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("desk.jsonl:1 "), "{stdout}");
    assert!(stdout.contains("generated.jsonl:1 "), "{stdout}");
    assert!(stdout.contains(" 0 failed"), "{stdout}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
}

#[test]
fn a_failing_case_is_exit_1_with_the_move_and_the_closed_guards() {
    let dir = desk_copy("failing", Some(&format!("{LOW_RISK}\n")));
    let out = skillgraph(&["test", dir.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("cases.jsonl:1 a low-risk order goes to refunds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("expected the cursor on refunds, it moved triage → triage (no route fired"),
        "{stdout}"
    );
    assert!(
        stdout.contains("closed: triage → refunds on lookup_order"),
        "{stdout}"
    );
    assert!(stdout.contains("amount ≥ 100: read 30, failed"), "{stdout}");
    assert!(
        stdout.contains("riskLevel in [high, critical]: read high, passed"),
        "{stdout}"
    );
    assert!(stdout.contains("0 passed, 1 failed"), "{stdout}");
}

#[test]
fn a_bad_case_line_is_exit_2_naming_file_and_line() {
    let good = LOW_RISK.replace("\"to\": \"refunds\"", "\"to\": \"triage\"");
    for (name, bad, needle) in [
        (
            "missing",
            r#"{"name": "no expect", "cursor": "triage", "results": []}"#,
            "expect",
        ),
        (
            "unknown",
            r#"{"name": "x", "cursor": "triage", "results": [], "expect": {"to": "refund"}}"#,
            "(did you mean \"refunds\"?)",
        ),
        ("json", "{not json", "cases.jsonl:2:"),
    ] {
        let dir = desk_copy(name, Some(&format!("{good}\n{bad}\n")));
        let out = skillgraph(&["test", dir.to_str().unwrap()]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains("cases.jsonl:2"), "{name}: {stderr}");
        assert!(stderr.contains(needle), "{name}: {stderr}");
        assert!(
            text(&out.stdout).is_empty(),
            "{name}: no case runs before every line is read"
        );
    }
}

#[test]
fn generate_writes_the_same_bytes_every_run_and_its_cases_pass() {
    let dir = desk_copy("generate", None);
    let file = dir.join("tests/generated.jsonl");
    let mut runs = Vec::new();
    for _ in 0..2 {
        let out = skillgraph(&["test", dir.to_str().unwrap(), "--generate"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        runs.push(std::fs::read(&file).unwrap());
    }
    assert_eq!(runs[0], runs[1]);
    let shipped = std::fs::read(example().join("tests/generated.jsonl")).unwrap();
    assert_eq!(
        runs[0], shipped,
        "the shipped generated.jsonl is what --generate writes"
    );
    let out = skillgraph(&["test", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn a_witness_an_earlier_route_takes_expects_that_route_and_a_dead_route_is_named() {
    let dir = scratch("earlier");
    let map = r#"{
      "entries": ["a"],
      "routes": [
        {"from": "a", "to": "b", "guard": {"score": {"gte": 0}}},
        {"from": "a", "to": "c", "guard": {"score": {"gte": 5}}},
        {"from": "b", "to": "c", "guard": {"score": {"gt": 5, "lt": 3}}}
      ]
    }"#;
    std::fs::write(dir.join("skillmap.json"), map).unwrap();
    for id in ["a", "b", "c"] {
        std::fs::create_dir_all(dir.join("skills").join(id)).unwrap();
        let skill = format!("---\nname: {id}\ndescription: Skill {id}.\n---\nDo {id}.\n");
        std::fs::write(dir.join("skills").join(id).join("SKILL.md"), skill).unwrap();
    }
    let out = skillgraph(&["test", dir.to_str().unwrap(), "--generate"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("no witness for b → c: no tool result fires it"),
        "{}",
        text(&out.stdout)
    );
    let generated = std::fs::read_to_string(dir.join("tests/generated.jsonl")).unwrap();
    assert!(!generated.contains("\"cursor\":\"b\""), "{generated}");
    let witness = generated
        .lines()
        .find(|line| line.contains("a → c: witness"))
        .unwrap_or_else(|| panic!("{generated}"));
    assert!(
        witness.contains("an earlier route wins: a → b"),
        "{witness}"
    );
    assert!(witness.contains(r#""expect":{"to":"b"}"#), "{witness}");
    let out = skillgraph(&["test", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn a_failing_turn_case_names_the_rule_and_the_text_the_turn_started_by() {
    let cases = concat!(
        r#"{"name": "a parcel question should stay in triage", "turn": "my PARCEL is late", "expect": {"to": "triage"}}"#,
        "\n",
        r#"{"name": "hello starts no rule", "turn": "hello there", "expect": {"to": "shipping"}}"#,
        "\n",
        r#"{"name": "a stay by rule is no stay", "turn": "my parcel", "cursor": "shipping", "expect": {"to": "shipping", "by": "stay"}}"#,
        "\n",
    );
    let dir = desk_copy("turn-fail", Some(cases));
    let out = skillgraph(&["test", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("the turn started on shipping by start.rules[0] ('parcel words'): 'PARCEL' in the message"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no start rule matched, the cursor stayed on triage"),
        "{stdout}"
    );
    assert!(
        stdout.contains("expected the cursor on shipping with no start rule matched; the turn started on shipping by start.rules[0]"),
        "{stdout}"
    );
}

#[test]
fn a_turn_case_skips_a_rule_whose_skill_is_not_in_the_map_as_a_session_does() {
    let dir = scratch("turn-unknown-skill");
    let map = dir.join("map.json");
    std::fs::write(
        &map,
        r#"{
            "skills": [{"id": "triage"}, {"id": "refunds"}],
            "entries": ["triage"],
            "start": {"rules": [
                {"use": "billing", "match": {"keywords": ["refund"]}, "label": "no such skill"},
                {"use": "refunds", "match": {"keywords": ["refund"]}, "label": "refund words"}
            ]}
        }"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("tests/cases.jsonl"),
        r#"{"name": "a refund starts on refunds", "turn": "a refund, please", "expect": {"to": "refunds", "by": "rule"}}"#,
    )
    .unwrap();
    let out = skillgraph(&["test", map.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("1 passed, 0 failed"));

    // The same message in a session on the same map starts there too.
    let session = where_a_session_starts(&map, "a refund, please");
    assert_eq!(session.as_deref(), Some("refunds"));
}

/// The skill a session on `map` stands on after a turn that begins with
/// `message`, as the library runs it.
fn where_a_session_starts(map: &Path, message: &str) -> Option<String> {
    use skillgraph::skill_session::{Graph, Posture, Session};
    let graph = Graph::new(skillgraph::load(map).unwrap().map).unwrap();
    let mut session = Session::new(std::sync::Arc::new(graph), Posture::Assist, vec![]);
    session.begin_turn(message, None);
    session.cursor().map(str::to_owned)
}

#[test]
fn a_case_with_both_a_turn_and_results_is_refused_naming_its_line() {
    let case = r#"{"name": "both", "turn": "hi", "cursor": "triage", "results": [{"toolName": "lookup_order", "result": "{}"}], "expect": {"to": "triage"}}"#;
    let dir = desk_copy("turn-both", Some(case));
    let out = skillgraph(&["test", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cases.jsonl:1: a case has either \"turn\""),
        "{stderr}"
    );
}

#[test]
fn generate_writes_a_turn_case_per_example_and_per_never_routes_phrase() {
    let dir = desk_copy("turn-generate", None);
    let out = skillgraph(&["test", dir.to_str().unwrap(), "--generate"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let generated = std::fs::read_to_string(dir.join("tests/generated.jsonl")).unwrap();
    let turns: Vec<serde_json::Value> = generated
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|case: &serde_json::Value| case.get("turn").is_some())
        .collect();
    // Four examples and three never_routes phrases in the desk's start block.
    assert_eq!(turns.len(), 7, "{generated}");
    assert_eq!(turns[0]["expect"]["to"], "shipping");
    assert_eq!(
        turns[6]["turn"],
        "Please refund order 4412, the blender arrived broken"
    );
    assert_eq!(turns[6]["expect"]["to"], "triage");
    assert_eq!(
        turns[6]["expect"]["by"], "stay",
        "a never_routes phrase starts no rule"
    );
    assert_eq!(turns[0]["expect"]["by"], "rule");
    let out = skillgraph(&["test", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
