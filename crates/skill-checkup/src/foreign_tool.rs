//! Tools a body names but its skill does not carry (`body-foreign-tool`): a
//! body that says "call `issue_refund`" while another skill carries
//! `issue_refund` tells the model to call a tool it is not offered while
//! this skill is the one active.

use skill_core::{IdHashMap, IdHashSet, Skill};

use crate::code::ProblemCode;
use crate::problem::{Problem, quoted_list};

/// One warning per skill of flavor `skill` and per tool its body names in
/// backticks that it does not carry and another skill of flavor `skill`
/// does: skills in catalog order, tools in the order the body first names
/// them, each naming the skills that carry it.
///
/// A code span names a tool when its text, trimmed, is the tool's name, or
/// the name followed by a call's parentheses (`` `issue_refund(order)` ``).
pub(crate) fn body_foreign_tools(skills: &[Skill]) -> Vec<Problem> {
    let skills: Vec<&Skill> = skills.iter().filter(|s| s.flavor.is_skill()).collect();
    let mut carriers: IdHashMap<&str, Vec<&str>> = IdHashMap::default();
    for skill in &skills {
        for tool in &skill.tools {
            let carried_by = carriers.entry(tool.name.as_str()).or_default();
            if !carried_by.contains(&skill.id.as_str()) {
                carried_by.push(skill.id.as_str());
            }
        }
    }
    let mut problems = Vec::new();
    for skill in &skills {
        let own: IdHashSet<&str> = skill.tools.iter().map(|t| t.name.as_str()).collect();
        let mut named = IdHashSet::default();
        for name in code_spans(&skill.body).into_iter().filter_map(tool_named) {
            if own.contains(name) || !named.insert(name) {
                continue;
            }
            let Some(carried_by) = carriers.get(name) else {
                continue;
            };
            let others: Vec<&str> = carried_by
                .iter()
                .copied()
                .filter(|id| *id != skill.id)
                .collect();
            if !others.is_empty() {
                problems.push(problem(&skill.id, name, &others));
            }
        }
    }
    problems
}

fn problem(id: &str, tool: &str, carried_by: &[&str]) -> Problem {
    let carriers = quoted_list(carried_by, "and");
    let (carriers, it_is) = if carried_by.len() == 1 {
        (format!("skill {carriers} carries"), "it is")
    } else {
        (format!("skills {carriers} carry"), "one of them is")
    };
    let message = format!(
        "Skill \"{id}\"'s body names the tool `{tool}`, which {carriers} and \"{id}\" does not. While \
         \"{id}\" is active the model is told to call a tool it is not offered, unless {it_is} active too. If the \
         skill uses the tool, add it to \"{id}\"'s tools; if the body means to hand over, say to read the skill \
         that carries it first; otherwise drop the name from the body."
    );
    Problem::new(ProblemCode::BodyForeignTool, message)
        .about_skill(id)
        .about_tool(tool)
}

/// The tool name a code span's text stands for: the trimmed text, without
/// a call's parentheses; `None` for an empty span.
fn tool_named(span: &str) -> Option<&str> {
    let text = span.trim();
    let name = match text.strip_suffix(')').and_then(|t| t.split_once('(')) {
        Some((name, _)) => name.trim_end(),
        None => text,
    };
    (!name.is_empty()).then_some(name)
}

/// The text of every code span in `markdown`, in order: a run of backticks
/// opens a span that the next run of exactly as many backticks closes; a run
/// nothing closes is plain text. Linear in the text's length.
fn code_spans(markdown: &str) -> Vec<&str> {
    let runs = backtick_runs(markdown);
    // For each run, the next run of the same length, found in one pass from
    // the end.
    let mut closer = vec![None; runs.len()];
    let mut last_of_length: IdHashMap<usize, usize> = IdHashMap::default();
    for (at, &(_, length)) in runs.iter().enumerate().rev() {
        closer[at] = last_of_length.insert(length, at);
    }
    let mut spans = Vec::new();
    let mut at = 0;
    while let Some(&(start, length)) = runs.get(at) {
        match closer[at] {
            Some(close) => {
                let end = runs[close].0;
                spans.extend(markdown.get(start + length..end));
                at = close + 1;
            }
            None => at += 1,
        }
    }
    spans
}

