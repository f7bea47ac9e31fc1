//! The page of a record (SPEC §12) on hostile input: every string a record
//! carries (ids, labels, descriptions, the user's words, tool names, guard
//! keys, results) is escaped, and a very long one is cut, so that a record
//! can never put markup of its own on the page.

use std::sync::Arc;

use proptest::prelude::*;

use skill_core::{SkillMap, ToolResult};
use skill_session::{Graph, Posture, Session, read_record};

/// A map and a run whose every string is hostile; its record's text.
fn hostile_record() -> String {
    let long = "x".repeat(100_000);
    let map = serde_json::json!({
        "skills": [
            {"id": "<script>alert('id')</script>", "description": "</pre><script>alert('description')</script>",
             "tools": [{"name": "<b onmouseover=alert('tool')>"}]},
            {"id": "\"><img src=x onerror=alert('quote')>"},
            {"id": long}
        ],
        "entries": ["<script>alert('id')</script>"],
        "routes": [
            {"from": "<script>alert('id')</script>", "to": "\"><img src=x onerror=alert('quote')>",
             "guard": {"<k\"ey>": {"eq": "</td><script>alert('value')</script>"}},
             "label": "'\"><svg onload=alert('label')>"},
            {"from": "\"><img src=x onerror=alert('quote')>", "to": long}
        ]
    });
    let map: SkillMap = serde_json::from_value(map).expect("a map");
    let graph = Arc::new(Graph::new(map).expect("a graph"));
    let mut session = Session::new(graph, Posture::Assist, Vec::new());
    session.begin_turn("<script>alert('user')</script> & \"quotes\"", None);
    let tool = "<b onmouseover=alert('tool')>";
    let results = [
        r#"{"<k\"ey>": "</td><script>alert('value')</script>", "more": "<iframe>"}"#,
        "{}",
    ];
    run_text(
        session,
        results.iter().map(|result| (tool.to_owned(), *result)),
    )
}

/// `session` given each `(tool, result)` in an iteration of its own; its
/// record's text.
fn run_text<'a>(mut session: Session, results: impl Iterator<Item = (String, &'a str)>) -> String {
    for (tool_name, result) in results {
        session.observe(ToolResult {
            tool_name,
            result: result.into(),
            status: None,
        });
        session.end_iteration();
    }
    session
        .events()
        .iter()
        .map(|event| event.to_line() + "\n")
        .collect()
}

#[test]
fn every_string_of_a_hostile_record_is_escaped_and_a_long_one_is_cut() {
    let text = hostile_record();
    let record = read_record(&text).expect("the record reads");
    let page = skill_explain::page(&record, None).expect("a page");
    for markup in [
        "<script",
        "<img",
        "<svg onload",
        "<iframe",
        "<b onmouseover",
        "</td><script",
    ] {
        assert!(!page.contains(markup), "{markup} is on the page as markup");
    }
    for escaped in [
        "&lt;script&gt;alert(&#39;id&#39;)&lt;/script&gt;",
        "&quot;&gt;&lt;img src=x onerror=alert(&#39;quote&#39;)&gt;",
        "&lt;script&gt;alert(&#39;user&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;",
        "&lt;b onmouseover=alert(&#39;tool&#39;)&gt;",
    ] {
        assert!(page.contains(escaped), "{escaped} is shown, escaped");
    }
    assert!(
        page.contains("(cut: 100000 bytes in all)"),
        "the long id is cut"
    );
    assert!(page.len() < 100_000, "{} bytes", page.len());
    assert!(page.contains("<svg class=\"map\""), "the map is drawn");
}

#[test]
fn a_cut_record_is_drawn_to_its_cut_with_the_warning_escaped() {
    let text = hostile_record();
    let cut = &text[..text.len() - 20];
    let record = read_record(cut).expect("a cut record reads to its cut");
    let page = skill_explain::page(&record, None).expect("a page");
    assert!(page.contains("class=\"warning\""), "the cut is said");
    assert!(!page.contains("<script"));
}

