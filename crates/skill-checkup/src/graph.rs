//! The graph check-up: every problem of a skill map at once — names that
//! lead nowhere, guards that are refused or can never pass, routes that
//! shadow each other, skills nothing can reach, start rules that misroute —
//! together with the authoring, vocabulary and delivery checks on the skills
//! as the map activates them.

use skill_core::{IdHashSet, SkillMap};
use skill_guard::{CompileError, Guard, Preconditions, RouteGuards, plain_caption, unsatisfiable};

use crate::code::ProblemCode;
use crate::foreign_tool::body_foreign_tools;
use crate::model_edge::model_edge_only;
use crate::problem::{Checkup, Problem};
use crate::problems_of;
use crate::start_rules::start_rules;
use crate::tool_names::unusable_tool_names;
use crate::witnesses::{Routes, ambiguous_routes, dead_skills, redundant_conditions};

/// Every problem of `map`, in this order: names, entries, guards,
/// conditions that never decide their guard, self-loops, routes one tool
/// result fires together (with that result), reachability, dead skills,
/// skills only model edges lead into, tool names hosts
/// refuse, tools a body names that other skills carry, what can be proven
/// about the start rules (SPEC §13.4), then the skill checks (authoring,
/// vocabularies, delivery) over the skills with the routing the map gives
/// them.
///
/// ```
/// use skill_checkup::{check_map, ProblemCode};
/// use skill_core::SkillMap;
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage" }, { "id": "refunds" }],
///     "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "score": { "gt": 5, "lt": 3 } } }]
/// }"#)?;
/// let checkup = check_map(&map);
/// assert!(!checkup.ok());
/// assert_eq!(checkup.problems[0].code(), ProblemCode::GuardUnsatisfiable);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn check_map(map: &SkillMap) -> Checkup {
    let compiled: Vec<Option<Result<Guard, CompileError>>> = map
        .routes
        .iter()
        .map(|route| route.guard.as_ref().map(Guard::compile))
        .collect();
    let compiled: Vec<Compiled<'_>> = compiled
        .iter()
        .map(|guard| guard.as_ref().map(Result::as_ref))
        .collect();
    check(map, &compiled)
}

/// [`check_map`] for a map whose route guards are compiled already (every
/// one of them compiled: a map with a refused guard is checked with
/// [`check_map`], which reports each refusal). `guards` must be compiled
/// from `map` (`RouteGuards::compile(&map)`); no guard is compiled again.
///
/// ```
/// use skill_core::SkillMap;
/// use skill_guard::RouteGuards;
/// use skill_checkup::{check_map, check_compiled_map};
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage" }, { "id": "refunds" }], "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "amount": { "gte": 100 } } }]
/// }"#)?;
/// let guards = RouteGuards::compile(&map)?;
/// assert_eq!(check_compiled_map(&map, &guards), check_map(&map));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check_compiled_map(map: &SkillMap, guards: &RouteGuards) -> Checkup {
    let compiled: Vec<Compiled<'_>> = map
        .routes
        .iter()
        .enumerate()
        .map(|(index, route)| route.guard.as_ref().and(guards.guard(index)).map(Ok))
        .collect();
    check(map, &compiled)
}

/// One route's guard as the checks see it: none, compiled, or refused.
pub(crate) type Compiled<'g> = Option<Result<&'g Guard, &'g CompileError>>;

