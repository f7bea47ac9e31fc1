//! The limits of docs/robustness.md, each tried: every bad or huge input
//! gives a clear error or a documented bound, never a hang, a panic or a
//! stack overflow.

// Test scaffolding: a failed setup step should stop the test loudly.
#![allow(clippy::unwrap_used)]

use skillgraph::skill_checkup::check_map;
use skillgraph::skill_core::{GuardView, ReadSkillOffer, Route, Skill, SkillMap};
use skillgraph::skill_guard::{Guard, GuardBuilder};
use skillgraph::skill_tools::{offer_view, read_skill};

#[test]
fn a_tool_result_nested_a_million_levels_deep_reads_without_overflow() {
    let depth = 1_000_000;
    let result = format!(
        "{{\"riskLevel\":\"high\",\"deep\":{}1{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let guard = GuardBuilder::new()
        .eq("riskLevel", "high")
        .ne("deep", 1)
        .compile()
        .unwrap();
    let view = GuardView::new("t", &result);
    assert!(guard.test(&view));
    let evaluation = guard.evaluate(&view);
    assert!(evaluation.verdict);
    assert!(
        evaluation.conditions[1]
            .actual_summary
            .as_text()
            .starts_with("[[[[")
    );
    assert_eq!(
        evaluation.conditions[1]
            .actual_summary
            .as_text()
            .chars()
            .count(),
        80,
        "cut to the summary bound"
    );
}

#[test]
fn a_hundred_megabyte_tool_result_is_read_once() {
    let filler = "x".repeat(100 * 1024 * 1024);
    let result = format!(
        "{{\"note\":\"{filler}\",\"riskLevel\":\"high\",\"copy\":\"{}\"}}",
        &filler[..1000]
    );
    let guard = GuardBuilder::new()
        .eq("riskLevel", "high")
        .gt("note", "w")
        .compile()
        .unwrap();
    let view = GuardView::new("t", &result);
    assert!(guard.test(&view));
    let evaluation = guard.evaluate(&view);
    assert_eq!(
        evaluation.conditions[1].actual_summary,
        format!("{}…", "x".repeat(79))
    );
}

#[test]
fn a_map_with_a_hundred_thousand_skills_is_checked_and_offered() {
    let n = 100_000;
    let mut map = SkillMap::default();
    map.skills = (0..n).map(|i| Skill::new(format!("s{i}"))).collect();
    map.entries = vec!["s0".into()];
    map.routes = (0..n - 1)
        .map(|i| {
            let mut route = Route::new(format!("s{i}"), format!("s{}", i + 1));
            route.on_tool_return = Some("next".into());
            route
        })
        .collect();
    let checkup = check_map(&map);
    assert!(checkup.ok(), "{:?}", checkup.problems.first());
    let offer = map.offer_at(Some("s500"), &["s501".to_owned()], false);
    let view = offer_view(&map.skills, Some(&offer));
    assert_eq!(
        view.reachable.len(),
        1,
        "s0 (the entry) is reachable; s501 is hidden"
    );
    assert_eq!(view.refusable.len(), n - 3);
    let tool = read_skill(&map.skills, Some(&offer)).unwrap();
    assert_eq!(
        tool.input_schema["properties"]["id"]["enum"]
            .as_array()
            .map(Vec::len),
        Some(n)
    );
}

#[test]
fn a_thousand_entry_in_list_is_the_bound() {
    let list: Vec<String> = (0..1000).map(|i| format!("v{i}")).collect();
    let guard = GuardBuilder::new()
        .is_in("tier", list.iter().map(String::as_str))
        .compile()
        .unwrap();
    assert!(guard.test(&GuardView::new("t", r#"{"tier":"v999"}"#)));
    let too_long = GuardBuilder::new()
        .is_in("tier", (0..1001).map(|i| i as u32))
        .compile()
        .unwrap_err();
    assert_eq!(too_long.code(), "list-too-long");
    assert!(too_long.to_string().contains("1001"), "{too_long}");
}

#[test]
fn ids_and_descriptions_in_any_unicode_work_everywhere() {
    let ids = [
        "triage",
        "remboursé",
        "返金",
        "🚚-shipping",
        "ligne\nbrisée",
        "quote\"d|pipe",
        "\u{202e}rtl",
    ];
    let mut map = SkillMap::default();
    map.skills = ids
        .iter()
        .map(|id| {
            let mut skill = Skill::new(*id);
            skill.description = Some(format!("Handles {id} — 🎯 ✓"));
            skill
        })
        .collect();
    map.entries = vec!["triage".into()];
    map.routes = ids[1..]
        .iter()
        .map(|id| Route::new("triage", *id))
        .collect();
    assert!(check_map(&map).ok());
    let offer = map.offer_at(Some("triage"), &["返金".to_owned()], false);
    let text = offer_view(&map.skills, Some(&offer)).render();
    assert!(!text.contains("返金"), "a hidden id is named:\n{text}");
    assert!(text.contains("🚚-shipping"));
    let chart = skillgraph::skill_explain::mermaid(&map);
    assert!(
        chart.contains("ligne brisée") && chart.contains("quote#quot;d#124;pipe"),
        "{chart}"
    );
    let guard = Guard::compile(
        &serde_json::json!({"currentSkillId": {"eq": "remboursé"}, "clé": {"in": ["🎯"]}}),
    )
    .unwrap();
    let view = GuardView::new("t", r#"{"clé":"🎯"}"#).with_current_skill("remboursé");
    assert!(guard.test(&view));
}

#[test]
fn a_map_nested_too_deeply_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("skillgraph-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("deep.json");
    // A guard is any JSON until it is compiled, so the nesting reaches the reader.
    let deep = format!(
        "{{\"skills\": [{{\"id\": \"a\"}}], \"routes\": [{{\"from\": \"a\", \"to\": \"a\", \"guard\": {}1{}}}]}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    std::fs::write(&file, deep).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_skillgraph"))
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("error[bad-json]") && stderr.contains("recursion limit"),
        "{stderr}"
    );
}

#[test]
fn an_empty_catalog_offers_no_tool_and_says_so() {
    assert!(read_skill(&[], Some(&ReadSkillOffer::default())).is_none());
    assert!(check_map(&SkillMap::default()).ok());
}
