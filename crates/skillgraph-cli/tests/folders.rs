//! End-to-end tests of loading skill folders as they are (SPEC §7.4) through
//! the `skillgraph` binary: both layouts, with and without `skillmap.json`, a
//! map file with a byte-order mark, and the reference's runbook keys.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

mod common;

use common::{folder, skillgraph};
use std::path::{Path, PathBuf};

fn skill_md(name: &str, more: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n{more}---\nSteps for {name}.\n")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `check --format json`: the exit code and each problem's code and message.
fn check(dir: &Path) -> (i32, Vec<(String, String)>) {
    let output = skillgraph(&["check", &dir.display().to_string(), "--format", "json"]);
    let checkup: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("check prints JSON: {}", text(&output.stderr)));
    let problems = checkup["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let field = |key: &str| p[key].as_str().unwrap().to_owned();
            (field("code"), field("message"))
        })
        .collect();
    (output.status.code().unwrap(), problems)
}

fn codes(problems: &[(String, String)]) -> Vec<&str> {
    problems.iter().map(|(code, _)| code.as_str()).collect()
}

fn tools_text(dir: &Path) -> String {
    let output = skillgraph(&["tools", &dir.display().to_string()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    text(&output.stdout)
}

#[test]
fn skills_folder_with_a_map_takes_tools_from_the_map_first() {
    let dir = folder(
        "folders",
        "nested-map",
        &[
            (
                "skillmap.json",
                r#"{"entries": ["pdf"], "skills": {"pdf": {"tools": [{"name": "read_pdf"}]}}}"#,
            ),
            (
                "skills/pdf/SKILL.md",
                &skill_md("pdf", "allowed-tools: Bash(git:*)\n"),
            ),
            (
                "skills/zip/SKILL.md",
                &skill_md("zip", "allowed-tools: Bash(unzip:*) Read\n"),
            ),
        ],
    );
    assert_eq!(check(&dir), (0, Vec::new()));
    let loaded = skillgraph::load(&dir).unwrap();
    let tools: Vec<Vec<&str>> = loaded
        .map
        .skills
        .iter()
        .map(|skill| skill.tools.iter().map(|t| t.name.as_str()).collect())
        .collect();
    // pdf's tools come from the map; zip's from its `allowed-tools`, where a
    // scoped entry carries the tool it scopes.
    assert_eq!(tools, [vec!["read_pdf"], vec!["Bash", "Read"]]);
}

#[test]
fn skills_folder_without_a_map_is_a_plain_catalog() {
    let dir = folder(
        "folders",
        "nested-no-map",
        &[
            ("skills/notes/SKILL.md", &skill_md("notes", "")),
            (
                "skills/pdf/SKILL.md",
                &skill_md("pdf", "allowed-tools: read_pdf\n"),
            ),
            ("skills/README.md", "Not a skill."),
        ],
    );
    assert_eq!(check(&dir), (0, Vec::new()));
    let tools = tools_text(&dir);
    assert!(
        tools.contains("- notes: The notes skill.") && tools.contains("- pdf: The pdf skill."),
        "{tools}"
    );
}

#[test]
fn flat_folder_without_a_map_reads_each_name_skill_md() {
    let dir = folder(
        "folders",
        "flat",
        &[
            ("notes/SKILL.md", &skill_md("notes", "")),
            ("pdf/SKILL.md", &skill_md("pdf", "")),
            ("docs/guide.md", "A folder without SKILL.md is not a skill."),
            ("README.md", "Not a skill either."),
        ],
    );
    assert_eq!(check(&dir), (0, Vec::new()));
    let chart = text(&skillgraph(&["draw", &dir.display().to_string()]).stdout);
    assert_eq!(chart, "flowchart TD\n    s0[\"notes\"]\n    s1[\"pdf\"]\n");
    // A broken file there is named by its own path.
    std::fs::write(dir.join("pdf/SKILL.md"), skill_md("PDF", "")).unwrap();
    let (exit, problems) = check(&dir);
    assert_eq!(exit, 1);
    assert!(
        problems
            .iter()
            .all(|(code, m)| code == "skill-file-invalid"
                && m.starts_with("pdf/SKILL.md: field `name`")),
        "{problems:?}"
    );
}

#[test]
fn a_folder_with_no_map_and_no_skills_is_unusable_input() {
    let dir = folder("folders", "empty", &[("docs/guide.md", "Nothing here.")]);
    let output = skillgraph(&["check", &dir.display().to_string()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("error[no-map-file]"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_map_file_starting_with_a_byte_order_mark_is_read() {
    let map = "\u{feff}{\"entries\": [\"a\"]}";
    let dir = folder(
        "folders",
        "bom",
        &[
            ("skillmap.json", map),
            ("skills/a/SKILL.md", &skill_md("a", "")),
        ],
    );
    assert_eq!(check(&dir), (0, Vec::new()));
    let file = dir.join("inline.json");
    std::fs::write(
        &file,
        "\u{feff}{\"skills\": [{\"id\": \"a\"}], \"entries\": [\"a\"]}",
    )
    .unwrap();
    let output = skillgraph(&["check", &file.display().to_string()]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
}

/// A folder in the reference's runbook style: `tools` and `routes` in the
/// front matter, entries in `skillmap.json`.
fn runbook_folder(name: &str, triage_routes: &str) -> PathBuf {
    folder(
        "folders",
        name,
        &[
            ("skillmap.json", r#"{"entries": ["triage"]}"#),
            (
                "skills/triage/SKILL.md",
                &skill_md(
                    "triage",
                    &format!("tools: lookup_order, notify\nroutes:\n{triage_routes}"),
                ),
            ),
            ("skills/refunds/SKILL.md", &skill_md("refunds", "")),
            ("skills/faq/SKILL.md", &skill_md("faq", "")),
        ],
    )
}

#[test]
fn runbook_keys_are_read_and_make_the_file_not_portable() {
    let dir = runbook_folder(
        "runbook",
        "  - refunds: on lookup_order status=denied,failure\n  - faq\n",
    );
    let (exit, problems) = check(&dir);
    assert_eq!(exit, 0, "{problems:?}");
    // `- faq` is a bare route: only a model pick reaches faq.
    assert_eq!(
        codes(&problems),
        ["skill-file-not-portable", "model-edge-only"]
    );
    let message = &problems[0].1;
    assert!(
        message.starts_with("skills/triage/SKILL.md: it uses `routes` and `tools`")
            && message.contains("other Agent Skills clients refuse")
            && message.contains("skillmap.json"),
        "{message}"
    );
    // The routes joined the map: a denied lookup moves the cursor.
    let results = dir.join("results.jsonl");
    std::fs::write(
        &results,
        r#"{"toolName": "lookup_order", "result": "{}", "status": "denied"}"#,
    )
    .unwrap();
    let output = skillgraph(&[
        "route",
        &dir.display().to_string(),
        "--cursor",
        "triage",
        "--results",
        &results.display().to_string(),
    ]);
    let moved: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (moved["by"].as_str(), moved["to"].as_str()),
        (Some("route"), Some("refunds"))
    );
}

#[test]
fn each_broken_runbook_item_is_an_error_naming_the_file_and_the_item() {
    for (routes, item, says) in [
        (
            "  - ghost\n",
            "ghost",
            "not a skill of this folder (the skills are: faq, refunds, triage)",
        ),
        (
            "  - refunds: on refund\n",
            "refunds: on refund",
            "not one of this file's tools (they are: lookup_order, notify)",
        ),
        (
            "  - refunds: status=lost\n",
            "refunds: status=lost",
            "the status `lost`",
        ),
        (
            "  - refunds: when risky\n",
            "refunds: when risky",
            "a route item is `- TARGET`",
        ),
        (
            "  - faq\n  - faq: on notify\n",
            "faq: on notify",
            "second route to `faq`",
        ),
    ] {
        let dir = runbook_folder("broken-runbook", routes);
        let (exit, problems) = check(&dir);
        assert_eq!(exit, 1, "{routes}: {problems:?}");
        let invalid: Vec<&String> = problems
            .iter()
            .filter(|(code, _)| code == "skill-file-invalid")
            .map(|(_, message)| message)
            .collect();
        assert!(
            invalid.len() == 1
                && invalid[0].starts_with("skills/triage/SKILL.md: field `routes`: item `")
                && invalid[0].contains(&format!("`{item}`"))
                && invalid[0].contains(says),
            "{routes}: {problems:?}"
        );
        assert!(
            codes(&problems).contains(&"skill-file-not-portable"),
            "{problems:?}"
        );
    }
    let dir = runbook_folder("empty-routes", "");
    let (_, problems) = check(&dir);
    assert!(
        problems
            .iter()
            .any(|(_, m)| m.contains("field `routes`: it lists no route")),
        "{problems:?}"
    );
}

/// Both YAML error paths count lines from the file's first line, the `---`.
#[test]
fn yaml_errors_name_the_line_of_the_file() {
    let refused = folder(
        "folders",
        "yaml-refused",
        &[("skills/a/SKILL.md", "---\nname: a\ndescription: [x]\n---\n")],
    );
    let (_, problems) = check(&refused);
    assert!(
        problems[0]
            .1
            .starts_with("skills/a/SKILL.md:3:14: the front matter is not YAML this format accepts: it uses a flow sequence"),
        "{problems:?}"
    );
    let broken = folder(
        "folders",
        "yaml-broken",
        &[(
            "skills/a/SKILL.md",
            "---\nname: a\ndescription: \"open\n---\n",
        )],
    );
    let (code, problems) = check(&broken);
    assert_eq!(code, 1);
    assert!(
        problems[0]
            .1
            .starts_with("skills/a/SKILL.md:3:14: the front matter is not YAML: "),
        "{problems:?}"
    );
}

#[test]
fn the_shipped_skills_folder_checks_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skills-folder");
    assert_eq!(check(&dir), (0, Vec::new()));
    assert!(tools_text(&dir).contains("- pdf-tools: Read, split and merge PDF files."));
}
