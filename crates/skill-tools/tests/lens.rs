//! The lens law, as properties over random catalogs and offers, and the
//! rendered descriptions pinned word for word so that a change of wording is
//! reviewed.

use std::collections::{HashMap, HashSet};

use proptest::prelude::*;
use skill_core::{Menu, MenuCandidate, ReadSkillOffer, Skill, TargetClass, classify_target};
use skill_tools::{OfferMode, OfferView, offer_view, read_skill};

/// Ids are drawn from words our sentences never use.
const IDS: [&str; 10] = [
    "alpha", "beta", "gamma", "delta", "triage", "billing", "refunds", "audit", "charting", "vault",
];

/// Phrases no rendering may use: absence is only ever "from here".
const FORBIDDEN: [&str; 5] = [
    "unavailable",
    "does not exist",
    "no such",
    "not available",
    "you do not have",
];

fn id() -> impl Strategy<Value = String> {
    prop::sample::select(IDS.to_vec()).prop_map(str::to_owned)
}

fn ids() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(id(), 0..6)
}

fn catalog() -> impl Strategy<Value = Vec<Skill>> {
    prop::collection::vec((id(), any::<bool>()), 0..10).prop_map(|entries| {
        entries
            .into_iter()
            .enumerate()
            .map(|(n, (id, described))| {
                let mut skill = Skill::new(id);
                // Unique per skill, and sharing no word with any id.
                skill.description = described.then(|| format!("handles case number {n} with care"));
                skill
            })
            .collect()
    })
}

fn offer() -> impl Strategy<Value = ReadSkillOffer> {
    let menu = (
        // Any number a host may pass, huge and non-finite ones included:
        // the note prints it in full.
        prop::collection::vec(
            (
                id(),
                prop::option::of(prop_oneof![0.0f64..1.0, any::<f64>()]),
            ),
            0..4,
        ),
        prop::option::of(id()),
        any::<bool>(),
    )
        .prop_map(|(candidates, cursor_id, stay)| Menu {
            candidates: candidates
                .into_iter()
                .map(|(id, relevance)| MenuCandidate { id, relevance })
                .collect(),
            cursor_id,
            stay,
        });
    (
        prop::option::of(ids()),
        ids(),
        prop::option::of(id()),
        prop::option::of(menu),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(grantable, hidden_ids, cursor_id, menu, tree_routed, show_refusable)| {
                ReadSkillOffer {
                    grantable,
                    hidden_ids,
                    cursor_id,
                    menu,
                    tree_routed,
                    show_refusable,
                }
            },
        )
}

/// The whole-word tokens of a text (ids are words of letters).
fn words(text: &str) -> HashSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| !w.is_empty())
        .collect()
}

