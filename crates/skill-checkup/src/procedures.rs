//! The check-up of procedures across a map (SPEC §15.7): what one skill's
//! steps cannot say alone.

use skill_core::SkillMap;

use crate::code::ProblemCode;
use crate::problem::Problem;

/// The session's own tool while a procedure is in progress.
const SKIP_STEP: &str = "skip_step";

/// `steps-never-held` for each stepped skill the cursor can never stand on
/// (no entry, route or start rule leads to it: its steps would never be
/// held); `limit-invalid` for a budget that is no whole number of at least
/// 1, and `steps-exceed-budget` for each procedure longer than the budget;
/// and `skip-step-reserved` for each skill carrying a tool named
/// `skip_step` on a map that declares steps.
pub(crate) fn procedures(map: &SkillMap) -> Vec<Problem> {
    let stepped = |skill: &&skill_core::Skill| skill.steps.as_ref().is_some_and(|s| !s.is_empty());
    let mut problems = Vec::new();
    let led_to = |id: &str| {
        map.entries.iter().any(|entry| entry == id)
            || map.routes.iter().any(|route| route.to == id)
            || map
                .start
                .iter()
                .flat_map(|start| &start.rules)
                .any(|rule| rule.use_skill == id)
    };
    for skill in map.skills.iter().filter(stepped) {
        if !led_to(&skill.id) {
            let message = format!(
                "Skill \"{}\" declares {} step(s), but no entry, route or start rule leads to it, so the cursor never stands on it and its procedure is never held (a read only activates it). Make it an entry, route to it, or give a start rule its id; else drop `steps`.",
                skill.id,
                skill.steps().len()
            );
            problems
                .push(Problem::new(ProblemCode::StepsNeverHeld, message).about_skill(&skill.id));
        }
    }
    if let Some(budget) = &map.budget {
        match (&budget.max_iterations, budget.max_iterations()) {
            (Some(given), None) => {
                let message = format!(
                    "`budget.max_iterations` is {given}, which is no whole number of at least 1, so the map sets no budget; give the most iterations a turn may take, such as 12, or drop `budget`."
                );
                problems.push(Problem::new(ProblemCode::LimitInvalid, message));
            }
            (_, Some(max)) => {
                for skill in map.skills.iter().filter(stepped) {
                    let steps = skill.steps().len();
                    if u64::try_from(steps).is_ok_and(|steps| steps > max) {
                        let message = format!(
                            "Skill \"{}\" declares {steps} steps and `budget.max_iterations` is {max}: its procedure cannot finish in one turn unless steps share iterations. Raise the budget, or split the procedure.",
                            skill.id
                        );
                        problems.push(
                            Problem::new(ProblemCode::StepsExceedBudget, message)
                                .about_skill(&skill.id),
                        );
                    }
                }
            }
            (None, None) => {}
        }
    }
    if let Some(given) = map
        .escalation
        .as_ref()
        .filter(|escalation| escalation.after_refusals().is_none())
        .and_then(|escalation| escalation.after_refusals.as_ref())
    {
        let message = format!(
            "`escalation.after_refusals` is {given}, which is no whole number of at least 0, so the default, 3, holds; give how many refusals in a turn escalate (0: never)."
        );
        problems.push(Problem::new(ProblemCode::LimitInvalid, message));
    }
    if map.skills.iter().any(|skill| stepped(&skill)) {
        for skill in map
            .skills
            .iter()
            .filter(|skill| skill.tool(SKIP_STEP).is_some())
        {
            let message = format!(
                "Skill \"{}\" carries a tool named skip_step, the name the session gives its own tool on a map with steps; rename the tool (serve refuses an upstream tool of that name).",
                skill.id
            );
            problems
                .push(Problem::new(ProblemCode::SkipStepReserved, message).about_skill(&skill.id));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::check_map;

    fn map(edit: impl FnOnce(&mut serde_json::Value)) -> SkillMap {
        let mut map = json!({
            "skills": [
                { "id": "triage", "tools": [{ "name": "lookup_order" }] },
                { "id": "refunds", "tools": [{ "name": "lookup_order" }, { "name": "issue_refund" }],
                  "steps": [{ "tool": "lookup_order", "note": "look it up" },
                            { "tool": "issue_refund", "note": "refund it" }] }
            ],
            "entries": ["triage"],
            "routes": [{ "from": "triage", "to": "refunds", "on_tool_return": "lookup_order" }]
        });
        edit(&mut map);
        match serde_json::from_value(map) {
            Ok(map) => map,
            Err(error) => panic!("the map reads: {error}"),
        }
    }

    fn codes(map: &SkillMap) -> Vec<ProblemCode> {
        procedures(map).iter().map(Problem::code).collect()
    }

    #[test]
    fn steps_no_entry_route_or_start_rule_leads_to_are_never_held() {
        assert!(codes(&map(|_| {})).is_empty());
        assert!(check_map(&map(|_| {})).ok());
        let unled = map(|map| map["routes"] = json!([]));
        assert_eq!(codes(&unled), [ProblemCode::StepsNeverHeld]);
        assert!(
            procedures(&unled)[0]
                .to_string()
                .contains("\"refunds\" declares 2 step(s)")
        );
        let ruled = map(|map| {
            map["routes"] = json!([]);
            map["start"] =
                json!({"rules": [{"use": "refunds", "match": {"keywords": ["refund"]}}]});
        });
        assert!(codes(&ruled).is_empty());
    }

    #[test]
    fn a_budget_is_a_whole_number_of_at_least_one_and_a_longer_procedure_is_warned_of() {
        for invalid in [json!(0), json!(2.5), json!(-3), json!("12")] {
            let refused = map(|map| map["budget"] = json!({"max_iterations": invalid}));
            assert_eq!(codes(&refused), [ProblemCode::LimitInvalid], "{invalid}");
            assert!(
                procedures(&refused)[0]
                    .to_string()
                    .contains("`budget.max_iterations`")
            );
        }
        for invalid in [json!(-1), json!(1.5)] {
            let refused = map(|map| map["escalation"] = json!({"after_refusals": invalid}));
            assert_eq!(codes(&refused), [ProblemCode::LimitInvalid], "{invalid}");
        }
        assert!(codes(&map(|map| map["escalation"] = json!({"after_refusals": 0}))).is_empty());
        let short = map(|map| map["budget"] = json!({"max_iterations": 1}));
        assert_eq!(codes(&short), [ProblemCode::StepsExceedBudget]);
        assert!(check_map(&short).ok(), "a warning");
        assert!(codes(&map(|map| map["budget"] = json!({"max_iterations": 2}))).is_empty());
        assert!(codes(&map(|map| map["budget"] = json!({"max_iterations": 4.0}))).is_empty());
    }

    #[test]
    fn a_tool_named_skip_step_is_reserved_on_a_map_with_steps() {
        let clash = map(|map| map["skills"][0]["tools"] = json!([{ "name": "skip_step" }]));
        assert_eq!(codes(&clash), [ProblemCode::SkipStepReserved]);
        assert!(!check_map(&clash).ok());
        let unstepped = map(|map| {
            map["skills"][0]["tools"] = json!([{ "name": "skip_step" }]);
            map["skills"][1]
                .as_object_mut()
                .map(|skill| skill.remove("steps"));
        });
        assert!(codes(&unstepped).is_empty());
    }
}
