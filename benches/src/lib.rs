//! The workloads of `shared/bench/WORKLOADS.md`, built exactly as defined, so
//! that the criterion benches and the `workloads` binary time the same work.

use serde_json::{Value, json};
use skill_core::{GuardView, Menu, MenuCandidate, ReadSkillOffer, Skill, Step, ToolDecl};

/// The W1 guard: risk level, score and status.
pub fn w1_guard() -> Value {
    json!({"riskLevel": {"in": ["high", "critical"]}, "score": {"gte": 0.8}, "status": {"eq": "success"}})
}

/// The W1c guard: hop keys only.
pub fn w1c_guard() -> Value {
    json!({"toolName": {"eq": "lookup_order"}, "iteration": {"lte": 5}})
}

/// The W1 view of one result: `lookup_order`, status `success`, iteration
/// 3, user message `m`, cursor on `triage`.
pub fn w1_view(result: &str) -> GuardView<'_> {
    GuardView::new("lookup_order", result)
        .with_status("success")
        .with_iteration(3.0)
        .with_user_message("m")
        .with_current_skill("triage")
}

/// The 1,000 W1 tool results (about 185 bytes each), as compact JSON text
/// with numbers printed as JavaScript prints them.
pub fn w1_results() -> Vec<String> {
    (0..1000u32)
        .map(|i| {
            let score = f64::from(i % 10) / 10.0;
            json!({
                "orderId": 4412 + i,
                "riskLevel": if i % 3 != 0 { "high" } else { "low" },
                "score": score,
                "customer": {"name": "Ada Lovelace", "tier": "gold", "history": [1, 2, 3, 4, 5]},
                "note": "x".repeat(60),
            })
            .to_string()
            .replace("\"score\":0.0", "\"score\":0")
        })
        .collect()
}

/// The W2 catalog of `n` skills: `skill_{i}`, described, body `body`,
/// `llm-activated`, surface mode `auto`.
pub fn w2_skills(n: usize) -> Vec<Skill> {
    (0..n)
        .map(|i| {
            let mut skill = Skill::new(format!("skill_{i}"));
            skill.description = Some(format!("Skill number {i} handles case {i}"));
            skill.body = "body".to_owned();
            skill
        })
        .collect()
}

/// The W2 offer over `n` skills: a third grantable, a tenth hidden, the
/// cursor on `skill_5`, a menu of `skill_3` (0.6) and `skill_6` (0.3).
pub fn w2_offer(n: usize) -> ReadSkillOffer {
    let ids = |keep: fn(usize) -> bool| {
        (0..n)
            .filter(|i| keep(*i))
            .map(|i| format!("skill_{i}"))
            .collect::<Vec<_>>()
    };
    ReadSkillOffer {
        grantable: Some(ids(|i| i % 3 == 0)),
        hidden_ids: ids(|i| i % 10 == 1),
        cursor_id: Some("skill_5".to_owned()),
        menu: Some(Menu {
            candidates: vec![
                MenuCandidate {
                    id: "skill_3".to_owned(),
                    relevance: Some(0.6),
                },
                MenuCandidate {
                    id: "skill_6".to_owned(),
                    relevance: Some(0.3),
                },
            ],
            cursor_id: None,
            stay: false,
        }),
        ..ReadSkillOffer::default()
    }
}

/// The W3 catalog of `n` skills with two steps each, over kinds `kind/0` to
/// `kind/49`, each skill consuming one kind nothing produces and each second
/// step one more.
pub fn w3_skills(n: usize) -> Vec<Skill> {
    let kind = |j: usize| format!("kind/{}", j % 50);
    (0..n)
        .map(|i| {
            let mut skill = Skill::new(format!("s{i}"));
            skill.tools = vec![
                ToolDecl::new(format!("t{i}a")),
                ToolDecl {
                    name: format!("t{i}b"),
                    wants: [("x".to_owned(), kind(i + 7))].into(),
                },
            ];
            skill.produces = Some(vec![kind(i)]);
            skill.consumes = Some(vec![kind(i * 7), format!("missing/{}", i % 5)]);
            skill.steps = Some(vec![
                Step {
                    tool: format!("t{i}a"),
                    note: "n".to_owned(),
                    produces: Some(vec![kind(i + 1)]),
                    consumes: None,
                },
                Step {
                    tool: format!("t{i}b"),
                    note: "n".to_owned(),
                    produces: None,
                    consumes: Some(vec![kind(i + 2), format!("gone/{i}")]),
                },
            ]);
            skill
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_about_185_bytes_and_print_numbers_like_javascript() {
        let results = w1_results();
        assert_eq!(results.len(), 1000);
        assert!(results[0].contains("\"score\":0,"), "{}", results[0]);
        assert!(results[1].contains("\"score\":0.1,"), "{}", results[1]);
        let mean = results.iter().map(String::len).sum::<usize>() / results.len();
        assert!((175..=195).contains(&mean), "{mean}");
    }

    #[test]
    fn w2_hides_a_tenth_and_grants_a_third() {
        let offer = w2_offer(30);
        assert_eq!(offer.grantable.as_ref().map(Vec::len), Some(10));
        assert_eq!(offer.hidden_ids.len(), 3);
        assert_eq!(
            w2_skills(30)[7].description.as_deref(),
            Some("Skill number 7 handles case 7")
        );
    }

    #[test]
    fn w3_warns_twice_per_skill() {
        let skills = w3_skills(100);
        assert_eq!(skill_checkup::check_vocabularies(&skills).len(), 200);
    }
}
