//! Drawing a skill map as a mermaid flowchart: entries marked, guards
//! captioned on their edges, model edges dotted.

use std::fmt::Write;

use skill_core::{IdHashMap, Route, SkillMap};
use skill_guard::{Guard, mermaid_caption};

/// Text safe inside a mermaid quoted label: quotes and pipes as entities,
/// line breaks and other control characters as spaces.
fn label(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    flat.replace('"', "#quot;").replace('|', "#124;")
}

/// What an edge says: its preconditions, its guard, its label.
fn edge_caption(route: &Route) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(tool) = &route.on_tool_return {
        parts.push(format!("on {tool}"));
    }
    if let Some(statuses) = &route.on_tool_status {
        parts.push(format!("status in [{}]", statuses.join(", ")));
    }
    if let Some(guard) = &route.guard {
        match Guard::compile(guard) {
            Ok(guard) => parts.push(mermaid_caption(guard.data())),
            Err(err) => parts.push(format!("refused guard: {}", err.code())),
        }
    }
    if let Some(text) = &route.label {
        parts.push(text.clone());
    }
    (!parts.is_empty()).then(|| label(&parts.join("; ")))
}

/// The node name of `id`, declaring the node (labelled with the id) the
/// first time it is met.
fn node<'a>(nodes: &mut IdHashMap<&'a str, usize>, id: &'a str, out: &mut String) -> String {
    let next = nodes.len();
    let number = *nodes.entry(id).or_insert(next);
    if number == next {
        let _ = writeln!(out, "    s{number}[\"{}\"]", label(id));
    }
    format!("s{number}")
}

/// The map as a mermaid `flowchart`. Nodes are numbered (`s0`, `s1`, …) so
/// any skill id draws; each is labelled with its id. A start node points at
/// the entries; deterministic routes are solid arrows captioned with their
/// preconditions and guard; model edges are dotted.
///
/// ```
/// use skill_core::SkillMap;
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage" }, { "id": "refunds" }], "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "riskLevel": { "in": ["high"] } } }]
/// }"#)?;
/// let chart = skill_explain::mermaid(&map);
/// assert!(chart.contains(r#"s0 -->|"when riskLevel in [high]"| s1"#));
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn mermaid(map: &SkillMap) -> String {
    chart(map).out
}

/// A chart being drawn: its text and the node number of each id.
struct Chart<'m> {
    out: String,
    nodes: IdHashMap<&'m str, usize>,
}

/// The declared map as a chart (see [`mermaid`]).
fn chart(map: &SkillMap) -> Chart<'_> {
    let mut out = String::from("flowchart TD\n");
    let mut nodes: IdHashMap<&str, usize> = IdHashMap::default();
    for skill in &map.skills {
        node(&mut nodes, &skill.id, &mut out);
    }
    // Ids a route or an entry names but no skill declares still draw.
    let named: Vec<&str> = map
        .entries
        .iter()
        .map(String::as_str)
        .chain(
            map.routes
                .iter()
                .flat_map(|r| [r.from.as_str(), r.to.as_str()]),
        )
        .collect();
    for id in &named {
        node(&mut nodes, id, &mut out);
    }
    if !map.entries.is_empty() {
        out.push_str("    start((start))\n");
        for entry in &map.entries {
            let target = node(&mut nodes, entry, &mut out);
            let _ = writeln!(out, "    start --> {target}");
        }
    }
    for route in &map.routes {
        let from = node(&mut nodes, &route.from, &mut out);
        let to = node(&mut nodes, &route.to, &mut out);
        let arrow = if route.is_deterministic() {
            "-->"
        } else {
            "-.->"
        };
        match edge_caption(route) {
            Some(caption) => {
                let _ = writeln!(out, "    {from} {arrow}|\"{caption}\"| {to}");
            }
            None => {
                let _ = writeln!(out, "    {from} {arrow} {to}");
            }
        }
    }
    Chart { out, nodes }
}

