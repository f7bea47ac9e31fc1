//! The workloads of `shared/bench/WORKLOADS.md`, built exactly as defined, so
//! that the criterion benches and the `workloads` binary time the same work.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use skill_core::{
    GuardView, Menu, MenuCandidate, ReadSkillOffer, Route, Skill, SkillMap, Step, ToolDecl,
    ToolResult,
};
use skill_session::{Graph, Posture, Session};
use skill_tools::HostFormat;

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

/// The W5 map: the W3 catalog of `n` skills, entry `s0`, and a guarded
/// route `s0 → s{i}` for every i ≥ 1 (a route `s0 → s0` would move nowhere)
/// with guard `{"k{i % 50}": {"gte": i, "lt": i + 10}}`.
pub fn w5_map(n: usize) -> SkillMap {
    let routes = (1..n)
        .map(|i| {
            let mut route = Route::new("s0", format!("s{i}"));
            route.guard = Some(json!({ format!("k{}", i % 50): {"gte": i, "lt": i + 10} }));
            route
        })
        .collect();
    SkillMap {
        skills: w3_skills(n),
        entries: vec!["s0".to_owned()],
        routes,
    }
}

/// The W4 graph: `examples/support-desk`, loaded from its folder.
///
/// # Panics
///
/// When the example does not load or its guards do not compile.
pub fn w4_graph() -> Arc<Graph> {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-desk");
    let loaded = skillgraph::load(&folder).expect("examples/support-desk loads");
    Arc::new(Graph::new(loaded.map).expect("the support-desk guards compile"))
}

/// The W4_1000 graph: skills `skill_{i}` for i in 0..1000 (each carrying
/// tool `t{i}`), entry `skill_0`, and for every i ≥ 1 a route
/// `skill_0 → skill_{i}` on tool `t{i}` guarded by `{"score": {"gte": i / 1000}}`.
///
/// # Panics
///
/// Never: the guards compile.
pub fn w4_1000_graph() -> Arc<Graph> {
    let mut skills = w2_skills(1000);
    for (i, skill) in skills.iter_mut().enumerate() {
        skill.tools = vec![ToolDecl::new(format!("t{i}"))];
    }
    let routes = (1..1000)
        .map(|i| {
            let mut route = Route::new("skill_0", format!("skill_{i}"));
            route.on_tool_return = Some(format!("t{i}"));
            route.guard = Some(json!({"score": {"gte": f64::from(i) / 1000.0}}));
            route
        })
        .collect();
    let map = SkillMap {
        skills,
        entries: vec!["skill_0".to_owned()],
        routes,
    };
    Arc::new(Graph::new(map).expect("the W4_1000 guards compile"))
}

/// The W4 results, in call order: `lookup_order` (the W1 shape, riskLevel
/// `high`, amount 240, status `success`), `lookup_invoice` and
/// `track_parcel`, under the given tool names.
pub fn w4_results(tools: [&str; 3]) -> [ToolResult; 3] {
    let order = json!({
        "orderId": 4412,
        "riskLevel": "high",
        "score": 0.9,
        "amount": 240,
        "customer": {"name": "Ada Lovelace", "tier": "gold", "history": [1, 2, 3, 4, 5]},
        "note": "x".repeat(60),
    });
    let result = |tool: &str, text: String, status: Option<&str>| ToolResult {
        tool_name: tool.to_owned(),
        result: text,
        status: status.map(str::to_owned),
    };
    [
        result(tools[0], order.to_string(), Some("success")),
        result(
            tools[1],
            json!({"invoiceId": 981, "total": 240}).to_string(),
            None,
        ),
        result(
            tools[2],
            json!({"parcel": "JD0142", "eta": "2 days"}).to_string(),
            None,
        ),
    ]
}

/// A fresh W4 session: assist, nothing hidden, a turn begun, the cursor on
/// the entry.
pub fn w4_session(graph: &Arc<Graph>) -> Session {
    let mut session = Session::new(Arc::clone(graph), Posture::Assist, Vec::new());
    session.begin_turn("refund order 4412, it arrived broken", None);
    session
}

/// One W4 iteration: `tools()` rendered for Anthropic, the three results
/// observed, then `end_iteration`.
pub fn w4_iteration(session: &mut Session, results: &[ToolResult; 3]) -> usize {
    let rendered: Vec<Value> = session
        .tools()
        .iter()
        .filter_map(|tool| tool.to_host(HostFormat::Anthropic).ok())
        .collect();
    for result in results {
        session.observe(result.clone());
    }
    let moved = session.end_iteration();
    rendered.len() + moved.guards_closed.len()
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

    #[test]
    fn w5_routes_from_s0_to_every_other_skill_and_each_guard_has_a_witness() {
        let map = w5_map(100);
        assert_eq!(map.routes.len(), 99);
        assert_eq!(
            map.routes[50].guard,
            Some(json!({"k1": {"gte": 51, "lt": 61}}))
        );
        let checkup = skill_checkup::check_map(&map);
        assert!(checkup.ok(), "{checkup:?}");
        // The W3 warnings, and one ambiguous-routes warning per later route
        // (each shares a result with an earlier one): every guard was judged
        // jointly, none found dead.
        let count = |code: &str| {
            checkup
                .problems
                .iter()
                .filter(|p| p.code().to_string() == code)
                .count()
        };
        assert_eq!(count("artifact-kind-unsatisfied"), 200);
        assert_eq!(count("ambiguous-routes"), 98);
        assert_eq!(checkup.problems.len(), 298);
    }

    #[test]
    fn a_w4_iteration_routes_to_refunds_with_the_evidence() {
        let graph = w4_graph();
        let mut session = w4_session(&graph);
        let results = w4_results(["lookup_order", "lookup_invoice", "track_parcel"]);
        assert_eq!(w4_iteration(&mut session, &results), 3);
        assert_eq!(session.cursor(), Some("refunds"));
        let large = w4_1000_graph();
        let mut session = w4_session(&large);
        w4_iteration(&mut session, &w4_results(["t1", "t500", "t999"]));
        assert_eq!(session.cursor(), Some("skill_1"));
    }
}
