//! Skill collections as their authors lay them out (SPEC §7.4, §6.5, §9.6),
//! end to end through the binary: one fixture collection per layout and per
//! failure, in `tests/collections/` (written for these tests; no third-party
//! file is copied in). `cargo xtask interop` runs the format's reference
//! validator over the same fixtures.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{copy_dir, scratch, skillgraph, skillgraph_with_input, write};

fn collection(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/collections")
        .join(name)
}

fn path(dir: &Path) -> String {
    dir.display().to_string()
}

/// The ids `read_skill` offers, from its MCP schema's `enum`, and its
/// description.
fn offered(dir: &Path, more: &[&str]) -> (Vec<String>, String, String) {
    let mut args = vec!["tools", &*path(dir).leak(), "--format", "mcp"];
    args.extend_from_slice(more);
    let output = skillgraph(&args);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let tools: Value = serde_json::from_slice(&output.stdout).expect("the tools are JSON");
    let read = &tools[0];
    let ids = read["inputSchema"]["properties"]["id"]["enum"]
        .as_array()
        .expect("an enum of ids")
        .iter()
        .map(|id| id.as_str().unwrap_or_default().to_owned())
        .collect();
    (
        ids,
        read["description"].as_str().unwrap_or_default().to_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `check --format json`: the exit code and each problem's (code, skill,
/// message).
fn check(dir: &Path) -> (i32, Vec<(String, String, String)>) {
    let output = skillgraph(&["check", &path(dir), "--format", "json"]);
    let checkup: Value = serde_json::from_slice(&output.stdout).expect("the check-up is JSON");
    let problems = checkup["problems"]
        .as_array()
        .expect("a list of problems")
        .iter()
        .map(|p| {
            let field = |key: &str| p[key].as_str().unwrap_or_default().to_owned();
            (field("code"), field("skill"), field("message"))
        })
        .collect();
    (output.status.code().unwrap_or(-1), problems)
}

#[test]
fn every_layout_offers_its_skills_and_no_folder_that_is_not_one() {
    for (name, expected) in [
        // Category and author folders, and a helper folder inside skills/.
        (
            "categories",
            &["pdf-tools", "csv-tools", "release-notes"][..],
        ),
        // A plugin layout and a .claude/skills folder, in path order.
        (
            "plugins",
            &["local-notes", "write-docs", "deploy-check"][..],
        ),
        // skills/, a plugin layout and .claude/skills side by side.
        ("mixed", &["repo-notes", "explain-plan", "format-sql"][..]),
        // The root is itself one skill; its scripts/ is its files.
        ("single/tidy-commits", &["tidy-commits"][..]),
    ] {
        let dir = collection(name);
        let (code, problems) = check(&dir);
        let errors = problems
            .iter()
            .filter(|(code, ..)| code != "unreadable-folder")
            .count();
        assert_eq!((code, errors), (0, 0), "{name}: {problems:#?}");
        let (ids, description, _) = offered(&dir, &[]);
        assert_eq!(ids, expected, "{name}");
        for folder in [
            ".curated", "alice", "bob", "_lib", "docs-kit", "skills", "scripts",
        ] {
            assert!(
                !ids.iter().any(|id| id == folder),
                "{name}: {folder} offered"
            );
        }
        assert!(
            !description.contains("(no description given)"),
            "{name}: {description}"
        );
    }
}

#[test]
fn a_folder_link_that_leads_nowhere_is_said() {
    let (_, problems) = check(&collection("mixed"));
    assert_eq!(
        problems,
        [(
            "unreadable-folder".to_owned(),
            String::new(),
            "skills/gone: it is a link to `../moved-away`, which leads nowhere, so no skill in it is loaded; fix it, or move the skills out of it".to_owned()
        )]
    );
}

#[test]
fn one_run_reports_every_broken_skill_and_the_rest_load() {
    let dir = collection("broken");
    let (code, problems) = check(&dir);
    assert_eq!(code, 1, "{problems:#?}");
    let found: BTreeSet<(&str, &str)> = problems
        .iter()
        .map(|(code, skill, _)| (code.as_str(), skill.as_str()))
        .collect();
    let expected: BTreeSet<(&str, &str)> = [
        ("skill-file-invalid", "dangling"),
        ("duplicate-skill", "good-one"),
        ("duplicate-skill", "dangling"),
        ("skill-file-invalid", "ahrefs-automation"),
        ("skill-file-invalid", "colon-description"),
        ("skill-file-invalid", "flow-list"),
        ("skill-file-invalid", "latin1"),
        ("skill-file-invalid", "not-yaml"),
    ]
    .into_iter()
    .collect();
    assert_eq!(found, expected, "{problems:#?}");
    let message = |skill: &str| -> Vec<&str> {
        problems
            .iter()
            .filter(|(_, s, _)| s == skill)
            .map(|(_, _, m)| m.as_str())
            .collect()
    };
    assert!(message("dangling").iter().any(|m| m.starts_with(
        "dangling/SKILL.md: it is a link to `../nowhere/SKILL.md`, which leads nowhere"
    )));
    assert!(message("dangling").contains(&"dangling/SKILL.md and group/dangling/SKILL.md are both skill `dangling`: ids are folder names and must be unique, so only group/dangling/SKILL.md is offered; rename one of the folders (and its `name`), or remove it"));
    assert!(
        message("not-yaml")[0]
            .starts_with("not-yaml/SKILL.md:3:14: the front matter is not YAML: ")
    );
    assert!(message("colon-description")[0].starts_with("colon-description/SKILL.md:3:22: "));
    assert!(message("flow-list")[0].starts_with("flow-list/SKILL.md:4:16: "));
    assert!(message("latin1")[0].starts_with(
        "latin1/SKILL.md:3:17: the file is not valid UTF-8 (byte 0xE9 here); save it as UTF-8"
    ));
    assert_eq!(
        message("good-one"),
        [
            "good-one/SKILL.md and group/good-one/SKILL.md are both skill `good-one`: ids are folder names and must be unique, so only good-one/SKILL.md is offered; rename one of the folders (and its `name`), or remove it"
        ]
    );
    // `mcp-patterns` allows `mcp__github__*` and `Bash(git:*)`: patterns,
    // not unusable tool names; and `docs/`, a helper folder, is no skill.
    assert!(message("mcp-patterns").is_empty());
    assert!(message("docs").is_empty());

    // The catalog is lenient: every skill that could be read is offered,
    // with the description its author wrote; an id is the first readable
    // folder's (a broken link never takes it from a readable copy).
    let (ids, description, stderr) = offered(&dir, &[]);
    assert_eq!(
        ids,
        [
            "ahrefs-automation",
            "colon-description",
            "flow-list",
            "good-one",
            "dangling",
            "latin1",
            "mcp-patterns",
            "not-yaml"
        ]
    );
    for row in [
        " - colon-description: Use when: the user pastes a stack trace.",
        " - flow-list: Uses a flow list for its tools.",
        " - good-one: A skill with nothing wrong.",
        " - dangling: A readable skill with the id of a broken link before it.",
        " - not-yaml: an unclosed quote",
    ] {
        assert!(description.contains(row), "{row}: {description}");
    }
    assert!(
        stderr.contains("2 skill file(s) are left out and not offered (dangling/SKILL.md, group/good-one/SKILL.md)"),
        "{stderr}"
    );
}

#[test]
fn a_suggested_name_passes_the_rules_it_was_suggested_for() {
    let dir = scratch("collections", "suggested-name");
    copy_dir(
        &collection("broken/ahrefs-automation"),
        &dir.join("ahrefs-automation"),
    );
    let (_, problems) = check(&dir);
    let suggested = problems
        .iter()
        .find_map(|(_, _, m)| m.split("write '").nth(1))
        .and_then(|rest| rest.split('\'').next())
        .expect("a name is suggested")
        .to_owned();
    assert_eq!(suggested, "ahrefs-automation");
    write(
        &dir,
        "ahrefs-automation/SKILL.md",
        &format!("---\nname: {suggested}\ndescription: Automate Ahrefs reports.\n---\n# Ahrefs\n"),
    );
    let (code, problems) = check(&dir);
    assert_eq!((code, problems.len()), (0, 0), "{problems:#?}");
}

#[test]
fn a_body_names_its_folder_so_relative_paths_can_be_followed() {
    let dir = collection("plugins");
    let output = skillgraph_with_input(
        &["play", &path(&dir)],
        "{\"read\": \"write-docs\"}\n{\"prompt\": true}\n",
    );
    let answers: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("an answer line"))
        .collect();
    let prompt = answers[1]["prompt"]
        .as_str()
        .expect("the prompt")
        .to_owned();
    let folder = std::fs::canonicalize(dir.join("plugins/docs-kit/skills/write-docs"))
        .expect("the skill's folder");
    let line = format!(
        "Skill folder: {} (relative paths in this skill start there)",
        folder.display()
    );
    assert!(
        prompt.starts_with(&format!(
            "<skill_content name=\"write-docs\">{line}\n\n# Write docs"
        )),
        "{prompt}"
    );
    assert!(folder.join("references/style.md").is_file());
    assert!(folder.join("scripts/lint.sh").is_file());
}

#[test]
fn a_root_with_no_skill_below_it_names_where_it_looked() {
    let dir = scratch("collections", "no-skill");
    write(&dir, "docs/guide/README.md", "# Guide\n");
    write(&dir, "src/main.py", "print()\n");
    let output = skillgraph(&["check", &path(&dir)]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("error[no-map-file]")
            && stderr.contains("no skill (a folder holding a `SKILL.md`) to a depth of 4 below it; looked in `.`, `docs`, `docs/guide`, `src`"),
        "{stderr}"
    );
}

#[test]
fn a_large_catalog_keeps_read_skill_within_its_budget() {
    let dir = scratch("collections", "large");
    for n in 0..180 {
        let id = format!("skill-{n:03}");
        let description = format!("{id} does one careful thing. ").repeat(12);
        write(
            &dir,
            &format!("skills/{id}/SKILL.md"),
            &format!("---\nname: {id}\ndescription: {description}\n---\nBody.\n"),
        );
    }
    let (ids, description, _) = offered(&dir, &[]);
    assert_eq!(ids.len(), 180, "the schema holds every id");
    let length = description.chars().count();
    assert!(length <= 16_000, "{length}");
    assert!(description.contains("list_skills answers with every skill and its description"));
    assert!(description.contains(" - skill-000: skill-000 does one careful thing."));
    let (_, small, _) = offered(&dir, &["--catalog-budget", "4000"]);
    assert!(small.chars().count() <= 4_000, "{}", small.chars().count());
}

#[test]
fn check_on_a_broken_collection_ends_quietly_on_a_closed_pipe() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .args(["check", &path(&collection("broken"))])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("the command ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(1), "{stderr}");
}