/// One move of a run, drawn over the map.
pub(crate) struct PathStep<'a> {
    /// The cursor before (none: the run's start).
    pub from: Option<&'a str>,
    /// The cursor after.
    pub to: &'a str,
    /// What the arrow says.
    pub caption: String,
    /// Whether the map declares the move.
    pub declared: bool,
}

/// The map as [`mermaid`] draws it, then the path taken: one thick arrow
/// per move, captioned; a move the map does not declare is red and says
/// so; the cursor's node has a thick outline.
pub(crate) fn mermaid_with_path(
    map: &SkillMap,
    path: &[PathStep<'_>],
    cursor: Option<&str>,
) -> String {
    let Chart { mut out, mut nodes } = chart(map);
    // Every entry and every route drew one edge; the path's edges follow.
    let drawn = map.entries.len() + map.routes.len();
    if !path.is_empty() {
        out.push_str("    %% the path taken\n");
    }
    for (edge, step) in (drawn..).zip(path) {
        let from = match step.from {
            Some(id) => node(&mut nodes, id, &mut out),
            None => "start".to_owned(),
        };
        let to = node(&mut nodes, step.to, &mut out);
        let mut caption = step.caption.clone();
        if !step.declared {
            caption.push_str(", not declared by the map");
        }
        let _ = writeln!(out, "    {from} ==>|\"{}\"| {to}", label(&caption));
        if !step.declared {
            let _ = writeln!(out, "    linkStyle {edge} stroke:#d00,stroke-width:3px");
        }
    }
    if let Some(id) = cursor {
        let at = node(&mut nodes, id, &mut out);
        let _ = writeln!(out, "    style {at} stroke-width:4px");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_entries_guards_preconditions_and_model_edges() {
        let map: SkillMap = serde_json::from_value(serde_json::json!({
            "skills": [{"id": "triage"}, {"id": "re\"funds"}, {"id": "faq"}],
            "entries": ["triage"],
            "routes": [
                {"from": "triage", "to": "re\"funds", "on_tool_status": ["success"], "guard": {"note": {"eq": "a|b"}}, "label": "risky"},
                {"from": "triage", "to": "faq"},
                {"from": "faq", "to": "ghost", "guard": {}}
            ]
        }))
        .unwrap();
        assert_eq!(
            mermaid(&map),
            "flowchart TD\n    s0[\"triage\"]\n    s1[\"re#quot;funds\"]\n    s2[\"faq\"]\n    s3[\"ghost\"]\n    start((start))\n    start --> s0\n    s0 -->|\"status in [success]; when note = a#124;b; risky\"| s1\n    s0 -.-> s2\n    s2 -->|\"refused guard: empty\"| s3\n"
        );
    }

    #[test]
    fn the_path_is_drawn_over_the_map_and_an_undeclared_move_is_red() {
        let map: SkillMap = serde_json::from_value(serde_json::json!({
            "skills": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
            "entries": ["a"],
            "routes": [{"from": "a", "to": "b"}]
        }))
        .unwrap();
        let path = [
            PathStep {
                from: Some("a"),
                to: "b",
                caption: "1. model".into(),
                declared: true,
            },
            PathStep {
                from: Some("b"),
                to: "c",
                caption: "2. model".into(),
                declared: false,
            },
        ];
        let chart = mermaid_with_path(&map, &path, Some("c"));
        assert!(chart.starts_with(&mermaid(&map)), "{chart}");
        assert!(chart.contains("    s0 ==>|\"1. model\"| s1\n    s1 ==>|\"2. model, not declared by the map\"| s2\n"), "{chart}");
        // The map drew two edges (start→a, a→b): the undeclared move is edge 3.
        assert!(
            chart.contains("    linkStyle 3 stroke:#d00,stroke-width:3px\n"),
            "{chart}"
        );
        assert!(!chart.contains("linkStyle 2"), "{chart}");
        assert!(
            chart.ends_with("    style s2 stroke-width:4px\n"),
            "{chart}"
        );
    }
}