fn rows<'v>(view: &'v OfferView<'_>) -> Vec<(&'v str, bool)> {
    let menu = view.menu.iter().flatten().map(|r| (r.id, r.described));
    let lists = [
        &view.catalog,
        &view.tree_open,
        &view.reachable,
        &view.refusable,
    ];
    menu.chain(lists.into_iter().flatten().map(|r| (r.id, r.described)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn no_hidden_id_is_ever_named(skills in catalog(), offer in offer()) {
        let view = offer_view(&skills, Some(&offer));
        let text = view.render();
        let said = words(&text);
        for hidden in &offer.hidden_ids {
            prop_assert!(!said.contains(hidden.as_str()), "hidden {hidden:?} named in:\n{text}");
            prop_assert!(view.cursor != Some(hidden.as_str()));
            prop_assert!(rows(&view).iter().all(|(id, _)| id != hidden));
        }
    }

    #[test]
    fn absence_is_only_ever_from_here(skills in catalog(), offer in prop::option::of(offer())) {
        let text = offer_view(&skills, offer.as_ref()).render().to_lowercase();
        for phrase in FORBIDDEN {
            prop_assert!(!text.contains(phrase), "{phrase:?} in:\n{text}");
        }
    }

    #[test]
    fn a_set_the_filter_emptied_loses_its_sentence(skills in catalog(), offer in offer()) {
        let view = offer_view(&skills, Some(&offer));
        let text = view.render();
        let hidden: HashSet<&str> = offer.hidden_ids.iter().map(String::as_str).collect();
        let cursor = offer.cursor_id.as_deref().or(offer.menu.as_ref().and_then(|m| m.cursor_id.as_deref())).filter(|c| !hidden.contains(c));
        let hops = offer.grantable.clone().unwrap_or_default();
        let no_open: [&str; 0] = [];
        let held = skills.iter().any(|s| classify_target(cursor, &s.id, &hops, &no_open[..]) == TargetClass::Hop);
        if held || view.mode != OfferMode::Graph {
            prop_assert!(!text.contains("Nothing is reachable"), "{text}");
        }
        if view.reachable.is_empty() {
            prop_assert!(!text.contains("Reachable from here"), "{text}");
        }
        if view.refusable.is_empty() {
            prop_assert!(!text.contains("Not reachable from here"), "{text}");
        }
    }

    #[test]
    fn each_description_is_printed_once(skills in catalog(), offer in prop::option::of(offer())) {
        let view = offer_view(&skills, offer.as_ref());
        let text = view.render();
        for skill in &skills {
            if let Some(description) = &skill.description {
                prop_assert!(text.matches(description.as_str()).count() <= 1, "{description:?} twice in:\n{text}");
            }
        }
        if offer.is_some() {
            let mut described: HashMap<&str, usize> = HashMap::new();
            for (id, first) in rows(&view) {
                *described.entry(id).or_default() += usize::from(first);
            }
            prop_assert!(described.values().all(|n| *n == 1), "{described:?}");
        }
    }

    #[test]
    fn the_enum_is_the_whole_catalog(skills in catalog(), offer in prop::option::of(offer())) {
        if let Some(tool) = read_skill(&skills, offer.as_ref()) {
            let ids: Vec<&str> = skills.iter().map(|s| s.id.as_str()).collect();
            prop_assert_eq!(tool.input_schema["properties"]["id"]["enum"].clone(), serde_json::json!(ids));
        } else {
            prop_assert!(skills.is_empty() || offer.as_ref().is_some_and(|o| o.tree_routed));
        }
    }
}

fn skill(id: &str, description: &str) -> Skill {
    let mut skill = Skill::new(id);
    skill.description = (!description.is_empty()).then(|| description.to_owned());
    skill
}

fn desk() -> Vec<Skill> {
    vec![
        skill("triage", "Sort the request"),
        skill("refunds", "Refund an order"),
        skill("shipping", "Track a parcel"),
        skill("audit", ""),
    ]
}

#[test]
fn snapshot_plain_catalog() {
    assert_eq!(
        offer_view(&desk(), None).render(),
        "Activates a skill for the next iteration. Skills you can pick:\n - triage: Sort the request\n - refunds: Refund an order\n - shipping: Track a parcel\n - audit: (no description given)\n\nPass the chosen skill's id as `id`."
    );
}

#[test]
fn snapshot_graph_with_a_menu_and_a_stay() {
    let offer = ReadSkillOffer {
        grantable: Some(vec!["refunds".into(), "shipping".into()]),
        hidden_ids: vec!["audit".into()],
        cursor_id: Some("triage".into()),
        menu: Some(Menu {
            candidates: vec![
                MenuCandidate {
                    id: "refunds".into(),
                    relevance: Some(0.625),
                },
                MenuCandidate {
                    id: "audit".into(),
                    relevance: None,
                },
            ],
            cursor_id: None,
            stay: true,
        }),
        ..ReadSkillOffer::default()
    };
    assert_eq!(
        offer_view(&desk(), Some(&offer)).render(),
        "This turn calls for a routing choice. Candidates, advisory (let the conversation decide):\n - refunds: Refund an order (relevance about 63%)\nYou are in 'triage'. Staying is a valid choice: to remain in 'triage', answer without calling read_skill.\n\nActivates a skill for the next iteration.\n\nReachable from here:\n - refunds\n - shipping: Track a parcel\n\nPass the chosen skill's id as `id`."
    );
}

#[test]
fn snapshot_graph_with_both_lists() {
    let offer = ReadSkillOffer {
        grantable: Some(vec!["refunds".into()]),
        cursor_id: Some("triage".into()),
        ..ReadSkillOffer::default()
    };
    assert_eq!(
        offer_view(&desk(), Some(&offer)).render(),
        "You are in 'triage'.\n\nActivates a skill for the next iteration.\n\nReachable from here:\n - refunds: Refund an order\n\nNot reachable from here:\n - shipping: Track a parcel\n - audit: (no description given)\n\nPass the chosen skill's id as `id`."
    );
}

#[test]
fn snapshot_graph_with_nothing_wired_out() {
    let offer = ReadSkillOffer {
        grantable: Some(Vec::new()),
        cursor_id: Some("refunds".into()),
        ..ReadSkillOffer::default()
    };
    assert_eq!(
        offer_view(&desk(), Some(&offer)).render(),
        "You are in 'refunds'.\n\nActivates a skill for the next iteration.\n\nNothing is reachable from here; go on with what you have, or finish.\n\nNot reachable from here:\n - triage: Sort the request\n - shipping: Track a parcel\n - audit: (no description given)\n\nPass the chosen skill's id as `id`."
    );
}

#[test]
fn snapshot_graph_whose_only_hop_is_hidden_names_the_cursor_and_stops() {
    let offer = ReadSkillOffer {
        grantable: Some(vec!["refunds".into()]),
        hidden_ids: vec!["refunds".into()],
        cursor_id: Some("triage".into()),
        show_refusable: false,
        ..ReadSkillOffer::default()
    };
    assert_eq!(
        offer_view(&desk(), Some(&offer)).render(),
        "You are in 'triage'.\n\nActivates a skill for the next iteration.\n\nPass the chosen skill's id as `id`."
    );
}

#[test]
fn snapshot_tree_and_no_skills() {
    let tree = ReadSkillOffer {
        grantable: Some(vec!["audit".into()]),
        tree_routed: true,
        ..ReadSkillOffer::default()
    };
    assert_eq!(
        offer_view(&desk(), Some(&tree)).render(),
        "Activates a skill for the next iteration. This map is a decision tree: it routes by its own conditions on every iteration and keeps no cursor for read_skill to move. The skills it leaves to you:\n - audit: (no description given)\n\nPass the chosen skill's id as `id`."
    );
    let all_hidden = ReadSkillOffer {
        hidden_ids: desk().into_iter().map(|s| s.id).collect(),
        ..ReadSkillOffer::default()
    };
    assert_eq!(
        offer_view(&desk(), Some(&all_hidden)).render(),
        "Activates a skill for the next iteration. No skill is offered to you on this call: answer without one, or say what you cannot do."
    );
}

#[test]
fn relevance_notes_of_any_size_render() {
    // A relevance is any number the host passed, and its note prints it in
    // full: three notes of over 300 digits each.
    let candidate = MenuCandidate {
        id: "refunds".into(),
        relevance: Some(-1.7e306),
    };
    let offer = ReadSkillOffer {
        menu: Some(Menu {
            candidates: vec![candidate.clone(), candidate.clone(), candidate],
            cursor_id: None,
            stay: false,
        }),
        ..ReadSkillOffer::default()
    };
    let text = offer_view(&desk(), Some(&offer)).render();
    assert_eq!(text.matches("(relevance about -17000000000").count(), 3);
}
