//! The workloads of `shared/bench/WORKLOADS.md`, built exactly as defined, so
//! that the criterion benches and the `workloads` binary time the same work.

pub mod serving;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use skill_core::{
    GuardView, Menu, MenuCandidate, ReadSkillOffer, Route, Skill, SkillMap, Start, StartRule, Step,
    ToolDecl, ToolResult,
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
        start: None,
        roles: skill_core::Roles::new(),
        budget: None,
        escalation: None,
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
        start: None,
        roles: skill_core::Roles::new(),
        budget: None,
        escalation: None,
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

/// The syllables of the product names the start rules route on
/// ([`product_name`]): none is an English word, so ordinary prose never
/// holds a name.
const SYLLABLES: [&str; 12] = [
    "zor", "vex", "quil", "dax", "mur", "fen", "tak", "lio", "bri", "nox", "kep", "sul",
];

/// The support topics of the start rules, two phrasings each. The last
/// pair is ordinary English ("in order to", "on account of"): an `all` rule
/// on it matches its first part in [`turn_message`] and misses its second.
const TOPICS: [(&str, &str); 12] = [
    ("refund", "money back"),
    ("invoice", "receipt"),
    ("parcel", "package"),
    ("password", "login"),
    ("subscription", "renewal"),
    ("warranty", "repair"),
    ("cancellation", "termination"),
    ("upgrade", "downgrade"),
    ("delivery", "tracking number"),
    ("coupon", "discount code"),
    ("chargeback", "dispute"),
    ("order", "account"),
];

/// The product name of rule `i`: `i` in base 12, at least three digits,
/// each digit a syllable (`Zorzorzor`, `Vexzorzor`, …), so every index has
/// its own name.
pub fn product_name(i: usize) -> String {
    let mut name = String::new();
    let mut rest = i;
    let mut digits = 0;
    while digits < 3 || rest > 0 {
        name.push_str(SYLLABLES[rest % SYLLABLES.len()]);
        rest /= SYLLABLES.len();
        digits += 1;
    }
    let mut chars = name.chars();
    chars
        .next()
        .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// The start rule `i` of [`start_rules`] and an example it matches.
fn start_rule(i: usize) -> StartRule {
    let name = product_name(i);
    let (a, b) = TOPICS[i % TOPICS.len()];
    let (matcher, example) = match i % 10 {
        // Keywords, 2 to 5 of them.
        0..=3 => {
            let keywords = [
                format!("{a} for my {name}"),
                format!("{name} {a}"),
                format!("{name} {b}"),
                format!("{b} on the {name}"),
                format!("{name}’s {b}"),
            ];
            let count = 2 + (i / 10) % 4;
            (
                json!({ "keywords": &keywords[..count] }),
                format!("Hello, I need help with a {a} for my {name} today."),
            )
        }
        // `i`, word boundaries, alternations.
        4 => (
            json!({
                "regex": format!("\\b(?:{a}|{b})s?\\s+(?:for|on|with)\\s+(?:my\\s+|the\\s+)?{name}\\b"),
                "flags": "i",
            }),
            format!("Is a {b} with the {name} still possible?"),
        ),
        5 => (
            json!({
                "regex": format!("\\b{name}[\\s-]+(?:{a}|{b})(?:s|es)?\\b"),
                "flags": "i",
            }),
            format!("My {name} {a} has not arrived."),
        ),
        // `iu`: non-ASCII alternatives, a property class.
        6 => (
            json!({
                "regex": format!("\\b(?:{a}|{b}|réclamation|rückerstattung)\\s+(?:für|pour|for)\\s+{name}\\b"),
                "flags": "iu",
            }),
            format!("Une réclamation pour {name}, s’il vous plaît."),
        ),
        7 => (
            json!({
                "regex": format!("\\b{name}\\s*[-–#]\\s*\\p{{Lu}}{{2}}\\d{{2,4}}\\b"),
                "flags": "iu",
            }),
            format!("The {name} – KX42 came without its cable."),
        ),
        // `all`: the topic's words and the name; then also a number.
        8 => (
            json!({ "all": [
                { "keywords": [a, b] },
                { "regex": format!("\\b{name}\\b"), "flags": "i" },
            ] }),
            format!("About the {b}: the {name} again."),
        ),
        _ => (
            json!({ "all": [
                { "keywords": [a, b] },
                { "all": [
                    { "regex": format!("\\b{name}\\b"), "flags": "i" },
                    { "regex": "#?\\d{4,}" },
                ] },
            ] }),
            format!("A {a} for the {name}, number #44120."),
        ),
    };
    StartRule {
        use_skill: format!("skill_{}", i % 20),
        matcher,
        examples: vec![example],
        label: Some(format!("{a} for {name}")),
    }
}

/// A start block of `n` distinct rules (SPEC §13) as a support desk might
/// write them, each with one example it matches: by `i % 10`, four in ten
/// `keywords` (2 to 5 phrases), two `regex` with `i` (word boundaries,
/// alternations), two with `iu` (non-ASCII alternatives, `\p{Lu}`) and two
/// `all` (two or three parts). Each rule names its own product
/// ([`product_name`]), so no rule matches another's example, and none
/// matches [`turn_message`].
pub fn start_rules(n: usize) -> Start {
    Start {
        rules: (0..n).map(start_rule).collect(),
        never_routes: vec!["thanks".to_owned(), "hello there".to_owned()],
    }
}

/// The sentences of [`turn_message`].
const PROSE: [&str; 12] = [
    "Hi there, I hope this note finds you well after the long weekend.",
    "Last Saturday my sister Zoë and I took the early train to the coast, and the views over the river were lovely in the morning light.",
    "We stopped at a small café near the harbour, where the owner, a cheerful man from São Paulo, made the best coffee either of us had tasted in years.",
    "He told us about the fishing boats, the old lighthouse and the festival the town holds every summer, when the streets fill with music and lanterns.",
    "In order to see the cliffs before the tide came in, we walked along the beach for almost two hours and collected a few smooth grey stones.",
    "My sister, who is a little naïve about the weather, had brought only a thin jacket, so we bought her a warm scarf at the market.",
    "By the afternoon the wind had picked up and the sky turned a deep shade of blue — the kind you only see by the sea in late spring.",
    "We had lunch on the terrace: fresh bread, a bowl of soup, grilled fish and a slice of crème brûlée that we shared between us.",
    "On account of the crowds we skipped the museum, but we did visit the garden behind the church, where the roses were just starting to bloom.",
    "The train home was quiet, and I spent most of the journey reading a novel that a friend had recommended to me last month.",
    "It’s a story about a family that moves to the mountains, and I think you would enjoy it as much as I did.",
    "Anyway, I just wanted to say hello and tell you about our little trip; let me know how you are and when you are free for a walk.",
];

/// The routed message: ordinary English prose with a few non-ASCII letters
/// (é, ë, ï, ã, û, ’, —), its sentences in turn until it holds at least
/// 2,048 bytes. No rule of [`start_rules`] matches it; the `all` rules on
/// "order" and "account" match their first part.
pub fn turn_message() -> String {
    let mut message = String::new();
    for sentence in PROSE.iter().cycle() {
        if message.len() >= 2048 {
            break;
        }
        if !message.is_empty() {
            message.push(' ');
        }
        message.push_str(sentence);
    }
    message
}

/// [`turn_message`] with the example of the last rule of `start` as its
/// last sentence: only that rule matches it, near the message's end.
pub fn turn_message_last(start: &Start) -> String {
    let example = start
        .rules
        .last()
        .and_then(|rule| rule.examples.first())
        .map_or("", String::as_str);
    format!("{} {example}", turn_message())
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

    #[test]
    fn each_start_rule_routes_its_own_example_and_none_the_message() {
        use skill_guard::start::StartRules;

        let start = start_rules(100);
        let rules = StartRules::compile(Some(&start)).expect("the rules compile");
        for (i, rule) in start.rules.iter().enumerate() {
            let routing = rules.route(&rule.examples[0], |_| false);
            assert_eq!(routing.routed.map(|r| r.rule), Some(i), "{rule:?}");
        }
        let message = turn_message();
        assert!((2048..2300).contains(&message.len()), "{}", message.len());
        assert!(!message.is_ascii());
        let routing = rules.route(&message, |_| false);
        assert_eq!(routing, skill_guard::start::Routing::default());
        let routing = rules.route(&turn_message_last(&start), |_| false);
        assert_eq!(routing.routed.map(|r| r.rule), Some(99));
        assert_eq!(product_name(1727), "Sulsulsul");
        assert_eq!(product_name(1728), "Zorzorzorvex");
    }
}