#[test]
fn two_sessions_joined_have_no_page() {
    let text = hostile_record();
    let twice = format!("{text}{text}");
    let record = read_record(&twice).expect("the lines read");
    let refused = skill_explain::page(&record, None).expect_err("two sessions");
    assert_eq!(refused.code(), "record-second-start");
}

#[test]
fn the_page_at_an_iteration_shows_the_run_as_it_stood_then() {
    let record = read_record(&hostile_record()).expect("the record reads");
    let first = skill_explain::page(&record, Some(1)).expect("a page");
    let whole = skill_explain::page(&record, None).expect("a page");
    assert!(first.contains("id=\"iteration-1\"") && !first.contains("id=\"iteration-2\""));
    assert!(whole.contains("id=\"iteration-2\""));
    assert_eq!(
        skill_explain::page(&record, Some(9))
            .expect_err("not ended")
            .code(),
        "no-such-iteration"
    );
}

/// A map of `ids` with `routes` (indexes into `ids`, self-loops, cycles
/// and repeats among them) and a run that moves along some of them.
fn random_record(ids: usize, routes: &[(usize, usize)], moves: &[usize]) -> String {
    let id = |n: usize| format!("s{}", n % ids);
    let skills: Vec<serde_json::Value> =
        (0..ids).map(|n| serde_json::json!({"id": id(n)})).collect();
    let routes: Vec<serde_json::Value> = routes
        .iter()
        .map(|(from, to)| {
            serde_json::json!({"from": id(*from), "to": id(*to), "on_tool_return": format!("t{to}")})
        })
        .collect();
    let map = serde_json::json!({"skills": skills, "entries": [id(0)], "routes": routes});
    let map: SkillMap = serde_json::from_value(map).expect("a map");
    let graph = Arc::new(Graph::new(map).expect("a graph"));
    let mut session = Session::new(graph, Posture::Assist, Vec::new());
    session.begin_turn("go", None);
    run_text(session, moves.iter().map(|to| (format!("t{to}"), "{}")))
}

/// `random_record`'s page, made on a thread of its own: `None` when it
/// takes longer than `limit`.
fn page_within(text: String, limit: std::time::Duration) -> Option<String> {
    let (done, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let record = read_record(&text).expect("the record reads");
        let _ = done.send(skill_explain::page(&record, None).expect("a page"));
    });
    answer.recv_timeout(limit).ok()
}

#[test]
fn a_cyclic_map_the_layout_library_would_not_finish_is_drawn() {
    // Given as it is, this graph keeps rust-sugiyama 0.4 busy for ever.
    let routes = [
        (0, 1),
        (0, 5),
        (1, 4),
        (0, 3),
        (1, 0),
        (2, 3),
        (0, 4),
        (2, 4),
        (5, 4),
        (1, 5),
        (0, 2),
        (3, 5),
        (4, 5),
        (5, 1),
    ];
    let page = page_within(
        random_record(6, &routes, &[1, 0, 5]),
        std::time::Duration::from_secs(30),
    );
    assert!(page.is_some_and(|page| page.contains("<svg class=\"map\"")));
}

#[test]
fn a_large_map_is_drawn_in_time() {
    let routes: Vec<(usize, usize)> = (0..1_500).map(|n| (n % 500, (n * 7 + 3) % 500)).collect();
    let page = page_within(
        random_record(500, &routes, &[3, 24]),
        std::time::Duration::from_secs(60),
    );
    assert!(
        page.is_some(),
        "a 500-skill map with 1,500 routes is drawn within a minute"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The layout library places any map a record can declare: cycles,
    /// self-loops, repeated routes, several components, none at all.
    #[test]
    fn any_map_is_drawn(
        ids in 1usize..12,
        routes in proptest::collection::vec((0usize..12, 0usize..12), 0..30),
        moves in proptest::collection::vec(0usize..12, 0..12),
    ) {
        let record = read_record(&random_record(ids, &routes, &moves)).expect("the record reads");
        let page = skill_explain::page(&record, None).expect("a page");
        prop_assert!(page.contains("<svg class=\"map\""));
        prop_assert!(page.ends_with("</html>\n"));
    }
}