fn check(map: &SkillMap, compiled: &[Compiled<'_>]) -> Checkup {
    let mut problems = Vec::new();
    let judged = Routes::new(map, compiled);
    names(map, &mut problems);
    guards(map, compiled, &mut problems);
    problems.extend(redundant_conditions(&judged));
    routes(map, &mut problems);
    problems.extend(ambiguous_routes(&judged));
    reachability(map, &mut problems);
    problems.extend(dead_skills(&judged));
    problems.extend(model_edge_only(map));
    problems.extend(unusable_tool_names(&map.skills));
    problems.extend(body_foreign_tools(&map.skills));
    problems.extend(start_rules(map));
    problems.extend(crate::roles::roles(map));
    problems.extend(crate::procedures::procedures(map));
    problems.extend(problems_of(&map.skills_as_routed()));
    Checkup::from_problems(problems)
}

fn names(map: &SkillMap, problems: &mut Vec<Problem>) {
    let known: IdHashSet<&str> = map.skills.iter().map(|s| s.id.as_str()).collect();
    for entry in map.entries.iter().filter(|e| !known.contains(e.as_str())) {
        let message = format!(
            "Entry \"{entry}\" is not a skill of this map, so a run could start nowhere. Add a skill with id \
             \"{entry}\", or correct the entry to one of: {}.",
            listed(&map.skills.iter().map(|s| s.id.as_str()).collect::<Vec<_>>())
        );
        problems.push(Problem::new(ProblemCode::UnknownSkill, message).about_skill(entry));
    }
    for route in &map.routes {
        for (end, id) in [("source", &route.from), ("target", &route.to)] {
            if known.contains(id.as_str()) {
                continue;
            }
            let message = format!(
                "Route {} names \"{id}\" as its {end}, which is not a skill of this map, so the route can never \
                 be taken. Add the skill, or correct the route.",
                route.name()
            );
            problems.push(
                Problem::new(ProblemCode::UnknownSkill, message)
                    .about_route(&route.from, &route.to),
            );
        }
    }
    // A plain catalog (no entries, no routes) needs no entry: every skill is open.
    if !map.skills.is_empty() && map.entries.is_empty() && !map.is_plain_catalog() {
        let message = "The map has routes but no entry, so a run has no skill to start in. Add `entries` naming \
                       the skill where a run begins (for instance the triage skill).";
        problems.push(Problem::new(ProblemCode::NoEntry, message));
    }
}

fn guards(map: &SkillMap, compiled: &[Compiled<'_>], problems: &mut Vec<Problem>) {
    for (route, guard) in map.routes.iter().zip(compiled) {
        let Some(guard) = guard else {
            continue;
        };
        match guard {
            Err(error) => {
                let message = format!(
                    "Route {}'s guard is refused ({}): {error}.",
                    route.name(),
                    error.code()
                );
                problems.push(
                    Problem::new(ProblemCode::GuardRefused, message)
                        .about_route(&route.from, &route.to),
                );
            }
            Ok(guard) => {
                let pre = Preconditions {
                    on_tool_statuses: route.on_tool_status.as_deref(),
                    on_tool_return_exact: route.on_tool_return.as_deref(),
                };
                if let Some(proof) = unsatisfiable(guard.data(), &pre) {
                    let message = format!(
                        "Route {} can never fire: its guard ({}) can never pass, because {proof} ({}, on key \
                         {}). Correct the condition or the route's preconditions, or drop the route.",
                        route.name(),
                        plain_caption(guard.data()),
                        proof.code(),
                        proof.key()
                    );
                    problems.push(
                        Problem::new(ProblemCode::GuardUnsatisfiable, message)
                            .about_route(&route.from, &route.to),
                    );
                }
            }
        }
    }
}

fn routes(map: &SkillMap, problems: &mut Vec<Problem>) {
    for route in map.routes.iter().filter(|r| r.from == r.to) {
        let message = format!(
            "Route {} leads from the skill to itself. The cursor is already there, so the route moves nothing; \
             drop it (staying needs no route).",
            route.name()
        );
        problems
            .push(Problem::new(ProblemCode::SelfLoop, message).about_route(&route.from, &route.to));
    }
}

fn reachability(map: &SkillMap, problems: &mut Vec<Problem>) {
    for skill in map.unreachable_skills() {
        let message = format!(
            "Skill \"{}\" has trigger '{}' and no entry or route leads to it, so the graph never activates it and \
             read_skill does not either (only 'llm-activated' skills are open). Add a route or an entry to it, or \
             make it 'llm-activated'.",
            skill.id, skill.trigger
        );
        problems.push(Problem::new(ProblemCode::UnreachableSkill, message).about_skill(&skill.id));
    }
}

/// Ids as a fix lists the choices: comma-separated, or a note that there
/// are none.
pub(crate) fn listed(ids: &[&str]) -> String {
    if ids.is_empty() {
        "(the map has no skills)".to_owned()
    } else {
        ids.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A problem's code and where it points: skill, from, to.
    type Located = (&'static str, Option<String>, Option<String>, Option<String>);

    fn codes(map: serde_json::Value) -> Vec<Located> {
        let map: SkillMap = serde_json::from_value(map).unwrap();
        check_map(&map)
            .problems
            .into_iter()
            .map(|p| {
                (
                    p.code().as_str(),
                    p.skill().map(str::to_owned),
                    p.route().map(|(from, _)| from.to_owned()),
                    p.route().map(|(_, to)| to.to_owned()),
                )
            })
            .collect()
    }

    fn s(text: &str) -> Option<String> {
        Some(text.to_owned())
    }

    #[test]
    fn every_problem_of_a_broken_map_is_reported() {
        let found = codes(json!({
            "skills": [{"id": "triage"}, {"id": "refunds"}, {"id": "audit", "trigger": "rule"},
                       {"id": "vault", "trigger": "rule", "surface_mode": "tool-only", "body": "b"}],
            "entries": ["triage", "ghost"],
            "routes": [
                {"from": "triage", "to": "refunds", "guard": {"status": {"eq": "ok"}}},
                {"from": "triage", "to": "vault", "guard": {}},
                {"from": "triage", "to": "nowhere"},
                {"from": "refunds", "to": "refunds"},
                {"from": "triage", "to": "vault", "on_tool_return": "lookup"}
            ]
        }));
        assert_eq!(
            found,
            [
                ("unknown-skill", s("ghost"), None, None),
                ("unknown-skill", None, s("triage"), s("nowhere")),
                ("guard-unsatisfiable", None, s("triage"), s("refunds")),
                ("guard-refused", None, s("triage"), s("vault")),
                ("self-loop", None, s("refunds"), s("refunds")),
                ("unreachable-skill", s("audit"), None, None),
                ("dead-skill", s("refunds"), None, None),
                ("tool-only-delivered-nowhere", None, None, None),
            ]
        );
    }

    #[test]
    fn exclusive_preconditions_are_not_ambiguous() {
        let found = codes(json!({
            "skills": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}],
            "entries": ["a"],
            "routes": [
                {"from": "a", "to": "b", "on_tool_return": "x"},
                {"from": "a", "to": "c", "on_tool_return": "y"},
                {"from": "b", "to": "c", "on_tool_status": ["success"]},
                {"from": "b", "to": "d", "on_tool_status": ["failure", "denied"]}
            ]
        }));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn routes_are_ambiguous_only_when_one_result_fires_both() {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}],
            "entries": ["a"],
            "routes": [
                {"from": "a", "to": "b", "guard": {"score": {"gte": 5}}},
                {"from": "a", "to": "c", "guard": {"score": {"lt": 5}}},
                {"from": "a", "to": "d", "guard": {"tier": {"eq": "gold"}}}
            ]
        }))
        .unwrap();
        let checkup = check_map(&map);
        let ambiguous: Vec<&Problem> = checkup
            .problems
            .iter()
            .filter(|p| p.code() == ProblemCode::AmbiguousRoutes)
            .collect();
        assert_eq!(ambiguous.len(), 1, "{:?}", checkup.problems);
        assert_eq!(ambiguous[0].route(), Some(("a", "d")));
        let shown = ambiguous[0].witness().expect("the result that fires both");
        let both =
            skill_guard::Guard::compile(&json!({"score": {"gte": 5}, "tier": {"eq": "gold"}}));
        assert!(both.unwrap().test(&shown.view()));
        let json = serde_json::to_value(ambiguous[0]).unwrap();
        assert_eq!(json["witness"]["currentSkillId"], "a");
    }

    #[test]
    fn a_condition_that_never_decides_is_named_with_its_cause() {
        let found = check_map(
            &serde_json::from_value(json!({
                "skills": [{"id": "a"}, {"id": "b"}], "entries": ["a"],
                "routes": [{"from": "a", "to": "b", "guard": {"score": {"gt": 5, "gte": 3}}}]
            }))
            .unwrap(),
        );
        assert_eq!(found.problems.len(), 1);
        let problem = &found.problems[0];
        assert_eq!(problem.code(), ProblemCode::RedundantCondition);
        assert!(problem.message().contains("`score ≥ 3`"));
        assert!(problem.message().contains("whatever passes `score > 5`"));
    }

    #[test]
    fn dead_skills_carry_the_chain_of_dead_routes() {
        let found = codes(json!({
            "skills": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "entries": ["a"],
            "routes": [
                {"from": "a", "to": "b", "guard": {"n": {"gt": 1, "lt": 2, "in": [1, 2, "3"]}}},
                {"from": "b", "to": "c", "on_tool_return": "t"}
            ]
        }));
        assert_eq!(
            found,
            [
                ("dead-skill", s("b"), None, None),
                ("dead-skill", s("c"), None, None)
            ]
        );
    }

    #[test]
    fn a_map_with_routes_but_no_entries_says_so() {
        let map =
            json!({"skills": [{"id": "a"}, {"id": "b"}], "routes": [{"from": "a", "to": "b"}]});
        assert_eq!(codes(map)[0].0, "no-entry");
        // A plain catalog (no entries, no routes) starts nowhere and needs no entry.
        assert!(codes(json!({"skills": [{"id": "a"}]})).is_empty());
        assert!(codes(json!({})).is_empty());
    }

    #[test]
    fn unsatisfiable_uses_the_routes_own_preconditions() {
        let found = codes(json!({
            "skills": [{"id": "a"}, {"id": "b"}], "entries": ["a"],
            "routes": [{"from": "a", "to": "b", "on_tool_status": ["failure"], "guard": {"status": {"eq": "success"}}}]
        }));
        assert_eq!(found[0].0, "guard-unsatisfiable");
    }

    #[test]
    fn the_start_rules_are_checked_with_the_map() {
        let map: SkillMap = serde_json::from_value(json!({
            "skills": [{"id": "triage"}, {"id": "refunds"}], "entries": ["triage"],
            "routes": [{"from": "triage", "to": "refunds", "guard": {"amount": {"gte": 100}}}],
            "start": {"rules": [{"use": "ghost", "match": {"keywords": ["refund"]}, "examples": ["a refund"]}]}
        }))
        .unwrap();
        let checkup = check_map(&map);
        let codes: Vec<&str> = checkup.problems.iter().map(|p| p.code().as_str()).collect();
        assert_eq!(codes, ["rule-unknown-skill"]);
        let guards = RouteGuards::compile(&map).unwrap();
        assert_eq!(check_compiled_map(&map, &guards), checkup);
    }

    #[test]
    fn route_targets_are_delivered_by_the_graph() {
        let found = codes(json!({
            "skills": [{"id": "a"}, {"id": "b", "surface_mode": "tool-only", "body": "steps"}],
            "entries": ["a"],
            "routes": [{"from": "a", "to": "b", "on_tool_return": "t"}]
        }));
        assert_eq!(found, [("tool-only-delivered-nowhere", None, None, None)]);
    }
}