/// Where each run of backticks starts, and how long it is (in bytes, one
/// per backtick).
fn backtick_runs(markdown: &str) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (at, byte) in markdown.bytes().enumerate() {
        if byte != b'`' {
            continue;
        }
        match runs.last_mut() {
            Some((start, length)) if *start + *length == at => *length += 1,
            _ => runs.push((at, 1)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(skills: serde_json::Value) -> Vec<(String, String, String)> {
        let skills: Vec<Skill> = serde_json::from_value(skills).unwrap();
        body_foreign_tools(&skills)
            .iter()
            .map(|p| {
                assert_eq!(p.code(), ProblemCode::BodyForeignTool);
                assert!(!p.is_error());
                (
                    p.skill().unwrap_or_default().to_owned(),
                    p.tool().unwrap_or_default().to_owned(),
                    p.message().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn spans_open_and_close_with_runs_of_one_length() {
        assert_eq!(code_spans("call `a` then `b`"), ["a", "b"]);
        assert_eq!(code_spans("``a`b`` and `c`"), ["a`b", "c"]);
        assert_eq!(code_spans("an open ` and `x`"), [" and "]);
        assert_eq!(code_spans("``` only ` one"), Vec::<&str>::new());
        assert_eq!(code_spans("é `ü` ``"), ["ü"]);
        assert_eq!(code_spans(""), Vec::<&str>::new());
    }

    #[test]
    fn a_span_names_a_tool_bare_or_called() {
        assert_eq!(tool_named(" refund "), Some("refund"));
        assert_eq!(tool_named("refund(order, 3)"), Some("refund"));
        assert_eq!(tool_named("refund ()"), Some("refund"));
        assert_eq!(tool_named("f(x) + 1"), Some("f(x) + 1"));
        assert_eq!(tool_named("  "), None);
        assert_eq!(tool_named("(x)"), None);
    }

    #[test]
    fn a_body_naming_another_skills_tool_is_warned_about() {
        let problems = found(json!([
            {"id": "triage", "tools": [{"name": "lookup_order"}],
             "body": "Look it up with `lookup_order`, then `issue_refund(order)`; `issue_refund` again, and `chart`."},
            {"id": "refunds", "tools": [{"name": "issue_refund"}], "body": "Call `issue_refund`."},
            {"id": "audit", "tools": [{"name": "issue_refund"}, {"name": "lookup_order"}]},
            {"id": "charting", "flavor": "steering", "tools": [{"name": "chart"}]}
        ]));
        let located: Vec<_> = problems
            .iter()
            .map(|(skill, tool, _)| (skill.as_str(), tool.as_str()))
            .collect();
        // Each tool once per body; a steering's tools are not looked at.
        assert_eq!(located, [("triage", "issue_refund")]);
        let message = &problems[0].2;
        assert!(
            message.contains("which skills \"refunds\" and \"audit\" carry"),
            "{message}"
        );
        assert!(
            message.contains("unless one of them is active too"),
            "{message}"
        );
        assert!(
            message.contains("add it to \"triage\"'s tools"),
            "{message}"
        );
    }

    #[test]
    fn own_tools_unknown_names_and_plain_words_are_not() {
        let problems = found(json!([
            {"id": "triage", "tools": [{"name": "lookup_order"}],
             "body": "Use `lookup_order`, then mention issue_refund in prose, and `refund_all`."},
            {"id": "refunds", "tools": [{"name": "issue_refund"}, {"name": "lookup_order"}],
             "body": "Use `lookup_order` and ``issue_refund``."}
        ]));
        assert!(problems.is_empty(), "{problems:?}");
        // One carrier is named alone.
        let twins = found(json!([
            {"id": "a", "tools": [{"name": "t"}]},
            {"id": "b", "body": "Run `t`."}
        ]));
        assert_eq!(twins.len(), 1);
        assert!(
            twins[0].2.contains("which skill \"a\" carries"),
            "{}",
            twins[0].2
        );
        assert!(
            twins[0].2.contains("unless it is active too"),
            "{}",
            twins[0].2
        );
    }
}
