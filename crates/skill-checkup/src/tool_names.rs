//! Tool names hosts refuse (`unusable-tool-name`): a skill's tool must be
//! sent to the model under a name Anthropic, OpenAI and MCP all accept, or
//! the host cannot offer it at all.

use skill_core::{IdHashSet, Skill, validate_tool_name};

use crate::code::ProblemCode;
use crate::problem::Problem;

/// One error per skill of flavor `skill` and per distinct tool name it
/// carries that breaks `^[a-zA-Z0-9_-]{1,64}$`, skills in catalog order and
/// tools in declaration order, each naming the nearest accepted spelling.
pub(crate) fn unusable_tool_names(skills: &[Skill]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for skill in skills.iter().filter(|s| s.flavor.is_skill()) {
        let mut seen = IdHashSet::default();
        for tool in skill.tools.iter().filter(|t| seen.insert(t.name.as_str())) {
            let Err(refused) = validate_tool_name(&tool.name) else {
                continue;
            };
            let message = format!(
                "Skill \"{}\" carries tool \"{}\", a name hosts refuse: {}. Anthropic, OpenAI and MCP accept \
                 only 1 to 64 ASCII letters, digits, `_` or `-`, so no host can offer this tool to the model and \
                 the skill's guidance about it can never be followed. Rename the tool (for instance to \"{}\") \
                 here, in the host that runs it, and in every step and route that names it.",
                skill.id, tool.name, refused.fault, refused.suggestion
            );
            problems.push(
                Problem::new(ProblemCode::UnusableToolName, message)
                    .about_skill(&skill.id)
                    .about_tool(&tool.name),
            );
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(skills: serde_json::Value) -> Vec<(String, String, String)> {
        let skills: Vec<Skill> = serde_json::from_value(skills).unwrap();
        unusable_tool_names(&skills)
            .iter()
            .map(|p| {
                assert_eq!(p.code(), ProblemCode::UnusableToolName);
                assert!(p.is_error());
                (
                    p.skill().unwrap_or_default().to_owned(),
                    p.tool().unwrap_or_default().to_owned(),
                    p.message().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn a_name_hosts_refuse_is_an_error_naming_a_spelling_they_accept() {
        let problems = found(json!([
            {"id": "ops", "tools": [{"name": "lookup_order"}, {"name": "git status"}, {"name": "git status"}]},
            {"id": "files", "tools": [{"name": ""}, {"name": "Bash(git:*)"}]}
        ]));
        let located: Vec<_> = problems
            .iter()
            .map(|(skill, tool, _)| (skill.as_str(), tool.as_str()))
            .collect();
        // Each refused name once per skill, in declaration order.
        assert_eq!(
            located,
            [
                ("ops", "git status"),
                ("files", ""),
                ("files", "Bash(git:*)")
            ]
        );
        let (_, _, message) = &problems[0];
        assert!(
            message.contains("\"git status\", a name hosts refuse: it contains ' '"),
            "{message}"
        );
        assert!(
            message.contains("for instance to \"git_status\""),
            "{message}"
        );
        assert!(problems[1].2.contains("it is empty"), "{}", problems[1].2);
        assert!(problems[1].2.contains("\"tool\""), "{}", problems[1].2);
        assert!(
            problems[2].2.contains("\"Bash_git___\""),
            "{}",
            problems[2].2
        );
    }

    #[test]
    fn accepted_names_and_other_flavors_are_not_judged() {
        let long = "a".repeat(64);
        assert!(
            found(json!([
                {"id": "ops", "tools": [{"name": "lookup-order_2"}, {"name": long}]},
                {"id": "note", "flavor": "steering", "tools": [{"name": "not a name"}]}
            ]))
            .is_empty()
        );
        let too_long = "a".repeat(65);
        let problems = found(json!([{"id": "ops", "tools": [{"name": too_long}]}]));
        assert!(
            problems[0].2.contains("65 characters long"),
            "{}",
            problems[0].2
        );
    }
}
