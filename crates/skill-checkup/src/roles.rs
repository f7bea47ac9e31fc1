//! The check-up of a map's `roles` (SPEC §14.8): what each role hides.

use skill_core::SkillMap;

use crate::code::ProblemCode;
use crate::problem::Problem;

/// `role-unknown-skill` for each id a role hides that is no skill of the
/// map (a misspelt id hides nothing, and the skill meant stays shown), and
/// `role-hides-entry` for each entry a role hides.
pub(crate) fn roles(map: &SkillMap) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (role, declared) in &map.roles {
        for id in &declared.hide {
            if map.skill(id).is_none() {
                let message = format!(
                    "Role \"{role}\" hides \"{id}\", which is not a skill of this map, so it hides nothing; \
                     a misspelt id leaves the skill meant shown to the role. Correct the id, or remove it from \
                     the role's `hide` list."
                );
                problems.push(Problem::new(ProblemCode::RoleUnknownSkill, message).about_skill(id));
            } else if map.entries.contains(id) {
                let rest: Vec<&str> = map
                    .entries
                    .iter()
                    .filter(|entry| !declared.hide.contains(entry))
                    .map(String::as_str)
                    .collect();
                let start = match rest.first() {
                    Some(first) => format!("start on \"{first}\" instead"),
                    None => "start on no skill, since the role hides every entry".to_owned(),
                };
                let message = format!(
                    "Role \"{role}\" hides the entry \"{id}\": its principals {start}. If that is meant, put \
                     an entry the role shows first; else remove \"{id}\" from the role's `hide` list."
                );
                problems.push(Problem::new(ProblemCode::RoleHidesEntry, message).about_skill(id));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::check_map;
    use crate::problem::Severity;

    fn map(roles: serde_json::Value) -> SkillMap {
        let map = json!({
            "skills": [{ "id": "triage" }, { "id": "payroll" }, { "id": "ledger" }],
            "entries": ["triage", "ledger"],
            "routes": [{ "from": "triage", "to": "payroll" }],
            "roles": roles
        });
        match serde_json::from_value(map) {
            Ok(map) => map,
            Err(error) => panic!("the map reads: {error}"),
        }
    }

    fn codes(map: &SkillMap) -> Vec<ProblemCode> {
        roles(map).iter().map(Problem::code).collect()
    }

    #[test]
    fn a_role_hiding_an_id_the_map_lacks_is_an_error() {
        let misspelt = map(json!({ "support": { "hide": ["payrol"] } }));
        assert_eq!(codes(&misspelt), [ProblemCode::RoleUnknownSkill]);
        let problem = &roles(&misspelt)[0];
        assert_eq!(problem.severity(), Severity::Error);
        assert!(problem.to_string().contains("\"payrol\""), "{problem}");
        assert!(!check_map(&misspelt).ok());
        let spelt = map(json!({ "support": { "hide": ["payroll"] } }));
        assert!(codes(&spelt).is_empty());
        assert!(check_map(&spelt).ok());
    }

    #[test]
    fn a_role_hiding_an_entry_is_warned_of_naming_where_its_runs_start() {
        let first = map(json!({ "guest": { "hide": ["triage"] } }));
        assert_eq!(codes(&first), [ProblemCode::RoleHidesEntry]);
        let problem = &roles(&first)[0];
        assert_eq!(problem.severity(), Severity::Warning);
        assert!(
            problem.to_string().contains("start on \"ledger\""),
            "{problem}"
        );
        let every = map(json!({ "guest": { "hide": ["triage", "ledger"] } }));
        assert!(roles(&every)[1].to_string().contains("start on no skill"));
        assert!(codes(&map(json!({ "guest": { "hide": ["payroll"] } }))).is_empty());
    }
}
