//! Skills only model edges lead into (`model-edge-only`): no entry and no
//! deterministic route moves the cursor onto them, so they are reached only
//! when the model picks one with `read_skill` while the cursor stands on the
//! source of a bare route.

use skill_core::{IdHashMap, IdHashSet, Skill, SkillMap, SurfaceMode};

use crate::code::ProblemCode;
use crate::problem::{Problem, quoted_list};

/// One warning per skill of flavor `skill` (each id once, in catalog order)
/// that no entry and no deterministic route targets but a bare route from
/// another skill of the map does, naming those sources in declaration order.
/// A bare route from the skill to itself is no way in (`self-loop` reports
/// it), and one from an unknown id neither (`unknown-skill` does).
pub(crate) fn model_edge_only(map: &SkillMap) -> Vec<Problem> {
    let known: IdHashSet<&str> = map.skills.iter().map(|s| s.id.as_str()).collect();
    let mut routed: IdHashSet<&str> = map.entries.iter().map(String::as_str).collect();
    let mut sources: IdHashMap<&str, Vec<&str>> = IdHashMap::default();
    for route in &map.routes {
        if route.is_deterministic() {
            routed.insert(route.to.as_str());
        } else if route.from != route.to && known.contains(route.from.as_str()) {
            let from = sources.entry(route.to.as_str()).or_default();
            if !from.contains(&route.from.as_str()) {
                from.push(route.from.as_str());
            }
        }
    }
    let mut seen = IdHashSet::default();
    map.skills
        .iter()
        .filter(|s| s.flavor.is_skill() && seen.insert(s.id.as_str()))
        .filter(|s| !routed.contains(s.id.as_str()))
        .filter_map(|s| Some(problem(s, sources.get(s.id.as_str())?)))
        .collect()
}

fn problem(skill: &Skill, sources: &[&str]) -> Problem {
    let id = skill.id.as_str();
    let (routes, stands_on, those) = if let [one] = sources {
        let one = format!("\"{one}\"");
        (format!("a bare route from {one}"), one, "that route")
    } else {
        (
            format!("bare routes from {}", quoted_list(sources, "and")),
            format!("one of {}", quoted_list(sources, "or")),
            "one of those routes",
        )
    };
    let fix = if skill.surface_mode == SurfaceMode::ToolOnly {
        format!(
            "Its body is `tool-only`, which only a read delivers, so a guard on {those} or an entry would leave \
             the body delivered nowhere: if a model pick is what you mean, leave it; otherwise set its \
             `surface_mode` to `both` first."
        )
    } else {
        format!(
            "If a model pick is what you mean, leave it; to move there on a tool result, give {those} a guard, \
             `on_tool_return` or `on_tool_status`, or make \"{id}\" an entry."
        )
    };
    let message = format!(
        "Skill \"{id}\" is reached only when the model picks it: no entry and no route with a guard, \
         `on_tool_return` or `on_tool_status` leads into it, only {routes}. No tool result ever moves the \
         cursor there; the model has to read it with read_skill while the cursor stands on {stands_on}, never \
         at the start of a run. {fix}"
    );
    Problem::new(ProblemCode::ModelEdgeOnly, message).about_skill(id)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(map: serde_json::Value) -> Vec<(String, String)> {
        let map: SkillMap = serde_json::from_value(map).unwrap();
        model_edge_only(&map)
            .iter()
            .map(|p| {
                assert_eq!(p.code(), ProblemCode::ModelEdgeOnly);
                assert!(!p.is_error());
                (
                    p.skill().unwrap_or_default().to_owned(),
                    p.message().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn a_skill_only_bare_routes_lead_into_names_their_sources() {
        let problems = found(json!({
            "skills": [{"id": "triage"}, {"id": "billing"}, {"id": "reports"}, {"id": "faq"},
                       {"id": "charting", "surface_mode": "tool-only", "body": "Chart the rows."}],
            "entries": ["triage"],
            "routes": [
                {"from": "triage", "to": "billing", "on_tool_return": "lookup_invoice"},
                {"from": "billing", "to": "reports"},
                {"from": "triage", "to": "reports"},
                {"from": "billing", "to": "reports", "label": "again"},
                {"from": "reports", "to": "faq"},
                {"from": "faq", "to": "reports"},
                {"from": "reports", "to": "charting"}
            ]
        }));
        let skills: Vec<&str> = problems.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(skills, ["reports", "faq", "charting"]);
        let (_, reports) = &problems[0];
        assert!(
            reports.contains("only bare routes from \"billing\", \"triage\" and \"faq\"."),
            "{reports}"
        );
        assert!(
            reports.contains("stands on one of \"billing\", \"triage\" or \"faq\","),
            "{reports}"
        );
        let (_, faq) = &problems[1];
        assert!(faq.contains("only a bare route from \"reports\"."), "{faq}");
        assert!(faq.contains("stands on \"reports\","), "{faq}");
        assert!(faq.contains("give that route a guard"), "{faq}");
        assert!(faq.contains("make \"faq\" an entry"), "{faq}");
        assert!(
            reports.contains("give one of those routes a guard"),
            "{reports}"
        );
        // A tool-only body is delivered only by a read: the fix says so.
        let (_, charting) = &problems[2];
        assert!(
            charting.contains("would leave the body delivered nowhere"),
            "{charting}"
        );
        assert!(!charting.contains("an entry."), "{charting}");
    }

    #[test]
    fn an_entry_or_a_deterministic_route_in_is_enough() {
        let problems = found(json!({
            "skills": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}, {"id": "e"}, {"id": "f"},
                       {"id": "g", "flavor": "steering"}],
            "entries": ["a", "c"],
            "routes": [
                {"from": "a", "to": "b"}, {"from": "a", "to": "b", "guard": {"ok": {"eq": true}}},
                {"from": "a", "to": "c"},
                {"from": "a", "to": "d", "on_tool_status": ["success"]}, {"from": "b", "to": "d"},
                {"from": "e", "to": "e"},
                {"from": "ghost", "to": "f"},
                {"from": "a", "to": "g"}
            ]
        }));
        // b and d have a deterministic route in, c is an entry; e's only way
        // in is itself, f's an unknown id; g is not of flavor skill.
        assert!(problems.is_empty(), "{problems:?}");
    }
}
